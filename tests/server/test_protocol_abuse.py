"""Bad input and abuse on the terminal protocol: each refused, state unchanged, audited."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from tablejack.server.protocol import PROTOCOL_VERSION

ORDER = "10S 9H 6D 5C 9C 10H 4S 8D"


def open_round(client: Any, kit: Any, table: str = "A1") -> None:
    reply = client.post(
        f"/api/tables/{table}/dealer", json={"command": "open-round"}, headers=kit.auth("dealer")
    )
    assert reply.status_code == 200, reply.text


def audit_kinds(client: Any, kit: Any) -> list[str]:
    return [a["kind"] for a in client.get("/api/audit", headers=kit.auth("super")).json()]


def test_protocol_version_is_2_since_a_player_hello_proves_its_terminal() -> None:
    assert PROTOCOL_VERSION == 2


def test_malformed_json_closes_the_socket_with_1003(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.socket.send_text("{not json")
        with pytest.raises(WebSocketDisconnect) as closed:
            ann.socket.receive_json()
        assert closed.value.code == 1003
    assert "malformed" in audit_kinds(client, kit)


def test_a_message_that_is_not_a_protocol_message_closes_with_1003(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table()])
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.socket.send_json({"type": "wager", "id": "x", "amount": "ten dollars"})
        with pytest.raises(WebSocketDisconnect) as closed:
            ann.socket.receive_json()
        assert closed.value.code == 1003


def test_an_unknown_token_is_refused(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    with client.websocket_connect("/ws") as socket:
        socket.send_json({"type": "hello", "protocol": 2, "token": "stolen", "terminal": "X"})
        refused = socket.receive_json()
        assert (refused["type"], refused["code"]) == ("error", "auth")
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
        assert closed.value.code == 1008


def test_another_protocol_version_is_refused(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    with client.websocket_connect("/ws") as socket:
        socket.send_json({"type": "hello", "protocol": 99, "token": "tok-ann"})
        assert socket.receive_json()["code"] == "protocol"
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
        assert closed.value.code == 1002


def test_an_illegal_action_gets_an_error_frame_naming_the_rule_and_the_socket_stays_open(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        below = ann.request({"type": "wager", "kind": "blackjack", "amount": 500})
        assert below["type"] == "error"
        assert below["rule"] == "PA 633a.6"
        assert "below the table minimum $10.00" in below["message"]
        above = ann.request({"type": "wager", "kind": "blackjack", "amount": 600_000})
        assert (above["type"], above["rule"]) == ("error", "PA 633a.6")
        early = ann.request({"type": "action", "verb": "hit"})
        assert (early["type"], early["rule"]) == ("error", "PA 633c.5(l)")
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    assert audit_kinds(client, kit).count("illegal") == 3
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == 99_000


def test_a_repeated_command_id_is_answered_not_applied_twice(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        first = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000}, "w-1")
        again = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000}, "w-1")
        assert first["ok"] and again["ok"]
        assert again["repeat"] is True
        assert again["seq"] == first["seq"]
    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    assert [e["kind"] for e in recall["events"]] == ["open", "wager"]
    assert client.get("/api/me", headers=kit.auth("ann")).json()["balance"] == 99_000


def test_a_wager_above_the_balance_is_refused(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "cat", "EWT-3", "A1") as cat:
        cat.request({"type": "position", "position": 1})
        refused = cat.request({"type": "wager", "kind": "blackjack", "amount": 2000})
        assert (refused["type"], refused["code"], refused["rule"]) == (
            "error",
            "balance",
            "account balance",
        )
        assert cat.request({"type": "wager", "kind": "blackjack", "amount": 1500})["ok"]
    assert client.get("/api/me", headers=kit.auth("cat")).json()["balance"] == 0
    assert "balance" in audit_kinds(client, kit)


def test_a_player_cannot_act_for_another_players_position(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER, countdown=30)])
    open_round(client, kit)
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        ann.request({"type": "position", "position": 1})
        bob.request({"type": "position", "position": 2})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        client.post(
            "/api/tables/A1/dealer", json={"command": "close-wagering"}, headers=kit.auth("dealer")
        )
        ann.state(lambda m: kit.phase(m) == "playing")
        refused = ann.request({"type": "action", "verb": "stand", "position": 2})
        assert (refused["type"], refused["rule"]) == ("error", "PA 633c.5(l)")
        assert "backs position 1, not position 2" in refused["message"]
        state = client.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
        bob_state = next(p for p in state["view"]["players"] if p["player"] == "bob")
        assert bob_state["decided_this_round"] is False


def test_a_dealer_command_from_a_terminal_is_refused(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        refused = ann.request({"type": "dealer", "command": "close-wagering"})
        assert (refused["type"], refused["code"]) == ("error", "role")
    state = client.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
    assert state["view"]["phase"] == "wagering"
    assert "role" in audit_kinds(client, kit)


def test_a_flood_of_messages_is_rate_limited(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()], rate=(1.0, 5.0))
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        for number in range(12):
            ann.send({"type": "position", "position": 1}, f"p-{number}")
        replies = [ann.until(lambda m: m["type"] in ("ack", "error")) for _ in range(12)]
        limited = [r for r in replies if r.get("code") == "rate_limited"]
        assert len(limited) >= 6
        assert limited[0]["rule"] == "server rate limit"
    assert "rate_limited" in audit_kinds(client, kit)


def test_roles_see_and_do_only_their_own(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    assert client.get("/api/meters", headers=kit.auth("ann")).status_code == 403
    assert client.get("/api/accounts/bob/ledger", headers=kit.auth("ann")).status_code == 403
    assert client.get("/api/accounts/ann/ledger", headers=kit.auth("ann")).status_code == 200
    assert (
        client.post("/api/tables/A1/void", json={}, headers=kit.auth("dealer")).status_code == 403
    )
    assert (
        client.post(
            "/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("super")
        ).status_code
        == 403
    )
    assert client.get("/api/tables").status_code == 401
    assert client.get("/api/audit", headers=kit.auth("dealer")).status_code == 403
    assert client.get("/api/audit", headers=kit.auth("super")).status_code == 200


def test_the_openapi_document_lists_the_api(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/tables",
        "/api/rounds/{round_id}",
        "/api/meters",
        "/api/accounts/{account_id}/ledger",
        "/api/terminals/{terminal}/rounds",
        "/api/tables/{table_id}/open",
        "/api/tables/{table_id}/close",
    ):
        assert path in paths
