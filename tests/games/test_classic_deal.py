"""Chapter 633a round, deal to settlement: deal order (§ 633a.7), insurance and even money
(§ 633a.8), the card reader peek (§ 633a.1, § 633a.2), dealer Blackjack, the 3 to 2 payout and
its rounding (§ 633a.13), and the dealer's drawing rules (§ 633a.7, S17)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

from tablejack.core import (
    Card,
    ClassicRules,
    IllegalActionError,
    Result,
    RoundingPolicy,
    Shoe,
    WagerKind,
)
from tablejack.games.classic import ClassicRound, Phase

Table = Callable[..., ClassicRound]


def cards(text: str) -> list[Card]:
    return [Card.parse(code) for code in text.split()]


def results(round_: ClassicRound) -> list[tuple[int, str, int | None, Result, int]]:
    return [(s.seat, s.kind.value, s.hand, s.result, s.returned) for s in round_.settlements]


# -- § 633a.7 deal order ------------------------------------------------------------------------


def test_633a7_deal_order_seat_1_first_up_card_second_cards_hole_card() -> None:
    round_ = ClassicRound(ClassicRules(decks=1), Shoe.prearranged("2S 3S 4S 5S 6S 7S 8S", decks=1))
    round_.place_wager(3, "cat", 1000)
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    dealt = [(op.target, op.card) for op in round_.operations if op.kind == "card"]
    assert dealt == list(
        zip(
            ["seat 1", "seat 3", "dealer up card", "seat 1", "seat 3", "dealer hole card"],
            cards("2S 3S 4S 5S 6S 7S"),
            strict=True,
        )
    )
    assert round_.seats[1].hands[0].hand.cards == cards("2S 5S")
    assert round_.seats[3].hands[0].hand.cards == cards("3S 6S")
    assert round_.up_card == Card.parse("4S")
    assert round_.hole_card == Card.parse("7S")
    assert list(round_.seats) == [1, 3]
    assert round_.phase is Phase.PLAYING
    assert round_.current_seat == 1
    assert round_.legal_actions(3) == []


def test_633a7_seats_play_in_order_from_the_dealers_left(table: Table) -> None:
    round_ = table(["10S 7H", "10D 8C"], "9D", "10C")
    with pytest.raises(IllegalActionError, match="seat 1's turn") as caught:
        round_.stand(2)
    assert caught.value.rule == "PA 633a.7"
    round_.stand(1)
    assert round_.current_seat == 2
    round_.stand(2)
    assert round_.is_complete
    assert results(round_) == [
        (1, "blackjack", 0, Result.LOSE, 0),
        (2, "blackjack", 0, Result.LOSE, 0),
    ]


def test_633a6_wagers_only_before_the_deal(table: Table) -> None:
    round_ = table(["10S 7H"], "9D", "9C")
    with pytest.raises(IllegalActionError) as caught:
        round_.place_wager(2, "bob", 1000)
    assert caught.value.rule == "PA 633a.6"


def test_633a7_no_deal_without_a_wager() -> None:
    round_ = ClassicRound(ClassicRules(), Shoe.prearranged("2S 3S 4S", decks=1))
    with pytest.raises(IllegalActionError, match="nothing to deal") as caught:
        round_.close_wagering()
    assert caught.value.rule == "PA 633a.7"
    assert round_.phase is Phase.WAGERING
    assert round_.operations == []


# -- § 633a.8 insurance and even money ----------------------------------------------------------


def test_633a8_insurance_pays_2_to_1_on_dealer_blackjack(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "KD", "5C")
    assert round_.phase is Phase.INSURANCE
    assert round_.legal_actions(1) == ["insurance", "no-insurance"]
    round_.take_insurance(1)
    assert round_.is_complete
    assert results(round_) == [
        (1, "insurance", None, Result.WIN, 1500),
        (1, "blackjack", 0, Result.LOSE, 0),
    ]
    assert round_.settlements[0].clause == "PA 633a.8"
    assert round_.wagers[1].amount == 500
    assert round_.player_net() == {"ann": 0}
    assert round_.house_net() == 0
    assert round_.shoe is not None and round_.shoe.remaining == 1


def test_633a8_insurance_loses_without_dealer_blackjack(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "9D")
    round_.take_insurance(1)
    assert round_.phase is Phase.PLAYING
    assert results(round_) == [(1, "insurance", None, Result.LOSE, 0)]
    round_.stand(1)
    assert results(round_)[1:] == [(1, "blackjack", 0, Result.LOSE, 0)]
    assert round_.player_net() == {"ann": -1500}


def test_633a8_insurance_without_peek_settles_when_the_hole_card_is_turned(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "KD", hole_card_peek=False)
    round_.take_insurance(1)
    assert round_.phase is Phase.PLAYING
    assert round_.settlements == []
    round_.stand(1)
    assert results(round_) == [
        (1, "insurance", None, Result.WIN, 1500),
        (1, "blackjack", 0, Result.LOSE, 0),
    ]
    assert round_.player_net() == {"ann": 0}


def test_633a8_insurance_at_most_half_the_wager(table: Table, state_of: Any) -> None:
    round_ = table(["10S 9H"], "AS", "9D", wagers=[1500])
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match=r"exceeds half.*\$7\.50") as caught:
        round_.take_insurance(1, 751)
    assert caught.value.rule == "PA 633a.8"
    assert state_of(round_) == before
    assert not round_.can_take_insurance(1, 751)
    assert round_.can_take_insurance(1, 750)
    operation = round_.take_insurance(1, 300)
    assert operation.command == "1 insurance $3.00"
    assert round_.wagers[-1].amount == 300


def test_633a8_default_insurance_is_half_the_wager(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "KD", wagers=[1500])
    operation = round_.take_insurance(1)
    assert operation.amount == 750
    assert operation.command == "1 insurance"
    assert round_.settlements[0].returned == 750 * 3


def test_633a8_no_insurance_of_less_than_a_cent(table: Table, state_of: Any) -> None:
    round_ = table(["10S 9H"], "AS", "9D", wagers=[1], betting_unit=1, table_minimum=1)
    assert round_.legal_actions(1) == ["no-insurance"]
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="nothing to insure") as caught:
        round_.take_insurance(1)
    assert caught.value.rule == "PA 633a.8"
    assert state_of(round_) == before


def test_633a8_close_insurance_declines_for_undecided_seats(table: Table) -> None:
    round_ = table(["10S 9H", "10D 8H"], "AS", "KD")
    round_.take_insurance(2)
    assert round_.phase is Phase.INSURANCE
    assert round_.seats_to_decide() == [1]
    round_.close_insurance()
    assert results(round_) == [
        (2, "insurance", None, Result.WIN, 1500),
        (1, "blackjack", 0, Result.LOSE, 0),
        (2, "blackjack", 0, Result.LOSE, 0),
    ]


def test_633a8_e_even_money_with_dealer_blackjack(table: Table) -> None:
    round_ = table(["AH KS"], "AS", "QD")
    assert round_.legal_actions(1) == ["insurance", "no-insurance", "even-money"]
    round_.take_even_money(1)
    assert round_.is_complete
    assert results(round_) == [(1, "blackjack", 0, Result.EVEN_MONEY, 2000)]
    assert round_.settlements[0].clause == "PA 633a.8(e)"
    assert round_.dealer_blackjack is True
    assert round_.player_net() == {"ann": 1000}


def test_633a8_e_even_money_without_dealer_blackjack(table: Table) -> None:
    round_ = table(["AH KS"], "AS", "9D", "5C")
    round_.take_even_money(1)
    assert round_.is_complete
    assert results(round_) == [(1, "blackjack", 0, Result.EVEN_MONEY, 2000)]
    assert round_.dealer_blackjack is False
    assert len(round_.dealer.cards) == 2


def test_633a8_declined_even_money_pushes_against_dealer_blackjack(table: Table) -> None:
    round_ = table(["AH KS"], "AS", "QD")
    round_.decline_insurance(1)
    assert results(round_) == [(1, "blackjack", 0, Result.PUSH, 1000)]


def test_633a8_declined_even_money_paid_3_to_2_without_dealer_blackjack(table: Table) -> None:
    round_ = table(["AH KS"], "AS", "9D")
    round_.decline_insurance(1)
    assert round_.is_complete
    assert results(round_) == [(1, "blackjack", 0, Result.BLACKJACK, 2500)]


def test_633a8_insured_blackjack_equals_even_money(table: Table) -> None:
    round_ = table(["AH KS"], "AS", "QD")
    round_.take_insurance(1)
    assert results(round_) == [
        (1, "insurance", None, Result.WIN, 1500),
        (1, "blackjack", 0, Result.PUSH, 1000),
    ]
    assert round_.player_net() == {"ann": 1000}


def test_633a8_e_even_money_only_for_a_blackjack(table: Table, state_of: Any) -> None:
    round_ = table(["10S 9H"], "AS", "9D")
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="only to a player Blackjack") as caught:
        round_.take_even_money(1)
    assert caught.value.rule == "PA 633a.8(e)"
    assert state_of(round_) == before


def test_633a8_e_even_money_not_offered_when_the_rules_say_so(table: Table) -> None:
    round_ = table(["AH KS"], "AS", "9D", even_money=False)
    assert round_.legal_actions(1) == ["insurance", "no-insurance"]
    with pytest.raises(IllegalActionError, match="not offered") as caught:
        round_.take_even_money(1)
    assert caught.value.rule == "PA 633a.8(e)"


def test_633a8_no_insurance_window_when_not_offered(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "9D", insurance=False, even_money=False)
    assert round_.phase is Phase.PLAYING
    assert [op.kind for op in round_.operations].count("peek") == 1


@pytest.mark.parametrize("up", ["2S", "6S", "9S", "10S", "KS"])
def test_633a8_insurance_only_against_an_up_ace(table: Table, up: str) -> None:
    round_ = table(["10S 9H"], up, "7D", "10C")
    assert round_.phase is Phase.PLAYING
    with pytest.raises(IllegalActionError) as caught:
        round_.take_insurance(1)
    assert caught.value.rule == "PA 633a.8"


# -- the peek (§ 633a.1 card reader device, § 633a.2) and dealer Blackjack ---------------------


@pytest.mark.parametrize("up", ["10D", "JD", "QD", "KD"])
def test_633a2_peek_on_ten_value_up_card_finds_blackjack_and_ends_round(
    table: Table, up: str
) -> None:
    round_ = table(["10S 9H", "AH KS", "8S 8D"], up, "AS", "5C 5D")
    assert round_.is_complete
    assert [op.note for op in round_.operations if op.kind == "peek"] == ["Blackjack"]
    assert results(round_) == [
        (1, "blackjack", 0, Result.LOSE, 0),
        (2, "blackjack", 0, Result.PUSH, 1000),
        (3, "blackjack", 0, Result.LOSE, 0),
    ]
    assert len(round_.dealer.cards) == 2
    assert round_.shoe is not None and round_.shoe.remaining == 2
    assert not any(op.command for op in round_.operations)


def test_633a2_peek_on_ten_value_up_card_without_blackjack_continues(table: Table) -> None:
    round_ = table(["10S 9H"], "KD", "9C")
    assert [op.note for op in round_.operations if op.kind == "peek"] == ["no Blackjack"]
    assert round_.phase is Phase.PLAYING
    assert round_.dealer_blackjack is False


def test_633a2_peek_on_ace_up_card_after_insurance(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "KD")
    assert not any(op.kind == "peek" for op in round_.operations)
    round_.decline_insurance(1)
    kinds = [op.kind for op in round_.operations]
    assert kinds.index("no-insurance") < kinds.index("peek")
    assert results(round_) == [(1, "blackjack", 0, Result.LOSE, 0)]


@pytest.mark.parametrize("up", ["2S", "5S", "7S", "9S"])
def test_633a2_no_peek_on_other_up_cards(table: Table, up: str) -> None:
    round_ = table(["10S 9H"], up, "AD", "10C")
    assert not any(op.kind == "peek" for op in round_.operations)
    assert round_.dealer_blackjack is False


def test_633a7_dealer_blackjack_without_peek_found_at_the_dealers_turn(table: Table) -> None:
    round_ = table(["10S 9H"], "KD", "AS", hole_card_peek=False)
    assert round_.phase is Phase.PLAYING
    assert not any(op.kind == "peek" for op in round_.operations)
    round_.stand(1)
    assert round_.dealer_blackjack is True
    assert results(round_) == [(1, "blackjack", 0, Result.LOSE, 0)]


def test_633a7_player_blackjack_pushes_dealer_blackjack_without_peek(table: Table) -> None:
    round_ = table(["AH KS", "10S 9H"], "KD", "AS", hole_card_peek=False)
    assert round_.current_seat == 2
    round_.stand(2)
    assert results(round_) == [
        (1, "blackjack", 0, Result.PUSH, 1000),
        (2, "blackjack", 0, Result.LOSE, 0),
    ]


# -- § 633a.13 payouts --------------------------------------------------------------------------


def test_633a13_player_blackjack_paid_3_to_2_at_once(table: Table) -> None:
    round_ = table(["AH KS", "10S 6H"], "9D", "8C", "10C")
    assert results(round_) == [(1, "blackjack", 0, Result.BLACKJACK, 2500)]
    assert round_.settlements[0].clause == "PA 633a.13"
    assert round_.current_seat == 2
    round_.stand(2)
    assert results(round_)[1] == (2, "blackjack", 0, Result.LOSE, 0)


def test_633a13_blackjack_beats_a_dealer_multi_card_21(table: Table) -> None:
    round_ = table(["AH KS", "10S 6H"], "9D", "5C", "7C")
    round_.stand(2)
    assert round_.dealer.total == 21
    assert results(round_) == [
        (1, "blackjack", 0, Result.BLACKJACK, 2500),
        (2, "blackjack", 0, Result.LOSE, 0),
    ]


@pytest.mark.parametrize(
    ("policy", "returned", "rounding"),
    [
        (RoundingPolicy.DOWN, 1001 + 1501, Fraction(1, 2)),
        (RoundingPolicy.HALF_UP, 1001 + 1502, Fraction(-1, 2)),
        (RoundingPolicy.UP, 1001 + 1502, Fraction(-1, 2)),
    ],
)
def test_633a13_blackjack_3_to_2_on_odd_cents_rounded_by_policy(
    table: Table, policy: RoundingPolicy, returned: int, rounding: Fraction
) -> None:
    round_ = table(
        ["AH KS"],
        "9D",
        "8C",
        wagers=[1001],
        rounding=policy,
        betting_unit=1,
        table_minimum=100,
    )
    assert round_.is_complete
    (settlement,) = round_.settlements
    assert settlement.result is Result.BLACKJACK
    assert settlement.returned == returned
    assert settlement.rounding == rounding
    assert round_.house_net() == 1001 - returned


def test_633a13_blackjack_6_to_5_when_configured(table: Table) -> None:
    round_ = table(["AH KS"], "9D", "8C", blackjack_pays=Fraction(6, 5))
    assert results(round_) == [(1, "blackjack", 0, Result.BLACKJACK, 2200)]


def test_633a13_win_pays_1_to_1_and_equal_totals_push(table: Table) -> None:
    round_ = table(["10S 9H", "10D 8H", "10C 7H"], "10H", "8C")
    for seat in (1, 2, 3):
        round_.stand(seat)
    assert results(round_) == [
        (1, "blackjack", 0, Result.WIN, 2000),
        (2, "blackjack", 0, Result.PUSH, 1000),
        (3, "blackjack", 0, Result.LOSE, 0),
    ]
    assert [s.clause for s in round_.settlements] == ["PA 633a.13", "PA 633a.7", "PA 633a.7"]


def test_633a7_player_bust_loses_even_if_dealer_busts(table: Table) -> None:
    round_ = table(["10S 6H", "10D 8H"], "6D", "10C", "KS 9C")
    round_.hit(1)
    assert results(round_) == [(1, "blackjack", 0, Result.LOSE, 0)]
    round_.stand(2)
    assert round_.dealer.is_bust
    assert results(round_)[1] == (2, "blackjack", 0, Result.WIN, 2000)


# -- § 633a.7 the dealer's hand: draw to 17, stand on all 17s ---------------------------------


def _dealer_after_stand(table: Table, up: str, hole: str, rest: str) -> ClassicRound:
    round_ = table(["10S 8H"], up, hole, rest)
    round_.stand(1)
    assert round_.is_complete
    return round_


def test_633a7_dealer_stands_on_soft_17(table: Table) -> None:
    round_ = _dealer_after_stand(table, "6D", "AC", "10C")
    assert round_.dealer.cards == cards("6D AC")
    assert round_.dealer.is_soft
    assert round_.shoe is not None and round_.shoe.remaining == 1
    assert results(round_) == [(1, "blackjack", 0, Result.WIN, 2000)]


def test_633a7_dealer_stands_on_soft_17_after_drawing(table: Table) -> None:
    round_ = _dealer_after_stand(table, "2D", "4C", "AD 10C")
    assert round_.dealer.cards == cards("2D 4C AD")
    assert (round_.dealer.total, round_.dealer.is_soft) == (17, True)


def test_633a7_dealer_stands_on_hard_17(table: Table) -> None:
    round_ = _dealer_after_stand(table, "10D", "7C", "4C")
    assert round_.dealer.cards == cards("10D 7C")


def test_633a7_dealer_draws_to_17(table: Table) -> None:
    round_ = _dealer_after_stand(table, "10D", "2C", "3C 2H 9S")
    assert round_.dealer.cards == cards("10D 2C 3C 2H")
    assert round_.dealer.total == 17
    assert [op.target for op in round_.operations if op.kind == "card"][-2:] == ["dealer"] * 2
    assert results(round_) == [(1, "blackjack", 0, Result.WIN, 2000)]


def test_633a7_dealer_draws_on_soft_16_and_counts_the_ace_as_one(table: Table) -> None:
    round_ = _dealer_after_stand(table, "5D", "AC", "10C 5H 9S")
    assert round_.dealer.cards == cards("5D AC 10C 5H")
    assert (round_.dealer.total, round_.dealer.is_soft) == (21, False)
    assert results(round_) == [(1, "blackjack", 0, Result.LOSE, 0)]


def test_633a7_dealer_busts(table: Table) -> None:
    round_ = _dealer_after_stand(table, "6D", "10C", "9C")
    assert round_.dealer.is_bust
    assert results(round_) == [(1, "blackjack", 0, Result.WIN, 2000)]


def test_633a7_dealer_does_not_draw_when_no_hand_needs_it(table: Table) -> None:
    round_ = table(["10S 6H", "AC KD"], "6D", "10C", "KS 9C")
    round_.hit(1)
    assert round_.is_complete
    assert round_.dealer.cards == cards("6D 10C")
    assert round_.shoe is not None and round_.shoe.remaining == 1
    assert results(round_) == [
        (1, "blackjack", 0, Result.LOSE, 0),
        (2, "blackjack", 0, Result.BLACKJACK, 2500),
    ]


def test_settlement_kinds_and_house_net(table: Table) -> None:
    round_ = table(["10S 9H"], "AS", "KD")
    round_.take_insurance(1)
    assert [s.kind for s in round_.settlements] == [WagerKind.INSURANCE, WagerKind.BLACKJACK]
    assert round_.house_net() == -sum(round_.player_net().values())
