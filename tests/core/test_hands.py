"""Hand totals: hard and soft (§ 633a.1, § 633a.3(e)), Blackjack (§ 633a.1, § 633a.11), bust."""

from __future__ import annotations

import pytest

from tablejack.core import Card, Hand, hand_total


@pytest.mark.parametrize(
    ("codes", "total", "soft"),
    [
        ("10S 7H", 17, False),
        ("AS 6D", 17, True),
        ("AS 6D 9C", 16, False),
        ("AS AD", 12, True),
        ("AS AD 9C", 21, True),
        ("AS AD AH AC", 14, True),
        ("AS AD AH AC 7S", 21, True),
        ("AS AD AH AC 8S", 12, False),
        ("AS KD", 21, True),
        ("5S 6D KC", 21, False),
        ("KS QD", 20, False),
        ("KS QD 2C", 22, False),
        ("2S", 2, False),
        ("AS", 11, True),
    ],
)
def test_633a3_e_hard_and_soft_totals(codes: str, total: int, soft: bool) -> None:
    hand = Hand.of(codes)
    assert hand.total == total
    assert hand.is_soft == soft
    assert hand_total(hand.cards) == (total, soft)
    assert hand.hard_total == sum(1 if c.is_ace else c.points for c in hand.cards)


def test_totals_are_updated_as_cards_arrive() -> None:
    hand = Hand()
    assert (hand.total, hand.is_soft, len(hand)) == (0, False, 0)
    hand.add(Card.parse("AS"))
    hand.add(Card.parse("5D"))
    assert (hand.total, hand.is_soft) == (16, True)
    hand.add(Card.parse("10C"))
    assert (hand.total, hand.is_soft, hand.is_bust) == (16, False, False)
    hand.add(Card.parse("6H"))
    assert (hand.total, hand.is_bust) == (22, True)


@pytest.mark.parametrize("ten", ["10S", "JS", "QS", "KS"])
def test_633a1_blackjack_is_an_ace_and_a_ten_value_as_the_initial_two_cards(ten: str) -> None:
    assert Hand.of(f"AH {ten}").is_blackjack
    assert Hand.of(f"{ten} AH").is_blackjack


@pytest.mark.parametrize("codes", ["5S 6D 10C", "AS 5D 5C", "AS KD 10C", "AS AD 9C", "10S 9D"])
def test_633a1_twenty_one_or_more_cards_is_not_blackjack(codes: str) -> None:
    assert not Hand.of(codes).is_blackjack


def test_633a11_ace_and_ten_after_a_split_is_21_not_blackjack() -> None:
    hand = Hand.of("AS KD", from_split=True)
    assert hand.total == 21
    assert not hand.is_blackjack
    assert hand.describe() == "A♠ K♦ = 21"
    assert repr(hand) == "Hand.of('AS KD', from_split=True)"


def test_bust_only_when_the_hard_total_exceeds_21() -> None:
    assert Hand.of("10S 6D 6C").is_bust
    assert not Hand.of("10S AD KC").is_bust
    assert Hand.of("10S AD KC").total == 21
    assert not Hand.of("AS AD AH AC KS 7D").is_bust
    assert Hand.of("AS AD AH AC KS 8D").is_bust


@pytest.mark.parametrize(
    ("codes", "pair"),
    [("8S 8D", True), ("KS 10D", True), ("QS JD", True), ("AS AD", True), ("9S 10D", False)],
)
def test_633a11_a_pair_means_identical_value(codes: str, pair: bool) -> None:
    assert Hand.of(codes).is_pair == pair
    assert not Hand.of(codes + " 2C").is_pair


def test_describe() -> None:
    assert Hand.of("AS 6D").describe() == "A♠ 6♦ = soft 17"
    assert Hand.of("AS KD").describe() == "A♠ K♦ = Blackjack"
    assert Hand.of("10S 6D 6C").describe() == "10♠ 6♦ 6♣ = 22 bust"
    assert Hand.of("10S 7D").describe() == "10♠ 7♦ = 17"
    assert Hand.of("AS 5D 5C").describe() == "A♠ 5♦ 5♣ = 21"
