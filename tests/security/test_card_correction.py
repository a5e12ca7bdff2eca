"""A wrong card and a misdeal at a table whose cards are entered (PA 633a.14, irregularities;
PA 633c.5(j)): a supervisor corrects the round's last card while nothing was decided after it,
it settled nothing and it is face up — the round becomes the one the right card makes, both
codes in its record (``card_correction``), the log still verifies and recall shows the card as
read and as corrected. A dealer or a player cannot correct a card; a card that a decision
followed, a face-down card or one that cannot be the card is refused and changes nothing; a
misdeal is a void recorded as one. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.support.floor import DECK, auth, connect, dealer, one_deck_table, post, staff_state
from tests.support.store import Backend


def _type(client: Any, card: str) -> Any:
    return post(client, "/api/tables/C1/dealer", "dealer", command="card", card=card)


def _correct(client: Any, code: str, who: str = "super") -> Any:
    return post(client, "/api/tables/C1/correct-card", who, code=code, reason="read it wrong")


def test_633a14_a_supervisor_corrects_the_last_card_and_the_round_is_the_right_cards(
    make_client: Any, backend: Backend
) -> None:
    client = make_client([one_deck_table()], backend=backend)
    assert dealer(client, "open-round").status_code == 200
    with connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert dealer(client, "close-wagering").status_code == 200
        allowed = post(client, "/api/tables/C1/manual-entry", "super", reason="reader down")
        assert allowed.status_code == 200, allowed.text
        for card in ("10S", "5H", "6D"):  # ann's first, the dealer's up card, ann's second
            assert _type(client, card).status_code == 200
        before = staff_state(client)
        # neither the dealer nor a player corrects a card; a card that is no card is refused
        assert _correct(client, "7D", "dealer").status_code == 403
        assert _correct(client, "7D", "ann").status_code == 403
        assert _correct(client, "1D").status_code == 422
        assert _correct(client, "6D").json()["detail"]["code"] == "same"
        assert staff_state(client)["seq"] == before["seq"]
        # the supervisor corrects it: ann holds 10S 7D, the log keeps the card read
        fixed = _correct(client, "7D")
        assert fixed.status_code == 200, fixed.text
        assert (fixed.json()["was"], fixed.json()["code"]) == ("6D", "7D")
        after = staff_state(client)
        assert after["seq"] == before["seq"] + 1
        [hand] = after["view"]["positions"][0]["hands"]
        assert (hand["cards"], hand["total"]) == (["10S", "7D"], 17)
        assert after["view"]["cards_dealt"] == ["10S", "5H", "7D"]
        # the hole card is face down: it is not corrected (nobody reads it)
        assert _type(client, "9C").status_code == 200
        hidden = _correct(client, "8C")
        assert hidden.status_code == 409 and hidden.json()["detail"]["code"] == "face_down"
        assert "9C" not in hidden.text
        # ann decides: the card before is no longer corrected
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        late = _correct(client, "2C")
        assert late.status_code == 409 and late.json()["detail"]["code"] in ("acted", "round")
    recall = client.get(f"/api/rounds/{after['round_id']}", headers=auth("super")).json()
    assert recall["log_verified"] is True
    [correction] = recall["corrections"]
    assert (correction["was"], correction["code"], correction["by"]) == ("6D", "7D", "sam")
    assert [c["code"] for c in recall["cards"]][:3] == ["10S", "5H", "7D"]
    assert recall["cards"][2]["read_as"] == "6D"
    assert "Seat 1 (ann): 10♠ 7♦ = 17, stands" in recall["transcript"]
    audit = client.get("/api/audit", headers=auth("super")).json()
    assert [row["actor"] for row in audit if row["kind"] == "card_correction"] == ["sam"]


def test_633a14_a_misdeal_is_a_void_recorded_as_one(make_client: Any, backend: Backend) -> None:
    client = make_client([one_deck_table()], backend=backend)
    assert dealer(client, "open-round").status_code == 200
    with connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        round_id = staff_state(client)["round_id"]
        assert dealer(client, "close-wagering").status_code == 200
        by_dealer = post(client, "/api/tables/C1/void", "dealer", reason="misdeal", misdeal=True)
        assert by_dealer.status_code == 403
        void = post(client, "/api/tables/C1/void", "super", reason="two cards", misdeal=True)
        assert void.status_code == 200, void.text
    recall = client.get(f"/api/rounds/{round_id}", headers=auth("super")).json()
    [voided] = [e for e in recall["events"] if e["kind"] == "void"]
    assert voided["payload"]["misdeal"] is True
    assert voided["payload"]["refunds"][0]["amount"] == 1000
    audit = client.get("/api/audit", headers=auth("super")).json()
    assert [row["message"] for row in audit if row["kind"] == "misdeal"] == ["two cards"]


def test_633a14_a_correction_gives_the_shoes_count_the_card_read_back(
    make_client: Any, backend: Backend
) -> None:
    """With the shoe's count loaded (PA 605a): the card read goes back into it and the right
    one comes out; a correction to a card already out of the shoe is refused, nothing
    changed."""
    client = make_client([one_deck_table()], backend=backend)
    loaded = post(client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(DECK))
    assert loaded.status_code == 200, loaded.text
    assert dealer(client, "open-round").status_code == 200
    with connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert dealer(client, "close-wagering").status_code == 200
        allowed = post(client, "/api/tables/C1/manual-entry", "super", reason="reader down")
        assert allowed.status_code == 200, allowed.text
        for card in ("10S", "5H", "6D"):
            assert _type(client, card).status_code == 200
        before = staff_state(client)
        out = _correct(client, "10S")  # 10S is out of the shoe already (ann's first card)
        assert out.status_code == 409 and out.json()["detail"]["code"] in ("not_in_shoe", "invalid")
        assert staff_state(client)["seq"] == before["seq"]
        assert _correct(client, "7D").status_code == 200
        again = _type(client, "7D")  # the hole card: 7D is out now, 6D back in the shoe
        assert again.status_code == 409, again.text
        assert _type(client, "6D").status_code == 200
