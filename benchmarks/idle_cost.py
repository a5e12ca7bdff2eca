"""What an idle table and an idle socket cost a serve process in memory.

Starts ``tablejack serve`` (one process, a fresh SQLite file, unsigned) with ``--tables`` idle
tables — dealt by hand (not automated), so no round opens — and reads its resident memory
(``VmRSS``) once it has settled; then ``--sockets`` terminals sign in and join those tables,
``--sign-ins`` at a time, and sit there; the memory is read again. Another serve with one table
gives the fixed cost, so:

* per idle table: (RSS with N tables − RSS with one) / (N − 1),
* per idle socket: (RSS with the sockets held − RSS before they connected) / sockets held.

    .venv/bin/python benchmarks/idle_cost.py --tables 500 --sockets 5000 --json

One sample each, on a machine that may run other work: memory is not disturbed by it as the
latencies are, but the allocator's arenas make each figure good to a few KB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import free_port, prepare, raise_open_files, rss_mb, scrape_sockets, wait_until_up
from tablejack.server.socket.botclient import HumanPace, run_bot

IDLE = HumanPace(sit_out=1.0, blip=0.0)
"""A terminal that only sits: it would sit every round out (none opens at a table dealt by
hand) and never loses its network."""


def tables_file(folder: Path, tables: int) -> Path:
    path = folder / f"tables-{tables}.toml"
    path.write_text(
        "\n".join(
            f'[[tables]]\nid = "T{n:03d}"\ngame = "hybrid"\nautomated = false\n'
            "require_procedures = false\n"
            for n in range(tables)
        )
    )
    return path


def start(db: Path, tables: Path, port: int) -> Any:
    import subprocess

    return subprocess.Popen(
        [
            sys.executable, "-c", "from tablejack.cli import main; main()", "serve",
            "--db", str(db), "--port", str(port), "--tables", str(tables), "--unsigned",
            "--metrics-from", "127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


async def settled_rss(pid: int, seconds: float = 3.0) -> float:
    """The process's RSS once it stops moving (the same to 0.1 MB over ``seconds``), in MB."""
    last = rss_mb(pid)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        await asyncio.sleep(seconds)
        now = rss_mb(pid)
        if abs(now - last) < 0.1:
            return now
        last = now
    return last


async def serve_idle(folder: Path, tables: int, terminals: int, sign_ins: int) -> dict[str, Any]:
    """One serve process with ``tables`` idle tables and ``terminals`` idle sockets at each."""
    db = folder / f"idle-{tables}.db"
    players = await prepare(str(db), tables, terminals)
    port = free_port()
    server = start(db, tables_file(folder, tables), port)
    try:
        await wait_until_up([(server, port)])
        before = await settled_rss(server.pid)
        held = None
        after = before
        if players:
            stop = asyncio.Event()
            gate = asyncio.Semaphore(sign_ins)
            bots = [
                asyncio.create_task(
                    run_bot(
                        f"ws://127.0.0.1:{port}/ws",
                        token,
                        f"EWT-{index:04d}",
                        f"T{index // terminals:03d}",
                        index % 3 + 1,
                        terminal_key=f"key-EWT-{index:04d}",
                        stop=stop,
                        seed=index,
                        pace=IDLE,
                        reconnect=True,
                        sign_ins=gate,
                    )
                )
                for index, (_name, token) in enumerate(players)
            ]
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                await asyncio.sleep(2)
                held = await asyncio.to_thread(scrape_sockets, port)
                if held is not None and held >= len(players):
                    break
            after = await settled_rss(server.pid)
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)
        return {"tables": tables, "rss_mb": round(before, 1), "sockets_held": held,
                "rss_mb_with_sockets": round(after, 1)}  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument("--sockets", type=int, default=5000, help="idle sockets in all")
    parser.add_argument("--sign-ins", type=int, default=32, help="terminals signing in at once")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    raise_open_files()
    random.seed(0)
    folder = Path(tempfile.mkdtemp(prefix="tablejack-idle-"))
    one = await serve_idle(folder, 1, 0, args.sign_ins)
    many = await serve_idle(folder, args.tables, -(-args.sockets // args.tables), args.sign_ins)
    held = many["sockets_held"] or 0
    report = {
        "tables": args.tables,
        "rss_mb_one_table": one["rss_mb"],
        "rss_mb_tables": many["rss_mb"],
        "kb_per_idle_table": round(
            1024 * (many["rss_mb"] - one["rss_mb"]) / max(1, args.tables - 1), 1
        ),
        "sockets_held": held,
        "rss_mb_with_sockets": many["rss_mb_with_sockets"],
        "kb_per_idle_socket": (
            round(1024 * (many["rss_mb_with_sockets"] - many["rss_mb"]) / held, 1) if held else None
        ),
    }
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:>22}: {value}")


if __name__ == "__main__":
    asyncio.run(main())
