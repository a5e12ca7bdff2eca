"""The floor settings (PA 605a): read by staff, changed by a supervisor (audited), and the
manifest hash of the running software (605a.4(c)).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from tablejack.server.http.access import Strict, Who, floor_of, floor_refusal, need
from tablejack.server.support.text import SafeText
from tablejack.store import vouchers
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


@router.put("/api/floor/settings")
async def set_setting(request: Request, body: SettingBody, who: Who) -> dict[str, Any]:
    """Change a floor setting (supervisor; audited)."""
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
