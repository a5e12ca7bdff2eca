"""A cashier's drawer at the cage (PA 605a.4(d)): opened with a float, its movements attributed
to it, counted and closed with the variance against what it should hold.

A drawer's movements are the cage's ledger rows whose event names its cashier (the event's
actor: the requester of an approved movement too) between its opening and its close: the cash
taken in (credit sold, vouchers sold) and paid out (vouchers cashed, hand pays). What it should
hold (``expected``) is its float plus what it took in less what it paid out; the close records
the counted amount and ``variance`` = counted − expected. One drawer per cashier is open at a
time (a partial unique index). Opening and closing are events of the cage's log, each written
with its row in one transaction, so ``verify-log`` covers them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.cage_models import DRAWERS
from tablejack.store.db import CAGE, CAGE_LOG, EventIn, Store
from tablejack.store.models import EVENTS, LEDGER
from tablejack.store.policy import Actor, Role
from tablejack.store.records import now_us
from tablejack.store.vouchers import HANDPAY_KINDS, FloorRefusedError, dollars

__all__ = [
    "CASH_IN",
    "CASH_OUT",
    "DRAWER_RULE",
    "cashier_totals",
    "close_drawer",
    "drawers",
    "open_drawer",
    "open_drawer_of",
]

DRAWER_RULE = "PA 605a.4(d): cage drawer"
CASH_IN = ("fund", "voucher_sold")
"""The cage's movements that take cash in."""
CASH_OUT = ("voucher_paid", "voucher_voided", *HANDPAY_KINDS)
"""The cage's movements that pay cash out (a voided sale's cash handed back too)."""


def _cashier(actor: Actor) -> None:
    if actor.role is not Role.CASHIER:
        raise FloorRefusedError(
            "role", f"A drawer is a cashier's, not a {actor.role.value}'s.", DRAWER_RULE
        )


async def cashier_totals(
    store: Store, start_us: int, end_us: int, cashier: str | None = None
) -> dict[str, dict[str, dict[str, int]]]:
    """Per person (the event's actor) the cage's movements between ``start_us`` and
    ``end_us``: for each kind its count and total cents."""
    joined = LEDGER.join(
        EVENTS, and_(EVENTS.c.round_id == LEDGER.c.round_id, EVENTS.c.seq == LEDGER.c.seq)
    )
    query = (
        select(
            EVENTS.c.actor,
            LEDGER.c.kind,
            func.count(),
            func.coalesce(func.sum(LEDGER.c.amount), 0),
        )
        .select_from(joined)
        .where(
            or_(LEDGER.c.from_account == CAGE, LEDGER.c.to_account == CAGE),
            LEDGER.c.kind.in_((*CASH_IN, *CASH_OUT)),
            LEDGER.c.at_us >= start_us,
            LEDGER.c.at_us < end_us,
        )
        .group_by(EVENTS.c.actor, LEDGER.c.kind)
    )
    if cashier is not None:
        query = query.where(EVENTS.c.actor == cashier)
    out: dict[str, dict[str, dict[str, int]]] = {}
    async with store.engine.connect() as connection:
        for actor, kind, count, total in (await connection.execute(query)).all():
            out.setdefault(str(actor), {})[str(kind)] = {"count": int(count), "total": int(total)}
    return out


def _net(kinds: Mapping[str, Mapping[str, int]]) -> tuple[int, int]:
    taken = sum(kinds.get(kind, {}).get("total", 0) for kind in CASH_IN)
    paid = sum(kinds.get(kind, {}).get("total", 0) for kind in CASH_OUT)
    return taken, paid


async def _view(store: Store, row: Mapping[str, Any]) -> dict[str, Any]:
    """A drawer with its movements so far (or to its close) and what it should hold."""
    out = dict(row)
    end = int(row["closed_us"]) + 1 if row["closed_us"] is not None else now_us() + 1
    totals = await cashier_totals(store, int(row["opened_us"]), end, str(row["cashier"]))
    kinds = totals.get(str(row["cashier"]), {})
    taken, paid = _net(kinds)
    out["kinds"] = kinds
    out["cash_in"] = taken
    out["cash_out"] = paid
    if row["status"] == "open":
        out["expected"] = int(row["opening"]) + taken - paid
    for name in ("opening", "expected", "counted", "variance", "cash_in", "cash_out"):
        if out.get(name) is not None:
            out[f"{name}_text"] = dollars(int(out[name]))
    return out


async def open_drawer_of(store: Store, cashier: str) -> dict[str, Any] | None:
    """The cashier's open drawer with its movements so far (None: none open)."""
    async with store.engine.connect() as connection:
        row = (
            (
                await connection.execute(
                    select(DRAWERS).where(
                        (DRAWERS.c.cashier == cashier) & (DRAWERS.c.status == "open")
                    )
                )
            )
            .mappings()
            .first()
        )
    return None if row is None else await _view(store, dict(row))


async def drawers(
    store: Store, start_us: int, end_us: int, cashier: str | None = None
) -> list[dict[str, Any]]:
    """The drawers open at some time between ``start_us`` and ``end_us`` (all cashiers', or
    one's), oldest first."""
    query = (
        select(DRAWERS)
        .where(
            (DRAWERS.c.opened_us < end_us)
            & ((DRAWERS.c.closed_us.is_(None)) | (DRAWERS.c.closed_us >= start_us))
        )
        .order_by(DRAWERS.c.id)
    )
    if cashier is not None:
        query = query.where(DRAWERS.c.cashier == cashier)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(query)).mappings().all()
    return [await _view(store, dict(row)) for row in rows]


async def _refused(store: Store, refusal: FloorRefusedError, actor: Actor) -> FloorRefusedError:
    await store.audit(refusal.code, refusal.message, actor=actor.subject, rule=refusal.rule)
    return refusal


async def open_drawer(store: Store, opening: int, *, actor: Actor) -> dict[str, Any]:
    """Open the cashier's drawer with a float of ``opening`` cents (its row and a
    ``drawer_opened`` event of the cage's log); refused while one of his is open."""
    try:
        _cashier(actor)
        if isinstance(opening, bool) or not isinstance(opening, int) or opening < 0:
            raise FloorRefusedError(
                "invalid", f"A drawer's float is cents, 0 or more, not {opening!r}.", DRAWER_RULE
            )
        if await open_drawer_of(store, actor.subject) is not None:
            raise FloorRefusedError(
                "drawer_open",
                f"{actor.subject} already has an open drawer; count and close it first.",
                DRAWER_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refused(store, refusal, actor) from None
    at = now_us()

    async def insert(connection: AsyncConnection) -> Mapping[str, Any]:
        made = await connection.scalar(
            DRAWERS.insert()
            .values(cashier=actor.subject[:64], opening=opening, opened_us=at, status="open")
            .returning(DRAWERS.c.id)
        )
        return {"drawer": int(made)}

    await store.ensure_account(CAGE, "cage", "cage")
    try:
        await store.commit_logged(
            CAGE_LOG,
            EventIn(
                "drawer_opened",
                {"cashier": actor.subject, "opening": opening, "opened_us": at},
                actor=actor.subject,
            ),
            [],
            None,
            owner=CAGE,
            before=insert,
            log_kind="cage",
        )
    except IntegrityError:  # pragma: no cover - two opens racing: the index keeps one
        raced = FloorRefusedError(
            "drawer_open", f"{actor.subject} already has an open drawer.", DRAWER_RULE
        )
        raise await _refused(store, raced, actor) from None
    found = await open_drawer_of(store, actor.subject)
    assert found is not None
    return found


async def close_drawer(store: Store, counted: int, *, actor: Actor) -> dict[str, Any]:
    """Count and close the cashier's open drawer: the counted cents, the expected (float plus
    cash in less cash out) and the variance (counted − expected), its row and a
    ``drawer_closed`` event in one transaction."""
    try:
        _cashier(actor)
        if isinstance(counted, bool) or not isinstance(counted, int) or counted < 0:
            raise FloorRefusedError(
                "invalid", f"A count is cents, 0 or more, not {counted!r}.", DRAWER_RULE
            )
        found = await open_drawer_of(store, actor.subject)
        if found is None:
            raise FloorRefusedError(
                "no_drawer", f"{actor.subject} has no open drawer to close.", DRAWER_RULE
            )
    except FloorRefusedError as refusal:
        raise await _refused(store, refusal, actor) from None
    at = now_us()
    totals = await cashier_totals(store, int(found["opened_us"]), at + 1, actor.subject)
    taken, paid = _net(totals.get(actor.subject, {}))
    expected = int(found["opening"]) + taken - paid
    variance = counted - expected

    async def close(connection: AsyncConnection) -> Mapping[str, Any]:
        moved = await connection.execute(
            update(DRAWERS)
            .where((DRAWERS.c.id == found["id"]) & (DRAWERS.c.status == "open"))
            .values(
                status="closed",
                closed_us=at,
                counted=counted,
                expected=expected,
                variance=variance,
            )
        )
        if moved.rowcount != 1:
            raise FloorRefusedError(
                "no_drawer", f"Drawer {found['id']} is already closed.", DRAWER_RULE
            )
        return {}

    try:
        await store.commit_logged(
            CAGE_LOG,
            EventIn(
                "drawer_closed",
                {
                    "drawer": found["id"],
                    "cashier": actor.subject,
                    "opening": found["opening"],
                    "cash_in": taken,
                    "cash_out": paid,
                    "expected": expected,
                    "counted": counted,
                    "variance": variance,
                },
                actor=actor.subject,
            ),
            [],
            None,
            owner=CAGE,
            before=close,
            log_kind="cage",
        )
    except FloorRefusedError as refusal:
        raise await _refused(store, refusal, actor) from None
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(DRAWERS).where(DRAWERS.c.id == found["id"])))
            .mappings()
            .first()
        )
    assert row is not None
    return await _view(store, dict(row))
