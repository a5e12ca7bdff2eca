"""Plain-data views shared by the games' terminal and audit views."""

from __future__ import annotations

from typing import Any, Protocol

from tablejack.core.hands import Hand

__all__ = ["ViewableHand", "hand_view"]


class ViewableHand(Protocol):
    """A player's hand as the games keep it: cards, wager and progress."""

    index: int
    hand: Hand
    amount: int
    doubled: int
    done: bool
    settled: bool


def hand_view(hand: ViewableHand) -> dict[str, Any]:
    """A player's hand as JSON-ready data: its cards, total and wager, and how far it is played.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Box:
    ...     index: int; hand: Hand; amount: int; doubled: int; done: bool; settled: bool
    >>> hand_view(Box(0, Hand.of("AS 6D"), 1000, 0, False, False))["total"]
    17
    """
    cards = hand.hand
    return {
        "index": hand.index,
        "cards": [card.code for card in cards.cards],
        "total": cards.total,
        "soft": cards.is_soft,
        "blackjack": cards.is_blackjack,
        "bust": cards.is_bust,
        "wager": hand.amount,
        "doubled": hand.doubled,
        "complete": hand.done,
        "settled": hand.settled,
    }
