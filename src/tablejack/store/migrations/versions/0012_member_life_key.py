"""A process of a floor holds a session-level advisory lock for its whole life, its **life
lock** (:mod:`tablejack.store.leases`): ``floor_members.life_key`` is its key, so the others see
the process end — its session ends, the lock goes — and take its tables at once. NULL: a
member that holds none (judged by its leases' expiry alone).

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("floor_members") as batch:
        batch.add_column(sa.Column("life_key", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("floor_members") as batch:
        batch.drop_column("life_key")
