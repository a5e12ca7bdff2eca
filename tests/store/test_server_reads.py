"""The store's functions for what the server reads of the database — the round of a player's last
wager (repeat last bet), his balance before a ledger row (game recall, PA 605a.4(d)), the newest
checkpoints and the streams none covers (the trust page, the start's audit), readiness, the
database a URL names — on an SQLite file and on PostgreSQL. The server runs no SQL of its own:
these are the queries it used to run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.checkpoints import Checkpointer, newest_checkpoints, uncovered_streams
from tablejack.store.connect import DatabaseLocation, database_location
from tablejack.store.recall import balance_before, last_wager_round
from tests.support.store import CAGE_CLERK, TABLE_T1, Backend, seed_two_players, wager_step


def _settle(round_id: str, player: str, amount: int) -> Step:
    """The round's completion returning ``player``'s wager of ``amount`` cents from the escrow."""
    return Step(
        round_id,
        events=[EventIn("complete", {"settlements": []}, actor="T1")],
        transfers=[Transfer("escrow:T1", player, amount, "returned", 0, "blackjack")],
        status="complete",
        actor=TABLE_T1,
    )


async def _two_rounds(store: Store) -> None:
    """ann wagers in T1's rounds 1 and 2 (and pushes round 1); bob only in round 1."""
    await seed_two_players(store)
    await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
    await store.commit(wager_step("T1-000001", "bob", 500))
    await store.commit(_settle("T1-000001", "ann", 1000))
    second = wager_step("T1-000002", "ann", 300)
    second.open_round = ("T1", 2, "classic", "round")
    await store.commit(second)


def test_the_last_wager_round_is_the_newest_round_the_player_wagered_in(
    backend: Backend,
) -> None:
    async def body(store: Store) -> list[str | None]:
        await _two_rounds(store)
        return [
            await last_wager_round(store, "ann", "T1"),
            await last_wager_round(store, "ann", "T1", excluding="T1-000002"),
            await last_wager_round(store, "bob", "T1"),
            await last_wager_round(store, "bob", "T1", excluding="T1-000001"),
            await last_wager_round(store, "ann", "T2"),  # another table: no wager there
        ]

    assert backend.run(body) == ["T1-000002", "T1-000001", "T1-000001", None, None]


def test_money_returned_into_the_players_account_is_not_a_wager(backend: Backend) -> None:
    async def body(store: Store) -> str | None:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "bob", 500, open_round=True))
        await store.commit(_settle("T1-000001", "ann", 400))  # escrow → ann: not a wager
        return await last_wager_round(store, "ann", "T1")

    assert backend.run(body) is None


def test_605a4d_the_balance_before_a_ledger_row_sums_every_earlier_row(
    backend: Backend,
) -> None:
    async def body(store: Store) -> tuple[list[tuple[int, int, int]], int]:
        await _two_rounds(store)
        rows = []
        for entry in await store.ledger_of("ann"):  # newest first
            before = await balance_before(store, "ann", int(entry["id"]))
            rows.append((int(entry["id"]), before, int(entry["effect"])))
        return rows, await store.balance("ann") or 0

    rows, balance = backend.run(body)
    # fund 10,000; wager 1,000; returned 1,000; wager 300
    assert [before for _, before, _ in reversed(rows)] == [0, 10_000, 9_000, 10_000]
    _, newest_before, newest_effect = rows[0]  # the newest row leaves the balance as it is now
    assert newest_before + newest_effect == balance == 9_700


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(amounts=st.lists(st.integers(1, 2_000), min_size=1, max_size=5))
def test_605a4d_each_balance_before_is_the_one_before_it_plus_that_rows_effect(
    tmp_path: Path, amounts: list[int]
) -> None:
    backend = Backend.sqlite(tmp_path)

    async def body(store: Store) -> tuple[list[tuple[int, int]], int]:
        await seed_two_players(store)
        for number, amount in enumerate(amounts, start=1):
            step = wager_step(f"T1-{number:06d}", "ann", amount)
            step.open_round = ("T1", number, "classic", "round")
            await store.commit(step)
        out = []
        for entry in reversed(await store.ledger_of("ann")):  # oldest first
            out.append((await balance_before(store, "ann", int(entry["id"])), int(entry["effect"])))
        return out, await store.balance("ann") or 0

    rows, balance = backend.run(body)
    running = 0
    for before, effect in rows:
        assert before == running
        running += effect
    assert running == balance == 10_000 - sum(amounts)


def test_the_newest_checkpoints_come_newest_first(backend: Backend, tmp_path: Path) -> None:
    async def body(store: Store) -> tuple[list[int], list[int], list[str]]:
        checkpointer = Checkpointer(store, Ed25519PrivateKey.generate(), tmp_path / "c.jsonl")
        await _two_rounds(store)
        await checkpointer.checkpoint("manual")
        await store.commit(_settle("T1-000002", "ann", 300))
        await checkpointer.checkpoint("interval")
        newest = await newest_checkpoints(store, 5)
        only = await newest_checkpoints(store, 1)
        return (
            [row["number"] for row in newest],
            [row["number"] for row in only],
            [row["reason"] for row in newest],
        )

    assert backend.run(body) == ([2, 1], [2], ["interval", "manual"])


def test_a_stream_written_after_the_last_checkpoint_is_uncovered(
    backend: Backend, tmp_path: Path
) -> None:
    async def body(store: Store) -> list[int]:
        checkpointer = Checkpointer(store, Ed25519PrivateKey.generate(), tmp_path / "c.jsonl")
        await _two_rounds(store)
        counts = [await uncovered_streams(store)]  # the cage's log and T1's two rounds
        await checkpointer.checkpoint("manual")
        counts.append(await uncovered_streams(store))
        await store.commit(_settle("T1-000002", "ann", 300))
        counts.append(await uncovered_streams(store))
        await store.fund("bob", 100, actor=CAGE_CLERK)
        counts.append(await uncovered_streams(store))
        return counts

    assert backend.run(body) == [3, 0, 1, 2]


def test_a_store_that_answers_is_ready(backend: Backend) -> None:
    async def body(store: Store) -> None:
        await store.ping()

    backend.run(body)


def test_a_database_that_does_not_answer_fails_the_ping() -> None:
    async def body() -> None:  # no server listens on port 1
        store = await Store.open("postgresql://postgres@127.0.0.1:1/test", migrate=False)
        try:
            await store.ping()
        finally:
            await store.close()

    with pytest.raises(OSError):
        asyncio.run(body())


def test_two_processes_saving_one_new_table_at_once_both_find_it(backend: Backend) -> None:
    async def body(store: Store) -> tuple[list[str], dict[str, int]]:
        other = await backend.open()  # a second process's store on the same database
        try:
            await asyncio.gather(
                store.save_table("T9", "classic", {"decks": 6}, {"source": "virtual"}),
                other.save_table("T9", "classic", {"decks": 8}, {"source": "virtual"}),
            )
        finally:
            await other.close()
        return [row["id"] for row in await store.tables()], await store.accounts()

    tables, accounts = backend.run(body)
    assert tables == ["T9"]
    assert accounts == {"escrow:T9": 0, "house:T9": 0}


@pytest.mark.parametrize(
    ("url", "location"),
    [
        ("floor.db", DatabaseLocation("sqlite", "floor.db")),
        ("sqlite:////srv/x/floor.db", DatabaseLocation("sqlite", "/srv/x/floor.db")),
        ("sqlite://", DatabaseLocation("sqlite", "")),
        ("sqlite:///:memory:", DatabaseLocation("sqlite", ":memory:")),
        ("postgresql://tj@db:5432/casino", DatabaseLocation("postgresql", "casino")),
        ("postgresql+asyncpg://tj@db/casino", DatabaseLocation("postgresql", "casino")),
        ("postgresql://tj@db", DatabaseLocation("postgresql", "")),
    ],
)
def test_the_database_a_url_names(url: str, location: DatabaseLocation) -> None:
    assert database_location(url) == location
