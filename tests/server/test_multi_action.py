"""A multi-action table (NJ multi-action blackjack) through the WebSocket protocol: three spot
amounts in one wager, a double naming spots, three dealer rounds, the ledger and game recall."""

from __future__ import annotations

from typing import Any

from tablejack.games.multi_action import MultiActionRules
from tablejack.server.table import TableConfig
from tests.support.store import Backend

# ann (seat 1): 10S 5C, hits 4S = 19; bob (seat 2): 6H 5D = 11, doubles spots 1 and 3: 9C = 20;
# dealer first card 6D; round 1: 10H 8D (bust); round 2: 10C 5H (21); round 3: KD 2C (18)
ORDER = "10S 6H 6D 5C 5D 4S 9C 10H 8D 10C 5H KD 2C"


def multi_table(**options: Any) -> TableConfig:
    options.setdefault("automated", False)
    options.setdefault("require_procedures", False)
    options.setdefault("countdown_seconds", 30)
    return TableConfig("M1", MultiActionRules(), **options)


def dealer(client: Any, command: str) -> Any:
    return client.post(
        "/api/tables/M1/dealer",
        json={"command": command},
        headers={"Authorization": "Bearer tok-dealer"},
    )


def test_nj_mab_f1_to_f7_a_full_round_over_the_socket_balances_the_ledger(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([multi_table(cards=ORDER)], backend=backend)
    layout = client.get("/api/tables/M1", headers=kit.auth("ann")).json()
    assert (layout["game"], layout["positions"]) == ("multi-action", 7)
    assert dealer(client, "open-round").json()["round_id"] == "M1-000001"
    with (
        kit.connect(client, "ann", "EWT-1", "M1") as ann,
        kit.connect(client, "bob", "EWT-2", "M1") as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["ok"]
        assert bob.request({"type": "position", "position": 2})["ok"]
        wager = {"type": "wager", "kind": "blackjack"}
        assert ann.request({**wager, "amount": 3000, "spots": [1000, 1000, 1000]})["ok"]
        assert bob.request({**wager, "amount": 2000, "spots": [1000, 0, 1000]})["ok"]
        mine = ann.state(lambda m: m["balance"] == 97_000)["view"]["you"]
        assert (mine["position"], mine["spots"]) == (1, [1000, 1000, 1000])
        assert dealer(client, "close-wagering").status_code == 200
        dealt = ann.state(lambda m: kit.phase(m) == "playing")
        assert dealt["view"]["you"]["hands"][0]["cards"] == ["10S", "5C"]
        assert dealt["view"]["dealer"]["first_card"] == "6D"
        assert dealt["view"]["you"]["legal_actions"] == ["hit", "stand"]
        assert dealt["countdown"]["seconds"] == 30.0
        assert ann.request({"type": "action", "verb": "hit"})["ok"]
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        assert bob.request({"type": "action", "verb": "double", "spots": [1, 3]})["ok"]
        done = bob.state(lambda m: kit.phase(m) == "complete")
        rounds = done["view"]["dealer"]["rounds"]
        assert [rounds[k]["cards"] for k in ("1", "2", "3")] == [
            ["6D", "10H", "8D"],
            ["6D", "10C", "5H"],
            ["6D", "KD", "2C"],
        ]
        settled = done["view"]["you"]["settlements"]
        assert [(s["spot"], s["amount"], s["result"], s["returned"]) for s in settled] == [
            (1, 2000, "win", 4000),
            (3, 2000, "win", 4000),
        ]
        assert done["balance"] == 104_000
    recall = client.get("/api/rounds/M1-000001", headers=kit.auth("super")).json()
    assert recall["log_verified"] is True
    assert [c["code"] for c in recall["cards"]] == ORDER.split()
    assert [(d["text"], d["terminal"]) for d in recall["decisions"]][-3:] == [
        ("1 hit", "EWT-1"),
        ("1 stand", "EWT-1"),
        ("2 double 1,3", "EWT-2"),
    ]
    assert [(s["player"], s["spot"], s["net"]) for s in recall["settlements"]] == [
        ("ann", 1, 1000),
        ("bob", 1, 2000),
        ("ann", 2, -1000),
        ("ann", 3, 1000),
        ("bob", 3, 2000),
    ]
    for player, balance in (("ann", 101_000), ("bob", 104_000)):
        ledger = client.get(f"/api/accounts/{player}/ledger", headers=kit.auth("super")).json()
        assert ledger["balance"] == balance
    [meter] = client.get("/api/meters?table=M1", headers=kit.auth("super")).json()
    assert (meter["drop"], meter["win"]) == (7000, -5000)
    verified = client.get("/api/verify-log", headers=kit.auth("super")).json()
    assert (verified["ok"], verified["problems"]) == (True, [])


def test_nj_mab_f1_spot_wagers_are_checked_by_the_engine_and_change_nothing(
    make_client: Any, kit: Any
) -> None:
    client = make_client([multi_table(cards=ORDER)])
    dealer(client, "open-round")
    with kit.connect(client, "ann", "EWT-1", "M1") as ann:
        ann.request({"type": "position", "position": 1})
        one_spot = ann.request(
            {"type": "wager", "kind": "blackjack", "amount": 1000, "spots": [1000, 0, 0]}
        )
        assert (one_spot["type"], one_spot["rule"]) == ("error", "NJ MAB (f)(1)")
        assert "at least two of the three" in one_spot["message"]
        wrong_sum = ann.request(
            {"type": "wager", "kind": "blackjack", "amount": 5000, "spots": [1000, 1000, 0]}
        )
        assert (wrong_sum["type"], wrong_sum["rule"]) == ("error", "NJ MAB (f)(1)")
        single = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert (single["type"], single["rule"]) == ("error", "NJ MAB (f)(1)")
        state = client.get("/api/tables/M1/state", headers=kit.auth("ann")).json()
        assert state["balance"] == kit.credit
        assert state["view"]["positions"] == []
        assert ann.request(
            {"type": "wager", "kind": "blackjack", "amount": 2000, "spots": [1000, 0, 1000]}
        )["ok"]
    recall = client.get("/api/rounds/M1-000001", headers=kit.auth("super")).json()
    assert [e["kind"] for e in recall["events"]] == ["open", "wager"]
