"""Benchmark: the math lab's simulation of hybrid, hybrid-shared and multi-action (numba kernel
``tablejack.lab._sim_games``) and the exact analysis of their wagers.

Each game with its default rules (every side wager the rules offer is played on every round),
the generated strategy, cut card at 75%, one player. Runs on one core, then on every core
(processes); prints hands per second (rounds; a multi-action round settles three spots), the
house edge of every wager with its standard error, the exact figures and their time (warm), and
the peak memory of this process and its workers.

    .venv/bin/python benchmarks/lab_games.py [--hands N] [--game G]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from typing import Any

from tablejack.games import game as engine_game
from tablejack.lab.games import lab_game
from tablejack.lab.model import AnalysisRules
from tablejack.lab.simulate_games import simulate_game

GAMES = ("hybrid", "hybrid-shared", "multi-action")


def _report(
    game: str, label: str, hands: int, rules: Any, analysis: AnalysisRules, **options: Any
) -> None:
    start = time.perf_counter()
    result = simulate_game(game, analysis, rules, hands=hands, seed=2026, **options)
    wall = time.perf_counter() - start
    rate = result.rounds / wall
    data = result.to_json()
    edges = ", ".join(
        f"{name} {w['house_edge'] * 100:.3f}% ± {w['stderr'] * 100:.3f}%"
        for name, w in data["wagers"].items()
    )
    print(
        f"  {label}: {result.rounds:,} hands in {wall:.2f} s = {rate / 1e6:.2f} M hands/s "
        f"({rate / 1e6 / max(result.workers, 1):.2f} M per worker, {result.workers} worker(s)); "
        f"{edges}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20_000_000)
    parser.add_argument("--game", choices=GAMES, action="append")
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for game in args.game or GAMES:
        rules = engine_game(game).rules_class()
        analysis = AnalysisRules.from_rules(rules)
        spec = lab_game(game)
        simulate_game(game, analysis, rules, hands=50_000, seed=1, workers=1)  # warm the caches
        print(f"{game}: {analysis.abbreviation()}, penetration {analysis.penetration:.0%}")
        for wager in spec.offered_wagers(rules):
            spec.exact(analysis, wager, rules)  # warm
            start = time.perf_counter()
            figures = spec.exact(analysis.replace(penetration=0.7), wager, rules)
            seconds = time.perf_counter() - start
            print(
                f"  exact {wager}: house edge {figures['house_edge'] * 100:.4f}% "
                f"({seconds:.2f} s warm)"
            )
        _report(game, "one core", args.hands, rules, analysis, workers=1)
        _report(game, "all cores", args.hands, rules, analysis, workers=os.cpu_count())
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory: {own:.0f} MB this process, {children:.0f} MB largest worker")


if __name__ == "__main__":
    main()
