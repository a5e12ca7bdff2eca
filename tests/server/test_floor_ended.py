"""A floor of two ``tablejack serve`` processes on PostgreSQL, with a long lease (30 s): a
process that dies (``SIGKILL``) is seen ended by what the database knows — its sessions end,
its life lock goes — and the other takes its tables at once, before their leases would have
lapsed; a process frozen (``SIGSTOP``) keeps its session and its life lock, and its tables are
taken only once their leases have lapsed (it is fenced by the tokens, as before).

Both assert on the database's clock, not on waiting times: the new lease's ``acquired_us``
against the old lease's ``expires_us``.
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
from tests.server.test_floor_failover import TABLE_IDS, _floor, wait_for
from tests.server.test_floor_start_hang import serve_floor_process
from tests.support.serve import wait_listening
from tests.support.store import Backend

pytestmark = pytest.mark.slow

LONG_LEASE = 30.0
"""A lease long enough that a takeover before it lapses is the life lock's doing."""
SHORT_LEASE = 3.0


async def _leases(store: Store) -> dict[str, tuple[str, int, int, int]]:
    """Each table's lease: holder, token, acquired and expiry (database clock, µs)."""
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            text("SELECT table_id, holder, token, acquired_us, expires_us FROM table_leases")
        )
        return {str(r[0]): (str(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows}


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGCONT)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _floor_of_two(
    tmp_path: Path, db: str, lease: float, how: signal.Signals
) -> tuple[dict[str, tuple[str, int, int, int]], dict[str, tuple[str, int, int, int]]]:
    """The first process takes both tables, the second joins, the first gets ``how``; the
    leases just after the signal and once the second holds both."""
    first = second = None
    try:
        first, first_port, first_log = serve_floor_process(db, tmp_path, "first", lease)
        wait_listening(first, first_port, first_log)

        async def main() -> tuple[
            dict[str, tuple[str, int, int, int]], dict[str, tuple[str, int, int, int]]
        ]:
            nonlocal second
            store = await Store.open(db, migrate=False)
            try:

                async def first_holds(member: str = "host-first:") -> bool:
                    held = await _leases(store)
                    return set(held) == set(TABLE_IDS) and all(
                        holder.startswith(member) for holder, _, _, _ in held.values()
                    )

                await wait_for(first_holds, 30, "the first takes both tables")
                second, second_port, second_log = serve_floor_process(db, tmp_path, "second", lease)
                await asyncio.to_thread(wait_listening, second, second_port, second_log)
                os.kill(first.pid, how)  # type: ignore[union-attr]
                if how == signal.SIGKILL:
                    first.wait()  # type: ignore[union-attr]
                before = await _leases(store)
                await wait_for(
                    lambda: first_holds("host-second:"),
                    2 * lease + 30,
                    "the second takes both tables",
                )
                return before, await _leases(store)
            finally:
                await store.close()

        return asyncio.run(main())
    finally:
        _stop(first)
        _stop(second)


def test_a_process_killed_has_its_tables_taken_before_their_leases_would_lapse(
    tmp_path: Path, postgres: Backend
) -> None:
    db, _ = _floor(tmp_path, postgres)
    before, after = _floor_of_two(tmp_path, db, LONG_LEASE, signal.SIGKILL)
    held = [table for table in TABLE_IDS if before[table][0].startswith("host-first:")]
    assert held  # (the second may have been handed one to even the floor out)
    for table in held:
        _, token, _, expires_us = before[table]
        holder, new_token, acquired_us, _ = after[table]
        assert holder.startswith("host-second:")
        assert new_token == token + 1
        assert acquired_us < expires_us  # taken while the dead process's lease still ran
    assert "its life lock is gone" in (tmp_path / "second.log").read_text()


def test_a_process_frozen_keeps_its_tables_until_their_leases_lapse(
    tmp_path: Path, postgres: Backend
) -> None:
    db, _ = _floor(tmp_path, postgres)
    before, after = _floor_of_two(tmp_path, db, SHORT_LEASE, signal.SIGSTOP)
    held = [table for table in TABLE_IDS if before[table][0].startswith("host-first:")]
    assert held  # (the second may have been handed one to even the floor out)
    for table in held:
        _, token, _, expires_us = before[table]
        holder, new_token, acquired_us, _ = after[table]
        assert holder.startswith("host-second:")
        assert new_token == token + 1  # the frozen one is fenced
        assert acquired_us >= expires_us  # not before its lease lapsed
    assert "its life lock is gone" not in (tmp_path / "second.log").read_text()
