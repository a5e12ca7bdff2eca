"""The composition root of a floor: the one place that wires the table runtime to the floor's
Chapter 605a duties.

The rooms of the server depend one way (docs/architecture.md, "The server's rooms"): the table runtime
(:mod:`tablejack.server.table`) knows none of the others; the floor
(:mod:`tablejack.server.floor.floor`) runs tables and knows none of its duties; the duties — tilts
(:mod:`~tablejack.server.duties.tilts`), the card inventory (:mod:`~tablejack.server.duties.inventory`), the
protections — work on the floor and its tables; the HTTP and WebSocket API
(:mod:`~tablejack.server.app` and its routers) sits on top. :func:`make_floor` hands the floor the
duties' factories, which a table is then handed through its small interfaces
(:class:`~tablejack.server.table.LockOut`, :class:`~tablejack.server.table.CardInventory`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tablejack.server.duties.inventory import ShoeCount
from tablejack.server.duties.tilts import TableTilts
from tablejack.server.floor.floor import Floor
from tablejack.store import Store

__all__ = ["make_floor"]


def make_floor(
    store: Store,
    *,
    clock: Callable[[], float] = time.time,
    broadcast_interval: float = 0.0,
    step_window: float = 0.0,
    step_wait: float = 0.0,
) -> Floor:
    """A floor on ``store`` whose tables are locked by the floor's tilts and whose shoes are
    counted by its card inventory (PA 605a)."""
    return Floor(
        store,
        lockout=TableTilts,
        card_inventory=ShoeCount,
        clock=clock,
        broadcast_interval=broadcast_interval,
        step_window=step_window,
        step_wait=step_wait,
    )
