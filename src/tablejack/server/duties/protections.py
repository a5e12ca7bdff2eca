"""The server's guard for player protections and terminal lock-out, called before a
terminal's wager or decision reaches its table.

The guard costs nothing for a player with no limit on an unlocked terminal: the players with
limits and the locked terminals are cached per floor and reloaded from the store every
:data:`RELOAD_SECONDS` (a change made through this process applies at once, one made by another
process sharing the database within that time and the reload's reads). A refusal is a
:class:`~tablejack.server.table.RefusedError`: the socket gets an ``error`` frame naming the
rule, the audit log records it, and nothing else changes.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from typing import Any

from tablejack.server.floor.floor import Floor
from tablejack.server.table import RefusedError, Table
from tablejack.store import protections
from tablejack.store.meters_report import day_bounds, gaming_day_of
from tablejack.store.vouchers import FloorRefusedError, floor_settings

__all__ = ["RELOAD_SECONDS", "drain", "guard", "invalidate", "wager_at_stake"]

RELOAD_SECONDS = 5.0
MONEY_VERBS = ("double", "split", "insurance", "ez-bust")


@dataclass
class _Cache:
    loaded_at: float = float("-inf")
    protected: set[str] = field(default_factory=set)
    locked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    start_hour: int = 6


_CACHES: weakref.WeakKeyDictionary[Floor, _Cache] = weakref.WeakKeyDictionary()


def invalidate(floor: Floor) -> None:
    """Reload the cache at the next guard (after a change made through this process); a reload
    already under way may not store what it read before the change."""
    _CACHES.pop(floor, None)
    _RELOADS.pop(floor, None)


_RELOADS: weakref.WeakKeyDictionary[Floor, asyncio.Task[_Cache]] = weakref.WeakKeyDictionary()


async def _cache(floor: Floor) -> _Cache:
    """The floor's cache. After :func:`invalidate` (a change made through this process) every
    request waits for the reload; when the cache has only grown old (for changes another
    process made), requests keep using it while one reload runs in the background — a burst
    of wagers at that moment would otherwise all wait for the store's reads. Single flight:
    one reload at a time, shared by whoever waits for it."""
    cache = _CACHES.get(floor)
    if cache is not None and floor.clock() - cache.loaded_at <= RELOAD_SECONDS:
        return cache
    reload = _RELOADS.get(floor)
    if reload is None or reload.done():
        reload = asyncio.ensure_future(_load(floor))
        _RELOADS[floor] = reload
    if cache is not None:
        return cache
    return await asyncio.shield(reload)


async def drain(floor: Floor) -> None:
    """Let a reload under way finish (at shutdown, before the store closes)."""
    reload = _RELOADS.get(floor)
    if reload is not None and not reload.done():
        await asyncio.wait([reload], timeout=5)


async def _load(floor: Floor) -> _Cache:
    current = asyncio.current_task()
    cache = _Cache(
        floor.clock(),
        await protections.protected_accounts(floor.store),
        await protections.open_locks(floor.store),
        int((await floor_settings(floor.store))["gaming_day_start_hour"]),
    )
    if _RELOADS.get(floor) is current:  # not invalidated while it was reading
        _CACHES[floor] = cache
    return cache


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


async def guard(
    floor: Floor, player: str, terminal: str, table: Table, amount: int, *, wager: bool
) -> None:
    """Refuse a wager (or a decision adding ``amount``) from a locked terminal, an excluded
    player or one past a limit."""
    cache = await _cache(floor)
    tilts = cache.locked.get(terminal)
    if tilts:
        codes = ", ".join(t["code"] for t in tilts)
        raise RefusedError(
            "tilt",
            f"Terminal {terminal} is locked ({codes}); a supervisor must clear it.",
            protections.TILT_RULE,
        )
    if player not in cache.protected or (amount <= 0 and not wager):
        return
    now = floor.now_us()
    day = day_bounds(gaming_day_of(now, cache.start_hour), cache.start_hour)
    try:
        await protections.check_wager(floor.store, player, amount, at_us=now, day=day)
    except FloorRefusedError as refusal:
        raise RefusedError(refusal.code, refusal.message, refusal.rule) from None
