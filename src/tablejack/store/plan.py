"""The write plan: the rows a batch of steps writes, computed before any statement.

Each event is chained to its log's head, each posting checked against the money-movement policy
(:func:`tablejack.store.policy.check_posting`) and bound into the payload of the event that
caused it, and the balance changes summed per account (:class:`Shifts`), so that the write path
(:mod:`tablejack.store.write`) can send each kind of row in one statement.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tablejack.store.chain import GENESIS, canonical, chain_hash
from tablejack.store.errors import PostingRefusedError, StoreError
from tablejack.store.policy import AccountKind, PolicyError, check_posting
from tablejack.store.records import EventRecord, Step, Transfer, now_us

__all__ = ["NotCachedError", "Plan", "Shifts", "as_columns", "bind_postings", "meter_totals"]


def _whole_cents(transfer: Transfer) -> None:
    if isinstance(transfer.amount, bool) or not isinstance(transfer.amount, int):
        raise StoreError(f"A transfer amount must be whole cents, not {transfer.amount!r}.")
    if transfer.amount <= 0:
        raise StoreError(f"A transfer moves a positive amount, not {transfer.amount}.")
    if transfer.from_account == transfer.to_account:
        raise StoreError(f"A transfer from {transfer.from_account!r} to itself.")


def bind_postings(step: Step, kinds: dict[str, AccountKind]) -> dict[int, list[Transfer]]:
    """The step's transfers by the index of the event that caused each, each checked against
    the money-movement policy (the account kinds it expects go into ``kinds``)."""
    bound: dict[int, list[Transfer]] = {}
    if not step.transfers:
        return bound
    last = len(step.events) - 1
    if last < 0:
        raise StoreError("A posting needs the event that causes it; this step logs none.")
    for transfer in step.transfers:
        _whole_cents(transfer)
        index = last if transfer.event is None else transfer.event
        if not 0 <= index <= last:
            raise StoreError(f"A posting names event {index} of a step of {last + 1} events.")
        try:
            source, target = check_posting(transfer, step.actor, step.events[index].actor)
        except PolicyError as error:
            raise PostingRefusedError(error) from None
        kinds[transfer.from_account] = source
        kinds[transfer.to_account] = target
        bound.setdefault(index, []).append(transfer)
    return bound


def meter_totals(
    meters: Iterable[tuple[str, str, int, int]],
) -> list[tuple[str, str, int, int]]:
    """The increments of each ``(table, wager kind)`` meter summed, in the order of their keys
    (as every writer locks them)."""
    totals: dict[tuple[str, str], list[int]] = {}
    for table_id, kind, drop, win in meters:
        entry = totals.setdefault((table_id, kind), [0, 0])
        entry[0] += drop
        entry[1] += win
    return [(t, k, d, w) for (t, k), (d, w) in sorted(totals.items())]


def _deltas(transfers: Iterable[Transfer]) -> dict[str, int]:
    deltas: dict[str, int] = defaultdict(int)
    for transfer in transfers:
        deltas[transfer.from_account] -= transfer.amount
        deltas[transfer.to_account] += transfer.amount
    return deltas


class Shifts:
    """The balance changes of several steps written in one transaction: per account the
    total, and the lowest point the balance reaches after any step (relative to its start),
    so one update per account can refuse exactly what the steps one by one would refuse.

    >>> shifts = Shifts()
    >>> shifts.add({"ann": -500, "escrow": 500})
    >>> shifts.add({"ann": 800, "escrow": -800})
    >>> list(shifts.per_account())  # ann needs 500 at the start; escrow goes to -300
    [('ann', (300, 500)), ('escrow', (-300, 300))]
    """

    def __init__(self) -> None:
        self._running: dict[str, int] = {}
        self._lowest: dict[str, int] = {}

    def add(self, deltas: Mapping[str, int]) -> None:
        """The net changes of one step."""
        for account, delta in deltas.items():
            if not delta:
                continue
            running = self._running.get(account, 0) + delta
            self._running[account] = running
            self._lowest[account] = min(self._lowest.get(account, 0), running)

    def per_account(self) -> Iterable[tuple[str, tuple[int, int]]]:
        """``(account, (total change, balance needed at the start))``, sorted by account."""
        for account in sorted(self._running):
            yield account, (self._running[account], -self._lowest[account])


class NotCachedError(Exception):
    """A log's head is not among those this store last wrote (the fast path cannot chain)."""


@dataclass
class Plan:
    """The rows a batch of steps writes, computed before any statement: each event chained
    to its log's head (``head_of`` gives the head of a log the batch does not open), the
    ledger rows, each account's total change, the meters, and each log's head move."""

    new_rounds: list[tuple[str, str, int, str, str, int]] = field(default_factory=list)
    """``(round, table, number, kind, game, opened_us)`` of each round the batch opens."""
    event_rows: list[tuple[Any, ...]] = field(default_factory=list)
    ledger: list[tuple[Any, ...]] = field(default_factory=list)
    shifts: Shifts = field(default_factory=Shifts)
    kinds: dict[str, AccountKind] = field(default_factory=dict)
    meters: list[tuple[str, str, int, int]] = field(default_factory=list)
    moves: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per log: the head it is expected at (``b_expected``) and the one it moves to."""
    expected: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Per log the batch does not open: the head (seq, hash) its first step chains to."""
    postings: list[tuple[int, list[Transfer]]] = field(default_factory=list)
    """Per step, in order: when it is written and its postings (the player protections'
    check, :func:`tablejack.store.wager_limits.check_batch`)."""
    out: list[tuple[list[EventRecord], tuple[int, str]]] = field(default_factory=list)

    @classmethod
    def of(cls, steps: Sequence[Step], head_of: Callable[[str], tuple[int, str]]) -> Plan:
        plan = cls()
        heads: dict[str, tuple[int, str]] = {}
        """The head of each log as the steps so far left it."""
        for step in steps:
            at = step.at_us if step.at_us is not None else now_us()
            round_id = step.round_id
            bound = bind_postings(step, plan.kinds)
            if step.open_round is not None:
                table_id, number, game, kind = step.open_round
                plan.new_rounds.append((round_id, table_id, number, kind, game, at))
                cached = (0, GENESIS)
            else:
                known = heads.get(round_id) or plan.expected.get(round_id)
                if known is None:
                    known = plan.expected[round_id] = head_of(round_id)
                cached = known
            seq, prev = cached
            move = plan.moves.get(round_id)
            if move is None or step.open_round is not None:
                move = plan.moves[round_id] = {"b_round": round_id, "b_expected": seq}
            records = []
            for index, item in enumerate(step.events):
                seq += 1
                data = dict(item.payload)
                postings = bound.get(index)
                if postings:  # the chain covers the money the event moved
                    data["postings"] = [t.posting() for t in postings]
                    plan.ledger.extend(
                        (
                            at,
                            t.from_account,
                            t.to_account,
                            t.amount,
                            t.kind,
                            round_id,
                            seq,
                            t.wager_id,
                            t.memo[:200],
                        )
                        for t in postings
                    )
                    plan.shifts.add(_deltas(postings))
                payload = canonical(data)
                digest = chain_hash(
                    prev, round_id, seq, at, item.kind, item.actor, item.terminal, payload
                )
                records.append(
                    EventRecord(
                        round_id, seq, at, item.kind, item.actor, item.terminal, data, prev, digest
                    )
                )
                plan.event_rows.append(
                    (round_id, seq, at, item.kind, item.actor, item.terminal, payload, prev, digest)
                )
                prev = digest
            heads[round_id] = (seq, prev)
            move["b_seq"] = seq
            move["b_head"] = prev
            if step.status is not None:
                move["b_status"] = step.status
                if step.status != "open":
                    move["b_closed"] = at
            plan.meters.extend(step.meters)
            plan.postings.append((at, step.transfers))
            plan.out.append((records, (seq, prev)))
        return plan


def as_columns(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Rows as ``width`` column lists (the arrays an ``unnest`` takes)."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]
