"""Bad input and abuse on the terminal protocol: each refused, state unchanged, audited."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from tablejack.server.socket.gate import GateLimits
from tablejack.server.support.protocol import PROTOCOL_VERSION
from tests.support.floor import ORDER


def open_round(client: Any, kit: Any, table: str = "A1") -> None:
    reply = client.post(
        f"/api/tables/{table}/dealer", json={"command": "open-round"}, headers=kit.auth("dealer")
    )
    assert reply.status_code == 200, reply.text


def audit_kinds(client: Any, kit: Any) -> list[str]:
    return [a["kind"] for a in client.get("/api/audit", headers=kit.auth("super")).json()]


def test_protocol_version_is_2_since_a_player_hello_proves_its_terminal() -> None:
    assert PROTOCOL_VERSION == 2


def audit_rows(client: Any, kit: Any, kind: str) -> list[dict[str, Any]]:
    rows = client.get("/api/audit", headers=kit.auth("super")).json()
    return [row for row in rows if row["kind"] == kind]


def test_malformed_json_gets_an_error_frame_and_the_socket_stays_open(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.socket.send_text("{not json")
        refused = ann.until(lambda m: m["type"] == "error")
        assert (refused["id"], refused["code"], refused["rule"]) == (
            None,
            "malformed",
            "protocol: JSON",
        )
        assert refused["message"].startswith("A frame is one JSON object; this one is not JSON")
        assert kit.balance(client, "ann") == kit.credit
        # the socket still works: the next valid requests are acknowledged
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    assert kit.balance(client, "ann") == kit.credit - 1000
    [row] = audit_rows(client, kit, "malformed")
    assert (row["actor"], row["terminal"], row["rule"]) == ("ann", "EWT-1", "protocol")
    assert "not JSON" in row["message"]


@pytest.mark.parametrize(
    ("amount", "shown"),
    [(0, "not 0"), (-500, "not -500"), (1.5, "not 1.5"), (None, "not null"), ("10", 'not "10"')],
)
def test_a_wager_amount_that_is_not_whole_positive_cents_gets_an_error_frame_naming_the_rule(
    make_client: Any, kit: Any, amount: Any, shown: str
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        refused = ann.request({"type": "wager", "kind": "blackjack", "amount": amount}, "w-bad")
        assert (refused["type"], refused["id"], refused["code"], refused["rule"]) == (
            "error",
            "w-bad",
            "malformed",
            "protocol: amount",
        )
        assert refused["message"] == (
            f"A wager amount is a whole positive number of cents, {shown} (protocol: amount)."
        )
        state = client.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
        assert state["view"]["wagers"] == []
        assert kit.balance(client, "ann") == kit.credit
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    assert kit.balance(client, "ann") == kit.credit - 1000
    [row] = audit_rows(client, kit, "malformed")
    assert "protocol: amount" in row["message"]


def test_a_wager_amount_above_the_protocol_maximum_is_refused_naming_the_maximum(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        refused = ann.request({"type": "wager", "amount": 10**11 + 1}, "w-big")
        assert (refused["id"], refused["rule"]) == ("w-big", "protocol: amount")
        assert refused["message"] == (
            "A wager amount is at most 100000000000 cents, not 100000000001 (protocol: amount)."
        )
        ann.send({"type": "ping"}, "p-1")  # the socket still answers
        assert ann.until(lambda m: m["type"] == "pong")["id"] == "p-1"
    assert kit.balance(client, "ann") == kit.credit
    assert len(audit_rows(client, kit, "malformed")) == 1


def test_control_characters_unknown_types_unknown_fields_and_bad_frames_get_error_frames(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)])
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        nul = ann.request({"type": "join", "table": "A1\x00"}, "j-nul")
        assert (nul["id"], nul["rule"]) == ("j-nul", "text: no control characters")
        assert nul["message"] == (
            "A table id may not hold control characters; U+0000 at character 3 is refused "
            "(text: no control characters)."
        )
        ann.socket.send_json({"type": "position", "position": 1, "id": "p\x07"})
        bell = ann.until(lambda m: m["type"] == "error")
        assert (bell["id"], bell["rule"]) == (None, "text: no control characters")
        unknown = ann.request({"type": "cash-me-out"}, "u-1")
        assert (unknown["id"], unknown["rule"]) == ("u-1", "protocol: type")
        assert unknown["message"].startswith('There is no message type "cash-me-out"; a type is')
        extra = ann.request({"type": "position", "position": 1, "seat": 2}, "x-1")
        assert (extra["rule"], extra["message"]) == (
            "protocol: position",
            "A position message has no field 'seat' (protocol: position).",
        )
        ann.socket.send_bytes(b"\xff\xfe{}")
        binary = ann.until(lambda m: m["type"] == "error")
        assert (binary["id"], binary["rule"]) == (None, "protocol: JSON")
        assert "not UTF-8" in binary["message"]
        ann.socket.send_json(["a", "list"])
        listed = ann.until(lambda m: m["type"] == "error")
        assert listed["rule"] == "protocol: type"
        # a binary frame of UTF-8 JSON is a message like any other
        ann.socket.send_bytes(b'{"type": "position", "position": 1, "id": "b-1"}')
        assert ann.reply("b-1")["type"] == "ack"
        early = ann.request({"type": "action", "verb": "hit"})  # the wrong phase: the rule
        assert (early["code"], early["rule"]) == ("illegal", "PA 633c.5(l)")
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    assert kit.balance(client, "ann") == kit.credit - 1000
    [row] = audit_rows(client, kit, "malformed")
    assert row["message"].startswith("6 malformed messages from ann at EWT-1")
    assert "\x00" not in row["message"]


def test_repeated_garbage_closes_the_socket_with_1008_and_is_audited_once(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table()])
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        for number in range(20):
            ann.socket.send_text(f"garbage {number}")
            assert ann.until(lambda m: m["type"] == "error")["code"] == "malformed"
        ann.socket.send_text("garbage 21")  # the 21st within 10 s
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ann.socket.receive_json()
        assert (closed.value.code, closed.value.reason) == (1008, "repeated malformed messages")
    assert kit.balance(client, "ann") == kit.credit
    [row] = audit_rows(client, kit, "malformed")
    assert row["message"].startswith("21 malformed messages from ann at EWT-1")
    assert row["message"].endswith("the socket was closed (1008 repeated malformed messages)")


def test_a_frame_above_64_kib_closes_the_socket_with_1009(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.socket.send_text('{"type": "ping", "id": "' + "x" * (64 * 1024) + '"}')
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ann.socket.receive_json()
        assert (closed.value.code, closed.value.reason) == (1009, "message too big")
    [row] = audit_rows(client, kit, "malformed")
    assert "message too big" in row["message"]


# -- before the hello ------------------------------------------------------------------------


def closed_with(socket: Any) -> tuple[int, str]:
    """The close code and reason the server ends ``socket`` with (frames before it skipped)."""
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            socket.receive_json()
    return closed.value.code, closed.value.reason


def test_the_first_message_must_be_a_hello(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table()])
    with client.websocket_connect("/ws") as socket:
        socket.send_json({"type": "join", "id": "j-1", "table": "A1"})
        refused = socket.receive_json()
        assert (refused["id"], refused["rule"]) == ("j-1", "protocol: hello")
        assert closed_with(socket) == (1008, "the first message must be hello")
    with client.websocket_connect("/ws") as socket:
        socket.send_text("{not json")
        assert socket.receive_json()["rule"] == "protocol: JSON"
        assert closed_with(socket) == (1008, "not a protocol message")


def rows_after_stop(make_client: Any, kit: Any, client: Any, db: str) -> list[dict[str, Any]]:
    """Stop ``client``'s server (it writes the audit rows still open) and read its audit log
    from a new server on the same database."""
    client.__exit__(None, None, None)
    return audit_rows(make_client([kit.hybrid_table()], db=db), kit, "auth")


def test_a_socket_without_a_hello_within_the_limit_is_closed_with_1008(
    make_client: Any, kit: Any, tmp_path: Any
) -> None:
    db = str(tmp_path / "slow.db")
    client = make_client([kit.hybrid_table()], db=db, gate=GateLimits(hello_seconds=0.2))
    for _ in range(3):
        with client.websocket_connect("/ws") as socket:
            assert closed_with(socket) == (1008, "no hello within 0.2 s")
    [row] = rows_after_stop(make_client, kit, client, db)  # one row for the burst
    assert row["message"] == (
        "3 failed hellos from testclient within 10 s (3 × no hello within 0.2 s)"
    )


def test_a_frame_above_4_kib_before_the_hello_closes_the_socket_with_1009(
    make_client: Any, kit: Any, tmp_path: Any
) -> None:
    db = str(tmp_path / "big.db")
    client = make_client([kit.hybrid_table()], db=db)
    big = json.dumps({"type": "hello", "protocol": 1, "token": "tok-ann", "terminal": "T" * 5000})
    with client.websocket_connect("/ws") as socket:
        socket.send_text(big)
        assert closed_with(socket) == (1009, "message too big")
    [row] = rows_after_stop(make_client, kit, client, db)
    assert row["message"] == (
        f"failed hello from testclient: message too big; a frame of {len(big)} bytes before "
        "the hello (at most 4096)"
    )


def test_failed_hellos_are_limited_per_address_without_a_lookup_and_audited_once(
    make_client: Any, kit: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "hellos.db")
    client = make_client([kit.hybrid_table()], db=db)
    floor = client.app.state.floor
    lookups = []
    real = floor.auth.authenticate

    async def counted(token: str, *, fresh: bool = False) -> Any:
        lookups.append(token)
        return await real(token, fresh=fresh)

    monkeypatch.setattr(floor.auth, "authenticate", counted)
    codes = []
    for number in range(12):
        with client.websocket_connect("/ws") as socket:
            socket.send_json(
                {"type": "hello", "protocol": 2, "token": f"guess-{number}", "terminal": "X"}
            )
            codes.append(closed_with(socket))
    assert codes == [(1008, "unknown token")] * 5 + [(1008, "too many failed hellos")] * 7
    assert len(lookups) == 5  # the sockets beyond the limit were closed before any lookup
    [row] = rows_after_stop(make_client, kit, client, db)  # one row for the burst
    assert (row["rule"], row["terminal"]) == ("protocol: hello", "X")
    assert row["message"] == (
        "12 failed hellos from testclient within 10 s (7 × too many failed hellos: closed at "
        "once, 5 × unknown token); the first: Unknown, expired or revoked credential., terminal X"
    )


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
    kit.fund(client, "cat", 1500)  # cat holds $15
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
        client.post(
            "/api/tables/A1/void", json={"reason": "x"}, headers=kit.auth("dealer")
        ).status_code
        == 403
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
