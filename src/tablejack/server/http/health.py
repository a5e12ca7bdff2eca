"""Health for load balancers, and the drain on SIGTERM (docs/server.md, "Operations").

* ``GET /healthz``: the process answers (200) — a liveness probe; no credential, no detail.
* ``GET /readyz``: 200 when the process should get traffic — its store answers, its table
  leases are current (a floor of several processes: the last renewal within a lease time) and
  it is not draining; 503 otherwise. The body is a status word, nothing more (no version, no
  names): the probes are unauthenticated.

``serve`` drains on SIGTERM (:class:`DrainingServer`, :func:`drain`): ``/readyz`` answers 503
at once (the load balancer stops sending new terminals), the process takes no table any more,
and each of its tables is handed over between rounds — released for another process of the
floor to take (PostgreSQL), or stopped (a process alone) — for :data:`DRAIN_SECONDS` at most;
a table still in a round then is left to the shutdown, which releases its lease, and the
process that takes it over recovers the round from the log (resumed, or voided and refunded:
the table's recovery policy). Every socket is then told ``draining`` and closed with
:data:`DRAIN_CLOSE` (1012, service restart): the terminal reconnects, through the load
balancer, to a process that runs its table. A second SIGTERM, or SIGINT, stops at once.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from types import FrameType
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from tablejack.server.floor.floor import Floor
from tablejack.server.table import Table

__all__ = [
    "DRAIN_CLOSE",
    "DRAIN_REASON",
    "DRAIN_RULE",
    "DRAIN_SECONDS",
    "DrainingServer",
    "between_rounds",
    "drain",
    "router",
    "run_server",
]

log = logging.getLogger("tablejack.server")

DRAIN_SECONDS = 30.0
"""How long a drain waits, by default, for the tables' rounds to end (``serve --drain-seconds``)."""
DRAIN_CLOSE = 1012
"""The close code of a drained socket: 1012, service restart (RFC 6455's registry) — reconnect."""
DRAIN_REASON = "draining: reconnect"
DRAIN_RULE = "drain"
READY_TIMEOUT = 2.0
"""Seconds ``/readyz`` waits for the store's answer."""

router = APIRouter(tags=["operations"])


@router.get(
    "/healthz",
    responses={200: {"description": "The process is alive.", "content": {"application/json": {}}}},
)
async def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    responses={
        200: {"description": "Ready for traffic.", "content": {"application/json": {}}},
        503: {
            "description": "Not ready: the store does not answer, the table leases are not "
            "current, or the process is draining.",
            "content": {"application/json": {}},
        },
    },
)
async def readyz(request: Request) -> JSONResponse:
    """Readiness: the store answers, the leases are current, the process is not draining."""
    ready = await is_ready(request.app)
    return JSONResponse(
        {"status": "ready" if ready else "unavailable"}, status_code=200 if ready else 503
    )


async def is_ready(app: FastAPI) -> bool:
    """Should ``app`` get traffic (see the module docstring)?"""
    state = app.state
    if getattr(state, "draining", False) or getattr(state, "floor", None) is None:
        return False
    leases = state.leases
    if leases is not None and time.monotonic() - leases.renewed_at >= leases.settings.seconds:
        return False
    floor: Floor = state.floor
    try:
        async with asyncio.timeout(READY_TIMEOUT):
            await floor.store.ping()
    except Exception:
        return False
    return True


def between_rounds(table: Table) -> bool:
    """Is ``table`` between rounds: no round, the round complete, or one no one has wagered on
    (a wagering round with no wager resumes as it is wherever the table goes next)?"""
    round_ = table.round
    if round_ is None or round_.is_complete:
        return True
    return (
        not round_.wagers and round_.phase.value == "wagering" and table.config.recovery == "resume"
    )


async def drain(app: FastAPI, seconds: float = DRAIN_SECONDS) -> dict[str, int]:
    """Drain the process (see the module docstring); how many tables were handed over between
    rounds and how many were left to the shutdown."""
    state = app.state
    state.draining = True
    metrics = getattr(state, "metrics", None)
    if metrics is not None:
        metrics.draining = True
    floor: Floor | None = getattr(state, "floor", None)
    if floor is None:
        return {"handed_over": 0, "left": 0}
    leases = state.leases
    if leases is not None:
        leases.draining = True
    log.warning("draining: handing the tables over between rounds (%g s at most)", seconds)
    deadline = time.monotonic() + seconds
    pending = set(floor.tables)
    handed = 0
    while pending and time.monotonic() < deadline:
        for connection in list(floor.connections):  # a table's sockets too: reconnect
            connection.closing = (DRAIN_CLOSE, DRAIN_REASON)
        for table_id in sorted(pending):
            table = floor.tables.get(table_id)
            if table is None:  # dropped meanwhile (its lease taken)
                pending.discard(table_id)
            elif leases is not None:
                if await leases.release(table_id):
                    pending.discard(table_id)
                    handed += 1
                    log.warning("draining: table %s handed over between rounds", table_id)
            elif await _pause(table):
                pending.discard(table_id)
                handed += 1
                log.warning("draining: table %s stopped between rounds", table_id)
        if pending:
            await asyncio.sleep(0.1)
    if pending:
        log.warning(
            "draining: %d table(s) still in a round after %g s; the shutdown hands them over "
            "(recovered from the log where they go next)",
            len(pending),
            seconds,
        )
    close_sockets(floor)
    log.warning("draining: %d table(s) handed over, every socket told to reconnect", handed)
    return {"handed_over": handed, "left": len(pending)}


async def _pause(table: Table) -> bool:
    """A process alone: stop a table between rounds (no round opens again here)."""
    async with table.lock:
        if not between_rounds(table):
            return False
        await table.stop()
    return True


def close_sockets(floor: Floor) -> None:
    """Tell every socket the process drains and close it with :data:`DRAIN_CLOSE`."""
    for connection in list(floor.connections):
        connection.push(
            {
                "type": "error",
                "id": None,
                "code": "draining",
                "rule": DRAIN_RULE,
                "message": "This server process is stopping; reconnect.",
                "reconnect": True,
            }
        )
        connection.closing = (DRAIN_CLOSE, DRAIN_REASON)
        connection.push(None)


class DrainingServer(uvicorn.Server):
    """uvicorn's server, draining the app (:func:`drain`) on the first SIGTERM before it shuts
    down; a second SIGTERM, or SIGINT, shuts down at once."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, seconds: float = DRAIN_SECONDS):
        super().__init__(config)
        self.floor_app = app
        self.seconds = seconds
        self.draining: asyncio.Task[Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: Any = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets=sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig != signal.SIGTERM or self.draining is not None or self.loop is None:
            super().handle_exit(sig, frame)
            return
        self.loop.call_soon_threadsafe(self._start_drain)

    def _start_drain(self) -> None:
        if self.draining is None:
            self.draining = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            await drain(self.floor_app, self.seconds)
            await asyncio.sleep(0.2)  # the close frames on their way
        except Exception:
            log.exception("draining failed; shutting down")
        finally:
            self.should_exit = True


def run_server(app: FastAPI, drain_seconds: float = DRAIN_SECONDS, **options: Any) -> None:
    """Run ``app`` under uvicorn (``options``: :class:`uvicorn.Config`'s) until it is stopped,
    draining on SIGTERM (:class:`DrainingServer`)."""
    DrainingServer(uvicorn.Config(app, **options), app, drain_seconds).run()
