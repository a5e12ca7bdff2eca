"""PA 633c.5(a)-(v), version A: scenario tests with fixed card orders, one per branch.

Card orders follow 633c.5(n): each selected position's first card (position 1 first), the up
card, each selected position's second card, the hole card; then the cards in the order the engine
draws them (community cards C1, C2, ... and the dealer's own cards).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest

from tablejack.core import IllegalActionError, InvalidNotationError, Result, Shoe, WagerKind
from tablejack.games.hybrid import HybridRound, HybridRules, Phase

Seat = tuple[str, int, int, int | None]
"""(player, position, Blackjack Wager, Buzzer Beater or None), money in cents."""


def card_order(positions: dict[int, str], up: str, hole: str, rest: str = "") -> str:
    order = sorted(positions)
    first = [positions[p].split()[0] for p in order]
    second = [positions[p].split()[1] for p in order]
    return " ".join([*first, up, *second, hole, *rest.split()])


def table(
    seats: Sequence[Seat],
    positions: dict[int, str],
    up: str,
    hole: str,
    rest: str = "",
    **rules: Any,
) -> HybridRound:
    """A dealt hybrid round from a prearranged six-deck shoe."""
    hybrid_rules = HybridRules(**rules)
    shoe = Shoe.prearranged(card_order(positions, up, hole, rest), decks=hybrid_rules.decks)
    round_ = HybridRound(hybrid_rules, shoe)
    for player, position, wager, buzzer in seats:
        round_.place_wager(player, position, wager)
        if buzzer is not None:
            round_.place_buzzer_beater(player, buzzer)
    round_.close_wagering()
    return round_


def snapshot(round_: HybridRound) -> tuple[Any, ...]:
    """Everything a refused action must leave unchanged."""
    return (
        tuple(round_.operations),
        json.dumps(round_.audit_view(), sort_keys=True),
        None if round_.shoe is None else round_.shoe.remaining,
    )


def net(round_: HybridRound) -> dict[str, int]:
    return round_.player_net()


def clauses(round_: HybridRound, player: str, kind: WagerKind) -> list[str]:
    return [s.clause for s in round_.settlements if s.player == player and s.kind is kind]


def refused(round_: HybridRound, action: Any, rule: str) -> IllegalActionError:
    before = snapshot(round_)
    with pytest.raises(IllegalActionError) as caught:
        action()
    assert caught.value.rule == rule
    assert rule in caught.value.message
    assert snapshot(round_) == before
    return caught.value


# -- (n) the deal ---------------------------------------------------------------------------


def test_633c5_n_deals_from_position_1_clockwise_and_only_selected_positions() -> None:
    # Players choose positions 3 and 1 (in that order); position 2 is not selected.
    round_ = table(
        [("ann", 3, 1000, None), ("bob", 1, 1000, None)],
        {1: "10S 7D", 3: "9H 8C"},
        "6D",
        "KC",
        "10H",
    )
    targets = [op.target for op in round_.operations if op.kind == "card"][:6]
    assert targets == [
        "position 1",
        "position 3",
        "dealer up card",
        "position 1",
        "position 3",
        "dealer hole card",
    ]
    assert list(round_.position_cards) == [1, 3]
    assert [c.code for c in round_.position_cards[1]] == ["10S", "7D"]
    assert [c.code for c in round_.players["ann"].hands[0].hand.cards] == ["9H", "8C"]
    round_.stand("ann")
    round_.stand("bob")
    # Dealer 6 + K = 16 draws 10 = 26: both players win (t)(1)(i).
    assert net(round_) == {"ann": 1000, "bob": 1000}
    assert clauses(round_, "ann", WagerKind.BLACKJACK) == ["PA 633c.5(t)(1)(i), (v)(1)"]


def test_633c5_n_card_reader_is_asked_for_each_card_in_order() -> None:
    round_ = HybridRound(HybridRules())
    round_.place_wager("ann", 2, 1000)
    round_.place_wager("bob", 1, 1000)
    round_.close_wagering()
    asked = []
    for code in ["10S", "9H", "5D", "8C", "7D", "6S"]:
        assert round_.card_request is not None
        asked.append(round_.card_request.describe())
        round_.deal_card(code)
    assert asked == [
        "position 1",
        "position 2",
        "dealer up card",
        "position 1",
        "position 2",
        "dealer hole card",
    ]
    assert round_.card_request is None
    assert round_.awaiting_players() == ["bob", "ann"]
    round_.hit("ann")
    assert round_.card_request is None  # bob has not decided yet: nothing is drawn (q)
    round_.stand("bob")
    assert round_.card_request is not None
    assert round_.card_request.describe() == "community card 1"
    round_.deal_card("2C")  # ann: 9 8 2 = 19
    round_.stand("ann")
    assert round_.card_request is not None and round_.card_request.describe() == "dealer"
    round_.deal_card("KD")  # dealer 5 6 K = 21
    assert round_.is_complete
    assert net(round_) == {"ann": -1000, "bob": -1000}


# -- (o) insurance, even money and the card reader peek --------------------------------------


def test_633c5_o_dealer_blackjack_settles_every_wager_and_deals_no_more_cards() -> None:
    round_ = table(
        [
            ("ann", 1, 1000, 500),
            ("bob", 1, 2000, None),
            ("cat", 2, 1000, 500),
            ("dan", 2, 1000, None),
            ("eve", 3, 1000, 200),
        ],
        {1: "10S 9H", 2: "AS KD", 3: "QC JD"},
        "AH",
        "KH",
    )
    assert round_.phase is Phase.INSURANCE
    round_.decline_insurance("ann")
    round_.apply("bob insurance $10")
    round_.apply("dan even-money")
    round_.apply("cat no-insurance")
    assert not round_.is_complete
    round_.apply("dealer countdown-expired")  # eve takes no insurance by default
    assert round_.is_complete
    assert round_.community_cards == []
    assert len(round_.cards_dealt) == 8
    assert round_.hole_card_revealed
    assert net(round_) == {
        "ann": -1000 + 5000,  # 19 loses (t)(3)(ii); Buzzer Beater 19 vs Blackjack 10 to 1
        "bob": -2000 + 2000,  # insurance $10 wins 2 to 1
        "cat": 0 + 2500,  # Blackjack pushes; Buzzer Beater Blackjack vs Blackjack 5 to 1
        "dan": 1000,  # even money
        "eve": -1000 + 6000,  # 20 loses; Buzzer Beater 20 vs Blackjack 30 to 1
    }
    assert clauses(round_, "ann", WagerKind.BLACKJACK) == ["PA 633c.5(o), (t)(3)(ii)"]
    assert clauses(round_, "cat", WagerKind.BLACKJACK) == ["PA 633c.5(o), (t)(2)"]
    assert clauses(round_, "eve", WagerKind.BUZZER_BEATER) == ["PA 633c.5(o), (u)(1), (v)(3)"]
    assert clauses(round_, "bob", WagerKind.INSURANCE) == ["PA 633c.5(o), (v)(2)"]
    assert clauses(round_, "dan", WagerKind.BLACKJACK) == ["PA 633c.5(o); PA 633a.8(e)"]
    assert round_.house_net() == -(4000 + 0 + 2500 + 1000 + 5000)


def test_633c5_o_no_dealer_blackjack_insurance_lost_and_play_continues() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "10S 9H", 2: "AS KD"},
        "AH",
        "7C",
    )
    round_.take_insurance("ann")
    round_.take_insurance("bob", 200)
    assert round_.phase is Phase.PLAYING
    peeks = [op.note for op in round_.operations if op.kind == "peek"]
    assert peeks == ["no Blackjack"]
    assert [s.result for s in round_.settlements] == [Result.LOSE, Result.LOSE]
    assert round_.awaiting_players() == ["ann"]  # bob's Blackjack needs no decision
    assert round_.terminal_view("ann")["dealer"]["hole_card"] is None
    round_.stand("ann")  # dealer A 7 = soft 18 stands
    assert net(round_) == {"ann": -500 + 1000, "bob": -200 + 1500}
    assert clauses(round_, "bob", WagerKind.BLACKJACK) == ["PA 633c.5(t)(1)(ii), (v)(1)"]


def test_633c5_o_ten_value_up_card_is_peeked_without_insurance() -> None:
    round_ = table([("ann", 1, 1000, None)], {1: "10S 9H"}, "KH", "8C")
    assert round_.phase is Phase.PLAYING
    assert [op.note for op in round_.operations if op.kind == "peek"] == ["no Blackjack"]
    refused(round_, lambda: round_.take_insurance("ann"), "PA 633a.8")
    round_.stand("ann")
    assert net(round_) == {"ann": 1000}


def test_633c5_o_up_card_2_to_9_is_not_peeked() -> None:
    round_ = table([("ann", 1, 1000, None)], {1: "10S 9H"}, "9C", "QD")
    assert not any(op.kind == "peek" for op in round_.operations)
    round_.stand("ann")
    assert net(round_) == {"ann": 0}
    assert clauses(round_, "ann", WagerKind.BLACKJACK) == ["PA 633c.5(t)(2)"]


def test_633c5_o_even_money_only_for_a_blackjack() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)], {1: "10S 9H", 2: "AS KD"}, "AH", "7C"
    )
    error = refused(round_, lambda: round_.take_even_money("ann"), "PA 633a.8(e)")
    assert "only to a player Blackjack" in error.message
    refused(round_, lambda: round_.take_insurance("ann", 600), "PA 633a.8")


# -- (p)(1) player Blackjack ----------------------------------------------------------------


def test_633c5_p1_blackjack_paid_at_once_against_2_to_9_and_buzzer_beater_cleared() -> None:
    round_ = table(
        [("ann", 1, 1000, 500), ("bob", 1, 1100, None), ("cat", 2, 1000, None)],
        {1: "AS KD", 2: "10C 6H"},
        "9H",
        "7C",
        "5D",
    )
    # Settled before any decision: 3 to 2, and ann's Buzzer Beater cleared.
    assert round_.phase is Phase.PLAYING
    assert [(s.player, s.kind, s.result, s.returned) for s in round_.settlements] == [
        ("ann", WagerKind.BLACKJACK, Result.BLACKJACK, 2500),
        ("ann", WagerKind.BUZZER_BEATER, Result.LOSE, 0),
        ("bob", WagerKind.BLACKJACK, Result.BLACKJACK, 1100 + 1650),
    ]
    assert clauses(round_, "ann", WagerKind.BLACKJACK) == ["PA 633c.5(p)(1), (v)(1)"]
    assert clauses(round_, "ann", WagerKind.BUZZER_BEATER) == ["PA 633c.5(p)(1)"]
    assert round_.awaiting_players() == ["cat"]
    round_.stand("cat")  # dealer 9 7 = 16 draws 5 = 21
    assert net(round_) == {"ann": 1500 - 500, "bob": 1650, "cat": -1000}


def test_633c5_p1_uneven_blackjack_payout_rounds_down_and_records_rounding() -> None:
    round_ = table([("ann", 1, 1001, None)], {1: "AS KD"}, "5H", "10C", "4D", betting_unit=1)
    settlement = round_.settlements[0]
    assert settlement.returned == 1001 + 1501
    assert settlement.rounding == Fraction(1, 2)
    assert round_.is_complete


def test_633c5_t1iii_blackjack_against_ten_up_settles_at_the_end_and_beats_dealer_21() -> None:
    round_ = table([("ann", 1, 1000, 1000)], {1: "AS KD"}, "10H", "6C", "5D")
    assert round_.is_complete  # nobody to decide: the dealer plays out at once ((s))
    assert clauses(round_, "ann", WagerKind.BLACKJACK) == ["PA 633c.5(t)(1)(iii), (v)(1)"]
    assert clauses(round_, "ann", WagerKind.BUZZER_BEATER) == ["PA 633c.5(u)(2)(i)"]
    assert net(round_) == {"ann": 1500 - 1000}


# -- (p)(2) decisions and the countdown clock ------------------------------------------------


def test_633c5_p2_countdown_default_stand_for_players_who_did_not_act() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "10S 2H", 2: "10C 6H"},
        "7D",
        "10D",
        "9C",
    )
    round_.hit("bob")
    round_.apply("dealer countdown-expired")
    defaults = [op for op in round_.operations if op.target == "countdown default"]
    assert [(op.kind, op.note, op.command) for op in defaults] == [("stand", "ann", None)]
    # bob 16 + C1 9 = 25 busts at once; dealer 17; ann 12 loses.
    assert round_.is_complete
    assert net(round_) == {"ann": -1000, "bob": -1000}
    assert clauses(round_, "bob", WagerKind.BLACKJACK) == ["PA 633c.5(t)(3)(i); A-5"]


def test_633c5_p2_countdown_default_hit_hard_11_or_less() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None), ("cat", 3, 1000, None)],
        {1: "6S 4H", 2: "10C 6H", 3: "AD 5C"},
        "7D",
        "10D",
        "9C 2S",
        countdown_default="hit-hard-11-or-less",
    )
    round_.countdown_expired()
    defaults = [(op.kind, op.note) for op in round_.operations if op.target == "countdown default"]
    assert defaults == [("hit", "ann"), ("stand", "bob"), ("stand", "cat")]
    assert round_.players["ann"].hands[0].hand.total == 19  # 6 4 + C1 9
    assert round_.awaiting_players() == ["ann"]
    round_.countdown_expired()  # 19 is not 11 or less: stands
    assert round_.is_complete  # dealer 7 10 = 17
    assert net(round_) == {"ann": 1000, "bob": -1000, "cat": -1000}
    assert round_.community_cards[0].code == "9C"
    assert len(round_.community_cards) == 1


def test_633c5_p2_acting_after_the_countdown_stood_the_hand_is_refused() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "10S 2H", 2: "10C 6H"},
        "7D",
        "10D",
        "2C 5C",
    )
    round_.hit("bob")
    round_.countdown_expired()
    assert round_.awaiting_players() == ["bob"]
    error = refused(round_, lambda: round_.hit("ann"), "PA 633c.5(p)(2)")
    assert "countdown" in error.message


def test_633c5_p2_a_player_decides_once_per_decision_round() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "10S 2H", 2: "10C 6H"},
        "7D",
        "10D",
        "5C",
    )
    round_.hit("ann")
    error = refused(round_, lambda: round_.stand("ann"), "PA 633c.5(p)(2)")
    assert "already decided in decision round 1" in error.message


def test_633c5_p2_decisions_in_any_order_give_the_same_settlements() -> None:
    def play(order: Sequence[str]) -> list[Any]:
        round_ = table(
            [("ann", 1, 1000, None), ("bob", 2, 1000, None), ("cat", 3, 1000, None)],
            {1: "10S 2H", 2: "5C 6H", 3: "9D 7S"},
            "6D",
            "10D",
            "4C 3H 2S",
        )
        verbs = {"ann": "hit", "bob": "double", "cat": "hit"}
        for player in order:
            round_.apply(f"{player} {verbs[player]}")
        round_.apply("ann hit")
        round_.apply("cat stand")
        round_.apply("ann stand")
        return list(round_.settlements)

    assert play(["ann", "bob", "cat"]) == play(["cat", "bob", "ann"]) == play(["bob", "cat", "ann"])


def test_633c5_p2_no_surrender_in_version_a() -> None:
    round_ = table([("ann", 1, 1000, None)], {1: "10S 6H"}, "10D", "7C")
    before = snapshot(round_)
    with pytest.raises(IllegalActionError) as caught:
        round_.apply("ann surrender")
    assert "A-17" in caught.value.message
    assert snapshot(round_) == before


# -- (q) community cards ---------------------------------------------------------------------


def test_633c5_q_players_draw_different_numbers_of_community_cards() -> None:
    round_ = table(
        [
            ("ann", 1, 1000, None),
            ("bob", 2, 1000, None),
            ("cat", 3, 1000, None),
            ("dan", 1, 1000, None),
        ],
        {1: "10S 2H", 2: "5C 6H", 3: "9D 7S"},
        "6D",
        "10D",
        "4C 3H 2S",
    )
    round_.hit("ann")
    round_.double_down("bob")
    round_.hit("cat")
    assert round_.community_cards == []  # dan has not decided: no card yet
    round_.stand("dan")
    assert [c.code for c in round_.community_cards] == ["4C"]
    # C1 went to every hand that asked: ann 16, bob 15 (doubled, complete), cat 20.
    assert round_.awaiting_players() == ["ann", "cat"]
    round_.hit("ann")
    assert len(round_.community_cards) == 1  # cat still to decide: C2 not yet drawn
    round_.stand("cat")
    assert [c.code for c in round_.community_cards] == ["4C", "3H"]
    assert round_.awaiting_players() == ["ann"]
    round_.stand("ann")  # ann 19; dealer 6 10 = 16 draws 2 = 18
    assert {name: state.cursor for name, state in round_.players.items()} == {
        "ann": 2,
        "bob": 1,
        "cat": 1,
        "dan": 0,
    }
    assert net(round_) == {"ann": 1000, "bob": -2000, "cat": 1000, "dan": -1000}
    assert round_.decision_round == 3


def test_633c5_q_players_on_one_position_play_independent_hands() -> None:
    # ann and bob both back position 2 (10 6); ann hits, bob stands.
    round_ = table(
        [("ann", 2, 1000, None), ("bob", 2, 2000, None)], {2: "10C 6H"}, "10D", "7S", "4C"
    )
    round_.hit("ann")
    round_.stand("bob")
    assert round_.players["ann"].hands[0].hand.total == 20
    assert round_.players["bob"].hands[0].hand.total == 16
    round_.stand("ann")
    assert net(round_) == {"ann": 1000, "bob": -2000}


def test_633c5_q_split_hand_by_hand_over_community_cards() -> None:
    # A-4 default: ann's hand 1 is completed, then hand 2 continues from her next card.
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 1, 1000, None)],
        {1: "8S 8H"},
        "7D",
        "10D",
        "3C 10H 9S",
    )
    round_.split("ann")
    round_.hit("bob")
    # C1 3: ann hand 1 = 8 3 = 11, bob = 8 8 3 = 19.
    ann = round_.players["ann"]
    assert [h.hand.total for h in ann.hands] == [11, 8]
    round_.double_down("ann")  # DAS on hand 1
    round_.stand("bob")
    # C2 10 to hand 1 (21, doubled); hand 2 then takes C3 9 without a decision window.
    assert [h.hand.total for h in ann.hands] == [21, 17]
    assert [c.code for c in round_.community_cards] == ["3C", "10H", "9S"]
    assert round_.awaiting_players() == ["ann"]
    assert round_.current_hand("ann") is ann.hands[1]
    round_.stand("ann")  # dealer 7 10 = 17
    assert net(round_) == {"ann": 2000 + 0, "bob": 1000}
    assert ann.cursor == 3


def test_633c5_q_split_second_cards_first_option() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 1, 1000, None)],
        {1: "8S 8H"},
        "7D",
        "10D",
        "3C 10H 9S",
        split_card_order="second-cards-first",
    )
    round_.split("ann")
    round_.hit("bob")  # C1 3: hand 1 = 11, bob 19
    assert round_.awaiting_players() == ["bob"]  # ann's hand 2 needs its second card first
    round_.stand("bob")  # C2 10 to ann's hand 2 = 18
    ann = round_.players["ann"]
    assert [h.hand.total for h in ann.hands] == [11, 18]
    round_.double_down("ann")  # hand 1 takes C3 9 = 20
    round_.stand("ann")  # hand 2 stands on 18; dealer 17
    assert [h.hand.total for h in ann.hands] == [20, 18]
    assert net(round_) == {"ann": 2000 + 1000, "bob": 1000}


def test_633c5_q_split_aces_take_one_card_each_and_wait_for_the_window() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "AS AH", 2: "10C 3H"},
        "6D",
        "10D",
        "KC 9S 5H",
    )
    round_.split("ann")
    round_.hit("bob")
    # C1 K: ann's hand 1 = 21 (not a Blackjack after a split), bob 23 busts.
    ann = round_.players["ann"]
    assert ann.hands[0].done and not ann.hands[0].hand.is_blackjack
    assert round_.is_complete  # nobody decides: C2 9 goes to hand 2, dealer draws 5 = 21
    assert [h.hand.total for h in ann.hands] == [21, 20]
    assert net(round_) == {"ann": 0 - 1000, "bob": -1000}
    refused(round_, lambda: round_.hit("ann"), "PA 633c.5(p)(2)")


# -- (r) drawing -----------------------------------------------------------------------------


def test_633c5_r1_blackjack_or_21_may_not_draw() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None), ("cat", 3, 1000, None)],
        {1: "AS KD", 2: "10C 2H", 3: "2S 3D"},
        "10H",
        "7C",
        "9D",
    )
    refused(round_, lambda: round_.hit("ann"), "PA 633c.5(r)(1)")
    round_.hit("bob")
    round_.hit("cat")
    assert round_.players["bob"].hands[0].hand.total == 21  # complete, cannot draw again
    refused(round_, lambda: round_.hit("bob"), "PA 633c.5(r)(1)")
    round_.stand("cat")  # 14; dealer 17
    assert net(round_) == {"ann": 1500, "bob": 1000, "cat": -1000}


def test_633c5_r2_a_double_takes_exactly_one_community_card() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "5S 6D", 2: "10C 2H"},
        "10H",
        "7C",
        "2D 3S",
    )
    round_.double_down("ann", 500)
    round_.hit("bob")
    assert round_.players["ann"].hands[0].hand.total == 13
    assert round_.awaiting_players() == ["bob"]
    refused(round_, lambda: round_.hit("ann"), "PA 633c.5(p)(2)")
    round_.stand("bob")  # bob 14; dealer 17
    assert net(round_) == {"ann": -1500, "bob": -1000}


def test_633a10_double_refused_on_three_cards_and_split_refused_on_non_pair() -> None:
    round_ = table([("ann", 1, 1000, None)], {1: "5S 3D"}, "10H", "7C", "2D 9S")
    refused(round_, lambda: round_.split("ann"), "PA 633a.11(a)")
    round_.hit("ann")
    refused(round_, lambda: round_.double_down("ann"), "PA 633a.10")
    refused(round_, lambda: round_.double_down("ann", 5000), "PA 633a.10")


# -- (s) and (t) the dealer and settlement ----------------------------------------------------


@pytest.mark.parametrize(
    ("player_cards", "up", "hole", "rest", "result", "net_cents", "clause"),
    [
        ("10S 8D", "6H", "10C", "9D", Result.WIN, 1000, "PA 633c.5(t)(1)(i), (v)(1)"),
        ("10S 9D", "10H", "8C", "", Result.WIN, 1000, "PA 633c.5(t)(1)(ii), (v)(1)"),
        ("10S 8D", "10H", "8C", "", Result.PUSH, 0, "PA 633c.5(t)(2)"),
        ("10S 7D", "10H", "8C", "", Result.LOSE, -1000, "PA 633c.5(t)(3)(ii)"),
        ("AS 6D", "AH", "6C", "", Result.PUSH, 0, "PA 633c.5(t)(2)"),
    ],
)
def test_633c5_t_blackjack_wager_settles_by_comparison(
    player_cards: str,
    up: str,
    hole: str,
    rest: str,
    result: Result,
    net_cents: int,
    clause: str,
) -> None:
    round_ = table(
        [("ann", 1, 1000, None)],
        {1: player_cards},
        up,
        hole,
        rest,
        insurance=False,
        even_money=False,
    )
    round_.stand("ann")
    assert [(s.result, s.net, s.clause) for s in round_.settlements] == [
        (result, net_cents, clause)
    ]


def test_633c5_s_dealer_stands_on_soft_17_and_draws_to_17() -> None:
    round_ = table(
        [("ann", 1, 1000, None)], {1: "10S 8D"}, "AH", "6C", insurance=False, even_money=False
    )
    round_.stand("ann")
    assert round_.dealer.total == 17 and len(round_.dealer.cards) == 2
    other = table([("ann", 1, 1000, None)], {1: "10S 8D"}, "5H", "6C", "2D 5S")
    other.stand("ann")
    assert [c.code for c in other.dealer.cards] == ["5H", "6C", "2D", "5S"]  # 11, 13 -> 18
    assert other.player_net() == {"ann": 0}


def test_633c5_t3i_a5_player_bust_loses_even_when_dealer_busts() -> None:
    round_ = table([("ann", 1, 1000, 500)], {1: "10S 6D"}, "6H", "10C", "8D 9S")
    round_.hit("ann")  # C1 8: 24
    assert round_.settlements[0].clause == "PA 633c.5(t)(3)(i); A-5"
    assert round_.dealer.is_bust  # the dealer still draws ((s)): 6 10 9 = 25
    assert clauses(round_, "ann", WagerKind.BUZZER_BEATER) == ["PA 633c.5(u)(2)(ii); A-5"]
    assert net(round_) == {"ann": -1500}


# -- (u), (v)(3) the Buzzer Beater: every paytable row and every losing case -----------------


@pytest.mark.parametrize(
    ("player_cards", "up", "hole", "rest", "hits", "buzzer_net", "clause"),
    [
        # Blackjack vs Blackjack 5 to 1 (found at the peek).
        ("AS KD", "KH", "AD", "", 0, 5000, "PA 633c.5(o), (u)(1), (v)(3)"),
        # 20 vs 20, 5 to 1.
        ("KS QD", "10H", "QC", "", 0, 5000, "PA 633c.5(u)(1), (v)(3)"),
        # 20 vs 21 (three cards), 30 to 1.
        ("KS QD", "6H", "5C", "10D", 0, 30000, "PA 633c.5(u)(1), (v)(3)"),
        # 20 vs Blackjack, 30 to 1.
        ("KS QD", "KH", "AS", "", 0, 30000, "PA 633c.5(o), (u)(1), (v)(3)"),
        # 19 vs 19, 5 to 1.
        ("10S 9D", "10H", "9C", "", 0, 5000, "PA 633c.5(u)(1), (v)(3)"),
        # 19 vs 20, 10 to 1.
        ("10S 9D", "10H", "KC", "", 0, 10000, "PA 633c.5(u)(1), (v)(3)"),
        # 19 vs 21, 10 to 1.
        ("10S 9D", "6H", "5C", "10D", 0, 10000, "PA 633c.5(u)(1), (v)(3)"),
        # 19 vs Blackjack, 10 to 1.
        ("10S 9D", "10H", "AC", "", 0, 10000, "PA 633c.5(o), (u)(1), (v)(3)"),
        # Player 21 (three cards) vs dealer 21: no row, loses by default.
        ("10S 6D", "6H", "5C", "5S 10D", 1, -1000, "PA 633c.5(u)(1), (v)(3); A-14"),
        # The player's hand beats the dealer's: 20 vs 18.
        ("KS QD", "10H", "8C", "", 0, -1000, "PA 633c.5(u)(2)(i)"),
        # The dealer busts.
        ("10S 9D", "6H", "10C", "9D", 0, -1000, "PA 633c.5(u)(2)(i)"),
        # The dealer beats a hand under 19.
        ("10S 7D", "10H", "KC", "", 0, -1000, "PA 633c.5(u)(2)(ii)"),
        # A tie under 19.
        ("10S 8D", "10H", "8C", "", 0, -1000, "PA 633c.5(u); A-15"),
    ],
)
def test_633c5_u_buzzer_beater_paytable_and_losing_cases(
    player_cards: str,
    up: str,
    hole: str,
    rest: str,
    hits: int,
    buzzer_net: int,
    clause: str,
) -> None:
    round_ = table([("ann", 1, 1000, 1000)], {1: player_cards}, up, hole, rest)
    for _ in range(hits):
        round_.hit("ann")
    if not round_.is_complete:
        round_.stand("ann")
    assert round_.is_complete
    [buzzer] = [s for s in round_.settlements if s.kind is WagerKind.BUZZER_BEATER]
    assert (buzzer.net, buzzer.clause) == (buzzer_net, clause)


def test_633c5_u1_a14_no_row_push_option() -> None:
    round_ = table(
        [("ann", 1, 1000, 1000)],
        {1: "10S 6D"},
        "6H",
        "5C",
        "5S 10D",
        buzzer_beater_no_row="push",
    )
    round_.hit("ann")
    [buzzer] = [s for s in round_.settlements if s.kind is WagerKind.BUZZER_BEATER]
    assert (buzzer.result, buzzer.net) == (Result.PUSH, 0)


@pytest.mark.parametrize(
    ("choice", "buzzer_net", "clause"),
    [
        ("first-hand", -1000, "PA 633c.5(u)(2)(ii); A-6 first-hand (hand 1)"),
        ("best-hand", 5000, "PA 633c.5(u)(1), (v)(3); A-6 best-hand (hand 2)"),
    ],
)
def test_633c5_u_a6_which_split_hand_decides_the_buzzer_beater(
    choice: str, buzzer_net: int, clause: str
) -> None:
    # 10 10 split: hand 1 takes C1 8 = 18, hand 2 C2 K = 20; dealer 10 10 = 20.
    round_ = table(
        [("ann", 1, 1000, 1000)],
        {1: "10S 10D"},
        "10H",
        "KC",
        "8D KS",
        buzzer_beater_hand=choice,
    )
    round_.split("ann")
    round_.stand("ann")
    round_.stand("ann")
    [buzzer] = [s for s in round_.settlements if s.kind is WagerKind.BUZZER_BEATER]
    assert (buzzer.net, buzzer.clause) == (buzzer_net, clause)


# -- bad input: refused with the clause, state unchanged -------------------------------------


def test_633c5_l_position_outside_1_to_3_refused() -> None:
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=1))
    for position in (0, 4, "2", True):
        refused(round_, lambda p=position: round_.place_wager("ann", p, 1000), "PA 633c.5(l)")


def test_633c5_l_one_position_per_player_and_no_player_named_dealer() -> None:
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=1))
    round_.place_wager("ann", 1, 1000)
    refused(round_, lambda: round_.place_wager("ann", 2, 1000), "PA 633c.5(l)")
    refused(round_, lambda: round_.place_wager("dealer", 2, 1000), "PA 633c.5(l)")
    refused(round_, lambda: round_.place_wager("bob", 2, 999_999_00), "PA 633a.6")


def test_633c5_m_buzzer_beater_needs_a_blackjack_wager_and_comes_before_the_deal() -> None:
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=1))
    refused(round_, lambda: round_.place_buzzer_beater("ann", 500), "PA 633c.5(m)")
    round_.place_wager("ann", 1, 1000)
    refused(round_, lambda: round_.place_buzzer_beater("ann", 1500), "PA 633c.5(m)")
    round_.place_buzzer_beater("ann", 500)
    refused(round_, lambda: round_.place_buzzer_beater("ann", 500), "PA 633c.5(m)")
    round_.place_wager("bob", 2, 1000)
    round_.close_wagering()
    refused(round_, lambda: round_.place_buzzer_beater("bob", 500), "PA 633c.5(k)")
    refused(round_, lambda: round_.place_wager("cat", 1, 1000), "PA 633c.5(k)")
    off = HybridRound(HybridRules(buzzer_beater=False), Shoe.shuffled(6, seed=1))
    off.place_wager("ann", 1, 1000)
    refused(off, lambda: off.place_buzzer_beater("ann", 500), "PA 633c.5(m)")


def test_633c5_l_a1_acting_for_a_position_or_hand_not_his_refused() -> None:
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "8S 8H", 2: "10C 6H"},
        "7D",
        "10D",
        "3C 9S 4H",
    )
    refused(round_, lambda: round_.hit("ann", position=2), "PA 633c.5(l)")
    refused(round_, lambda: round_.hit("cat"), "PA 633c.5(l)")
    refused(round_, lambda: round_.stand("ann", hand=3), "PA 633c.5(l)")
    round_.split("ann", position=1, hand=0)
    round_.stand("bob")
    refused(round_, lambda: round_.hit("ann", hand=1), "PA 633a.11(b)")
    round_.stand("ann", hand=0)  # hand 2 then takes C2 9 = 17
    round_.stand("ann", hand=1)
    assert round_.is_complete


def test_633c5_j_card_not_asked_for_refused() -> None:
    round_ = HybridRound(HybridRules())
    refused(round_, lambda: round_.deal_card("AS"), "PA 633c.5(j)")
    round_.place_wager("ann", 1, 1000)
    round_.close_wagering()
    for code in ["10S", "7D", "6H", "KC"]:
        round_.deal_card(code)
    assert round_.awaiting_players() == ["ann"]
    refused(round_, lambda: round_.deal_card("5S"), "PA 633c.5(j)")
    shoe_round = table([("ann", 1, 1000, None)], {1: "10S 6H"}, "7D", "KC", "5S")
    refused(shoe_round, lambda: shoe_round.deal_card("5S"), "PA 633c.5(j)")


def test_633c5_f_card_beyond_the_decks_refused() -> None:
    round_ = HybridRound(HybridRules())
    for player, position in (("ann", 1), ("bob", 2), ("cat", 3)):
        round_.place_wager(player, position, 1000)
    round_.close_wagering()
    for _ in range(6):
        round_.deal_card("AS")
    assert round_.card_request is not None
    assert round_.card_request.describe() == "position 3"
    refused(round_, lambda: round_.deal_card("AS"), "PA 633c.5(f)")


def test_633c5_p2_countdown_expired_without_a_window_refused() -> None:
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=3))
    refused(round_, round_.countdown_expired, "PA 633c.5(p)(2)")
    reader = HybridRound(HybridRules())
    reader.place_wager("ann", 1, 1000)
    reader.close_wagering()
    refused(reader, reader.countdown_expired, "PA 633c.5(p)(2)")
    refused(reader, lambda: reader.hit("ann"), "PA 633c.5(q)")


def test_unknown_verbs_and_dealer_commands_are_notation_errors() -> None:
    round_ = table([("ann", 1, 1000, None)], {1: "10S 6H"}, "7D", "KC", "5S")
    with pytest.raises(InvalidNotationError):
        round_.apply("ann fold")
    with pytest.raises(InvalidNotationError):
        round_.apply("dealer shuffle")
    with pytest.raises(InvalidNotationError):
        round_.apply("ann hit $5")


# -- views -----------------------------------------------------------------------------------


def test_633c5_views_terminal_never_shows_hole_card_or_others_choices() -> None:
    round_ = table(
        [("ann", 1, 1000, 500), ("bob", 2, 3000, None)],
        {1: "10S 2H", 2: "5C 6H"},
        "7D",
        "QH",
        "9C",
    )
    view = round_.terminal_view("ann")
    json.dumps(view)
    assert view["dealer"]["hole_card"] is None
    assert view["dealer"]["cards"] == ["7D"]
    assert "QH" not in json.dumps(view)
    assert view["players"] == [{"player": "bob", "position": 2}]
    assert view["you"]["legal_actions"] == ["hit", "stand", "double"]
    assert view["you"]["buzzer_beater"] == 500
    round_.double_down("bob")
    assert round_.terminal_view("ann") == view  # bob's choice is invisible to ann
    bob_view = round_.terminal_view("bob")
    assert bob_view["you"]["hands"][0]["doubled"] == 3000
    assert bob_view["you"]["legal_actions"] == []
    audit = round_.audit_view()
    assert audit["dealer"]["hole_card"] == "QH"
    assert audit["awaiting_players"] == ["ann"]
    assert {p["player"]: p["decided_this_round"] for p in audit["players"]} == {
        "ann": False,
        "bob": True,
    }
    round_.stand("ann")
    final = round_.terminal_view("ann")
    json.dumps(final)
    assert final["dealer"]["hole_card"] == "QH"
    assert final["players"][0]["hands"] == [{"cards": ["5C", "6H", "9C"], "total": 20}]
    assert final["you"]["net"] == -1500
    json.dumps(round_.audit_view())
    refused(round_, lambda: round_.terminal_view("zed"), "PA 633c.5(l)")


def test_633c5_q_split_ace_second_card_waits_for_the_next_draw_while_others_decide() -> None:
    # One card per player per draw: ann's hand 2 takes C2 when bob's window closes, so bob never
    # sees a card he could take before deciding.
    round_ = table(
        [("ann", 1, 1000, None), ("bob", 2, 1000, None)],
        {1: "AS AH", 2: "2H 3C"},
        "6D",
        "10D",
        "KC 9S 5H",
    )
    round_.split("ann")
    round_.hit("bob")
    ann = round_.players["ann"]
    assert [c.code for c in round_.community_cards] == ["KC"]
    assert [len(h.hand) for h in ann.hands] == [2, 1]
    assert round_.awaiting_players() == ["bob"]
    assert ann.cursor == round_.players["bob"].cursor == 1
    round_.hit("bob")  # C2 9: bob 24 busts; ann's hand 2 = 20
    assert [h.hand.total for h in ann.hands] == [21, 20]
    assert round_.is_complete  # dealer 6 10 5 = 21
    assert net(round_) == {"ann": -1000, "bob": -1000}
