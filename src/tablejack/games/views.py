"""Plain-data views shared by the games' terminal and audit views."""

from __future__ import annotations

from typing import Any, Protocol

from tablejack.core.hands import Hand

__all__ = ["ViewableHand", "cards_view", "hand_view"]


class ViewableHand(Protocol):
    """A player's hand as the games keep it: cards, wager and progress."""

    index: int
    hand: Hand
    amount: int
    doubled: int
    done: bool
    settled: bool


def cards_view(index: int, cards: Hand) -> dict[str, Any]:
    """A player's hand ``index`` as JSON-ready data: its cards and their total, the part of a
    hand's view every game shows alike.

    >>> cards_view(1, Hand.of("AS KD"))
    {'index': 1, 'cards': ['AS', 'KD'], 'total': 21, 'soft': True, 'blackjack': True, 'bust': False}
    """
    return {
        "index": index,
        "cards": [card.code for card in cards.cards],
        "total": cards.total,
        "soft": cards.is_soft,
        "blackjack": cards.is_blackjack,
        "bust": cards.is_bust,
    }


def hand_view(hand: ViewableHand) -> dict[str, Any]:
    """A player's hand as JSON-ready data: its cards, total and wager, and how far it is played.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Box:
    ...     index: int; hand: Hand; amount: int; doubled: int; done: bool; settled: bool
    >>> hand_view(Box(0, Hand.of("AS 6D"), 1000, 0, False, False))["total"]
    17
    """
    view = cards_view(hand.index, hand.hand)
    view["wager"] = hand.amount
    view["doubled"] = hand.doubled
    view["complete"] = hand.done
    view["settled"] = hand.settled
    return view
