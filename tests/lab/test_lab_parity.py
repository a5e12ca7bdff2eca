"""Parity: identical shoes through the engine (ClassicRound) and the numba kernel give
identical per-round, per-wager results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.core import ClassicRules
from tablejack.lab import _sim_kernels as kern
from tablejack.lab import simulate as sim
from tablejack.lab.exact import analyse
from tablejack.lab.model import AnalysisRules
from tablejack.lab.players import play_engine_shoe

pytestmark = pytest.mark.slow  # engine and kernel on many shoes, kernel compiles

CASES = {
    "6D EZ Bust": ClassicRules(decks=6, ez_bust=True),
    "2D push-all RSA SP3": ClassicRules(
        decks=2,
        ez_bust=True,
        ez_bust_push_all=True,
        resplit_aces=True,
        max_split_hands=3,
        penetration=0.6,
    ),
    "1D D10-11 NS HSA NDAS": ClassicRules(
        decks=1,
        double_down_totals="10-11",
        late_surrender=False,
        one_card_to_split_aces=False,
        double_after_split=False,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_engine_and_kernel_settle_identical_shoes_identically(name: str) -> None:
    rules = CASES[name]
    lab_rules = AnalysisRules.from_rules(rules)
    assert lab_rules.decks is not None
    strategy = analyse(lab_rules.replace(penetration=0.75)).strategy
    cut = sim.cut_position(lab_rules)
    rounds = 0
    for index in range(40):
        engine = play_engine_shoe(rules, strategy, sim.shoe_cards(77, index, lab_rules.decks), cut)
        out = np.zeros((600, 4))
        count = kern.record_shoe(
            sim.run_words(77), index, lab_rules.decks, cut, sim.kernel_rules(lab_rules),
            sim.kernel_tables(strategy, lab_rules), out,
        )  # fmt: skip
        kernel = [
            {"main": row[0], "ez": row[1], "ez_wagers": int(row[2]), "cards": int(row[3])}
            for row in out[:count]
        ]
        assert kernel == engine, f"shoe {index}"
        rounds += count
    assert rounds > 40 * 5


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    decks=st.sampled_from([1, 2, 4, 6, 8]),
    das=st.booleans(),
    surrender=st.booleans(),
    split_hands=st.integers(min_value=2, max_value=4),
    rsa=st.booleans(),
    one_card=st.booleans(),
    totals=st.sampled_from(["any", "9-11", "10-11"]),
    ez=st.sampled_from([(False, False), (True, False), (True, True)]),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_property_engine_and_kernel_agree_for_any_rules_and_seed(
    decks: int,
    das: bool,
    surrender: bool,
    split_hands: int,
    rsa: bool,
    one_card: bool,
    totals: str,
    ez: tuple[bool, bool],
    seed: int,
) -> None:
    rules = ClassicRules(
        decks=decks, double_after_split=das, late_surrender=surrender,
        max_split_hands=split_hands, resplit_aces=rsa, one_card_to_split_aces=one_card,
        double_down_totals=totals, ez_bust=ez[0], ez_bust_push_all=ez[1],
    )  # fmt: skip
    lab_rules = AnalysisRules.from_rules(rules)
    assert lab_rules.decks is not None
    strategy = analyse(lab_rules.replace(penetration=0.75)).strategy
    cut = sim.cut_position(lab_rules)
    for index in (0, 1):
        engine = play_engine_shoe(rules, strategy, sim.shoe_cards(seed, index, decks), cut)
        out = np.zeros((600, 4))
        count = kern.record_shoe(
            sim.run_words(seed), index, decks, cut, sim.kernel_rules(lab_rules),
            sim.kernel_tables(strategy, lab_rules), out,
        )  # fmt: skip
        kernel = [
            {"main": row[0], "ez": row[1], "ez_wagers": int(row[2]), "cards": int(row[3])}
            for row in out[:count]
        ]
        assert kernel == engine
