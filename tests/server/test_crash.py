"""The crash test: the server process is killed (SIGKILL) at random points of many rounds and
restarted; afterwards every balance and every wager is accounted for, and every signed
checkpoint verifies (after the last, clean stop: every event is signed)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

from tablejack.server.socket.botclient import run_bot
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.keys import generate_key_pair, load_public_key
from tablejack.store.policy import Actor, Role
from tablejack.store.verify import verify
from tablejack.store.vouchers import register_terminal
from tests.support.ledger import account_for_rounds
from tests.support.serve import free_port, start_serve, wait_listening
from tests.support.store import Backend

SETUP = Actor(Role.OPERATOR, "set-up")
CAGE = Actor(Role.CASHIER, "cage")

PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay")
CREDIT = 1_000_000
TABLES = """
[[tables]]
id = "A1"
game = "hybrid"
recovery = "resume"
require_procedures = false
wagering_seconds = 0.15
between_rounds_seconds = 0.05
seed = 11
[tables.rules_override]
countdown_seconds = 1

[[tables]]
id = "C1"
game = "classic"
recovery = "void"
require_procedures = false
wagering_seconds = 0.15
between_rounds_seconds = 0.05
countdown_seconds = 0.3
seed = 12
[tables.rules_override]
ez_bust = true
"""


def start_server(db: str, tables: Path, port: int) -> subprocess.Popen[bytes]:
    log = tables.parent / "server.log"
    keys = tables.parent / "keys"
    process = start_serve(
        [
            "--db", db, "--port", str(port), "--tables", str(tables),
            "--checkpoint-key", str(keys / "checkpoint.key"), "--checkpoint-seconds", "0.2",
            "--drain-seconds", "3",  # the last stop: rounds left open by the bots wait no longer
        ],
        log,
    )  # fmt: skip
    wait_listening(process, port, log)
    return process


async def play(port: int, seconds: float, seed: int) -> None:
    stop = asyncio.Event()
    url = f"ws://127.0.0.1:{port}/ws"
    bots = [
        asyncio.create_task(
            run_bot(
                url,
                f"tok-{name}",
                f"EWT-{index}",
                "A1" if index % 2 else "C1",
                index % 3 + 1,
                terminal_key=f"key-EWT-{index}",
                stop=stop,
                seed=seed * 10 + index,
                buzzer_beater=True,
            )
        )
        for index, name in enumerate(PLAYERS)
    ]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)


async def prepare(db: str, keys: Path) -> None:
    generate_key_pair(keys, "checkpoint.key", "checkpoint.pub")
    store = await Store.open(db)
    try:
        await store.save_table("A1", "hybrid", {}, {})
        await store.save_table("C1", "classic", {}, {})
        for index, name in enumerate(PLAYERS):
            await store.ensure_account(name, "player", name)
            await store.fund(name, CREDIT, actor=CAGE)
            await creds.issue(store, "player", name, by=SETUP, token=f"tok-{name}")
            await register_terminal(
                store,
                f"EWT-{index}",
                "A1" if index % 2 else "C1",
                by=SETUP,
                key=f"key-EWT-{index}",
            )
    finally:
        await store.close()


async def account_for_everything(db: str, keys: Path, *, strict: bool = False) -> dict[str, int]:
    """Check every invariant (and the signed checkpoints: after a clean stop, ``strict``,
    every event is signed); return counts of rounds by status."""
    store = await Store.open(db, migrate=False)
    try:
        assert await store.ledger_check() == []
        report = await verify(
            store,
            public_keys=[load_public_key(keys / "checkpoint.pub")],
            checkpoint_file=keys / "checkpoints.jsonl",
            strict=strict,
        )
        assert report.problems == []
        assert report.checkpoints > 0
        return await account_for_rounds(store, PLAYERS, CREDIT, ("A1", "C1"))
    finally:
        await store.close()


def test_sigkill_at_random_points_loses_no_wager_and_no_cent(
    tmp_path: Path, backend: Backend
) -> None:
    """On SQLite seven kills, on PostgreSQL four (the same invariants, a shorter run)."""
    db = backend.server_url
    cycles = 7 if backend.name == "sqlite" else 4
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)
    keys = tmp_path / "keys"
    asyncio.run(prepare(db, keys))
    chooser = random.Random(2026)
    kills = 0
    for cycle in range(cycles):
        port = free_port()
        server = start_server(db, tables, port)
        try:
            asyncio.run(play(port, chooser.uniform(0.3, 1.6), cycle))
        finally:
            os.kill(server.pid, signal.SIGKILL)
            server.wait()
            kills += 1
        asyncio.run(account_for_everything(db, keys))
    # one more start: the open rounds are resumed (A1) or voided (C1) and everything balances
    port = free_port()
    server = start_server(db, tables, port)
    try:
        asyncio.run(play(port, 1.0, 99))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    statuses: dict[str, Any] = asyncio.run(account_for_everything(db, keys, strict=True))
    assert kills == cycles
    # rounds were played to the end between the kills (how many depends on the machine's speed)
    assert statuses.get("complete", 0) >= cycles
    assert statuses.get("voided", 0) >= 1  # C1's policy voided a round a kill interrupted
