"""Monte Carlo simulation of a game by its numba kernel, on all cores or on a Dask cluster.

Randomness is explicit and keyed: a run seeded ``seed`` has two 64-bit words
(:func:`run_words`, from ``numpy.random.SeedSequence(seed)``), and shoe ``i`` is the forward
Fisher-Yates shuffle driven by the counter-based SplitMix64 stream of the key those words and
``i`` give (:mod:`tablejack.lab._sim_kernels`). Each shoe therefore depends only on the seed and
its index, never on how the work is split into chunks, processes or cluster workers. The kernel
fixes each position as it deals it (the cards dealt are a prefix of the full shuffle,
:func:`shoe_cards`) and makes no random number for a card it never deals. Work is done in
chunks of whole blocks of :data:`BLOCK` shoes, one kernel call per chunk; memory per worker is
one shoe and the kernel's small tables, whatever the number of hands.

>>> from tablejack.lab.model import AnalysisRules
>>> result = simulate(AnalysisRules(decks=6), hands=20_000, seed=7, workers=1)
>>> result.rounds > 15_000, bool(abs(result.house_edge) < 0.05)
(True, True)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tablejack.lab import _sim_kernels
from tablejack.lab.model import AnalysisRules

kern: Any = _sim_kernels

__all__ = [
    "BLOCK",
    "SimulationResult",
    "cut_position",
    "kernel_rules",
    "kernel_tables",
    "run_dask",
    "run_words",
    "shoe_cards",
    "simulate",
]

BLOCK = 256
"""Shoes per block (the unit of work and of progress)."""

Z95 = 1.959963984540054

DASK_CONNECT_TIMEOUT = "10s"
"""How long to try to reach a Dask scheduler before giving up."""


def run_words(seed: int) -> np.ndarray:
    """The two 64-bit words that key every shoe of a run seeded ``seed`` (any integer >= 0)."""
    words: np.ndarray = np.random.SeedSequence(seed).generate_state(2, np.uint64)
    return words


def shoe_cards(seed: int, index: int, decks: int) -> np.ndarray:
    """The card indices (0–51, :attr:`tablejack.core.cards.Card.index`) of shoe ``index`` of a
    run seeded ``seed``, in dealing order."""
    shoe = np.empty(52 * decks, dtype=np.int64)
    kern.shuffle_shoe(run_words(seed), index, decks, shoe)
    return shoe


def kernel_tables(strategy: Any, rules: AnalysisRules) -> np.ndarray:
    """The strategy tables and the double mask in the kernels' one array."""
    tab: np.ndarray = kern.pack_tables(*strategy.arrays(), rules.double_mask())
    return tab


def cut_position(rules: AnalysisRules) -> int:
    assert rules.decks is not None
    return max(1, int(52 * rules.decks * rules.penetration))


def kernel_rules(rules: AnalysisRules) -> np.ndarray:
    """The rules as the kernels read them: one float per rule, in the kernels' order."""
    return np.array(
        [
            float(rules.h17),
            float(rules.das),
            float(rules.max_split_hands),
            float(rules.resplit_aces),
            float(rules.hit_split_aces),
            float(rules.late_surrender),
            float(rules.blackjack_pays),
            float(rules.ez_bust),
            float(rules.ez_bust_push_all),
        ]
    )


def _check(rules: AnalysisRules) -> None:
    if rules.decks is None:
        raise ValueError("The simulation deals from a finite shoe; give a number of decks.")
    if not rules.peek:
        raise ValueError(
            "The simulation kernel plays the peek game (hole_card_peek = true); a game without "
            "the peek is analysed exactly only."
        )


@dataclass(frozen=True)
class Chunk:
    """Blocks ``first`` … ``first + blocks - 1`` of a run (the unit of parallel work)."""

    rules: AnalysisRules
    seed: int
    first: int
    blocks: int


def run_chunk(chunk: Chunk) -> dict[str, Any]:
    """Play one chunk; returns the raw counters (picklable, for processes and Dask)."""
    from tablejack.lab.exact import analyse

    rules = chunk.rules
    assert rules.decks is not None
    strategy = analyse(rules.replace(penetration=0.75)).strategy
    stats = np.zeros(kern.STATS)
    hist = np.zeros(kern.NET_BINS, dtype=np.int64)
    counts = np.zeros(kern.OUTCOMES, dtype=np.int64)
    started = time.perf_counter()
    kern.play_shoes(
        run_words(chunk.seed), chunk.first * BLOCK, chunk.blocks * BLOCK, rules.decks,
        cut_position(rules), kernel_rules(rules), kernel_tables(strategy, rules), stats, hist, counts,
        np.zeros((0, 4)),
    )  # fmt: skip
    return {
        "stats": stats,
        "hist": hist,
        "counts": counts,
        "seconds": time.perf_counter() - started,
    }


@dataclass
class SimulationResult:
    """Totals of a simulation, with standard errors and 95% intervals."""

    rules: AnalysisRules
    seed: int
    shoes: int
    stats: np.ndarray
    hist: np.ndarray
    counts: np.ndarray
    seconds: float
    workers: int
    scheduler: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        """Rounds played (one seat: one initial hand per round)."""
        return int(self.stats[kern.S_ROUNDS])

    @property
    def house_edge(self) -> float:
        """House edge of the main wager per initial wager."""
        return float(-self.stats[kern.S_MAIN] / self.stats[kern.S_ROUNDS])

    @property
    def stdev(self) -> float:
        """Standard deviation of a round's main-wager net."""
        n = self.stats[kern.S_ROUNDS]
        mean = self.stats[kern.S_MAIN] / n
        return math.sqrt(max(self.stats[kern.S_MAIN_SQ] / n - mean * mean, 0.0))

    @property
    def stderr(self) -> float:
        """Standard error of the main-wager house edge."""
        return self.stdev / math.sqrt(self.stats[kern.S_ROUNDS])

    @property
    def hands_per_second(self) -> float:
        """Rounds per wall-clock second."""
        return self.rounds / self.seconds if self.seconds > 0 else float("inf")

    def ez_bust(self) -> dict[str, float] | None:
        """The EZ Bust wager's figures, or None when none was placed."""
        wagers = self.stats[kern.S_EZ_WAGERS]
        if wagers == 0:
            return None
        mean = self.stats[kern.S_EZ_NET] / wagers
        var = max(self.stats[kern.S_EZ_SQ] / wagers - mean * mean, 0.0)
        se = math.sqrt(var / wagers)
        return {
            "wagers": int(wagers),
            "house_edge": -mean,
            "stderr": se,
            "ci95": [-mean - Z95 * se, -mean + Z95 * se],
            "win": self.stats[kern.S_EZ_WIN] / wagers,
            "lose": self.stats[kern.S_EZ_LOSE] / wagers,
            "push": self.stats[kern.S_EZ_PUSH] / wagers,
            "stdev": math.sqrt(var),
        }

    def hand_outcomes(self) -> dict[str, float]:
        """Share of hands (split hands counted each) by outcome."""
        names = (
            "blackjack", "win", "win doubled", "push", "lose", "lose doubled", "surrender",
            "win split hand", "push split hand", "lose split hand",
        )  # fmt: skip
        total = self.counts.sum()
        return {name: float(self.counts[i] / total) for i, name in enumerate(names)}

    def net_distribution(self) -> dict[str, float]:
        """Probability of each round net (in units of the initial wager)."""
        total = self.hist.sum()
        out = {}
        for b, count in enumerate(self.hist):
            if count:
                out[f"{(b - kern.NET_BINS // 2) / 2:+g}"] = float(count / total)
        return out

    def to_json(self) -> dict[str, Any]:
        """The result as the CLI prints it."""
        se = self.stderr
        edge = self.house_edge
        wagers: dict[str, Any] = {
            "blackjack": {
                "house_edge": edge,
                "stderr": se,
                "ci95": [edge - Z95 * se, edge + Z95 * se],
                "stdev": self.stdev,
                "hit_frequency": float(
                    self.hist[kern.NET_BINS // 2 + 1 :].sum() / max(self.hist.sum(), 1)
                ),
            }
        }
        ez = self.ez_bust()
        if ez is not None:
            wagers["ez_bust"] = ez
        return {
            "hands": self.rounds,
            "shoes": self.shoes,
            "seed": self.seed,
            "house_edge": {name: w["house_edge"] for name, w in wagers.items()},
            "stderr": {name: w["stderr"] for name, w in wagers.items()},
            "wagers": wagers,
            "seconds": self.seconds,
            "hands_per_second": self.hands_per_second,
            "workers": self.workers,
            "scheduler": self.scheduler,
            "rules": self.rules.to_json(),
            "method": "simulation",
        }


def _chunks(rules: AnalysisRules, seed: int, blocks: int, per_chunk: int) -> Iterator[Chunk]:
    for first in range(0, blocks, per_chunk):
        yield Chunk(rules, seed, first, min(per_chunk, blocks - first))


def _rounds_per_shoe(rules: AnalysisRules) -> float:
    assert rules.decks is not None
    return max(1.0, cut_position(rules) / 5.6)


def simulate(
    rules: AnalysisRules,
    *,
    hands: int,
    seed: int,
    workers: int | None = None,
    scheduler: str | None = None,
    chunk_blocks: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationResult:
    """Simulate about ``hands`` rounds with seed ``seed``: whole blocks of shoes, as many as an
    estimate of the rounds a shoe deals asks for; the result counts the rounds actually played.

    ``workers`` processes (default: every core; 1 runs in this process), or the Dask cluster
    at ``scheduler``. ``progress(done_blocks, total_blocks)`` is called as chunks finish.
    """
    _check(rules)
    if hands < 1:
        raise ValueError(f"hands = {hands} must be at least 1.")
    blocks = max(1, math.ceil(hands / (_rounds_per_shoe(rules) * BLOCK)))
    chunks = list(_chunks(rules, seed, blocks, chunk_blocks))
    # analyse once here so the workers find the strategy in the numba cache quickly
    from tablejack.lab.exact import analyse

    analyse(rules.replace(penetration=0.75))
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    done = 0
    used_workers = 1
    if scheduler is not None:
        results, used_workers = run_dask(scheduler, chunks, progress, blocks)
    else:
        count = workers if workers is not None else (os.cpu_count() or 1)
        used_workers = max(1, min(count, len(chunks)))
        if used_workers == 1:
            for chunk in chunks:
                results.append(run_chunk(chunk))
                done += chunk.blocks
                if progress:
                    progress(done, blocks)
        else:
            with ProcessPoolExecutor(max_workers=used_workers) as pool:
                for chunk, result in zip(chunks, pool.map(run_chunk, chunks), strict=True):
                    results.append(result)
                    done += chunk.blocks
                    if progress:
                        progress(done, blocks)
    seconds = time.perf_counter() - started
    stats = np.sum([r["stats"] for r in results], axis=0)
    hist = np.sum([r["hist"] for r in results], axis=0)
    counts = np.sum([r["counts"] for r in results], axis=0)
    return SimulationResult(
        rules=rules,
        seed=seed,
        shoes=int(stats[kern.S_SHOES]),
        stats=stats,
        hist=hist,
        counts=counts,
        seconds=seconds,
        workers=used_workers,
        scheduler=scheduler,
        extras={"kernel_seconds": float(sum(r["seconds"] for r in results))},
    )


def run_dask(
    scheduler: str,
    chunks: list[Any],
    progress: Callable[[int, int], None] | None,
    blocks: int,
    run: Callable[[Any], dict[str, Any]] = run_chunk,
) -> tuple[list[dict[str, Any]], int]:
    from distributed import Client, as_completed

    try:
        client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as error:
        raise ConnectionError(f"Cannot reach the Dask scheduler at {scheduler}: {error}") from None
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        futures = client.map(run, chunks, pure=False)
        by_future = dict(zip(futures, chunks, strict=True))
        results = []
        done = 0
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            results.append(future.result())
            done += by_future[future].blocks
            if progress:
                progress(done, blocks)
        return results, workers
    finally:
        client.close()  # type: ignore[no-untyped-call]
