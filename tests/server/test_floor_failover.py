"""A floor of two ``tablejack serve`` processes on one PostgreSQL database: tables leased,
terminals forwarded to their table's process, failover from the log.

* **SIGKILL**: the process running the tables dies mid-round; within the lease time (and the
  other's next turn) the other takes its tables over, recovers each open round from the log
  (A1 resumes it, A2 voids it and refunds every wager), and the bots — which reconnect by
  themselves, trying the floor's processes in turn as a load balancer would — play on there.
* **SIGSTOP**: the process is stopped past its lease; the other takes its tables over; then it
  is continued: it writes nothing more (the fencing token refuses every write it tries), stops
  serving the tables, and no wager is settled twice.

Afterwards every cent is accounted for: each round replayed from its log gives every player's
balance, every escrow holds exactly the open wagers, the balances sum to zero and
``verify-log`` (with the signed checkpoints) finds nothing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tablejack.server.socket.botclient import Timings, run_bot
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.keys import generate_key_pair, load_public_key
from tablejack.store.policy import Actor, Role
from tablejack.store.verify import verify
from tablejack.store.vouchers import register_terminal
from tests.support.ledger import account_for_rounds
from tests.support.serve import free_port, start_serve, wait_listening
from tests.support.store import Backend

pytestmark = pytest.mark.slow

SETUP = Actor(Role.OPERATOR, "set-up")
CAGE = Actor(Role.CASHIER, "cage")
LEASE = 3.0
"""The lease time of the test's processes (seconds)."""
PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay")
CREDIT = 1_000_000
TABLES = """
[[tables]]
id = "A1"
game = "hybrid"
recovery = "resume"
require_procedures = false
wagering_seconds = 0.3
between_rounds_seconds = 0.2
seed = 11
[tables.rules_override]
countdown_seconds = 1

[[tables]]
id = "A2"
game = "hybrid"
recovery = "void"
require_procedures = false
wagering_seconds = 0.3
between_rounds_seconds = 0.2
seed = 12
[tables.rules_override]
countdown_seconds = 1
"""
TABLE_IDS = ("A1", "A2")


class Server:
    """One ``tablejack serve`` process of the floor, its port and its log."""

    def __init__(self, db: str, folder: Path, name: str, *extra: str) -> None:
        """``name``: also its name on the floor, as if each process ran on a host of its own
        (a process does not probe the process ids of another host's)."""
        self.port = free_port()
        self.log = folder / f"{name}.log"
        keys = folder / "keys"
        self.process = start_serve(
            [
                "--db", db, "--port", str(self.port), "--tables", str(folder / "tables.toml"),
                "--lease-seconds", str(LEASE),
                "--checkpoint-key", str(keys / "checkpoint.key"),
                "--checkpoint-log", str(folder / f"{name}-checkpoints.jsonl"),
                "--checkpoint-seconds", "0.5", "--member", f"host-{name}", *extra,
            ],
            self.log,
        )  # fmt: skip
        wait_listening(self.process, self.port, self.log)

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def signal(self, number: int) -> None:
        os.kill(self.process.pid, number)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


async def prepare(db: str, keys: Path) -> None:
    generate_key_pair(keys, "checkpoint.key", "checkpoint.pub")
    store = await Store.open(db)
    try:
        for table in TABLE_IDS:
            await store.save_table(table, "hybrid", {}, {})
        for index, name in enumerate(PLAYERS):
            await store.ensure_account(name, "player", name)
            await store.fund(name, CREDIT, actor=CAGE)
            await creds.issue(store, "player", name, by=SETUP, token=f"tok-{name}")
            await register_terminal(
                store, f"EWT-{index}", TABLE_IDS[index % 2], by=SETUP, key=f"key-EWT-{index}"
            )
    finally:
        await store.close()


def bots(urls: Sequence[Sequence[str]], stop: asyncio.Event, timings: Timings) -> list[Any]:
    """One bot per player, each trying the floor's processes in its own order."""
    return [
        asyncio.create_task(
            run_bot(
                urls[index % len(urls)],
                f"tok-{name}",
                f"EWT-{index}",
                TABLE_IDS[index % 2],
                index % 3 + 1,
                terminal_key=f"key-EWT-{index}",
                stop=stop,
                timings=timings,
                seed=index,
                reconnect=True,
            )
        )
        for index, name in enumerate(PLAYERS)
    ]


async def leases(db: Store) -> dict[str, tuple[str, str, int]]:
    """Each table's lease: holder's url, holder and token."""
    async with db.engine.connect() as connection:
        rows = await connection.execute(
            text("SELECT table_id, url, holder, token FROM table_leases")
        )
        return {str(r[0]): (str(r[1]), str(r[2]), int(r[3])) for r in rows}


async def wait_for(check: Any, seconds: float, what: str) -> float:
    """Poll ``check()`` until it is true; the seconds it took."""
    start = time.monotonic()
    while not await check():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"not within {seconds} s: {what}")
        await asyncio.sleep(0.05)
    return time.monotonic() - start


async def completed_after(db: Store, table: str, since_us: int) -> int:
    return sum(
        1
        for row in await db.rounds(table_id=table, limit=1000)
        if row["status"] == "complete" and row["opened_us"] >= since_us
    )


async def account_for_everything(db_url: str, keys: Path, files: Sequence[Path]) -> dict[str, int]:
    """Every invariant and every signed checkpoint; counts of rounds by status. Each round is
    replayed from its log: every wager settled exactly once (or refunded by a void, or still
    escrowed in an open round), and the players' balances are what the logs say."""
    store = await Store.open(db_url, migrate=False)
    try:
        assert await store.ledger_check() == []
        report = await verify(
            store,
            public_keys=[load_public_key(keys / "checkpoint.pub")],
            checkpoint_files=list(files),
        )
        assert report.problems == [], report.problems
        return await account_for_rounds(store, PLAYERS, CREDIT, TABLE_IDS)
    finally:
        await store.close()


def _floor(tmp_path: Path, backend: Backend) -> tuple[str, Path]:
    (tmp_path / "tables.toml").write_text(TABLES)
    keys = tmp_path / "keys"
    asyncio.run(prepare(backend.server_url, keys))
    return backend.server_url, keys


def test_sigkill_the_tables_process_the_other_takes_them_over_and_plays_on(
    tmp_path: Path, postgres: Backend
) -> None:
    db, keys = _floor(tmp_path, postgres)
    first = Server(db, tmp_path, "first")
    second: Server | None = None
    try:

        async def main() -> dict[str, Any]:
            store = await Store.open(db, migrate=False)
            try:
                await wait_for(
                    lambda: _held_by(store, {first.port}), 10, "the first process takes both"
                )
                nonlocal second
                second = Server(db, tmp_path, "second")
                stop = asyncio.Event()
                timings = Timings()
                players = bots([[second.ws, first.ws], [first.ws, second.ws]], stop, timings)
                await wait_for(lambda: _playing(store), 15, "rounds with wagers")
                await asyncio.sleep(1.0)
                victim = await _holder_of(store, "A1")
                dead, alive = (first, second) if victim == first.port else (second, first)
                held = {
                    t
                    for t, (url, _, _) in (await leases(store)).items()
                    if url.endswith(f":{dead.port}")
                }
                decisions = timings.decisions
                dead.signal(signal.SIGKILL)
                dead.process.wait()
                killed_us = int(time.time() * 1e6)
                took = await wait_for(
                    lambda: _held_by(store, {alive.port}),
                    LEASE + LEASE / 3 + 3.0,
                    "the survivor takes every table",
                )
                await wait_for(
                    lambda: _all_completed_after(store, held, killed_us),
                    20,
                    "a round completed at each taken table after the kill",
                )
                stop.set()
                await asyncio.gather(*players, return_exceptions=True)
                return {
                    "took": took,
                    "held": held,
                    "decisions_after": timings.decisions - decisions,
                    "alive": alive,
                }
            finally:
                await store.close()

        outcome = asyncio.run(main())
        print(
            f"tables {sorted(outcome['held'])} taken over {outcome['took']:.2f} s after the kill "
            f"(lease {LEASE:g} s); {outcome['decisions_after']} decisions after it"
        )
        assert outcome["held"]  # the victim ran tables
        assert outcome["took"] <= LEASE + LEASE / 3 + 3.0
        assert outcome["decisions_after"] > 0  # the bots played on
    finally:
        for server in (first, second):
            if server is not None:
                server.stop()
    statuses = asyncio.run(
        account_for_everything(
            db, keys, [tmp_path / "first-checkpoints.jsonl", tmp_path / "second-checkpoints.jsonl"]
        )
    )
    assert statuses.get("complete", 0) >= 4


def test_sigstop_past_the_lease_the_stale_process_writes_nothing_more(
    tmp_path: Path, postgres: Backend
) -> None:
    db, keys = _floor(tmp_path, postgres)
    first = Server(db, tmp_path, "first")
    second: Server | None = None
    try:

        async def main() -> dict[str, Any]:
            store = await Store.open(db, migrate=False)
            try:
                await wait_for(
                    lambda: _held_by(store, {first.port}), 10, "the first process takes both"
                )
                stop = asyncio.Event()
                timings = Timings()
                players = bots([[first.ws]], stop, timings)
                await wait_for(lambda: _playing(store), 15, "rounds with wagers")
                await asyncio.sleep(0.5)
                before = await leases(store)
                first.signal(signal.SIGSTOP)  # mid-round, its clocks running
                stopped_us = int(time.time() * 1e6)
                nonlocal second
                second = Server(db, tmp_path, "second")
                await wait_for(
                    lambda: _held_by(store, {second.port}),  # type: ignore[union-attr]
                    2 * LEASE + 5.0,
                    "the second process takes both over",
                )
                taken = await leases(store)
                assert all(taken[t][2] == before[t][2] + 1 for t in TABLE_IDS)  # tokens moved
                await asyncio.sleep(1.0)  # the second plays on (the stopped one's terminals
                first.signal(signal.SIGCONT)  #  reach it once the first closes their sockets)
                await wait_for(
                    lambda: _log_says(first.log, "lease lost", len(TABLE_IDS)),
                    10,
                    "the continued process drops both tables",
                )
                # the bots, bound to the first process, are forwarded by it to the second
                await wait_for(
                    lambda: _all_completed_after(store, set(TABLE_IDS), stopped_us),
                    30,
                    "rounds completed at the second after the takeover",
                )
                stop.set()
                await asyncio.gather(*players, return_exceptions=True)
                return {"before": before, "taken": taken, "after": await leases(store)}
            finally:
                await store.close()

        outcome = asyncio.run(main())
        for table in TABLE_IDS:  # back on the floor, the first may run a table again: only
            url, _, token = outcome["after"][table]  # under a lease of its own, taken anew
            if url.endswith(f":{first.port}"):
                assert token > outcome["taken"][table][2]
    finally:
        for server in (first, second):
            if server is not None:
                if server.process.poll() is None:
                    server.signal(signal.SIGCONT)
                server.stop()
    log = first.log.read_text()
    refused = log.count("a write refused by the store") + log.count("FencedError")
    print(f"writes of the stale process refused by the fencing token: {refused}")
    assert refused >= 1  # its clocks ran out while it was stopped: it tried, and was refused
    assert log.count("lease lost") >= len(TABLE_IDS)
    statuses = asyncio.run(
        account_for_everything(
            db, keys, [tmp_path / "first-checkpoints.jsonl", tmp_path / "second-checkpoints.jsonl"]
        )
    )
    assert statuses.get("complete", 0) >= 2


async def _held_by(store: Store, ports: set[int]) -> bool:
    held = await leases(store)
    return (
        set(held) == set(TABLE_IDS)
        and all(
            any(url.endswith(f":{port}") for port in ports) and holder
            for url, holder, _ in held.values()
        )
        and await _all_live(store)
    )


async def _all_live(store: Store) -> bool:
    async with store.engine.connect() as connection:
        expired = await connection.scalar(
            text(
                "SELECT count(*) FROM table_leases WHERE holder = '' OR expires_us < "
                "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
            )
        )
    return not expired


async def _holder_of(store: Store, table: str) -> int:
    url = (await leases(store))[table][0]
    return int(url.rsplit(":", 1)[1])


async def _playing(store: Store) -> bool:
    for table in TABLE_IDS:
        rows = await store.rounds(table_id=table, limit=50)
        if not any(row["status"] == "complete" for row in rows):
            return False
    return True


async def _all_completed_after(store: Store, tables: set[str], since_us: int) -> bool:
    for table in tables:
        if await completed_after(store, table, since_us) < 1:
            return False
    return True


async def _log_says(path: Path, words: str, times: int) -> bool:
    return path.read_text().count(words) >= times
