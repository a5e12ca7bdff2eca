"""From engine records to ledger transfers: the money a step of a round moves.

The engine keeps wagers and settlements as records (:class:`~tablejack.core.records.Wager`,
:class:`~tablejack.core.records.Settlement`). After each step the server compares them with what
the ledger already holds for the round and turns the difference into transfers:

* a new or grown wager: the player's account → the table's escrow (and the wager kind's drop);
* a wager lowered or taken back before the first card (633c.5(k)): the difference from the
  escrow back to the player (ledger kind ``refund``, as a void's) and off the drop;
* a settlement: escrow → player (the part of the wager returned, ledger kind ``returned``),
  escrow → house (the part lost, ``lost``), house → player (the winnings, ``winnings``): the
  two amounts a winning wager pays are booked apart (PA 605a.2(d)); the house's net goes to the
  wager kind's win meter. Every wager, settlement and refund row names its wager kind first in
  its memo, so the meters of PA 605a.5(d) can be derived from the ledger alone.

So the escrow holds exactly the unsettled wagers and the sum of all accounts never changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tablejack.core.records import Settlement, Wager
from tablejack.store import Transfer

__all__ = ["Books", "escrow_of", "house_of"]


def escrow_of(table_id: str) -> str:
    """The escrow account of a table."""
    return f"escrow:{table_id}"


def house_of(table_id: str) -> str:
    """The house account of a table."""
    return f"house:{table_id}"


@dataclass
class Books:
    """What the ledger holds for the round in progress."""

    table_id: str
    escrowed: dict[int, int] = field(default_factory=dict)
    settled: int = 0

    def diff(
        self, wagers: Sequence[Wager], settlements: Sequence[Settlement]
    ) -> tuple[list[Transfer], list[tuple[str, str, int, int]], dict[int, int], int]:
        """Transfers and meter increments for the records beyond what is booked, and the
        bookkeeping after them (not applied until :meth:`accept`).

        >>> from tablejack.core.records import Result, WagerKind
        >>> books = Books("T1")
        >>> w = Wager(0, 1, "ann", WagerKind.BLACKJACK, 1000)
        >>> s = Settlement(0, 1, "ann", WagerKind.BLACKJACK, None, 1000, Result.WIN, 2000, "x")
        >>> moves, meters, _, _ = books.diff([w], [s])
        >>> [(t.from_account, t.to_account, t.amount) for t in moves]
        [('ann', 'escrow:T1', 1000), ('escrow:T1', 'ann', 1000), ('house:T1', 'ann', 1000)]
        >>> meters
        [('T1', 'blackjack', 1000, 0), ('T1', 'blackjack', 0, -1000)]
        """
        escrow, house = escrow_of(self.table_id), house_of(self.table_id)
        transfers: list[Transfer] = []
        meters: list[tuple[str, str, int, int]] = []
        escrowed = dict(self.escrowed)
        for wager in wagers:
            delta = wager.amount - escrowed.get(wager.id, 0)
            if delta > 0:
                transfers.append(
                    Transfer(wager.player, escrow, delta, "wager", wager.id, wager.kind.value)
                )
                meters.append((self.table_id, wager.kind.value, delta, 0))
                escrowed[wager.id] = wager.amount
            elif delta < 0:  # lowered or taken back before the first card (633c.5(k))
                memo = f"{wager.kind.value} taken back (PA 633c.5(k))"
                transfers.append(Transfer(escrow, wager.player, -delta, "refund", wager.id, memo))
                meters.append((self.table_id, wager.kind.value, delta, 0))
                escrowed[wager.id] = wager.amount
        for settlement in settlements[self.settled :]:
            back = min(settlement.returned, settlement.amount)
            lost = settlement.amount - back
            won = settlement.returned - settlement.amount
            memo = f"{settlement.kind.value} {settlement.result.value} ({settlement.clause})"
            wager_id = settlement.wager_id
            if back:
                transfers.append(
                    Transfer(escrow, settlement.player, back, "returned", wager_id, memo)
                )
            if lost:
                transfers.append(Transfer(escrow, house, lost, "lost", wager_id, memo))
            if won > 0:
                transfers.append(
                    Transfer(house, settlement.player, won, "winnings", wager_id, memo)
                )
            meters.append((self.table_id, settlement.kind.value, 0, -settlement.net))
        return transfers, meters, escrowed, len(settlements)

    def accept(self, escrowed: dict[int, int], settled: int) -> None:
        """Record what a committed step booked."""
        self.escrowed = escrowed
        self.settled = settled

    def refunds(
        self, wagers: Sequence[Wager], settlements: Sequence[Settlement]
    ) -> tuple[list[Transfer], list[tuple[str, str, int, int]]]:
        """Voiding the round: every unsettled wager back from escrow to its player, and the
        drop it added taken off the meter."""
        escrow = escrow_of(self.table_id)
        done = {s.wager_id for s in settlements}
        transfers: list[Transfer] = []
        meters: list[tuple[str, str, int, int]] = []
        for wager in wagers:
            held = self.escrowed.get(wager.id, 0)
            if wager.id in done or held <= 0:
                continue
            transfers.append(
                Transfer(escrow, wager.player, held, "refund", wager.id, f"{wager.kind.value} void")
            )
            meters.append((self.table_id, wager.kind.value, -held, 0))
        return transfers, meters
