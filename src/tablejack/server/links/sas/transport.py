"""The SAS line: a serial port (19,200 baud, the wakeup bit as parity) or a TCP socket
carrying the serial line's bytes with the wakeup bit dropped.

**Serial.** SAS sends the first byte of each host message with a 9th (wakeup) bit set. A
UART has no 9th bit; the line is read as 8 data bits with *space* parity and parity errors
marked (``PARMRK``): a byte sent with the wakeup bit arrives as a parity error, ``FF 00 x``;
a data byte ``FF`` arrives doubled (``FF FF``). The gaming machine's own bytes go out with the
wakeup bit clear (space parity). On a pseudo-terminal, where no parity is carried, no mark
ever arrives and messages are framed by their lengths, as on TCP.

**TCP.** ``tcp://HOST:PORT``: the server listens and serves one host at a time (a new
connection takes the line over and the old one is closed: a host that reconnects is not shut
out by its own half-open socket); the bytes are the serial line's without the wakeup
bit, framed by their SAS lengths.

Either way a quiet line of :data:`GAP_SECONDS` ends a partial message (dropped), and every
message is answered in order, one at a time; a message that cannot be read is dropped and the
link goes on (:class:`~tablejack.server.links.sas.framing.Framer`).

**A thread per line.** Each line reads, frames and answers in a thread of its own: a general
poll and a long poll that only reads (from a fresh meters snapshot) are answered there
(:data:`Immediate`), never behind the work of the floor's event loop; any other message (an
effect: a disable, a validation number, a ticket) is handed to the event loop and its answer
waited for, up to :data:`LOOP_SECONDS`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import select
import selectors
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from tablejack.server.links.sas.framing import Framer, Message

__all__ = [
    "BAUD",
    "GAP_SECONDS",
    "Immediate",
    "MarkDecoder",
    "Responder",
    "SerialLine",
    "TcpLine",
    "parse_endpoint",
]

log = logging.getLogger("tablejack.sas")

BAUD = 19_200
GAP_SECONDS = 0.05
"""A quiet line this long ends a message (SAS's 5 ms inter-byte limit, widened for a
scheduler's and a network's delays)."""

Responder = Callable[[Message], Coroutine[Any, Any, bytes | None]]
"""Answers a host's message (None: no answer)."""
Immediate = Callable[[Message], tuple[bool, bytes | None]]
"""Answers a message at once, in the line's thread, if it can: ``(True, answer or None)``;
``(False, None)``: the message goes to the event loop's :data:`Responder`."""
LOOP_SECONDS = 5.0
"""How long a line waits for the event loop's answer to a message."""
SELECT_SECONDS = 0.1
"""How often a line's thread looks whether it is to stop."""


def parse_endpoint(endpoint: str) -> tuple[str, Any]:
    """``("tcp", (host, port))`` or ``("serial", path)``.

    >>> parse_endpoint("tcp://127.0.0.1:7001"), parse_endpoint("/dev/ttyS0")
    (('tcp', ('127.0.0.1', 7001)), ('serial', '/dev/ttyS0'))
    """
    if endpoint.startswith("tcp://"):
        host, _, port = endpoint[6:].rpartition(":")
        if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"a TCP endpoint is tcp://HOST:PORT, not {endpoint!r}")
        return "tcp", (host.strip("[]"), int(port))
    if not endpoint or "://" in endpoint:
        raise ValueError(f"an endpoint is a serial device or tcp://HOST:PORT, not {endpoint!r}")
    return "serial", endpoint


class MarkDecoder:
    """Undo the parity marking of a serial line read with ``PARMRK``: yields ``(bytes,
    wakeup)`` runs, ``wakeup`` True for a run whose first byte carried the wakeup bit.

    >>> decoder = MarkDecoder()
    >>> list(decoder.feed(bytes([0xFF, 0x00, 0x01, 0x1F, 0xFF, 0xFF])))
    [(b'\\x01\\x1f\\xff', True)]
    """

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> Iterator[tuple[bytes, bool]]:
        data = self._pending + data
        self._pending = b""
        run = bytearray()
        wakeup = False
        index = 0
        while index < len(data):
            byte = data[index]
            if byte != 0xFF:
                run.append(byte)
                index += 1
                continue
            if index + 1 >= len(data) or (data[index + 1] == 0x00 and index + 2 >= len(data)):
                self._pending = data[index:]
                break
            if data[index + 1] == 0xFF:
                run.append(0xFF)
                index += 2
                continue
            if data[index + 1] == 0x00:  # a byte with the wakeup bit: a new message
                if run:
                    yield bytes(run), wakeup
                run, wakeup = bytearray([data[index + 2]]), True
                index += 3
                continue
            index += 1  # an FF that is no mark: dropped
        if run:
            yield bytes(run), wakeup


class _Session:
    """The framing and answering of one host's byte stream, in its line's thread: a message
    the machine answers at once (``now``: a general poll, a read from a fresh snapshot) is
    answered there; any other is handed to the floor's event loop (``respond``) and its answer
    waited for, so the answers go out in order, one at a time."""

    def __init__(
        self,
        respond: Responder,
        write: Callable[[bytes], None],
        now: Immediate | None,
        loop: asyncio.AbstractEventLoop,
        addresses: frozenset[int] = frozenset(),
    ) -> None:
        self.framer = Framer(addresses)
        self.respond, self.write, self.now, self.loop = respond, write, now, loop
        self.last = float("-inf")

    def received(self, data: bytes, *, wakeup: bool = False) -> None:
        at = time.monotonic()
        if at - self.last > GAP_SECONDS:
            self.framer.gap()
        self.last = at
        for message in self.framer.feed(data, wakeup=wakeup):
            try:
                reply = self._answer(message)
            except Exception:  # a fault answering one message never ends the link
                log.exception("SAS: answering %s", message)
                continue
            if reply:
                self.write(reply)

    def _answer(self, message: Message) -> bytes | None:
        if self.now is not None:
            handled, reply = self.now(message)
            if handled:
                return reply
        future: concurrent.futures.Future[bytes | None]
        future = asyncio.run_coroutine_threadsafe(self.respond(message), self.loop)
        try:
            return future.result(LOOP_SECONDS)
        except concurrent.futures.TimeoutError:
            future.cancel()
            log.warning("SAS: no answer to %s within %s s", message, LOOP_SECONDS)
            return None


class _Thread:
    """A line served by a thread of its own (so a poll is not answered behind the floor's
    event loop)."""

    name = "sas-line"

    def __init__(self, respond: Responder, now: Immediate | None) -> None:
        self.respond, self.now = respond, now
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.addresses: frozenset[int] = frozenset()
        """The SAS addresses of the machines on this line (the framer resynchronises at one)."""

    def _start_thread(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.thread = threading.Thread(target=self._serve_logged, name=self.name, daemon=True)
        self.thread.start()

    def _session(self, write: Callable[[bytes], None]) -> _Session:
        assert self.loop is not None
        return _Session(self.respond, write, self.now, self.loop, self.addresses)

    def _serve_logged(self) -> None:
        try:
            self._serve()
        except Exception:
            log.exception("SAS: the line %s stopped", self.name)

    def _serve(self) -> None:
        raise NotImplementedError

    async def _stop_thread(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            await asyncio.to_thread(self.thread.join, 2.0)


class TcpLine(_Thread):
    """A TCP endpoint: listens, serves one host at a time (the newest), in a thread of its
    own."""

    def __init__(
        self, host: str, port: int, respond: Responder, now: Immediate | None = None
    ) -> None:
        super().__init__(respond, now)
        self.host, self.port = host, port
        self.listener: socket.socket | None = None
        self.name = f"sas-tcp-{host}:{port}"

    async def start(self) -> None:
        self.listener = socket.create_server((self.host, self.port))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.name = f"sas-tcp-{self.host}:{self.port}"
        self._start_thread()

    def _serve(self) -> None:
        assert self.listener is not None
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ)
        current: socket.socket | None = None
        session: _Session | None = None
        try:
            while not self.stopped.is_set():
                for key, _ in selector.select(SELECT_SECONDS):
                    if key.fileobj is self.listener:
                        try:
                            taken, _ = self.listener.accept()
                        except (BlockingIOError, InterruptedError):
                            continue
                        if current is not None:  # a new host takes the line over
                            selector.unregister(current)
                            current.close()
                        current = taken
                        current.setblocking(True)
                        current.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        session = self._session(current.sendall)
                        selector.register(current, selectors.EVENT_READ)
                        continue
                    assert current is not None and session is not None
                    try:
                        data = current.recv(4096)
                    except OSError:
                        data = b""
                    if not data:  # the host closed the connection
                        selector.unregister(current)
                        current.close()
                        current = session = None
                        continue
                    try:
                        session.received(data)
                    except OSError:  # the host went away while answered
                        selector.unregister(current)
                        current.close()
                        current = session = None
        finally:
            if current is not None:
                current.close()
            selector.close()
            self.listener.close()

    async def stop(self) -> None:
        await self._stop_thread()


class SerialLine(_Thread):
    """A serial endpoint (a device path opened with pyserial), or an open file descriptor
    (``fd``: the master side of a pseudo-terminal, as tests use), served by a thread of its
    own."""

    def __init__(
        self,
        path: str | None,
        respond: Responder,
        now: Immediate | None = None,
        *,
        fd: int | None = None,
    ) -> None:
        super().__init__(respond, now)
        self.path, self.fd = path, fd
        self.port: Any = None
        self.decoder: MarkDecoder | None = None
        self.name = f"sas-serial-{path or fd}"

    async def start(self) -> None:
        if self.fd is None:
            import serial  # type: ignore[import-untyped]

            assert self.path is not None
            self.port = serial.Serial(
                self.path, BAUD, bytesize=8, parity=serial.PARITY_SPACE, stopbits=1, timeout=0
            )
            self.fd = int(self.port.fileno())
            if _mark_parity(self.fd):
                self.decoder = MarkDecoder()
        os.set_blocking(self.fd, False)
        self._start_thread()

    def _serve(self) -> None:
        fd = self.fd
        assert fd is not None
        session = self._session(lambda data: _write_all(fd, data))
        while not self.stopped.is_set():
            try:
                readable, _, _ = select.select([fd], [], [], SELECT_SECONDS)
            except (OSError, ValueError):
                return  # the descriptor was closed
            if not readable:
                continue
            try:
                data = os.read(fd, 4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # the other side closed (a pseudo-terminal), a device gone:
                self.stopped.wait(1.0)  # look again in a second rather than spin on the error
                continue
            if self.decoder is None:
                session.received(data)
                continue
            for run, wakeup in self.decoder.feed(data):
                session.received(run, wakeup=wakeup)

    async def stop(self) -> None:
        await self._stop_thread()
        if self.port is not None:
            self.port.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            time.sleep(0.0005)


def _mark_parity(fd: int) -> bool:
    """Read with parity errors marked (``PARMRK``, ``INPCK``): the wakeup bit. False where
    the device takes no such setting."""
    try:
        import termios

        attributes = termios.tcgetattr(fd)
        attributes[0] |= termios.PARMRK | termios.INPCK
        attributes[0] &= ~(termios.IGNPAR | termios.ISTRIP)
        termios.tcsetattr(fd, termios.TCSANOW, attributes)
    except (ImportError, OSError, AttributeError):
        return False
    return True
