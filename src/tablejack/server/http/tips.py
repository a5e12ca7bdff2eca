"""Tips to the dealer (PA 605a): the floor's tip settings, a tip from the game account of the
player signed in at a terminal, and the gaming day's tip report.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from tablejack.server.duties.accounts import booked, on_floor
from tablejack.server.http.access import (
    Strict,
    Who,
    floor_of,
    floor_refusal,
    need,
    refuse,
    signed_in_player,
)
from tablejack.server.support.text import SafeText
from tablejack.store import meters_report, tips, vouchers
from tablejack.store.vouchers import FloorRefusedError

__all__ = ["router"]


class TipBody(Strict):
    """A tip to the dealer from the game account of the player signed in at a terminal; the
    amount is checked by the store (whole positive cents), so a bad one is refused and
    audited."""

    table: SafeText = Field(min_length=1, max_length=64)
    amount: Any


router = APIRouter()


@router.get("/api/floor/tip")
async def tip_settings(request: Request, who: Who) -> dict[str, Any]:
    """Whether tips are enabled and the largest tip (any signed-in terminal)."""
    return await tips.tip_settings(floor_of(request).store)


@router.post("/api/floor/tip")
async def tip(request: Request, body: TipBody, who: Who) -> dict[str, Any]:
    """A tip to the dealer from the player's own game account (tips enabled only): a
    ``tip`` ledger row to the table's tip account, with an event of the terminal's
    account log."""
    floor = floor_of(request)
    await need(request, who, "tip")
    await signed_in_player(request, who)
    if not on_floor(floor, body.table):
        raise await refuse(
            request, who, "invalid", f"No table {body.table!r} to tip.", tips.TIP_RULE, 409
        )
    try:
        movement = await tips.give_tip(
            floor.store, body.table, body.amount, actor=who.actor(), at_us=floor.now_us()
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return {**booked(floor, movement), "table": body.table}


@router.get("/api/floor/reports/tips")
async def tip_report(request: Request, who: Who, day: str | None = None) -> dict[str, Any]:
    """The tip report of a gaming day (default: the current one) (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_reports")
    hour = (await vouchers.floor_settings(floor.store))["gaming_day_start_hour"]
    chosen = day or meters_report.gaming_day_of(floor.now_us(), int(hour))
    try:
        return await tips.tip_report(floor.store, chosen, floor.now_us())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
