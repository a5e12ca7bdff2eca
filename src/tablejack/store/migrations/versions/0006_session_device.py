"""A session carries the device credential (the terminal's key generation) that proved its
terminal: ``credentials.device``.

A player's session bound to a terminal lives only while that device credential is valid and the
terminal is active; replacing the terminal's key or retiring it ends the session. A session
opened before this migration names no device credential, so it is no longer accepted: its player
signs in again at the terminal (a session lives 12 hours at most anyway).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("credentials", sa.Column("device", sa.String(24), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("credentials") as batch:
        batch.drop_column("device")
