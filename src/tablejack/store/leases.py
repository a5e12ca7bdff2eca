"""Table leases on PostgreSQL: which process of a floor runs each table.

Several ``tablejack serve`` processes on one PostgreSQL database form one floor. Each table is
run by exactly one of them at a time, the holder of its **lease**: a row of ``table_leases``
naming the holder (a member id unique to the process's run), the address it serves at, an
expiry and a **fencing token**. The holder renews its leases every third of the lease time;
a lease that has expired may be taken over by any member, which moves the fencing token on by
one in the same transaction (``table_fences``, :mod:`tablejack.store.fencing`). Every write of
the table carries the token it was made under and is refused unless it is still the table's
current one, so a holder that was paused or cut off past its lease writes nothing more, even
if it has not noticed yet.

Why a lease row and not an advisory lock: an advisory lock belongs to a database session, so
it is held as long as the holder's connection is open — a process stopped by ``SIGSTOP``, hung
in a long garbage collection or behind a half-open TCP connection keeps it for as long as the
kernel keeps the socket (hours with default keepalives), and no one can take its tables over.
It also carries no token a write could be checked against, and is lost silently when a
connection pooler hands the session to someone else. A lease row expires by the database's
clock whatever the holder does, is renewed by any of the holder's connections, and its token
is an ordinary value every write transaction compares.

All times are the database's clock (``clock_timestamp()``, microseconds), never a process's:
the members may run on hosts whose clocks differ. SQLite runs one process (``tablejack serve``
holds the file's lock) and has no leases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import Store, StoreError
from tablejack.store.fencing import Fence

__all__ = ["HOP_KEY", "FloorView", "Lease", "LeaseError", "Leases", "Member", "floor_hop_key"]

_NOW = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
"""The database's clock in microseconds."""
_FORGET_MEMBERS_US = 24 * 3600 * 1_000_000
"""Members dead this long are deleted from ``floor_members``."""
HOP_KEY = "floor_hop_key"
"""The ``trust_meta`` fact holding the floor's hop key (:func:`floor_hop_key`)."""


class LeaseError(StoreError):
    """Leases asked of a store that has none (SQLite)."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A table's lease as the database holds it."""

    table_id: str
    holder: str
    url: str
    token: int
    expires_us: int

    def live(self, now_us: int) -> bool:
        """Held by someone at ``now_us`` (database clock)."""
        return bool(self.holder) and self.expires_us > now_us


@dataclass(frozen=True, slots=True)
class Member:
    """A process of the floor, alive until ``expires_us``."""

    member: str
    url: str
    expires_us: int


@dataclass(frozen=True, slots=True)
class FloorView:
    """The floor as one read found it: the database's clock, every lease, the live members."""

    now_us: int
    leases: Mapping[str, Lease]
    members: Mapping[str, Member]


class Leases:
    """The leases of one member of the floor: ``member`` (unique to this run of the process),
    the ``url`` it serves at, and its lease time in seconds."""

    def __init__(self, store: Store, member: str, url: str, seconds: float) -> None:
        if store.dialect != "postgresql":
            raise LeaseError(
                "Table leases need PostgreSQL: an SQLite file is served by one process only."
            )
        if seconds <= 0:
            raise LeaseError(f"A lease lasts a positive number of seconds, not {seconds!r}.")
        self.store = store
        self.member = member
        self.url = url
        self.seconds = seconds
        self.lease_us = int(seconds * 1_000_000)
        self.lock_timeout_ms = max(50, int(seconds * 1000 / 5))
        """How long a takeover waits for the writes of the old holder still in flight (then it
        is retried at the next turn)."""

    async def join(self) -> None:
        """Say that this member is alive (and forget members dead for a day)."""
        async with self.store.engine.begin() as connection:
            await connection.execute(
                text(f"DELETE FROM floor_members WHERE expires_us < {_NOW} - :forget"),
                {"forget": _FORGET_MEMBERS_US},
            )
            await self._alive(connection)

    async def _alive(self, connection: AsyncConnection) -> None:
        await connection.execute(
            text(
                "INSERT INTO floor_members (member, url, started_us, expires_us) "
                f"VALUES (:member, :url, {_NOW}, {_NOW} + :lease) "
                "ON CONFLICT (member) DO UPDATE SET expires_us = EXCLUDED.expires_us, "
                "url = EXCLUDED.url"
            ),
            {"member": self.member, "url": self.url, "lease": self.lease_us},
        )

    async def leave(self) -> None:
        """This member stops (its leases are released one by one before)."""
        async with self.store.engine.begin() as connection:
            await connection.execute(
                text("DELETE FROM floor_members WHERE member = :member"), {"member": self.member}
            )

    async def view(self) -> FloorView:
        """The database's clock, every lease and the members alive."""
        async with self.store.engine.connect() as connection:
            now = int(await connection.scalar(text(f"SELECT {_NOW}")) or 0)
            leases = {
                str(row[0]): Lease(str(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]))
                for row in await connection.execute(
                    text("SELECT table_id, holder, url, token, expires_us FROM table_leases")
                )
            }
            members = {
                str(row[0]): Member(str(row[0]), str(row[1]), int(row[2]))
                for row in await connection.execute(
                    text("SELECT member, url, expires_us FROM floor_members WHERE expires_us > :n"),
                    {"n": now},
                )
            }
        return FloorView(now, leases, members)

    async def acquire(self, table_id: str, *, dead: str = "") -> Fence | None:
        """Take the lease of ``table_id`` if no one holds it (never leased, released, or
        expired) or its holder is ``dead`` (a member known to have ended: a process of this
        host that no longer runs): the fence of the new lease, whose token is one more than
        the last holder's; None when someone holds it, or when the last holder's writes still
        in flight did not end within the takeover's lock timeout (tried again later)."""
        try:
            async with self.store.engine.begin() as connection:
                await connection.execute(
                    text(f"SET LOCAL lock_timeout = '{self.lock_timeout_ms}ms'")
                )
                await connection.execute(
                    text(
                        "INSERT INTO table_leases (table_id, holder, url, token, expires_us, "
                        "acquired_us, renewed_us) SELECT CAST(:table AS VARCHAR), '', '', "
                        "COALESCE(MAX(token), 0), 0, 0, 0 FROM table_fences WHERE "
                        "table_id = CAST(:table AS VARCHAR) "
                        "ON CONFLICT (table_id) DO NOTHING"
                    ),
                    {"table": table_id},
                )
                token = await connection.scalar(
                    text(
                        f"UPDATE table_leases SET holder = :member, url = :url, token = token + 1, "
                        f"expires_us = {_NOW} + :lease, acquired_us = {_NOW}, renewed_us = {_NOW} "
                        f"WHERE table_id = :table AND (holder = '' OR expires_us <= {_NOW} "
                        "OR holder = :dead) RETURNING token"
                    ),
                    {
                        "dead": dead or "",
                        "member": self.member,
                        "url": self.url,
                        "lease": self.lease_us,
                        "table": table_id,
                    },
                )
                if token is None:
                    return None
                # waits for every write transaction that checked the old token to end
                await connection.execute(
                    text(
                        "INSERT INTO table_fences (table_id, token) VALUES (:table, :token) "
                        "ON CONFLICT (table_id) DO UPDATE SET token = EXCLUDED.token "
                        "WHERE table_fences.token < EXCLUDED.token"
                    ),
                    {"table": table_id, "token": int(token)},
                )
        except DBAPIError as error:
            if "lock timeout" in str(error.orig) or "lock_not_available" in str(error.orig):
                return None
            raise
        return Fence(table_id, int(token))

    async def renew(self, fences: Iterable[Fence]) -> list[Fence]:
        """Extend the leases of ``fences`` by the lease time and say this member is alive: the
        fences still held (a lease another member took over is not among them). A lease that
        expired but that no one took over is renewed: its token is still the table's."""
        wanted = {fence.table_id: fence for fence in fences}
        async with self.store.engine.begin() as connection:
            held: list[Fence] = []
            if wanted:
                rows = await connection.execute(
                    text(
                        f"UPDATE table_leases SET expires_us = {_NOW} + :lease, "
                        f"renewed_us = {_NOW} WHERE holder = :member AND "
                        "table_id = ANY(:tables) RETURNING table_id, token"
                    ),
                    {"lease": self.lease_us, "member": self.member, "tables": sorted(wanted)},
                )
                for table_id, token in rows:
                    fence = wanted.get(str(table_id))
                    if fence is not None and fence.token == int(token):
                        held.append(fence)
            await self._alive(connection)
        return sorted(held)

    async def release(self, fence: Fence) -> bool:
        """Give up a lease this member holds (at shutdown, or to even out the floor): another
        member takes it at its next turn. False when it was no longer this member's."""
        async with self.store.engine.begin() as connection:
            result = await connection.execute(
                text(
                    f"UPDATE table_leases SET holder = '', expires_us = {_NOW} "
                    "WHERE table_id = :table AND holder = :member AND token = :token"
                ),
                {"table": fence.table_id, "member": self.member, "token": fence.token},
            )
        return bool(result.rowcount)


async def floor_hop_key(store: Store) -> bytes:
    """The secret the processes of a floor prove a request forwarded from one to another with
    (:mod:`tablejack.server.socket.proxy`): 32 random bytes kept in ``trust_meta``, made by the first
    process that asks (``INSERT … ON CONFLICT DO NOTHING``: two first askers agree). It proves
    a hop to the other processes, not to someone who reads the database."""
    import secrets

    from sqlalchemy import select
    from sqlalchemy.dialects import postgresql

    from tablejack.store.models import TRUST_META

    if store.dialect != "postgresql":
        raise LeaseError("A floor of several processes needs PostgreSQL.")
    async with store.transaction() as connection:
        await connection.execute(
            postgresql.insert(TRUST_META)
            .values(key=HOP_KEY, value=secrets.token_hex(32))
            .on_conflict_do_nothing(index_elements=[TRUST_META.c.key])
        )
        value = await connection.scalar(
            select(TRUST_META.c.value).where(TRUST_META.c.key == HOP_KEY)
        )
    return bytes.fromhex(str(value))
