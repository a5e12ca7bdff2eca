"""Floor-wide TITO: the account kind ``system`` (the floor's account with a casino management
system, ``system:<system>``) and its two movement kinds — ``host_voucher_in`` (a system's
ticket redeemed at a terminal: the system → the player) and ``host_redeemed`` (a
voucher the system validated and reports redeemed elsewhere: the vouchers account → the
system). The account invariants of ``0003_trust`` learn the new kind (a CHECK on PostgreSQL,
the triggers on SQLite), so the database itself still refuses any other.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

KINDS = sa.table(
    "movement_kinds",
    sa.column("kind", sa.String),
    sa.column("source_kind", sa.String),
    sa.column("target_kind", sa.String),
)
NEW_KINDS = [
    {"kind": "host_voucher_in", "source_kind": "system", "target_kind": "player"},
    {"kind": "host_redeemed", "source_kind": "voucher", "target_kind": "system"},
]
KNOWN = "kind IN ('player', 'cage', 'bills', 'voucher', 'escrow', 'house', 'tips'{more})"
SYSTEM_ID = "kind <> 'system' OR id LIKE 'system:%'"
ACCOUNT_CHECKS = {
    "known_kind": KNOWN.format(more=", 'system'"),
    "player_not_below_zero": "kind <> 'player' OR balance >= 0",
    "escrow_not_below_zero": "kind <> 'escrow' OR balance >= 0",
    "vouchers_not_below_zero": "kind <> 'voucher' OR balance >= 0",
    "tips_not_below_zero": "kind <> 'tips' OR balance >= 0",
    "bills_not_above_zero": "kind <> 'bills' OR balance <= 0",
    "player_id": "kind <> 'player' OR id NOT LIKE '%:%'",
    "escrow_id": "kind <> 'escrow' OR id LIKE 'escrow:%'",
    "house_id": "kind <> 'house' OR id LIKE 'house:%'",
    "tips_id": "kind <> 'tips' OR id LIKE 'tips:%'",
    "cage_id": "kind <> 'cage' OR id = 'cage'",
    "bills_id": "kind <> 'bills' OR id = 'bills'",
    "voucher_id": "kind <> 'voucher' OR id = 'vouchers'",
}
"""The account invariants of ``0003_trust`` with the kind ``system`` known (its id check is
added beside them)."""


def _sqlite_triggers(checks: dict[str, str]) -> list[str]:
    joined = re.sub(
        r"\b(kind|balance|id)\b", r"NEW.\1", " AND ".join(f"({sql})" for sql in checks.values())
    )
    out = []
    for when in ("INSERT", "UPDATE"):
        out.append(f"DROP TRIGGER IF EXISTS accounts_invariants_{when.lower()}")
        out.append(
            f"CREATE TRIGGER accounts_invariants_{when.lower()} BEFORE {when} ON accounts "
            f"WHEN NOT ({joined}) BEGIN SELECT RAISE(ABORT, "
            "'account invariant: the account kind, id or balance is not allowed'); END"
        )
    return out


def upgrade() -> None:
    op.bulk_insert(KINDS, NEW_KINDS)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE accounts DROP CONSTRAINT ck_accounts_known_kind")
        op.execute(
            f"ALTER TABLE accounts ADD CONSTRAINT ck_accounts_known_kind CHECK "
            f"({ACCOUNT_CHECKS['known_kind']})"
        )
        op.execute(f"ALTER TABLE accounts ADD CONSTRAINT ck_accounts_system_id CHECK ({SYSTEM_ID})")
    else:
        for statement in _sqlite_triggers({**ACCOUNT_CHECKS, "system_id": SYSTEM_ID}):
            op.execute(statement)


def downgrade() -> None:
    op.execute(KINDS.delete().where(KINDS.c.kind.in_([k["kind"] for k in NEW_KINDS])))
    old = {**ACCOUNT_CHECKS, "known_kind": KNOWN.format(more="")}
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE accounts DROP CONSTRAINT ck_accounts_system_id")
        op.execute("ALTER TABLE accounts DROP CONSTRAINT ck_accounts_known_kind")
        op.execute(
            f"ALTER TABLE accounts ADD CONSTRAINT ck_accounts_known_kind CHECK "
            f"({old['known_kind']})"
        )
    else:
        for statement in _sqlite_triggers(old):
            op.execute(statement)
