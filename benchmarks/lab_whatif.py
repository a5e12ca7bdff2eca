"""Benchmark: what the rule-variation table adds to a par sheet.

Times, warm (numba already compiled), interleaved in one process: the par sheet's data without
the table (``build_parsheet(..., variations=False)``: the exact analysis, the simulated
distribution, the side wagers) and the rule-variation table alone on one and on two worker
processes (each row a fresh exact analysis; the analysis cache is cleared before every
measurement). Prints each time, the table's time as a share of the sheet's, and the machine's
load: compare figures only within one run.

    .venv/bin/python benchmarks/lab_whatif.py [--rules FILE] [--hands N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=Path, default=ROOT / "rules" / "pa-classic-6deck.toml")
    parser.add_argument("--hands", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from tablejack.core.rules import read_toml
    from tablejack.lab import exact
    from tablejack.lab.games import lab_game
    from tablejack.lab.parsheet import build_parsheet
    from tablejack.lab.whatif import lab_rules, rule_variations

    game = str(read_toml(args.rules).get("game", "classic"))
    spec, lab = lab_game(game), lab_rules(game, args.rules)
    rows = 0

    def sheet() -> None:
        build_parsheet(
            spec, lab.rules, lab.analysis, hands=args.hands, seed=1, workers=2,
            what_if=lab, variations=False,
        )  # fmt: skip

    def table(workers: int) -> None:
        nonlocal rows
        rows = len(rule_variations(lab, workers=workers)["rows"])

    sheet()  # compile or load the kernels
    table(1)
    times: dict[str, list[float]] = {"sheet": [], "table-1": [], "table-2": []}
    for _ in range(args.repeat):
        for name, run in (("sheet", sheet), ("table-1", lambda: table(1)),
                          ("table-2", lambda: table(2))):  # fmt: skip
            exact.analyse.cache_clear()
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"rules {args.rules.name} ({lab.analysis.abbreviation()}), {rows} variation rows")
    print(f"par sheet without the table ({args.hands:,} hands, 2 workers): {median['sheet']:.2f} s")
    for workers in (1, 2):
        value = median[f"table-{workers}"]
        print(
            f"rule-variation table, {workers} worker(s): {value:.2f} s "
            f"({value / rows:.2f} s per row; {value / median['sheet']:.2f} x the sheet)"
        )
    print(f"medians of {args.repeat} interleaved runs; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
