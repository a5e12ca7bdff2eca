"""The drain on SIGTERM, on a floor of two ``tablejack serve`` processes on PostgreSQL: the
process told to stop answers ``/readyz`` with 503, hands its tables over between rounds to
the other (no round voided, none resumed mid-way), tells its terminals to reconnect (close
1012) and exits cleanly; the bots play on at the other process, and every cent is accounted
for."""

from __future__ import annotations

import asyncio
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tablejack.server.socket.botclient import Timings
from tablejack.store import Store
from tests.support.store import Backend

from .test_floor_failover import (
    TABLES,
    Server,
    account_for_everything,
    bots,
    completed_after,
    leases,
    prepare,
    wait_for,
)

pytestmark = pytest.mark.slow

DRAIN = 10.0


def status_of(port: int, path: str) -> int | None:
    """The HTTP status of ``GET path`` (None: the process does not answer)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return None


def test_sigterm_drains_the_tables_to_the_other_process_between_rounds(
    tmp_path: Path, postgres: Backend
) -> None:
    (tmp_path / "tables.toml").write_text(TABLES)
    keys = tmp_path / "keys"
    db = postgres.server_url
    asyncio.run(prepare(db, keys))
    extra = ("--drain-seconds", str(DRAIN))
    first = Server(db, tmp_path, "first", *extra)
    second = Server(db, tmp_path, "second", *extra)
    try:

        async def main() -> dict[str, Any]:
            store = await Store.open(db, migrate=False)
            try:
                await wait_for(lambda: _two_holders(store), 20, "each process holds a table")
                assert status_of(first.port, "/readyz") == 200
                assert status_of(second.port, "/readyz") == 200
                stop = asyncio.Event()
                timings = Timings()
                players = bots([[first.ws, second.ws], [second.ws, first.ws]], stop, timings)
                await wait_for(lambda: _playing(store), 20, "rounds with wagers at both")
                held = {
                    table
                    for table, (url, _, _) in (await leases(store)).items()
                    if url.endswith(f":{first.port}")
                }
                decisions = timings.decisions
                first.signal(signal.SIGTERM)
                termed_us = int(time.time() * 1e6)
                seen = set()
                while first.process.poll() is None:
                    seen.add(await asyncio.to_thread(status_of, first.port, "/readyz"))
                    await asyncio.sleep(0.02)
                code = first.process.wait(timeout=DRAIN + 20)
                await wait_for(
                    lambda: _held_by(store, second.port), 10, "the other process takes every table"
                )
                await wait_for(
                    lambda: _completed_after(store, held, termed_us),
                    20,
                    "a round completed at each handed-over table",
                )
                stop.set()
                await asyncio.gather(*players, return_exceptions=True)
                return {
                    "code": code,
                    "seen": seen,
                    "held": held,
                    "timings": timings,
                    "decisions_after": timings.decisions - decisions,
                }
            finally:
                await store.close()

        outcome = asyncio.run(main())
    finally:
        for server in (first, second):
            server.stop()
    log = (tmp_path / "first.log").read_text()
    timings: Timings = outcome["timings"]
    print(
        f"drained {sorted(outcome['held'])}; /readyz answered {outcome['seen']}; close codes "
        f"{dict(timings.closes)}; {outcome['decisions_after']} decisions after the SIGTERM"
    )
    assert outcome["code"] == 0, log  # a clean exit
    assert outcome["held"]  # it ran a table
    assert 503 in outcome["seen"]  # the load balancer was told to stop sending terminals
    for table in outcome["held"]:
        assert f"draining: table {table} handed over between rounds" in log, log
    assert timings.closes[1012] >= 1  # its terminals told to reconnect
    assert outcome["decisions_after"] > 0  # and they played on at the other
    statuses = asyncio.run(
        account_for_everything(
            db, keys, [tmp_path / "first-checkpoints.jsonl", tmp_path / "second-checkpoints.jsonl"]
        )
    )
    assert statuses.get("voided", 0) == 0  # handed over between rounds: nothing voided
    assert statuses.get("complete", 0) >= 2


async def _two_holders(store: Store) -> bool:
    held = await leases(store)
    return len(held) == 2 and len({url for url, holder, _ in held.values() if holder}) == 2


async def _held_by(store: Store, port: int) -> bool:
    held = await leases(store)
    return len(held) == 2 and all(
        url.endswith(f":{port}") and holder for url, holder, _ in held.values()
    )


async def _playing(store: Store) -> bool:
    for table in ("A1", "A2"):
        rows = await store.rounds(table_id=table, limit=50)
        if not any(row["status"] == "complete" for row in rows):
            return False
    return True


async def _completed_after(store: Store, tables: set[str], since_us: int) -> bool:
    for table in tables:
        if await completed_after(store, table, since_us) < 1:
            return False
    return True
