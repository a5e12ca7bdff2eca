"""The composition root of a floor: the one place that builds the floor, the duties it keeps
under PA Chapter 605a and its card readers, and wires them together.

The rooms of the server depend one way (docs/architecture.md, "The server's rooms"): the table
runtime (:mod:`tablejack.server.table`) knows none of the others; the floor
(:mod:`tablejack.server.floor.floor`) runs tables and knows none of its duties; the duties — the
guard of protections and lock-out, the tilts, the card inventory, the terminal's features
(:class:`~tablejack.server.duties.floor_duties.FloorDuties`) — work on the floor and its tables,
each an object with its own state; the HTTP and WebSocket API (:mod:`~tablejack.server.app` and
its routers) sits on top and reaches them through ``app.state``. :func:`compose` makes them for
one floor: a table is handed its duties through its small interfaces
(:class:`~tablejack.server.table.LockOut`, :class:`~tablejack.server.table.CardInventory`), and
the floor tells the duties of a lock changed through :meth:`Floor.locks_changed
<tablejack.server.floor.floor.Floor.locks_changed>`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tablejack.server.duties.floor_duties import FloorDuties
from tablejack.server.duties.inventory import ShoeCount
from tablejack.server.floor.floor import Floor
from tablejack.server.socket.reader import CardReaders
from tablejack.server.table import LockOut, Table
from tablejack.store import Store

__all__ = ["Composition", "compose", "make_floor"]


@dataclass(frozen=True, slots=True)
class Composition:
    """A floor and what the composition root built for it."""

    floor: Floor
    duties: FloorDuties
    readers: CardReaders


def compose(
    store: Store,
    *,
    clock: Callable[[], float] = time.time,
    broadcast_interval: float = 0.0,
    step_window: float = 0.0,
    step_wait: float = 0.0,
) -> Composition:
    """A floor on ``store`` whose tables are locked by the floor's tilts and whose shoes are
    counted by its card inventory (PA 605a), its duties and its card readers."""
    built: list[FloorDuties] = []

    def lockout(floor: Floor, table: Table) -> LockOut:
        return built[0].tilts.lockout(floor, table)  # tables start once the floor is built

    floor = Floor(
        store,
        lockout=lockout,
        card_inventory=ShoeCount,
        clock=clock,
        broadcast_interval=broadcast_interval,
        step_window=step_window,
        step_wait=step_wait,
    )
    built.append(FloorDuties(floor))
    return Composition(floor, built[0], CardReaders(floor))


def make_floor(
    store: Store,
    *,
    clock: Callable[[], float] = time.time,
    broadcast_interval: float = 0.0,
    step_window: float = 0.0,
    step_wait: float = 0.0,
) -> Floor:
    """The floor of :func:`compose` (its duties reached through its tables and
    :meth:`Floor.locks_changed <tablejack.server.floor.floor.Floor.locks_changed>`)."""
    return compose(
        store,
        clock=clock,
        broadcast_interval=broadcast_interval,
        step_window=step_window,
        step_wait=step_wait,
    ).floor
