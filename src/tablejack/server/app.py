"""The ASGI application and the composition root of a floor: REST (with an OpenAPI document at
``/openapi.json``), the WebSocket protocol at ``/ws`` and the static pages.

``create_app(db_url, tables=…, demo=…)`` builds the app; uvicorn runs it (``tablejack serve``).
Its lifespan opens the store, makes the floor with its duties (:mod:`~tablejack.server.compose`),
starts the tables, the card reader listener and the checkpoint signer, and stops them in order.
The routes live in their routers: :mod:`~tablejack.server.http.pages`,
:mod:`~tablejack.server.http.tables`, :mod:`~tablejack.server.http.records`,
:mod:`~tablejack.server.socket.terminal`, the floor's :mod:`~tablejack.server.http.cash`,
:mod:`~tablejack.server.http.settings`, :mod:`~tablejack.server.http.terminals`,
:mod:`~tablejack.server.http.meters`, :mod:`~tablejack.server.http.tips`,
:mod:`~tablejack.server.http.limits`, :mod:`~tablejack.server.http.tilts`,
:mod:`~tablejack.server.http.languages`, :mod:`~tablejack.server.http.trust` and the
demo's :mod:`~tablejack.server.http.demo`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from tablejack.server.compose import compose
from tablejack.server.floor.floor import Floor
from tablejack.server.floor.leasing import FloorLeases, LeaseSettings, lease_options, save_tables
from tablejack.server.http import cage as cage_api
from tablejack.server.http import (
    cash,
    health,
    languages,
    limits,
    meters,
    pages,
    settings,
    terminals,
    tips,
)
from tablejack.server.http import metrics as floor_metrics
from tablejack.server.http import records as records_api
from tablejack.server.http import tables as tables_api
from tablejack.server.http import tilts as tilt_api
from tablejack.server.http import trust as trust_api
from tablejack.server.http.trust import CheckpointSettings, run_checkpoints
from tablejack.server.socket import terminal as terminal_socket
from tablejack.server.socket.gate import Gate, GateLimits, RefuseControlCharacters
from tablejack.server.socket.proxy import ForwardTableRequests
from tablejack.server.support.auth import AuthRefusedError
from tablejack.server.support.bounds import (
    BODY_MAX_BYTES,
    LimitBody,
    StrictJson,
    validation_errors,
)
from tablejack.server.support.contract import publish
from tablejack.server.support.logs import RequestIds
from tablejack.server.support.protocol import PROTOCOL_VERSION
from tablejack.server.table import TableConfig
from tablejack.store import Store
from tablejack.store.checkpoints import Checkpointer, CheckpointLockBusyError, uncovered_streams
from tablejack.store.keys import load_private_key
from tablejack.store.leases import floor_hop_key

__all__ = ["Setup", "create_app", "start_checkpoint"]

log = logging.getLogger("tablejack.server")

SIGNING_STOP_SECONDS = 30.0
"""How long a shutdown waits for the checkpoint signer to finish the checkpoint it is writing
(a database that does not answer: then it is cancelled)."""

START_LOCK_WAIT_SECONDS = 2.0
"""How long the start's checkpoint waits for another process's checkpoint to end before it
leaves its work to the signer's first turn: a process of the floor frozen in the middle of its
checkpoint (``SIGSTOP``) holds the lock until it is continued, and a start never waits on it."""

Setup = Callable[[Floor], Awaitable[None]]


def create_app(
    db_url: str,
    *,
    tables: list[TableConfig] | None = None,
    setup: Setup | None = None,
    clock: Callable[[], float] = time.time,
    rate: tuple[float, float] = (20.0, 40.0),
    broadcast_interval: float = 0.0,
    commit_window: float = 0.0,
    step_window: float = 0.0,
    step_wait: float = 0.0,
    reader_port: int | None = None,
    reader_host: str = "127.0.0.1",
    reader_tls: ssl.SSLContext | None = None,
    release_manifest: Path | None = None,
    manifest_public_key: Path | None = None,
    checkpoints: CheckpointSettings | None = None,
    demo: bool = False,
    gate: GateLimits | None = None,
    lease: LeaseSettings | None = None,
    metrics_from: Iterable[floor_metrics.Network] = (),
    body_max_bytes: int = BODY_MAX_BYTES,
    forwarded_allow_ips: str | list[str] = "",
) -> FastAPI:
    """The app for one floor on ``db_url``: the given tables, then those saved in the store;
    ``setup`` runs once the floor is up (the demo uses it to add players and tokens).
    ``broadcast_interval``: a table's updates at least this far apart (seconds);
    ``step_window``: how long a table's worker gathers the terminals' requests that follow
    the first into one step (seconds), ``step_wait``: in a decision window, how long at most
    it waits for the answer of every player the window waits for (seconds; never less than
    ``step_window``); ``commit_window``: the store's group commit window
    (seconds, :attr:`Store.commit_window`).
    ``reader_port``: also listen for card readers on a raw TCP port
    (:mod:`tablejack.server.socket.reader`; 0 = any free port, in ``app.state.reader_port``), over TLS
    with ``reader_tls`` (:mod:`tablejack.server.support.tls`). ``release_manifest`` and
    ``manifest_public_key``: the release manifest the supervisor's software check compares with
    (default: the package's) and the public key its signature must verify with
    (:mod:`tablejack.server.support.integrity`, PA 605a.4(c)). ``checkpoints``: the key that signs
    the checkpoints of the event log and the file they are appended to
    (:mod:`tablejack.store.checkpoints`; none: no signed checkpoints). ``demo``: the demo's
    sign-in page (never on a real floor). ``gate``: the limits of the WebSocket before and after
    the hello (:mod:`tablejack.server.socket.gate`; its constants by default). ``lease``: this
    process is one of a floor of several on PostgreSQL: it runs the tables it holds the lease
    of, up to its share, and forwards a terminal of another's table to it
    (:mod:`tablejack.server.floor.leasing`, :mod:`tablejack.server.socket.proxy`). ``metrics_from``: the
    addresses that may read ``/metrics`` without a staff credential
    (:mod:`tablejack.server.http.metrics`); ``/healthz`` and ``/readyz`` answer the load balancer
    (:mod:`tablejack.server.http.health`). ``body_max_bytes``: the
    largest request body read (a larger one: 413, :mod:`tablejack.server.support.bounds`).
    ``forwarded_allow_ips``: the addresses (or networks, comma-separated; ``*``: any) of the
    trusted proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` name the client (its
    address keys the failed-hello bucket); none by default: a request's address is its peer's."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        checkpointer = None
        if checkpoints is not None:  # before the database: a bad key starts nothing
            key = load_private_key(checkpoints.key)
        store = await Store.open(db_url, **({} if lease is None else lease_options(lease)))
        store.commit_window = commit_window
        composed = compose(
            store,
            clock=clock,
            broadcast_interval=broadcast_interval,
            step_window=step_window,
            step_wait=step_wait,
        )
        floor = composed.floor
        app.state.floor = floor
        app.state.duties = composed.duties  # the PA 605a duties with their own state
        if checkpoints is not None:
            checkpointer = Checkpointer(store, key, checkpoints.file)
        app.state.checkpointer = checkpointer
        floor.auth.start()
        app.state.gate = Gate(store, gate)
        await floor.refresh_balances()
        leases = lease_store = None
        if lease is not None:  # a floor of several processes: the tables this one holds
            lease_store = await Store.open(
                db_url, migrate=False, pool_size=2, **lease_options(lease)
            )
            settings = lease

            async def renewal_store() -> Store:  # the renewal's thread opens its own
                return await Store.open(
                    db_url, migrate=False, pool_size=1, **lease_options(settings)
                )

            leases = FloorLeases(floor, lease, lease_store, renewal_store=renewal_store)
            app.state.hop_key = await floor_hop_key(store)  # the proof of a forwarded request
            await save_tables(floor, tables or [])
            await leases.start()
        else:
            for config in tables or []:
                await floor.add_table(config)
            await floor.load_stored_tables(skip=[c.id for c in tables or []])
        app.state.leases = leases
        app.state.metrics.attach(floor, leases, checkpointer)
        if setup is not None:
            await setup(floor)
        if checkpointer is not None:  # the tail of a crash, the set-up: signed before play
            await start_checkpoint(floor, checkpointer)
        listener = None
        if reader_port is not None:
            listener = await composed.readers.listen(reader_host, reader_port, tls=reader_tls)
            app.state.reader_port = listener.sockets[0].getsockname()[1]
        stop_signing = asyncio.Event()
        signing = (
            None
            if checkpointer is None or checkpoints is None
            else asyncio.create_task(
                run_checkpoints(floor, checkpointer, checkpoints, stop_signing)
            )
        )
        try:
            yield
        finally:
            if listener is not None:
                listener.close()
            from tablejack.server.links.interface import links, withdraw

            for link in links(floor):  # the SAS lines (docs/sas.md)
                await link.stop()
            try:  # their terminals' money is refused elsewhere until a process holds them again
                await withdraw(floor)
            except Exception:
                log.exception("the links held here could not be taken back from the store")
            await composed.duties.drain()  # connection_lost checks, the guard's reload
            if leases is not None:  # the others take this process's tables at once
                await leases.stop()
            await floor.stop()
            await floor.auth.stop()
            if signing is not None:  # the checkpoint being written is finished, not cut off
                stop_signing.set()
                try:
                    await asyncio.wait_for(signing, SIGNING_STOP_SECONDS)
                except TimeoutError:  # wait_for cancelled it
                    log.warning(
                        "the checkpoint signer did not stop within %s s", SIGNING_STOP_SECONDS
                    )
                except Exception:
                    log.exception("the checkpoint signer failed")
            if checkpointer is not None:  # everything written is signed before the door shuts
                try:
                    await checkpointer.checkpoint("shutdown")
                except CheckpointLockBusyError as busy:  # another process's signs it
                    log.warning("no checkpoint at shutdown: %s", busy)
            await app.state.gate.close()  # the audit rows of bad input still open
            if lease_store is not None:
                await lease_store.close()
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
    app.state.rate = rate
    app.state.leases = None
    app.state.draining = False  # set by a drain (SIGTERM): /readyz answers 503
    app.state.metrics = floor_metrics.Metrics(metrics_from)
    app.state.hop_key = None
    app.add_middleware(ForwardTableRequests)  # another process's table: forwarded there
    app.add_middleware(RefuseControlCharacters)  # a NUL in a path or query: 422
    app.add_middleware(StrictJson)  # NaN, Infinity, 1e309 in a body: 422, never a handler's
    app.add_middleware(LimitBody, limit=body_max_bytes)  # a body too large: 413, never read
    if forwarded_allow_ips:  # behind a trusted proxy: the client's address, not the proxy's
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=forwarded_allow_ips)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> Response:
        """422 naming each field and rule, quoting no large input
        (:func:`~tablejack.server.support.bounds.validation_errors`); the audit log counts it (one row
        per burst)."""
        request.app.state.gate.invalid_request(request, error.errors())
        return JSONResponse({"detail": validation_errors(error.errors())}, 422)

    @app.exception_handler(AuthRefusedError)
    async def refused_identity(request: Request, refusal: AuthRefusedError) -> Response:
        """A credential or terminal found dead inside a route (its terminal retired, its key
        replaced meanwhile): 401 with the code, the rule and the sentence, never a 500."""
        detail = {"code": refusal.code, "rule": refusal.rule, "message": refusal.message}
        return JSONResponse({"detail": detail}, status_code=401)

    app.include_router(pages.router)  # the pages and /docs
    app.include_router(tables_api.router)  # tables, the dealer console, procedures
    app.include_router(records_api.router)  # meters, rounds, recall, ledger, audit, verify
    app.include_router(terminal_socket.router)  # the WebSocket /ws
    app.include_router(cash.router)  # bill in, cash out, vouchers, hand pays (PA 605a.5)
    app.include_router(settings.router)  # the floor settings, the software's manifest hash
    app.include_router(terminals.router)  # EWTs, the licence count, recall, terminal tilts
    app.include_router(meters.router)  # meters, meter clears, the win report (PA 605a.5(d))
    app.include_router(tips.router)  # tips to the dealer and their report
    app.include_router(limits.router)  # a player's limits and self-exclusion (PA 605a)
    app.include_router(tilt_api.router)  # table tilts and the shoe (PA 605a lock-out)
    app.include_router(languages.router)  # the terminal's language catalogs
    app.include_router(trust_api.router)  # sessions, credentials, the cage, checkpoints
    app.include_router(health.router)  # /healthz, /readyz for load balancers
    app.include_router(floor_metrics.router)  # /metrics for Prometheus
    app.add_middleware(RequestIds)  # the logs' request ids (outermost)
    app.include_router(cage_api.router)  # the cage's voucher look-up and report; tickets
    if demo:
        from tablejack.server.http import demo as demo_floor

        app.include_router(demo_floor.router)
    publish(app)  # the document states every bound and answer; 405 with the path's methods
    return app


async def start_checkpoint(floor: Floor, checkpointer: Checkpointer) -> None:
    """At start: sign what the log holds beyond the last checkpoint (the tail a crash left),
    and say so in the audit log. Another process of the floor holding the checkpoint lock for
    :data:`START_LOCK_WAIT_SECONDS` (frozen mid-checkpoint) does not hold the start up: the
    signer's first turn signs the tail then (logged)."""
    uncovered = await uncovered_streams(floor.store)
    try:
        made = await checkpointer.checkpoint("start", lock_wait=START_LOCK_WAIT_SECONDS)
    except CheckpointLockBusyError as busy:
        log.warning("no checkpoint at start, left to the signer's next turn: %s", busy)
        return
    if made is not None and uncovered:
        await floor.store.audit(
            "checkpoint",
            f"at start, checkpoint {made.number} signed {uncovered} stream(s) written after the "
            "last checkpoint (the tail of a crash, or writes while no server ran)",
            rule="signed checkpoints",
        )
