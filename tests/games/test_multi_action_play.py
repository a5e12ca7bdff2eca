"""NJ multi-action blackjack, the method of play (f)(1)–(8) and the ambiguity decisions A-24 to
A-29, on fixed card orders.

Card order of a game: each player's first card (seat 1 first), the dealer's first card, each
player's second card, the cards the players draw in turn, then round 1's dealer cards, round 2's,
round 3's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from tablejack.core import Card, IllegalActionError, Result, RulesError, Shoe
from tablejack.core.records import WagerKind
from tablejack.games.multi_action import MultiActionRound, MultiActionRules, Phase

PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus")
TEN = (1000, 1000, 1000)


def order(hands: Sequence[str], first: str, rest: str = "") -> str:
    """Each seat's first card, the dealer's first card, each seat's second card, ``rest``."""
    pairs = [hand.split() for hand in hands]
    return " ".join([*(p[0] for p in pairs), first, *(p[1] for p in pairs), *rest.split()])


def table(
    hands: Sequence[str],
    first: str,
    rest: str = "",
    *,
    spots: Sequence[Sequence[int]] | None = None,
    **rules: Any,
) -> MultiActionRound:
    """A dealt game from a prearranged four-deck shoe, $10 on every spot unless ``spots``."""
    table_rules = MultiActionRules(**rules)
    shoe = Shoe.prearranged(order(hands, first, rest), decks=table_rules.decks)
    round_ = MultiActionRound(table_rules, shoe)
    for seat, amounts in enumerate(spots or [TEN] * len(hands), start=1):
        round_.place_wager(seat, PLAYERS[seat - 1], tuple(amounts))
    round_.close_wagering()
    return round_


def results(round_: MultiActionRound) -> list[tuple[int, int | None, int | None, Result, int, str]]:
    """(seat, hand, spot, result, returned, clause) of every settlement, in order."""
    return [
        (s.seat, s.hand, s.spot, s.result, s.returned, s.clause)
        for s in round_.settlements
        if s.kind is WagerKind.BLACKJACK
    ]


def cards(text: str) -> list[Card]:
    return [Card.parse(code) for code in text.split()]


def snapshot(round_: MultiActionRound) -> tuple[Any, ...]:
    """Everything a refused action must leave unchanged."""
    return (
        tuple(round_.operations),
        round_.phase,
        tuple(round_.settlements),
        tuple(round_.wagers),
        tuple(round_.cards_dealt),
        round_.card_request,
        round_.current_seat,
        tuple(
            (
                n,
                s.spots,
                s.insurance_decided,
                s.insurance_wager_id,
                s.splits,
                tuple(
                    (
                        tuple(h.hand.cards),
                        h.done,
                        h.doubled,
                        h.awaiting_card,
                        tuple((w.spot, w.amount, w.settled) for w in h.spots),
                    )
                    for h in s.hands
                ),
            )
            for n, s in round_.seats.items()
        ),
        tuple((k, tuple(h.cards)) for k, h in round_.dealer_hands.items()),
        round_.dealer_round,
        None if round_.shoe is None else round_.shoe.remaining,
    )


def finished(round_: MultiActionRound) -> None:
    """The game is complete, used every card, and balances."""
    assert round_.is_complete
    assert round_.shoe is not None and round_.shoe.remaining == 0
    assert round_.house_net() == -sum(round_.player_net().values())


# -- (f)(1) wagers on at least two of three spots ---------------------------------------------


def test_nj_f1_player_must_back_at_least_two_of_three_spots() -> None:
    round_ = MultiActionRound(MultiActionRules(), Shoe.shuffled(4, seed=1))
    before = snapshot(round_)
    with pytest.raises(IllegalActionError, match=r"backs 1 of the three") as error:
        round_.place_wager(1, "ann", (1000, 0, 0))
    assert error.value.rule == "NJ MAB (f)(1)"
    assert snapshot(round_) == before
    round_.place_wager(1, "ann", (1000, 0, 1000))
    assert [(w.spot, w.amount) for w in round_.wagers] == [(1, 1000), (3, 1000)]


def test_nj_f1_minimum_spots_three_option_requires_every_spot() -> None:
    round_ = MultiActionRound(MultiActionRules(minimum_spots=3), Shoe.shuffled(4, seed=1))
    with pytest.raises(IllegalActionError, match="at least three") as error:
        round_.place_wager(1, "ann", (1000, 1000, 0))
    assert error.value.rule == "NJ MAB (f)(1)"
    assert not round_.seats


def test_nj_f1_no_wager_on_a_spot_after_the_deal() -> None:
    round_ = table(["10S 7H"], "9D", "10C 10D 8C", spots=[(1000, 1000, 0)])
    before = snapshot(round_)
    with pytest.raises(IllegalActionError, match="before the first card is dealt") as error:
        round_.place_wager(2, "bob", TEN)
    assert error.value.rule == "NJ MAB (f)(1)"
    assert snapshot(round_) == before


@pytest.mark.parametrize(
    ("spots", "message"),
    [
        ((1000, 500, 0), "below the table minimum"),
        ((1000, 1000, 500_100), "above the table maximum"),
        ((1050, 1000, 0), "multiple of the betting unit"),
        ((1000, 1000), "three amounts"),
        ((1000, -1000, 1000), "not whole cents"),
    ],
)
def test_nj_f1_table_limits_apply_to_each_spot(spots: tuple[int, ...], message: str) -> None:
    round_ = MultiActionRound(MultiActionRules(), Shoe.shuffled(4, seed=1))
    with pytest.raises(IllegalActionError, match=message) as error:
        round_.place_wager(1, "ann", spots)
    assert error.value.rule == "NJ MAB (f)(1)"
    assert not round_.wagers and not round_.operations


def test_nj_e_up_to_seven_players() -> None:
    round_ = MultiActionRound(MultiActionRules(), Shoe.shuffled(4, seed=1))
    with pytest.raises(IllegalActionError, match="up to 7 players") as error:
        round_.place_wager(8, "hal", TEN)
    assert error.value.rule == "NJ MAB (e)"


def test_nj_f1_each_wager_enters_that_part_of_the_game_only() -> None:
    # Spot 2 is not backed: no spot-2 wager exists and nothing settles in round 2 for ann.
    round_ = table(["10S 9H"], "7D", "10C 8C 10D", spots=[(1000, 0, 2000)])
    round_.stand(1)
    finished(round_)
    assert results(round_) == [
        (1, 0, 1, Result.WIN, 2000, "NJ MAB (f)(4)"),
        (1, 0, 3, Result.WIN, 4000, "NJ MAB (f)(4), (f)(7)"),
    ]
    assert round_.skipped_rounds == [2]


def test_nj_f1_f2_card_order_first_square_then_dealer_first_card_then_second_cards() -> None:
    round_ = table(["10S 7H", "9C 8D"], "6D")
    assert round_.seats[1].hands[0].hand.cards == cards("10S 7H")
    assert round_.seats[2].hands[0].hand.cards == cards("9C 8D")
    assert round_.first_card == Card.parse("6D")
    assert [op.target for op in round_.operations if op.kind == "card"] == [
        "seat 1",
        "seat 2",
        "dealer first card",
        "seat 1",
        "seat 2",
    ]


# -- (f)(2) the dealer's first card, kept for three rounds ------------------------------------


def test_nj_f2_dealer_gets_a_second_card_only_after_all_hands_are_played() -> None:
    round_ = table(["10S 7H", "9C 8D"], "6D", "10C AC 9S 2S 5H 6H")
    assert round_.dealer_hands == {} and round_.phase is Phase.PLAYING
    round_.stand(1)
    assert round_.dealer_hands == {}
    round_.stand(2)
    finished(round_)


def test_nj_f2_first_card_is_used_in_all_three_rounds() -> None:
    round_ = table(["10S 9H"], "6D", "10C AC 9S 2S 5H 6H")
    round_.stand(1)
    finished(round_)
    assert {k: hand.cards for k, hand in round_.dealer_hands.items()} == {
        1: cards("6D 10C AC"),
        2: cards("6D 9S 2S"),
        3: cards("6D 5H 6H"),
    }
    assert [op.target for op in round_.operations if op.kind == "dealer-round"] == [
        "square 1",
        "square 2",
        "square 3",
    ]


# -- (f)(3) stand or hit; a bust loses every spot (A-26) ----------------------------------------


def test_nj_f3_player_hits_until_21_or_less_and_may_not_hit_21() -> None:
    round_ = table(["5S 4H"], "7D", "2C 10C 10D 10H 10S")
    assert round_.legal_actions(1) == ["hit", "stand"]
    round_.hit(1)
    assert round_.seats[1].hands[0].hand.total == 11
    round_.hit(1)  # 21: the hand is complete, no decision is asked
    assert round_.current_seat is None
    finished(round_)
    assert [r[3] for r in results(round_)] == [Result.WIN, Result.WIN, Result.WIN]


def test_nj_f3_a26_bust_loses_every_spot_the_player_backed_at_once() -> None:
    round_ = table(
        ["10S 6H", "10C 9C"], "7D", "9H 10D 10H", spots=[(1000, 2000, 3000), (1000, 0, 1000)]
    )
    round_.hit(1)
    assert results(round_) == [
        (1, 0, 1, Result.LOSE, 0, "NJ MAB (f)(3); A-26"),
        (1, 0, 2, Result.LOSE, 0, "NJ MAB (f)(3); A-26"),
        (1, 0, 3, Result.LOSE, 0, "NJ MAB (f)(3); A-26"),
    ]
    assert [s.dealer_round for s in round_.settlements] == [1, 2, 3]
    assert round_.current_seat == 2 and not round_.dealer_hands
    round_.stand(2)
    finished(round_)
    assert round_.skipped_rounds == [2]  # only ann backed spot 2, and her wager is settled
    assert round_.player_net() == {"ann": -6000, "bob": 2000}


def test_nj_f3_a26_a28_everyone_busts_so_no_dealer_round_is_dealt() -> None:
    round_ = table(["10S 6H"], "7D", "9C")
    round_.hit(1)
    finished(round_)
    assert round_.dealer_hands == {}
    assert round_.skipped_rounds == [1, 2, 3]
    notes = [op.note for op in round_.operations if op.kind == "skip-round"]
    assert notes == [
        f"round {k}: every wager already settled (NJ MAB (f)(1); A-28)" for k in (1, 2, 3)
    ]
    assert round_.player_net() == {"ann": -3000}


# -- (f)(4) the dealer draws to 16, stands on 17; win, push, loss ------------------------------


def test_nj_f4_dealer_draws_to_16_stands_on_17_win_push_loss() -> None:
    round_ = table(["10S 7D"], "9H", "6C 5S 8C 7C 9D")
    round_.stand(1)
    finished(round_)
    assert [round_.dealer_hands[k].total for k in (1, 2, 3)] == [20, 17, 25]
    assert results(round_) == [
        (1, 0, 1, Result.LOSE, 0, "NJ MAB (f)(4)"),
        (1, 0, 2, Result.PUSH, 1000, "NJ MAB (f)(4), (f)(6)"),
        (1, 0, 3, Result.WIN, 2000, "NJ MAB (f)(4), (f)(7)"),
    ]
    assert round_.player_net() == {"ann": 0}


def test_nj_f4_a24_dealer_stands_on_soft_17_by_default() -> None:
    round_ = table(["10S 8D"], "AH", "6C 6D 6S")
    round_.stand(1)
    finished(round_)
    assert [round_.dealer_hands[k].describe() for k in (1, 2, 3)] == ["A♥ 6♣ = soft 17"] + [
        f"A♥ 6{s} = soft 17" for s in "♦♠"
    ]
    assert round_.player_net() == {"ann": 3000}


def test_nj_f4_a24_dealer_hits_soft_17_as_an_option() -> None:
    round_ = table(["10S 8D"], "AH", "6C 2C 6D 3D 6S 4S", dealer_hits_soft_17=True)
    round_.stand(1)
    finished(round_)
    assert [round_.dealer_hands[k].total for k in (1, 2, 3)] == [19, 20, 21]
    assert round_.player_net() == {"ann": -3000}


# -- (f)(5) Blackjack: at once, or after the dealer's next card; per round (A-25) --------------


@pytest.mark.parametrize("first", ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D"])
def test_nj_f5_blackjack_paid_at_once_against_a_first_card_of_2_to_9(first: str) -> None:
    points = Card.parse(first).points
    per_round = "10H" + ("" if points + 10 >= 17 else " 7H")
    round_ = table(["AS KH", "10C 8C"], first, " ".join([per_round] * 3))
    # Paid before seat 2 plays and before the dealer has a second card.
    assert round_.current_seat == 2 and not round_.dealer_hands
    assert results(round_) == [
        (1, 0, k, Result.BLACKJACK, 2500, "NJ MAB (f)(5)") for k in (1, 2, 3)
    ]
    assert [s.dealer_round for s in round_.settlements] == [1, 2, 3]
    round_.stand(2)
    finished(round_)
    assert round_.player_net()["ann"] == 4500


@pytest.mark.parametrize("first", ["10D", "JD", "QD", "KD"])
def test_nj_f5_a25_blackjack_against_a_ten_waits_and_dealer_blackjack_in_round_2_only(
    first: str,
) -> None:
    round_ = table(["AS KH", "10S 9S"], first, "7C AD 9C")
    assert round_.settlements == []  # not paid until the dealer's next card
    round_.stand(2)
    finished(round_)
    assert [round_.dealer_blackjack[k] for k in (1, 2, 3)] == [False, True, False]
    assert results(round_) == [
        (1, 0, 1, Result.BLACKJACK, 2500, "NJ MAB (f)(5); A-25"),
        (2, 0, 1, Result.WIN, 2000, "NJ MAB (f)(4)"),
        (1, 0, 2, Result.PUSH, 1000, "NJ MAB (f)(5)"),
        (2, 0, 2, Result.LOSE, 0, "NJ MAB (f)(5); A-29"),
        (1, 0, 3, Result.BLACKJACK, 2500, "NJ MAB (f)(5); A-25"),
        (2, 0, 3, Result.PUSH, 1000, "NJ MAB (f)(4), (f)(7)"),
    ]
    assert round_.player_net() == {"ann": 3000, "bob": 0}


def test_nj_f5_a25_blackjack_against_an_ace_paid_at_the_next_card_not_after_the_hits() -> None:
    round_ = table(["AS QH", "10S 8S"], "AD", "KC 5C 2C 9H")
    assert round_.settlements == []  # not paid until the dealer's next card
    round_.stand(2)
    finished(round_)
    assert [round_.dealer_hands[k].describe() for k in (1, 2, 3)] == [
        "A♦ K♣ = Blackjack",
        "A♦ 5♣ 2♣ = soft 18",
        "A♦ 9♥ = soft 20",
    ]
    assert results(round_) == [
        (1, 0, 1, Result.PUSH, 1000, "NJ MAB (f)(5)"),
        (2, 0, 1, Result.LOSE, 0, "NJ MAB (f)(5); A-29"),
        (1, 0, 2, Result.BLACKJACK, 2500, "NJ MAB (f)(5); A-25"),
        (2, 0, 2, Result.PUSH, 1000, "NJ MAB (f)(4), (f)(6)"),
        (1, 0, 3, Result.BLACKJACK, 2500, "NJ MAB (f)(5); A-25"),
        (2, 0, 3, Result.LOSE, 0, "NJ MAB (f)(4), (f)(7)"),
    ]
    kinds = [(op.kind, op.card) for op in round_.operations]
    paid = next(
        i for i, op in enumerate(round_.operations) if op.settlement and op.settlement.spot == 2
    )
    assert kinds[paid - 1] == ("card", Card.parse("5C"))  # paid before the hit card 2C
    assert round_.player_net() == {"ann": 3000, "bob": -2000}


def test_nj_f5_blackjack_beats_a_dealer_multi_card_21() -> None:
    round_ = table(["AS JH", "9S 9C"], "10D", "5C 6C 10C 7C")
    round_.stand(2)
    finished(round_)
    assert round_.dealer_hands[1].describe() == "10♦ 5♣ 6♣ = 21"
    log = [
        (op.kind, op.card, op.settlement.spot if op.settlement else None)
        for op in round_.operations
    ]
    paid = log.index(("settle", None, 1))
    assert log[paid - 1] == ("card", Card.parse("5C"), None)  # at the dealer's next card
    assert results(round_)[0] == (1, 0, 1, Result.BLACKJACK, 2500, "NJ MAB (f)(5); A-25")
    assert results(round_)[1] == (2, 0, 1, Result.LOSE, 0, "NJ MAB (f)(4)")


# -- (f)(6)–(8) the second and third rounds, then collect -------------------------------------


def test_nj_f6_f7_hit_cards_discarded_first_card_moved_to_the_next_square() -> None:
    round_ = table(["10S 9H"], "6D", "5C 3C 4C 10H AC 9C 2C")
    round_.stand(1)
    finished(round_)
    assert {k: hand.cards for k, hand in round_.dealer_hands.items()} == {
        1: cards("6D 5C 3C 4C"),
        2: cards("6D 10H AC"),
        3: cards("6D 9C 2C"),
    }
    steps = [
        (op.kind, op.note or "")
        for op in round_.operations
        if op.kind in ("dealer-round", "round-complete", "settle", "complete")
    ]
    assert [kind for kind, _ in steps] == [
        "dealer-round",
        "settle",
        "round-complete",
        "dealer-round",
        "settle",
        "round-complete",
        "dealer-round",
        "settle",
        "round-complete",
        "complete",
    ]
    assert steps[2][1] == (
        "round 1: 6♦ 5♣ 3♣ 4♣ = 18; hit cards 5♣ 3♣ 4♣ discarded, the first card kept "
        "(NJ MAB (f)(6))"
    )
    assert steps[-1][1] == "all cards collected (NJ MAB (f)(8))"


def test_nj_f6_round_one_wagers_all_settle_before_round_two_is_dealt() -> None:
    round_ = table(["10S 9H", "10C 7C"], "5D", "10D 2D 10H 3H 10S 4S")
    round_.stand(1)
    round_.stand(2)
    finished(round_)
    rounds = [s.dealer_round for s in round_.settlements]
    assert rounds == sorted(rounds) == [1, 1, 2, 2, 3, 3]
    round_two = next(i for i, op in enumerate(round_.operations) if op.target == "dealer round 2")
    assert all(
        op.settlement.dealer_round == 1
        for op in round_.operations[:round_two]
        if op.settlement is not None
    )


def test_nj_f8_all_cards_collected_ending_the_game() -> None:
    round_ = table(["10S 9H"], "9D", "10C 10D 10H")
    round_.stand(1)
    finished(round_)
    assert round_.operations[-1].kind == "complete" and round_.phase is Phase.COMPLETE
    assert round_.dealer_round == 4


def test_nj_a28_a_round_without_any_wager_is_skipped_and_draws_no_card() -> None:
    # Nobody backs spot 2: round 1's cards, then round 3's; round 2 is skipped.
    round_ = table(
        ["10S 9H", "10C 8C"], "7D", "10D 6C 4C", spots=[(1000, 0, 1000), (2000, 0, 2000)]
    )
    round_.stand(1)
    round_.stand(2)
    finished(round_)
    assert round_.skipped_rounds == [2] and sorted(round_.dealer_hands) == [1, 3]
    assert [op.note for op in round_.operations if op.kind == "skip-round"] == [
        "round 2: no wager (NJ MAB (f)(1); A-28)"
    ]
    assert round_.dealer_hands[3].cards == cards("7D 6C 4C")
    assert round_.player_net() == {"ann": 2000, "bob": 4000}


# -- A-29 a dealer Blackjack takes the full amount at risk ------------------------------------


def test_nj_a29_dealer_blackjack_takes_the_doubled_spot_in_full() -> None:
    round_ = table(["6S 5H"], "AD", "9S KC 7C 6C")
    round_.apply("1 double 1,2")
    finished(round_)
    assert results(round_) == [
        (1, 0, 1, Result.LOSE, 0, "NJ MAB (f)(5); A-29"),
        (1, 0, 2, Result.WIN, 4000, "NJ MAB (f)(4), (f)(6)"),
        (1, 0, 3, Result.WIN, 2000, "NJ MAB (f)(4), (f)(7)"),
    ]
    assert round_.player_net() == {"ann": 1000}


def test_nj_a29_dealer_blackjack_takes_both_split_hands_in_full() -> None:
    round_ = table(["8S 8H"], "10D", "2C 10C 9C AC", spots=[(1000, 1000, 0)])
    round_.split(1)
    round_.stand(1)  # 8 2 = 10 (no double after a split by default)
    round_.stand(1)  # 8 10 = 18
    finished(round_)
    assert round_.dealer_blackjack == {1: False, 2: True}
    spot_two = [r for r in results(round_) if r[2] == 2]
    assert spot_two == [
        (1, 0, 2, Result.LOSE, 0, "NJ MAB (f)(5); A-29"),
        (1, 1, 2, Result.LOSE, 0, "NJ MAB (f)(5); A-29"),
    ]


# -- double down (a) per spot (A-27) ----------------------------------------------------------


def test_nj_a_double_on_every_backed_spot() -> None:
    round_ = table(["4S 6H"], "6D", "AS 10C 8C 10D 9D", spots=[(1000, 2000, 0)])
    operation = round_.apply("1 double")
    assert (operation.command, operation.amount, operation.note) == ("1 double", 3000, "spots 1,2")
    finished(round_)
    assert [w.amount for w in round_.wagers] == [2000, 4000]
    assert results(round_) == [
        (1, 0, 1, Result.WIN, 4000, "NJ MAB (f)(4)"),
        (1, 0, 2, Result.WIN, 8000, "NJ MAB (f)(4), (f)(6)"),
    ]


def test_nj_a27_double_on_some_spots_only() -> None:
    round_ = table(["5S 6H"], "9D", "2C 8C 7C KC 10C")
    operation = round_.apply("1 double 3,1")
    assert (operation.command, operation.amount) == ("1 double 1,3", 2000)
    finished(round_)
    assert [(w.spot, w.amount) for w in round_.wagers] == [(1, 2000), (2, 1000), (3, 2000)]
    assert results(round_) == [
        (1, 0, 1, Result.LOSE, 0, "NJ MAB (f)(4)"),
        (1, 0, 2, Result.WIN, 2000, "NJ MAB (f)(4), (f)(6)"),
        (1, 0, 3, Result.LOSE, 0, "NJ MAB (f)(4), (f)(7)"),
    ]
    assert round_.player_net() == {"ann": -3000}


@pytest.mark.parametrize("hand", ["5S 4H", "6S 6H", "AS 9H", "10S 2H"])
def test_nj_a_double_only_on_a_first_two_card_total_of_10_or_11(hand: str) -> None:
    round_ = table([hand], "9D")
    before = snapshot(round_)
    with pytest.raises(IllegalActionError, match="total 10 or 11") as error:
        round_.double_down(1)
    assert error.value.rule == "NJ MAB (a)"
    assert snapshot(round_) == before
    assert not round_.can_double_down(1)


def test_nj_a_b2iii_ace_nine_is_20_for_the_double_by_default() -> None:
    # The default reading: an ace counts 11 unless the hand would exceed 21 (best-total), so an
    # ace and a nine total 20, not 10; the message names the reading and its option.
    round_ = table(["AS 9H"], "6D")
    with pytest.raises(IllegalActionError, match="not 20; an ace counts 11 here") as error:
        round_.double_down(1)
    assert error.value.rule == "NJ MAB (a)"
    assert "double_ace_value = best-total, NJ MAB (b)(2)(iii)" in str(error.value)


def test_nj_a_b2iii_ace_nine_doubles_as_10_with_the_one_or_eleven_option() -> None:
    # (b)(2)(iii): "a value of one or 11 at the discretion of the player": counting the ace as
    # 1, A-9 is a first-two-card total of 10 ((a)). The double takes one card; the hand then
    # plays at its best total: A 9 K = 20 (the ace counting 1), against the dealer's 6 10 5 = 21
    # in each of the three rounds.
    round_ = table(["AS 9H"], "6D", "KC 10C 5C 10S 5S 10H 5H", double_ace_value="one-or-eleven")
    operation = round_.apply("1 double")
    assert operation.amount == 3000
    finished(round_)
    assert [w.amount for w in round_.wagers] == [2000, 2000, 2000]
    assert round_.player_net() == {"ann": -6000}
    # A soft hand that is 10 or 11 neither way (A-A: 2 or 12; A-5: 6 or 16) still may not.
    for hand in ("AS AH", "AS 5H"):
        refused = table([hand], "6D", double_ace_value="one-or-eleven")
        assert not refused.can_double_down(1)


def test_nj_a_b2iii_double_ace_value_is_validated() -> None:
    with pytest.raises(RulesError, match="double_ace_value") as error:
        MultiActionRules(double_ace_value="eleven")
    assert error.value.rule == "NJ MAB (a), (b)(2)(iii)"
    rules = MultiActionRules.from_mapping({"double_ace_value": "one-or-eleven"})
    assert MultiActionRules.from_mapping(rules.to_mapping()) == rules


def test_nj_a27_double_on_a_spot_not_backed_is_refused() -> None:
    round_ = table(["5S 6H"], "9D", spots=[(1000, 0, 1000)])
    before = snapshot(round_)
    with pytest.raises(IllegalActionError, match="no wager on spot 2") as error:
        round_.apply("1 double 1,2")
    assert error.value.rule == "NJ MAB (a); A-27"
    assert snapshot(round_) == before


def test_nj_a_double_down_option_off() -> None:
    round_ = table(["5S 6H"], "9D", double_down=False)
    with pytest.raises(IllegalActionError, match="not offered"):
        round_.double_down(1)


# -- splitting pairs (a), matched on every backed spot (A-27) ----------------------------------


def test_nj_a27_split_is_matched_on_every_backed_spot() -> None:
    round_ = table(["8S 8H"], "6D", "3C KC 10C 10H 9H AC", spots=[(1000, 2000, 0)])
    operation = round_.split(1)
    assert (operation.command, operation.amount) == ("1 split", 3000)
    assert [(w.hand, w.spot, w.amount) for w in round_.wagers] == [
        (0, 1, 1000),
        (0, 2, 2000),
        (1, 1, 1000),
        (1, 2, 2000),
    ]
    with pytest.raises(IllegalActionError, match="after a split"):
        round_.double_down(1)  # 8 3 = 11, but no double after a split by default
    round_.hit(1)  # 8 3 K = 21
    round_.stand(1)  # 8 10 = 18
    finished(round_)
    assert results(round_) == [
        (1, 0, 1, Result.WIN, 2000, "NJ MAB (f)(4)"),
        (1, 1, 1, Result.WIN, 2000, "NJ MAB (f)(4)"),
        (1, 0, 2, Result.WIN, 4000, "NJ MAB (f)(4), (f)(6)"),
        (1, 1, 2, Result.WIN, 4000, "NJ MAB (f)(4), (f)(6)"),
    ]
    assert round_.skipped_rounds == [3]


def test_nj_a27_double_after_split_option_doubles_the_split_hand_per_spot() -> None:
    round_ = table(["8S 8H"], "6D", "3C KC 10C 10H 9H AC 10S 5S", double_after_split=True)
    round_.split(1)
    round_.apply("1 double 2")
    round_.stand(1)
    finished(round_)
    assert [(w.hand, w.spot, w.amount) for w in round_.wagers] == [
        (0, 1, 1000),
        (0, 2, 2000),
        (0, 3, 1000),
        (1, 1, 1000),
        (1, 2, 1000),
        (1, 3, 1000),
    ]


def test_nj_a_split_needs_a_pair_and_respects_the_hand_limit() -> None:
    round_ = table(["8S 9H"], "6D")
    with pytest.raises(IllegalActionError, match="Only a pair") as error:
        round_.split(1)
    assert error.value.rule == "NJ MAB (a); A-27"
    round_ = table(["8S 8H"], "6D", "8C")
    round_.split(1)
    with pytest.raises(IllegalActionError, match="at most 2 hands"):
        round_.split(1)


def test_nj_a_split_aces_take_one_card_each() -> None:
    round_ = table(["AS AH"], "6D", "9C KC 10D 10H 10S 10C 9S 9H")
    round_.split(1)
    finished(round_)
    hands = [hand.hand.describe() for hand in round_.seats[1].hands]
    assert hands == ["A♠ 9♣ = soft 20", "A♥ K♣ = 21"]  # 21 after a split is not a Blackjack
    assert round_.player_net() == {"ann": 6000}


# -- insurance: option, settled against the round-1 dealer second card only -------------


def test_nj_a27_insurance_settles_against_round_1_only() -> None:
    round_ = table(
        ["10S 9S", "10H 8H"],
        "AD",
        "KC 9C 6C",
        spots=[(2000, 1000, 0), (0, 1000, 1000)],
        insurance=True,
    )
    assert round_.phase is Phase.INSURANCE and round_.seats_to_decide() == [1]
    with pytest.raises(IllegalActionError, match="no spot 1 wager") as error:
        round_.take_insurance(2)
    assert error.value.rule == "NJ MAB (a); A-27"
    with pytest.raises(IllegalActionError, match="exceeds half"):
        round_.apply("1 insurance $10.01")
    assert round_.apply("1 insurance").command == "1 insurance"
    round_.stand(1)
    round_.stand(2)
    finished(round_)
    insurance = [s for s in round_.settlements if s.kind is WagerKind.INSURANCE]
    assert [(s.result, s.returned, s.dealer_round, s.spot) for s in insurance] == [
        (Result.WIN, 3000, 1, None)
    ]
    assert round_.player_net() == {"ann": 3000 - 1000 - 2000 - 1000, "bob": -1000 + 1000}


def test_nj_a27_insurance_off_by_default() -> None:
    round_ = table(["10S 9S"], "AD")
    assert round_.phase is Phase.PLAYING
    with pytest.raises(IllegalActionError, match="not open"):
        round_.apply("1 insurance")


def test_nj_a27_insurance_loses_when_round_1_is_not_a_blackjack() -> None:
    round_ = table(["10S 6S"], "AD", "9C 7C", insurance=True)
    round_.apply("1 insurance $2")
    round_.hit(1)  # 16 + 9 = 25 bust: round 1 is dealt for the insurance alone
    finished(round_)
    assert {k: hand.cards for k, hand in round_.dealer_hands.items()} == {1: cards("AD 7C")}
    assert round_.skipped_rounds == [2, 3]
    insurance = [s for s in round_.settlements if s.kind is WagerKind.INSURANCE]
    assert [(s.result, s.amount, s.returned, s.dealer_round) for s in insurance] == [
        (Result.LOSE, 200, 0, 1)
    ]
    assert round_.player_net() == {"ann": -3200}


# -- out of turn, card reader ------------------------------------------------------------------


def test_nj_f3_acting_out_of_turn_is_refused() -> None:
    round_ = table(["10S 6H", "10C 9C"], "7D")
    before = snapshot(round_)
    for action in (round_.hit, round_.stand, round_.split, round_.double_down):
        with pytest.raises(IllegalActionError, match="seat 1's turn") as error:
            action(2)
        assert error.value.rule == "NJ MAB (f)(3)"
    with pytest.raises(IllegalActionError, match="has no hand"):
        round_.stand(3)
    assert snapshot(round_) == before


def test_nj_f3_no_hit_on_21_and_no_decision_after_the_game() -> None:
    round_ = table(["10S 9H"], "9D", "10C 10D 10H")
    round_.stand(1)
    before = snapshot(round_)
    with pytest.raises(IllegalActionError, match="round is in complete"):
        round_.hit(1)
    assert snapshot(round_) == before


def test_nj_d1_card_reader_gives_the_same_log_as_the_shoe() -> None:
    shoe_round = table(["AS KH", "10S 9S"], "KD", "7C AD 9C")
    shoe_round.stand(2)
    reader = MultiActionRound(MultiActionRules())
    reader.place_wager(1, "ann", TEN)
    reader.place_wager(2, "bob", TEN)
    reader.close_wagering()
    feed = iter(cards(order(["AS KH", "10S 9S"], "KD", "7C AD 9C")))
    assert reader.card_request is not None and reader.card_request.describe() == "seat 1"
    while reader.card_request is not None:
        reader.deal_card(next(feed))
    before = snapshot(reader)
    with pytest.raises(IllegalActionError, match="No card is wanted"):
        reader.deal_card(Card.parse("2C"))
    assert snapshot(reader) == before
    reader.stand(2)
    requests = []
    while reader.card_request is not None:
        requests.append(reader.card_request.describe())
        reader.deal_card(next(feed))
    assert requests == ["dealer round 1", "dealer round 2", "dealer round 3"]
    assert reader.operations == shoe_round.operations
    assert reader.is_complete


def test_nj_b2_card_reader_refuses_a_fifth_copy_in_four_decks() -> None:
    reader = MultiActionRound(MultiActionRules())
    reader.place_wager(1, "ann", TEN)
    reader.close_wagering()
    for code in ("AS", "AS", "AS"):  # seat 1, the dealer's first card, seat 1
        reader.deal_card(code)
    reader.stand(1)
    reader.deal_card("AS")  # the fourth copy: round 1's second card, soft 12
    assert reader.card_request is not None
    before = snapshot(reader)
    with pytest.raises(IllegalActionError, match="4 deck") as error:
        reader.deal_card("AS")
    assert error.value.rule == "NJ MAB (b)(2)"
    assert snapshot(reader) == before
