"""Which process of the floor holds each terminal's link to the casino's systems
(``terminal_links``, :class:`tablejack.store.lease_models.TerminalLink`).

A SAS line runs in the one process that was started with it (``tablejack serve --sas``). On a
floor of several processes a terminal's money routes may reach another: that one must not pay
the terminal's cash-out with a voucher of its own or redeem a ticket past the host
(PA 605a.5(a)). So a process that opens a link says so here — the terminals, its member id and
the address the others reach it at; the others read the row and forward the route
(:mod:`tablejack.server.links.interface`). A process that stops keeps its rows, without an
address; one that crashed keeps them as they were. Either way the route is refused until a
process holds the link again (failing closed), never paid without the host.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from tablejack.store.db import Store
from tablejack.store.lease_models import LINKS
from tablejack.store.records import now_us

__all__ = ["Holder", "hold", "holder", "stopped"]


@dataclass(frozen=True, slots=True)
class Holder:
    """The process that holds a terminal's link."""

    terminal: str
    protocol: str
    member: str
    url: str


async def hold(
    store: Store, terminals: Iterable[str], *, protocol: str, member: str, url: str
) -> None:
    """This process (``member``, reached at ``url``) holds the links of ``terminals``."""
    rows = [
        {
            "terminal": terminal[:64],
            "protocol": protocol[:16],
            "member": member[:128],
            "url": url[:256],
            "since_us": now_us(),
        }
        for terminal in sorted(set(terminals))
    ]
    if not rows:
        return
    insert = pg_insert if store.dialect == "postgresql" else sqlite_insert
    statement = insert(LINKS).values(rows)
    statement = statement.on_conflict_do_update(
        index_elements=[LINKS.c.terminal],
        set_={name: statement.excluded[name] for name in ("protocol", "member", "url", "since_us")},
    )
    async with store.transaction() as connection:
        await connection.execute(statement)


async def stopped(store: Store, member: str) -> None:
    """``member`` stops: its rows stay, with no address — its terminals take no money at
    another process until a process holds their links again (a link is not given up by
    stopping: a cash-out past the host would be a ticket the casino system never saw)."""
    async with store.transaction() as connection:
        await connection.execute(update(LINKS).where(LINKS.c.member == member).values(url=""))


async def holder(store: Store, terminal: str) -> Holder | None:
    """The process that holds ``terminal``'s link (None: no process of the floor does)."""
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(LINKS).where(LINKS.c.terminal == terminal)))
            .mappings()
            .first()
        )
    if row is None:
        return None
    return Holder(str(row["terminal"]), str(row["protocol"]), str(row["member"]), str(row["url"]))
