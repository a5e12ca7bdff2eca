"""Benchmark: the floor under the table server's CPU per round — what a WebSocket server on the
same stack spends on the traffic of a round alone, with no game, store, views or checks.

The server is uvicorn with ``tablejack serve``'s WebSocket protocol
(:func:`tablejack.server.socket.transport.protocol_class`, frames written with its one-write
``tablejack.send_texts``) and a bare ASGI app, no FastAPI: each table has ``--terminals``
sockets; a round is ``--updates`` updates, each a text of ``--frame-bytes`` (built per
terminal, as the real views differ per player) sent to every socket of the table, after which
``--asks`` of the table's terminals each send one action, parsed as JSON and answered with an
acknowledgement frame; when the last has answered, the next update follows ``--update-ms``
later. The defaults are the traffic ``benchmarks/load.py`` measures at 50 × 20 on a version A
table: about 7 updates a round of about 1.7 KB per terminal (the views of 20 players average
1.54 KB plus the state's head), and about 54 messages from the terminals a round, a round about
every 2 s at each table.

The clients run in ``--client-processes`` processes (websockets' asyncio client, as the load
benchmark's bots) on the same machine. Reported: rounds per second, the server's CPU per round
(after ``--warmup`` seconds), its frames per round, and its resident memory.

    .venv/bin/python benchmarks/transport_floor.py [--tables 50] [--terminals 20] [--seconds 30]

What the server does here is a lower bound of what ``tablejack serve`` must do for the same
traffic on this stack: read each message off its socket through uvicorn's protocol and
answer it, and write each update to each socket. The difference to the load benchmark's CPU
per round is what the game, the store, the views, the gate and the FastAPI routing cost.

``--server picows`` runs the same floor on picows, a WebSocket server whose framing and parsing
are compiled, on the same event loop: a peer to measure the stack against (``pip install
picows`` into the environment first; it is not a tablejack dependency).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

# -- the server ----------------------------------------------------------------------------


class Table:
    """One table's sockets and the round it plays (see the module)."""

    def __init__(self, name: str, floor: Floor) -> None:
        self.name = name
        self.floor = floor
        self.sockets: dict[int, Any] = {}  # seat: its send_texts
        self.update = 0
        self.asked: set[int] = set()
        self.seq = 0

    def send_update(self) -> None:
        floor = self.floor
        self.seq += 1
        self.update += 1
        first = self.seq * floor.asks % floor.terminals
        self.asked = {(first + k) % floor.terminals for k in range(floor.asks)}
        asked = json.dumps(sorted(self.asked))
        for seat, send_texts in self.sockets.items():
            text = (
                f'{{"type":"state","table":"{self.name}","seq":{self.seq},"seat":{seat},'
                f'"ask":{asked},"view":"{floor.padding}"}}'
            )
            send_texts([text])
            floor.frames += 1

    def answered(self, seat: int, send_texts: Any, command: dict[str, Any]) -> None:
        floor = self.floor
        send_texts([f'{{"type":"ack","id":{json.dumps(command["id"])},"seq":{self.seq}}}'])
        floor.frames += 1
        self.asked.discard(seat)
        if self.asked:
            return
        if self.update >= floor.updates:
            self.update = 0
            floor.rounds += 1
        asyncio.get_running_loop().call_later(floor.update_seconds, self.send_update)


class Floor:
    """The bare ASGI app: ``/ws?table=T&seat=S`` and ``GET /count``."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.terminals = args.terminals
        self.updates = args.updates
        self.asks = args.asks
        self.update_seconds = args.update_ms / 1000
        head = len('{"type":"state","table":"T000","seq":100,"seat":10,"ask":[],"view":""}')
        self.padding = "x" * max(0, args.frame_bytes - head - 4 * args.asks)
        self.tables: dict[str, Table] = {}
        self.rounds = 0
        self.frames = 0
        self.counts = args.counts

    def report_on_signal(self, path: str) -> None:
        """On SIGUSR1, write the rounds and frames so far to ``path`` (the benchmark's
        reading, exact at the moment it asks)."""

        def write() -> None:
            Path(path + ".part").write_text(
                json.dumps({"rounds": self.rounds, "frames": self.frames})
            )
            os.replace(path + ".part", path)

        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, write)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                self.report_on_signal(self.counts)
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "websocket":
            await self.socket(scope, receive, send)

    async def socket(self, scope: Any, receive: Any, send: Any) -> None:
        from tablejack.server.socket.transport import SEND_TEXTS

        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        send_texts = scope["extensions"][SEND_TEXTS]
        table, seat = self.join(scope["query_string"].decode(), send_texts)
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                table.sockets.pop(seat, None)
                return
            self.received(table, seat, send_texts, message["text"])

    def join(self, query: str, send_texts: Any) -> tuple[Table, int]:
        """A terminal's socket at its table (``table=T&seat=S``); the table's first update
        goes once all its terminals are there."""
        asked = parse_qs(query)
        name, seat = asked["table"][0], int(asked["seat"][0])
        table = self.tables.setdefault(name, Table(name, self))
        table.sockets[seat] = send_texts
        if len(table.sockets) == self.terminals:
            table.send_update()
        return table, seat

    def received(self, table: Table, seat: int, send_texts: Any, text: str) -> None:
        """A terminal's message: parsed, and answered when its table asked for it."""
        command = json.loads(text)
        if seat in table.asked:
            table.answered(seat, send_texts, command)


def serve(args: argparse.Namespace) -> None:
    """The server process (``--serve PORT``): uvicorn on the same protocol and event loop as
    ``tablejack serve``, or (``--server picows``) picows, a WebSocket server whose framing and
    parsing are compiled (Cython), on the same event loop, as a peer to measure against."""
    import gc

    gc.freeze()  # as tablejack serve does
    gc.set_threshold(20_000, 20, 100)
    from tablejack.server.socket.transport import event_loop, protocol_class

    if args.server == "picows":
        serve_picows(args, event_loop())
        return
    import uvicorn

    uvicorn.run(
        Floor(args),
        host="127.0.0.1",
        port=args.serve,
        log_level="warning",
        ws=protocol_class(),
        ws_per_message_deflate=False,
        loop=event_loop(),
    )


def serve_picows(args: argparse.Namespace, loop: str) -> None:
    """The same floor on picows (``pip install picows`` first: not a tablejack dependency)."""
    from picows import WSListener, WSMsgType, ws_create_server  # type: ignore[import-not-found]

    floor = Floor(args)

    class Terminal(WSListener):  # type: ignore[misc]
        def __init__(self, query: str) -> None:
            self.query = query

        def on_ws_connected(self, transport: Any) -> None:
            def send_texts(texts: list[str]) -> bool:
                for text in texts:
                    transport.send(WSMsgType.TEXT, text.encode())
                return True

            self.send_texts = send_texts
            self.table, self.seat = floor.join(self.query, send_texts)

        def on_ws_frame(self, transport: Any, frame: Any) -> None:
            if frame.msg_type == WSMsgType.TEXT:
                floor.received(
                    self.table, self.seat, self.send_texts, frame.get_payload_as_utf8_text()
                )

        def on_ws_disconnected(self, transport: Any) -> None:
            self.table.sockets.pop(self.seat, None)

    async def main() -> None:
        floor.report_on_signal(floor.counts)
        server = await ws_create_server(
            lambda request: Terminal(request.path.decode().partition("?")[2]),
            "127.0.0.1",
            args.serve,
        )
        async with server:
            await server.serve_forever()

    if loop == "uvloop":
        import uvloop

        uvloop.run(main())
    else:
        asyncio.run(main())


# -- the clients ---------------------------------------------------------------------------


def run_clients(job: tuple[int, list[str], int, float]) -> int:
    """One client process: every terminal of ``tables``, until ``until`` (time.time)."""
    port, tables, terminals, until = job
    return asyncio.run(_clients(port, tables, terminals, until))


async def _clients(port: int, tables: list[str], terminals: int, until: float) -> int:
    from websockets.asyncio.client import connect

    sent = 0

    async def terminal(table: str, seat: int) -> None:
        nonlocal sent
        url = f"ws://127.0.0.1:{port}/ws?table={table}&seat={seat}"
        async with connect(url, max_queue=None, open_timeout=30) as socket:
            async for raw in socket:
                message = json.loads(raw)
                if message["type"] == "state" and seat in message["ask"]:
                    sent += 1
                    await socket.send(json.dumps({"type": "action", "id": f"{seat}-{sent}"}))
                if time.time() >= until:
                    return

    runs = [terminal(table, seat) for table in tables for seat in range(terminals)]
    await asyncio.gather(*runs, return_exceptions=True)
    return sent


def count(server: subprocess.Popen[bytes], path: Path) -> dict[str, int]:
    """The server's rounds and frames so far (it writes them when signalled)."""
    path.unlink(missing_ok=True)
    server.send_signal(signal.SIGUSR1)
    deadline = time.time() + 10
    while not path.exists():
        if time.time() > deadline:
            raise SystemExit("the server did not report its counts")
        time.sleep(0.01)
    return dict(json.loads(path.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--terminals", type=int, default=20)
    parser.add_argument("--updates", type=int, default=7, help="updates a round")
    parser.add_argument("--asks", type=int, default=8, help="terminals answering each update")
    parser.add_argument("--frame-bytes", type=int, default=1700)
    parser.add_argument("--update-ms", type=float, default=250.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--server",
        choices=("tablejack", "picows"),
        default="tablejack",
        help="uvicorn on serve's protocol (default), or picows to measure against",
    )
    parser.add_argument("--serve", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--counts", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return
    from load import cpu_seconds, free_port, rss_mb, wait_until_up  # the load benchmark's

    port = free_port()
    counts = Path(tempfile.mkdtemp()) / "counts.json"
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--counts", str(counts), *sys.argv[1:]],
        stdout=subprocess.DEVNULL,
    )
    try:
        asyncio.run(wait_until_up([(server, port)]))
        names = [f"T{t:03d}" for t in range(args.tables)]
        until = time.time() + args.warmup + args.seconds + 2
        jobs = [
            (port, names[group :: args.client_processes], args.terminals, until)
            for group in range(args.client_processes)
        ]
        context = multiprocessing.get_context("spawn")
        with context.Pool(args.client_processes) as pool:
            pending = pool.map_async(run_clients, jobs)
            time.sleep(args.warmup)
            before, cpu_before = count(server, counts), cpu_seconds(server.pid)
            time.sleep(args.seconds)
            after, cpu_after = count(server, counts), cpu_seconds(server.pid)
            memory = rss_mb(server.pid)
            pending.get()
    finally:
        server.terminate()
        server.wait(timeout=20)
    rounds = after["rounds"] - before["rounds"]
    frames = after["frames"] - before["frames"]
    cpu = cpu_after - cpu_before
    report = {
        "server": args.server,
        "tables": args.tables,
        "terminals_per_table": args.terminals,
        "updates_per_round": args.updates,
        "messages_in_per_round": args.asks * args.updates,
        "frame_bytes": args.frame_bytes,
        "seconds": args.seconds,
        "rounds": rounds,
        "rounds_per_second": round(rounds / args.seconds, 2),
        "frames_per_round": round(frames / rounds, 1) if rounds else None,
        "server_cpu_percent": round(100 * cpu / args.seconds, 1),
        "server_cpu_ms_per_round": round(1000 * cpu / rounds, 2) if rounds else None,
        "server_rss_mb": round(memory, 1),
    }
    if args.json:
        print(json.dumps(report))
        return
    for key, value in report.items():
        print(f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
