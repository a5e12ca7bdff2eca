"""The table system's first schema: accounts, ledger, tables, rounds, events, meters, tokens,
audit.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_accounts"),
    )
    op.create_table(
        "ledger_entries",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("from_account", sa.String(64), nullable=False),
        sa.Column("to_account", sa.String(64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("round_id", sa.String(64), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("wager_id", sa.Integer(), nullable=True),
        sa.Column("memo", sa.String(200), nullable=False),
        sa.CheckConstraint("amount > 0", name="ck_ledger_entries_positive_amount"),
        sa.ForeignKeyConstraint(
            ["from_account"], ["accounts.id"], name="fk_ledger_entries_from_account_accounts"
        ),
        sa.ForeignKeyConstraint(
            ["to_account"], ["accounts.id"], name="fk_ledger_entries_to_account_accounts"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_ledger_entries"),
    )
    op.create_index("ix_ledger_entries_from_account", "ledger_entries", ["from_account"])
    op.create_index("ix_ledger_entries_to_account", "ledger_entries", ["to_account"])
    op.create_index("ix_ledger_entries_round_id", "ledger_entries", ["round_id"])
    op.create_table(
        "tables",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_tables"),
    )
    op.create_table(
        "rounds",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("opened_us", sa.BigInteger(), nullable=False),
        sa.Column("closed_us", sa.BigInteger(), nullable=True),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("head_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rounds"),
    )
    op.create_index("ix_rounds_table_id", "rounds", ["table_id", "number"])
    op.create_table(
        "events",
        sa.Column("round_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("round_id", "seq", name="pk_events"),
    )
    op.create_index("ix_events_terminal", "events", ["terminal", "round_id"])
    op.create_table(
        "meters",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("wager_kind", sa.String(32), nullable=False),
        sa.Column("drop", sa.BigInteger(), nullable=False),
        sa.Column("win", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", "wager_kind", name="pk_meters"),
    )
    op.create_table(
        "tokens",
        sa.Column("token", sa.String(128), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("subject", sa.String(64), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("token", name="pk_tokens"),
    )
    op.create_table(
        "audit",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit"),
    )
    op.create_index("ix_audit_table_id", "audit", ["table_id"])


def downgrade() -> None:
    for name in ("audit", "tokens", "meters", "events", "rounds", "tables", "ledger_entries"):
        op.drop_table(name)
    op.drop_table("accounts")
