"""Vouchers: which system validated each (``validated_by``: NULL the floor's own validation
codes, or a host's, as ``sas:<system ID>``, for a voucher printed with system validation).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("vouchers", sa.Column("validated_by", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("vouchers") as batch:
        batch.drop_column("validated_by")
