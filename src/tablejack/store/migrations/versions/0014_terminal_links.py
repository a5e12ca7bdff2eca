"""Which process of the floor holds each terminal's link to the casino's systems (a SAS line):
``terminal_links``, so that a money route of a linked terminal that reaches another process is
forwarded to the link's, never paid past the host (PA 605a.5(a)).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "terminal_links",
        sa.Column("terminal", sa.String(64), nullable=False),
        sa.Column("protocol", sa.String(16), nullable=False),
        sa.Column("member", sa.String(128), nullable=False),
        sa.Column("url", sa.String(256), nullable=False),
        sa.Column("since_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("terminal", name="pk_terminal_links"),
    )


def downgrade() -> None:
    op.drop_table("terminal_links")
