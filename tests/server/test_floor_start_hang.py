"""A process of a floor frozen (``SIGSTOP``) in the middle of its checkpoint holds the
checkpoint lock for as long as it is stopped: its session waits in the middle of a statement
(PostgreSQL reads the rest of it from the client), which is not "idle in transaction" and is
ended by no timeout. Another process starting meanwhile takes the frozen one's tables once
their leases lapse and then listens: its start does not wait on the lock (the signer's next
turn signs what the start would have), and the floor's checkpoints go on once the frozen
process is continued.

The interleaving is forced, not timed: a session of the test locks the ``checkpoints`` table
before the first process starts, so the checkpoint of its start takes the lock and then waits
on its first read (a statement new to its connection: PostgreSQL parses it, answers, and waits
for the rest of it); the test sees that in ``pg_locks``, stops the process and lets the read
go on. On the code before, the second process took both tables and then never listened.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text

from tablejack.store import Store
from tests.server.test_floor_failover import LEASE, _floor, _held_by, wait_for
from tests.support.serve import free_port, start_serve, wait_listening
from tests.support.store import Backend

pytestmark = pytest.mark.slow

CHECKPOINT_LOCK = 0x74_6A_63_6B
"""The checkpoint's advisory lock key (``tablejack.store.checkpoints``)."""


async def _lock_holder(store: Store) -> tuple[int, str] | None:
    """The session that holds the checkpoint lock: its process id and what it waits for."""
    async with store.engine.connect() as connection:
        row = (
            await connection.execute(
                text(
                    "SELECT l.pid, COALESCE(a.wait_event_type, '') FROM pg_locks l "
                    "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
                    "AND l.classid = :key AND l.objsubid = 2 AND l.granted "
                    "AND l.objid = CAST(hashtext(current_schema()) AS oid)"
                ),
                {"key": CHECKPOINT_LOCK},
            )
        ).first()
    return None if row is None else (int(row[0]), str(row[1]))


async def _checkpoints(store: Store) -> int:
    async with store.engine.connect() as connection:
        return int(await connection.scalar(text("SELECT count(*) FROM checkpoints")) or 0)


def _serve(db: str, folder: Path, name: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    """A process of the test's floor (as :class:`Server` starts it), not waited for."""
    port = free_port()
    log = folder / f"{name}.log"
    process = start_serve(
        [
            "--db", db, "--port", str(port), "--tables", str(folder / "tables.toml"),
            "--lease-seconds", str(LEASE), "--checkpoint-key", str(folder / "keys" / "checkpoint.key"),
            "--checkpoint-log", str(folder / f"{name}-checkpoints.jsonl"),
            "--checkpoint-seconds", "0.5", "--member", f"host-{name}",
        ],
        log,
    )  # fmt: skip
    return process, port, log


def test_a_process_frozen_mid_checkpoint_does_not_keep_another_from_serving(
    tmp_path: Path, postgres: Backend
) -> None:
    db, _keys = _floor(tmp_path, postgres)
    first: subprocess.Popen[bytes] | None = None
    second: subprocess.Popen[bytes] | None = None
    try:

        async def freeze_mid_checkpoint() -> subprocess.Popen[bytes]:
            store = await Store.open(db, migrate=False)
            blocker = await Store.open(db, migrate=False)
            try:
                async with blocker.engine.connect() as hold:
                    await hold.execute(text("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE"))
                    # its start's checkpoint takes the lock, then waits on its first read
                    process, _, _ = _serve(db, tmp_path, "first")

                    async def waits_holding_the_lock() -> bool:
                        holder = await _lock_holder(store)
                        return holder is not None and holder[1] == "Lock"

                    await wait_for(waits_holding_the_lock, 60, "the first mid-checkpoint")
                    os.kill(process.pid, signal.SIGSTOP)
                    await hold.rollback()  # its read goes on, for a process that is stopped

                async def read_on() -> bool:
                    holder = await _lock_holder(store)
                    return holder is not None and holder[1] != "Lock"

                await wait_for(read_on, 10, "the read past the lock")
                # held in the middle of a statement (not idle in a transaction): no timeout
                holder = await _lock_holder(store)
                assert holder is not None
                assert holder[1] == "Client"
            finally:
                await store.close()
                await blocker.close()
            return process

        first = asyncio.run(freeze_mid_checkpoint())
        second, port, log = _serve(db, tmp_path, "second")
        wait_listening(second, port, log)  # it took the tables, then waited on the lock before
        assert "no checkpoint at start" in log.read_text()

        async def checkpoints_go_on(frozen: subprocess.Popen[bytes]) -> None:
            store = await Store.open(db, migrate=False)
            try:
                await wait_for(lambda: _held_by(store, {port}), 20, "the second has both")
                before = await _checkpoints(store)
                os.kill(frozen.pid, signal.SIGCONT)

                async def another() -> bool:
                    return await _checkpoints(store) > before

                await wait_for(another, 30, "a checkpoint once the first is continued")
            finally:
                await store.close()

        asyncio.run(checkpoints_go_on(first))
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
