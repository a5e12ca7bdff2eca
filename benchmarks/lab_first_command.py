"""Benchmark: the first lab command on a fresh clone, with and without the install's warm-up.

In one run: ``git clone`` of this repository's current commit into a temporary folder (fresh
file times, an empty numba cache beside the kernels), then, with this environment's Python and
the clone's ``src`` first on ``PYTHONPATH``,

* the warm-up ``make install`` runs (``make warm-up``: ``compileall`` of ``src``, then
  ``tablejack warm-up``), timed;
* the first ``tablejack edge --game classic --json`` after it, and the second one, in the clone
  and in ``--copies`` - 1 copies of it made right after the warm-up (file times kept, so numba's
  cache and the bytecode stay valid): more samples of a first command on a shared machine;
* for comparison, on a second fresh clone without the warm-up, the first ``tablejack edge``
  (numba compiles the exact kernels) and the second;
* the warm exact analysis in a process (``lab_exact.py``'s worker: the best of ``--repeat``
  analyses after the first), of the previous release (``lab_baseline.BASELINE``) and of the
  clone, interleaved over ``--rounds`` rounds, with their ratio.

All times are wall-clock seconds of a new process, Python's start and numba's import included,
in this process's environment (``PYTHONDONTWRITEBYTECODE`` as it is: printed at the start).

    .venv/bin/python benchmarks/lab_first_command.py [--rounds K] [--repeat R] [--copies C] [--no-cold]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab_baseline import ROOT, load, measure, ratio, tree


def _clone(folder: Path) -> Path:
    """A fresh clone of the current commit (committed files only)."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "checkout", "--quiet", commit], check=True)
    return folder


CPU: list[float] = []
"""The CPU seconds (user + system) of each command :func:`_timed` ran, in order: steadier than
the wall time on a machine other work shares."""


def _timed(source: Path, args: list[str]) -> tuple[float, str, str]:
    """Wall time of ``python -m tablejack.cli args`` against the package in ``source`` (its CPU
    time appended to :data:`CPU`)."""
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    env.pop("NUMBA_CACHE_DIR", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tablejack.cli", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, done.stdout, done.stderr


EDGE = ["edge", "--game", "classic", "--json"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds old/new")
    parser.add_argument("--repeat", type=int, default=5, help="analyses per worker process")
    parser.add_argument("--no-cold", action="store_true", help="skip the clone without warm-up")
    parser.add_argument("--copies", type=int, default=3, help="warmed trees timed (clone + copies)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {platform.python_implementation()} "
          f"{platform.python_version()}, {load()} at the start; PYTHONDONTWRITEBYTECODE="
          f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tablejack-first-") as name:
        clone = _clone(Path(name) / "warmed")
        where = subprocess.run(
            [sys.executable, "-c", "import tablejack; print(tablejack.__file__)"],
            check=True, capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(clone / "src")},
        ).stdout.strip()  # fmt: skip
        if not where.startswith(str(clone)):
            raise SystemExit(f"the clone's package is not the one imported: {where}")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(clone / "src")], check=True)
        bytecode = time.perf_counter() - start
        warm_up, _, log = _timed(clone, ["warm-up"])
        log = f"{log.strip().splitlines()[-1]} ({CPU[-1]:.1f} CPU s)"
        print(f"fresh clone, the install's warm-up (make warm-up): bytecode {bytecode:.1f} s, "
              f"kernels {warm_up:.1f} s — {log}")  # fmt: skip
        # more samples of a first command: copies of the warmed clone, file times kept (numba's
        # cache and Python's bytecode stay valid), each running its own first and second edge
        trees = [clone]
        for copy in range(1, args.copies):
            trees.append(Path(name) / f"warmed-{copy}")
            shutil.copytree(clone, trees[-1], symlinks=True)
        firsts: list[float] = []
        seconds: list[float] = []
        edges = set()
        first_cpu: list[float] = []
        second_cpu: list[float] = []
        for source in trees:
            first, out, _ = _timed(source, EDGE)
            first_cpu.append(CPU[-1])
            second, _, _ = _timed(source, EDGE)
            second_cpu.append(CPU[-1])
            firsts.append(first)
            seconds.append(second)
            edges.add(json.loads(out)["house_edge"])
        edge = edges.pop()
        print(f"  then the first `tablejack edge --game classic --json` of {len(trees)} trees "
              f"(the clone and {len(trees) - 1} copies): median {statistics.median(firsts):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in firsts)}); the second: median "
              f"{statistics.median(seconds):.2f} s ({', '.join(f'{x:.2f}' for x in seconds)}); "
              f"house edge {edge!r}{'' if not edges else ' NOT THE SAME IN EVERY TREE'}")  # fmt: skip
        print(f"  CPU seconds (user + system) of the first: median "
              f"{statistics.median(first_cpu):.2f} s, of the second: median "
              f"{statistics.median(second_cpu):.2f} s")  # fmt: skip
        if not args.no_cold:
            cold_clone = _clone(Path(name) / "cold")
            cold, out, _ = _timed(cold_clone, EDGE)
            cold_cpu = CPU[-1]
            after, _, _ = _timed(cold_clone, EDGE)
            same = json.loads(out)["house_edge"] == edge
            print(f"fresh clone without the warm-up: the first `tablejack edge`: {cold:.1f} s "
                  f"({cold_cpu:.1f} CPU s; numba compiles), the second: {after:.2f} s "
                  f"({CPU[-1]:.2f} CPU s); same house edge: {'yes' if same else 'NO'}")  # fmt: skip
        sides = {"baseline": tree("baseline"), "current": clone}
        for source in sides.values():  # each tree's cache warm (compiles the baseline once)
            measure(source, "lab_exact.py", ["--worker", "--repeat", "1"])
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, source in sides.items():
                runs[side].append(
                    measure(source, "lab_exact.py", ["--worker", "--repeat", str(args.repeat)])
                )
        for side in sides:
            best = [r["best"] for r in runs[side]]
            print(f"{side:>8}: exact 6-deck analysis in a process, warm: best {min(best):.3f} s, "
                  f"median of the rounds' best {statistics.median(best):.3f} s; "
                  f"house edge {sorted({r['house_edge'] for r in runs[side]})}")  # fmt: skip
        mid, low, high = ratio(
            [r["best"] for r in runs["baseline"]], [r["best"] for r in runs["current"]]
        )
        print(f"speed-up of the warm exact analysis (baseline {sides['baseline'].name} / current, "
              f"interleaved pairs): {mid:.2f}x (range {low:.2f}-{high:.2f})")  # fmt: skip
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()
