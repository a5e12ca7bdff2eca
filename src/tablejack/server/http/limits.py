"""A player's protections (PA Chapter 605a): his limits per gaming day and his
self-exclusion, read and set by the player himself, a supervisor, or the cashier at the cage
(where the terminal sends a player to set them; ``read_player_limits`` and ``set_player_limits``
in the permission table); a loosening applies only 24 hours after the last change, whoever asks
(:mod:`tablejack.store.protections`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import Field

from tablejack.server.floor.floor import Floor
from tablejack.server.http.access import (
    Strict,
    Who,
    duties_of,
    floor_of,
    floor_refusal,
    need,
    refuse,
)
from tablejack.server.support.auth import Principal
from tablejack.server.support.contract import AMOUNT_MAX, SECONDS_MAX, Whole
from tablejack.store import meters_report, protections, vouchers
from tablejack.store.vouchers import FloorRefusedError

__all__ = ["router"]


class LimitsBody(Strict):
    """A player's limits per gaming day; a field left out is unchanged, null removes it."""

    loss_limit: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)
    wager_limit: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)
    time_limit_s: Whole | None = Field(default=None, gt=0, le=SECONDS_MAX)


class ExclusionBody(Strict):
    """A self-exclusion of ``days`` from now."""

    days: Whole = Field(ge=1, le=36500)


LIMITS_REFUSED: dict[int | str, dict[str, Any]] = {
    400: {"description": "A token in the URL (refused and audited)."},
    401: {"description": "No credential, or one unknown, expired or revoked."},
    403: {"description": "The role may not, or another player's account (audited)."},
    404: {"description": "No such game account."},
    409: {"description": "Refused by the rule it names (a loosening before 24 hours)."},
    422: {"description": "The body or a parameter is not valid."},
}


async def _for_player(
    request: Request, account: str, who: Principal, what: str, operation: str
) -> Floor:
    floor = floor_of(request)
    await need(request, who, operation)
    if who.role == "player" and who.subject != account:
        raise await refuse(
            request,
            who,
            "role",
            f"Only the player himself, a supervisor or the cage may {what}.",
            protections.LIMIT_RULE,
        )
    if await floor.store.balance(account) is None:
        raise HTTPException(404, f"No game account {account!r}.")
    return floor


router = APIRouter()


@router.get("/api/floor/players/{account}/limits", responses=LIMITS_REFUSED)
async def player_limits(request: Request, account: str, who: Who) -> dict[str, Any]:
    """A player's limits, self-exclusion and today's wagers, losses and first wager."""
    floor = await _for_player(request, account, who, "read the limits", "read_player_limits")
    hour = int((await vouchers.floor_settings(floor.store))["gaming_day_start_hour"])
    day = meters_report.gaming_day_of(floor.now_us(), hour)
    start, end = meters_report.day_bounds(day, hour)
    row = await protections.limits(floor.store, account) or {}
    return {
        "account": account,
        "gaming_day": day,
        **{k: row.get(k) for k in (*protections.LIMIT_FIELDS, "excluded_until_us", "changed_us")},
        "today": await protections.usage(floor.store, account, start, end),
    }


@router.put("/api/floor/players/{account}/limits", responses=LIMITS_REFUSED)
async def set_player_limits(
    request: Request, account: str, body: LimitsBody, who: Who
) -> dict[str, Any]:
    """Set or tighten limits (at once); loosen them only 24 hours after the last change."""
    floor = await _for_player(request, account, who, "set limits", "set_player_limits")
    new = {name: getattr(body, name) for name in body.model_fields_set}
    try:
        await protections.set_limits(
            floor.store, account, new, by=who.subject, at_us=floor.now_us()
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    duties_of(request).protections.invalidate()  # the new limits apply at the next wager
    return await player_limits(request, account, who)


@router.post("/api/floor/players/{account}/self-exclusion", responses=LIMITS_REFUSED)
async def self_exclusion(
    request: Request, account: str, body: ExclusionBody, who: Who
) -> dict[str, Any]:
    """Exclude the player from wagering for ``days`` (only ever extended)."""
    floor = await _for_player(request, account, who, "exclude", "set_player_limits")
    now = floor.now_us()
    try:
        await protections.self_exclude(
            floor.store,
            account,
            now + body.days * meters_report.DAY_US,
            by=who.subject,
            at_us=now,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    duties_of(request).protections.invalidate()  # the new limits apply at the next wager
    return await player_limits(request, account, who)
