"""Running meters: the readings of :func:`tablejack.store.meters_report.readings` and the
counts of :func:`tablejack.store.links.terminal_counts`, kept up to date by folding only the
ledger rows and the rounds that are new since the last read (PA 605a.5(d)).

A lifetime reading sums the whole ledger, so its cost grows over a gaming day; a SAS host
reads a terminal's meters every second or so. :class:`RunningMeters` keeps the folds of both
modules (:class:`~tablejack.store.meters_report.Fold`,
:class:`~tablejack.store.links.CountsFold`) and, at each :meth:`RunningMeters.read`, gives
them the rows it has not seen: the ledger rows past the last one folded, and the rounds it saw
in the ledger that have completed since. The fold is the same code as the full reading's, so
the two agree (``tests/store/test_meters_running.py``).

**Ledger rows committed out of order.** The ledger's ids are handed out when a row is
inserted, not when its transaction commits: on PostgreSQL a row with a smaller id may become
visible after a larger one was read. An id skipped over is kept as a *gap* and looked for
again at each read for :data:`GAP_SECONDS` (a gap can also be an id a rolled-back
transaction used, which never appears). On SQLite a single writer commits in id order.

**A terminal moved to another table.** The full reading credits a terminal's rows to the table
it is registered at when the reading is made; when a read finds a terminal at another table
than at the last read, the running meters fold the whole ledger again, so they never differ
from the full reading.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select

from tablejack.store.db import Store
from tablejack.store.links import MOVEMENTS, CountsFold, winners
from tablejack.store.meters_report import (
    LEDGER_COLUMNS,
    Fold,
    completed_games,
    lookups,
    tables_of_terminals,
)
from tablejack.store.models import LEDGER, ROUNDS
from tablejack.store.streams import CLOSED

__all__ = ["GAP_SECONDS", "MAX_GAP", "RunningMeters"]

GAP_SECONDS = 120.0
"""How long a ledger id skipped over is looked for again."""
MAX_GAP = 1000
"""A hole wider than this between two ids read is no commit still under way (ids handed out
and rolled back, a restored sequence): it is not looked for."""


class RunningMeters:
    """The floor's meters and a link's counts, folded incrementally from one store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.fold = Fold()
        self.counts = CountsFold()
        self.last_id = 0
        """The largest ledger id folded."""
        self.gaps: dict[int, float] = {}
        """Ledger ids below :attr:`last_id` not yet seen, and when they were first missed."""
        self.pending: set[str] = set()
        """Rounds seen in the ledger, neither complete nor voided when last looked at."""
        self.rows_folded = 0
        self.tables: dict[str, str] = {}
        """The table each terminal was registered at when last read."""
        self._lock = asyncio.Lock()

    async def read(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Fold what is new; the readings, as :func:`~tablejack.store.meters_report.readings`
        gives them."""
        async with self._lock:
            await self._catch_up()
            return self.fold.result()

    async def terminal_meters(self, terminals: list[str]) -> dict[str, dict[str, Any]]:
        """Fold what is new; each of ``terminals``' lifetime readings with its counts (what
        a SAS gaming machine reports)."""
        async with self._lock:
            await self._catch_up()
            readings = self.fold.result("terminal")["terminal"]
            counts = self.counts.result()
        return {t: {**readings.get(t, {}), **counts.get(t, {})} for t in terminals}

    def _reset(self) -> None:
        """Forget every fold: the next read folds the whole ledger again."""
        self.fold, self.counts = Fold(), CountsFold()
        self.last_id, self.gaps, self.pending = 0, {}, set()

    async def _catch_up(self) -> None:
        async with self.store.engine.connect() as connection:
            tables = await tables_of_terminals(connection)
            # a terminal registered at another table: the full reading credits all its rows to
            # the table it is at now, so the fold starts again (a move is rare; the readings
            # must not depend on when the process started)
            if any(tables.get(terminal) != table for terminal, table in self.tables.items()):
                self._reset()
            self.tables = tables
            await self._fold_new(connection)

    async def _fold_new(self, connection: Any) -> None:
        now = time.monotonic()
        self.gaps = {i: at for i, at in self.gaps.items() if now - at < GAP_SECONDS}
        columns = (LEDGER.c.id, *LEDGER_COLUMNS)
        rows = list(
            (
                await connection.execute(
                    select(*columns).where(LEDGER.c.id > self.last_id).order_by(LEDGER.c.id)
                )
            ).all()
        )
        if self.gaps:
            found = (
                await connection.execute(select(*columns).where(LEDGER.c.id.in_(sorted(self.gaps))))
            ).all()
            for row in found:
                del self.gaps[int(row[0])]
            rows = [*found, *rows]
        first = self.last_id == 0
        expected = self.last_id + 1
        for row in rows:
            row_id = int(row[0])
            if row_id > self.last_id:
                if not first and row_id - expected <= MAX_GAP:
                    for missing in range(expected, row_id):
                        self.gaps[missing] = now
                expected = row_id + 1
                self.last_id = row_id
        fresh = [tuple(row[1:]) for row in rows]
        rounds = {str(row[4]) for row in fresh if row[4] and not str(row[4]).startswith("acct:")}
        # the first read looks every round up at once, as the full reading does
        played, owners = await lookups(connection, None if first else rounds) if fresh else ({}, {})
        self.fold.ledger(fresh, played, owners, self.tables)
        self.counts.movements((r[4], r[3], r[2], 1) for r in fresh if r[3] in MOVEMENTS)
        self.rows_folded += len(fresh)
        if first and fresh:
            self.fold.games((await connection.execute(completed_games())).all())
            self.counts.games_won((await connection.execute(winners())).all(), played)
        self.pending |= rounds - self.fold.counted
        if self.pending:
            await self._rounds(connection)
        await self.counts.doors(connection)

    async def _rounds(self, connection: Any) -> None:
        """Count the pending rounds that have completed; forget those complete or voided."""
        chunks = sorted(self.pending)
        for index in range(0, len(chunks), 500):
            chunk = chunks[index : index + 500]
            statuses = dict(
                (
                    await connection.execute(
                        select(ROUNDS.c.id, ROUNDS.c.status).where(ROUNDS.c.id.in_(chunk))
                    )
                ).all()
            )
            done = [r for r in chunk if statuses.get(r) in CLOSED]
            if not done:
                continue
            games = (await connection.execute(completed_games().where(ROUNDS.c.id.in_(done)))).all()
            self.fold.games(games)
            won = (await connection.execute(winners().where(ROUNDS.c.id.in_(done)))).all()
            played, _ = await lookups(connection, done)
            self.counts.games_won(won, played)
            self.pending -= set(done)
