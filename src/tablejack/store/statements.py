"""The play write path's statements: each kind of row a batch writes in one statement on the
transaction's own DBAPI connection (:class:`Bulk`), and the call of PostgreSQL's one-statement
batch (:data:`WRITE_BATCH`, migration 0005).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from tablejack.store.chain import GENESIS
from tablejack.store.plan import as_columns

__all__ = ["WRITE_BATCH", "Bulk"]

WRITE_BATCH = "SELECT tablejack_write_batch(" + ", ".join(f"${n}" for n in range(1, 45)) + ")"
"""The call of migration 0005's function: 44 arguments, the arrays of
:meth:`tablejack.store.write.Writer._write_batch_at_once`."""

_ROUND_COLUMNS = "id, table_id, number, kind, game, opened_us, status, last_seq, head_hash"
_EVENT_COLUMNS = "round_id, seq, at_us, kind, actor, terminal, payload, prev_hash, hash"
_LEDGER_COLUMNS = "at_us, from_account, to_account, amount, kind, round_id, seq, wager_id, memo"


class Bulk:
    """The play write path's rows, each kind in one statement on the transaction's own DBAPI
    connection (no statement compiled per step): on PostgreSQL one ``unnest`` of arrays per
    table (one round trip however many rows), on SQLite ``executemany`` of a plain insert.
    A driver error is raised as SQLAlchemy's (:class:`IntegrityError` for a duplicate key or a
    trigger's refusal), as the statements through the engine raised it."""

    def __init__(self, connection: Connection) -> None:
        self.dialect = connection.dialect
        self.postgresql = self.dialect.name == "postgresql"
        self.cursor = connection.connection.cursor()

    def run(self, sql: str, params: Sequence[Any], *, many: bool = False) -> Any:
        try:
            if many:
                self.cursor.executemany(sql, params)
            else:
                self.cursor.execute(sql, params)
        except self.dialect.loaded_dbapi.Error as error:
            raise DBAPIError.instance(sql, params, error, self.dialect.loaded_dbapi.Error) from None
        return self.cursor

    def insert_rounds(self, rows: Sequence[tuple[str, str, int, str, str, int]]) -> None:
        """New rounds, open at the genesis head: ``(id, table, number, kind, game, opened_us)``."""
        if not rows:
            return
        if self.postgresql:
            self.run(
                f"INSERT INTO rounds ({_ROUND_COLUMNS}) SELECT r.*, 'open', 0, $7 FROM unnest("
                "$1::varchar[], $2::varchar[], $3::int[], $4::varchar[], $5::varchar[], "
                "$6::bigint[]) AS r",
                [*as_columns(rows, 6), GENESIS],
            )
        else:
            self.run(
                f"INSERT INTO rounds ({_ROUND_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 'open', 0, ?)",
                [(*row, GENESIS) for row in rows],
                many=True,
            )

    def insert_events(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.postgresql:
            self.run(
                f"INSERT INTO events ({_EVENT_COLUMNS}) SELECT * FROM unnest($1::varchar[], "
                "$2::int[], $3::bigint[], $4::varchar[], $5::varchar[], $6::varchar[], "
                "$7::text[], $8::varchar[], $9::varchar[])",
                [list(column) for column in zip(*rows, strict=True)],
            )
        else:
            self.run(
                f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
                many=True,
            )

    def insert_ledger(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.postgresql:
            self.run(
                f"INSERT INTO ledger_entries ({_LEDGER_COLUMNS}) SELECT * FROM unnest("
                "$1::bigint[], $2::varchar[], $3::varchar[], $4::bigint[], $5::varchar[], "
                "$6::varchar[], $7::int[], $8::int[], $9::varchar[])",
                [list(column) for column in zip(*rows, strict=True)],
            )
        else:
            self.run(
                f"INSERT INTO ledger_entries ({_LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
                many=True,
            )

    def move_heads(self, moves: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """Move each round's head from the sequence number it expects; the rounds whose head
        had moved on (none moved for them)."""
        if not moves:
            return []
        if self.postgresql:
            cursor = self.run(
                "UPDATE rounds AS r SET last_seq = m.seq, head_hash = m.head, "
                "status = COALESCE(m.status, r.status), "
                "closed_us = COALESCE(m.closed, r.closed_us) "
                "FROM unnest($1::varchar[], $2::int[], $3::int[], $4::varchar[], "
                "$5::varchar[], $6::bigint[]) AS m(id, expected, seq, head, status, closed) "
                "WHERE r.id = m.id AND r.last_seq = m.expected RETURNING r.id",
                [
                    list(moves),
                    [m["b_expected"] for m in moves.values()],
                    [m["b_seq"] for m in moves.values()],
                    [m["b_head"] for m in moves.values()],
                    [m.get("b_status") for m in moves.values()],
                    [m.get("b_closed") for m in moves.values()],
                ],
            )
            moved = {str(row[0]) for row in cursor.fetchall()}
            return [round_id for round_id in moves if round_id not in moved]
        stale = []
        for round_id, move in moves.items():
            cursor = self.run(
                "UPDATE rounds SET last_seq = ?, head_hash = ?, status = COALESCE(?, status), "
                "closed_us = COALESCE(?, closed_us) WHERE id = ? AND last_seq = ?",
                (
                    move["b_seq"],
                    move["b_head"],
                    move.get("b_status"),
                    move.get("b_closed"),
                    round_id,
                    move["b_expected"],
                ),
            )
            if cursor.rowcount != 1:
                stale.append(round_id)
        return stale

    def bump_meters(self, totals: Sequence[tuple[str, str, int, int]]) -> None:
        """Add to each ``(table, wager kind)`` meter, in the order given (of their keys)."""
        if not totals:
            return
        conflict = (
            'ON CONFLICT (table_id, wager_kind) DO UPDATE SET "drop" = meters."drop" + '
            'excluded."drop", win = meters.win + excluded.win'
        )
        if self.postgresql:
            self.run(
                'INSERT INTO meters (table_id, wager_kind, "drop", win) SELECT * FROM unnest('
                f"$1::varchar[], $2::varchar[], $3::bigint[], $4::bigint[]) {conflict}",
                [list(column) for column in zip(*totals, strict=True)],
            )
        else:
            self.run(
                f'INSERT INTO meters (table_id, wager_kind, "drop", win) VALUES (?, ?, ?, ?) '
                f"{conflict}",
                totals,
                many=True,
            )
