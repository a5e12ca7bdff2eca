"""The game accounts on the floor (PA 605a.5(c)): a movement booked into the floor's balance
cache and shown at the player's terminals, the money a player has in play at the tables, and
what of his credit a cash-out may take while some is in play.

The routes of the cage and the terminals (:mod:`tablejack.server.http.cash`,
:mod:`tablejack.server.http.tips`) call these; they hold no state of their own.
"""

from __future__ import annotations

from typing import Any

from tablejack.core.money import format_cents
from tablejack.server.floor.floor import Floor
from tablejack.store.vouchers import VOUCHER_RULE, Movement

__all__ = ["booked", "cash_out_refusal", "in_play", "in_play_words", "on_floor"]


def booked(floor: Floor, movement: Movement) -> dict[str, Any]:
    """Apply a committed movement to the balance cache and tell the player's terminals."""
    floor.book(movement.transfers)
    account = movement.event.payload["account"]
    if account in floor.balances:  # player accounts only (never the cage or an escrow)
        floor.balances[account] = movement.balance
    for connection in list(floor.connections):
        if connection.role == "player" and connection.subject == account:
            table = floor.tables.get(connection.table or "")
            if table is not None:
                connection.push(table.player_state(account, connection.terminal))
    return movement.to_json()


def in_play(floor: Floor, player: str) -> list[tuple[str, str, int]]:
    """Where ``player`` has money in play: (table, round, cents) for each table whose escrow
    holds his unsettled wagers of the round in progress (the tables' own books)."""
    return [
        (table.id, table.round_id or "", amount)
        for table in floor.tables.values()
        if (amount := table.in_play(player)) > 0
    ]


def on_floor(floor: Floor, table_id: str) -> bool:
    """Is ``table_id`` a table of the floor — this process's, or another's of a floor of
    several processes (:attr:`Floor.others`)?"""
    return table_id in floor.tables or table_id in floor.others


def in_play_words(found: list[tuple[str, str, int]]) -> str:
    """Where money is in play, in words.

    >>> in_play_words([("A1", "A1-000003", 1000), ("B2", "B2-000001", 250)])
    '$10.00 at table A1 (round A1-000003) and $2.50 at table B2 (round B2-000001)'
    """
    return " and ".join(
        f"{format_cents(amount)} at table {table} (round {round_id})"
        for table, round_id, amount in found
    )


def cash_out_refusal(
    floor: Floor, player: str, amount: int | None, found: list[tuple[str, str, int]]
) -> str | None:
    """A cash-out takes only the credit not in play (605a.5(c)): a wager placed and not yet
    settled is in the table's escrow, and its result comes back to the game account. While
    the player has money in play (``found``, :func:`in_play`), a cash-out of more than the
    rest — or of everything when there is no rest — is refused: the sentence naming the
    amount in play, or None when the cash-out may go on."""
    if not found:
        return None
    free = floor.balances.get(player, 0)
    total = sum(cents for _, _, cents in found)
    where = in_play_words(found)
    if amount is None and free <= 0:
        return (
            f"Nothing can be cashed out now: {where} is in play until the round settles; its "
            f"result is credited to the game account ({VOUCHER_RULE})."
        )
    if amount is not None and amount > free:
        return (
            f"{format_cents(amount)} cannot be cashed out: {format_cents(total)} of the game "
            f"account is in play ({where}) until the round settles; {format_cents(free)} can "
            f"be cashed out now ({VOUCHER_RULE})."
        )
    return None
