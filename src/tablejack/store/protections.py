"""Player protections and terminal lock-out (tilts) in the store.

* **Limits** per gaming day (the session): a loss limit (wagers less what came back, unsettled
  wagers counted as lost), a wager limit (everything wagered) and a time limit (from the day's
  first wager). A new or tighter limit applies at once; none may be loosened (raised or removed)
  until 24 hours after the last change (refused, audited, nothing changes).
* **Self-exclusion**: no wager until a moment, which may be extended and never shortened.
* **Tilts**: an EWT locked with a reason code (:data:`TILT_CODES`); only a supervisor clears
  it, naming a clear code (:data:`CLEAR_CODES`). Every change is an event of a hash-chained log
  (``floor-protections``, ``floor-tilts``) and an audit entry.

>>> looser({"loss_limit": 1000, "wager_limit": None}, {"loss_limit": None, "wager_limit": 50})
['loss_limit']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import EventIn, Store
from tablejack.store.fencing import Fence
from tablejack.store.floor_models import LIMITS, LOCKS
from tablejack.store.vouchers import FloorRefusedError
from tablejack.store.wager_limits import DAY_USAGE, LIMIT_RULE, Limits, refusal, usage_of

__all__ = [
    "CLEAR_CODES",
    "LIMIT_FIELDS",
    "LIMIT_RULE",
    "RETURNED",
    "TILT_CODES",
    "TILT_RULE",
    "check_wager",
    "clear_terminal",
    "end_lost_connection",
    "limits",
    "lock_terminal",
    "looser",
    "open_locks",
    "protected_accounts",
    "self_exclude",
    "set_limits",
    "usage",
]

LIMIT_FIELDS = ("loss_limit", "wager_limit", "time_limit_s")
TILT_RULE = "terminal lock-out"
DAY_US = 24 * 3600 * 1_000_000
TILT_CODES = (
    "door_open",
    "bill_validator",
    "printer",
    "connection_lost",
    "reader_fault",
    "card_not_requested",
    "card_inventory",
    "storage_error",
    "other",
    "host_disabled",
    "host_link_lost",
    "handpay_pending",
)
"""Why a terminal is locked."""
CLEAR_CODES = ("fault_repaired", "checked_no_fault", "replaced", "other")
"""How the supervisor resolved it."""


def looser(current: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The limits that ``new`` loosens: raised, or removed (None) where one was set."""
    return [
        name
        for name in LIMIT_FIELDS
        if name in new
        and current.get(name) is not None
        and (new[name] is None or new[name] > current[name])
    ]


async def limits(store: Store, account: str) -> dict[str, Any] | None:
    """A player's limits row, or None."""
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(LIMITS).where(LIMITS.c.account == account)))
            .mappings()
            .first()
        )
    return None if row is None else dict(row)


async def protected_accounts(store: Store) -> set[str]:
    """The players with a limit or a self-exclusion (the server checks only their wagers)."""
    async with store.engine.connect() as connection:
        rows = (await connection.execute(select(LIMITS.c.account))).all()
    return {row[0] for row in rows}


async def _log(store: Store, log_id: str, kind: str, payload: dict[str, Any], by: str) -> None:
    await store.commit_logged(
        log_id, EventIn(kind, payload, actor=by), [], None, owner=log_id, log_kind="protections"
    )


async def set_limits(
    store: Store, account: str, new: Mapping[str, int | None], *, by: str, at_us: int
) -> dict[str, Any]:
    """Set, tighten or (24 hours after the last change) loosen a player's limits."""
    for name, value in new.items():
        if name not in LIMIT_FIELDS:
            raise FloorRefusedError("invalid", f"No limit {name!r}.", LIMIT_RULE)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value <= 0
        ):
            raise FloorRefusedError("invalid", f"A limit is positive, not {value!r}.", LIMIT_RULE)
    row = await limits(store, account)
    current = row or dict.fromkeys(LIMIT_FIELDS)
    loosened = looser(current, new)
    if loosened and row is not None and at_us < int(row["changed_us"]) + DAY_US:
        refusal = FloorRefusedError(
            "limit_locked",
            f"{', '.join(loosened)} may not be loosened until 24 hours after the last change.",
            LIMIT_RULE,
        )
        await store.audit(refusal.code, f"{account}: {refusal.message}", actor=by, rule=LIMIT_RULE)
        raise refusal
    values = {**{k: current.get(k) for k in LIMIT_FIELDS}, **dict(new)}
    async with store.transaction() as connection:
        if row is None:
            await connection.execute(
                LIMITS.insert().values(
                    account=account,
                    changed_us=at_us,
                    set_by=by[:64],
                    excluded_until_us=None,
                    **values,
                )
            )
        else:
            await connection.execute(
                update(LIMITS)
                .where(LIMITS.c.account == account)
                .values(changed_us=at_us, set_by=by[:64], **values)
            )
    await _log(store, "floor-protections", "limits", {"account": account, **values}, by)
    await store.audit("limits", f"{account}: {values}", actor=by, rule=LIMIT_RULE)
    return await limits(store, account) or {}


async def self_exclude(
    store: Store, account: str, until_us: int, *, by: str, at_us: int
) -> dict[str, Any]:
    """Block the player's wagers until ``until_us``; an exclusion is only ever extended."""
    row = await limits(store, account)
    current = None if row is None else row["excluded_until_us"]
    if until_us <= at_us or (current is not None and until_us < int(current)):
        raise FloorRefusedError(
            "limit_locked",
            "A self-exclusion may be extended, never shortened or lifted.",
            LIMIT_RULE,
        )
    async with store.transaction() as connection:
        if row is None:
            await connection.execute(
                LIMITS.insert().values(
                    account=account,
                    changed_us=at_us,
                    set_by=by[:64],
                    excluded_until_us=until_us,
                    **dict.fromkeys(LIMIT_FIELDS),
                )
            )
        else:
            await connection.execute(
                update(LIMITS).where(LIMITS.c.account == account).values(excluded_until_us=until_us)
            )
    await _log(
        store, "floor-protections", "self_exclusion", {"account": account, "until_us": until_us}, by
    )
    await store.audit("self_exclusion", f"{account} until {until_us}", actor=by, rule=LIMIT_RULE)
    return await limits(store, account) or {}


async def usage(store: Store, account: str, since_us: int, until_us: int) -> dict[str, Any]:
    """What the player wagered, lost (his tips to the dealer included), and when he first
    wagered in a window (the ledger)."""
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            DAY_USAGE, {"accounts": [account], "start": since_us, "until": until_us}
        )
        return usage_of(rows.all()).as_dict()


async def check_wager(
    store: Store, account: str, amount: int, *, at_us: int, day: tuple[int, int]
) -> None:
    """Refuse a wager of ``amount`` the player's limits or exclusion forbid, as the committed
    ledger stands (the server's early answer; the write transaction checks again, under the
    player's lock: :mod:`tablejack.store.wager_limits`)."""
    row = await limits(store, account)
    if row is None:
        return
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            DAY_USAGE, {"accounts": [account], "start": day[0], "until": day[1]}
        )
        used = usage_of(rows.all())
    refused = refusal(
        Limits(account, *(row[k] for k in (*LIMIT_FIELDS, "excluded_until_us"))),
        used,
        wagered=amount,
        tipped=0,
        at_us=at_us,
    )
    if refused is not None:
        raise FloorRefusedError(*refused, LIMIT_RULE)


async def lock_terminal(
    store: Store,
    terminal: str,
    code: str,
    reason: str,
    *,
    by: str,
    at_us: int,
    fence: Fence | None = None,
) -> dict[str, Any]:
    """A tilt: lock the terminal with a reason code; the lock and its event of the
    ``floor-tilts`` log are written in one transaction. ``fence``: the tilt is a table's (its
    terminal's connection was lost), refused unless the writer still holds the table's lease
    (:mod:`tablejack.store.fencing`)."""
    if code not in TILT_CODES:
        raise FloorRefusedError(
            "invalid", f"A tilt code is one of {', '.join(TILT_CODES)}.", TILT_RULE
        )

    async def lock(connection: AsyncConnection) -> dict[str, Any]:
        await connection.execute(
            LOCKS.insert().values(
                terminal=terminal,
                code=code,
                reason=reason[:200],
                locked_us=at_us,
                locked_by=by[:64],
            )
        )
        return {}

    payload = {"terminal": terminal, "code": code, "reason": reason[:200]}
    await store.commit_logged(
        "floor-tilts",
        EventIn("tilt", payload, actor=by),
        [],
        None,
        owner="floor-tilts",
        before=lock,
        log_kind="protections",
        fence=fence,
    )
    await store.audit(
        "tilt", f"{terminal} {code}: {reason[:200]}", terminal=terminal, actor=by, rule=TILT_RULE
    )
    return payload


async def clear_terminal(
    store: Store, terminal: str, code: str, reason: str, *, by: str, role: str, at_us: int
) -> dict[str, Any]:
    """A supervisor clears a terminal's tilts with a clear code; anyone else is refused."""
    if role != "supervisor":
        refusal = FloorRefusedError("role", "Only a supervisor clears a tilt.", TILT_RULE)
        await store.audit(
            refusal.code,
            f"clear of {terminal}: {refusal.message}",
            terminal=terminal,
            actor=by,
            rule=TILT_RULE,
        )
        raise refusal
    if code not in CLEAR_CODES or not reason.strip():
        raise FloorRefusedError(
            "invalid", f"A clear names a code ({', '.join(CLEAR_CODES)}) and a reason.", TILT_RULE
        )
    async with store.transaction() as connection:
        moved = await connection.execute(
            update(LOCKS)
            .where((LOCKS.c.terminal == terminal) & LOCKS.c.cleared_us.is_(None))
            .values(
                cleared_us=at_us, cleared_by=by[:64], clear_code=code, clear_reason=reason[:200]
            )
        )
    if moved.rowcount == 0:
        raise FloorRefusedError("invalid", f"Terminal {terminal} is not locked.", TILT_RULE)
    payload = {
        "terminal": terminal,
        "clear_code": code,
        "reason": reason[:200],
        "cleared": moved.rowcount,
    }
    await _log(store, "floor-tilts", "tilt_clear", payload, by)
    await store.audit(
        "tilt_clear",
        f"{terminal} {code}: {reason[:200]}",
        terminal=terminal,
        actor=by,
        rule=TILT_RULE,
    )
    return payload


RETURNED = "returned"
"""The clear code of a ``connection_lost`` lock that ended by itself: its player is back at
the terminal and holds no unsettled wager (floor setting ``connection_lost_clear``)."""


async def end_lost_connection(
    store: Store, terminal: str, reason: str, *, at_us: int
) -> dict[str, Any] | None:
    """Clear ``terminal``'s ``connection_lost`` locks — those alone — as ended (clear code
    :data:`RETURNED`, by ``server``): the rows and their ``tilt_clear`` event in one
    transaction. None when the terminal had none open (nothing written)."""

    async def clear(connection: AsyncConnection) -> dict[str, Any]:
        moved = await connection.execute(
            update(LOCKS)
            .where(
                (LOCKS.c.terminal == terminal)
                & (LOCKS.c.code == "connection_lost")
                & LOCKS.c.cleared_us.is_(None)
            )
            .values(
                cleared_us=at_us,
                cleared_by="server",
                clear_code=RETURNED,
                clear_reason=reason[:200],
            )
        )
        if moved.rowcount == 0:  # another process ended it first: write nothing
            raise FloorRefusedError("invalid", f"Terminal {terminal} is not locked.", TILT_RULE)
        return {"cleared": moved.rowcount}

    payload = {"terminal": terminal, "clear_code": RETURNED, "reason": reason[:200]}
    try:
        _, done = await store.commit_logged(
            "floor-tilts",
            EventIn("tilt_clear", payload, actor="server"),
            [],
            None,
            owner="floor-tilts",
            before=clear,
            log_kind="protections",
        )
    except FloorRefusedError:
        return None
    await store.audit(
        "tilt_clear",
        f"{terminal} {RETURNED}: {reason[:200]}",
        terminal=terminal,
        actor="server",
        rule=TILT_RULE,
    )
    return payload | {"cleared": int(done["cleared"])}


async def open_locks(store: Store) -> dict[str, list[dict[str, Any]]]:
    """The terminals locked now and their tilts."""
    statement = select(LOCKS).where(LOCKS.c.cleared_us.is_(None)).order_by(LOCKS.c.id)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).mappings().all()
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["terminal"], []).append(dict(row))
    return out
