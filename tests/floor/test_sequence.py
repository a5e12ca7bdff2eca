"""Message sequence numbers: gaps and repeats are refused, audited and not applied; the numbers
belong to the socket's session, so a client that claims another's terminal id is refused at
hello and can neither use up nor disturb the real terminal's numbers."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from tablejack.server.socket.gate import GateLimits


def test_gaps_and_repeats_are_refused_and_a_claimed_terminal_id_is_refused_at_hello(
    make_client: Any, kit: Any
) -> None:
    client = make_client(gate=GateLimits(audit_seconds=0.2))
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
        # bob claims EWT-1 without its credential, then with another terminal's credential,
        # and sends the number 2**53 that would have locked EWT-1 out
        other_key = kit.terminal_key(client, "EWT-2", "A1")
        for key in (None, other_key):
            with client.websocket_connect("/ws") as impostor:
                hello = {"type": "hello", "protocol": 2, "token": kit.tokens["bob"]}
                impostor.send_json({**hello, "terminal": "EWT-1", "terminal_key": key})
                refused = impostor.receive_json()
                assert (refused["type"], refused["code"]) == ("error", "terminal")
                with pytest.raises(WebSocketDisconnect) as closed:
                    impostor.receive_json()
                assert closed.value.code == 1008
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500, "seq": 3})[
            "ok"
        ]
    # a new session of the real terminal numbers from 1 again: the numbers were the session's
    with kit.connect(client, "ann", "EWT-1", "A1") as again:
        assert again.request({"type": "position", "position": 1, "seq": 1})["type"] == "ack"
        assert again.request({"type": "position", "position": 1, "seq": 2**53})["code"] == (
            "sequence"
        )
        assert again.request({"type": "position", "position": 1, "seq": 2})["type"] == "ack"
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == kit.credit - 1500
    assert client.get("/api/me", headers=kit.auth("bob")).json()["balance"] == kit.credit
    claims = kit.eventually(
        lambda: [
            e
            for e in client.get("/api/audit", headers=kit.auth("super")).json()
            if e["kind"] == "auth"
        ]
    )
    assert [(e["terminal"], e["rule"]) for e in claims] == [("EWT-1", "protocol: hello")]
    assert claims[0]["message"].startswith(
        "2 failed hellos from testclient within 0.2 s (2 × terminal not proven)"
    )
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    refused = [(e["actor"], e["terminal"]) for e in audit if e["kind"] == "sequence"]
    assert refused == [("ann", "EWT-1")] * 4
    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert [e["kind"] for e in recall["events"]] == ["open", "wager", "wager"]
