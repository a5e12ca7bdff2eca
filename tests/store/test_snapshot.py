"""The store's reads of one moment (:meth:`tablejack.store.db.Store.snapshot`) and the
verification that runs in one: ``tablejack records verify`` and ``GET /api/records/verify`` run
against a live floor, and a step a server commits while they read is seen whole or not at all.
Read at READ COMMITTED on separate connections, a round row read before a step and its events
read after it disagreed: "the log ends at event 22 but the round row names event 19"."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.models import EVENTS, LEDGER, ROUNDS
from tablejack.store.verify import verify, verify_chains
from tests.support.store import TABLE_T1, Backend, seed_two_players, wager_step


def _wager(round_number: int, player: str, index: int) -> Step:
    """``player``'s wager of 100 cents in round ``round_number`` of T1 (opening it when
    ``index`` is 0)."""
    round_id = f"T1-{round_number:06d}"
    return Step(
        round_id,
        events=[EventIn("wager", {"player": player, "amount": 100}, actor=player, terminal="t1")],
        transfers=[Transfer(player, "escrow:T1", 100, "wager", index, "blackjack")],
        meters=[("T1", "blackjack", 100, 0)],
        open_round=("T1", round_number, "classic", "round") if index == 0 else None,
        actor=TABLE_T1,
    )


async def _counts(store: Store, connection: object) -> tuple[int, int, int]:
    """The round row's last event, the events and the ledger rows of T1-000001."""
    assert connection is not None
    head = await connection.scalar(  # type: ignore[attr-defined]
        select(ROUNDS.c.last_seq).where(ROUNDS.c.id == "T1-000001")
    )
    events = await connection.scalar(  # type: ignore[attr-defined]
        select(func.count()).select_from(EVENTS).where(EVENTS.c.round_id == "T1-000001")
    )
    rows = await connection.scalar(  # type: ignore[attr-defined]
        select(func.count()).select_from(LEDGER).where(LEDGER.c.round_id == "T1-000001")
    )
    return int(head), int(events), int(rows)


def test_a_snapshot_reads_the_store_of_one_moment(backend: Backend) -> None:
    """A step committed between two reads of a snapshot is in neither; a read after the
    snapshot ends sees it."""

    async def body(store: Store) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        await seed_two_players(store)
        await store.commit(wager_step("T1-000001", "ann", 100, open_round=True))
        async with store.snapshot() as connection:
            head = await connection.scalar(
                select(ROUNDS.c.last_seq).where(ROUNDS.c.id == "T1-000001")
            )
            await store.commit(wager_step("T1-000001", "bob", 100))  # another connection
            inside = (int(head), *(await _counts(store, connection))[1:])
        async with store.snapshot() as connection:
            after = await _counts(store, connection)
        return inside, after

    inside, after = backend.run(body)
    assert inside[0] == inside[1] == inside[2]  # the head, its events, their ledger rows
    assert after[0] == after[1] == inside[0] + 1
    assert after[2] == inside[2] + 1


def test_verify_while_a_table_commits_reports_no_problem(backend: Backend) -> None:
    """Verification and its chains-only form, run again and again while rounds are opened and
    wagered on by another task, find nothing wrong in any run."""

    async def body(store: Store) -> tuple[int, list[list[str]]]:
        await seed_two_players(store)
        stop = asyncio.Event()
        written = 0

        async def table() -> None:
            nonlocal written
            number = 0
            while not stop.is_set() and number < 40:
                number += 1
                await store.commit(_wager(number, "ann", 0))
                await store.commit(_wager(number, "bob", 1))
                written += 2

        task = asyncio.create_task(table())
        found: list[list[str]] = []
        try:
            while not task.done():
                report = await verify(store)
                found.append(report.problems)
                found.append(await verify_chains(store))
        finally:
            stop.set()
            await task
        found.append((await verify(store)).problems)
        return written, found

    written, found = backend.run(body)
    assert written == 80
    assert len(found) >= 3  # at least one run while the table wrote, and one after
    assert all(problems == [] for problems in found), [p for p in found if p]


def test_a_snapshot_outlives_a_floor_process_s_idle_transaction_timeout(postgres: Backend) -> None:
    """A floor process's connections end an idle transaction after a lease time
    (``idle_in_transaction_session_timeout``); a snapshot, which holds no lock, is exempt: its
    reader may think between reads for longer (a long verification on a live floor)."""

    async def main() -> tuple[int, int]:
        store = await Store.open(
            postgres.url,
            schema=postgres.schema,
            settings={"idle_in_transaction_session_timeout": "500ms"},
        )
        try:
            await seed_two_players(store)
            async with store.snapshot() as connection:
                first = await connection.scalar(select(func.count()).select_from(EVENTS))
                await asyncio.sleep(1.0)  # idle in the transaction, twice the timeout
                second = await connection.scalar(select(func.count()).select_from(EVENTS))
            return int(first), int(second)
        finally:
            await store.close()

    first, second = asyncio.run(main())
    assert first == second > 0
