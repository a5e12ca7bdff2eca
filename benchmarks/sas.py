"""SAS bench: terminals polled by SAS hosts while a floor of bot terminals plays.

Starts ``tablejack serve`` (a fresh SQLite file) with ``--tables`` automated hybrid tables of
``--terminals`` bot terminals each (as ``benchmarks/load.py``) and a SAS link on the first
``--sas-terminals`` terminals, one TCP endpoint each (one host per machine interface board).
Then, side by side in one run, the time is cut into windows of ``--window`` seconds,
alternately **off** (no host polls) and **on** (every host sends a general poll every
``--poll-ms`` ms — SAS's real-time event rate of 40 ms — and a meter long poll 2F of ten
meters every ``--meter-seconds``, the hosts' meter reads spread over that time, each followed
by the long polls that need the floor: 01, 02, 21 and 58, :data:`EFFECT_POLLS`). It reports:

* the hosts' answer times (from the poll sent to its answer read, CRC verified), general and
  meter polls and each of 01/02/21/58 (``sas_01_poll`` …), p50/p99/max, against SAS's reply
  window (:data:`REPLY_WINDOW_MS`), and the polls
  left unanswered (no answer, or one that did not verify, within the host's 1 s);
* the floor's decision-to-update latency p50/p99 of the decisions sent in the *off* windows
  and in the *on* windows (the same measurement as ``load.py``), and their ratio;
* the same, window by window (``windows``), so a drift over the run shows;
* the server process's CPU (percent of one core) in the *off* and the *on* windows: what the
  link costs the server, apart from what the hosts and bots cost the machine.

    PYTHONPATH=src .venv/bin/python benchmarks/sas.py --tables 50 --terminals 20 --seconds 120
    PYTHONPATH=src .venv/bin/python benchmarks/sas.py --tables 50 --terminals 2 --seconds 80
    PYTHONPATH=src .venv/bin/python benchmarks/sas.py --tables 6 --terminals 4 --seconds 40 --json

The hosts and the bots run on the same machine as the server (the hosts in one process, a
thread per endpoint; the bots in ``--bot-processes``), so on a small machine they compete with
it for the CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from load import cpu_seconds, free_port, percentile, prepare, wait_until_up
from tablejack.server.links.sas.framing import bcd
from tablejack.server.links.sas.poll import SasHost
from tablejack.server.socket.botclient import Timings, run_bot
from tablejack.store import Store, meters_report
from tablejack.store import links as store_links
from tablejack.store.meters_running import RunningMeters

REPLY_WINDOW_MS = 20.0
"""The time SAS gives a gaming machine to begin its answer: 20 ms, the figure of the SAS
descriptions the link was built from (docs/sas.md, "What the bench measured", says where it
comes from and how far it was checked)."""
METERS = bytes([0x00, 0x01, 0x02, 0x03, 0x05, 0x06, 0x0B, 0x0D, 0x0E, 0x24])
EFFECT_POLLS = (
    (0x01, b""),  # shutdown (disable)
    (0x02, b""),  # startup (enable)
    (0x21, b"\x34\x12"),  # ROM signature, seed 0x1234
    (0x58, b"\x01" + bcd(0, 8)),  # receive validation number (none waiting: status 80)
)
"""The long polls that need the floor, sent after each meter poll: their replies' p99."""


def on_window(at: float, begin: float, window: float) -> bool:
    """Whether the hosts poll at ``at`` (monotonic): odd windows from ``begin``."""
    return at >= begin and int((at - begin) // window) % 2 == 1


@dataclass(frozen=True)
class HostJob:
    endpoints: list[tuple[str, int]]
    begin: float
    seconds: float
    window: float
    poll_ms: float
    meter_seconds: float
    effects: bool = True
    """Send the long polls that need the floor (:data:`EFFECT_POLLS`) after each meter poll."""


def run_hosts(job: HostJob) -> dict[str, Any]:
    """A thread per endpoint, polling in the *on* windows; the answer times."""
    general: list[tuple[float, float]] = []
    meters: list[tuple[float, float]] = []
    effects: dict[int, list[float]] = {}
    unanswered: list[tuple[float, str]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def host(endpoint: str, address: int, offset: float) -> None:
        with SasHost(endpoint, timeout=1.0) as line:
            body = bcd(0, 2) + METERS
            next_meter = job.begin + offset
            while (now := time.monotonic()) < job.begin + job.seconds:
                if not on_window(now, job.begin, job.window):
                    time.sleep(0.01)
                    continue
                try:
                    sent = time.perf_counter()
                    line.general_poll(address)
                    took = time.perf_counter() - sent
                    with lock:
                        general.append((now, took))
                    if now >= next_meter:
                        next_meter = now + job.meter_seconds
                        sent = time.perf_counter()
                        line.variable(address, 0x2F, body)
                        took = time.perf_counter() - sent
                        with lock:
                            meters.append((now, took))
                        for command, data in EFFECT_POLLS if job.effects else ():
                            sent = time.perf_counter()
                            line.long_poll(address, command, data)
                            took = time.perf_counter() - sent
                            with lock:
                                effects.setdefault(command, []).append(took)
                except Exception as error:
                    with lock:
                        unanswered.append((now, type(error).__name__))
                        errors.append(repr(error))
                    line.drain()
                time.sleep(max(0.0, job.poll_ms / 1000 - (time.monotonic() - now)))

    spread = job.meter_seconds / max(1, len(job.endpoints))
    threads = [
        threading.Thread(target=host, args=(*entry, index * spread))
        for index, entry in enumerate(job.endpoints)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "general": general,
        "meters": meters,
        "effects": effects,
        "unanswered": unanswered,
        "errors": errors[:5],
    }


@dataclass(frozen=True)
class BotJob:
    group: list[tuple[int, str]]
    url: str
    terminals: int
    begin: float
    seconds: float


def play(job: BotJob) -> list[tuple[float, float]]:
    """One bot process: (sent, latency) of each decision and terminal."""
    return asyncio.run(_play(job))


async def _play(job: BotJob) -> list[tuple[float, float]]:
    gc.collect()
    gc.freeze()
    stop = asyncio.Event()
    timings = Timings()
    bots = [
        asyncio.create_task(
            run_bot(
                job.url,
                token,
                f"EWT-{index:04d}",
                f"T{index // job.terminals:03d}",
                index % 3 + 1,
                terminal_key=f"key-EWT-{index:04d}",
                stop=stop,
                timings=timings,
                seed=index,
            )
        )
        for index, token in job.group
    ]
    await asyncio.sleep(max(0.0, job.begin + job.seconds - time.monotonic()))
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    out = []
    for (table, round_id, seq), sent in timings.actions.items():
        for received in timings.arrivals.get((table, round_id), {}).values():
            for arrived_seq, at in received:
                if arrived_seq >= seq and at >= sent:
                    out.append((sent, at - sent))
                    break
    return out


def summary(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": percentile(ordered, 50),
        "p99_ms": percentile(ordered, 99),
        "max_ms": round(1000 * ordered[-1], 1) if ordered else None,
    }


async def meter_reads(db: str, terminals: list[str]) -> dict[str, Any]:
    """On the run's ledger, once the server has stopped: what a meters snapshot cost before the
    running meters (a full reading and the link's counts, :func:`meters_report.readings` and
    :func:`links.terminal_counts`), against the running meters' first read (the whole fold)
    and a read after it with nothing new (what each background refresh costs beyond the new
    rows); best of three."""
    store = await Store.open(db, migrate=False)
    try:
        full, first, again = [], [], []
        for _ in range(3):
            at = time.perf_counter()
            await meters_report.readings(store)
            await store_links.terminal_counts(store)
            full.append(time.perf_counter() - at)
            running = RunningMeters(store)
            at = time.perf_counter()
            await running.terminal_meters(terminals)
            first.append(time.perf_counter() - at)
            at = time.perf_counter()
            await running.terminal_meters(terminals)
            again.append(time.perf_counter() - at)
        rows = running.rows_folded
    finally:
        await store.close()
    return {
        "ledger_rows": rows,
        "full_reading_ms": round(1000 * min(full), 1),
        "running_first_read_ms": round(1000 * min(first), 1),
        "running_read_nothing_new_ms": round(1000 * min(again), 2),
        "full_over_running_read": round(min(full) / min(again), 1),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--terminals", type=int, default=20)
    parser.add_argument("--sas-terminals", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--poll-ms", type=float, default=40.0)
    parser.add_argument("--meter-seconds", type=float, default=1.0)
    parser.add_argument("--bot-processes", type=int, default=2)
    parser.add_argument(
        "--no-effects",
        action="store_true",
        help="no 01/02/21/58 after each meter poll (16 disables and enables a second cost the "
        "floor a lock-out write each: without them the floor's ratio is the link's own cost)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sas_count = min(args.sas_terminals, args.tables * args.terminals)

    work = Path(tempfile.mkdtemp(prefix="tablejack-sas-"))
    db = str(work / "sas.db")
    players = await prepare(db, args.tables, args.terminals)
    tables_file = work / "tables.toml"
    lines = []
    for table in range(args.tables):
        lines += [
            "[[tables]]",
            f'id = "T{table:03d}"',
            'game = "hybrid"',
            "automated = true",
            "require_procedures = false",
            "wagering_seconds = 1.0",
            "between_rounds_seconds = 0.5",
            "[tables.rules_override]",
            "countdown_seconds = 5",
            "",
        ]
    endpoints = []
    for index in range(sas_count):
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        endpoints.append((endpoint, 1))
        lines += ["[[sas]]", f'terminal = "EWT-{index:04d}"', f'endpoint = "{endpoint}"', ""]
    tables_file.write_text("\n".join(lines))
    port = free_port()
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
            "--unsigned",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        await wait_until_up([(server, port)])
        await asyncio.sleep(1.0)  # the SAS endpoints open after the tables start
        begin = time.monotonic() + 3.0 + args.warmup
        start = time.monotonic() + 3.0
        length = args.seconds + args.warmup
        context = multiprocessing.get_context("spawn")
        groups = [
            [(i, token) for i, (_, token) in enumerate(players) if i // args.terminals % n == g]
            for n in (args.bot_processes,)
            for g in range(n)
        ]
        with context.Pool(args.bot_processes + 1) as pool:
            hosts = pool.apply_async(
                run_hosts,
                (
                    HostJob(
                        endpoints,
                        begin,
                        args.seconds,
                        args.window,
                        args.poll_ms,
                        args.meter_seconds,
                        not args.no_effects,
                    ),
                ),
            )
            bots = pool.map_async(
                play,
                [
                    BotJob(group, f"ws://127.0.0.1:{port}/ws", args.terminals, start, length)
                    for group in groups
                    if group
                ],
            )
            cpu: dict[bool, list[float]] = {False: [], True: []}
            while not hosts.ready():
                at, used = time.monotonic(), cpu_seconds(server.pid)
                await asyncio.sleep(0.5)
                after, used_after = time.monotonic(), cpu_seconds(server.pid)
                mid = (at + after) / 2
                same = on_window(at, begin, args.window) == on_window(after, begin, args.window)
                if begin <= at and after < begin + args.seconds and same:
                    cpu[on_window(mid, begin, args.window)].append(
                        (used_after - used) / (after - at)
                    )
            polled = hosts.get()
            decided = [pair for result in bots.get() for pair in result]
    finally:
        server.terminate()
        server.wait(60)  # serve drains its tables between rounds first (30 s at most)
    reads = await meter_reads(db, [f"EWT-{index:04d}" for index in range(sas_count)])
    steady = [(sent, took) for sent, took in decided if begin <= sent < begin + args.seconds]
    off = [took for sent, took in steady if not on_window(sent, begin, args.window)]
    on = [took for sent, took in steady if on_window(sent, begin, args.window)]
    off_s, on_s = summary(off), summary(on)
    general = polled["general"]
    windows = []
    for index in range(int(args.seconds // args.window)):
        low, high = begin + index * args.window, begin + (index + 1) * args.window

        def inside(at: float, low: float = low, high: float = high) -> bool:
            return low <= at < high

        polls = summary([took for at, took in general if inside(at)])
        windows.append(
            {
                "window": index + 1,
                "sas": "on" if index % 2 else "off",
                "polls": polls["n"],
                "poll_p50_ms": polls["p50_ms"],
                "poll_p99_ms": polls["p99_ms"],
                "unanswered": sum(1 for at, _ in polled["unanswered"] if inside(at)),
                **{
                    f"floor_{key}": value
                    for key, value in summary([t for at, t in steady if inside(at)]).items()
                    if key != "max_ms"
                },
            }
        )
    report = {
        "tables": args.tables,
        "terminals_per_table": args.terminals,
        "sas_terminals": sas_count,
        "poll_ms": args.poll_ms,
        "meter_seconds": args.meter_seconds,
        "seconds": args.seconds,
        "window_s": args.window,
        "sas_general_poll": summary([took for _, took in general]),
        "sas_meter_poll": summary([took for _, took in polled["meters"]]),
        **{
            f"sas_{command:02X}_poll": summary(polled["effects"].get(command, []))
            for command, _ in EFFECT_POLLS
        },
        "sas_unanswered": len(polled["unanswered"]),
        "sas_late_polls": sum(
            1 for _, took in [*general, *polled["meters"]] if 1000 * took > REPLY_WINDOW_MS
        )
        + sum(
            1
            for times in polled["effects"].values()
            for took in times
            if 1000 * took > REPLY_WINDOW_MS
        ),
        "sas_errors": polled["errors"],
        "meter_reads": reads,
        "reply_window_ms": REPLY_WINDOW_MS,
        "floor_sas_off": off_s,
        "floor_sas_on": on_s,
        "server_cpu_percent_off": (
            round(100 * sum(cpu[False]) / len(cpu[False]), 1) if cpu[False] else None
        ),
        "server_cpu_percent_on": (
            round(100 * sum(cpu[True]) / len(cpu[True]), 1) if cpu[True] else None
        ),
        "floor_p99_on_over_off": (
            round(on_s["p99_ms"] / off_s["p99_ms"], 2) if off and on and off_s["p99_ms"] else None
        ),
    }
    report["windows"] = windows
    report["load_average_1min"] = round(os.getloadavg()[0], 1)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for key, value in report.items():
        if key != "windows":
            print(f"{key:>24}: {value}")
    print("window  sas  polls  poll p50  poll p99  unanswered  floor n  floor p50  floor p99")
    for row in windows:
        print(
            f"{row['window']:>6}  {row['sas']:>3}  {row['polls']:>5}  {row['poll_p50_ms']!s:>8}"
            f"  {row['poll_p99_ms']!s:>8}  {row['unanswered']:>10}  {row['floor_n']:>7}"
            f"  {row['floor_p50_ms']!s:>9}  {row['floor_p99_ms']!s:>9}"
        )


if __name__ == "__main__":
    asyncio.run(main())
