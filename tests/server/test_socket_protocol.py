"""The WebSocket protocol ``tablejack serve`` runs (:mod:`tablejack.server.socket_protocol`):
uvicorn's sans-I/O protocol, whose reading pauses only once ``PAUSE_AT`` messages wait unread.
A burst far past that is still answered whole, in order, on a socket that stays open."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from tablejack.server.socket_protocol import PAUSE_AT, protocol_class
from tablejack.server.testing import free_port, start_serve, wait_listening


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
