"""Table leases and their fencing tokens on PostgreSQL (:mod:`tablejack.store.leases`): acquire,
renew, expire, take over, release, and every write made under a lease that is no longer the
table's current one refused inside its own transaction, with nothing written."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import text

from tablejack.store import EventIn, Fence, FencedError, Step, Store, Transfer
from tablejack.store.leases import LeaseError, Leases
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import open_locks
from tests.support.store import Backend

CASHIER = Actor(Role.CASHIER, "cleo")
TABLE = Actor(Role.TABLE, "T1")
T = TypeVar("T")


def _run(backend: Backend, body: Callable[[Store, Store], Awaitable[T]]) -> T:
    """``body(first, second)``: two stores on the backend's database, as two processes."""

    async def main() -> T:
        first = await backend.open()
        second = await Store.open(backend.url, schema=backend.schema, migrate=False)
        try:
            await first.save_table("T1", "classic", {}, {})
            await first.ensure_account("ann", "player")
            await first.fund("ann", 10_000, actor=CASHIER)
            return await body(first, second)
        finally:
            await second.close()
            await first.close()

    return asyncio.run(main())


def _wager(fence: Fence | None, *, open_round: bool = False, amount: int = 500) -> Step:
    return Step(
        "T1-000001",
        events=[EventIn("wager", {"player": "ann", "amount": amount}, actor="ann", terminal="t1")],
        transfers=[Transfer("ann", "escrow:T1", amount, "wager", 0)],
        meters=[("T1", "blackjack", amount, 0)],
        open_round=("T1", 1, "classic", "round") if open_round else None,
        actor=TABLE,
        fence=fence,
    )


async def _written(store: Store) -> tuple[int, int | None, int]:
    """Events of the round, ann's balance, ledger rows of the round."""
    return (
        len(await store.events("T1-000001")),
        await store.balance("ann"),
        len(await store.ledger_of_round("T1-000001")),
    )


def test_an_sqlite_store_has_no_leases(tmp_path: Path) -> None:
    async def body(store: Store) -> None:
        with pytest.raises(LeaseError, match="PostgreSQL"):
            Leases(store, "m1", "http://a", 5)

    Backend.sqlite(tmp_path).run(body)


def test_a_lease_is_held_by_one_member_and_renewed(postgres: Backend) -> None:
    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 5)
        two = Leases(second, "two", "http://two", 5)
        await one.join()
        await two.join()
        fence = await one.acquire("T1")
        assert fence == Fence("T1", 1)
        assert await two.acquire("T1") is None  # held: no one else takes it
        before = (await one.view()).leases["T1"]
        await asyncio.sleep(0.01)
        assert await one.renew([fence]) == [fence]
        after = (await two.view()).leases["T1"]
        assert (after.holder, after.url, after.token) == ("one", "http://one", 1)
        assert after.expires_us > before.expires_us
        view = await two.view()
        assert set(view.members) == {"one", "two"}
        assert after.live(view.now_us)

    _run(postgres, body)


def test_an_expired_lease_is_taken_over_and_the_old_holder_loses_it(postgres: Backend) -> None:
    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 1.0)
        two = Leases(second, "two", "http://two", 1.0)
        old = await one.acquire("T1")
        assert old == Fence("T1", 1)
        assert await two.acquire("T1") is None
        await asyncio.sleep(1.1)  # one stopped renewing
        new = await two.acquire("T1")
        assert new == Fence("T1", 2)  # the token moved on
        assert await one.renew([old]) == []  # lost: the renewal does not bring it back
        assert (await one.view()).leases["T1"].holder == "two"

    _run(postgres, body)


def test_an_expired_lease_no_one_took_is_renewed_with_its_token(postgres: Backend) -> None:
    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 0.2)
        fence = await one.acquire("T1")
        assert fence is not None
        await asyncio.sleep(0.3)
        assert await one.renew([fence]) == [fence]
        await _commit_ok(first, fence)

    async def _commit_ok(store: Store, fence: Fence) -> None:
        await store.commit(_wager(fence, open_round=True))
        assert (await _written(store))[0] == 1

    _run(postgres, body)


def test_the_lease_of_a_member_known_to_have_ended_is_taken_at_once(postgres: Backend) -> None:
    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 30)
        two = Leases(second, "two", "http://two", 30)
        assert await one.acquire("T1") == Fence("T1", 1)
        assert await two.acquire("T1", dead="someone else") is None  # not its holder
        assert await two.acquire("T1", dead="one") == Fence("T1", 2)

    _run(postgres, body)


def test_a_released_lease_is_taken_at_once(postgres: Backend) -> None:
    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 30)
        two = Leases(second, "two", "http://two", 30)
        fence = await one.acquire("T1")
        assert fence is not None
        assert await one.release(fence)
        assert not await one.release(fence)  # no longer its own
        assert await two.acquire("T1") == Fence("T1", 2)

    _run(postgres, body)


def test_the_holders_writes_commit_and_a_stale_holders_are_refused_with_nothing_written(
    postgres: Backend,
) -> None:
    """The old holder's step — events, ledger rows, balance and meters — is refused by its own
    transaction once another member took the table over; the new holder's is written."""

    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 1.0)
        two = Leases(second, "two", "http://two", 1.0)
        old = await one.acquire("T1")
        assert old is not None
        await first.commit(_wager(old, open_round=True))
        before = await _written(first)
        assert before == (1, 9_500, 1)
        await asyncio.sleep(1.1)
        new = await two.acquire("T1")
        assert new is not None
        with pytest.raises(FencedError, match="current token is 2"):
            await first.commit(_wager(old))
        with pytest.raises(FencedError):
            await first.set_table_status("T1", "closed", fence=old)
        assert await _written(first) == before
        assert (await first.meters("T1"))[0]["drop"] == 500
        assert [t["status"] for t in await first.tables()] == ["closed"]
        await second.commit(_wager(new))
        assert await _written(second) == (2, 9_000, 2)

    _run(postgres, body)


def test_a_forged_or_foreign_token_is_refused_in_the_write_transaction(postgres: Backend) -> None:
    """An attacker with the store's API but not the lease: a token from the future, a token of
    another table, a fence of a table never leased, and a tilt written with a stale fence
    (whose terminal lock, written in the same transaction, goes with it)."""

    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 30)
        fence = await one.acquire("T1")
        assert fence == Fence("T1", 1)
        await first.commit(_wager(fence, open_round=True))
        before = await _written(first)
        for forged in (Fence("T1", 2), Fence("T1", 0), Fence("T2", 1), Fence("T9", 1)):
            with pytest.raises(FencedError):
                await second.commit(_wager(forged))
        stale = Fence("T1", 0)

        async def lock_row(connection: object) -> dict[str, str]:
            await connection.execute(  # type: ignore[attr-defined]
                text(
                    "INSERT INTO terminal_locks (terminal, code, reason, locked_us, locked_by) "
                    "VALUES ('EWT-1', 'connection_lost', 'forged', 1, 'server')"
                )
            )
            return {}

        with pytest.raises(FencedError):
            await second.commit_logged(
                "floor-tilts",
                EventIn("tilt", {"terminal": "EWT-1"}, actor="server"),
                [],
                None,
                owner="floor-tilts",
                before=lock_row,
                log_kind="protections",
                fence=stale,
            )
        assert await _written(second) == before
        assert await second.events("floor-tilts") == []
        assert await open_locks(second) == {}

    _run(postgres, body)


def test_a_takeover_waits_for_the_old_holders_write_in_flight(postgres: Backend) -> None:
    """A write that checked the old token before the takeover commits first; the takeover
    (which waits for it, or gives up after its lock timeout and is tried again) moves the token
    after it, so the new holder recovers a log that holds that write."""

    async def body(first: Store, second: Store) -> None:
        one = Leases(first, "one", "http://one", 1.0)
        two = Leases(second, "two", "http://two", 1.0)
        old = await one.acquire("T1")
        assert old is not None
        await first.commit(_wager(old, open_round=True))
        await asyncio.sleep(1.1)
        async with first.engine.connect() as writer:  # a write of the old holder in flight
            transaction = await writer.begin()
            await writer.execute(
                text("SELECT token FROM table_fences WHERE table_id = 'T1' FOR SHARE")
            )
            assert await two.acquire("T1") is None  # waited 200 ms for the write, gave up
            await transaction.commit()
        assert await two.acquire("T1") == Fence("T1", 2)

    _run(postgres, body)
