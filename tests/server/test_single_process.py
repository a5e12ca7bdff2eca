"""An SQLite floor runs in one process: a second ``tablejack serve`` on the same file is
refused with a sentence saying why and what to do instead, and nothing of it starts; once the
first process is gone (however it ended) the file can be served again."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SERVE = [sys.executable, "-c", "from tablejack.cli import main; main()", "serve", "--unsigned"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as errors:
        process = subprocess.Popen(
            [*SERVE, "--db", str(db), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    deadline = time.time() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                raise AssertionError(log.read_text()) from None
            time.sleep(0.05)


def test_a_second_process_on_one_sqlite_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "floor.sqlite"
    first = start(db, free_port(), tmp_path / "first.log")
    try:
        second = subprocess.run(
            [*SERVE, "--db", str(db), "--port", str(free_port())],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert second.returncode == 2
        assert f"{db} is served by another tablejack serve (pid {first.pid} " in second.stderr
        assert "an SQLite floor runs in one process" in second.stderr
        assert "The server did not start." in second.stderr
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    again = start(db, free_port(), tmp_path / "again.log")  # the kill released the file
    again.send_signal(signal.SIGTERM)
    code = again.wait(timeout=20)
    assert code in (0, -signal.SIGTERM), code


def test_a_list_of_table_ids_is_refused_on_sqlite(tmp_path: Path) -> None:
    done = subprocess.run(
        [*SERVE, "--db", str(tmp_path / "floor.sqlite"), "--tables", "A1,B1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "an SQLite floor runs every table in one process" in done.stderr
