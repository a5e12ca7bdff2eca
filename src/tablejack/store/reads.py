"""The store's reads: balances and the ledger, the tables, the rounds and their events, the
meters and the audit log, the base of :class:`tablejack.store.db.Store`. Each read runs on a
connection of its own, outside any write transaction.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from tablejack.store.models import (
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
from tablejack.store.records import EventRecord, event_record

__all__ = ["Reads"]


class Reads:
    """What a store reads (:class:`tablejack.store.db.Store` inherits it)."""

    engine: AsyncEngine

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[AsyncConnection]:
        """A connection whose every read sees the store as of one moment, however long they
        take and whatever commits meanwhile: PostgreSQL's ``REPEATABLE READ READ ONLY``
        transaction; on SQLite, one read transaction (``BEGIN``; in WAL mode it keeps its view
        until it ends). Several results may be open on it at once. Nothing is written; the
        transaction is rolled back at the end. A floor process's connections have their idle
        transactions ended after a lease time (so a stopped process's locks never block the
        others); a snapshot holds no lock, and is exempt: the reader may think between reads
        for longer than that."""
        async with self.engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                await connection.execution_options(
                    isolation_level="REPEATABLE READ", postgresql_readonly=True
                )
                await connection.execute(text("SET LOCAL idle_in_transaction_session_timeout = 0"))
                await connection.execute(text("SELECT 1"))  # the snapshot is taken here
            else:
                await connection.exec_driver_sql("BEGIN")
                await connection.exec_driver_sql("SELECT 1 FROM sqlite_schema LIMIT 1")
            try:
                yield connection
            finally:
                await connection.rollback()

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
        return [event_record(row) for row in rows]

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
