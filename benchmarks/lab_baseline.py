"""The lab benchmarks' baseline: the previous release of the math lab, checked out beside the
working tree, so that a benchmark measures the old and the new code in one run, interleaved, on
the same (shared) machine and reports their ratio.

The baseline is the commit :data:`BASELINE` (the lab before its second edition), checked out
with ``git worktree add --detach`` into the system's temporary directory the first time it is
needed. A measurement runs in a fresh Python process whose ``PYTHONPATH`` puts the chosen tree's
``src`` first; that tree's numba cache lives beside its kernels, so the baseline compiles once.

    from lab_baseline import tree, measure
    old = measure(tree("baseline"), "lab_exact.py", ["--worker"])
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

BASELINE = "a9456b5c118e0a12ad95fc661707f28c445715dd"
"""The previous release of the lab: the last commit before its second edition."""


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def tree(which: str) -> Path:
    """The source tree to measure: ``"current"`` (this working tree) or ``"baseline"``."""
    if which == "current":
        return ROOT
    commit = _git("rev-parse", BASELINE)
    path = Path(tempfile.gettempdir()) / f"tablejack-bench-{commit[:7]}"
    if not (path / "src" / "tablejack").is_dir():
        _git("worktree", "prune")
        _git("worktree", "add", "--detach", str(path), commit)
    return path


def measure(source: Path, script: str, args: Sequence[str]) -> dict[str, Any]:
    """Run ``benchmarks/<script> args`` (from this tree) against the package in ``source``; the
    script prints one JSON object as its last line."""
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    result = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def load() -> str:
    """The machine's load averages, to print beside the figures."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def ratio(old: Sequence[float], new: Sequence[float]) -> tuple[float, float, float]:
    """The median ratio ``old / new`` of interleaved pairs, with its smallest and largest."""
    pairs = [o / n for o, n in zip(old, new, strict=True)]
    return statistics.median(pairs), min(pairs), max(pairs)
