"""What the games with one player per seat share (classic, multi-action): the actor of a
player's command is his seat number."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from tablejack.core.errors import IllegalActionError
from tablejack.games.classic import ClassicRound
from tablejack.games.multi_action import MultiActionRound
from tablejack.server.table.games.base import POSITION_RULE, GameAdapter

__all__ = ["SeatAdapter"]

SeatRound = TypeVar("SeatRound", bound=ClassicRound | MultiActionRound)


class SeatAdapter(GameAdapter[SeatRound]):
    """Games with one player per seat: the actor is the seat number."""

    seat_rule: ClassVar[str] = POSITION_RULE
    """The clause a player acting for another seat is refused under."""
    holds: ClassVar[str] = "hand"
    """What a seated player has in the round (the refusal's words)."""

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
