"""The hybrid table system's server: one ASGI process serving many tables.

Terminals speak a versioned JSON protocol over WebSocket (:mod:`tablejack.server.support.protocol`);
the dealer console and the supervisor use REST (:mod:`tablejack.server.app`); each table's round
is owned by its :class:`~tablejack.server.table.Table`, which commits every step to the store
before it broadcasts. The server adapts the engine (:mod:`tablejack.server.table.games`) and never
re-implements a rule. Importing this package stays light: the web framework loads with
:mod:`tablejack.server.app`.
"""

from __future__ import annotations

__all__: list[str] = []
