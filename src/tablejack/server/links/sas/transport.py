"""The SAS line: a serial port (19,200 baud, the wakeup bit as parity) or a TCP socket
carrying the serial line's bytes with the wakeup bit dropped.

**Serial.** SAS sends the first byte of each host message with a 9th (wakeup) bit set. A
UART has no 9th bit; the line is read as 8 data bits with *space* parity and parity errors
marked (``PARMRK``): a byte sent with the wakeup bit arrives as a parity error, ``FF 00 x``;
a data byte ``FF`` arrives doubled (``FF FF``). The gaming machine's own bytes go out with the
wakeup bit clear (space parity). On a pseudo-terminal, where no parity is carried, no mark
ever arrives and messages are framed by their lengths, as on TCP.

**TCP.** ``tcp://HOST:PORT``: the server listens and serves one host, a peer the line's
allow-list names (``allow=``; this machine only by default): the first keeps the line until it
closes it, goes silent for the link-down time, or stops reading; any other peer is refused
(closed at once, logged, and told to the link, which audits it). Nothing is written blocking:
answers wait in the line's buffer and a host that leaves them unread for
:data:`WRITE_SECONDS` is dropped, so no peer can wedge the line. The bytes are the serial
line's without the wakeup bit, framed by their SAS lengths.

Either way a quiet line of :data:`GAP_SECONDS` ends a partial message (dropped), and every
message is answered in order, one at a time; a message that cannot be read is dropped and the
link goes on (:class:`~tablejack.server.links.sas.framing.Framer`).

**A thread per line.** Each line reads, frames and answers in a thread of its own: a general
poll and a long poll that only reads (from a fresh meters snapshot) are answered there
(:data:`Immediate`), never behind the work of the floor's event loop; any other message (an
effect: a disable, a validation number, a ticket) is handed to the event loop and its answer
waited for within SAS's reply window (:data:`REPLY_SECONDS`): an answer that would be late is
not sent — the host retries, and the retry gets the answer the event loop gave meanwhile.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import select
import selectors
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator
from ipaddress import IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Any

from tablejack.server.links.sas.framing import Framer, Message

__all__ = [
    "BAUD",
    "GAP_SECONDS",
    "LOOPBACK",
    "WRITE_SECONDS",
    "Immediate",
    "MarkDecoder",
    "Refused",
    "Responder",
    "SerialLine",
    "TcpLine",
    "allowed",
    "parse_allow",
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
REPLY_SECONDS = 0.018
"""SAS's reply window (20 ms from the host's message), less a margin for the write: an answer
the event loop has not given by then is not sent (the host retries)."""
SELECT_SECONDS = 0.1
"""How often a line's thread looks whether it is to stop."""
WRITE_SECONDS = 1.0
"""An answer not written within this time: the host stopped reading (dropped from a TCP line;
on a serial line the answer is dropped)."""
SEND_BUFFER = 16_384
"""A TCP line's send buffer: SAS answers are small, so a host that stops reading fills it
soon (and is dropped) rather than after megabytes."""
OUT_MAX = 65_536
"""Answers waiting for a host beyond this many bytes: it stopped reading."""


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
        self.pending: tuple[bytes, concurrent.futures.Future[bytes | None]] | None = None
        """A message the event loop did not answer within the reply window, and its answer
        to come (for the host's retry)."""
        self.late = 0
        """Answers not sent because they would have been late."""

    def received(self, data: bytes, *, wakeup: bool = False) -> None:
        at = time.monotonic()
        if at - self.last > GAP_SECONDS:
            self.framer.gap()
        self.last = at
        for message in self.framer.feed(data, wakeup=wakeup):
            try:
                reply = self._answer(message, at)
            except Exception:  # a fault answering one message never ends the link
                log.exception("SAS: answering %s", message)
                continue
            if reply:
                self.write(reply)

    def _answer(self, message: Message, at: float) -> bytes | None:
        if self.now is not None:
            handled, reply = self.now(message)
            if handled:
                return reply
        future: concurrent.futures.Future[bytes | None]
        pending = self.pending
        if pending is not None and pending[0] == message.raw:  # the host's retry: the same
            future = pending[1]  # answer, once it is ready (its effect done once)
        else:
            future = asyncio.run_coroutine_threadsafe(self.respond(message), self.loop)
        self.pending = None
        try:
            return future.result(max(0.0, at + REPLY_SECONDS - time.monotonic()))
        except concurrent.futures.TimeoutError:
            # better silent (the host retries) than an answer landing as the reply to the
            # host's next poll; the event loop finishes it for the retry
            self.pending = (message.raw, future)
            self.late += 1
            log.info("SAS: no answer to %s within %s s; not sent late", message, REPLY_SECONDS)
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


class _Host:
    """The host that holds a TCP line: its socket, its session, the answers not yet written
    (``out``, since ``waiting``) and when it last sent a byte."""

    def __init__(self, sock: socket.socket, peer: str, at: float) -> None:
        self.sock, self.peer = sock, peer
        self.out = bytearray()
        self.waiting: float | None = None
        self.heard = at
        self.session: _Session | None = None

    def write(self, data: bytes) -> None:
        """Queue ``data`` and send what the socket takes now: never blocks (a host that does
        not read is dropped by its line once :data:`WRITE_SECONDS` pass, never waited for)."""
        if not self.out:
            self.waiting = time.monotonic()
        self.out += data
        self.flush()

    def flush(self) -> None:
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return
            del self.out[:sent]
        self.waiting = None


Refused = Callable[[str, str], None]
"""Told of a peer refused a TCP line: its address and why (the link logs and audits it)."""


def parse_allow(values: Iterable[str]) -> tuple[IPv4Network | IPv6Network, ...]:
    """The addresses (or networks) allowed to hold a TCP line.

    >>> [str(n) for n in parse_allow(["127.0.0.1", "10.1.0.0/16"])]
    ['127.0.0.1/32', '10.1.0.0/16']
    """
    out = []
    for value in values:
        try:
            out.append(ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(f"allow= is an IP address or network, not {value!r}") from None
    return tuple(out)


LOOPBACK = parse_allow(["127.0.0.0/8", "::1"])
"""Who may hold a TCP line when no ``allow=`` is given: this machine only."""


def allowed(peer: str, allow: Iterable[IPv4Network | IPv6Network]) -> bool:
    """Is ``peer`` (an address as ``accept`` gives it) in ``allow``?

    >>> allowed("::ffff:127.0.0.1", LOOPBACK), allowed("10.0.0.9", LOOPBACK)
    (True, False)
    """
    try:
        address = ip_address(peer.split("%", maxsplit=1)[0])
    except ValueError:
        return False
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in allow)


def _closed(sock: socket.socket) -> bool:
    """Has the peer of ``sock`` closed it (or reset it)? Its unread bytes are left unread."""
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


class TcpLine(_Thread):
    """A TCP endpoint: listens in a thread of its own and serves one host, an allowed peer
    (``allow``; default :data:`LOOPBACK`): the first keeps the line until it closes it, goes
    silent for ``silent_seconds`` (SAS's link-down time) or stops reading (its answers not
    written within :data:`WRITE_SECONDS`); any other peer meanwhile is refused — closed at once
    and told to ``refused``."""

    def __init__(
        self,
        host: str,
        port: int,
        respond: Responder,
        now: Immediate | None = None,
        *,
        allow: Iterable[IPv4Network | IPv6Network] | None = None,
        silent_seconds: float = 5.0,
        refused: Refused | None = None,
    ) -> None:
        super().__init__(respond, now)
        self.host, self.port = host, port
        self.allow = tuple(LOOPBACK if allow is None else allow)
        self.silent_seconds = silent_seconds
        self.refused = refused
        self.listener: socket.socket | None = None
        self.name = f"sas-tcp-{host}:{port}"
        self.current: _Host | None = None
        self.selector: selectors.BaseSelector | None = None

    async def start(self) -> None:
        self.listener = socket.create_server((self.host, self.port))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.name = f"sas-tcp-{self.host}:{self.port}"
        self._start_thread()

    def _refuse(self, taken: socket.socket, peer: str, why: str) -> None:
        taken.close()
        log.warning("SAS: %s refused %s: %s", self.name, peer, why)
        if self.refused is not None:
            try:
                self.refused(peer, why)
            except Exception:  # telling of a refusal never ends the line
                log.exception("SAS: telling of a refused peer")

    def _accept(self) -> None:
        assert self.listener is not None and self.selector is not None
        try:
            taken, where = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        peer = str(where[0])
        if not allowed(peer, self.allow):
            self._refuse(taken, peer, "not an allowed host of the line (allow=)")
            return
        now = time.monotonic()
        current = self.current
        if current is not None and _closed(current.sock):  # its close not yet read
            self._drop("it closed the connection")
            current = None
        if current is not None and now - current.heard > self.silent_seconds:
            self._drop(f"silent for {self.silent_seconds:g} s; {peer} takes the line")
            current = None
        if current is not None:
            self._refuse(taken, peer, f"the line is held by {current.peer}")
            return
        taken.setblocking(False)
        taken.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        host = _Host(taken, peer, now)
        host.session = self._session(host.write)
        self.current = host
        self.selector.register(taken, selectors.EVENT_READ)
        log.info("SAS: %s serves the host at %s", self.name, peer)

    def _drop(self, why: str) -> None:
        current = self.current
        if current is None:
            return
        assert self.selector is not None
        self.current = None
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(current.sock)
        current.sock.close()
        log.warning("SAS: %s dropped the host at %s: %s", self.name, current.peer, why)

    def _read(self) -> None:
        current = self.current
        assert current is not None and current.session is not None
        try:
            data = current.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop("it closed the connection")
            return
        current.heard = time.monotonic()
        try:
            current.session.received(data)
        except OSError:  # the host went away while answered
            self._drop("it went away")

    def _watch(self) -> None:
        """Write what waits; drop a host that stopped reading. (A silent host keeps the line
        until another allowed peer asks for it.)"""
        current = self.current
        if current is None:
            return
        assert self.selector is not None
        try:
            current.flush()
        except OSError:
            self._drop("it went away")
            return
        now = time.monotonic()
        if current.waiting is not None and (
            now - current.waiting > WRITE_SECONDS or len(current.out) > OUT_MAX
        ):
            self._drop(f"it stopped reading (an answer unwritten for {WRITE_SECONDS:g} s)")
        else:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if current.out else 0)
            self.selector.modify(current.sock, events)

    def _serve(self) -> None:
        assert self.listener is not None
        self.selector = selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ)
        try:
            while not self.stopped.is_set():
                for key, events in selector.select(SELECT_SECONDS):
                    if key.fileobj is self.listener:
                        self._accept()
                    elif (
                        self.current is not None
                        and key.fileobj is self.current.sock
                        and events & selectors.EVENT_READ
                    ):
                        self._read()
                self._watch()
        finally:
            if self.current is not None:
                self.current.sock.close()
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
    """Write ``data`` to a serial line within :data:`WRITE_SECONDS`; what the line does not
    take by then is dropped (a line nobody reads never holds its thread)."""
    view = memoryview(data)
    deadline = time.monotonic() + WRITE_SECONDS
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            if time.monotonic() > deadline:
                log.warning("SAS: a serial line took no answer for %s s; dropped", WRITE_SECONDS)
                return
            select.select([], [fd], [], 0.01)


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
