"""Benchmark: the exact analysis of the math lab (warm, numba already compiled).

Times the full exact analysis of a six-deck game (strategy generation, every two-card value
with exact dealer probabilities for the cards removed, splits, house edge) and the dealer
probability table of a finite shoe with cards removed; prints the best and median of the
repeats and the house edge.

    .venv/bin/python benchmarks/lab_exact.py [--decks N] [--repeat R]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from tablejack.lab import exact
from tablejack.lab.model import AnalysisRules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decks", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rules = AnalysisRules(decks=args.decks)
    exact.analyse(rules)  # compile or load the numba cache
    times = []
    for _ in range(args.repeat):
        exact.analyse.cache_clear()
        start = time.perf_counter()
        result = exact.analyse(rules)
        times.append(time.perf_counter() - start)
    removed = ["5", "T", "T", "A"]
    exact.dealer_table(rules, removed=removed)
    dealer_times = []
    for _ in range(args.repeat * 20):
        start = time.perf_counter()
        exact.dealer_table(rules, removed=removed)
        dealer_times.append(time.perf_counter() - start)
    print(
        f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}"
    )
    print(f"rules: {rules.abbreviation()}")
    print(f"house edge: {result.house_edge * 100:.4f}%")
    print(
        f"exact analysis (warm): best {min(times):.3f} s, median {statistics.median(times):.3f} s"
    )
    print(
        "dealer probabilities, all 10 up cards, finite shoe with 4 cards removed: "
        f"best {min(dealer_times) * 1000:.2f} ms, median {statistics.median(dealer_times) * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
