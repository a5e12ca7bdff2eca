"""What the server's tests share to speak to a floor as its people do: register a terminal and
keep its device credential, a hello that proves the terminal, a session signed in at it.

The functions take the :class:`starlette.testclient.TestClient` of a running app and the test
floor's tokens by role (``tokens["operator"]`` registers terminals). The tests and benchmarks
that run ``tablejack serve`` as a process of its own (a crash, a floor of several processes,
TLS) start it with :func:`start_serve` on a :func:`free_port` and wait for it with
:func:`wait_listening`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "SCREENSHOTS",
    "SERVE",
    "bearer",
    "free_port",
    "hello",
    "screenshot",
    "session",
    "start_serve",
    "terminal_key",
    "wait_listening",
]

SERVE = (sys.executable, "-c", "from tablejack.cli import main; main()", "serve")
"""``tablejack serve`` with this interpreter (the package it imports, whatever is on the path)."""

SCREENSHOTS = "TABLEJACK_SCREENSHOTS"
"""The environment variable naming a folder the browser tests save their pictures in
(``docs/screens/make.py`` sets it); unset, they save none."""


def bearer(token: str) -> dict[str, str]:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


def terminal_key(client: Any, terminal: str, table: str, operator_token: str) -> str:
    """The device credential of ``terminal`` at ``table``: registered (bound to the table) by
    the operator the first time a test uses it there; moved (a new credential) after."""
    keys: dict[tuple[str, str], str] = client.__dict__.setdefault("terminal_keys", {})
    if (terminal, table) not in keys:
        answer = client.post(
            "/api/floor/terminals",
            json={"terminal": terminal, "table": table, "credential": True},
            headers=bearer(operator_token),
        )
        assert answer.status_code == 200, answer.text
        for key in [k for k in keys if k[0] == terminal]:
            del keys[key]
        keys[(terminal, table)] = answer.json()["credential"]
    return keys[(terminal, table)]


def hello(
    client: Any, tokens: Mapping[str, str], who: str, terminal: str, table: str | None
) -> dict[str, Any]:
    """The hello of ``who``: a player (``table`` given) proves his terminal registered at
    ``table``; staff name their console."""
    message: dict[str, Any] = {
        "type": "hello",
        "protocol": 2,
        "token": tokens[who],
        "terminal": terminal,
    }
    if table is not None and who not in ("dealer", "super", "supervisor", "cashier", "operator"):
        message["terminal_key"] = terminal_key(client, terminal, table, tokens["operator"])
    return message


def session(
    client: Any, tokens: Mapping[str, str], who: str, terminal: str, table: str
) -> dict[str, str]:
    """The Authorization header of a session of player ``who`` signed in at ``terminal``."""
    answer = client.post(
        "/api/session",
        json={
            "token": tokens[who],
            "terminal": terminal,
            "terminal_key": terminal_key(client, terminal, table, tokens["operator"]),
        },
    )
    assert answer.status_code == 200, answer.text
    token = str(answer.cookies["tj_session"])
    client.cookies.clear()
    return bearer(token)


def screenshot(page: Any, name: str) -> None:
    """Save a picture of a Playwright ``page`` as ``<name>.png`` in the folder
    ``$TABLEJACK_SCREENSHOTS`` names (nothing when it is unset)."""
    folder = os.environ.get(SCREENSHOTS)
    if folder:
        page.wait_for_timeout(600)  # the cards dealt last have landed
        page.screenshot(path=os.path.join(folder, f"{name}.png"))


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
    process: subprocess.Popen[Any], port: int, log: Path | None = None, seconds: float = 30
) -> None:
    """Wait until ``process`` accepts connections on ``port``; AssertionError (with its
    ``log``) if it ends first or does not within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            ended = process.poll() is not None
            if ended or time.monotonic() > deadline:
                said = log.read_text() if log is not None and log.exists() else ""
                what = "ended" if ended else f"did not listen within {seconds:g} s"
                raise AssertionError(f"tablejack serve {what}: {said}") from None
            time.sleep(0.05)
