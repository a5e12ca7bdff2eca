"""The live dealer's console at a card-reader table (PA 633c.5(j), (o)): cards come from the
card-reading shoe; entry by hand is a fallback a supervisor allows for one round, recorded in
the round's record; a console input the round cannot take is refused and changes nothing (a
stray click never stops the table); the simulated shoe deals without telling anyone, the dealer
included, a card dealt face down; and the console is offered only what the round can take."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.floor import (
    DECK,
    auth,
    connect,
    dealer,
    eventually,
    one_deck_table,
    post,
    read,
    staff_state,
)


@pytest.fixture
def client(make_client: Any) -> Any:
    return make_client([one_deck_table()])


def card(client: Any, code: str) -> Any:
    """A card entered by hand at the console."""
    return post(client, "/api/tables/C1/dealer", "dealer", command="card", card=code)


def allow(client: Any, who: str = "super", reason: str = "the shoe's reader does not read") -> Any:
    return post(client, "/api/tables/C1/manual-entry", who, reason=reason)


@pytest.fixture
def dealing(client: Any) -> Iterator[Any]:
    """A round at C1 whose wagers are closed: ann at seat 1 wagered $10; the first card is
    wanted."""
    assert dealer(client, "open-round").status_code == 200
    with connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert dealer(client, "close-wagering").status_code == 200
        yield ann


def unchanged(client: Any) -> tuple[Any, ...]:
    """What a refused console input must leave as it was."""
    state = staff_state(client)
    view = state["view"] or {}
    return (state["status"], state["tilts"], state["seq"], view.get("cards_dealt"), state["shoe"])


def test_633c5_j_a_card_entered_by_hand_waits_for_a_supervisor(client: Any, dealing: Any) -> None:
    before = unchanged(client)
    refused = card(client, "10S")
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert detail["code"] == "manual_entry"
    assert detail["rule"] == "PA 633c.5(j)"
    assert unchanged(client) == before
    assert staff_state(client)["controls"]["card"] is False


def test_633c5_j_a_stray_card_when_none_is_wanted_changes_nothing(client: Any) -> None:
    """Before wagering closes no card is wanted: a click on the picker is refused, in words,
    and the table plays on (it used to halt the table as an irregularity)."""
    assert dealer(client, "open-round").status_code == 200
    before = unchanged(client)
    for code in ("AS", "10S", "ZZ"):
        refused = card(client, code)
        assert refused.status_code in (409, 422), refused.text
    assert unchanged(client) == before
    assert staff_state(client)["status"] == "open"
    assert client.get("/api/tables/C1/tilts", headers=auth("super")).json()["tilts"] == []


def test_633c5_j_the_supervisor_allows_entry_by_hand_for_the_round_and_it_is_recorded(
    client: Any, dealing: Any
) -> None:
    allowed = allow(client)
    assert allowed.status_code == 200, allowed.text
    state = staff_state(client)
    assert state["controls"]["card"] is True
    assert state["controls"]["manual_entry"] is True
    assert card(client, "10S").status_code == 200
    round_id = state["round_id"]
    recall = client.get(f"/api/rounds/{round_id}", headers=auth("super")).json()
    assert recall["cards"][0]["code"] == "10S"
    assert recall["cards"][0]["source"] == "manual"
    assert [(m["by"], m["reason"]) for m in recall["manual_entry"]] == [
        ("sam", "the shoe's reader does not read")
    ]
    audit = client.get("/api/audit", headers=auth("super")).json()
    assert any(row["kind"] == "manual_entry_allowed" for row in audit)


def test_633c5_j_a_card_by_hand_the_round_does_not_want_is_refused_and_does_not_stop_it(
    client: Any, dealing: Any
) -> None:
    """With entry by hand allowed, the console still cannot deal a card the round refuses:
    a second copy of a one-deck card is refused, in words, and the table plays on."""
    assert allow(client).status_code == 200
    assert card(client, "10S").status_code == 200
    before = unchanged(client)
    refused = card(client, "10S")
    assert refused.status_code == 409, refused.text
    assert unchanged(client) == before
    assert staff_state(client)["status"] == "open"


def test_633c5_j_entry_by_hand_ends_with_its_round(client: Any, dealing: Any) -> None:
    assert allow(client).status_code == 200
    assert all(line.startswith("OK ") for line in read(client, "10S", "9D", "9S", "8D"))
    eventually(lambda: (staff_state(client)["view"] or {}).get("phase") == "complete")
    assert dealer(client, "open-round").status_code == 200
    state = staff_state(client)
    assert state["controls"]["manual_entry"] is False


def test_633c5_j_a_card_the_reader_line_reads_out_of_turn_still_stops_the_round(
    client: Any,
) -> None:
    """The irregularity stays where it is real: the shoe read a card nobody asked for."""
    assert dealer(client, "open-round").status_code == 200
    [answer] = read(client, "AS")
    assert answer.startswith("ERR ")
    assert staff_state(client)["status"] == "halted"


def test_the_console_is_offered_only_what_the_round_can_take(client: Any) -> None:
    controls = staff_state(client)["controls"]
    assert controls["open_round"] and not controls["close_wagering"] and not controls["card"]
    assert dealer(client, "open-round").status_code == 200
    controls = staff_state(client)["controls"]
    assert not controls["open_round"] and controls["close_wagering"]
    assert not controls["card"] and not controls["shoe_draw"]


def test_633c5_o_the_simulated_shoe_deals_the_hole_card_unseen(make_client: Any) -> None:
    """The demonstration's simulated card-reading shoe draws on the server from the loaded
    shoe's own count: the answer names no card, and the console's state shows the hole card
    face down (it used to draw in the browser and print "The shoe read 7S")."""
    client = make_client([one_deck_table(simulated_shoe=True)])
    loaded = post(client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(DECK))
    assert loaded.status_code == 200, loaded.text
    assert dealer(client, "open-round").status_code == 200
    with connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert dealer(client, "close-wagering").status_code == 200
        answers = []
        while staff_state(client)["controls"]["shoe_draw"]:
            answer = post(client, "/api/tables/C1/dealer", "dealer", command="shoe-draw")
            assert answer.status_code == 200, answer.text
            answers.append(answer.json())
            state = staff_state(client)
            if (state["view"] or {}).get("phase") not in (None, "dealing"):
                break
        assert answers and not any("card" in a or "code" in a for a in answers)
        view = staff_state(client)["view"] or {}
        if view.get("phase") != "complete":  # the hole card is in, not yet turned
            assert view["dealer"]["cards"][1:] == ["back"]
        recall = client.get(
            f"/api/rounds/{staff_state(client)['round_id']}", headers=auth("super")
        ).json()
        assert {c["source"] for c in recall["cards"]} == {"shoe"}


def test_633c5_j_no_simulated_shoe_on_a_real_floor(client: Any, dealing: Any) -> None:
    refused = post(client, "/api/tables/C1/dealer", "dealer", command="shoe-draw")
    assert refused.status_code == 409
    assert refused.json()["detail"]["code"] == "source"


def test_633a14_a_voided_round_tells_each_player_why_and_what_came_back(client: Any) -> None:
    """A void (here after a misdeal: the supervisor voids the round) tells each player's
    terminal the round, the supervisor's reason and his own refund, never another's."""
    assert dealer(client, "open-round").status_code == 200
    with (
        connect(client, "ann", "EWT-1", "C1") as ann,
        connect(client, "bob", "EWT-2", "C1") as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 2500})["ok"]
        voided = post(client, "/api/tables/C1/void", "super", reason="misdeal")
        assert voided.status_code == 200, voided.text
        told = {}
        for name, socket in (("ann", ann), ("bob", bob)):
            told[name] = socket.until(lambda m: m["type"] == "voided")
        assert told["ann"] == {
            "type": "voided",
            "table": "C1",
            "round_id": "C1-000001",
            "reason": "misdeal",
            "refunded": 1000,
        }
        assert told["bob"]["refunded"] == 2500
        assert "2500" not in str(told["ann"]) and "bob" not in str(told["ann"])
