"""PA 633c.5(w)–(ee), version B of the hybrid table (``hybrid-shared``): the shared start (y), the
decisions (z), the designation of community cards to each player's hand or personal dealer hand
(aa), (bb), settlement (cc), (ee), surrender (§ 633a.9, A-7), insurance (A-8), the countdown
clock, and bad input refused with the clause and no change of state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tablejack.core import Card, IllegalActionError, InvalidNotationError, Result, Shoe, WagerKind
from tablejack.games.hybrid_shared import HybridSharedRound, Path, Phase
from tablejack.games.hybrid_shared_rules import HybridSharedRules

NO_SIDES = {"royal_match": False, "bet_the_set": False, "kings_bounty": False}


def deal(
    start: str,
    first: str,
    community: str = "",
    players: tuple[str, ...] = ("ann",),
    *,
    sides: Mapping[str, Mapping[str, int]] | None = None,
    **rules: Any,
) -> HybridSharedRound:
    """A round from a prearranged shoe: the shared start ``start`` (two codes), the dealer's
    first card, then the community cards; $10 Blackjack Wagers, side wagers per ``sides``."""
    table_rules = HybridSharedRules(**rules)
    one, two = start.split()
    shoe = Shoe.prearranged(f"{one} {first} {two} {community}", decks=table_rules.decks)
    round_ = HybridSharedRound(table_rules, shoe)
    for name in players:
        round_.place_wager(name, 1000)
        for kind, amount in (sides or {}).get(name, {}).items():
            round_.place_side_wager(name, kind, amount)
    round_.close_wagering()
    return round_


def results(round_: HybridSharedRound, kind: WagerKind = WagerKind.BLACKJACK) -> list[Any]:
    return [
        (s.player, s.hand, s.result, s.returned, s.clause)
        for s in round_.settlements
        if s.kind is kind
    ]


def codes(hand: Any) -> str:
    return " ".join(card.code for card in hand.cards)


def snapshot(round_: HybridSharedRound) -> tuple[Any, ...]:
    """Everything a refused action must leave unchanged."""
    return (
        tuple(round_.operations),
        round_.phase,
        tuple(round_.settlements),
        tuple(round_.wagers),
        tuple(round_.cards_dealt),
        tuple(round_.community_cards),
        round_.card_request,
        None if round_.shoe is None else round_.shoe.remaining,
        tuple(
            (
                s.path,
                s.insurance_decided,
                s.insurance_wager_id,
                s.split,
                s.complete,
                tuple(s.designations),
                tuple(s.events),
                tuple(s.side_pending),
                tuple(s.dealer.cards),
                tuple(
                    (tuple(h.hand.cards), h.amount, h.doubled, h.done, h.settled, h.awaiting_card)
                    for h in s.hands
                ),
            )
            for s in round_.players.values()
        ),
    )


def refused(round_: HybridSharedRound, action: Any, rule: str, match: str) -> None:
    before = snapshot(round_)
    with pytest.raises(IllegalActionError, match=match) as caught:
        action()
    assert caught.value.rule == rule
    assert rule in caught.value.message
    assert snapshot(round_) == before


# -- (y) the deal ---------------------------------------------------------------------------------


def test_633c5_y_card_1_and_3_are_every_players_cards_card_2_the_dealers_first() -> None:
    round_ = deal("10S 7H", "9D", "", ("ann", "bob", "cat"))
    assert [op.target for op in round_.operations if op.kind == "card"] == [
        "every player's first card",
        "the dealer's first card",
        "every player's second card",
    ]
    for state in round_.players.values():
        assert codes(state.hands[0].hand) == "10S 7H"
        assert codes(state.dealer) == "9D"
    assert round_.players_to_decide() == ["ann", "bob", "cat"]
    assert round_.community_cards == []


def test_633c5_y4_without_a_shoe_the_engine_asks_for_each_card_and_says_when_to_stop() -> None:
    round_ = HybridSharedRound(HybridSharedRules(**NO_SIDES))
    round_.place_wager("ann", 1000)
    round_.place_wager("bob", 1000)
    round_.close_wagering()
    asked = []
    for code in ("10S", "9D", "6H"):
        assert round_.card_request is not None
        asked.append(round_.card_request.describe())
        round_.deal_card(code)
    assert asked == [
        "every player's first card",
        "the dealer's first card",
        "every player's second card",
    ]
    assert round_.card_request is None
    round_.stand("ann")
    assert round_.card_request is None  # bob has not decided: no community card yet
    round_.hit("bob")
    assert round_.card_request is not None
    assert round_.card_request.describe() == "community card 1"
    round_.deal_card("5C")  # ann's hole card; bob's 21
    round_.deal_card("7D")  # ann's dealer 21: complete; bob's hole card 16
    assert round_.card_request is not None
    assert round_.card_request.describe() == "community card 3"
    round_.deal_card("4S")
    assert round_.card_request is None
    assert round_.is_complete
    with pytest.raises(IllegalActionError) as caught:
        round_.deal_card("2C")
    assert caught.value.rule == "PA 633c.5(j)"


# -- (aa)(1) player Blackjack -------------------------------------------------------------------


def test_633c5_aa1_next_card_is_the_dealers_hole_card_and_a_dealer_blackjack_pushes() -> None:
    round_ = deal("AS KH", "KD", "AC", **NO_SIDES)
    assert round_.is_complete
    assert results(round_) == [("ann", 0, Result.PUSH, 1000, "PA 633c.5(aa)(1)(i)")]
    assert round_.players["ann"].designations == ["dealer"]
    assert round_.players["ann"].path is Path.BLACKJACK


def test_633c5_aa1_i_blackjack_holder_may_insure_a8_and_insurance_wins() -> None:
    round_ = deal("AS KH", "AD", "QC", **NO_SIDES)
    assert round_.legal_actions("ann") == ["insurance", "no-insurance"]
    round_.take_insurance("ann")
    assert results(round_, WagerKind.INSURANCE) == [
        ("ann", None, Result.WIN, 1500, "PA 633c.5(aa)(1)(i), (ee)(1)")
    ]
    assert results(round_) == [("ann", 0, Result.PUSH, 1000, "PA 633c.5(aa)(1)(i)")]
    assert round_.player_net() == {"ann": 1000}  # the result of even money


def test_633c5_aa1_ii_blackjack_paid_3_to_2_when_the_hole_card_gives_no_blackjack() -> None:
    round_ = deal("AS KH", "9D", "10C", **NO_SIDES)
    assert results(round_) == [("ann", 0, Result.BLACKJACK, 2500, "PA 633c.5(aa)(1)(ii), (ee)(2)")]
    assert codes(round_.player_dealer("ann")) == "9D 10C"


def test_633c5_aa1_ii_insurance_lost_when_the_hole_card_gives_no_blackjack() -> None:
    round_ = deal("AS KH", "AD", "9C", **NO_SIDES)
    round_.take_insurance("ann", 300)
    assert results(round_, WagerKind.INSURANCE) == [
        ("ann", None, Result.LOSE, 0, "PA 633c.5(aa)(1)(ii)")
    ]
    assert results(round_) == [("ann", 0, Result.BLACKJACK, 2500, "PA 633c.5(aa)(1)(ii), (ee)(2)")]


def test_633c5_aa1_only_the_hole_card_is_designated_no_card_no_wager_needs() -> None:
    # A♠ K♥ against a 6: the hole card 5♣ makes the dealer 11, no Blackjack: the Blackjack is
    # paid (aa)(1)(ii) and no later card is revealed: (aa)(1) designates the hole card only and
    # no wager depends on the dealer's total (the shared start makes every player a Blackjack).
    round_ = deal("AS KH", "6D", "5C 9S 3H", ("ann", "bob"), **NO_SIDES)
    assert round_.is_complete
    assert round_.community_cards == [Card.parse("5C")]
    assert round_.shoe is not None and round_.shoe.remaining == 2  # 9♠ 3♥ never dealt
    for name in ("ann", "bob"):
        assert codes(round_.player_dealer(name)) == "6D 5C"
        assert round_.players[name].designations == ["dealer"]
    assert results(round_) == [
        ("ann", 0, Result.BLACKJACK, 2500, "PA 633c.5(aa)(1)(ii), (ee)(2)"),
        ("bob", 0, Result.BLACKJACK, 2500, "PA 633c.5(aa)(1)(ii), (ee)(2)"),
    ]


def test_633c5_aa1_card_reader_asks_for_the_hole_card_only() -> None:
    round_ = HybridSharedRound(HybridSharedRules(**NO_SIDES))
    round_.place_wager("ann", 1000)
    round_.close_wagering()
    for code in ("AS", "6D", "KH"):
        round_.deal_card(code)
    assert round_.card_request is not None
    assert round_.card_request.describe() == "community card 1"
    round_.deal_card("5C")
    assert round_.card_request is None and round_.is_complete
    with pytest.raises(IllegalActionError) as caught:
        round_.deal_card("9S")
    assert caught.value.rule == "PA 633c.5(j)"


# -- (aa)(2) stand on the two cards ---------------------------------------------------------------


def test_633c5_aa2_i_stand_then_dealer_blackjack_loses_and_no_more_cards() -> None:
    round_ = deal("10S 7H", "AD", "KC", ("ann", "bob"), **NO_SIDES)
    round_.stand("ann")  # declines insurance by deciding
    round_.take_insurance("bob")
    round_.stand("bob")
    assert round_.is_complete
    assert len(round_.community_cards) == 1
    assert results(round_) == [
        ("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(2)(i)"),
        ("bob", 0, Result.LOSE, 0, "PA 633c.5(aa)(2)(i)"),
    ]
    assert results(round_, WagerKind.INSURANCE) == [
        ("bob", None, Result.WIN, 1500, "PA 633c.5(aa)(2)(i), (ee)(1)")
    ]
    assert round_.player_net() == {"ann": -1000, "bob": 0}


def test_633c5_aa2_ii_stand_then_later_cards_complete_the_dealers_hand() -> None:
    round_ = deal("10S 7H", "9D", "5C 4D", **NO_SIDES)
    round_.stand("ann")
    assert round_.players["ann"].designations == ["dealer", "dealer"]
    assert codes(round_.player_dealer("ann")) == "9D 5C 4D"
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(cc), (t)(3)(ii)")]


def test_633c5_aa2_ii_insurance_lost_and_dealer_stands_on_soft_17() -> None:
    round_ = deal("10S 7H", "AD", "5C 2D 9S", **NO_SIDES)
    round_.take_insurance("ann")
    round_.stand("ann")
    assert codes(round_.player_dealer("ann")) == "AD 5C 2D"  # soft 18 after A-5-2: stands
    assert results(round_, WagerKind.INSURANCE) == [
        ("ann", None, Result.LOSE, 0, "PA 633c.5(aa)(2)(ii)")
    ]
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(cc), (t)(3)(ii)")]


def test_633c5_bb2_dealer_stands_on_soft_17() -> None:
    round_ = deal("10S 8H", "AD", "6C", **NO_SIDES)
    round_.stand("ann")
    assert codes(round_.player_dealer("ann")) == "AD 6C"
    assert results(round_) == [("ann", 0, Result.WIN, 2000, "PA 633c.5(cc), (t)(1)(ii), (ee)(2)")]


# -- (aa)(3) hit, split, double -----------------------------------------------------------------


def test_633c5_aa3_ii_hit_then_stand_the_next_card_is_the_dealers_second() -> None:
    round_ = deal("10S 2H", "9D", "5C 8D", **NO_SIDES)
    round_.hit("ann")
    assert round_.players["ann"].designations == ["hand 1"]
    assert round_.next_card_for("ann") == "decision"
    round_.stand("ann")
    assert round_.players["ann"].designations == ["hand 1", "dealer"]
    assert codes(round_.player_dealer("ann")) == "9D 8D"
    assert results(round_) == [("ann", 0, Result.PUSH, 1000, "PA 633c.5(cc), (t)(2)")]


def test_633c5_aa3_ii_a_bust_is_collected_before_the_dealers_second_card() -> None:
    round_ = deal("10S 2H", "9D", "KC 5D 3S", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")
    round_.hit("bob")
    # KC busts both; the round waits for nobody, so the dealer's cards follow at once.
    assert [op.kind for op in round_.operations].index("settle") < [
        op.target for op in round_.operations
    ].index("community card 2")
    assert results(round_)[:2] == [
        ("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(3)(ii)"),
        ("bob", 0, Result.LOSE, 0, "PA 633c.5(aa)(3)(ii)"),
    ]
    assert codes(round_.player_dealer("ann")) == "9D 5D 3S"


def test_633c5_aa3_i_double_takes_one_card_only() -> None:
    round_ = deal("6S 5H", "9D", "10C 8D", **NO_SIDES)
    round_.double_down("ann")
    assert codes(round_.players["ann"].hands[0].hand) == "6S 5H 10C"
    assert round_.players["ann"].designations == ["hand 1", "dealer"]
    assert results(round_) == [("ann", 0, Result.WIN, 4000, "PA 633c.5(cc), (t)(1)(ii), (ee)(2)")]


def test_633c5_aa3_i_double_over_21_is_collected_at_once_a19() -> None:
    round_ = deal("10S 2H", "9D", "KC 5C 4C", ("ann", "bob"), **NO_SIDES)
    round_.double_down("ann")
    round_.hit("bob")  # bob: 10 2 K = 22, ann: 10 2 K = 22
    assert results(round_)[0] == ("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(3)(i)")
    assert round_.settlements[0].amount == 2000


def test_633c5_aa3_i_split_aces_take_one_card_each_a9() -> None:
    round_ = deal("AS AH", "9D", "KC 5D 8C", **NO_SIDES)
    round_.split("ann")
    state = round_.players["ann"]
    assert [codes(h.hand) for h in state.hands] == ["AS KC", "AH 5D"]
    assert not state.hands[0].hand.is_blackjack  # 21 after a split, not Blackjack
    assert state.designations == ["hand 1", "hand 2", "dealer"]
    assert results(round_) == [
        ("ann", 0, Result.WIN, 2000, "PA 633c.5(cc), (t)(1)(ii), (ee)(2)"),
        ("ann", 1, Result.LOSE, 0, "PA 633c.5(cc), (t)(3)(ii)"),
    ]


def test_633c5_aa3_ii_split_hand_1_is_completed_before_hand_2_a4() -> None:
    round_ = deal("8S 8H", "6D", "3C 9D 10S KC 3D", **NO_SIDES)
    round_.split("ann")
    assert round_.next_card_for("ann") == "decision"
    round_.hit("ann")  # hand 1: 8 3 9 = 20
    round_.stand("ann")
    round_.stand("ann")  # hand 2: 8 10 = 18
    state = round_.players["ann"]
    assert state.designations == ["hand 1", "hand 1", "hand 2", "dealer", "dealer"]
    assert codes(state.dealer) == "6D KC 3D"
    assert results(round_) == [
        ("ann", 0, Result.WIN, 2000, "PA 633c.5(cc), (t)(1)(ii), (ee)(2)"),
        ("ann", 1, Result.LOSE, 0, "PA 633c.5(cc), (t)(3)(ii)"),
    ]


# -- (bb) the dealer's hand for the player ------------------------------------------------------


def test_633c5_bb1_hit_hand_loses_the_wager_to_a_dealer_blackjack() -> None:
    round_ = deal("5S 4H", "KD", "2C AS", **NO_SIDES)
    round_.hit("ann")
    round_.stand("ann")
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(bb)(1)")]
    assert round_.players["ann"].dealer_blackjack is True


def test_633c5_bb1_multi_card_21_loses_to_a_dealer_blackjack() -> None:
    round_ = deal("5S 6H", "KD", "QC AS", **NO_SIDES)
    round_.hit("ann")  # 21: complete
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(bb)(1), (t)(3)(iii)")]


def test_633c5_bb1_insurance_wins_after_a_hit_and_loses_under_bb2() -> None:
    won = deal("5S 4H", "AD", "2C KS", **NO_SIDES)
    won.take_insurance("ann")
    won.hit("ann")
    won.stand("ann")
    assert results(won, WagerKind.INSURANCE) == [
        ("ann", None, Result.WIN, 1500, "PA 633c.5(bb)(1), (ee)(1)")
    ]
    lost = deal("5S 4H", "AD", "2C 6S", **NO_SIDES)
    lost.take_insurance("ann")
    lost.hit("ann")
    lost.stand("ann")
    assert results(lost, WagerKind.INSURANCE) == [("ann", None, Result.LOSE, 0, "PA 633c.5(bb)(2)")]
    assert results(lost) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(cc), (t)(3)(ii)")]


def test_633c5_bb1_a19_live_double_loses_only_the_original_wager() -> None:
    round_ = deal("6S 5H", "KD", "3C AC", **NO_SIDES)
    round_.double_down("ann")
    (settlement,) = round_.settlements
    assert (settlement.amount, settlement.returned, settlement.result, settlement.clause) == (
        2000,
        1000,
        Result.LOSE,
        "PA 633c.5(bb)(1); A-19",
    )


def test_633c5_bb1_a19_full_amount_option_loses_the_double_too() -> None:
    round_ = deal("6S 5H", "KD", "3C AC", double_against_dealer_blackjack="full-amount", **NO_SIDES)
    round_.double_down("ann")
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(bb)(1); A-19")]


def test_633c5_bb1_a10_split_both_live_original_collected_split_wager_returned() -> None:
    round_ = deal("8S 8H", "KD", "2C 3D AC", **NO_SIDES)
    round_.split("ann")
    round_.stand("ann")  # hand 1: 10
    round_.stand("ann")  # hand 2: 11
    assert results(round_) == [
        ("ann", 0, Result.LOSE, 0, "PA 633c.5(bb)(1); A-10"),
        ("ann", 1, Result.PUSH, 1000, "PA 633c.5(bb)(1); A-10"),
    ]
    assert round_.player_net() == {"ann": -1000}


def test_633c5_bb1_a10_split_then_dealer_blackjack_with_one_split_hand_busted() -> None:
    round_ = deal("8S 8H", "KD", "5C 10D 2C AC", **NO_SIDES)
    round_.split("ann")
    round_.hit("ann")  # hand 1: 8 5 10 = 23, collected at once
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(3)(ii)")]
    round_.stand("ann")  # hand 2: 8 2 = 10
    assert codes(round_.player_dealer("ann")) == "KD AC"
    assert results(round_) == [
        ("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(3)(ii)"),
        ("ann", 1, Result.PUSH, 1000, "PA 633c.5(bb)(1); A-10"),
    ]
    assert round_.player_net() == {"ann": -1000}  # max(W, busted) = $10


def test_633c5_bb1_a10_split_both_busted_lose_both() -> None:
    round_ = deal("8S 8H", "KD", "5C 10D 4C 10H AC", **NO_SIDES)
    round_.split("ann")
    round_.hit("ann")  # 23
    round_.hit("ann")  # hand 2: 8 4 10 = 22
    assert round_.player_net() == {"ann": -2000}
    assert [s.clause for s in round_.settlements] == ["PA 633c.5(aa)(3)(ii)"] * 2
    assert codes(round_.player_dealer("ann")) == "KD AC"


def test_633c5_bb1_a10_full_amount_option_loses_both_split_hands() -> None:
    round_ = deal(
        "8S 8H", "KD", "2C 3D AC", split_against_dealer_blackjack="full-amount", **NO_SIDES
    )
    round_.split("ann")
    round_.stand("ann")
    round_.stand("ann")
    assert round_.player_net() == {"ann": -2000}


def test_633c5_bb_two_players_different_choices_different_dealer_hands() -> None:
    round_ = deal("10S 6H", "KD", "AC 5H 2D", ("ann", "bob"), **NO_SIDES)
    round_.stand("ann")
    round_.hit("bob")  # AC: 17
    round_.stand("bob")
    assert codes(round_.player_dealer("ann")) == "KD AC"
    assert codes(round_.player_dealer("bob")) == "KD 5H 2D"
    assert round_.players["ann"].designations == ["dealer", None, None]
    assert round_.players["bob"].designations == ["hand 1", "dealer", "dealer"]
    assert results(round_) == [
        ("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(2)(i)"),
        ("bob", 0, Result.PUSH, 1000, "PA 633c.5(cc), (t)(2)"),
    ]


def test_633c5_bb2_dealer_bust_pays_every_live_hand() -> None:
    round_ = deal("10S 2H", "6D", "10C 9S", **NO_SIDES)
    round_.stand("ann")
    assert codes(round_.player_dealer("ann")) == "6D 10C 9S"
    assert results(round_) == [("ann", 0, Result.WIN, 2000, "PA 633c.5(cc), (t)(1)(i), (ee)(2)")]


# -- surrender (§ 633a.9; A-7) -------------------------------------------------------------------


def test_633a9_a7_late_surrender_returns_half_when_the_hole_card_is_no_blackjack() -> None:
    round_ = deal("10S 6H", "10D", "7C", **NO_SIDES)
    round_.surrender("ann")
    assert round_.players["ann"].designations == ["dealer"]
    assert results(round_) == [
        ("ann", 0, Result.SURRENDER, 500, "PA 633a.9; PA 633c.5(aa)(2)(ii); A-7")
    ]


def test_633a9_a7_late_surrender_loses_everything_to_the_dealers_blackjack() -> None:
    round_ = deal("10S 6H", "KD", "AC", **NO_SIDES)
    round_.surrender("ann")
    assert results(round_) == [("ann", 0, Result.LOSE, 0, "PA 633c.5(aa)(2)(i); A-7")]


def test_633a9_a7_early_surrender_returns_half_at_once() -> None:
    round_ = deal("10S 6H", "KD", "AC", surrender_timing="early", **NO_SIDES)
    round_.surrender("ann")
    assert results(round_) == [("ann", 0, Result.SURRENDER, 500, "PA 633a.9; A-7 (early)")]


def test_633a9_surrender_with_insurance_settles_both() -> None:
    round_ = deal("10S 6H", "AD", "KC", **NO_SIDES)
    round_.take_insurance("ann")
    round_.surrender("ann")
    assert round_.player_net() == {"ann": 0}


def test_633a9_surrender_not_offered_is_refused() -> None:
    round_ = deal("10S 6H", "9D", "5C", surrender=False, **NO_SIDES)
    refused(round_, lambda: round_.surrender("ann"), "PA 633a.9", "not offered")


def test_633a9_surrender_after_acting_is_refused() -> None:
    round_ = deal("10S 2H", "9D", "3C 8D", **NO_SIDES)
    round_.hit("ann")
    refused(round_, lambda: round_.surrender("ann"), "PA 633a.9", "first two cards")
    assert "surrender" not in round_.legal_actions("ann")


# -- insurance (633c.5(z); A-8) ------------------------------------------------------------------


def test_633c5_z_insurance_refused_when_the_dealers_first_card_is_not_an_ace() -> None:
    round_ = deal("10S 6H", "KD", "5C", **NO_SIDES)
    refused(round_, lambda: round_.take_insurance("ann"), "PA 633c.5(z)", "not K♦")
    assert "insurance" not in round_.legal_actions("ann")


def test_633c5_z_insurance_over_half_the_wager_refused() -> None:
    round_ = deal("10S 6H", "AD", "5C", **NO_SIDES)
    refused(round_, lambda: round_.take_insurance("ann", 600), "PA 633c.5(z)", "half")


def test_633c5_z_insurance_refused_after_a_decision_on_the_hand() -> None:
    round_ = deal("10S 2H", "AD", "3C 5C 4D", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")
    refused(round_, lambda: round_.take_insurance("ann"), "PA 633c.5(z)", "already decided")


def test_633c5_z_insurance_closes_with_the_first_community_card() -> None:
    round_ = deal("10S 2H", "AD", "3C 5C 9D", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")
    round_.hit("bob")
    refused(round_, lambda: round_.take_insurance("ann"), "PA 633c.5(z)", "closed")


def test_633c5_z_no_even_money_a8() -> None:
    round_ = deal("AS KH", "AD", "5C", **NO_SIDES)
    assert not hasattr(round_, "take_even_money")
    before = snapshot(round_)
    with pytest.raises(InvalidNotationError, match="unknown verb 'even-money'"):
        round_.apply("ann even-money")
    assert snapshot(round_) == before


# -- the countdown clock ((z), (c)(2)) -----------------------------------------------------------


def test_633c5_z_countdown_default_stands_every_player_who_has_not_acted() -> None:
    round_ = deal("10S 2H", "9D", "5C 8D 9S", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")
    round_.apply("dealer countdown-expired")  # bob stands; then ann decides on 17
    assert round_.players["bob"].path is Path.STOOD
    assert round_.players_to_decide() == ["ann"]
    round_.stand("ann")
    assert round_.is_complete
    assert codes(round_.player_dealer("bob")) == "9D 5C 8D"
    assert [op.command for op in round_.operations if op.kind == "stand"] == [None, "ann stand"]
    assert round_.operations[
        [op.kind for op in round_.operations].index("countdown-expired")
    ].command == ("dealer countdown-expired")


def test_633c5_z_countdown_expiry_declines_insurance_and_stands() -> None:
    round_ = deal("AS KH", "AD", "5C 2D", ("ann",), **NO_SIDES)
    round_.countdown_expired()
    assert round_.wagers[-1].kind is WagerKind.BLACKJACK  # no insurance wager
    assert results(round_) == [("ann", 0, Result.BLACKJACK, 2500, "PA 633c.5(aa)(1)(ii), (ee)(2)")]


@pytest.mark.parametrize(
    ("start", "path", "designations"),
    [
        ("6S 5H", Path.DREW, ["hand 1"]),
        ("AS 6H", Path.STOOD, ["dealer"]),
        ("10S 2H", Path.STOOD, ["dealer"]),
    ],
)
def test_633c5_z_c2_countdown_option_hits_a_hard_11_or_less(
    start: str, path: Path, designations: list[str]
) -> None:
    round_ = deal(start, "9D", "2C 3C 8S 9S", countdown_default="hit-hard-11-or-less", **NO_SIDES)
    round_.countdown_expired()
    assert round_.players["ann"].path is path
    assert round_.players["ann"].designations[:1] == designations


def test_633c5_z_countdown_refused_when_no_decision_is_awaited() -> None:
    round_ = deal("10S 6H", "9D", "5C 4C", **NO_SIDES)
    round_.stand("ann")
    refused(round_, round_.countdown_expired, "PA 633c.5(z)", "no countdown clock")


# -- bad input ------------------------------------------------------------------------------------


def test_633c5_k_side_wager_after_the_first_card_refused() -> None:
    round_ = deal("10S 6H", "9D", "5C")
    refused(
        round_,
        lambda: round_.place_side_wager("ann", "royal_match", 500),
        "PA 633c.5(k)",
        "before the first card",
    )
    refused(round_, lambda: round_.place_wager("bob", 1000), "PA 633c.5(k)", "before the first")


def test_633c5_x_side_wager_needs_a_blackjack_wager_and_an_offered_wager() -> None:
    round_ = HybridSharedRound(HybridSharedRules(bet_the_set=False))
    with pytest.raises(IllegalActionError, match="Blackjack Wager before") as caught:
        round_.place_side_wager("ann", "royal_match", 500)
    assert caught.value.rule == "PA 633c.5(x)"
    round_.place_wager("ann", 1000)
    with pytest.raises(IllegalActionError, match="not offered"):
        round_.place_side_wager("ann", "bet_the_set", 500)
    with pytest.raises(IllegalActionError, match="outside the limits"):
        round_.place_side_wager("ann", "royal_match", 50)
    with pytest.raises(IllegalActionError, match="not a side wager"):
        round_.place_side_wager("ann", "ez_bust", 500)


def test_633c5_z_a_second_split_is_refused() -> None:
    round_ = deal("8S 8H", "9D", "8C 2D", **NO_SIDES)
    round_.split("ann")
    assert codes(round_.players["ann"].hands[0].hand) == "8S 8C"
    refused(round_, lambda: round_.split("ann"), "PA 633c.5(z)", "two hands")


def test_633c5_aa3_i_a_hit_after_a_double_is_refused() -> None:
    round_ = deal("6S 5H", "9D", "2C 3D 9S 8C", ("ann", "bob"), **NO_SIDES)
    round_.double_down("ann")
    round_.hit("bob")  # bob decides again on 13: the table waits
    assert round_.players_to_decide() == ["bob"]
    refused(round_, lambda: round_.hit("ann"), "PA 633c.5(aa)(3)(i)", "doubled hand")


def test_633c5_z_a_hit_on_21_is_refused() -> None:
    round_ = deal("8S 8H", "9D", "5C 2D 9S", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")  # 8 8 5 = 21
    round_.split("bob")  # hand 1: 8 5 = 13
    assert round_.players_to_decide() == ["bob"]
    refused(round_, lambda: round_.hit("ann"), "PA 633c.5(z)", "21 may not draw")


def test_633c5_z_a_hit_on_blackjack_is_refused() -> None:
    fresh = HybridSharedRound(HybridSharedRules(**NO_SIDES))
    fresh.place_wager("ann", 1000)
    fresh.close_wagering()
    for code in ("AS", "9D", "KH"):
        fresh.deal_card(code)
    refused(fresh, lambda: fresh.hit("ann"), "PA 633c.5(z)", "Blackjack")


def test_633c5_aa3_a_decision_before_the_card_it_waits_for_is_refused() -> None:
    round_ = deal("10S 2H", "9D", "3C 5C 8D", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")
    refused(round_, lambda: round_.stand("ann"), "PA 633c.5(aa)(3)", "next community card")


def test_633a11_split_of_unequal_cards_refused() -> None:
    round_ = deal("10S 9H", "9D", "3C", **NO_SIDES)
    refused(round_, lambda: round_.split("ann"), "PA 633a.11(a)", "identical value")


def test_633a10_double_after_three_cards_refused() -> None:
    round_ = deal("5S 2H", "9D", "3C 5C 8D 9C", ("ann", "bob"), **NO_SIDES)
    round_.hit("ann")
    round_.hit("bob")
    refused(round_, lambda: round_.double_down("ann"), "PA 633a.10", "first two cards")


def test_commands_apply_the_notation() -> None:
    round_ = deal("6S 5H", "9D", "10C 8D", **NO_SIDES)
    round_.apply("ann double $5")
    assert round_.wagers[0].amount == 1500
    assert [op.command for op in round_.operations if op.command] == ["ann double $5.00"]
    assert round_.phase is Phase.COMPLETE
    assert Card.parse("10C") in round_.players["ann"].hands[0].hand.cards
