"""The SQL schema of the table system (SQLAlchemy 2 declarative models).

The Alembic migration in ``tablejack/store/migrations`` creates exactly these tables; a test
compares the migrated schema with this metadata.

* ``accounts`` — players, the cage, and each table's escrow and house accounts; ``balance`` in
  integer cents. The sum of every account's balance is zero and never changes: money only moves
  between accounts, through ``ledger_entries``.
* ``ledger_entries`` — the double-entry ledger: one row moves ``amount`` (> 0, enforced by the
  database) from ``from_account`` to ``to_account``.
* ``rounds`` and ``events`` — the append-only event log of every round, primary key
  ``(round_id, seq)`` enforced by the database, each event chained to the one before by a
  SHA-256 hash (``prev_hash`` → ``hash``); ``rounds.head_hash`` and ``rounds.last_seq`` name the
  last link so a removed tail is detected too.
* ``meters`` — drop and win per table and wager kind.
* ``tables``, ``tokens``, ``audit`` — configuration, role tokens, refused requests.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Account",
    "AuditEntry",
    "Base",
    "Event",
    "LedgerEntry",
    "Meter",
    "Round",
    "TableRow",
    "Token",
]

Id = BigInteger().with_variant(Integer, "sqlite")
"""An autoincrementing 64-bit key (SQLite autoincrements INTEGER PRIMARY KEY only)."""

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base with stable constraint names (the migration uses the same names)."""

    metadata = MetaData(naming_convention=NAMING)


class Account(Base):
    """A money account: ``player``, ``cage``, ``escrow`` (one per table) or ``house`` (one per
    table). Only player accounts are kept from going below zero."""

    __tablename__ = "accounts"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(128), default="")
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_us: Mapped[int] = mapped_column(BigInteger)


class LedgerEntry(Base):
    """One movement of money between two accounts (double entry)."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount > 0", name="positive_amount"),
        Index("ix_ledger_entries_from_account", "from_account"),
        Index("ix_ledger_entries_to_account", "to_account"),
        Index("ix_ledger_entries_round_id", "round_id"),
    )
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    at_us: Mapped[int] = mapped_column(BigInteger)
    from_account: Mapped[str] = mapped_column(String(64), ForeignKey("accounts.id"))
    to_account: Mapped[str] = mapped_column(String(64), ForeignKey("accounts.id"))
    amount: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))
    round_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    wager_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    memo: Mapped[str] = mapped_column(String(200), default="")


class TableRow(Base):
    """A table on the floor: its game, rules (JSON) and configuration (JSON)."""

    __tablename__ = "tables"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    rules: Mapped[str] = mapped_column(Text)
    config: Mapped[str] = mapped_column(Text, default="{}")
    status: Mapped[str] = mapped_column(String(16), default="closed")
    created_us: Mapped[int] = mapped_column(BigInteger)


class Round(Base):
    """A round (or a table's gaming-day procedure stream): the head of its event chain."""

    __tablename__ = "rounds"
    __table_args__ = (Index("ix_rounds_table_id", "table_id", "number"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64))
    number: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16), default="round")
    game: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default="open")
    opened_us: Mapped[int] = mapped_column(BigInteger)
    closed_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    head_hash: Mapped[str] = mapped_column(String(64))


class Event(Base):
    """One event of a round's append-only log; ``(round_id, seq)`` is the primary key."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_terminal", "terminal", "round_id"),)
    round_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    at_us: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str] = mapped_column(String(64), default="")
    terminal: Mapped[str] = mapped_column(String(64), default="")
    payload: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class Meter(Base):
    """Drop (everything wagered) and win (the house's net) per table and wager kind."""

    __tablename__ = "meters"
    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    wager_kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    drop: Mapped[int] = mapped_column(BigInteger, default=0)
    win: Mapped[int] = mapped_column(BigInteger, default=0)


class Token(Base):
    """A bearer token and the role it grants: ``player`` (subject = account id), ``dealer`` or
    ``supervisor`` (subject = employee name)."""

    __tablename__ = "tokens"
    token: Mapped[str] = mapped_column(String(128), primary_key=True)
    role: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str] = mapped_column(String(64))
    created_us: Mapped[int] = mapped_column(BigInteger)


class AuditEntry(Base):
    """A refused or notable request: who, from where, what, and the rule that refused it."""

    __tablename__ = "audit"
    __table_args__ = (Index("ix_audit_table_id", "table_id"),)
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    at_us: Mapped[int] = mapped_column(BigInteger)
    table_id: Mapped[str] = mapped_column(String(64), default="")
    actor: Mapped[str] = mapped_column(String(64), default="")
    terminal: Mapped[str] = mapped_column(String(64), default="")
    kind: Mapped[str] = mapped_column(String(32))
    rule: Mapped[str] = mapped_column(String(64), default="")
    message: Mapped[str] = mapped_column(Text, default="")


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


ACCOUNTS = _table(Account)
LEDGER = _table(LedgerEntry)
TABLES = _table(TableRow)
ROUNDS = _table(Round)
EVENTS = _table(Event)
METERS = _table(Meter)
TOKENS = _table(Token)
AUDIT = _table(AuditEntry)
