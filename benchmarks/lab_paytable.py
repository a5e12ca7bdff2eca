"""Benchmark: the paytable search of the math lab (``tablejack paytable``).

For each side wager with its default rules and lattice: the time to compute the outcome
distribution once (the exact kernels warm; the Buzzer Beater and EZ Bust run the exact analysis,
the hybrid-shared wagers enumerate the cards in rational arithmetic) and the time of the exact
search for the 10 paytables nearest each of a few targets (best of ``--repeat``), with the number
of paytables in the lattice and of partial paytables the search enumerated. Also King's Bounty
over every integer to 100 to 1, the largest lattice the default limit searches here.

    .venv/bin/python benchmarks/lab_paytable.py [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from fractions import Fraction
from typing import Any

from tablejack.games import game as engine_game
from tablejack.lab import paytable as design
from tablejack.lab.model import AnalysisRules

CASES: list[tuple[str, str, str, design.Lattice, list[str]]] = [
    ("hybrid", "buzzer_beater", "regulation", design.Lattice(), ["0.02", "0.05", "0.10"]),
    ("classic", "ez_bust", "regulation", design.Lattice(), ["0.05", "0.10"]),
    ("classic", "ez_bust", "by-up-card", design.Lattice(), ["0.05", "0.10"]),
    ("hybrid-shared", "royal_match", "regulation", design.Lattice(), ["0.02", "0.05"]),
    ("hybrid-shared", "bet_the_set", "regulation", design.Lattice(), ["0.02", "0.05"]),
    ("hybrid-shared", "kings_bounty", "regulation", design.Lattice(), ["0.10", "0.15", "0.20"]),
    (
        "hybrid-shared",
        "kings_bounty",
        "regulation",
        design.Lattice(max_pay=100, pays="integers"),
        ["0.10", "0.20"],
    ),
]


def _timed(repeat: int, work: Any) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    # warm the exact kernels (the numba cache) before timing
    design.ez_bust_outcomes(AnalysisRules(decks=6))
    for game_id, wager, form, lattice, targets in CASES:
        rules = engine_game(game_id).rules_class()

        def distribution(
            game_id: str = game_id, wager: str = wager, rules: Any = rules, form: str = form
        ) -> design.WagerOutcomes:
            from tablejack.lab import exact

            exact.analyse.cache_clear()
            return design.wager_outcomes(
                game_id, wager, rules, AnalysisRules.from_rules(rules), form=form
            )

        seconds, outcomes = _timed(args.repeat, distribution)
        label = f"{wager}{'' if form == 'regulation' else ' ' + form}, {lattice.pays} pays"
        if lattice.max_pay:
            label += f" to {lattice.max_pay}"
        print(f"{label}: distribution {seconds:.3f} s ({len(outcomes.outcomes)} outcomes)")
        for target in targets:
            search_s, result = _timed(
                args.repeat,
                lambda o=outcomes, t=target, grid=lattice: design.search(o, Fraction(t), 10, grid),
            )
            best = result.candidates[0]
            print(
                f"  target {float(target) * 100:.1f}%: search {search_s * 1000:.1f} ms over "
                f"{result.paytables:,} paytables ({result.searched:,} partial paytables "
                f"enumerated); nearest {float(best.house_edge) * 100:.6f}%"
            )


if __name__ == "__main__":
    main()
