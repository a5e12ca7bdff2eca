"""The store: accounts, the double-entry ledger, the round event log and meters, over SQL.

One :class:`Store` wraps an async SQLAlchemy engine (SQLite through aiosqlite by default,
PostgreSQL through asyncpg). Its one write path for play is :meth:`Store.commit`: a
:class:`Step` — events appended to a round's log, the money they move and the meter increments —
is written in ONE transaction, so a crash never leaves an event without its ledger entries or
the reverse. The server commits a step before it broadcasts anything.

* Money moves only as :class:`Transfer` rows between two accounts, in integer cents; the sum of
  all balances is zero at all times (the cage account goes negative as it funds players).
  A player account never goes below zero: the database refuses the update and the whole step
  is rolled back (:class:`InsufficientFundsError`).
* Each event's hash is SHA-256 over the previous hash and the event's own fields; the round row
  keeps the head hash and last sequence number. :func:`tablejack.store.verify.verify` recomputes
  every chain.
* Every posting names the event that caused it, passes the money-movement policy
  (:func:`tablejack.store.policy.check_posting`: the movement kind, the role of the step's
  :class:`~tablejack.store.policy.Actor`, the account kinds) and is written into that event's
  payload (``postings``) before the event is hashed: the chain covers the ledger.
* Driver errors are translated: a duplicate ``(round_id, seq)`` raises
  :class:`DuplicateEventError`; a row the database's invariants refuse, :class:`InvariantError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, func, select, text, update
from sqlalchemy import event as sa_event
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from tablejack.store.fencing import Fence, stale_fences
from tablejack.store.models import (
    ACCOUNTS,
    AUDIT,
    EVENTS,
    LEDGER,
    METERS,
    ROUNDS,
    TABLES,
    Account,
    AuditEntry,
    Event,
    Meter,
    Round,
    TableRow,
)
from tablejack.store.policy import (
    AccountKind,
    Actor,
    PolicyError,
    check_account_id,
    check_posting,
)
from tablejack.store.streams import ensure_stream, lock_heads
from tablejack.store.wager_limits import LIMIT_RULE, check_batch

__all__ = [
    "AUDIT_MESSAGE_MAX",
    "CAGE",
    "CAGE_LOG",
    "GENESIS",
    "DuplicateEventError",
    "EventIn",
    "EventRecord",
    "FencedError",
    "InsufficientFundsError",
    "InvariantError",
    "LimitRefusedError",
    "PostingRefusedError",
    "Step",
    "Store",
    "StoreError",
    "Transfer",
    "async_url",
    "chain_hash",
    "now_us",
]

AUDIT_MESSAGE_MAX = 2000
"""The most characters an audit row's message keeps (the rest is cut: a refused request's
input, however large, costs the log at most this much)."""

GENESIS = "0" * 64
"""The previous hash of every chain's first event."""

CAGE = "cage"
"""The account that funds players (its balance is minus the players' funding)."""
CAGE_LOG = "acct:cage"
"""The log of the cage's movements (credit sold, vouchers cashed, hand pays)."""


class StoreError(Exception):
    """A write the store refused; nothing was written."""


class InsufficientFundsError(StoreError):
    """A player account would go below zero."""

    def __init__(self, account: str, needed: int, balance: int) -> None:
        super().__init__(
            f"Account {account!r} holds {balance} cents; the step needs {needed} cents more."
        )
        self.account = account
        self.needed = needed
        self.balance = balance


class DuplicateEventError(StoreError):
    """An event with the same ``(round_id, seq)`` is already in the log."""


class FencedError(StoreError):
    """A write of a table made under a lease that is no longer the table's current one: another
    process took the table over (:mod:`tablejack.store.fencing`); nothing was written."""

    def __init__(self, fence: Fence, current: int | None) -> None:
        super().__init__(
            f"The write of table {fence.table_id!r} carries fencing token {fence.token}; the "
            f"table's current token is {current}: another process runs it now. Nothing was "
            "written."
        )
        self.fence = fence
        self.current = current


class PostingRefusedError(StoreError):
    """A posting the money-movement policy forbids (:mod:`tablejack.store.policy`): ``rule``
    names the clause, ``code`` the kind of refusal (``role``, ``account``, ``policy`` …)."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(error.message)
        self.message = error.message
        self.rule = error.rule
        self.code = error.code


class LimitRefusedError(StoreError):
    """A step's wager or tip that the player's limits or self-exclusion forbid, checked in the
    transaction that would write it (:mod:`tablejack.store.wager_limits`): ``code`` (``limit``,
    ``excluded``), ``rule`` and a sentence. Nothing of the step was written."""

    def __init__(self, code: str, message: str, round_id: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rule = LIMIT_RULE
        self.round_id = round_id


class InvariantError(StoreError):
    """The database refused a write that breaks one of the invariants it holds (an account
    kind's balance, the movement kinds, an append-only table)."""


def now_us() -> int:
    """Microseconds since the epoch (the store's timestamps)."""
    return time.time_ns() // 1000


def async_url(url: str) -> str:
    """The async driver URL for ``url``: ``sqlite:///f.db`` → ``sqlite+aiosqlite:///f.db``,
    ``postgresql://…`` → ``postgresql+asyncpg://…``; a bare path is an SQLite file.

    >>> async_url("postgresql://postgres@127.0.0.1/test")
    'postgresql+asyncpg://postgres@127.0.0.1/test'
    >>> async_url("floor.db")
    'sqlite+aiosqlite:///floor.db'
    """
    if "://" not in url:
        return f"sqlite+aiosqlite:///{url}"
    scheme, rest = url.split("://", 1)
    base = scheme.split("+", 1)[0]
    if base == "sqlite":
        return f"sqlite+aiosqlite://{rest}"
    if base in ("postgresql", "postgres"):
        return f"postgresql+asyncpg://{rest}"
    return url


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The encoder of :func:`canonical`, made once (``json.dumps`` with arguments makes one per
call)."""
_CHAINED = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""The encoder of the text :func:`chain_hash` hashes."""


def canonical(payload: Mapping[str, Any]) -> str:
    """The one JSON text of a payload that the hash covers (sorted keys, no spaces): what
    ``json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` gives.

    >>> canonical({"b": [1, 2.5], "a": "é"})
    '{"a":"é","b":[1,2.5]}'
    """
    return _CANONICAL.encode(payload)


def chain_hash(
    prev_hash: str,
    round_id: str,
    seq: int,
    at_us: int,
    kind: str,
    actor: str,
    terminal: str,
    payload: str,
) -> str:
    """SHA-256 (hex) of an event chained to the previous one.

    >>> chain_hash(GENESIS, "T1-000001", 1, 0, "open", "", "", "{}")[:12]
    '6c814c17a47a'
    """
    text = _CHAINED.encode([prev_hash, round_id, seq, at_us, kind, actor, terminal, payload])
    return hashlib.sha256(text.encode()).hexdigest()


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


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _migrate(connection: Any) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    location = resources.files("tablejack.store") / "migrations"
    config.set_main_option("script_location", str(location))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _whole_cents(transfer: Transfer) -> None:
    if isinstance(transfer.amount, bool) or not isinstance(transfer.amount, int):
        raise StoreError(f"A transfer amount must be whole cents, not {transfer.amount!r}.")
    if transfer.amount <= 0:
        raise StoreError(f"A transfer moves a positive amount, not {transfer.amount}.")
    if transfer.from_account == transfer.to_account:
        raise StoreError(f"A transfer from {transfer.from_account!r} to itself.")


def _bind_postings(step: Step, kinds: dict[str, AccountKind]) -> dict[int, list[Transfer]]:
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


def check_fences(connection: Connection, fences: Sequence[Fence]) -> None:
    """Refuse the transaction (:class:`FencedError`) when a fence's token is not its table's
    current one; its first statement (:mod:`tablejack.store.fencing`)."""
    if fences:
        for fence, current in stale_fences(connection, fences):
            raise FencedError(fence, current)


def _meter_totals(
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


def _translate(error: IntegrityError, round_id: str) -> StoreError:
    """A driver's integrity error as the store's: a duplicate key of the log, or an invariant
    the database holds."""
    text = str(error.orig)
    if any(key in text for key in ("pk_events", "events.round_id", "pk_rounds", "rounds.id")):
        return DuplicateEventError(
            f"The log of round {round_id!r} already holds an event at that sequence number: {text}"
        )
    return InvariantError(f"The database refused the step of {round_id!r}: {text.strip()}")


class _Shifts:
    """The balance changes of several steps written in one transaction: per account the
    total, and the lowest point the balance reaches after any step (relative to its start),
    so one update per account can refuse exactly what the steps one by one would refuse.

    >>> shifts = _Shifts()
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


class _NotCachedError(Exception):
    """A log's head is not among those this store last wrote (the fast path cannot chain)."""


@dataclass
class _Plan:
    """The rows a batch of steps writes, computed before any statement: each event chained
    to its log's head (``head_of`` gives the head of a log the batch does not open), the
    ledger rows, each account's total change, the meters, and each log's head move."""

    new_rounds: list[tuple[str, str, int, str, str, int]] = field(default_factory=list)
    """``(round, table, number, kind, game, opened_us)`` of each round the batch opens."""
    event_rows: list[tuple[Any, ...]] = field(default_factory=list)
    ledger: list[tuple[Any, ...]] = field(default_factory=list)
    shifts: _Shifts = field(default_factory=_Shifts)
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
    def of(cls, steps: Sequence[Step], head_of: Callable[[str], tuple[int, str]]) -> _Plan:
        plan = cls()
        heads: dict[str, tuple[int, str]] = {}
        """The head of each log as the steps so far left it."""
        for step in steps:
            at = step.at_us if step.at_us is not None else now_us()
            round_id = step.round_id
            bound = _bind_postings(step, plan.kinds)
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


def _columns(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Rows as ``width`` column lists (the arrays an ``unnest`` takes)."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]


_WRITE_BATCH = "SELECT tablejack_write_batch(" + ", ".join(f"${n}" for n in range(1, 45)) + ")"
"""The call of migration 0005's function: 44 arguments, the arrays of :meth:`Store._write_batch_at_once`."""

_ROUND_COLUMNS = "id, table_id, number, kind, game, opened_us, status, last_seq, head_hash"
_EVENT_COLUMNS = "round_id, seq, at_us, kind, actor, terminal, payload, prev_hash, hash"
_LEDGER_COLUMNS = "at_us, from_account, to_account, amount, kind, round_id, seq, wager_id, memo"


class _Bulk:
    """The play write path's rows, each kind in one statement on the transaction's own DBAPI
    connection (no statement compiled per step): on PostgreSQL one ``unnest`` of arrays per
    table (one round trip however many rows), on SQLite ``executemany`` of a plain insert.
    A driver error is raised as SQLAlchemy's (:class:`IntegrityError` for a duplicate key or a
    trigger's refusal), as the statements through the engine raised it."""

    def __init__(self, connection: Connection) -> None:
        self.dialect = connection.dialect
        self.postgresql = self.dialect.name == "postgresql"
        self.cursor = connection.connection.cursor()

    def run(self, sql: str, params: Sequence[Any], *, many: bool = False) -> Any:
        try:
            if many:
                self.cursor.executemany(sql, params)
            else:
                self.cursor.execute(sql, params)
        except self.dialect.loaded_dbapi.Error as error:
            raise DBAPIError.instance(sql, params, error, self.dialect.loaded_dbapi.Error) from None
        return self.cursor

    def insert_rounds(self, rows: Sequence[tuple[str, str, int, str, str, int]]) -> None:
        """New rounds, open at the genesis head: ``(id, table, number, kind, game, opened_us)``."""
        if not rows:
            return
        if self.postgresql:
            self.run(
                f"INSERT INTO rounds ({_ROUND_COLUMNS}) SELECT r.*, 'open', 0, $7 FROM unnest("
                "$1::varchar[], $2::varchar[], $3::int[], $4::varchar[], $5::varchar[], "
                "$6::bigint[]) AS r",
                [*_columns(rows, 6), GENESIS],
            )
        else:
            self.run(
                f"INSERT INTO rounds ({_ROUND_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 'open', 0, ?)",
                [(*row, GENESIS) for row in rows],
                many=True,
            )

    def insert_events(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.postgresql:
            self.run(
                f"INSERT INTO events ({_EVENT_COLUMNS}) SELECT * FROM unnest($1::varchar[], "
                "$2::int[], $3::bigint[], $4::varchar[], $5::varchar[], $6::varchar[], "
                "$7::text[], $8::varchar[], $9::varchar[])",
                [list(column) for column in zip(*rows, strict=True)],
            )
        else:
            self.run(
                f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
                many=True,
            )

    def insert_ledger(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.postgresql:
            self.run(
                f"INSERT INTO ledger_entries ({_LEDGER_COLUMNS}) SELECT * FROM unnest("
                "$1::bigint[], $2::varchar[], $3::varchar[], $4::bigint[], $5::varchar[], "
                "$6::varchar[], $7::int[], $8::int[], $9::varchar[])",
                [list(column) for column in zip(*rows, strict=True)],
            )
        else:
            self.run(
                f"INSERT INTO ledger_entries ({_LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
                many=True,
            )

    def move_heads(self, moves: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """Move each round's head from the sequence number it expects; the rounds whose head
        had moved on (none moved for them)."""
        if not moves:
            return []
        if self.postgresql:
            cursor = self.run(
                "UPDATE rounds AS r SET last_seq = m.seq, head_hash = m.head, "
                "status = COALESCE(m.status, r.status), "
                "closed_us = COALESCE(m.closed, r.closed_us) "
                "FROM unnest($1::varchar[], $2::int[], $3::int[], $4::varchar[], "
                "$5::varchar[], $6::bigint[]) AS m(id, expected, seq, head, status, closed) "
                "WHERE r.id = m.id AND r.last_seq = m.expected RETURNING r.id",
                [
                    list(moves),
                    [m["b_expected"] for m in moves.values()],
                    [m["b_seq"] for m in moves.values()],
                    [m["b_head"] for m in moves.values()],
                    [m.get("b_status") for m in moves.values()],
                    [m.get("b_closed") for m in moves.values()],
                ],
            )
            moved = {str(row[0]) for row in cursor.fetchall()}
            return [round_id for round_id in moves if round_id not in moved]
        stale = []
        for round_id, move in moves.items():
            cursor = self.run(
                "UPDATE rounds SET last_seq = ?, head_hash = ?, status = COALESCE(?, status), "
                "closed_us = COALESCE(?, closed_us) WHERE id = ? AND last_seq = ?",
                (
                    move["b_seq"],
                    move["b_head"],
                    move.get("b_status"),
                    move.get("b_closed"),
                    round_id,
                    move["b_expected"],
                ),
            )
            if cursor.rowcount != 1:
                stale.append(round_id)
        return stale

    def bump_meters(self, totals: Sequence[tuple[str, str, int, int]]) -> None:
        """Add to each ``(table, wager kind)`` meter, in the order given (of their keys)."""
        if not totals:
            return
        conflict = (
            'ON CONFLICT (table_id, wager_kind) DO UPDATE SET "drop" = meters."drop" + '
            'excluded."drop", win = meters.win + excluded.win'
        )
        if self.postgresql:
            self.run(
                'INSERT INTO meters (table_id, wager_kind, "drop", win) SELECT * FROM unnest('
                f"$1::varchar[], $2::varchar[], $3::bigint[], $4::bigint[]) {conflict}",
                [list(column) for column in zip(*totals, strict=True)],
            )
        else:
            self.run(
                f'INSERT INTO meters (table_id, wager_kind, "drop", win) VALUES (?, ?, ?, ?) '
                f"{conflict}",
                totals,
                many=True,
            )


class Store:
    """The SQL store of a floor. Create with :meth:`open`; close with :meth:`close`."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._write_lock = asyncio.Lock()
        self._serialise = self.dialect == "sqlite"
        self._pending: list[tuple[Step, asyncio.Future[list[EventRecord]]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._sync_engine: Engine | None = None
        self._sync_connection: Connection | None = None
        """SQLite file: the synchronous engine of the play write path (see _write_steps)."""
        self._heads: dict[str, tuple[int, str]] = {}
        """The last (seq, hash) of each open round this store wrote (saves a read per step;
        the round row's update checks it, so a stale entry is caught)."""
        self.events_written = 0
        """Events this store has committed since it opened (the checkpointer's trigger)."""
        self.write_at_once = True
        """PostgreSQL: write a group commit in one statement when it can
        (:meth:`_write_batch_at_once`); False: always in the statements, one round trip
        each."""
        self.batches_at_once = 0
        """Group commits written in one statement since the store opened."""
        self.commit_window = 0.0
        """Seconds the writer waits, when a step arrives and no write is under way, for the
        steps that follow it to join the same transaction (the group commit's window, as
        PostgreSQL's ``commit_delay``; 0: it writes at the next turn of the event loop). A
        busy floor's tables commit a step each every few milliseconds: a window of a few
        gathers several steps a transaction, at the cost of that much latency per step."""
        self.transactions = 0
        """Play-path transactions begun since the store opened (each group commit, and each
        step of a failed one written again alone)."""
        self.after_write: Callable[[int], None] | None = None
        """Called with :attr:`events_written` after every commit (the checkpointer's hook)."""
        self.committed: Callable[[Sequence[Step], float], None] | None = None
        """Called after every play-path transaction that committed, with its steps and the
        seconds it took (the metrics' hook, ``server.metrics``)."""

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        schema: str | None = None,
        migrate: bool = True,
        pool_size: int = 10,
        settings: Mapping[str, str] | None = None,
    ) -> Store:
        """Connect to ``url`` (SQLite path or URL, PostgreSQL URL) and bring the schema to the
        latest migration. ``schema`` (PostgreSQL; or ``?schema=name`` at the end of the URL)
        selects a schema through ``search_path``; ``settings``: PostgreSQL settings of every
        connection (e.g. ``idle_in_transaction_session_timeout``)."""
        full = async_url(url)
        if "?schema=" in full:
            full, schema = full.split("?schema=", 1)
        kwargs: dict[str, Any] = {}
        if full.startswith("postgresql"):
            kwargs["pool_size"] = pool_size
            server_settings = dict(settings or {})
            if schema:
                server_settings["search_path"] = schema
            if server_settings:
                kwargs["connect_args"] = {"server_settings": server_settings}
        engine = create_async_engine(full, **kwargs)
        if engine.dialect.name == "sqlite":
            sa_event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        store = cls(engine)
        database = engine.url.database
        if engine.dialect.name == "sqlite" and database and database != ":memory:":
            store._sync_engine = create_engine(
                f"sqlite:///{database}", connect_args={"check_same_thread": False}
            )
            sa_event.listen(store._sync_engine, "connect", _sqlite_pragmas)
        if migrate:
            await store.migrate()
        return store

    async def migrate(self) -> None:
        """Apply every Alembic migration not yet applied."""
        async with self.engine.begin() as connection:
            await connection.run_sync(_migrate)

    async def close(self) -> None:
        """Release every connection."""
        await self.engine.dispose()
        if self._sync_connection is not None:
            self._sync_connection.close()
            self._sync_connection = None
        if self._sync_engine is not None:
            self._sync_engine.dispose()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction (serialised on SQLite, which has one writer at a time)."""
        if self._serialise:
            async with self._write_lock, self.engine.begin() as connection:
                yield connection
        else:
            async with self.engine.begin() as connection:
                yield connection

    # -- accounts and money ----------------------------------------------------------------

    async def ensure_account(self, account_id: str, kind: str, name: str = "") -> bool:
        """Create the account if it does not exist; True if it was created. The id must have
        the shape of its kind (:func:`tablejack.store.policy.check_account_id`): a player can
        never be named like a table's escrow or the vouchers account."""
        try:
            check_account_id(account_id, kind)
        except PolicyError as error:
            raise PostingRefusedError(error) from None
        async with self.transaction() as connection:
            found = await connection.scalar(select(Account.id).where(Account.id == account_id))
            if found is not None:
                return False
            await connection.execute(
                ACCOUNTS.insert().values(
                    id=account_id,
                    kind=kind,
                    name=name or account_id,
                    balance=0,
                    created_us=now_us(),
                )
            )
            return True

    async def fund(
        self, account_id: str, amount: int, memo: str = "credit", *, actor: Actor
    ) -> EventRecord:
        """Credit sold at the cage (``fund``: cage → the player's account), an event of the
        cage's log (:data:`CAGE_LOG`); only a cashier may start it (the policy)."""
        await self.ensure_account(CAGE, "cage", "cage")
        record, _ = await self.commit_logged(
            CAGE_LOG,
            EventIn(
                "fund",
                {"account": account_id, "amount": amount, "memo": memo[:200], "by": actor.subject},
                actor=actor.subject,
                terminal=actor.terminal,
            ),
            [Transfer(CAGE, account_id, amount, "fund", memo=memo)],
            actor,
            owner=CAGE,
            log_kind="cage",
        )
        return record

    async def commit_logged(
        self,
        log_id: str,
        event: EventIn,
        transfers: Sequence[Transfer],
        actor: Actor | None,
        *,
        owner: str = "",
        before: Callable[[AsyncConnection], Awaitable[Mapping[str, Any]]] | None = None,
        log_kind: str = "accounts",
        fence: Fence | None = None,
    ) -> tuple[EventRecord, Mapping[str, Any]]:
        """Write ``before`` (e.g. a voucher row; what it returns is added to the event's
        payload), one event on the log ``log_id`` (created on first use, owned by ``owner``)
        and its transfers in ONE transaction; retried when another writer moved the log on.
        ``fence``: the write is a table's (a tilt of one of its terminals), refused with
        ``before``'s rows unless the table's lease is still the writer's."""
        for attempt in range(5):
            try:
                async with self.transaction() as connection:
                    extra: Mapping[str, Any] = {}
                    if before is not None:
                        extra = await before(connection)
                        event = EventIn(
                            event.kind, {**event.payload, **extra}, event.actor, event.terminal
                        )
                    if self.dialect == "postgresql":  # many writers: created once, then locked
                        await ensure_stream(connection, log_id, owner, log_kind, now_us())
                        exists = True
                    else:
                        exists = self._heads.get(log_id) is not None or (
                            await connection.scalar(
                                select(ROUNDS.c.id).where(ROUNDS.c.id == log_id)
                            )
                            is not None
                        )
                    step = Step(
                        log_id,
                        events=[event],
                        transfers=list(transfers),
                        open_round=None if exists else (owner, 0, "", log_kind),
                        actor=actor,
                        fence=fence,
                    )
                    [(records, head)] = await connection.run_sync(self._write_batch_sync, [step])
            except IntegrityError as error:  # another writer created or moved the log
                self._heads.pop(log_id, None)
                translated = _translate(error, log_id)
                if isinstance(translated, InvariantError) or attempt == 4:
                    raise translated from None
                continue
            except DuplicateEventError:
                self._heads.pop(log_id, None)
                if attempt == 4:
                    raise
                continue
            except BaseException:
                self._heads.pop(log_id, None)
                raise
            self._remember_head(step, head)
            return records[0], extra
        raise StoreError("unreachable")  # pragma: no cover

    def _shift_balances(
        self,
        connection: Connection,
        shifts: _Shifts,
        kinds: Mapping[str, AccountKind],
        bulk: _Bulk,
    ) -> None:
        """Apply each account's total change to an account of the kind the policy expects,
        refusing (the transaction rolls back) when a player's balance would have gone below
        zero after any of the steps, or when the account is of another kind. On PostgreSQL
        the accounts are locked in one statement in the order of their ids, checked, and
        updated in one more; on SQLite (one writer) each is updated in that order."""
        if bulk.postgresql:
            self._shift_balances_at_once(bulk, shifts, kinds)
            return
        for account_id, (total, need) in shifts.per_account():  # a fixed lock order
            kind = kinds[account_id].value
            cursor = bulk.run(
                "UPDATE accounts SET balance = balance + ? WHERE id = ? AND kind = ? "
                "AND (kind != 'player' OR balance >= ?)",
                (total, account_id, kind, need),
            )
            if cursor.rowcount != 1:
                self._refuse(connection, account_id, kind, -need if need > 0 else total)

    def _shift_balances_at_once(
        self, bulk: _Bulk, shifts: _Shifts, kinds: Mapping[str, AccountKind]
    ) -> None:
        changes = list(shifts.per_account())  # sorted by account: the lock order
        if not changes:
            return
        ids = [account_id for account_id, _ in changes]
        found = {
            str(row[0]): (str(row[1]), int(row[2]))
            for row in bulk.run(
                "SELECT id, kind, balance FROM accounts WHERE id = ANY($1::varchar[]) "
                "ORDER BY id FOR UPDATE",
                [ids],
            ).fetchall()
        }
        for account_id, (_, need) in changes:
            kind = kinds[account_id].value
            row = found.get(account_id)
            if row is None:
                raise StoreError(f"No account {account_id!r}.")
            if row[0] != kind:
                raise PostingRefusedError(
                    PolicyError(
                        f"Account {account_id!r} is a {row[0]} account; the movement needs a "
                        f"{kind} account.",
                        code="account",
                    )
                )
            if kind == "player" and row[1] < need:
                raise InsufficientFundsError(account_id, need, row[1])
        cursor = bulk.run(
            "UPDATE accounts AS a SET balance = a.balance + s.delta FROM unnest($1::varchar[], "
            "$2::bigint[], $3::varchar[], $4::bigint[]) AS s(id, delta, kind, need) "
            "WHERE a.id = s.id AND a.kind = s.kind AND (a.kind <> 'player' OR a.balance >= s.need)",
            [
                ids,
                [total for _, (total, _) in changes],
                [kinds[account_id].value for account_id in ids],
                [need for _, (_, need) in changes],
            ],
        )
        if cursor.rowcount != len(ids):
            raise StoreError("An account update was refused.")  # pragma: no cover

    def _refuse(self, connection: Connection, account_id: str, kind: str, delta: int) -> None:
        """Raise the reason an account update was refused (the transaction rolls back)."""
        row = connection.execute(
            select(ACCOUNTS.c.kind, ACCOUNTS.c.balance).where(ACCOUNTS.c.id == account_id)
        ).first()
        if row is None:
            raise StoreError(f"No account {account_id!r}.")
        if row[0] != kind:
            raise PostingRefusedError(
                PolicyError(
                    f"Account {account_id!r} is a {row[0]} account; the movement needs a {kind} "
                    "account.",
                    code="account",
                )
            )
        if kind == "player" and int(row[1]) + delta < 0:
            raise InsufficientFundsError(account_id, -delta, int(row[1]))
        raise StoreError("An account update was refused.")  # pragma: no cover

    async def balance(self, account_id: str) -> int | None:
        """The balance of an account in cents (None if there is no such account)."""
        async with self.engine.connect() as connection:
            value = await connection.scalar(select(Account.balance).where(Account.id == account_id))
        return None if value is None else int(value)

    async def accounts(self, kind: str | None = None) -> dict[str, int]:
        """Every account's balance (of one kind if given)."""
        statement = select(Account.id, Account.balance)
        if kind is not None:
            statement = statement.where(Account.kind == kind)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).all()
        return {row[0]: int(row[1]) for row in rows}

    async def total(self) -> int:
        """The sum of every balance: always zero."""
        async with self.engine.connect() as connection:
            value = await connection.scalar(select(func.coalesce(func.sum(Account.balance), 0)))
        return int(value or 0)

    async def ledger_of(self, account_id: str, limit: int = 200) -> list[dict[str, Any]]:
        """The account's ledger entries, newest first, each with its signed effect."""
        entries = LEDGER
        statement = (
            select(entries)
            .where((entries.c.from_account == account_id) | (entries.c.to_account == account_id))
            .order_by(entries.c.id.desc())
            .limit(limit)
        )
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).mappings().all()
        out = []
        for row in rows:
            entry = dict(row)
            entry["effect"] = (
                entry["amount"] if entry["to_account"] == account_id else -entry["amount"]
            )
            out.append(entry)
        return out

    async def ledger_of_round(self, round_id: str) -> list[dict[str, Any]]:
        """Every ledger entry a round's steps wrote, in order."""
        statement = select(LEDGER).where(LEDGER.c.round_id == round_id).order_by(LEDGER.c.id)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).mappings().all()
        return [dict(row) for row in rows]

    async def ledger_check(self) -> list[str]:
        """Problems found by summing the whole ledger against the balances (none: ``[]``).

        One SQL statement reads both, so the check sees one consistent snapshot even while
        the server keeps writing."""
        statement = text(
            "SELECT a.id, a.balance, COALESCE(i.total, 0) - COALESCE(o.total, 0) "
            "FROM accounts a "
            "LEFT JOIN (SELECT to_account, SUM(amount) AS total FROM ledger_entries "
            "GROUP BY to_account) i ON i.to_account = a.id "
            "LEFT JOIN (SELECT from_account, SUM(amount) AS total FROM ledger_entries "
            "GROUP BY from_account) o ON o.from_account = a.id "
            "ORDER BY a.id"
        )
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).all()
        problems = [
            f"account {account}: balance {int(balance)} but the ledger sums to {int(summed)}"
            for account, balance, summed in rows
            if int(balance) != int(summed)
        ]
        total = sum(int(row[1]) for row in rows)
        if total != 0:
            problems.append(f"the balances sum to {total}, not 0")
        return problems

    # -- tables ----------------------------------------------------------------------------

    async def save_table(
        self, table_id: str, game: str, rules: Mapping[str, Any], config: Mapping[str, Any]
    ) -> None:
        """Create or update a table's game, rules and configuration; make its accounts."""
        tables = TABLES
        async with self.transaction() as connection:
            found = await connection.scalar(select(tables.c.id).where(tables.c.id == table_id))
            values = {"game": game, "rules": canonical(rules), "config": canonical(config)}
            if found is None:
                await connection.execute(
                    tables.insert().values(
                        id=table_id, status="closed", created_us=now_us(), **values
                    )
                )
            else:
                await connection.execute(
                    update(tables).where(tables.c.id == table_id).values(**values)
                )
        await self.ensure_account(f"escrow:{table_id}", "escrow", f"escrow of table {table_id}")
        await self.ensure_account(f"house:{table_id}", "house", f"house of table {table_id}")

    async def set_table_status(
        self, table_id: str, status: str, *, fence: Fence | None = None
    ) -> None:
        """Open or close a table (``fence``: refused unless the writer's lease is current)."""
        tables = TABLES
        async with self.transaction() as connection:
            if fence is not None:
                await connection.run_sync(check_fences, [fence])
            await connection.execute(
                update(tables).where(tables.c.id == table_id).values(status=status)
            )

    async def tables(self) -> list[dict[str, Any]]:
        """Every table with its game, rules, configuration and status."""
        async with self.engine.connect() as connection:
            rows = (await connection.execute(select(TABLES).order_by(TableRow.id))).mappings().all()
        out = []
        for row in rows:
            item = dict(row)
            item["rules"] = json.loads(item["rules"])
            item["config"] = json.loads(item["config"])
            out.append(item)
        return out

    # -- the event log ---------------------------------------------------------------------

    async def commit(self, step: Step) -> list[EventRecord]:
        """Write a step in one transaction: round row, events (hash-chained), transfers and
        meters. Raises (and writes nothing) on insufficient funds or a duplicate event.

        Steps that arrive while a transaction is being written wait and are then written
        together in the next one (a group commit: on SQLite, which has one writer at a time, and
        on PostgreSQL, where a transaction per step costs a round trip per statement); if that
        transaction fails, each of its steps is retried in a transaction of its own, so one
        refused step — a stale fence, an overdrawn account — never takes another down with it.
        The batch takes its locks as one step would (fences, stream heads, accounts, meters,
        each in the order of their ids), so two processes' batches never wait in a circle."""
        future: asyncio.Future[list[EventRecord]] = asyncio.get_running_loop().create_future()
        self._pending.append((step, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        """Write the waiting steps, as many as 64 per transaction, once the
        :attr:`commit_window` after the first has passed (steps that arrive while a transaction
        is being written go in the next at once: they have waited for as long)."""
        if self.commit_window > 0:
            await asyncio.sleep(self.commit_window)
        while self._pending:
            batch, self._pending = self._pending[:64], self._pending[64:]
            started = time.perf_counter()
            try:
                results = await self._write_steps([step for step, _ in batch])
            except Exception:
                for step, _ in batch:
                    self._heads.pop(step.round_id, None)
                for step, future in batch:
                    try:
                        records = await self._commit_alone(step)
                    except Exception as error:
                        if not future.done():
                            future.set_exception(error)
                    else:
                        if not future.done():
                            future.set_result(records)
                continue
            if self.committed is not None:  # (a failing hook never fails a commit)
                with contextlib.suppress(Exception):
                    self.committed([step for step, _ in batch], time.perf_counter() - started)
            for (step, future), (records, head) in zip(batch, results, strict=True):
                self._remember_head(step, head)
                if not future.done():
                    future.set_result(records)

    async def _commit_alone(self, step: Step) -> list[EventRecord]:
        started = time.perf_counter()
        try:
            [(records, head)] = await self._write_steps([step], at_once=False)
        except BaseException as error:
            self._heads.pop(step.round_id, None)
            if not isinstance(error, IntegrityError):
                raise
            raise _translate(error, step.round_id) from None
        if self.committed is not None:
            with contextlib.suppress(Exception):
                self.committed([step], time.perf_counter() - started)
        self._remember_head(step, head)
        return records

    def _remember_head(self, step: Step, head: tuple[int, str]) -> None:
        if step.status in (None, "open"):
            self._heads[step.round_id] = head
        else:
            self._heads.pop(step.round_id, None)
        self.events_written += len(step.events)
        if self.after_write is not None:
            self.after_write(self.events_written)

    def _write_steps_sync(
        self, steps: Sequence[Step]
    ) -> list[tuple[list[EventRecord], tuple[int, str]]]:
        """Write steps in one transaction of the synchronous SQLite writer."""
        connection = self._sync_writer()
        with connection.begin():
            return self._write_batch_sync(connection, steps)

    def _sync_writer(self) -> Connection:
        """The SQLite file's writer connection, kept open between transactions (no pool
        check-out and check-in per write)."""
        assert self._sync_engine is not None
        connection = self._sync_connection
        if connection is None or connection.closed or connection.invalidated:
            connection = self._sync_connection = self._sync_engine.connect()
        return connection

    async def _write_steps(
        self, steps: Sequence[Step], *, at_once: bool = True
    ) -> list[tuple[list[EventRecord], tuple[int, str]]]:
        """Write steps in ONE transaction. On an SQLite file the transaction runs on a plain
        sqlite3 connection, in one go on the event loop's thread: its statements are short and
        a commit in WAL mode with ``synchronous=NORMAL`` does not wait for the disk, so a
        hand-off to a worker thread would cost more than it saves. On PostgreSQL
        (``at_once``) the steps go in one statement when this store wrote the heads they chain
        to (:meth:`_write_batch_at_once`), else in the statements of
        :meth:`_write_batch_sync`, a round trip each."""
        self.transactions += 1
        if self._sync_engine is not None:
            async with self._write_lock:
                return self._write_steps_sync(steps)
        if at_once and self.write_at_once and self.dialect == "postgresql":
            written = await self._write_batch_at_once(steps)
            if written is not None:
                self.batches_at_once += 1
                return written
        async with self.transaction() as connection:
            return await connection.run_sync(self._write_batch_sync, steps)

    def _write_batch_sync(
        self, connection: Connection, steps: Sequence[Step]
    ) -> list[tuple[list[EventRecord], tuple[int, str]]]:
        """The statements of several steps, inside the caller's transaction, written as if
        one after the other but with one statement per table where possible: every event of
        every step in one insert, one head update per round, one balance update per account
        (refusing what any single step would have refused, see :class:`_Shifts`), every
        ledger row in one insert, every meter increment in one upsert."""
        rounds = ROUNDS
        check_fences(connection, [s.fence for s in steps if s.fence is not None])
        locked = self._lock_streams(connection, steps)

        def head_of(round_id: str) -> tuple[int, str]:
            cached = self._heads.get(round_id) if locked is None else locked.get(round_id)
            if cached is not None:
                return cached
            head = (
                connection.execute(
                    select(rounds.c.last_seq, rounds.c.head_hash)
                    .where(rounds.c.id == round_id)
                    .with_for_update()
                )
            ).first()
            if head is None:
                raise StoreError(f"No round {round_id!r}.")
            return int(head[0]), str(head[1])

        plan = _Plan.of(steps, head_of)
        bulk = _Bulk(connection)
        bulk.insert_rounds(plan.new_rounds)
        bulk.insert_events(plan.event_rows)
        for round_id in bulk.move_heads(plan.moves):
            raise DuplicateEventError(
                f"The log of round {round_id!r} moved on past event "
                f"{plan.moves[round_id]['b_expected']}."
            )
        self._shift_balances(connection, plan.shifts, plan.kinds, bulk)
        refused = check_batch(connection, plan.postings)  # after the balances' locks
        if refused is not None:
            index, code, message = refused
            raise LimitRefusedError(code, message, steps[index].round_id)
        bulk.insert_ledger(plan.ledger)
        bulk.bump_meters(_meter_totals(plan.meters))
        return plan.out

    async def _write_batch_at_once(
        self, steps: Sequence[Step]
    ) -> list[tuple[list[EventRecord], tuple[int, str]]] | None:
        """PostgreSQL: the steps in one statement, one round trip (``tablejack_write_batch``,
        migration 0005), chained to the heads this store last wrote; None when a log's head is
        not among them (a table taken over, a floor log another process writes), for the
        statements of :meth:`_write_batch_sync` to read it under its lock. Raises when the
        function refuses the steps (a stale fence, a head moved, an account's check): the
        caller writes them again one by one, in the slow path, which names the reason."""

        def head_of(round_id: str) -> tuple[int, str]:
            cached = self._heads.get(round_id)
            if cached is None:
                raise _NotCachedError(round_id)
            return cached

        try:
            plan = _Plan.of(steps, head_of)
        except _NotCachedError:
            return None
        fences = sorted({s.fence for s in steps if s.fence is not None})
        new = {row[0] for row in plan.new_rounds}
        expected = sorted(
            (round_id, *plan.expected[round_id]) for round_id in plan.moves if round_id not in new
        )
        changes = list(plan.shifts.per_account())
        totals = _meter_totals(plan.meters)
        arguments = (
            *_columns([(f.table_id, f.token) for f in fences], 2),
            *_columns(expected, 3),
            *_columns(plan.new_rounds, 6),
            GENESIS,
            *_columns(plan.event_rows, 9),
            *_columns(
                [
                    (
                        round_id,
                        move["b_expected"],
                        move["b_seq"],
                        move["b_head"],
                        move.get("b_status"),
                        move.get("b_closed"),
                    )
                    for round_id, move in plan.moves.items()
                ],
                6,
            ),
            *_columns(
                [
                    (account_id, total, plan.kinds[account_id].value, need)
                    for account_id, (total, need) in changes
                ],
                4,
            ),
            *_columns(plan.ledger, 9),
            *_columns(totals, 4),
        )
        async with self.engine.connect() as connection:
            raw = await connection.get_raw_connection()
            await raw.driver_connection.execute(_WRITE_BATCH, *arguments)  # type: ignore[union-attr]
        return plan.out

    def _lock_streams(
        self, connection: Connection, steps: Sequence[Step]
    ) -> dict[str, tuple[int, str]] | None:
        """PostgreSQL: lock the head of every stream the steps append to, in the order of
        their ids, before anything else (:mod:`tablejack.store.streams`), and chain to the
        heads as locked; a round already complete or voided refuses the steps
        (:class:`InvariantError`). None on SQLite (one writer at a time: the cached heads
        hold)."""
        if self.dialect != "postgresql":
            return None
        heads, closed = lock_heads(connection, (s.round_id for s in steps if s.open_round is None))
        for round_id in sorted(closed):  # a writer whose view of the round is out of date
            raise InvariantError(
                f"The log of round {round_id!r} is closed: it takes no more events."
            )
        return heads

    async def events(self, round_id: str) -> list[EventRecord]:
        """A round's events in order."""
        async with self.engine.connect() as connection:
            rows = (
                (
                    await connection.execute(
                        select(EVENTS).where(Event.round_id == round_id).order_by(Event.seq)
                    )
                )
                .mappings()
                .all()
            )
        return [_record(row) for row in rows]

    async def round(self, round_id: str) -> dict[str, Any] | None:
        """A round's row."""
        async with self.engine.connect() as connection:
            row = (
                (await connection.execute(select(ROUNDS).where(Round.id == round_id)))
                .mappings()
                .first()
            )
        return None if row is None else dict(row)

    async def rounds(
        self,
        *,
        table_id: str | None = None,
        status: str | None = None,
        kind: str = "round",
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """Rounds, newest first."""
        rounds = ROUNDS
        statement = select(rounds).where(rounds.c.kind == kind)
        if table_id is not None:
            statement = statement.where(rounds.c.table_id == table_id)
        if status is not None:
            statement = statement.where(rounds.c.status == status)
        statement = statement.order_by(rounds.c.opened_us.desc(), rounds.c.number.desc())
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement.limit(limit))).mappings().all()
        return [dict(row) for row in rows]

    async def last_round_number(self, table_id: str) -> int:
        """The highest round number of a table (0 before the first round)."""
        async with self.engine.connect() as connection:
            value = await connection.scalar(
                select(func.max(Round.number)).where(
                    (Round.table_id == table_id) & (Round.kind == "round")
                )
            )
        return int(value or 0)

    async def rounds_of_terminal(self, terminal: str, limit: int = 10) -> list[str]:
        """The ids of the last ``limit`` rounds in which ``terminal`` acted, newest first."""
        events = EVENTS
        statement = (
            select(events.c.round_id, func.max(events.c.at_us).label("last"))
            .where(events.c.terminal == terminal)
            .group_by(events.c.round_id)
            .order_by(func.max(events.c.at_us).desc(), events.c.round_id.desc())
            .limit(limit)
        )
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).all()
        return [row[0] for row in rows]

    # -- meters and audit ------------------------------------------------------------------

    async def meters(self, table_id: str | None = None) -> list[dict[str, Any]]:
        """Drop, win and hold per table and wager kind."""
        statement = select(METERS).order_by(Meter.table_id, Meter.wager_kind)
        if table_id is not None:
            statement = statement.where(Meter.table_id == table_id)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).mappings().all()
        out = []
        for row in rows:
            item = dict(row)
            drop, win = int(item["drop"]), int(item["win"])
            item["hold_percent"] = None if drop == 0 else f"{100 * win / drop:.2f}"
            out.append(item)
        return out

    async def audit(
        self,
        kind: str,
        message: str,
        *,
        table_id: str = "",
        actor: str = "",
        terminal: str = "",
        rule: str = "",
    ) -> None:
        """Record a refused or notable request."""
        statement = AUDIT.insert().values(
            at_us=now_us(),
            table_id=table_id[:64],
            actor=actor[:64],
            terminal=terminal[:64],
            kind=kind[:32],
            rule=rule[:64],
            message=message[:AUDIT_MESSAGE_MAX],
        )
        if self._sync_engine is not None:  # one short write, without thread hand-offs
            async with self._write_lock:
                sync = self._sync_writer()
                with sync.begin():
                    sync.execute(statement)
            return
        async with self.transaction() as connection:
            await connection.execute(statement)

    async def audit_entries(
        self, *, table_id: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The newest audit entries."""
        statement = select(AUDIT).order_by(AuditEntry.id.desc()).limit(limit)
        if table_id is not None:
            statement = statement.where(AuditEntry.table_id == table_id)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(statement)).mappings().all()
        return [dict(row) for row in rows]


def _record(row: Any) -> EventRecord:
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
