"""The floor's meters (PA 605a.5(d)): the meters per EWT, per table and for the floor derived
from the ledger, the supervisor's authorised meter clears and the gaming day's win report.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from tablejack.server.http.access import Strict, Who, duties_of, floor_of, floor_refusal, need
from tablejack.server.support.contract import Limit
from tablejack.server.support.text import SafeText
from tablejack.store import meters_report, vouchers
from tablejack.store.vouchers import FloorRefusedError

__all__ = ["router"]


class ClearBody(Strict):
    """An authorised meter clear."""

    scope: SafeText = Field(pattern=r"^(terminal|table|floor)$")
    scope_id: SafeText = Field(min_length=1, max_length=64)
    reason: SafeText = Field(min_length=1, max_length=200)


router = APIRouter()


@router.get("/api/floor/meters")
async def meters(request: Request, who: Who) -> dict[str, Any]:
    """Meters per EWT, per table and for the floor, derived from the ledger (605a.5(d)) by the
    floor's running meters (the rows new since the last read); the gaming days that ended are
    snapshotted first (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_meters")
    await meters_report.ensure_snapshots(floor.store, floor.now_us())
    lifetime = await duties_of(request).meters.read()
    return await meters_report.displayed_meters(floor.store, lifetime)


@router.post("/api/floor/meters/clear")
async def clear(request: Request, body: ClearBody, who: Who) -> dict[str, Any]:
    """An authorised meter clear (supervisor only); the readings before and after it are
    recorded."""
    floor = floor_of(request)
    try:
        return await meters_report.clear_meters(
            floor.store,
            body.scope,
            body.scope_id,
            by=who.subject,
            role=who.role,
            reason=body.reason,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None


@router.get("/api/floor/meters/clears")
async def clears(request: Request, who: Who, limit: Limit = 100) -> list[dict[str, Any]]:
    """The meter clears, newest first (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_meters")
    return await meters_report.meter_clears(floor.store, min(limit, 1000))


@router.get("/api/floor/reports/win")
async def win_report(request: Request, who: Who, day: str | None = None) -> dict[str, Any]:
    """The win report of a gaming day (default: the current one) (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_reports")
    hour = (await vouchers.floor_settings(floor.store))["gaming_day_start_hour"]
    chosen = day or meters_report.gaming_day_of(floor.now_us(), int(hour))
    try:
        return await meters_report.win_report(floor.store, chosen, floor.now_us())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
