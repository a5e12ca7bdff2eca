"""Chaos benchmark of a floor of several processes: tables leased on PostgreSQL, one process
killed (SIGKILL) every few seconds and restarted, bots playing throughout.

Starts ``--processes`` ``tablejack serve`` processes on one fresh PostgreSQL schema with
``--tables`` automated version A tables (every other one voids a round a crash interrupts, the
others resume it), connects ``--terminals`` bot terminals per table (each tries the floor's
processes in turn when its connection fails, as a load balancer would), and every
``--kill-every`` seconds kills the process that runs the most tables (of those, the one killed
least often) and starts it again. Each
process has a name of its own (``--member``), as if it ran on a host of its own: the others
take a killed process's tables when their leases expire, not sooner. It reports:

* **downtime** of each table a kill took down: from the kill to the first state its terminals
  receive from the table's new process (p50, p99, max), and each table's longest silence over
  the run (p50, p99), which also counts the tables handed from one process to another to even
  the floor out;
* **rounds voided** (the tables whose policy voids a round a crash interrupts) and completed;
* **cents lost**: every round replayed from its log gives each player's balance (his credit,
  plus his settlements, less his wagers still in play); the sum over the players of the
  difference from the stored balance, plus the sum of every account (zero on a sound floor);
* **verify-log**'s verdict over the whole store, with the signed checkpoints.

The floor setting ``tilt_on_connection_loss`` is ``off`` here (``--tilt-on-connection-loss``):
with a floor's default (``mid_round``) every terminal a kill cuts off mid-round is locked until
an attendant clears it, and a table whose terminals are all locked falls silent, which would be
counted as its downtime.

    .venv/bin/python benchmarks/chaos.py                       # 3 x 30 tables, 3 minutes
    .venv/bin/python benchmarks/chaos.py --seconds 60 --kill-every 15 --json
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' kit: tests.support

from tablejack.server.socket.botclient import Timings, run_bot
from tablejack.server.table import replay_round
from tablejack.server.table.games import adapter_for
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.keys import generate_key_pair, load_public_key
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import open_locks
from tablejack.store.settings import set_floor_setting
from tablejack.store.verify import verify
from tablejack.store.vouchers import register_terminal
from tests.support.serve import free_port, start_serve, wait_listening

SETUP = Actor(Role.OPERATOR, "chaos set-up")
CAGE = Actor(Role.CASHIER, "chaos cage")
CREDIT = 10_000_000


def say(text: str) -> None:
    """Progress on stderr."""
    print(f"[chaos {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def table_id(table: int) -> str:
    return f"T{table:03d}"


async def prepare(db: str, tables: int, terminals: int, tilt: str) -> None:
    store = await Store.open(db)
    try:
        await set_floor_setting(store, "tilt_on_connection_loss", tilt, by="chaos set-up")
        for table in range(tables):
            await store.save_table(table_id(table), "hybrid", {}, {})
            for seat in range(terminals):
                index = table * terminals + seat
                name = f"p{index:04d}"
                await store.ensure_account(name, "player", name)
                await store.fund(name, CREDIT, "chaos credit", actor=CAGE)
                await creds.issue(store, "player", name, by=SETUP, token=f"tok-{name}")
                await register_terminal(
                    store, f"EWT-{index:04d}", table_id(table), by=SETUP, key=f"key-EWT-{index:04d}"
                )
    finally:
        await store.close()


def tables_file(path: Path, tables: int, countdown: int) -> None:
    lines = []
    for table in range(tables):
        lines += [
            "[[tables]]",
            f'id = "{table_id(table)}"',
            'game = "hybrid"',
            "automated = true",
            "require_procedures = false",
            f'recovery = "{"void" if table % 2 else "resume"}"',
            "wagering_seconds = 1",
            "between_rounds_seconds = 1",
            f"seed = {table}",
            "[tables.rules_override]",
            f"countdown_seconds = {countdown}",
            "",
        ]
    path.write_text("\n".join(lines))


class Node:
    """One process of the floor: started, killed and started again on its port and name."""

    def __init__(self, index: int, db: str, work: Path, lease: float) -> None:
        self.index = index
        self.db = db
        self.work = work
        self.lease = lease
        self.port = free_port()
        self.log = work / f"node-{index}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, tables: str = "auto") -> None:
        self.starts += 1
        self.process = start_serve(
            [
                "--db", self.db, "--port", str(self.port), "--tables", tables,
                "--lease-seconds", str(self.lease), "--member", f"node-{self.index}",
                "--checkpoint-key", str(self.work / "keys" / "checkpoint.key"),
                "--checkpoint-log", str(self.work / f"node-{self.index}-checkpoints.jsonl"),
            ],
            self.log,
        )  # fmt: skip

    def wait_listening(self, seconds: float = 60) -> None:
        assert self.process is not None
        wait_listening(self.process, self.port, self.log, seconds)

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def play_group(job: tuple[list[list[str]], list[int], int, float, float]) -> dict[str, Any]:
    """One bot process: its terminals (by index) play from ``begin`` for ``seconds``; the
    arrival times (``time.perf_counter``, the same clock in every process) of every state
    each table's terminals receive."""
    urls, group, terminals, begin, seconds = job
    return asyncio.run(_play_group(urls, group, terminals, begin, seconds))


async def _play_group(
    urls: list[list[str]], group: list[int], terminals: int, begin: float, seconds: float
) -> dict[str, Any]:
    await asyncio.sleep(max(0.0, begin - time.time()))
    stop = asyncio.Event()
    timings = Timings()
    bots = [
        asyncio.create_task(
            run_bot(
                urls[index % len(urls)],
                f"tok-p{index:04d}",
                f"EWT-{index:04d}",
                table_id(index // terminals),
                index % 3 + 1,
                terminal_key=f"key-EWT-{index:04d}",
                stop=stop,
                timings=timings,
                seed=index,
                reconnect=True,
            )
        )
        for index in group
    ]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    arrivals: dict[str, list[float]] = defaultdict(list)
    for (table, _round), per in timings.arrivals.items():
        for received in per.values():
            arrivals[table].extend(at for _seq, at in received)
    return {
        "arrivals": {table: sorted(times) for table, times in arrivals.items()},
        "decisions": timings.decisions,
        "errors": timings.errors,
        "reconnects": timings.reconnects,
    }


async def holders(db: Store) -> dict[str, str]:
    """The url of each table's holder (live leases only)."""
    from sqlalchemy import text

    async with db.engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT table_id, url FROM table_leases WHERE holder <> '' AND expires_us > "
                "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
            )
        )
        return {str(row[0]): str(row[1]) for row in rows}


async def audit(
    db: str, keys: Path, files: list[Path], tables: int, terminals: int
) -> dict[str, Any]:
    """Rounds by status, cents lost, verify-log's verdict."""
    store = await Store.open(db, migrate=False)
    try:
        balances = await store.accounts()
        players = [f"p{index:04d}" for index in range(tables * terminals)]
        expected = dict.fromkeys(players, CREDIT)
        escrows: dict[str, int] = defaultdict(int)
        statuses: dict[str, int] = defaultdict(int)
        for row in await store.rounds(limit=10**9):
            statuses[row["status"]] += 1
            round_ = replay_round(await store.events(row["id"]), adapter_for(row["game"]))
            settled = {s.wager_id for s in round_.settlements}
            for settlement in round_.settlements:
                expected[settlement.player] += settlement.net
            if row["status"] in ("open", "irregular"):
                for wager in round_.wagers:
                    if wager.id not in settled:
                        expected[wager.player] -= wager.amount
                        escrows[f"escrow:{row['table_id']}"] += wager.amount
        lost = sum(abs(balances.get(p, 0) - expected[p]) for p in players)
        lost += sum(abs(balances.get(e, 0) - amount) for e, amount in escrows.items())
        total = sum(balances.values())
        written = [file for file in files if file.exists()]
        reports = (
            [
                await verify(
                    store,
                    public_keys=[load_public_key(keys / "checkpoint.pub")],
                    checkpoint_files=written,
                )
            ]
            if written
            else []
        )
        return {
            "terminals_locked": len(await open_locks(store)),
            "rounds": dict(statuses),
            "cents_lost": lost + abs(total),
            "sum_of_all_accounts": total,
            "ledger_problems": await store.ledger_check(),
            "verify_log_ok": bool(reports) and all(r.ok for r in reports),
            "verify_log_problems": [p for r in reports for p in r.problems][:10],
            "verify_log_events": reports[0].events if reports else 0,
            "verify_log_checkpoints": reports[0].checkpoints if reports else 0,
        }
    finally:
        await store.close()


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--terminals", type=int, default=4, help="bot terminals per table")
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--kill-every", type=float, default=20.0)
    parser.add_argument("--lease", type=float, default=5.0, help="the lease time (seconds)")
    parser.add_argument("--countdown", type=int, default=3)
    parser.add_argument(
        "--db",
        default=os.environ.get(
            "TABLEJACK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
        ),
        help="a PostgreSQL URL (a fresh schema is made in it)",
    )
    parser.add_argument("--bot-processes", type=int, default=2)
    parser.add_argument(
        "--tilt-on-connection-loss",
        default="off",
        choices=("off", "mid_round", "always"),
        help="the floor setting (default here: off; with mid_round, a floor's default, every "
        "terminal a kill cuts mid-round stays locked until an attendant clears it, and its "
        "table falls silent)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import asyncpg  # type: ignore[import-untyped]

    work = Path(tempfile.mkdtemp(prefix="tablejack-chaos-"))
    schema = f"chaos_{secrets.token_hex(4)}"
    connection = await asyncpg.connect(args.db.replace("+asyncpg", ""))
    await connection.execute(f"CREATE SCHEMA {schema}")
    await connection.close()
    db = f"{args.db}?schema={schema}"
    say(f"floor of {args.processes} processes, {args.tables} tables in schema {schema} ({work})")
    await prepare(db, args.tables, args.terminals, args.tilt_on_connection_loss)
    generate_key_pair(work / "keys", "checkpoint.key", "checkpoint.pub")
    tables_file(work / "tables.toml", args.tables, args.countdown)
    nodes = [Node(index, db, work, args.lease) for index in range(args.processes)]
    first = nodes[0]  # the first process saves the tables file; the others serve what is saved
    first.start(str(work / "tables.toml"))
    first.wait_listening()
    for node in nodes[1:]:
        node.start()
        node.wait_listening()
    store = await Store.open(db, migrate=False)
    try:
        deadline = time.time() + 60
        while len(await holders(store)) < args.tables and time.time() < deadline:
            await asyncio.sleep(0.5)
        say(f"{len(await holders(store))} tables leased; bots start")
        sockets = [f"ws://127.0.0.1:{node.port}/ws" for node in nodes]
        orders = [sockets[i:] + sockets[:i] for i in range(len(sockets))]
        indices = list(range(args.tables * args.terminals))
        groups = [
            [i for i in indices if i // args.terminals % args.bot_processes == g]
            for g in range(args.bot_processes)
        ]
        begin = time.time() + 3.0
        context = multiprocessing.get_context("spawn")
        kills: list[tuple[float, set[str]]] = []
        with context.Pool(args.bot_processes) as pool:
            pending = pool.map_async(
                play_group,
                [(orders, g, args.terminals, begin, args.seconds) for g in groups if g],
            )
            await asyncio.sleep(max(0.0, begin - time.time()))
            started = time.time()
            next_kill = started + args.kill_every
            while next_kill < started + args.seconds - args.kill_every / 2:
                await asyncio.sleep(max(0.0, next_kill - time.time()))
                held = await holders(store)
                counts = {node.index: 0 for node in nodes}
                for url in held.values():
                    for node in nodes:
                        if url == node.url:
                            counts[node.index] += 1
                most = max(counts.values())  # of those running the most, the one left longest
                victim = min(
                    (node for node in nodes if counts[node.index] == most),
                    key=lambda node: (node.starts, node.index),
                )
                lost = {table for table, url in held.items() if url == victim.url}
                victim.kill()
                kills.append((time.perf_counter(), lost))
                say(
                    f"killed node {victim.index} running {len(lost)} tables "
                    f"({', '.join(sorted(lost))}); restarting it"
                )
                victim.start()
                next_kill += args.kill_every
            results = pending.get()
        say("bots done; stopping the floor")
    finally:
        await store.close()
        for node in nodes:
            node.stop()
    arrivals: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for table, times in result["arrivals"].items():
            arrivals[table].extend(times)
    for times in arrivals.values():
        times.sort()
    downtimes: list[float] = []
    for killed_at, lost in kills:
        for table in lost:
            after = [t for t in arrivals.get(table, []) if t > killed_at]
            if after:
                downtimes.append(after[0] - killed_at)
    silences = [
        max((b - a for a, b in itertools.pairwise(times)), default=0.0)
        for times in arrivals.values()
    ]
    say("replaying every round and verifying the log")
    files = [work / f"node-{node.index}-checkpoints.jsonl" for node in nodes]
    audited = await audit(db, work / "keys", files, args.tables, args.terminals)
    report = {
        "processes": args.processes,
        "tables": args.tables,
        "terminals_per_table": args.terminals,
        "seconds": args.seconds,
        "lease_seconds": args.lease,
        "kills": len(kills),
        "tables_taken_down": len(downtimes),
        "downtime_p50_s": pct(downtimes, 50),
        "downtime_p99_s": pct(downtimes, 99),
        "downtime_max_s": round(max(downtimes), 2) if downtimes else None,
        "longest_silence_per_table_p50_s": pct(silences, 50),
        "longest_silence_per_table_p99_s": pct(silences, 99),
        "rounds_complete": audited["rounds"].get("complete", 0),
        "rounds_voided": audited["rounds"].get("voided", 0),
        "rounds_open_at_end": audited["rounds"].get("open", 0),
        "tilt_on_connection_loss": args.tilt_on_connection_loss,
        "terminals_locked_at_end": audited["terminals_locked"],
        "cents_lost": audited["cents_lost"],
        "sum_of_all_accounts": audited["sum_of_all_accounts"],
        "ledger_problems": audited["ledger_problems"],
        "verify_log_ok": audited["verify_log_ok"],
        "verify_log_problems": audited["verify_log_problems"],
        "verify_log_events": audited["verify_log_events"],
        "verify_log_checkpoints": audited["verify_log_checkpoints"],
        "decisions": sum(r["decisions"] for r in results),
        "bot_errors": sum(r["errors"] for r in results),
        "bot_reconnects": sum(r["reconnects"] for r in results),
        "cpus": os.cpu_count(),
    }
    if args.json:
        import json

        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:>34}: {value}")
    if audited["cents_lost"] or not audited["verify_log_ok"]:
        raise SystemExit(1)


if __name__ == "__main__":
    asyncio.run(main())
