"""Exact (combinatorial) analysis of blackjack: dealer probabilities, action values, the
total-dependent basic strategy generated from the rules, the house edge of the main wager, and
the insurance and EZ Bust wagers (PA 633b.16).

Everything is computed for a finite shoe with the cards already seen removed (or for an
infinite deck); see ``docs/lab.md`` for the model and its one approximation (split hands).

>>> probs = dealer_probabilities(AnalysisRules(decks=1), "6")
>>> round(probs["bust"], 6)
0.420823
>>> analysis = analyse(AnalysisRules(decks=6))
>>> round(analysis.house_edge * 100, 3)  # per cent, 6D S17 DAS SP4 LS peek 3:2
0.334
>>> analysis.strategy.code("hard", 16, "T"), analysis.strategy.code("pair", 8, "T")
('R', 'P')
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tablejack.lab import _exact_kernels
from tablejack.lab.model import CARD_LABELS, DEALER_OUTCOMES, AnalysisRules, card_class

__all__ = [
    "ExactAnalysis",
    "Strategy",
    "analyse",
    "dealer_probabilities",
    "dealer_table",
    "ez_bust",
    "insurance",
    "scratch_space",
    "up_shoe",
]

kernels: Any = _exact_kernels
"""The numba kernels (untyped for mypy: numba dispatchers take any arguments)."""

ACTIONS = ("stand", "hit", "double", "split", "surrender")


# -- the dealer ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def dealer_dag(up: int, h17: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The dealer's drawing states for up card class ``up``: every multiset of drawn cards
    after which the dealer must still draw, sorted by size, with each state's successor per
    card (a state index, or ``-(outcome + 1)`` for a final outcome)."""
    bust = int(kernels.BUST)
    blackjack = int(kernels.BJ)

    def classify(hard_drawn: int, ace: bool, cards: int) -> int | None:
        hard = up + 1 + hard_drawn
        soft = (up == 0 or ace) and hard <= 11
        total = hard + 10 if soft else hard
        if total > 21:
            return bust
        if total >= 17 and not (h17 and soft and total == 17):
            return blackjack if total == 21 and cards == 1 else total - 17
        return None

    # breadth first, by number of cards drawn; each state with its drawn cards' hard total,
    # whether they hold an ace and how many they are, and its successor (or outcome) per card
    states: dict[tuple[int, ...], int] = {}
    order: list[tuple[int, ...]] = []
    steps: list[list[tuple[tuple[int, ...], int | None]]] = []
    frontier: list[tuple[tuple[int, ...], int, bool, int]] = [((0,) * 10, 0, False, 0)]
    while frontier:
        nxt = []
        for drawn, hard, ace, cards in frontier:
            if drawn in states:
                continue
            states[drawn] = len(order)
            order.append(drawn)
            step = []
            for r in range(10):
                child = (*drawn[:r], drawn[r] + 1, *drawn[r + 1 :])
                outcome = classify(hard + r + 1, ace or r == 0, cards + 1)
                step.append((child, outcome))
                if outcome is None and child not in states:
                    nxt.append((child, hard + r + 1, ace or r == 0, cards + 1))
            steps.append(step)
        frontier = nxt
    size = len(order)
    children = np.empty((size, 10), dtype=np.int64)
    drawn_arr = np.array(order, dtype=np.float64).reshape(size, 10)
    sizes = drawn_arr.sum(axis=1)
    for index, step in enumerate(steps):
        for r, (child, outcome) in enumerate(step):
            children[index, r] = states[child] if outcome is None else -(outcome + 1)
    return children, drawn_arr, sizes


@functools.lru_cache(maxsize=1)
def scratch_space() -> np.ndarray:
    return np.zeros((512, 7))


def _removal(cards: Iterable[str | int]) -> np.ndarray:
    removed = np.zeros(10)
    for card in cards:
        removed[card if isinstance(card, int) else card_class(card)] += 1
    return removed


def dealer_probabilities(
    rules: AnalysisRules,
    up: str | int,
    *,
    removed: Iterable[str | int] = (),
    post_peek: bool = False,
) -> dict[str, float]:
    """The dealer's final-outcome probabilities against up card ``up`` (``"A"`` … ``"T"``),
    from the shoe of ``rules`` without the up card and the ``removed`` cards.

    ``post_peek`` conditions on the dealer not having Blackjack (the peek found none): the
    Blackjack probability is then 0 and the others are scaled to sum to one.

    >>> p = dealer_probabilities(AnalysisRules(decks=1), "A", post_peek=True)
    >>> round(p["bust"], 6), p["blackjack"]
    (0.169815, 0.0)
    """
    u = up if isinstance(up, int) else card_class(up)
    counts = rules.shoe_counts()
    finite = 0 if rules.decks is None else 1
    extra = _removal(removed)
    if finite:
        counts = counts - extra
        counts[u] -= 1
        if (counts < 0).any():
            raise ValueError("More cards removed than the shoe holds.")
    child, drawn, size = dealer_dag(u, rules.h17)
    dist = kernels.dealer_eval(child, drawn, size, counts, counts.sum(), finite, scratch_space())
    if post_peek:
        no_bj = 1.0 - dist[kernels.BJ]
        dist = dist / no_bj if no_bj > 0 else dist
        dist[kernels.BJ] = 0.0
    return {name: float(dist[i]) for i, name in enumerate(DEALER_OUTCOMES)}


def dealer_table(
    rules: AnalysisRules, *, post_peek: bool = False, removed: Iterable[str | int] = ()
) -> dict[str, dict[str, float]]:
    """:func:`dealer_probabilities` for every up card ``2`` … ``9``, ``T``, ``A``."""
    removed = tuple(removed)
    labels = [*CARD_LABELS[1:], "A"]
    return {
        label: dealer_probabilities(rules, label, removed=removed, post_peek=post_peek)
        for label in labels
    }


# -- strategy --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    """A total-dependent basic strategy: per up card class (0 = ace … 9 = ten-value) the
    hit/stand decision by hard and soft total, the first decision of a two-card hand (0 play
    hit/stand, 1 double, 2 surrender) and whether to split each pair."""

    hit_hard: np.ndarray
    hit_soft: np.ndarray
    first_hard: np.ndarray
    first_soft: np.ndarray
    split: np.ndarray

    def code(self, table: str, row: int, up: str | int) -> str:
        """The chart letter: ``H`` hit, ``S`` stand, ``D`` double (else hit), ``Ds`` double
        (else stand), ``R`` surrender (else hit), ``Rs`` surrender (else stand), ``P`` split.
        ``table`` is ``hard``, ``soft`` (by total) or ``pair`` (by card: 1 or 11 = aces)."""
        u = up if isinstance(up, int) else card_class(up)
        if table == "pair":
            c = 0 if row in (1, 11) else row - 1
            if self.split[u, c]:
                return "P"
            if c == 0:
                return self.code("soft", 12, u)
            return self.code("hard", 2 * (c + 1), u)
        soft = table == "soft"
        hit = (self.hit_soft if soft else self.hit_hard)[u, row]
        first = (self.first_soft if soft else self.first_hard)[u, row]
        base = "H" if hit else "S"
        if first == 1:
            return "D" if hit else "Ds"
        if first == 2:
            return "R" if hit else "Rs"
        return base

    def charts(self) -> dict[str, dict[str, list[str]]]:
        """The hard (5–20), soft (13–20) and pair charts, rows by total, columns ``2`` … ``A``."""
        ups = [*range(1, 10), 0]
        hard = {str(t): [self.code("hard", t, u) for u in ups] for t in range(5, 21)}
        soft = {f"A,{t - 11}": [self.code("soft", t, u) for u in ups] for t in range(13, 21)}
        pairs = {}
        for c in [1, *range(2, 11)]:
            label = "A,A" if c == 1 else ("T,T" if c == 10 else f"{c},{c}")
            pairs[label] = [self.code("pair", c, u) for u in ups]
        return {"hard": hard, "soft": soft, "pairs": pairs}

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The tables as int64 arrays for the simulation kernels."""
        return (self.hit_hard, self.hit_soft, self.first_hard, self.first_soft, self.split)

    def to_text(self) -> str:
        """The charts as aligned text."""
        header = "       " + " ".join(
            f"{u:>3}" for u in ["2", "3", "4", "5", "6", "7", "8", "9", "T", "A"]
        )
        lines: list[str] = []
        for name, chart in self.charts().items():
            lines.append(f"{name}:")
            lines.append(header)
            for row, codes in chart.items():
                lines.append(f"{row:>6} " + " ".join(f"{c:>3}" for c in codes))
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def to_csv(self) -> str:
        """The charts as CSV: ``table,hand,2,3,…,A``."""
        rows = ["table,hand,2,3,4,5,6,7,8,9,T,A"]
        for name, chart in self.charts().items():
            for row, codes in chart.items():
                rows.append(f"{name},{row}," + ",".join(codes))
        return "\n".join(rows) + "\n"


# -- the analysis ----------------------------------------------------------------------------


@dataclass
class ExactAnalysis:
    """The exact analysis of one set of rules (a fresh shoe)."""

    rules: AnalysisRules
    strategy: Strategy
    house_edge: float
    """Expected loss per initial main wager (positive favours the house)."""
    up_probability: np.ndarray
    up_return: np.ndarray
    """Player's expected return per initial wager by up card class."""
    hand_values: np.ndarray
    """(up, c1, c2, 9): probability, no-Blackjack probability, stand, hit, double, split,
    surrender, play, return; values unnormalised (see :mod:`._exact_kernels`)."""
    split_results: np.ndarray = field(default_factory=lambda: np.full((10, 10, 3), np.nan))
    """(up, pair, 3): a split's value per original unit, the probability that one split hand
    busts and the expected number of hands (``_exact_kernels.S_*``); NaN where not split."""
    extras: dict[str, Any] = field(default_factory=dict)

    def hand_table(self) -> list[dict[str, Any]]:
        """Every two-card hand against every up card: the expected value of each action given
        that the dealer has no Blackjack (NaN where not allowed), the table's decision and the
        composition-dependent best action."""
        rows = []
        for u in range(10):
            for c1 in range(10):
                for c2 in range(c1, 10):
                    row = self.hand_values[u, c1, c2]
                    if math.isnan(row[0]) or row[0] == 0:
                        continue
                    pnb = row[1]
                    entry: dict[str, Any] = {
                        "up": CARD_LABELS[u],
                        "hand": f"{CARD_LABELS[c1]},{CARD_LABELS[c2]}",
                        "probability": float(row[0] * self.up_probability[u]),
                    }
                    if c1 == 0 and c2 == 9:
                        entry["blackjack"] = True
                        rows.append(entry)
                        continue
                    values = {}
                    for i, name in enumerate(ACTIONS):
                        v = row[2 + i]
                        values[name] = None if math.isnan(v) else float(v / pnb)
                    entry["ev"] = values
                    best = max((v, k) for k, v in values.items() if v is not None)
                    entry["best"] = best[1]
                    entry["play_ev"] = float(row[7] / pnb)
                    if u == 0:
                        entry["insurance_ev"] = float(
                            insurance_for_hand(self.rules, CARD_LABELS[c1], CARD_LABELS[c2])
                        )
                    rows.append(entry)
        return rows

    def composition_exceptions(self, threshold: float = 1e-9) -> list[dict[str, Any]]:
        """Two-card hands whose composition-dependent best action differs from the table's."""
        out = []
        for entry in self.hand_table():
            if entry.get("blackjack"):
                continue
            gain = entry["ev"][entry["best"]] - entry["play_ev"]
            if gain > threshold:
                out.append({**entry, "gain": gain})
        return out


def _finite(rules: AnalysisRules) -> int:
    return 0 if rules.decks is None else 1


def up_shoe(rules: AnalysisRules, u: int) -> tuple[np.ndarray, float]:
    counts = rules.shoe_counts()
    if rules.decks is None:
        return counts, float(counts.sum())
    base = counts.copy()
    base[u] -= 1
    return base, float(base.sum())


@functools.lru_cache(maxsize=32)
def analyse(rules: AnalysisRules) -> ExactAnalysis:
    """Generate the basic strategy and compute the house edge of the main wager (and the
    insurance and EZ Bust figures) for a freshly shuffled shoe.

    The result is cached per rules object (the analysis is deterministic)."""
    finite = _finite(rules)
    vec = rules.kernel_vector()
    mask = rules.double_mask()
    shape = (10, 22)
    hit_hard = np.zeros(shape, dtype=np.int64)
    hit_soft = np.zeros(shape, dtype=np.int64)
    first_hard = np.zeros(shape, dtype=np.int64)
    first_soft = np.zeros(shape, dtype=np.int64)
    split = np.zeros((10, 10), dtype=np.int64)
    counts = rules.shoe_counts()
    up_probability = counts / counts.sum()
    up_return = np.zeros(10)
    hand_values = np.full((10, 10, 10, 9), np.nan)
    splits = np.full((10, 10, 3), np.nan)
    work = scratch_space()
    for u in range(10):
        base, n0 = up_shoe(rules, u)
        child, drawn, size = dealer_dag(u, rules.h17)
        values = kernels.analyse_up(
            child, drawn, size, work, base, n0, finite, u, vec, mask,
            hit_hard, hit_soft, first_hard, first_soft, split, splits[u],
        )  # fmt: skip
        hand_values[u] = values
        up_return[u] = float(np.nansum(values[:, :, 0] * values[:, :, 8]))
    strategy = Strategy(hit_hard, hit_soft, first_hard, first_soft, split)
    house_edge = -float((up_probability * up_return).sum())
    return ExactAnalysis(
        rules, strategy, house_edge, up_probability, up_return, hand_values, split_results=splits
    )


# -- side wagers -----------------------------------------------------------------------------


def insurance(rules: AnalysisRules) -> dict[str, Any]:
    """Insurance (§ 633a.8), 2 to 1, against an up ace, for a fresh shoe (only the ace seen).

    >>> round(insurance(AnalysisRules(decks=6))["house_edge"], 6)
    0.073955
    """
    base, n0 = up_shoe(rules, 0)
    p = float(base[9] / n0)
    return {
        "wager": "insurance",
        "pays": "2 to 1",
        "win_probability": p,
        "house_edge": 1.0 - 3.0 * p,
        "stdev": math.sqrt(9.0 * p * (1 - p)),
        "lines": [
            {"line": "dealer Blackjack", "pays": 2.0, "probability": p, "return": 2.0 * p},
            {"line": "no dealer Blackjack", "pays": -1.0, "probability": 1 - p, "return": p - 1},
        ],
    }


def insurance_for_hand(rules: AnalysisRules, c1: str, c2: str) -> float:
    """The player's expected return per unit of insurance holding ``c1``, ``c2``."""
    base, n0 = up_shoe(rules, 0)
    removed = _removal((c1, c2))
    p = base[9] / n0 if rules.decks is None else (base[9] - removed[9]) / (n0 - 2)
    return float(3.0 * p - 1.0)


def ez_bust(rules: AnalysisRules, *, push_all: bool | None = None) -> dict[str, Any]:
    """The EZ Bust wager (633b.16), 1 to 1, on a single-player table whose player plays the
    generated strategy: per up card 2–6 the probabilities of a win (the dealer busts after
    drawing, (f)(1)), a loss (the dealer ends at 21 or less, (f)(2); a two-card soft 17 loses,
    A-21) and a push (633b.16(g), when ``push_all``), the expected return, and overall per
    wager placed (every time the up card is 2–6).

    >>> ez = ez_bust(AnalysisRules(decks=6))
    >>> ez["by_up"]["6"]["win"] > ez["by_up"]["2"]["win"]
    True
    """
    push_all = rules.ez_bust_push_all if push_all is None else push_all
    analysis = analyse(rules)
    finite = _finite(rules)
    vec = rules.kernel_vector()
    mask = rules.double_mask()
    counts = rules.shoe_counts()
    by_up: dict[str, dict[str, float]] = {}
    total_weight = 0.0
    wager_weight = 0.0
    agg = np.zeros(3)
    for u in range(1, 6):
        base, n0 = up_shoe(rules, u)
        child, drawn, size = dealer_dag(u, rules.h17)
        win, lose, push, wagers = kernels.ez_bust_value(
            child, drawn, size, scratch_space(), base, n0, finite, u, vec, mask,
            *analysis.strategy.arrays(), analysis.split_results[u], push_all,
        )  # fmt: skip
        by_up[CARD_LABELS[u]] = {
            "probability_of_up_card": float(counts[u] / counts.sum()),
            "win": float(win),
            "lose": float(lose),
            "push": float(push),
            "expected_return": float(win - lose),
            "house_edge": float(lose - win),
            "wagers_per_round": float(wagers),
        }
        weight = counts[u] * wagers
        total_weight += counts[u]
        wager_weight += weight
        agg += weight * np.array([win, lose, push])
    agg /= wager_weight
    win, lose, push = (float(x) for x in agg)
    return {
        "wager": "ez_bust",
        "pays": "1 to 1",
        "push_all": push_all,
        "by_up": by_up,
        "win": win,
        "lose": lose,
        "push": push,
        "house_edge": lose - win,
        "stdev": math.sqrt(win + lose - (win - lose) ** 2),
        "offered_probability": float(total_weight / counts.sum()),
    }


def removal_key(cards: Mapping[int, int]) -> int:
    """The kernels' integer key of a removal (five bits per card class)."""
    return sum(count << (kernels.KEY_BITS * r) for r, count in cards.items())
