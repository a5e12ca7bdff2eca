"""PA Chapter 605a floor schema: vouchers, terminals, floor settings, meter snapshots, meter
clears, player limits and terminal locks (tilts).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "vouchers",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("issued_us", sa.BigInteger(), nullable=False),
        sa.Column("redeemed_us", sa.BigInteger(), nullable=True),
        sa.Column("redeemed_account", sa.String(64), nullable=True),
        sa.Column("redeemed_terminal", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_vouchers"),
    )
    op.create_index("ix_vouchers_code_hash", "vouchers", ["code_hash"], unique=True)
    op.create_table(
        "terminals",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_terminals"),
    )
    op.create_table(
        "floor_settings",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("set_by", sa.String(64), nullable=False),
        sa.Column("set_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_floor_settings"),
    )
    op.create_table(
        "meter_snapshots",
        sa.Column("gaming_day", sa.String(10), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("scope_id", sa.String(64), nullable=False),
        sa.Column("readings", sa.Text(), nullable=False),
        sa.Column("taken_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("gaming_day", "scope", "scope_id", name="pk_meter_snapshots"),
    )
    op.create_table(
        "meter_clears",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("scope_id", sa.String(64), nullable=False),
        sa.Column("by", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("ledger_id", sa.BigInteger(), nullable=False),
        sa.Column("before", sa.Text(), nullable=False),
        sa.Column("after", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_meter_clears"),
    )
    op.create_index("ix_meter_clears_scope", "meter_clears", ["scope", "scope_id"])
    op.create_table(
        "player_limits",
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("loss_limit", sa.BigInteger(), nullable=True),
        sa.Column("wager_limit", sa.BigInteger(), nullable=True),
        sa.Column("time_limit_s", sa.BigInteger(), nullable=True),
        sa.Column("excluded_until_us", sa.BigInteger(), nullable=True),
        sa.Column("changed_us", sa.BigInteger(), nullable=False),
        sa.Column("set_by", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("account", name="pk_player_limits"),
    )
    op.create_table(
        "terminal_locks",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("code", sa.String(32), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("locked_us", sa.BigInteger(), nullable=False),
        sa.Column("locked_by", sa.String(64), nullable=False),
        sa.Column("cleared_us", sa.BigInteger(), nullable=True),
        sa.Column("cleared_by", sa.String(64), nullable=True),
        sa.Column("clear_code", sa.String(32), nullable=True),
        sa.Column("clear_reason", sa.String(200), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_terminal_locks"),
    )
    op.create_index("ix_terminal_locks_terminal", "terminal_locks", ["terminal", "cleared_us"])


def downgrade() -> None:
    op.drop_index("ix_terminal_locks_terminal", "terminal_locks")
    op.drop_table("terminal_locks")
    op.drop_table("player_limits")
    op.drop_index("ix_meter_clears_scope", "meter_clears")
    op.drop_table("meter_clears")
    op.drop_table("meter_snapshots")
    op.drop_table("floor_settings")
    op.drop_table("terminals")
    op.drop_index("ix_vouchers_code_hash", "vouchers")
    op.drop_table("vouchers")
