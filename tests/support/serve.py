"""``tablejack serve`` as a process of its own, for the tests and benchmarks that need one (a
crash, a floor of several processes, TLS, the SAS link over TCP): start it with
:func:`start_serve` on a :func:`free_port` and wait for it with :func:`wait_listening`.

A server that does not listen in time says why: it dumps its threads' Python stacks on
``SIGUSR1`` (:mod:`faulthandler`, registered before ``serve`` starts), and on PostgreSQL the
database's locks and the sessions holding or waiting for them are read (:func:`database_locks`);
both go into the failure's message.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["SERVE", "database_locks", "free_port", "start_serve", "wait_listening"]

SERVE = (
    sys.executable,
    "-c",
    "import faulthandler, signal; faulthandler.register(signal.SIGUSR1, all_threads=True); "
    "from tablejack.cli import main; main()",
    "serve",
)
"""``tablejack serve`` with this interpreter (the package it imports, whatever is on the path),
its Python stacks written to its standard error on ``SIGUSR1``."""
STACKS_SECONDS = 2.0
"""How long a server that did not listen is given to write its stacks before it is killed."""


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


def _database_of(process: subprocess.Popen[Any]) -> str:
    """The ``--db`` a serve process was started with ("" if none)."""
    arguments = [str(a) for a in process.args] if isinstance(process.args, list) else []
    for index, argument in enumerate(arguments[:-1]):
        if argument == "--db":
            return arguments[index + 1]
    return ""


LOCKS_SQL = """
SELECT l.pid, l.locktype, l.mode, l.granted, l.classid, l.objid, l.relation::regclass::text,
       a.state, a.wait_event_type, a.wait_event,
       EXTRACT(EPOCH FROM clock_timestamp() - a.xact_start)::int AS xact_s,
       pg_blocking_pids(l.pid) AS blocked_by, a.application_name, left(a.query, 160)
FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.pid <> pg_backend_pid() AND (a.datname = current_database() OR a.datname IS NULL)
  AND l.locktype NOT IN ('virtualxid') AND NOT (l.locktype = 'relation' AND l.granted
  AND l.mode = 'AccessShareLock')
ORDER BY l.granted, l.pid
"""


def database_locks(db: str) -> str:
    """The locks of the PostgreSQL database ``db`` (a serve ``--db`` URL) with the session of
    each (``pg_locks`` joined with ``pg_stat_activity``: its state, what it waits for, who
    blocks it, its query), one line each; "" for SQLite. Read on a thread of its own (a caller
    may be inside an event loop), never longer than 10 s."""
    if not db.startswith("postgres"):
        return ""
    url = db.split("?schema=", 1)[0].replace("postgresql+asyncpg://", "postgresql://")
    lines: list[str] = []

    async def read() -> None:
        import asyncpg  # type: ignore[import-untyped]

        connection = await asyncpg.connect(url, timeout=5)
        try:
            for row in await connection.fetch(LOCKS_SQL, timeout=5):
                lines.append(" | ".join("" if value is None else str(value) for value in row))
        finally:
            await connection.close()

    def run() -> None:
        try:
            asyncio.run(read())
        except Exception as error:  # the message says so; the failure stays the server's
            lines.append(f"(the locks could not be read: {error!r})")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    header = (
        "pid | locktype | mode | granted | classid | objid | relation | state | wait type | "
        "wait | xact s | blocked by | application | query"
    )
    return "\n".join([header, *lines])


def wait_listening(
    process: subprocess.Popen[Any], port: int, log: Path | None = None, seconds: float = 60
) -> None:
    """Wait until ``process`` accepts connections on ``port``; AssertionError (with its
    ``log``) if it ends first or does not within ``seconds`` — then, when it did not listen,
    its Python stacks (``SIGUSR1``, in its log) and the database's locks are in the message;
    it is killed and reaped first, so that it never outlives the test (a caller whose
    constructor raised holds no handle to stop it: one such server ran on for 14 minutes into
    a dropped schema, and its ``Popen`` failed the worker's next test with a ResourceWarning)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            ended = process.poll() is not None
            if ended or time.monotonic() > deadline:
                locks = ""
                if not ended:
                    locks = database_locks(_database_of(process))
                    process.send_signal(signal.SIGUSR1)  # its stacks, into its log
                    time.sleep(STACKS_SECONDS)
                    process.kill()
                process.wait()
                said = log.read_text() if log is not None and log.exists() else ""
                what = "ended" if ended else f"did not listen within {seconds:g} s"
                if locks:
                    said += f"\nthe database's locks when it gave up:\n{locks}"
                raise AssertionError(f"tablejack serve {what}: {said}") from None
            time.sleep(0.05)


class FloorProcess:
    """One ``tablejack serve`` of a floor of processes on ``db`` (PostgreSQL): leases of 3 s,
    no signed checkpoints, member ``host-<name>``, its log ``<folder>/<name>.log``, and
    ``arguments`` (``--tables A1``, ``--sas …``); listening when made."""

    def __init__(self, db: str, folder: Path, name: str, *arguments: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = folder / f"{name}.log"
        self.process = start_serve(
            [
                "--db", db, "--port", str(self.port), "--lease-seconds", "3", "--unsigned",
                "--member", f"host-{name}", *arguments,
            ],
            self.log,
        )  # fmt: skip
        wait_listening(self.process, self.port, self.log)

    def stop(self) -> None:
        """SIGTERM (a drain), then SIGKILL after 20 s; reaped either way."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
