"""Message sequence numbers: a terminal's gaps and repeats, and a second socket claiming a
terminal's numbers, are refused, audited and not applied."""

from __future__ import annotations

from typing import Any


def test_gaps_repeats_and_a_claimed_terminal_id_are_refused(make_client: Any, kit: Any) -> None:
    client = make_client()
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer"))
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        assert ann.request({"type": "position", "position": 1, "seq": 1})["type"] == "ack"
        wager = {"type": "wager", "kind": "blackjack", "amount": 1000}
        assert ann.request({**wager, "seq": 2}, "w-2")["ok"] is True
        resent = ann.request({**wager, "seq": 2}, "w-2")
        assert (resent["type"], resent.get("repeat")) == ("ack", True)
        repeat = ann.request({**wager, "seq": 2}, "w-other")
        assert (repeat["type"], repeat["code"], repeat["rule"]) == (
            "error",
            "sequence",
            "message sequence",
        )
        gap = ann.request({**wager, "seq": 4})
        assert "skips ahead" in gap["message"]
        unnumbered = ann.request(wager)
        assert unnumbered["code"] == "sequence"
        with client.websocket_connect("/ws") as impostor:
            impostor.send_json(
                {"type": "hello", "protocol": 1, "token": kit.tokens["bob"], "terminal": "EWT-1"}
            )
            assert impostor.receive_json()["type"] == "welcome"
            impostor.send_json({"type": "join", "table": "A1", "id": "j", "seq": 1})
            claimed = impostor.receive_json()
            assert (claimed["type"], claimed["code"], claimed["message"]) == (
                "error",
                "sequence",
                "Message 1 of terminal EWT-1 repeats its sequence (last 2).",
            )
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500, "seq": 3})[
            "ok"
        ]
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == kit.credit - 1500
    assert client.get("/api/me", headers=kit.auth("bob")).json()["balance"] == kit.credit
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    refused = [(e["actor"], e["terminal"]) for e in audit if e["kind"] == "sequence"]
    assert refused == [("bob", "EWT-1"), ("ann", "EWT-1"), ("ann", "EWT-1"), ("ann", "EWT-1")]
    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert [e["kind"] for e in recall["events"]] == ["open", "wager", "wager"]
