"""The cage's dual control and drawers (migration ``0011``).

* ``cage_requests`` — the approval queue: a credit sale, a voucher sale or a hand pay above its
  floor-set threshold, asked by one person (who, what, when) and decided once by a supervisor
  who is not the requester (``pending`` → ``approved`` or ``refused``, one conditional update
  in the transaction that writes the decision's event, and on approval the movement).
* ``cage_drawers`` — a cashier's drawer: opened with a float, counted and closed with the
  counted amount, the amount expected from its movements and the variance; one open drawer per
  cashier (a partial unique index).

The models share :data:`tablejack.store.models.Base`, so the schema test compares them too.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import BigInteger, Index, String, Table, text
from sqlalchemy.orm import Mapped, mapped_column

from tablejack.store.models import Base, Id

__all__ = ["CageDrawer", "CageRequest"]


class CageRequest(Base):
    """A movement above its threshold waiting for a second person (dual control)."""

    __tablename__ = "cage_requests"
    __table_args__ = (Index("ix_cage_requests_status", "status", "requested_us"),)
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))
    """``credit``, ``voucher_sale`` or ``hand_pay``."""
    account: Mapped[str] = mapped_column(String(64), default="")
    terminal: Mapped[str] = mapped_column(String(64), default="")
    amount: Mapped[int] = mapped_column(BigInteger)
    detail: Mapped[str] = mapped_column(String(32), default="")
    """A hand pay's kind (``jackpot``, ``cancelled_credit``)."""
    reason: Mapped[str] = mapped_column(String(200), default="")
    requested_by: Mapped[str] = mapped_column(String(64))
    requested_role: Mapped[str] = mapped_column(String(16))
    requested_us: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    decided_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    decided_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    decision_reason: Mapped[str | None] = mapped_column(String(200), nullable=True)


class CageDrawer(Base):
    """A cashier's drawer: its float, and when closed the count, the expected and the variance."""

    __tablename__ = "cage_drawers"
    __table_args__ = (
        Index(
            "ix_cage_drawers_open",
            "cashier",
            unique=True,
            sqlite_where=text("status = 'open'"),
            postgresql_where=text("status = 'open'"),
        ),
    )
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    cashier: Mapped[str] = mapped_column(String(64))
    opening: Mapped[int] = mapped_column(BigInteger)
    opened_us: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="open")
    closed_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    counted: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    expected: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    variance: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


REQUESTS = _table(CageRequest)
DRAWERS = _table(CageDrawer)
