"""An SQLite floor runs in one process: a second ``tablejack serve`` on the same file is
refused with a sentence saying why and what to do instead, and nothing of it starts; once the
first process is gone (however it ended) the file can be served again."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.serve import SERVE, free_port, start_serve, wait_listening

pytestmark = pytest.mark.slow


def start(db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    process = start_serve(["--unsigned", "--db", str(db), "--port", str(port)], log)
    wait_listening(process, port, log)
    return process


def test_a_second_process_on_one_sqlite_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "floor.sqlite"
    first = start(db, free_port(), tmp_path / "first.log")
    try:
        second = subprocess.run(
            [*SERVE, "--unsigned", "--db", str(db), "--port", str(free_port())],
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
        [*SERVE, "--unsigned", "--db", str(tmp_path / "floor.sqlite"), "--tables", "A1,B1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "an SQLite floor runs every table in one process" in done.stderr
