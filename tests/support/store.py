"""The databases of the tests — an SQLite file and a PostgreSQL schema (:class:`Backend`, the
``backend`` and ``postgres`` fixtures of :mod:`tests.support.fixtures`) — what someone with the
database owner's rights can do to them (:func:`drop_guards`), and the small floor the store's
contract tests write to (:func:`seed_two_players`, :func:`wager_step`).

The PostgreSQL backend uses ``TABLEJACK_TEST_POSTGRES`` (default
``postgresql://postgres@127.0.0.1:5432/test``) and a fresh schema per test, dropped afterwards.
Without a reachable server the PostgreSQL tests are skipped with the reason, unless ``CI`` is
``true``: then they fail.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sqlalchemy import text

from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.policy import Actor, Role

__all__ = [
    "CAGE_CLERK",
    "GUARDED",
    "TABLE_T1",
    "Backend",
    "drop_guards",
    "postgres_available",
    "postgres_url",
    "seed_two_players",
    "wager_step",
]

CAGE_CLERK = Actor(Role.CASHIER, "cleo")
"""The cashier who funds the players of :func:`seed_two_players`."""
TABLE_T1 = Actor(Role.TABLE, "T1")
"""Table T1, the actor of its steps."""

GUARDED = ("events", "ledger_entries", "checkpoints", "checkpoint_heads", "accounts")
"""The tables whose triggers keep them append-only or hold the policy's invariants."""

T = TypeVar("T")


def postgres_url() -> str:
    """The PostgreSQL server the tests use."""
    return os.environ.get("TABLEJACK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


async def _pg_execute(sql: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    url = postgres_url().replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url, timeout=3)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def postgres_available() -> str | None:
    """None when PostgreSQL answers, else the reason it does not."""
    try:
        asyncio.run(_pg_execute("SELECT 1"))
    except Exception as error:
        return f"PostgreSQL at {postgres_url()} is not reachable: {error}"
    return None


@dataclass
class Backend:
    """One database for one test: ``url`` and (PostgreSQL) ``schema``."""

    name: str
    url: str
    schema: str | None = None

    @classmethod
    def sqlite(cls, directory: Path) -> Backend:
        """A fresh SQLite file."""
        return cls("sqlite", str(directory / f"floor-{secrets.token_hex(4)}.db"))

    @classmethod
    def postgresql(cls) -> Backend:
        """A fresh PostgreSQL schema."""
        schema = f"tj_{secrets.token_hex(6)}"
        asyncio.run(_pg_execute(f"CREATE SCHEMA {schema}"))
        return cls("postgresql", postgres_url(), schema)

    def drop(self) -> None:
        """Remove the PostgreSQL schema (SQLite files go with the temporary directory). A write
        of the test's server still finishing can deadlock with the drop, which PostgreSQL then
        aborts: the drop is tried again once the write is through."""
        if not self.schema:
            return
        import asyncpg

        for attempt in range(5):
            try:
                asyncio.run(_pg_execute(f"DROP SCHEMA {self.schema} CASCADE"))
                return
            except asyncpg.exceptions.DeadlockDetectedError:
                if attempt == 4:
                    raise
                time.sleep(0.2)

    @property
    def server_url(self) -> str:
        """The URL to give ``tablejack serve --db`` (the schema as a query option)."""
        if self.schema:
            return f"{self.url}?schema={self.schema}"
        return self.url

    async def open(self) -> Store:
        """Open the store on this backend (migrated)."""
        return await Store.open(self.url, schema=self.schema)

    def run(self, body: Callable[[Store], Awaitable[T]]) -> T:
        """Open the store, run ``body(store)`` in a fresh event loop, close the store."""

        async def main() -> T:
            store = await self.open()
            try:
                return await body(store)
            finally:
                await store.close()

        return asyncio.run(main())


async def drop_guards(store: Store) -> None:
    """Remove the database's own guards (triggers and CHECKs of the trust migration), as
    someone with the database owner's rights could before tampering: the tamper tests use it to
    show that ``verify-log`` still finds what they do."""
    async with store.engine.begin() as connection:
        if store.dialect == "postgresql":
            for table in GUARDED:
                await connection.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
            names = (
                await connection.execute(
                    text(
                        "SELECT conname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
                        "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE t.relname = "
                        "'accounts' AND c.contype = 'c' AND n.nspname = current_schema()"
                    )
                )
            ).all()
            for (name,) in names:
                await connection.execute(text(f'ALTER TABLE accounts DROP CONSTRAINT "{name}"'))
            return
        triggers = (
            await connection.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
        ).all()
        for (name,) in triggers:
            await connection.execute(text(f'DROP TRIGGER "{name}"'))


async def seed_two_players(store: Store) -> None:
    """A classic table T1 and two players, ann and bob, with 10,000 cents each from the cage."""
    await store.save_table("T1", "classic", {"decks": 6}, {"source": "virtual"})
    for player in ("ann", "bob"):
        await store.ensure_account(player, "player")
        await store.fund(player, 10_000, actor=CAGE_CLERK)


def wager_step(round_id: str, player: str, amount: int, *, open_round: bool = False) -> Step:
    """A step of table T1: ``player``'s Blackjack wager of ``amount`` cents at terminal t1 (with
    ``open_round``, the step opens round 1)."""
    return Step(
        round_id,
        events=[
            EventIn("wager", {"player": player, "amount": amount}, actor=player, terminal="t1")
        ],
        transfers=[Transfer(player, "escrow:T1", amount, "wager", 0, "blackjack")],
        meters=[("T1", "blackjack", amount, 0)],
        open_round=("T1", 1, "classic", "round") if open_round else None,
        actor=TABLE_T1,
    )
