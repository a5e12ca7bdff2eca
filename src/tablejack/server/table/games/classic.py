"""The classic game's port (Chapter 633a, with EZ Bust, 633b.16): one player per seat, the
actor the seat number; the terminal and audit views drawn from the round's state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tablejack.core.errors import IllegalActionError
from tablejack.games.classic import WAGER, ClassicRound
from tablejack.server.table.games.base import POSITION_RULE, JsonObject
from tablejack.server.table.games.seats import SeatAdapter
from tablejack.server.table.games.views import dealer_totals, hand_json, wagers_of

__all__ = ["ClassicAdapter"]


class ClassicAdapter(SeatAdapter[ClassicRound]):
    """Chapter 633a tables (with EZ Bust): one player per seat; the actor is the seat number.

    The countdown clock is a terminal-table service here (Chapter 633a has none): when it runs
    out the insurance or EZ Bust window closes and a seat in turn is deemed to stand, the
    default of 633c.5(p)(2) applied to electronic terminals (documented in docs/server.md).
    """

    game = "classic"
    wagering_rule = WAGER
    closes: ClassVar[Mapping[str, str]] = {
        "insurance": "dealer close-insurance",
        "ez bust": "dealer close-ez-bust",
    }

    def place_wager(
        self, round_: ClassicRound, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        if kind != "blackjack":
            raise IllegalActionError(
                f"Only the Blackjack Wager is placed before the first card at this table; "
                f"{kind!r} is not offered then (PA 633a.6).",
                rule="PA 633a.6",
            )
        if position is None:
            raise IllegalActionError(
                f"Select a seat before wagering ({POSITION_RULE}).", rule=POSITION_RULE
            )
        if any(state.player == player for state in round_.seats.values()):
            raise IllegalActionError(
                f"{player} already has a Blackjack Wager at this table this round (PA 633a.6(d)).",
                rule="PA 633a.6(d)",
            )
        round_.place_wager(position, player, amount)

    def _positions(self, round_: ClassicRound) -> list[JsonObject]:
        return [
            {
                "position": number,
                "player": state.player,
                "wager": state.wager,
                "hands": [hand_json(hand) for hand in state.hands],
            }
            for number, state in round_.seats.items()
        ]

    def _dealer_box(self, round_: ClassicRound, *, hole: bool) -> JsonObject:
        dealer_cards = [card.code for card in round_.dealer.cards]
        shown = hole or round_.hole_card_revealed
        if not shown and len(dealer_cards) > 1:
            dealer_cards[1] = "back"
        return {
            "cards": dealer_cards,
            "total": round_.dealer.total if round_.hole_card_revealed else None,
            **dealer_totals(round_.dealer, revealed=shown),
        }

    def _own_view(self, round_: ClassicRound, player: str, seat: int) -> JsonObject:
        return {
            "player": player,
            "position": seat,
            "hands": [hand_json(hand) for hand in round_.seats[seat].hands],
            "wagers": wagers_of(round_.wagers).get(player, []),
            "legal_actions": round_.legal_actions(seat),
            "awaiting_decision": seat in round_.seats_to_decide(),
            "settlements": [s.to_json() for s in round_.settlements if s.player == player],
            "net": round_.player_net().get(player, 0),
        }
