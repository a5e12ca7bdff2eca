"""Wagers, settlements and operations: the immutable records a round is made of.

Settlements and operations are named tuples: immutable, compared by value, and cheap to create
(a round of seven seats makes about sixty of them).

>>> wager = Wager(0, 1, "ann", WagerKind.BLACKJACK, 1000, 0)
>>> won = Settlement(0, 1, "ann", WagerKind.BLACKJACK, 0, 1000, Result.BLACKJACK, 2500, "PA 633a.13")
>>> won.net, won.winnings, won.describe()
(1500, 1500, 'wins $15.00 (PA 633a.13)')
>>> check_settlements([wager], [won])          # the house's net
-1500
>>> check_settlements([wager], [won, won])
Traceback (most recent call last):
...
AssertionError: wager 0 settled twice

Every public verb of a round appends one :class:`Operation` to the round's log and returns it;
every settled wager is a :class:`Settlement`. A round's records always balance: the players' net
plus the house's net is zero, and every wager is settled exactly once
(:func:`check_settlements`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from fractions import Fraction
from typing import NamedTuple

from tablejack.core.cards import Card
from tablejack.core.money import format_cents

__all__ = [
    "Operation",
    "Result",
    "Settlement",
    "Wager",
    "WagerKind",
    "check_settlements",
]


class WagerKind(StrEnum):
    """The wagers tablejack settles."""

    BLACKJACK = "blackjack"
    """The Blackjack Wager (§ 633a.6(d)), one per hand; a double adds to it."""
    INSURANCE = "insurance"
    """Insurance (§ 633a.8)."""
    EZ_BUST = "ez_bust"
    """EZ Bust Blackjack (633b.16)."""
    BUZZER_BEATER = "buzzer_beater"
    """Buzzer Beater (633c.5(m))."""
    ROYAL_MATCH = "royal_match"
    """Royal Match 21 (633c.5(x); § 633a.6(e)(4))."""
    BET_THE_SET = "bet_the_set"
    """Bet the Set (633c.5(x); § 633a.6(e)(5))."""
    KINGS_BOUNTY = "kings_bounty"
    """King's Bounty (633c.5(x); § 633a.6(e)(6))."""


class Result(StrEnum):
    """How a wager ended."""

    WIN = "win"
    BLACKJACK = "blackjack"
    PUSH = "push"
    LOSE = "lose"
    SURRENDER = "surrender"
    EVEN_MONEY = "even money"


class Wager(NamedTuple):
    """A wager placed on the layout. ``hand`` is the hand index for hand wagers, else None."""

    id: int
    seat: int
    player: str
    kind: WagerKind
    amount: int
    hand: int | None = None
    spot: int | None = None


class Settlement(NamedTuple):
    """One settled wager: what was at risk, what came back to the player, and why.

    ``returned`` is everything handed back (the wager returned plus the winnings); ``net`` is
    the player's gain, ``-net`` the house's. ``rounding`` is the exact payout minus the paid one
    (a positive fraction of a cent kept by the house).
    """

    wager_id: int
    seat: int
    player: str
    kind: WagerKind
    hand: int | None
    amount: int
    result: Result
    returned: int
    clause: str
    rounding: Fraction = Fraction(0)
    spot: int | None = None
    dealer_round: int | None = None

    @property
    def net(self) -> int:
        """The player's gain in cents (negative for a loss)."""
        return self.returned - self.amount

    @property
    def winnings(self) -> int:
        """The amount won on top of the wager returned (0 unless the wager won)."""
        return max(self.returned - self.amount, 0)

    @property
    def wager_returned(self) -> int:
        """The part of the wager handed back."""
        return min(self.returned, self.amount)

    def describe(self) -> str:
        """``'wins $10.00 (PA 633a.13)'``-style text for transcripts."""
        verb = {
            Result.WIN: "wins",
            Result.BLACKJACK: "wins",
            Result.PUSH: "pushes",
            Result.LOSE: "loses",
            Result.SURRENDER: "forfeits",
            Result.EVEN_MONEY: "takes even money, wins",
        }[self.result]
        if self.result is Result.PUSH:
            money = format_cents(self.amount) + " returned"
        elif self.net >= 0:
            money = format_cents(self.net)
        else:
            money = format_cents(-self.net)
        return f"{verb} {money} ({self.clause})"

    def to_json(self) -> dict[str, object]:
        """Plain data for JSON output."""
        return {
            "wager_id": self.wager_id,
            "seat": self.seat,
            "player": self.player,
            "kind": self.kind.value,
            "hand": self.hand,
            "spot": self.spot,
            "dealer_round": self.dealer_round,
            "amount": self.amount,
            "result": self.result.value,
            "returned": self.returned,
            "net": self.net,
            "clause": self.clause,
            "rounding": str(self.rounding),
        }


class Operation(NamedTuple):
    """One recorded step of a round. ``command`` is its notation when a player or the dealer
    chose it (None for automatic steps); ``card`` the card it dealt, if any."""

    kind: str
    seat: int | None = None
    hand: int | None = None
    amount: int | None = None
    card: Card | None = None
    target: str | None = None
    settlement: Settlement | None = None
    command: str | None = None
    note: str | None = None


def check_settlements(wagers: Sequence[Wager], settlements: Iterable[Settlement]) -> int:
    """Check that every wager was settled exactly once and for its full amount (a wager taken
    back before the first card, of amount 0, has nothing to settle); return the house's net
    (what the players lost overall). Raises AssertionError on a broken invariant: that would be
    a defect in tablejack, never bad input."""
    by_id = {wager.id: wager for wager in wagers}
    seen: set[int] = set()
    house = 0
    for settlement in settlements:
        if settlement.wager_id in seen:
            raise AssertionError(f"wager {settlement.wager_id} settled twice")
        seen.add(settlement.wager_id)
        wager = by_id.get(settlement.wager_id)
        if wager is None:
            raise AssertionError(f"settlement of unknown wager {settlement.wager_id}")
        if settlement.amount != wager.amount:
            raise AssertionError(
                f"wager {settlement.wager_id} of {wager.amount} settled as {settlement.amount}"
            )
        if settlement.returned < 0:
            raise AssertionError(f"negative return on wager {settlement.wager_id}")
        house -= settlement.net
    missing = {wager_id for wager_id, wager in by_id.items() if wager.amount} - seen
    if missing:
        raise AssertionError(f"wagers never settled: {sorted(missing)}")
    return house
