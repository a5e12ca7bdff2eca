"""Simulation of ``hybrid``, ``hybrid-shared`` and ``multi-action`` by their numba kernel
(:mod:`tablejack.lab._sim_games`), with the same seeded shoes, chunks, processes and Dask
cluster as :mod:`tablejack.lab.simulate`.

The side wagers' paytables are turned into 52 x 52 tables of net odds by the engine's own
judging functions (every ordered pair of the player's card identities), so the kernel pays
exactly what the engine pays.

>>> from tablejack.games.hybrid_shared_rules import HybridSharedRules
>>> from tablejack.lab.model import AnalysisRules
>>> rules = HybridSharedRules()
>>> result = simulate_game("hybrid-shared", AnalysisRules.from_rules(rules), rules,
...                        hands=5_000, seed=3, workers=1)
>>> sorted(result.to_json()["wagers"])
['bet_the_set', 'blackjack', 'kings_bounty', 'royal_match']
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from tablejack.lab import _sim_games
from tablejack.lab.model import AnalysisRules
from tablejack.lab.offers import offered_wagers
from tablejack.lab.simulate import BLOCK, Z95, cut_position, kernel_tables, run_words

__all__ = ["GAME_CODES", "GameSimulationResult", "game_tables", "simulate_game"]

kern: Any = _sim_games

GAME_CODES = {"hybrid": 0, "hybrid-shared": 1, "multi-action": 2}
HIST_BINS = 61

SIDE_NAMES = {
    "hybrid": ("buzzer_beater",),
    "hybrid-shared": ("royal_match", "bet_the_set", "kings_bounty"),
    "multi-action": ("spot_1", "spot_2", "spot_3"),
}


def _best(table: Any, matched: tuple[str, ...]) -> Fraction:
    best = Fraction(0)
    for line, odds in table:
        if line in matched and odds > best:
            best = odds
    return best


def game_tables(game: str, game_rules: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_game_tables`, cached per rules (built once per worker process)."""
    try:
        return _cached_tables(game, game_rules)
    except TypeError:  # unhashable rules
        return _game_tables(game, game_rules)


@functools.lru_cache(maxsize=16)
def _cached_tables(game: str, game_rules: Any) -> tuple[np.ndarray, np.ndarray]:
    return _game_tables(game, game_rules)


def _game_tables(game: str, game_rules: Any) -> tuple[np.ndarray, np.ndarray]:
    """The side-wager pay tables (:data:`_sim_games.P_TABLES` x 52 x 52, net odds, -1 a loss)
    and the Buzzer Beater's 4 x 4 table (player 19, 20, 21, Blackjack by dealer ditto)."""
    pay = np.zeros((kern.P_TABLES, 52, 52))
    bb = np.full((4, 4), -1.0)
    if game == "hybrid-shared":
        from tablejack.core.cards import full_deck
        from tablejack.games.hybrid_shared_rules import (
            bet_the_set_lines,
            is_royal_match,
            kings_bounty_lines,
            royal_match_lines,
        )

        deck = full_deck()
        rm_table = game_rules.royal_match_lines()
        bts_table = game_rules.bet_the_set_lines()
        kb_table = game_rules.kings_bounty_lines()
        bonus = game_rules.crown_treasure_pays
        for a, first in enumerate(deck):
            for b, second in enumerate(deck):
                rm = _best(rm_table, royal_match_lines(first, second))
                pay[kern.P_ROYAL_MATCH, a, b] = float(rm) if rm else -1.0
                crown = rm + bonus if game_rules.crown_treasure_in_addition else bonus
                pay[kern.P_ROYAL_MATCH_CROWN, a, b] = float(crown)
                bts = _best(bts_table, bet_the_set_lines(first, second))
                pay[kern.P_BET_THE_SET, a, b] = float(bts) if bts else -1.0
                kb = _best(kb_table, kings_bounty_lines(first, second, False))
                pay[kern.P_KINGS_BOUNTY, a, b] = float(kb) if kb else -1.0
                kbj = _best(kb_table, kings_bounty_lines(first, second, True))
                pay[kern.P_KINGS_BOUNTY_BJ, a, b] = float(kbj) if kbj else -1.0
                pay[kern.P_ROYAL, a, b] = 1.0 if is_royal_match(first, second) else 0.0
    if game == "hybrid":
        labels = ("19", "20", "21", "blackjack")
        no_row = 0.0 if game_rules.buzzer_beater_no_row == "push" else -1.0
        for i, player in enumerate(labels):
            for j, dealer in enumerate(labels):
                odds = game_rules.buzzer_beater_odds(player, dealer)
                bb[i, j] = no_row if odds is None else float(odds)
    return pay, bb


def kernel_rules(rules: AnalysisRules, game_rules: Any) -> np.ndarray:
    """The kernel's rules vector (:data:`_sim_games.G_RULES` numbers)."""
    vec = np.zeros(kern.G_RULES)
    vec[kern.G_H17] = float(rules.h17)
    vec[kern.G_DAS] = float(rules.das)
    vec[kern.G_MAX_HANDS] = float(rules.max_split_hands)
    vec[kern.G_RSA] = float(rules.resplit_aces)
    vec[kern.G_HIT_SPLIT_ACES] = float(rules.hit_split_aces)
    vec[kern.G_LS] = float(rules.late_surrender)
    vec[kern.G_BJ_PAYS] = float(rules.blackjack_pays)
    vec[kern.G_SPLIT_FULL] = float(rules.split_full_amount)
    vec[kern.G_DOUBLE_FULL] = float(rules.double_full_amount)
    vec[kern.G_CROWN] = float(bool(getattr(game_rules, "crown_treasure", False)))
    vec[kern.G_SPLIT_ALLOWED] = float(rules.split)
    vec[kern.G_SPOTS] = float(rules.spots)
    return vec


@dataclass(frozen=True)
class GameChunk:
    """Blocks ``first`` … ``first + blocks - 1`` of a run of one game."""

    game: str
    rules: AnalysisRules
    game_rules: Any
    seed: int
    first: int
    blocks: int


def run_game_chunk(chunk: GameChunk) -> dict[str, Any]:
    """Play one chunk; the raw counters (picklable, for processes and Dask)."""
    from tablejack.lab.exact import analyse

    rules = chunk.rules
    assert rules.decks is not None
    strategy = analyse(rules.replace(penetration=0.75)).strategy
    pay, bb = game_tables(chunk.game, chunk.game_rules)
    stats = np.zeros(kern.STATS)
    hist = np.zeros(HIST_BINS, dtype=np.int64)
    started = time.perf_counter()
    kern.play_game_shoes(
        run_words(chunk.seed), chunk.first * BLOCK, chunk.blocks * BLOCK, rules.decks,
        cut_position(rules), GAME_CODES[chunk.game], kernel_rules(rules, chunk.game_rules),
        kernel_tables(strategy, rules), pay, bb, stats, hist, np.zeros((0, 5)),
    )  # fmt: skip
    return {"stats": stats, "hist": hist, "seconds": time.perf_counter() - started}


@dataclass
class GameSimulationResult:
    """Totals of a simulation of one game, with standard errors and 95% intervals."""

    game: str
    rules: AnalysisRules
    offered: tuple[str, ...]
    seed: int
    stats: np.ndarray
    hist: np.ndarray
    seconds: float
    workers: int
    scheduler: str | None = None

    @property
    def rounds(self) -> int:
        """Rounds played."""
        return int(self.stats[kern.ST_ROUNDS])

    @property
    def shoes(self) -> int:
        """Shoes played."""
        return int(self.stats[kern.ST_SHOES])

    @property
    def hands_per_second(self) -> float:
        """Rounds per wall-clock second."""
        return self.rounds / self.seconds if self.seconds > 0 else float("inf")

    def _figures(self, q: int, per: float) -> dict[str, Any]:
        n = self.stats[kern.ST_ROUNDS]
        mean = self.stats[kern.ST_SUM + q] / n
        var = max(self.stats[kern.ST_SQ + q] / n - mean * mean, 0.0)
        edge = -mean / per
        se = math.sqrt(var / n) / per
        return {
            "house_edge": edge,
            "stderr": se,
            "ci95": [edge - Z95 * se, edge + Z95 * se],
            "stdev": math.sqrt(var) / per,
            "hit_frequency": float(self.stats[kern.ST_HITS + q] / n),
        }

    def to_json(self) -> dict[str, Any]:
        """The result as the CLI prints it: house edge per wager placed (per spot for
        multi-action's main wager)."""
        wagers: dict[str, Any] = {"blackjack": self._figures(0, float(self.rules.spots))}
        for q, name in enumerate(SIDE_NAMES[self.game], start=1):
            if name in self.offered or self.game == "multi-action":
                wagers[name] = self._figures(q, 1.0)
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

    def net_distribution(self) -> dict[str, float]:
        """Probability of each round main-wager net (units, all spots together)."""
        total = self.hist.sum()
        return {
            f"{(b - HIST_BINS // 2) / 2:+g}": float(c / total) for b, c in enumerate(self.hist) if c
        }


def simulate_game(
    game: str,
    rules: AnalysisRules,
    game_rules: Any,
    *,
    hands: int,
    seed: int,
    workers: int | None = None,
    scheduler: str | None = None,
    chunk_blocks: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> GameSimulationResult:
    """Simulate about ``hands`` rounds of ``game``: whole blocks of shoes, as many as an estimate
    of the rounds a shoe deals asks for; the result counts the rounds actually played."""
    if rules.decks is None:
        raise ValueError("The simulation deals from a finite shoe; give a number of decks.")
    if hands < 1:
        raise ValueError(f"hands = {hands} must be at least 1.")
    per_shoe = max(1.0, cut_position(rules) / (5.4 if game != "multi-action" else 7.5))
    blocks = max(1, math.ceil(hands / (per_shoe * BLOCK)))
    chunks = [
        GameChunk(game, rules, game_rules, seed, first, min(chunk_blocks, blocks - first))
        for first in range(0, blocks, chunk_blocks)
    ]
    from tablejack.lab.exact import analyse

    analyse(rules.replace(penetration=0.75))
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    done = 0
    if scheduler is not None:
        from tablejack.lab.simulate import run_dask

        results, used = run_dask(scheduler, chunks, progress, blocks, run=run_game_chunk)
    else:
        count = workers if workers is not None else (os.cpu_count() or 1)
        used = max(1, min(count, len(chunks)))
        if used == 1:
            for chunk in chunks:
                results.append(run_game_chunk(chunk))
                done += chunk.blocks
                if progress:
                    progress(done, blocks)
        else:
            with ProcessPoolExecutor(max_workers=used) as pool:
                for chunk, result in zip(chunks, pool.map(run_game_chunk, chunks), strict=True):
                    results.append(result)
                    done += chunk.blocks
                    if progress:
                        progress(done, blocks)
    return GameSimulationResult(
        game=game,
        rules=rules,
        offered=offered_wagers(game, game_rules),
        seed=seed,
        stats=np.sum([r["stats"] for r in results], axis=0),
        hist=np.sum([r["hist"] for r in results], axis=0),
        seconds=time.perf_counter() - started,
        workers=used,
        scheduler=scheduler,
    )


def record_game_shoe(
    game: str, rules: AnalysisRules, game_rules: Any, seed: int, index: int
) -> list[dict[str, Any]]:
    """Shoe ``index`` of a run seeded ``seed`` through the kernel, round by round: the main net
    (every spot), the side nets (zero for a wager the rules do not offer; multi-action: each
    spot's net) and the cards used (what the parity tests compare with the engine)."""
    from tablejack.lab.exact import analyse

    assert rules.decks is not None
    strategy = analyse(rules.replace(penetration=0.75)).strategy
    pay, bb = game_tables(game, game_rules)
    out = np.zeros((600, 5))
    count = kern.play_game_shoes(
        run_words(seed), index, 1, rules.decks, cut_position(rules), GAME_CODES[game],
        kernel_rules(rules, game_rules), kernel_tables(strategy, rules), pay, bb,
        np.zeros(kern.STATS), np.zeros(HIST_BINS, dtype=np.int64), out,
    )  # fmt: skip
    names = SIDE_NAMES[game]
    offered = offered_wagers(game, game_rules)
    live = [game == "multi-action" or (q < len(names) and names[q] in offered) for q in range(3)]
    return [
        {
            "main": float(row[0]),
            **{f"side{q + 1}": float(row[q + 1]) if live[q] else 0.0 for q in range(3)},
            "cards": int(row[4]),
        }
        for row in out[:count]
    ]
