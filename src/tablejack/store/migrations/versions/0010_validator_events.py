"""A terminal's bill validator proves its events: the controller's Ed25519 public key
(``validator_keys``, bound to the terminal's device credential) and every bill or voucher it
reported, once per event id (``validator_events``: a repeat is answered with the first result
and moves nothing).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "validator_keys",
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("public_key", sa.String(64), nullable=False),
        sa.Column("device", sa.String(32), nullable=False),
        sa.Column("registered_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("terminal", "public_key", name="pk_validator_keys"),
    )
    op.create_table(
        "validator_events",
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("value", sa.String(64), nullable=False),
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("terminal", "event", name="pk_validator_events"),
    )
    op.create_index("ix_validator_events_at", "validator_events", ["terminal", "at_us"])


def downgrade() -> None:
    op.drop_index("ix_validator_events_at", "validator_events")
    op.drop_table("validator_events")
    op.drop_table("validator_keys")
