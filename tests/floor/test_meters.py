"""Meters per EWT, per table and for the floor derived from the ledger (PA 605a.5(d)); meter
clears by a supervisor only, with the readings before and after; gaming-day snapshots and the
win report."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tablejack.store import Store
from tablejack.store.meters_report import (
    day_bounds,
    ensure_snapshots,
    gaming_day_of,
    readings,
    snapshots,
    win_report,
)
from tests.support.floor import insert
from tests.support.store import Backend

DAY_US = 24 * 3600 * 1_000_000


def floor_activity(client: Any, kit: Any) -> None:
    """The round of the kit (ann at EWT-1, bob at EWT-2), then a bill in and a voucher out by
    cat signed in at EWT-2, the voucher redeemed by ann signed in at EWT-1, and two hand pays
    by the cage."""
    kit.play_round(client)  # registers EWT-1 and EWT-2 at A1
    cat = kit.session(client, "cat", "EWT-2", "A1")
    ann = kit.session(client, "ann", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 10_000}, headers=cat).is_success
    out = client.post("/api/floor/cash-out", json={"amount": 3000}, headers=cat)
    code = out.json()["validation_code"]
    assert insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann).is_success
    for account, terminal, amount, kind in (
        ("ann", "EWT-1", 5000, "jackpot"),
        ("bob", "EWT-2", 2000, "cancelled_credit"),
    ):
        paid = kit.post(
            client,
            "/api/floor/hand-pay",
            "cashier",
            account=account,
            terminal=terminal,
            amount=amount,
            kind=kind,
        )
        assert paid.is_success, paid.text


def counters(meter: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "coin_in",
        "voided",
        "coin_out",
        "jackpots",
        "cancelled_credits",
        "bills_in",
        "vouchers_in",
        "vouchers_out",
        "games_played",
        "drop",
        "win",
        "hold_percent",
    )
    return {key: meter[key] for key in keys}


EWT_1 = {
    "coin_in": 1000,
    "voided": 0,
    "coin_out": 2000,
    "jackpots": 5000,
    "cancelled_credits": 0,
    "bills_in": 0,
    "vouchers_in": 3000,
    "vouchers_out": 0,
    "games_played": 1,
    "drop": 1000,
    "win": -1000,
    "hold_percent": "-100.00",
}
EWT_2 = {
    "coin_in": 1500,
    "voided": 0,
    "coin_out": 2000,
    "jackpots": 0,
    "cancelled_credits": 2000,
    "bills_in": 10_000,
    "vouchers_in": 0,
    "vouchers_out": 3000,
    "games_played": 1,
    "drop": 1500,
    "win": -500,
    "hold_percent": "-33.33",
}
TABLE_A1 = {
    "coin_in": 2500,
    "voided": 0,
    "coin_out": 4000,
    "jackpots": 5000,
    "cancelled_credits": 2000,
    "bills_in": 10_000,
    "vouchers_in": 3000,
    "vouchers_out": 3000,
    "games_played": 1,
    "drop": 2500,
    "win": -1500,
    "hold_percent": "-60.00",
}


def test_605a5d_meters_per_ewt_and_table_come_from_the_ledger(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    floor_activity(client, kit)
    meters = client.get("/api/floor/meters", headers=kit.auth("super")).json()
    assert counters(meters["terminal"]["EWT-1"]) == EWT_1
    assert counters(meters["terminal"]["EWT-2"]) == EWT_2
    assert counters(meters["table"]["A1"]) == TABLE_A1
    assert counters(meters["floor"]["floor"]) == TABLE_A1
    assert meters["terminal"]["EWT-2"]["wager_kinds"] == {
        "blackjack": {"drop": 1000, "win": -1000, "hold_percent": "-100.00"},
        "buzzer_beater": {"drop": 500, "win": 500, "hold_percent": "100.00"},
    }
    # every settled round: coin in less coin out is the house's win
    table = meters["table"]["A1"]
    assert table["coin_in"] - table["voided"] - table["coin_out"] == table["win"]
    # the same drop and win as the meters the table bumps in each step's transaction
    bumped = client.get("/api/meters", headers=kit.auth("super")).json()
    assert {(m["wager_kind"], m["drop"], m["win"]) for m in bumped} == {
        (kind, entry["drop"], entry["win"]) for kind, entry in table["wager_kinds"].items()
    }


def test_605a5d_a_refused_step_and_a_restart_leave_the_meters_as_they_were(
    make_client: Any, kit: Any
) -> None:
    first = make_client()
    floor_activity(first, kit)
    before = first.get("/api/floor/meters", headers=kit.auth("super")).json()
    cat = kit.session(first, "cat", "EWT-2", "A1")
    refused = first.post("/api/floor/cash-out", json={"amount": 10**9}, headers=cat)
    assert refused.status_code == 409
    by_dealer = kit.post(
        first,
        "/api/floor/hand-pay",
        "dealer",
        account="ann",
        terminal="EWT-1",
        amount=100,
        kind="jackpot",
    )
    assert by_dealer.status_code == 403
    first.__exit__(None, None, None)
    second = make_client()
    assert second.get("/api/floor/meters", headers=kit.auth("super")).json() == before


def test_605a4d_only_a_supervisor_clears_meters_and_the_readings_are_kept(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    floor_activity(client, kit)
    before = client.get("/api/floor/meters", headers=kit.auth("super")).json()
    body = {"scope": "terminal", "scope_id": "EWT-1", "reason": "logic board replaced"}
    for who in ("dealer", "ann"):
        refused = client.post("/api/floor/meters/clear", json=body, headers=kit.auth(who))
        assert refused.status_code == 403
        assert refused.json()["detail"]["rule"] == "PA 605a.4(d)"
    assert client.get("/api/floor/meters", headers=kit.auth("super")).json() == before
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    assert [(e["kind"], e["actor"]) for e in audit[:2]] == [("role", "ann"), ("role", "dana")]
    cleared = client.post("/api/floor/meters/clear", json=body, headers=kit.auth("super")).json()
    assert counters(cleared["before"]) == EWT_1
    assert counters(cleared["after"]) == {
        **dict.fromkeys(EWT_1, 0),
        "hold_percent": None,
    }
    after = client.get("/api/floor/meters", headers=kit.auth("super")).json()
    assert counters(after["terminal"]["EWT-1"])["coin_in"] == 0
    assert counters(after["terminal"]["EWT-1"]["lifetime"]) == EWT_1
    assert counters(after["table"]["A1"]) == TABLE_A1  # another scope: untouched
    # activity after the clear shows from zero
    ann = kit.session(client, "ann", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 2000}, headers=ann).is_success
    again = client.get("/api/floor/meters", headers=kit.auth("super")).json()["terminal"]["EWT-1"]
    assert (again["bills_in"], again["vouchers_in"], again["lifetime"]["bills_in"]) == (
        2000,
        0,
        2000,
    )
    [record] = client.get("/api/floor/meters/clears", headers=kit.auth("super")).json()
    assert (record["by"], record["reason"], record["before"]["jackpots"]) == (
        "sam",
        "logic board replaced",
        5000,
    )
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_605a5d_gaming_day_snapshots_and_the_win_report(
    make_client: Any, kit: Any, tmp_path: Path
) -> None:
    client = make_client()
    floor_activity(client, kit)
    now = time.time_ns() // 1000
    today = gaming_day_of(now, 6)
    live = client.get(f"/api/floor/reports/win?day={today}", headers=kit.auth("super")).json()
    assert live["final"] is False
    assert counters(live["tables"]["A1"]) == TABLE_A1
    assert counters(live["floor"]) == TABLE_A1

    async def body() -> tuple[Any, ...]:
        store = await Store.open(str(tmp_path / "floor.db"))
        try:
            later = day_bounds(today, 6)[1] + 1
            taken = await ensure_snapshots(store, later)
            again = await ensure_snapshots(store, later)
            kept = await snapshots(store, today)
            report = await win_report(store, today, later)
            start, end = day_bounds(today, 6)
            day = await readings(store, since_us=start, until_us=end)
            return taken, again, kept, report, day
        finally:
            await store.close()

    taken, again, kept, report, day = asyncio.run(body())
    assert taken == [today]
    assert again == []
    assert counters(kept["table"]["A1"]["day"]) == TABLE_A1
    assert counters(kept["terminal"]["EWT-2"]["lifetime"]) == EWT_2
    assert kept["table"]["A1"]["day"] == day["table"]["A1"]
    assert report["final"] is True
    assert report["tables"]["A1"]["wager_kinds"]["buzzer_beater"] == {
        "drop": 500,
        "win": 500,
        "hold_percent": "100.00",
    }
    assert counters(report["terminals"]["EWT-1"]) == EWT_1
    refused = client.get("/api/floor/reports/win", headers=kit.auth("dealer"))
    assert refused.status_code == 403
