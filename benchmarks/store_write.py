"""The store's play write path alone: steps of wagers from several tables committed at once
(the group commit), with or without a limit on every player, so the cost of the player
protections the write transaction checks can be read as a ratio.

Each turn, every table commits one step with a wager of two players; the tables' steps are
gathered, as a floor's tables commit them. Reported: microseconds per step (median of the
repeats) and steps per group commit.

    PYTHONPATH=src python benchmarks/store_write.py --db /tmp/w.db --turns 300
    PYTHONPATH=src python benchmarks/store_write.py --db postgresql://postgres@127.0.0.1/test \\
        --turns 300 --limits
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import time
from typing import Any

from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import set_limits

CASHIER = Actor(Role.CASHIER, "cleo")


async def _schema(url: str) -> tuple[str | None, Any]:
    if not url.startswith("postgresql"):
        return None, None
    import asyncpg  # type: ignore[import-untyped]

    schema = f"bench_{secrets.token_hex(4)}"
    connection = await asyncpg.connect(url)
    await connection.execute(f"CREATE SCHEMA {schema}")
    return schema, connection


async def run(url: str, tables: int, turns: int, limits: bool) -> dict[str, Any]:
    schema, admin = await _schema(url)
    store = await Store.open(url, schema=schema)
    try:
        players = [f"p{n}" for n in range(2 * tables)]
        for n in range(tables):
            await store.save_table(f"T{n}", "hybrid", {}, {})
        for player in players:
            await store.ensure_account(player, "player")
            await store.fund(player, 10_000_000, actor=CASHIER)
            if limits:
                await set_limits(
                    store, player, {"loss_limit": 10**9}, by=player, at_us=time.time_ns() // 1000
                )

        def step(table: int, turn: int) -> Step:
            pair = players[2 * table : 2 * table + 2]
            return Step(
                f"T{table}-{turn:06d}",
                events=[
                    EventIn("wager", {"player": p, "amount": 100}, actor=p, terminal=f"e{p}")
                    for p in pair
                ],
                transfers=[
                    Transfer(p, f"escrow:T{table}", 100, "wager", i, "blackjack", event=i)
                    for i, p in enumerate(pair)
                ],
                meters=[(f"T{table}", "blackjack", 200, 0)],
                open_round=(f"T{table}", turn, "hybrid", "round"),
                actor=Actor(Role.TABLE, f"T{table}"),
            )

        timings = []
        before = store.transactions
        for turn in range(1, turns + 1):
            started = time.perf_counter()
            await asyncio.gather(*(store.commit(step(t, turn)) for t in range(tables)))
            timings.append((time.perf_counter() - started) / tables)
        return {
            "database": store.dialect,
            "limits": limits,
            "us_per_step": round(statistics.median(timings) * 1e6, 1),
            "steps_per_commit": round(tables * turns / max(store.transactions - before, 1), 1),
        }
    finally:
        await store.close()
        if admin is not None:
            await admin.execute(f"DROP SCHEMA {schema} CASCADE")
            await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="SQLite file or PostgreSQL URL")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--limits", action="store_true", help="a loss limit on every player")
    options = parser.parse_args()
    print(asyncio.run(run(options.db, options.tables, options.turns, options.limits)))


if __name__ == "__main__":
    main()
