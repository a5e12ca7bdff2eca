"""The tables' REST API: the floor's tables, their state and rules icon, opening and closing,
the dealer console's commands and the card reader over HTTP, voids, and the gaming-day
procedures (PA 633c.5(d), (g), (i)); with the protocol version and who the caller is.

Every route authenticates (:data:`~tablejack.server.http.access.Who`) and checks the operation in the
permission table (:func:`~tablejack.server.http.access.need`) before it touches a table; a refusal of
the table is answered 409 with its rule (503 when the store failed) and written to the audit
log (:func:`refused_http`).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse
from pydantic import Field

from tablejack.server.http.access import Strict, Who, floor_of, need, table_of
from tablejack.server.socket.proxy import floor_tables
from tablejack.server.support.auth import Principal
from tablejack.server.support.contract import Whole
from tablejack.server.support.protocol import PROTOCOL_VERSION
from tablejack.server.support.text import REFUSE_CONTROL_CHARACTERS, SafeText
from tablejack.server.table import RefusedError
from tablejack.server.visibility import Viewer
from tablejack.store.policy import PERMISSIONS

__all__ = ["refused_http", "router"]

log = logging.getLogger("tablejack.server")

router = APIRouter()


REASON = r"^[^\u0000-\u001f\u007f]*[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*$"
"""A reason's pattern: not blank, and no control character (the published schema says both)."""


class DealerBody(Strict):
    """A dealer console command."""

    command: SafeText = Field(pattern=r"^[a-z-]{1,24}$")
    card: SafeText | None = Field(default=None, min_length=2, max_length=3)


class VoidBody(Strict):
    """Why a round is voided: required, and not blank (a void that refunds money names its
    reason, PA 605a.4(d))."""

    reason: Annotated[
        str,
        REFUSE_CONTROL_CHARACTERS,  # first: a control character is refused as such
        Field(min_length=1, max_length=200, pattern=REASON, json_schema_extra={"pattern": REASON}),
    ]
    misdeal: bool = Field(
        default=False,
        description="The round is voided as a misdeal (PA 633a.14): recorded as one in its event.",
    )


class CorrectionBody(Strict):
    """A wrong card corrected: the card it really is, and why (what the supervisor saw)."""

    code: SafeText = Field(
        pattern=r"^(10|[2-9AJQKT])[SHDC]$", description="The right card (AS, 10H, …)."
    )
    reason: SafeText = Field(min_length=3, max_length=200)


class ManualEntryBody(Strict):
    """Why the console enters the round's cards by hand (the shoe cannot read them)."""

    reason: SafeText = Field(min_length=3, max_length=200)


class InspectionBody(Strict):
    """A card reader inspection (633c.5(d)): its result and a note."""

    result: SafeText = Field(default="ok", pattern=r"^(ok|fault)$")
    note: SafeText = Field(default="", max_length=200)


class DecksBody(Strict):
    """New decks registered at the table (633c.5(g)): how many."""

    decks: Whole = Field(ge=1, le=8)


class DeckInspectionBody(Strict):
    """The dealer's deck inspection, verified by the floorperson (633c.5(i))."""

    dealer: SafeText = Field(min_length=1, max_length=64)
    result: SafeText = Field(default="ok", pattern=r"^(ok|defect)$")
    note: SafeText = Field(default="", max_length=200)


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


@router.get("/api/protocol")
async def protocol() -> dict[str, Any]:
    """The WebSocket protocol version this server speaks."""
    return {"version": PROTOCOL_VERSION, "websocket": "/ws"}


@router.get("/api/me")
async def me(request: Request, who: Who) -> dict[str, Any]:
    """Who the credential is: role, subject, the terminal a player's session is bound to
    (and that terminal's table and position), when it expires; a player's balance; what
    the role may do (``may``: the operations of the permission table, so a page shows
    only what its reader may use)."""
    balance = await floor_of(request).store.balance(who.subject) if who.role == "player" else None
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


@router.get("/api/tables")
async def list_tables(request: Request, who: Who) -> list[dict[str, Any]]:
    """Every table of the floor (on a floor of several processes, the others' too)."""
    return await floor_tables(request, floor_of(request))


@router.get("/api/tables/{table_id}")
async def table_info(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """A table's layout and game rules icon."""
    return table_of(request, table_id).info()


@router.get("/api/tables/{table_id}/state")
async def table_state(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """The table as the caller may see it (the information policy)."""
    return table_of(request, table_id).state_for(Viewer.of(who))


@router.post("/api/tables/{table_id}/open")
async def open_table(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """Open a table (supervisor)."""
    await need(request, who, "open_close_table")
    table = table_of(request, table_id)
    await table.set_status("open")
    return table.summary()


@router.post("/api/tables/{table_id}/close")
async def close_table(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """Close a table (supervisor); the round in progress is finished first."""
    await need(request, who, "open_close_table")
    table = table_of(request, table_id)
    await table.set_status("closed")
    return table.summary()


@router.post("/api/tables/{table_id}/dealer")
async def dealer(request: Request, table_id: str, body: DealerBody, who: Who) -> dict[str, Any]:
    """A dealer console command: open-round, close-wagering, card (entry by hand), shoe-draw
    (the demonstration's simulated shoe), countdown-expired."""
    name = await need(request, who, "dealer_command")
    table = table_of(request, table_id)
    try:
        return await table.dealer_command(body.command, name, "console", body.card)
    except RefusedError as refusal:
        raise await refused_http(request, refusal, who, table_id) from None


@router.post("/api/tables/{table_id}/reader", response_class=PlainTextResponse)
async def reader(request: Request, table_id: str, who: Who) -> str:
    """The card reader line protocol over HTTP: one card code per line; one answer line
    per card (``OK <round> <seq>`` or ``ERR <rule> <message>``); ``FAULT <text>`` and the
    shoe's ``LOAD``/``UNLOAD`` … ``END`` blocks as on the TCP line (a block ends within one
    request)."""
    from tablejack.server.socket.reader import LineSession  # cards, FAULT, LOAD/UNLOAD blocks

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


@router.post("/api/tables/{table_id}/void")
async def void(request: Request, table_id: str, body: VoidBody, who: Who) -> dict[str, Any]:
    """Void the round in progress and refund its wagers (supervisor)."""
    name = await need(request, who, "void_round")
    table = table_of(request, table_id)
    try:
        return await table.void(name, body.reason, misdeal=body.misdeal)
    except RefusedError as refusal:
        raise await refused_http(request, refusal, who, table_id) from None


@router.post("/api/tables/{table_id}/manual-entry")
async def manual_entry(
    request: Request, table_id: str, body: ManualEntryBody, who: Who
) -> dict[str, Any]:
    """Allow the dealer console to enter the cards of the round in progress by hand, the
    fallback when the card-reading shoe cannot read them (PA 633c.5(j)); a supervisor's
    decision, with its reason, in the round's record and the audit."""
    name = await need(request, who, "allow_manual_entry")
    table = table_of(request, table_id)
    try:
        return await table.allow_manual_entry(name, body.reason)
    except RefusedError as refusal:
        raise await refused_http(request, refusal, who, table_id) from None


@router.post("/api/tables/{table_id}/correct-card")
async def correct_card(
    request: Request, table_id: str, body: CorrectionBody, who: Who
) -> dict[str, Any]:
    """A wrong card corrected with a supervisor's approval (PA 633a.14; docs/server.md,
    "Irregularities"): the round's last card, while nothing was decided after it, it settled
    nothing and it is face up; its ``card_correction`` in the round's record and the audit."""
    name = await need(request, who, "correct_card")
    table = table_of(request, table_id)
    try:
        return await table.correct_card(body.code, name, body.reason)
    except RefusedError as refusal:
        raise await refused_http(request, refusal, who, table_id) from None


@router.post("/api/tables/{table_id}/procedures/reader-inspection")
async def reader_inspection(
    request: Request, table_id: str, body: InspectionBody, who: Who
) -> dict[str, Any]:
    """The floorperson's card reader device inspection for this gaming day (633c.5(d))."""
    name = await need(request, who, "reader_inspection")
    table = table_of(request, table_id)
    await table.record_procedure("reader_inspection", body.model_dump(), name)
    return table.procedures_state()


@router.post("/api/tables/{table_id}/procedures/decks")
async def register_decks(
    request: Request, table_id: str, body: DecksBody, who: Who
) -> dict[str, Any]:
    """New decks opened at the table (633c.5(g)): the 24-hour clock restarts."""
    name = await need(request, who, "register_decks")
    table = table_of(request, table_id)
    await table.record_procedure("decks_registered", body.model_dump(), name)
    return table.procedures_state()


@router.post("/api/tables/{table_id}/procedures/deck-inspection")
async def deck_inspection(
    request: Request, table_id: str, body: DeckInspectionBody, who: Who
) -> dict[str, Any]:
    """The dealer's inspection of the decks, verified by the floorperson (633c.5(i))."""
    name = await need(request, who, "deck_inspection")
    table = table_of(request, table_id)
    payload = body.model_dump() | {"verified_by": name}
    await table.record_procedure("deck_inspection", payload, name)
    return table.procedures_state()


@router.get("/api/tables/{table_id}/procedures")
async def procedures(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """The gaming-day record of a table."""
    await need(request, who, "read_procedures")
    table = table_of(request, table_id)
    return table.procedures_state() | {"history": table.procedures.history}
