"""The cash routes of a terminal and the cage (PA 605a.5(c), 605a.5(d)): a bill accepted,
a cash-out for a voucher, a voucher redeemed, an attendant's hand pay, a voucher's record.

A bill or a voucher is an event of the terminal's bill validator, not of the player's browser:
each carries the validator's event id and its controller's Ed25519 proof
(:mod:`tablejack.store.validator`; the controller's public key registered with the terminal's
device credential, ``POST /api/floor/validator``). A repeat of an event id is answered with the
first answer and moves nothing; past the floor's ``validator_per_minute`` an event is refused. A
locked terminal moves money only as its lock allows (one guard for wagers and money,
:meth:`tablejack.server.duties.protections.Protections.check`).

A cash-out takes only the credit not in play (:func:`tablejack.server.duties.accounts.cash_out_refusal`);
a terminal with a link to a casino management system cashes out and redeems through it
(:mod:`tablejack.server.links.interface`). Every refusal answers 403 or 409 with the rule, is
written to the audit log, and changes nothing else.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import Field

from tablejack.server.duties.accounts import booked, cash_out_refusal, in_play, in_play_words
from tablejack.server.http.access import (
    AT_LINK,
    TERMINAL,
    Strict,
    Who,
    at_link,
    duties_of,
    floor_of,
    floor_refusal,
    need,
    refuse,
    signed_in_player,
)
from tablejack.server.links import interface as links
from tablejack.server.support.auth import DEVICE_COOKIE, AuthRefusedError, Principal
from tablejack.server.support.contract import AMOUNT_MAX, Whole
from tablejack.server.support.text import SafeText, printable
from tablejack.server.table import RefusedError
from tablejack.store import approvals, validator, vouchers
from tablejack.store import credentials as creds
from tablejack.store.validator import PROOF_RULE
from tablejack.store.vouchers import VOUCHER_RULE, FloorRefusedError, floor_settings

__all__ = ["router"]


EVENT = r"^[A-Za-z0-9_.:-]{1,64}$"
"""A validator's event id: unique at its terminal."""
PROOF = r"^[A-Za-z0-9+/]{86}==$"
"""An Ed25519 signature (64 bytes) in base64."""
PUBLIC_KEY = r"^[A-Za-z0-9+/]{43}=$"
"""An Ed25519 public key (32 bytes) in base64."""


class BillIn(Strict):
    """A bill accepted by the validator of the terminal the player is signed in at: its
    amount, the validator's event id and its controller's proof."""

    amount: Whole = Field(gt=0, le=AMOUNT_MAX)
    event: SafeText = Field(pattern=EVENT)
    proof: SafeText = Field(pattern=PROOF)


class CashOut(Strict):
    """Cash out at the terminal the player is signed in at: all the credit (no amount) or
    part of it."""

    amount: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)


class VoucherIn(Strict):
    """A voucher inserted at the terminal the player is signed in at: its code as read, the
    validator's event id and its controller's proof."""

    code: SafeText = Field(min_length=1, max_length=40)
    event: SafeText = Field(pattern=EVENT)
    proof: SafeText = Field(pattern=PROOF)


class ValidatorKeyBody(Strict):
    """A bill validator controller's public key, registered with its terminal's device
    credential (the terminal's cookie, or ``terminal`` and ``terminal_key``)."""

    public_key: SafeText = Field(pattern=PUBLIC_KEY)
    terminal: SafeText | None = Field(default=None, pattern=TERMINAL)
    terminal_key: SafeText | None = Field(default=None, min_length=1, max_length=128)


class HandPay(Strict):
    """An attendant's hand pay."""

    account: SafeText = Field(min_length=1, max_length=64)
    terminal: SafeText = Field(pattern=TERMINAL)
    amount: Whole = Field(gt=0, le=AMOUNT_MAX)
    kind: SafeText = Field(pattern=r"^(jackpot|cancelled_credit)$")
    reason: SafeText = Field(default="", max_length=200)


router = APIRouter()


@router.post("/api/floor/validator")
async def register_validator(request: Request, body: ValidatorKeyBody) -> dict[str, Any]:
    """A terminal's bill validator controller registers its Ed25519 public key, proven by the
    terminal's device credential and bound to it (a new terminal key ends it; the same key
    again: no change); every registration is audited."""
    floor = floor_of(request)
    key = body.terminal_key or request.cookies.get(DEVICE_COOKIE)
    terminal = body.terminal
    if terminal is None and key is not None:
        found = await floor.auth.authenticate(key)
        terminal = found.subject if found is not None and found.role == "terminal" else None
    try:
        if terminal is None:
            raise AuthRefusedError(
                "terminal",
                "A bill validator registers with its terminal's device credential (this "
                "browser is not an enrolled terminal).",
            )
        _, device = await floor.auth.terminal(terminal, key)
    except AuthRefusedError as refusal:
        raise await refuse(
            request, None, refusal.code, refusal.message, refusal.rule, 401
        ) from None
    try:
        new = await validator.register_key(
            floor.store, terminal, device.credential, body.public_key
        )
    except FloorRefusedError as refusal:
        raise await refuse(
            request, device, refusal.code, refusal.message, refusal.rule, 409
        ) from None
    if new:
        await floor.store.audit(
            "validator_key",
            f"terminal {terminal}'s bill validator registered its key",
            actor=terminal,
            terminal=terminal,
            rule=PROOF_RULE,
        )
    return {"terminal": terminal, "registered": new}


async def validator_event(
    request: Request, who: Principal, kind: str, value: int | str, event: str, proof: str
) -> dict[str, Any] | None:
    """Check a validator's event: its proof by the controller of the terminal the player is
    signed in at (the key registered with the terminal key that proved the session), the
    event id once (None: a new event, claimed; else the first answer, raised when it was a
    refusal), the terminal's rate, and the terminal's locks."""
    floor = floor_of(request)
    store = floor.store
    terminal = who.terminal
    session = await creds.credential_by_id(store, who.credential)
    device = None if session is None else session.device
    registered = [] if device is None else await validator.keys_of(store, terminal, device)
    if not registered:
        raise await refuse(
            request,
            who,
            "validator",
            f"Terminal {terminal}'s bill validator has registered no key with the terminal key "
            "this session was opened with (POST /api/floor/validator); nothing was moved.",
            PROOF_RULE,
        )
    if not any(
        validator.proof_holds(key, terminal, event, kind, value, proof) for key in registered
    ):
        raise await refuse(
            request,
            who,
            "proof",
            f"The proof of validator event {event!r} does not hold for terminal {terminal}'s "
            "bill validator; nothing was moved.",
            PROOF_RULE,
        )
    per_minute = int((await floor_settings(store))["validator_per_minute"])
    try:
        claim = await validator.claim(store, terminal, event, kind, value, who.subject, per_minute)
    except FloorRefusedError as refusal:
        raise await refuse(request, who, refusal.code, refusal.message, refusal.rule, 409) from None
    if claim.first is not None:
        return replayed(claim.first)
    action = "bill_in" if kind == "bill" else "voucher_in"
    try:
        await duties_of(request).protections.check(terminal, action)
    except RefusedError as refusal:
        error = await refuse(request, who, refusal.code, refusal.message, refusal.rule, 409)
        await validator.settle(
            store, terminal, event, "refused", {"status": 409, "body": error.detail}
        )
        raise error from None
    return None


def replayed(first: Any) -> dict[str, Any]:
    """The first answer to a validator's event, again: its body, or its refusal raised."""
    status = int(first.get("status", 200))
    if status != 200:
        raise HTTPException(status, first.get("body"))
    return dict(first.get("body") or {})


async def refused_event(
    request: Request, who: Principal, event: str, refusal: FloorRefusedError
) -> HTTPException:
    """A validator's event refused by the store: its first answer kept, the error to raise."""
    floor = floor_of(request)
    if refusal.code == "replay":  # another attempt took the event first: its answer
        try:
            replayed(await validator.first(floor.store, who.terminal, event))
        except HTTPException as first:
            return first
        except FloorRefusedError as pending:
            return floor_refusal(pending)
    answer = floor_refusal(refusal)
    await validator.settle(
        floor.store,
        who.terminal,
        event,
        "refused",
        {"status": answer.status_code, "body": answer.detail},
    )
    return answer


@router.post("/api/floor/bill-in", responses=AT_LINK)
async def bill_in(request: Request, body: BillIn, who: Who) -> dict[str, Any]:
    """A bill accepted by the validator of the terminal the player is signed in at credits
    his game account (605a.2(d), 605a.5(c)): reported with the validator's event id and its
    controller's proof, once; a repeat gets the first answer and moves nothing."""
    floor = floor_of(request)
    await need(request, who, "bill_in")
    await signed_in_player(request, who)
    terminal = who.terminal
    if (there := await at_link(request, who, terminal or "")) is not None:
        return there  # the terminal's SAS link runs at another process: its meters, its event
    first = await validator_event(request, who, "bill", body.amount, body.event, body.proof)
    if first is not None:
        return first
    event = body.event

    async def take(connection: Any) -> dict[str, Any]:
        return await validator.take(connection, terminal, event)

    try:
        movement = await vouchers.bill_in(floor.store, body.amount, actor=who.actor(), before=take)
    except FloorRefusedError as refusal:
        if refusal.code == "replay":
            return replayed(await validator.first(floor.store, terminal, event))
        raise await refused_event(request, who, event, refusal) from None
    links.notify(floor, terminal, "bill_accepted", body.amount)
    answer = booked(floor, movement)
    await validator.settle(floor.store, terminal, event, "ok", {"status": 200, "body": answer})
    return answer


@router.post("/api/floor/cash-out", responses=AT_LINK)
async def cash_out(request: Request, body: CashOut, who: Who) -> dict[str, Any]:
    """Cash out at the terminal the player is signed in at: a voucher for the credit not in
    play (605a.5(c)); the answer carries the voucher number and its validation code, and
    ``in_play``: the cents still in play at the tables (their results come back to the
    game account when the rounds settle). More than the credit not in play is refused,
    naming the amount in play."""
    floor = floor_of(request)
    await need(request, who, "cash_out")
    await signed_in_player(request, who)
    if (there := await at_link(request, who, who.terminal or "")) is not None:
        return there  # system validation by the host of the process that holds the link
    try:  # a locked terminal pays out only as its lock allows
        await duties_of(request).protections.check(who.terminal, "cash_out")
    except RefusedError as refusal:
        raise await refuse(request, who, refusal.code, refusal.message, refusal.rule, 409) from None
    playing = in_play(floor, who.subject)
    why = cash_out_refusal(floor, who.subject, body.amount, playing)
    if why is not None:
        raise await refuse(request, who, "in_play", why, VOUCHER_RULE, 409)
    link = links.link_for(floor, who.terminal or "")
    try:
        if link is None:
            movement = await vouchers.cash_out(floor.store, body.amount, actor=who.actor())
        else:  # system validation through the terminal's host (docs/sas.md)
            movement = await links.cash_out(floor, link, body.amount, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    answer = booked(floor, movement)
    answer["in_play"] = sum(amount for _, _, amount in playing)
    if playing:
        answer["note"] = (
            f"{in_play_words(playing)} stays in play; its result is credited to the game "
            "account when the round settles."
        )
    return answer


@router.post("/api/floor/voucher-in", responses=AT_LINK)
async def voucher_in(request: Request, body: VoucherIn, who: Who) -> dict[str, Any]:
    """Redeem a voucher at the terminal the player is signed in at, once (605a.5(c)):
    reported with the validator's event id and its controller's proof; a repeat of the event
    gets the first answer and moves nothing."""
    floor = floor_of(request)
    await need(request, who, "voucher_in")
    await signed_in_player(request, who)
    if (there := await at_link(request, who, who.terminal or "")) is not None:
        return there  # redeemed through the host of the process that holds the link
    first = await validator_event(request, who, "voucher", body.code, body.event, body.proof)
    if first is not None:
        return first
    link = links.link_for(floor, who.terminal or "")
    try:
        if link is None:
            movement = await vouchers.redeem_voucher(floor.store, body.code, actor=who.actor())
        else:  # redeemed through the terminal's host (docs/sas.md)
            movement = await links.redeem(floor, link, body.code, actor=who.actor())
    except FloorRefusedError as refusal:
        raise await refused_event(request, who, body.event, refusal) from None
    answer = booked(floor, movement)
    await validator.settle(
        floor.store, who.terminal, body.event, "ok", {"status": 200, "body": answer}
    )
    return answer


@router.post(
    "/api/floor/hand-pay",
    responses={
        **AT_LINK,
        202: {"description": "Above the hand-pay limit: a request waits for a supervisor."},
        401: {"description": "No credential, or one unknown, expired or revoked."},
        403: {"description": "The role may not (refused and audited)."},
        409: {
            "description": "Refused by the rule it names, e.g. a terminal the floor has not "
            "registered (audited); nothing moved."
        },
        422: {"description": "The body is not valid."},
    },
)
async def hand_pay(request: Request, response: Response, body: HandPay, who: Who) -> dict[str, Any]:
    """An attendant-paid jackpot or cancelled credit (605a.5(d)) from a player's game
    account at a terminal the floor has registered, paid by the cage (cashier) or a
    supervisor up to the hand-pay limit; above it nothing moves until a supervisor other than
    the requester approves it (202, the pending request; ``/api/cage/approvals``, 605a.4(d)).
    A dealer may not pay out."""
    floor = floor_of(request)
    await need(request, who, "hand_pay")
    if (there := await at_link(request, who, body.terminal, response)) is not None:
        return there  # the handpay's lock-up is the link's, at the process that holds it
    try:
        above = await vouchers.check_hand_pay(
            floor.store, body.account, body.terminal, body.amount, body.kind, actor=who.actor()
        )
        if above:
            asked = await approvals.request(
                floor.store,
                "hand_pay",
                body.amount,
                actor=who.actor(),
                account=body.account,
                terminal=body.terminal,
                detail=body.kind,
                reason=body.reason,
            )
            response.status_code = 202
            return {"ok": True, "pending": True, "request": asked.to_json()}
        movement = await vouchers.hand_pay(
            floor.store,
            body.account,
            body.terminal,
            body.amount,
            body.kind,
            actor=who.actor(),
            reason=body.reason,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    links.notify(floor, body.terminal, "handpay_paid")
    return booked(floor, movement)


@router.get("/api/floor/vouchers/{number}")
async def voucher(request: Request, number: str, who: Who) -> dict[str, Any]:
    """A voucher's record: amount, issue and redemption (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_voucher")
    found = await vouchers.voucher(floor.store, number)
    if found is None:
        raise await refuse(
            request,
            who,
            "no_voucher",
            f"No voucher has the number {printable(number, 24)!r} ({VOUCHER_RULE}).",
            VOUCHER_RULE,
            404,
            lookup=True,  # counted: one audit row per person and window
        )
    return found
