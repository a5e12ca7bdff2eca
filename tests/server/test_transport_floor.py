"""``benchmarks/transport_floor.py``: the bare WebSocket server on ``tablejack serve``'s
protocol plays the modelled rounds, every figure from the run itself (rounds and frames from
the server, CPU from ``/proc``), and its frames per round are the model's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FLOOR = Path(__file__).resolve().parents[2] / "benchmarks" / "transport_floor.py"


def test_the_transport_floor_plays_the_rounds_it_models() -> None:
    done = subprocess.run(
        [
            sys.executable, str(FLOOR), "--tables", "3", "--terminals", "4", "--updates", "3",
            "--asks", "2", "--update-ms", "20", "--seconds", "4", "--warmup", "1",
            "--client-processes", "1", "--json",
        ],
        check=False, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["rounds"] > 10
    # each round: 3 updates to 4 terminals, and 3 x 2 acknowledgements (the window cuts
    # rounds at both ends: within a few percent)
    assert report["frames_per_round"] == pytest.approx(3 * 4 + 3 * 2, rel=0.1)
    assert report["server_cpu_ms_per_round"] > 0
