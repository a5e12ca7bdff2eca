"""The NJ multi-action game's port (N.J.A.C. 13:47): one player per seat, three betting spots
placed in one wager, one hand against three dealer rounds; the terminal and audit views drawn
from the round's state."""

from __future__ import annotations

from collections.abc import Sequence

from tablejack.core.errors import IllegalActionError
from tablejack.core.records import Wager
from tablejack.games.multi_action import WAGER, MultiActionRound
from tablejack.server.table.games.base import JsonObject
from tablejack.server.table.games.seats import SeatAdapter
from tablejack.server.table.games.views import showing, spot_hand_json, wagers_of

__all__ = ["MultiActionAdapter"]


class MultiActionAdapter(SeatAdapter[MultiActionRound]):
    """NJ multi-action tables (N.J.A.C. 13:47): one player per seat (1–7), three betting
    spots per player placed in one wager (``place_wager(seat, player, [a1, a2, a3])``), one
    hand played against three dealer rounds; the actor is the seat number. The engine has no
    terminal view; the adapter shows the table (every card is dealt face up: there is no hole
    card) and the player's own spots, legal actions and settlements.

    The countdown clock is a terminal-table service (the NJ text has none): when it runs out the
    insurance window closes and the seat in turn stands, as on classic tables (S-1, S-8)."""

    game = "multi-action"
    wagering_rule = WAGER
    RULE = "NJ MAB (f)(1)"
    seat_rule = "NJ MAB (e)"
    holds = "wagers"

    def place_wager(
        self, round_: MultiActionRound, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        raise IllegalActionError(
            "A multi-action wager is three spot amounts, one per betting spot (0 for a spot "
            f"not backed), placed together ({self.RULE}).",
            rule=self.RULE,
        )

    def place_spot_wagers(
        self,
        round_: MultiActionRound,
        player: str,
        position: int | None,
        amount: int,
        spots: Sequence[int],
    ) -> None:
        if position is None:
            raise IllegalActionError(
                f"Select a seat before wagering ({self.RULE}).", rule=self.RULE
            )
        if self.player_position(round_, player) is not None:
            raise IllegalActionError(
                f"{player} already has his spot wagers at this table this round ({self.RULE}).",
                rule=self.RULE,
            )
        if sum(spots) != amount:
            raise IllegalActionError(
                f"The wager's amount {amount} is not the sum of its spot amounts "
                f"{list(spots)} ({self.RULE}).",
                rule=self.RULE,
            )
        round_.place_wager(position, player, list(spots))

    def command_text(
        self, actor: str, verb: str, amount: int | None, spots: Sequence[int] | None
    ) -> str:
        if spots is None:
            return super().command_text(actor, verb, amount, spots)
        if verb != "double":
            raise IllegalActionError(
                f"Only a double names betting spots ({'NJ MAB (a)'}).", rule="NJ MAB (a)"
            )
        return f"{actor} double {','.join(str(spot) for spot in spots)}"

    def _positions(self, round_: MultiActionRound) -> list[JsonObject]:
        return [
            {
                "position": number,
                "player": state.player,
                "spots": list(state.spots),
                "hands": [spot_hand_json(hand) for hand in state.hands],
            }
            for number, state in sorted(round_.seats.items())
        ]

    def _dealer_box(self, round_: MultiActionRound, *, hole: bool) -> JsonObject:
        first = round_.first_card
        played = sorted(round_.dealer_hands.items())
        shown = [card.code for card in played[-1][1].cards] if played else []
        return {
            "cards": shown or ([] if first is None else [first.code]),
            "first_card": None if first is None else first.code,
            "round": round_.dealer_round,
            "rounds": {
                str(number): {
                    "cards": [card.code for card in hand.cards],
                    "total": hand.total,
                    "soft": hand.is_soft,
                    "blackjack": bool(round_.dealer_blackjack.get(number, False)),
                    "bust": hand.is_bust,
                }
                for number, hand in sorted(round_.dealer_hands.items())
            },
            "skipped_rounds": list(round_.skipped_rounds),
            "total": None,
            "showing": None if first is None else showing([first]),
        }

    def _own_view(self, round_: MultiActionRound, player: str, seat: int) -> JsonObject:
        return {
            "player": player,
            "position": seat,
            "spots": list(round_.seats[seat].spots),
            "legal_actions": round_.legal_actions(seat),
            "awaiting_decision": seat in round_.seats_to_decide(),
            "hands": [spot_hand_json(hand) for hand in round_.seats[seat].hands],
            "wagers": wagers_of(round_.wagers).get(player, []),
            "settlements": [s.to_json() for s in round_.settlements if s.player == player],
            "net": round_.player_net().get(player, 0),
        }

    def _audit_wager(self, wager: Wager) -> JsonObject:
        return super()._audit_wager(wager) | {"spot": getattr(wager, "spot", None)}
