"""The cage voids a voucher it sold before it is used: the movement kind ``voucher_voided``
(the vouchers account → the cage) joins ``movement_kinds``, so the ledger's policy trigger
allows its rows (:data:`tablejack.store.policy.MOVEMENTS`). A voided voucher's row has the
state ``voided`` (the column holds any state; ``verify-log`` checks it against its event).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
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
        KINDS, [{"kind": "voucher_voided", "source_kind": "voucher", "target_kind": "cage"}]
    )


def downgrade() -> None:
    op.execute(KINDS.delete().where(KINDS.c.kind == "voucher_voided"))
