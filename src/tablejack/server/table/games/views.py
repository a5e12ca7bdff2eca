"""The pieces of a terminal's view that the engines' views do not draw: a classic or
multi-action hand as JSON (around the engine's :func:`~tablejack.games.views.cards_view`), the
dealer's totals as a terminal may show them, each player's wagers as chips."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tablejack.core.cards import Card
from tablejack.core.hands import Hand
from tablejack.core.records import Wager
from tablejack.games import classic, multi_action
from tablejack.games.views import cards_view
from tablejack.server.table.games.base import JsonObject

__all__ = [
    "dealer_totals",
    "first_card_showing",
    "hand_json",
    "showing",
    "spot_hand_json",
    "wagers_of",
]


def hand_json(hand: classic.PlayerHand) -> JsonObject:
    """A classic hand: its cards, totals, wager and state."""
    view = cards_view(hand.index, hand.hand)
    view["wager"] = hand.amount
    view["doubled"] = hand.doubled
    view["surrendered"] = hand.surrendered
    view["complete"] = hand.done
    view["settled"] = hand.settled
    return view


def spot_hand_json(hand: multi_action.PlayerHand) -> JsonObject:
    """A multi-action hand: its cards, totals, and the wager of each betting spot."""
    view = cards_view(hand.index, hand.hand)
    view["spots"] = [
        {"spot": w.spot, "amount": w.amount, "doubled": w.doubled, "settled": w.settled}
        for w in hand.spots
    ]
    view["wager"] = sum(w.amount for w in hand.spots)
    view["doubled"] = hand.doubled
    view["complete"] = hand.done
    return view


def showing(cards: Sequence[Card]) -> JsonObject:
    """The total of the dealer's cards showing (the up card while the hole card is down)."""
    hand = Hand(cards)
    return {"total": hand.total, "soft": hand.is_soft}


def dealer_totals(hand: Hand, *, revealed: bool) -> JsonObject:
    """The dealer's hand in the terms a terminal shows beside the cards: once the hole card is
    turned, whether the total is soft, a Blackjack or a bust; before, the total of the up card
    only (``showing``), never anything of the hole card."""
    if revealed:
        return {
            "soft": hand.is_soft,
            "blackjack": hand.is_blackjack,
            "bust": hand.is_bust,
            "showing": None,
        }
    up = hand.cards[:1]
    return {
        "soft": False,
        "blackjack": False,
        "bust": False,
        "showing": showing(up) if up else None,
    }


def first_card_showing(dealer: JsonObject) -> JsonObject:
    """A version B dealer box (the dealer's first card) with the card's total."""
    first = dealer.get("first_card")
    return dealer | {"showing": None if first is None else showing([Card.parse(first)])}


def wagers_of(wagers: Iterable[Wager]) -> dict[str, list[JsonObject]]:
    """Each player's wagers on the layout, as his terminal shows them in chips: the kind, the
    amount at risk now (a double included), the hand (a split's own wager) and the spot; a
    wager taken back before the first card (amount 0) is off the layout."""
    out: dict[str, list[JsonObject]] = {}
    for wager in wagers:
        if not wager.amount:
            continue
        out.setdefault(wager.player, []).append(
            {
                "kind": wager.kind.value,
                "amount": wager.amount,
                "hand": wager.hand,
                "spot": wager.spot,
            }
        )
    return out
