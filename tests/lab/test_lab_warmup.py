"""The warm-up (``tablejack warm-up``, run by ``make install``): it runs every lab command, it
counts the kernels numba compiles, and after it a new process compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from numba import njit

from tablejack.lab.games import LAB_GAMES
from tablejack.lab.warmup import WarmUpStep, warm_up, warm_up_steps
from tablejack.progress import COMPILING

LAB_COMMANDS = ("edge", "dealer-odds", "strategy", "simulate", "parsheet", "paytable", "exposure")


def test_the_warm_up_runs_every_lab_command_and_every_wager_of_every_game() -> None:
    labels = [step.label for step in warm_up_steps()]
    assert {label.split()[0] for label in labels} == set(LAB_COMMANDS)
    for game, spec in LAB_GAMES.items():
        for wager in spec.wagers:
            assert f"edge {game} {wager}" in labels
        for command in ("simulate", "exposure", "parsheet"):
            assert f"{command} {game}" in labels


def test_the_warm_up_counts_what_numba_compiles_in_each_step() -> None:
    @njit  # not cached: compiled once in this process, then found compiled
    def twice(x: int) -> int:
        return 2 * x

    calls: list[int] = []
    step = WarmUpStep("twice", lambda _: calls.append(twice(21)))
    heard: list[str] = []
    results = warm_up([step, step], report=lambda result: heard.append(result.label))
    assert calls == [42, 42]
    assert [r.compiled for r in results] == [1, 0]
    assert heard == ["twice", "twice"]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("TTY_INTERACTIVE", None)
    return subprocess.run(args, capture_output=True, text=True, env=env, check=True)


RECHECK = """
import json
from tablejack.lab.warmup import warm_up
print(json.dumps({r.label: r.compiled for r in warm_up()}))
"""


@pytest.mark.slow
def test_after_the_warm_up_a_new_process_compiles_no_kernel() -> None:
    """``tablejack warm-up`` as ``make install`` runs it, into numba's cache of this install
    (it compiles only what an edit made stale: on a fresh install, nothing); then a new process
    runs every command of the warm-up, and ``tablejack edge`` from the command line, loading
    every kernel from the cache and compiling none."""
    bin_dir = Path(sys.executable).parent
    first = _run([str(bin_dir / "tablejack"), "warm-up"])
    assert first.stderr.strip().splitlines()[-1].endswith("kernel(s) compiled"), first.stderr
    again = json.loads(_run([sys.executable, "-c", RECHECK]).stdout)
    assert set(again) == {step.label for step in warm_up_steps()}
    assert set(again.values()) == {0}, {k: v for k, v in again.items() if v}
    edge = _run([str(bin_dir / "tablejack"), "edge", "--game", "hybrid"])
    assert "house edge" in edge.stdout
    assert COMPILING not in edge.stderr
