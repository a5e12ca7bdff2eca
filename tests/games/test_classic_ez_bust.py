"""The EZ Bust Blackjack side wager on a Chapter 633a table (PA 633b.16), every clause, and the
readings A-20 to A-23 of ``referenced-rules.md`` §5."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tablejack.core import Card, ClassicRules, IllegalActionError, Result, Shoe, WagerKind
from tablejack.games.classic import ClassicRound, Phase

Table = Callable[..., ClassicRound]

WIN = "PA 633b.16(f)(1), (i)"
LOSE = "PA 633b.16(f)(2)"


def cards(text: str) -> list[Card]:
    return [Card.parse(code) for code in text.split()]


def results(round_: ClassicRound) -> list[tuple[int, str, int | None, Result, int]]:
    return [(s.seat, s.kind.value, s.hand, s.result, s.returned) for s in round_.settlements]


def ez(table: Table, *args: Any, **kwargs: Any) -> ClassicRound:
    return table(*args, ez_bust=True, **kwargs)


# -- (c) when the wager is offered --------------------------------------------------------------


@pytest.mark.parametrize("up", ["2S", "3S", "4S", "5S", "6S"])
def test_633b16_c_offered_after_the_dealers_two_cards_with_up_card_2_to_6(
    table: Table, up: str
) -> None:
    round_ = ez(table, ["10S 7H", "10D 8H"], up, "10C", "10H")
    assert round_.phase is Phase.EZ_BUST
    assert len(round_.dealer.cards) == 2
    assert round_.seats_to_decide() == [1, 2]
    assert round_.legal_actions(1) == ["ez-bust", "no-ez-bust"]
    assert round_.legal_actions(2) == ["ez-bust", "no-ez-bust"]
    assert not round_.can_stand(1)
    round_.place_ez_bust(2)
    assert round_.seats_to_decide() == [1]
    round_.decline_ez_bust(1)
    assert round_.phase is Phase.PLAYING
    assert [w.kind for w in round_.wagers] == [WagerKind.BLACKJACK] * 2 + [WagerKind.EZ_BUST]


@pytest.mark.parametrize("up", ["7S", "8S", "9S", "10S", "JS", "QS", "KS", "AS"])
def test_633b16_c_refused_with_up_card_7_to_ace(table: Table, state_of: Any, up: str) -> None:
    round_ = ez(table, ["10S 7H"], up, "8C", "10H")
    assert round_.phase in (Phase.PLAYING, Phase.INSURANCE)
    assert "ez-bust" not in round_.legal_actions(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="2, 3, 4, 5 or 6") as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(c)"
    assert state_of(round_) == before


def test_633b16_c_refused_before_the_dealers_two_cards(state_of: Any) -> None:
    round_ = ClassicRound(ClassicRules(ez_bust=True), Shoe.prearranged("10S 6D 7H 10C", decks=1))
    round_.place_wager(1, "ann", 1000)
    before = state_of(round_)
    with pytest.raises(IllegalActionError) as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(c)"
    assert state_of(round_) == before


def test_633b16_a_not_offered_unless_the_rules_say_so(table: Table, state_of: Any) -> None:
    round_ = table(["10S 7H"], "6S", "10C", "10H")
    assert round_.phase is Phase.PLAYING
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="not offered") as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(a)"
    assert state_of(round_) == before


def test_633b16_a_only_for_a_seat_with_a_blackjack_wager(table: Table, state_of: Any) -> None:
    round_ = ez(table, ["10S 7H"], "6S", "10C", "10H")
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="no Blackjack Wager") as caught:
        round_.place_ez_bust(2)
    assert caught.value.rule == "PA 633b.16(a)"
    assert state_of(round_) == before


def test_633b16_c_one_decision_per_seat_in_the_window(table: Table, state_of: Any) -> None:
    round_ = ez(table, ["10S 7H", "10D 8H"], "6S", "10C", "10H")
    round_.place_ez_bust(1)
    before = state_of(round_)
    for action in (round_.place_ez_bust, round_.decline_ez_bust):
        with pytest.raises(IllegalActionError, match="already decided") as caught:
            action(1)
        assert caught.value.rule == "PA 633b.16(c)"
    assert state_of(round_) == before


def test_633b16_c_dealer_closes_the_window(table: Table) -> None:
    round_ = ez(table, ["10S 7H", "10D 8H"], "6S", "10C", "10H")
    round_.place_ez_bust(1)
    operation = round_.close_ez_bust()
    assert operation.command == "dealer close-ez-bust"
    assert round_.phase is Phase.PLAYING
    assert len(round_.seats[1].ez_wager_ids) == 1
    assert round_.seats[2].ez_wager_ids == []
    with pytest.raises(IllegalActionError) as caught:
        round_.close_ez_bust()
    assert caught.value.rule == "PA 633b.16(c)"


def test_633b16_c_no_initial_wager_once_play_has_begun(table: Table, state_of: Any) -> None:
    round_ = ez(table, ["10S 2H", "10D 8H"], "6S", "10C", "3C 10H")
    round_.decline_ez_bust(1)
    round_.decline_ez_bust(2)
    assert "ez-bust" not in round_.legal_actions(1)
    round_.hit(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="split") as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(c)(2)"
    assert state_of(round_) == before


def test_633b16_c1_offered_to_a_player_blackjack(table: Table) -> None:
    round_ = ez(table, ["AH KS"], "6D", "10C", "10H")
    assert round_.can_place_ez_bust(1)
    round_.place_ez_bust(1)
    assert round_.is_complete
    assert round_.dealer.cards == cards("6D 10C 10H")
    assert results(round_) == [
        (1, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.BLACKJACK, 2500),
    ]


# -- (c)(2) one more with each split, (d) at most the initial wager ----------------------------


def test_633b16_c2_additional_wager_with_each_split_and_not_more(
    table: Table, state_of: Any
) -> None:
    round_ = ez(table, ["8S 8D"], "6D", "10C", "8H 10S 10H 10D 10C")
    round_.place_ez_bust(1)
    assert not round_.can_place_ez_bust(1)
    round_.split(1)
    assert round_.legal_actions(1) == ["ez-bust", "hit", "stand", "double", "split"]
    round_.place_ez_bust(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="only with each split") as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(c)(2)"
    assert state_of(round_) == before
    round_.split(1)
    round_.place_ez_bust(1, 500)
    assert not round_.can_place_ez_bust(1)
    for _ in range(3):
        round_.stand(1)
    assert round_.is_complete
    assert round_.dealer.is_bust
    assert [(s.kind, s.amount, s.returned) for s in round_.settlements] == [
        (WagerKind.EZ_BUST, 1000, 2000),
        (WagerKind.EZ_BUST, 1000, 2000),
        (WagerKind.EZ_BUST, 500, 1000),
        (WagerKind.BLACKJACK, 1000, 2000),
        (WagerKind.BLACKJACK, 1000, 2000),
        (WagerKind.BLACKJACK, 1000, 2000),
    ]


def test_633b16_c2_a_seat_that_declined_gets_one_wager_per_split(
    table: Table, state_of: Any
) -> None:
    round_ = ez(table, ["8S 8D"], "6D", "10C", "10S 10H 10D")
    round_.decline_ez_bust(1)
    assert not round_.can_place_ez_bust(1)
    round_.split(1)
    round_.place_ez_bust(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError) as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(c)(2)"
    assert state_of(round_) == before


def test_633b16_c2_additional_wager_only_in_turn(table: Table, state_of: Any) -> None:
    round_ = ez(table, ["8S 8D", "8C 8H"], "6D", "10C", "10S 10H 10D")
    round_.place_ez_bust(1)
    round_.place_ez_bust(2)
    round_.split(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="seat 1's turn") as caught:
        round_.place_ez_bust(2)
    assert caught.value.rule == "PA 633b.16(c)(2)"
    assert state_of(round_) == before


def test_633b16_h_no_additional_wager_once_a_split_hand_is_settled(
    table: Table, state_of: Any
) -> None:
    round_ = ez(table, ["8S 8D"], "6D", "10C", "5C 10S 10H 10D")
    round_.decline_ez_bust(1)
    round_.split(1)
    round_.hit(1)
    assert results(round_) == [(1, "blackjack", 0, Result.LOSE, 0)]
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="settled hand") as caught:
        round_.place_ez_bust(1)
    assert caught.value.rule == "PA 633b.16(h)"
    assert state_of(round_) == before


@pytest.mark.parametrize(("amount", "rule"), [(1100, "PA 633b.16(d)"), (550, "PA 633a.6")])
def test_633b16_d_at_most_the_initial_blackjack_wager(
    table: Table, state_of: Any, amount: int, rule: str
) -> None:
    round_ = ez(table, ["10S 7H"], "6D", "10C", "10H")
    before = state_of(round_)
    with pytest.raises(IllegalActionError) as caught:
        round_.place_ez_bust(1, amount)
    assert caught.value.rule == rule
    assert state_of(round_) == before
    assert round_.can_place_ez_bust(1, 1000)
    assert round_.can_place_ez_bust(1, 100)
    for bad in (0, -100):
        with pytest.raises(IllegalActionError) as caught:
            round_.place_ez_bust(1, bad)
        assert caught.value.rule == "PA 633b.16(d)"


def test_633b16_d_split_wager_also_at_most_the_initial_wager(table: Table) -> None:
    round_ = ez(table, ["8S 8D"], "6D", "10C", "3C 10H 10S 10D")
    round_.place_ez_bust(1)
    round_.split(1)
    round_.double_down(1)
    assert round_.seats[1].hands[0].amount == 2000
    assert not round_.can_place_ez_bust(1, 1100)


def test_633b16_d_less_than_the_wager_is_recorded(table: Table) -> None:
    round_ = ez(table, ["10S 7H"], "6D", "10C", "10H")
    operation = round_.place_ez_bust(1, 400)
    assert (operation.amount, operation.command) == (400, "1 ez-bust $4.00")
    round_.stand(1)
    assert results(round_)[0] == (1, "ez_bust", None, Result.WIN, 800)


# -- (f), (i) win and loss ------------------------------------------------------------------------


def test_633b16_f1_i_wins_1_to_1_when_the_dealer_busts_after_a_third_card(table: Table) -> None:
    round_ = ez(table, ["10S 7H"], "6D", "10C", "10H")
    round_.place_ez_bust(1)
    round_.stand(1)
    assert round_.dealer.cards == cards("6D 10C 10H")
    assert results(round_) == [
        (1, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.WIN, 2000),
    ]
    assert round_.settlements[0].clause == WIN


def test_633b16_f1_wins_when_the_dealer_busts_after_several_cards(table: Table) -> None:
    round_ = ez(table, ["10S 7H"], "2D", "3C", "4H 5H 10D")
    round_.place_ez_bust(1)
    round_.stand(1)
    assert len(round_.dealer.cards) == 5
    assert results(round_)[0] == (1, "ez_bust", None, Result.WIN, 2000)


@pytest.mark.parametrize(("hole", "draws", "total"), [("10C", "5H", 21), ("10C", "AH", 17)])
def test_633b16_f2_loses_when_the_dealer_ends_21_or_less(
    table: Table, hole: str, draws: str, total: int
) -> None:
    round_ = ez(table, ["10S 7H"], "6D", hole, draws)
    round_.place_ez_bust(1)
    round_.stand(1)
    assert round_.dealer.total == total
    assert results(round_)[0] == (1, "ez_bust", None, Result.LOSE, 0)
    assert round_.settlements[0].clause == LOSE


def test_633b16_f_a21_two_card_soft_17_loses(table: Table) -> None:
    round_ = ez(table, ["10S 8H"], "6D", "AC", "10H")
    round_.place_ez_bust(1)
    round_.stand(1)
    assert round_.dealer.cards == cards("6D AC")
    assert results(round_) == [
        (1, "ez_bust", None, Result.LOSE, 0),
        (1, "blackjack", 0, Result.WIN, 2000),
    ]
    assert "A-21" in round_.settlements[0].clause


# -- A-22 the dealer completes the hand while an EZ Bust wager is live ---------------------------


def test_633b16_a22_dealer_draws_for_ez_bust_when_every_player_busted(table: Table) -> None:
    round_ = ez(table, ["10S 6H", "10D 5H"], "5D", "10C", "10H 10S 9C")
    round_.place_ez_bust(1)
    round_.decline_ez_bust(2)
    round_.hit(1)
    round_.hit(2)
    assert round_.is_complete
    assert round_.dealer.cards == cards("5D 10C 9C")
    assert results(round_) == [
        (2, "blackjack", 0, Result.LOSE, 0),
        (1, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.LOSE, 0),
    ]


def test_633b16_a22_dealer_draws_for_ez_bust_when_every_player_has_blackjack(
    table: Table,
) -> None:
    round_ = ez(table, ["AH KS", "AD QS"], "4D", "10C", "3H")
    round_.place_ez_bust(1)
    round_.decline_ez_bust(2)
    assert round_.dealer.cards == cards("4D 10C 3H")
    assert results(round_) == [
        (2, "blackjack", 0, Result.BLACKJACK, 2500),
        (1, "ez_bust", None, Result.LOSE, 0),
        (1, "blackjack", 0, Result.BLACKJACK, 2500),
    ]


def test_633b16_a22_without_ez_bust_the_dealer_does_not_draw(table: Table) -> None:
    round_ = ez(table, ["10S 6H"], "5D", "10C", "10H 9C")
    round_.decline_ez_bust(1)
    round_.hit(1)
    assert round_.is_complete
    assert round_.dealer.cards == cards("5D 10C")


# -- (g) the push-all option ---------------------------------------------------------------------


def test_633b16_g_push_all_when_every_wager_ended_in_blackjack_or_bust(table: Table) -> None:
    round_ = ez(table, ["AH KS", "10D 5H"], "5D", "10C", "10H 9C", ez_bust_push_all=True)
    round_.place_ez_bust(1)
    round_.place_ez_bust(2, 500)
    round_.hit(2)
    assert round_.is_complete
    assert round_.ez_push_all
    assert round_.dealer.cards == cards("5D 10C")
    assert results(round_) == [
        (1, "ez_bust", None, Result.PUSH, 1000),
        (2, "ez_bust", None, Result.PUSH, 500),
        (1, "blackjack", 0, Result.BLACKJACK, 2500),
        (2, "blackjack", 0, Result.LOSE, 0),
    ]
    assert [s.clause for s in round_.settlements[:2]] == ["PA 633b.16(g)"] * 2


def test_633b16_g_push_all_also_against_a_two_card_soft_17(table: Table) -> None:
    round_ = ez(table, ["10D 5H"], "6D", "AC", "10H", ez_bust_push_all=True)
    round_.place_ez_bust(1)
    round_.hit(1)
    assert round_.is_complete
    assert results(round_) == [
        (1, "ez_bust", None, Result.PUSH, 1000),
        (1, "blackjack", 0, Result.LOSE, 0),
    ]
    assert round_.settlements[0].clause == "PA 633b.16(g)"


def test_633b16_g_no_push_all_when_a_hand_stands(table: Table) -> None:
    round_ = ez(table, ["AH KS", "10D 8H"], "5D", "10C", "10H", ez_bust_push_all=True)
    round_.place_ez_bust(1)
    round_.decline_ez_bust(2)
    round_.stand(2)
    assert not round_.ez_push_all
    assert results(round_)[:2] == [
        (1, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.BLACKJACK, 2500),
    ]


def test_633b16_g_no_push_all_after_a_surrender(table: Table) -> None:
    round_ = ez(table, ["10D 6H"], "5D", "10C", "10H", ez_bust_push_all=True)
    round_.place_ez_bust(1)
    round_.surrender(1)
    assert not round_.ez_push_all
    assert results(round_) == [
        (1, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.SURRENDER, 500),
    ]


def test_633b16_g_without_the_option_ez_bust_is_played_out(table: Table) -> None:
    round_ = ez(table, ["AH KS"], "5D", "10C", "10H")
    round_.place_ez_bust(1)
    assert not round_.ez_push_all
    assert results(round_)[0] == (1, "ez_bust", None, Result.WIN, 2000)


# -- (h) EZ Bust settles before the Blackjack Wagers ---------------------------------------------


def test_633b16_h_settles_before_blackjack_wager(table: Table) -> None:
    round_ = ez(table, ["AH KS", "10D 6H", "10C 8C"], "6D", "10S", "9H 10H")
    round_.place_ez_bust(1)
    round_.place_ez_bust(2)
    round_.place_ez_bust(3)
    assert round_.settlements == []
    round_.hit(2)
    assert round_.settlements == []
    round_.stand(3)
    assert round_.dealer.cards == cards("6D 10S 10H")
    assert results(round_) == [
        (1, "ez_bust", None, Result.WIN, 2000),
        (2, "ez_bust", None, Result.WIN, 2000),
        (3, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.BLACKJACK, 2500),
        (2, "blackjack", 0, Result.LOSE, 0),
        (3, "blackjack", 0, Result.WIN, 2000),
    ]
    settles = [op.settlement for op in round_.operations if op.kind == "settle"]
    assert settles == round_.settlements


# -- A-23 EZ Bust stays live after a surrender or a bust -----------------------------------------


def test_633b16_a23_ez_bust_stays_live_after_surrender(table: Table) -> None:
    round_ = ez(table, ["10D 6H"], "6D", "10C", "10H")
    round_.place_ez_bust(1)
    round_.surrender(1)
    assert round_.is_complete
    assert round_.dealer.cards == cards("6D 10C 10H")
    assert results(round_) == [
        (1, "ez_bust", None, Result.WIN, 2000),
        (1, "blackjack", 0, Result.SURRENDER, 500),
    ]


def test_633b16_a23_ez_bust_stays_live_after_bust(table: Table) -> None:
    round_ = ez(table, ["10D 6H"], "6D", "10C", "10H 5C")
    round_.place_ez_bust(1)
    round_.hit(1)
    assert round_.dealer.cards == cards("6D 10C 5C")
    assert results(round_) == [
        (1, "ez_bust", None, Result.LOSE, 0),
        (1, "blackjack", 0, Result.LOSE, 0),
    ]
    assert round_.player_net() == {"ann": -2000}
