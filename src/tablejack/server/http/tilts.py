"""The REST routes of the table tilts and the shoe inventory (PA Chapter 605a): see
:mod:`tablejack.server.duties.tilts` and :mod:`tablejack.server.duties.inventory`.

:data:`router` holds them; :func:`tablejack.server.app.create_app` mounts it. Every refusal
answers 403 or 409 with the rule, is written to the audit log and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import Field

from tablejack.server import visibility
from tablejack.server.duties.inventory import card_code, counts_of, load, unload
from tablejack.server.duties.tilts import (
    TABLE_TILT_RULE,
    clear_table,
    raise_tilt,
)
from tablejack.server.http.access import Strict, Who, duties_of, floor_of, table_of
from tablejack.server.support.auth import Principal
from tablejack.server.support.contract import Whole
from tablejack.server.support.text import SafeText
from tablejack.server.table import RefusedError, Table
from tablejack.store.protections import TILT_CODES

__all__ = ["ShoeCount", "TableTiltBody", "router"]


class ShoeCount(Strict):
    """A shoe's count: per card code (``counts``), or the codes as read (``cards``, one per
    card separated by spaces, e.g. ``"AS AS 2S …"``), or both (added)."""

    counts: dict[SafeText, Annotated[Whole, Field(ge=0, le=10_000)]] = Field(default_factory=dict)
    cards: SafeText = Field(default="", max_length=20_000)

    def total(self) -> dict[str, int]:
        """The counts per code."""
        out = Counter(counts_of(self.cards))
        for code, count in self.counts.items():
            out[card_code(code)] += max(0, min(count, 10_000))
        return dict(out)


class TableTiltBody(Strict):
    """A table tilt by staff, or a supervisor's clear: a code and the reason."""

    code: SafeText = Field(min_length=1, max_length=32)
    reason: SafeText = Field(default="", max_length=200)


async def _refused(
    table: Table, who: Principal, refusal: RefusedError, status: int = 409
) -> HTTPException:
    await table.floor.store.audit(
        refusal.code, refusal.message, table_id=table.id, actor=who.subject, rule=refusal.rule
    )
    return HTTPException(
        status, {"code": refusal.code, "rule": refusal.rule, "message": refusal.message}
    )


async def _staff(request: Request, table_id: str, who: Principal) -> Table:
    floor = floor_of(request)
    table = floor.tables.get(table_id)
    if table is None:
        raise HTTPException(404, f"No table {table_id!r}.")
    if who.role not in ("dealer", "supervisor"):
        message = "Only the dealer or a supervisor loads and unloads the shoe."
        await floor.store.audit("role", message, table_id=table_id, actor=who.subject, rule="role")
        raise HTTPException(403, {"code": "role", "rule": "role", "message": message})
    return table


router = APIRouter()


@router.post("/api/tables/{table_id}/tilt")
async def tilt_table(
    request: Request, table_id: str, body: TableTiltBody, who: Who
) -> dict[str, Any]:
    """Lock a table with a tilt code (dealer, supervisor)."""
    table = table_of(request, table_id)
    if who.role not in ("dealer", "supervisor"):
        raise await _refused(
            table,
            who,
            RefusedError("role", "Only staff lock a table.", TABLE_TILT_RULE),
            403,
        )
    if body.code not in TILT_CODES:
        raise await _refused(
            table,
            who,
            RefusedError(
                "invalid", f"A tilt code is one of {', '.join(TILT_CODES)}.", TABLE_TILT_RULE
            ),
        )
    async with table.lock:
        entry = await raise_tilt(table, body.code, body.reason or body.code, by=who.subject)
    return entry


@router.post("/api/tables/{table_id}/clear")
async def clear(request: Request, table_id: str, body: TableTiltBody, who: Who) -> dict[str, Any]:
    """Clear the table's tilts with a clear code and a reason (supervisor only)."""
    table = table_of(request, table_id)
    if who.role != "supervisor":
        raise await _refused(
            table,
            who,
            RefusedError("role", "Only a supervisor clears a tilt.", TABLE_TILT_RULE),
            403,
        )
    try:
        return await clear_table(table, body.code, body.reason, by=who.subject)
    except RefusedError as refusal:
        raise await _refused(table, who, refusal) from None


@router.get("/api/tables/{table_id}/tilts")
async def tilts(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """The table's active tilts and those of its terminals (dealer, supervisor)."""
    table = table_of(request, table_id)
    if who.role not in ("dealer", "supervisor"):
        raise HTTPException(403, "Only staff read the tilts.")
    await duties_of(request).tilts.refresh([table])
    return {"table": table.id, "status": table.status, "tilts": table.tilts}


@router.post("/api/tables/{table_id}/shoe/load")
async def load_shoe(request: Request, table_id: str, body: ShoeCount, who: Who) -> dict[str, Any]:
    """Load a shoe: the shuffler's count must be exactly N full decks (else refused and
    the table tilted ``card_inventory``)."""
    table = await _staff(request, table_id, who)
    try:
        return await load(table, body.total(), by=who.subject, source="console")
    except RefusedError as refusal:
        raise await _refused(table, who, refusal) from None


@router.post("/api/tables/{table_id}/shoe/unload")
async def unload_shoe(request: Request, table_id: str, body: ShoeCount, who: Who) -> dict[str, Any]:
    """End the shoe with the count of the cards left in it (a mismatch tilts the table)."""
    table = await _staff(request, table_id, who)
    try:
        return await unload(table, body.total(), by=who.subject, source="console")
    except RefusedError as refusal:
        raise await _refused(table, who, refusal) from None


@router.get("/api/tables/{table_id}/shoe")
async def shoe(request: Request, table_id: str, who: Who) -> dict[str, Any]:
    """The shoe in use: its inventory, the cards read and what remains. A virtual shoe:
    the decks and count per code of its last shuffle, the cards dealt from it since
    (``dealt``), those left (``remaining``), the shuffles so far and whether the cut card
    has come out (``needs_shuffle``: it is shuffled before the next round)."""
    table = await _staff(request, table_id, who)
    shoe_ = table.shoe
    if shoe_ is not None:
        loaded = shoe_.loaded()
        dealt = shoe_.mark()
        return {
            "table": table.id,
            "source": "virtual",
            **loaded,
            "dealt": dealt,
            "remaining": loaded["total"] - dealt,
            "shuffles": shoe_.shuffles,
            "needs_shuffle": shoe_.needs_shuffle,
        }
    return {
        "table": table.id,
        "source": table.config.source,
        "loaded": visibility.shoe(
            table.round, None if table.inventory is None else table.inventory.to_json()
        ),
    }
