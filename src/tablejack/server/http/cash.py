"""The cash routes of a terminal and the cage (PA 605a.5(c), 605a.5(d)): a bill accepted,
a cash-out for a voucher, a voucher redeemed, an attendant's hand pay, a voucher's record.

A cash-out takes only the credit not in play (:func:`tablejack.server.duties.accounts.cash_out_refusal`);
a terminal with a link to a casino management system cashes out and redeems through it
(:mod:`tablejack.server.links.interface`). Every refusal answers 403 or 409 with the rule, is
written to the audit log, and changes nothing else.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from tablejack.server.duties.accounts import booked, cash_out_refusal, in_play, in_play_words
from tablejack.server.http.access import (
    TERMINAL,
    Strict,
    Who,
    floor_of,
    floor_refusal,
    need,
    refuse,
    signed_in_player,
)
from tablejack.server.links import interface as links
from tablejack.server.support.contract import AMOUNT_MAX, Whole
from tablejack.server.support.text import SafeText, printable
from tablejack.store import vouchers
from tablejack.store.vouchers import VOUCHER_RULE, FloorRefusedError

__all__ = ["router"]


class BillIn(Strict):
    """A bill accepted by the validator of the terminal the player is signed in at."""

    amount: Whole = Field(gt=0, le=AMOUNT_MAX)


class CashOut(Strict):
    """Cash out at the terminal the player is signed in at: all the credit (no amount) or
    part of it."""

    amount: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)


class VoucherIn(Strict):
    """A voucher inserted at the terminal the player is signed in at."""

    code: SafeText = Field(min_length=1, max_length=40)


class HandPay(Strict):
    """An attendant's hand pay."""

    account: SafeText = Field(min_length=1, max_length=64)
    terminal: SafeText = Field(pattern=TERMINAL)
    amount: Whole = Field(gt=0, le=AMOUNT_MAX)
    kind: SafeText = Field(pattern=r"^(jackpot|cancelled_credit)$")
    reason: SafeText = Field(default="", max_length=200)


router = APIRouter()


@router.post("/api/floor/bill-in")
async def bill_in(request: Request, body: BillIn, who: Who) -> dict[str, Any]:
    """A bill accepted by the validator of the terminal the player is signed in at credits
    his game account (605a.2(d), 605a.5(c)); reported by that terminal's session only."""
    floor = floor_of(request)
    await need(request, who, "bill_in")
    await signed_in_player(request, who)
    try:
        await links.refuse_during_handpay(floor, who.terminal or "")
        movement = await vouchers.bill_in(floor.store, body.amount, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    links.notify(floor, who.terminal or "", "bill_accepted", body.amount)
    return booked(floor, movement)


@router.post("/api/floor/cash-out")
async def cash_out(request: Request, body: CashOut, who: Who) -> dict[str, Any]:
    """Cash out at the terminal the player is signed in at: a voucher for the credit not in
    play (605a.5(c)); the answer carries the voucher number and its validation code, and
    ``in_play``: the cents still in play at the tables (their results come back to the
    game account when the rounds settle). More than the credit not in play is refused,
    naming the amount in play."""
    floor = floor_of(request)
    await need(request, who, "cash_out")
    await signed_in_player(request, who)
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


@router.post("/api/floor/voucher-in")
async def voucher_in(request: Request, body: VoucherIn, who: Who) -> dict[str, Any]:
    """Redeem a voucher at the terminal the player is signed in at, once (605a.5(c))."""
    floor = floor_of(request)
    await need(request, who, "voucher_in")
    await signed_in_player(request, who)
    link = links.link_for(floor, who.terminal or "")
    try:
        if link is None:
            movement = await vouchers.redeem_voucher(floor.store, body.code, actor=who.actor())
        else:  # redeemed through the terminal's host (docs/sas.md)
            movement = await links.redeem(floor, link, body.code, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return booked(floor, movement)


@router.post("/api/floor/hand-pay")
async def hand_pay(request: Request, body: HandPay, who: Who) -> dict[str, Any]:
    """An attendant-paid jackpot or cancelled credit (605a.5(d)) from a player's game
    account, paid by the cage (cashier) up to the hand-pay limit, by a supervisor above it
    (605a.4(d)); a dealer may not pay out."""
    floor = floor_of(request)
    await need(request, who, "hand_pay")
    try:
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
