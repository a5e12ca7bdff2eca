"""Chapter 633a player decisions: late surrender (§ 633a.9), double down (§ 633a.10) and splitting
pairs (§ 633a.11), including a dealer Blackjack found after a split or a double when the dealer
does not peek (§ 633a.10(b), § 633a.11(d))."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

from tablejack.core import Card, IllegalActionError, Result, RoundingPolicy
from tablejack.games.classic import ClassicRound, Phase

Table = Callable[..., ClassicRound]


def cards(text: str) -> list[Card]:
    return [Card.parse(code) for code in text.split()]


def results(round_: ClassicRound) -> list[tuple[int, int | None, Result, int, str]]:
    return [(s.seat, s.hand, s.result, s.returned, s.clause) for s in round_.settlements]


def hand_cards(round_: ClassicRound, seat: int = 1) -> list[tuple[int, list[Card]]]:
    return [(hand.index, hand.hand.cards) for hand in round_.seats[seat].hands]


# -- § 633a.9 late surrender --------------------------------------------------------------------


def test_633a9_late_surrender_returns_half_the_wager(table: Table) -> None:
    round_ = table(["10S 6H"], "10D", "7C", "5C")
    assert round_.legal_actions(1) == ["hit", "stand", "double", "surrender"]
    round_.surrender(1)
    assert round_.is_complete
    assert results(round_) == [(1, 0, Result.SURRENDER, 500, "PA 633a.9")]
    assert round_.player_net() == {"ann": -500}
    assert round_.dealer.cards == cards("10D 7C")


def test_633a9_surrender_after_the_peek_on_an_ace(table: Table) -> None:
    round_ = table(["10S 6H"], "AD", "7C")
    round_.decline_insurance(1)
    round_.surrender(1)
    assert results(round_) == [(1, 0, Result.SURRENDER, 500, "PA 633a.9")]


@pytest.mark.parametrize(
    ("policy", "returned", "rounding"),
    [
        (RoundingPolicy.DOWN, 500, Fraction(1, 2)),
        (RoundingPolicy.HALF_UP, 501, Fraction(-1, 2)),
        (RoundingPolicy.UP, 501, Fraction(-1, 2)),
    ],
)
def test_633a9_surrender_of_odd_cents_rounded_by_policy(
    table: Table, policy: RoundingPolicy, returned: int, rounding: Fraction
) -> None:
    round_ = table(
        ["10S 6H"], "10D", "7C", wagers=[1001], rounding=policy, betting_unit=1, table_minimum=100
    )
    round_.surrender(1)
    (settlement,) = round_.settlements
    assert (settlement.returned, settlement.rounding) == (returned, rounding)


def test_633a9_surrender_only_on_the_first_two_cards(table: Table, state_of: Any) -> None:
    round_ = table(["10S 2H"], "10D", "7C", "3C 8D")
    round_.hit(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="first two cards") as caught:
        round_.surrender(1)
    assert caught.value.rule == "PA 633a.9"
    assert state_of(round_) == before
    assert "surrender" not in round_.legal_actions(1)


def test_633a9_no_surrender_after_a_split(table: Table, state_of: Any) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "2C 10C 10H")
    round_.split(1)
    before = state_of(round_)
    assert hand_cards(round_) == [(0, cards("8S 2C")), (1, cards("8D"))]
    with pytest.raises(IllegalActionError, match="not after a split") as caught:
        round_.surrender(1)
    assert caught.value.rule == "PA 633a.9"
    assert state_of(round_) == before


def test_633a9_surrender_without_peek_loses_all_to_a_dealer_blackjack(table: Table) -> None:
    round_ = table(["10S 6H"], "KD", "AS", hole_card_peek=False)
    round_.surrender(1)
    assert round_.dealer_blackjack is True
    assert results(round_) == [(1, 0, Result.LOSE, 0, "PA 633a.9")]


def test_633a9_no_surrender_when_not_offered(table: Table) -> None:
    round_ = table(["10S 6H"], "10D", "7C", late_surrender=False)
    assert "surrender" not in round_.legal_actions(1)
    with pytest.raises(IllegalActionError, match="not offered") as caught:
        round_.surrender(1)
    assert caught.value.rule == "PA 633a.9"


# -- § 633a.10 double down ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "draw", "returned"),
    [("AS 7D", "3C", 4000), ("10S 2D", "9C", 4000), ("9S 7D", "10C", 0), ("5S 4D", "2C", 0)],
)
def test_633a10_double_on_any_two_cards_by_default(
    table: Table, hand: str, draw: str, returned: int
) -> None:
    round_ = table([hand], "10D", "9C", draw)
    assert round_.can_double_down(1)
    operation = round_.double_down(1)
    assert (operation.amount, operation.command) == (1000, "1 double")
    assert round_.is_complete
    assert len(round_.seats[1].hands[0].hand) == 3
    assert round_.wagers[0].amount == 2000
    (settlement,) = round_.settlements
    assert (settlement.amount, settlement.returned) == (2000, returned)


@pytest.mark.parametrize(
    ("totals", "hand", "allowed"),
    [
        ("10-11", "5S 4D", False),
        ("10-11", "6S 4D", True),
        ("10-11", "6S 5D", True),
        ("10-11", "AS 9D", False),
        ("10-11", "10S 2D", False),
        ("9-11", "5S 3D", False),
        ("9-11", "5S 4D", True),
        ("9-11", "6S 5D", True),
        ("9-11", "6S 6D", False),
    ],
)
def test_633a10_double_totals_option(
    table: Table, state_of: Any, totals: str, hand: str, allowed: bool
) -> None:
    round_ = table([hand], "10D", "9C", "2C", double_down_totals=totals)
    assert round_.can_double_down(1) is allowed
    assert ("double" in round_.legal_actions(1)) is allowed
    if not allowed:
        before = state_of(round_)
        with pytest.raises(IllegalActionError, match=f"total of {totals}") as caught:
            round_.double_down(1)
        assert caught.value.rule == "PA 633a.10"
        assert state_of(round_) == before


def test_633a10_double_for_less(table: Table) -> None:
    round_ = table(["6S 5D"], "10D", "7C", "10C")
    operation = round_.double_down(1, 500)
    assert operation.command == "1 double $5.00"
    assert round_.wagers[0].amount == 1500
    assert results(round_) == [(1, 0, Result.WIN, 3000, "PA 633a.13")]


def test_633a10_double_for_less_refused_when_not_allowed(table: Table, state_of: Any) -> None:
    round_ = table(["6S 5D"], "10D", "7C", "10C", double_for_less=False)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="equal to the wager") as caught:
        round_.double_down(1, 500)
    assert caught.value.rule == "PA 633a.10"
    assert state_of(round_) == before
    round_.double_down(1, 1000)
    assert round_.wagers[0].amount == 2000


@pytest.mark.parametrize(
    ("amount", "rule"),
    [(1100, "PA 633a.10"), (0, "PA 633a.10"), (-100, "PA 633a.10"), (550, "PA 633a.6")],
)
def test_633a10_double_amount_limits(table: Table, state_of: Any, amount: int, rule: str) -> None:
    round_ = table(["6S 5D"], "10D", "7C", "10C")
    before = state_of(round_)
    with pytest.raises(IllegalActionError) as caught:
        round_.double_down(1, amount)
    assert caught.value.rule == rule
    assert state_of(round_) == before


def test_633a10_double_takes_exactly_one_card(table: Table) -> None:
    round_ = table(["6S 2D", "10S 8D"], "10D", "7C", "2C 5H")
    round_.double_down(1)
    assert hand_cards(round_) == [(0, cards("6S 2D 2C"))]
    assert round_.current_seat == 2
    assert round_.legal_actions(1) == []
    assert not round_.can_hit(1)
    round_.stand(2)
    assert round_.dealer.cards == cards("10D 7C")
    assert results(round_) == [
        (1, 0, Result.LOSE, 0, "PA 633a.7"),
        (2, 0, Result.WIN, 2000, "PA 633a.13"),
    ]


def test_633a10_no_double_on_three_cards(table: Table, state_of: Any) -> None:
    round_ = table(["5S 2D"], "10D", "7C", "3C 10H")
    round_.hit(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="first two cards") as caught:
        round_.double_down(1)
    assert caught.value.rule == "PA 633a.10"
    assert state_of(round_) == before


def test_633a10_b_dealer_blackjack_after_a_double_collects_only_the_original_wager(
    table: Table,
) -> None:
    round_ = table(["6S 5D"], "KD", "AS", "9C", hole_card_peek=False)
    round_.double_down(1)
    assert round_.dealer_blackjack is True
    assert results(round_) == [(1, 0, Result.LOSE, 1000, "PA 633a.10(b)")]
    assert round_.settlements[0].amount == 2000
    assert round_.player_net() == {"ann": -1000}


def test_633a10_b_dealer_blackjack_after_a_double_for_less(table: Table) -> None:
    round_ = table(["6S 5D"], "KD", "AS", "9C", hole_card_peek=False)
    round_.double_down(1, 300)
    assert results(round_) == [(1, 0, Result.LOSE, 300, "PA 633a.10(b)")]
    assert round_.player_net() == {"ann": -1000}


def test_633a10_busted_double_loses_all_against_dealer_blackjack(table: Table) -> None:
    round_ = table(["10S 2D"], "KD", "AS", "KC", hole_card_peek=False)
    round_.double_down(1)
    assert round_.player_net() == {"ann": -2000}
    assert results(round_) == [(1, 0, Result.LOSE, 0, "PA 633a.7")]


# -- § 633a.11 splitting pairs ------------------------------------------------------------------


def test_633a11_b_split_hand_on_the_dealers_left_completed_first(table: Table) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "3C 10H 9C")
    operation = round_.split(1)
    assert (operation.amount, operation.command, operation.note) == (1000, "1 split", "new hand 1")
    assert hand_cards(round_) == [(0, cards("8S 3C")), (1, cards("8D"))]
    round_.double_down(1)
    assert hand_cards(round_) == [(0, cards("8S 3C 10H")), (1, cards("8D 9C"))]
    round_.stand(1)
    assert round_.is_complete
    assert [(w.hand, w.amount) for w in round_.wagers] == [(0, 2000), (1, 1000)]
    assert results(round_) == [
        (1, 0, Result.WIN, 4000, "PA 633a.13"),
        (1, 1, Result.PUSH, 1000, "PA 633a.7"),
    ]
    targets = [op.target for op in round_.operations if op.kind == "card"]
    assert targets[-3:] == ["seat 1", "seat 1", "seat 1 hand 2"]


def test_633a11_a_ten_value_cards_of_different_rank_may_split(table: Table) -> None:
    round_ = table(["KS 10D"], "9D", "8C", "9C 10H")
    assert round_.can_split(1)
    round_.split(1)
    round_.stand(1)
    round_.stand(1)
    assert hand_cards(round_) == [(0, cards("KS 9C")), (1, cards("10D 10H"))]
    assert [r[2] for r in results(round_)] == [Result.WIN, Result.WIN]


@pytest.mark.parametrize("hand", ["9S 10D", "AS 9D", "2S 3D", "QS 9S"])
def test_633a11_a_split_of_unequal_values_refused(table: Table, state_of: Any, hand: str) -> None:
    round_ = table([hand], "9D", "8C", "9C")
    assert round_.current_seat == 1
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="identical value") as caught:
        round_.split(1)
    assert caught.value.rule == "PA 633a.11(a)"
    assert state_of(round_) == before


def test_633a11_c_resplit_up_to_max_split_hands(table: Table, state_of: Any) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "8H 8C 10S 10H", max_split_hands=3)
    round_.split(1)
    assert hand_cards(round_) == [(0, cards("8S 8H")), (1, cards("8D"))]
    round_.split(1)
    assert hand_cards(round_) == [(0, cards("8S 8C")), (2, cards("8H")), (1, cards("8D"))]
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="at most 3 hands") as caught:
        round_.split(1)
    assert caught.value.rule == "PA 633a.11(c)"
    assert state_of(round_) == before
    assert "split" not in round_.legal_actions(1)
    for _ in range(3):
        round_.stand(1)
    assert round_.is_complete
    assert [w.amount for w in round_.wagers] == [1000, 1000, 1000]
    assert results(round_) == [
        (1, 0, Result.LOSE, 0, "PA 633a.7"),
        (1, 2, Result.WIN, 2000, "PA 633a.13"),
        (1, 1, Result.WIN, 2000, "PA 633a.13"),
    ]


def test_633a11_c_default_allows_four_hands(table: Table) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "8H 8C 8S 10S 10H 10C 10D")
    round_.split(1)
    round_.split(1)
    round_.split(1)
    assert len(round_.seats[1].hands) == 4
    assert not round_.can_split(1)
    for _ in range(4):
        round_.stand(1)
    assert round_.is_complete
    assert [s.result for s in round_.settlements] == [Result.LOSE] + [Result.WIN] * 3


def test_633a11_c_max_split_hands_2_means_no_resplit(table: Table) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "8H 10S", max_split_hands=2)
    round_.split(1)
    assert not round_.can_split(1)


def test_633a11_split_aces_receive_one_card_each(table: Table) -> None:
    round_ = table(["AS AD"], "10D", "8C", "KC 5H")
    round_.split(1)
    assert round_.is_complete
    assert hand_cards(round_) == [(0, cards("AS KC")), (1, cards("AD 5H"))]
    assert [op.command for op in round_.operations if op.command] == ["1 split"]
    assert results(round_) == [
        (1, 0, Result.WIN, 2000, "PA 633a.13"),
        (1, 1, Result.LOSE, 0, "PA 633a.7"),
    ]


def test_633a11_ace_and_ten_after_a_split_pays_1_to_1_not_3_to_2(table: Table) -> None:
    round_ = table(["KS KD"], "9D", "8C", "AC 9H")
    round_.split(1)
    assert round_.seats[1].hands[0].hand.total == 21
    assert not round_.seats[1].hands[0].hand.is_blackjack
    round_.stand(1)
    assert results(round_) == [
        (1, 0, Result.WIN, 2000, "PA 633a.13"),
        (1, 1, Result.WIN, 2000, "PA 633a.13"),
    ]


def test_633a11_c_no_resplit_of_aces_by_default(table: Table) -> None:
    round_ = table(["AS AD"], "10D", "8C", "AH 5H")
    round_.split(1)
    assert round_.is_complete
    assert hand_cards(round_) == [(0, cards("AS AH")), (1, cards("AD 5H"))]


def test_633a11_c_resplit_aces_when_allowed(table: Table, state_of: Any) -> None:
    round_ = table(["AS AD"], "10D", "8C", "AH KC 9C 5H", resplit_aces=True)
    round_.split(1)
    assert hand_cards(round_) == [(0, cards("AS AH")), (1, cards("AD"))]
    assert round_.legal_actions(1) == ["stand", "split"]
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="one card only") as caught:
        round_.hit(1)
    assert caught.value.rule == "PA 633a.11"
    assert state_of(round_) == before
    round_.split(1)
    assert round_.is_complete
    assert hand_cards(round_) == [(0, cards("AS KC")), (2, cards("AH 9C")), (1, cards("AD 5H"))]
    assert [s.returned for s in round_.settlements] == [2000, 2000, 0]


def test_633a11_split_aces_may_draw_when_the_one_card_rule_is_off(table: Table) -> None:
    round_ = table(["AS AD"], "10D", "8C", "2C 5H 3D 10H", one_card_to_split_aces=False)
    round_.split(1)
    assert round_.can_hit(1)
    round_.hit(1)
    assert hand_cards(round_)[0] == (0, cards("AS 2C 5H"))
    round_.stand(1)
    round_.stand(1)
    assert results(round_) == [
        (1, 0, Result.PUSH, 1000, "PA 633a.7"),
        (1, 1, Result.LOSE, 0, "PA 633a.7"),
    ]


def test_633a11_c_double_after_split_allowed(table: Table) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "3C 10H 2C 10S")
    round_.split(1)
    assert round_.can_double_down(1)
    round_.double_down(1)
    assert round_.can_double_down(1)
    round_.double_down(1)
    assert [w.amount for w in round_.wagers] == [2000, 2000]
    assert [s.returned for s in round_.settlements] == [4000, 4000]


def test_633a11_c_double_after_split_refused_when_off(table: Table, state_of: Any) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "3C 10H", double_after_split=False)
    round_.split(1)
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="after a split") as caught:
        round_.double_down(1)
    assert caught.value.rule == "PA 633a.11(c)"
    assert state_of(round_) == before


def test_633a11_d_dealer_blackjack_after_split_collects_only_original_wager(table: Table) -> None:
    round_ = table(["8S 8D"], "KD", "AS", "10C 9C", hole_card_peek=False)
    round_.split(1)
    round_.stand(1)
    round_.stand(1)
    assert round_.dealer_blackjack is True
    assert results(round_) == [
        (1, 0, Result.LOSE, 0, "PA 633a.11(d)"),
        (1, 1, Result.PUSH, 1000, "PA 633a.11(d)"),
    ]
    assert round_.player_net() == {"ann": -1000}
    assert round_.house_net() == 1000


def test_633a11_d_dealer_blackjack_after_split_and_double(table: Table) -> None:
    round_ = table(["8S 8D"], "KD", "AS", "3C 10H 9C", hole_card_peek=False)
    round_.split(1)
    round_.double_down(1)
    round_.stand(1)
    assert results(round_) == [
        (1, 0, Result.LOSE, 1000, "PA 633a.11(d)"),
        (1, 1, Result.PUSH, 1000, "PA 633a.11(d)"),
    ]
    assert round_.player_net() == {"ann": -1000}


def test_633a11_d_busted_split_hand_stays_lost_against_dealer_blackjack(table: Table) -> None:
    round_ = table(["8S 8D"], "KD", "AS", "10C 5C 9C", hole_card_peek=False)
    round_.split(1)
    round_.hit(1)
    assert results(round_) == [(1, 0, Result.LOSE, 0, "PA 633a.7")]
    round_.stand(1)
    assert results(round_)[1] == (1, 1, Result.PUSH, 1000, "PA 633a.11(d)")
    assert round_.player_net() == {"ann": -1000}


def test_633a11_d_both_split_hands_busted_lose_both(table: Table) -> None:
    round_ = table(["8S 8D"], "KD", "AS", "10C 5C 10H 5H", hole_card_peek=False)
    round_.split(1)
    round_.hit(1)
    round_.hit(1)
    assert round_.is_complete
    assert round_.player_net() == {"ann": -2000}


def test_633a11_split_needs_a_wager_equal_to_the_original(table: Table) -> None:
    round_ = table(["8S 8D"], "10D", "7C", "10C 10H", wagers=[2500])
    round_.split(1)
    assert [w.amount for w in round_.wagers] == [2500, 2500]


def test_actions_on_a_finished_hand_refused(table: Table, state_of: Any) -> None:
    round_ = table(["10S 6H"], "10D", "7C")
    round_.stand(1)
    assert round_.phase is Phase.COMPLETE
    before = state_of(round_)
    for action in (round_.hit, round_.stand, round_.double_down, round_.split, round_.surrender):
        with pytest.raises(IllegalActionError):
            action(1)
    assert state_of(round_) == before
