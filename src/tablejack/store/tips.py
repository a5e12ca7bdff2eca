"""Tips (tokes to the dealer) on the electronic table and the tip report of PA Chapter 605a
(§ 605a.5(d): meters and reports per gaming day — "tip report if tips are enabled").

Tips are off unless the operator sets ``tips_enabled`` (a floor setting, audited). With tips
on, a player gives a tip from his game account at a terminal: a ledger movement of its own
kind ``tip``, player → the table's tip account ``tips:<table>`` (the dealers' toke box), in
integer cents, written in ONE transaction with a ``tip`` event in the terminal's account log
(``acct:<terminal>``), as buy-ins and cash-outs are.

A tip is refused — audited, nothing else changes — when tips are off, when it is not a whole
positive number of cents, above the floor's ``tip_maximum`` or the game account's balance, for
a table other than the one the terminal serves, at a locked terminal (tilt), from a player
who has excluded himself, is past his time limit, or whose tip would pass his loss limit.

A tip is not a wager: it is never coin in, drop, win or hold, and does not count toward the
wager limit. It is money the player parts with at the table, so it counts toward his **loss
limit** (:func:`tablejack.store.protections.usage` adds the day's tips to his losses).

>>> tip_account("A1")
'tips:A1'
>>> whole_cents(250), whole_cents(2.5), whole_cents(True), whole_cents("250")
(True, False, False, False)
"""

from __future__ import annotations

from typing import Any, TypeGuard

from sqlalchemy import select

from tablejack.core.money import format_cents
from tablejack.store import protections
from tablejack.store.db import EventIn, Store, StoreError, Transfer
from tablejack.store.floor_models import TERMINALS
from tablejack.store.meters_report import day_bounds, day_readings, gaming_day_of
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import (
    ACCOUNT_RULE,
    FloorRefusedError,
    Movement,
    account_log_id,
    check_terminal_id,
    floor_settings,
    player_balance,
    refusal_of,
)

__all__ = [
    "TIP_ACCOUNT_KIND",
    "TIP_RULE",
    "give_tip",
    "tip_account",
    "tip_report",
    "tip_settings",
    "whole_cents",
]

TIP_RULE = "PA 605a.5(d)"
"""The clause of the tip meter and report; a tip refused by a floor setting cites it too."""
TIP_ACCOUNT_KIND = "tips"
"""The kind of the tables' tip accounts (the dealers' toke boxes)."""
DISABLED_STATEMENT = (
    "Tips are disabled on this floor (setting tips_enabled is off); the figures are the tips "
    "given while they were enabled."
)


def tip_account(table_id: str) -> str:
    """The tip account (toke box) of a table."""
    return f"tips:{table_id}"


def whole_cents(amount: object) -> TypeGuard[int]:
    """True when ``amount`` is an integer number of cents (not a float, bool or string)."""
    return isinstance(amount, int) and not isinstance(amount, bool)


async def tip_settings(store: Store) -> dict[str, Any]:
    """Whether tips are enabled and the largest tip (cents): what a terminal may show."""
    settings = await floor_settings(store)
    return {
        "enabled": bool(settings["tips_enabled"]),
        "maximum": int(settings["tip_maximum"]),
        "rule": TIP_RULE,
    }


async def _served_table(store: Store, terminal: str) -> str | None:
    """The table an active registered terminal serves (None: not registered or retired)."""
    async with store.engine.connect() as connection:
        row = (
            await connection.execute(
                select(TERMINALS.c.table_id, TERMINALS.c.status).where(TERMINALS.c.id == terminal)
            )
        ).first()
    return None if row is None or row[1] != "active" else str(row[0])


async def _check_protections(store: Store, account: str, amount: int, at_us: int) -> None:
    """Self-exclusion, the time limit and the loss limit (a tip counts as money lost; it is
    not a wager, so the wager limit does not apply)."""
    row = await protections.limits(store, account)
    if row is None:
        return
    until = row["excluded_until_us"]
    if until is not None and at_us < int(until):
        raise FloorRefusedError(
            "excluded",
            f"{account} has excluded himself; no tip until the exclusion ends.",
            protections.LIMIT_RULE,
        )
    hour = int((await floor_settings(store))["gaming_day_start_hour"])
    start, end = day_bounds(gaming_day_of(at_us, hour), hour)
    used = await protections.usage(store, account, start, end)
    if row["loss_limit"] is not None and used["loss"] + amount > row["loss_limit"]:
        raise FloorRefusedError(
            "limit",
            f"Today's losses and tips of {format_cents(max(used['loss'], 0))} and this tip of "
            f"{format_cents(amount)} would pass the loss limit of "
            f"{format_cents(row['loss_limit'])}.",
            protections.LIMIT_RULE,
        )
    if (
        row["time_limit_s"] is not None
        and used["first_wager_us"] is not None
        and at_us - int(used["first_wager_us"]) >= int(row["time_limit_s"]) * 1_000_000
    ):
        raise FloorRefusedError(
            "limit",
            f"The time limit of {row['time_limit_s']} seconds of play is reached.",
            protections.LIMIT_RULE,
        )


async def _check_tip(
    store: Store, account: str, terminal: str, table_id: str, amount: object, at_us: int
) -> int:
    check_terminal_id(terminal)
    settings = await floor_settings(store)
    if not settings["tips_enabled"]:
        raise FloorRefusedError(
            "tips_disabled",
            f"Tips are not enabled on this floor (setting tips_enabled) ({TIP_RULE}).",
            TIP_RULE,
        )
    if not whole_cents(amount):
        raise FloorRefusedError(
            "invalid", f"A tip is a whole number of cents, not {amount!r}.", ACCOUNT_RULE
        )
    if amount <= 0:
        raise FloorRefusedError(
            "invalid", f"A tip is a positive number of cents, not {amount}.", ACCOUNT_RULE
        )
    maximum = int(settings["tip_maximum"])
    if amount > maximum:
        raise FloorRefusedError(
            "tip_maximum",
            f"A tip of {format_cents(amount)} is above the tip maximum of {format_cents(maximum)} "
            f"(setting tip_maximum) ({TIP_RULE}).",
            TIP_RULE,
        )
    served = await _served_table(store, terminal)
    if served is not None and served != table_id:
        raise FloorRefusedError(
            "invalid",
            f"Terminal {terminal} serves table {served}; it cannot tip the dealer of {table_id}.",
            TIP_RULE,
        )
    locks = (await protections.open_locks(store)).get(terminal)
    if locks:
        codes = ", ".join(str(lock["code"]) for lock in locks)
        raise FloorRefusedError(
            "tilt",
            f"Terminal {terminal} is locked ({codes}); a supervisor must clear it.",
            protections.TILT_RULE,
        )
    balance = await player_balance(store, account)
    if amount > balance:
        raise FloorRefusedError(
            "balance",
            f"Game account {account!r} holds {balance} cents; a tip of {amount} cannot be given.",
            ACCOUNT_RULE,
        )
    await _check_protections(store, account, amount, at_us)
    return amount


async def give_tip(
    store: Store, table_id: str, amount: object, *, actor: Actor, at_us: int
) -> Movement:
    """A tip from the game account of the player signed in at a terminal to the table's tip
    account (``tip`` ledger row and a ``tip`` event of the terminal's account log, one
    transaction). Refusals are audited and change nothing else. The caller checks that the
    table exists."""
    account, terminal = actor.subject, actor.terminal
    try:
        if actor.role is not Role.PLAYER or not terminal:
            raise FloorRefusedError(
                "role", "Only a player signed in at a terminal tips the dealer.", TIP_RULE
            )
        cents = await _check_tip(store, account, terminal, table_id, amount, at_us)
    except FloorRefusedError as refusal:
        await store.audit(
            refusal.code,
            f"tip of {amount!r} by {account} at {terminal}: {refusal.message}",
            actor=account,
            terminal=terminal,
            table_id=table_id,
            rule=refusal.rule,
        )
        raise
    box = tip_account(table_id)
    await store.ensure_account(box, TIP_ACCOUNT_KIND, f"tips of table {table_id}")
    transfer = Transfer(account, box, cents, "tip", memo=f"tip at {terminal}")
    tipper = Actor(actor.role, actor.subject, actor.terminal, table_id)
    try:
        record, _ = await store.commit_logged(
            account_log_id(terminal),
            EventIn(
                "tip",
                {
                    "account": account,
                    "amount": cents,
                    "terminal": terminal,
                    "table": table_id,
                    "by": account,
                },
                actor=account,
                terminal=terminal,
            ),
            [transfer],
            tipper,
            owner=terminal,
        )
    except StoreError as error:  # the balance moved between the check and the write
        late = refusal_of(error)
        await store.audit(late.code, late.message, actor=account, terminal=terminal, rule=late.rule)
        raise late from None
    return Movement(record, (transfer,), await player_balance(store, account))


def _tips_of(meters: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {
        scope_id: {"count": int(meter.get("tips_count", 0)), "amount": int(meter.get("tips", 0))}
        for scope_id, meter in sorted(meters.items())
        if int(meter.get("tips_count", 0)) or int(meter.get("tips", 0))
    }


async def tip_report(store: Store, day: str, at_us: int) -> dict[str, Any]:
    """The tip report of a gaming day (§ 605a.5(d)): per table and per EWT the number and sum
    of the tips, the floor's total; from the day's snapshot once the day has ended
    (``final: true``), live before. When tips are disabled the report says so and still
    gives what was tipped while they were enabled."""
    start, end, final, data = await day_readings(store, day, at_us)
    floor = data.get("floor", {}).get("floor", {})
    enabled = bool((await floor_settings(store))["tips_enabled"])
    return {
        "gaming_day": day,
        "starts_us": start,
        "ends_us": end,
        "final": final,
        "rule": TIP_RULE,
        "tips_enabled": enabled,
        "statement": None if enabled else DISABLED_STATEMENT,
        "tables": _tips_of(data.get("table", {})),
        "terminals": _tips_of(data.get("terminal", {})),
        "floor": {"count": int(floor.get("tips_count", 0)), "amount": int(floor.get("tips", 0))},
    }
