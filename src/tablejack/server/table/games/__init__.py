"""The games a table runs, each behind the one port :class:`~.base.TableGame`: the server adapts
the engine and never re-implements a rule (docs/architecture.md, "A new side wager").

* :mod:`~.base` — :class:`~.base.TableGame`, what a table needs of its game, and the defaults
  the adapters share; :mod:`~.seats` — the games with one player per seat;
* :mod:`~.classic`, :mod:`~.multi_action`, :mod:`~.hybrid`, :mod:`~.hybrid_shared` — one
  adapter per game of :data:`tablejack.games.GAMES`;
* :mod:`~.views` — a hand, the dealer's totals and a player's wagers as a terminal shows them;
* :mod:`~.paytables` — the rules icon and every paytable a table offers, as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablejack.core.errors import IllegalActionError
from tablejack.games import GAMES
from tablejack.server.table.games.base import TableGame
from tablejack.server.table.games.classic import ClassicAdapter
from tablejack.server.table.games.hybrid import HybridAdapter
from tablejack.server.table.games.hybrid_shared import HybridSharedAdapter
from tablejack.server.table.games.multi_action import MultiActionAdapter
from tablejack.server.table.games.paytables import PAYTABLE_LINES, paytables, rules_icon

__all__ = [
    "ADAPTERS",
    "PAYTABLE_LINES",
    "TableGame",
    "adapter_for",
    "paytables",
    "rules_icon",
]

_PORTS: dict[str, TableGame[Any]] = {
    port.game: port
    for port in (ClassicAdapter(), MultiActionAdapter(), HybridAdapter(), HybridSharedAdapter())
}

ADAPTERS: Mapping[str, TableGame[Any]] = {
    game_id: _PORTS[game_id] for game_id in GAMES if game_id in _PORTS
}
"""The adapter of each game of :data:`tablejack.games.GAMES`, in its order (an adapter holds no
state: one serves every table of its game)."""


def adapter_for(game_id: str) -> TableGame[Any]:
    """The adapter of a game id (the server runs the games it has an adapter for)."""
    adapter = ADAPTERS.get(game_id)
    if adapter is None:
        raise IllegalActionError(
            f"The table server has no terminal adapter for the game {game_id!r}; it runs "
            f"{', '.join(sorted(ADAPTERS))}.",
            rule="PA 633c.5(a)",
        )
    return adapter
