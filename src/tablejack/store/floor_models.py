"""The floor schema of PA Chapter 605a (the second migration, ``0002_floor``).

* ``vouchers`` — every voucher a terminal issued (605a.5(c)): amount, the SHA-256 of its
  validation code (the code itself is printed on the voucher only), who issued it where, and
  its redemption (status ``issued`` → ``redeemed`` once, by one conditional update).
* ``terminals`` — the floor's electronic wagering terminals (EWTs), the table each serves and
  the position it is bound to (the licence count of 605a.9(b)).
* ``floor_settings`` — the operator's limits (voucher limit, hand-pay limit, gaming day).
* ``meter_snapshots`` — the meter readings at the end of each gaming day, per EWT and table.
* ``meter_clears`` — every authorised meter clear with the readings before and after.
* ``player_limits`` — a player's session limits (loss, wager, time) and self-exclusion.
* ``terminal_locks`` — tilts: an EWT locked with a reason code, and its supervisor's clear.

The models share :data:`tablejack.store.models.Base`, so the schema test compares them too.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import BigInteger, Index, Integer, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column

from tablejack.store.models import Base, Id

__all__ = [
    "FloorSetting",
    "MeterClear",
    "MeterSnapshot",
    "PlayerLimits",
    "TerminalLock",
    "TerminalRow",
    "ValidatorEvent",
    "ValidatorKey",
    "Voucher",
]


class Voucher(Base):
    """A voucher (ticket) issued at cash-out; redeemable once anywhere on the floor."""

    __tablename__ = "vouchers"
    __table_args__ = (Index("ix_vouchers_code_hash", "code_hash", unique=True),)
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    code_hash: Mapped[str] = mapped_column(String(64))
    amount: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="issued")
    account: Mapped[str] = mapped_column(String(64))
    terminal: Mapped[str] = mapped_column(String(64))
    issued_us: Mapped[int] = mapped_column(BigInteger)
    redeemed_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    redeemed_account: Mapped[str | None] = mapped_column(String(64), nullable=True)
    redeemed_terminal: Mapped[str | None] = mapped_column(String(64), nullable=True)
    validated_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The system that validated the voucher: None the floor's own validation codes, or a
    host's (``sas:<system ID>``, system validation over the SAS link)."""


class TerminalRow(Base):
    """An electronic wagering terminal of the floor, the table it serves and (seat games) the
    position it is bound to; its device credential is a ``terminal`` credential."""

    __tablename__ = "terminals"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64))
    position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    created_us: Mapped[int] = mapped_column(BigInteger)


class FloorSetting(Base):
    """One operator setting (JSON value)."""

    __tablename__ = "floor_settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    set_by: Mapped[str] = mapped_column(String(64), default="")
    set_us: Mapped[int] = mapped_column(BigInteger)


class MeterSnapshot(Base):
    """The readings of one EWT or table at the end of a gaming day (JSON)."""

    __tablename__ = "meter_snapshots"
    gaming_day: Mapped[str] = mapped_column(String(10), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    scope_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    readings: Mapped[str] = mapped_column(Text)
    taken_us: Mapped[int] = mapped_column(BigInteger)


class MeterClear(Base):
    """An authorised meter clear: who, why, and the readings before and after (JSON)."""

    __tablename__ = "meter_clears"
    __table_args__ = (Index("ix_meter_clears_scope", "scope", "scope_id"),)
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    at_us: Mapped[int] = mapped_column(BigInteger)
    scope: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    by: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(200))
    ledger_id: Mapped[int] = mapped_column(BigInteger)
    """The last ledger entry the clear covers: readings after it start from zero."""
    before: Mapped[str] = mapped_column(Text)
    after: Mapped[str] = mapped_column(Text)


class PlayerLimits(Base):
    """A player's limits per gaming day (cents, seconds; NULL: none) and self-exclusion."""

    __tablename__ = "player_limits"
    account: Mapped[str] = mapped_column(String(64), primary_key=True)
    loss_limit: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    wager_limit: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    time_limit_s: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    excluded_until_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    changed_us: Mapped[int] = mapped_column(BigInteger)
    """When a limit was last set or tightened: none may be loosened for 24 hours after."""
    set_by: Mapped[str] = mapped_column(String(64), default="")


class TerminalLock(Base):
    """A tilt: an EWT locked with a reason code until a supervisor clears it."""

    __tablename__ = "terminal_locks"
    __table_args__ = (Index("ix_terminal_locks_terminal", "terminal", "cleared_us"),)
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    terminal: Mapped[str] = mapped_column(String(64))
    code: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(200))
    locked_us: Mapped[int] = mapped_column(BigInteger)
    locked_by: Mapped[str] = mapped_column(String(64))
    cleared_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    cleared_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    clear_code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    clear_reason: Mapped[str | None] = mapped_column(String(200), nullable=True)


class ValidatorKey(Base):
    """The Ed25519 public key of a terminal's bill validator controller, registered with the
    terminal's device credential (``device``: that key generation; a new terminal key ends it)."""

    __tablename__ = "validator_keys"
    terminal: Mapped[str] = mapped_column(String(64), primary_key=True)
    public_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    device: Mapped[str] = mapped_column(String(32))
    registered_us: Mapped[int] = mapped_column(BigInteger)


class ValidatorEvent(Base):
    """A bill or voucher a terminal's validator reported, once per its event id (a repeat is
    answered with the first result): ``status`` ``pending`` → ``ok`` or ``refused``, and the
    answer given (JSON)."""

    __tablename__ = "validator_events"
    __table_args__ = (Index("ix_validator_events_at", "terminal", "at_us"),)
    terminal: Mapped[str] = mapped_column(String(64), primary_key=True)
    event: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    value: Mapped[str] = mapped_column(String(64))
    """The amount in cents (a bill) or the SHA-256 of the voucher's code."""
    account: Mapped[str] = mapped_column(String(64))
    at_us: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


VOUCHERS = _table(Voucher)
TERMINALS = _table(TerminalRow)
SETTINGS = _table(FloorSetting)
SNAPSHOTS = _table(MeterSnapshot)
CLEARS = _table(MeterClear)
LIMITS = _table(PlayerLimits)
LOCKS = _table(TerminalLock)
VALIDATOR_KEYS = _table(ValidatorKey)
VALIDATOR_EVENTS = _table(ValidatorEvent)
