"""The table room: one table's runtime — its round, its clock, its card input, its write path
and its broadcast (docs/architecture.md, "The server's rooms").

A :class:`Table` imports nothing of the floor or the API: the floor that runs it and its
collaborators (its tilts, its shoe's card inventory) are handed to it as the small interfaces of
:mod:`~tablejack.server.table.collaborators`. The modules:

* :mod:`~tablejack.server.table.table` — :class:`Table`: start and recovery, the procedure
  log, opening a round, the terminals' wagers and decisions; each other concern an object it
  owns:
* :mod:`~tablejack.server.table.steps` — the write path (a step applied, committed, adopted);
  :mod:`~tablejack.server.table.batches` — the terminals' requests in batches;
  :mod:`~tablejack.server.table.requests` — the answers kept for repeated requests;
* :mod:`~tablejack.server.table.dealer` — the console's commands, the cards read,
  irregularities and voids; :mod:`~tablejack.server.table.clock` — the countdown and the
  automated dealer;
* :mod:`~tablejack.server.table.games` — the games a table runs, behind one typed port;
* :mod:`~tablejack.server.table.views` — what a table shows, and the broadcast that sends it;
* :mod:`~tablejack.server.table.config`, :mod:`~tablejack.server.table.errors`,
  :mod:`~tablejack.server.table.procedures` — its configuration, its refusals, its gaming-day
  record;
* :mod:`~tablejack.server.table.replay` — a round rebuilt from its log;
* :mod:`~tablejack.server.table.bookkeeping` — the money a step moves, as ledger transfers;
* :mod:`~tablejack.server.table.cards` — the virtual shoe.
"""

from __future__ import annotations

from tablejack.server.table.collaborators import (
    CardInventory,
    Host,
    LockOut,
    Subscriber,
)
from tablejack.server.table.config import TableConfig
from tablejack.server.table.errors import RefusedError, WageringClosedError
from tablejack.server.table.replay import apply_command, corrections, replay_round
from tablejack.server.table.table import AUTOMATION_RULE, Table
from tablejack.server.table.views import WAGERING_RULES

__all__ = [
    "AUTOMATION_RULE",
    "WAGERING_RULES",
    "CardInventory",
    "Host",
    "LockOut",
    "RefusedError",
    "Subscriber",
    "Table",
    "TableConfig",
    "WageringClosedError",
    "apply_command",
    "corrections",
    "replay_round",
]
