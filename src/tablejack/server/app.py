"""The ASGI application: REST (with an OpenAPI document at ``/openapi.json``), the WebSocket
protocol at ``/ws`` and the static pages (terminal, dealer console, supervisor).

``create_app(db_url, tables=…, demo=…)`` builds the app; uvicorn runs it (``tablejack serve``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, WebSocket
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import Field, StrictInt
from starlette.websockets import WebSocketDisconnect

from tablejack.server.access import Strict, Who, floor_of, need, refuse
from tablejack.server.auth import AuthRefusedError, Principal
from tablejack.server.compose import make_floor
from tablejack.server.floor import Connection, Floor
from tablejack.server.gate import Gate, GateLimits, RefuseControlCharacters, Session
from tablejack.server.protocol import (
    PROTOCOL_VERSION,
    Action,
    DealerCommand,
    Hello,
    Join,
    MalformedMessageError,
    Ping,
    Repeat,
    SelectPosition,
    WagerMessage,
)
from tablejack.server.recall import recall
from tablejack.server.signin import sign_in
from tablejack.server.table import RefusedError, Table, TableConfig
from tablejack.server.text import SafeText
from tablejack.server.trust_api import CheckpointSettings, run_checkpoints
from tablejack.server.trust_api import register as register_trust
from tablejack.server.wire import dumps
from tablejack.store import Store
from tablejack.store.checkpoints import Checkpointer
from tablejack.store.keys import load_private_key
from tablejack.store.policy import PERMISSIONS

__all__ = ["RateLimit", "create_app"]

log = logging.getLogger("tablejack.server")

SIGN_IN_REFUSALS = {
    "auth": "unknown token",
    "terminal": "terminal not proven",
    "role": "not a person's credential",
    "origin": "cookie from another origin",
}
"""The close reason (and the audit log's word) of each refused sign-in."""
STATIC = resources.files("tablejack.server") / "static"
SWAGGER_FILES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
"""The files of Swagger UI that ``/docs`` uses, served under ``/docs/assets/`` from the
``swagger-ui-py`` package's copy (``swagger_ui/static``): ``/docs`` needs no network."""


class RateLimit:
    """A token bucket per connection: ``burst`` messages at once, ``per_second`` after."""

    def __init__(self, per_second: float = 20.0, burst: float = 40.0) -> None:
        self.per_second = per_second
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()
        self.refused = 0

    def allow(self) -> bool:
        """Take one token if there is one."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_second)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.refused = 0
            return True
        self.refused += 1
        return False


class DealerBody(Strict):
    """A dealer console command."""

    command: SafeText = Field(pattern=r"^[a-z-]{1,24}$")
    card: SafeText | None = Field(default=None, min_length=2, max_length=3)


class VoidBody(Strict):
    """Why a round is voided."""

    reason: SafeText = Field(default="voided by the supervisor", max_length=200)


class InspectionBody(Strict):
    """A card reader inspection (633c.5(d)): its result and a note."""

    result: SafeText = Field(default="ok", pattern=r"^(ok|fault)$")
    note: SafeText = Field(default="", max_length=200)


class DecksBody(Strict):
    """New decks registered at the table (633c.5(g)): how many."""

    decks: StrictInt = Field(ge=1, le=8)


class DeckInspectionBody(Strict):
    """The dealer's deck inspection, verified by the floorperson (633c.5(i))."""

    dealer: SafeText = Field(min_length=1, max_length=64)
    result: SafeText = Field(default="ok", pattern=r"^(ok|defect)$")
    note: SafeText = Field(default="", max_length=200)


Setup = Callable[[Floor], Awaitable[None]]


def create_app(
    db_url: str,
    *,
    tables: list[TableConfig] | None = None,
    setup: Setup | None = None,
    clock: Callable[[], float] = time.time,
    rate: tuple[float, float] = (20.0, 40.0),
    broadcast_interval: float = 0.0,
    reader_port: int | None = None,
    reader_host: str = "127.0.0.1",
    reader_tls: ssl.SSLContext | None = None,
    release_manifest: Path | None = None,
    manifest_public_key: Path | None = None,
    checkpoints: CheckpointSettings | None = None,
    demo: bool = False,
    gate: GateLimits | None = None,
) -> FastAPI:
    """The app for one floor on ``db_url``: the given tables, then those saved in the store;
    ``setup`` runs once the floor is up (the demo uses it to add players and tokens).
    ``reader_port``: also listen for card readers on a raw TCP port
    (:mod:`tablejack.server.reader`; 0 = any free port, in ``app.state.reader_port``), over TLS
    with ``reader_tls`` (:mod:`tablejack.server.tls`). ``release_manifest`` and
    ``manifest_public_key``: the release manifest the supervisor's software check compares with
    (default: the package's) and the public key its signature must verify with
    (:mod:`tablejack.server.integrity`, PA 605a.4(c)). ``checkpoints``: the key that signs
    the checkpoints of the event log and the file they are appended to
    (:mod:`tablejack.store.checkpoints`; none: no signed checkpoints). ``demo``: the demo's
    sign-in page (never on a real floor). ``gate``: the limits of the WebSocket before and after
    the hello (:mod:`tablejack.server.gate`; its constants by default)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        checkpointer = None
        if checkpoints is not None:  # before the database: a bad key starts nothing
            key = load_private_key(checkpoints.key)
        store = await Store.open(db_url)
        floor = make_floor(store, clock=clock, broadcast_interval=broadcast_interval)
        app.state.floor = floor
        if checkpoints is not None:
            checkpointer = Checkpointer(store, key, checkpoints.file)
        app.state.checkpointer = checkpointer
        floor.auth.start()
        app.state.gate = Gate(store, gate)
        await floor.refresh_balances()
        for config in tables or []:
            await floor.add_table(config)
        await floor.load_stored_tables(skip=[c.id for c in tables or []])
        if setup is not None:
            await setup(floor)
        if checkpointer is not None:  # the tail of a crash, the set-up: signed before play
            await start_checkpoint(floor, checkpointer)
        listener = None
        if reader_port is not None:
            from tablejack.server.reader import start_reader_listener

            listener = await start_reader_listener(floor, reader_host, reader_port, tls=reader_tls)
            app.state.reader_port = listener.sockets[0].getsockname()[1]
        signing = (
            None
            if checkpointer is None or checkpoints is None
            else asyncio.create_task(run_checkpoints(floor, checkpointer, checkpoints))
        )
        try:
            yield
        finally:
            if listener is not None:
                listener.close()
            from tablejack.server import protections, tilts

            await tilts.drain(floor)  # pending connection_lost checks
            await protections.drain(floor)  # a reload of the guard's cache under way
            await floor.stop()
            await floor.auth.stop()
            if signing is not None:
                signing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await signing
            if checkpointer is not None:  # everything written is signed before the door shuts
                await checkpointer.checkpoint("shutdown")
            await app.state.gate.close()  # the audit rows of bad input still open
            await store.close()

    app = FastAPI(
        title="tablejack table server",
        version=str(PROTOCOL_VERSION),
        description="Hybrid table system: terminals (WebSocket /ws, protocol version "
        f"{PROTOCOL_VERSION}), dealer console, supervisor REST API. Roles: player, dealer, "
        "supervisor (Authorization: Bearer <token>).",
        lifespan=lifespan,
        docs_url=None,  # served below with Swagger UI's own files, not a CDN's
        redoc_url=None,
    )
    app.state.release_manifest = release_manifest
    app.state.manifest_public_key = manifest_public_key
    app.state.checkpointer = None
    app.state.demo = demo
    app.add_middleware(RefuseControlCharacters)  # a NUL in a path or query: 422

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> Response:
        """422 as FastAPI answers it; the audit log counts it (one row per burst)."""
        request.app.state.gate.invalid_request(request, error.errors())
        return await request_validation_exception_handler(request, error)

    def table_of(request: Request, table_id: str) -> Table:
        table = floor_of(request).tables.get(table_id)
        if table is None:
            raise HTTPException(404, f"No table {table_id!r}.")
        return table

    async def refused_http(
        request: Request, refusal: RefusedError, who: Principal, table: str
    ) -> HTTPException:
        """409 with the refusal (503 when the store failed), written to the audit log if the
        store takes it."""
        try:
            await floor_of(request).store.audit(
                refusal.code, refusal.message, table_id=table, actor=who[1], rule=refusal.rule
            )
        except Exception:  # the store that failed the step may refuse this too
            log.exception("the refusal %r could not be audited", refusal.message)
        status = 503 if refusal.code == "storage_error" else 409
        return HTTPException(
            status, {"code": refusal.code, "rule": refusal.rule, "message": refusal.message}
        )

    # -- pages -----------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def index() -> RedirectResponse:
        return RedirectResponse("/static/index.html")

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> FileResponse:
        if "/" in name or name.startswith(".") or not STATIC.joinpath(name).is_file():
            raise HTTPException(404, "No such page.")
        media = {
            "js": "text/javascript",
            "css": "text/css",
            "html": "text/html",
            "svg": "image/svg+xml",
        }.get(name.rsplit(".", 1)[-1], "application/octet-stream")
        return FileResponse(str(STATIC.joinpath(name)), media_type=media)

    def redirect_to(page: str) -> Callable[[], RedirectResponse]:
        def go() -> RedirectResponse:
            return RedirectResponse(f"/static/{page}.html")

        return go

    for page in ("terminal", "dealer", "supervisor"):
        app.add_api_route(f"/{page}", redirect_to(page), include_in_schema=False)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        """The OpenAPI document in Swagger UI, every file from this server (a floor's network
        may reach nothing else)."""
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )

    @app.get("/docs/assets/{name}", include_in_schema=False)
    async def docs_asset(name: str) -> FileResponse:
        media = SWAGGER_FILES.get(name)
        if media is None:
            raise HTTPException(404, "No such file.")
        found = resources.files("swagger_ui") / "static" / name
        return FileResponse(str(found), media_type=media)

    # -- REST --------------------------------------------------------------------------------

    @app.get("/api/protocol")
    async def protocol() -> dict[str, Any]:
        """The WebSocket protocol version this server speaks."""
        return {"version": PROTOCOL_VERSION, "websocket": "/ws"}

    @app.get("/api/me")
    async def me(request: Request, who: Who) -> dict[str, Any]:
        """Who the credential is: role, subject, the terminal a player's session is bound to
        (and that terminal's table and position), when it expires; a player's balance; what
        the role may do (``may``: the operations of the permission table, so a page shows
        only what its reader may use)."""
        balance = (
            await floor_of(request).store.balance(who.subject) if who.role == "player" else None
        )
        binding = await floor_of(request).auth.binding(who.terminal) if who.terminal else None
        return {
            "role": who.role,
            "subject": who.subject,
            "terminal": who.terminal or None,
            "table": None if binding is None else binding.table,
            "position": None if binding is None else binding.position,
            "expires_us": who.expires_us,
            "balance": balance,
            "may": sorted(operation for operation in PERMISSIONS if who.may(operation)),
        }

    @app.get("/api/tables")
    async def list_tables(request: Request, who: Who) -> list[dict[str, Any]]:
        """Every table of the floor."""
        return [t.summary() for t in floor_of(request).tables.values()]

    @app.get("/api/tables/{table_id}")
    async def table_info(request: Request, table_id: str, who: Who) -> dict[str, Any]:
        """A table's layout and game rules icon."""
        return table_of(request, table_id).info()

    @app.get("/api/tables/{table_id}/state")
    async def table_state(request: Request, table_id: str, who: Who) -> dict[str, Any]:
        """The table as the caller may see it."""
        table = table_of(request, table_id)
        if who[0] == "player":
            return table.player_state(who.subject, who.terminal)
        return table.staff_state()

    @app.post("/api/tables/{table_id}/open")
    async def open_table(request: Request, table_id: str, who: Who) -> dict[str, Any]:
        """Open a table (supervisor)."""
        await need(request, who, "open_close_table")
        table = table_of(request, table_id)
        await table.set_status("open")
        return table.summary()

    @app.post("/api/tables/{table_id}/close")
    async def close_table(request: Request, table_id: str, who: Who) -> dict[str, Any]:
        """Close a table (supervisor); the round in progress is finished first."""
        await need(request, who, "open_close_table")
        table = table_of(request, table_id)
        await table.set_status("closed")
        return table.summary()

    @app.post("/api/tables/{table_id}/dealer")
    async def dealer(request: Request, table_id: str, body: DealerBody, who: Who) -> dict[str, Any]:
        """A dealer console command: open-round, close-wagering, card, countdown-expired."""
        name = await need(request, who, "dealer_command")
        table = table_of(request, table_id)
        try:
            return await table.dealer_command(body.command, name, "console", body.card)
        except RefusedError as refusal:
            raise await refused_http(request, refusal, who, table_id) from None

    @app.post("/api/tables/{table_id}/reader", response_class=PlainTextResponse)
    async def reader(request: Request, table_id: str, who: Who) -> str:
        """The card reader line protocol over HTTP: one card code per line; one answer line
        per card (``OK <round> <seq>`` or ``ERR <rule> <message>``); ``FAULT <text>`` and the
        shoe's ``LOAD``/``UNLOAD`` … ``END`` blocks as on the TCP line (a block ends within one
        request)."""
        from tablejack.server.reader import LineSession  # cards, FAULT, LOAD/UNLOAD blocks

        name = await need(request, who, "reader")
        table = table_of(request, table_id)
        session = LineSession(floor_of(request), table, name, "reader")
        out = []
        for line in (await request.body()).decode(errors="replace").splitlines():
            answer = await session.line(line)
            if answer is not None:
                out.append(answer)
                if answer.startswith("ERR "):
                    break
        return "\n".join(out) + "\n"

    @app.post("/api/tables/{table_id}/void")
    async def void(request: Request, table_id: str, body: VoidBody, who: Who) -> dict[str, Any]:
        """Void the round in progress and refund its wagers (supervisor)."""
        name = await need(request, who, "void_round")
        table = table_of(request, table_id)
        try:
            return await table.void(name, body.reason)
        except RefusedError as refusal:
            raise await refused_http(request, refusal, who, table_id) from None

    @app.post("/api/tables/{table_id}/procedures/reader-inspection")
    async def reader_inspection(
        request: Request, table_id: str, body: InspectionBody, who: Who
    ) -> dict[str, Any]:
        """The floorperson's card reader device inspection for this gaming day (633c.5(d))."""
        name = await need(request, who, "reader_inspection")
        table = table_of(request, table_id)
        await table.record_procedure("reader_inspection", body.model_dump(), name)
        return table.procedures_state()

    @app.post("/api/tables/{table_id}/procedures/decks")
    async def register_decks(
        request: Request, table_id: str, body: DecksBody, who: Who
    ) -> dict[str, Any]:
        """New decks opened at the table (633c.5(g)): the 24-hour clock restarts."""
        name = await need(request, who, "register_decks")
        table = table_of(request, table_id)
        await table.record_procedure("decks_registered", body.model_dump(), name)
        return table.procedures_state()

    @app.post("/api/tables/{table_id}/procedures/deck-inspection")
    async def deck_inspection(
        request: Request, table_id: str, body: DeckInspectionBody, who: Who
    ) -> dict[str, Any]:
        """The dealer's inspection of the decks, verified by the floorperson (633c.5(i))."""
        name = await need(request, who, "deck_inspection")
        table = table_of(request, table_id)
        payload = body.model_dump() | {"verified_by": name}
        await table.record_procedure("deck_inspection", payload, name)
        return table.procedures_state()

    @app.get("/api/tables/{table_id}/procedures")
    async def procedures(request: Request, table_id: str, who: Who) -> dict[str, Any]:
        """The gaming-day record of a table."""
        await need(request, who, "read_procedures")
        table = table_of(request, table_id)
        return table.procedures_state() | {"history": table.procedures.history}

    @app.get("/api/meters")
    async def meters(request: Request, who: Who, table: str | None = None) -> list[dict[str, Any]]:
        """Drop, win and hold per table and wager kind (supervisor)."""
        await need(request, who, "read_meters")
        return await floor_of(request).store.meters(table)

    @app.get("/api/tables/{table_id}/rounds")
    async def table_rounds(
        request: Request, table_id: str, who: Who, limit: int = 20
    ) -> list[dict[str, Any]]:
        """The table's last rounds, newest first (supervisor)."""
        await need(request, who, "read_rounds")
        return await floor_of(request).store.rounds(table_id=table_id, limit=min(limit, 500))

    @app.get("/api/rounds/{round_id}")
    async def recall_round(request: Request, round_id: str, who: Who) -> dict[str, Any]:
        """Game recall: transcript, cards with read time, decisions with terminal,
        settlements with clause. A player may recall only rounds he played."""
        await need(request, who, "recall_round")
        document = await recall(floor_of(request).store, round_id)
        if document is None:
            raise HTTPException(
                404, {"code": "unknown_round", "rule": "", "message": f"No such round: {round_id}."}
            )
        if who[0] == "player":
            if not any(d["actor"] == who[1] for d in document["decisions"]):
                raise HTTPException(403, "A player may recall only the rounds he played.")
            document["events"] = []
        return document

    @app.get("/api/accounts/{account_id}/ledger")
    async def account_ledger(
        request: Request, account_id: str, who: Who, limit: int = 100
    ) -> dict[str, Any]:
        """An account's balance and ledger entries (supervisor, cashier, or the player himself)."""
        if not who.may("read_account") and not (who.role == "player" and who.subject == account_id):
            raise await refuse(
                request,
                who,
                "role",
                "Only the account's player, a cashier or a supervisor may read an account.",
                "PA 605a.4(d)",
            )
        store = floor_of(request).store
        balance = await store.balance(account_id)
        if balance is None:
            raise HTTPException(404, f"No account {account_id!r}.")
        return {
            "account": account_id,
            "balance": balance,
            "entries": await store.ledger_of(account_id, min(limit, 1000)),
        }

    @app.get("/api/terminals/{terminal}/rounds")
    async def terminal_rounds(request: Request, terminal: str, who: Who, n: int = 10) -> list[str]:
        """The last ``n`` rounds in which a terminal acted (supervisor)."""
        await need(request, who, "read_rounds")
        return await floor_of(request).store.rounds_of_terminal(terminal, min(n, 100))

    @app.get("/api/verify-log")
    async def verify_log(request: Request, who: Who) -> dict[str, Any]:
        """Verify the store: every hash chain, the ledger against the events, the invariants,
        and the signed checkpoints with the server's own key (supervisor, operator). Events no
        checkpoint covers yet are listed as ``pending``, not as problems."""
        from tablejack.store.verify import verify

        await need(request, who, "verify_log")
        checkpointer = request.app.state.checkpointer
        keys = [] if checkpointer is None else [checkpointer.private_key.public_key()]
        report = await verify(
            floor_of(request).store,
            public_keys=keys,
            checkpoint_file=None if checkpointer is None else checkpointer.file,
        )
        return report.to_json()

    @app.get("/api/audit")
    async def audit(
        request: Request, who: Who, table: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """RefusedError requests and irregularities, newest first (supervisor)."""
        await need(request, who, "read_audit")
        return await floor_of(request).store.audit_entries(table_id=table, limit=min(limit, 1000))

    # -- WebSocket ---------------------------------------------------------------------------

    @app.websocket("/ws")
    async def websocket(socket: WebSocket) -> None:
        await socket.accept()
        floor: Floor = socket.app.state.floor
        socket_gate: Gate = socket.app.state.gate  # limits before and after the hello
        connection: Connection | None = None
        session: Session | None = None
        writer: asyncio.Task[None] | None = None
        limit = RateLimit(*rate)
        try:
            first = await socket_gate.hello(socket)
            if first is None:
                return
            if first.protocol != PROTOCOL_VERSION:
                await socket.send_text(
                    dumps(
                        _error(
                            None,
                            "protocol",
                            "protocol version",
                            f"This server speaks protocol {PROTOCOL_VERSION}.",
                        )
                    )
                )
                await socket_gate.refuse(
                    socket, 1002, "protocol version", terminal=first.terminal or ""
                )
                return
            try:
                connection = await sign_in(floor, first, socket.cookies, socket.headers)
            except AuthRefusedError as refusal:  # a failed hello: counted, audited per burst
                await socket.send_text(
                    dumps(_error(None, refusal.code, refusal.rule, refusal.message))
                )
                await socket_gate.refuse(
                    socket,
                    1008,
                    SIGN_IN_REFUSALS.get(refusal.code, refusal.code),
                    detail=refusal.message,
                    terminal=first.terminal or "",
                )
                return
            floor.connections.add(connection)
            writer = asyncio.create_task(_write(socket, connection))
            connection.push(
                {
                    "type": "welcome",
                    "protocol": PROTOCOL_VERSION,
                    "role": connection.role,
                    "subject": connection.subject,
                    "terminal": connection.terminal,
                    "balance": floor.balances.get(connection.subject),
                    "tables": [t.summary() for t in floor.tables.values()],
                }
            )
            session = socket_gate.session(socket, connection)
            while True:
                frame = await session.receive()
                if frame is None:  # too big: closed
                    return
                if not floor.signed_in(connection):
                    connection.push(
                        _error(
                            None,
                            "credential",
                            "PA 605a.4(d)",
                            "The credential of this session was revoked or has expired; sign in "
                            "again.",
                        )
                    )
                    connection.push(None)
                    if writer is not None:
                        with contextlib.suppress(Exception):
                            await asyncio.wait_for(asyncio.shield(writer), 2)
                    return
                if not limit.allow():
                    if limit.refused == 1:
                        await floor.store.audit(
                            "rate_limited",
                            "message flood",
                            table_id=connection.table or "",
                            actor=connection.subject,
                            terminal=connection.terminal,
                            rule="server rate limit",
                        )
                    connection.push(
                        _error(
                            None,
                            "rate_limited",
                            "server rate limit",
                            "Too many messages; this one was not applied.",
                        )
                    )
                    if limit.refused > 200:
                        await socket.close(1008, "rate limit")
                        return
                    continue
                try:
                    message = frame.message()
                except MalformedMessageError as error:  # an error frame; the socket stays open
                    if await session.malformed(error):
                        return  # closed: repeated malformed messages
                    continue
                await _handle(floor, connection, message)
        except WebSocketDisconnect:
            pass
        finally:
            if session is not None:
                session.end()
            if connection is not None:
                floor.connections.discard(connection)
                if connection.table in floor.tables:
                    floor.tables[connection.table].subscribers.discard(connection)
                if connection.role == "player":  # PA 605a: a connection_lost tilt mid-round
                    from tablejack.server.tilts import schedule_connection_lost

                    schedule_connection_lost(floor, connection)
            if writer is not None:
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await writer

    from tablejack.server.floor_api import register as register_floor  # PA Chapter 605a

    register_floor(app)
    from tablejack.server.tilt_api import register as register_tilts  # PA 605a lock-out

    register_tilts(app)
    from tablejack.server.terminal_features import register as register_terminal  # PA 605a

    register_terminal(app)
    register_trust(app)  # sessions, credentials, the cage, checkpoints
    if demo:
        from tablejack.server.demo import register as register_demo

        register_demo(app)
    return app


async def start_checkpoint(floor: Floor, checkpointer: Checkpointer) -> None:
    """At start: sign what the log holds beyond the last checkpoint (the tail a crash left),
    and say so in the audit log."""
    async with floor.store.engine.connect() as connection:
        from sqlalchemy import func, select

        from tablejack.store.models import ROUNDS

        uncovered = await connection.scalar(
            select(func.count()).where(ROUNDS.c.last_seq > ROUNDS.c.covered_seq)
        )
    made = await checkpointer.checkpoint("start")
    if made is not None and uncovered:
        await floor.store.audit(
            "checkpoint",
            f"at start, checkpoint {made.number} signed {uncovered} stream(s) written after the "
            "last checkpoint (the tail of a crash, or writes while no server ran)",
            rule="signed checkpoints",
        )


async def _write(socket: WebSocket, connection: Connection) -> None:
    while True:
        message = await connection.queue.get()
        if message is None:
            with contextlib.suppress(Exception):
                await socket.close(1008, "too slow" if connection.overflowed else "closing")
            return
        try:
            await socket.send_text(message if isinstance(message, str) else dumps(message))
        except Exception:  # the socket went away: the reader will notice
            return


def _error(command_id: str | None, code: str, rule: str, message: str) -> dict[str, Any]:
    return {"type": "error", "id": command_id, "code": code, "rule": rule, "message": message}


async def _handle(floor: Floor, connection: Connection, message: Any) -> None:
    if isinstance(message, Ping):
        connection.push({"type": "pong", "id": message.id})
        return
    command_id = getattr(message, "id", None)
    try:
        reply = await _dispatch(floor, connection, message)
    except RefusedError as refusal:
        await floor.store.audit(
            refusal.code,
            refusal.message,
            table_id=connection.table or "",
            actor=connection.subject,
            terminal=connection.terminal,
            rule=refusal.rule,
        )
        frame = _error(command_id, refusal.code, refusal.rule, refusal.message)
        frame.update(getattr(refusal, "details", None) or {})  # e.g. the amount to confirm
        connection.push(frame)
        return
    connection.push({"type": "ack", "id": command_id, **reply})


async def _dispatch(floor: Floor, connection: Connection, message: Any) -> dict[str, Any]:
    from tablejack.server.sequence import check_sequence

    check_sequence(floor, connection, message)  # gaps and repeats refused
    if isinstance(message, Hello):
        raise RefusedError("protocol", "Already authenticated.", "protocol")
    if isinstance(message, Join):
        table = floor.tables.get(message.table)
        if table is None:
            raise RefusedError("table", f"No table {message.table!r}.", "table")
        binding = connection.binding
        if binding is not None and binding.table != table.id:
            raise RefusedError(
                "terminal",
                f"Terminal {binding.terminal} serves table {binding.table}, not {table.id}.",
                "PA 605a.4(d)",
            )
        if connection.table in floor.tables:
            floor.tables[connection.table].subscribers.discard(connection)
        connection.table = table.id
        table.subscribers.add(connection)
        connection.push({"type": "table", **table.info()})
        from tablejack.server.tilts import on_join  # PA 605a: a locked table or terminal

        on_join(connection, table)
        if binding is not None and binding.position is not None:
            table.select_position(connection.subject, binding.position, connection.terminal)
        connection.push(
            table.player_state(connection.subject, connection.terminal)
            if connection.role == "player"
            else table.staff_state()
        )
        return {"ok": True, "table": table.id}
    table = floor.tables.get(connection.table or "")
    if table is None:
        raise RefusedError("table", "Join a table first.", "protocol")
    if isinstance(message, DealerCommand):
        if connection.role != "dealer":
            raise RefusedError(
                "role",
                f"A {connection.role} terminal may not send dealer commands.",
                "role: dealer",
            )
        return await table.dealer_command(
            message.command, connection.subject, connection.terminal, message.card
        )
    if connection.role != "player":
        raise RefusedError(
            "role", "Only a player terminal places wagers and decisions.", "role: player"
        )
    if isinstance(message, SelectPosition):
        bound = connection.binding.position if connection.binding is not None else None
        if bound is not None and message.position != bound:
            raise RefusedError(
                "position",
                f"Terminal {connection.terminal} is bound to position {bound}.",
                "PA 633c.5(l)",
            )
        table.select_position(connection.subject, message.position, connection.terminal)
        connection.push(table.player_state(connection.subject, connection.terminal))
        return {"ok": True, "position": message.position}
    if isinstance(message, WagerMessage | Action):  # limits, self-exclusion, tilts
        from tablejack.server.protections import guard, wager_at_stake

        wager = isinstance(message, WagerMessage)
        at_stake = (
            message.amount
            if isinstance(message, WagerMessage)
            else wager_at_stake(table, connection.subject, message.verb, message.amount)
        )
        await guard(floor, connection.subject, connection.terminal, table, at_stake, wager=wager)
    if isinstance(message, WagerMessage | Repeat):  # PA 605a double confirmation, repeat
        from tablejack.server.terminal_features import confirm_wager, repeat_last_bet

        if isinstance(message, Repeat):
            return await repeat_last_bet(floor, connection, table, message)
        confirm_wager(table, connection, message)  # the table's checks first
    if isinstance(message, WagerMessage):
        return await table.wager(
            connection.subject,
            connection.terminal,
            message.kind,
            message.amount,
            message.id,
            message.spots,
        )
    if isinstance(message, Action):
        return await table.action(
            connection.subject,
            connection.terminal,
            message.verb,
            message.amount,
            message.position,
            message.id,
            message.spots,
        )
    raise RefusedError("protocol", "Unexpected message.", "protocol")  # pragma: no cover
