"""What every game's round shares: its records, its card input and its wager limits.

Each game's round class (``ClassicRound``, ``HybridRound``, ``MultiActionRound``, …) derives from
:class:`RoundRecords`, which keeps the wagers, the settlements and the operation log, turns a
wager into a settlement record, checks a wager against the table limits, and takes cards either
from the round's shoe or one at a time from a card reader (:meth:`RoundRecords.deal_card`). The
game supplies where a card goes (``_receive``), what happens next (``_advance``) and what the table
waits for (``next_step``).

>>> can(lambda: None), can(_refuse)
(True, False)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar, Protocol

from tablejack.core.cards import Card
from tablejack.core.errors import IllegalActionError, InvalidNotationError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents
from tablejack.core.records import (
    Operation,
    Result,
    Settlement,
    Wager,
    WagerKind,
    check_settlements,
)
from tablejack.core.shoe import Shoe

__all__ = ["CardTargetLike", "RoundRecords", "can", "new_record"]


def _refuse() -> None:
    raise IllegalActionError("Refused (doctest).", rule="none")


class CardTargetLike(Protocol):
    """Where a requested card goes; each game has its own target type."""

    def describe(self) -> str: ...


new_record: Callable[..., Any] = tuple.__new__
"""Make a named-tuple record from a complete tuple of its fields (hot paths only)."""


def can(verify: Callable[..., None], *args: object) -> bool:
    """Whether ``verify(*args)`` passes: the ``can_…`` half of every ``verify_…`` / ``can_…``
    pair."""
    try:
        verify(*args)
    except IllegalActionError:
        return False
    return True


class RoundRecords:
    """The bookkeeping and card input of a round; subclassed by every game."""

    irregularity_clause: ClassVar[str] = "PA 633a.14"
    """The clause cited when the card reader sends a card the round did not ask for."""

    rules: Any
    shoe: Shoe | None
    wagers: list[Wager]
    settlements: list[Settlement]
    operations: list[Operation]
    cards_dealt: list[Card]
    card_request: Any

    def _start_records(self, rules: Any, shoe: Shoe | None) -> None:
        """Set up the records; called first by every round's ``__init__``."""
        if shoe is not None and shoe.decks > rules.decks:
            raise IllegalActionError(
                f"The shoe holds {shoe.decks} decks but the rules deal {rules.decks} "
                f"({rules.decks_clause}).",
                rule=rules.decks_clause,
            )
        self.rules = rules
        self.shoe = shoe
        self.wagers = []
        self.settlements = []
        self.operations = []
        self.cards_dealt = []
        self.card_request = None
        self._card_counts: Counter[Card] = Counter()

    # -- what a game supplies ---------------------------------------------------------------

    def next_step(self) -> str:
        """What the table waits for, in words."""
        raise NotImplementedError

    def _receive(self, target: Any, card: Card) -> Operation:
        """Put ``card`` where ``target`` says and record it."""
        raise NotImplementedError

    def _advance(self) -> None:
        """Run the automatic steps until a decision or a card from the reader is needed."""
        raise NotImplementedError

    # -- totals ------------------------------------------------------------------------------

    def house_net(self) -> int:
        """The house's net over every settled wager, checking that each wager was settled
        exactly once and for its full amount (the round must be complete)."""
        return check_settlements(self.wagers, self.settlements)

    def player_net(self) -> dict[str, int]:
        """Each player's net over the settlements so far (every player with a wager listed)."""
        totals: dict[str, int] = {wager.player: 0 for wager in self.wagers}
        for settlement in self.settlements:
            totals[settlement.player] += settlement.net
        return totals

    # -- cards -------------------------------------------------------------------------------

    def verify_dealing_card(self, card: Card) -> None:
        """Raise unless ``card`` may be dealt now (card-reader input)."""
        rule = self.irregularity_clause
        if self.shoe is not None:
            raise IllegalActionError(
                "This round deals from its own shoe; a card from the reader was not asked for "
                f"({rule}).",
                rule=rule,
            )
        if self.card_request is None:
            raise IllegalActionError(
                f"No card is wanted now: the table waits for {self.next_step()} ({rule}).",
                rule=rule,
            )
        if not isinstance(card, Card):
            raise InvalidNotationError(f"{card!r} is not a card.")
        decks = self.rules.decks
        if self._card_counts[card] >= decks:
            clause = self.rules.decks_clause
            raise IllegalActionError(
                f"{card.code} cannot be dealt: {decks} deck(s) hold only {decks} and all have "
                f"been dealt this round ({clause}; an irregularity, {rule}).",
                rule=clause,
            )

    def can_deal_card(self, card: Card) -> bool:
        """Whether :meth:`deal_card` would accept ``card``."""
        return can(self.verify_dealing_card, card)

    def deal_card(self, card: Card | str) -> Operation:
        """Feed the card the reader read (a :class:`Card` or a code) to :attr:`card_request`."""
        if isinstance(card, str):
            card = Card.parse(card)
        self.verify_dealing_card(card)
        target = self.card_request
        self.card_request = None
        operation = self._receive(target, card)
        self._advance()
        return operation

    def _request(self, target: Any) -> None:
        """Ask for the card ``target`` needs: drawn from the shoe at once, or awaited from the
        reader."""
        if self.shoe is None:
            self.card_request = target
        else:
            self._receive(target, self.shoe.draw())

    def _count_card(self, card: Card) -> None:
        """Record a dealt card (the copy count matters only for card-reader input)."""
        self.cards_dealt.append(card)
        if self.shoe is None:
            self._card_counts[card] += 1

    # -- wagers and settlements ---------------------------------------------------------------

    def _verify_limits(
        self, amount: int, what: str, rule: str, *, limit_rule: str | None = None, per: str = ""
    ) -> None:
        """Raise unless ``amount`` is whole cents within the table limits and a multiple of the
        betting unit. ``limit_rule`` cites the limits when they have a clause of their own;
        ``per`` qualifies them (``" per spot"``)."""
        limits = limit_rule or rule
        rules = self.rules
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise IllegalActionError(
                f"A {what} of {amount!r} is not whole cents ({rule}).", rule=rule
            )
        if amount < rules.table_minimum:
            raise IllegalActionError(
                f"A {what} of {format_cents(amount)} is below the table minimum "
                f"{format_cents(rules.table_minimum)}{per} ({limits}).",
                rule=limits,
            )
        if amount > rules.table_maximum:
            raise IllegalActionError(
                f"A {what} of {format_cents(amount)} is above the table maximum "
                f"{format_cents(rules.table_maximum)}{per} ({limits}).",
                rule=limits,
            )
        self._verify_unit(amount, what, limits)

    def _verify_unit(self, amount: int, what: str, rule: str) -> None:
        """Raise unless ``amount`` is a multiple of the betting unit."""
        unit = self.rules.betting_unit
        if amount % unit:
            raise IllegalActionError(
                f"A {what} of {format_cents(amount)} is not a multiple of the betting unit "
                f"{format_cents(unit)} ({rule}).",
                rule=rule,
            )

    def _verify_double(
        self, total: int, wager: int, amount: int | None, rule: str = "PA 633a.10"
    ) -> None:
        """Raise unless a hand of ``total`` may double by ``amount`` (None: the full wager):
        the double-down totals of the rules, a positive amount up to the hand's wager, equal to
        it unless the rules allow doubling for less, in betting units (§ 633a.10)."""
        rules = self.rules
        totals = rules.double_totals
        if totals is not None and total not in totals:
            raise IllegalActionError(
                f"A double down is allowed on a first-two-card total of "
                f"{rules.double_down_totals}, not {total} ({rule}).",
                rule=rule,
            )
        if amount is None:
            return
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
            raise IllegalActionError(
                f"A double of {amount!r} is not a positive amount ({rule}).", rule=rule
            )
        if amount > wager:
            raise IllegalActionError(
                f"A double of {format_cents(amount)} exceeds the hand's wager of "
                f"{format_cents(wager)} ({rule}).",
                rule=rule,
            )
        if amount != wager and not rules.double_for_less:
            raise IllegalActionError(
                f"These rules require a double equal to the wager, {format_cents(wager)} ({rule}).",
                rule=rule,
            )
        self._verify_unit(amount, "double", "PA 633a.6")

    def _verify_double_start(
        self,
        hand: Hand,
        *,
        rule: str,
        after_split_rule: str,
        split_aces: bool = False,
        split_rule: str = "PA 633a.11",
        no_draw_rule: str | None = None,
    ) -> None:
        """Raise unless ``hand`` may be doubled as far as its cards go — the checks every game
        makes before its own: the first two cards only (``rule``), after a split only where
        the rules allow it (``after_split_rule``), never on a split ace that takes one card
        (``split_rule``), and, where ``no_draw_rule`` is given, never on a 21."""
        rules = self.rules
        if len(hand) != 2:
            raise IllegalActionError(
                f"A double down is made on the first two cards of a hand only; this hand has "
                f"{len(hand)} ({rule}).",
                rule=rule,
            )
        if hand.from_split and not rules.double_after_split:
            raise IllegalActionError(
                f"These rules do not allow a double down after a split ({after_split_rule}).",
                rule=after_split_rule,
            )
        if split_aces and rules.one_card_to_split_aces:
            raise IllegalActionError(
                f"A split ace receives one card only ({split_rule}).", rule=split_rule
            )
        if no_draw_rule is not None and hand.total >= 21:
            raise IllegalActionError(
                f"A hand of {hand.total} may not draw ({no_draw_rule}).", rule=no_draw_rule
            )

    def _verify_insurance_amount(self, wager: int, amount: int | None, rule: str, of: str) -> None:
        """Raise unless ``amount`` (None: half of ``wager``) may insure a wager of ``wager``:
        a positive amount of at most half of it (§ 633a.8); ``of`` names the wager insured."""
        limit = wager // 2
        if amount is None:
            if limit < 1:
                raise IllegalActionError(
                    f"Half of {of} of {format_cents(wager)} is less than a cent: there is nothing "
                    f"to insure ({rule}).",
                    rule=rule,
                )
            return
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
            raise IllegalActionError(
                f"An insurance wager of {amount!r} is not a positive amount ({rule}).", rule=rule
            )
        if amount > limit:
            raise IllegalActionError(
                f"Insurance of {format_cents(amount)} exceeds half {of}, {format_cents(limit)} "
                f"({rule}).",
                rule=rule,
            )

    @staticmethod
    def _verify_pair(cards: list[Card], rule: str) -> None:
        """Raise unless ``cards`` are two cards of identical value, which alone may be split
        (§ 633a.11(a); A-12: value, not rank)."""
        if len(cards) != 2 or cards[0].points != cards[1].points:
            shown = " ".join(card.display for card in cards)
            raise IllegalActionError(
                f"Only a pair, two cards of identical value, may be split, not {shown} ({rule}).",
                rule=rule,
            )

    def _verify_split(
        self,
        cards: list[Card],
        hands: int,
        split_aces: bool,
        rule: str = "PA 633a.11(a)",
        count_rule: str = "PA 633a.11(c)",
    ) -> None:
        """Raise unless a hand of ``cards`` may be split: a pair (``rule``), fewer than the
        rules' most hands, and split aces only with resplitting aces (``count_rule``);
        ``hands`` is how many hands the player has now."""
        rules = self.rules
        self._verify_pair(cards, rule)
        if hands >= rules.max_split_hands:
            raise IllegalActionError(
                f"These rules allow at most {rules.max_split_hands} hands from one by splitting "
                f"({count_rule}).",
                rule=count_rule,
            )
        if split_aces and not rules.resplit_aces:
            raise IllegalActionError(
                f"These rules do not allow split aces to be split again ({count_rule}).",
                rule=count_rule,
            )

    # -- commands ------------------------------------------------------------------------------

    _DEALER_VERBS: ClassVar[dict[str, str]] = {}
    """Dealer command words and the methods they call (used by :meth:`_dispatch`)."""
    _ACTOR_VERBS: ClassVar[dict[str, tuple[str, bool]]] = {}
    """Seat or player command words, the methods they call and whether they take an amount."""
    actors_by_seat: ClassVar[bool] = True
    """Commands name a seat number (classic) rather than a player (hybrid tables)."""

    def _dispatch(self, command: Any) -> Operation:
        """Apply a parsed command through :attr:`_DEALER_VERBS` and :attr:`_ACTOR_VERBS`."""
        verb = command.verb
        if command.actor == "dealer":
            name = self._DEALER_VERBS.get(verb)
            if name is None or command.amount is not None:
                raise InvalidNotationError(
                    f"{str(command)!r}: the dealer's commands are {', '.join(self._DEALER_VERBS)}."
                )
            dealer_verb: Callable[[], Operation] = getattr(self, name)
            return dealer_verb()
        entry = self._ACTOR_VERBS.get(verb)
        if entry is None:
            who = "seats" if self.actors_by_seat else "players"
            raise InvalidNotationError(
                f"{str(command)!r}: unknown verb {verb!r}; {who} use "
                f"{', '.join(self._ACTOR_VERBS)}."
            )
        name, takes_amount = entry
        actor = command.seat if self.actors_by_seat else command.actor
        if takes_amount:
            with_amount: Callable[[Any, int | None], Operation] = getattr(self, name)
            return with_amount(actor, command.amount)
        if command.amount is not None:
            raise InvalidNotationError(f"{str(command)!r}: {verb!r} takes no amount.")
        plain: Callable[[Any], Operation] = getattr(self, name)
        return plain(actor)

    def _new_wager(
        self,
        seat: int,
        player: str,
        kind: WagerKind,
        amount: int,
        hand: int | None = None,
        spot: int | None = None,
    ) -> int:
        """Put a wager on the layout; its id is its index in :attr:`wagers`."""
        wager_id = len(self.wagers)
        self.wagers.append(Wager(wager_id, seat, player, kind, amount, hand, spot))
        return wager_id

    def _restake(self, wager_id: int, amount: int) -> None:
        """A wager's amount at risk changed: raised by a double, or changed before the first
        card (0: taken back, nothing to settle)."""
        self.wagers[wager_id] = self.wagers[wager_id]._replace(amount=amount)

    def _record(
        self,
        wager_id: int,
        result: Result,
        returned: int,
        clause: str,
        rounding: Fraction = Fraction(0),
        dealer_round: int | None = None,
        note: str | None = None,
    ) -> Settlement:
        """Settle a wager: append its settlement record and log it (``note``, default the
        player's name, is kept on the logged operation, e.g. the paytable line that paid)."""
        wager = self.wagers[wager_id]
        # tuple.__new__ builds the named tuples without their Python-level __new__ (this runs
        # for every wager of every round; the fields are in declaration order).
        settlement: Settlement = new_record(
            Settlement,
            (
                wager_id,
                wager.seat,
                wager.player,
                wager.kind,
                wager.hand,
                wager.amount,
                result,
                returned,
                clause,
                rounding,
                wager.spot,
                dealer_round,
            ),
        )
        self.settlements.append(settlement)
        self.operations.append(
            new_record(
                Operation,
                (
                    "settle",
                    wager.seat,
                    wager.hand,
                    returned,
                    None,
                    None,
                    settlement,
                    None,
                    wager.player if note is None else note,
                ),
            )
        )
        return settlement

    def _log(self, operation: Operation) -> Operation:
        """Append an operation to the round's log and return it."""
        self.operations.append(operation)
        return operation
