"""Load benchmark of the table server: N tables, M bot terminals each, over real WebSockets.

Starts ``tablejack serve`` as a separate process on a fresh database, connects the bots
(:mod:`tablejack.server.botclient`), lets them play for the given time and reports:

* rounds per second completed by the server (from the store),
* the 50th/99th percentile from a terminal's decision to every terminal's state update, once
  the terminals have connected (``--warmup``: the decisions of the first 10 seconds, when all
  N×M terminals connect and join at once, are left out; the percentiles with them are
  reported beside),
* the server's resident memory (start, peak, end; sampled every second),
* the server's CPU time: percent of one core, and milliseconds per round — a figure that
  other work on the machine barely changes, unlike the latencies.

    .venv/bin/python benchmarks/load.py --tables 50 --terminals 20 --seconds 60
    .venv/bin/python benchmarks/load.py --db postgresql://postgres@127.0.0.1:5432/test ...
    .venv/bin/python benchmarks/load.py --tables 50 --terminals 20 --soak 3600   # memory flat?

The bots run in ``--bot-processes`` processes (default 2; each plays whole tables, all start
together), on the same machine: on a 2-core machine they compete with the server for the CPU,
so the figures are a lower bound of what the server alone would do.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tablejack.server.botclient import Timings, run_bot
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.keys import generate_key_pair
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import register_terminal


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used, in seconds (Linux): a figure that other
    work on the machine does not inflate, unlike the latencies."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def soak_report(memory: list[float]) -> dict[str, object]:
    """The server's RSS over a soak run (one sample a second): the mean of each tenth of the
    run, and the trend after the first third (the warm-up: caches, the first rounds). The memory
    is called flat when that trend stays under 1 MB per 10 minutes and the last tenth is within
    5 % of the second third."""
    tenths = [
        round(statistics.fmean(memory[i * len(memory) // 10 : (i + 1) * len(memory) // 10]), 1)
        for i in range(10)
        if memory[i * len(memory) // 10 : (i + 1) * len(memory) // 10]
    ]
    settled = memory[len(memory) // 3 :]
    slope = 0.0
    if len(settled) > 2:
        xs = list(range(len(settled)))
        slope = statistics.linear_regression(xs, settled).slope  # MB per sample (second)
    middle = statistics.fmean(memory[len(memory) // 3 : 2 * len(memory) // 3] or memory)
    last = tenths[-1] if tenths else 0.0
    flat = abs(slope * 600) < 1.0 and abs(last - middle) <= 0.05 * middle
    return {
        "soak_rss_mb_by_tenth": tenths,
        "soak_rss_trend_mb_per_10_min": round(slope * 600, 2),
        "soak_rss_flat": flat,
    }


SETUP = Actor(Role.OPERATOR, "load set-up")
CAGE = Actor(Role.CASHIER, "load cage")


async def prepare(db: str, tables: int, terminals: int) -> list[tuple[str, str]]:
    """Players with credit and tokens, and every bot's terminal registered at its table with
    its device credential (``key-EWT-<index>``)."""
    store = await Store.open(db)
    players = []
    try:
        for table in range(tables):
            await store.save_table(f"T{table:03d}", "hybrid", {}, {})
            for seat in range(terminals):
                name = f"p{table:03d}x{seat:02d}"
                index = table * terminals + seat
                await store.ensure_account(name, "player", name)
                await store.fund(name, 10_000_000, "load credit", actor=CAGE)
                issued = await creds.issue(store, "player", name, by=SETUP, token=f"tok-{name}")
                await register_terminal(
                    store, f"EWT-{index:04d}", f"T{table:03d}", by=SETUP, key=f"key-EWT-{index:04d}"
                )
                players.append((name, issued.token))
    finally:
        await store.close()
    return players


async def count_rounds(db: str) -> tuple[int, int, list[str]]:
    store = await Store.open(db, migrate=False)
    try:
        done = await store.rounds(status="complete", limit=10**9)
        total = await store.total()
        problems = await store.ledger_check()
        refusals: dict[str, int] = {}
        for entry in await store.audit_entries(limit=10**6):
            refusals[entry["message"][:70]] = refusals.get(entry["message"][:70], 0) + 1
        problems += [
            f"refused {n}x: {m}" for m, n in sorted(refusals.items(), key=lambda x: -x[1])[:5]
        ]
        return len(done), total, problems
    finally:
        await store.close()


def play_group(
    job: tuple[str, list[tuple[int, str]], int, float, float, float],
) -> dict[str, Any]:
    """One bot process: from the time ``begin`` play the given terminals (index, token) for
    ``seconds`` and return its measurements (latencies of the decisions sent after the first
    ``warmup`` seconds, and of all of them)."""
    url, group, terminals, begin, seconds, warmup = job
    return asyncio.run(_play_group(url, group, terminals, begin, seconds, warmup))


async def _play_group(
    url: str,
    group: list[tuple[int, str]],
    terminals: int,
    begin: float,
    seconds: float,
    warmup: float,
) -> dict[str, Any]:
    gc.collect()  # the bots, like the server, spend less time in the collector
    gc.freeze()
    gc.set_threshold(20_000, 20, 100)
    late = time.time() - begin
    await asyncio.sleep(max(0.0, -late))
    cpu_before = time.process_time()
    steady = time.perf_counter() + warmup
    stop = asyncio.Event()
    timings = Timings()
    bots = [
        asyncio.create_task(
            run_bot(
                url,
                token,
                f"EWT-{index:04d}",
                f"T{index // terminals:03d}",
                index % 3 + 1,
                terminal_key=f"key-EWT-{index:04d}",
                stop=stop,
                timings=timings,
                seed=index,
                buzzer_beater=True,
            )
        )
        for index, token in group
    ]
    await asyncio.sleep(seconds)
    cpu = time.process_time() - cpu_before
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    return {
        "latencies": timings.latencies(steady),
        "latencies_all": timings.latencies(),
        "decisions": timings.decisions,
        "wagers": timings.wagers,
        "errors": timings.errors,
        "state_messages": sum(
            len(received) for per in timings.arrivals.values() for received in per.values()
        ),
        "cpu_seconds": cpu,
        "late_seconds": max(0.0, late),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--terminals", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--db", default="", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--countdown", type=int, default=5)
    parser.add_argument("--wagering", type=float, default=1.0)
    parser.add_argument(
        "--batch-ms",
        type=float,
        default=0.0,
        help="the server's --batch-ms (updates gathered per table)",
    )
    parser.add_argument(
        "--soak",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="a soak run of this many seconds: the server's RSS over time and whether it is flat",
    )
    parser.add_argument(
        "--unsigned",
        action="store_true",
        help="run the server without signed checkpoints (by default it signs them, as a floor "
        "does)",
    )
    parser.add_argument(
        "--bot-processes",
        type=int,
        default=2,
        help="processes the bot terminals run in (whole tables each; default 2)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="the latency percentiles leave out the decisions of the first SECONDS, when every "
        "terminal connects at once (the figures with them are reported too; default 10)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.soak:
        args.seconds = args.soak

    work = Path(tempfile.mkdtemp(prefix="tablejack-load-"))
    db = args.db or str(work / "load.db")
    if db.startswith("postgres") and "?schema=" not in db:
        schema = f"load_{secrets.token_hex(4)}"
        import asyncpg  # type: ignore[import-untyped]

        connection = await asyncpg.connect(db.replace("+asyncpg", ""))
        await connection.execute(f"CREATE SCHEMA {schema}")
        await connection.close()
        db = f"{db}?schema={schema}"
    setup_started = time.perf_counter()
    players = await prepare(db, args.tables, args.terminals)
    keys = None
    if not args.unsigned:
        keys, _ = generate_key_pair(work / "keys", "checkpoint.key", "checkpoint.pub")
    tables_file = work / "tables.toml"
    lines = []
    for table in range(args.tables):
        lines += [
            "[[tables]]",
            f'id = "T{table:03d}"',
            'game = "hybrid"',
            "automated = true",
            "require_procedures = false",
            f"wagering_seconds = {args.wagering}",
            "between_rounds_seconds = 0.5",
            "[tables.rules_override]",
            f"countdown_seconds = {args.countdown}",
            "",
        ]
    tables_file.write_text("\n".join(lines))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tablejack.cli import main; main()",
            "serve",
            "--db",
            db,
            "--port",
            str(port),
            "--tables",
            str(tables_file),
            "--batch-ms",
            str(args.batch_ms),
            *(["--checkpoint-key", str(keys)] if keys is not None else ["--unsigned"]),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                await asyncio.sleep(0.2)
        setup_seconds = time.perf_counter() - setup_started
        before_rounds = (await count_rounds(db))[0]
        url = f"ws://127.0.0.1:{port}/ws"
        # each bot process plays whole tables, so each table's latencies are measured in one
        # process (perf_counter is the system's monotonic clock, the same in every process)
        groups = [
            [
                (index, token)
                for index, (_name, token) in enumerate(players)
                if index // args.terminals % args.bot_processes == group
            ]
            for group in range(args.bot_processes)
        ]
        context = multiprocessing.get_context("spawn")
        begin = time.time() + 5.0  # every bot process starts playing then
        with context.Pool(args.bot_processes) as pool:
            pending = pool.map_async(
                play_group,
                [
                    (url, group, args.terminals, begin, args.seconds, args.warmup)
                    for group in groups
                    if group
                ],
            )
            await asyncio.sleep(max(0.0, begin - time.time()))
            cpu_before = cpu_seconds(server.pid)
            memory = [rss_mb(server.pid)]
            while time.time() < begin + args.seconds:
                await asyncio.sleep(min(1.0, max(0.0, begin + args.seconds - time.time())))
                memory.append(rss_mb(server.pid))
            server_cpu = cpu_seconds(server.pid) - cpu_before
            results = pending.get()
        elapsed = args.seconds
        bots_cpu = sum(result["cpu_seconds"] for result in results)
        rounds, total, problems = await count_rounds(db)
        rounds -= before_rounds
        samples: list[float] = sorted(s for result in results for s in result["latencies"])
        everything: list[float] = sorted(s for r in results for s in r["latencies_all"])

        def pct(p: float, of: list[float] = samples) -> float:
            if not of:
                return float("nan")
            return 1000 * of[min(len(of) - 1, int(p / 100 * len(of)))]

        report = {
            "tables": args.tables,
            "batch_ms": args.batch_ms,
            "terminals_per_table": args.terminals,
            "seconds": round(elapsed, 1),
            "database": "postgresql" if db.startswith("postgres") else "sqlite",
            "rounds": rounds,
            "rounds_per_second": round(rounds / elapsed, 2),
            "decisions": sum(result["decisions"] for result in results),
            "wagers": sum(result["wagers"] for result in results),
            "state_messages": sum(result["state_messages"] for result in results),
            "bot_processes": args.bot_processes,
            "bots_started_late_s": round(max(float(r["late_seconds"]) for r in results), 2),
            "latency_samples": len(samples),
            "latency_p50_ms": round(pct(50), 1),
            "latency_p90_ms": round(pct(90), 1),
            "latency_p95_ms": round(pct(95), 1),
            "latency_p99_ms": round(pct(99), 1),
            "latency_mean_ms": round(1000 * statistics.fmean(samples), 1) if samples else None,
            "latency_warmup_s": args.warmup,
            "latency_p50_p99_ms_with_warmup": [
                round(pct(50, everything), 1),
                round(pct(99, everything), 1),
            ],
            "server_cpu_percent": round(100 * server_cpu / elapsed, 1),
            "server_cpu_ms_per_round": round(1000 * server_cpu / rounds, 1) if rounds else None,
            "bots_cpu_percent": round(100 * bots_cpu / elapsed, 1),
            "load_average_1min": round(os.getloadavg()[0], 2),
            "server_rss_mb_start": round(memory[0], 1),
            "server_rss_mb_peak": round(max(memory), 1),
            "server_rss_mb_end": round(memory[-1], 1),
            "errors": sum(result["errors"] for result in results),
            "sum_of_all_accounts": total,
            "ledger_problems": [p for p in problems if not p.startswith("refused")],
            "top_refusals": [p for p in problems if p.startswith("refused")],
            **(soak_report(memory) if args.soak else {}),
            "setup_seconds": round(setup_seconds, 1),
            "cpus": os.cpu_count(),
        }
        if args.json:
            print(json.dumps(report))
        else:
            for key, value in report.items():
                print(f"{key:>24}: {value}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    asyncio.run(main())
