"""Statistics of the shoe's shuffle and its generators (``tablejack.core.shoe``).

:meth:`tablejack.core.shoe.Shoe.shuffled` puts ``decks`` full decks in deck order and shuffles
them with Python's ``random.shuffle`` (Fisher–Yates from the last position down, each swap index
drawn by ``_randbelow``: ``k`` bits of a 32-bit word, ``k`` the bit length of the range, redrawn
while out of range). Two generators feed it:

* ``seeded``: ``random.Random(seed)`` (MT19937) with the session's per-shoe seed
  (:func:`tablejack.games.session.shoe_seed`): reproducible play and tests;
* ``secure``: ``secrets.SystemRandom`` (the operating system's ``os.urandom``): live play.

This module plays the same algorithm on numpy arrays, a batch of shoes at a time, so that a
million shoes take seconds. For ``seeded`` the words are exactly the ones ``random.Random(seed)``
produces (its ``getrandbits``), and the result is exactly the engine's shoe (tested card for
card); for ``secure`` they are words of ``os.urandom``, the source ``SystemRandom`` reads (which
takes whole bytes per draw: the same distribution, not the same bytes). ``biased`` is a
deliberately wrong shuffle (Sattolo's off-by-one: the swap index is drawn below ``i`` instead of
up to it, so no card stays where it was) that every test suite run must catch.

The tests, each with a statistic and a p-value (the normal's from :func:`math.erfc`, the
chi-square's from mpmath's incomplete gamma function):

* **position**: chi-square of the card (52 identities) found at each of the shoe's positions
  over all shoes; expected N/52 per cell; df = (positions − 1) × 51;
* **first card**: chi-square of the first card dealt over the 52 identities (df 51) and over the
  13 ranks (df 12);
* **serial correlation**: the lag-1 (and lag-2, lag-3) correlation of the point values within
  each shoe, averaged over the shoes, against its exact value for a random order of a fixed
  multiset, −(n − lag)/(n(n − 1)) (z-test over independent shoes);
* **runs**: Wald–Wolfowitz runs of high cards (ten-values and aces) and low cards in each shoe;
  the mean and variance of the number of runs are exact for a random order of a fixed multiset
  (z-test over independent shoes); and runs of red and black;
* **pairs**: the ranks of the first two cards of each shoe (13 × 13 cells) against the exact
  probabilities of drawing without replacement (chi-square; one pair per shoe, so the shoes'
  pairs are independent);
* **poker**: the rank pattern of the first five cards of each shoe (all different, one pair, two
  pairs, three of a kind, full house, four and five of a kind) against the exact probabilities
  (chi-square; categories with fewer than five expected merged).

Every test is judged against a significance level (``ALPHA`` = 1e-4 by default: with some
thirty p-values per report a level of 0.01 would fail a good shuffle one run in four; the
report lists every p-value, and any below 0.01 is marked for a look).

>>> report = shuffle_statistics("seeded", shoes=2_000, decks=1, seed=7)
>>> sorted(test.name for test in report.tests)[:3]
['first card (identity)', 'first card (rank)', 'pairs (first two ranks)']
>>> report.passed
True
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from math import comb, factorial
from typing import Any

import numpy as np

from tablejack.core.cards import full_deck

__all__ = [
    "ALPHA",
    "SOURCES",
    "ShuffleReport",
    "ShuffleTest",
    "chi_square_p",
    "lag_null",
    "merged",
    "normal_two_sided_p",
    "poker_probabilities",
    "runs_moments",
    "seeded_shoes",
    "shuffle_statistics",
]

ALPHA = 1e-4
"""A test fails when its p-value is below this."""

WATCH = 0.01
"""A p-value below this is marked for a look (not a failure)."""

SOURCES = ("seeded", "secure", "biased")

WORDS = 1024
"""32-bit words drawn per shoe (the shuffle of 8 decks needs about 590 on average)."""

_DECK = full_deck()
_RANK = np.array([card.rank.value - 1 for card in _DECK], dtype=np.int64)  # 0 = ace … 12 = king
_POINTS = np.array([min(card.rank.value, 10) for card in _DECK], dtype=np.float64)  # ace = 1
_HIGH = np.array([card.rank.value == 1 or card.rank.value >= 10 for card in _DECK])
_RED = np.array([card.suit.value in ("H", "D") for card in _DECK])


@dataclass(frozen=True, slots=True)
class ShuffleTest:
    """One statistical test: its statistic, degrees of freedom (chi-square) or None (z), and
    p-value."""

    name: str
    statistic: float
    df: int | None
    p_value: float
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """The p-value is at least :data:`ALPHA`."""
        return self.p_value >= ALPHA

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "name": self.name,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "passed": self.passed,
            "watch": self.p_value < WATCH,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class ShuffleReport:
    """The tests of one generator over ``shoes`` shuffled shoes of ``decks`` decks."""

    source: str
    shoes: int
    decks: int
    seed: int | None
    tests: tuple[ShuffleTest, ...]
    first_card_frequencies: tuple[int, ...]

    @property
    def passed(self) -> bool:
        """Every test passed."""
        return all(test.passed for test in self.tests)

    def to_json(self) -> dict[str, Any]:
        """Plain data for the certification report."""
        return {
            "source": self.source,
            "shoes": self.shoes,
            "decks": self.decks,
            "seed": self.seed,
            "alpha": ALPHA,
            "passed": self.passed,
            "tests": [test.to_json() for test in self.tests],
            "first_card_frequencies": {
                card.code: count
                for card, count in zip(_DECK, self.first_card_frequencies, strict=True)
            },
        }


# -- the shuffle, vectorised ---------------------------------------------------------------------


def _fisher_yates(words: np.ndarray, decks: int, *, sattolo: bool = False) -> np.ndarray:
    """Shuffle one shoe per row of ``words`` (uint32, one row of words per shoe) exactly as
    ``random.shuffle`` with ``_randbelow_with_getrandbits`` does; rows of card identities."""
    rows, width = words.shape
    size = 52 * decks
    shoes = np.tile(np.arange(52, dtype=np.int8), (rows, decks))
    flat_words = np.ascontiguousarray(words).ravel()
    flat_shoes = shoes.ravel()
    word_base = np.arange(rows, dtype=np.intp) * width
    shoe_base = np.arange(rows, dtype=np.intp) * size
    pointer = np.zeros(rows, dtype=np.intp)
    for i in range(size - 1, 0, -1):
        bound = i if sattolo else i + 1
        shift = np.uint32(32 - bound.bit_length())
        pick = (flat_words[word_base + pointer] >> shift).astype(np.intp)
        pointer += 1
        todo = np.flatnonzero(pick >= bound)
        while todo.size:
            again = (flat_words[word_base[todo] + pointer[todo]] >> shift).astype(np.intp)
            pointer[todo] += 1
            accepted = again < bound
            pick[todo[accepted]] = again[accepted]
            todo = todo[~accepted]
        if pointer.max() >= width:
            raise RuntimeError("a shoe needed more random words than were drawn")
        here = shoe_base + i
        there = shoe_base + pick
        held = flat_shoes[here]
        flat_shoes[here] = flat_shoes[there]
        flat_shoes[there] = held
    return shoes.astype(np.int64)


def _seeded_words(seeds: range | list[int]) -> np.ndarray:
    """The first :data:`WORDS` outputs of ``random.Random(seed)`` for each seed (MT19937: the
    words ``getrandbits`` and therefore ``shuffle`` consume, in order)."""
    out = np.empty((len(seeds), WORDS), dtype=np.uint32)
    for row, seed in enumerate(seeds):
        data = random.Random(seed).getrandbits(32 * WORDS).to_bytes(4 * WORDS, "little")
        out[row] = np.frombuffer(data, dtype="<u4")
    return out


def _secure_words(rows: int) -> np.ndarray:
    return np.frombuffer(os.urandom(4 * WORDS * rows), dtype="<u4").reshape(rows, WORDS)


def seeded_shoes(seeds: range | list[int], decks: int) -> np.ndarray:
    """The card identities (0–51, :func:`~tablejack.core.cards.full_deck` order) of
    ``Shoe.shuffled(decks, seed=s)`` for each seed, one row per shoe: exactly the engine's."""
    return _fisher_yates(_seeded_words(seeds), decks)


def _batches(source: str, shoes: int, decks: int, seed: int | None, batch: int) -> Any:
    from tablejack.games.session import shoe_seed

    done = 0
    base = 0 if seed is None else seed
    generator = np.random.default_rng(base)
    while done < shoes:
        rows = min(batch, shoes - done)
        if source == "seeded":
            yield seeded_shoes([shoe_seed(base, done + k) for k in range(rows)], decks)
        elif source == "secure":
            yield _fisher_yates(_secure_words(rows), decks)
        elif source == "biased":
            words = generator.integers(0, 2**32, size=(rows, WORDS), dtype=np.uint32)
            yield _fisher_yates(words, decks, sattolo=True)
        else:
            raise ValueError(f"Unknown generator {source!r}; known: {', '.join(SOURCES)}.")
        done += rows


# -- exact null distributions ----------------------------------------------------------------------


def poker_probabilities(decks: int) -> dict[str, float]:
    """Probabilities of the rank pattern of five cards drawn from ``decks`` decks."""
    per_rank = 4 * decks
    total = comb(52 * decks, 5)
    patterns = {
        "all different": (1, 1, 1, 1, 1),
        "one pair": (2, 1, 1, 1),
        "two pairs": (2, 2, 1),
        "three of a kind": (3, 1, 1),
        "full house": (3, 2),
        "four of a kind": (4, 1),
        "five of a kind": (5,),
    }
    out = {}
    for name, parts in patterns.items():
        if max(parts) > per_rank:
            continue
        same = 1
        for size in set(parts):
            same *= factorial(parts.count(size))
        ranks = factorial(13) // (factorial(13 - len(parts)) * same)
        ways = ranks
        for part in parts:
            ways *= comb(per_rank, part)
        out[name] = ways / total
    return out


def _pattern(ranks: np.ndarray) -> np.ndarray:
    """The poker pattern index (order of :func:`poker_probabilities`) of each row of 5 ranks."""
    counts = np.zeros((ranks.shape[0], 13), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(ranks.shape[0]), 5), ranks.ravel()), 1)
    top = np.sort(counts, axis=1)[:, ::-1]
    first, second = top[:, 0], top[:, 1]
    pattern = np.full(ranks.shape[0], 0)
    pattern[(first == 2) & (second == 1)] = 1
    pattern[(first == 2) & (second == 2)] = 2
    pattern[(first == 3) & (second == 1)] = 3
    pattern[(first == 3) & (second == 2)] = 4
    pattern[first == 4] = 5
    pattern[first == 5] = 6
    return pattern


def runs_moments(n1: int, n2: int) -> tuple[float, float]:
    """Exact mean and variance of the number of runs in a random order of n1 + n2 items."""
    n = n1 + n2
    mean = 1 + 2 * n1 * n2 / n
    variance = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    return mean, variance


def chi_square_p(statistic: float, df: int) -> float:
    """P(X >= statistic) for X chi-square with ``df`` degrees of freedom: the regularized upper
    incomplete gamma function Q(df/2, statistic/2), computed by mpmath."""
    import mpmath  # type: ignore[import-untyped, unused-ignore]

    return float(mpmath.gammainc(df / 2, statistic / 2, mpmath.inf, regularized=True))


def normal_two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z: erfc(|z| / sqrt 2)."""
    return math.erfc(abs(z) / math.sqrt(2))


def _chi_square(observed: np.ndarray, expected: np.ndarray, df: int) -> tuple[float, float]:
    statistic = float(((observed - expected) ** 2 / expected).sum())
    return statistic, chi_square_p(statistic, df)


def merged(observed: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the categories with the smallest expected counts until each expects five."""
    order = np.argsort(expected)
    obs = list(observed[order].astype(float))
    exp = list(expected[order].astype(float))
    while len(exp) > 2 and exp[0] < 5:
        smallest_obs, smallest_exp = obs.pop(0), exp.pop(0)
        obs[0] += smallest_obs
        exp[0] += smallest_exp
        pairs = sorted(zip(exp, obs, strict=True))
        exp = [e for e, _ in pairs]
        obs = [o for _, o in pairs]
    return np.array(obs), np.array(exp)


def _z_test(name: str, z: float, detail: dict[str, Any]) -> ShuffleTest:
    return ShuffleTest(name, float(z), None, normal_two_sided_p(float(z)), detail)


# -- the report ----------------------------------------------------------------------------------


def shuffle_statistics(
    source: str,
    *,
    shoes: int,
    decks: int = 6,
    seed: int | None = 2026,
    batch: int = 10_000,
    progress: Callable[[int], None] | None = None,
) -> ShuffleReport:
    """Shuffle ``shoes`` shoes of ``decks`` decks with the generator ``source`` (``seeded``,
    ``secure``, ``biased``) and run every test. ``seed`` is the session seed of ``seeded`` (shoe
    ``i`` is ``Shoe.shuffled(decks, seed=shoe_seed(seed, i))``) and of the words of ``biased``;
    ``secure`` ignores it. ``progress`` is called with the number of shoes done after each
    batch."""
    if source not in SOURCES:
        raise ValueError(f"Unknown generator {source!r}; known: {', '.join(SOURCES)}.")
    if shoes < 100:
        raise ValueError(f"shoes = {shoes}: the statistics need at least 100 shoes.")
    size = 52 * decks
    position = np.zeros(size * 52, dtype=np.int64)
    first = np.zeros(52, dtype=np.int64)
    pairs = np.zeros(13 * 13, dtype=np.int64)
    poker = np.zeros(7, dtype=np.int64)
    lag_sums = np.zeros(3)
    lag_squares = np.zeros(3)
    runs_sum = np.zeros(2)
    offsets = np.arange(size, dtype=np.int64) * 52
    centred_points = _POINTS - _POINTS.mean()
    variance_points = float((centred_points**2).mean())
    done = 0
    for cards in _batches(source, shoes, decks, seed, batch):
        position += np.bincount((cards + offsets).ravel(), minlength=size * 52)
        first += np.bincount(cards[:, 0], minlength=52)
        ranks = _RANK[cards]
        pairs += np.bincount(ranks[:, 0] * 13 + ranks[:, 1], minlength=169)
        poker += np.bincount(_pattern(ranks[:, :5]), minlength=7)
        y = centred_points[cards]
        for lag in range(3):
            r = (y[:, : size - lag - 1] * y[:, lag + 1 :]).sum(axis=1) / (size * variance_points)
            lag_sums[lag] += r.sum()
            lag_squares[lag] += (r * r).sum()
        for which, flags in enumerate((_HIGH, _RED)):
            marks = flags[cards]
            runs_sum[which] += (1 + (marks[:, 1:] != marks[:, :-1]).sum(axis=1)).sum()
        done += cards.shape[0]
        if progress is not None:
            progress(done)
    n = shoes
    tests: list[ShuffleTest] = []
    expected = np.full(size * 52, n / 52)
    statistic, p = _chi_square(position, expected, (size - 1) * 51)
    per_position = ((position.reshape(size, 52) - n / 52) ** 2 / (n / 52)).sum(axis=1)
    tests.append(
        ShuffleTest(
            "position (card at each position)",
            statistic,
            (size - 1) * 51,
            p,
            {
                "cells": size * 52,
                "expected_per_cell": n / 52,
                "worst_position": int(per_position.argmax()) + 1,
                "worst_position_chi_square": float(per_position.max()),
            },
        )
    )
    statistic, p = _chi_square(first, np.full(52, n / 52), 51)
    tests.append(ShuffleTest("first card (identity)", statistic, 51, p, {"expected": n / 52}))
    by_rank = np.bincount(_RANK, weights=first, minlength=13)
    statistic, p = _chi_square(by_rank, np.full(13, n / 13), 12)
    tests.append(ShuffleTest("first card (rank)", statistic, 12, p, {"expected": n / 13}))
    per_rank = 4 * decks
    pair_expected = np.array(
        [
            n * per_rank * (per_rank - (a == b)) / (size * (size - 1))
            for a in range(13)
            for b in range(13)
        ]
    )
    statistic, p = _chi_square(pairs, pair_expected, 168)
    tests.append(ShuffleTest("pairs (first two ranks)", statistic, 168, p, {"cells": 169}))
    probabilities = poker_probabilities(decks)
    observed = poker[: len(probabilities)]
    obs, exp = merged(observed, n * np.array(list(probabilities.values())))
    statistic, p = _chi_square(obs, exp, len(exp) - 1)
    tests.append(
        ShuffleTest(
            "poker (first five ranks)",
            statistic,
            len(exp) - 1,
            p,
            {
                "observed": dict(zip(probabilities, observed.tolist(), strict=True)),
                "expected": {name: n * q for name, q in probabilities.items()},
            },
        )
    )
    for lag in range(3):
        null = lag_null(size, lag + 1)
        mean = lag_sums[lag] / n
        spread = max(lag_squares[lag] / n - mean * mean, 1e-300) ** 0.5
        z = (mean - null) / (spread / n**0.5)
        tests.append(
            _z_test(
                f"serial correlation (lag {lag + 1})",
                z,
                {
                    "mean": mean,
                    "expected": null,
                    "shoes": n,
                },
            )
        )
    for which, (label, flags) in enumerate((("high/low", _HIGH), ("red/black", _RED))):
        n1 = int(flags.sum()) * decks
        mean, variance = runs_moments(n1, size - n1)
        z = (runs_sum[which] - n * mean) / (n * variance) ** 0.5
        tests.append(
            _z_test(
                f"runs ({label})",
                z,
                {"mean_runs": runs_sum[which] / n, "expected_runs": mean},
            )
        )
    return ShuffleReport(
        source=source,
        shoes=shoes,
        decks=decks,
        seed=None if source == "secure" else seed,
        tests=tuple(tests),
        first_card_frequencies=tuple(int(x) for x in first),
    )


def lag_null(size: int, lag: int) -> float:
    """The exact expected lag-``lag`` serial correlation of a random order of a fixed multiset
    of ``size`` values: every pair of distinct positions has E[y_t y_s] = −σ²/(n − 1), and the
    statistic sums n − lag such products over n σ², so −(n − lag)/(n(n − 1))."""
    return -(size - lag) / (size * (size - 1))
