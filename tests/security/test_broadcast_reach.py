"""What a step sends to whom: a terminal whose view a step does not change is sent nothing (at
human pace most steps are one player's decision, which changes no other player's view), the
player who acted gets his update, and a step that changes every view reaches every terminal."""

from __future__ import annotations

from typing import Any

from tests.support.floor import auth

from .conftest import Floorkit, Socketkit


def next_frame(kit: Socketkit) -> dict[str, Any]:
    """The next frame the socket receives (a ping answered: no frame was waiting before its
    pong when the pong comes first)."""
    kit.socket.send_json({"type": "ping", "id": "probe"})
    return dict(kit.socket.receive_json())


def test_633c5p_a_decision_reaches_its_player_and_no_terminal_whose_view_it_leaves_as_it_was(
    floor: Floorkit,
) -> None:
    client = floor.client
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=auth("dealer"))
    with (
        client.websocket_connect("/ws") as ann_socket,
        client.websocket_connect("/ws") as bob_socket,
    ):
        ann = Socketkit(ann_socket, floor.hello("ann", "EWT-1"), "A1")
        bob = Socketkit(bob_socket, floor.hello("bob", "EWT-2"), "A1")
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        client.post(
            "/api/tables/A1/dealer", json={"command": "close-wagering"}, headers=auth("dealer")
        )
        for kit in (ann, bob):
            kit.until(lambda m: m["type"] == "state" and m["view"]["phase"] == "playing")
        ann.seen.clear()
        bob.seen.clear()
        assert next_frame(bob)["type"] == "pong"  # bob has read every frame sent so far

        hit = ann.request({"type": "action", "verb": "hit"})  # bob's view: as it was
        assert hit["ok"]
        mine = ann.until(lambda m: m["type"] in ("state", "seq") and m["seq"] >= hit["seq"])
        assert mine["type"] == "state"  # his own view changed: no longer awaited
        assert next_frame(bob) == {"type": "pong", "id": "probe"}  # nothing before it

        assert bob.request({"type": "action", "verb": "stand"})["ok"]  # the window closes
        drawn = ann.until(lambda m: m["type"] == "state" and m["view"]["community_cards"])
        assert drawn["view"]["community_cards"] == ["4S"]
        seen = bob.until(lambda m: m["type"] == "state" and m["view"]["community_cards"])
        assert seen["view"]["community_cards"] == ["4S"]  # a card drawn reaches everyone
