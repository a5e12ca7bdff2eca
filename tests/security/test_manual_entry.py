"""A dealer who would choose the cards (PA 633c.5(j): cards are dealt from a shoe that reads
them). Entering cards by hand at the console is the fallback a supervisor allows for one round;
alone, a dealer can type no card into a round, cannot allow it himself, and the supervisor's
approval lasts only for the round it was given in. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.support.floor import auth, connect, dealer, one_deck_table, post, staff_state
from tests.support.store import Backend


def test_633c5_j_a_dealer_alone_cannot_choose_the_cards(make_client: Any, backend: Backend) -> None:
    client = make_client([one_deck_table()], backend=backend)
    assert dealer(client, "open-round").status_code == 200
    with connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert dealer(client, "close-wagering").status_code == 200
        before = staff_state(client)
        # the dealer types the card he wants for the player, over REST and over his socket
        typed = post(client, "/api/tables/C1/dealer", "dealer", command="card", card="AS")
        assert typed.status_code == 409 and typed.json()["detail"]["code"] == "manual_entry"
        # nor by naming his console's socket after the shoe's line
        with connect(client, "dealer", "reader", "C1") as console:
            refused = console.request({"type": "dealer", "command": "card", "card": "AS"})
            assert (refused["type"], refused["code"]) == ("error", "manual_entry")
        # nor allow it himself
        himself = post(client, "/api/tables/C1/manual-entry", "dealer", reason="I say so")
        assert himself.status_code == 403
        after = staff_state(client)
        assert after["seq"] == before["seq"] and after["view"] == before["view"]
        assert after["controls"]["card"] is False
        # the supervisor's approval is for this round only
        assert (
            post(client, "/api/tables/C1/manual-entry", "super", reason="reader down").status_code
            == 200
        )
        void = post(client, "/api/tables/C1/void", "super", reason="test over")
        assert void.status_code == 200, void.text
    assert dealer(client, "open-round").status_code == 200
    assert staff_state(client)["controls"]["manual_entry"] is False
    audit = client.get("/api/audit", headers=auth("super")).json()
    assert [row["actor"] for row in audit if row["kind"] == "manual_entry_allowed"] == ["sam"]
