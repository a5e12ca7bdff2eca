"""The store's contract: the same tests on an SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from tablejack.store import (
    DuplicateEventError,
    EventIn,
    InsufficientFundsError,
    Step,
    Store,
    StoreError,
    Transfer,
)
from tablejack.store.models import Base
from tablejack.store.policy import MOVEMENTS
from tablejack.store.verify import verify_chains
from tests.support.store import (
    CAGE_CLERK,
    TABLE_T1,
    Backend,
    drop_guards,
    seed_two_players,
    wager_step,
)


def test_migration_creates_exactly_the_models(backend: Backend) -> None:
    async def body(store: Store) -> list[object]:
        async with store.engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
            )

    assert backend.run(body) == []


def test_migrating_twice_changes_nothing(backend: Backend) -> None:
    async def body(store: Store) -> int:
        await seed_two_players(store)
        await store.migrate()
        return await store.balance("ann") or 0

    assert backend.run(body) == 10_000


def test_funding_moves_money_from_the_cage_and_the_sum_stays_zero(backend: Backend) -> None:
    async def body(store: Store) -> tuple[dict[str, int], int, list[str]]:
        await seed_two_players(store)
        return await store.accounts(), await store.total(), await store.ledger_check()

    balances, total, problems = backend.run(body)
    assert balances == {
        "ann": 10_000,
        "bob": 10_000,
        "cage": -20_000,
        "escrow:T1": 0,
        "house:T1": 0,
    }
    assert total == 0
    assert problems == []


def test_wager_and_settlement_move_escrow_to_player_and_house(backend: Backend) -> None:
    async def body(store: Store) -> tuple[dict[str, int], list[dict[str, object]], list[object]]:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        await store.commit(wager_step("T1-000001", "bob", 2000))
        # ann wins 1:1 (house pays $10 winnings), bob loses
        await store.commit(
            Step(
                "T1-000001",
                events=[EventIn("settle", {"wagers": [0, 1]})],
                transfers=[
                    Transfer("escrow:T1", "ann", 1000, "returned", 0),
                    Transfer("house:T1", "ann", 1000, "winnings", 0),
                    Transfer("escrow:T1", "house:T1", 2000, "lost", 1),
                ],
                meters=[("T1", "blackjack", 0, 1000)],
                status="complete",
                actor=TABLE_T1,
            )
        )
        ledger = await store.ledger_of("ann")
        return await store.accounts(), await store.meters("T1"), [e["effect"] for e in ledger]

    balances, meters, effects = backend.run(body)
    assert balances["ann"] == 11_000
    assert balances["bob"] == 8_000
    assert balances["house:T1"] == 1_000
    assert balances["escrow:T1"] == 0
    assert sum(balances.values()) == 0
    assert meters == [
        {
            "table_id": "T1",
            "wager_kind": "blackjack",
            "drop": 3000,
            "win": 1000,
            "hold_percent": "33.33",
        }
    ]
    assert effects == [1000, 1000, -1000, 10_000]


def test_a_wager_above_the_balance_writes_nothing(backend: Backend) -> None:
    async def body(store: Store) -> tuple[int | None, int, list[object]]:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        with pytest.raises(InsufficientFundsError) as caught:
            await store.commit(wager_step("T1-000001", "ann", 9001))
        assert caught.value.balance == 9000
        return (
            await store.balance("ann"),
            (await store.round("T1-000001") or {})["last_seq"],
            [e.kind for e in await store.events("T1-000001")],
        )

    balance, last_seq, kinds = backend.run(body)
    assert (balance, last_seq, kinds) == (9000, 1, ["wager"])


def test_steps_written_together_refuse_what_each_alone_would(backend: Backend) -> None:
    """Steps waiting together are written in one transaction; a step that would overdraw a
    player is refused even when a later step of the same batch would cover it, and the other
    steps of the batch are still written."""

    async def body(store: Store) -> tuple[list[str], int | None, int | None]:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        pay = Step(
            "T1-000002",
            events=[EventIn("settle", {"player": "ann"}, actor="dealer")],
            transfers=[Transfer("escrow:T1", "ann", 1000, "returned", 0)],
            open_round=("T1", 2, "classic", "round"),
            actor=TABLE_T1,
        )
        outcomes = await asyncio.gather(
            store.commit(wager_step("T1-000001", "ann", 9500)),  # 9,000 left: refused
            store.commit(pay),  # would cover it, but comes after
            store.commit(wager_step("T1-000001", "bob", 9999, open_round=False)),
            return_exceptions=True,
        )
        return (
            [type(o).__name__ for o in outcomes],
            await store.balance("ann"),
            await store.balance("bob"),
        )

    kinds, ann, bob = backend.run(body)
    assert kinds == ["InsufficientFundsError", "list", "list"]
    assert (ann, bob) == (10_000, 1)


def test_transfers_are_positive_whole_cents(backend: Backend) -> None:
    async def body(store: Store) -> int | None:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 100, open_round=True))
        for bad in (0, -5, 1.5):
            step = wager_step("T1-000001", "ann", 100)
            step.transfers = [Transfer("ann", "escrow:T1", bad, "wager", 0)]  # type: ignore[arg-type]
            with pytest.raises(StoreError):
                await store.commit(step)
        return await store.balance("ann")

    assert backend.run(body) == 9_900


def test_the_database_enforces_the_round_seq_primary_key(backend: Backend) -> None:
    async def body(store: Store) -> None:
        await seed_two_players(store)
        [record] = await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        with pytest.raises(IntegrityError):
            async with store.engine.begin() as connection:
                await connection.execute(
                    text(
                        "INSERT INTO events (round_id, seq, at_us, kind, actor, terminal, payload,"
                        " prev_hash, hash) VALUES ('T1-000001', 1, 0, 'x', '', '', '{}', '', '')"
                    )
                )
        with pytest.raises(DuplicateEventError):
            await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        assert record.seq == 1

    backend.run(body)


def test_verify_log_detects_an_edited_event(backend: Backend) -> None:
    async def body(store: Store) -> tuple[list[str], list[str]]:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        await store.commit(wager_step("T1-000001", "bob", 1000))
        clean = await verify_chains(store)
        await drop_guards(store)
        async with store.engine.begin() as connection:
            await connection.execute(
                text(
                    "UPDATE events SET payload = :payload WHERE round_id = 'T1-000001' AND seq = 1"
                ),
                {"payload": '{"amount":100000,"player":"ann"}'},
            )
        return clean, await verify_chains(store)

    clean, tampered = backend.run(body)
    assert clean == []
    assert tampered == ["T1-000001 #1: the event was altered"]


def test_verify_log_detects_a_removed_last_event(backend: Backend) -> None:
    async def body(store: Store) -> list[str]:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 1000, open_round=True))
        await store.commit(wager_step("T1-000001", "bob", 1000))
        await drop_guards(store)
        async with store.engine.begin() as connection:
            await connection.execute(
                text("DELETE FROM events WHERE round_id = 'T1-000001' AND seq = 2")
            )
        return await verify_chains(store)

    assert backend.run(body) == [
        "T1-000001: the log ends at event 1 but the round row names event 2"
    ]


def test_last_rounds_of_a_terminal_newest_first(backend: Backend) -> None:
    async def body(store: Store) -> list[str]:
        await seed_two_players(store)
        for number in (1, 2, 3):
            round_id = f"T1-{number:06d}"
            step = wager_step(round_id, "ann", 100, open_round=False)
            step.open_round = ("T1", number, "classic", "round")
            step.at_us = 1_000_000 * number
            await store.commit(step)
        return await store.rounds_of_terminal("t1", limit=2)

    assert backend.run(body) == ["T1-000003", "T1-000002"]


ACCOUNTS = ("ann", "bob", "cat", "escrow:T1", "house:T1")
KINDS = ("wager", "returned", "lost", "winnings", "refund", "fund", "tip", "voucher_out")
operation = st.tuples(
    st.sampled_from(ACCOUNTS),
    st.sampled_from(ACCOUNTS),
    st.integers(1, 6000),
    st.sampled_from(KINDS),
)


def test_random_wagers_and_settlements_never_change_the_sum(backend: Backend) -> None:
    """Property: whatever sequence of transfers is tried by a table (refused by the policy, by
    the database or not), the sum of all accounts stays zero, no player goes below zero, no
    escrow below zero, the ledger replays to every balance, and the policy's movement kinds
    and account kinds hold for every row written."""
    backend.run(_floor_with_cat)

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(operation, min_size=1, max_size=8))
    def check(steps: list[tuple[str, str, int, str]]) -> None:
        async def body() -> None:
            store = await Store.open(backend.url, schema=backend.schema, migrate=False)
            try:
                before = await store.accounts()
                for source, target, amount, kind in steps:
                    if source == target:
                        continue
                    with contextlib.suppress(StoreError):
                        await store.commit(
                            Step(
                                "T1-000001",
                                events=[EventIn("move", {"amount": amount}, actor=source)],
                                transfers=[Transfer(source, target, amount, kind)],
                                actor=TABLE_T1,
                            )
                        )
                after = await store.accounts()
                assert sum(after.values()) == sum(before.values()) == 0
                assert all(after[p] >= 0 for p in ("ann", "bob", "cat", "escrow:T1"))
                assert await store.ledger_check() == []
                async with store.engine.connect() as connection:
                    rows = (
                        await connection.execute(
                            text(
                                "SELECT l.kind, f.kind, t.kind FROM ledger_entries l "
                                "JOIN accounts f ON f.id = l.from_account "
                                "JOIN accounts t ON t.id = l.to_account"
                            )
                        )
                    ).all()
                allowed = {(k, r.source.value, r.target.value) for k, r in MOVEMENTS.items()}
                assert {tuple(row) for row in rows} <= allowed
            finally:
                await store.close()

        asyncio.run(body())

    check()


async def _floor_with_cat(store: Store) -> None:
    await seed_two_players(store)
    await store.ensure_account("cat", "player")
    await store.fund("cat", 500, actor=CAGE_CLERK)
    await store.commit(wager_step("T1-000001", "ann", 100, open_round=True))
