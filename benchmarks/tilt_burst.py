"""PA 605a's ``connection_lost`` tilts when every terminal of a floor drops at once (a switch
fails): how long until each lock is written, how many failed, and how much of the store's pool
the burst held.

One floor (the server's own composition: its duties, its guard, its consoles' mirror) in this
process on a fresh PostgreSQL schema (or SQLite file), ``--tables`` version A tables each with
a round dealt to three players whose wagers are unsettled; then ``--sockets`` player sockets of
those tables close in one turn of the event loop. Two ways, the same burst, in one run:

* ``queued`` — the floor's :class:`~tablejack.server.duties.tilts.TerminalTilts`: one task
  writes the locks one after another and reloads the guard and consoles once for each batch;
* ``a task each`` — the way the floor wrote them before: a task per closed socket, each
  writing its lock and then reloading the guard and consoles.

    .venv/bin/python benchmarks/tilt_burst.py --db postgresql://postgres@127.0.0.1:5432/test \
        --tables 100 --sockets 3000 --json

The pool is the server's default (10 connections, 20 more on demand, a 30 s wait for one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import event

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.compose import compose
from tablejack.server.duties.tilts import at_stake
from tablejack.server.table import TableConfig
from tablejack.store import Store, protections
from tablejack.store.settings import set_floor_setting

POSITIONS = 3


async def fresh_url(db: str) -> str:
    """``db`` itself (a SQLite path: a file in a new folder), or a new schema of it."""
    if not db.startswith("postgres"):
        return str(Path(tempfile.mkdtemp(prefix="tablejack-tilts-")) / "tilts.db")
    import asyncpg  # type: ignore[import-untyped]

    schema = f"tilts_{secrets.token_hex(4)}"
    connection = await asyncpg.connect(db.replace("+asyncpg", ""))
    await connection.execute(f"CREATE SCHEMA {schema}")
    await connection.close()
    return f"{db}?schema={schema}"


async def burst(db: str, tables: int, sockets: int, how: str) -> dict[str, Any]:
    """Seed a floor, close ``sockets`` sockets at once, and measure their tilts ``how``."""
    store = await Store.open(await fresh_url(db))
    try:
        composed = compose(store)
        floor, tilts = composed.floor, composed.duties.tilts
        await set_floor_setting(store, "tilt_on_connection_loss", "always", by="olga")
        stakes: list[tuple[Any, dict[str, Any]]] = []
        for n in range(tables):
            table_id = f"T{n:03d}"
            await floor.add_table(
                TableConfig(table_id, HybridRules(), automated=False, require_procedures=False)
            )
            table = floor.tables[table_id]
            await table.open_round("dana")
            for position in range(1, POSITIONS + 1):
                player = f"p{n:03d}-{position}"
                await floor.add_player(player, 100_000)
                table.select_position(player, position)
                await table.wager(player, f"EWT-{n:03d}-{position}", "blackjack", 1000, player)
            for position in range(1, POSITIONS + 1):
                socket = SimpleNamespace(
                    role="player",
                    table=table_id,
                    terminal=f"EWT-{n:03d}-{position}",
                    subject=f"p{n:03d}-{position}",
                )
                stake = at_stake(floor, socket)  # type: ignore[arg-type]
                assert stake is not None
                stakes.append((socket, stake))
        lost = [stakes[i % len(stakes)] for i in range(sockets)]
        for i, (socket, stake) in enumerate(lost):  # each socket a terminal of its own
            lost[i] = (SimpleNamespace(**{**vars(socket), "terminal": f"EWT-{i:05d}"}), stake)

        held = peak = 0

        def checkout(*_: Any) -> None:
            nonlocal held, peak
            held += 1
            peak = max(peak, held)

        def checkin(*_: Any) -> None:
            nonlocal held
            held -= 1

        pool = store.engine.sync_engine.pool
        event.listen(pool, "checkout", checkout)
        event.listen(pool, "checkin", checkin)
        reloads = 0

        async def counted() -> None:
            nonlocal reloads
            reloads += 1

        floor.lock_listeners.append(counted)
        failures = 0
        started = time.perf_counter()
        if how == "queued":
            for socket, stake in lost:
                tilts.lost(socket, stake)
            while True:  # (drain() gives up after 5 s: wait here for the whole queue)
                await tilts.drain()
                if len(await protections.open_locks(store)) + failures >= sockets:
                    break
                await asyncio.sleep(0.1)
        else:

            async def one(socket: Any, stake: dict[str, Any]) -> None:
                nonlocal failures
                table = floor.tables[stake["table"]]
                try:
                    await protections.lock_terminal(
                        store,
                        socket.terminal,
                        "connection_lost",
                        f"connection lost at table {table.id}",
                        by="server",
                        at_us=floor.now_us(),
                        fence=table.fence,
                    )
                    await floor.locks_changed()
                except Exception:
                    failures += 1

            await asyncio.gather(*(one(socket, stake) for socket, stake in lost))
        seconds = time.perf_counter() - started
        written = len(await protections.open_locks(store))
        return {
            "how": how,
            "sockets": sockets,
            "written": written,
            "failed": sockets - written,
            "seconds": round(seconds, 2),
            "locks_per_second": round(written / seconds, 1),
            "reloads": reloads,
            "pool_connections_peak": peak,
        }
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="", help="a PostgreSQL URL (a fresh schema in it)")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--sockets", type=int, default=600)
    parser.add_argument("--json", action="store_true", help="one JSON line")
    args = parser.parse_args()
    if args.sockets < 1 or args.tables < 1:
        parser.error("--tables and --sockets are at least 1")
    results = [
        await burst(args.db, args.tables, args.sockets, how) for how in ("a task each", "queued")
    ]
    if args.json:
        print(json.dumps(results))
        return
    for result in results:
        print(
            f"{result['how']:>11}: {result['written']:,} of {result['sockets']:,} locks written "
            f"in {result['seconds']} s ({result['locks_per_second']}/s), {result['failed']} "
            f"failed, {result['reloads']:,} reloads, {result['pool_connections_peak']} pool "
            "connections at most"
        )


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
