"""PostgreSQL's group commit in one statement (``tablejack_write_batch``, migration 0005): it
writes exactly the rows the statements of the slow path write, and whatever it refuses is
written again by the slow path, which names the reason and writes nothing more."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import text

from tablejack.store import EventIn, Fence, FencedError, Step, Store, Transfer
from tablejack.store.db import InsufficientFundsError, InvariantError
from tablejack.store.leases import Leases
from tablejack.store.policy import Actor, Role
from tablejack.store.verify import verify
from tests.support.store import Backend

CASHIER = Actor(Role.CASHIER, "cleo")
TABLE = Actor(Role.TABLE, "T1")


def _steps() -> list[Step]:
    """Two rounds of table T1 with fixed clocks: opened, wagers of ann and bob, one settled
    (ann wins 500, bob loses), the other voided with its wager refunded."""
    steps: list[Step] = []
    for number in (1, 2):
        round_id = f"T1-{number:06d}"
        at = 1_000_000 * number
        steps.append(
            Step(
                round_id,
                events=[EventIn("open", {"number": number})],
                open_round=("T1", number, "classic", "round"),
                at_us=at,
                actor=TABLE,
            )
        )
        for index, player in enumerate(("ann", "bob")):
            steps.append(
                Step(
                    round_id,
                    events=[
                        EventIn(
                            "wager", {"player": player, "amount": 500}, actor=player, terminal="t"
                        )
                    ],
                    transfers=[Transfer(player, "escrow:T1", 500, "wager", index, "blackjack")],
                    meters=[("T1", "blackjack", 500, 0)],
                    at_us=at + 10 + index,
                    actor=TABLE,
                )
            )
    steps.append(
        Step(
            "T1-000001",
            events=[EventIn("settle", {"ann": 500, "bob": -500})],
            transfers=[
                Transfer("escrow:T1", "ann", 500, "returned", 0, "blackjack win"),
                Transfer("house:T1", "ann", 500, "winnings", 0, "blackjack win"),
                Transfer("escrow:T1", "house:T1", 500, "lost", 1, "blackjack loss"),
            ],
            meters=[("T1", "blackjack", 0, 0)],
            status="complete",
            at_us=1_000_100,
            actor=TABLE,
        )
    )
    steps.append(
        Step(
            "T1-000002",
            events=[EventIn("void", {"reason": "test"})],
            transfers=[
                Transfer("escrow:T1", "ann", 500, "refund", 0, "blackjack void"),
                Transfer("escrow:T1", "bob", 500, "refund", 1, "blackjack void"),
            ],
            meters=[("T1", "blackjack", -1_000, 0)],
            status="voided",
            at_us=2_000_100,
            actor=TABLE,
        )
    )
    return steps


async def _setup(store: Store) -> None:
    await store.save_table("T1", "classic", {}, {})
    for player in ("ann", "bob"):
        await store.ensure_account(player, "player")
        await store.fund(player, 10_000, actor=CASHIER)


async def _contents(store: Store) -> dict[str, list[Any]]:
    """What the play path wrote: rounds, events, ledger (without ids and the funding), balances,
    meters."""
    queries = {
        "rounds": "SELECT id, table_id, number, kind, game, status, opened_us, closed_us, "
        "last_seq, head_hash FROM rounds WHERE table_id = 'T1' ORDER BY id",
        "events": "SELECT round_id, seq, at_us, kind, actor, terminal, payload, prev_hash, hash "
        "FROM events WHERE round_id LIKE 'T1-%' ORDER BY round_id, seq",
        "ledger": "SELECT at_us, from_account, to_account, amount, kind, round_id, seq, "
        "wager_id, memo FROM ledger_entries WHERE round_id LIKE 'T1-%' "
        "ORDER BY round_id, seq, from_account, to_account",
        "balances": "SELECT id, balance FROM accounts ORDER BY id",
        "meters": 'SELECT table_id, wager_kind, "drop", win FROM meters ORDER BY 1, 2',
    }
    async with store.engine.connect() as connection:
        return {
            name: [tuple(row) for row in (await connection.execute(text(sql))).all()]
            for name, sql in queries.items()
        }


def test_one_statement_writes_what_the_statements_write(postgres: Backend) -> None:
    """The same steps, batched as the write path batches them, through the one statement and
    through the slow path's statements (in another schema): the same rounds, events and
    hashes, ledger, balances and meters; the one statement wrote the batches whose heads the
    store knew, and the chain verifies."""
    other = Backend.postgresql()

    async def write(backend: Backend, at_once: bool) -> tuple[dict[str, list[Any]], int, list]:
        store = await backend.open()
        store.write_at_once = at_once
        try:
            await _setup(store)
            steps = _steps()
            await store.commit(steps[0])  # the rest in a few group commits, as play does
            await asyncio.gather(*(store.commit(step) for step in steps[1:4]))
            for step in steps[4:]:
                await store.commit(step)
            return await _contents(store), store.batches_at_once, (await verify(store)).problems
        finally:
            await store.close()

    try:
        fast, at_once, fast_problems = asyncio.run(write(postgres, True))
        slow, none, slow_problems = asyncio.run(write(other, False))
    finally:
        other.drop()
    assert fast == slow
    assert len(fast["events"]) == 8
    assert dict(fast["balances"])["ann"] == 10_000 + 500 and dict(fast["balances"])["bob"] == 9_500
    assert at_once >= 4 and none == 0
    assert fast_problems == [] and slow_problems == []


def _wager(amount: int, fence: Fence | None = None, *, open_round: bool = False) -> Step:
    return Step(
        "T1-000001",
        events=[EventIn("wager", {"player": "ann", "amount": amount}, actor="ann", terminal="t")],
        transfers=[Transfer("ann", "escrow:T1", amount, "wager", 0, "blackjack")],
        meters=[("T1", "blackjack", amount, 0)],
        open_round=("T1", 1, "classic", "round") if open_round else None,
        actor=TABLE,
        fence=fence,
    )


def test_a_refused_batch_is_written_again_by_the_statements_which_name_the_reason(
    postgres: Backend,
) -> None:
    """A wager over ann's balance, a write under a lease another process took, a step of a
    round another process voided, each through a store that knows the round's head (so the one
    statement is tried first): the error names the reason, and nothing of the step is
    written."""

    async def main() -> None:
        first = await postgres.open()
        second = await Store.open(postgres.url, schema=postgres.schema, migrate=False)
        try:
            await _setup(first)
            leases = Leases(first, "one", "http://one", 1)
            await leases.join()
            fence = await leases.acquire("T1")
            assert fence is not None
            await first.commit(_wager(500, fence, open_round=True))
            await first.commit(_wager(500, fence))
            assert first.batches_at_once == 2
            before = await _contents(first)
            with pytest.raises(InsufficientFundsError):
                await first.commit(_wager(50_000, fence))
            assert await _contents(first) == before
            await asyncio.sleep(1.1)
            taker = Leases(second, "two", "http://two", 5)
            await taker.join()
            taken = await taker.acquire("T1")
            assert taken is not None and taken.token > fence.token
            with pytest.raises(FencedError):
                await first.commit(_wager(100, fence))
            assert await _contents(first) == before
            await second.commit(
                Step(
                    "T1-000001",
                    events=[EventIn("void", {"reason": "test"})],
                    transfers=[Transfer("escrow:T1", "ann", 1_000, "refund", 0, "blackjack void")],
                    meters=[("T1", "blackjack", -1_000, 0)],
                    status="voided",
                    actor=TABLE,
                    fence=taken,
                )
            )
            after_void = await _contents(first)
            with pytest.raises(InvariantError, match="closed"):
                await first.commit(_wager(100, taken))
            assert await _contents(first) == after_void
            assert (await verify(first)).problems == []
        finally:
            await second.close()
            await first.close()

    asyncio.run(main())
