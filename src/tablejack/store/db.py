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

The store is in modules by concern, and :class:`Store` is their facade: the errors
(:mod:`~tablejack.store.errors`), the records (:mod:`~tablejack.store.records`), the event chain
(:mod:`~tablejack.store.chain`), the database's location and engines
(:mod:`~tablejack.store.connect`), the write plan (:mod:`~tablejack.store.plan`), its statements
(:mod:`~tablejack.store.statements`), the write path and group commit
(:mod:`~tablejack.store.write`) and the reads (:mod:`~tablejack.store.reads`). Every name this
module exported before the split is still importable from it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.chain import GENESIS, canonical, chain_hash
from tablejack.store.connect import async_url, create_engines, migrate_to_head
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
from tablejack.store.fencing import Fence
from tablejack.store.models import ACCOUNTS, AUDIT, ROUNDS, TABLES, Account
from tablejack.store.policy import Actor, PolicyError, check_account_id
from tablejack.store.reads import Reads
from tablejack.store.records import EventIn, EventRecord, Step, Transfer, now_us
from tablejack.store.streams import ensure_stream
from tablejack.store.write import Writer, check_fences

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

CAGE = "cage"
"""The account that funds players (its balance is minus the players' funding)."""
CAGE_LOG = "acct:cage"
"""The log of the cage's movements (credit sold, vouchers cashed, hand pays)."""


class Store(Writer, Reads):
    """The SQL store of a floor. Create with :meth:`open`; close with :meth:`close`.

    Its write path and group commit are :class:`~tablejack.store.write.Writer`'s, its reads
    :class:`~tablejack.store.reads.Reads`'; here: opening and closing, accounts and the
    cage's movements, the logs of single events, the tables, the audit log."""

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
        engine, sync_engine = create_engines(
            url, schema=schema, pool_size=pool_size, settings=settings
        )
        store = cls(engine, sync_engine)
        if migrate:
            await store.migrate()
        return store

    async def migrate(self) -> None:
        """Apply every Alembic migration not yet applied."""
        async with self.engine.begin() as connection:
            await connection.run_sync(migrate_to_head)

    async def close(self) -> None:
        """Release every connection."""
        await self.engine.dispose()
        if self._sync_connection is not None:
            self._sync_connection.close()
            self._sync_connection = None
        if self._sync_engine is not None:
            self._sync_engine.dispose()

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
                translated = translate(error, log_id)
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

    # -- tables ----------------------------------------------------------------------------

    async def save_table(
        self, table_id: str, game: str, rules: Mapping[str, Any], config: Mapping[str, Any]
    ) -> None:
        """Create or update a table's game, rules and configuration; make its accounts. Two
        processes of a floor saving the same new table at once: the one that loses the race
        (a duplicate key) tries again, twice at most, and finds the table."""
        for attempt in range(3):
            try:
                await self._save_table(table_id, game, rules, config)
                return
            except IntegrityError:
                if attempt == 2:
                    raise
                await asyncio.sleep(0.05 * (attempt + 1))

    async def _save_table(
        self, table_id: str, game: str, rules: Mapping[str, Any], config: Mapping[str, Any]
    ) -> None:
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

    async def ping(self) -> None:
        """Ask the database for ``SELECT 1`` (readiness): raises when it does not answer."""
        async with self.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
