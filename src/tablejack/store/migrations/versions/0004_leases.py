"""A floor of several processes: table leases, their fencing tokens and the floor's members.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "table_leases",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("holder", sa.String(128), nullable=False),
        sa.Column("url", sa.String(256), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.Column("acquired_us", sa.BigInteger(), nullable=False),
        sa.Column("renewed_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name="pk_table_leases"),
    )
    op.create_table(
        "table_fences",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name="pk_table_fences"),
    )
    op.create_table(
        "floor_members",
        sa.Column("member", sa.String(128), nullable=False),
        sa.Column("url", sa.String(256), nullable=False),
        sa.Column("started_us", sa.BigInteger(), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("member", name="pk_floor_members"),
    )


def downgrade() -> None:
    op.drop_table("floor_members")
    op.drop_table("table_fences")
    op.drop_table("table_leases")
