"""The store's records: a :class:`Transfer` of money, an :class:`EventIn` to append, an
:class:`EventRecord` as stored, and a :class:`Step` (everything one engine step writes
together); :func:`now_us`, the store's clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tablejack.store.fencing import Fence
from tablejack.store.policy import Actor

__all__ = ["EventIn", "EventRecord", "Step", "Transfer", "event_record", "now_us"]


def now_us() -> int:
    """Microseconds since the epoch (the store's timestamps)."""
    return time.time_ns() // 1000


@dataclass(frozen=True, slots=True)
class Transfer:
    """Move ``amount`` cents (> 0) from one account to another."""

    from_account: str
    to_account: str
    amount: int
    kind: str
    wager_id: int | None = None
    memo: str = ""
    event: int | None = None
    """The index, within its step's events, of the event that moved the money (its ledger
    row names that event's sequence number, and the event's ``postings`` list it); None: the
    step's last event."""

    def posting(self) -> list[Any]:
        """The posting as its event's payload lists it: ``[kind, from, to, cents, wager]``."""
        return [self.kind, self.from_account, self.to_account, self.amount, self.wager_id]


@dataclass(frozen=True, slots=True)
class EventIn:
    """An event to append: its kind, who caused it, from which terminal, and its data."""

    kind: str
    payload: Mapping[str, Any]
    actor: str = ""
    terminal: str = ""


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event as stored."""

    round_id: str
    seq: int
    at_us: int
    kind: str
    actor: str
    terminal: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        """Plain data for the API."""
        return {
            "round_id": self.round_id,
            "seq": self.seq,
            "at_us": self.at_us,
            "kind": self.kind,
            "actor": self.actor,
            "terminal": self.terminal,
            "payload": self.payload,
            "hash": self.hash,
        }


@dataclass(slots=True)
class Step:
    """Everything one engine step writes, committed together by :meth:`Store.commit`.

    ``open_round`` creates the round row first (``(table_id, number, game, kind)``);
    ``status`` sets the round's status after the events (``complete``, ``voided`` …).
    """

    round_id: str
    events: list[EventIn] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)
    meters: list[tuple[str, str, int, int]] = field(default_factory=list)
    """``(table_id, wager_kind, drop, win)`` increments."""
    open_round: tuple[str, int, str, str] | None = None
    status: str | None = None
    at_us: int | None = None
    actor: Actor | None = None
    """Who starts the step's movements (checked against the money-movement policy); a step
    that moves money must name one."""
    fence: Fence | None = None
    """The lease of the table the step is written for: the transaction refuses the step
    (:class:`FencedError`) unless its token is the table's current one
    (:mod:`tablejack.store.fencing`); None: a write of no table's lease (SQLite, the floor's
    own logs)."""


def event_record(row: Any) -> EventRecord:
    """An ``events`` row as its record (the payload parsed)."""
    return EventRecord(
        row["round_id"],
        row["seq"],
        row["at_us"],
        row["kind"],
        row["actor"],
        row["terminal"],
        json.loads(row["payload"]),
        row["prev_hash"],
        row["hash"],
    )
