"""The cage sells vouchers for cash: the movement kind ``voucher_sold`` (the cage → the vouchers
account) joins ``movement_kinds``, so the ledger's policy trigger allows its rows
(:data:`tablejack.store.policy.MOVEMENTS`).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

KINDS = sa.table(
    "movement_kinds",
    sa.column("kind", sa.String),
    sa.column("source_kind", sa.String),
    sa.column("target_kind", sa.String),
)


def upgrade() -> None:
    op.bulk_insert(
        KINDS, [{"kind": "voucher_sold", "source_kind": "cage", "target_kind": "voucher"}]
    )


def downgrade() -> None:
    op.execute(KINDS.delete().where(KINDS.c.kind == "voucher_sold"))
