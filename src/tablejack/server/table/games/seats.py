"""What the games with one player per seat share (classic, multi-action): the actor of a
player's command is his seat number, the windows every seat decides in at once and the seat in
turn, and the audit view drawn around the table's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, TypeVar

from tablejack.core.errors import IllegalActionError
from tablejack.core.records import Wager
from tablejack.games.classic import ClassicRound
from tablejack.games.multi_action import MultiActionRound
from tablejack.server.table.games.base import POSITION_RULE, GameAdapter, JsonObject, WindowKey

__all__ = ["SeatAdapter"]

SeatRound = TypeVar("SeatRound", bound=ClassicRound | MultiActionRound)


class SeatAdapter(GameAdapter[SeatRound]):
    """Games with one player per seat: the actor is the seat number."""

    seat_rule: ClassVar[str] = POSITION_RULE
    """The clause a player acting for another seat is refused under."""
    holds: ClassVar[str] = "hand"
    """What a seated player has in the round (the refusal's words)."""
    closes: ClassVar[Mapping[str, str]] = {"insurance": "dealer close-insurance"}
    """The phases whose window every seat decides in at once, each with the dealer's command
    that closes it when the countdown runs out."""

    def _positions(self, round_: SeatRound) -> list[JsonObject]:
        """The seats played this round, in the order the layout lists them."""
        raise NotImplementedError

    def _dealer_box(self, round_: SeatRound, *, hole: bool) -> JsonObject:
        """The dealer's cards and totals (``hole``: the hole card shown, for the audit)."""
        raise NotImplementedError

    def _table_view(self, round_: SeatRound, *, hole: bool) -> JsonObject:
        """The table as every terminal sees it (``hole``: the dealer's hole card shown)."""
        return {
            "game": self.game,
            "phase": round_.phase.value,
            "waiting_for": round_.next_step(),
            "positions": self._positions(round_),
            "community_cards": [],
            "dealer": self._dealer_box(round_, hole=hole),
        }

    def _own_view(self, round_: SeatRound, player: str, seat: int) -> JsonObject:
        """What only ``player``, at ``seat``, is shown of his own seat."""
        raise NotImplementedError

    def _audit_wager(self, wager: Wager) -> JsonObject:
        """A wager as the audit view lists it."""
        return {
            "id": wager.id,
            "position": wager.seat,
            "player": wager.player,
            "kind": wager.kind.value,
            "amount": wager.amount,
        }

    def player_position(self, round_: SeatRound, player: str) -> int | None:
        """The seat ``player`` plays this round, or None."""
        for number, state in round_.seats.items():
            if state.player == player:
                return number
        return None

    def actor(self, round_: SeatRound, player: str, position: int | None) -> str:
        """``player``'s seat number (refused for another player's seat)."""
        own = self.player_position(round_, player)
        rule = self.seat_rule
        if own is None:
            raise IllegalActionError(
                f"{player} has no {self.holds} at this table this round ({rule}).", rule=rule
            )
        if position is not None and position != own:
            raise IllegalActionError(
                f"{player} plays seat {own}; seat {position} belongs to another player ({rule}).",
                rule=rule,
            )
        return str(own)

    def awaited(self, round_: SeatRound) -> frozenset[str]:
        """The players of the seats the round waits for."""
        if round_.card_request is not None or round_.is_complete:
            return frozenset()
        return frozenset(round_.seats[seat].player for seat in round_.seats_to_decide())

    def player_view(self, round_: SeatRound, player: str) -> JsonObject:
        """The table, and ``player``'s own seat when he plays one this round."""
        view = self._table_view(round_, hole=False)
        seat = self.player_position(round_, player)
        view["you"] = None if seat is None else self._own_view(round_, player, seat)
        return view

    def audit_view(self, round_: SeatRound) -> JsonObject:
        """The table with the hole card, the card awaited, every wager, settlement and card."""
        view = self._table_view(round_, hole=True)
        request = round_.card_request
        view["card_request"] = None if request is None else request.describe()
        view["next_step"] = round_.next_step()
        view["wagers"] = [self._audit_wager(wager) for wager in round_.wagers]
        view["settlements"] = [s.to_json() for s in round_.settlements]
        view["cards_dealt"] = [card.code for card in round_.cards_dealt]
        return view

    def window(self, round_: SeatRound) -> WindowKey | None:
        """A window every seat decides in at once (:attr:`closes`), or the seat in turn's
        decision."""
        if round_.card_request is not None or round_.is_complete:
            return None
        phase = round_.phase.value
        if phase in self.closes:
            return (phase,)
        if phase == "playing" and round_.current_seat is not None:
            return ("playing", round_.current_seat, len(round_.operations))
        return None

    def on_countdown(self, round_: SeatRound) -> list[str]:
        """The dealer closes a window of :attr:`closes`; the seat in turn stands."""
        phase = round_.phase.value
        if phase in self.closes:
            return [self.closes[phase]]
        if phase == "playing" and round_.current_seat is not None:
            return [f"{round_.current_seat} stand"]
        return []
