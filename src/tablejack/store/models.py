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
* ``tables``, ``audit`` — configuration, refused requests.
* ``credentials`` — tokens (only their SHA-256), terminal credentials and sessions, each with a
  role, an expiry and a revocation (:mod:`tablejack.store.credentials`).
* ``checkpoints`` and ``checkpoint_heads`` — the signed checkpoints of the chain heads
  (:mod:`tablejack.store.checkpoints`); ``rounds.covered_seq`` is the last event of a round a
  checkpoint covers.
* ``movement_kinds`` — the money-movement policy's movement kinds and account kinds, which a
  trigger on ``ledger_entries`` checks every row against (:mod:`tablejack.store.policy`).
* ``trust_meta`` — facts about the store's own history (the last ledger row written before
  the trust migration).

The migration ``0003_trust`` adds what the database holds of the policy: the account invariants
a row can hold (CHECK constraints on PostgreSQL, triggers on SQLite, which cannot add a CHECK to
a table holding rows), the movement-kind trigger on ``ledger_entries``, and triggers that keep
``events``, ``ledger_entries`` and the checkpoints append-only.
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
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Account",
    "AuditEntry",
    "Base",
    "Checkpoint",
    "CheckpointHead",
    "Credential",
    "Event",
    "LedgerEntry",
    "Meter",
    "MovementKind",
    "Round",
    "TableRow",
    "TrustMeta",
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
    """A money account of one of the policy's kinds (:class:`tablejack.store.policy.AccountKind`):
    ``player``, ``cage``, ``bills``, ``voucher``, and per table ``escrow``, ``house`` and
    ``tips``; the database refuses a balance that breaks its kind's invariant."""

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
        Index("ix_ledger_entries_from_account_at", "from_account", "at_us"),
        Index("ix_ledger_entries_to_account_at", "to_account", "at_us"),
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
    __table_args__ = (
        Index("ix_rounds_table_id", "table_id", "number"),
        Index(
            "ix_rounds_uncovered",
            "id",
            sqlite_where=text("last_seq > covered_seq"),
            postgresql_where=text("last_seq > covered_seq"),
        ),
    )
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
    covered_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The last event a signed checkpoint covers (the checkpointer's index of what is new)."""


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


class Credential(Base):
    """A bearer credential: a person's token, a terminal's device credential, or a session
    opened with them. Only the SHA-256 of the secret is kept. ``terminal``: the terminal a
    session is bound to (or a terminal credential's own id); ``parent``: the credential a
    session was opened with (revoking it ends the session); ``device``: the terminal's device
    credential — the terminal's key generation — that proved the terminal when a player's
    session was opened there (replacing the key or retiring the terminal ends the session)."""

    __tablename__ = "credentials"
    __table_args__ = (
        Index("ix_credentials_token_hash", "token_hash", unique=True),
        Index("ix_credentials_revoked_us", "revoked_us"),
        Index("ix_credentials_subject", "role", "subject"),
    )
    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str] = mapped_column(String(64))
    terminal: Mapped[str | None] = mapped_column(String(64), nullable=True)
    parent: Mapped[str | None] = mapped_column(String(24), nullable=True)
    label: Mapped[str] = mapped_column(String(64), default="")
    created_us: Mapped[int] = mapped_column(BigInteger)
    expires_us: Mapped[int] = mapped_column(BigInteger)
    revoked_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    revoked_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    device: Mapped[str | None] = mapped_column(String(24), nullable=True)


class Checkpoint(Base):
    """A signed checkpoint of the chain heads (a signed tree head): the statement's canonical
    JSON, its Ed25519 signature (base64) and the signing key's id."""

    __tablename__ = "checkpoints"
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    at_us: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(String(24))
    statement: Mapped[str] = mapped_column(Text)
    signature: Mapped[str] = mapped_column(String(128))
    key_id: Mapped[str] = mapped_column(String(64))


class CheckpointHead(Base):
    """One chain head a checkpoint covers: a stream (round or log) at an event and its hash."""

    __tablename__ = "checkpoint_heads"
    __table_args__ = (Index("ix_checkpoint_heads_stream", "stream", "seq"),)
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    stream: Mapped[str] = mapped_column(String(64), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    hash: Mapped[str] = mapped_column(String(64))


class MovementKind(Base):
    """A movement kind of the money-movement policy and the account kinds on its two sides."""

    __tablename__ = "movement_kinds"
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    source_kind: Mapped[str] = mapped_column(String(16))
    target_kind: Mapped[str] = mapped_column(String(16))


class TrustMeta(Base):
    """One fact of the store's history (``legacy_ledger_id``: the last ledger row written
    before the trust migration, whose rows carry no posting in an event)."""

    __tablename__ = "trust_meta"
    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


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
CREDENTIALS = _table(Credential)
AUDIT = _table(AuditEntry)
CHECKPOINTS = _table(Checkpoint)
CHECKPOINT_HEADS = _table(CheckpointHead)
MOVEMENT_KINDS = _table(MovementKind)
TRUST_META = _table(TrustMeta)
