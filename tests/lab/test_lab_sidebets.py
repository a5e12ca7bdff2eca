"""Exact side-wager math of the hybrid-shared game (PA 633c.5(x), (dd), (ee)): the published
house edges of referenced-rules §6.2-6.4 (tests/lab/data/side_wager_edges.json) and closed forms
in exact rational arithmetic."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from tablejack.games.hybrid_shared_rules import (
    BET_THE_SET_TABLES,
    KINGS_BOUNTY_TABLES,
    ROYAL_MATCH_TABLES,
    HybridSharedRules,
)
from tablejack.lab import sidebets

DATA = json.loads((Path(__file__).parent / "data" / "side_wager_edges.json").read_text())
TABLES = {
    "royal_match": ROYAL_MATCH_TABLES,
    "bet_the_set": BET_THE_SET_TABLES,
    "kings_bounty": KINGS_BOUNTY_TABLES,
}
FUNCTIONS = {
    "royal_match": sidebets.royal_match,
    "bet_the_set": sidebets.bet_the_set,
    "kings_bounty": sidebets.kings_bounty,
}
CASES = [(wager, entry) for wager in TABLES for entry in DATA[wager]]


@pytest.mark.parametrize(
    ("wager", "entry"), CASES, ids=[f"{w}-{e['paytable']}-{e['decks']}d" for w, e in CASES]
)
def test_633a13_side_wager_edges_match_published_figures(wager: str, entry: dict) -> None:
    table = TABLES[wager][entry["paytable"]]
    got = FUNCTIONS[wager](entry["decks"], table)["house_edge"] * 100
    assert round(got, entry["digits"]) == pytest.approx(entry["house_edge_percent"], abs=1e-9)


def _edge(result: dict) -> Fraction:
    return Fraction(result["house_edge_exact"])


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_633a13g_bet_the_set_equals_the_closed_form(decks: int) -> None:
    n = 52 * decks
    suited = Fraction(decks - 1, n - 1)
    pair = Fraction(4 * decks - 1, n - 1) - suited
    result = sidebets.bet_the_set(decks, BET_THE_SET_TABLES["20-10"])
    assert _edge(result) == 1 - 21 * suited - 11 * pair
    assert Fraction(
        sidebets.bet_the_set(1, BET_THE_SET_TABLES["one-deck-15"])["house_edge_exact"]
    ) == Fraction(1, 17)


@pytest.mark.parametrize("decks", [6, 8])
def test_633a13f_royal_match_and_crown_treasure_equal_the_closed_form(decks: int) -> None:
    n = 52 * decks
    suited = Fraction(13 * decks - 1, n - 1)
    royal = 8 * Fraction(decks, n) * Fraction(decks, n - 1)
    # the dealer's two cards given a player royal match: three other suits, or the same suit
    # with one king and one queen fewer
    dealer = Fraction(6 * decks**2 + 2 * (decks - 1) ** 2, (n - 2) * (n - 3))
    crown = royal * dealer
    table = ROYAL_MATCH_TABLES["wizard-v1"]
    plain = sidebets.royal_match(decks, table)
    assert _edge(plain) == 1 - 26 * royal - Fraction(7, 2) * (suited - royal)
    bonus = sidebets.royal_match(decks, table, crown_treasure=Fraction(1000))
    assert _edge(bonus) == _edge(plain) - 1000 * crown
    lines = {line["line"]: line for line in bonus["lines"]}
    assert Fraction(lines["royal-match + crown-treasure"]["probability_exact"]) == crown
    replaced = sidebets.royal_match(decks, table, crown_treasure=Fraction(1000), in_addition=False)
    assert _edge(replaced) == _edge(plain) - (1000 - 25) * crown


def test_633a13h_kings_bounty_top_line_needs_the_dealer_blackjack() -> None:
    decks = 6
    n = 52 * decks
    spade_kings = Fraction(decks, n) * Fraction(decks - 1, n - 1)
    # the dealer's Blackjack given two kings of spades: 4d aces, 16d - 2 ten-values left
    dealer_bj = 2 * Fraction(4 * decks, n - 2) * Fraction(16 * decks - 2, n - 3)
    result = sidebets.kings_bounty(decks, KINGS_BOUNTY_TABLES["six-deck"])
    lines = {line["line"]: line for line in result["lines"]}
    top = Fraction(lines["spade-kings-dealer-blackjack"]["probability_exact"])
    assert top == spade_kings * dealer_bj
    assert Fraction(lines["spade-kings"]["probability_exact"]) == spade_kings * (1 - dealer_bj)
    assert sum(Fraction(line["probability_exact"]) for line in result["lines"]) == 1


def test_side_wager_reads_the_rules_paytables() -> None:
    rules = HybridSharedRules(decks=8, bet_the_set_paytable="20-10", crown_treasure=False)
    assert sidebets.side_wager(rules, "bet_the_set")["house_edge"] == pytest.approx(
        0.009640, abs=5e-6
    )
    assert sidebets.side_wager(rules, "royal_match")["house_edge"] == pytest.approx(
        0.064597, abs=5e-7
    )
    with pytest.raises(ValueError, match="not a side wager"):
        sidebets.side_wager(rules, "ez_bust")
