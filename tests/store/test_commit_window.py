"""The group commit window (``Store.commit_window``, ``tablejack serve --commit-ms``): a step
that finds the writer idle waits the window for the steps that follow it, and they are written
in one transaction; without a window each is written at the next turn of the event loop. On an
SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import time

from tablejack.store import EventIn, InsufficientFundsError, Step, Store
from tablejack.store.verify import verify_chains
from tests.support.store import TABLE_T1, Backend, seed_two_players, wager_step


async def _floor(store: Store) -> None:
    """Table T1, ann and bob with 10,000 cents each, and round 1 open."""
    await seed_two_players(store)
    await store.commit(
        Step(
            "T1-000001",
            events=[EventIn("open", {"number": 1})],
            open_round=("T1", 1, "classic", "round"),
            actor=TABLE_T1,
        )
    )


def _wager(player: str, amount: int) -> Step:
    return wager_step("T1-000001", player, amount)


async def _two_steps_apart(store: Store, window: float, apart: float) -> int:
    """ann's wager, then bob's ``apart`` seconds later: the transactions they took."""
    store.commit_window = window
    before = store.transactions

    async def later() -> list[object]:
        await asyncio.sleep(apart)
        return list(await store.commit(_wager("bob", 300)))

    first, second = await asyncio.gather(store.commit(_wager("ann", 200)), later())
    assert [r.kind for r in first] == ["wager"] and [r.kind for r in second] == ["wager"]
    assert (await store.balance("ann"), await store.balance("bob")) == (9_800, 9_700)
    return store.transactions - before


def test_steps_within_the_window_are_written_in_one_transaction(backend: Backend) -> None:
    """bob's wager comes 20 ms after ann's, within a 300 ms window: one transaction writes
    both, chained one after the other, and the log verifies."""

    async def body(store: Store) -> tuple[int, list[str]]:
        await _floor(store)
        taken = await _two_steps_apart(store, window=0.3, apart=0.02)
        return taken, await verify_chains(store)

    taken, problems = backend.run(body)
    assert taken == 1
    assert problems == []


def test_without_a_window_each_step_is_written_at_once(backend: Backend) -> None:
    """The same two wagers 20 ms apart with no window: a transaction each."""

    async def body(store: Store) -> int:
        await _floor(store)
        return await _two_steps_apart(store, window=0.0, apart=0.02)

    assert backend.run(body) == 2


def test_a_lone_step_waits_the_window_and_is_then_written(backend: Backend) -> None:
    """A step with nothing after it is written once the window has passed: no sooner, and it
    does not wait for company that never comes."""

    async def body(store: Store) -> tuple[float, int]:
        await _floor(store)
        store.commit_window = 0.2
        start = time.monotonic()
        await store.commit(_wager("ann", 100))
        return time.monotonic() - start, await store.balance("ann")

    waited, ann = backend.run(body)
    assert 0.2 <= waited < 5.0
    assert ann == 9_900


def test_a_refused_step_in_the_window_takes_no_other_down(backend: Backend) -> None:
    """ann's wager over her balance, then bob's good one 20 ms later, within a 100 ms window:
    their shared transaction fails, and each is written again alone — ann's refused as it
    would be alone, bob's written (three transactions in all)."""

    async def body(store: Store) -> tuple[str, object, int, int, int]:
        await _floor(store)
        store.commit_window = 0.1
        before = store.transactions

        async def bob() -> None:
            await asyncio.sleep(0.02)
            await store.commit(_wager("bob", 500))

        refused, written = await asyncio.gather(
            store.commit(_wager("ann", 10_001)), bob(), return_exceptions=True
        )
        return (
            type(refused).__name__,
            written,
            store.transactions - before,
            await store.balance("ann"),
            await store.balance("bob"),
        )

    refused, written, transactions, ann, bob = backend.run(body)
    assert refused == InsufficientFundsError.__name__
    assert written is None  # bob's commit returned, it raised nothing
    assert transactions == 3
    assert (ann, bob) == (10_000, 9_500)
