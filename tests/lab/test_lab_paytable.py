"""Paytable design (``tablejack paytable``, :mod:`tablejack.lab.paytable`): outcome
distributions checked by hand on one deck, the base paytables reproducing their known edges,
every candidate monotone in rarity and within its bounds, and the candidates compared with a
brute force over every paytable of small lattices (all pays, no monotone shortcut)."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from tablejack.cli import app
from tablejack.games.hybrid_shared_rules import (
    BET_THE_SET_TABLES,
    KINGS_BOUNTY_TABLES,
    ROYAL_MATCH_TABLES,
)
from tablejack.lab import paytable as pt
from tablejack.lab.paytable import Lattice, Outcome, PayLine, WagerOutcomes


def _outcome_probabilities(outcomes: WagerOutcomes) -> dict[str, Fraction]:
    return {o.label: o.probability for o in outcomes.outcomes}


@pytest.fixture(scope="module")
def bet_the_set_6() -> WagerOutcomes:
    return pt.bet_the_set_outcomes(6, BET_THE_SET_TABLES["15-10"])


@pytest.fixture(scope="module")
def kings_bounty_6() -> WagerOutcomes:
    return pt.kings_bounty_outcomes(6, KINGS_BOUNTY_TABLES["six-deck"])


@pytest.fixture(scope="module")
def royal_match_6() -> WagerOutcomes:
    return pt.royal_match_outcomes(
        6, ROYAL_MATCH_TABLES["wizard-v1"], crown_treasure=Fraction(1000), in_addition=True
    )


# -- distributions by hand ----------------------------------------------------------------------


def test_633a13g_bet_the_set_one_deck_by_hand() -> None:
    """One deck: the second card matches the first card's rank in 3 of the 51 cards left, and
    never its rank and suit (one card of each), so P(pair) = 3/51 = 1/17, P(suited pair) = 0.
    A pair paying N to 1 returns (N + 1)/17 - 1: the edge is 1/17 at 15 to 1 (the
    "one-deck-15" table, 5.88%), 2/17 at 14 to 1 and 0 at 16 to 1."""
    outcomes = pt.bet_the_set_outcomes(1, BET_THE_SET_TABLES["15-10"])
    assert _outcome_probabilities(outcomes) == {"pair": Fraction(1, 17), "loses": Fraction(16, 17)}
    assert outcomes.line_probability("suited-pair") == 0
    result = pt.search(outcomes, Fraction(1, 17), count=3, lattice=Lattice(max_pay=20))
    pairs = [c.pays["pair"] for c in result.candidates]
    assert pairs == [15, 14, 16]  # 14 and 16 tie at 1/17 away: the smaller pays first
    assert [c.house_edge for c in result.candidates] == [
        Fraction(1, 17),
        Fraction(2, 17),
        Fraction(0),
    ]
    assert [c.distance for c in result.candidates] == [0, Fraction(1, 17), Fraction(1, 17)]
    # the suited pair cannot happen with one deck: it is not searched and keeps its base pay
    assert {c.pays["suited-pair"] for c in result.candidates} == {Fraction(15)}


def test_633a13g_bet_the_set_six_deck_regulation_table_reproduced() -> None:
    """Six decks (312 cards): after any first card 311 are left, 5 of its rank and suit and
    3 x 6 = 18 of its rank in other suits: P(suited pair) = 5/311, P(pair) = 18/311. The
    15-10 table returns 16 x 5/311 + 11 x 18/311 = 278/311, an edge of 33/311 = 10.61%: with
    that target the nearest paytable is the table itself, 0 away."""
    outcomes = pt.bet_the_set_outcomes(6, BET_THE_SET_TABLES["15-10"])
    assert _outcome_probabilities(outcomes) == {
        "suited-pair": Fraction(5, 311),
        "pair": Fraction(18, 311),
        "loses": Fraction(288, 311),
    }
    result = pt.search(outcomes, Fraction(33, 311), count=5, lattice=Lattice(max_pay=25))
    best = result.candidates[0]
    assert best.pays == {"suited-pair": 15, "pair": 10}
    assert best.distance == 0
    assert best.figures["house_edge_exact"] == "33/311"
    report = pt.base_report(result)
    assert report["on_lattice"] and report["monotone"]
    assert report["house_edge_exact"] == "33/311"


def test_633a13h_kings_bounty_one_deck_by_hand() -> None:
    """One deck, 52 x 51 = 2,652 ordered pairs. Two kings of spades, two suited kings and two
    suited queens (jacks, tens) need two copies of one card: impossible. Suited 20: A-9 of one
    suit (4 suits x 2 orders = 8) or two ten-value cards of one suit and different ranks
    (4 suits x 4 x 3 = 48): 56. Unsuited kings: 4 x 3 = 12. Unsuited 20: the other ordered
    pairs of ten-value cards (16 x 15 - 48 - 12 = 180) and unsuited A-9 (2 x 4 x 4 - 8 = 24):
    204. The six-deck table (9, 6, 4 on these lines) returns (9 x 56 + 6 x 12 + 4 x 204)/2652
    = 1392/2652 and loses 1 - 272/2652 = 2380/2652: an edge of 988/2652 = 19/51."""
    outcomes = pt.kings_bounty_outcomes(1, KINGS_BOUNTY_TABLES["six-deck"])
    n = 2652
    assert _outcome_probabilities(outcomes) == {
        "suited-20": Fraction(56, n),
        "unsuited-kings": Fraction(12, n),
        "unsuited-20": Fraction(204, n),
        "loses": Fraction(n - 272, n),
    }
    assert outcomes.house_edge(outcomes.base_pays) == Fraction(19, 51)
    for line in ("spade-kings-dealer-blackjack", "spade-kings", "suited-kings"):
        assert outcomes.line_probability(line) == 0
    # the unsuited kings (12/2652) are rarer than the suited 20 (56/2652) but pay 6 < 9
    violations = outcomes.rarity_violations(outcomes.base_pays)
    assert len(violations) == 1 and violations[0].startswith("unsuited-kings")


def test_633a13h_kings_bounty_six_deck_table_reported_with_its_published_edge(
    kings_bounty_6: WagerOutcomes,
) -> None:
    """The six-deck table's edge is 23.164% (referenced-rules §6.4); it is not monotone in
    rarity, so it is reported beside the candidates, off the lattice."""
    result = pt.search(kings_bounty_6, Fraction(23164, 100000), count=3)
    report = pt.base_report(result)
    assert round(report["house_edge"] * 100, 3) == 23.164
    assert not report["on_lattice"]
    assert report["violations"]
    assert all(c.distance < Fraction(1, 10**6) for c in result.candidates)


def test_633a13f_royal_match_wizard_v2_reproduced_with_the_crown_treasure() -> None:
    """Royal Match 21 "wizard-v2" (10 to 1, 3 to 1) with the 1,000-to-1 Crown Treasure in
    addition has integer pays in the rarity order: at its own edge (-1.9372%, a player edge)
    it is the nearest paytable, 0 away."""
    outcomes = pt.royal_match_outcomes(
        6, ROYAL_MATCH_TABLES["wizard-v2"], crown_treasure=Fraction(1000), in_addition=True
    )
    edge = outcomes.house_edge(outcomes.base_pays)
    assert round(float(edge) * 100, 4) == -1.9372
    result = pt.search(outcomes, edge, count=3)
    assert result.candidates[0].pays == {
        "royal-match": 10,
        "suited-match": 3,
        "crown-treasure": 1000,
    }
    assert result.candidates[0].distance == 0
    assert pt.base_report(result)["on_lattice"]


def test_633a13f_a_held_line_keeps_its_form(royal_match_6: WagerOutcomes) -> None:
    """The wizard-v1 suited match pays 5 to 2, not an integer: held, every candidate keeps it
    and the regulation table (25 to 1, 5 to 2, Crown Treasure 1,000 to 1: 5.8416%) is found
    at its own edge."""
    edge = royal_match_6.house_edge(royal_match_6.base_pays)
    assert round(float(edge) * 100, 4) == 5.8416
    lattice = Lattice(hold=frozenset({"suited-match"}))
    result = pt.search(royal_match_6, edge, count=4, lattice=lattice)
    assert all(c.pays["suited-match"] == Fraction(5, 2) for c in result.candidates)
    assert result.candidates[0].pays["royal-match"] == 25
    assert result.candidates[0].pays["crown-treasure"] == 1000
    assert result.candidates[0].distance == 0
    report = pt.base_report(result)
    assert report["on_lattice"]
    unheld = pt.base_report(pt.search(royal_match_6, edge, count=1))
    assert unheld["off_lattice_pays"] == ["suited-match 5 to 2"]


# -- the search against a brute force ------------------------------------------------------------


def _brute_force(
    outcomes: WagerOutcomes, lattice: Lattice, target: Fraction, count: int
) -> list[tuple[Fraction, dict[str, Fraction]]]:
    """Every paytable of the lattice (the full product of each line's pays), kept when no
    rarer outcome pays less than a more common one and equally likely outcomes pay the same,
    the nearest ``count`` by exact distance (ties: the smaller pays, commonest line first)."""
    bounds = lattice.bounds(outcomes)
    names = sorted(bounds, key=lambda n: -outcomes.line_probability(n))
    names = [n for n in names if outcomes.line_probability(n) > 0]
    grids = [pt.pay_ladder(*bounds[n], lattice.pays) for n in names]
    fixed = {line.name: line.base for line in outcomes.lines if line.name not in names}
    table = np.array(list(itertools.product(*grids)), dtype=np.int64).reshape(-1, len(names))
    paid = [o for o in outcomes.outcomes if o.lines and o.probability > 0]
    column = {n: i for i, n in enumerate(names)}

    def pays_of(o: Outcome) -> np.ndarray:
        total = np.zeros(len(table))
        for line in o.lines:
            total = total + (table[:, column[line]] if line in column else float(fixed[line]))
        return total

    ok = np.ones(len(table), dtype=bool)
    for a in paid:
        for b in paid:
            if a is b:
                continue
            pa, pb = pays_of(a), pays_of(b)
            if outcomes.ties(a.probability, b.probability):
                ok &= pa == pb
            elif a.probability < b.probability:
                ok &= pa >= pb
    weights = np.array([float(outcomes.line_probability(n)) for n in names])
    unsearched = {**fixed, **dict.fromkeys(names, Fraction(0))}
    fixed_return = sum((o.probability * o.pay(unsearched) for o in outcomes.outcomes), Fraction(0))
    approx = np.abs(-(table @ weights) - float(fixed_return) - float(target))
    approx[~ok] = np.inf
    shortlist = np.argsort(approx, kind="stable")[: count + 50]
    scored = []
    for i in shortlist:
        if not np.isfinite(approx[i]):
            continue
        pays = {**fixed, **{n: Fraction(int(x)) for n, x in zip(names, table[i], strict=True)}}
        ordered = {line.name: pays[line.name] for line in outcomes.lines}
        distance = abs(outcomes.house_edge(ordered) - target)
        scored.append((distance, tuple(int(x) for x in table[i]), ordered))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(d, pays) for d, _, pays in scored[:count]]


def _check(result: pt.SearchResult, lattice: Lattice, count: int) -> None:
    """Sorted by exact distance, monotone, within bounds, and equal to the brute force."""
    outcomes = result.outcomes
    distances = [c.distance for c in result.candidates]
    assert distances == sorted(distances)
    for c in result.candidates:
        assert c.distance == abs(c.house_edge - result.target)
        assert outcomes.rarity_violations(c.pays) == []
        for name, (low, high) in lattice.bounds(outcomes).items():
            if outcomes.line_probability(name) > 0:
                assert c.pays[name] in pt.pay_ladder(low, high, lattice.pays)
    expected = _brute_force(outcomes, lattice, result.target, count)
    assert [(c.distance, c.pays) for c in result.candidates] == expected


@pytest.mark.parametrize("target", ["0.7", "0.5", "0.3", "0.26", "0.2589661972339"])
def test_kings_bounty_candidates_are_the_nearest(
    kings_bounty_6: WagerOutcomes, target: str
) -> None:
    """Every pay from 1 to 6 to 1: the lattice reaches 25.8966% to 78.8276%."""
    lattice = Lattice(max_pay=6)
    result = pt.search(kings_bounty_6, Fraction(target), count=12, lattice=lattice)
    _check(result, lattice, 12)


@pytest.mark.parametrize("target", ["0.05", "0.0584", "-0.02", "0.2"])
def test_royal_match_with_the_crown_bonus_candidates_are_the_nearest(
    royal_match_6: WagerOutcomes, target: str
) -> None:
    """The Crown Treasure outcome pays the Royal Match line plus the bonus: the brute force
    ranks that sum, the search the lines."""
    lattice = Lattice(max_pay=40, ranges={"crown-treasure": (1, 300)}, pays="round")
    result = pt.search(royal_match_6, Fraction(target), count=10, lattice=lattice)
    _check(result, lattice, 10)


def test_bet_the_set_candidates_are_the_nearest(bet_the_set_6: WagerOutcomes) -> None:
    lattice = Lattice(max_pay=30, pays="integers")
    result = pt.search(bet_the_set_6, Fraction(1, 20), count=20, lattice=lattice)
    _check(result, lattice, 20)
    assert result.paytables == sum(1 for a in range(1, 31) for b in range(a, 31))


def _synthetic(probabilities: list[Fraction], rational: bool = True) -> WagerOutcomes:
    lines = tuple(PayLine(f"l{i}", f"line {i}", Fraction(1)) for i in range(len(probabilities)))
    outcomes = [Outcome(f"outcome {i}", p, (f"l{i}",)) for i, p in enumerate(probabilities)]
    outcomes.append(Outcome("loses", 1 - sum(probabilities, Fraction(0))))
    return WagerOutcomes("test", "test", "test", lines, tuple(outcomes), rational, "", "", "")


def test_equally_likely_outcomes_pay_the_same() -> None:
    """Outcomes 1 and 2 are equally likely (neither rarer): every candidate pays them alike,
    and the brute force (which demands the same) agrees."""
    outcomes = _synthetic([Fraction(1, 10), Fraction(1, 40), Fraction(1, 40), Fraction(1, 200)])
    lattice = Lattice(max_pay=12, pays="integers")
    for target in ("0.3", "0.05", "-0.2"):
        result = pt.search(outcomes, Fraction(target), count=15, lattice=lattice)
        assert all(c.pays["l1"] == c.pays["l2"] for c in result.candidates)
        _check(result, lattice, 15)


def test_a_held_pay_binds_the_equally_likely_outcome() -> None:
    """Outcome 1 held at 4 to 1 and outcome 2 equally likely: outcome 2 pays 4 to 1 too, and
    the rarer outcome 3 at least 4."""
    outcomes = _synthetic([Fraction(1, 10), Fraction(1, 40), Fraction(1, 40), Fraction(1, 200)])
    lattice = Lattice(max_pay=12, pays="integers", hold=frozenset({"l1"}))
    outcomes = WagerOutcomes(
        "test", "test", "test",
        tuple(PayLine(line.name, line.title, Fraction(4)) for line in outcomes.lines),
        outcomes.outcomes, True, "", "", "",
    )  # fmt: skip
    for target in ("0.5", "0.35", "0.2"):
        result = pt.search(outcomes, Fraction(target), count=10, lattice=lattice)
        assert all(c.pays["l2"] == 4 <= c.pays["l3"] for c in result.candidates)
        _check(result, lattice, 10)


def test_probabilities_in_floating_point_tie_within_a_relative_tolerance() -> None:
    p = Fraction(0.1)
    outcomes = _synthetic([p, p * (1 + Fraction(1, 10**14)), Fraction(1, 50)], rational=False)
    assert outcomes.ties(outcomes.outcomes[0].probability, outcomes.outcomes[1].probability)
    result = pt.search(outcomes, Fraction(1, 10), count=5, lattice=Lattice(max_pay=9))
    assert all(c.pays["l0"] == c.pays["l1"] for c in result.candidates)


@settings(max_examples=25, deadline=None)
@given(
    share=st.fractions(min_value=0, max_value=1, max_denominator=10**6),
    top=st.integers(min_value=3, max_value=6),
    held=st.sampled_from([(), ("suited-20",), ("unsuited-20",), ("spade-kings",)]),
    pays=st.sampled_from(["integers", "round"]),
)
def test_search_equals_the_brute_force_on_random_small_lattices(
    kings_bounty_6: WagerOutcomes,
    share: Fraction,
    top: int,
    held: tuple[str, ...],
    pays: str,
) -> None:
    """A target anywhere in the lattice's reach; some lines held at their base pays."""
    lattice = Lattice(max_pay=top, pays=pays, hold=frozenset(held))
    try:
        low, high = pt.lattice_reach(kings_bounty_6, lattice)
    except pt.TargetOutOfReachError:  # held pays the monotone order cannot follow
        assert not [row for row in _brute_force(kings_bounty_6, lattice, Fraction(0), 1)]
        return
    result = pt.search(kings_bounty_6, low + share * (high - low), count=8, lattice=lattice)
    _check(result, lattice, 8)


def test_the_meet_in_the_middle_is_used_and_agrees_with_one_half(
    kings_bounty_6: WagerOutcomes,
) -> None:
    """With a tiny limit on each half the search must split; a huge one lets it enumerate
    every paytable in one half. Both give the same candidates."""
    lattice = Lattice(max_pay=12, pays="integers")
    split = pt.search(kings_bounty_6, Fraction(15, 100), count=10, lattice=lattice, limit=3_000)
    whole = pt.search(kings_bounty_6, Fraction(15, 100), count=10, lattice=lattice)
    assert [c.pays for c in split.candidates] == [c.pays for c in whole.candidates]


def test_the_reach_is_every_pay_at_its_lowest_and_highest(bet_the_set_6: WagerOutcomes) -> None:
    """Bet the Set, 6 decks, pays 1 to 25: every pay at 1 to 1 loses 288/311 - 23/311 =
    265/311; both at 25 to 1 return 25 x 23/311 - 288/311 = 287/311 to the player."""
    result = pt.search(bet_the_set_6, Fraction(1, 10), count=1, lattice=Lattice(max_pay=25))
    assert result.reach == (Fraction(-287, 311), Fraction(265, 311))
    with pytest.raises(pt.TargetOutOfReachError, match="outside what the paytables"):
        pt.search(bet_the_set_6, Fraction(9, 10), count=1, lattice=Lattice(max_pay=25))


def test_a_lattice_too_large_is_refused(kings_bounty_6: WagerOutcomes) -> None:
    with pytest.raises(pt.LatticeTooLargeError, match="too large to search exactly"):
        pt.search(
            kings_bounty_6, Fraction(1, 5), count=5, lattice=Lattice(max_pay=1000, pays="integers")
        )


def test_unknown_lines_and_bad_bounds_are_refused(bet_the_set_6: WagerOutcomes) -> None:
    with pytest.raises(ValueError, match="'two-pair' is not a line of the bet_the_set paytable"):
        pt.search(bet_the_set_6, Fraction(0), lattice=Lattice(hold=frozenset({"two-pair"})))
    with pytest.raises(ValueError, match="at least 1 to 1"):
        pt.search(bet_the_set_6, Fraction(0), lattice=Lattice(min_pay=0))


# -- the player's strategy does not depend on the side wager ------------------------------------


def test_633c5_buzzer_beater_leaves_the_analysed_strategy_unchanged() -> None:
    """The analysis of a hybrid table has no field for the Buzzer Beater or its pays: the same
    strategy, hence the same joint distribution of final hands, whatever the paytable."""
    from tablejack.games.hybrid_rules import BuzzerBeaterRow, HybridRules
    from tablejack.lab.model import AnalysisRules

    other = (BuzzerBeaterRow("20", ("20",), Fraction(2)),)
    base = AnalysisRules.from_rules(HybridRules())
    assert AnalysisRules.from_rules(HybridRules(buzzer_beater_paytable=other)) == base
    assert AnalysisRules.from_rules(HybridRules(buzzer_beater=False)) == base


@pytest.mark.slow
def test_633b16_ez_bust_leaves_the_generated_strategy_unchanged() -> None:
    """With and without the EZ Bust wager the generated basic strategy is the same table: the
    wager's outcomes are computed for the Blackjack Wager's strategy, whatever EZ Bust pays."""
    from tablejack.core.rules import ClassicRules
    from tablejack.lab.exact import analyse
    from tablejack.lab.model import AnalysisRules

    with_ez = analyse(AnalysisRules.from_rules(ClassicRules(decks=6, ez_bust=True)))
    without = analyse(AnalysisRules.from_rules(ClassicRules(decks=6, ez_bust=False)))
    assert with_ez.rules != without.rules
    for a, b in zip(with_ez.strategy.arrays(), without.strategy.arrays(), strict=True):
        assert np.array_equal(a, b)


# -- the command ---------------------------------------------------------------------------------

runner = CliRunner()


def _run(args: list[str]) -> Result:
    return runner.invoke(app, ["paytable", *args])


def test_paytable_json_is_one_object_with_the_regulation_table_first() -> None:
    result = _run(
        ["--game", "hybrid-shared", "--wager", "bet-the-set", "--target-edge", "33/311",
         "--count", "4", "--json"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    payload = json.loads(result.stdout)
    assert payload["wager"] == "bet_the_set"
    first = payload["candidates"][0]
    assert first["pays"] == {"suited-pair": "15 to 1", "pair": "10 to 1"}
    assert first["house_edge_exact"] == "33/311" and first["distance_exact"] == "0/1"
    assert [c["rank"] for c in payload["candidates"]] == [1, 2, 3, 4]
    distances = [Fraction(c["distance_exact"]) for c in payload["candidates"]]
    assert distances == sorted(distances)
    assert payload["base"]["on_lattice"] is True
    assert payload["lattice"]["pays"] == "round"
    assert {o["outcome"]: o["probability_exact"] for o in payload["outcomes"]} == {
        "suited-pair": "5/311",
        "pair": "18/311",
        "loses": "288/311",
    }


def test_paytable_text_is_a_table_of_the_candidates() -> None:
    result = _run(
        ["--game", "hybrid-shared", "--wager", "kings_bounty", "--target-edge", "15%",
         "--count", "3"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "nearest a house edge of 15.0000%" in out
    assert "not monotone: unsuited-kings" in out
    assert "g  unsuited-20" in out
    assert len([line for line in out.splitlines() if line.lstrip()[:2] in ("1 ", "2 ", "3 ")]) == 3


@pytest.mark.slow
def test_paytable_writes_a_parsheet_per_candidate(tmp_path: Path) -> None:
    out = tmp_path / "design"
    result = _run(
        ["--game", "hybrid-shared", "--wager", "royal_match", "--target-edge", "0.03",
         "--count", "2", "--hold", "suited-match", "--out", str(out), "--json"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    summary = json.loads((out / "paytables.json").read_text())
    assert summary["candidates"] == payload["candidates"]
    for candidate in payload["candidates"]:
        folder = out / f"candidate-{candidate['rank']:02d}"
        sheet = json.loads((folder / "parsheet.json").read_text())
        wager = sheet["wagers"][0]
        assert wager["house_edge_exact"] == candidate["house_edge_exact"]
        assert wager["paytable"] == [[k, v] for k, v in candidate["pays"].items()]
        assert sheet["rules"]["royal_match_paytable"]["suited-match"] == "5 to 2"
        assert sheet["rules"]["crown_treasure_pays"] == candidate["pays"]["crown-treasure"]
        html = (folder / "parsheet.html").read_text()
        assert f"paytable {candidate['rank']} of 2 nearest a house edge of 3.0000%" in html
        assert (folder / "royal_match_distribution.png").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "hybrid", "--wager", "kings_bounty", "--target-edge", "0.1"],
         "Unknown wager 'kings_bounty' for the hybrid game"),
        (["--game", "classic", "--wager", "blackjack", "--target-edge", "0.01"],
         "The blackjack wager of the classic game has no paytable to design"),
        (["--game", "multi-action", "--wager", "insurance", "--target-edge", "0.01"],
         "side wagers are: none"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "0.9"],
         "A target house edge of 90.0000% is outside what the paytables of this lattice reach"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "lots"],
         "--target-edge 'lots' must be a house edge"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "0.1",
          "--pays", "odd"], "--pays 'odd' must be one of integers, round"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "0.1",
          "--pay", "pair=x"], "--pay 'pair=x' must be LINE=LOW:HIGH"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "0.1",
          "--hold", "two-pair"], "'two-pair' is not a line of the bet_the_set paytable"),
        (["--game", "hybrid-shared", "--wager", "kings_bounty", "--target-edge", "0.1",
          "--pays", "integers"], "too large to search exactly"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "0.1",
          "--form", "by-up-card"], "--form by-up-card is for the EZ Bust wager only"),
        (["--game", "hybrid-shared", "--wager", "bet_the_set", "--target-edge", "0.1",
          "--count", "0"], "--count 0 must be from 1 to 1000"),
    ],
)  # fmt: skip
def test_paytable_bad_input_is_a_sentence_and_exit_code_2(args: list[str], message: str) -> None:
    result = _run([*args, "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in " ".join(result.stderr.split())


@pytest.mark.slow
def test_633c5v3_buzzer_beater_regulation_edge_and_monotone_candidates() -> None:
    """The regulation's paytable is reported with the lab's edge (-17.3442%, a player edge,
    A-13) and where it breaks the monotone order; the candidates keep it."""
    from tablejack.games.hybrid_rules import HybridRules
    from tablejack.lab.buzzer import buzzer_beater
    from tablejack.lab.model import AnalysisRules

    rules = HybridRules()
    analysis = AnalysisRules.from_rules(rules)
    result = _run(["--game", "hybrid", "--wager", "buzzer_beater", "--target-edge", "0.05",
                   "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    base = payload["base"]
    assert base["house_edge"] == pytest.approx(buzzer_beater(analysis, rules)["house_edge"],
                                               abs=1e-12)  # fmt: skip
    assert round(base["house_edge"] * 100, 4) == -17.3442
    assert base["player_edge"] and not base["monotone"]
    assert any(
        v.startswith("player blackjack against dealer blackjack") for v in base["violations"]
    )
    outcomes = pt.buzzer_beater_outcomes(analysis, rules)
    for candidate in payload["candidates"]:
        pays = {k: Fraction(v.split()[0]) for k, v in candidate["pays"].items()}
        assert outcomes.rarity_violations(pays) == []
        # the lab's own Buzzer Beater figure for the candidate paytable agrees
        designed = pt.candidate_rules(outcomes, rules, pays)
        assert candidate["house_edge"] == pytest.approx(
            buzzer_beater(analysis, designed)["house_edge"], abs=1e-12
        )


@pytest.mark.slow
def test_633c5v3_a_monotone_buzzer_beater_table_is_found_at_its_own_edge() -> None:
    from tablejack.games.hybrid_rules import BuzzerBeaterRow, HybridRules
    from tablejack.lab.model import AnalysisRules

    rows = (
        BuzzerBeaterRow("blackjack", ("blackjack",), Fraction(25)),
        BuzzerBeaterRow("20", ("20",), Fraction(2)),
        BuzzerBeaterRow("20", ("21", "blackjack"), Fraction(9)),
        BuzzerBeaterRow("19", ("19",), Fraction(10)),
        BuzzerBeaterRow("19", ("20",), Fraction(4)),
        BuzzerBeaterRow("19", ("21", "blackjack"), Fraction(12)),
    )
    rules = HybridRules(buzzer_beater_paytable=rows)
    outcomes = pt.buzzer_beater_outcomes(AnalysisRules.from_rules(rules), rules)
    assert outcomes.rarity_violations(outcomes.base_pays) == []
    edge = outcomes.house_edge(outcomes.base_pays)
    result = pt.search(outcomes, edge, count=3)
    assert result.candidates[0].pays == outcomes.base_pays
    assert result.candidates[0].distance == 0


@pytest.mark.slow
def test_633b16i_ez_bust_one_to_one_is_the_regulation_and_by_up_card_is_monotone() -> None:
    """EZ Bust pays 1 to 1 (633b.16(i)): at the lab's edge (21.39%) that is the nearest; by
    up card, the rarer bust (from a 2) never pays less than a more common one (from a 6)."""
    from tablejack.lab.exact import ez_bust
    from tablejack.lab.model import AnalysisRules

    analysis = AnalysisRules(decks=6)
    edge = ez_bust(analysis)["house_edge"]
    result = _run(["--game", "classic", "--wager", "ez_bust", "--target-edge", repr(edge),
                   "--count", "2", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["candidates"][0]["pays"] == {"dealer-busts": "1 to 1"}
    assert payload["candidates"][0]["house_edge"] == pytest.approx(edge, abs=1e-15)
    assert payload["candidates"][1]["pays"] == {"dealer-busts": "2 to 1"}
    outcomes = pt.ez_bust_outcomes(analysis, "by-up-card")
    assert sum(o.probability for o in outcomes.outcomes) == pytest.approx(1, abs=1e-12)
    assert outcomes.house_edge(outcomes.base_pays) == pytest.approx(edge, abs=1e-15)
    found = pt.search(outcomes, Fraction(1, 10), count=10, lattice=Lattice(max_pay=8))
    rarest_first = sorted((o for o in outcomes.outcomes if o.lines), key=lambda o: o.probability)
    assert rarest_first[0].lines == ("dealer-busts-from-2",)
    for c in found.candidates:
        assert outcomes.rarity_violations(c.pays) == []
        assert c.pays["dealer-busts-from-2"] >= c.pays["dealer-busts-from-6"]
