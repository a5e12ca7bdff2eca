"""``tablejack serve`` as a process of its own, for the tests and benchmarks that need one (a
crash, a floor of several processes, TLS, the SAS link over TCP): start it with
:func:`start_serve` on a :func:`free_port` and wait for it with :func:`wait_listening`.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["SERVE", "free_port", "start_serve", "wait_listening"]

SERVE = (sys.executable, "-c", "from tablejack.cli import main; main()", "serve")
"""``tablejack serve`` with this interpreter (the package it imports, whatever is on the path)."""


def free_port() -> int:
    """A TCP port of 127.0.0.1 that no one listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_serve(arguments: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    """``tablejack serve`` with ``arguments`` as a process of its own, its standard error
    appended to ``log`` (its output discarded)."""
    with log.open("ab") as errors:
        return subprocess.Popen([*SERVE, *arguments], stdout=subprocess.DEVNULL, stderr=errors)


def wait_listening(
    process: subprocess.Popen[Any], port: int, log: Path | None = None, seconds: float = 60
) -> None:
    """Wait until ``process`` accepts connections on ``port``; AssertionError (with its
    ``log``) if it ends first or does not within ``seconds`` — then killed and reaped first, so
    that it never outlives the test (a caller whose constructor raised holds no handle to stop
    it: one such server ran on for 14 minutes into a dropped schema, and its ``Popen`` failed
    the worker's next test with a ResourceWarning)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            ended = process.poll() is not None
            if ended or time.monotonic() > deadline:
                if not ended:
                    process.kill()
                process.wait()
                said = log.read_text() if log is not None and log.exists() else ""
                what = "ended" if ended else f"did not listen within {seconds:g} s"
                raise AssertionError(f"tablejack serve {what}: {said}") from None
            time.sleep(0.05)
