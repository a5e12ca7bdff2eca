"""What game recall and the repeat of a last bet read of the ledger (PA 605a.4(d)): the round of
a player's last wager at a table, and a player's balance before a ledger row (the credits a
recalled game starts from). Both are sums and look-ups of ``ledger_entries``; nothing here
writes.
"""

from __future__ import annotations

from sqlalchemy import case, func, select

from tablejack.store.db import Store
from tablejack.store.models import LEDGER

__all__ = ["balance_before", "last_wager_round"]


async def last_wager_round(
    store: Store, player: str, table_id: str, *, excluding: str | None = None
) -> str | None:
    """The round of ``player``'s newest wager row into the escrow of table ``table_id``, other
    than the round ``excluding`` (the one in progress); None when he has wagered in no other
    round there."""
    statement = (
        select(LEDGER.c.round_id)
        .where(
            (LEDGER.c.from_account == player)
            & (LEDGER.c.to_account == f"escrow:{table_id}")
            & LEDGER.c.round_id.is_not(None)
        )
        .order_by(LEDGER.c.id.desc())
        .limit(1)
    )
    if excluding is not None:
        statement = statement.where(LEDGER.c.round_id != excluding)
    async with store.engine.connect() as connection:
        round_id = await connection.scalar(statement)
    return None if round_id is None else str(round_id)


async def balance_before(store: Store, account: str, ledger_id: int) -> int:
    """The balance of ``account`` just before ledger row ``ledger_id``: every earlier row that
    moved its money, summed (in cents, what came in less what went out)."""
    effect = case((LEDGER.c.to_account == account, LEDGER.c.amount), else_=-LEDGER.c.amount)
    statement = select(func.coalesce(func.sum(effect), 0)).where(
        ((LEDGER.c.from_account == account) | (LEDGER.c.to_account == account))
        & (LEDGER.c.id < ledger_id)
    )
    async with store.engine.connect() as connection:
        return int(await connection.scalar(statement) or 0)
