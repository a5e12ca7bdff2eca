"""PA 633c.5(a): hybrid gaming tables and their electronic wagering terminals comply with
Chapter 605a. The 605a duties have their own tests (tests/floor, tests/security); this one
checks that a hybrid table is run under them: only a registered terminal that proves itself
plays there, its wagers are metered per terminal from the ledger, and a tilt locks it."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect


def test_633c5_a_a_hybrid_table_runs_under_chapter_605a(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table(cards="10S 9H 6D 5C 9C 10H 4S 8D")])
    with client.websocket_connect("/ws") as socket:  # 605a.4(d): an unproven terminal
        socket.send_json({"type": "hello", "protocol": 2, "token": "tok-ann", "terminal": "X9"})
        assert socket.receive_json()["code"] == "terminal"
        with pytest.raises(WebSocketDisconnect):
            socket.receive_json()
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer"))
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    meters = client.get("/api/floor/meters", headers=kit.auth("super")).json()
    assert meters["terminal"]["EWT-1"]["coin_in"] == 1000  # 605a.5(d): per EWT, from the ledger
    locked = client.post(
        "/api/floor/terminals/EWT-1/tilt",
        json={"code": "door_open", "reason": "test"},
        headers=kit.auth("dealer"),
    )
    assert locked.status_code == 200, locked.text
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:  # 605a: a locked EWT takes no wager
        refused = ann.request({"type": "action", "verb": "hit"})
        assert (refused["type"], refused["code"]) == ("error", "tilt")
