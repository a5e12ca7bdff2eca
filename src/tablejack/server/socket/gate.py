"""The gate of the WebSocket ``/ws``: what a socket may send before it has authenticated, how
big a frame may be, what becomes of a frame that is not a protocol message, and how much of the
audit log bad input may take (docs/server.md, "Terminal protocol", "Bad input").

* **Before authentication** (:meth:`Gate.hello`): the ``hello`` must arrive within
  :data:`HELLO_SECONDS` (else close 1008 ``no hello within 5 s``) in a frame of at most
  :data:`HELLO_MAX_BYTES` (else close 1009 ``message too big``). A failed hello — too late, too
  big, not a protocol message, not a hello, another protocol version, an unknown token — takes a
  token from its client address's bucket (:data:`FAILED_HELLOS` per
  :data:`FAILED_HELLO_SECONDS`); a socket from an address whose bucket is empty is closed at
  once (1008 ``too many failed hellos``), before its frame is read or the database asked.
* **After authentication** (:class:`Session`): frames of at most :data:`FRAME_MAX_BYTES` (else
  close 1009; uvicorn's ``ws_max_size`` is the same bound). A frame that is not a protocol
  message is answered with an ``error`` frame naming the rule
  (:class:`~tablejack.server.support.protocol.MalformedMessageError`) and the socket stays open; a
  socket that sends more than :data:`MALFORMED_LIMIT` of them within
  :data:`MALFORMED_SECONDS` is closed with 1008 ``repeated malformed messages``.
* **The audit log** (:class:`AuditBursts`) gets one row per burst: per client address (failed
  hellos) or per socket (malformed messages) and :data:`AUDIT_SECONDS` window, with the count,
  written when the window ends, the socket closes or the server stops.
* **HTTP** gets the same treatment: a request refused with 422 (a body that does not validate,
  :meth:`Gate.invalid_request`) is counted per client address for the audit log, and a path or
  query holding a control character is refused with 422 before any route or the database sees
  it (:class:`RefuseControlCharacters`).

Every limit is a field of :class:`GateLimits` (``create_app(..., gate=GateLimits(...))``), so a
test can shorten the 5 s.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from tablejack.server.support.protocol import Hello, MalformedMessageError, read_client
from tablejack.server.support.text import TEXT_RULE, control_character_refusal, printable
from tablejack.server.support.wire import dumps

if TYPE_CHECKING:
    from tablejack.server.floor.floor import Connection
    from tablejack.store import Store

__all__ = [
    "AUDIT_SECONDS",
    "FAILED_HELLOS",
    "FAILED_HELLO_SECONDS",
    "FRAME_MAX_BYTES",
    "HELLO_MAX_BYTES",
    "HELLO_SECONDS",
    "MALFORMED_LIMIT",
    "MALFORMED_SECONDS",
    "AuditBursts",
    "Frame",
    "Gate",
    "GateLimits",
    "RefuseControlCharacters",
    "Session",
    "client_address",
    "receive_frame",
]

log = logging.getLogger("tablejack.server")

HELLO_SECONDS = 5.0
"""How long a new socket has to send its ``hello``."""
HELLO_MAX_BYTES = 4 * 1024
"""The largest frame before authentication."""
FRAME_MAX_BYTES = 64 * 1024
"""The largest frame of an authenticated socket (and uvicorn's ``ws_max_size``)."""
FAILED_HELLOS = 5
"""Failed hellos an address may have per :data:`FAILED_HELLO_SECONDS` (a token bucket)."""
FAILED_HELLO_SECONDS = 10.0
MALFORMED_LIMIT = 20
"""Malformed messages a socket may send within :data:`MALFORMED_SECONDS`; one more closes it."""
MALFORMED_SECONDS = 10.0
AUDIT_SECONDS = 10.0
"""The window of one audit row per burst of bad input."""

HELLO_RULE = "protocol: hello"
LOOKUP_KEYS_MAX = 10_000
"""The most people and codes whose refused look-ups are counted at once."""


@dataclass(frozen=True)
class GateLimits:
    """The gate's limits (the module's constants by default)."""

    hello_seconds: float = HELLO_SECONDS
    hello_max_bytes: int = HELLO_MAX_BYTES
    frame_max_bytes: int = FRAME_MAX_BYTES
    failed_hellos: int = FAILED_HELLOS
    failed_hello_seconds: float = FAILED_HELLO_SECONDS
    malformed_limit: int = MALFORMED_LIMIT
    malformed_seconds: float = MALFORMED_SECONDS
    audit_seconds: float = AUDIT_SECONDS


# -- frames ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One frame received: its text (None for a binary frame that is not UTF-8) and size in
    bytes."""

    text: str | None
    size: int

    def message(self) -> Any:
        """The protocol message; raises :class:`MalformedMessageError`."""
        if self.text is None:
            raise MalformedMessageError.not_utf8()
        return read_client(self.text)


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


async def receive_frame(socket: WebSocket) -> Frame:
    """The next frame of ``socket``; raises ``WebSocketDisconnect`` when it closed."""
    message = await socket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is not None:
        return Frame(str(text), _size(str(text)))
    data = bytes(message.get("bytes") or b"")
    try:
        return Frame(data.decode(), len(data))
    except UnicodeDecodeError:
        return Frame(None, len(data))


async def _send(socket: WebSocket, frame: dict[str, Any]) -> None:
    """Send a frame to a socket that has no writer yet (before authentication)."""
    with contextlib.suppress(Exception):  # (the client may be gone already)
        await socket.send_text(dumps(frame))


def client_address(socket: WebSocket) -> str:
    """The client's address as the server sees it (a proxy's, behind one)."""
    return socket.client.host if socket.client is not None else "unknown"


# -- the audit log, one row per burst ------------------------------------------------------------


@dataclass
class _Burst:
    kind: str
    rule: str
    what: tuple[str, str]
    who: str
    table_id: str
    actor: str
    terminal: str
    first: str
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    ending: str = ""
    timer: asyncio.TimerHandle | None = None

    def text(self, seconds: float) -> str:
        count = sum(self.reasons.values())
        if count == 1:
            [reason] = self.reasons
            head = f"{self.what[0]} from {self.who}: {reason}"
            first = f"; {self.first}" if self.first else ""
        else:
            counted = ", ".join(f"{n} × {reason}" for reason, n in self.reasons.most_common())
            head = f"{count} {self.what[1]} from {self.who} within {seconds:g} s ({counted})"
            first = f"; the first: {self.first}" if self.first else ""
        return printable(f"{head}{first}{self.ending}", 480)


class AuditBursts:
    """One audit row per key and window: the first event opens the window, the following ones
    are counted; the row (the count, the reasons, the first event's detail) is written when the
    window ends, or at once by :meth:`flush`."""

    def __init__(self, store: Store, seconds: float = AUDIT_SECONDS) -> None:
        self.store = store
        self.seconds = seconds
        self._open: dict[Hashable, _Burst] = {}
        self._writes: set[asyncio.Task[None]] = set()

    def note(
        self,
        key: Hashable,
        reason: str,
        *,
        kind: str,
        rule: str,
        what: tuple[str, str],
        who: str,
        detail: str = "",
        table_id: str = "",
        actor: str = "",
        terminal: str = "",
    ) -> None:
        """Count one event of ``key`` (``reason``: a short phrase; ``detail``: what the first
        event was; ``what``: the event's name, singular and plural)."""
        burst = self._open.get(key)
        if burst is None:
            burst = _Burst(kind, rule, what, who, table_id, actor, terminal, detail)
            self._open[key] = burst
            loop = asyncio.get_running_loop()
            burst.timer = loop.call_later(self.seconds, self.flush, key)
        burst.reasons[reason] += 1

    def flush(self, key: Hashable, ending: str = "") -> None:
        """Write the row of ``key``'s burst now (``ending``: words added to it)."""
        burst = self._open.pop(key, None)
        if burst is None:
            return
        if burst.timer is not None:
            burst.timer.cancel()
        burst.ending = ending
        task = asyncio.get_running_loop().create_task(self._write(burst))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, burst: _Burst) -> None:
        try:
            await self.store.audit(
                burst.kind,
                burst.text(self.seconds),
                table_id=burst.table_id,
                actor=burst.actor,
                terminal=burst.terminal,
                rule=burst.rule,
            )
        except Exception:  # the audit log must not take the socket or the server down
            log.exception("an audit row could not be written: %s", burst.text(self.seconds))

    async def close(self) -> None:
        """Write every open burst and wait for the writes (at shutdown)."""
        for key in list(self._open):
            self.flush(key)
        if self._writes:
            await asyncio.wait(list(self._writes), timeout=5)


# -- the gate ------------------------------------------------------------------------------------


class _Bucket:
    """A token bucket: ``size`` tokens, refilled at ``size`` per ``seconds``."""

    def __init__(self, size: int, seconds: float, now: float) -> None:
        self.size = size
        self.rate = size / seconds
        self.tokens = float(size)
        self.stamp = now

    def level(self, now: float) -> float:
        self.tokens = min(self.size, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens

    def take(self, now: float) -> None:
        self.tokens = max(0.0, self.level(now) - 1)


class Gate:
    """The WebSocket gate of one app (see the module docstring): the failed hellos per client
    address and the audit rows of bad input."""

    def __init__(self, store: Store, limits: GateLimits | None = None) -> None:
        self.limits = limits or GateLimits()
        self.bursts = AuditBursts(store, self.limits.audit_seconds)
        self._lookups: dict[Hashable, float] = {}
        self._buckets: dict[str, _Bucket] = {}
        self._prune_at = 10_000

    def _bucket(self, address: str, now: float) -> _Bucket:
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= self._prune_at:  # forget the addresses whose bucket is full
                self._buckets = {a: b for a, b in self._buckets.items() if b.level(now) < b.size}
                self._prune_at = max(10_000, 2 * len(self._buckets))
            limits = self.limits
            bucket = _Bucket(limits.failed_hellos, limits.failed_hello_seconds, now)
            self._buckets[address] = bucket
        return bucket

    async def hello(self, socket: WebSocket) -> Hello | None:
        """The accepted socket's ``hello``, or None: the socket was refused and closed (too
        many failed hellos from its address, no hello in time, a frame too big, not a hello)."""
        address = client_address(socket)
        limits = self.limits
        now = time.monotonic()
        if self._bucket(address, now).level(now) < 1:
            self._note(address, "too many failed hellos: closed at once")
            with contextlib.suppress(Exception):  # (the client may be gone already)
                await socket.close(1008, "too many failed hellos")
            return None
        try:
            frame = await asyncio.wait_for(receive_frame(socket), limits.hello_seconds)
        except TimeoutError:
            await self.refuse(socket, 1008, f"no hello within {limits.hello_seconds:g} s")
            return None
        if frame.size > limits.hello_max_bytes:
            await self.refuse(
                socket,
                1009,
                "message too big",
                detail=f"a frame of {frame.size} bytes before the hello "
                f"(at most {limits.hello_max_bytes})",
            )
            return None
        try:
            first = frame.message()
        except MalformedMessageError as error:
            await _send(socket, error.frame())
            await self.refuse(socket, 1008, "not a protocol message", detail=error.message)
            return None
        if not isinstance(first, Hello):
            refusal = MalformedMessageError(
                f"The first message must be a hello, not a {first.type} ({HELLO_RULE}).",
                HELLO_RULE,
                getattr(first, "id", None),
            )
            await _send(socket, refusal.frame())
            await self.refuse(socket, 1008, "the first message must be hello")
            return None
        return first

    async def refuse(
        self, socket: WebSocket, code: int, reason: str, *, detail: str = "", terminal: str = ""
    ) -> None:
        """A failed hello: take a token from the address's bucket, count it for the audit log
        and close the socket with ``code`` and ``reason``."""
        address = client_address(socket)
        now = time.monotonic()
        self._bucket(address, now).take(now)
        self._note(address, reason, detail=detail, terminal=terminal)
        with contextlib.suppress(Exception):  # (the client may be gone already)
            await socket.close(code, reason)

    def _note(self, address: str, reason: str, *, detail: str = "", terminal: str = "") -> None:
        self.bursts.note(
            ("hello", address),
            reason,
            kind="auth",
            rule=HELLO_RULE,
            what=("failed hello", "failed hellos"),
            who=address,
            detail=", ".join(
                part for part in (detail, terminal and f"terminal {terminal}") if part
            ),
            terminal=terminal,
        )

    def invalid_request(
        self, request: Request, problems: Sequence[Any], address: str | None = None
    ) -> None:
        """Count an HTTP request refused with 422 (``problems``: pydantic's errors) for the
        audit log: one row per client address and window."""
        first = problems[0] if problems else {}
        kind = str(first.get("type", "invalid"))
        where = ".".join(str(part) for part in first.get("loc", ()))
        if address is None:
            address = request.client.host if request.client is not None else "unknown"
        self.bursts.note(
            ("request", address),
            f"{where}: {kind}" if where else kind,
            kind="invalid_request",
            rule=TEXT_RULE if kind == "control_character" else "request validation",
            what=("refused request", "refused requests"),
            who=address,
            detail=f"{request.method} {request.url.path}: {first.get('msg', '')}",
            table_id=str(request.path_params.get("table_id", ""))[:64],
        )

    def unauthenticated(self, request: Request, code: str, message: str, rule: str) -> None:
        """Count a REST request refused before anyone was authenticated (a token in the URL,
        an unknown token at sign-in, a made-up device credential, a cookie from a foreign page)
        for the audit log: one row per refusal code and window, whatever the number of
        requests and addresses, so that no one can fill the log or the memory without a
        credential."""
        address = request.client.host if request.client is not None else "unknown"
        self.bursts.note(
            ("unauthenticated", code),
            code,
            kind=code,
            rule=rule,
            what=(
                "refused request before authentication",
                "refused requests before authentication",
            ),
            who="clients without a valid credential",
            detail=f"{request.method} {request.url.path[:64]} from {address[:64]}: {message}",
        )

    def refused_lookup(
        self, request: Request, subject: str, terminal: str, code: str, message: str, rule: str
    ) -> bool:
        """A look-up refused to someone authenticated (a voucher number or validation code
        that names no voucher): True when it is the first of its person and code within the
        window (the caller writes its own row, at once, as for any refusal); the others are
        counted, one row per person, code and window with the count and the first of them —
        200 made-up codes write two rows, not 200."""
        key = ("lookup", subject, code)
        now = time.monotonic()
        first = self._lookups.get(key)
        if first is None or now - first >= self.bursts.seconds:
            if len(self._lookups) >= LOOKUP_KEYS_MAX:
                self._lookups.clear()  # (bounded: a clear only writes a row more)
            self._lookups[key] = now
            return True
        self.bursts.note(
            key,
            code,
            kind=code,
            rule=rule,
            what=("further refused look-up", "further refused look-ups"),
            who=subject[:64],
            detail=f"{request.method} {request.url.path[:64]}: {message}",
            actor=subject[:64],
            terminal=terminal[:64],
        )
        return False

    def session(self, socket: WebSocket, connection: Connection) -> Session:
        """The gate of an authenticated socket."""
        return Session(self, socket, connection)

    async def close(self) -> None:
        """Write the audit rows still open (at shutdown)."""
        await self.bursts.close()


class Session:
    """The gate of one authenticated socket: the size of its frames and its malformed
    messages."""

    def __init__(self, gate: Gate, socket: WebSocket, connection: Connection) -> None:
        self.gate = gate
        self.socket = socket
        self.connection = connection
        self.address = client_address(socket)
        self.malformed_at: collections.deque[float] = collections.deque(
            maxlen=gate.limits.malformed_limit + 1
        )

    async def receive(self) -> Frame | None:
        """The next frame, or None: it was too big and the socket is closed (1009)."""
        frame = await receive_frame(self.socket)
        if frame.size <= self.gate.limits.frame_max_bytes:
            return frame
        self._note(
            "message too big",
            f"a frame of {frame.size} bytes (at most {self.gate.limits.frame_max_bytes})",
        )
        self.gate.bursts.flush(self, "; the socket was closed (1009 message too big)")
        await self.socket.close(1009, "message too big")
        return None

    async def malformed(self, error: MalformedMessageError) -> bool:
        """Answer a malformed message with its ``error`` frame and count it for the audit log;
        True when the socket was closed for sending too many of them."""
        limits = self.gate.limits
        self.connection.push(error.frame())
        self._note(error.rule, error.message)
        now = time.monotonic()
        self.malformed_at.append(now)
        if (
            len(self.malformed_at) > limits.malformed_limit
            and now - self.malformed_at[0] <= limits.malformed_seconds
        ):
            self.gate.bursts.flush(
                self, "; the socket was closed (1008 repeated malformed messages)"
            )
            await self.socket.close(1008, "repeated malformed messages")
            return True
        return False

    def _note(self, reason: str, detail: str) -> None:
        connection = self.connection
        self.gate.bursts.note(
            self,
            reason,
            kind="malformed",
            rule="protocol",
            what=("malformed message", "malformed messages"),
            who=f"{connection.subject} at {connection.terminal} ({self.address})",
            detail=detail,
            table_id=connection.table or "",
            actor=connection.subject,
            terminal=connection.terminal,
        )

    def end(self) -> None:
        """The socket closed: write its audit row now."""
        self.gate.bursts.flush(self)


class RefuseControlCharacters:
    """ASGI middleware: an HTTP request whose path or query string holds a control character
    (U+0000 to U+001F, U+007F, percent-encoded or not) is answered 422 naming the rule
    (``text: no control characters``) before a route or the database sees it, and counted
    for the audit log (:meth:`Gate.invalid_request`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        parts = [("path", str(scope.get("path", "")))]
        parts += [("query", text) for pair in parse_qsl(query, True) for text in pair]
        for where, text in parts:
            message = control_character_refusal(text)
            if message is None:
                continue
            problem = {"type": "control_character", "loc": [where], "msg": message}
            gate = getattr(scope["app"].state, "gate", None) if "app" in scope else None
            if isinstance(gate, Gate):
                gate.invalid_request(Request(scope), [problem])
            response = JSONResponse({"detail": [problem | {"input": printable(text)}]}, 422)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
