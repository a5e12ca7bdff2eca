"""Streams written by many writers at once: the lock order every write transaction follows on
PostgreSQL.

A stream (a round, a table's procedure log, a floor-wide log such as ``floor-tilts``, an
account log) is one ``rounds`` row — its head: the last sequence number and hash — and its
``events``. A writer reads the head, chains its events to it, inserts them and moves the head.
When two transactions did that from the same head, both inserted the same ``(round_id, seq)``:
the second failed on ``pk_events`` (a tilt lost), or — when one had locked the head row with
``SELECT … FOR UPDATE`` while the other, trusting its cached head, had already inserted the
event — each waited for the other (``deadlock detected``: the head's update against the event
insert).

So on PostgreSQL a write transaction **locks the head rows of every stream it appends to
first**, all in one statement in the order of their ids (:func:`lock_heads`), and reads the
heads it chains to from those locked rows, never from a cache. A second writer of the same
stream waits for the first to commit and then reads the head the first one left: the sequence
numbers follow each other and the hash chain stays one chain. After the heads come the
accounts (their balance updates, in the order of their ids), the ledger rows and the meters
(in the order of their keys), so any two write transactions take their row locks in the same
order and cannot wait for each other in a circle. A floor-wide log is created by the first
writer that needs it with ``INSERT … ON CONFLICT DO NOTHING`` (:func:`ensure_stream`), so two
first writers do not collide on ``pk_rounds`` either.

Because a writer chains to the head it locked, the head can no longer tell it that its own view
of a round is out of date (which a cached head did). What it can tell is a round already closed:
a step appended to a round that is ``complete`` or ``voided`` is refused with the whole
transaction (a request that slipped in while the round was being voided must not put money in
the escrow of a voided round).

SQLite has one writer at a time (the store's write lock in a process, the database's lock
between processes, and ``tablejack serve`` refuses a second process on one file): nothing
here runs there.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.models import ROUNDS

__all__ = ["CLOSED", "ensure_stream", "lock_heads"]

_GENESIS = "0" * 64


CLOSED = ("complete", "voided")
"""The statuses of a round whose log takes no more events."""


def lock_heads(
    connection: Connection, stream_ids: Iterable[str]
) -> tuple[dict[str, tuple[int, str]], set[str]]:
    """Lock the head rows of ``stream_ids`` (those that exist) in the order of their ids, and
    return each one's ``(last_seq, head_hash)`` as the lock found it, and the streams among
    them that are closed (a round complete or voided: its log takes no more events)
    (PostgreSQL)."""
    wanted = sorted(set(stream_ids))
    if not wanted:
        return {}, set()
    rows = connection.execute(
        select(ROUNDS.c.id, ROUNDS.c.last_seq, ROUNDS.c.head_hash, ROUNDS.c.status)
        .where(ROUNDS.c.id.in_(wanted))
        .order_by(ROUNDS.c.id)
        .with_for_update()
    ).all()
    heads = {str(row[0]): (int(row[1]), str(row[2])) for row in rows}
    return heads, {str(row[0]) for row in rows if row[3] in CLOSED}


async def ensure_stream(
    connection: AsyncConnection, stream_id: str, owner: str, kind: str, at_us: int
) -> None:
    """Create a floor-wide log's head row unless it exists (PostgreSQL: ``INSERT … ON
    CONFLICT DO NOTHING``, which waits for a first writer still creating it)."""
    await connection.execute(
        postgresql.insert(ROUNDS)
        .values(
            id=stream_id,
            table_id=owner,
            number=0,
            kind=kind,
            game="",
            status="open",
            opened_us=at_us,
            last_seq=0,
            head_hash=_GENESIS,
        )
        .on_conflict_do_nothing(index_elements=[ROUNDS.c.id])
    )
