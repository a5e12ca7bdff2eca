"""Player protections held by the write transaction: a wager or a tip passes the player's
limits and self-exclusion (:mod:`tablejack.store.protections`) in the same transaction that
writes its ledger posting, or nothing of its step is written.

The play write path (:meth:`tablejack.store.Store.commit`) and the floor's logged movements
(tips) call :func:`check_batch` after the accounts' balances are updated and before the ledger
rows are inserted. For every player a step debits with a ``wager`` or ``tip`` posting who has a
limits row, it locks that row (``SELECT … FOR UPDATE`` on PostgreSQL: one writer at a time per
player, across tables and processes; SQLite has one writer at a time), reads the player's
committed usage of the gaming day *after* the lock (so what an earlier writer committed is
counted), adds the postings of the transaction's earlier steps, and refuses the first step whose
wagers or tips would pass a limit. PostgreSQL's one-statement write (migration ``0007``) holds a
conservative form of the same rule over the whole batch (see there); a batch it refuses is
written again step by step through this check, which names the reason.

The rule, per gaming day (days start at the ``gaming_day_start_hour`` floor setting, UTC), as
:func:`refusal` states it for one step with the usage before it:

* self-exclusion: no wager and no tip before ``excluded_until_us``;
* wager limit: the day's wagers (less refunds) and the step's wagers at most the limit;
* loss limit: the day's losses (wagers less what came back, tips counted) and the step's wagers
  and tips at most the limit;
* time limit: no wager or tip once the limit has run from the day's first wager.

>>> ann = Limits("ann", loss_limit=2000, wager_limit=None, time_limit_s=None, excluded_until_us=None)
>>> used = Usage()
>>> used.add("wager", 1500, 0)
>>> refusal(ann, used, wagered=1500, tipped=0, at_us=1)[0]
'limit'
>>> refusal(ann, used, wagered=500, tipped=0, at_us=1) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, text

from tablejack.core.money import format_cents
from tablejack.store.policy import Posting

__all__ = [
    "DAY_US",
    "DAY_USAGE",
    "LIMITED_KINDS",
    "LIMIT_RULE",
    "Limits",
    "Usage",
    "check_batch",
    "day_start",
    "refusal",
    "usage_of",
]

LIMIT_RULE = "player protection"
"""The rule a refusal of a limit or a self-exclusion names."""
DAY_US = 24 * 3600 * 1_000_000
LIMITED_KINDS = frozenset({"wager", "tip"})
"""The movements a limit or a self-exclusion refuses (from the player's account)."""
DEFAULT_START_HOUR = 6


def day_start(at_us: int, start_hour: int) -> int:
    """The first microsecond of the gaming day of ``at_us`` (days start at ``start_hour``
    UTC): the bound :func:`tablejack.store.meters_report.day_bounds` gives.

    >>> day_start(1_764_475_200_000_000, 6)  # 2025-11-30 04:00 UTC: the day of the 29th
    1764396000000000
    """
    offset = start_hour * 3600 * 1_000_000
    return (at_us - offset) // DAY_US * DAY_US + offset


@dataclass(frozen=True, slots=True)
class Limits:
    """A player's limits row (cents, seconds; None: none)."""

    account: str
    loss_limit: int | None
    wager_limit: int | None
    time_limit_s: int | None
    excluded_until_us: int | None


@dataclass(slots=True)
class Usage:
    """What a player wagered (less refunds) and lost (wagers and tips less what came back) in
    a gaming day, and when he first wagered."""

    wagered: int = 0
    loss: int = 0
    first_wager_us: int | None = None

    def add(self, kind: str, amount: int, at_us: int) -> None:
        """Count one movement of the player's (a wager or tip from him, the rest to him)."""
        if kind == "wager":
            self.wagered += amount
            self.loss += amount
            if self.first_wager_us is None or at_us < self.first_wager_us:
                self.first_wager_us = at_us
        elif kind == "refund":
            self.wagered -= amount
            self.loss -= amount
        elif kind in ("returned", "winnings", "settle"):
            self.loss -= amount
        elif kind == "tip":
            self.loss += amount

    def as_dict(self) -> dict[str, Any]:
        """``{"wagered", "loss", "first_wager_us"}``."""
        return {"wagered": self.wagered, "loss": self.loss, "first_wager_us": self.first_wager_us}


DAY_USAGE = text(
    "SELECT account, kind, SUM(amount), MIN(at_us) FROM ("
    "SELECT from_account AS account, kind, amount, at_us FROM ledger_entries "
    "WHERE from_account IN :accounts AND at_us >= :start AND at_us < :until "
    "AND kind IN ('wager', 'tip') "
    "UNION ALL SELECT to_account AS account, kind, amount, at_us FROM ledger_entries "
    "WHERE to_account IN :accounts AND at_us >= :start AND at_us < :until "
    "AND kind IN ('refund', 'returned', 'winnings', 'settle')"
    ") AS moved GROUP BY account, kind"
).bindparams(bindparam("accounts", expanding=True))
"""The committed usage of several players in one gaming day, per account and kind: a wager or
tip from the player, the rest to him (each side served by its ``(account, at_us)`` index)."""


def usage_of(rows: Iterable[Sequence[Any]]) -> Usage:
    """The :class:`Usage` of one player's rows of :data:`DAY_USAGE`."""
    used = Usage()
    for _, kind, total, first in rows:
        used.add(str(kind), int(total), int(first))
    return used


def refusal(
    limits: Limits, used: Usage, *, wagered: int, tipped: int, at_us: int
) -> tuple[str, str] | None:
    """``(code, sentence)`` when a step wagering ``wagered`` and tipping ``tipped`` cents at
    ``at_us`` is refused, the day's usage before it being ``used``; None when it passes."""
    account = limits.account
    until = limits.excluded_until_us
    if until is not None and at_us < until:
        return "excluded", f"{account} has excluded himself from wagering."
    if wagered and limits.wager_limit is not None and used.wagered + wagered > limits.wager_limit:
        return (
            "limit",
            f"The wager would bring today's wagers to {format_cents(used.wagered + wagered)}, "
            f"above the wager limit of {format_cents(limits.wager_limit)}.",
        )
    if limits.loss_limit is not None and used.loss + wagered + tipped > limits.loss_limit:
        what = "this wager" if wagered else "this tip"
        return (
            "limit",
            f"Today's losses of {format_cents(max(used.loss, 0))} and {what} could pass the "
            f"loss limit of {format_cents(limits.loss_limit)}.",
        )
    first = used.first_wager_us
    if (
        limits.time_limit_s is not None
        and first is not None
        and at_us - first >= limits.time_limit_s * 1_000_000
    ):
        return "limit", f"The time limit of {limits.time_limit_s} seconds of play is reached."
    return None


_LIMITS = (
    "SELECT account, loss_limit, wager_limit, time_limit_s, excluded_until_us, "
    "(SELECT value FROM floor_settings WHERE key = 'gaming_day_start_hour') "
    "FROM player_limits WHERE account IN :accounts ORDER BY account"
)
LOCK_LIMITS = {
    dialect: text(_LIMITS + suffix).bindparams(bindparam("accounts", expanding=True))
    for dialect, suffix in (("postgresql", " FOR UPDATE"), ("sqlite", ""))
}
"""The limits rows of the players a batch debits, locked (PostgreSQL; SQLite has one writer),
with the hour the gaming day starts (a JSON value; none stored: the default)."""


def check_batch(
    connection: Connection, steps: Sequence[tuple[int, Sequence[Posting]]]
) -> tuple[int, str, str] | None:
    """The first step of ``steps`` (each ``(at_us, postings)``, in the order they are written)
    a player protection refuses, as ``(index, code, sentence)``; None when every step passes.
    Inside the caller's transaction, after the balances' update: it locks the limits rows of
    the players it checks (see the module)."""
    debited = sorted(
        {p.from_account for _, postings in steps for p in postings if p.kind in LIMITED_KINDS}
    )
    if not debited:
        return None
    rows = connection.execute(LOCK_LIMITS[connection.dialect.name], {"accounts": debited}).all()
    if not rows:
        return None
    protected = {
        str(row[0]): Limits(
            str(row[0]), *(None if value is None else int(value) for value in row[1:5])
        )
        for row in rows
    }
    setting = rows[0][5]
    hour = DEFAULT_START_HOUR if setting is None else int(json.loads(setting))
    days: dict[tuple[str, int], Usage] = {}

    def usage(account: str, at_us: int) -> Usage:
        start = day_start(at_us, hour)
        if (account, start) not in days:  # the day's usage of every protected player at once
            for player in protected:
                days[(player, start)] = Usage()
            rows = connection.execute(
                DAY_USAGE, {"accounts": sorted(protected), "start": start, "until": start + DAY_US}
            )
            for player, kind, total, first in rows:
                days[(str(player), start)].add(str(kind), int(total), int(first))
        return days[(account, start)]

    for index, (at_us, postings) in enumerate(steps):
        mine: dict[str, list[Posting]] = {}
        for posting in postings:
            for account in (posting.from_account, posting.to_account):
                if account in protected:
                    mine.setdefault(account, []).append(posting)
        for account, moves in sorted(mine.items()):
            used = usage(account, at_us)
            wagered = sum(
                p.amount for p in moves if p.kind == "wager" and p.from_account == account
            )
            tipped = sum(p.amount for p in moves if p.kind == "tip" and p.from_account == account)
            if wagered or tipped:
                refused = refusal(
                    protected[account], used, wagered=wagered, tipped=tipped, at_us=at_us
                )
                if refused is not None:
                    return (index, *refused)
            for posting in moves:
                used.add(posting.kind, posting.amount, at_us)
    return None
