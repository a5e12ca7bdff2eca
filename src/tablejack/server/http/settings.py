"""The floor settings (PA 605a): read by staff, changed by the operator (audited), their typed
specs (:data:`tablejack.store.settings.SETTINGS`: type, unit, range, default, meaning, rule —
what the operator's page draws its form from), and the manifest hash of the running software
(605a.4(c)).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from tablejack.server.http.access import Strict, Who, floor_of, floor_refusal, need
from tablejack.server.support.contract import Limit
from tablejack.server.support.text import SafeText
from tablejack.store import vouchers
from tablejack.store.settings import setting_history, setting_specs
from tablejack.store.vouchers import FloorRefusedError

__all__ = ["router"]


class SettingBody(Strict):
    """One floor setting."""

    key: SafeText = Field(min_length=1, max_length=64)
    value: Any


router = APIRouter()


@router.get("/api/floor/settings")
async def settings(request: Request, who: Who) -> dict[str, Any]:
    """The operator's floor settings (dealer, supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_settings")
    return await vouchers.floor_settings(floor.store)


@router.get("/api/floor/settings/specs")
async def specs(request: Request, who: Who) -> list[dict[str, Any]]:
    """Every floor setting's spec: ``key``, ``kind`` (``cents`` — shown as dollars —,
    ``seconds``, ``hour``, ``days``, ``bills``, ``yes-no``, ``choice``, ``text``,
    ``lifetimes``), ``low`` and ``high`` (in its unit), ``choices`` (the bills that exist, the
    roles, a choice's values), ``default``, ``title``, ``doc``, ``rule`` and ``range`` (the
    range in words, as a refusal names it) (dealer, supervisor, operator)."""
    await need(request, who, "read_settings")
    return setting_specs()


@router.get(
    "/api/floor/settings/history",
    responses={403: {"description": "Only the operator and the supervisor read the changes."}},
)
async def history(request: Request, who: Who, limit: Limit = 100) -> dict[str, Any]:
    """The floor settings' changes, newest first, from the settings log (operator,
    supervisor): ``time_zone`` (the floor's, ``sas_time_zone``) and ``changes``, each with
    ``at_us``, ``by``, ``key``, ``kind``, ``title``, ``old`` (its default before a first
    change: ``old_default``) and ``new``, and both in the setting's unit (``old_shown``,
    ``new_shown``: dollars for cents)."""
    floor = floor_of(request)
    await need(request, who, "read_setting_history")
    zone = (await vouchers.floor_settings(floor.store))["sas_time_zone"]
    changes = await setting_history(floor.store, limit=min(limit, 1000))
    return {"time_zone": zone, "changes": changes}


@router.put(
    "/api/floor/settings",
    responses={409: {"description": "The value is out of the setting's range (named)."}},
)
async def set_setting(request: Request, body: SettingBody, who: Who) -> dict[str, Any]:
    """Change a floor setting (operator; audited). A value out of the setting's range
    (``GET /api/floor/settings/specs``) is refused with 409 and a sentence naming the range in
    the setting's unit (dollars, seconds, days, bills) and the rule."""
    floor = floor_of(request)
    name = await need(request, who, "change_settings")
    try:
        return await vouchers.set_floor_setting(floor.store, body.key, body.value, by=name)
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None


@router.get("/api/floor/integrity")
async def integrity(request: Request, who: Who) -> dict[str, Any]:
    """The manifest hash of the running software and the release manifest (605a.4(c))."""
    from tablejack.server.support.integrity import running_status

    await need(request, who, "read_integrity")
    state = request.app.state
    return await asyncio.to_thread(
        running_status,
        getattr(state, "release_manifest", None),
        public_key=getattr(state, "manifest_public_key", None),
    )
