"""The licence count of PA 605a.9(b): every five EWTs on the floor count as one table.

:func:`licence` is the view ``GET /api/floor/license`` answers
(:mod:`tablejack.server.http.terminals`); :func:`license_count` the count itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["EWTS_PER_TABLE", "LICENSE_RULE", "licence", "license_count"]

LICENSE_RULE = "PA 605a.9(b)"
EWTS_PER_TABLE = 5


def license_count(active_terminals: int, rounding: str = "up") -> int:
    """The tables the floor counts as under § 605a.9(b): every five EWTs are one table; a
    partial group of five counts as a table (``up``, the default) or not (``down``).

    >>> [license_count(n) for n in (0, 1, 5, 6, 10, 11)]
    [0, 1, 1, 2, 2, 3]
    >>> license_count(9, "down")
    1
    """
    if rounding == "down":
        return active_terminals // EWTS_PER_TABLE
    return math.ceil(active_terminals / EWTS_PER_TABLE)


def licence(terminals: Sequence[Mapping[str, Any]], rounding: str) -> dict[str, Any]:
    """The licence count of the registered ``terminals`` (their rows: ``table_id``,
    ``status``) under the floor's ``rounding``: the active ones, per table, and the tables
    they count as.

    >>> rows = [{"id": f"t{n}", "table_id": "A1", "status": "active"} for n in range(6)]
    >>> found = licence(rows, "up")
    >>> found["active_terminals"], found["counted_tables"], found["terminals_per_table"]
    (6, 2, {'A1': 6})
    """
    active = [r for r in terminals if r["status"] == "active"]
    per_table: dict[str, int] = {}
    for row in active:
        per_table[row["table_id"]] = per_table.get(row["table_id"], 0) + 1
    return {
        "rule": LICENSE_RULE,
        "ewts_per_table": EWTS_PER_TABLE,
        "rounding": rounding,
        "active_terminals": len(active),
        "counted_tables": license_count(len(active), rounding),
        "terminals_per_table": dict(sorted(per_table.items())),
        "terminals": list(terminals),
    }
