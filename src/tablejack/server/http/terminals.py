"""The EWTs of the floor (PA 605a): registration and device credentials, the list with their
sockets and tilts, the licence count of 605a.9(b) (:mod:`tablejack.server.duties.licence`), a
terminal's recall of its last games, and a terminal's tilts — its lock by staff and the
supervisor's clear (the floor's lock-out, :mod:`tablejack.server.duties.protections`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import Field

from tablejack.server.duties.accounts import on_floor
from tablejack.server.duties.licence import licence
from tablejack.server.http.access import TERMINAL, Strict, Who, floor_of, floor_refusal, need
from tablejack.server.support.contract import Count, Whole
from tablejack.server.support.text import SafeText
from tablejack.store import credentials, protections, vouchers
from tablejack.store.vouchers import FloorRefusedError

__all__ = ["router"]


class TerminalBody(Strict):
    """Register, move or retire an EWT; bind it to a position (seat games); ``credential``: a
    new device credential for a terminal already registered (the old one is revoked)."""

    terminal: SafeText = Field(pattern=TERMINAL)
    table: SafeText = Field(min_length=1, max_length=64)
    status: SafeText = Field(default="active", pattern=r"^(active|retired)$")
    position: Whole | None = Field(default=None, ge=1, le=16)
    credential: bool = False


class TiltBody(Strict):
    """A tilt (lock) or its clear: a reason code and words."""

    code: SafeText = Field(min_length=1, max_length=32)
    reason: SafeText = Field(default="", max_length=200)


router = APIRouter()


@router.post("/api/floor/terminals")
async def register_terminal(request: Request, body: TerminalBody, who: Who) -> dict[str, Any]:
    """Register, move or retire an EWT and bind it to its table and position (operator).
    A new terminal (or ``credential: true``) gets a device credential: its secret is in
    this answer only (``credential``), to be installed on the terminal."""
    floor = floor_of(request)
    await need(request, who, "register_terminal")
    if not on_floor(floor, body.table):  # any process's table: a registration is a store write
        raise HTTPException(404, f"No table {body.table!r}.")
    try:
        issued = await vouchers.register_terminal(
            floor.store,
            body.terminal,
            body.table,
            by=who.actor(),
            status=body.status,
            position=body.position,
            credential=body.credential,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    # the old key revoked or the terminal retired: the sessions opened there end, and their
    # sockets close, at once (docs/security.md, "Sessions bound to what made them")
    ended = "retired" if body.status == "retired" else "given a new key"
    closed = await floor.auth.refresh(
        f"Terminal {body.terminal} was {ended}; the sessions there ended. Sign in again."
    )
    rows = await vouchers.terminals(floor.store)
    return {
        "terminal": next(r for r in rows if r["id"] == body.terminal),
        "credential": None if issued is None else issued.token,
        "credential_id": None if issued is None else issued.credential.id,
        "closed_sockets": closed,
    }


@router.get("/api/floor/terminals")
async def terminal_list(request: Request, who: Who) -> list[dict[str, Any]]:
    """Every registered EWT: its table, position and status, how many sockets are
    connected from it now and which players are signed in there (``players``); for a role
    that reads tilts, its open tilts (``tilts``; else null); its device credential valid now
    (``key``: its public ``id``, ``created_us``, ``expires_us``; null: none — never issued,
    revoked or expired), never its secret (supervisor, operator)."""
    floor = floor_of(request)
    await need(request, who, "read_terminals")
    rows = await vouchers.terminals(floor.store)
    keys = await credentials.terminal_keys(floor.store, floor.now_us())
    locks = await protections.open_locks(floor.store) if who.may("read_tilts") else None
    sockets: dict[str, list[str]] = {}
    for connection in floor.connections:
        if connection.role == "player" and connection.terminal:
            sockets.setdefault(connection.terminal, []).append(connection.subject)
    return [
        {
            **row,
            "connected": len(sockets.get(row["id"], [])),
            "players": sorted(set(sockets.get(row["id"], []))),
            "key": None
            if row["id"] not in keys
            else {
                "id": keys[row["id"]].id,
                "created_us": keys[row["id"]].created_us,
                "expires_us": keys[row["id"]].expires_us,
            },
            "tilts": None
            if locks is None
            else [
                {
                    "code": lock["code"],
                    "reason": lock["reason"],
                    "by": lock["locked_by"],
                    "at_us": lock["locked_us"],
                }
                for lock in locks.get(row["id"], [])
            ],
        }
        for row in rows
    ]


@router.get("/api/floor/license")
async def license_view(request: Request, who: Who) -> dict[str, Any]:
    """The licence count of § 605a.9(b): five EWTs count as one table (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_terminals")
    rows = await vouchers.terminals(floor.store)
    rounding = (await vouchers.floor_settings(floor.store))["license_rounding"]
    return licence(rows, rounding)


@router.get("/api/floor/terminals/{terminal}/recall")
async def terminal_recall(
    request: Request, terminal: str, who: Who, n: Count = 10
) -> list[dict[str, Any]]:
    """The last game of a terminal and the nine before it, step by step: a player sees
    the games he played there, a supervisor every game of the terminal."""
    from tablejack.server.duties.recall import terminal_recall as recall_terminal
    from tablejack.server.visibility import Viewer

    floor = floor_of(request)
    await need(request, who, "recall_round")
    return await recall_terminal(floor.store, terminal, Viewer.of(who), n=max(1, min(n, 10)))


@router.post("/api/floor/terminals/{terminal}/tilt")
async def tilt(request: Request, terminal: str, body: TiltBody, who: Who) -> dict[str, Any]:
    """Lock a terminal with a tilt code (dealer, supervisor): it takes no wager or decision
    until a supervisor clears it."""
    floor = floor_of(request)
    name = await need(request, who, "lock_terminal")
    try:
        done = await protections.lock_terminal(
            floor.store, terminal, body.code, body.reason, by=name, at_us=floor.now_us()
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    await floor.locks_changed()  # the guard reloads; the dealer console shows the tilt
    for connection in list(floor.connections):
        if connection.terminal == terminal:
            connection.push(
                {
                    "type": "error",
                    "id": None,
                    "code": "tilt",
                    "rule": protections.TILT_RULE,
                    "message": f"Terminal locked ({body.code}): call an attendant.",
                }
            )
    return done


@router.post("/api/floor/terminals/{terminal}/clear")
async def clear_tilt(request: Request, terminal: str, body: TiltBody, who: Who) -> dict[str, Any]:
    """Clear a terminal's tilts with a clear code (supervisor only)."""
    floor = floor_of(request)
    try:
        done = await protections.clear_terminal(
            floor.store,
            terminal,
            body.code,
            body.reason,
            by=who.subject,
            role=who.role,
            at_us=floor.now_us(),
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    await floor.locks_changed()  # the guard reloads; the dealer console shows the clear
    return done


@router.get("/api/floor/tilts")
async def tilts(request: Request, who: Who) -> dict[str, Any]:
    """The terminals locked now and their tilts (dealer, supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_tilts")
    return await protections.open_locks(floor.store)
