"""The server's guard for player protections and terminal lock-out, called before a
terminal's wager or decision reaches its table, and before a bill, a voucher or a cash-out
moves money at a terminal.

One table, :data:`LOCK_ALLOWS`, says what a terminal under each lock still does: nothing but a
cash-out (a player may leave with his credit) while its host disabled it or its host link is
lost, or a table-side fault holds it; nothing at all while its door is open, its bill validator
or printer is at fault, a hand pay is pending, or an unknown lock holds it. A wager is never
allowed under a lock. :meth:`Protections.check` applies it to wagers and money alike.

The guard costs nothing for a player with no limit on an unlocked terminal: the players with
limits and the locked terminals are cached by the floor's :class:`Protections` (the composition
root makes one per floor, :mod:`tablejack.server.compose`) and reloaded from the store every
:data:`RELOAD_SECONDS` (a change made through this process applies at once, one made by another
process sharing the database within that time and the reload's reads). A refusal is a
:class:`~tablejack.server.table.RefusedError`: the socket gets an ``error`` frame naming the
rule, the audit log records it, and nothing else changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tablejack.server.floor.floor import Floor
from tablejack.server.table import RefusedError, Table
from tablejack.store import protections
from tablejack.store.meters_report import day_bounds, gaming_day_of
from tablejack.store.vouchers import FloorRefusedError, floor_settings

__all__ = [
    "ACTIONS",
    "LOCK_ALLOWS",
    "RELOAD_SECONDS",
    "GuardCache",
    "Protections",
    "allowed_under",
    "lock_refusal",
    "wager_at_stake",
]

RELOAD_SECONDS = 5.0
MONEY_VERBS = ("double", "split", "insurance", "ez-bust")
ACTIONS = ("wager", "bill_in", "voucher_in", "cash_out")
"""What a terminal does that a lock may stop: a wager (or a decision adding money), a bill or a
voucher inserted, a cash-out."""
NOTHING: frozenset[str] = frozenset()
LEAVE: frozenset[str] = frozenset({"cash_out"})
LOCK_ALLOWS: dict[str, frozenset[str]] = {
    "door_open": NOTHING,
    "bill_validator": NOTHING,
    "printer": NOTHING,
    "connection_lost": LEAVE,
    "reader_fault": LEAVE,
    "card_not_requested": LEAVE,
    "card_inventory": LEAVE,
    "storage_error": NOTHING,
    "other": NOTHING,
    "host_disabled": LEAVE,
    "host_link_lost": LEAVE,
    "handpay_pending": NOTHING,
}
"""What a terminal locked with each tilt code still does (PA 605a lock-out). A lock not named
here allows nothing; several locks allow only what each allows."""
WORDS = {
    "wager": "wager",
    "bill_in": "bill accepted",
    "voucher_in": "voucher accepted",
    "cash_out": "cash-out",
}


def allowed_under(codes: Iterable[str], action: str) -> bool:
    """True when a terminal under the locks ``codes`` may still do ``action``."""
    return all(action in LOCK_ALLOWS.get(code, NOTHING) for code in codes)


def lock_refusal(terminal: str, tilts: list[dict[str, Any]], action: str) -> RefusedError | None:
    """The refusal of ``action`` at ``terminal`` under its open ``tilts`` (None: allowed),
    naming the locks and the rule."""
    codes = [str(t["code"]) for t in tilts]
    if not codes or allowed_under(codes, action):
        return None
    listed = ", ".join(codes)
    if action == "wager":
        message = f"Terminal {terminal} is locked ({listed}); a supervisor must clear it."
    else:
        leave = " A cash-out is still allowed." if allowed_under(codes, "cash_out") else ""
        message = (
            f"Terminal {terminal} is locked ({listed}): no {WORDS[action]} until a supervisor "
            f"clears it; nothing was moved.{leave}"
        )
    return RefusedError("tilt", message, protections.TILT_RULE)


@dataclass
class GuardCache:
    """What the guard knows of the store: when it read it, the players with a limit or an
    exclusion, the terminals locked and their tilts, the gaming day's start hour."""

    loaded_at: float = float("-inf")
    protected: set[str] = field(default_factory=set)
    locked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    start_hour: int = 6


async def load_cache(floor: Floor) -> GuardCache:
    """The guard's cache as the store holds it now."""
    return GuardCache(
        floor.clock(),
        await protections.protected_accounts(floor.store),
        await protections.open_locks(floor.store),
        int((await floor_settings(floor.store))["gaming_day_start_hour"]),
    )


class Protections:
    """The guard of one floor and its cache (``load``: how the cache is read; the store by
    default)."""

    def __init__(
        self, floor: Floor, load: Callable[[Floor], Awaitable[GuardCache]] = load_cache
    ) -> None:
        self.floor = floor
        self._load = load
        self._cache: GuardCache | None = None
        self._reload: asyncio.Task[GuardCache] | None = None

    def invalidate(self) -> None:
        """Reload the cache at the next guard (after a change made through this process); a
        reload already under way may not store what it read before the change."""
        self._cache = None
        self._reload = None

    async def cache(self) -> GuardCache:
        """The floor's cache. After :meth:`invalidate` (a change made through this process)
        every request waits for the reload; when the cache has only grown old (for changes
        another process made), requests keep using it while one reload runs in the background
        — a burst of wagers at that moment would otherwise all wait for the store's reads.
        Single flight: one reload at a time, shared by whoever waits for it."""
        cache = self._cache
        if cache is not None and self.floor.clock() - cache.loaded_at <= RELOAD_SECONDS:
            return cache
        reload = self._reload
        if reload is None or reload.done():
            reload = asyncio.ensure_future(self._reloaded())
            self._reload = reload
        if cache is not None:
            return cache
        return await asyncio.shield(reload)

    async def _reloaded(self) -> GuardCache:
        current = asyncio.current_task()
        cache = await self._load(self.floor)
        if self._reload is current:  # not invalidated while it was reading
            self._cache = cache
        return cache

    async def drain(self) -> None:
        """Let a reload under way finish (at shutdown, before the store closes)."""
        reload = self._reload
        if reload is not None and not reload.done():
            await asyncio.wait([reload], timeout=5)

    async def check(self, terminal: str, action: str) -> None:
        """Refuse ``action`` (:data:`ACTIONS`) at ``terminal`` when a lock forbids it
        (:data:`LOCK_ALLOWS`). Money reads the locks from the store at once: a lock set by
        another process of the floor (its SAS link, a supervisor there) holds from its
        commit."""
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}")
        if action == "wager":
            tilts = (await self.cache()).locked.get(terminal) or []
        else:
            tilts = (await protections.open_locks(self.floor.store)).get(terminal) or []
        refusal = lock_refusal(terminal, tilts, action)
        if refusal is not None:
            raise refusal

    async def guard(
        self, player: str, terminal: str, table: Table, amount: int, *, wager: bool
    ) -> None:
        """Refuse a wager (or a decision adding ``amount``) from a locked terminal, an
        excluded player or one past a limit."""
        await self.check(terminal, "wager")
        cache = await self.cache()
        if player not in cache.protected or (amount <= 0 and not wager):
            return
        floor = self.floor
        now = floor.now_us()
        day = day_bounds(gaming_day_of(now, cache.start_hour), cache.start_hour)
        try:
            await protections.check_wager(floor.store, player, amount, at_us=now, day=day)
        except FloorRefusedError as refusal:
            raise RefusedError(refusal.code, refusal.message, refusal.rule) from None


def wager_at_stake(table: Table, player: str, verb: str, amount: int | None) -> int:
    """The money a decision may add: a double or split up to the player's Blackjack wager,
    insurance half of it, an EZ Bust wager its amount; other decisions nothing."""
    if verb not in MONEY_VERBS:
        return 0
    if amount is not None:
        return amount
    wagers = [] if table.round is None else table.round.wagers
    base = max(
        (w.amount for w in wagers if w.player == player and w.kind.value == "blackjack"), default=0
    )
    return base // 2 if verb == "insurance" else base
