"""A version B table (633c.5(w)–(ee), game ``hybrid-shared``) through the terminal protocol."""

from __future__ import annotations

from typing import Any

import pytest

from tablejack.games import GAMES
from tablejack.server.table import TableConfig

pytestmark = pytest.mark.skipif("hybrid-shared" not in GAMES, reason="no version B engine")


def test_633c5_y_one_shared_start_and_a_personal_dealer_hand_per_player(
    make_client: Any, kit: Any
) -> None:
    rules = GAMES["hybrid-shared"].rules_class(
        royal_match=False, bet_the_set=False, kings_bounty=False, countdown_seconds=30
    )
    config = TableConfig(
        "B1", rules, automated=False, require_procedures=False, cards="10S 9D 6H 5C 7D 4S 2C"
    )
    client = make_client([config])
    client.post("/api/tables/B1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer"))
    with (
        kit.connect(client, "ann", "EWT-1", "B1") as ann,
        kit.connect(client, "bob", "EWT-2", "B1") as bob,
    ):
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        refused = bob.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})
        assert (refused["type"], refused["rule"]) == ("error", "PA 633c.5(x)")
        client.post(
            "/api/tables/B1/dealer", json={"command": "close-wagering"}, headers=kit.auth("dealer")
        )
        dealt = ann.state(lambda m: kit.phase(m) == "playing")
        assert dealt["view"]["players_cards"] == ["10S", "6H"]
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        assert bob.request({"type": "action", "verb": "hit"})["ok"]
        done = ann.state(lambda m: kit.phase(m) == "complete")
        assert done["view"]["you"]["dealer_hand"]["cards"] == ["9D", "5C", "7D"]
        assert done["balance"] == 99_000
        bob_done = bob.state(lambda m: kit.phase(m) == "complete")
        assert bob_done["view"]["you"]["dealer_hand"]["cards"] == ["9D", "7D", "4S"]
        assert bob_done["balance"] == 101_000
    info = client.get("/api/tables/B1", headers=kit.auth("ann")).json()
    assert info["positions"] == 1
    assert info["rules_icon"]["lines"][0] == "Blackjack pays 3 to 2."
