"""The cage's dual control and drawers: ``cage_requests`` (the approval queue) and
``cage_drawers`` (a cashier's float, count and variance), :mod:`tablejack.store.cage_models`.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "cage_requests",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("detail", sa.String(32), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("requested_by", sa.String(64), nullable=False),
        sa.Column("requested_role", sa.String(16), nullable=False),
        sa.Column("requested_us", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(64), nullable=True),
        sa.Column("decided_us", sa.BigInteger(), nullable=True),
        sa.Column("decision_reason", sa.String(200), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_cage_requests"),
    )
    op.create_index("ix_cage_requests_status", "cage_requests", ["status", "requested_us"])
    op.create_table(
        "cage_drawers",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("cashier", sa.String(64), nullable=False),
        sa.Column("opening", sa.BigInteger(), nullable=False),
        sa.Column("opened_us", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("closed_us", sa.BigInteger(), nullable=True),
        sa.Column("counted", sa.BigInteger(), nullable=True),
        sa.Column("expected", sa.BigInteger(), nullable=True),
        sa.Column("variance", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_cage_drawers"),
    )
    op.create_index(
        "ix_cage_drawers_open",
        "cage_drawers",
        ["cashier"],
        unique=True,
        sqlite_where=sa.text("status = 'open'"),
        postgresql_where=sa.text("status = 'open'"),
    )


def downgrade() -> None:
    op.drop_index("ix_cage_drawers_open", table_name="cage_drawers")
    op.drop_table("cage_drawers")
    op.drop_index("ix_cage_requests_status", table_name="cage_requests")
    op.drop_table("cage_requests")
