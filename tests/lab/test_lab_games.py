"""The lab's other games: hybrid (PA 633c.5 version A, Buzzer Beater), hybrid-shared (version B,
no hole card) and multi-action (NJ): the no-hole-card dealer-Blackjack readings (A-10, A-19,
A-29), the Buzzer Beater's joint distribution, the plug-in through ``lab.games`` and the par
sheets of the rules files."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.lab import exact
from tablejack.lab._exact_kernels import V_DOUBLE
from tablejack.lab.buzzer import buzzer_beater, joint_final_hands
from tablejack.lab.games import lab_game
from tablejack.lab.model import AnalysisRules

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- the rules each game's analysis reads ----------------------------------------------------


def test_633c5_z_hybrid_shared_analysis_is_the_no_hole_card_game() -> None:
    analysis = AnalysisRules.from_rules(HybridSharedRules(decks=8))
    assert (analysis.decks, analysis.peek, analysis.max_split_hands) == (8, False, 2)
    assert analysis.late_surrender and not analysis.resplit_aces and not analysis.hit_split_aces
    assert not analysis.double_full_amount and not analysis.split_full_amount
    full = HybridSharedRules(
        split_against_dealer_blackjack="full-amount", double_against_dealer_blackjack="full-amount"
    )
    assert AnalysisRules.from_rules(full).abbreviation().endswith("ENHC-all 3:2")
    with pytest.raises(ValueError, match="late surrender only"):
        AnalysisRules.from_rules(HybridSharedRules(surrender_timing="early"))


def test_nj_mab_multi_action_analysis_doubles_10_11_and_loses_everything_to_blackjack() -> None:
    analysis = AnalysisRules.from_rules(MultiActionRules(decks=2, split_pairs=False))
    assert analysis.double_totals == frozenset({10, 11})
    assert analysis.double_full_amount and analysis.split_full_amount
    assert not analysis.split and not analysis.late_surrender and analysis.spots == 3
    with pytest.raises(ValueError, match="best-total' only"):  # NJ MAB (b)(2)(iii) option
        AnalysisRules.from_rules(MultiActionRules(double_ace_value="one-or-eleven"))
    no_split = exact.analyse(analysis)
    assert not no_split.strategy.split.any()


def test_633c5_p2_hybrid_analysis_is_the_peek_game_without_surrender() -> None:
    analysis = AnalysisRules.from_rules(HybridRules())
    assert analysis.peek and not analysis.late_surrender
    assert analysis.max_split_hands == 4 and analysis.double_totals is None


# -- the dealer Blackjack without a hole card -------------------------------------------------


def test_without_doubles_and_splits_every_dealer_blackjack_reading_is_the_peek_game() -> None:
    """With one unit at risk the dealer Blackjack takes exactly the wager whether the dealer
    peeks, takes the original wager (A-10, A-19) or every amount (A-29)."""
    base = AnalysisRules(decks=2, double_totals=frozenset(), split=False, late_surrender=False)
    peek = exact.analyse(base)
    for full in (False, True):
        nhc = exact.analyse(
            base.replace(peek=False, double_full_amount=full, split_full_amount=full)
        )
        assert nhc.house_edge == pytest.approx(peek.house_edge, abs=1e-12)
        assert (nhc.strategy.hit_hard == peek.strategy.hit_hard).all()


def test_a29_full_amount_charges_the_double_against_a_dealer_blackjack() -> None:
    """Infinite deck, up ten-value: a double loses one more unit to the dealer's Blackjack
    (probability 1/13) when the full amount is lost (A-29) than under A-19."""
    obo = AnalysisRules(decks=None, peek=False)
    full = obo.replace(double_full_amount=True, split_full_amount=True)
    a, b = exact.analyse(obo).hand_values, exact.analyse(full).hand_values
    for c1, c2 in ((4, 5), (1, 7), (0, 5)):  # 5,6 / 2,8 / A,6 against T
        assert b[9, c1, c2, V_DOUBLE] == pytest.approx(a[9, c1, c2, V_DOUBLE] - 1 / 13, abs=1e-12)


def test_no_hole_card_readings_order_the_house_edges() -> None:
    peek = exact.analyse(AnalysisRules(decks=6, late_surrender=False)).house_edge
    obo = exact.analyse(AnalysisRules(decks=6, late_surrender=False, peek=False)).house_edge
    full = exact.analyse(
        AnalysisRules(
            decks=6,
            late_surrender=False,
            peek=False,
            double_full_amount=True,
            split_full_amount=True,
        )
    ).house_edge
    assert peek < obo < full
    assert 0.0005 < full - peek < 0.0025  # the published size of the no-hole-card cost


def test_633c5_aa_hybrid_shared_and_multi_action_edges() -> None:
    shared = lab_game("hybrid-shared").exact(
        AnalysisRules.from_rules(HybridSharedRules()), "blackjack", None
    )
    multi = lab_game("multi-action").exact(
        AnalysisRules.from_rules(MultiActionRules()), "blackjack", None
    )
    assert shared["house_edge"] == pytest.approx(0.003886, abs=2e-6)
    assert multi["house_edge"] == pytest.approx(0.008159, abs=2e-6)
    assert multi["per"] == "initial wager on each betting spot"


# -- the Buzzer Beater -------------------------------------------------------------------------


def _two_card_rational(decks: int, player: tuple[int, int], dealer: tuple[int, int]) -> Fraction:
    """P(the player's two cards are the classes ``player`` (any order) and the dealer's up and
    hole cards are ``dealer`` (any order)), classes 0 = ace ... 9 = ten-value, exactly."""
    counts = [4 * decks] * 9 + [16 * decks]
    total = Fraction(0)
    for p in {player, player[::-1]}:
        for d in {dealer, dealer[::-1]}:
            left = list(counts)
            n = 52 * decks
            prob = Fraction(1)
            for card in (p[0], d[0], p[1], d[1]):
                prob *= Fraction(left[card], n)
                left[card] -= 1
                n -= 1
            total += prob
    return total


def test_633c5_o_buzzer_beater_joint_distribution_after_the_peek() -> None:
    rules = AnalysisRules.from_rules(HybridRules())
    data = joint_final_hands(rules)
    joint = data["joint"]
    assert joint.sum() + data["bust"] + data["surrender"] == pytest.approx(1.0, abs=1e-6)
    bj_col = 5
    twenty = _two_card_rational(6, (9, 9), (0, 9)) + _two_card_rational(6, (0, 8), (0, 9))
    assert joint[2, bj_col] == pytest.approx(float(twenty), rel=1e-12)
    assert joint[4, bj_col] == pytest.approx(
        float(_two_card_rational(6, (0, 9), (0, 9))), rel=1e-12
    )
    assert joint[3, bj_col] == 0.0  # no multi-card 21 against a Blackjack found at the peek
    assert (joint >= 0).all() and np.isfinite(joint).all()


def test_a13_regulation_buzzer_beater_paytable_gives_the_player_an_edge() -> None:
    game_rules = HybridRules()
    bb = buzzer_beater(AnalysisRules.from_rules(game_rules), game_rules)
    assert bb["house_edge"] == pytest.approx(-0.173442, abs=2e-6)
    lines = {line["line"]: line for line in bb["lines"]}
    assert lines["player 20, dealer 21"]["pays"] == 30.0
    assert sum(line["probability"] for line in bb["lines"]) == pytest.approx(1.0, abs=1e-6)
    fixed_rows = [
        {**row.to_mapping(), "pays": "10 to 1"} if row.pays == 30 else row.to_mapping()
        for row in game_rules.buzzer_beater_paytable
    ]
    fixed = HybridRules(buzzer_beater_paytable=fixed_rows)
    assert buzzer_beater(AnalysisRules.from_rules(fixed), fixed)["house_edge"] > 0.1


def test_a14_no_row_push_option_returns_the_multi_card_21() -> None:
    lose = HybridRules()
    push = HybridRules(buzzer_beater_no_row="push")
    analysis = AnalysisRules.from_rules(lose)
    a, b = buzzer_beater(analysis, lose), buzzer_beater(analysis, push)
    no_row = next(line for line in a["lines"] if "A-14" in line["line"])
    assert b["house_edge"] == pytest.approx(a["house_edge"] - no_row["probability"], abs=1e-12)


# -- commands and par sheets -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "wager", "low", "high"),
    [
        ("hybrid", "blackjack", 0.0035, 0.0045),
        ("hybrid", "buzzer_beater", -0.18, -0.17),
        ("hybrid-shared", "royal_match", 0.058, 0.059),
        ("hybrid-shared", "kings_bounty", 0.2316, 0.2317),
        ("multi-action", "blackjack", 0.008, 0.0083),
    ],
)
def test_edge_of_every_game(game: str, wager: str, low: float, high: float) -> None:
    payload = _json(["edge", "--game", game, "--wager", wager, "--json"])
    assert payload["game"] == game and payload["method"] == "exact"
    assert low < payload["house_edge"] < high


def test_bad_flags_and_kernelless_simulation_exit_2() -> None:
    surrender = runner.invoke(app, ["edge", "--game", "hybrid", "--surrender", "--json"])
    assert surrender.exit_code == 2 and "no rule flag --surrender" in surrender.output
    decks = runner.invoke(app, ["edge", "--game", "multi-action", "--decks", "9", "--json"])
    assert decks.exit_code == 2 and "NJ MAB (b)(2)" in decks.output
    wager = runner.invoke(app, ["edge", "--game", "multi-action", "--wager", "ez_bust"])
    assert wager.exit_code == 2 and "Unknown wager" in wager.output


def test_strategy_of_the_no_hole_card_games() -> None:
    multi = _json(["strategy", "--game", "multi-action", "--json"])
    assert multi["hard"]["11"][8] == "H"  # no doubling 11 against a ten without a hole card
    assert multi["hard"]["9"] == ["H"] * 10  # double on 10 and 11 only
    shared = _json(["strategy", "--game", "hybrid-shared", "--json"])
    assert shared["hard"]["11"][8] == "D"  # only the original wager is lost


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules_file", "flagged"),
    [
        ("pa-hybrid-a.toml", ["buzzer_beater"]),
        ("pa-hybrid-b.toml", []),
        ("nj-multi-action.toml", []),
    ],
)
def test_parsheet_of_every_rules_file(tmp_path: Path, rules_file: str, flagged: list[str]) -> None:
    out = tmp_path / "sheet"
    payload = _json(
        ["parsheet", "--rules", str(ROOT / "rules" / rules_file), "--out", str(out),
         "--hands", "20000", "--workers", "1", "--json"]
    )  # fmt: skip
    assert payload["player_edge_wagers"] == flagged
    html = (out / "parsheet.html").read_text()
    if flagged:
        top = html.index("PLAYER EDGE")
        assert top < html.index("<h2>Summary</h2>")
        assert "buzzer_beater wager returns 17.34" in html
    data = json.loads((out / "parsheet.json").read_text())
    assert data["strategy"]["hard"] and data["method"]["exact"]
    # the rule-variation table: the game's own single changes, the refused ones labelled
    assert data["what_if"] == [] and "Rule variations" in html
    rows = {row["change"]: row for row in data["rule_variations"]["rows"]}
    assert [d["rule"] for d in rows["H17 (dealer hits soft 17)"]["what_if"]] == {
        "pa-hybrid-a.toml": ["PA 633c.5(s)"],
        "pa-hybrid-b.toml": ["PA 633c.5(bb)(2)"],
        "nj-multi-action.toml": [],  # H17 is an option
    }[rules_file]
    for row in rows.values():
        assert row["effect"] == pytest.approx(row["house_edge"] - data["wagers"][0]["house_edge"])
    if rules_file == "pa-hybrid-b.toml":  # the dealer Blackjack takes every amount (ENHC)
        assert rows["a dealer Blackjack takes every amount at risk (ENHC)"]["effect"] > 0
    if rules_file == "nj-multi-action.toml":
        assert rows["no splitting"]["effect"] > 0 and rows["no doubling"]["effect"] > 0


def test_simulate_every_game_from_the_cli() -> None:
    shared = _json(
        ["simulate", "--game", "hybrid-shared", "--hands", "20000", "--seed", "4",
         "--workers", "1", "--json"]
    )  # fmt: skip
    assert set(shared["wagers"]) == {"blackjack", "royal_match", "bet_the_set", "kings_bounty"}
    assert shared["hands"] >= 20000 and shared["game"] == "hybrid-shared"
    hybrid = _json(["simulate", "--game", "hybrid", "--hands", "20000", "--workers", "1", "--json"])
    assert hybrid["house_edge"]["buzzer_beater"] < 0
    multi = _json(["simulate", "--game", "multi-action", "--hands", "20000", "--json"])
    assert {"spot_1", "spot_2", "spot_3"} <= set(multi["wagers"])
    zero = runner.invoke(app, ["simulate", "--game", "multi-action", "--hands", "0"])
    assert zero.exit_code == 2 and "at least 1" in zero.output
