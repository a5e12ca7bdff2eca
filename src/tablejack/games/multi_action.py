"""NJ multi-action blackjack (N.J.A.C. 13:47): the ``multi-action`` game.

Each player backs at least two of three betting spots ((f)(1)) and plays **one** hand; the
dealer's first card is dealt face up and kept for all three dealer rounds ((f)(2)). After every
player has played, the dealer completes a hand from that first card and settles the first spot's
wagers ((f)(4)); discards only the hit cards, moves the first card to the second square and
completes a new hand for the second spot ((f)(6)), then the third ((f)(7)); then all cards are
collected ((f)(8)).

Citations name the unnumbered NJ section as ``NJ MAB`` ("NJ multi-action blackjack") followed by
the subsection, e.g. ``"NJ MAB (f)(1)"``; where the text is silent the ambiguity decision of
``referenced-rules.md`` §5 is added (``"NJ MAB (f)(3); A-26"``). ``docs/multi-action.md`` lists
every decision.

The round follows the pattern of :mod:`tablejack.games.classic`: explicit phases, ``verify_…``
raises, ``can_…`` answers, each verb verifies, mutates, appends an :class:`Operation` and lets
the automatic dealer steps run until a player decision or a card from the reader is needed.

>>> from tablejack.core import Shoe
>>> cards = "10S 9H 7D 6C 5S 8C 7C 9D"
>>> table = MultiActionRound(MultiActionRules(decks=1), Shoe.prearranged(cards, decks=1))
>>> _ = table.place_wager(1, "ann", (1000, 1000, 1000))
>>> _ = table.close_wagering()
>>> _ = table.stand(1)
>>> [table.dealer_hands[k].describe() for k in (1, 2, 3)]
['9♥ 6♣ 5♠ = 20', '9♥ 8♣ = 17', '9♥ 7♣ 9♦ = 25 bust']
>>> [(s.spot, s.result.value, s.net) for s in table.settlements]
[(1, 'lose', -1000), (2, 'push', 0), (3, 'win', 1000)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Any, ClassVar

from tablejack.core.cards import Card
from tablejack.core.commands import Command
from tablejack.core.errors import IllegalActionError, InvalidNotationError, RulesError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, format_odds, parse_money, winnings
from tablejack.core.records import (
    Operation,
    Result,
    WagerKind,
)
from tablejack.core.round import can
from tablejack.core.rules import TableRules
from tablejack.core.shoe import Shoe
from tablejack.games.turns import SeatTurns

__all__ = [
    "CardTarget",
    "MultiActionRound",
    "MultiActionRules",
    "Phase",
    "PlayerHand",
    "SeatState",
    "SpotWager",
    "parse_command",
    "seat_players",
    "seats_of",
    "transcript",
]

DEFINITIONS = "NJ MAB (a)"
DECKS = "NJ MAB (b)(2)"
DEAL = "NJ MAB (d)(1)"
PLAYERS = "NJ MAB (e)"
WAGER = "NJ MAB (f)(1)"
FIRST_CARD = "NJ MAB (f)(2)"
PLAY = "NJ MAB (f)(3)"
DEALER = "NJ MAB (f)(4)"
BLACKJACK = "NJ MAB (f)(5)"
ROUND_TWO = "NJ MAB (f)(6)"
ROUND_THREE = "NJ MAB (f)(7)"
COLLECT = "NJ MAB (f)(8)"
DOUBLE = "NJ MAB (a)"
SPLIT = "NJ MAB (a); A-27"
INSURANCE = "NJ MAB (a); A-27"
BUST = "NJ MAB (f)(3); A-26"
DEALER_BLACKJACK = "NJ MAB (f)(5); A-29"
BLACKJACK_PER_ROUND = "NJ MAB (f)(5); A-25"
SKIP = "NJ MAB (f)(1); A-28"
ROUND_CLAUSES = {1: DEALER, 2: f"{DEALER}, (f)(6)", 3: f"{DEALER}, (f)(7)"}
SPOTS = (1, 2, 3)
INSURANCE_PAYS = Fraction(2)
DOUBLE_TOTALS = frozenset({10, 11})
DOUBLE_ACE = "NJ MAB (a), (b)(2)(iii)"
DOUBLE_ACE_VALUES = ("best-total", "one-or-eleven")
"""The readings of an ace in the double-down test (``MultiActionRules.double_ace_value``)."""


# -- rules -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiActionRules(TableRules):
    """NJ multi-action blackjack: one to four decks, up to seven players, three betting spots.

    ``table_minimum``, ``table_maximum`` and ``betting_unit`` apply to each spot's wager.
    Defaults follow ``referenced-rules.md`` §4 and §5 (A-24 to A-29); see
    ``docs/multi-action.md``.

    >>> MultiActionRules().decks, MultiActionRules().minimum_spots
    (4, 2)
    >>> MultiActionRules(decks=6)
    Traceback (most recent call last):
    ...
    tablejack.core.errors.RulesError: decks = 6 is not allowed: NJ multi-action blackjack is dealt from 1 to 4 decks (NJ MAB (b)(2)).
    """

    game: ClassVar[str] = "multi-action"
    allowed_decks: ClassVar[frozenset[int]] = frozenset({1, 2, 3, 4})
    decks_clause: ClassVar[str] = DECKS
    max_seats: ClassVar[int] = 7

    decks: int = 4
    """Decks of 52 shuffled together and used as one: one to four (NJ MAB (b)(2))."""

    minimum_spots: int = 2
    """The fewest of the three betting spots a player must back: 2 (the text's "at least two of
    the three") or 3 (NJ MAB (f)(1))."""

    dealer_hits_soft_17: bool = False
    """H17 if true. The text says "draw to 16 and stand on 17" without naming soft 17; the
    default stands on all 17s (NJ MAB (f)(4); A-24)."""

    double_down: bool = True
    """Double down offered: on a first-two-card total of 10 or 11 only, the wager doubled and
    one more card (NJ MAB (a)). The player names the spots doubled (A-27)."""

    double_ace_value: str = "best-total"
    """How an ace counts for the double-down test of a first-two-card total of 10 or 11 (NJ MAB
    (a)). "best-total" (default): the hand's total as it plays, an ace counting 11 unless that
    exceeds 21, so an ace and a nine are 20 and may not double. "one-or-eleven": the player may
    count an ace as 1 (NJ MAB (b)(2)(iii), "a value of one or 11 at the discretion of the
    player"), so an ace and a nine may double as 10. The text allows both readings."""

    double_after_split: bool = False
    """A split hand may double on 10 or 11 after its second card. The definition speaks of "a
    player's first two cards", so the default is no (NJ MAB (a); project decision)."""

    split_pairs: bool = True
    """Splitting pairs offered: two cards of identical value, each played as a hand, the split
    matched on every backed spot (NJ MAB (a); A-27)."""

    max_split_hands: int = 2
    """The most hands one player's hand may become by splitting (2 = split once, "a pair
    dealt"; up to 4 with resplits) (NJ MAB (a); project decision)."""

    resplit_aces: bool = False
    """RSA: split aces may be split again (within ``max_split_hands``)."""

    one_card_to_split_aces: bool = True
    """Each split ace receives exactly one card (industry norm; the NJ text is silent)."""

    insurance: bool = False
    """Insurance offered when the dealer's first card is an ace, to players who backed spot 1,
    up to half the spot-1 wager, paying 2 to 1, settled against the round-1 dealer second card
    only (NJ MAB (a); A-27). Off by default."""

    @classmethod
    def _game_title(cls) -> str:
        return "NJ multi-action blackjack"

    def _check(self) -> None:
        # The NJ clauses first, so that the error names them; then the common checks.
        if not 0.0 < self.penetration <= 1.0:
            raise RulesError(
                f"penetration = {self.penetration!r} must be a fraction in (0, 1] ({DEAL}).",
                rule=DEAL,
            )
        if self.betting_unit < 1:
            raise RulesError(
                f"betting_unit = {self.betting_unit!r} must be at least one cent ({WAGER}).",
                rule=WAGER,
            )
        if self.table_minimum < self.betting_unit or self.table_minimum % self.betting_unit:
            raise RulesError(
                f"table_minimum = {self.table_minimum!r} cents must be a positive multiple of the "
                f"betting unit {self.betting_unit} ({WAGER}).",
                rule=WAGER,
            )
        if self.table_maximum < self.table_minimum or self.table_maximum % self.betting_unit:
            raise RulesError(
                f"table_maximum = {self.table_maximum!r} cents must be at least the minimum "
                f"{self.table_minimum} and a multiple of the betting unit ({WAGER}).",
                rule=WAGER,
            )
        if self.blackjack_pays != Fraction(3, 2):
            raise RulesError(
                f"blackjack_pays = {format_odds(self.blackjack_pays)!r} is not allowed: a "
                f"Blackjack is paid at odds of 3 to 2 ({BLACKJACK}).",
                rule=BLACKJACK,
            )
        super(MultiActionRules, self)._check()  # named: a slotted dataclass has no bare super()
        if self.minimum_spots not in (2, 3):
            raise RulesError(
                f"minimum_spots = {self.minimum_spots!r} must be 2 or 3: a player wagers in at "
                f"least two of the three betting spots ({WAGER}).",
                rule=WAGER,
            )
        if not 2 <= self.max_split_hands <= 4:
            raise RulesError(
                f"max_split_hands = {self.max_split_hands!r} must be from 2 to 4 ({SPLIT}).",
                rule=SPLIT,
            )
        if self.resplit_aces and self.max_split_hands < 3:
            raise RulesError(
                "resplit_aces = true needs max_split_hands of 3 or more: a resplit makes a third "
                f"hand ({SPLIT}).",
                rule=SPLIT,
            )
        self._check_choice("double_ace_value", DOUBLE_ACE_VALUES, DOUBLE_ACE)
        if self.double_after_split and not (self.double_down and self.split_pairs):
            raise RulesError(
                "double_after_split = true needs double_down = true and split_pairs = true "
                f"({DOUBLE}).",
                rule=DOUBLE,
            )


# -- round state -----------------------------------------------------------------------------


class Phase(StrEnum):
    """Where a round stands."""

    WAGERING = "wagering"
    DEALING = "dealing"
    INSURANCE = "insurance"
    PLAYING = "playing"
    DEALER = "dealer"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class CardTarget:
    """Where the next card goes: ``seat`` (with ``seat`` and ``hand``), ``first`` (the dealer's
    first card, face up) or ``dealer`` (a card of dealer round ``dealer_round``)."""

    kind: str
    seat: int | None = None
    hand: int | None = None
    dealer_round: int | None = None

    def describe(self) -> str:
        """Text for the dealer console: ``'seat 2'``, ``'seat 2 hand 2'``, ``'dealer round 3'``."""
        if self.kind == "seat":
            return f"seat {self.seat}" + (f" hand {self.hand + 1}" if self.hand else "")
        if self.kind == "first":
            return "dealer first card"
        return f"dealer round {self.dealer_round}"


@dataclass(slots=True)
class SpotWager:
    """A hand's wager on one betting spot (spot ``k`` is settled in dealer round ``k``)."""

    spot: int
    wager_id: int
    amount: int
    doubled: int = 0
    settled: bool = False


@dataclass(slots=True)
class PlayerHand:
    """The player's hand (or a hand split from it) with one wager per backed spot."""

    index: int
    hand: Hand
    spots: list[SpotWager]
    doubled: bool = False
    split_aces: bool = False
    done: bool = False
    acted: bool = False
    awaiting_card: bool = False

    def wager_on(self, spot: int) -> SpotWager | None:
        """The hand's wager on ``spot``, if the spot is backed."""
        for wager in self.spots:
            if wager.spot == spot:
                return wager
        return None


@dataclass(slots=True)
class SeatState:
    """A seat at the table: the player, the three spot amounts (0 = not backed), the hands."""

    number: int
    player: str
    spots: tuple[int, int, int]
    hands: list[PlayerHand] = field(default_factory=list)
    insurance_decided: bool = False
    insurance_wager_id: int | None = None
    splits: int = 0

    @property
    def backed(self) -> tuple[int, ...]:
        """The spots this player backed (1, 2, 3)."""
        return tuple(spot for spot in SPOTS if self.spots[spot - 1])


class MultiActionRound(SeatTurns):
    """One game of NJ multi-action blackjack: one deal, one hand per player, three dealer
    rounds."""

    game = "multi-action"
    turn_clause = PLAY
    split_clause = SPLIT
    playing_phase = Phase.PLAYING
    irregularity_clause = DEAL

    def __init__(self, rules: MultiActionRules, shoe: Shoe | None = None) -> None:
        if not isinstance(rules, MultiActionRules):
            raise TypeError(
                f"A multi-action round needs MultiActionRules, not {type(rules).__name__}."
            )
        self._start_records(rules, shoe)
        self.rules: MultiActionRules = rules
        self.phase = Phase.WAGERING
        self.seats: dict[int, SeatState] = {}
        self.first_card: Card | None = None
        self.dealer_hands: dict[int, Hand] = {}
        """The dealer's hand of each round played: the first card plus that round's cards."""
        self.dealer_blackjack: dict[int, bool] = {}
        self.skipped_rounds: list[int] = []
        self.dealer_round = 0
        """The dealer round in progress (1–3), 0 before the dealer's turn, 4 when all done."""
        self._deal_queue: list[CardTarget] = []
        self._order: list[int] = []
        self._turn = 0
        self._insurance_settled = False

    # -- queries -------------------------------------------------------------------------------

    @property
    def is_complete(self) -> bool:
        """True once every wager is settled and the cards are collected ((f)(8))."""
        return self.phase is Phase.COMPLETE

    @property
    def up_card(self) -> Card | None:
        """The dealer's first card, face up, used in all three rounds ((f)(2))."""
        return self.first_card

    def seats_to_decide(self) -> list[int]:
        """Seats whose insurance decision is awaited, or the seat in turn."""
        if self.phase is Phase.INSURANCE:
            return [s for s in self._order if not self.seats[s].insurance_decided]
        seat = self.current_seat
        return [] if seat is None else [seat]

    def next_step(self) -> str:
        """What the table waits for, in words."""
        if self.card_request is not None:
            return f"deal a card to {self.card_request.describe()}"
        if self.phase is Phase.WAGERING:
            return "place wagers, then close wagering"
        if self.phase is Phase.INSURANCE:
            return "insurance decisions from seats " + ", ".join(map(str, self.seats_to_decide()))
        if self.phase is Phase.PLAYING:
            return f"decision from seat {self.current_seat}"
        return "round complete"

    def legal_actions(self, seat: int) -> list[str]:
        """The verbs ``seat`` may use now, as command words."""
        checks: list[tuple[str, Callable[[], bool]]] = [
            ("insurance", lambda: self.can_take_insurance(seat)),
            ("no-insurance", lambda: self.can_decline_insurance(seat)),
            ("hit", lambda: self.can_hit(seat)),
            ("stand", lambda: self.can_stand(seat)),
            ("double", lambda: self.can_double_down(seat)),
            ("split", lambda: self.can_split(seat)),
        ]
        return [name for name, check in checks if check()]

    # -- wagering (f)(1) -----------------------------------------------------------------------

    def verify_placing_wager(self, seat: int, player: str, spots: Sequence[int]) -> None:
        """Raise unless ``player`` may wager ``spots`` (three amounts in cents, 0 = spot not
        backed) at ``seat``: before the deal, at least ``minimum_spots`` backed, each backed
        spot within the table limits ((f)(1))."""
        rules = self.rules
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(
                f"Wagers are placed in the betting spots before the first card is dealt; the "
                f"round is in {self.phase} ({WAGER}).",
                rule=WAGER,
            )
        if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= rules.max_seats:
            raise IllegalActionError(
                f"Seat {seat!r} does not exist; up to {rules.max_seats} players sit at seats 1 "
                f"to {rules.max_seats} ({PLAYERS}).",
                rule=PLAYERS,
            )
        if seat in self.seats:
            raise IllegalActionError(f"Seat {seat} already has its wagers ({WAGER}).", rule=WAGER)
        if not isinstance(player, str) or not player.strip() or " " in player:
            raise IllegalActionError(
                f"{player!r} is not a player name (one word, not empty) ({WAGER}).", rule=WAGER
            )
        if isinstance(spots, str) or not isinstance(spots, Sequence) or len(spots) != 3:
            raise IllegalActionError(
                f"A player's wagers are three amounts, one per betting spot (0 for a spot not "
                f"backed), not {spots!r} ({WAGER}).",
                rule=WAGER,
            )
        for spot, amount in zip(SPOTS, spots, strict=True):
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                raise IllegalActionError(
                    f"The spot {spot} wager {amount!r} is not whole cents ({WAGER}).", rule=WAGER
                )
            if amount:
                self._verify_limits(amount, f"spot {spot} wager", WAGER, per=" per spot")
        backed = sum(1 for amount in spots if amount)
        if backed < rules.minimum_spots:
            raise IllegalActionError(
                f"Seat {seat} backs {backed} of the three betting spots; a player wagers in at "
                f"least {_number_word(rules.minimum_spots)} of the three ({WAGER}).",
                rule=WAGER,
            )

    def can_place_wager(self, seat: int, player: str, spots: Sequence[int]) -> bool:
        """Whether :meth:`place_wager` would succeed."""
        return can(self.verify_placing_wager, seat, player, spots)

    def place_wager(self, seat: int, player: str, spots: Sequence[int]) -> Operation:
        """Place ``player``'s wagers at ``seat``: one amount per betting spot, 0 for a spot not
        backed. Each wager enters the player into that part of the game ((f)(1))."""
        self.verify_placing_wager(seat, player, spots)
        amounts = (spots[0], spots[1], spots[2])
        state = SeatState(seat, player, amounts)
        hand = PlayerHand(0, Hand(), [])
        for spot in state.backed:
            amount = amounts[spot - 1]
            hand.spots.append(
                SpotWager(
                    spot,
                    self._new_wager(seat, player, WagerKind.BLACKJACK, amount, 0, spot),
                    amount,
                )
            )
        state.hands.append(hand)
        self.seats[seat] = state
        return self._log(
            Operation(
                "wager", seat=seat, hand=0, amount=sum(amounts), note=f"{player} {_spots(amounts)}"
            )
        )

    def verify_closing_wagering(self) -> None:
        """Raise unless wagering can close and the deal begin."""
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(f"Wagering is already closed ({WAGER}).", rule=WAGER)
        if not self.seats:
            raise IllegalActionError(
                f"No player has placed wagers; there is nothing to deal ({WAGER}).", rule=WAGER
            )

    def close_wagering(self) -> Operation:
        """No more wagers: each player a card in the first square, the dealer's first card face
        up, each player a second card ((f)(1), (f)(2)); seat 1 (the dealer's left) first."""
        self.verify_closing_wagering()
        self._order = sorted(self.seats)
        self.seats = {number: self.seats[number] for number in self._order}
        first = [CardTarget("seat", seat, 0) for seat in self._order]
        self._deal_queue = [*first, CardTarget("first"), *first]
        self.phase = Phase.DEALING
        operation = self._log(Operation("deal", note=f"{len(self._order)} player(s)"))
        self._advance()
        return operation

    # -- cards ---------------------------------------------------------------------------------

    def _receive(self, target: CardTarget, card: Card) -> Operation:
        self._count_card(card)
        if target.kind == "seat":
            assert target.seat is not None and target.hand is not None
            player_hand = next(
                hand for hand in self.seats[target.seat].hands if hand.index == target.hand
            )
            player_hand.hand.add(card)
            player_hand.awaiting_card = False
        elif target.kind == "first":
            self.first_card = card
        else:
            assert target.dealer_round is not None
            self.dealer_hands[target.dealer_round].add(card)
        if self.phase is Phase.DEALING:
            self._deal_queue.pop(0)
        return self._log(
            Operation(
                "card", seat=target.seat, hand=target.hand, card=card, target=target.describe()
            )
        )

    # -- insurance (A-27) ----------------------------------------------------------------------

    def verify_taking_insurance(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may insure for ``amount`` (at most half its spot-1 wager)."""
        state = self._verify_insurance_window(seat)
        self._verify_insurance_amount(state.spots[0], amount, INSURANCE, "the spot 1 wager")

    def _verify_insurance_window(self, seat: int) -> SeatState:
        if self.phase is not Phase.INSURANCE:
            raise IllegalActionError(
                f"Insurance is not open now; the round is in {self.phase} ({INSURANCE}).",
                rule=INSURANCE,
            )
        state = self.seats.get(seat)
        if state is None:
            raise IllegalActionError(f"Seat {seat!r} has no wagers ({INSURANCE}).", rule=INSURANCE)
        if not state.spots[0]:
            raise IllegalActionError(
                f"Insurance is settled against the round-1 dealer hand only; seat {seat} has no "
                f"spot 1 wager ({INSURANCE}).",
                rule=INSURANCE,
            )
        if state.insurance_decided:
            raise IllegalActionError(
                f"Seat {seat} has already decided on insurance ({INSURANCE}).", rule=INSURANCE
            )
        return state

    def can_take_insurance(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`take_insurance` would succeed."""
        return can(self.verify_taking_insurance, seat, amount)

    def take_insurance(self, seat: int, amount: int | None = None) -> Operation:
        """Insure ``seat`` for ``amount`` (default: half the spot 1 wager); pays 2 to 1 if the
        round-1 dealer hand is a Blackjack (A-27)."""
        self.verify_taking_insurance(seat, amount)
        state = self.seats[seat]
        half = state.spots[0] // 2
        amount = half if amount is None else amount
        state.insurance_decided = True
        state.insurance_wager_id = self._new_wager(seat, state.player, WagerKind.INSURANCE, amount)
        command = f"{seat} insurance" + ("" if amount == half else f" {format_cents(amount)}")
        operation = self._log(Operation("insurance", seat=seat, amount=amount, command=command))
        self._advance()
        return operation

    def verify_declining_insurance(self, seat: int) -> None:
        """Raise unless ``seat`` may decline insurance now."""
        self._verify_insurance_window(seat)

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

    def verify_closing_insurance(self) -> None:
        """Raise unless the insurance window is open."""
        if self.phase is not Phase.INSURANCE:
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

    # -- player decisions (f)(3) ---------------------------------------------------------------

    def verify_doubling_down(self, seat: int, spots: Sequence[int] | None = None) -> None:
        """Raise unless ``seat`` may double its current hand on ``spots`` (default: every
        backed spot): a first-two-card total of 10 or 11 only (NJ MAB (a)); the spots named
        must be backed (A-27)."""
        hand = self._verify_turn(seat, "double down", DOUBLE)
        rules = self.rules
        if not rules.double_down:
            raise IllegalActionError(
                f"Double down is not offered under these rules ({DOUBLE}).", rule=DOUBLE
            )
        self._verify_double_start(
            hand.hand,
            rule=DOUBLE,
            after_split_rule=DOUBLE,
            split_aces=hand.split_aces,
            split_rule=SPLIT,
        )
        totals = {hand.hand.total}
        if rules.double_ace_value == "one-or-eleven":
            totals.add(hand.hand.hard_total)  # every ace counted as 1 ((b)(2)(iii))
        if not totals & DOUBLE_TOTALS:
            counted = (
                "; an ace counts 11 here (double_ace_value = best-total, NJ MAB (b)(2)(iii))"
                if hand.hand.is_soft
                else ""
            )
            raise IllegalActionError(
                f"A double down is allowed only when the first two cards total 10 or 11, not "
                f"{hand.hand.total}{counted} ({DOUBLE}).",
                rule=DOUBLE,
            )
        if spots is not None:
            if isinstance(spots, str) or not isinstance(spots, Sequence) or not spots:
                raise IllegalActionError(
                    f"Name the spots to double as numbers 1 to 3, not {spots!r} ({SPLIT}).",
                    rule=SPLIT,
                )
            if len(set(spots)) != len(spots):
                raise IllegalActionError(
                    f"Spots {_spot_list(spots)} name a spot twice ({SPLIT}).", rule=SPLIT
                )
            for spot in spots:
                if isinstance(spot, bool) or spot not in SPOTS:
                    raise IllegalActionError(
                        f"There is no betting spot {spot!r}; the spots are 1, 2 and 3 ({WAGER}).",
                        rule=WAGER,
                    )
                if hand.wager_on(spot) is None:
                    raise IllegalActionError(
                        f"Seat {seat} has no wager on spot {spot}; a double is made on backed "
                        f"spots only ({DOUBLE}; A-27).",
                        rule=f"{DOUBLE}; A-27",
                    )

    def can_double_down(self, seat: int, spots: Sequence[int] | None = None) -> bool:
        """Whether :meth:`double_down` would succeed."""
        return can(self.verify_doubling_down, seat, spots)

    def double_down(self, seat: int, spots: Sequence[int] | None = None) -> Operation:
        """Double the wager on ``spots`` (default: every backed spot) and draw one card."""
        self.verify_doubling_down(seat, spots)
        hand = self.current_hand
        assert hand is not None
        every = tuple(wager.spot for wager in hand.spots)
        chosen = every if spots is None else tuple(sorted(spots))
        added = 0
        for wager in hand.spots:
            if wager.spot in chosen:
                wager.doubled = wager.amount
                added += wager.amount
                wager.amount *= 2
                self._restake(wager.wager_id, wager.amount)
        hand.doubled = True
        hand.acted = True
        hand.awaiting_card = True
        command = f"{seat} double" + ("" if chosen == every else f" {_spot_list(chosen)}")
        operation = self._log(
            Operation(
                "double",
                seat=seat,
                hand=hand.index,
                amount=added,
                command=command,
                note=("spots " if len(chosen) > 1 else "spot ") + _spot_list(chosen),
            )
        )
        self._advance()
        return operation

    def verify_splitting(self, seat: int) -> None:
        """Raise unless ``seat`` may split its current hand: two cards of identical value, the
        split matched on every backed spot (NJ MAB (a); A-27)."""
        hand = self._verify_turn(seat, "split", SPLIT)
        state = self.seats[seat]
        rules = self.rules
        if not rules.split_pairs:
            raise IllegalActionError(
                f"Splitting pairs is not offered under these rules ({SPLIT}).", rule=SPLIT
            )
        self._verify_split(hand.hand.cards, len(state.hands), hand.split_aces, SPLIT, SPLIT)

    def can_split(self, seat: int) -> bool:
        """Whether :meth:`split` would succeed."""
        return can(self.verify_splitting, seat)

    def split(self, seat: int) -> Operation:
        """Split the pair into two hands; the new hand carries a wager equal to the original on
        every backed spot (A-27). The hand on the dealer's left is completed first."""
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
        new_hand = PlayerHand(
            new_index,
            Hand([second], from_split=True),
            [],
            split_aces=aces,
            acted=True,
            awaiting_card=True,
        )
        for spot in state.backed:
            amount = state.spots[spot - 1]
            wager_id = self._new_wager(
                seat, state.player, WagerKind.BLACKJACK, amount, new_index, spot
            )
            new_hand.spots.append(SpotWager(spot, wager_id, amount))
        state.hands.insert(state.hands.index(hand) + 1, new_hand)
        state.splits += 1
        operation = self._log(
            Operation(
                "split",
                seat=seat,
                hand=hand.index,
                amount=sum(state.spots),
                command=f"{seat} split",
                note=f"new hand {new_index}",
            )
        )
        self._advance()
        return operation

    # -- commands (notation) -------------------------------------------------------------------

    def apply(self, command: Command | str) -> Operation:
        """Apply one command: ``"2 hit"``, ``"2 stand"``, ``"2 split"``, ``"2 double"`` (every
        backed spot), ``"2 double 1,3"`` (spots 1 and 3), ``"2 insurance [$5]"``,
        ``"2 no-insurance"``, ``"dealer close-insurance"``."""
        spots: tuple[int, ...] | None = None
        amount: int | None = None
        if isinstance(command, Command):
            actor, verb, text = command.actor, command.verb, str(command)
            if command.amount is not None and verb == "double":
                raise InvalidNotationError(
                    f"{text!r}: a multi-action double names spots, not an amount; write "
                    "'3 double 1,3'."
                )
            amount = command.amount
            has_argument = amount is not None
        else:
            actor, verb, argument = parse_command(command)
            text = command
            has_argument = argument is not None
            if verb == "double":
                spots = _parse_spots(text, argument)
            elif verb == "insurance" and argument is not None:
                amount = _parse_amount(text, argument)
        if actor == "dealer":
            if verb != "close-insurance" or has_argument:
                raise InvalidNotationError(f"{text!r}: the dealer's command is close-insurance.")
            return self.close_insurance()
        if not actor.isdigit():
            raise InvalidNotationError(f"{actor!r} is not a seat number in {text!r}.")
        seat = int(actor)
        if verb == "double":
            return self.double_down(seat, spots)
        if verb == "insurance":
            return self.take_insurance(seat, amount)
        plain: dict[str, Callable[[int], Operation]] = {
            "no-insurance": self.decline_insurance,
            "hit": self.hit,
            "stand": self.stand,
            "split": self.split,
        }
        if verb not in plain:
            raise InvalidNotationError(
                f"{text!r}: unknown verb {verb!r}; seats use hit, stand, double, split, "
                "insurance, no-insurance."
            )
        if has_argument:
            raise InvalidNotationError(f"{text!r}: {verb!r} takes nothing after it.")
        return plain[verb](seat)

    # -- the automatic steps -------------------------------------------------------------------

    def _advance(self) -> None:
        """Run dealer steps until a decision or a card from the reader is needed."""
        while self.card_request is None:
            phase = self.phase
            if phase is Phase.DEALING:
                if self._deal_queue:
                    self._request(self._deal_queue[0])
                else:
                    self._after_deal()
            elif phase is Phase.INSURANCE:
                if any(not s.insurance_decided for s in self.seats.values()):
                    return
                self.phase = Phase.PLAYING
            elif phase is Phase.PLAYING:
                if not self._play_step():
                    return
            elif phase is Phase.DEALER:
                self._dealer_step()
            else:
                return

    def _after_deal(self) -> None:
        """Every player holds two cards. A Blackjack is paid at once unless the dealer's first
        card is an ace or ten-value ((f)(5)); insurance opens on an ace when offered (A-27)."""
        up = self.first_card
        assert up is not None
        if not (up.is_ace or up.is_ten_value):
            for state in self.seats.values():
                hand = state.hands[0]
                if hand.hand.is_blackjack:
                    for wager in hand.spots:
                        self._settle_blackjack(state, hand, wager, BLACKJACK)
        insurers = [state for state in self.seats.values() if state.spots[0]]
        if up.is_ace and self.rules.insurance and insurers:
            for state in self.seats.values():
                state.insurance_decided = not state.spots[0]
            self.phase = Phase.INSURANCE
        else:
            self.phase = Phase.PLAYING

    def _play_step(self) -> bool:
        """One automatic step of play; False when a player decision is needed."""
        if self._turn >= len(self._order):
            self.phase = Phase.DEALER
            self.dealer_round = 1
            return True
        state = self.seats[self._order[self._turn]]
        hand = next((h for h in state.hands if not h.done), None)
        if hand is None:
            self._turn += 1
            return True
        if hand.awaiting_card:
            self._request(CardTarget("seat", state.number, hand.index))
            return True
        cards = hand.hand
        rules = self.rules
        finished = (
            cards.total >= 21
            or (hand.doubled and len(cards) >= 3)
            or (
                hand.split_aces
                and rules.one_card_to_split_aces
                and len(cards) == 2
                and not (
                    cards.cards[1].is_ace
                    and rules.resplit_aces
                    and len(state.hands) < rules.max_split_hands
                )
            )
        )
        if finished:
            hand.done = True
            if cards.is_bust:
                # the one hand plays in every round, so a bust loses every spot at once.
                for wager in hand.spots:
                    self._settle(state, hand, wager, Result.LOSE, 0, BUST)
            return True
        return False

    def _open_wagers(self, spot: int) -> list[tuple[SeatState, PlayerHand, SpotWager]]:
        found = []
        for state in self.seats.values():
            for hand in state.hands:
                wager = hand.wager_on(spot)
                if wager is not None and not wager.settled:
                    found.append((state, hand, wager))
        return found

    def _insurance_open(self) -> bool:
        return not self._insurance_settled and any(
            state.insurance_wager_id is not None for state in self.seats.values()
        )

    def _dealer_step(self) -> None:
        """One automatic step of the dealer's three rounds ((f)(4), (f)(6)–(8))."""
        k = self.dealer_round
        if k > 3:
            self.phase = Phase.COMPLETE
            self._log(Operation("complete", note=f"all cards collected ({COLLECT})"))
            return
        first = self.first_card
        assert first is not None
        hand = self.dealer_hands.get(k)
        if hand is None:
            if not self._open_wagers(k) and not (k == 1 and self._insurance_open()):
                backed = any(state.spots[k - 1] for state in self.seats.values())
                reason = "every wager already settled" if backed else "no wager"
                self.skipped_rounds.append(k)
                self._log(Operation("skip-round", note=f"round {k}: {reason} ({SKIP})"))
                self.dealer_round = k + 1
                return
            self.dealer_hands[k] = Hand([first])
            self._log(
                Operation(
                    "dealer-round",
                    card=first,
                    target=f"square {k}",
                    note=f"round {k}: the first card {first.display} in square {k} ({FIRST_CARD})",
                )
            )
            return
        if len(hand) == 1:
            self._request(CardTarget("dealer", dealer_round=k))
            return
        if k not in self.dealer_blackjack:
            self._after_second_card(k, hand)
            return
        if self._open_wagers(k) and self._dealer_draws(hand):
            self._request(CardTarget("dealer", dealer_round=k))
            return
        self._settle_dealer_round(k, hand)

    def _after_second_card(self, k: int, hand: Hand) -> None:
        """The round's second card is known: insurance settles on round 1 (A-27); a dealer
        Blackjack settles the round (push a Blackjack, A-29 otherwise); else a player Blackjack
        still open is paid 3 to 2 (A-25)."""
        dealer_blackjack = hand.is_blackjack
        self.dealer_blackjack[k] = dealer_blackjack
        if k == 1:
            self._settle_insurance(dealer_blackjack)
        for state, player_hand, wager in self._open_wagers(k):
            player_blackjack = player_hand.hand.is_blackjack
            if dealer_blackjack and player_blackjack:
                self._settle(state, player_hand, wager, Result.PUSH, wager.amount, BLACKJACK)
            elif dealer_blackjack:
                self._settle(state, player_hand, wager, Result.LOSE, 0, DEALER_BLACKJACK)
            elif player_blackjack:
                self._settle_blackjack(state, player_hand, wager, BLACKJACK_PER_ROUND)

    def _dealer_draws(self, hand: Hand) -> bool:
        """Draw to 16, stand on 17 ((f)(4)); soft 17 draws only with the H17 option (A-24)."""
        if hand.is_blackjack:
            return False
        total = hand.total
        return total < 17 or (total == 17 and hand.is_soft and self.rules.dealer_hits_soft_17)

    def _settle_dealer_round(self, k: int, dealer: Hand) -> None:
        """Pay, take or push every spot-``k`` wager still open; discard the hit cards."""
        clause = ROUND_CLAUSES[k]
        dealer_total = dealer.total
        for state, hand, wager in self._open_wagers(k):
            total = hand.hand.total
            if dealer.is_bust or total > dealer_total:
                self._settle(state, hand, wager, Result.WIN, 2 * wager.amount, clause)
            elif total == dealer_total:
                self._settle(state, hand, wager, Result.PUSH, wager.amount, clause)
            else:
                self._settle(state, hand, wager, Result.LOSE, 0, clause)
        hits = " ".join(card.display for card in dealer.cards[1:])
        kept = f"the first card kept ({ROUND_TWO})" if k < 3 else f"cards collected ({COLLECT})"
        self._log(
            Operation(
                "round-complete",
                note=f"round {k}: {dealer.describe()}; hit cards {hits} discarded, {kept}",
            )
        )
        self.dealer_round = k + 1

    # -- settlement ----------------------------------------------------------------------------

    def _settle_insurance(self, dealer_blackjack: bool) -> None:
        if self._insurance_settled:
            return
        self._insurance_settled = True
        for state in self.seats.values():
            wager_id = state.insurance_wager_id
            if wager_id is None:
                continue
            amount = self.wagers[wager_id].amount
            if dealer_blackjack:
                paid, rounding = winnings(amount, INSURANCE_PAYS, self.rules.rounding)
                self._record(wager_id, Result.WIN, amount + paid, INSURANCE, rounding, 1)
            else:
                self._record(wager_id, Result.LOSE, 0, INSURANCE, Fraction(0), 1)

    def _settle_blackjack(
        self, state: SeatState, hand: PlayerHand, wager: SpotWager, clause: str
    ) -> None:
        paid, rounding = winnings(wager.amount, self.rules.blackjack_pays, self.rules.rounding)
        self._settle(state, hand, wager, Result.BLACKJACK, wager.amount + paid, clause, rounding)

    def _settle(
        self,
        state: SeatState,
        hand: PlayerHand,
        wager: SpotWager,
        result: Result,
        returned: int,
        clause: str,
        rounding: Fraction = Fraction(0),
    ) -> None:
        wager.settled = True
        self._record(wager.wager_id, result, returned, clause, rounding, wager.spot)


# -- notation --------------------------------------------------------------------------------

_SPOT_LIST = re.compile(r"^[1-3](?:,[1-3])*$")


def parse_command(text: str) -> tuple[str, str, str | None]:
    """Split a multi-action command into actor, verb and the optional argument.

    >>> parse_command("3 double 1,3")
    ('3', 'double', '1,3')
    >>> parse_command("dealer close-insurance")
    ('dealer', 'close-insurance', None)
    >>> parse_command("three hit")
    Traceback (most recent call last):
    ...
    tablejack.core.errors.InvalidNotationError: 'three hit' is not a command; write '<seat> <verb> [spots or amount]', as in '2 hit' or '3 double 1,3'.
    """
    if not isinstance(text, str):
        raise InvalidNotationError(f"{text!r} is not a command line.")
    parts = text.split()
    if len(parts) not in (2, 3) or not (parts[0].isdigit() or parts[0] == "dealer"):
        raise InvalidNotationError(
            f"{text!r} is not a command; write '<seat> <verb> [spots or amount]', as in '2 hit' "
            "or '3 double 1,3'."
        )
    return parts[0], parts[1].lower(), parts[2] if len(parts) == 3 else None


def _parse_spots(command: str, argument: str | None) -> tuple[int, ...] | None:
    if argument is None:
        return None
    if not _SPOT_LIST.match(argument):
        raise InvalidNotationError(
            f"{command!r}: {argument!r} is not a list of spots; write spot numbers 1 to 3 "
            "separated by commas, as in '3 double 1,3'."
        )
    return tuple(int(part) for part in argument.split(","))


def _parse_amount(command: str, argument: str) -> int:
    amount = parse_money(int(argument) if argument.isdigit() else argument)
    if amount <= 0:
        raise InvalidNotationError(f"{command!r}: the amount must be positive.")
    return amount


def seat_players(round_: MultiActionRound, seats: tuple[Mapping[str, Any], ...]) -> None:
    """Seat the players of a notation document (``seat``, ``player``, ``spots`` in cents) and
    close wagering."""
    for entry in seats:
        if set(entry) != {"seat", "player", "spots"}:
            raise InvalidNotationError(
                'A multi-action seat is written seat = N, player = "name", spots = ["$10", '
                f'"$10", "$0"]; got {dict(entry)!r}.'
            )
        spots = entry["spots"]
        if not isinstance(spots, list | tuple) or len(spots) != 3:
            raise InvalidNotationError(
                f"spots lists three amounts, one per betting spot (0 for none), not {spots!r}."
            )
        round_.place_wager(entry["seat"], entry["player"], tuple(spots))
    round_.close_wagering()


def seats_of(round_: MultiActionRound) -> tuple[dict[str, Any], ...]:
    """The seat entries of a round for its notation, in the order the wagers were placed (so
    that a replay reproduces the operation log exactly)."""
    placed = [op.seat for op in round_.operations if op.kind == "wager" and op.seat is not None]
    seats = round_.seats
    return tuple(
        {"seat": number, "player": seats[number].player, "spots": list(seats[number].spots)}
        for number in placed
    )


def transcript(round_: MultiActionRound) -> list[str]:
    """A readable account of a game: the dealer's first card, each dealer round, then each
    player hand with its spot settlements::

        Round 1 (square 1): 9♥ 6♣ 5♠ = 20
        Seat 1 (ann) $10.00/$10.00/$10.00: 10♠ 7♦ = 17, stands; spot 1 loses $10.00 (...)
    """
    hands: dict[tuple[int, int], Hand] = {}
    lines: dict[tuple[int, int], list[str]] = {}
    side: dict[int, list[str]] = {}
    pending: dict[tuple[int, int], str] = {}
    rounds: dict[int, list[str]] = {}
    first = round_.first_card
    for op in round_.operations:
        kind = op.kind
        if kind == "card" and op.card is not None and op.seat is not None and op.hand is not None:
            key = (op.seat, op.hand)
            hand = hands.setdefault(key, Hand(from_split=op.hand > 0))
            hand.add(op.card)
            verb = pending.pop(key, None)
            parts = lines.setdefault(key, [])
            if verb is not None:
                parts.append(f"{verb} {op.card.display} = {hand.total_text()}")
            elif len(hand.cards) == 2:
                parts.append(hand.describe())
        elif kind in ("hit", "double") and op.seat is not None and op.hand is not None:
            extra = f" {op.note} for {format_cents(op.amount or 0)}" if kind == "double" else ""
            pending[(op.seat, op.hand)] = "hits" if kind == "hit" else f"doubles{extra}, draws"
        elif kind == "split" and op.seat is not None and op.hand is not None:
            key = (op.seat, op.hand)
            first_card, second_card = hands[key].cards
            new_index = int((op.note or "new hand 0").split()[-1])
            hands[key] = Hand([first_card], from_split=True)
            hands[(op.seat, new_index)] = Hand([second_card], from_split=True)
            lines.setdefault(key, []).append(f"splits {first_card.display} {second_card.display}")
            lines[(op.seat, new_index)] = [f"split from hand {op.hand + 1}: {second_card.display}"]
            pending[key] = "takes"
            pending[(op.seat, new_index)] = "takes"
        elif kind == "stand" and op.seat is not None and op.hand is not None:
            lines.setdefault((op.seat, op.hand), []).append("stands")
        elif kind == "insurance" and op.seat is not None and op.amount is not None:
            side.setdefault(op.seat, []).append(f"insures {format_cents(op.amount)}")
        elif kind == "settle" and op.settlement is not None:
            settlement = op.settlement
            if settlement.kind is WagerKind.INSURANCE:
                side.setdefault(settlement.seat, []).append(f"insurance {settlement.describe()}")
            else:
                key = (settlement.seat, settlement.hand or 0)
                lines.setdefault(key, []).append(f"spot {settlement.spot} {settlement.describe()}")
        elif kind == "skip-round" and op.note:
            number = int(op.note.split()[1].rstrip(":"))
            rounds[number] = [f"skipped, {op.note.split(': ', 1)[1]}"]
    for number, hand in round_.dealer_hands.items():
        rounds.setdefault(number, []).insert(0, _dealer_text(hand))
    out = [
        "Dealer: first card "
        + (first.display if first is not None else "?")
        + ", kept for all three rounds"
    ]
    for number in sorted(rounds):
        out.append(f"Round {number} (square {number}): " + "; ".join(rounds[number]))
    for (seat, index), parts in sorted(lines.items()):
        state = round_.seats.get(seat)
        name = state.player if state is not None else "?"
        label = f"Seat {seat} ({name})"
        if state is not None and index == 0:
            label += " " + _spots(state.spots)
        if index:
            label += f" hand {index + 1}"
        out.append(f"{label}: " + ", ".join(parts))
    for seat, parts in sorted(side.items()):
        state = round_.seats.get(seat)
        name = state.player if state is not None else "?"
        out.append(f"Seat {seat} ({name}) insurance: " + ", ".join(parts))
    return out


def _dealer_text(hand: Hand) -> str:
    cards = " ".join(card.display for card in hand.cards)
    return f"{cards} = {hand.total_text()}"


def _spots(amounts: Sequence[int]) -> str:
    return "/".join(format_cents(amount) if amount else "-" for amount in amounts)


def _spot_list(spots: Sequence[Any]) -> str:
    return ",".join(str(spot) for spot in spots)


def _number_word(number: int) -> str:
    return {2: "two", 3: "three"}.get(number, str(number))
