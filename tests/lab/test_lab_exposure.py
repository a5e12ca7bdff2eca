"""Advantage-play exposure: effects of removal against hand-checked cases, the counts derived from
them, the seeded walk of the shoes, and the command and par-sheet section."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.lab import exact
from tablejack.lab import exposure as ex
from tablejack.lab.buzzer import buzzer_beater
from tablejack.lab.model import CARD_LABELS, AnalysisRules
from tablejack.lab.sidebets import side_wager
from tablejack.lab.simulate import shoe_cards

runner = CliRunner()
SHARED = HybridSharedRules()
SIX = AnalysisRules(decks=6)


@pytest.fixture(autouse=True)
def _stderr_mode_from_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)


# -- effects of removal -------------------------------------------------------------------------


def test_insurance_eor_is_the_hand_computed_change_of_three_tens_over_the_cards_left() -> None:
    # 6 decks, up ace: 96 tens among 311 cards; without a ten 95 of 310, without another card
    # 96 of 310. The player's return is 3 p - 1.
    eor = ex.effects_of_removal(SIX, ["insurance"])["insurance"]
    ten = 3 * 95 / 310 - 3 * 96 / 311
    other = 3 * 96 / 310 - 3 * 96 / 311
    assert eor["eor"][9] == pytest.approx(ten, abs=1e-15)
    for r in range(9):
        assert eor["eor"][r] == pytest.approx(other, abs=1e-15)
    assert eor["house_edge"] == pytest.approx(1 - 3 * 96 / 311, abs=1e-15)


def test_bet_the_set_has_no_effect_of_removal_and_no_linear_count() -> None:
    # By hand (6 decks, 24 cards of each rank): a pair has probability 13*24*23/(312*311); with
    # one card of any rank gone, (12*24*23 + 23*22)/(311*310): the same number.
    full = Fraction(13 * 24 * 23, 312 * 311)
    fewer = Fraction(12 * 24 * 23 + 23 * 22, 311 * 310)
    assert full == fewer
    eor = ex.effects_of_removal(SIX, ["bet_the_set"], SHARED)["bet_the_set"]
    assert np.abs(eor["eor"]).max() < 1e-15
    assert ex.derive_count(eor["eor"], eor["frequency"], eor["labels"]) is None


def test_royal_match_eor_kings_and_queens_hurt_the_player_every_other_rank_alike() -> None:
    # The Royal Match line needs a king and a queen of one suit; the other lines only suits,
    # which are alike over the four suits of a rank: every other rank's EOR is the same.
    eor = ex.effects_of_removal(SIX, ["royal_match"], SHARED)["royal_match"]["eor"]
    labels = ex.RANKS
    king, queen = eor[labels.index("K")], eor[labels.index("Q")]
    assert king < 0 and king == pytest.approx(queen, abs=1e-15)
    others = [eor[i] for i, label in enumerate(labels) if label not in ("K", "Q")]
    assert min(others) > 0 and max(others) - min(others) < 1e-15


def test_kings_bounty_kings_hurt_most_small_cards_help() -> None:
    # Every paying hand is a two-card 20 (two ten-values, or an ace and a nine); the kings pay
    # the top lines: removing a king hurts most, then 10/J/Q; cards that make no 20 help.
    eor = dict(
        zip(
            ex.RANKS,
            ex.effects_of_removal(SIX, ["kings_bounty"], SHARED)["kings_bounty"]["eor"],
            strict=True,
        )
    )
    assert min(eor, key=eor.__getitem__) == "K"
    for rank in ("10", "J", "Q"):
        assert eor["K"] < eor[rank] < 0
    for rank in ("2", "3", "4", "5", "6", "7", "8"):
        assert eor[rank] > eor["9"] > 0 and eor[rank] > eor["A"] > 0


@pytest.mark.parametrize("wager", ex.PAIR_WAGERS)
def test_pair_wager_eors_sum_to_zero_weighted_by_frequency(wager: str) -> None:
    # the four cards of a deal are a random sample of the shoe: removing a random card leaves
    # the expectation as it was, so the frequency-weighted EORs sum to zero
    eor = ex.effects_of_removal(SIX, [wager], SHARED)[wager]
    assert abs(float((eor["frequency"] * eor["eor"]).sum())) < 1e-15


@pytest.mark.parametrize("wager", ex.PAIR_WAGERS)
def test_pair_wager_full_shoe_is_the_exact_rational_figure(wager: str) -> None:
    model = ex.pair_wager(SHARED, wager)
    exact_edge = Fraction(side_wager(SHARED, wager)["house_edge_exact"])
    assert ex.pair_house_edge(model, np.full(52, 6.0)) == pytest.approx(float(exact_edge), 1e-13)


@pytest.mark.slow
def test_main_wager_eor_five_helps_most_ace_and_ten_hurt() -> None:
    rules = AnalysisRules(decks=1, ez_bust=True)
    eors = ex.effects_of_removal(rules, ["blackjack", "ez_bust"])
    main = dict(zip(CARD_LABELS, eors["blackjack"]["eor"], strict=True))
    assert max(main, key=main.__getitem__) == "5"
    assert main["A"] < 0 and main["T"] < 0
    assert all(main[c] > 0 for c in "234567")
    # removing a random card would leave a fixed strategy's expectation as it was; the exact
    # analysis re-derives the strategy for the shoe left, which knowing one card is worth a
    # little: the frequency-weighted sum is a small non-negative number
    total = float((eors["blackjack"]["frequency"] * eors["blackjack"]["eor"]).sum())
    assert 0 <= total < 0.1 * max(abs(v) for v in main.values())
    # EZ Bust wins when the dealer busts after drawing (633b.16(f)(1)): ten-values bust the
    # dealer's stiff hands, small cards complete them. Removing a ten hurts the player, removing
    # a 2-6 helps.
    ez = dict(zip(CARD_LABELS, eors["ez_bust"]["eor"], strict=True))
    assert min(ez, key=ez.__getitem__) == "T"
    assert all(ez[c] > 0 for c in "23456")
    assert ez["9"] < 0
    ez_total = float((eors["ez_bust"]["frequency"] * eors["ez_bust"]["eor"]).sum())
    assert abs(ez_total) < 0.1 * max(abs(v) for v in ez.values())


@pytest.mark.slow
def test_composition_edges_of_the_full_shoe_are_the_exact_analysis() -> None:
    rules = AnalysisRules(decks=2, ez_bust=True)
    edges = ex.composition_house_edges(rules, rules.shoe_counts(), ["blackjack", "ez_bust"])
    assert edges["blackjack"] == exact.analyse(rules).house_edge
    assert edges["ez_bust"] == pytest.approx(exact.ez_bust(rules)["house_edge"], abs=1e-14)
    hybrid = HybridRules(decks=6)
    analysis = AnalysisRules.from_rules(hybrid)
    bb = ex.composition_house_edges(analysis, analysis.shoe_counts(), ["buzzer_beater"], hybrid)
    assert bb["buzzer_beater"] == pytest.approx(
        buzzer_beater(analysis, hybrid)["house_edge"], 1e-12
    )


# -- the count ------------------------------------------------------------------------------------


def test_best_linear_count_tags_are_the_eors_scaled_and_rounded() -> None:
    frequency = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 4]) / 13
    # centred EORs in the ratio 1 : 2 : 3 for three groups of cards, -6/4 for the tens
    eor = np.array([0.0, 1, 2, 3, 0, 0, 0, 0, 0, -1.5]) * 1e-3
    eor = eor - float((frequency * eor).sum())
    levels = {
        level: tuple(int(x) for x in np.sign(eor / np.abs(eor).max() * level)
                     * np.floor(np.abs(eor / np.abs(eor).max() * level) + 0.5))
        for level in (1, 2, 3)
    }  # fmt: skip
    count = ex.derive_count(eor, frequency, CARD_LABELS)
    assert count is not None
    assert count.tags == levels[count.level]
    assert count.tags[3] == count.level  # the largest EOR gets the level
    # the tags never reverse the order of the EORs
    order = np.argsort(eor)
    assert all(count.tags[a] <= count.tags[b] for a, b in itertools.pairwise(order))
    assert count.levels[3] >= count.levels[1]
    assert count.betting_correlation >= max(count.levels.values()) - 0.01


def test_a_count_proportional_to_the_eors_has_correlation_one() -> None:
    frequency = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 4]) / 13
    tags = np.array([-1, 1, 1, 1, 1, 1, 0, 0, 0, -1], dtype=float)
    count = ex.derive_count(tags * 2.5e-4, frequency, CARD_LABELS)
    assert count is not None and count.tags == ex.HI_LO and count.level == 1
    assert count.betting_correlation == pytest.approx(1.0, abs=1e-12)


# -- the walk of the shoes ------------------------------------------------------------------------


def _shared_plans(wagers: list[str]) -> list[ex.WagerPlan]:
    eors = ex.effects_of_removal(SIX, wagers, SHARED)
    return [ex.plan_wager(w, eors[w], 6) for w in wagers]


def test_walk_is_reproducible_by_seed() -> None:
    plans = _shared_plans(["insurance", "kings_bounty"])
    first = ex.simulate_exposure(plans, 6, shoes=20, seed=5, max_penetration=0.5)
    again = ex.simulate_exposure(plans, 6, shoes=20, seed=5, max_penetration=0.5)
    other = ex.simulate_exposure(plans, 6, shoes=20, seed=6, max_penetration=0.5)
    for key in ("acc", "hist", "by_tc"):
        assert np.array_equal(first[key], again[key])
    assert not np.array_equal(first["acc"], other["acc"])


def test_walk_edges_are_the_exact_edges_of_the_shoe_left() -> None:
    # one shoe: the mean edge at each depth is that shoe's edge after that many cards, which
    # the incremental quadratic form must give exactly as a direct evaluation does
    plans = _shared_plans(["royal_match", "kings_bounty", "insurance"])
    sums = ex.simulate_exposure(plans, 6, shoes=1, seed=9, max_penetration=0.9)
    cards = shoe_cards(9, 0, 6)
    for depth in (0, 1, 57, 150, 280):
        left = np.full(52, 6.0) - np.bincount(cards[:depth], minlength=52)
        for i, plan in enumerate(plans[:2]):
            row = sums["acc"][i, depth]
            assert plan.pair is not None
            expected = -ex.pair_house_edge(plan.pair, left)
            assert row[ex.kern.A_EDGE] / row[ex.kern.A_WEIGHT] == pytest.approx(expected, 1e-9)
        tens = left.reshape(13, 4)[9:].sum()
        aces = left[:4].sum()
        n = left.sum()
        row = sums["acc"][2, depth]
        assert row[ex.kern.A_WEIGHT] == pytest.approx(aces / n, 1e-12)
        assert row[ex.kern.A_EDGE] == pytest.approx(aces / n * (3 * tens / (n - 1) - 1), 1e-12)


def test_ez_dealer_return_is_the_dealer_bust_probability_against_two_to_six() -> None:
    rules = AnalysisRules(decks=6)
    # each up card 2-6 is equally likely; the wager wins when the dealer busts (633b.16(f))
    busts = [exact.dealer_probabilities(rules, up)["bust"] for up in "23456"]
    expected = sum(2 * b - 1 for b in busts) / 5
    assert ex.ez_dealer_return(rules.shoe_counts()) == pytest.approx(expected, abs=1e-14)


def test_walk_moves_ez_bust_by_the_dealer_refreshed_every_stride_cards() -> None:
    frequency = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 4]) / 13
    entry = {
        "house_edge": 0.2,
        "labels": CARD_LABELS,
        "frequency": frequency,
        "eor": np.zeros(10),
        "method": "by hand",
    }
    plan = ex.plan_wager("ez_bust", entry, 6)
    assert plan.kind == ex.kern.KIND_DEALER and plan.count is None
    sums = ex.simulate_exposure([plan], 6, shoes=1, seed=4, stride=8)
    cards = shoe_cards(4, 0, 6)
    full = SIX.shoe_counts()
    d0 = ex.ez_dealer_return(full)
    for depth in (0, 8, 9, 15, 200):
        refreshed = depth - depth % 8
        left = full - np.bincount(ex.CLASS_OF[cards[:refreshed]], minlength=10)
        expected = -0.2 + ex.ez_dealer_return(left) - d0
        assert sums["acc"][0, depth, ex.kern.A_EDGE] == pytest.approx(expected, abs=1e-12)


def test_at_zero_penetration_the_counter_has_the_exact_edge_off_the_top() -> None:
    result = ex.exposure(
        "hybrid-shared", SHARED, AnalysisRules.from_rules(SHARED),
        wagers=["insurance", "royal_match", "bet_the_set", "kings_bounty"], shoes=40, seed=2,
    )  # fmt: skip
    for name, wager in result["wagers"].items():
        exact_edge = (
            exact.insurance(SIX)["house_edge"]
            if name == "insurance"
            else side_wager(SHARED, name)["house_edge"]
        )
        first = wager["counter"][0]
        assert first["penetration"] == 0
        assert first["flat_edge"] == pytest.approx(-exact_edge, abs=1e-12)
        assert first["spread_edge"] == pytest.approx(-exact_edge, abs=1e-12)
        assert wager["by_penetration"][0]["sd_edge"] == pytest.approx(0, abs=1e-7)
    assert "633c.5" in result["visibility"]


def test_turning_penetration_is_the_first_depth_with_favourable_counted_rounds() -> None:
    result = ex.exposure(
        "hybrid-shared", SHARED, AnalysisRules.from_rules(SHARED), wagers=["kings_bounty"],
        shoes=200, seed=3,
    )  # fmt: skip
    kb = result["wagers"]["kings_bounty"]
    turn = kb["turning_penetration"]
    assert turn is not None and 0.2 < turn < 0.9
    before = [r for r in kb["by_penetration"] if r["penetration"] < turn - 1e-9]
    assert all(
        r["share_at_key_count"] < ex.FAVOURABLE_SHARE or (r["edge_at_key_count"] or 0) <= 0
        for r in before
    )
    # the ideal player, who bets exactly the favourable rounds, never turns later
    assert kb["turning_penetration_ideal"] <= turn


# -- the command and the par sheet ----------------------------------------------------------------


def test_exposure_command_json_and_files(tmp_path: Path) -> None:
    out = tmp_path / "exp"
    result = runner.invoke(
        app,
        ["exposure", "--game", "hybrid-shared", "--wager", "kings-bounty", "--shoes", "30",
         "--out", str(out), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    payload = json.loads(result.stdout)
    assert list(payload["wagers"]) == ["kings_bounty"]
    assert payload["wagers"]["kings_bounty"]["count"]["tags"]["K"] < 0
    assert (out / "exposure.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "exposure.json").read_text())["shoes"] == 30


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["exposure", "--shoes", "0"], "at least 1"),
        (["exposure", "--game", "hybrid", "--wager", "royal_match"], "Unknown wager"),
        (["exposure", "--spread", "0"], "at least 1"),
    ],
)
def test_exposure_bad_input_is_a_message_and_exit_code_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_linear_estimate_follows_the_exact_analysis_on_sample_shoes() -> None:
    rules = AnalysisRules(decks=6)
    eors = ex.effects_of_removal(rules, ["blackjack"])
    plans = [ex.plan_wager("blackjack", eors["blackjack"], 6)]
    check = ex.validate_linear(rules, plans, shoes=3, seed=1, penetrations=(0.25,))
    typical = check["by_wager"]["blackjack"]["typical"]
    # a quarter of the way in the linear estimate is within 0.15% of the exact edge (which also
    # re-derives the strategy for the shoe left)
    assert typical["max_abs_error"] < 0.0015
    for row in check["rows"]:
        assert row["cards_left"] == 312 - round(row["penetration"] * 312)


@pytest.mark.slow
def test_classic_exposure_main_wager_counter_gains(tmp_path: Path) -> None:
    rules = AnalysisRules(decks=6)
    from tablejack.core import ClassicRules

    result = ex.exposure("classic", ClassicRules(), rules, wagers=["blackjack"], shoes=300, seed=1)
    main = result["wagers"]["blackjack"]
    assert main["count"]["name"] == "Hi-Lo" and main["count"]["betting_correlation"] > 0.9
    assert main["counter"][0]["spread_edge"] == pytest.approx(-exact.analyse(rules).house_edge)
    deep = main["counter"][-1]
    assert deep["penetration"] == pytest.approx(0.9)
    assert deep["spread_edge"] > 0 > deep["flat_edge"]
    text = ex.render_text(result)
    assert "Hi-Lo" in text and "turns player-favourable" in text
    path = tmp_path / "plot.png"
    assert ex.plot_exposure(result, path) == "plot.png" and path.stat().st_size > 0
    assert "Advantage-play exposure" in ex.html_section(result)


@pytest.mark.slow
def test_parsheet_has_the_exposure_plot_and_table(tmp_path: Path) -> None:
    from tablejack.lab.games import lab_game
    from tablejack.lab.parsheet import write_parsheet

    spec = lab_game("hybrid-shared")
    analysis = AnalysisRules.from_rules(SHARED)
    out = tmp_path / "sheet"
    report = write_parsheet(
        spec, SHARED, analysis, out, hands=5000, seed=1, workers=1, exposure_shoes=40
    )
    assert "exposure.png" in report["files"]
    assert (out / "exposure.png").read_bytes()[:4] == b"\x89PNG"
    assert list(report["exposure"]["wagers"]) == list(spec.offered_wagers(SHARED))
    html = (out / "parsheet.html").read_text()
    assert "<h2>Advantage-play exposure</h2>" in html and "633c.5" in html
    assert html.index("Advantage-play exposure") < html.index("Basic strategy")
    data = json.loads((out / "parsheet.json").read_text())
    assert data["exposure"]["wagers"]["kings_bounty"]["count"]["tags"]["K"] < 0


@pytest.mark.slow
def test_buzzer_beater_eors_with_the_basic_strategy_sum_to_zero() -> None:
    # the player keeps the full shoe's basic strategy, so removing an unseen random card leaves
    # the wager's expectation as it was: the frequency-weighted EORs sum to zero
    hybrid = HybridRules(decks=6)
    analysis = AnalysisRules.from_rules(hybrid)
    eor = ex.effects_of_removal(analysis, ["buzzer_beater"], hybrid)["buzzer_beater"]
    assert abs(float((eor["frequency"] * eor["eor"]).sum())) < 1e-7
    assert np.abs(eor["eor"]).max() > 1e-3
