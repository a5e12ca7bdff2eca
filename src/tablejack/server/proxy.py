"""Reaching a table another process of the floor runs: the socket and the request are
forwarded to it (a proxy), not redirected.

A terminal's page talks to the address it was loaded from: its session is an HttpOnly cookie of
that host, and a socket signed in by cookie must come from the same origin
(:mod:`tablejack.server.signin`). A redirect to another process — another host, another port
behind a load balancer, an address the terminals cannot even reach — would lose both, and the
terminal would have to sign in again at every failover. So the process a terminal connects to
forwards it:

* **The socket.** The hello is answered here (any process authenticates: the credentials are in
  the shared database). When the ``join`` names a table another process runs
  (:class:`~tablejack.server.floor.TableElsewhereError`), this process opens a socket to it,
  says the same hello there (with the page's cookie), and from the ``join`` on passes every
  frame both ways unchanged. The table's process sees an ordinary terminal; this one keeps
  nothing of the table. When the table's process drops the socket (it stopped, or the table
  moved), this one closes the terminal's, and the page reconnects and joins again — reaching
  the table's new process. A join for a table no process runs at this moment (a takeover under
  way), or whose process does not answer yet, waits — the socket open, the terminal's frames
  kept — until a process runs it, for up to twice the lease time; then it is answered with an
  ``error`` frame (code ``moving``) and the socket is closed, and the page tries again.
* **The table's REST routes** (``/api/tables/{id}/…``) are forwarded the same way
  (:class:`ForwardTableRequests`), with the caller's credential; ``GET /api/tables`` lists the
  floor's tables, asking the others for theirs (:func:`floor_tables`).

A forwarded socket or request carries the header :data:`FORWARDED`; a process that gets one for
a table it does not run refuses it rather than forwarding it again, so nothing goes round in
circles while the leases move. The cost is one more hop for a terminal whose socket landed on
another process than its table's: a load balancer that sends each terminal to its table's
process (or terminals given that address) avoids it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from tablejack.server.floor import LEASE_RULE, Connection, Floor
from tablejack.server.gate import Session
from tablejack.server.protocol import Hello

if TYPE_CHECKING:
    import httpx

__all__ = ["FORWARDED", "ForwardTableRequests", "floor_tables", "forward_socket", "socket_url"]

log = logging.getLogger("tablejack.server")

FORWARDED = "x-tablejack-forwarded"
"""The header of a socket or request one process of the floor forwards to another."""
_HOP_HEADERS = {"host", "connection", "content-length", "transfer-encoding", "keep-alive"}


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


def _forward_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS}
    out[FORWARDED] = "1"
    return out


async def _client() -> httpx.AsyncClient:
    import httpx

    return httpx.AsyncClient(timeout=10.0)


class ForwardTableRequests:
    """ASGI middleware: a request of ``/api/tables/{id}/…`` for a table another process of the
    floor runs is forwarded there with its credential and answered with that process's answer;
    while no process runs it (a takeover under way) it is answered 503 (code ``moving``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Forward the request, or pass it on."""
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or not path.startswith("/api/tables/"):
            await self.app(scope, receive, send)
            return
        floor: Floor | None = getattr(scope["app"].state, "floor", None) if "app" in scope else None
        table = unquote(path.split("/")[3])
        request = Request(scope, receive)
        if (
            floor is None
            or table in floor.tables
            or FORWARDED in request.headers
            or (where := floor.elsewhere(table)) is None
        ):
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
        body = await request.body()
        target = where.rstrip("/") + path
        query = scope.get("query_string", b"").decode("latin-1")
        try:
            async with await _client() as client:
                answer = await client.request(
                    request.method,
                    target + (f"?{query}" if query else ""),
                    headers=_forward_headers(request.headers),
                    content=body,
                )
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
    headers = _forward_headers(request.headers)
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
