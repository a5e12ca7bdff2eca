"""Cards: codes, display and the point values of PA § 633a.3(e)."""

from __future__ import annotations

import copy
import pickle

import pytest

from tablejack.core import Card, InvalidNotationError, Rank, Suit, cards_from_codes, full_deck


@pytest.mark.parametrize(
    ("code", "rank", "suit"),
    [
        ("AS", Rank.ACE, Suit.SPADES),
        ("10H", Rank.TEN, Suit.HEARTS),
        ("TH", Rank.TEN, Suit.HEARTS),
        ("th", Rank.TEN, Suit.HEARTS),
        ("qd", Rank.QUEEN, Suit.DIAMONDS),
        ("Kc", Rank.KING, Suit.CLUBS),
        ("2s", Rank.TWO, Suit.SPADES),
        ("J♣", Rank.JACK, Suit.CLUBS),
        ("10♥", Rank.TEN, Suit.HEARTS),
        (" 9D ", Rank.NINE, Suit.DIAMONDS),
    ],
)
def test_parse_card_codes(code: str, rank: Rank, suit: Suit) -> None:
    card = Card.parse(code)
    assert (card.rank, card.suit) == (rank, suit)
    assert card is Card(rank, suit)


@pytest.mark.parametrize(
    ("code", "text", "display"),
    [("AS", "AS", "A♠"), ("TH", "10H", "10♥"), ("qd", "QD", "Q♦"), ("7c", "7C", "7♣")],
)
def test_format_code_and_unicode_display(code: str, text: str, display: str) -> None:
    card = Card.parse(code)
    assert card.code == text
    assert str(card) == text
    assert repr(card) == f"Card({text!r})"
    assert card.display == display
    assert Card.parse(card.display) is card


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("AS", 11),
        ("2H", 2),
        ("3D", 3),
        ("4C", 4),
        ("5S", 5),
        ("6H", 6),
        ("7D", 7),
        ("8C", 8),
        ("9S", 9),
        ("10H", 10),
        ("JD", 10),
        ("QC", 10),
        ("KS", 10),
    ],
)
def test_633a3_e_point_values(code: str, points: int) -> None:
    card = Card.parse(code)
    assert card.points == points
    assert card.is_ace == (code == "AS")
    assert card.is_ten_value == (points == 10)


@pytest.mark.parametrize(
    "code", ["", "1S", "11H", "AX", "ZS", "A", "S", "10", "AS H", "♠A", "0H", "1OH", None, 12]
)
def test_bad_card_codes_raise_invalid_notation(code: object) -> None:
    with pytest.raises(InvalidNotationError):
        Card.parse(code)  # type: ignore[arg-type]


def test_bad_card_code_names_the_point_value_clause() -> None:
    with pytest.raises(InvalidNotationError, match="not a card code") as caught:
        Card.parse("1S")
    assert caught.value.rule == "PA 633a.3(e)"


def test_card_constructor_refuses_impossible_cards() -> None:
    with pytest.raises(InvalidNotationError):
        Card(14, "S")
    with pytest.raises(InvalidNotationError):
        Card(1, "X")


def test_cards_are_interned_and_immutable() -> None:
    card = Card.parse("AS")
    assert Card(Rank.ACE, "S") is card
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card
    with pytest.raises(AttributeError):
        card.points = 1  # type: ignore[misc]


def test_full_deck_has_52_distinct_cards_with_dense_indexes() -> None:
    deck = full_deck()
    assert len(deck) == 52
    assert len(set(deck)) == 52
    assert [card.index for card in deck] == list(range(52))
    assert all(Card.from_index(card.index) is card for card in deck)
    assert sum(card.is_ten_value for card in deck) == 16
    assert sum(card.is_ace for card in deck) == 4


def test_cards_from_codes_accepts_spaces_commas_and_lists() -> None:
    assert cards_from_codes("AS 10h, kd") == [Card.parse("AS"), Card.parse("TH"), Card.parse("KD")]
    assert cards_from_codes(["2c", "3d"]) == [Card.parse("2C"), Card.parse("3D")]
    with pytest.raises(InvalidNotationError):
        cards_from_codes("AS XX")
