"""The schema of a floor of several processes (the migration ``0004_leases``).

* ``table_leases`` — which process runs each table, until when: the holder's member id and the
  address other processes reach it at, the lease's fencing token and its expiry, all on the
  database's clock (:mod:`tablejack.store.leases`).
* ``table_fences`` — the fencing token every write of a table must carry: changed only when a
  process takes the table over, and read under a share lock by each write transaction
  (:mod:`tablejack.store.fencing`), apart from the lease row the heartbeat renews.
* ``floor_members`` — the processes of the floor and until when each is alive (the share of
  tables each takes is the tables divided among the members alive).
* ``terminal_links`` — which process holds each terminal's link to the casino's systems (a SAS
  line, migration ``0014``): a money route of that terminal reaching another process is
  forwarded there (:mod:`tablejack.store.terminal_links`).

The models share :data:`tablejack.store.models.Base`, so the schema test compares them too.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import BigInteger, String, Table
from sqlalchemy.orm import Mapped, mapped_column

from tablejack.store.models import Base

__all__ = [
    "FENCES",
    "LEASES",
    "LINKS",
    "MEMBERS",
    "FloorMember",
    "TableFence",
    "TableLease",
    "TerminalLink",
]


class TableLease(Base):
    """The lease of one table: held by one floor member until ``expires_us`` (database clock,
    microseconds), with the fencing token of the holder's turn."""

    __tablename__ = "table_leases"
    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(128), default="")
    """The member that holds it ('' once released)."""
    url: Mapped[str] = mapped_column(String(256), default="")
    """Where the holder serves (its other members forward a terminal there)."""
    token: Mapped[int] = mapped_column(BigInteger, default=0)
    expires_us: Mapped[int] = mapped_column(BigInteger, default=0)
    acquired_us: Mapped[int] = mapped_column(BigInteger, default=0)
    renewed_us: Mapped[int] = mapped_column(BigInteger, default=0)


class TableFence(Base):
    """A table's current fencing token: a write of the table carrying another is refused."""

    __tablename__ = "table_fences"
    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    token: Mapped[int] = mapped_column(BigInteger)


class FloorMember(Base):
    """A ``tablejack serve`` process of the floor, alive until ``expires_us``."""

    __tablename__ = "floor_members"
    member: Mapped[str] = mapped_column(String(128), primary_key=True)
    url: Mapped[str] = mapped_column(String(256), default="")
    started_us: Mapped[int] = mapped_column(BigInteger)
    expires_us: Mapped[int] = mapped_column(BigInteger)


class TerminalLink(Base):
    """The process of the floor that holds a terminal's link (its SAS line): its member id,
    the address other processes forward the terminal's money routes to, the protocol."""

    __tablename__ = "terminal_links"
    terminal: Mapped[str] = mapped_column(String(64), primary_key=True)
    protocol: Mapped[str] = mapped_column(String(16))
    member: Mapped[str] = mapped_column(String(128))
    url: Mapped[str] = mapped_column(String(256), default="")
    since_us: Mapped[int] = mapped_column(BigInteger)


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


LEASES = _table(TableLease)
FENCES = _table(TableFence)
MEMBERS = _table(FloorMember)
LINKS = _table(TerminalLink)
