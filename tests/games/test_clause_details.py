"""Clauses whose behaviour other tests exercise under broader names, each checked here on its
own with a fixed card order, so that the certification's clause matrix (``docs/certify.md``)
finds a test carrying its id: card values (PA 633c.5(h), NJ MAB (b)(2)), the version A deal
(n)(1)-(4), the version B shared start (w), (y)(1)-(3), a dealer Blackjack against a 21 of
more cards (t)(3)(iii), the Buzzer Beater against a hand under 19 (u)(2)(ii), EZ Bust inside a
Chapter 633a round (633b.16(b), (e)), and the NJ dealer's collecting and paying ((d)(4))."""

from __future__ import annotations

from tablejack.core import ClassicRules, Result, Shoe, WagerKind
from tablejack.core.hands import Hand
from tablejack.games.classic import ClassicRound
from tablejack.games.hybrid import HybridRound, HybridRules
from tablejack.games.hybrid_shared import HybridSharedRound
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRound, MultiActionRules

NO_SIDES = {"royal_match": False, "bet_the_set": False, "kings_bounty": False}


def test_633c5_h1_h2_h3_card_values() -> None:
    assert Hand.of("2S 9D").total == 11  # (h)(1) face value
    assert Hand.of("10S 9D").total == 19
    assert Hand.of("JS QD").total == 20 and Hand.of("KS 5D").total == 15  # (h)(2)
    soft = Hand.of("AS 9D")  # (h)(3): 11 unless that exceeds 21
    assert (soft.total, soft.is_soft) == (20, True)
    soft.add(Hand.of("5C").cards[0])
    assert (soft.total, soft.is_soft) == (15, False)
    assert Hand.of("AS AD").total == 12


def test_nj_b2_i_ii_card_values() -> None:
    rules = MultiActionRules(decks=1)
    round_ = MultiActionRound(rules, Shoe.prearranged("9S 7D KH QC 5S", decks=1))
    round_.place_wager(1, "ann", (1000, 1000, 0))
    round_.close_wagering()
    hand = round_.seats[1].hands[0].hand
    assert hand.total == 19  # (b)(2)(i) nine counts 9, (b)(2)(ii) king 10
    assert Hand.of("10S JD").total == Hand.of("QS KD").total == 20


def test_633c5_n1_n2_n3_n4_deal_order_and_the_hole_card_face_down() -> None:
    # Positions 1 and 3 selected: (n)(1) one card up to each selected position (farthest to the
    # dealer's left first), (n)(2) one up to the dealer, (n)(3) a second card to each, (n)(4)
    # the dealer's second card face down.
    round_ = HybridRound(HybridRules(), Shoe.prearranged("10S 9C 10D 7H 9D 8C", decks=6))
    round_.place_wager("ann", 1, 1000)
    round_.place_wager("cat", 3, 1000)
    round_.close_wagering()
    dealt = [(op.target, op.card.code) for op in round_.operations if op.card is not None]
    assert dealt == [
        ("position 1", "10S"),
        ("position 3", "9C"),
        ("dealer up card", "10D"),
        ("position 1", "7H"),
        ("position 3", "9D"),
        ("dealer hole card", "8C"),
    ]
    dealer = round_.terminal_view("ann")["dealer"]
    assert dealer["cards"] == ["10D"] and dealer["hole_card"] is None and dealer["hole_card_dealt"]


def test_633c5_u2_ii_buzzer_beater_loses_when_the_dealer_beats_a_hand_under_19() -> None:
    round_ = HybridRound(HybridRules(), Shoe.prearranged("10S 10D 7H 8C", decks=6))
    round_.place_wager("ann", 1, 1000)
    round_.place_buzzer_beater("ann", 500)
    round_.close_wagering()
    round_.stand("ann")  # 17 against the dealer's 18
    (buzzer,) = [s for s in round_.settlements if s.kind is WagerKind.BUZZER_BEATER]
    assert (buzzer.result, buzzer.clause) == (Result.LOSE, "PA 633c.5(u)(2)(ii)")


def test_633c5_w_y1_y2_y3_no_hole_card_and_one_shared_start() -> None:
    # (y)(1) every player's first card, (y)(2) the dealer's first card, (y)(3) every player's
    # second card; (w) no hole card: after the deal the dealer holds one card and no card is
    # asked for until the players decide ((y)(4)).
    rules = HybridSharedRules(**NO_SIDES)
    round_ = HybridSharedRound(rules, Shoe.prearranged("10S KD 6H 5C 2C 3C", decks=6))
    for name in ("ann", "bob"):
        round_.place_wager(name, 1000)
    round_.close_wagering()
    for name in ("ann", "bob"):
        assert [c.code for c in round_.players[name].hands[0].hand.cards] == ["10S", "6H"]
        assert [c.code for c in round_.player_dealer(name).cards] == ["KD"]
    assert round_.card_request is None and round_.shoe is not None and round_.shoe.remaining == 3


def test_633c5_cc_t3iii_dealer_blackjack_beats_a_21_of_more_cards() -> None:
    # 5 6 hits a king: 21 of three cards. The dealer's ace takes the next card, a king:
    # Blackjack, which beats the multi-card 21 ((cc) applying (t)(3)(iii)).
    rules = HybridSharedRules(**NO_SIDES)
    round_ = HybridSharedRound(rules, Shoe.prearranged("5S AD 6H KC KH", decks=6))
    round_.place_wager("ann", 1000)
    round_.close_wagering()
    round_.hit("ann")
    (settlement,) = round_.settlements
    assert settlement.result is Result.LOSE
    assert settlement.clause == "PA 633c.5(bb)(1), (t)(3)(iii)"


def test_633b16_b_e_ez_bust_inside_a_chapter_633a_round() -> None:
    # (b) the rest of the round is Chapter 633a; (e) after the EZ Bust window the round is
    # completed under 633a.7: the player hits and stands, the dealer draws to 17.
    rules = ClassicRules(ez_bust=True, decks=1)
    round_ = ClassicRound(rules, Shoe.prearranged("10S 5H 2D 9C 7S 4D", decks=1))
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    round_.place_ez_bust(1)
    round_.hit(1)  # 12 + 7 = 19
    round_.stand(1)
    assert round_.is_complete and round_.dealer.total == 18  # 5 9 4
    assert [(s.kind, s.result, s.clause) for s in round_.settlements] == [
        (WagerKind.EZ_BUST, Result.LOSE, "PA 633b.16(f)(2)"),
        (WagerKind.BLACKJACK, Result.WIN, "PA 633a.13"),
    ]


def test_nj_d4_the_dealer_collects_losing_and_pays_winning_wagers() -> None:
    # ann 20 and bob 15 stand against the dealer's 10 8 = 18 in all three rounds.
    rules = MultiActionRules(decks=2)
    order = "10S 9S 10D  KH 6C  8S  8D  8H"
    round_ = MultiActionRound(rules, Shoe.prearranged(order, decks=2))
    round_.place_wager(1, "ann", (1000, 1000, 1000))
    round_.place_wager(2, "bob", (1000, 1000, 1000))
    round_.close_wagering()
    round_.stand(1)
    round_.stand(2)
    assert round_.is_complete
    assert round_.player_net() == {"ann": 3000, "bob": -3000}
    assert round_.house_net() == 0
