"""Reaching a table another process of the floor runs: the socket and the request are
forwarded to it (a proxy), not redirected.

A terminal's page talks to the address it was loaded from: its session is an HttpOnly cookie of
that host, and a socket signed in by cookie must come from the same origin
(:mod:`tablejack.server.socket.signin`). A redirect to another process — another host, another port
behind a load balancer, an address the terminals cannot even reach — would lose both, and the
terminal would have to sign in again at every failover. So the process a terminal connects to
forwards it:

* **The socket.** The hello is answered here (any process authenticates: the credentials are in
  the shared database). When the ``join`` names a table another process runs
  (:class:`~tablejack.server.floor.floor.TableElsewhereError`), this process opens a socket to it,
  says the same hello there (with the page's cookie), and from the ``join`` on passes every
  frame both ways unchanged. The table's process sees an ordinary terminal; this one keeps
  nothing of the table. When the table's process drops the socket (it stopped, or the table
  moved), this one closes the terminal's, and the page reconnects and joins again — reaching
  the table's new process. A join for a table no process runs at this moment (a takeover under
  way), or whose process does not answer yet, waits — the socket open, the terminal's frames
  kept — until a process runs it, for up to twice the lease time; then it is answered with an
  ``error`` frame (code ``moving``) and the socket is closed, and the page tries again.
* **The table's REST routes** (``/api/tables/{id}/…``: procedures, tilts, the shoe, the
  dealer, a void …) are forwarded the same way (:class:`ForwardTableRequests`), with the
  caller's credential, and so are a terminal's tilt and its clear
  (``/api/floor/terminals/{id}/tilt|clear``), to the process of the table the terminal is
  registered at: its guard, its console and the terminal's socket learn of it there at once.
  ``GET /api/tables`` lists the floor's tables, asking the others for theirs
  (:func:`floor_tables`).
* **The hop.** A page's session cookie is accepted only from the server's own pages: a request
  by cookie whose ``Origin`` is not the host it was sent to is refused
  (:func:`tablejack.server.http.access.identity`). A forwarded request reaches the table's process
  under that process's address, so the forwarding process says which host the caller reached
  (:data:`CALLER_HOST`) and proves it is a process of the floor (:data:`HOP`: an HMAC, with
  the floor's hop key, of the method, the path, that host, the time, the SHA-256 of the body
  and the SHA-256 of the credential — the ``Authorization`` and ``Cookie`` headers;
  :func:`tablejack.store.leases.floor_hop_key`). The table's process checks the proof against
  the request as it arrived (:class:`ForwardTableRequests`): a request that carries a proof
  that does not hold — a body altered in flight, a credential swapped, another path, a stale
  or forged proof — is refused (403, code ``hop``) and counted for the audit log; with a proof
  that holds, it compares the ``Origin`` with the caller's host (:func:`caller_host`). An
  outside caller that sends the forwarding headers without a proof is judged by the host it
  reached, as before.

A forwarded socket or request carries the header :data:`FORWARDED`; a process that gets one for
a table it does not run refuses it rather than forwarding it again, so nothing goes round in
circles while the leases move. The cost is one more hop for a terminal whose socket landed on
another process than its table's: a load balancer that sends each terminal to its table's
process (or terminals given that address) avoids it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from tablejack.server.floor.floor import LEASE_RULE, Connection, Floor
from tablejack.server.socket.gate import Session
from tablejack.server.support.protocol import Hello

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CALLER_HOST",
    "FORWARDED",
    "HOP",
    "HOP_RULE",
    "HOP_SECONDS",
    "ForwardTableRequests",
    "caller_host",
    "floor_tables",
    "forward_request",
    "forward_socket",
    "hop_credential",
    "hop_holds",
    "hop_proof",
    "socket_url",
]

log = logging.getLogger("tablejack.server")

FORWARDED = "x-tablejack-forwarded"
"""The header of a socket or request one process of the floor forwards to another."""
CALLER_HOST = "x-tablejack-caller-host"
"""The header of a forwarded request naming the host its caller sent it to."""
HOP = "x-tablejack-hop"
"""The header proving a forwarded request comes from a process of the floor (:func:`hop_proof`)."""
HOP_SECONDS = 30.0
"""How long a hop's proof holds (the processes' clocks may differ by a little)."""
HOP_RULE = "floor hop proof"
"""The rule a forwarded request whose proof does not hold is refused by."""
_HOP_HOST = "tablejack.hop_host"
"""The scope's key of the caller's host, once the request's hop proof held."""
_HOP_HEADERS = {
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "keep-alive",
    CALLER_HOST,
    HOP,
}
_TERMINAL_ACTION = re.compile(r"^/api/floor/terminals/([^/]+)/(tilt|clear)$")
"""A terminal's tilt or clear: forwarded to the process of the terminal's table."""


def hop_credential(headers: Mapping[str, str]) -> str:
    """The credential a forwarded request carries, as its hop proof binds it: its
    ``Authorization`` and ``Cookie`` headers."""
    return f"{headers.get('authorization', '')}\n{headers.get('cookie', '')}"


def hop_proof(
    key: bytes,
    method: str,
    path: str,
    host: str,
    at_us: int,
    body: bytes = b"",
    credential: str = "\n",
) -> str:
    """The proof that a process of the floor (holding ``key``) forwards ``method path`` with
    ``body`` and ``credential`` (:func:`hop_credential`), which its caller sent to ``host``, at
    ``at_us``: ``<at_us>.<HMAC-SHA256 hex>``."""
    body_digest = hashlib.sha256(body).hexdigest()
    credential_digest = hashlib.sha256(credential.encode("utf-8", "surrogateescape")).hexdigest()
    message = (
        f"{at_us}\n{method.upper()}\n{path}\n{host}\n{body_digest}\n{credential_digest}".encode(
            "utf-8", "surrogateescape"
        )
    )
    return f"{at_us}.{hmac.new(key, message, hashlib.sha256).hexdigest()}"


def hop_holds(
    key: bytes | None,
    method: str,
    path: str,
    host: str,
    body: bytes,
    credential: str,
    proof: str,
) -> bool:
    """Whether ``proof`` proves this very request — its method, path, caller's host, body and
    credential — forwarded by a process of the floor within :data:`HOP_SECONDS`."""
    stamp, _, _ = proof.partition(".")
    if key is None or not stamp.isdigit() or len(stamp) > 20:
        return False
    if abs(time.time() - int(stamp) / 1e6) > HOP_SECONDS:
        return False
    expected = hop_proof(key, method, path, host, int(stamp), body, credential)
    return hmac.compare_digest(proof.encode(), expected.encode())


def caller_host(request: Request) -> str:
    """The host the caller sent ``request`` to: its own ``Host``, or — a request another
    process of the floor forwarded here whose proof held (:class:`ForwardTableRequests`
    checked it against the request as it arrived) — the host the caller sent it to there
    (:data:`CALLER_HOST`). Without the proof the header counts for nothing."""
    host = request.headers.get("host", "")
    proven = request.scope.get(_HOP_HOST)
    return proven if isinstance(proven, str) else host


def socket_url(base: str) -> str:
    """The WebSocket address of a process serving at ``base``.

    >>> socket_url("http://10.0.0.2:8000")
    'ws://10.0.0.2:8000/ws'
    >>> socket_url("https://floor-2.casino:8443/")
    'wss://floor-2.casino:8443/ws'
    """
    scheme, rest = base.split("://", 1)
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}/ws"


def _moving(table: str) -> dict[str, Any]:
    return {
        "type": "error",
        "id": None,
        "code": "moving",
        "rule": LEASE_RULE,
        "message": f"Table {table} is being taken over by another process of the floor; "
        "reconnecting.",
    }


async def forward_socket(
    floor: Floor,
    socket: WebSocket,
    session: Session,
    connection: Connection,
    hello: Hello,
    join: str,
    table: str,
) -> bool:
    """Forward the rest of a socket to the process that runs ``table`` (``join``: the join
    frame as the terminal sent it), until either side closes or the table's lease moves away
    from that process (one stopped without closing its sockets, by ``SIGSTOP`` or a cut
    cable, would otherwise hold the terminal). While no process runs the table (a takeover
    under way), or its process does not answer yet, the socket waits here, up to twice the
    lease time, rather than make the terminal reconnect again and again; True when
    the table came to this very process meanwhile (the caller joins it here). A socket that was
    itself forwarded here is never forwarded again."""
    forwarded = FORWARDED in socket.headers
    leases = getattr(socket.app.state, "leases", None)
    patience = 0.0 if leases is None else 2 * leases.settings.seconds
    deadline = time.monotonic() + patience
    while True:
        if table in floor.tables:
            return True
        url = floor.elsewhere(table)
        if url is None:  # no such table (any more): the caller's join refuses it
            return True
        if (
            url
            and not forwarded
            and await _pipe(floor, socket, session, connection, hello, join, table, url)
        ):
            return False
        if time.monotonic() >= deadline:
            connection.push(_moving(table))
            return False
        await asyncio.sleep(0.2)


async def _pipe(
    floor: Floor,
    socket: WebSocket,
    session: Session,
    connection: Connection,
    hello: Hello,
    join: str,
    table: str,
    url: str,
) -> bool:
    """Pass the socket's frames to and from the process at ``url``; False when that process
    could not be reached (nothing was passed)."""
    from websockets.asyncio.client import connect

    headers = {FORWARDED: "1"}
    cookie = socket.headers.get("cookie")
    if hello.token is None and cookie:
        headers["Cookie"] = cookie
    try:
        upstream = await connect(
            socket_url(url), additional_headers=headers, open_timeout=3, max_size=2**22
        )
    except Exception as error:
        log.info("table %s: its process at %s does not answer: %s", table, url, error)
        return False
    async with upstream:
        try:
            await upstream.send(hello.model_dump_json(exclude_none=True))
            answer = await upstream.recv()
        except Exception:  # it went away at once: as if it had not answered
            return False
        text = answer if isinstance(answer, str) else answer.decode()
        if json.loads(text).get("type") != "welcome":  # refused there: the terminal is told
            connection.push(text)
            return True

        async def down() -> None:
            await upstream.send(join)
            async for message in upstream:
                connection.push(message if isinstance(message, str) else message.decode())

        async def up() -> None:
            while True:
                frame = await session.receive()
                if frame is None or frame.text is None:
                    return
                await upstream.send(frame.text)

        async def watch() -> None:
            while floor.elsewhere(table) == url:
                await asyncio.sleep(0.25)

        tasks = [asyncio.create_task(part()) for part in (down, up, watch)]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, Exception):
                    await task
    return True


def _forward_headers(
    headers: Mapping[str, str], key: bytes | None, method: str, path: str, body: bytes = b""
) -> dict[str, str]:
    """The headers a forwarded request carries: the caller's (but those of the hop), the
    forwarding mark, and — with the floor's hop key — the host the caller reached and the
    proof of the hop (binding the body and the credential it is sent with)."""
    out = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS}
    out[FORWARDED] = "1"
    host = headers.get("host")
    if key is not None and host is not None:
        out[CALLER_HOST] = host
        credential = hop_credential({k.lower(): v for k, v in out.items()})
        out[HOP] = hop_proof(key, method, path, host, int(time.time() * 1e6), body, credential)
    return out


async def _client() -> httpx.AsyncClient:
    import httpx

    return httpx.AsyncClient(timeout=10.0)


async def forward_request(request: Request, where: str) -> httpx.Response:
    """``request`` sent on to the process of the floor at ``where``, with its credential, the
    forwarding mark and the hop's proof; that process's answer (raises when it does not
    answer)."""
    body = await request.body()
    path = str(request.scope.get("path", ""))
    query = request.scope.get("query_string", b"").decode("latin-1")
    key: bytes | None = getattr(request.app.state, "hop_key", None)
    async with await _client() as client:
        return await client.request(
            request.method,
            where.rstrip("/") + path + (f"?{query}" if query else ""),
            headers=_forward_headers(request.headers, key, request.method, path, body),
            content=body,
        )


class ForwardTableRequests:
    """ASGI middleware: a request of ``/api/tables/{id}/…`` for a table another process of the
    floor runs, or a terminal's tilt or clear (``/api/floor/terminals/{id}/tilt|clear``) whose
    registered table another process runs, is forwarded there with its credential and
    answered with that process's answer; while no process runs it (a takeover under way) it is
    answered 503 (code ``moving``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a forwarded request's proof; forward the request, or pass it on."""
        if scope["type"] == "http" and any(name == HOP.encode() for name, _ in scope["headers"]):
            checked = await _checked_hop(scope, receive, send)
            if checked is None:
                return
            receive = checked
        path = str(scope.get("path", ""))
        terminal = _TERMINAL_ACTION.match(path)
        if scope["type"] != "http" or not (path.startswith("/api/tables/") or terminal):
            await self.app(scope, receive, send)
            return
        floor: Floor | None = getattr(scope["app"].state, "floor", None) if "app" in scope else None
        request = Request(scope, receive)
        if floor is None or FORWARDED in request.headers or (not floor.others and terminal):
            await self.app(scope, receive, send)
            return
        if terminal is None:
            table: str | None = unquote(path.split("/")[3])
        else:
            table = await _table_of_terminal(floor, unquote(terminal.group(1)))
        if table is None or table in floor.tables or (where := floor.elsewhere(table)) is None:
            await self.app(scope, receive, send)
            return
        if not where:
            response: Response = JSONResponse(
                {"detail": {k: v for k, v in _moving(table).items() if k != "type"}},
                503,
                headers={"Retry-After": "1"},
            )
            await response(scope, receive, send)
            return
        try:
            answer = await forward_request(request, where)
        except Exception as error:
            log.warning("table %s: its process at %s does not answer: %s", table, where, error)
            response = JSONResponse({"detail": _moving(table)}, 503, headers={"Retry-After": "1"})
            await response(scope, receive, send)
            return
        response = Response(
            answer.content,
            answer.status_code,
            headers={
                k: v
                for k, v in answer.headers.items()
                if k.lower() in ("content-type", "retry-after", "set-cookie")
            },
        )
        await response(scope, receive, send)


async def _checked_hop(scope: Scope, receive: Receive, send: Send) -> Receive | None:
    """A request carrying a hop proof: the body it came with, replayed, when the proof holds
    (the caller's host is then the one it names, :func:`caller_host`); None when it was
    refused (403 ``hop``, counted for the audit log)."""
    request = Request(scope, receive)
    body = await request.body()
    state = scope["app"].state if "app" in scope else None
    key: bytes | None = getattr(state, "hop_key", None)
    claimed = request.headers.get(CALLER_HOST, "")
    if hop_holds(
        key,
        request.method,
        str(scope.get("path", "")),
        claimed,
        body,
        hop_credential(request.headers),
        request.headers.get(HOP, ""),
    ):
        scope[_HOP_HOST] = claimed
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay
    message = (
        "This request claims to be forwarded by a process of the floor, but its proof does not "
        "hold for it (its body, credential, method, path or host changed since, or the proof "
        f"is stale or forged) ({HOP_RULE})."
    )
    gate = getattr(state, "gate", None)
    if gate is not None:
        gate.unauthenticated(request, "hop", message, HOP_RULE)
    response = JSONResponse({"detail": {"code": "hop", "rule": HOP_RULE, "message": message}}, 403)
    await response(scope, receive, send)
    return None


async def _table_of_terminal(floor: Floor, terminal: str) -> str | None:
    """The table a terminal is registered at (None: no such terminal)."""
    from tablejack.store.vouchers import terminal as terminal_row

    row = await terminal_row(floor.store, terminal)
    return None if row is None else str(row["table_id"])


async def floor_tables(request: Request, floor: Floor) -> list[dict[str, Any]]:
    """Every table of the floor for ``GET /api/tables``: this process's, and each other
    process's as it answers for itself (a process that does not answer: its tables as the
    leases show them)."""
    if FORWARDED in request.headers or not floor.others:
        return [table.summary() for table in floor.tables.values()]
    listed = floor.summaries()
    wanted = {
        str(row["elsewhere"])
        for row in listed
        if row.get("elsewhere") and row["id"] not in floor.tables
    }
    if not wanted:
        return listed
    answers: dict[str, dict[str, Any]] = {}
    key: bytes | None = getattr(request.app.state, "hop_key", None)
    headers = _forward_headers(request.headers, key, "GET", "/api/tables")
    async with await _client() as client:
        replies = await asyncio.gather(
            *(client.get(url.rstrip("/") + "/api/tables", headers=headers) for url in wanted),
            return_exceptions=True,
        )
    for reply in replies:
        if isinstance(reply, BaseException) or reply.status_code != 200:
            continue
        for row in reply.json():
            answers[str(row["id"])] = row
    return [answers.get(str(row["id"]), row) for row in listed]
