"""Load benchmark of the table server: N tables, M bot terminals each, over real WebSockets.

Starts ``tablejack serve`` as a separate process on a fresh database, connects the bots
(:mod:`tablejack.server.socket.botclient`), lets them play for the given time and reports:

* rounds per second completed by the server (from the store),
* the 50th/99th percentile from a terminal's decision to every terminal's state update, once
  the terminals have connected (``--warmup``: the decisions of the first 10 seconds, when all
  N×M terminals connect and join at once, are left out; the percentiles with them are
  reported beside),
* the server's resident memory (start, peak, end; sampled every second),
* the server's CPU time: percent of one core, and milliseconds per round — a figure that
  other work on the machine barely changes, unlike the latencies — over the whole run and
  over the rounds after the warm-up (the connect storm's sign-ins left out);
* with ``--perf SECONDS``, where that CPU goes: the share of it in each library (the Python
  interpreter, the kernel, SQLite, libc, uvloop …), sampled with ``perf`` after the warm-up.

    .venv/bin/python benchmarks/load.py --tables 50 --terminals 20 --seconds 60
    .venv/bin/python benchmarks/load.py --db postgresql://postgres@127.0.0.1:5432/test ...
    .venv/bin/python benchmarks/load.py --tables 50 --terminals 20 --soak 3600   # memory flat?
    .venv/bin/python benchmarks/load.py --tables 50 --terminals 20 --seconds 40 --perf 10
    .venv/bin/python benchmarks/load.py --processes 2 --db postgresql://postgres@127.0.0.1:5432/test

With ``--pace human`` the bots play as people do (:class:`~tablejack.server.socket.botclient.HumanPace`:
a wager 1–8 s after the round opens, each decision 0.5–4 s after it is asked, some rounds sat
out, a network blip now and then and a reconnect) with the tables' real countdowns (a 10 s
wagering window, ``--countdown`` for the decisions); the report then gives, per process and for
the floor, the sockets held (read from each process's ``/metrics``), the time from the wagering
countdown's end to the dealt cards on the terminals, and the errors after the warm-up:

    .venv/bin/python benchmarks/load.py --pace human --tables 10 --terminals 5 --seconds 60 --json

With ``--processes N`` (PostgreSQL only: an SQLite floor is one process) the floor is N
``tablejack serve`` processes on the one database, leasing the tables among themselves; the
bots start once every process holds its share, each connecting to its table's process (as a
load balancer that knows the tables would send it; ``--route spread`` sends each to the
processes in turn instead, so most are forwarded). The report gives each process's tables,
rounds, CPU, memory (with ``--soak``, its memory over the run too) and latencies, and the
floor's, with the reconnections and the sockets the servers closed by close code
(``closes_by_code``; a bot's own network blips are not in it), and every connection lost but
the blips, by why (``drops_by_reason``: the server's close code, this side's — ``client 1011
keepalive ping timeout`` —, a connection cut without a close frame, a handshake that timed out
or was refused) and minute by minute (``drops_by_minute``, every minute of the run up to the
last loss). For a before/after measured in one run, run this file with an earlier commit's
package first (``PYTHONPATH=/tmp/old/src``; with one process it uses nothing newer).

The bots run in ``--bot-processes`` processes (default 2; each plays whole tables, all start
together), on the same machine: on a 2-core machine they compete with the server for the CPU,
so the figures are a lower bound of what the server alone would do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text

from tablejack.server.socket.botclient import HumanPace, Timings, run_bot
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


def floor_soak_report(memory: list[list[float]]) -> dict[str, object]:
    """:func:`soak_report` for the floor (each process's RSS samples in ``memory``): the
    largest process's tenths and trend, and flat only when every process's memory is."""
    reports = [soak_report(samples) for samples in memory]
    largest = max(range(len(memory)), key=lambda number: max(memory[number]))
    return {**reports[largest], "soak_rss_flat": all(r["soak_rss_flat"] for r in reports)}


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


def prepared_players(tables: int, terminals: int) -> list[tuple[str, str]]:
    """The players :func:`prepare` seeded for the first ``tables`` tables, with their tokens
    (``tok-<name>``), for a run on a database seeded before (``--prepared``)."""
    return [
        (name, f"tok-{name}")
        for table in range(tables)
        for seat in range(terminals)
        for name in [f"p{table:03d}x{seat:02d}"]
    ]


async def clear_locks(db: str) -> int:
    """Clear, as a supervisor does, every terminal lock a run before left on a prepared
    database (the bots that stopped mid-round raised the ``connection_lost`` tilt of PA 605a,
    which keeps a terminal from wagering until cleared); how many terminals were locked."""
    from tablejack.store.protections import clear_terminal, open_locks

    store = await Store.open(db, migrate=False)
    try:
        locked = sorted(await open_locks(store))
        at_us = int(time.time() * 1_000_000)
        for start in range(0, len(locked), 16):
            await asyncio.gather(
                *(
                    clear_terminal(
                        store,
                        terminal,
                        "checked_no_fault",
                        "load benchmark: the tilts of the run before, on a prepared database",
                        by="load supervisor",
                        role="supervisor",
                        at_us=at_us,
                    )
                    for terminal in locked[start : start + 16]
                )
            )
    finally:
        await store.close()
    return len(locked)


def raise_open_files() -> int:
    """Raise this process's soft limit of open files to its hard limit (the bots of a large
    floor hold a socket each; the processes it starts inherit the limit); the limit now."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def count_syscalls(db: str, pid: int, seconds: float) -> dict[str, Any]:
    """The socket system calls (``sendto``: a write of one or more frames; ``recvfrom``: a
    read) the server makes in ``seconds``, with the rounds completed meanwhile: ``strace -c``
    attached to the process (its threads too) and detached again."""
    before = sum((await count_complete(db)).values())
    process = await asyncio.create_subprocess_exec(
        "strace", "-c", "-f", "-e", "trace=sendto,recvfrom", "-p", str(pid),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    await asyncio.sleep(seconds)
    process.send_signal(signal.SIGINT)
    _, table = await process.communicate()
    rounds = sum((await count_complete(db)).values()) - before
    calls = {
        fields[-1]: int(fields[3])
        for fields in (line.split() for line in table.decode().splitlines())
        if len(fields) >= 5 and fields[-1] in ("sendto", "recvfrom") and fields[3].isdigit()
    }
    per_round = {f"{name}_per_round": round(n / rounds, 1) for name, n in calls.items() if rounds}
    return {"seconds": seconds, "rounds": rounds, **calls, **per_round}


async def cpu_by_library(pid: int, seconds: float) -> dict[str, Any]:
    """Where the server's CPU goes, by library: ``perf record`` attached to the process (its
    threads too) for ``seconds``, then the share of the samples in each shared object
    (:func:`library_shares`): the Python interpreter, the kernel, SQLite, libc, uvloop …"""
    with tempfile.TemporaryDirectory() as folder:
        data = str(Path(folder) / "perf.data")
        try:
            record = await asyncio.create_subprocess_exec(
                "perf", "record", "-F", "999", "-p", str(pid), "-o", data, "--",
                "sleep", str(seconds),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )  # fmt: skip
        except FileNotFoundError:
            return {"seconds": seconds, "error": "perf is not installed (Debian: linux-perf)"}
        _, problem = await record.communicate()
        if record.returncode != 0:
            return {"seconds": seconds, "error": problem.decode(errors="replace").strip()[-300:]}
        report = await asyncio.create_subprocess_exec(
            "perf", "report", "-i", data, "--sort", "dso", "--stdio",
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        text_out, _ = await report.communicate()
    return {"seconds": seconds, "percent": library_shares(text_out.decode(errors="replace"))}


def library_shares(report: str, top: int = 12) -> dict[str, float]:
    """The percent of the samples in each shared object, largest first (the ``top`` largest),
    from the text of ``perf report --sort dso --stdio``; the Python interpreter's library is
    named ``python``, the kernel ``kernel``.

    >>> library_shares("# Overhead  Shared Object\\n    63.58%  libpython3.11.so.1.0\\n"
    ...                "    14.74%  [kernel.kallsyms]\\n     7.93%  libsqlite3.so.0.8.6\\n")
    {'python': 63.58, 'kernel': 14.74, 'libsqlite3': 7.93}
    """
    shares: dict[str, float] = {}
    for line in report.splitlines():
        fields = line.split()
        if len(fields) < 2 or line.lstrip().startswith("#") or not fields[0].endswith("%"):
            continue
        try:
            percent = float(fields[0].rstrip("%"))
        except ValueError:
            continue
        name = fields[1]
        if name.startswith("[kernel"):
            name = "kernel"
        elif name.startswith("libpython") or name.startswith("python"):
            name = "python"
        else:
            name = name.split(".cpython-")[0].split(".so")[0]
        shares[name] = round(shares.get(name, 0.0) + percent, 2)
    ranked = sorted(shares.items(), key=lambda item: -item[1])[:top]
    return dict(ranked)


async def count_complete(db: str) -> dict[str, int]:
    """The rounds complete at each table so far."""
    store = await Store.open(db, migrate=False)
    try:
        done: dict[str, int] = {}
        for row in await store.rounds(status="complete", limit=10**9):
            done[row["table_id"]] = done.get(row["table_id"], 0) + 1
        return done
    finally:
        await store.close()


async def steps_per_round(db: str) -> float | None:
    """The steps a complete round took on average: each step the server commits writes its
    events with one timestamp (a wager batch, a decision batch, the clock's command with the
    cards it deals), so the distinct timestamps of a round's events count its steps — each a
    transaction of the round and an update to every terminal at the table."""
    store = await Store.open(db, migrate=False)
    try:
        async with store.engine.connect() as connection:
            value = (
                await connection.execute(
                    text(
                        "SELECT AVG(n) FROM (SELECT COUNT(DISTINCT e.at_us) AS n FROM events e "
                        "JOIN rounds r ON r.id = e.round_id WHERE r.status = 'complete' "
                        "AND r.kind = 'round' GROUP BY e.round_id) AS steps"
                    )
                )
            ).scalar()
        return None if value is None else round(float(value), 2)
    finally:
        await store.close()


async def count_rounds(db: str) -> tuple[dict[str, int], int, list[str]]:
    """The rounds complete at each table, the sum of every account and the ledger's problems
    (with the five refusals the audit log holds most)."""
    done = await count_complete(db)
    store = await Store.open(db, migrate=False)
    try:
        total = await store.total()
        problems = await store.ledger_check()
        refusals: dict[str, int] = {}
        for entry in await store.audit_entries(limit=10**6):
            refusals[entry["message"][:70]] = refusals.get(entry["message"][:70], 0) + 1
        problems += [
            f"refused {n}x: {m}" for m, n in sorted(refusals.items(), key=lambda x: -x[1])[:5]
        ]
        return done, total, problems
    finally:
        await store.close()


@dataclass(frozen=True)
class BotJob:
    """The terminals one bot process plays: (index, token, the sockets to try in turn), from
    the time ``begin`` for ``seconds``; ``processes``: the serve process each table's latencies
    are counted under."""

    group: list[tuple[int, str, list[str]]]
    terminals: int
    begin: float
    seconds: float
    warmup: float
    processes: dict[str, int]
    human: bool = False
    sign_ins: int = 0
    """How many of the process's bots sign in at once (0: all)."""


def play_group(job: BotJob) -> dict[str, Any]:
    """One bot process: play the job's terminals and return its measurements (latencies of the
    decisions sent after the first ``warmup`` seconds, and of all of them; by serve process).
    The bots run on uvloop where it is installed, as the server does: they stand for terminals
    on machines of their own, so the less of the shared cores they take, the more the figures
    are the server's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(_play_group(job))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_play_group(job))


LAG_TICK = 0.1
"""How often the bots' loop-lag watch wakes (seconds)."""


async def _loop_lag(lags: list[float], since: float) -> None:
    """How late the bots' own event loop wakes, every :data:`LAG_TICK` from ``since`` on:
    a decision's update is timed when the bot's loop reads it, so a bot process short of CPU
    adds its lag to every latency the run reports."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + LAG_TICK
        await asyncio.sleep(LAG_TICK)
        if time.perf_counter() >= since:
            lags.append(loop.time() - due)


async def _play_group(job: BotJob) -> dict[str, Any]:
    gc.collect()  # the bots, like the server, spend less time in the collector
    gc.freeze()
    gc.set_threshold(20_000, 20, 100)
    late = time.time() - job.begin
    await asyncio.sleep(max(0.0, -late))
    cpu_before = time.process_time()
    started = time.perf_counter()
    steady = started + job.warmup
    stop = asyncio.Event()
    timings = Timings()
    sign_ins = asyncio.Semaphore(job.sign_ins) if job.sign_ins else None
    lags: list[float] = []
    watch = asyncio.create_task(_loop_lag(lags, steady))
    bots = [
        asyncio.create_task(
            run_bot(
                urls if len(urls) > 1 else urls[0],
                token,
                f"EWT-{index:04d}",
                f"T{index // job.terminals:03d}",
                index % 3 + 1,
                terminal_key=f"key-EWT-{index:04d}",
                stop=stop,
                timings=timings,
                seed=index,
                buzzer_beater=True,
                reconnect=len(urls) > 1 or job.human,  # a table may move; a network blips
                **({"pace": HumanPace()} if job.human else {}),
                **({"sign_ins": sign_ins} if sign_ins is not None else {}),
            )
        )
        for index, token, urls in job.group
    ]
    await asyncio.sleep(job.seconds)
    cpu = time.process_time() - cpu_before
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    watch.cancel()
    by_process: dict[int, list[str]] = {}
    for table, process in job.processes.items():
        by_process.setdefault(process, []).append(table)
    return {
        "latencies": timings.latencies(steady),
        "latencies_all": timings.latencies(),
        "latencies_by_process": {
            process: timings.latencies(steady, set(tables))
            for process, tables in by_process.items()
            if len(by_process) > 1  # one process: its latencies are the run's
        },
        "decisions": timings.decisions,
        "wagers": timings.wagers,
        "errors": timings.errors,
        "errors_after_warmup": (
            None  # a package whose bots do not keep the times (an older one, for "before")
            if (times := getattr(timings, "error_times", None)) is None
            else sum(1 for at in times if at >= steady)
        ),
        "reconnects": timings.reconnects,
        "closes": {str(code): count for code, count in timings.closes.items()},
        "drops": dict(Counter(why for _, why in getattr(timings, "drops", []))),
        "drops_by_minute": dict(
            Counter(str(int((at - started) // 60)) for at, _ in getattr(timings, "drops", []))
        ),
        "deals": [
            (table, delay) for table, at, delay in getattr(timings, "deals", []) if at >= steady
        ],
        "error_tables": [
            table
            for table, at in zip(
                getattr(timings, "error_tables", []), timings.error_times, strict=False
            )
            if at >= steady
        ],
        "sit_outs": getattr(timings, "sit_outs", 0),
        "blips": getattr(timings, "blips", 0),
        "state_messages": sum(
            len(received) for per in timings.arrivals.values() for received in per.values()
        ),
        "cpu_seconds": cpu,
        "loop_lags": lags,
        "late_seconds": max(0.0, late),
    }


def percentile(samples: list[float], p: float) -> float:
    """The ``p``-th percentile of sorted seconds, in milliseconds (nan when there are none)."""
    if not samples:
        return float("nan")
    return round(1000 * samples[min(len(samples) - 1, int(p / 100 * len(samples)))], 1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    db: str,
    tables_file: Path,
    keys: Path | None,
    batch_ms: float,
    commit_ms: float | None,
    step_ms: float | None,
    step_wait_ms: float | None,
    work: Path,
    *,
    floor: bool,
    number: int,
    metrics: bool = False,
    lease_seconds: float | None = None,
    server_src: str | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """One ``tablejack serve`` process and its port (``floor``: one of a floor of several,
    named as a host of its own, with ``lease_seconds`` when given; ``server_src``: the
    package's source directory the server runs from, another checkout's for a before/after
    comparison with the same bots)."""
    port = free_port()
    env = None if server_src is None else {**os.environ, "PYTHONPATH": server_src}
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
            str(batch_ms),
            *(["--commit-ms", str(commit_ms)] if commit_ms is not None else []),
            *(["--step-ms", str(step_ms)] if step_ms is not None else []),
            *(["--step-wait-ms", str(step_wait_ms)] if step_wait_ms is not None else []),
            *(["--checkpoint-key", str(keys)] if keys is not None else ["--unsigned"]),
            *(
                [
                    "--member",
                    f"load-{number}",
                    "--checkpoint-log",
                    str(work / f"checkpoints-{number}.jsonl"),
                    *(["--lease-seconds", str(lease_seconds)] if lease_seconds else []),
                ]
                if floor
                else []
            ),
            *(["--metrics-from", "127.0.0.1"] if metrics else []),
        ],
        stdout=subprocess.DEVNULL,
        env=env,
    )
    return server, port


async def wait_until_up(
    servers: list[tuple[subprocess.Popen[bytes], int]], seconds: float = 60.0
) -> None:
    """Wait until every server answers on its port (a process of a floor opens it once its
    first share of the tables is recovered)."""
    deadline = time.time() + seconds
    for server, port in servers:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                await asyncio.sleep(0.2)


def start_seconds(tables: int, processes: int) -> float:
    """How long a floor may take to start: a minute, and half a second for each table of a
    process's share (a table takes about a quarter of a second to recover on two busy cores
    the first time it starts, its procedure log written)."""
    return 60.0 + 0.5 * -(-tables // processes)


async def shared_out(db: str, ports: list[int], tables: int) -> dict[str, int]:
    """Wait until every table is held and each process holds its share (the floor evens out
    between rounds); each table's process (its index in ``ports``)."""
    from tablejack.store.leases import Leases  # a floor of several only

    store = await Store.open(db, migrate=False)
    observer = Leases(store, "load-observer", "", 5.0)
    share = -(-tables // len(ports))
    try:
        deadline = time.time() + start_seconds(tables, len(ports)) + 60
        while True:
            view = await observer.view()
            held = {  # (a lease of a run before, killed, is not ours: it expires, ours take it)
                table: ports.index(port)
                for table, lease in view.leases.items()
                if lease.holder
                and lease.expires_us > view.now_us
                and (port := int(lease.url.rsplit(":", 1)[1])) in ports
            }
            counts = [list(held.values()).count(i) for i in range(len(ports))]
            if len(held) == tables and max(counts) <= share:
                return held
            if time.time() > deadline:
                raise SystemExit(f"the floor did not even out: tables per process {counts}")
            await asyncio.sleep(0.5)
    finally:
        await store.close()


LEASE_COUNTS = {
    "tablejack_lease_takeovers_total": "lease_takeovers",
    "tablejack_tables_dropped_total": "tables_dropped",
    "tablejack_loop_lags_over_lease_total": "loop_lags_over_lease",
    "tablejack_lease_renewals_withheld_total": "lease_renewals_withheld",
    "tablejack_lease_renewals_slow_total": "lease_renewals_slow",
}
"""The floor's lease counters a run reports (their growth after the warm-up), by sample name."""


def scrape(port: int) -> dict[str, float] | None:
    """The player sockets a serve process holds, its lease counters (:data:`LEASE_COUNTS`, the
    tables dropped summed over the reasons), its sign-ins and its sockets ended by why
    (``ended: <reason>``), from its ``/metrics`` (None: no answer)."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            body = response.read().decode()
    except OSError:
        return None
    found: dict[str, float] = dict.fromkeys(LEASE_COUNTS.values(), 0.0)
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            if sample.name == "tablejack_sockets" and sample.labels.get("role") == "player":
                found["sockets"] = sample.value
            elif sample.name in LEASE_COUNTS:
                found[LEASE_COUNTS[sample.name]] += sample.value
            elif sample.name == "tablejack_sign_ins_total":
                found["sign_ins"] = sample.value
            elif sample.name == "tablejack_socket_ends_total":
                found[f"ended: {sample.labels.get('reason')}"] = sample.value
    return found


def scrape_sockets(port: int) -> int | None:
    """The player sockets a serve process holds, from its ``/metrics`` (None: no answer)."""
    found = scrape(port)
    return None if found is None or "sockets" not in found else int(found["sockets"])


def lease_growth(
    first: dict[str, float] | None, last: dict[str, float] | None
) -> dict[str, int | None]:
    """How much each lease counter grew between two scrapes of a process (None: not scraped)."""
    return {
        name: None if first is None or last is None else int(last[name] - first[name])
        for name in LEASE_COUNTS.values()
    }


def ends_growth(
    first: dict[str, float] | None, last: dict[str, float] | None
) -> dict[str, int] | None:
    """The sign-ins and the sockets ended by why (the server's count) between two scrapes of a
    process, those that grew (None: not scraped, or a server without these counters)."""
    if first is None or last is None or "sign_ins" not in last:
        return None
    return {
        name: grown
        for name in sorted(last)
        if (name == "sign_ins" or name.startswith("ended: "))
        and (grown := int(last[name] - first.get(name, 0.0)))
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--terminals", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--db", default="", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--countdown", type=int, default=5)
    parser.add_argument(
        "--wagering",
        type=float,
        default=None,
        help="the tables' wagering window in seconds (default 1; 10 at --pace human)",
    )
    parser.add_argument(
        "--pace",
        choices=("bot", "human"),
        default="bot",
        help="bot: every terminal answers at once; human: as people play (see above)",
    )
    parser.add_argument(
        "--batch-ms",
        type=float,
        default=0.0,
        help="the server's --batch-ms (updates gathered per table)",
    )
    parser.add_argument(
        "--commit-ms",
        type=float,
        default=None,
        help="the server's --commit-ms, its group commit window (default: the server's own; "
        "not passed, so an earlier package's server runs as it did)",
    )
    parser.add_argument(
        "--step-ms",
        type=float,
        default=None,
        help="the server's --step-ms, its tables' step window (default: the server's own; "
        "not passed, so an earlier package's server runs as it did)",
    )
    parser.add_argument(
        "--step-wait-ms",
        type=float,
        default=None,
        help="the server's --step-wait-ms, the longest wait for a decision round's answers "
        "(default: the server's own; not passed, so an earlier package's server runs as it did)",
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
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="serve processes forming one floor (PostgreSQL; default 1)",
    )
    parser.add_argument(
        "--route",
        choices=("owner", "spread"),
        default="owner",
        help="a floor of several: each bot connects to its table's process (owner, default) or "
        "to the processes in turn, most then forwarded (spread)",
    )
    parser.add_argument(
        "--server-src",
        default=None,
        help="run the server from this source directory (another checkout's src: a before/"
        "after comparison with the same bots and the same measurements)",
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        default=None,
        help="a floor of several: each process's lease time (serve --lease-seconds; default "
        "serve's)",
    )
    parser.add_argument(
        "--syscalls",
        type=float,
        default=0.0,
        help="after the warm-up, count the server's socket system calls this many seconds "
        "with strace (one process; strace slows the server: a run for counting, not timing)",
    )
    parser.add_argument(
        "--perf",
        type=float,
        default=0.0,
        help="after the warm-up, sample the server this many seconds with perf and report the "
        "share of its CPU in each library (the interpreter, the kernel, SQLite …; one process)",
    )
    parser.add_argument(
        "--sign-ins",
        type=int,
        default=32,
        help="how many of a bot process's terminals sign in at once, each until the server's "
        "first state (0: all together; default 32)",
    )
    parser.add_argument(
        "--prepare-only",
        action="store_true",
        help="seed the database (a fresh PostgreSQL schema: the tables, players, credit and "
        "terminals of --tables × --terminals), print its URL and stop: a run with --prepared "
        "reuses it",
    )
    parser.add_argument(
        "--prepared",
        action="store_true",
        help="--db is a database seeded by --prepare-only (its URL with ?schema=) for at least "
        "--tables × --terminals: play on it without seeding again (the first --tables tables)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.prepared and args.prepare_only:
        parser.error("--prepare-only seeds a database, --prepared reuses one: one or the other")
    if args.prepared and not args.db:
        parser.error("--prepared needs the --db URL --prepare-only printed")
    if (args.syscalls or args.perf) and args.processes != 1:
        parser.error("--syscalls and --perf look at one serve process")
    if args.soak:
        args.seconds = args.soak
    human = args.pace == "human"
    if args.wagering is None:
        args.wagering = 10.0 if human else 1.0
    if args.processes < 1:
        parser.error("--processes: at least 1")
    if args.processes > 1 and not args.db.startswith("postgres"):
        parser.error(
            "--processes N needs --db postgresql://…: an SQLite floor runs in one process "
            "(tablejack serve refuses a second one on the same file)"
        )

    raise_open_files()
    work = Path(tempfile.mkdtemp(prefix="tablejack-load-"))
    db = args.db or str(work / "load.db")
    if db.startswith("postgres") and "?schema=" not in db and not args.prepared:
        schema = f"load_{secrets.token_hex(4)}"
        import asyncpg  # type: ignore[import-untyped]

        connection = await asyncpg.connect(db.replace("+asyncpg", ""))
        await connection.execute(f"CREATE SCHEMA {schema}")
        await connection.close()
        db = f"{db}?schema={schema}"
    setup_started = time.perf_counter()
    cleared = 0
    if args.prepared:
        players = prepared_players(args.tables, args.terminals)
        cleared = await clear_locks(db)
    else:
        players = await prepare(db, args.tables, args.terminals)
    if args.prepare_only:
        print(
            json.dumps({"db": db, "tables": args.tables, "terminals": args.terminals})
            if args.json
            else db
        )
        return
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
    floor = args.processes > 1
    servers = [
        start_server(
            db,
            tables_file,
            keys,
            args.batch_ms,
            args.commit_ms,
            args.step_ms,
            args.step_wait_ms,
            work,
            floor=floor,
            number=number,
            metrics=human,
            lease_seconds=args.lease_seconds,
            server_src=args.server_src,
        )
        for number in range(args.processes)
    ]
    ports = [port for _, port in servers]
    try:
        await wait_until_up(servers, start_seconds(args.tables, args.processes))
        table_ids = [f"T{t:03d}" for t in range(args.tables)]
        process_of = (
            await shared_out(db, ports, args.tables) if floor else dict.fromkeys(table_ids, 0)
        )
        setup_seconds = time.perf_counter() - setup_started
        before_rounds = (await count_rounds(db))[0]
        sockets = [f"ws://127.0.0.1:{port}/ws" for port in ports]

        def urls_of(index: int) -> list[str]:
            """A bot's sockets: its table's process first (or, spread, the next in turn), then
            the others."""
            first = (
                process_of[table_ids[index // args.terminals]]
                if args.route == "owner"
                else index % len(sockets)
            )
            return sockets[first:] + sockets[:first]

        # each bot process plays whole tables, so each table's latencies are measured in one
        # process (perf_counter is the system's monotonic clock, the same in every process)
        groups = [
            [
                (index, token, urls_of(index))
                for index, (_name, token) in enumerate(players)
                if index // args.terminals % args.bot_processes == group
            ]
            for group in range(args.bot_processes)
        ]
        context = multiprocessing.get_context("spawn")
        begin = time.time() + 5.0  # every bot process starts playing then
        pids = [server.pid for server, _ in servers]
        with context.Pool(args.bot_processes) as pool:
            pending = pool.map_async(
                play_group,
                [
                    BotJob(
                        group,
                        args.terminals,
                        begin,
                        args.seconds,
                        args.warmup,
                        process_of,
                        human,
                        args.sign_ins,
                    )
                    for group in groups
                    if group
                ],
            )
            await asyncio.sleep(max(0.0, begin - time.time()))
            cpu_before = [cpu_seconds(pid) for pid in pids]
            memory = [[rss_mb(pid)] for pid in pids]
            warm: tuple[float, int] | None = None  # (server CPU, rounds) once warmed up
            syscalls: dict[str, Any] | None = None
            libraries: dict[str, Any] | None = None
            sockets_held: list[int | None] = [None] * len(ports)
            scraped_first: list[dict[str, float] | None] = [None] * len(ports)
            scraped_last: list[dict[str, float] | None] = [None] * len(ports)
            rss_warm: list[float] | None = None  # each process's memory once all connected
            while time.time() < begin + args.seconds:
                await asyncio.sleep(min(1.0, max(0.0, begin + args.seconds - time.time())))
                for samples_of, pid in zip(memory, pids, strict=True):
                    samples_of.append(rss_mb(pid))
                warmed = args.warmup < args.seconds and time.time() >= begin + args.warmup
                if warm is None and warmed:
                    warm_cpu = sum(cpu_seconds(pid) for pid in pids)
                    warm = (warm_cpu, sum((await count_complete(db)).values()))
                    if args.syscalls:
                        syscalls = await count_syscalls(db, pids[0], args.syscalls)
                    if args.perf:
                        libraries = await cpu_by_library(pids[0], args.perf)
                if human and warmed and rss_warm is None:
                    rss_warm = [samples_of[-1] for samples_of in memory]
                if human and warmed and time.time() < begin + args.seconds - 2:
                    # every terminal connected, none stopping yet: the sockets each holds
                    scraped = await asyncio.gather(
                        *(asyncio.to_thread(scrape, port) for port in ports)
                    )
                    for number, found in enumerate(scraped):
                        if found is not None:
                            scraped_first[number] = scraped_first[number] or found
                            scraped_last[number] = found
                    sockets_held = [
                        None if found is None or "sockets" not in found else int(found["sockets"])
                        for found in scraped
                    ]
            server_cpu = [cpu_seconds(pid) - b for pid, b in zip(pids, cpu_before, strict=True)]
            end_cpu = sum(cpu_seconds(pid) for pid in pids)
            results = pending.get()
        elapsed = args.seconds
        bots_cpu = sum(result["cpu_seconds"] for result in results)
        after_rounds, total, problems = await count_rounds(db)
        rounds_at = {t: after_rounds.get(t, 0) - before_rounds.get(t, 0) for t in table_ids}
        rounds = sum(rounds_at.values())
        samples: list[float] = sorted(s for result in results for s in result["latencies"])
        everything: list[float] = sorted(s for r in results for s in r["latencies_all"])
        cpu_total = sum(server_cpu)
        steady_cpu_ms = None  # after the connect storm: the CPU a round of play costs
        if warm is not None and sum(after_rounds.values()) > warm[1]:
            steady_rounds = sum(after_rounds.values()) - warm[1]
            steady_cpu_ms = round(1000 * (end_cpu - warm[0]) / steady_rounds, 1)

        by_minute: Counter[str] = sum(
            (Counter(result.get("drops_by_minute", {})) for result in results), Counter()
        )
        report: dict[str, Any] = {
            "tables": args.tables,
            "batch_ms": args.batch_ms,
            "commit_ms": args.commit_ms,
            "step_ms": args.step_ms,
            "step_wait_ms": args.step_wait_ms,
            "terminals_per_table": args.terminals,
            "seconds": round(elapsed, 1),
            "database": "postgresql" if db.startswith("postgres") else "sqlite",
            "processes": args.processes,
            "lease_seconds": args.lease_seconds,
            "rounds": rounds,
            "rounds_per_second": round(rounds / elapsed, 2),
            "decisions": sum(result["decisions"] for result in results),
            "wagers": sum(result["wagers"] for result in results),
            "state_messages": sum(result["state_messages"] for result in results),
            "steps_per_round": await steps_per_round(db),
            "bot_processes": args.bot_processes,
            "bots_started_late_s": round(max(float(r["late_seconds"]) for r in results), 2),
            "latency_samples": len(samples),
            "latency_p50_ms": percentile(samples, 50),
            "latency_p90_ms": percentile(samples, 90),
            "latency_p95_ms": percentile(samples, 95),
            "latency_p99_ms": percentile(samples, 99),
            "latency_mean_ms": round(1000 * statistics.fmean(samples), 1) if samples else None,
            "latency_warmup_s": args.warmup,
            "latency_p50_p99_ms_with_warmup": [
                percentile(everything, 50),
                percentile(everything, 99),
            ],
            "server_cpu_percent": round(100 * cpu_total / elapsed, 1),
            "server_cpu_ms_per_round": round(1000 * cpu_total / rounds, 1) if rounds else None,
            "server_cpu_ms_per_round_after_warmup": steady_cpu_ms,
            "socket_syscalls": syscalls,
            "cpu_by_library": libraries,
            "bots_cpu_percent": round(100 * bots_cpu / elapsed, 1),
            "bots_loop_lag_p50_p99_ms": [  # after the warm-up: the bots' share of the latency
                percentile(lags, 50),
                percentile(lags, 99),
            ]
            if (lags := sorted(lag for r in results for lag in r.get("loop_lags", [])))
            else None,
            "load_average_1min": round(os.getloadavg()[0], 2),
            "server_rss_mb_start": round(max(m[0] for m in memory), 1),
            "server_rss_mb_peak": round(max(max(m) for m in memory), 1),
            "server_rss_mb_end": round(max(m[-1] for m in memory), 1),
            "errors": sum(result["errors"] for result in results),
            "errors_after_warmup": (
                None
                if any(result["errors_after_warmup"] is None for result in results)
                else sum(result["errors_after_warmup"] for result in results)
            ),
            "reconnects": sum(result["reconnects"] for result in results),
            "closes_by_code": dict(  # the sockets the servers closed, by WebSocket close code
                sum((Counter(result.get("closes", {})) for result in results), Counter())
            ),
            "drops_by_reason": dict(  # every connection lost but the bots' blips, and why
                sum((Counter(result.get("drops", {})) for result in results), Counter())
            ),
            "drops_by_minute": [  # how those losses spread over the run, minute by minute
                by_minute.get(str(minute), 0)
                for minute in range(1 + max(map(int, by_minute), default=-1))
            ],
            "sum_of_all_accounts": total,
            "ledger_problems": [p for p in problems if not p.startswith("refused")],
            "top_refusals": [p for p in problems if p.startswith("refused")],
            **(floor_soak_report(memory) if args.soak else {}),
            "setup_seconds": round(setup_seconds, 1),
            "terminal_locks_cleared": cleared,
            "cpus": os.cpu_count(),
        }
        if human:
            deals = sorted(delay for r in results for _, delay in r["deals"])
            report.update(
                {
                    "pace": "human",
                    "wagering_seconds": args.wagering,
                    "countdown_seconds": args.countdown,
                    "sockets_held": sum(n or 0 for n in sockets_held),
                    "deal_samples": len(deals),
                    "countdown_end_to_cards_p50_ms": percentile(deals, 50),
                    "countdown_end_to_cards_p99_ms": percentile(deals, 99),
                    "sit_outs": sum(r["sit_outs"] for r in results),
                    "network_blips": sum(r["blips"] for r in results),
                }
            )
        if floor or human:
            per_process = []
            for number in range(args.processes):
                own = [t for t, p in process_of.items() if p == number]
                done = sum(rounds_at[t] for t in own)
                mine = (
                    sorted(s for r in results for s in r["latencies_by_process"].get(number, []))
                    if floor
                    else samples
                )
                per_process.append(
                    {
                        "process": number,
                        "tables": len(own),
                        "rounds": done,
                        "cpu_percent": round(100 * server_cpu[number] / elapsed, 1),
                        "cpu_ms_per_round": (
                            round(1000 * server_cpu[number] / done, 1) if done else None
                        ),
                        "latency_p50_ms": percentile(mine, 50),
                        "latency_p99_ms": percentile(mine, 99),
                        "rss_mb_peak": round(max(memory[number]), 1),
                        **(soak_report(memory[number]) if args.soak else {}),
                    }
                )
                if human:
                    dealt = sorted(
                        delay
                        for r in results
                        for table, delay in r["deals"]
                        if process_of[table] == number
                    )
                    per_process[-1].update(
                        {
                            "sockets_held": sockets_held[number],
                            **{  # after the warm-up: tables that changed hands, loop lags
                                f"{name}_after_warmup": grown
                                for name, grown in lease_growth(
                                    scraped_first[number], scraped_last[number]
                                ).items()
                            },
                            "socket_ends_after_warmup": ends_growth(
                                scraped_first[number], scraped_last[number]
                            ),
                            "rounds_per_second": round(done / elapsed, 2),
                            "rss_mb_end": round(memory[number][-1], 1),
                            "rss_mb_before_bots": round(memory[number][0], 1),
                            "rss_kb_per_socket": (  # what the sockets (and play) added
                                round(
                                    1024
                                    * (rss_warm[number] - memory[number][0])
                                    / sockets_held[number],
                                    1,
                                )
                                if rss_warm is not None and sockets_held[number]
                                else None
                            ),
                            "countdown_end_to_cards_p50_ms": percentile(dealt, 50),
                            "countdown_end_to_cards_p99_ms": percentile(dealt, 99),
                            "errors_after_warmup": sum(
                                1
                                for r in results
                                for table in r["error_tables"]
                                if process_of[table] == number
                            ),
                        }
                    )
            report["per_process"] = per_process
            report["route"] = args.route
        if args.json:
            print(json.dumps(report))
        else:
            for key, value in report.items():
                if key == "per_process":
                    for row in value:
                        print(f"{'process ' + str(row['process']):>24}: {row}")
                else:
                    print(f"{key:>24}: {value}")
    finally:
        for server, _ in servers:
            server.terminate()
        for server, _ in servers:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    asyncio.run(main())
