"""The exact search of paytable design: the paytables of an integer pay lattice whose house edge
is nearest a target (the second part of :mod:`tablejack.lab.paytable`).

The house edge is linear in the pays, so :func:`search` is a meet-in-the-middle over the lines
(each half enumerated with pruning, the halves joined by binary search), every candidate
re-scored in rational arithmetic. It imports the outcomes, never the report."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Any

import numpy as np

from tablejack.lab.paytable.outcomes import Outcome, WagerOutcomes, odds_text, percent_text

PAY_FORMS = ("integers", "round")
"""The pay lattices: every integer ``N to 1``, or round figures (:func:`pay_ladder`)."""

STATES_LIMIT = 3_000_000
"""Most partial paytables one half of the search may hold (memory and time stay bounded)."""


class TargetOutOfReachError(ValueError):
    """The target house edge is outside what any paytable of the lattice gives."""


class LatticeTooLargeError(ValueError):
    """The pay lattice is too large to search exactly in bounded memory."""


# -- the lattice ------------------------------------------------------------------------------


def pay_ladder(low: int, high: int, form: str = "integers") -> list[int]:
    """The pays from ``low`` to ``high`` (to 1) of a lattice ``form``: ``"integers"`` every
    integer; ``"round"`` every integer to 20, then the round figures posted paytables use:
    multiples of 5 to 100, of 25 to 500, of 50 to 1,000, of 250 to 5,000 and of 1,000 beyond.

    >>> pay_ladder(18, 130, "round")
    [18, 19, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100, 125]
    """
    if form not in PAY_FORMS:
        raise ValueError(f"The pay lattice {form!r} is not one of {', '.join(PAY_FORMS)}.")
    if form == "integers":
        return list(range(low, high + 1))
    steps = ((20, 1), (100, 5), (500, 25), (1000, 50), (5000, 250))
    out = []
    for value in range(low, high + 1):
        step = next((s for limit, s in steps if value <= limit), 1000)
        if value % step == 0:
            out.append(value)
    return out


@dataclass(frozen=True)
class Lattice:
    """The paytables searched: each line ``min_pay`` to ``max_pay`` to 1 (``ranges`` per line:
    name -> (low, high)), every integer or round figures (``pays``); ``hold`` keeps lines at
    their base pay."""

    min_pay: int = 1
    max_pay: int | None = None
    """Default: the base paytable's largest pay, and at least 20."""
    pays: str = "round"
    ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    hold: frozenset[str] = frozenset()

    def bounds(self, outcomes: WagerOutcomes) -> dict[str, tuple[int, int]]:
        """Each searched line's (low, high)."""
        top = self.max_pay
        if top is None:
            top = max([20, *(math.ceil(line.base) for line in outcomes.lines)])
        if self.min_pay < 1:
            raise ValueError(
                f"--min-pay {self.min_pay}: a winning line pays at least 1 to 1 (a pay of 0 "
                "would be a push)."
            )
        if top < self.min_pay:
            raise ValueError(f"--max-pay {top} is below --min-pay {self.min_pay}.")
        names = {line.name for line in outcomes.lines}
        for name in [*self.ranges, *self.hold]:
            outcomes.line(name)  # raises for an unknown line
        out = {}
        for name in sorted(names - set(self.hold)):
            low, high = self.ranges.get(name, (self.min_pay, top))
            if low < 1 or high < low:
                raise ValueError(
                    f"The range {low}:{high} of {name} must run from at least 1 up "
                    "(a winning line pays at least 1 to 1)."
                )
            out[name] = (low, high)
        return out

    def describe(self, outcomes: WagerOutcomes) -> dict[str, Any]:
        """The lattice as data."""
        return {
            "pays": self.pays,
            "odds": "N to 1",
            "bounds": {name: list(b) for name, b in self.bounds(outcomes).items()},
            "held": {name: odds_text(outcomes.line(name).base) for name in sorted(self.hold)},
            "monotone": "a rarer outcome pays at least as much; equally likely outcomes pay "
            "the same",
        }


# -- the search problem -----------------------------------------------------------------------


@dataclass
class _Var:
    """A searched pay: one line, or lines that must pay the same (equally likely outcomes)."""

    lines: list[str]
    values: np.ndarray
    weight: Fraction
    links: list[tuple[int, int]] = field(default_factory=list)
    """(j, offset): this pay >= pay j + offset."""


@dataclass
class _Problem:
    vars: list[_Var]
    fixed_return: Fraction
    """The return of everything not searched (losses, pushes, held lines)."""
    fixed_pays: dict[str, Fraction]


class _Union:
    def __init__(self, names: Iterable[str]) -> None:
        self.parent = {name: name for name in names}

    def find(self, name: str) -> str:
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _build_problem(outcomes: WagerOutcomes, lattice: Lattice) -> _Problem:
    bounds = lattice.bounds(outcomes)
    paid = [o for o in outcomes.outcomes if o.lines and o.probability > 0]
    used = {line for o in paid for line in o.lines}
    fixed_pays = {
        line.name: line.base
        for line in outcomes.lines
        if line.name in lattice.hold or line.name not in used
    }
    free = [name for name in bounds if name in used]
    allowed = {
        name: set(pay_ladder(bounds[name][0], bounds[name][1], lattice.pays)) for name in free
    }
    ranked = sorted(paid, key=lambda o: o.probability)
    # pay(rare) - pay(common) >= 0 (== 0 for a tie), as {line: coefficient} + constant
    constraints: list[tuple[dict[str, int], Fraction, bool, Outcome, Outcome]] = []
    for rare, common in pairwise(ranked):
        coefficients: dict[str, int] = defaultdict(int)
        constant = Fraction(0)
        for sign, o in ((1, rare), (-1, common)):
            for line in o.lines:
                if line in fixed_pays:
                    constant += sign * fixed_pays[line]
                else:
                    coefficients[line] += sign
        terms = {line: c for line, c in coefficients.items() if c}
        tie = outcomes.ties(rare.probability, common.probability)
        constraints.append((terms, constant, tie, rare, common))
    union = _Union(free)
    for terms, constant, tie, _, _ in constraints:
        if tie and len(terms) == 2 and constant == 0 and sorted(terms.values()) == [-1, 1]:
            a, b = terms
            union.join(a, b)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in free:
        groups[union.find(name)].append(name)
    low: dict[str, Fraction] = defaultdict(lambda: Fraction(-(10**18)))
    high: dict[str, Fraction] = defaultdict(lambda: Fraction(10**18))
    links: list[tuple[str, str, Fraction]] = []  # a >= b + offset
    for terms, constant, tie, rare, common in constraints:
        merged: dict[str, int] = defaultdict(int)
        for line, c in terms.items():
            merged[union.find(line)] += c
        merged = {g: c for g, c in merged.items() if c}
        why = f"{rare.label} against {common.label}"
        if not merged:
            if constant < 0 or (tie and constant != 0):
                raise TargetOutOfReachError(
                    f"The held pays break the rule that pays never fall as the hand gets "
                    f"rarer: {why}."
                )
            continue
        if len(merged) == 1:
            ((g, c),) = merged.items()
            bound = -constant / c  # c * x + constant >= 0 (== 0 for a tie)
            if tie or c > 0:
                low[g] = max(low[g], bound)
            if tie or c < 0:
                high[g] = min(high[g], bound)
            continue
        if len(merged) == 2 and sorted(merged.values()) == [-1, 1] and not tie:
            a = next(g for g, c in merged.items() if c == 1)
            b = next(g for g, c in merged.items() if c == -1)
            links.append((a, b, -constant))
            continue
        raise ValueError(f"The monotone order of {why} is not a constraint the search handles.")
    variables: dict[str, _Var] = {}
    for g, members in groups.items():
        values = set.intersection(*(allowed[name] for name in members))
        values = {v for v in values if low[g] <= v <= high[g]}
        weight = sum((outcomes.line_probability(name) for name in members), Fraction(0))
        if not values:
            raise TargetOutOfReachError(
                f"No pay of {', '.join(sorted(members))} fits the lattice and the monotone "
                "order of the held pays."
            )
        variables[g] = _Var(sorted(members), np.array(sorted(values), dtype=np.int64), weight)
    # order: a pay after the pays it must be at least (commonest first)
    order: list[str] = []
    pending = sorted(variables, key=lambda g: -variables[g].weight)
    needs = defaultdict(set)
    for a, b, _ in links:
        needs[a].add(b)
    while pending:
        for g in pending:
            if needs[g] <= set(order):
                order.append(g)
                pending.remove(g)
                break
        else:  # pragma: no cover - the links follow the strict rarity order, a chain
            raise ValueError("The monotone order of the lines has a cycle.")
    index = {g: i for i, g in enumerate(order)}
    result = [variables[g] for g in order]
    for a, b, offset in links:
        result[index[a]].links.append((index[b], math.ceil(offset)))
    fixed_return = Fraction(0)
    for o in outcomes.outcomes:
        if not o.lines:
            fixed_return += o.probability * o.fixed
        else:
            fixed_return += o.probability * sum(
                (fixed_pays[line] for line in o.lines if line in fixed_pays), Fraction(0)
            )
    return _Problem(result, fixed_return, fixed_pays)


def _propagate(problem: _Problem) -> tuple[list[int], list[int]]:
    """Each pay's smallest and largest value in some paytable of the lattice."""
    vs = problem.vars
    low = [0] * len(vs)
    for i, v in enumerate(vs):
        need = max((low[j] + off for j, off in v.links), default=int(v.values[0]))
        k = int(np.searchsorted(v.values, need, "left"))
        if k == len(v.values):
            raise TargetOutOfReachError(_no_monotone(v))
        low[i] = int(v.values[k])
    high = [int(v.values[-1]) for v in vs]
    for i in range(len(vs) - 1, -1, -1):
        v = vs[i]
        k = int(np.searchsorted(v.values, high[i], "right")) - 1
        if k < 0 or v.values[k] < low[i]:
            raise TargetOutOfReachError(_no_monotone(v))
        high[i] = int(v.values[k])
        for j, off in v.links:
            high[j] = min(high[j], high[i] - off)
    return low, high


def _no_monotone(v: _Var) -> str:
    return (
        f"No paytable of the lattice pays {', '.join(v.lines)} at least as much as the more "
        "common outcomes: raise --max-pay or widen the ranges."
    )


# -- the search -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One paytable found: its pays, exact house edge and distance from the target."""

    pays: dict[str, Fraction]
    house_edge: Fraction
    distance: Fraction
    figures: dict[str, Any]

    def describe(self) -> str:
        """``'suited-pair 20 to 1, pair 10 to 1'``."""
        return ", ".join(f"{line} {odds_text(odds)}" for line, odds in self.pays.items())


@dataclass(frozen=True)
class SearchResult:
    """The candidates nearest the target, nearest first, and what was searched."""

    outcomes: WagerOutcomes
    lattice: Lattice
    target: Fraction
    candidates: list[Candidate]
    reach: tuple[Fraction, Fraction]
    """The lowest and highest house edge of the lattice."""
    searched: int
    """Partial paytables enumerated (both halves, every pass)."""
    paytables: int | None
    """Paytables of the lattice that obey the monotone order and the bounds (None when the
    order is not a chain or tree, which the wagers here never give)."""


def search(
    outcomes: WagerOutcomes,
    target: Fraction,
    count: int = 10,
    lattice: Lattice | None = None,
    *,
    limit: int = STATES_LIMIT,
) -> SearchResult:
    """The ``count`` paytables of ``lattice`` whose exact house edge is nearest ``target``,
    nearest first (ties: the smaller pays, the commonest line first)."""
    lattice = lattice or Lattice()
    if count < 1:
        raise ValueError(f"--count {count} must be at least 1.")
    problem = _build_problem(outcomes, lattice)
    low, high = _propagate(problem)
    vs = problem.vars
    reach = _reach(problem, low, high)
    if not reach[0] <= target <= reach[1]:
        raise TargetOutOfReachError(
            f"A target house edge of {percent_text(target)} is outside what the paytables of this "
            f"lattice reach for the {outcomes.wager} wager: from {percent_text(reach[0])} (every pay "
            f"at its highest) to {percent_text(reach[1])} (every pay at its lowest)."
        )
    wanted = -target - problem.fixed_return  # the searched pays' return that hits the target
    engine = _Engine(vs, low, high, float(wanted), limit)
    rows, searched = engine.nearest(count)
    paytables = _count_paytables(vs, low, high)
    scored = []
    for row in rows:
        pays = dict(problem.fixed_pays)
        for v, x in zip(vs, row, strict=True):
            for line in v.lines:
                pays[line] = Fraction(int(x))
        ordered = {line.name: pays[line.name] for line in outcomes.lines}
        edge = outcomes.house_edge(ordered)
        key = tuple(int(x) for x in row)
        scored.append((abs(edge - target), key, ordered, edge))
    scored.sort(key=lambda item: (item[0], item[1]))
    candidates = [
        Candidate(pays, edge, distance, outcomes.figures(pays))
        for distance, _, pays, edge in scored[:count]
    ]
    return SearchResult(outcomes, lattice, target, candidates, reach, searched, paytables)


def lattice_reach(outcomes: WagerOutcomes, lattice: Lattice) -> tuple[Fraction, Fraction]:
    """The lowest and the highest house edge of the lattice's paytables (every pay at its
    highest, every pay at its lowest, the monotone order kept)."""
    problem = _build_problem(outcomes, lattice)
    return _reach(problem, *_propagate(problem))


def _reach(problem: _Problem, low: Sequence[int], high: Sequence[int]) -> tuple[Fraction, Fraction]:
    weights = [v.weight for v in problem.vars]
    smallest = sum((w * x for w, x in zip(weights, low, strict=True)), Fraction(0))
    largest = sum((w * x for w, x in zip(weights, high, strict=True)), Fraction(0))
    return (-(largest + problem.fixed_return), -(smallest + problem.fixed_return))


def _count_paytables(vs: Sequence[_Var], low: Sequence[int], high: Sequence[int]) -> int | None:
    """The number of paytables of the lattice (bounds and monotone order), exactly, by dynamic
    programming over each pay's values when every pay is bound below by at most one other (a
    chain or a tree); None otherwise."""
    # ways[i][value index]: paytables of the pays that depend (transitively) on pay i, given it
    children: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i, v in enumerate(vs):
        if len(v.links) > 1:
            return None
        for j, off in v.links:
            children[j].append((i, off))
    ways: dict[int, np.ndarray] = {}
    for i in range(len(vs) - 1, -1, -1):
        values = vs[i].values
        mask = (values >= low[i]) & (values <= high[i])
        w = mask.astype(object)
        for child, off in children[i]:
            child_values = vs[child].values
            suffix = np.concatenate([np.cumsum(ways[child][::-1])[::-1], [0]]).astype(object)
            start = np.searchsorted(child_values, values + off, "left")
            w = w * suffix[start]
        ways[i] = w
    total = 1
    for i, v in enumerate(vs):
        if not v.links:
            total *= int(sum(ways[i]))
    return total


class _Engine:
    """Meet in the middle over the searched pays (commonest first): the pays before a split
    point and the pays after it are each enumerated with pruning (a partial paytable is dropped
    when no completion can come within ``delta`` of the target), the second half sorted by its
    return, and each first-half paytable joined with the ``count`` second-half paytables
    nearest its remainder (binary search), respecting the one monotone link across the split.
    ``delta`` starts small and grows until ``count`` paytables lie within it: then no dropped
    paytable could be nearer."""

    TOLERANCE = 1e-11

    def __init__(
        self, vs: Sequence[_Var], low: Sequence[int], high: Sequence[int], wanted: float,
        limit: int,
    ) -> None:  # fmt: skip
        self.vs = vs
        self.low = np.array(low, dtype=np.int64)
        self.high = np.array(high, dtype=np.int64)
        self.w = np.array([float(v.weight) for v in vs])
        self.wanted = wanted
        self.limit = limit
        self.values = [v.values[(v.values >= lo) & (v.values <= hi)] for v, lo, hi in
                       zip(vs, low, high, strict=True)]  # fmt: skip
        self.m = len(vs)
        # the smallest/largest return of the pays from i on, each at its own bound
        lows = self.w * self.low
        highs = self.w * self.high
        self.min_after = np.concatenate([np.cumsum(lows[::-1])[::-1], [0.0]])
        self.max_after = np.concatenate([np.cumsum(highs[::-1])[::-1], [0.0]])
        self.min_before = np.concatenate([[0.0], np.cumsum(lows)])
        self.max_before = np.concatenate([[0.0], np.cumsum(highs)])
        self.searched = 0

    # - enumeration -

    def _prefixes(
        self, delta: float, stop: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray] | None]:
        """The paytables of pays 0..k-1 that can still come within ``delta`` of the target,
        for k = 0, 1, …, ``stop``; None (and the end) beyond the limit."""
        rows = np.zeros((1, 0), dtype=np.int64)
        sums = np.zeros(1)
        top = self.wanted + delta + self.TOLERANCE
        bottom = self.wanted - delta - self.TOLERANCE
        yield rows, sums
        for i in range(self.m if stop is None else stop):
            v = self.vs[i]
            values = self.values[i]
            need = np.full(len(rows), self.low[i], dtype=np.int64)
            for j, off in v.links:
                need = np.maximum(need, rows[:, j] + off)
            start = np.searchsorted(values, need, "left")
            # the largest value that leaves room under the top for the rest at its lowest
            room = (top - sums - self.min_after[i + 1]) / self.w[i]
            end = np.searchsorted(values, np.floor(room + 1e-9), "right")
            counts = np.maximum(end - start, 0)
            if int(counts.sum()) > self.limit:
                yield None
                return
            rows, sums = _expand(rows, sums, values, start, counts, self.w[i])
            # the rest at its highest must still reach the bottom, and at its lowest (the
            # links followed) stay under the top
            keep = sums + self.max_after[i + 1] >= bottom
            keep &= sums + self._min_completion(rows, i + 1) <= top
            rows, sums = rows[keep], sums[keep]
            self.searched += len(rows)
            yield rows, sums

    def _min_completion(self, rows: np.ndarray, start: int) -> np.ndarray:
        """The smallest return of pays start.. given the prefix ``rows`` (links followed)."""
        n = len(rows)
        if start >= self.m:
            return np.zeros(n)
        lows: list[np.ndarray] = []
        total = np.zeros(n)
        for i in range(start, self.m):
            need = np.full(n, self.low[i], dtype=np.int64)
            for j, off in self.vs[i].links:
                base = rows[:, j] if j < start else lows[j - start]
                need = np.maximum(need, base + off)
            values = self.values[i]
            k = np.minimum(np.searchsorted(values, need, "left"), len(values) - 1)
            lowest = values[k]
            # a row whose links ask more than the lattice allows cannot be completed
            lowest = np.where(need > values[-1], np.int64(10**12), lowest)
            lows.append(lowest)
            total += self.w[i] * lowest
        return total

    def _suffixes(
        self, delta: float, stop: int = 0
    ) -> Iterator[tuple[np.ndarray, np.ndarray] | None]:
        """The paytables of pays k..m-1 (their links among themselves kept) that can still come
        within ``delta`` of the target with some paytable of the pays before k, for k = m,
        m-1, …, ``stop``; None (and the end) beyond the limit."""
        rows = np.zeros((1, 0), dtype=np.int64)
        sums = np.zeros(1)
        top = self.wanted + delta + self.TOLERANCE
        bottom = self.wanted - delta - self.TOLERANCE
        yield rows, sums
        for i in range(self.m - 1, stop - 1, -1):
            values = self.values[i]
            # the pays after i that must be at least pay i + offset bound it from above
            ceiling = np.full(len(rows), self.high[i], dtype=np.int64)
            for d in range(i + 1, self.m):
                for j, off in self.vs[d].links:
                    if j == i:
                        ceiling = np.minimum(ceiling, rows[:, d - i - 1] - off)
            end = np.searchsorted(values, ceiling, "right")
            room = (top - sums - self.min_before[i]) / self.w[i]
            end = np.minimum(end, np.searchsorted(values, np.floor(room + 1e-9), "right"))
            start = np.zeros(len(rows), dtype=np.int64)
            counts = np.maximum(end, 0)
            if int(counts.sum()) > self.limit:
                yield None
                return
            rows, sums = _expand(rows, sums, values, start, counts, self.w[i], front=True)
            keep = sums + self.max_before[i] >= bottom
            rows, sums = rows[keep], sums[keep]
            self.searched += len(rows)
            yield rows, sums

    # - the join -

    def _cross(self, k: int) -> tuple[int, list[tuple[int, int]]] | None:
        """The first-half pay the second half links to, with the (second-half column, offset)
        links; (-1, []) with no link across; None when several first-half pays are linked."""
        targets = set()
        links = []
        for d in range(k, self.m):
            for j, off in self.vs[d].links:
                if j < k:
                    targets.add(j)
                    links.append((d - k, off))
        if not targets:
            return -1, []
        if len(targets) > 1:
            return None
        return targets.pop(), links

    def _join(self, k: int, delta: float, count: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The nearest paytables joining the halves split before pay ``k``."""
        cross = self._cross(k)
        if cross is None:
            return None
        a = b = None
        for a in self._prefixes(delta, k):
            if a is None:
                return None
        for b in self._suffixes(delta, k):
            if b is None:
                return None
        assert a is not None and b is not None
        a_rows, a_sums = a
        b_rows, b_sums = b
        order = np.argsort(b_sums, kind="stable")
        b_rows, b_sums = b_rows[order], b_sums[order]
        target_var, links = cross
        if target_var < 0:
            groups = [(np.arange(len(a_rows)), np.arange(len(b_rows)))]
        else:
            ceiling = np.full(len(b_rows), np.iinfo(np.int64).max)
            for col, off in links:
                ceiling = np.minimum(ceiling, b_rows[:, col] - off)
            groups = [
                (np.nonzero(a_rows[:, target_var] == value)[0], np.nonzero(ceiling >= value)[0])
                for value in np.unique(a_rows[:, target_var])
            ]
        best_rows = np.zeros((0, self.m), dtype=np.int64)
        best_dist = np.zeros(0)
        offsets = np.arange(-count, count)
        for a_index, b_index in groups:
            if len(a_index) == 0 or len(b_index) == 0:
                continue
            sb = b_sums[b_index]
            for chunk in range(0, len(a_index), 100_000):
                ai = a_index[chunk : chunk + 100_000]
                rest = self.wanted - a_sums[ai]
                idx = np.searchsorted(sb, rest)[:, None] + offsets[None, :]
                valid = (idx >= 0) & (idx < len(sb))
                idx = np.clip(idx, 0, len(sb) - 1)
                dist = np.where(valid, np.abs(rest[:, None] - sb[idx]), np.inf).ravel()
                pick = _smallest(dist, count, self.TOLERANCE)
                pick = pick[np.isfinite(dist[pick])]
                rows = np.concatenate(
                    [a_rows[ai[pick // (2 * count)]], b_rows[b_index[idx.ravel()[pick]]]], axis=1
                )
                best_rows = np.concatenate([best_rows, rows])
                best_dist = np.concatenate([best_dist, dist[pick]])
                keep = _smallest(best_dist, count, self.TOLERANCE)
                best_rows, best_dist = best_rows[keep], best_dist[keep]
        return best_rows, best_dist

    def nearest(self, count: int) -> tuple[np.ndarray, int]:
        """The rows of the ``count`` nearest paytables (with their float near-ties, settled
        exactly by the caller) and the number of partial paytables enumerated."""
        if self.m == 0:
            return np.zeros((1, 0), dtype=np.int64), 0
        delta = 1e-4
        while True:
            result = None
            for k in self._splits(delta):
                result = self._join(k, delta, count)
                if result is not None:
                    break
            if result is None:
                raise LatticeTooLargeError(
                    f"The pay lattice is too large to search exactly (more than "
                    f"{self.limit:,} partial paytables in a half): lower --max-pay, narrow a "
                    "line with --pay LINE=LOW:HIGH, hold a line at its base pay with --hold "
                    "LINE, or search round figures with --pays round."
                )
            rows, dist = result
            if int((dist <= delta + self.TOLERANCE).sum()) >= count or delta == math.inf:
                cut = np.sort(dist)[count - 1] if len(dist) >= count else math.inf
                return rows[dist <= cut + self.TOLERANCE], self.searched
            delta = math.inf if delta >= 1.0 else delta * 16

    def _splits(self, delta: float) -> list[int]:
        """Split points, the most balanced first (by the halves' sizes at this ``delta``)."""
        sizes_a = [math.inf] * (self.m + 1)
        for k, a in enumerate(self._prefixes(delta)):
            if a is None:
                break
            sizes_a[k] = len(a[0])
        sizes_b = [math.inf] * (self.m + 1)
        for n, b in enumerate(self._suffixes(delta)):
            if b is None:
                break
            sizes_b[self.m - n] = len(b[0])
        scored = sorted(
            (max(sizes_a[k], sizes_b[k]), k)
            for k in range(self.m + 1)
            if math.isfinite(sizes_a[k]) and math.isfinite(sizes_b[k])
        )
        return [k for _, k in scored]


def _smallest(values: np.ndarray, count: int, tolerance: float) -> np.ndarray:
    """Indices of the ``count`` smallest ``values`` and of every value within ``tolerance`` of
    the largest of them (float near-ties, settled later in exact arithmetic)."""
    if len(values) <= count:
        return np.arange(len(values))
    part = np.argpartition(values, count - 1)[:count]
    cut = values[part].max()
    return np.nonzero(values <= cut + tolerance)[0]


def _expand(
    rows: np.ndarray,
    sums: np.ndarray,
    values: np.ndarray,
    start: np.ndarray,
    counts: np.ndarray,
    weight: float,
    *,
    front: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """One more column (last, or first with ``front``): row r repeated counts[r] times, with
    values[start[r]], values[start[r] + 1], …"""
    owner = np.repeat(np.arange(len(rows)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    picked = values[np.repeat(start, counts) + np.arange(len(owner)) - first]
    column = picked[:, None]
    parts = [column, rows[owner]] if front else [rows[owner], column]
    return np.concatenate(parts, axis=1), sums[owner] + weight * picked


# -- the command line -------------------------------------------------------------------------


def parse_edge(text: str) -> Fraction:
    """A house edge from the command line, exactly: ``0.05``, ``5%`` or ``1/20``.

    >>> parse_edge("5%"), parse_edge("-17.34%")
    (Fraction(1, 20), Fraction(-867, 5000))
    """
    raw = text.strip()
    try:
        value = Fraction(raw[:-1]) / 100 if raw.endswith("%") else Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"--target-edge {text!r} must be a house edge such as 0.05, 5% or 1/20."
        ) from None
    return value


def parse_pay_range(text: str) -> tuple[str, tuple[int, int]]:
    """``LINE=LOW:HIGH`` (or ``LINE=PAY``) from the command line.

    >>> parse_pay_range("pair=8:12")
    ('pair', (8, 12))
    """
    line, _, bounds = text.partition("=")
    low, _, high = bounds.partition(":")
    try:
        pair = (int(low), int(high or low))
    except ValueError:
        raise ValueError(
            f"--pay {text!r} must be LINE=LOW:HIGH (pays N to 1), e.g. pair=8:12."
        ) from None
    return line.strip(), pair
