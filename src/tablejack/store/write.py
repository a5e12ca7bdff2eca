"""The play write path of a store: the group commit and the transactions that write steps.

:meth:`Writer.commit` queues a :class:`~tablejack.store.records.Step`; the writer writes the
waiting steps, up to 64 a transaction, in ONE transaction (a group commit), so a crash never
leaves an event without its ledger entries or the reverse. A failed batch is written again one
step a transaction, so one refused step never takes another down with it. The rows come from the
write plan (:mod:`tablejack.store.plan`) and go in one statement per table
(:mod:`tablejack.store.statements`); on PostgreSQL a batch chained to the heads this store wrote
goes in one statement (``tablejack_write_batch``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence

from sqlalchemy import Connection, Engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from tablejack.store.chain import GENESIS
from tablejack.store.errors import (
    DuplicateEventError,
    FencedError,
    InsufficientFundsError,
    InvariantError,
    LimitRefusedError,
    PostingRefusedError,
    StoreError,
    translate,
)
from tablejack.store.fencing import Fence, stale_fences
from tablejack.store.models import ACCOUNTS, ROUNDS
from tablejack.store.plan import NotCachedError, Plan, Shifts, as_columns, meter_totals
from tablejack.store.policy import AccountKind, PolicyError
from tablejack.store.records import EventRecord, Step
from tablejack.store.statements import WRITE_BATCH, Bulk
from tablejack.store.streams import lock_heads
from tablejack.store.wager_limits import check_batch

__all__ = ["Writer", "check_fences"]


def check_fences(connection: Connection, fences: Sequence[Fence]) -> None:
    """Refuse the transaction (:class:`FencedError`) when a fence's token is not its table's
    current one; its first statement (:mod:`tablejack.store.fencing`)."""
    if fences:
        for fence, current in stale_fences(connection, fences):
            raise FencedError(fence, current)


class Writer:
    """The write path's state and transactions, the base of
    :class:`tablejack.store.db.Store`."""

    def __init__(self, engine: AsyncEngine, sync_engine: Engine | None = None) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._write_lock = asyncio.Lock()
        self._serialise = self.dialect == "sqlite"
        self._pending: list[tuple[Step, asyncio.Future[list[EventRecord]]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._sync_engine = sync_engine
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

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction (serialised on SQLite, which has one writer at a time)."""
        if self._serialise:
            async with self._write_lock, self.engine.begin() as connection:
                yield connection
        else:
            async with self.engine.begin() as connection:
                yield connection

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
            raise translate(error, step.round_id) from None
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
        (refusing what any single step would have refused, see :class:`Shifts`), every
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

        plan = Plan.of(steps, head_of)
        bulk = Bulk(connection)
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
        bulk.bump_meters(meter_totals(plan.meters))
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
                raise NotCachedError(round_id)
            return cached

        try:
            plan = Plan.of(steps, head_of)
        except NotCachedError:
            return None
        fences = sorted({s.fence for s in steps if s.fence is not None})
        new = {row[0] for row in plan.new_rounds}
        expected = sorted(
            (round_id, *plan.expected[round_id]) for round_id in plan.moves if round_id not in new
        )
        changes = list(plan.shifts.per_account())
        totals = meter_totals(plan.meters)
        arguments = (
            *as_columns([(f.table_id, f.token) for f in fences], 2),
            *as_columns(expected, 3),
            *as_columns(plan.new_rounds, 6),
            GENESIS,
            *as_columns(plan.event_rows, 9),
            *as_columns(
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
            *as_columns(
                [
                    (account_id, total, plan.kinds[account_id].value, need)
                    for account_id, (total, need) in changes
                ],
                4,
            ),
            *as_columns(plan.ledger, 9),
            *as_columns(totals, 4),
        )
        async with self.engine.connect() as connection:
            raw = await connection.get_raw_connection()
            await raw.driver_connection.execute(WRITE_BATCH, *arguments)  # type: ignore[union-attr]
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

    def _shift_balances(
        self,
        connection: Connection,
        shifts: Shifts,
        kinds: Mapping[str, AccountKind],
        bulk: Bulk,
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
        self, bulk: Bulk, shifts: Shifts, kinds: Mapping[str, AccountKind]
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
