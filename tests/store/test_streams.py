"""Floor-wide streams written by many tables and processes at once (the ``floor-tilts`` log,
the account logs, the tables' own rounds beside them): no write deadlocks, collides or is lost,
and every hash chain still verifies.

On PostgreSQL each :class:`Store` below has its own connection pool, as a process of a floor
does; on SQLite one process writes at a time, and the same tests check that nothing changed
there.
"""

from __future__ import annotations

import asyncio

import pytest

from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.db import InvariantError
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import lock_terminal, open_locks
from tablejack.store.verify import verify
from tests.support.store import Backend

CASHIER = Actor(Role.CASHIER, "cleo")
TABLES = ("T1", "T2", "T3", "T4")
STORES = 4
"""Connection pools writing at once (four processes' worth on PostgreSQL)."""


async def _stores(backend: Backend, count: int) -> list[Store]:
    """``count`` stores on the backend's database (one on SQLite: one process writes it)."""
    if backend.name == "sqlite":
        count = 1
    first = await backend.open()
    others = [
        await Store.open(backend.url, schema=backend.schema, migrate=False)
        for _ in range(count - 1)
    ]
    return [first, *others]


def _round_step(table: str, number: int, player: str, *, open_round: bool) -> Step:
    """A wager at ``table`` (the round opened by the step when ``open_round``)."""
    return Step(
        f"{table}-{number:06d}",
        events=[EventIn("wager", {"player": player, "amount": 100}, actor=player, terminal="t")],
        transfers=[Transfer(player, f"escrow:{table}", 100, "wager", 0, "blackjack")],
        meters=[(table, "blackjack", 100, 0)],
        open_round=(table, number, "classic", "round") if open_round else None,
        actor=Actor(Role.TABLE, table),
    )


@pytest.mark.slow
def test_a_hundred_tilts_at_once_are_all_logged_and_the_chain_verifies(
    backend: Backend,
) -> None:
    """100 ``connection_lost`` tilts raised at the same moment through four connection pools,
    while the tables' rounds and procedure logs are written beside them: all 100 are in the
    ``floor-tilts`` log, numbered 1 to 100 without a gap, and ``verify-log`` finds nothing."""

    async def main() -> tuple[list[int], int, list[str], list[str]]:
        stores = await _stores(backend, STORES)
        first = stores[0]
        try:
            for table in TABLES:
                await first.save_table(table, "classic", {}, {})
            for player in ("ann", "bob"):
                await first.ensure_account(player, "player")
                await first.fund(player, 1_000_000, actor=CASHIER)
            for index, table in enumerate(TABLES):  # each table's round, opened
                await first.commit(_round_step(table, 1, "ann", open_round=True))
                await first.commit(
                    Step(
                        f"{table}-procedures",
                        events=[EventIn("table", {"n": index})],
                        open_round=(table, 0, "classic", "procedures"),
                    )
                )

            async def tilt(index: int) -> None:
                store = stores[index % len(stores)]
                await lock_terminal(
                    store,
                    f"EWT-{index:03d}",
                    "connection_lost",
                    f"connection lost at table {TABLES[index % len(TABLES)]}",
                    by="server",
                    at_us=index,
                )

            async def play(index: int) -> None:
                store = stores[index % len(stores)]
                table = TABLES[index % len(TABLES)]
                player = ("ann", "bob")[index % 2]
                await store.commit(_round_step(table, 1, player, open_round=False))
                await store.commit(
                    Step(f"{table}-procedures", events=[EventIn("note", {"i": index})])
                )

            await asyncio.gather(*(tilt(i) for i in range(100)), *(play(i) for i in range(40)))
            seqs = [record.seq for record in await first.events("floor-tilts")]
            locked = len(await open_locks(first))
            report = await verify(first)
            return seqs, locked, report.problems, await first.ledger_check()
        finally:
            for store in stores:
                await store.close()

    seqs, locked, problems, ledger = asyncio.run(main())
    assert seqs == list(range(1, 101))
    assert locked == 100
    assert problems == []
    assert ledger == []


@pytest.mark.slow
def test_two_writers_of_one_round_never_deadlock(backend: Backend) -> None:
    """Two connection pools append to the same round and the same account logs at once (the
    interleaving that deadlocked the round head's update against the event insert): every
    step is written once, in some order, and the chain verifies."""

    async def main() -> tuple[list[int], list[str]]:
        stores = await _stores(backend, 2)
        first = stores[0]
        try:
            await first.save_table("T1", "classic", {}, {})
            await first.ensure_account("ann", "player")
            await first.fund("ann", 1_000_000, actor=CASHIER)
            await first.commit(_round_step("T1", 1, "ann", open_round=True))

            busy = asyncio.Semaphore(8)  # at most 8 connections a store: the suite shares
            # the database server with other tests running at the same time

            async def write(index: int) -> None:
                store = stores[index % len(stores)]
                async with busy:
                    await store.commit(_round_step("T1", 1, "ann", open_round=False))
                    await store.fund("ann", 100, memo=f"credit {index}", actor=CASHIER)

            await asyncio.gather(*(write(i) for i in range(60)))
            seqs = [record.seq for record in await first.events("T1-000001")]
            return seqs, (await verify(first)).problems
        finally:
            for store in stores:
                await store.close()

    seqs, problems = asyncio.run(main())
    assert seqs == list(range(1, 62))
    assert problems == []


def test_a_closed_round_takes_no_more_events(postgres: Backend) -> None:
    """A step appended to a voided round is refused with everything it would have written (on
    PostgreSQL, where a writer chains to the head it locks)."""

    async def body(store: Store) -> tuple[int, int | None, list[str]]:
        await store.save_table("T1", "classic", {}, {})
        await store.ensure_account("ann", "player")
        await store.fund("ann", 10_000, actor=CASHIER)
        await store.commit(_round_step("T1", 1, "ann", open_round=True))
        await store.commit(
            Step(
                "T1-000001",
                events=[EventIn("void", {"reason": "test", "refunds": []})],
                transfers=[Transfer("escrow:T1", "ann", 100, "refund", 0, "blackjack void")],
                meters=[("T1", "blackjack", -100, 0)],
                status="voided",
                actor=Actor(Role.TABLE, "T1"),
            )
        )
        with pytest.raises(InvariantError, match="closed"):
            await store.commit(_round_step("T1", 1, "ann", open_round=False))
        return (
            len(await store.events("T1-000001")),
            await store.balance("ann"),
            (await verify(store)).problems,
        )

    assert postgres.run(body) == (2, 10_000, [])
