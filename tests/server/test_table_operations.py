"""The dealer console and the card reader, gaming-day procedures, irregularities, voiding,
restart recovery and the classic table's clock."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.table import TableConfig

T0 = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC).timestamp()
HOUR = 3600.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def dealer(client: Any, kit: Any, command: str, card: str | None = None, table: str = "A1") -> Any:
    return kit.post(client, f"/api/tables/{table}/dealer", "dealer", command=command, card=card)


def test_633c5_d_g_i_the_table_refuses_to_deal_until_the_procedures_are_done(
    make_client: Any, kit: Any
) -> None:
    clock = Clock()
    client = make_client([kit.hybrid_table(require_procedures=True)], clock=clock)
    refused = dealer(client, kit, "open-round").json()["detail"]
    assert refused["rule"] == "PA 633c.5(d)"
    kit.post(client, "/api/tables/A1/procedures/reader-inspection", "super", result="ok")
    assert dealer(client, kit, "open-round").json()["detail"]["rule"] == "PA 633c.5(g)"
    kit.post(client, "/api/tables/A1/procedures/decks", "dealer", decks=6)
    assert dealer(client, kit, "open-round").json()["detail"]["rule"] == "PA 633c.5(i)"
    kit.post(client, "/api/tables/A1/procedures/deck-inspection", "super", dealer="dana")
    assert dealer(client, kit, "open-round").json() == {"ok": True, "round_id": "A1-000001"}
    # a day later: the decks are 24 hours old and a new gaming day needs a new inspection
    clock.now += 24 * HOUR
    state = client.get("/api/tables/A1/procedures", headers=kit.auth("super")).json()
    assert state["reader_inspected"] is False
    kit.post(client, "/api/tables/A1/procedures/reader-inspection", "super", result="ok")
    state = client.get("/api/tables/A1/procedures", headers=kit.auth("super")).json()
    assert "24 hours old" in state["problem"]
    assert [h["kind"] for h in state["history"]] == [
        "reader_inspection",
        "decks_registered",
        "deck_inspection",
        "reader_inspection",
    ]
    assert state["history"][2]["verified_by"] == "sam"
    assert state["history"][2]["dealer"] == "dana"


def test_reader_cards_the_engine_asked_for_are_dealt(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table(source="reader", countdown=30)])
    dealer(client, kit, "open-round")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 2})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
    dealer(client, kit, "close-wagering")
    state = client.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
    assert state["next"] == "Deal a card to position 2."
    lines = client.post(
        "/api/tables/A1/reader", content="10S\n6D\n", headers=kit.auth("dealer")
    ).text.splitlines()
    assert lines == ["OK A1-000001 4", "OK A1-000001 5"]
    assert kit.read(client, "7C", table="A1") == ["OK A1-000001 6"]
    state = client.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
    assert state["next"] == "Deal the hole card face down and insert it into the card reader."


def test_a_card_not_asked_for_stops_the_round_and_the_void_refunds_every_wager(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(source="reader")])
    dealer(client, kit, "open-round")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == 98_500
    [refused] = kit.read(client, "AS", table="A1")  # the shoe read it; wagering is still open
    assert refused.startswith("ERR PA 633c.5(j) No card is wanted now")
    tables = client.get("/api/tables", headers=kit.auth("super")).json()
    assert tables[0]["status"] == "halted"
    assert dealer(client, kit, "close-wagering").json()["detail"]["code"] == "halted"
    voided = kit.post(client, "/api/tables/A1/void", "super", reason="card not asked for")
    assert voided.json() == {"ok": True, "voided": "A1-000001"}
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == 100_000
    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert recall["status"] == "voided"
    assert [e["kind"] for e in recall["events"]][-2:] == ["irregularity", "void"]
    assert recall["events"][-1]["payload"]["refunds"] == [
        {"player": "ann", "amount": 1000, "wager_id": 0},
        {"player": "ann", "amount": 500, "wager_id": 1},
    ]
    meters = client.get("/api/meters", headers=kit.auth("super")).json()
    assert {(m["wager_kind"], m["drop"]) for m in meters} == {
        ("blackjack", 0),
        ("buzzer_beater", 0),
    }
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_a_restart_resumes_the_open_round_where_it_stood(
    make_client: Any, kit: Any, tmp_path: Any
) -> None:
    db = str(tmp_path / "restart.db")
    order = "10S 9H 6D 5C 9C 10H 4S 8D"
    first = make_client([kit.hybrid_table(cards=order, countdown=30)], db=db)
    dealer(first, kit, "open-round")
    with kit.connect(first, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
    dealer(first, kit, "close-wagering")
    before = first.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()["view"]
    first.__exit__(None, None, None)
    second = make_client([kit.hybrid_table(countdown=30)], db=db)
    after = second.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
    assert after["round_id"] == "A1-000001"
    assert after["view"]["players"] == before["players"]
    # the hole card face down, to the dealer's console too (PA 633c.5(o))
    assert after["view"]["dealer"]["all_cards"] == before["dealer"]["all_cards"] == ["9H", "back"]
    with kit.connect(second, "ann", "EWT-1", "A1") as ann:
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        done = ann.state(lambda m: kit.phase(m) == "complete")
        assert done["view"]["dealer"]["cards"][:2] == ["9H", "5C"]  # the hole card restored
        assert done["view"]["you"]["settlements"][0]["amount"] == 1000
    assert second.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_a_restart_under_the_void_policy_refunds_the_open_round(
    make_client: Any, kit: Any, tmp_path: Any
) -> None:
    db = str(tmp_path / "void.db")
    first = make_client([kit.hybrid_table(countdown=30)], db=db)
    dealer(first, kit, "open-round")
    with kit.connect(first, "bob", "EWT-2", "A1") as bob:
        bob.request({"type": "position", "position": 3})
        bob.request({"type": "wager", "kind": "blackjack", "amount": 2500})
    assert first.get("/api/me", headers=kit.auth("bob")).json()["balance"] == 97_500
    first.__exit__(None, None, None)
    second = make_client([kit.hybrid_table(recovery="void")], db=db)
    assert second.get("/api/me", headers=kit.auth("bob")).json()["balance"] == 100_000
    recall = second.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert recall["status"] == "voided"
    assert recall["events"][-1]["payload"]["reason"].startswith("the server restarted")


def test_classic_table_countdown_stands_the_seat_in_turn(make_client: Any, kit: Any) -> None:
    # seat 1 (ann) 10S 7H = 17; dealer 9D, hole 9C = 18: nobody acts, the clock stands seat 1
    config = TableConfig(
        "C1",
        ClassicRules(),
        automated=False,
        require_procedures=False,
        countdown_seconds=0.5,
        cards="10S 9D 7H 9C",
    )
    client = make_client([config])
    dealer(client, kit, "open-round", table="C1")
    with kit.connect(client, "ann", "EWT-1", "C1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        dealer(client, kit, "close-wagering", table="C1")
        done = ann.state(lambda m: kit.phase(m) == "complete")
        [settlement] = done["view"]["you"]["settlements"]
        assert (settlement["result"], settlement["returned"]) == ("lose", 0)
    recall = client.get("/api/rounds/C1-000001", headers=kit.auth("super")).json()
    assert ("1 stand", "clock") in [(d["text"], d["actor"]) for d in recall["decisions"]]


def test_the_rules_icon_states_what_633c5_c2_and_c3_require(make_client: Any, kit: Any) -> None:
    config = TableConfig("A1", HybridRules(countdown_seconds=20), require_procedures=False)
    client = make_client([config])
    icon = client.get("/api/tables/A1", headers=kit.auth("ann")).json()["rules_icon"]
    assert icon["lines"][:4] == [
        "Blackjack pays 3 to 2.",
        "Dealer stands on all soft 17s.",
        "Insurance pays 2 to 1.",
        "If you do not hit or stand before the 20-second countdown clock ends, your hand stands.",
    ]
    assert {"player": "20", "dealer": "21 or blackjack", "pays": "30 to 1"} in icon["buzzer_beater"]
