"""Benchmark: the math lab's simulation on one core, the previous release beside the current one.

For each game it runs what ``tablejack simulate --game G --workers 1`` runs (``classic`` with
``--decks 6 --no-surrender``; ``hybrid``, ``hybrid-shared`` and ``multi-action`` with their
default rules, every offered side wager on every round), in a new process per measurement
with the previous release (``lab_baseline.BASELINE``, checked out beside this tree) or the
current code first on its path, interleaved: round 1 baseline then current for every game,
round 2 the same, and so on. It prints, per game and side, rounds per second and hands per
second (wall clock; a multi-action round settles a hand on each of its three spots, the other
games one hand per round), the kernel's rate per CPU second, the median ratio current /
baseline of the interleaved pairs, the machine's load, whether the two agree on every wager's
house edge (within 3 combined standard errors), and the peak memory (resident set size) of a
process that simulated ``--hands`` and one that simulated four times as many.

    .venv/bin/python benchmarks/lab_simulate.py [--hands N] [--rounds R] [--game G]
        [--current-only] [--dask --dask-hands N]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import statistics
import time
from typing import Any

from lab_baseline import load, measure, ratio, tree

GAMES = ("classic", "hybrid", "hybrid-shared", "multi-action")
SEED = 2026


def _game(game: str) -> tuple[Any, Any, Any]:
    """The lab game, its rules and their analysis, as the ``simulate`` command makes them."""
    from tablejack.lab.games import lab_game, rules_for

    flags: dict[str, Any] = {"decks": 6, "surrender": False} if game == "classic" else {}
    game_rules, analysis = rules_for(game, None, **flags)
    return lab_game(game), game_rules, analysis


def _worker(game: str, hands: int) -> None:
    spec, game_rules, analysis = _game(game)
    spec.simulate(analysis, game_rules=game_rules, hands=1, seed=1, workers=1)  # warm
    wall = time.perf_counter()
    cpu = time.process_time()
    result = spec.simulate(analysis, game_rules=game_rules, hands=hands, seed=SEED, workers=1)
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    data = result.to_json()
    print(
        json.dumps(
            {
                "rounds": data["hands"],
                "spots": analysis.spots,
                "wall": wall,
                "cpu": cpu,
                "edges": data["house_edge"],
                "stderr": data["stderr"],
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def _agree(old: dict[str, Any], new: dict[str, Any]) -> tuple[bool, str]:
    """Whether every wager's two edges lie within 3 combined standard errors."""
    ok = True
    parts = []
    for wager, edge in new["edges"].items():
        if wager not in old["edges"]:
            ok = False
            parts.append(f"{wager} missing in the baseline")
            continue
        se = math.hypot(old["stderr"][wager], new["stderr"][wager])
        z = (edge - old["edges"][wager]) / se if se > 0 else 0.0
        ok = ok and abs(z) < 3
        parts.append(
            f"{wager} {old['edges'][wager] * 100:.3f}% / {edge * 100:.3f}% ({z:+.1f} s.e.)"
        )
    return ok, "; ".join(parts)


def _dask(hands: int) -> None:
    import os

    from distributed import LocalCluster

    spec, game_rules, analysis = _game("classic")
    cores = os.cpu_count() or 1
    with LocalCluster(n_workers=cores, threads_per_worker=1, dashboard_address=None) as cluster:
        start = time.perf_counter()
        result = spec.simulate(
            analysis, game_rules=game_rules, hands=hands, seed=SEED,
            scheduler=cluster.scheduler_address, chunk_blocks=32,
        )  # fmt: skip
        wall = time.perf_counter() - start
    print(
        f"local Dask cluster ({cores} workers), classic, current: {result.rounds:,} rounds in "
        f"{wall:.1f} s = {result.rounds / wall / 1e6:.2f} M rounds/s; house edge "
        f"{result.house_edge * 100:.4f}% ± {result.stderr * 100:.4f}%; peak memory "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB main process, "
        f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB largest worker"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=5_000_000, help="rounds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds old/new")
    parser.add_argument("--game", choices=GAMES, action="append")
    parser.add_argument("--current-only", action="store_true", help="no baseline")
    parser.add_argument("--dask", action="store_true", help="also a local Dask cluster (current)")
    parser.add_argument("--dask-hands", type=int, default=100_000_000)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.hands)
        return
    games = args.game or list(GAMES)
    sides = ["current"] if args.current_only else ["baseline", "current"]
    trees = {side: tree(side) for side in sides}
    print(f"machine: {platform.machine()} {platform.python_implementation()} "
          f"{platform.python_version()}, {load()} at the start")  # fmt: skip
    print(f"baseline: {trees.get('baseline', '-')}; {args.hands:,} rounds per measurement, "
          f"one core (--workers 1), seed {SEED}")  # fmt: skip
    for side in sides:  # warm each tree's numba cache (compiles a baseline once)
        for game in games:
            measure(trees[side], "lab_simulate.py", ["--worker", game, "--hands", "1000"])
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {
        (side, game): [] for side in sides for game in games
    }
    for _ in range(args.rounds):
        for game in games:
            for side in sides:
                data = measure(trees[side], "lab_simulate.py",
                               ["--worker", game, "--hands", str(args.hands)])  # fmt: skip
                runs[side, game].append(data)
    print(f"{load()} after the interleaved runs")
    for game in games:
        print(f"{game}:")
        for side in sides:
            data = runs[side, game]
            rounds = [d["rounds"] / d["wall"] for d in data]
            cpu = [d["rounds"] / d["cpu"] for d in data]
            spots = data[0]["spots"]
            print(
                f"  {side:>8}: {statistics.median(rounds) / 1e6:.2f} M rounds/s = "
                f"{statistics.median(rounds) * spots / 1e6:.2f} M hands/s (median of "
                f"{len(data)}; best {max(rounds) / 1e6:.2f} M rounds/s), "
                f"{statistics.median(cpu) / 1e6:.2f} M rounds per CPU second; "
                f"{data[0]['rounds']:,} rounds"
            )
        if len(sides) == 2:
            old, new = runs["baseline", game], runs["current", game]
            mid, low, high = ratio(
                [d["wall"] / d["rounds"] for d in old], [d["wall"] / d["rounds"] for d in new]
            )
            cpu_mid, _, _ = ratio(
                [d["cpu"] / d["rounds"] for d in old], [d["cpu"] / d["rounds"] for d in new]
            )
            print(f"  speed-up current / baseline (interleaved pairs, wall clock): {mid:.2f}x "
                  f"(range {low:.2f}-{high:.2f}); per CPU second {cpu_mid:.2f}x")  # fmt: skip
            ok, detail = _agree(old[-1], new[-1])
            print(f"  same house edges within 3 standard errors: {'yes' if ok else 'NO'} "
                  f"(baseline / current: {detail})")  # fmt: skip
    print("peak memory (resident set size) of one process by rounds simulated:")
    for game in games:
        parts = []
        for side in sides:
            small = runs[side, game][0]
            large = measure(trees[side], "lab_simulate.py",
                            ["--worker", game, "--hands", str(4 * args.hands)])  # fmt: skip
            parts.append(
                f"{side} {small['peak_mb']:.0f} MB at {small['rounds']:,} rounds, "
                f"{large['peak_mb']:.0f} MB at {large['rounds']:,}"
            )
        print(f"  {game}: " + "; ".join(parts))
    if args.dask:
        _dask(args.dask_hands)
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()
