"""The WebSocket protocol ``tablejack serve`` gives uvicorn: uvicorn's sans-I/O protocol, whose
reading pauses only when :data:`PAUSE_AT` messages wait unread.

uvicorn pauses a connection's reading after every message it receives and resumes it at the
application's next read: two ``epoll_ctl`` system calls per message, a cost the load
benchmark's profile of a busy server shows among the largest per message. A terminal sends a message
at a time and waits for its answer, so its queue holds one message; reading pauses as uvicorn's
does once :data:`PAUSE_AT` messages wait (a client that floods), and resumes when the
application has read them all, so a connection still buffers a bounded number of messages.
The gate (:mod:`tablejack.server.gate`) refuses a flood long before.

The class leans on two names inside uvicorn's protocol, ``read_paused`` and
``send_receive_event_to_app``; a uvicorn without them gets its own protocol unchanged
(:func:`protocol_class`), and a test fails on such a uvicorn.
"""

from __future__ import annotations

from typing import Any

PAUSE_AT = 16
"""Messages a connection holds unread before its reading pauses."""


def protocol_class() -> Any:
    """The protocol class for ``uvicorn.run(ws=…)``: :class:`BufferedSansIOProtocol` when the
    installed uvicorn has the hooks it uses, else uvicorn's own (by name)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    if not hasattr(WebSocketsSansIOProtocol, "send_receive_event_to_app"):
        return "websockets-sansio"

    class BufferedSansIOProtocol(WebSocketsSansIOProtocol):
        """uvicorn's sans-I/O WebSocket protocol; reading pauses at :data:`PAUSE_AT` unread
        messages, not at every message (see the module)."""

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
