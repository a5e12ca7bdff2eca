"""A connection's outbox and the process's one sending task (:class:`Outboxes`): each socket
gets its messages in the order they were pushed, a socket that falls behind by
``OUTBOX_LIMIT`` messages is closed as too slow (dropped at once when its transport is full),
and a socket that went away takes nothing more."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from tablejack.server.floor.floor import OUTBOX_LIMIT, Connection, Outboxes


class FakeSocket:
    """What the outbox sees of a socket: ``send`` and ``close``."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.sent: list[str] = []
        self.closed: tuple[int, str] | None = None
        self.fail_after = fail_after

    async def send(self, text: str) -> None:
        if self.fail_after is not None and len(self.sent) >= self.fail_after:
            raise ConnectionResetError("gone")
        self.sent.append(text)

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


def _connection(name: str) -> Connection:
    return Connection(role="player", subject=name, terminal=f"EWT-{name}")


def test_each_socket_gets_its_messages_in_order() -> None:
    """Two sockets, messages pushed to both in turn (text and dicts, one before the socket
    was attached): each gets its own, in order, dicts encoded as JSON."""

    async def main() -> tuple[list[str], list[str]]:
        outboxes = Outboxes()
        ann, bob = _connection("ann"), _connection("bob")
        ann.push("early")
        sockets = FakeSocket(), FakeSocket()
        ann.attach(sockets[0].send, sockets[0].close, outboxes)
        bob.attach(sockets[1].send, sockets[1].close, outboxes)
        for n in range(5):
            ann.push(f"a{n}")
            bob.push({"type": "seq", "seq": n})
        await asyncio.sleep(0)
        ann.push("last")
        await asyncio.sleep(0)
        return sockets[0].sent, sockets[1].sent

    ann, bob = asyncio.run(main())
    assert ann == ["early", "a0", "a1", "a2", "a3", "a4", "last"]
    assert [json.loads(text)["seq"] for text in bob] == [0, 1, 2, 3, 4]


def test_a_socket_that_falls_behind_is_closed_as_too_slow() -> None:
    """``OUTBOX_LIMIT`` + 10 messages pushed before the sending task runs: the first
    ``OUTBOX_LIMIT`` - 1 are sent, then the socket is closed with 1008 ``too slow``, and what
    is pushed after goes nowhere."""

    async def main() -> tuple[FakeSocket, Connection]:
        socket = FakeSocket()
        connection = _connection("ann")
        connection.attach(socket.send, socket.close, Outboxes())
        for n in range(OUTBOX_LIMIT + 10):
            connection.push(f"m{n}")
        await asyncio.sleep(0)
        connection.push("after")
        await asyncio.sleep(0)
        return socket, connection

    socket, connection = asyncio.run(main())
    assert socket.sent == [f"m{n}" for n in range(OUTBOX_LIMIT - 1)]
    assert socket.closed == (1008, "too slow")
    assert connection.overflowed and connection.ended.is_set()
    assert not connection.outbox


def test_a_socket_that_went_away_takes_nothing_more() -> None:
    """A send fails after two messages: the connection ends (its reader notices the socket
    is gone) and later pushes are dropped; a push of None closes with 1008 ``closing``."""

    async def main() -> tuple[FakeSocket, Connection, FakeSocket]:
        outboxes = Outboxes()
        broken = FakeSocket(fail_after=2)
        gone = _connection("ann")
        gone.attach(broken.send, broken.close, outboxes)
        for n in range(4):
            gone.push(f"m{n}")
        await asyncio.sleep(0)
        gone.push("after")
        closing = FakeSocket()
        bob = _connection("bob")
        bob.attach(closing.send, closing.close, outboxes)
        bob.push("bye")
        bob.push(None)
        await asyncio.sleep(0)
        return broken, gone, closing

    broken, gone, closing = asyncio.run(main())
    assert broken.sent == ["m0", "m1"] and broken.closed is None
    assert gone.ended.is_set() and not gone.outbox
    assert closing.sent == ["bye"] and closing.closed == (1008, "closing")


def test_a_socket_that_does_not_read_holds_up_no_other() -> None:
    """Ann's transport is full (its writable event cleared, as uvicorn clears it over the
    buffer's high-water mark): bob still gets every message at once; ann's wait in her
    outbox and go out, in order, when her transport drains; had she fallen
    ``OUTBOX_LIMIT`` behind, she would be closed as too slow."""

    async def main() -> tuple[list[str], list[str], list[str], FakeSocket, Connection]:
        outboxes = Outboxes()
        full = asyncio.Event()
        ann_socket, bob_socket, eve_socket = FakeSocket(), FakeSocket(), FakeSocket()
        ann, bob, eve = _connection("ann"), _connection("bob"), _connection("eve")
        ann.attach(ann_socket.send, ann_socket.close, outboxes, full)
        drained = asyncio.Event()
        drained.set()
        bob.attach(bob_socket.send, bob_socket.close, outboxes, drained)
        eve.attach(eve_socket.send, eve_socket.close, outboxes, full)
        for n in range(3):
            ann.push(f"a{n}")
            bob.push(f"b{n}")
        await asyncio.sleep(0)
        ann_before = list(ann_socket.sent)
        bob_sent = list(bob_socket.sent)
        full.set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        full.clear()
        for n in range(OUTBOX_LIMIT + 1):
            eve.push(f"e{n}")
        await asyncio.sleep(0)
        return ann_before, bob_sent, list(ann_socket.sent), eve_socket, eve

    ann_before, bob_sent, ann_after, eve_socket, eve = asyncio.run(main())
    assert ann_before == [] and bob_sent == ["b0", "b1", "b2"]
    assert ann_after == ["a0", "a1", "a2"]
    assert eve_socket.sent == [] and eve.overflowed
    assert list(eve.outbox)[-1] is None and len(eve.outbox) == OUTBOX_LIMIT


def test_a_socket_whose_transport_stays_full_is_dropped_at_once() -> None:
    """An attacker's terminal that reads nothing: its transport is full (the writable event
    cleared), so a close frame could never reach it either. The message that overflows its
    outbox drops the connection at once (``abort``, called once), nothing is kept for it, and
    a later push is ignored; a socket whose transport still takes frames gets the 1008 close
    as before."""

    async def main() -> tuple[list[str], Connection, FakeSocket]:
        outboxes = Outboxes()
        full = asyncio.Event()
        aborted: list[str] = []
        socket = FakeSocket()
        eve = _connection("eve")
        eve.attach(socket.send, socket.close, outboxes, full, lambda: aborted.append("eve"))
        for n in range(OUTBOX_LIMIT + 5):
            eve.push(f"e{n}")
        await asyncio.sleep(0)
        full.set()  # what uvicorn does when the dropped connection is lost
        await asyncio.sleep(0)
        eve.push("after")
        return aborted, eve, socket

    aborted, eve, socket = asyncio.run(main())
    assert aborted == ["eve"]
    assert eve.ended.is_set() and eve.overflowed and not eve.outbox
    assert eve.send is None and eve.abort is None
    assert socket.sent == [] and socket.closed is None


def test_a_client_that_reads_nothing_is_dropped_and_frees_its_socket() -> None:
    """The same over a real socket: uvicorn serving the server's protocol, and a client with a
    4 KiB receive buffer that completes the WebSocket handshake and then reads nothing, while
    the app pushes 1 KiB frames to it through its outbox. Once the transport is full and the
    outbox overflows, the server drops the connection: the app's connection ends within
    seconds, the app sees the socket disconnect, and the client, reading at last, gets what
    the kernel's buffers held and then the end of its connection (a timeout would fail)."""
    import socket as sockets
    import threading

    import uvicorn

    from tablejack.server.socket.transport import ABORT, WRITABLE, protocol_class
    from tests.support.serve import free_port

    port = free_port()
    outcome: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()
        await send({"type": "websocket.accept"})

        async def send_text(text: str) -> None:
            await send({"type": "websocket.send", "text": text})

        async def close(code: int, reason: str) -> None:
            await send({"type": "websocket.close", "code": code, "reason": reason})

        extensions = scope["extensions"]
        connection = _connection("eve")
        connection.attach(
            send_text, close, Outboxes(), extensions.get(WRITABLE), extensions.get(ABORT)
        )
        frame = "x" * 1024
        started = time.monotonic()
        while not connection.ended.is_set() and time.monotonic() - started < 30:
            for _ in range(64):
                connection.push(frame)
            await asyncio.sleep(0.001)
        outcome["seconds"] = time.monotonic() - started
        outcome["ended"] = connection.ended.is_set()
        outcome["overflowed"] = connection.overflowed
        outcome["after"] = (await asyncio.wait_for(receive(), 10))["type"]

    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, ws=protocol_class(), log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM) as client:
            client.setsockopt(sockets.SOL_SOCKET, sockets.SO_RCVBUF, 4096)
            client.connect(("127.0.0.1", port))
            client.sendall(
                b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n"
            )
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += client.recv(1)
            assert answer.startswith(b"HTTP/1.1 101"), answer
            deadline = time.monotonic() + 30
            while "after" not in outcome and time.monotonic() < deadline:
                time.sleep(0.05)
            assert outcome.get("ended") is True and outcome.get("overflowed") is True, outcome
            assert outcome["after"] == "websocket.disconnect"
            assert outcome["seconds"] < 10
            held = 0
            client.settimeout(5)
            with contextlib.suppress(ConnectionResetError):  # or the end of the stream
                while chunk := client.recv(65536):
                    held += len(chunk)
            assert 0 < held < 16 * 1024 * 1024
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class BatchSocket(FakeSocket):
    """A socket whose server sends several frames in one write (``send_texts``)."""

    def __init__(self, gone_after: int | None = None) -> None:
        super().__init__()
        self.writes: list[list[str]] = []
        self.gone_after = gone_after

    def send_texts(self, texts: list[str]) -> bool:
        if self.gone_after is not None and len(self.writes) >= self.gone_after:
            return False
        self.writes.append(list(texts))
        return True


def test_the_messages_waiting_together_leave_in_one_write() -> None:
    """With the server's ``send_texts``, what waits in an outbox at the sending's turn (an
    acknowledgement and the state after it) leaves in one write, dicts encoded, in order; a
    close in the middle ends the write there and closes the socket, and nothing goes through
    the one-frame ``send``."""

    async def main() -> BatchSocket:
        socket = BatchSocket()
        connection = _connection("ann")
        connection.attach(socket.send, socket.close, Outboxes(), send_texts=socket.send_texts)
        connection.push({"type": "ack", "id": "c1"})
        connection.push("state-1")
        await asyncio.sleep(0)
        connection.push("state-2")
        connection.push("state-3")
        connection.push(None)
        connection.push("after the close")
        await asyncio.sleep(0)
        return socket

    socket = asyncio.run(main())
    assert socket.writes == [['{"type":"ack","id":"c1"}', "state-1"], ["state-2", "state-3"]]
    assert socket.sent == []
    assert socket.closed == (1008, "closing")


def test_a_socket_that_takes_no_more_writes_ends_the_sending() -> None:
    """``send_texts`` answers False (the connection is closing): the connection is detached
    and what is pushed later goes nowhere."""

    async def main() -> tuple[BatchSocket, Connection]:
        socket = BatchSocket(gone_after=1)
        connection = _connection("ann")
        connection.attach(socket.send, socket.close, Outboxes(), send_texts=socket.send_texts)
        connection.push("one")
        await asyncio.sleep(0)
        connection.push("two")
        await asyncio.sleep(0)
        connection.push("three")
        await asyncio.sleep(0)
        return socket, connection

    socket, connection = asyncio.run(main())
    assert socket.writes == [["one"]]
    assert connection.ended.is_set() and connection.send is None and not connection.outbox
