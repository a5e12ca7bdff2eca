"""What the cage reads (PA 605a.5(c)–(d)): a voucher found by the validation code printed on it,
before it is paid, and the cage's report of a gaming day — the credit it sold, the vouchers it
paid and the hand pays it made, read from the ledger, per cashier too, with the drawers. Nothing here moves money: paying a
voucher is :func:`tablejack.store.vouchers.pay_voucher`, under the money policy.

A validation code is a bearer secret (the store keeps its SHA-256 only), so a lookup takes the
code and answers the voucher's record without it; a code whose check digits fail is never
looked up.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import and_, func, or_, select

from tablejack.store import drawers as cage_drawers
from tablejack.store.db import CAGE, Store
from tablejack.store.models import EVENTS, LEDGER
from tablejack.store.vouchers import (
    HANDPAY_KINDS,
    check_code,
    normalise_code,
    voucher_number,
    voucher_row,
)

__all__ = ["CAGE_KINDS", "cage_report", "transaction", "transactions", "voucher_by_code"]

CAGE_KINDS = ("fund", "voucher_sold", "voucher_paid", "voucher_voided", *HANDPAY_KINDS)
"""The ledger kinds of the cage's own movements: credit sold (``fund``), a voucher sold, a
voucher paid, a sold voucher voided (its cash handed back), and the hand pays."""


async def voucher_by_code(store: Store, code: str) -> dict[str, Any] | None:
    """The voucher of a validation code — number, amount, status, issuing account and terminal,
    times, the system that validated it — without the code; None when no voucher has it or (the
    floor's own codes) its check digits fail. A host's validation number has no check digits
    of the floor's."""
    clean = normalise_code(code)
    if len(clean) != 18 or not clean.isdigit():
        return None
    row = await voucher_row(store, clean)
    if row is None or (row["validated_by"] is None and not check_code(clean)):
        return None
    out = {k: v for k, v in dict(row).items() if k not in ("code_hash", "id")}
    out["number"] = voucher_number(int(row["id"]))
    return out


async def cage_report(store: Store, start_us: int, end_us: int) -> dict[str, Any]:
    """The cage's movements between ``start_us`` and ``end_us``: for each kind its count and
    total cents, and the cash the cage took in (credit and vouchers sold) and paid out
    (vouchers, hand pays); ``net``: taken in minus paid out; ``cashiers``: the same per person
    who made the movements (the requester of an approved one); ``drawers``: the drawers open
    in the period (:mod:`tablejack.store.drawers`)."""
    kinds: dict[str, dict[str, int]] = {kind: {"count": 0, "total": 0} for kind in CAGE_KINDS}
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            select(LEDGER.c.kind, func.count(), func.coalesce(func.sum(LEDGER.c.amount), 0))
            .where(
                or_(LEDGER.c.from_account == CAGE, LEDGER.c.to_account == CAGE),
                LEDGER.c.kind.in_(CAGE_KINDS),
                LEDGER.c.at_us >= start_us,
                LEDGER.c.at_us < end_us,
            )
            .group_by(LEDGER.c.kind)
        )
        for kind, count, total in rows.all():
            kinds[str(kind)] = {"count": int(count), "total": int(total)}
    taken = kinds["fund"]["total"] + kinds["voucher_sold"]["total"]
    paid = sum(kinds[kind]["total"] for kind in cage_drawers.CASH_OUT)
    cashiers = {}
    for person, moved in (await cage_drawers.cashier_totals(store, start_us, end_us)).items():
        cash_in = sum(moved.get(kind, {}).get("total", 0) for kind in cage_drawers.CASH_IN)
        cash_out = sum(moved.get(kind, {}).get("total", 0) for kind in cage_drawers.CASH_OUT)
        cashiers[person] = {
            "kinds": moved,
            "cash_in": cash_in,
            "cash_out": cash_out,
            "net": cash_in - cash_out,
        }
    return {
        "kinds": kinds,
        "cash_in": taken,
        "cash_out": paid,
        "net": taken - paid,
        "cashiers": cashiers,
        "drawers": await cage_drawers.drawers(store, start_us, end_us),
    }


def _transaction(row: Any) -> dict[str, Any]:
    """A cage movement as a transaction: its id (the event's log and number), kind, amount,
    cashier (the event's actor), time, the game account, terminal and voucher it names, a
    void's reason and an approval's supervisor."""
    payload = json.loads(row["payload"])
    player = row["to_account"] if row["from_account"] == CAGE else row["from_account"]
    return {
        "id": f"{row['round_id']}#{row['seq']}",
        "log": row["round_id"],
        "seq": int(row["seq"]),
        "kind": str(row["kind"]),
        "amount": int(row["amount"]),
        "cashier": str(row["actor"]),
        "at_us": int(row["at_us"]),
        "account": player if player not in (CAGE, "vouchers") else None,
        "terminal": payload.get("terminal"),
        "voucher": payload.get("voucher"),
        "reason": payload.get("reason") or None,
        "approved_by": payload.get("approved_by"),
    }


def _query() -> Any:
    joined = LEDGER.join(
        EVENTS, and_(EVENTS.c.round_id == LEDGER.c.round_id, EVENTS.c.seq == LEDGER.c.seq)
    )
    return (
        select(
            EVENTS.c.round_id,
            EVENTS.c.seq,
            EVENTS.c.actor,
            EVENTS.c.payload,
            LEDGER.c.kind,
            LEDGER.c.amount,
            LEDGER.c.from_account,
            LEDGER.c.to_account,
            LEDGER.c.at_us,
        )
        .select_from(joined)
        .where(
            or_(LEDGER.c.from_account == CAGE, LEDGER.c.to_account == CAGE),
            LEDGER.c.kind.in_(CAGE_KINDS),
        )
    )


async def transactions(
    store: Store, start_us: int, end_us: int, cashier: str | None = None, limit: int = 500
) -> list[dict[str, Any]]:
    """The cage's movements between ``start_us`` and ``end_us`` as transactions, newest
    first: every cashier's, or one's (``cashier``: the events' actor)."""
    query = (
        _query()
        .where(LEDGER.c.at_us >= start_us, LEDGER.c.at_us < end_us)
        .order_by(LEDGER.c.at_us.desc(), EVENTS.c.seq.desc())
        .limit(limit)
    )
    if cashier is not None:
        query = query.where(EVENTS.c.actor == cashier)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(query)).mappings().all()
    return [_transaction(row) for row in rows]


async def transaction(store: Store, log: str, seq: int) -> dict[str, Any] | None:
    """The cage's movement of event ``seq`` of ``log`` as a transaction (None: none)."""
    query = _query().where(EVENTS.c.round_id == log, EVENTS.c.seq == seq)
    async with store.engine.connect() as connection:
        row = (await connection.execute(query)).mappings().first()
    return None if row is None else _transaction(row)
