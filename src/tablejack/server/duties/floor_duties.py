"""The floor's PA Chapter 605a duties that keep state, as one object the composition root
(:mod:`tablejack.server.compose`) builds for each floor.

* :attr:`FloorDuties.protections` — the guard of player protections and terminal lock-out and
  its cache (:mod:`~tablejack.server.duties.protections`);
* :attr:`FloorDuties.tilts` — the terminal tilts: the ``connection_lost`` checks under way and
  the locked terminals shown at the tables; it makes each table's tilts
  (:mod:`~tablejack.server.duties.tilts`);
* :attr:`FloorDuties.features` — the terminal's features that remember (a repeat's answer,
  :mod:`~tablejack.server.duties.terminal_features`);
* :attr:`FloorDuties.meters` — the floor's running meters (PA 605a.5(d),
  :class:`~tablejack.store.meters_running.RunningMeters`): the meters a supervisor reads fold
  only the ledger rows new since the last read, not the whole ledger each time (a full read
  holds the event loop for seconds on a busy day's ledger: about 2 s at 120,000 rows,
  `meter_reads` of `benchmarks/sas.py`).

The routes reach them through the app (``app.state.duties``,
:func:`tablejack.server.http.access.duties_of`), the terminal's socket the same way, a table
through its small interfaces (:mod:`tablejack.server.table.collaborators`), and whoever locks
or unlocks a terminal — a route, the SAS link — through :meth:`Floor.locks_changed
<tablejack.server.floor.floor.Floor.locks_changed>`, which this object listens to.
"""

from __future__ import annotations

from tablejack.server.duties.protections import Protections
from tablejack.server.duties.terminal_features import TerminalFeatures
from tablejack.server.duties.tilts import TerminalTilts
from tablejack.server.floor.floor import Floor
from tablejack.store.meters_running import RunningMeters

__all__ = ["FloorDuties"]


class FloorDuties:
    """The duties of one floor, each with its own state."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.protections = Protections(floor)
        self.tilts = TerminalTilts(floor)
        self.features = TerminalFeatures(floor, self.protections)
        self.meters = RunningMeters(floor.store)
        floor.lock_listeners.append(self.locks_changed)

    async def locks_changed(self) -> None:
        """A terminal was locked or unlocked: the guard reloads the locked terminals at the
        next wager, and each table's console shows them now."""
        self.protections.invalidate()
        await self.tilts.refresh()

    async def drain(self) -> None:
        """Let the duties' work under way finish (at shutdown, before the store closes): the
        pending ``connection_lost`` checks, then a reload of the guard's cache."""
        await self.tilts.drain()
        await self.protections.drain()
