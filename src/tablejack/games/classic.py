"""PA Chapter 633a Blackjack with the EZ Bust side wager (633b.16): the ``classic`` game.

A round is one explicit state (:class:`ClassicRound`) changed only by its verbs. Each verb checks
legality first (``verify_…`` raises :class:`IllegalActionError` naming the clause; ``can_…``
answers yes or no), then changes the state and appends a frozen :class:`Operation` to the log.

The round runs: wagering → deal (seat 1, the dealer's left, first: one card to each seat, the
dealer's up card, a second card to each seat, the hole card face down) → insurance / even money
when the up card is an ace (§ 633a.8) → the card reader peek when the up card is an ace or
ten-value (§ 633a.1, § 633a.2) → the EZ Bust window when the up card is 2–6 (633b.16(c)) → each
seat's decisions, seat 1 first (hit, stand, double § 633a.10, split § 633a.11, surrender
§ 633a.9) → the dealer turns the hole card and draws to 17, standing on all 17s (§ 633a.7) →
EZ Bust wagers settle (633b.16(h)) → Blackjack Wagers settle (§ 633a.13).

Cards come from a :class:`~tablejack.core.shoe.Shoe` given to the round (automated dealing) or,
without one, one at a time through :meth:`ClassicRound.deal_card` as a card-reading shoe reads
them; :attr:`ClassicRound.card_request` says which card the engine waits for. Both ways produce
the same operation log.

>>> from tablejack.core import ClassicRules, Shoe
>>> table = ClassicRound(ClassicRules(decks=1), Shoe.prearranged("10S 7H 9D 6C 5S", decks=1))
>>> _ = table.place_wager(1, "ann", 1000)
>>> _ = table.close_wagering()
>>> [str(op.card) for op in table.operations if op.card]
['10S', '7H', '9D', '6C']
>>> _ = table.stand(1)
>>> table.dealer.describe(), table.settlements[0].net
('7♥ 6♣ 5♠ = 18', 1000)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import ClassVar

from tablejack.core.cards import Card
from tablejack.core.commands import Command
from tablejack.core.errors import IllegalActionError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, winnings
from tablejack.core.records import (
    Operation,
    Result,
    WagerKind,
)
from tablejack.core.round import can, new_record
from tablejack.core.rules import ClassicRules
from tablejack.core.shoe import Shoe
from tablejack.games.turns import SeatTurns

__all__ = ["CardTarget", "ClassicRound", "Phase", "PlayerHand", "SeatState"]

WAGER = "PA 633a.6"
DEAL = "PA 633a.7"
PAYOUT = "PA 633a.13"
INSURANCE = "PA 633a.8"
EVEN_MONEY = "PA 633a.8(e)"
SURRENDER = "PA 633a.9"
DOUBLE = "PA 633a.10"
SPLIT = "PA 633a.11"
EZ = "PA 633b.16"
INSURANCE_PAYS = Fraction(2)


class Phase(StrEnum):
    """Where a round stands."""

    WAGERING = "wagering"
    DEALING = "dealing"
    INSURANCE = "insurance"
    EZ_BUST = "ez bust"
    PLAYING = "playing"
    DEALER = "dealer"
    COMPLETE = "complete"


# Enum members as module constants: attribute access on an Enum class is slow in hot paths.
_COMPLETE = Phase.COMPLETE
_DEALER = Phase.DEALER
_DEALING = Phase.DEALING
_EZ_BUST = Phase.EZ_BUST
_INSURANCE = Phase.INSURANCE
_PLAYING = Phase.PLAYING
_WAGERING = Phase.WAGERING
_R_BLACKJACK = Result.BLACKJACK
_R_EVEN_MONEY = Result.EVEN_MONEY
_R_LOSE = Result.LOSE
_R_PUSH = Result.PUSH
_R_SURRENDER = Result.SURRENDER
_R_WIN = Result.WIN


@dataclass(frozen=True, slots=True)
class CardTarget:
    """Where the next card goes: ``seat`` (with ``seat`` and ``hand``), ``up``, ``hole`` or
    ``dealer`` (a dealer hit)."""

    kind: str
    seat: int | None = None
    hand: int | None = None
    label: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind == "seat":
            hand = f" hand {self.hand + 1}" if self.hand else ""
            label = f"seat {self.seat}{hand}"
        else:
            label = {"up": "dealer up card", "hole": "dealer hole card", "dealer": "dealer"}[
                self.kind
            ]
        object.__setattr__(self, "label", label)

    def describe(self) -> str:
        """Text for the dealer console: ``'seat 2 hand 1'``, ``'dealer hole card'``."""
        return self.label


_TARGETS: dict[tuple[str, int | None, int | None], CardTarget] = {}


def target_of(kind: str, seat: int | None = None, hand: int | None = None) -> CardTarget:
    """The (shared, immutable) card target for ``kind``, ``seat`` and ``hand``."""
    key = (kind, seat, hand)
    target = _TARGETS.get(key)
    if target is None:
        target = _TARGETS[key] = CardTarget(kind, seat, hand)
    return target


@dataclass(slots=True)
class PlayerHand:
    """One hand at a seat: its cards, its Blackjack Wager and how far it has been played."""

    index: int
    hand: Hand
    wager_id: int
    amount: int
    doubled: int = 0
    split_aces: bool = False
    surrendered: bool = False
    done: bool = False
    settled: bool = False
    acted: bool = False
    awaiting_card: bool = False

    @property
    def is_live(self) -> bool:
        """Still needs the dealer's hand to be settled."""
        return not (self.settled or self.surrendered or self.hand.is_bust)


@dataclass(slots=True)
class SeatState:
    """A seat with a Blackjack Wager: the player, the hands and the side wagers."""

    number: int
    player: str
    wager: int
    hands: list[PlayerHand] = field(default_factory=list)
    insurance_decided: bool = False
    insurance_wager_id: int | None = None
    ez_decided: bool = False
    ez_wager_ids: list[int] = field(default_factory=list)
    ez_split_wagers: int = 0
    splits: int = 0


class ClassicRound(SeatTurns):
    """One round of Chapter 633a Blackjack (with EZ Bust when the rules offer it)."""

    game = "classic"
    turn_clause = DEAL
    split_clause = SPLIT
    playing_phase = _PLAYING

    def __init__(self, rules: ClassicRules, shoe: Shoe | None = None) -> None:
        if not isinstance(rules, ClassicRules):
            raise TypeError(f"A classic round needs ClassicRules, not {type(rules).__name__}.")
        self._start_records(rules, shoe)
        self.rules: ClassicRules = rules
        self.phase = _WAGERING
        self.seats: dict[int, SeatState] = {}
        self.dealer = Hand()
        self.hole_card_revealed = False
        self.dealer_blackjack: bool | None = None
        self.ez_push_all = False
        self._deal_queue: list[CardTarget] = []
        self._order: list[int] = []
        self._turn = 0
        self._insurance_settled = False

    # -- queries ---------------------------------------------------------------------------

    @property
    def up_card(self) -> Card | None:
        """The dealer's up card, once dealt."""
        return self.dealer.cards[0] if self.dealer.cards else None

    @property
    def hole_card(self) -> Card | None:
        """The dealer's hole card (known to the engine through the card-reading shoe)."""
        return self.dealer.cards[1] if len(self.dealer.cards) > 1 else None

    @property
    def is_complete(self) -> bool:
        """True once every wager is settled."""
        return self.phase is _COMPLETE

    def seats_to_decide(self) -> list[int]:
        """Seats whose insurance or EZ Bust decision the open window still waits for."""
        if self.phase is _INSURANCE:
            return [s for s in self._order if not self.seats[s].insurance_decided]
        if self.phase is _EZ_BUST:
            return [s for s in self._order if not self.seats[s].ez_decided]
        seat = self.current_seat
        return [] if seat is None else [seat]

    def next_step(self) -> str:
        """What the table waits for, in words (dealer console, transcripts)."""
        if self.card_request is not None:
            return f"deal a card to {self.card_request.describe()}"
        if self.phase is _WAGERING:
            return "place wagers, then close wagering"
        if self.phase is _INSURANCE:
            return "insurance decisions from seats " + ", ".join(map(str, self.seats_to_decide()))
        if self.phase is _EZ_BUST:
            return "EZ Bust decisions from seats " + ", ".join(map(str, self.seats_to_decide()))
        if self.phase is _PLAYING:
            return f"decision from seat {self.current_seat}"
        return "round complete"

    def legal_actions(self, seat: int) -> list[str]:
        """The verbs ``seat`` may use now, as command words."""
        checks: list[tuple[str, Callable[[], bool]]] = [
            ("insurance", lambda: self.can_take_insurance(seat)),
            ("no-insurance", lambda: self.can_decline_insurance(seat)),
            ("even-money", lambda: self.can_take_even_money(seat)),
            ("ez-bust", lambda: self.can_place_ez_bust(seat)),
            ("no-ez-bust", lambda: self.can_decline_ez_bust(seat)),
            ("hit", lambda: self.can_hit(seat)),
            ("stand", lambda: self.can_stand(seat)),
            ("double", lambda: self.can_double_down(seat)),
            ("split", lambda: self.can_split(seat)),
            ("surrender", lambda: self.can_surrender(seat)),
        ]
        return [name for name, check in checks if check()]

    # -- wagering --------------------------------------------------------------------------

    def verify_placing_wager(self, seat: int, player: str, amount: int) -> None:
        """Raise unless ``player`` may place a Blackjack Wager of ``amount`` at ``seat``."""
        rules = self.rules
        if self.phase is not _WAGERING:
            raise IllegalActionError(
                f"Wagers are placed before the first card is dealt; the round is in {self.phase} "
                f"(PA 633a.6).",
                rule=WAGER,
            )
        if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= rules.max_seats:
            raise IllegalActionError(
                f"Seat {seat!r} does not exist; the layout has seats 1 to {rules.max_seats} "
                "(PA 633a.2).",
                rule="PA 633a.2",
            )
        if seat in self.seats:
            raise IllegalActionError(
                f"Seat {seat} already has a Blackjack Wager (PA 633a.6(d)).", rule="PA 633a.6(d)"
            )
        if not isinstance(player, str) or not player.strip() or " " in player:
            raise IllegalActionError(
                f"{player!r} is not a player name (one word, not empty) ({WAGER}).", rule=WAGER
            )
        self._verify_limits(amount, "Blackjack Wager", "PA 633a.6(d)")

    def can_place_wager(self, seat: int, player: str, amount: int) -> bool:
        """Whether :meth:`place_wager` would succeed."""
        return can(self.verify_placing_wager, seat, player, amount)

    def place_wager(self, seat: int, player: str, amount: int) -> Operation:
        """Place ``player``'s Blackjack Wager (§ 633a.6(d)) of ``amount`` cents at ``seat``."""
        self.verify_placing_wager(seat, player, amount)
        wager_id = self._new_wager(seat, player, WagerKind.BLACKJACK, amount, 0)
        state = SeatState(seat, player, amount)
        state.hands.append(PlayerHand(0, Hand(), wager_id, amount))
        self.seats[seat] = state
        return self._log(Operation("wager", seat=seat, hand=0, amount=amount, note=player))

    def verify_closing_wagering(self) -> None:
        """Raise unless wagering can close and the deal begin."""
        if self.phase is not _WAGERING:
            raise IllegalActionError(f"Wagering is already closed ({DEAL}).", rule=DEAL)
        if not self.seats:
            raise IllegalActionError(
                f"No seat has a Blackjack Wager; there is nothing to deal ({DEAL}).", rule=DEAL
            )

    def close_wagering(self) -> Operation:
        """No more wagers: deal the initial cards (§ 633a.7 order, seat 1 first)."""
        self.verify_closing_wagering()
        self._order = sorted(self.seats)
        self.seats = {number: self.seats[number] for number in self._order}
        first = [target_of("seat", seat, 0) for seat in self._order]
        self._deal_queue = [*first, target_of("up"), *first, target_of("hole")]
        self.phase = _DEALING
        operation = self._log(Operation("deal", note=f"{len(self._order)} seat(s)"))
        self._advance()
        return operation

    # -- cards -----------------------------------------------------------------------------

    def _receive(self, target: CardTarget, card: Card) -> Operation:
        self._count_card(card)
        if target.kind == "seat":
            for player_hand in self.seats[target.seat].hands:  # type: ignore[index]
                if player_hand.index == target.hand:
                    player_hand.hand.add(card)
                    player_hand.awaiting_card = False
                    break
        else:
            self.dealer.add(card)
        if self.phase is _DEALING:
            self._deal_queue.pop(0)
        operation: Operation = new_record(
            Operation,
            ("card", target.seat, target.hand, None, card, target.label, None, None, None),
        )
        self.operations.append(operation)
        return operation

    # -- insurance and even money (§ 633a.8) -----------------------------------------------

    def _verify_window(self, seat: int, phase: Phase, what: str, rule: str) -> SeatState:
        if self.phase is not phase:
            raise IllegalActionError(
                f"{what} is not open now; the round is in {self.phase} ({rule}).", rule=rule
            )
        state = self.seats.get(seat)
        if state is None:
            raise IllegalActionError(f"Seat {seat!r} has no Blackjack Wager ({rule}).", rule=rule)
        return state

    def verify_taking_insurance(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may insure for ``amount`` (at most half its wager, § 633a.8)."""
        state = self._verify_window(seat, _INSURANCE, "Insurance", INSURANCE)
        if state.insurance_decided:
            raise IllegalActionError(
                f"Seat {seat} has already decided on insurance ({INSURANCE}).", rule=INSURANCE
            )
        self._verify_insurance_amount(state.wager, amount, INSURANCE, "the Blackjack Wager")

    def can_take_insurance(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`take_insurance` would succeed."""
        return can(self.verify_taking_insurance, seat, amount)

    def take_insurance(self, seat: int, amount: int | None = None) -> Operation:
        """Insure ``seat`` for ``amount`` (default: half the Blackjack Wager); pays 2 to 1."""
        self.verify_taking_insurance(seat, amount)
        state = self.seats[seat]
        amount = state.wager // 2 if amount is None else amount
        state.insurance_decided = True
        state.insurance_wager_id = self._new_wager(
            seat, state.player, WagerKind.INSURANCE, amount, None
        )
        command = f"{seat} insurance" + (
            "" if amount == state.wager // 2 else f" {format_cents(amount)}"
        )
        operation = self._log(Operation("insurance", seat=seat, amount=amount, command=command))
        self._advance()
        return operation

    def verify_declining_insurance(self, seat: int) -> None:
        """Raise unless ``seat`` may decline insurance now."""
        state = self._verify_window(seat, _INSURANCE, "Insurance", INSURANCE)
        if state.insurance_decided:
            raise IllegalActionError(
                f"Seat {seat} has already decided on insurance ({INSURANCE}).", rule=INSURANCE
            )

    def can_decline_insurance(self, seat: int) -> bool:
        """Whether :meth:`decline_insurance` would succeed."""
        return can(self.verify_declining_insurance, seat)

    def decline_insurance(self, seat: int) -> Operation:
        """``seat`` takes no insurance."""
        self.verify_declining_insurance(seat)
        self.seats[seat].insurance_decided = True
        operation = self._log(Operation("no-insurance", seat=seat, command=f"{seat} no-insurance"))
        self._advance()
        return operation

    def verify_taking_even_money(self, seat: int) -> None:
        """Raise unless ``seat`` holds a Blackjack against an up ace with even money offered."""
        state = self._verify_window(seat, _INSURANCE, "Even money", EVEN_MONEY)
        if not self.rules.even_money:
            raise IllegalActionError(
                f"Even money is not offered under these rules ({EVEN_MONEY}).", rule=EVEN_MONEY
            )
        if state.insurance_decided:
            raise IllegalActionError(
                f"Seat {seat} has already decided on insurance ({EVEN_MONEY}).", rule=EVEN_MONEY
            )
        if not state.hands[0].hand.is_blackjack:
            raise IllegalActionError(
                f"Even money is offered only to a player Blackjack; seat {seat} holds "
                f"{state.hands[0].hand.describe()} ({EVEN_MONEY}).",
                rule=EVEN_MONEY,
            )

    def can_take_even_money(self, seat: int) -> bool:
        """Whether :meth:`take_even_money` would succeed."""
        return can(self.verify_taking_even_money, seat)

    def take_even_money(self, seat: int) -> Operation:
        """Settle ``seat``'s Blackjack at 1 to 1 now, before the peek (§ 633a.8(e))."""
        self.verify_taking_even_money(seat)
        state = self.seats[seat]
        state.insurance_decided = True
        hand = state.hands[0]
        hand.done = True
        operation = self._log(Operation("even-money", seat=seat, command=f"{seat} even-money"))
        self._settle_hand(state, hand, _R_EVEN_MONEY, 2 * hand.amount, EVEN_MONEY)
        self._advance()
        return operation

    def verify_closing_insurance(self) -> None:
        """Raise unless the insurance window is open."""
        if self.phase is not _INSURANCE:
            raise IllegalActionError(
                f"The insurance window is not open; the round is in {self.phase} ({INSURANCE}).",
                rule=INSURANCE,
            )

    def close_insurance(self) -> Operation:
        """The dealer closes the insurance window: undecided seats take no insurance."""
        self.verify_closing_insurance()
        for state in self.seats.values():
            state.insurance_decided = True
        operation = self._log(Operation("close-insurance", command="dealer close-insurance"))
        self._advance()
        return operation

    # -- EZ Bust (633b.16) -----------------------------------------------------------------

    def verify_placing_ez_bust(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may place an EZ Bust wager of ``amount`` now.

        Offered after the dealer's two cards when the up card is 2–6 (633b.16(c)), to a
        Blackjack too ((c)(1)); one more each time the player splits ((c)(2)); each at most the
        initial Blackjack Wager ((d)).
        """
        rule = "PA 633b.16(c)"
        if not self.rules.ez_bust:
            raise IllegalActionError(
                "The EZ Bust wager is not offered under these rules (PA 633b.16(a)).",
                rule="PA 633b.16(a)",
            )
        state = self.seats.get(seat)
        if state is None:
            raise IllegalActionError(
                f"Seat {seat!r} has no Blackjack Wager (PA 633b.16(a)).", rule="PA 633b.16(a)"
            )
        if self.phase is _EZ_BUST:
            if state.ez_decided:
                raise IllegalActionError(
                    f"Seat {seat} has already decided on EZ Bust ({rule}).", rule=rule
                )
        elif self.phase is _PLAYING and self._ez_window_opened():
            if self.current_seat != seat:
                raise IllegalActionError(
                    f"An additional EZ Bust wager is placed when splitting, in turn; it is seat "
                    f"{self.current_seat}'s turn (PA 633b.16(c)(2)).",
                    rule="PA 633b.16(c)(2)",
                )
            if state.ez_split_wagers >= state.splits:
                raise IllegalActionError(
                    f"Seat {seat} has placed {state.ez_split_wagers} additional EZ Bust wager(s) "
                    f"and split {state.splits} time(s): one more is allowed only with each split "
                    "(PA 633b.16(c)(2)).",
                    rule="PA 633b.16(c)(2)",
                )
            if any(hand.settled for hand in state.hands):
                raise IllegalActionError(
                    f"Seat {seat} already has a settled hand; an EZ Bust wager must settle before "
                    "the player's Blackjack Wagers (PA 633b.16(h)).",
                    rule="PA 633b.16(h)",
                )
        else:
            raise IllegalActionError(
                "EZ Bust is offered only after the dealer's two cards when the up card is "
                f"2, 3, 4, 5 or 6; the round is in {self.phase} ({rule}).",
                rule=rule,
            )
        if amount is not None:
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
                raise IllegalActionError(
                    f"An EZ Bust wager of {amount!r} is not a positive amount (PA 633b.16(d)).",
                    rule="PA 633b.16(d)",
                )
            if amount > state.wager:
                raise IllegalActionError(
                    f"An EZ Bust wager of {format_cents(amount)} exceeds the initial Blackjack "
                    f"Wager of {format_cents(state.wager)} (PA 633b.16(d)).",
                    rule="PA 633b.16(d)",
                )
            if amount % self.rules.betting_unit:
                raise IllegalActionError(
                    f"An EZ Bust wager of {format_cents(amount)} is not a multiple of the betting "
                    f"unit {format_cents(self.rules.betting_unit)} (PA 633a.6).",
                    rule=WAGER,
                )

    def _ez_window_opened(self) -> bool:
        up = self.up_card
        return self.rules.ez_bust and up is not None and 2 <= up.points <= 6

    def can_place_ez_bust(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`place_ez_bust` would succeed."""
        return can(self.verify_placing_ez_bust, seat, amount)

    def place_ez_bust(self, seat: int, amount: int | None = None) -> Operation:
        """Place an EZ Bust wager (default: equal to the initial Blackjack Wager); 1 to 1."""
        self.verify_placing_ez_bust(seat, amount)
        state = self.seats[seat]
        amount = state.wager if amount is None else amount
        if self.phase is _EZ_BUST:
            state.ez_decided = True
        else:
            state.ez_split_wagers += 1
        state.ez_wager_ids.append(
            self._new_wager(seat, state.player, WagerKind.EZ_BUST, amount, None)
        )
        command = f"{seat} ez-bust" + ("" if amount == state.wager else f" {format_cents(amount)}")
        operation = self._log(Operation("ez-bust", seat=seat, amount=amount, command=command))
        self._advance()
        return operation

    def verify_declining_ez_bust(self, seat: int) -> None:
        """Raise unless the EZ Bust window is open and ``seat`` has not decided."""
        state = self._verify_window(seat, _EZ_BUST, "The EZ Bust window", "PA 633b.16(c)")
        if state.ez_decided:
            raise IllegalActionError(
                f"Seat {seat} has already decided on EZ Bust (PA 633b.16(c)).",
                rule="PA 633b.16(c)",
            )

    def can_decline_ez_bust(self, seat: int) -> bool:
        """Whether :meth:`decline_ez_bust` would succeed."""
        return can(self.verify_declining_ez_bust, seat)

    def decline_ez_bust(self, seat: int) -> Operation:
        """``seat`` places no EZ Bust wager."""
        self.verify_declining_ez_bust(seat)
        self.seats[seat].ez_decided = True
        operation = self._log(Operation("no-ez-bust", seat=seat, command=f"{seat} no-ez-bust"))
        self._advance()
        return operation

    def close_ez_bust(self) -> Operation:
        """The dealer closes the EZ Bust window: undecided seats place none."""
        if self.phase is not _EZ_BUST:
            raise IllegalActionError(
                f"The EZ Bust window is not open; the round is in {self.phase} (PA 633b.16(c)).",
                rule="PA 633b.16(c)",
            )
        for state in self.seats.values():
            state.ez_decided = True
        operation = self._log(Operation("close-ez-bust", command="dealer close-ez-bust"))
        self._advance()
        return operation

    # -- player decisions ------------------------------------------------------------------

    def verify_doubling_down(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may double its current hand by ``amount`` (§ 633a.10)."""
        hand = self._verify_turn(seat, "double down", DOUBLE)
        self._verify_double_start(
            hand.hand,
            rule=DOUBLE,
            after_split_rule=f"{SPLIT}(c)",
            split_aces=hand.split_aces,
            split_rule=SPLIT,
            no_draw_rule=DEAL,
        )
        self._verify_double(hand.hand.total, hand.amount, amount, DOUBLE)

    def can_double_down(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`double_down` would succeed."""
        return can(self.verify_doubling_down, seat, amount)

    def double_down(self, seat: int, amount: int | None = None) -> Operation:
        """Double ``seat``'s current hand (default: by its full wager) and take one card."""
        self.verify_doubling_down(seat, amount)
        hand = self.current_hand
        assert hand is not None
        amount = hand.amount if amount is None else amount
        command = f"{seat} double" + ("" if amount == hand.amount else f" {format_cents(amount)}")
        hand.doubled = amount
        hand.amount += amount
        hand.acted = True
        hand.awaiting_card = True
        self._restake(hand.wager_id, hand.amount)
        operation = self._log(
            Operation("double", seat=seat, hand=hand.index, amount=amount, command=command)
        )
        self._advance()
        return operation

    def verify_splitting(self, seat: int) -> None:
        """Raise unless ``seat`` may split its current hand (§ 633a.11)."""
        hand = self._verify_turn(seat, "split", SPLIT)
        state = self.seats[seat]
        self._verify_split(
            hand.hand.cards, len(state.hands), hand.split_aces, f"{SPLIT}(a)", f"{SPLIT}(c)"
        )

    def can_split(self, seat: int) -> bool:
        """Whether :meth:`split` would succeed."""
        return can(self.verify_splitting, seat)

    def split(self, seat: int) -> Operation:
        """Split ``seat``'s current pair into two hands, each with the original wager
        (§ 633a.11(a)); the hand on the dealer's left is completed first ((b))."""
        self.verify_splitting(seat)
        state = self.seats[seat]
        hand = self.current_hand
        assert hand is not None
        first, second = hand.hand.cards
        aces = first.is_ace
        hand.hand = Hand([first], from_split=True)
        hand.split_aces = aces
        hand.acted = True
        hand.awaiting_card = True
        new_index = len(state.hands)
        position = state.hands.index(hand) + 1
        wager_id = self._new_wager(seat, state.player, WagerKind.BLACKJACK, state.wager, new_index)
        new_hand = PlayerHand(
            new_index,
            Hand([second], from_split=True),
            wager_id,
            state.wager,
            split_aces=aces,
            acted=True,
            awaiting_card=True,
        )
        state.hands.insert(position, new_hand)
        state.splits += 1
        operation = self._log(
            Operation(
                "split",
                seat=seat,
                hand=hand.index,
                amount=state.wager,
                command=f"{seat} split",
                note=f"new hand {new_index}",
            )
        )
        self._advance()
        return operation

    def verify_surrendering(self, seat: int) -> None:
        """Raise unless ``seat`` may surrender (late surrender, first two cards, § 633a.9)."""
        hand = self._verify_turn(seat, "surrender", SURRENDER)
        state = self.seats[seat]
        if not self.rules.late_surrender:
            raise IllegalActionError(
                f"Surrender is not offered under these rules ({SURRENDER}).", rule=SURRENDER
            )
        if len(state.hands) != 1 or hand.acted or len(hand.hand) != 2:
            raise IllegalActionError(
                f"Surrender is allowed only on the first two cards, before any other decision "
                f"and not after a split ({SURRENDER}).",
                rule=SURRENDER,
            )

    def can_surrender(self, seat: int) -> bool:
        """Whether :meth:`surrender` would succeed."""
        return can(self.verify_surrendering, seat)

    def surrender(self, seat: int) -> Operation:
        """Give up the hand and half its wager (§ 633a.9)."""
        self.verify_surrendering(seat)
        hand = self.current_hand
        assert hand is not None
        hand.acted = True
        hand.surrendered = True
        hand.done = True
        operation = self._log(
            Operation("surrender", seat=seat, hand=hand.index, command=f"{seat} surrender")
        )
        self._settle_early(self.seats[seat], hand)
        self._advance()
        return operation

    # -- commands (notation) ---------------------------------------------------------------

    _DEALER_VERBS: ClassVar[dict[str, str]] = {
        "close-insurance": "close_insurance",
        "close-ez-bust": "close_ez_bust",
        "close-wagering": "close_wagering",
    }
    _ACTOR_VERBS: ClassVar[dict[str, tuple[str, bool]]] = {
        "insurance": ("take_insurance", True),
        "ez-bust": ("place_ez_bust", True),
        "double": ("double_down", True),
        "no-insurance": ("decline_insurance", False),
        "even-money": ("take_even_money", False),
        "no-ez-bust": ("decline_ez_bust", False),
        "hit": ("hit", False),
        "stand": ("stand", False),
        "split": ("split", False),
        "surrender": ("surrender", False),
    }

    def apply(self, command: Command | str) -> Operation:
        """Apply one command in the text notation (``"2 hit"``, ``"dealer close-insurance"``)."""
        if isinstance(command, str):
            command = Command.parse(command)
        return self._dispatch(command)

    # -- the automatic steps ---------------------------------------------------------------

    def _advance(self) -> None:
        """Run dealer and house steps until a decision or a card from the reader is needed."""
        while self.card_request is None:
            phase = self.phase
            if phase is _DEALING:
                queue = self._deal_queue
                if not queue:
                    self._after_deal()
                elif self.shoe is None:
                    self.card_request = queue[0]
                else:
                    draw = self.shoe.draw
                    while queue:  # _receive takes each target off the queue
                        self._receive(queue[0], draw())
            elif phase is _INSURANCE:
                if any(not s.insurance_decided for s in self.seats.values()):
                    return
                self._after_insurance()
            elif phase is _EZ_BUST:
                if any(not s.ez_decided for s in self.seats.values()):
                    return
                self.phase = _PLAYING
            elif phase is _PLAYING:
                if not self._play_step():
                    return
            elif phase is _DEALER:
                self._dealer_step()
            else:
                return

    def _after_deal(self) -> None:
        up = self.up_card
        assert up is not None
        if up.is_ace and self.rules.insurance:
            self.phase = _INSURANCE
        else:
            self._after_insurance()

    def _after_insurance(self) -> None:
        up = self.up_card
        assert up is not None
        if self.rules.hole_card_peek and (up.is_ace or up.is_ten_value):
            self.dealer_blackjack = self.dealer.is_blackjack
            self._log(
                Operation("peek", note="Blackjack" if self.dealer_blackjack else "no Blackjack")
            )
            self._settle_insurance()
            if self.dealer_blackjack:
                self._reveal_hole_card()
                self.phase = _DEALER
                return
        elif not (up.is_ace or up.is_ten_value):
            self.dealer_blackjack = False
        self.phase = _EZ_BUST if self._ez_window_opened() else _PLAYING

    def _play_step(self) -> bool:
        """One automatic step of the playing phase; False when a player decision is needed."""
        if self._turn >= len(self._order):
            self.phase = _DEALER
            return True
        state = self.seats[self._order[self._turn]]
        for hand in state.hands:
            if not hand.done:
                break
        else:
            self._turn += 1
            return True
        if hand.awaiting_card:
            self._request(target_of("seat", state.number, hand.index))
            return True
        cards = hand.hand
        finished = (
            cards.total >= 21
            or (hand.doubled and len(cards) >= 3)
            or (
                hand.split_aces
                and self.rules.one_card_to_split_aces
                and len(cards) == 2
                and not (
                    cards.cards[1].is_ace
                    and self.rules.resplit_aces
                    and len(state.hands) < self.rules.max_split_hands
                )
            )
        )
        if finished:
            hand.done = True
            self._settle_early(state, hand)
            return True
        return False

    def _settle_early(self, state: SeatState, hand: PlayerHand) -> None:
        """Settle a finished hand at once when nothing later can change it: a bust, a surrender
        or a Blackjack once the dealer's Blackjack is ruled out. A seat with an EZ Bust wager
        waits: EZ Bust settles before its Blackjack Wagers (633b.16(h))."""
        if state.ez_wager_ids or hand.settled:
            return
        if hand.hand.is_bust:
            self._settle_hand(state, hand, _R_LOSE, 0, DEAL)
        elif self.dealer_blackjack is False and hand.surrendered:
            self._settle_surrender(state, hand)
        elif self.dealer_blackjack is False and hand.hand.is_blackjack:
            self._settle_blackjack(state, hand)

    def _dealer_step(self) -> None:
        dealer = self.dealer
        if not self.hole_card_revealed:
            self._reveal_hole_card()
            if self.dealer_blackjack is None:
                self.dealer_blackjack = dealer.is_blackjack
                self._settle_insurance()
            return
        if not self.dealer_blackjack and dealer.total < 17 and self._dealer_must_draw():
            self._request(target_of("dealer"))
            return
        self._settle_round()

    def _dealer_must_draw(self) -> bool:
        """The dealer completes the hand while any Blackjack Wager needs it, or any EZ Bust
        wager is live (A-22), unless the push-all option applies (633b.16(g))."""
        hands = [hand for state in self.seats.values() for hand in state.hands]
        if any(h.is_live and not h.hand.is_blackjack for h in hands):
            return True
        if not any(state.ez_wager_ids for state in self.seats.values()):
            return False
        if self._ez_push_all_applies():
            self.ez_push_all = True
            return False
        return True

    def _ez_push_all_applies(self) -> bool:
        """The push-all option (633b.16(g)) is chosen, an EZ Bust wager was placed and every
        Blackjack Wager ended in a Blackjack or a bust, whatever the dealer's hand."""
        return (
            self.rules.ez_bust_push_all
            and any(state.ez_wager_ids for state in self.seats.values())
            and all(
                hand.hand.is_blackjack or hand.hand.is_bust
                for state in self.seats.values()
                for hand in state.hands
            )
        )

    def _reveal_hole_card(self) -> None:
        self.hole_card_revealed = True
        hole = self.hole_card
        self._log(
            Operation("reveal", card=hole, target="dealer hole card", note=self.dealer.describe())
        )

    # -- settlement ------------------------------------------------------------------------

    def _settle_insurance(self) -> None:
        if self._insurance_settled:
            return
        self._insurance_settled = True
        for state in self.seats.values():
            wager_id = state.insurance_wager_id
            if wager_id is None:
                continue
            amount = self.wagers[wager_id].amount
            if self.dealer_blackjack:
                paid, rounding = winnings(amount, INSURANCE_PAYS, self.rules.rounding)
                self._record(wager_id, _R_WIN, amount + paid, INSURANCE, rounding)
            else:
                self._record(wager_id, _R_LOSE, 0, INSURANCE)

    def _settle_round(self) -> None:
        """EZ Bust first (633b.16(h)), then every Blackjack Wager still open, seat by seat."""
        dealer = self.dealer
        drew = len(dealer.cards) >= 3
        if self._ez_push_all_applies():
            # Also when the dealer stood on two cards (6 up, ace in the hole): (g) depends only
            # on how the Blackjack Wagers ended.
            self.ez_push_all = True
        for state in self.seats.values():
            for wager_id in state.ez_wager_ids:
                amount = self.wagers[wager_id].amount
                if self.ez_push_all:
                    self._record(wager_id, _R_PUSH, amount, "PA 633b.16(g)")
                elif drew and dealer.is_bust:
                    self._record(wager_id, _R_WIN, 2 * amount, "PA 633b.16(f)(1), (i)")
                elif drew:
                    self._record(wager_id, _R_LOSE, 0, "PA 633b.16(f)(2)")
                else:
                    self._record(wager_id, _R_LOSE, 0, "PA 633b.16(f); A-21")
        for state in self.seats.values():
            self._settle_seat(state)
        self.phase = _COMPLETE
        self._log(Operation("complete", note=self.dealer.describe()))

    def _settle_seat(self, state: SeatState) -> None:
        dealer = self.dealer
        dealer_total = dealer.total
        open_hands = [hand for hand in state.hands if not hand.settled]
        if self.dealer_blackjack:
            self._settle_against_dealer_blackjack(state, open_hands)
            return
        for hand in open_hands:
            cards = hand.hand
            if hand.surrendered:
                self._settle_surrender(state, hand)
            elif cards.is_bust:
                self._settle_hand(state, hand, _R_LOSE, 0, DEAL)
            elif cards.is_blackjack:
                self._settle_blackjack(state, hand)
            elif dealer.is_bust or cards.total > dealer_total:
                self._settle_hand(state, hand, _R_WIN, 2 * hand.amount, PAYOUT)
            elif cards.total == dealer_total:
                self._settle_hand(state, hand, _R_PUSH, hand.amount, DEAL)
            else:
                self._settle_hand(state, hand, _R_LOSE, 0, DEAL)

    def _settle_against_dealer_blackjack(
        self, state: SeatState, open_hands: list[PlayerHand]
    ) -> None:
        """A dealer Blackjack collects only the original wager from a seat that split or
        doubled (§ 633a.11(d), § 633a.10(b)); busted hands stay lost (A-10's reading)."""
        busted = sum(hand.amount for hand in state.hands if hand.hand.is_bust)
        still_to_lose = max(state.wager - busted, 0)
        clause = (
            f"{SPLIT}(d)"
            if state.splits
            else (f"{DOUBLE}(b)" if any(hand.doubled for hand in state.hands) else DEAL)
        )
        for hand in open_hands:
            cards = hand.hand
            if cards.is_bust:
                self._settle_hand(state, hand, _R_LOSE, 0, DEAL)
            elif hand.surrendered:
                self._settle_hand(state, hand, _R_LOSE, 0, SURRENDER)
            elif cards.is_blackjack:
                self._settle_hand(state, hand, _R_PUSH, hand.amount, PAYOUT)
            else:
                lost = min(still_to_lose, hand.amount)
                still_to_lose -= lost
                result = _R_LOSE if lost else _R_PUSH
                self._settle_hand(state, hand, result, hand.amount - lost, clause)

    def _settle_blackjack(self, state: SeatState, hand: PlayerHand) -> None:
        paid, rounding = winnings(hand.amount, self.rules.blackjack_pays, self.rules.rounding)
        self._settle_hand(state, hand, _R_BLACKJACK, hand.amount + paid, PAYOUT, rounding)

    def _settle_surrender(self, state: SeatState, hand: PlayerHand) -> None:
        exact = Fraction(hand.amount, 2)
        returned = self.rules.rounding.round(exact)
        self._settle_hand(state, hand, _R_SURRENDER, returned, SURRENDER, exact - returned)

    def _settle_hand(
        self,
        state: SeatState,
        hand: PlayerHand,
        result: Result,
        returned: int,
        clause: str,
        rounding: Fraction = Fraction(0),
    ) -> None:
        hand.settled = True
        self._record(hand.wager_id, result, returned, clause, rounding)

    # -- bookkeeping -----------------------------------------------------------------------


def transcript(round_: ClassicRound) -> list[str]:
    """A readable account of a round, one line per seat hand and one for the dealer::

    Seat 2 (bob): 10♠ 6♥ = 16, hits 5♦ = 21 … wins $10.00 (PA 633a.13)
    """
    hands: dict[tuple[int, int], Hand] = {}
    lines: dict[tuple[int, int], list[str]] = {}
    side: dict[int, list[str]] = {}
    dealer = Hand()
    dealer_text: list[str] = []
    pending: dict[tuple[int, int], str] = {}
    players = {number: state.player for number, state in round_.seats.items()}
    for op in round_.operations:
        kind = op.kind
        if kind == "card" and op.card is not None:
            if op.seat is not None and op.hand is not None:
                key = (op.seat, op.hand)
                hand = hands.setdefault(key, Hand(from_split=op.hand > 0))
                hand.add(op.card)
                verb = pending.pop(key, None)
                parts = lines.setdefault(key, [])
                if verb is not None:
                    parts.append(f"{verb} {op.card.display} = {hand.total_text()}")
                elif len(hand.cards) == 2:
                    parts.append(hand.describe())
            else:
                dealer.add(op.card)
                if op.target == "dealer":
                    dealer_text.append(f"draws {op.card.display} = {dealer.total_text()}")
                elif op.target == "dealer hole card":
                    dealer_text.append("hole card face down")
        elif kind in ("hit", "double") and op.seat is not None and op.hand is not None:
            extra = f" {format_cents(op.amount)}" if kind == "double" and op.amount else ""
            pending[(op.seat, op.hand)] = "hits" if kind == "hit" else f"doubles{extra}, draws"
        elif kind == "split" and op.seat is not None and op.hand is not None:
            key = (op.seat, op.hand)
            old = hands[key]
            first, second = old.cards
            new_index = int((op.note or "new hand 0").split()[-1])
            hands[key] = Hand([first], from_split=True)
            hands[(op.seat, new_index)] = Hand([second], from_split=True)
            lines.setdefault(key, []).append(f"splits {first.display} {second.display}")
            lines[(op.seat, new_index)] = [f"split from hand {op.hand + 1}: {second.display}"]
            pending[key] = "takes"
            pending[(op.seat, new_index)] = "takes"
        elif kind in ("stand", "surrender") and op.seat is not None and op.hand is not None:
            lines.setdefault((op.seat, op.hand), []).append(
                "stands" if kind == "stand" else "surrenders"
            )
        elif kind in ("insurance", "ez-bust") and op.seat is not None and op.amount is not None:
            name = "insures" if kind == "insurance" else "places EZ Bust"
            side.setdefault(op.seat, []).append(f"{name} {format_cents(op.amount)}")
        elif kind == "even-money" and op.seat is not None:
            side.setdefault(op.seat, []).append("takes even money")
        elif kind == "peek":
            dealer_text.append(f"card reader: {op.note}")
        elif kind == "reveal" and op.card is not None:
            dealer_text.append(f"turns {op.card.display} = {dealer.total_text()}")
        elif kind == "settle" and op.settlement is not None:
            settlement = op.settlement
            text = f"{_KIND_LABELS[settlement.kind]} {settlement.describe()}"
            if settlement.hand is None:
                side.setdefault(settlement.seat, []).append(text)
            else:
                lines.setdefault((settlement.seat, settlement.hand), []).append(text)
    out: list[str] = []
    up = dealer.cards[0].display if dealer.cards else "?"
    out.append(f"Dealer: up card {up}; " + ", ".join(dealer_text))
    for (seat, index), parts in sorted(lines.items()):
        label = f"Seat {seat} ({players.get(seat, '?')})" + (f" hand {index + 1}" if index else "")
        out.append(f"{label}: " + ", ".join(parts))
    for seat, parts in sorted(side.items()):
        out.append(f"Seat {seat} ({players.get(seat, '?')}) side wagers: " + ", ".join(parts))
    return out


_KIND_LABELS = {
    WagerKind.BLACKJACK: "Blackjack Wager",
    WagerKind.INSURANCE: "insurance",
    WagerKind.EZ_BUST: "EZ Bust",
}
