"""The WebSocket protocol ``tablejack serve`` gives uvicorn: uvicorn's sans-I/O protocol, whose
reading pauses only when :data:`PAUSE_AT` messages wait unread.

uvicorn pauses a connection's reading after every message it receives and resumes it at the
application's next read: two ``epoll_ctl`` system calls per message, a cost the load
benchmark's profile of a busy server shows among the largest per message. A terminal sends a message
at a time and waits for its answer, so its queue holds one message; reading pauses as uvicorn's
does once :data:`PAUSE_AT` messages wait (a client that floods), and resumes when the
application has read them all, so a connection still buffers a bounded number of messages.
The gate (:mod:`tablejack.server.socket.gate`) refuses a flood long before.

It also tells the application when a socket's transport is writable: the ASGI scope's
extension :data:`WRITABLE` is uvicorn's own ``writable`` event, cleared while the transport's
buffer is over its high-water mark (a client that does not read). The process's one sending
task (:class:`tablejack.server.floor.floor.Outboxes`) skips such a socket rather than wait in its
``send``, so one slow client never holds up the others' frames. The extension :data:`ABORT`
drops the connection outright (the transport's ``abort``): a client that reads nothing would
never take the close frame, so the outboxes drop it once it falls too far behind.

The extension :data:`SEND_TEXTS` sends several text frames at once, without the ASGI send
path: a function of a list of texts that frames each (websockets' sans-I/O connection, as
uvicorn's own ``send`` does) and writes them all to the transport in one call, one system
call where each frame cost one. The load benchmark's profile of a busy server shows the
socket writes among the largest costs of a round: a terminal's acknowledgement and the state
that follows it, waiting in its outbox together, now leave in one write. It returns False,
sending nothing, once the connection can take no more frames (closed, or its close sent).

The event loop is uvloop's where it is installed (:func:`event_loop`; the server extra
installs it except on Windows): the sockets' reads and writes, the selector and the loop's own
turns then run in compiled code. ``benchmarks/transport_floor.py``, the bare WebSocket traffic
of a round at 50 × 20 on this protocol, measured 6.9 and 6.7 ms of CPU a round on uvloop
against 9.3 and 8.8 ms on asyncio's loop in one run.

The class leans on names inside uvicorn's protocol (``read_paused``, ``writable``,
``send_receive_event_to_app``, ``handle_connect``); a uvicorn without them gets its own
protocol unchanged (:func:`protocol_class`), and a test fails on such a uvicorn.
"""

from __future__ import annotations

from typing import Any

PAUSE_AT = 16
"""Messages a connection holds unread before its reading pauses."""
WRITABLE = "tablejack.writable"
"""The scope extension holding the socket's writable event (an :class:`asyncio.Event`)."""
SEND_TEXTS = "tablejack.send_texts"
"""The scope extension holding a function that sends a list of texts as text frames in one
write (True), or nothing once the connection is closing (False)."""
ABORT = "tablejack.abort"
"""The scope extension holding a function that drops the connection at once, without a close
handshake (the transport's ``abort``)."""


def event_loop() -> str:
    """The event loop for ``uvicorn.run(loop=…)``: ``uvloop`` when it can be imported, else
    ``asyncio``."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def protocol_class() -> Any:
    """The protocol class for ``uvicorn.run(ws=…)``: :class:`BufferedSansIOProtocol` when the
    installed uvicorn has the hooks it uses, else uvicorn's own (by name)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    hooks = ("send_receive_event_to_app", "handle_connect", "send")
    if not all(hasattr(WebSocketsSansIOProtocol, hook) for hook in hooks):
        return "websockets-sansio"
    needed = ("conn", "transport", "close_sent", "disconnected", "handshake_complete")

    class BufferedSansIOProtocol(WebSocketsSansIOProtocol):
        """uvicorn's sans-I/O WebSocket protocol; reading pauses at :data:`PAUSE_AT` unread
        messages, not at every message (see the module)."""

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            writable = getattr(self, "writable", None)
            scope = getattr(self, "scope", None)
            if writable is not None and scope is not None:  # read when the app accepts
                scope["extensions"][WRITABLE] = writable
                scope["extensions"][ABORT] = self.transport.abort
                if all(hasattr(self, name) for name in needed):
                    scope["extensions"][SEND_TEXTS] = self.send_texts

        def send_texts(self, texts: list[str]) -> bool:
            """Send ``texts`` as text frames in one write to the transport (see the
            module); False, sending nothing, once the connection can take no more."""
            if (
                self.disconnected
                or self.close_sent
                or not self.handshake_complete
                or self.transport.is_closing()
            ):
                return False
            try:
                for text in texts:
                    self.conn.send_text(text.encode())
            except Exception:  # websockets refuses: the client's close came first
                return False
            self.transport.write(b"".join(self.conn.data_to_send()))
            return True

        def send_receive_event_to_app(self) -> None:
            if self.read_paused or self.queue.qsize() + 1 >= PAUSE_AT:
                super().send_receive_event_to_app()  # uvicorn's own: pause after this one
                return
            self.read_paused = True  # few wait unread: uvicorn's pause is skipped
            try:
                super().send_receive_event_to_app()
            finally:
                self.read_paused = False

    return BufferedSansIOProtocol
