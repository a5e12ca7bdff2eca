"""Trust: the money-movement policy held by the database, append-only logs, signed checkpoints,
credentials with a lifetime (hashed at rest), terminals bound to a position.

* ``movement_kinds``: the policy's movement kinds with the account kind of each side; a trigger
  refuses a ledger row whose kind and account kinds are not one of them, or that moves money
  from an account to itself.
* The account invariants a row can hold: CHECK constraints on PostgreSQL; on SQLite (which can
  add a CHECK only by rebuilding a table, impossible while ledger rows refer to it) triggers on
  insert and update that refuse the same.
* ``events``, ``ledger_entries``, ``checkpoints`` and ``checkpoint_heads`` refuse UPDATE and
  DELETE (and TRUNCATE on PostgreSQL).
* ``credentials`` replaces ``tokens``: every token is kept as its SHA-256 only, with an expiry
  and a revocation.
* ``checkpoints``, ``checkpoint_heads``, ``rounds.covered_seq``; ``terminals.position``;
  ``trust_meta.legacy_ledger_id``: the last ledger row written before this migration (its
  event carries no posting).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import hashlib
import json
import re
import time

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

MOVEMENTS = [
    ("fund", "cage", "player"),
    ("bill_in", "bills", "player"),
    ("voucher_out", "player", "voucher"),
    ("voucher_in", "voucher", "player"),
    ("voucher_paid", "voucher", "cage"),
    ("jackpot", "player", "cage"),
    ("cancelled_credit", "player", "cage"),
    ("wager", "player", "escrow"),
    ("returned", "escrow", "player"),
    ("lost", "escrow", "house"),
    ("winnings", "house", "player"),
    ("refund", "escrow", "player"),
    ("tip", "player", "tips"),
]
"""A copy of :data:`tablejack.store.policy.MOVEMENTS` as this migration wrote it (a test keeps
the two equal)."""

ACCOUNT_CHECKS = {
    "known_kind": "kind IN ('player', 'cage', 'bills', 'voucher', 'escrow', 'house', 'tips')",
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
"""The account invariants a row can hold (:data:`tablejack.store.policy.INVARIANTS`)."""

APPEND_ONLY = ("events", "ledger_entries", "checkpoints", "checkpoint_heads")
MIGRATED_TOKEN_LIFETIME_US = 30 * 24 * 3600 * 1_000_000
"""A token of the old ``tokens`` table keeps working for 30 days, then must be issued anew."""

POLICY_MATCH = (
    "EXISTS (SELECT 1 FROM movement_kinds m "
    "JOIN accounts f ON f.id = NEW.from_account AND f.kind = m.source_kind "
    "JOIN accounts t ON t.id = NEW.to_account AND t.kind = m.target_kind "
    "WHERE m.kind = NEW.kind) AND NEW.from_account <> NEW.to_account"
)


def _sqlite_triggers() -> list[str]:
    checks = re.sub(
        r"\b(kind|balance|id)\b",
        r"NEW.\1",
        " AND ".join(f"({sql})" for sql in ACCOUNT_CHECKS.values()),
    )
    statements = [
        "CREATE TRIGGER ledger_policy BEFORE INSERT ON ledger_entries "
        f"WHEN NOT ({POLICY_MATCH}) BEGIN SELECT RAISE(ABORT, "
        "'money-movement policy: the movement kind and the account kinds of this ledger row "
        "are not allowed'); END",
    ]
    for when in ("INSERT", "UPDATE"):
        statements.append(
            f"CREATE TRIGGER accounts_invariants_{when.lower()} BEFORE {when} ON accounts "
            f"WHEN NOT ({checks}) BEGIN SELECT RAISE(ABORT, "
            "'account invariant: the account kind, id or balance is not allowed'); END"
        )
    for table in APPEND_ONLY:
        for what in ("UPDATE", "DELETE"):
            statements.append(
                f"CREATE TRIGGER {table}_no_{what.lower()} BEFORE {what} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )
    return statements


def _postgresql_statements() -> list[str]:
    statements = [
        f"ALTER TABLE accounts ADD CONSTRAINT ck_accounts_{name} CHECK ({sql})"
        for name, sql in ACCOUNT_CHECKS.items()
    ]
    statements += [
        "CREATE FUNCTION tj_ledger_policy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF NOT ({POLICY_MATCH}) THEN RAISE EXCEPTION "
        "'money-movement policy: % from % to % is not allowed', "
        "NEW.kind, NEW.from_account, NEW.to_account USING ERRCODE = 'check_violation'; "
        "END IF; RETURN NEW; END $$",
        "CREATE TRIGGER ledger_policy BEFORE INSERT ON ledger_entries "
        "FOR EACH ROW EXECUTE FUNCTION tj_ledger_policy()",
        "CREATE FUNCTION tj_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'restrict_violation'; "
        "END $$",
    ]
    for table in APPEND_ONLY:
        statements.append(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION tj_append_only()"
        )
        statements.append(
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION tj_append_only()"
        )
    return statements


def upgrade() -> None:
    bind = op.get_bind()
    op.create_table(
        "movement_kinds",
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("source_kind", sa.String(16), nullable=False),
        sa.Column("target_kind", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("kind", name="pk_movement_kinds"),
    )
    kinds = sa.table(
        "movement_kinds",
        sa.column("kind", sa.String),
        sa.column("source_kind", sa.String),
        sa.column("target_kind", sa.String),
    )
    op.bulk_insert(
        kinds, [{"kind": k, "source_kind": s, "target_kind": t} for k, s, t in MOVEMENTS]
    )
    op.create_table(
        "credentials",
        sa.Column("id", sa.String(24), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("subject", sa.String(64), nullable=False),
        sa.Column("terminal", sa.String(64), nullable=True),
        sa.Column("parent", sa.String(24), nullable=True),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.Column("revoked_us", sa.BigInteger(), nullable=True),
        sa.Column("revoked_by", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_credentials"),
    )
    op.create_index("ix_credentials_token_hash", "credentials", ["token_hash"], unique=True)
    op.create_index("ix_credentials_revoked_us", "credentials", ["revoked_us"])
    op.create_index("ix_credentials_subject", "credentials", ["role", "subject"])
    now = time.time_ns() // 1000
    old = bind.execute(sa.text("SELECT token, role, subject, created_us FROM tokens")).all()
    credentials = sa.table(
        "credentials",
        *(
            sa.column(name)
            for name in ("id", "token_hash", "role", "subject", "label", "created_us")
        ),
        sa.column("expires_us"),
    )
    rows = []
    for token, role, subject, created in old:
        digest = hashlib.sha256(str(token).encode()).hexdigest()
        rows.append(
            {
                "id": f"cr-{digest[:16]}",
                "token_hash": digest,
                "role": role,
                "subject": subject,
                "label": "migrated token",
                "created_us": created,
                "expires_us": now + MIGRATED_TOKEN_LIFETIME_US,
            }
        )
    if rows:
        op.bulk_insert(credentials, rows)
    op.drop_table("tokens")
    op.create_table(
        "checkpoints",
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(24), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("signature", sa.String(128), nullable=False),
        sa.Column("key_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("number", name="pk_checkpoints"),
    )
    op.create_table(
        "checkpoint_heads",
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("stream", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("number", "stream", name="pk_checkpoint_heads"),
    )
    op.create_index("ix_checkpoint_heads_stream", "checkpoint_heads", ["stream", "seq"])
    op.create_table(
        "trust_meta",
        sa.Column("key", sa.String(32), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_trust_meta"),
    )
    legacy = bind.execute(sa.text("SELECT COALESCE(MAX(id), 0) FROM ledger_entries")).scalar()
    op.bulk_insert(
        sa.table("trust_meta", sa.column("key"), sa.column("value")),
        [
            {"key": "legacy_ledger_id", "value": str(int(legacy or 0))},
            {"key": "migrated_credentials", "value": json.dumps([r["id"] for r in rows])},
        ],
    )
    op.add_column(
        "rounds", sa.Column("covered_seq", sa.Integer(), nullable=False, server_default="0")
    )
    op.create_index(
        "ix_rounds_uncovered",
        "rounds",
        ["id"],
        sqlite_where=sa.text("last_seq > covered_seq"),
        postgresql_where=sa.text("last_seq > covered_seq"),
    )
    op.add_column("terminals", sa.Column("position", sa.Integer(), nullable=True))
    statements = (
        _postgresql_statements() if bind.dialect.name == "postgresql" else _sqlite_triggers()
    )
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:  # pragma: no cover - a floor never goes back past its trust
    raise NotImplementedError("The trust migration is not reversed: it would drop the evidence.")
