"""Seats that act one after another: the turn order, hit and stand.

In the classic game and in multi-action blackjack the seats act in order from the dealer's left,
and each seat plays its hands in order (the hand on the dealer's left first, § 633a.11(b)). This
mixin holds the one copy of that turn order and of the two decisions every hand has, hit and
stand; each game cites its own clause through :attr:`SeatTurns.turn_clause` and
:attr:`SeatTurns.split_clause`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from tablejack.core.errors import IllegalActionError
from tablejack.core.hands import Hand
from tablejack.core.records import Operation
from tablejack.core.round import RoundRecords, can, new_record

__all__ = ["SeatTurns", "TurnHand"]


class TurnHand(Protocol):
    """What the turn order needs of a player's hand."""

    index: int
    hand: Hand
    split_aces: bool
    done: bool
    acted: bool
    awaiting_card: bool


class SeatTurns(RoundRecords):
    """The turn order of seats that act one after another, with hit and stand."""

    turn_clause: ClassVar[str]
    """The clause for the order of play and for drawing (hit, stand, no draw on 21)."""
    split_clause: ClassVar[str]
    """The clause that gives a split ace one card."""
    playing_phase: ClassVar[Any]
    """The phase in which the seats decide."""

    phase: Any
    seats: dict[int, Any]
    _order: list[int]
    _turn: int

    @property
    def current_seat(self) -> int | None:
        """The seat whose decision the round waits for while playing, else None."""
        if self.phase is not self.playing_phase or self._turn >= len(self._order):
            return None
        return self._order[self._turn]

    @property
    def current_hand(self) -> Any:
        """The hand being played, else None."""
        if self.phase is not self.playing_phase or self._turn >= len(self._order):
            return None
        for hand in self.seats[self._order[self._turn]].hands:
            if not hand.done:
                return hand
        return None  # pragma: no cover - a seat in turn always has an unfinished hand

    def _verify_turn(self, seat: int, action: str, rule: str) -> Any:
        """The hand ``seat`` acts on now, or raise naming why it may not act."""
        turn = self.turn_clause
        if self.card_request is not None:
            raise IllegalActionError(
                f"Seat {seat!r} cannot {action} yet: the dealer must first deal a card to "
                f"{self.card_request.describe()} ({turn}).",
                rule=turn,
            )
        if self.phase is not self.playing_phase:
            raise IllegalActionError(
                f"Seat {seat!r} cannot {action} now: the round is in {self.phase} ({rule}).",
                rule=rule,
            )
        state = self.seats.get(seat)
        if state is None:
            raise IllegalActionError(f"Seat {seat!r} has no hand this round ({rule}).", rule=rule)
        current = self.current_seat
        if current != seat:
            raise IllegalActionError(
                f"Seat {seat} cannot {action}: it is seat {current}'s turn; seats play in order "
                f"from the dealer's left ({turn}).",
                rule=turn,
            )
        for hand in state.hands:
            if not hand.done:
                return hand
        raise AssertionError("a seat in turn always has an unfinished hand")  # pragma: no cover

    def verify_hitting(self, seat: int) -> None:
        """Raise unless ``seat``'s current hand may draw a card: below 21, and not a split ace
        that takes one card only."""
        turn = self.turn_clause
        hand = self._verify_turn(seat, "hit", turn)
        if hand.hand.total >= 21:
            raise IllegalActionError(
                f"A hand of {hand.hand.total} may not draw ({turn}).", rule=turn
            )
        if hand.split_aces and self.rules.one_card_to_split_aces:
            split = self.split_clause
            raise IllegalActionError(f"A split ace receives one card only ({split}).", rule=split)

    def can_hit(self, seat: int) -> bool:
        """Whether :meth:`hit` would succeed."""
        return can(self.verify_hitting, seat)

    def hit(self, seat: int) -> Operation:
        """Draw a card to ``seat``'s current hand."""
        self.verify_hitting(seat)
        hand = self.current_hand
        hand.acted = True
        hand.awaiting_card = True
        operation: Operation = new_record(
            Operation, ("hit", seat, hand.index, None, None, None, None, f"{seat} hit", None)
        )
        self.operations.append(operation)
        self._advance()
        return operation

    def verify_standing(self, seat: int) -> None:
        """Raise unless ``seat`` may stand on its current hand."""
        self._verify_turn(seat, "stand", self.turn_clause)

    def can_stand(self, seat: int) -> bool:
        """Whether :meth:`stand` would succeed."""
        return can(self.verify_standing, seat)

    def stand(self, seat: int) -> Operation:
        """Stand: ``seat``'s current hand is complete."""
        self.verify_standing(seat)
        hand = self.current_hand
        hand.acted = True
        hand.done = True
        operation: Operation = new_record(
            Operation, ("stand", seat, hand.index, None, None, None, None, f"{seat} stand", None)
        )
        self.operations.append(operation)
        self._advance()
        return operation
