"""Benchmark: the exact analysis of the math lab, the previous release beside the current one.

Times, warm (numba already compiled), the full exact analysis of a six-deck game (strategy
generation, every two-card value with exact dealer probabilities for the cards removed, splits,
house edge) and the dealer probability table of a finite shoe with cards removed; and, cold
(a new process each time), ``tablejack edge --game classic --json`` from the command line. The
previous release (``lab_baseline.BASELINE``, checked out beside this tree) and the current code
run interleaved, each in its own process; the script prints both, their ratio and the machine's
load. Both must give the same house edge to the last digit.

    .venv/bin/python benchmarks/lab_exact.py [--decks N] [--repeat R] [--rounds K] [--current-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lab_baseline import load, measure, ratio, tree


def _worker(decks: int, repeat: int) -> None:
    from tablejack.lab import exact
    from tablejack.lab.model import AnalysisRules

    rules = AnalysisRules(decks=decks)
    started = time.perf_counter()
    exact.analyse(rules)  # compile or load the numba cache
    first = time.perf_counter() - started
    times = []
    for _ in range(repeat):
        exact.analyse.cache_clear()
        start = time.perf_counter()
        result = exact.analyse(rules)
        times.append(time.perf_counter() - start)
    removed = ["5", "T", "T", "A"]
    exact.dealer_table(rules, removed=removed)
    dealer_times = []
    for _ in range(repeat * 20):
        start = time.perf_counter()
        exact.dealer_table(rules, removed=removed)
        dealer_times.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "house_edge": repr(result.house_edge),
                "first": first,
                "best": min(times),
                "median": statistics.median(times),
                "dealer_ms": statistics.median(dealer_times) * 1000,
            }
        )
    )


def _cli_seconds(source: Path, decks: int) -> tuple[float, float]:
    """Wall time of one ``tablejack edge`` in a new process, and the edge it printed."""
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "tablejack.cli", "edge", "--game", "classic", "--decks",
         str(decks), "--json"],
        check=True, capture_output=True, text=True, env=env,
    ).stdout  # fmt: skip
    seconds = time.perf_counter() - start
    return seconds, json.loads(out)["house_edge"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decks", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds old/new")
    parser.add_argument("--current-only", action="store_true", help="no baseline")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.decks, args.repeat)
        return
    sides = ["current"] if args.current_only else ["baseline", "current"]
    trees = {side: tree(side) for side in sides}
    print(f"machine: {platform.machine()} {platform.python_implementation()} "
          f"{platform.python_version()}, {load()} at the start")  # fmt: skip
    print(
        f"rules: {args.decks} decks S17 DAS DOA SP4 LS peek 3:2; baseline {trees.get('baseline', '-')}"
    )
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    cli: dict[str, list[float]] = {side: [] for side in sides}
    edges: dict[str, set[str]] = {side: set() for side in sides}
    for side in sides:  # warm each tree's numba cache (compiles a baseline once)
        measure(
            trees[side], "lab_exact.py", ["--worker", "--decks", str(args.decks), "--repeat", "1"]
        )
        _cli_seconds(trees[side], args.decks)
    for _ in range(args.rounds):
        for side in sides:
            data = measure(trees[side], "lab_exact.py",
                           ["--worker", "--decks", str(args.decks), "--repeat", str(args.repeat)])  # fmt: skip
            runs[side].append(data)
            edges[side].add(data["house_edge"])
            seconds, _ = _cli_seconds(trees[side], args.decks)
            cli[side].append(seconds)
    for side in sides:
        best = [r["best"] for r in runs[side]]
        print(
            f"{side:>8}: exact analysis (warm) best {min(best):.3f} s, median "
            f"{statistics.median(r['median'] for r in runs[side]):.3f} s; first call in a process "
            f"(cache load + analysis) {statistics.median(r['first'] for r in runs[side]):.2f} s; "
            f"dealer table {statistics.median(r['dealer_ms'] for r in runs[side]):.3f} ms; "
            f"`tablejack edge` from the CLI median {statistics.median(cli[side]):.2f} s "
            f"(best {min(cli[side]):.2f} s); house edge {sorted(edges[side])}"
        )
    if len(sides) == 2:
        mid, low, high = ratio(
            [r["best"] for r in runs["baseline"]], [r["best"] for r in runs["current"]]
        )
        print(f"speed-up of the warm exact analysis (baseline / current, interleaved pairs): "
              f"{mid:.2f}x (range {low:.2f}-{high:.2f})")  # fmt: skip
        mid, low, high = ratio(cli["baseline"], cli["current"])
        print(f"speed-up of `tablejack edge` from the CLI: {mid:.2f}x (range {low:.2f}-{high:.2f})")
        same = edges["baseline"] == edges["current"] and len(edges["current"]) == 1
        print(f"same house edge to the last digit: {'yes' if same else 'NO'}")
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()
