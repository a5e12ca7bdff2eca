"""Full rounds through the WebSocket protocol, on SQLite and PostgreSQL: commit before
broadcast, the countdown clock, the ledger, meters and game recall."""

from __future__ import annotations

from typing import Any

from tests.support.floor import ORDER
from tests.support.store import Backend

# ORDER: position 1 (ann): 10S 5C; position 2 (bob): 9H 9C; dealer 6D + hole 10H; C1 4S; dealer 8D


def dealer_command(client: Any, command: str, card: str | None = None) -> Any:
    return client.post(
        "/api/tables/A1/dealer",
        json={"command": command, "card": card},
        headers={"Authorization": "Bearer tok-dealer"},
    )


def test_633c5_p2_one_terminal_hits_the_other_stands_on_the_countdown(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)], backend=backend)
    assert dealer_command(client, "open-round").json()["round_id"] == "A1-000001"
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert ann.state(lambda m: m["balance"] == 99_000)["view"]["you"]["blackjack_wager"] == 1000
        assert dealer_command(client, "close-wagering").status_code == 200
        dealt = ann.state(lambda m: kit.phase(m) == "playing")
        assert dealt["view"]["you"]["hands"][0]["cards"] == ["10S", "5C"]
        assert dealt["view"]["dealer"]["cards"] == ["6D"]  # the hole card stays hidden
        assert dealt["countdown"]["seconds"] == 1.0
        assert dealt["countdown"]["default"] == "stand"
        assert ann.request({"type": "action", "verb": "hit"})["ok"]
        # bob never acts: the clock stands for him and C1 goes to ann
        after = ann.state(lambda m: m["view"]["community_cards"] == ["4S"])
        assert after["view"]["you"]["hands"][0]["total"] == 19
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        done = bob.state(lambda m: kit.phase(m) == "complete")
        assert done["view"]["dealer"]["cards"] == ["6D", "10H", "8D"]
        [bob_settlement] = done["view"]["you"]["settlements"]
        assert (bob_settlement["result"], bob_settlement["returned"]) == ("win", 2000)
        assert bob_settlement["clause"] == "PA 633c.5(t)(1)(i), (v)(1)"
        assert done["balance"] == 101_000

    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert recall["status"] == "complete"
    assert recall["log_verified"] is True
    assert [c["code"] for c in recall["cards"]] == ORDER.split()
    assert all(c["read_us"] > 0 for c in recall["cards"])
    assert [(d["text"], d["actor"], d["terminal"]) for d in recall["decisions"]] == [
        ("ann blackjack 1000", "ann", "EWT-1"),
        ("bob blackjack 1000", "bob", "EWT-2"),
        ("dealer close-wagering", "dana", "console"),
        ("ann hit", "ann", "EWT-1"),
        ("dealer countdown-expired", "clock", "clock"),
        ("ann stand", "ann", "EWT-1"),
    ]
    assert [(s["player"], s["result"], s["net"]) for s in recall["settlements"]] == [
        ("ann", "win", 1000),
        ("bob", "win", 1000),
    ]
    assert any(
        "bob (position 2): 9♥ 9♣ = 18, stands (countdown default)" in line
        for line in recall["transcript"]
    )
    meters = client.get("/api/meters", headers=kit.auth("super")).json()
    assert meters == [
        {
            "table_id": "A1",
            "wager_kind": "blackjack",
            "drop": 2000,
            "win": -2000,
            "hold_percent": "-100.00",
        }
    ]
    ledger = client.get("/api/accounts/ann/ledger", headers=kit.auth("ann")).json()
    assert ledger["balance"] == 101_000
    assert [e["effect"] for e in ledger["entries"]][:3] == [1000, 1000, -1000]
    verified = client.get("/api/verify-log", headers=kit.auth("super")).json()
    assert (verified["ok"], verified["problems"]) == (True, [])
    assert client.get("/api/terminals/EWT-2/rounds?n=5", headers=kit.auth("super")).json() == [
        "A1-000001"
    ]


def test_every_step_is_committed_before_it_is_broadcast(make_client: Any, kit: Any) -> None:
    """Each state a terminal receives is already in the store: its seq is in the log."""
    client = make_client([kit.hybrid_table(cards=ORDER)])
    dealer_command(client, "open-round")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        reply = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
        assert reply["seq"] == recall["events"][-1]["seq"] == 2
        assert recall["events"][-1]["kind"] == "wager"
