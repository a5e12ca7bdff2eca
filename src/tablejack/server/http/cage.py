"""The cage's desk and the voucher as paper (PA 605a.5(c)–(d)).

* ``POST /api/cage/vouchers/lookup {code}`` (cashier, supervisor): the voucher of a validation
  number — its amount and state — before it is paid (paying is ``POST /api/cage/vouchers``,
  once, under the money policy). An unknown or forged number is refused and audited.
* ``POST /api/cage/vouchers/sell {amount}`` (cashier): a voucher sold for cash — its number and
  validation code, once, for the cashier to print (``voucher_sold``, under the money policy).
  Above the floor's ``voucher_sale_approval_limit`` nothing moves: the answer (202) is a pending
  request for a supervisor.
* ``POST /api/cage/vouchers/void {code, reason}`` (cashier): a voucher the cage sold, voided
  before it is used — its cash handed back (``voucher_voided``, under the money policy), once;
  the voucher is redeemed nowhere after. Above ``voucher_sale_approval_limit`` nothing moves:
  the answer (202) is a pending request for a supervisor, as for the sale.
* ``GET /api/cage/report?day=`` (cashier, supervisor): the cage's movements of a gaming day,
  per cashier, and the drawers (a cashier sees only his own).
* ``GET /api/cage/transactions?day=`` (cashier: his own; supervisor: every cashier's): the
  cage's transactions of a gaming day, newest first, with the floor's time zone
  (``sas_time_zone``) for the page to show their times in; ``GET
  /api/cage/receipt?log=&seq=&format=`` the printable receipt of one (HTML or ESC/POS).
* ``GET /api/cage/approvals`` (cashier: his own requests; supervisor: all), ``POST
  /api/cage/approvals/{id}/approve`` and ``…/refuse {reason}`` (a supervisor who is not the
  requester): dual control of a credit, a voucher sale or a hand pay above its threshold
  (:mod:`tablejack.store.approvals`); the movement is written on approval, once.
* ``GET /api/cage/drawer``, ``POST /api/cage/drawer/open {opening}``, ``POST
  /api/cage/drawer/close {counted}`` (cashier): his drawer — its float, movements, what it
  should hold, and at the close the count and the variance (:mod:`tablejack.store.drawers`).
* ``POST /api/floor/vouchers/ticket {code}``: the printable ticket of a voucher (HTML with the
  validation number as a barcode), for the player whose game account it was cashed out of, or
  for the cage (cashier, supervisor); anyone else is refused and audited.

A validation number is a bearer secret, so it travels in a request's body, never in a URL.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import Field

from tablejack.server import visibility
from tablejack.server.duties.accounts import booked
from tablejack.server.http.access import (
    AT_LINK,
    Strict,
    Who,
    at_link,
    floor_of,
    floor_refusal,
    need,
    refuse,
)
from tablejack.server.links import interface as links
from tablejack.server.support.contract import AMOUNT_MAX, SEQ_MAX, Whole
from tablejack.server.support.text import REFUSE_CONTROL_CHARACTERS, SafeText
from tablejack.server.support.ticket import (
    local_when,
    receipt_escpos,
    receipt_html,
    ticket_escpos,
    ticket_html,
)
from tablejack.store import approvals, cage, drawers, meters_report
from tablejack.store.vouchers import (
    VOUCHER_RULE,
    FloorRefusedError,
    dollars,
    floor_settings,
    host_ticket_refusal,
    sell_voucher,
    terminal,
    void_voucher,
    voidable_voucher,
)

__all__ = ["router"]

DAY = r"^\d{4}-\d{2}-\d{2}$"
REFUSED: dict[int | str, dict[str, Any]] = {
    400: {"description": "A token in the URL (refused and audited)."},
    401: {"description": "No credential, or one unknown, expired or revoked."},
    403: {"description": "The role may not (refused and audited)."},
    422: {"description": "The body or a parameter is not valid."},
}


REASON = r"^[^\u0000-\u001f\u007f]*[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*$"
"""A reason's pattern: not blank, and no control character (the published schema says both)."""


class CodeBody(Strict):
    """A voucher's validation number as printed or scanned (18 digits; spaces and dashes are
    ignored)."""

    code: SafeText = Field(min_length=1, max_length=40)


class TicketBody(CodeBody):
    """A voucher's ticket: ``html`` (printable page) or ``escpos`` (a receipt printer's
    commands)."""

    format: SafeText = Field(default="html", pattern=r"^(html|escpos)$")


class SaleBody(Strict):
    """A voucher sold for cash at the cage: its amount in cents."""

    amount: Whole = Field(gt=0, le=10**11)


class VoidBody(CodeBody):
    """A sold voucher to void: its validation number and why (required)."""

    reason: Annotated[
        str,
        REFUSE_CONTROL_CHARACTERS,
        Field(min_length=1, max_length=200, pattern=REASON, json_schema_extra={"pattern": REASON}),
    ]


class RefusalBody(Strict):
    """Why a supervisor refuses a request (required: a refusal names its reason)."""

    reason: Annotated[
        str,
        REFUSE_CONTROL_CHARACTERS,  # first: a control character is refused as such
        Field(min_length=1, max_length=200, pattern=REASON, json_schema_extra={"pattern": REASON}),
    ]


class OpeningBody(Strict):
    """A drawer's opening float, in cents."""

    opening: Whole = Field(ge=0, le=AMOUNT_MAX)


class CountBody(Strict):
    """A drawer's counted cash at its close, in cents."""

    counted: Whole = Field(ge=0, le=AMOUNT_MAX)


DECIDED: dict[int | str, dict[str, Any]] = {
    **REFUSED,
    404: {"description": "No such request (audited)."},
    409: {
        "description": "Already decided, the requester's own, or the movement refused (audited)."
    },
}
DRAWER: dict[int | str, dict[str, Any]] = {
    **REFUSED,
    409: {"description": "A drawer already open, or none to close (audited)."},
}
RequestId = Annotated[int, Path(ge=1, le=2**62, description="The request's number.")]


def _cash_desk(who: Any) -> bool:
    return bool(who.may("read_voucher"))


async def _voucher_of(request: Request, who: Any, code: str) -> dict[str, Any]:
    """The voucher of ``code``; an unknown or forged number is refused (404) and counted for
    the audit log (one row per cashier and window)."""
    floor = floor_of(request)
    found = await cage.voucher_by_code(floor.store, code)
    if found is None:
        clean = "".join(ch for ch in code if ch.isdigit())
        raise await refuse(
            request,
            who,
            "forged",
            f"No voucher has the validation number …{clean[-4:]} ({VOUCHER_RULE}).",
            VOUCHER_RULE,
            404,
            lookup=True,  # counted: 200 made-up codes are one audit row, not 200
        )
    return found


router = APIRouter()


@router.post(
    "/api/cage/vouchers/lookup",
    responses={
        **REFUSED,
        404: {"description": "No voucher has this validation number (audited)."},
    },
)
async def lookup_voucher(request: Request, body: CodeBody, who: Who) -> dict[str, Any]:
    """The voucher of a validation number — number, amount, state (``issued``: payable;
    ``redeemed``: paid, with where and when), issuing terminal and time, its expiry (``expired``
    past the floor's ``voucher_expiry_days``) — before the cage pays it (cashier, supervisor).
    ``payable`` says whether ``POST /api/cage/vouchers`` would pay it, ``voidable`` whether
    ``POST /api/cage/vouchers/void`` would void it; ``time_zone`` is the floor's."""
    await need(request, who, "read_voucher")
    found = await _voucher_of(request, who, body.code)
    settings = await floor_settings(floor_of(request).store)
    expiry = int(settings.get("voucher_expiry_days", 0) or 0)
    expires_us = found["issued_us"] + expiry * meters_report.DAY_US if expiry > 0 else None
    expired = expires_us is not None and floor_of(request).now_us() > expires_us
    host = found.get("validated_by")
    answer = {
        **{k: found[k] for k in ("number", "amount", "status", "terminal", "issued_us")},
        "redeemed_us": found["redeemed_us"],
        "redeemed_terminal": found["redeemed_terminal"],
        "expires_us": expires_us,
        "expired": expired,
        "validated_by": host,
        "payable": found["status"] == "issued" and not expired and host is None,
        "voidable": found["status"] == "issued" and not expired and found["account"] == "cage",
        "time_zone": _zone(settings),
        "rule": VOUCHER_RULE,
    }
    if host is not None:  # system validation: the host pays it, not the cage (docs/sas.md)
        answer["why"] = host_ticket_refusal({"id": int(found["number"]), **found}).message
    return answer


@router.post(
    "/api/cage/vouchers/sell",
    responses={
        **REFUSED,
        202: {"description": "Above the sale approval limit: a request waits for a supervisor."},
        409: {"description": "Above the floor's voucher limit (audited)."},
    },
)
async def sell(request: Request, response: Response, body: SaleBody, who: Who) -> dict[str, Any]:
    """A voucher sold for cash (cashier): the cage takes the amount in cash and the vouchers
    outstanding grow by it (``voucher_sold``); the answer carries the voucher's number and its
    validation code — once — for the ticket the cashier prints and hands over. Any terminal of
    the floor redeems it once; above the voucher limit the sale is refused; above the
    ``voucher_sale_approval_limit`` it waits for a supervisor (202, the request)."""
    await need(request, who, "sell_voucher")
    store = floor_of(request).store
    try:
        if await approvals.sale_needs_approval(store, body.amount):
            limit = int((await floor_settings(store))["voucher_limit"])
            if body.amount <= limit:
                asked = await approvals.request(
                    store, "voucher_sale", body.amount, actor=who.actor()
                )
                response.status_code = 202
                return {"ok": True, "pending": True, "request": asked.to_json()}
        movement = await sell_voucher(floor_of(request).store, body.amount, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return movement.to_json()


@router.post(
    "/api/cage/vouchers/void",
    responses={
        **REFUSED,
        202: {"description": "Above the sale approval limit: a request waits for a supervisor."},
        404: {"description": "No voucher has this validation number (audited)."},
        409: {
            "description": "Not a voucher the cage sold, or already redeemed, voided or expired "
            "(audited); nothing moved."
        },
    },
)
async def void(request: Request, response: Response, body: VoidBody, who: Who) -> dict[str, Any]:
    """Void a voucher the cage sold, before it is used (cashier), with a reason: its amount goes
    back from the vouchers outstanding to the cage (``voucher_voided``), once, and the voucher
    is redeemed nowhere after. Above the ``voucher_sale_approval_limit`` it waits for a
    supervisor (202, the request), as the sale did."""
    await need(request, who, "void_voucher")
    await _voucher_of(request, who, body.code)
    store = floor_of(request).store
    try:
        row = await voidable_voucher(store, body.code, body.reason, actor=who.actor())
        number = f"{int(row['id']):012d}"
        if await approvals.sale_needs_approval(store, int(row["amount"])):
            asked = await approvals.request(
                store,
                "voucher_void",
                int(row["amount"]),
                actor=who.actor(),
                detail=number,
                reason=body.reason,
            )
            response.status_code = 202
            return {"ok": True, "pending": True, "request": asked.to_json()}
        movement = await void_voucher(store, body.code, body.reason, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return {**movement.to_json(), "reason": body.reason.strip()}


@router.get(
    "/api/cage/report",
    responses={**REFUSED, 409: {"description": "The day is not a valid date."}},
)
async def cage_report(
    request: Request,
    who: Who,
    day: str | None = Query(default=None, pattern=DAY),
) -> dict[str, Any]:
    """The cage's report of a gaming day (default: the current one): the credit sold, the
    vouchers paid and the hand pays, each a count and a total in cents, and the cash in, out
    and net (cashier, supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_voucher")
    hour = int((await floor_settings(floor.store))["gaming_day_start_hour"])
    chosen = day or meters_report.gaming_day_of(floor.now_us(), hour)
    try:
        start, end = meters_report.day_bounds(chosen, hour)
    except ValueError:
        raise HTTPException(409, f"{chosen!r} is not a gaming day (YYYY-MM-DD).") from None
    report = {"gaming_day": chosen, **await cage.cage_report(floor.store, start, end)}
    return visibility.cage_report(visibility.Viewer.of(who), report)


def _zone(settings: dict[str, Any]) -> str:
    return str(settings.get("sas_time_zone") or "UTC")


@router.get(
    "/api/cage/transactions",
    responses={**REFUSED, 409: {"description": "The day is not a valid date."}},
)
async def shift_transactions(
    request: Request,
    who: Who,
    day: str | None = Query(default=None, pattern=DAY),
) -> dict[str, Any]:
    """The cage's transactions of a gaming day (default: the current one), newest first: each
    its id, kind, amount (cents and ``amount_text``), cashier, time (µs and ``at_text`` in the
    floor's time zone), and the game account, terminal or voucher it names. A cashier sees his
    own, a supervisor every cashier's (the information policy)."""
    floor = floor_of(request)
    await need(request, who, "read_cage_transactions")
    settings = await floor_settings(floor.store)
    hour = int(settings["gaming_day_start_hour"])
    chosen = day or meters_report.gaming_day_of(floor.now_us(), hour)
    try:
        start, end = meters_report.day_bounds(chosen, hour)
    except ValueError:
        raise HTTPException(409, f"{chosen!r} is not a gaming day (YYYY-MM-DD).") from None
    zone = _zone(settings)
    mine = None if who.role == "supervisor" else who.subject
    found = await cage.transactions(floor.store, start, end, cashier=mine)
    rows = visibility.cage_transactions(visibility.Viewer.of(who), found)
    return {
        "gaming_day": chosen,
        "time_zone": zone,
        "transactions": [
            {
                **row,
                "amount_text": dollars(row["amount"]),
                "at_text": local_when(row["at_us"], zone),
            }
            for row in rows
        ],
    }


@router.get(
    "/api/cage/receipt",
    response_class=HTMLResponse,
    responses={
        **REFUSED,
        200: {
            "content": {"text/html": {}, "application/octet-stream": {}},
            "description": "The printable receipt (HTML), or its ESC/POS commands.",
        },
        404: {"description": "No cage transaction of this log and number (audited)."},
    },
)
async def receipt(
    request: Request,
    who: Who,
    log: str = Query(pattern=r"^acct:[A-Za-z0-9_.:-]{1,58}$", max_length=64),
    seq: int = Query(ge=1, le=SEQ_MAX),
    form: str = Query(default="html", alias="format", pattern=r"^(html|escpos)$"),
) -> Response:
    """The receipt of a cage transaction (a voucher redeemed, sold or voided, credit sold, a
    hand pay): the casino's name, the cashier, the time in the floor's time zone, the amount in
    dollars, the voucher number masked but for its last four digits, the transaction's id. A
    cashier prints his own transactions' receipts, a supervisor any."""
    floor = floor_of(request)
    await need(request, who, "read_cage_transactions")
    found = await cage.transaction(floor.store, log, seq)
    shown = visibility.cage_transactions(
        visibility.Viewer.of(who), [] if found is None else [found]
    )
    if not shown:
        raise await refuse(
            request,
            who,
            "unknown",
            f"No cage transaction {log}#{seq} of yours (least privilege).",
            VOUCHER_RULE,
            404,
            lookup=True,
        )
    settings = await floor_settings(floor.store)
    casino = str(settings.get("casino_name") or "tablejack")
    if form == "escpos":
        return Response(
            receipt_escpos(shown[0], casino=casino, zone=_zone(settings)),
            media_type="application/octet-stream",
            headers={"Cache-Control": "no-store"},
        )
    return HTMLResponse(
        receipt_html(shown[0], casino=casino, zone=_zone(settings)),
        headers={"Cache-Control": "no-store"},
    )


@router.get("/api/cage/approvals", responses=REFUSED)
async def approval_queue(
    request: Request,
    who: Who,
    status: str = Query(default="pending", pattern=r"^(pending|approved|refused|all)$"),
) -> dict[str, Any]:
    """The approval queue (dual control): the requests of a ``status`` (default ``pending``;
    ``all``), newest first — who asked, what, when, and who decided. A supervisor sees every
    request; a cashier only his own (the information policy)."""
    await need(request, who, "read_approvals")
    store = floor_of(request).store
    found = await approvals.requests(store, status=None if status == "all" else status)
    rows = visibility.cage_requests(visibility.Viewer.of(who), [r.to_json() for r in found])
    return {"requests": rows, "rule": approvals.APPROVAL_RULE}


@router.post("/api/cage/approvals/{request_id}/approve", responses={**DECIDED, **AT_LINK})
async def approve(request: Request, request_id: RequestId, who: Who) -> dict[str, Any]:
    """Approve a pending request (a supervisor who is not its requester): its movement is
    written now, once, as the requester's with the approval recorded (a voucher sale's answer
    carries the voucher's validation code, once, for its ticket)."""
    await need(request, who, "decide_approval")
    floor = floor_of(request)
    asked = await approvals.find(floor.store, request_id)
    if (
        asked is not None
        and asked.kind == "hand_pay"  # the handpay's lock-up is the link's
        and (there := await at_link(request, who, asked.terminal)) is not None
    ):
        return there
    try:
        decision = await approvals.approve(floor.store, request_id, actor=who.actor())
    except FloorRefusedError as refusal:
        status = 404 if refusal.code == "unknown" else None
        error = floor_refusal(refusal)
        raise HTTPException(status or error.status_code, error.detail) from None
    done = decision.request
    out: dict[str, Any] = {"ok": True, "request": done.to_json()}
    if decision.movement is not None:
        out["movement"] = booked(floor, decision.movement)
        if done.kind == "hand_pay":
            links.notify(floor, done.terminal, "handpay_paid")
    elif decision.record is not None:
        if done.account in floor.balances:
            floor.balances[done.account] += done.amount
        out["movement"] = {"log": decision.record.round_id, "seq": decision.record.seq}
    return out


@router.post("/api/cage/approvals/{request_id}/refuse", responses=DECIDED)
async def refuse_request(
    request: Request, request_id: RequestId, body: RefusalBody, who: Who
) -> dict[str, Any]:
    """Refuse a pending request with a reason (a supervisor who is not its requester); nothing
    moves, and the refusal is recorded."""
    await need(request, who, "decide_approval")
    try:
        decision = await approvals.refuse(
            floor_of(request).store, request_id, body.reason, actor=who.actor()
        )
    except FloorRefusedError as refusal:
        status = 404 if refusal.code == "unknown" else None
        error = floor_refusal(refusal)
        raise HTTPException(status or error.status_code, error.detail) from None
    return {"ok": True, "request": decision.request.to_json()}


@router.get("/api/cage/drawer", responses=REFUSED)
async def my_drawer(request: Request, who: Who) -> dict[str, Any]:
    """The cashier's open drawer — its float, its movements so far and what it should hold
    (``drawer`` null: none open)."""
    await need(request, who, "cage_drawer")
    return {"drawer": await drawers.open_drawer_of(floor_of(request).store, who.subject)}


@router.post("/api/cage/drawer/open", responses=DRAWER)
async def open_drawer(request: Request, body: OpeningBody, who: Who) -> dict[str, Any]:
    """Open the cashier's drawer with its float (cents); one open drawer per cashier."""
    await need(request, who, "cage_drawer")
    try:
        found = await drawers.open_drawer(floor_of(request).store, body.opening, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return {"drawer": found}


@router.post("/api/cage/drawer/close", responses=DRAWER)
async def close_drawer(request: Request, body: CountBody, who: Who) -> dict[str, Any]:
    """Count and close the cashier's drawer: the counted cents, what it should hold (its float
    plus the cash taken in less the cash paid out) and the variance."""
    await need(request, who, "cage_drawer")
    try:
        found = await drawers.close_drawer(floor_of(request).store, body.counted, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return {"drawer": found}


@router.post(
    "/api/floor/vouchers/ticket",
    response_class=HTMLResponse,
    responses={
        **REFUSED,
        200: {
            "content": {"text/html": {}, "application/octet-stream": {}},
            "description": "The printable ticket (HTML), or its ESC/POS commands.",
        },
        404: {"description": "No voucher has this validation number (audited)."},
    },
)
async def voucher_ticket(request: Request, body: TicketBody, who: Who) -> Response:
    """The printable ticket of a voucher (``format``: ``html``, or ``escpos`` for a receipt
    printer): the player whose game account it was cashed out of, or the cage (cashier,
    supervisor); anyone else is refused and audited."""
    floor = floor_of(request)
    found = await _voucher_of(request, who, body.code)
    owner = who.role == "player" and who.subject == found["account"]
    if not (owner or _cash_desk(who)):
        raise await refuse(
            request,
            who,
            "role",
            "A voucher's ticket is printed for the player who cashed it out or for the cage "
            "(least privilege).",
            VOUCHER_RULE,
        )
    settings = await floor_settings(floor.store)
    registered = await terminal(floor.store, found["terminal"])
    table = "" if registered is None else str(registered["table_id"])
    clean = "".join(ch for ch in body.code if ch.isdigit())
    casino = str(settings.get("casino_name") or "tablejack")
    days = int(settings.get("voucher_expiry_days", 0) or 0)
    if body.format == "escpos":
        return Response(
            ticket_escpos(
                found, clean, casino=casino, table=table, expiry_days=days, zone=_zone(settings)
            ),
            media_type="application/octet-stream",
            headers={"Cache-Control": "no-store"},
        )
    return HTMLResponse(
        ticket_html(
            found, clean, casino=casino, table=table, expiry_days=days, zone=_zone(settings)
        ),
        headers={"Cache-Control": "no-store"},
    )
