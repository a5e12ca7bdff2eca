"""The WebSocket protocol ``tablejack serve`` runs (:mod:`tablejack.server.socket.transport`):
uvicorn's sans-I/O protocol, whose reading pauses only once ``PAUSE_AT`` messages wait unread.
A burst far past that is still answered whole, in order, on a socket that stays open."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from tablejack.server.socket.transport import (
    ABORT,
    PAUSE_AT,
    SEND_TEXTS,
    WRITABLE,
    event_loop,
    protocol_class,
)
from tests.support.serve import free_port, start_serve, wait_listening


@pytest.mark.skipif(sys.platform == "win32", reason="the server extra has no uvloop on Windows")
def test_serve_runs_on_uvloop_where_it_is_installed() -> None:
    """The server extra installs uvloop (not on Windows), and serve's event loop is then
    uvloop's: a fresh install that lacks it fails here rather than quietly running slower."""
    assert event_loop() == "uvloop"


def test_the_installed_uvicorn_gets_the_buffered_protocol() -> None:
    """The hooks the class uses are in the installed uvicorn (an upgrade that drops them
    fails here rather than quietly giving back a pause per message)."""
    chosen = protocol_class()
    assert isinstance(chosen, type) and issubclass(chosen, WebSocketsSansIOProtocol)
    assert chosen is not WebSocketsSansIOProtocol
    assert hasattr(WebSocketsSansIOProtocol, "send_receive_event_to_app")


@pytest.mark.slow
def test_a_burst_past_the_pause_is_answered_whole_and_in_order(tmp_path: Path) -> None:
    """A supervisor's socket sends 6 × ``PAUSE_AT`` pings without reading: each gets exactly
    one answer, a pong naming it (in the order sent) or the gate's rate-limit refusal, and the
    socket still answers after."""
    from websockets.sync.client import connect

    port = free_port()
    log = tmp_path / "serve.log"
    server = start_serve(
        ["--demo", "--unsigned", "--db", str(tmp_path / "floor.sqlite"), "--port", str(port)],
        log,
    )
    try:
        wait_listening(server, port, log)
        maps = Path(f"/proc/{server.pid}/maps")
        if maps.exists():  # Linux: serve runs on uvloop (its compiled loop is mapped in)
            assert "uvloop" in maps.read_text()
        with connect(f"ws://127.0.0.1:{port}/ws") as socket:
            socket.send(json.dumps({"type": "hello", "protocol": 2, "token": "demo-supervisor"}))
            assert json.loads(socket.recv(timeout=10))["type"] == "welcome"
            count = 6 * PAUSE_AT
            for n in range(1, count + 1):
                socket.send(json.dumps({"type": "ping", "id": f"p-{n}"}))
            pongs: list[str] = []
            refused = 0
            while len(pongs) + refused < count:
                message = json.loads(socket.recv(timeout=10))
                if message["type"] == "pong":
                    pongs.append(message["id"])
                elif message["type"] == "error":
                    assert message["code"] == "rate_limited", message
                    refused += 1
            assert pongs[:PAUSE_AT] == [f"p-{n}" for n in range(1, PAUSE_AT + 1)]
            assert pongs == sorted(pongs, key=lambda name: int(name[2:]))
            assert len(set(pongs)) == len(pongs)
            time.sleep(0.5)  # the rate limit's bucket refills (20 messages a second)
            socket.send(json.dumps({"type": "ping", "id": "after"}))
            assert json.loads(socket.recv(timeout=10)) == {"type": "pong", "id": "after"}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


class _Transport(asyncio.Transport):
    """A transport that keeps what is written (the protocol's side of a socket)."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5555)}.get(name, default)

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_app_sees_whether_the_socket_takes_frames() -> None:
    """The protocol puts its ``writable`` event in the scope's extensions (the outboxes skip a
    socket whose transport is full): set after the handshake, cleared when the transport's
    buffer passes its high-water mark (``pause_writing``), set again when it drains. Beside it
    is the transport's ``abort`` (a socket too far behind is dropped with it)."""
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    async def main() -> list[bool]:
        chosen = protocol_class()
        seen: dict[str, Any] = {}

        async def app(scope: Any, receive: Any, send: Any) -> None:
            seen["writable"] = scope["extensions"].get(WRITABLE)
            seen["abort"] = scope["extensions"].get(ABORT)
            await receive()
            await send({"type": "websocket.accept"})

        config = Config(app=app, ws=chosen, log_level="warning")
        config.load()
        protocol = chosen(config=config, server_state=ServerState(), app_state={})
        protocol.connection_made(_Transport())
        protocol.data_received(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        await asyncio.sleep(0.05)
        writable = seen["writable"]
        states = [writable is protocol.writable, writable.is_set()]
        states.append(seen["abort"] == protocol.transport.abort)
        protocol.pause_writing()
        states.append(writable.is_set())
        protocol.resume_writing()
        states.append(writable.is_set())
        return states

    assert asyncio.run(main()) == [True, True, True, False, True]


def _text_frames(data: bytes) -> list[str]:
    """The payloads of unmasked text frames a server wrote (RFC 6455 5.2), one after another."""
    texts = []
    while data:
        assert data[0] == 0x81  # FIN, text
        length, start = data[1], 2
        if length == 126:
            length, start = int.from_bytes(data[2:4], "big"), 4
        texts.append(data[start : start + length].decode())
        data = data[start + length :]
    return texts


def test_several_frames_leave_in_one_write() -> None:
    """``send_texts`` in the scope writes every text given as a frame of its own in ONE write
    to the transport, readable by any client; once the app sent its close it writes nothing
    and answers False."""
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    async def main() -> tuple[list[bytes], list[bool], int]:
        chosen = protocol_class()
        seen: dict[str, Any] = {}

        async def app(scope: Any, receive: Any, send: Any) -> None:
            seen["send_texts"] = scope["extensions"].get(SEND_TEXTS)
            await receive()
            await send({"type": "websocket.accept"})
            seen["accepted"] = True
            await asyncio.sleep(0.05)
            await send({"type": "websocket.close", "code": 1000})

        config = Config(app=app, ws=chosen, log_level="warning")
        config.load()
        protocol = chosen(config=config, server_state=ServerState(), app_state={})
        transport = _Transport()
        protocol.connection_made(transport)
        protocol.data_received(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        await asyncio.sleep(0.01)
        assert seen.get("accepted")
        before = len(transport.written)
        answers = [seen["send_texts"](["ack", "x" * 200, '{"type":"state"}'])]
        after_send = len(transport.written)
        await asyncio.sleep(0.1)  # the app sends its close
        closed_at = len(transport.written)
        answers.append(seen["send_texts"](["too late"]))
        assert len(transport.written) == closed_at
        return transport.written[before:after_send], answers, after_send - before

    writes, answers, count = asyncio.run(main())
    assert count == 1
    assert _text_frames(writes[0]) == ["ack", "x" * 200, '{"type":"state"}']
    assert answers == [True, False]


def test_a_players_welcome_lists_the_terminals_table_alone_and_a_consoles_every_table(
    make_client: Any, kit: Any
) -> None:
    """The floor's list in each player's ``welcome`` grew with the floor (175 KB for 500 tables
    at each of 10,000 sign-ins): a player at a terminal is shown its table alone; a console
    every table."""
    client = make_client([kit.hybrid_table("A1"), kit.hybrid_table("A2"), kit.hybrid_table("A3")])
    with client.websocket_connect("/ws") as socket:
        socket.send_json(kit.hello(client, "ann", "EWT-2", "A2"))
        welcome = socket.receive_json()
    assert welcome["type"] == "welcome"
    assert [table["id"] for table in welcome["tables"]] == ["A2"]
    with client.websocket_connect("/ws") as socket:
        socket.send_json(kit.hello(client, "super", "console-1", None))
        welcome = socket.receive_json()
    assert sorted(table["id"] for table in welcome["tables"]) == ["A1", "A2", "A3"]
