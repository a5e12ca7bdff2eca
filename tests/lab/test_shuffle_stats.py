"""The shuffle and its generators (``tablejack.lab.shuffle_stats``): the vectorised twin deals
exactly the engine's seeded shoes; a quick run of every statistic on the seeded generator with a
fixed seed passes; a deliberately biased shuffle is caught."""

from __future__ import annotations

import itertools
import math
import random
from math import comb

import numpy as np
import pytest

from tablejack.core.cards import full_deck
from tablejack.core.shoe import Shoe
from tablejack.games.session import shoe_seed
from tablejack.lab import shuffle_stats
from tablejack.lab.shuffle_stats import ALPHA, seeded_shoes, shuffle_statistics

INDEX = {card: i for i, card in enumerate(full_deck())}


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_633a5_the_twin_deals_exactly_the_engines_seeded_shoes(decks: int) -> None:
    seeds = [0, 1, shoe_seed(2026, 7), 2**40 + 3]
    for seed, row in zip(seeds, seeded_shoes(seeds, decks), strict=True):
        engine = Shoe.shuffled(decks, seed=seed).peek(52 * decks)
        assert row.tolist() == [INDEX[card] for card in engine]


def test_633c5_j_seeded_shuffle_passes_every_statistic() -> None:
    report = shuffle_statistics("seeded", shoes=20_000, decks=6, seed=2026)
    failed = [(t.name, t.p_value) for t in report.tests if t.p_value < ALPHA]
    assert failed == []
    assert report.passed
    assert sum(report.first_card_frequencies) == 20_000
    names = {t.name for t in report.tests}
    assert {
        "position (card at each position)",
        "first card (identity)",
        "serial correlation (lag 1)",
        "runs (high/low)",
        "pairs (first two ranks)",
        "poker (first five ranks)",
    } <= names


def test_a_deliberately_biased_shuffle_is_caught() -> None:
    # Sattolo's off-by-one (the swap index drawn below i, not up to it): no card stays put.
    report = shuffle_statistics("biased", shoes=20_000, decks=6, seed=2026)
    position = next(t for t in report.tests if t.name.startswith("position"))
    assert position.p_value < 1e-20
    assert not report.passed


def test_the_secure_generator_runs_through_the_same_shuffle() -> None:
    # os.urandom words: not reproducible, so only the shape of the report is checked here; the
    # certification report judges its p-values.
    report = shuffle_statistics("secure", shoes=1_000, decks=2)
    assert report.seed is None and len(report.tests) == 10
    assert all(0.0 <= t.p_value <= 1.0 for t in report.tests)


def test_exact_null_distributions() -> None:
    poker = shuffle_stats.poker_probabilities(1)
    assert sum(poker.values()) == pytest.approx(1.0, abs=1e-12)
    assert "five of a kind" not in poker  # one deck holds four of a rank
    assert poker["one pair"] == pytest.approx(1_098_240 / comb(52, 5))  # the poker hand count
    # The runs moments against brute force over every order of 3 ones and 4 zeros.
    mean, variance = shuffle_stats.runs_moments(3, 4)
    rng = random.Random(1)
    counts = []
    for _ in range(20_000):
        marks = [1, 1, 1, 0, 0, 0, 0]
        rng.shuffle(marks)
        counts.append(1 + sum(a != b for a, b in itertools.pairwise(marks)))
    assert np.mean(counts) == pytest.approx(mean, abs=0.03)
    assert np.var(counts) == pytest.approx(variance, rel=0.05)
    assert shuffle_stats.lag_null(312, 1) == pytest.approx(-1 / 312)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="Unknown generator"):
        shuffle_statistics("lcg", shoes=1_000)
    with pytest.raises(ValueError, match="at least 100"):
        shuffle_statistics("seeded", shoes=10)


def test_merging_small_categories_keeps_every_count() -> None:
    observed = np.array([3, 40, 1, 200, 0])
    expected = np.array([2.5, 38.0, 0.7, 202.7, 0.1])
    obs, exp = shuffle_stats.merged(observed, expected)
    assert obs.sum() == observed.sum() and exp.sum() == pytest.approx(expected.sum())
    assert exp.min() >= 5 and len(exp) == 2


@pytest.mark.parametrize(
    ("statistic", "df", "p"),
    [
        (3.841458820694124, 1, 0.05),
        (6.634896601021214, 1, 0.01),
        (18.307038053275146, 10, 0.05),
        (26.216967305535853, 12, 0.01),
        (68.66929391228578, 51, 0.05),
        (2.0, 2, math.exp(-1.0)),
    ],
)
def test_chi_square_p_values_match_the_published_critical_values(
    statistic: float, df: int, p: float
) -> None:
    """The chi-square upper tail at the tables' critical values (NIST/SEMATECH e-Handbook,
    1.3.6.7.4: 3.841 and 6.635 for 1 df, 18.307 for 10, 26.217 for 12, 68.669 for 51, given
    here to full precision) and at the closed form of 2 df, P(X >= x) = exp(-x/2)."""
    assert shuffle_stats.chi_square_p(statistic, df) == pytest.approx(p, rel=1e-12)


def test_chi_square_p_of_the_position_test_s_degrees_of_freedom_is_the_normal_limit() -> None:
    """For the position test's 15,861 degrees of freedom (312 positions × 51) the chi-square
    is nearly normal: its mean (df) has an upper tail just under one half, and mean + 2 sd
    about the normal's 2.3% (Wilson-Hilferty: 2.36%)."""
    df = 311 * 51
    at_mean = shuffle_stats.chi_square_p(df, df)
    assert 0.49 < at_mean < 0.5
    two_sd = shuffle_stats.chi_square_p(df + 2 * math.sqrt(2 * df), df)
    assert two_sd == pytest.approx(0.0236, abs=0.0005)


@pytest.mark.parametrize(
    ("z", "p"),
    [
        (1.959963984540054, 0.05),
        (-2.5758293035489004, 0.01),
        (0.0, 1.0),
        (3.2905267314919255, 0.001),
    ],
)
def test_normal_two_sided_p_values_match_the_published_quantiles(z: float, p: float) -> None:
    """Two-sided normal tails at the standard quantiles (1.960 for 5%, 2.576 for 1%, 3.291
    for 0.1%), either sign."""
    assert shuffle_stats.normal_two_sided_p(z) == pytest.approx(p, rel=1e-12, abs=1e-15)
