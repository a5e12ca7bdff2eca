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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, cast

from tablejack.server.links.sas.framing import Framer, Message

__all__ = [
    "BAUD",
    "GAP_SECONDS",
    "MarkDecoder",
    "QuickResponder",
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

Responder = Callable[[Message], Awaitable[bytes | None]]
"""Answers a host's message (None: no answer)."""
QuickResponder = Callable[[Message], bytes | None]
"""Answers a general poll at once (None: no answer)."""


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
    """The framing and answering of one host's byte stream."""

    def __init__(
        self,
        respond: Responder,
        write: Callable[[bytes], None],
        quick: QuickResponder | None = None,
    ) -> None:
        self.framer = Framer()
        self.respond = respond
        self.quick = quick
        self.busy = False
        self.write = write
        self.last = float("-inf")
        self.queue: asyncio.Queue[Message | None] = asyncio.Queue()
        self.task = asyncio.get_running_loop().create_task(self._answer())

    def received(self, data: bytes, *, wakeup: bool = False) -> None:
        now = time.monotonic()
        if now - self.last > GAP_SECONDS:
            self.framer.gap()
        self.last = now
        for message in self.framer.feed(data, wakeup=wakeup):
            if (
                message.command is None
                and self.quick is not None
                and not self.busy
                and self.queue.empty()
            ):  # a general poll with nothing before it: answered now, in order
                reply = self.quick(message)
                if reply:
                    self.write(reply)
                continue
            self.queue.put_nowait(message)

    async def _answer(self) -> None:
        while (message := await self.queue.get()) is not None:
            self.busy = True
            try:
                reply = await self.respond(message)
            except Exception:  # a fault answering one message never ends the link
                log.exception("SAS: answering %s", message)
                continue
            finally:
                self.busy = False
            if reply:
                self.write(reply)

    async def close(self) -> None:
        self.queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await self.task


class TcpLine:
    """A TCP endpoint: listens, serves one host at a time (the newest). The bytes are taken
    in the transport's read callback: a general poll is answered there, nothing awaited."""

    def __init__(
        self, host: str, port: int, respond: Responder, quick: QuickResponder | None = None
    ) -> None:
        self.host, self.port, self.respond, self.quick = host, port, respond, quick
        self.server: asyncio.Server | None = None
        self.current: asyncio.Transport | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: _TcpHost(self), self.host, self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    def take(self, transport: asyncio.Transport) -> None:
        """A host connected: it takes the line over (the last one's connection is closed)."""
        if self.current is not None:
            self.current.close()
        self.current = transport

    async def stop(self) -> None:
        if self.current is not None:
            self.current.close()
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 1)


class _TcpHost(asyncio.Protocol):
    """One host's connection to a :class:`TcpLine`."""

    def __init__(self, line: TcpLine) -> None:
        self.line = line
        self.transport: asyncio.Transport | None = None
        self.session: _Session | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, transport)  # (uvloop's is not a subclass)
        self.transport = transport
        self.line.take(transport)
        self.session = _Session(self.line.respond, transport.write, self.line.quick)

    def data_received(self, data: bytes) -> None:
        if self.session is not None:
            self.session.received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.line.current is self.transport:
            self.line.current = None
        if self.session is not None:
            asyncio.get_running_loop().create_task(self.session.close())
            self.session = None


class SerialLine:
    """A serial endpoint (a device path opened with pyserial), or an open file descriptor
    (``fd``: the master side of a pseudo-terminal, as tests use)."""

    def __init__(
        self,
        path: str | None,
        respond: Responder,
        quick: QuickResponder | None = None,
        *,
        fd: int | None = None,
    ) -> None:
        self.path, self.respond, self.quick, self.fd = path, respond, quick, fd
        self.port: Any = None
        self.stopped = False
        self.decoder: MarkDecoder | None = None
        self.session: _Session | None = None

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
        fd = self.fd
        self.session = _Session(self.respond, lambda data: _write_all(fd, data), self.quick)
        asyncio.get_running_loop().add_reader(fd, self._readable)

    def _readable(self) -> None:
        assert self.fd is not None and self.session is not None
        try:
            data = os.read(self.fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # the other side closed (a pseudo-terminal), a device gone: look again
            loop = asyncio.get_running_loop()  # in a second, rather than spin on the error
            loop.remove_reader(self.fd)
            loop.call_later(1.0, self._watch_again)
            return
        if self.decoder is None:
            self.session.received(data)
            return
        for run, wakeup in self.decoder.feed(data):
            self.session.received(run, wakeup=wakeup)

    def _watch_again(self) -> None:
        if self.fd is not None and self.session is not None and not self.stopped:
            with contextlib.suppress(OSError, ValueError):
                asyncio.get_running_loop().add_reader(self.fd, self._readable)

    async def stop(self) -> None:
        self.stopped = True
        if self.fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self.fd)
        if self.session is not None:
            await self.session.close()
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
