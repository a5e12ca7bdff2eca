"""Finding 3 — terminal identity was whatever a client claimed. An electronic wagering terminal
is a registered device with its own credential, bound to its table and position by the
operator; a player signs in at it; sequence numbers belong to the session; meters and tilts
follow authenticated terminals only (PA 605a.4(d), 633c.5(k)–(l))."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from tests.support.floor import TOKENS, auth

from .conftest import TERMINALS, Floorkit, Socketkit


def refused_hello(floor: Floorkit, hello: dict[str, Any]) -> dict[str, Any]:
    """Send a hello that must be refused: the error frame (the socket then closes, 1008)."""
    with floor.client.websocket_connect("/ws") as socket:
        socket.send_json(hello)
        frame = socket.receive_json()
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
        assert closed.value.code == 1008
    assert frame["type"] == "error"
    return frame


def audit_of(kind: str) -> Any:
    """Read the audit rows of ``kind`` from the store."""

    async def read(store: Any) -> list[dict[str, Any]]:
        return [e for e in await store.audit_entries(limit=1000) if e["kind"] == kind]

    return read


def audit_kinds(floor: Floorkit) -> list[tuple[str, str]]:
    return [
        (e["kind"], e["terminal"])
        for e in floor.client.get("/api/audit", headers=auth("super")).json()
    ]


def test_605a4d_a_terminal_id_without_its_credential_is_refused_and_audited(
    floor: Floorkit,
) -> None:
    """A player claims another's terminal: no credential, another terminal's credential, a
    made-up one, the player's own token as the credential; over the socket and at sign-in."""
    base = {"type": "hello", "protocol": 2, "token": TOKENS["bob"], "terminal": "EWT-1"}
    for key in (None, TERMINALS["EWT-2"], "guessed", TOKENS["bob"]):
        frame = refused_hello(floor, {**base, "terminal_key": key})
        assert frame["code"] == "terminal", frame
    signin = floor.client.post(
        "/api/session", json={"token": TOKENS["bob"], "terminal": "EWT-1", "terminal_key": "x"}
    )
    assert signin.status_code == 403
    assert signin.json()["detail"]["code"] == "terminal"
    assert ("terminal", "") in audit_kinds(floor)  # the sign-in, at once
    floor.stop()  # the failed hellos' burst is written (one row per burst and address)
    bursts = floor.run(audit_of("auth"))
    assert [(e["terminal"], e["rule"]) for e in bursts] == [("EWT-1", "protocol: hello")]
    assert bursts[0]["message"].startswith(
        "4 failed hellos from testclient within 10 s (4 × terminal not proven)"
    )


def test_a_claimed_terminal_cannot_exhaust_the_real_terminals_sequence_numbers(
    floor: Floorkit,
) -> None:
    """The attack of the finding: one message with ``seq`` 2**53 from a socket claiming the
    terminal locked the real terminal out until a restart."""
    with floor.client.websocket_connect("/ws") as socket:
        ann = Socketkit(socket, floor.hello("ann", "EWT-1"), "A1")
        assert ann.request({"type": "position", "position": 1, "seq": 1})["type"] == "ack"
        refused_hello(floor, {**floor.hello("bob", "EWT-1"), "terminal_key": None})
        # the same player on the same terminal in a second session numbers on its own
        with floor.client.websocket_connect("/ws") as other:
            second = Socketkit(other, floor.hello("ann", "EWT-1"), "A1")
            assert second.request({"type": "position", "position": 1, "seq": 2**53})["type"] == (
                "ack"
            )
        assert ann.request({"type": "position", "position": 1, "seq": 2})["type"] == "ack"


def test_605a5d_meters_and_tilts_follow_authenticated_terminals_only(floor: Floorkit) -> None:
    """A refused claim leaves no trace on the terminal it named: no meter, no connection-lost
    tilt; a wager is metered to the terminal that proved itself."""
    refused_hello(floor, {**floor.hello("bob", "EWT-3"), "terminal_key": TERMINALS["EWT-1"]})
    floor.play_round()
    tilts = floor.client.get("/api/floor/tilts", headers=auth("super")).json()
    assert "EWT-3" not in tilts
    meters = floor.client.get("/api/floor/meters", headers=auth("super")).json()
    assert set(meters["terminal"]) == {"EWT-1", "EWT-2"}
    assert meters["terminal"]["EWT-1"]["coin_in"] == 1000


def test_a_terminal_is_bound_to_its_table_and_position(floor: Floorkit) -> None:
    registered = floor.client.post(
        "/api/floor/terminals",
        json={"terminal": "EWT-9", "table": "A1", "position": 2},
        headers=auth("operator"),
    ).json()
    assert registered["terminal"]["position"] == 2
    key = registered["credential"]
    floor.client.post(
        "/api/tables/A1/dealer", json={"command": "open-round"}, headers=auth("dealer")
    )
    with floor.client.websocket_connect("/ws") as socket:
        hello = {**floor.hello("ann", None), "terminal": "EWT-9", "terminal_key": key}
        ann = Socketkit(socket, hello, None)
        elsewhere = ann.request({"type": "join", "table": "A2"})
        assert (elsewhere["type"], elsewhere["code"]) == ("error", "terminal")
        assert ann.request({"type": "join", "table": "A1"})["type"] == "ack"
        other = ann.request({"type": "position", "position": 1})
        assert (other["type"], other["code"], other["rule"]) == (
            "error",
            "position",
            "PA 633c.5(l)",
        )
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    state = floor.client.get("/api/tables/A1/state", headers=auth("dealer")).json()
    assert [w["position"] for w in state["view"]["wagers"]] == [2]


def test_re_registering_a_terminal_revokes_its_old_credential_and_closes_its_sockets(
    floor: Floorkit,
) -> None:
    with floor.client.websocket_connect("/ws") as socket:
        ann = Socketkit(socket, floor.hello("ann", "EWT-1"), "A1")
        renewed = floor.client.post(
            "/api/floor/terminals",
            json={"terminal": "EWT-1", "table": "A1", "credential": True},
            headers=auth("operator"),
        )
        assert renewed.status_code == 200
        closing = ann.until(lambda m: m["type"] == "error")
        assert closing["code"] == "credential"
    frame = refused_hello(floor, floor.hello("ann", "EWT-1"))  # the old key
    assert frame["code"] == "terminal"
    fresh = {**floor.hello("ann", "EWT-1"), "terminal_key": renewed.json()["credential"]}
    with floor.client.websocket_connect("/ws") as socket:
        assert Socketkit(socket, fresh, "A1").welcome["terminal"] == "EWT-1"


def test_a_retired_terminal_signs_no_one_in(floor: Floorkit) -> None:
    floor.client.post(
        "/api/floor/terminals",
        json={"terminal": "EWT-3", "table": "A1", "status": "retired"},
        headers=auth("operator"),
    )
    assert refused_hello(floor, floor.hello("ann", "EWT-3"))["code"] == "terminal"


def test_staff_consoles_are_not_terminals_and_a_device_credential_is_no_persons_token(
    floor: Floorkit,
) -> None:
    claim = {"type": "hello", "protocol": 2, "token": TOKENS["dealer"], "terminal": "EWT-1"}
    assert refused_hello(floor, claim)["code"] == "terminal"
    device = {"type": "hello", "protocol": 2, "token": TERMINALS["EWT-1"], "terminal": "EWT-1"}
    assert refused_hello(floor, device)["code"] == "role"
    answer = floor.client.get("/api/me", headers={"Authorization": f"Bearer {TERMINALS['EWT-1']}"})
    assert answer.status_code == 403
    only_player = refused_hello(floor, {"type": "hello", "protocol": 2, "token": TOKENS["ann"]})
    assert only_player["code"] == "terminal"  # a player plays at a terminal, or not at all


def test_the_operator_alone_registers_terminals(floor: Floorkit) -> None:
    for who in ("super", "dealer", "cashier", "ann"):
        answer = floor.client.post(
            "/api/floor/terminals",
            json={"terminal": "EWT-X", "table": "A1"},
            headers=auth(who),
        )
        assert answer.status_code == 403, who
    rows = floor.client.get("/api/floor/license", headers=auth("super")).json()["terminals"]
    assert "EWT-X" not in {r["id"] for r in rows}
