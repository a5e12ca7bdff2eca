"""Fencing tokens: a write of a table commits only while its writer's lease of the table is the
current one.

A process runs a table under a lease (:mod:`tablejack.store.leases`) whose **fencing token**
grows by one each time a process takes the table over. Every write of the table — a round's
step with its ledger postings and meters, its procedure log, its tilts, its status — carries
the :class:`Fence` of the lease it was made under (``Step.fence``), and the write transaction
itself, before it writes anything, reads the table's current token from ``table_fences`` under
a share lock (``SELECT … FOR SHARE``) and refuses the whole transaction when the tokens differ
(:class:`tablejack.store.errors.FencedError`: nothing is committed).

The share lock makes the check and the takeover exclusive: a takeover moves the token with an
``UPDATE`` of that row, which waits for every write transaction that has checked the old token
to end, and every write that starts after it reads the new token. So a process that was paused
(``SIGSTOP``), cut off from the database or simply slow past its lease can never commit a write
of a table after another process took it over and recovered it from the log — whatever its own
clock believes. The heartbeat renews the lease row, not this one, so it never waits for a write.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, select

from tablejack.store.lease_models import FENCES

__all__ = ["Fence", "stale_fences"]


@dataclass(frozen=True, slots=True, order=True)
class Fence:
    """The lease a write of a table is made under: the table and the lease's fencing token."""

    table_id: str
    token: int


def stale_fences(connection: Connection, fences: Iterable[Fence]) -> list[tuple[Fence, int | None]]:
    """Share-lock the fence rows of the tables of ``fences`` (in the order of their ids) and
    return each fence whose token is not the table's current one, with the current token (None:
    the table was never leased)."""
    wanted = sorted(set(fences))
    if not wanted:
        return []
    rows = connection.execute(
        select(FENCES.c.table_id, FENCES.c.token)
        .where(FENCES.c.table_id.in_(sorted({fence.table_id for fence in wanted})))
        .order_by(FENCES.c.table_id)
        .with_for_update(read=True)
    ).all()
    current = {str(row[0]): int(row[1]) for row in rows}
    return [
        (fence, current.get(fence.table_id))
        for fence in wanted
        if current.get(fence.table_id) != fence.token
    ]
