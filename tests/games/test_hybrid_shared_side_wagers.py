"""Royal Match 21 with the Crown Treasure bonus, Bet the Set and King's Bounty on a hybrid table
without a hole card (PA 633c.5(x), (dd), (ee)(3)–(5)): every line of every candidate paytable of
``referenced-rules.md`` §6.2–6.4 on hand-built cards; only the highest line pays; a pair is the
same rank (A-12); Crown Treasure and King's Bounty's top line are judged on the dealer's two
cards as formed for that player (A-11)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from tablejack.core import Result, RulesError, Shoe, WagerKind
from tablejack.games.hybrid_shared import HybridSharedRound
from tablejack.games.hybrid_shared_rules import (
    BET_THE_SET_TABLES,
    KINGS_BOUNTY_TABLES,
    ROYAL_MATCH_TABLES,
    HybridSharedRules,
)

AMOUNT = 500


def play(
    start: str, first: str, community: str, kind: str, *, players: int = 1, **rules: Any
) -> HybridSharedRound:
    """Everyone stands at the countdown; each player places a $5 ``kind`` wager."""
    table_rules = HybridSharedRules(**rules)
    one, two = start.split()
    round_ = HybridSharedRound(
        table_rules, Shoe.prearranged(f"{one} {first} {two} {community}", decks=table_rules.decks)
    )
    for number in range(players):
        name = f"p{number + 1}"
        round_.place_wager(name, 1000)
        round_.place_side_wager(name, kind, AMOUNT)
    round_.close_wagering()
    while not round_.is_complete:
        round_.countdown_expired()
    return round_


def side(round_: HybridSharedRound, kind: WagerKind) -> list[tuple[Result, int, str, str | None]]:
    out = []
    for op in round_.operations:
        s = op.settlement
        if s is not None and s.kind is kind:
            out.append((s.result, s.returned, s.clause, op.note))
    return out


def paid(odds: Fraction) -> int:
    return AMOUNT + int(AMOUNT * odds)


# -- Royal Match 21 (§ 633a.13(f) candidates, §6.2) ------------------------------------------------

ROYAL_CASES = [
    # start, line
    ("KH QH", "royal-match"),
    ("AS KS", "suited-blackjack"),
    ("9H 4H", "suited-match"),
    ("QD KD", "royal-match"),
]


@pytest.mark.parametrize("table", sorted(ROYAL_MATCH_TABLES))
@pytest.mark.parametrize(("start", "line"), ROYAL_CASES)
def test_633c5_ee3_royal_match_every_line_of_every_candidate_table(
    table: str, start: str, line: str
) -> None:
    round_ = play(start, "9D", "8C", "royal_match", royal_match_paytable=table)
    lines = dict(ROYAL_MATCH_TABLES[table])
    # A table without a suited-Blackjack line pays a suited A-K as a suited match.
    paying = line if line in lines else "suited-match"
    assert side(round_, WagerKind.ROYAL_MATCH) == [
        (Result.WIN, paid(lines[paying]), "PA 633c.5(dd), (ee)(3)", paying)
    ]


def test_633c5_ee3_royal_match_loses_on_unsuited_cards() -> None:
    round_ = play("KH QD", "9D", "8C", "royal_match")
    assert side(round_, WagerKind.ROYAL_MATCH) == [(Result.LOSE, 0, "PA 633c.5(dd)", "no line")]


def test_633c5_ee3_a11_crown_treasure_on_the_dealers_two_cards_for_that_player() -> None:
    # p1 stands: the dealer's hole card for p1 is QD (Royal Match K♦ Q♦): Crown Treasure.
    # p2 hits: QD goes to p2's hand, the dealer's second card for p2 is 5C: no bonus.
    rules = HybridSharedRules()
    round_ = HybridSharedRound(rules, Shoe.prearranged("KH KD QH QD 5C 3S", decks=6))
    for name in ("p1", "p2"):
        round_.place_wager(name, 1000)
        round_.place_side_wager(name, "royal_match", AMOUNT)
    round_.close_wagering()
    assert side(round_, WagerKind.ROYAL_MATCH) == []  # waits for each dealer's second card
    round_.stand("p1")
    round_.hit("p2")  # 20 + Q = bust
    settled = {
        s.player: (s.returned, s.clause)
        for s in round_.settlements
        if s.kind is WagerKind.ROYAL_MATCH
    }
    assert settled == {
        "p1": (paid(Fraction(25) + Fraction(1000)), "PA 633c.5(dd), (ee)(3); A-11"),
        "p2": (paid(Fraction(25)), "PA 633c.5(dd), (ee)(3)"),
    }
    assert [
        op.note
        for op in round_.operations
        if op.settlement and op.settlement.kind is WagerKind.ROYAL_MATCH
    ] == [
        "royal-match + crown-treasure",
        "royal-match",
    ]


def test_633c5_ee3_crown_treasure_replacing_the_line_and_its_amount_configurable() -> None:
    round_ = play(
        "KH QH",
        "KD",
        "QD",
        "royal_match",
        crown_treasure_pays=Fraction(500),
        crown_treasure_in_addition=False,
    )
    assert side(round_, WagerKind.ROYAL_MATCH) == [
        (Result.WIN, paid(Fraction(500)), "PA 633c.5(dd), (ee)(3); A-11", "crown-treasure")
    ]


def test_633c5_ee3_no_crown_treasure_settles_with_the_deal() -> None:
    rules = HybridSharedRules(crown_treasure=False)
    round_ = HybridSharedRound(rules, Shoe.prearranged("KH 9D QH", decks=6))
    round_.place_wager("p1", 1000)
    round_.place_side_wager("p1", "royal_match", AMOUNT)
    round_.close_wagering()
    assert side(round_, WagerKind.ROYAL_MATCH) == [
        (Result.WIN, paid(Fraction(25)), "PA 633c.5(dd), (ee)(3)", "royal-match")
    ]


# -- Bet the Set (§ 633a.13(g) candidates, §6.3) -----------------------------------------------------


@pytest.mark.parametrize("table", sorted(BET_THE_SET_TABLES))
@pytest.mark.parametrize(
    ("start", "line"), [("7S 7S", "suited-pair"), ("7S 7D", "pair"), ("KH KH", "suited-pair")]
)
def test_633c5_ee4_bet_the_set_every_line_of_every_candidate_table(
    table: str, start: str, line: str
) -> None:
    round_ = play(start, "9D", "8C 2C", "bet_the_set", bet_the_set_paytable=table)
    lines = dict(BET_THE_SET_TABLES[table])
    paying = line if line in lines else "pair"  # a suited pair is a pair (same rank)
    assert side(round_, WagerKind.BET_THE_SET) == [
        (Result.WIN, paid(lines[paying]), "PA 633c.5(dd), (ee)(4)", paying)
    ]


def test_633c5_ee4_a12_king_ten_is_not_a_pair_for_bet_the_set_but_splits() -> None:
    round_ = play("KS 10S", "9D", "8C", "bet_the_set")
    assert side(round_, WagerKind.BET_THE_SET) == [(Result.LOSE, 0, "PA 633c.5(dd)", "no line")]
    fresh = HybridSharedRound(HybridSharedRules(), Shoe.prearranged("KS 9D 10S", decks=6))
    fresh.place_wager("p1", 1000)
    fresh.close_wagering()
    assert fresh.can_split("p1")


# -- King's Bounty (§ 633a.13(h) candidates, §6.4) ---------------------------------------------------

KINGS_CASES = [
    ("KS KS", "KD", "AC", "spade-kings-dealer-blackjack"),
    ("KS KS", "9D", "8C", "spade-kings"),
    ("KH KH", "9D", "8C", "suited-kings"),
    ("QD QD", "9D", "8C", "suited-queens-jacks-tens"),
    ("JC JC", "9D", "8C", "suited-queens-jacks-tens"),
    ("10H 10H", "9D", "8C", "suited-queens-jacks-tens"),
    ("AH 9H", "9D", "8C", "suited-20"),
    ("KH QH", "9D", "8C", "suited-20"),
    ("KH KD", "9D", "8C", "unsuited-kings"),
    ("QH 10S", "9D", "8C", "unsuited-20"),
    ("AS 9D", "9D", "8C", "unsuited-20"),
]


@pytest.mark.parametrize("table", sorted(KINGS_BOUNTY_TABLES))
@pytest.mark.parametrize(("start", "first", "community", "line"), KINGS_CASES)
def test_633c5_ee5_kings_bounty_every_line_of_every_candidate_table(
    table: str, start: str, first: str, community: str, line: str
) -> None:
    round_ = play(start, first, community, "kings_bounty", kings_bounty_paytable=table)
    odds = dict(KINGS_BOUNTY_TABLES[table])[line]
    clause = "PA 633c.5(dd), (ee)(5)" + ("; A-11" if line.endswith("dealer-blackjack") else "")
    assert side(round_, WagerKind.KINGS_BOUNTY) == [(Result.WIN, paid(odds), clause, line)]


def test_633c5_ee5_a11_spade_kings_top_line_needs_that_players_dealer_blackjack() -> None:
    # p1 stands: dealer K♦ A♣ = Blackjack for p1; p2 hits: A♣ goes to p2, dealer K♦ 7♣ for p2.
    round_ = HybridSharedRound(HybridSharedRules(), Shoe.prearranged("KS KD KS AC 7C", decks=6))
    for name in ("p1", "p2"):
        round_.place_wager(name, 1000)
        round_.place_side_wager(name, "kings_bounty", 100)
    round_.close_wagering()
    round_.stand("p1")
    round_.hit("p2")  # K K A = 21
    settled = {s.player: s.returned for s in round_.settlements if s.kind is WagerKind.KINGS_BOUNTY}
    assert settled == {"p1": 100 + 100 * 1000, "p2": 100 + 100 * 100}


def test_633c5_ee5_kings_bounty_loses_without_a_20() -> None:
    round_ = play("10S 9S", "9D", "8C", "kings_bounty")
    assert side(round_, WagerKind.KINGS_BOUNTY) == [(Result.LOSE, 0, "PA 633c.5(dd)", "no line")]


# -- custom paytables as data ---------------------------------------------------------------------


def test_633c5_ee4_custom_paytable_from_the_rules_submission() -> None:
    rules = HybridSharedRules.from_mapping(
        {"bet_the_set_paytable": {"pair": "11 to 1", "suited-pair": "30 to 1"}}
    )
    assert rules.bet_the_set_lines() == (("suited-pair", Fraction(30)), ("pair", Fraction(11)))
    assert HybridSharedRules.from_mapping(rules.to_mapping()) == rules
    round_ = play(
        "7S 7D", "9D", "8C 2C", "bet_the_set", bet_the_set_paytable=rules.bet_the_set_paytable
    )
    assert side(round_, WagerKind.BET_THE_SET)[0][1] == paid(Fraction(11))


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("royal_match_paytable", "wizard-v9", "not a candidate table"),
        ("kings_bounty_paytable", {"four-aces": "50 to 1"}, "not a line"),
        ("royal_match_paytable", {"royal-match": "lots"}, "odds"),
        ("bet_the_set_paytable", {}, "no lines"),
    ],
)
def test_633c5_ee_bad_paytables_are_rules_errors(field: str, value: Any, match: str) -> None:
    with pytest.raises(RulesError, match=match):
        HybridSharedRules.from_mapping({field: value})
