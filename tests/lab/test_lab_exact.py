"""Exact analysis: dealer probabilities, action values, generated strategy, house edge,
insurance and EZ Bust, checked against published figures (tests/lab/data) and independent
rational arithmetic."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tablejack.games import strategy as engine_strategy
from tablejack.lab import exact
from tablejack.lab.model import CARD_LABELS, DEALER_OUTCOMES, AnalysisRules, card_class

DATA = Path(__file__).parent / "data"
DEALER = json.loads((DATA / "dealer_probabilities.json").read_text())
PLAYER = json.loads((DATA / "player_values.json").read_text())


@pytest.mark.parametrize("table", DEALER["tables"], ids=lambda t: t["source"][:60])
def test_dealer_probabilities_match_published_tables(table: dict) -> None:
    rules = AnalysisRules(decks=table["decks"], h17=table["h17"])
    for up, expected in table["upcards"].items():
        got = exact.dealer_probabilities(rules, up, post_peek=table["post_peek"])
        for name, value in zip(DEALER_OUTCOMES, expected, strict=True):
            assert got[name] == pytest.approx(value, abs=10 ** -table["digits"]), (up, name)


@pytest.mark.parametrize("entry", DEALER["bust_only"], ids=lambda t: t["source"][:40])
def test_dealer_bust_probabilities_match_published_figures(entry: dict) -> None:
    for decks, row in entry["by_decks"].items():
        rules = AnalysisRules(decks=int(decks), h17=entry["h17"])
        for up, value in row.items():
            got = exact.dealer_probabilities(rules, up, post_peek=entry["post_peek"])["bust"]
            assert got == pytest.approx(value, abs=0.6 * 10 ** -entry["digits"]), (decks, up)


def _rational_dealer(counts: tuple[int, ...], up: int, h17: bool, finite: bool) -> list[Fraction]:
    """An independent dealer recursion in exact rational arithmetic (ordered draws)."""

    @cache
    def go(counts: tuple[int, ...], hard: int, ace: bool, cards: int) -> tuple[Fraction, ...]:
        soft = ace and hard <= 11
        total = hard + 10 if soft else hard
        out = [Fraction(0)] * 7
        if total > 21:
            out[6] = Fraction(1)
            return tuple(out)
        if total >= 17 and not (h17 and soft and total == 17):
            out[5 if total == 21 and cards == 2 else total - 17] = Fraction(1)
            return tuple(out)
        n = sum(counts)
        for r, c in enumerate(counts):
            if c == 0:
                continue
            nxt = list(counts)
            if finite:
                nxt[r] -= 1
            sub = go(tuple(nxt), hard + r + 1, ace or r == 0, cards + 1)
            out = [o + Fraction(c, n) * s for o, s in zip(out, sub, strict=True)]
        return tuple(out)

    return list(go(counts, up + 1, up == 0, 1))


@pytest.mark.parametrize("h17", [False, True], ids=["S17", "H17"])
def test_infinite_deck_dealer_probabilities_equal_rational_recursion(h17: bool) -> None:
    rules = AnalysisRules(decks=None, h17=h17)
    for up in range(10):
        expected = _rational_dealer((1, 1, 1, 1, 1, 1, 1, 1, 1, 4), up, h17, finite=False)
        got = exact.dealer_probabilities(rules, up)
        for name, value in zip(DEALER_OUTCOMES, expected, strict=True):
            assert got[name] == pytest.approx(float(value), abs=1e-12)


def test_finite_shoe_dealer_probabilities_with_cards_removed_equal_rational_recursion() -> None:
    rules = AnalysisRules(decks=1, h17=True)
    removed = ["5", "5", "T", "A"]
    counts = [4] * 9 + [16]
    for card in removed:
        counts[card_class(card)] -= 1
    for up in (0, 4, 9):
        shoe = list(counts)
        shoe[up] -= 1
        expected = _rational_dealer(tuple(shoe), up, True, finite=True)
        got = exact.dealer_probabilities(rules, up, removed=removed)
        for name, value in zip(DEALER_OUTCOMES, expected, strict=True):
            assert got[name] == pytest.approx(float(value), abs=1e-12)


def test_post_peek_probabilities_exclude_blackjack_and_sum_to_one() -> None:
    rules = AnalysisRules(decks=6)
    for up in ("A", "T"):
        p = exact.dealer_probabilities(rules, up, post_peek=True)
        assert p["blackjack"] == 0.0
        assert sum(p.values()) == pytest.approx(1.0, abs=1e-12)
    assert exact.dealer_probabilities(rules, "T")["blackjack"] == pytest.approx(24 / 311)


def test_removing_more_cards_than_the_shoe_holds_raises() -> None:
    with pytest.raises(ValueError, match="More cards removed"):
        exact.dealer_probabilities(AnalysisRules(decks=1), "2", removed=["2"] * 4)


@pytest.mark.parametrize("entry", PLAYER["hand_values"], ids=lambda e: f"{e['decks']}D")
def test_action_values_match_wizard_of_odds_appendix_9(entry: dict) -> None:
    rules = AnalysisRules(decks=entry["decks"], h17=entry["h17"], late_surrender=False)
    table = {(row["up"], row["hand"]): row for row in exact.analyse(rules).hand_table()}
    for hand in entry["hands"]:
        c1, c2 = sorted(hand["hand"].split(","), key=card_class)
        row = table[(hand["up"], f"{c1},{c2}")]
        for action in ("stand", "hit", "double"):
            if action in hand:
                assert row["ev"][action] == pytest.approx(hand[action], abs=1.5e-6), action


@pytest.mark.parametrize(
    "case", PLAYER["game_returns"][0]["cases"], ids=lambda c: f"{c['decks']}D-{c['h17']}-{c['das']}"
)
def test_game_return_is_within_the_composition_dependent_gain_of_appendix_9(case: dict) -> None:
    rules = AnalysisRules(
        decks=case["decks"], h17=case["h17"], das=case["das"], late_surrender=False
    )
    player_return = -exact.analyse(rules).house_edge
    # total-dependent play can only give up value, and no more than the tolerance
    assert case["return"] - case["tolerance"] <= player_return <= case["return"] + 2e-5


def test_generated_strategy_reproduces_the_published_multi_deck_chart() -> None:
    """6 decks, S17, DAS, late surrender: the chart the engine's bots play
    (tablejack.games.strategy, the standard published chart)."""
    charts = exact.analyse(AnalysisRules(decks=6)).strategy.charts()
    letters = {"H": "H", "S": "S", "D": "D", "Ds": "d", "R": "R", "P": "P"}
    for total, row in engine_strategy.HARD.items():
        assert "".join(letters[c] for c in charts["hard"][str(total)]) == row, total
    for total, row in engine_strategy.SOFT.items():
        assert "".join(letters[c] for c in charts["soft"][f"A,{total - 11}"]) == row, total
    for pair, row in engine_strategy.PAIRS.items():
        if row.startswith("-"):
            continue
        label = "A,A" if pair == 1 else f"{pair},{pair}"
        got = "".join(
            "P" if c == "P" else "H" if c in "HD" else "S" for c in charts["pairs"][label]
        )
        want = "".join("P" if c == "P" else ("S" if c == "S" else "H") for c in row)
        assert got == want, label


def test_house_edge_six_decks_s17_das_ls_resplit_aces_is_in_the_published_band() -> None:
    rules = AnalysisRules(decks=6, resplit_aces=True)
    assert 0.0026 <= exact.analyse(rules).house_edge <= 0.0029


def test_house_edge_responds_to_each_rule_in_the_known_direction() -> None:
    base = exact.analyse(AnalysisRules(decks=6)).house_edge
    assert exact.analyse(AnalysisRules(decks=6, h17=True)).house_edge > base + 0.0015
    assert exact.analyse(AnalysisRules(decks=6, das=False)).house_edge > base + 0.001
    assert exact.analyse(AnalysisRules(decks=6, late_surrender=False)).house_edge > base
    assert exact.analyse(AnalysisRules(decks=8)).house_edge > base
    assert exact.analyse(AnalysisRules(decks=6, blackjack_pays=1.2)).house_edge > base + 0.013


def test_633a8_insurance_pays_2_to_1_and_loses_the_ten_short_shoe_edge() -> None:
    figures = exact.insurance(AnalysisRules(decks=6))
    p = Fraction(96, 311)
    assert figures["win_probability"] == pytest.approx(float(p))
    assert figures["house_edge"] == pytest.approx(float(1 - 3 * p))
    assert sum(line["return"] for line in figures["lines"]) == pytest.approx(-figures["house_edge"])


def test_insurance_per_hand_depends_on_the_players_ten_value_cards() -> None:
    rules = AnalysisRules(decks=1)
    assert exact.insurance_for_hand(rules, "T", "T") < exact.insurance_for_hand(rules, "5", "6")


def test_633b16_f_ez_bust_wins_only_on_a_dealer_bust() -> None:
    rules = AnalysisRules(decks=6, ez_bust=True)
    ez = exact.ez_bust(rules)
    for up, row in ez["by_up"].items():
        assert row["win"] + row["lose"] == pytest.approx(1.0)
        assert row["push"] == 0.0
        bust = exact.dealer_probabilities(rules, up)["bust"]
        assert row["win"] == pytest.approx(bust, abs=0.002)  # the player's cards barely matter
    assert ez["by_up"]["2"]["house_edge"] == pytest.approx(1 - 2 * ez["by_up"]["2"]["win"])
    assert 0.20 < ez["house_edge"] < 0.23


def test_633b16_f_a21_two_card_soft_17_is_a_dealer_stand_and_loses() -> None:
    rules = AnalysisRules(decks=1)
    p = exact.dealer_probabilities(rules, "6", removed=["T", "T"])
    # the dealer's 6 + A stands on soft 17 with two cards: a 17, never a bust
    assert p["17"] >= Fraction(4, 49)


def test_633b16_g_push_all_pushes_blackjacks_and_busts_on_a_one_player_table() -> None:
    rules = AnalysisRules(decks=6, ez_bust=True, ez_bust_push_all=True)
    plain = exact.ez_bust(rules, push_all=False)
    push = exact.ez_bust(rules)
    assert push["push_all"] is True
    assert push["push"] > 0.05  # the player's Blackjacks and busts
    assert push["win"] + push["lose"] + push["push"] == pytest.approx(1.0)
    assert push["win"] < plain["win"]


def test_strategy_charts_text_csv_and_codes() -> None:
    strategy = exact.analyse(AnalysisRules(decks=6)).strategy
    assert strategy.code("hard", 11, "T") == "D"
    assert strategy.code("soft", 18, "3") == "Ds"
    assert strategy.code("pair", 11, "A") == "P"
    assert strategy.to_csv().splitlines()[0] == "table,hand,2,3,4,5,6,7,8,9,T,A"
    assert "pairs:" in strategy.to_text()


def test_composition_exceptions_are_small_gains_in_a_shoe() -> None:
    analysis = exact.analyse(AnalysisRules(decks=1, late_surrender=False))
    exceptions = analysis.composition_exceptions()
    assert exceptions, "a single deck has composition-dependent plays"
    assert all(0 < e["gain"] < 0.05 for e in exceptions)
    assert {e["up"] for e in exceptions} <= set(CARD_LABELS)


@settings(max_examples=25, deadline=None)
@given(
    up=st.integers(min_value=0, max_value=9),
    removed=st.lists(st.integers(min_value=0, max_value=9), max_size=8),
    h17=st.booleans(),
)
def test_property_dealer_probabilities_for_any_removal_equal_rational_recursion(
    up: int, removed: list[int], h17: bool
) -> None:
    counts = [4] * 9 + [16]
    counts[up] -= 1
    for card in removed:
        counts[card] -= 1
    assume(min(counts) >= 0)
    got = exact.dealer_probabilities(AnalysisRules(decks=1, h17=h17), up, removed=removed)
    expected = _rational_dealer(tuple(counts), up, h17, finite=True)
    assert sum(got.values()) == pytest.approx(1.0, abs=1e-12)
    for name, value in zip(DEALER_OUTCOMES, expected, strict=True):
        assert got[name] == pytest.approx(float(value), abs=1e-12)
