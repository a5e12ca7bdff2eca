"""Player protections (session limits that cannot be loosened for 24 hours, self-exclusion)
and terminal lock-out (a tilt, cleared by a supervisor with a reason code): refused wagers are
audited and change nothing."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tablejack.server.duties import protections as guard
from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import check_wager, set_limits, usage
from tablejack.store.vouchers import FloorRefusedError
from tests.support.store import Backend

HOUR = 3600.0


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def put(client: Any, kit: Any, path: str, who: str, **body: Any) -> Any:
    return client.put(path, json=body, headers=kit.auth(who))


def open_round(client: Any, kit: Any) -> None:
    kit.post(client, "/api/tables/A1/dealer", "dealer", command="open-round")


def test_a_wager_past_the_wager_limit_is_refused_and_changes_nothing(
    make_client: Any, kit: Any
) -> None:
    clock = Clock()
    client = make_client(clock=clock)
    assert (
        put(client, kit, "/api/floor/players/ann/limits", "ann", wager_limit=1500).json()[
            "wager_limit"
        ]
        == 1500
    )
    assert (
        put(client, kit, "/api/floor/players/bob/limits", "ann", wager_limit=1).status_code == 403
    )
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
        refused = ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 100})
        assert (refused["type"], refused["code"], refused["rule"]) == (
            "error",
            "limit",
            "player protection",
        )
        assert "$16.00" in refused["message"]
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == kit.credit - 1500
    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert [e["kind"] for e in recall["events"]] == ["open", "wager", "wager"]
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    assert (audit[0]["kind"], audit[0]["actor"], audit[0]["terminal"]) == ("limit", "ann", "EWT-1")
    # tighter at once; looser only 24 hours after the last change
    assert (
        put(client, kit, "/api/floor/players/ann/limits", "ann", wager_limit=1200).status_code
        == 200
    )
    looser = put(client, kit, "/api/floor/players/ann/limits", "ann", wager_limit=5000)
    assert (looser.status_code, looser.json()["detail"]["code"]) == (409, "limit_locked")
    removed = put(client, kit, "/api/floor/players/ann/limits", "super", wager_limit=None)
    assert removed.json()["detail"]["code"] == "limit_locked"
    clock.now += 24 * HOUR
    view = put(client, kit, "/api/floor/players/ann/limits", "ann", wager_limit=None).json()
    assert view["wager_limit"] is None


def test_self_exclusion_blocks_wagering_and_is_never_shortened(make_client: Any, kit: Any) -> None:
    clock = Clock()
    client = make_client(clock=clock)
    assert (
        kit.post(client, "/api/floor/players/bob/self-exclusion", "bob", days=2).status_code == 200
    )
    shorter = kit.post(client, "/api/floor/players/bob/self-exclusion", "bob", days=1)
    assert shorter.json()["detail"]["code"] == "limit_locked"
    open_round(client, kit)
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        bob.request({"type": "position", "position": 2})
        refused = bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert (refused["type"], refused["code"]) == ("error", "excluded")
    assert client.get("/api/me", headers=kit.auth("bob")).json()["balance"] == kit.credit
    clock.now += 2 * 24 * HOUR + 1
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        bob.request({"type": "position", "position": 2})
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["type"] == "ack"


def test_a_tilt_locks_the_terminal_until_a_supervisor_clears_it_with_a_code(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        locked = kit.post(
            client,
            "/api/floor/terminals/EWT-1/tilt",
            "dealer",
            code="door_open",
            reason="main door opened",
        )
        assert locked.status_code == 200
        shown = ann.until(lambda m: m["type"] == "error" and m["code"] == "tilt")
        assert "door_open" in shown["message"]
        refused = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert (refused["code"], refused["rule"]) == ("tilt", "terminal lock-out")
        by_dealer = kit.post(
            client,
            "/api/floor/terminals/EWT-1/clear",
            "dealer",
            code="fault_repaired",
            reason="door closed",
        )
        assert by_dealer.status_code == 403
        assert list(client.get("/api/floor/tilts", headers=kit.auth("super")).json()) == ["EWT-1"]
        bad_code = kit.post(
            client, "/api/floor/terminals/EWT-1/clear", "super", code="whatever", reason="x"
        )
        assert bad_code.status_code == 409
        cleared = kit.post(
            client,
            "/api/floor/terminals/EWT-1/clear",
            "super",
            code="fault_repaired",
            reason="door closed and sealed",
        )
        assert cleared.json()["cleared"] == 1
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["type"] == "ack"
    assert client.get("/api/floor/tilts", headers=kit.auth("super")).json() == {}
    kinds = [e["kind"] for e in client.get("/api/audit", headers=kit.auth("super")).json()]
    assert {"tilt", "tilt_clear", "role"} <= set(kinds)
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_the_loss_and_time_limits_count_the_gaming_day(backend: Backend) -> None:
    t0 = 1_800_000_000_000_000
    day = (t0 - 3_600_000_000, t0 + 20 * 3_600_000_000)

    async def body(store: Store) -> list[Any]:
        await store.save_table("T1", "hybrid", {}, {})
        await store.ensure_account("ann", "player")
        await store.fund("ann", 10_000, actor=Actor(Role.CASHIER, "cleo"))
        # the table books ann's wager (her wager event) and its loss (the settlement event)
        await store.commit(
            Step(
                "T1-000001",
                events=[
                    EventIn("open", {}),
                    EventIn("wager", {"player": "ann", "amount": 1000}, actor="ann"),
                    EventIn("settle", {"wagers": [0]}),
                ],
                transfers=[
                    Transfer("ann", "escrow:T1", 1000, "wager", 0, "blackjack", event=1),
                    Transfer("escrow:T1", "house:T1", 1000, "lost", 0, "blackjack lose", event=2),
                ],
                open_round=("T1", 1, "hybrid", "round"),
                at_us=t0,
                actor=Actor(Role.TABLE, "T1"),
            )
        )
        out: list[Any] = [await usage(store, "ann", *day)]
        await set_limits(
            store, "ann", {"loss_limit": 1500, "time_limit_s": 600}, by="ann", at_us=t0
        )
        for amount, at in ((500, t0 + 1), (501, t0 + 1), (1, t0 + 600_000_000)):
            try:
                await check_wager(store, "ann", amount, at_us=at, day=day)
                out.append("ok")
            except FloorRefusedError as refusal:
                out.append(refusal.message)
        return out

    used, fits, past_loss, past_time = backend.run(body)
    assert used == {"wagered": 1000, "loss": 1000, "first_wager_us": t0}
    assert fits == "ok"
    assert "loss limit of $15.00" in past_loss
    assert past_time == "The time limit of 600 seconds of play is reached."


def test_player_protection_guard_keeps_an_old_cache_while_one_reload_runs() -> None:
    """A cache that has only grown old is used at once while one reload runs in the
    background; after a change made through this process (invalidate) the guard waits for
    the reload, so a new limit applies to the very next wager."""

    class Clock:
        now = 100.0

        def clock(self) -> float:
            return self.now

    floor: Any = Clock()
    old = guard.GuardCache(loaded_at=100.0 - guard.RELOAD_SECONDS - 1, protected={"ann"})
    gate = asyncio.Event()
    loads: list[object] = []

    async def load(of: Any) -> guard.GuardCache:
        loads.append(of)
        if len(loads) == 1:  # the first read: the cache that has grown old
            return old
        await gate.wait()
        return guard.GuardCache(loaded_at=of.clock(), protected={"bob"})

    protections = guard.Protections(floor, load=load)

    async def body() -> None:
        assert await asyncio.wait_for(protections.cache(), 1) is old  # read at first use
        assert await asyncio.wait_for(protections.cache(), 1) is old
        assert await asyncio.wait_for(protections.cache(), 1) is old
        await asyncio.sleep(0)
        assert loads == [floor, floor]  # one reload for both
        protections.invalidate()
        waiting = asyncio.ensure_future(protections.cache())
        await asyncio.sleep(0.01)
        assert not waiting.done()  # after a change: the guard waits for the store
        gate.set()
        assert (await waiting).protected == {"bob"}

    asyncio.run(body())
