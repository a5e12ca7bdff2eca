"""The shoe: N decks, secure or seeded shuffles, prearranged orders, the cut card (§ 633a.3(a),
§ 633a.5)."""

from __future__ import annotations

import random
import secrets
from collections import Counter

import pytest

from tablejack.core import Card, IllegalActionError, Rank, RulesError, Shoe, ShoeExhaustedError


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_633a3_a_shuffled_shoe_holds_n_full_decks(decks: int) -> None:
    shoe = Shoe.shuffled(decks, seed=3)
    cards = [shoe.draw() for _ in range(52 * decks)]
    assert Counter(cards) == {card: decks for card in set(cards)}
    assert len(set(cards)) == 52
    assert shoe.decks == decks


def test_composition_by_rank_counts_the_undealt_cards() -> None:
    shoe = Shoe.shuffled(2, seed=11)
    assert shoe.composition() == {rank: 8 for rank in Rank}
    first = shoe.draw()
    expected = {rank: 8 for rank in Rank}
    expected[first.rank] = 7
    assert shoe.composition() == expected
    assert shoe.point_composition()[10] == 32 - (first.is_ten_value)
    assert Shoe.prearranged("AS KH 5D KD", decks=1).composition() == {
        Rank.ACE: 1,
        Rank.KING: 2,
        Rank.FIVE: 1,
    }


def test_same_seed_gives_the_same_order_and_another_seed_another() -> None:
    one = Shoe.shuffled(6, seed=2026)
    two = Shoe.shuffled(6, seed=2026)
    other = Shoe.shuffled(6, seed=2027)
    assert one.peek(312) == two.peek(312)
    assert one.peek(312) != other.peek(312)
    assert one.seed == 2026


def test_seeded_shuffle_is_random_random_with_that_seed() -> None:
    cards = list(Card.from_index(i) for i in range(52)) * 2
    random.Random(9).shuffle(cards)
    assert Shoe.shuffled(2, seed=9).peek(104) == tuple(cards)


def test_unseeded_shuffle_uses_the_secure_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []

    class Spy(random.Random):
        def __init__(self) -> None:
            super().__init__(0)
            made.append(self)

    monkeypatch.setattr(secrets, "SystemRandom", Spy)
    shoe = Shoe.shuffled(1)
    assert len(made) == 1
    assert shoe.seed is None


def test_unseeded_shoes_differ() -> None:
    assert Shoe.shuffled(8).peek(416) != Shoe.shuffled(8).peek(416)


def test_prearranged_order_is_dealt_exactly() -> None:
    shoe = Shoe.prearranged("AS 10H kd 5c", decks=1)
    assert [shoe.draw() for _ in range(4)] == [Card.parse(c) for c in ("AS", "10H", "KD", "5C")]
    mixed = Shoe.prearranged([Card.parse("2S"), "3H"], decks=1)
    assert mixed.peek(2) == (Card.parse("2S"), Card.parse("3H"))


def test_633a3_a_prearranged_order_with_more_copies_than_the_decks_hold_is_refused() -> None:
    assert Shoe.prearranged(["AS"] * 6, decks=6).remaining == 6
    with pytest.raises(IllegalActionError, match="hold 6 AS") as caught:
        Shoe.prearranged(["AS"] * 7, decks=6)
    assert caught.value.rule == "PA 633a.3(a)"
    with pytest.raises(IllegalActionError):
        Shoe.prearranged("KD 2C KD", decks=1)


def test_prearranged_bad_code_raises_invalid_notation() -> None:
    from tablejack.core import InvalidNotationError

    with pytest.raises(InvalidNotationError):
        Shoe.prearranged("AS ZZ", decks=1)


@pytest.mark.parametrize("decks", [0, -1, True, 2.0, "6"])
def test_633a3_a_a_shoe_holds_at_least_one_deck(decks: object) -> None:
    with pytest.raises(RulesError) as caught:
        Shoe.shuffled(decks)  # type: ignore[arg-type]
    assert caught.value.rule == "PA 633a.3(a)"
    with pytest.raises(RulesError):
        Shoe([], decks=decks)  # type: ignore[arg-type]


def test_shoe_exhausted_error_when_empty() -> None:
    shoe = Shoe.prearranged("AS KH", decks=1)
    shoe.draw()
    shoe.draw()
    with pytest.raises(ShoeExhaustedError, match="empty") as caught:
        shoe.draw()
    assert caught.value.rule == "PA 633a.3(a)"
    assert shoe.remaining == 0
    assert shoe.dealt == 2
    assert shoe.dealt_cards() == (Card.parse("AS"), Card.parse("KH"))


def test_633a5_cut_card_after_the_penetration() -> None:
    shoe = Shoe.shuffled(6, seed=1, penetration=0.75)
    assert shoe.cut_card == 234
    for _ in range(233):
        shoe.draw()
    assert not shoe.cut_card_reached
    shoe.draw()
    assert shoe.cut_card_reached
    assert shoe.remaining == 312 - 234
    assert len(shoe) == shoe.remaining


def test_prearranged_cut_card_is_at_the_end() -> None:
    shoe = Shoe.prearranged("AS KH", decks=1)
    assert shoe.cut_card == 2
    shoe.draw()
    assert not shoe.cut_card_reached
    shoe.draw()
    assert shoe.cut_card_reached


@pytest.mark.parametrize("penetration", [0.0, -0.5, 1.01])
def test_633a5_penetration_outside_the_shoe_is_refused(penetration: float) -> None:
    with pytest.raises(RulesError) as caught:
        Shoe.shuffled(6, penetration=penetration)
    assert caught.value.rule == "PA 633a.5"


@pytest.mark.parametrize("cut", [-1, 3])
def test_633a5_cut_card_outside_the_cards_is_refused(cut: int) -> None:
    with pytest.raises(RulesError):
        Shoe([Card.parse("AS"), Card.parse("KH")], decks=1, cut_card=cut)
