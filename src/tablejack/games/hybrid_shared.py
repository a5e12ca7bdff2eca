"""Blackjack on a hybrid gaming table without a hole card (PA 633c.5(w)–(ee)): ``hybrid-shared``.

One shared start for every player: the first card dealt is every player's first card, the second
the dealer's first card, the third every player's second card ((y)). Every later card is a
community card, designated for each player by that player's own choices ((y)(4), (aa), (bb)):

* a Blackjack: the first community card is the dealer's hole card for that player ((aa)(1));
* a stand (or a late surrender, A-7) on the two cards: the first community card is the dealer's
  hole card ((aa)(2));
* a hit, split or double: community cards go to the player's hand (hand 1 of a split first, then
  hand 2; one card to a double or a split ace, A-9) until it is complete, a bust being collected
  at once ((aa)(3)); the next card is then the dealer's second card ((bb));
* after the dealer's second card, the player's dealer hand takes community cards until it holds
  a hard or soft 17–21, or stops at a Blackjack ((bb)(1)–(2)).

So each player has a **personal dealer hand** (``referenced-rules.md`` §2.2): two players on the
same start who choose differently face different dealer hands. The dealer reveals community
cards while any player's hand or personal dealer hand is incomplete; :attr:`card_request` (or the
shoe) tells the dealer when to stop. Players decide in any order; a community card is dealt once
every pending decision is in (or the countdown clock expired, ``dealer countdown-expired``).

>>> from tablejack.core import Shoe
>>> from tablejack.games.hybrid_shared_rules import HybridSharedRules
>>> rules = HybridSharedRules(royal_match=False, bet_the_set=False, kings_bounty=False)
>>> table = HybridSharedRound(rules, Shoe.prearranged("10S 9D 6H 5C 7D 4S 2C", decks=6))
>>> _ = table.place_wager("ann", 1000)
>>> _ = table.place_wager("bob", 1000)
>>> _ = table.close_wagering()
>>> _ = table.stand("ann")
>>> _ = table.hit("bob")  # 5♣ makes 21: bob's hand is complete
>>> table.player_dealer("ann").describe(), table.player_dealer("bob").describe()
('9♦ 5♣ 7♦ = 21', '9♦ 7♦ 4♠ = 20')
>>> table.player_net()
{'ann': -1000, 'bob': 1000}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Any, ClassVar

from tablejack.core.cards import Card
from tablejack.core.commands import Command
from tablejack.core.errors import IllegalActionError, InvalidNotationError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, winnings
from tablejack.core.records import (
    Operation,
    Result,
    WagerKind,
)
from tablejack.core.round import RoundRecords, can
from tablejack.core.shoe import Shoe
from tablejack.games.hybrid_shared_rules import (
    HybridSharedRules,
    bet_the_set_lines,
    is_royal_match,
    kings_bounty_lines,
    royal_match_lines,
)
from tablejack.games.views import hand_view

__all__ = [
    "CardTarget",
    "HybridSharedRound",
    "Path",
    "Phase",
    "PlayerState",
    "SharedHand",
    "seat_players",
    "seats_of",
    "transcript",
]

WAGER = "PA 633c.5(x)"
BEFORE_FIRST_CARD = "PA 633c.5(k)"
DEAL = "PA 633c.5(y)"
DECISIONS = "PA 633c.5(z)"
SURRENDER = "PA 633a.9"
DOUBLE = "PA 633a.10"
SPLIT = "PA 633a.11"
DESIGNATION = "PA 633c.5(aa)"
DRAWN = "PA 633c.5(aa)(3)"
ONE_CARD = "PA 633c.5(aa)(3)(i)"
HIT_BUST = "PA 633c.5(aa)(3)(ii)"
DEALER_HAND = "PA 633c.5(bb)"
CARD_READER = "PA 633c.5(j)"
SIDE_KINDS = (WagerKind.ROYAL_MATCH, WagerKind.BET_THE_SET, WagerKind.KINGS_BOUNTY)
SIDE_CLAUSES = {
    WagerKind.ROYAL_MATCH: "PA 633c.5(dd), (ee)(3)",
    WagerKind.BET_THE_SET: "PA 633c.5(dd), (ee)(4)",
    WagerKind.KINGS_BOUNTY: "PA 633c.5(dd), (ee)(5)",
}
SIDE_NAMES = {
    WagerKind.ROYAL_MATCH: "Royal Match 21",
    WagerKind.BET_THE_SET: "Bet the Set",
    WagerKind.KINGS_BOUNTY: "King's Bounty",
}
SIDE_FIELDS = {
    "royal_match": WagerKind.ROYAL_MATCH,
    "bet_the_set": WagerKind.BET_THE_SET,
    "kings_bounty": WagerKind.KINGS_BOUNTY,
}


class Phase(StrEnum):
    """Where a round stands."""

    WAGERING = "wagering"
    DEALING = "dealing"
    PLAYING = "playing"
    COMPLETE = "complete"


class Path(StrEnum):
    """Which branch of 633c.5(aa) a player's choices took."""

    UNDECIDED = "undecided"
    BLACKJACK = "blackjack"
    """(aa)(1): the two cards are a Blackjack."""
    STOOD = "stood"
    """(aa)(2): stood on the two cards."""
    SURRENDERED = "surrendered"
    """§ 633a.9 on the two cards; designated as (aa)(2) (A-7)."""
    DREW = "drew"
    """(aa)(3): hit, split or doubled."""


# What the next community card is for a player.
_DECIDE = 0
_TO_HAND = 1
_TO_DEALER = 2
_DONE = 3


@dataclass(frozen=True, slots=True)
class CardTarget:
    """The card the engine waits for: ``players-first``, ``dealer-first``, ``players-second``
    or ``community`` (with its number, 1 for the first community card)."""

    kind: str
    number: int = 0

    def describe(self) -> str:
        """Text for the dealer console: ``'community card 3'``."""
        if self.kind == "community":
            return f"community card {self.number}"
        return {
            "players-first": "every player's first card",
            "dealer-first": "the dealer's first card",
            "players-second": "every player's second card",
        }[self.kind]


_START_TARGETS = (
    CardTarget("players-first"),
    CardTarget("dealer-first"),
    CardTarget("players-second"),
)


@dataclass(slots=True)
class SharedHand:
    """One of a player's hands (two after a split): cards, Blackjack Wager, progress."""

    index: int
    hand: Hand
    wager_id: int
    amount: int
    doubled: int = 0
    split_aces: bool = False
    done: bool = False
    settled: bool = False
    awaiting_card: bool = False


@dataclass(slots=True)
class PlayerState:
    """A player at a terminal: wagers, hands, personal dealer hand and card designations."""

    number: int
    player: str
    wager: int
    hands: list[SharedHand] = field(default_factory=list)
    dealer: Hand = field(default_factory=Hand)
    """The player's personal dealer hand (§2.2): the dealer's first card, then the community
    cards designated to the dealer for this player."""
    side_wager_ids: dict[WagerKind, int] = field(default_factory=dict)
    side_pending: list[WagerKind] = field(default_factory=list)
    side_lines: dict[WagerKind, str] = field(default_factory=dict)
    insurance_decided: bool = False
    insurance_wager_id: int | None = None
    path: Path = Path.UNDECIDED
    split: bool = False
    dealer_blackjack: bool | None = None
    complete: bool = False
    designations: list[str | None] = field(default_factory=list)
    """For each community card in order: ``"hand 1"``, ``"hand 2"``, ``"dealer"`` or None."""
    events: list[tuple[int, str, int]] = field(default_factory=list)
    """(community cards dealt before it, verb, amount) of each decision, for transcripts."""

    @property
    def acted(self) -> bool:
        """True once the player made a decision on the hand (hit, stand, double, split,
        surrender)."""
        return self.path is not Path.UNDECIDED and self.path is not Path.BLACKJACK


class HybridSharedRound(RoundRecords):
    """One round of version B: one shared start, designated community cards, personal dealer
    hands, Royal Match 21 / Bet the Set / King's Bounty."""

    game = "hybrid-shared"
    irregularity_clause = CARD_READER

    actors_by_seat = False
    _DEALER_VERBS: ClassVar[dict[str, str]] = {"countdown-expired": "countdown_expired"}
    _ACTOR_VERBS: ClassVar[dict[str, tuple[str, bool]]] = {
        "insurance": ("take_insurance", True),
        "double": ("double_down", True),
        "no-insurance": ("decline_insurance", False),
        "hit": ("hit", False),
        "stand": ("stand", False),
        "split": ("split", False),
        "surrender": ("surrender", False),
    }

    def __init__(self, rules: HybridSharedRules, shoe: Shoe | None = None) -> None:
        if not isinstance(rules, HybridSharedRules):
            raise TypeError(
                f"A hybrid-shared round needs HybridSharedRules, not {type(rules).__name__}."
            )
        self._start_records(rules, shoe)
        self.rules: HybridSharedRules = rules
        self.phase = Phase.WAGERING
        self.players: dict[str, PlayerState] = {}
        self.start: Hand = Hand()
        """The shared start: every player's first and second card ((y)(1), (3))."""
        self.dealer_first_card: Card | None = None
        self.community_cards: list[Card] = []
        self._deal_step = 0

    # -- queries ---------------------------------------------------------------------------

    @property
    def is_complete(self) -> bool:
        """True once every wager is settled."""
        return self.phase is Phase.COMPLETE

    @property
    def insurance_open(self) -> bool:
        """Insurance is offered: the dealer's first card is an ace and no community card has
        been dealt yet (633c.5(z))."""
        first = self.dealer_first_card
        return (
            self.phase is Phase.PLAYING
            and self.rules.insurance
            and first is not None
            and first.is_ace
            and not self.community_cards
        )

    def player_state(self, player: str) -> PlayerState:
        """The state of ``player``; :class:`IllegalActionError` if not at the table."""
        state = self.players.get(player)
        if state is None:
            raise IllegalActionError(
                f"{player!r} has no Blackjack Wager this round ({WAGER}).", rule=WAGER
            )
        return state

    def player_dealer(self, player: str) -> Hand:
        """``player``'s personal dealer hand (§2.2 of ``referenced-rules.md``)."""
        return self.player_state(player).dealer

    def current_hand(self, player: str) -> SharedHand | None:
        """The hand ``player`` decides on now, else None."""
        state = self.players.get(player)
        if state is None or self.phase is not Phase.PLAYING:
            return None
        for hand in state.hands:
            if not hand.done:
                return None if hand.awaiting_card else hand
        return None

    def next_card_for(self, player: str) -> str | None:
        """What the next community card is for ``player``: ``"hand 1"``, ``"hand 2"``,
        ``"dealer"``, None when the player's round is complete, or ``"decision"`` while the
        player's decision is awaited."""
        stage, hand = self._stage(self.player_state(player))
        if stage == _TO_HAND:
            assert hand is not None
            return _HAND_LABELS[hand.index]
        if stage == _TO_DEALER:
            return "dealer"
        if stage == _DECIDE:
            return "decision"
        return None

    def players_to_decide(self) -> list[str]:
        """Players whose decision the table waits for before the next community card."""
        if self.phase is not Phase.PLAYING or self.card_request is not None:
            return []
        insurance = self.insurance_open
        return [state.player for state in self.players.values() if self._deciding(state, insurance)]

    def next_step(self) -> str:
        """What the table waits for, in words (dealer console, transcripts)."""
        if self.card_request is not None:
            return f"deal {self.card_request.describe()}"
        if self.phase is Phase.WAGERING:
            return "place wagers, then close wagering"
        if self.phase is Phase.PLAYING:
            waiting = self.players_to_decide()
            return "decisions from " + ", ".join(waiting) + " (or the countdown clock)"
        return "round complete"

    def legal_actions(self, player: str) -> list[str]:
        """The verbs ``player`` may use now, as command words."""
        checks: list[tuple[str, Callable[[], bool]]] = [
            ("insurance", lambda: self.can_take_insurance(player)),
            ("no-insurance", lambda: self.can_decline_insurance(player)),
            ("hit", lambda: self.can_hit(player)),
            ("stand", lambda: self.can_stand(player)),
            ("double", lambda: self.can_double_down(player)),
            ("split", lambda: self.can_split(player)),
            ("surrender", lambda: self.can_surrender(player)),
        ]
        return [name for name, check in checks if check()]

    # -- wagering (633c.5(k), (x)) ---------------------------------------------------------

    def _verify_wagering_open(self, what: str) -> None:
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(
                f"{what} is placed before the first card is dealt; the round is in {self.phase} "
                f"({BEFORE_FIRST_CARD}).",
                rule=BEFORE_FIRST_CARD,
            )

    def verify_placing_wager(self, player: str, amount: int) -> None:
        """Raise unless ``player`` may place a Blackjack Wager of ``amount`` cents."""
        self._verify_wagering_open("A Blackjack Wager")
        if not isinstance(player, str) or not player.strip() or " " in player:
            raise IllegalActionError(
                f"{player!r} is not a player name (one word, not empty) ({WAGER}).", rule=WAGER
            )
        if player == "dealer":
            raise IllegalActionError(
                f"'dealer' names the dealer, not a player ({WAGER}).", rule=WAGER
            )
        if player in self.players:
            raise IllegalActionError(
                f"{player} already has a Blackjack Wager ({WAGER}).", rule=WAGER
            )
        if len(self.players) >= self.rules.max_seats:
            raise IllegalActionError(
                f"The table accepts {self.rules.max_seats} players ({WAGER}).", rule=WAGER
            )
        rules = self.rules
        self._verify_amount(amount, "Blackjack Wager", rules.table_minimum, rules.table_maximum)

    def _verify_amount(self, amount: int, what: str, low: int, high: int) -> None:
        rule = "PA 633a.6"
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise IllegalActionError(
                f"A {what} of {amount!r} is not whole cents ({rule}).", rule=rule
            )
        if not low <= amount <= high:
            raise IllegalActionError(
                f"A {what} of {format_cents(amount)} is outside the limits "
                f"{format_cents(low)} to {format_cents(high)} ({rule}).",
                rule=rule,
            )
        self._verify_unit(amount, what, rule)

    def can_place_wager(self, player: str, amount: int) -> bool:
        """Whether :meth:`place_wager` would succeed."""
        return can(self.verify_placing_wager, player, amount)

    def place_wager(self, player: str, amount: int) -> Operation:
        """Place ``player``'s Blackjack Wager (633c.5(x)) of ``amount`` cents."""
        self.verify_placing_wager(player, amount)
        number = len(self.players) + 1
        wager_id = self._new_wager(number, player, WagerKind.BLACKJACK, amount, 0)
        state = PlayerState(number, player, amount)
        state.hands.append(SharedHand(0, Hand(), wager_id, amount))
        self.players[player] = state
        return self._log(Operation("wager", seat=number, hand=0, amount=amount, note=player))

    def verify_placing_side_wager(self, player: str, kind: WagerKind | str, amount: int) -> None:
        """Raise unless ``player`` may place a side wager of ``kind`` (Royal Match 21, Bet the
        Set, King's Bounty) for ``amount`` cents: offered by the rules, by a player with a
        Blackjack Wager, before the first card ((k), (x))."""
        side = _side_kind(kind)
        name = SIDE_NAMES[side]
        self._verify_wagering_open(f"A {name} wager")
        offered = {
            WagerKind.ROYAL_MATCH: self.rules.royal_match,
            WagerKind.BET_THE_SET: self.rules.bet_the_set,
            WagerKind.KINGS_BOUNTY: self.rules.kings_bounty,
        }[side]
        if not offered:
            raise IllegalActionError(
                f"The {name} wager is not offered under these rules ({WAGER}).", rule=WAGER
            )
        state = self.players.get(player)
        if state is None:
            raise IllegalActionError(
                f"{player!r} must place a Blackjack Wager before a {name} wager ({WAGER}).",
                rule=WAGER,
            )
        if side in state.side_wager_ids:
            raise IllegalActionError(f"{player} already has a {name} wager ({WAGER}).", rule=WAGER)
        rules = self.rules
        self._verify_amount(
            amount, f"{name} wager", rules.side_wager_minimum, rules.side_wager_maximum
        )

    def can_place_side_wager(self, player: str, kind: WagerKind | str, amount: int) -> bool:
        """Whether :meth:`place_side_wager` would succeed."""
        return can(self.verify_placing_side_wager, player, kind, amount)

    def place_side_wager(self, player: str, kind: WagerKind | str, amount: int) -> Operation:
        """Place a Royal Match 21, Bet the Set or King's Bounty wager (633c.5(x))."""
        self.verify_placing_side_wager(player, kind, amount)
        side = _side_kind(kind)
        state = self.players[player]
        state.side_wager_ids[side] = self._new_wager(state.number, player, side, amount, None)
        return self._log(Operation(str(side.value), seat=state.number, amount=amount, note=player))

    def verify_closing_wagering(self) -> None:
        """Raise unless wagering can close and the deal begin."""
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(f"Wagering is already closed ({DEAL}).", rule=DEAL)
        if not self.players:
            raise IllegalActionError(
                f"No player has a Blackjack Wager; there is nothing to deal ({DEAL}).", rule=DEAL
            )

    def close_wagering(self) -> Operation:
        """No more wagers: deal the shared start ((y)(1)–(3))."""
        self.verify_closing_wagering()
        self.phase = Phase.DEALING
        operation = self._log(Operation("deal", note=f"{len(self.players)} player(s)"))
        self._advance()
        return operation

    # -- cards -----------------------------------------------------------------------------

    def _receive(self, target: CardTarget, card: Card) -> Operation:
        self._count_card(card)
        kind = target.kind
        if kind == "community":
            self.community_cards.append(card)
        elif kind == "dealer-first":
            self.dealer_first_card = card
            for state in self.players.values():
                state.dealer.add(card)
        else:
            self.start.add(card)
            for state in self.players.values():
                state.hands[0].hand.add(card)
        if self.phase is Phase.DEALING:
            self._deal_step += 1
        operation = Operation("card", None, None, None, card, target.describe(), None, None, None)
        self.operations.append(operation)
        if kind == "community":
            self._designate(card)
        return operation

    # -- insurance (633c.5(z); § 633a.8; A-8) ----------------------------------------------

    def verify_taking_insurance(self, player: str, amount: int | None = None) -> None:
        """Raise unless ``player`` may insure for ``amount`` (at most half the Blackjack Wager)
        now: the dealer's first card is an ace and no community card is out ((z); A-8: a
        Blackjack holder may insure, there is no separate even money)."""
        state = self._verify_insurance(player)
        self._verify_insurance_amount(state.wager, amount, DECISIONS, "the Blackjack Wager")

    def _verify_insurance(self, player: str) -> PlayerState:
        if self.card_request is not None or self.phase is not Phase.PLAYING:
            raise IllegalActionError(
                f"Insurance is not offered now: the table waits for {self.next_step()} "
                f"({DECISIONS}).",
                rule=DECISIONS,
            )
        state = self.player_state(player)
        first = self.dealer_first_card
        if not self.rules.insurance:
            raise IllegalActionError(
                f"Insurance is not offered under these rules ({DECISIONS}).", rule=DECISIONS
            )
        if first is None or not first.is_ace:
            shown = "?" if first is None else first.display
            raise IllegalActionError(
                f"Insurance is offered only when the dealer's first card is an ace, not {shown} "
                f"({DECISIONS}).",
                rule=DECISIONS,
            )
        if self.community_cards:
            raise IllegalActionError(
                f"Insurance closed when the first community card was dealt ({DECISIONS}).",
                rule=DECISIONS,
            )
        if state.insurance_decided:
            raise IllegalActionError(
                f"{player} has already decided on insurance ({DECISIONS}).", rule=DECISIONS
            )
        return state

    def can_take_insurance(self, player: str, amount: int | None = None) -> bool:
        """Whether :meth:`take_insurance` would succeed."""
        return can(self.verify_taking_insurance, player, amount)

    def take_insurance(self, player: str, amount: int | None = None) -> Operation:
        """Insure for ``amount`` (default: half the Blackjack Wager); pays 2 to 1 ((ee)(1))."""
        self.verify_taking_insurance(player, amount)
        state = self.players[player]
        amount = state.wager // 2 if amount is None else amount
        state.insurance_decided = True
        state.insurance_wager_id = self._new_wager(
            state.number, player, WagerKind.INSURANCE, amount, None
        )
        state.events.append((len(self.community_cards), "insures", amount))
        command = f"{player} insurance" + (
            "" if amount == state.wager // 2 else f" {format_cents(amount)}"
        )
        operation = self._log(
            Operation("insurance", seat=state.number, amount=amount, command=command, note=player)
        )
        self._advance()
        return operation

    def verify_declining_insurance(self, player: str) -> None:
        """Raise unless ``player`` may decline insurance now."""
        self._verify_insurance(player)

    def can_decline_insurance(self, player: str) -> bool:
        """Whether :meth:`decline_insurance` would succeed."""
        return can(self.verify_declining_insurance, player)

    def decline_insurance(self, player: str) -> Operation:
        """``player`` takes no insurance (a decision on the hand also declines it)."""
        self.verify_declining_insurance(player)
        state = self.players[player]
        state.insurance_decided = True
        operation = self._log(
            Operation(
                "no-insurance", seat=state.number, command=f"{player} no-insurance", note=player
            )
        )
        self._advance()
        return operation

    # -- decisions (633c.5(z)) -------------------------------------------------------------

    def _verify_decision(self, player: str, action: str, rule: str) -> SharedHand:
        """The hand ``player`` decides on, or raise naming why no decision is possible."""
        if self.phase is not Phase.PLAYING:
            if self.card_request is not None:
                raise IllegalActionError(
                    f"{player} cannot {action} yet: the dealer must first deal "
                    f"{self.card_request.describe()} ({DEAL}).",
                    rule=DEAL,
                )
            raise IllegalActionError(
                f"{player} cannot {action} now: the round is in {self.phase} ({rule}).", rule=rule
            )
        state = self.player_state(player)
        stage, hand = self._stage(state)
        if stage == _DECIDE:
            assert hand is not None
            return hand
        if stage == _TO_HAND:
            raise IllegalActionError(
                f"{player} cannot {action}: the next community card goes to "
                f"{player}'s hand ({DRAWN}).",
                rule=DRAWN,
            )
        last = next((h for h in reversed(state.hands) if h.done), state.hands[0])
        cards = last.hand
        if state.path is Path.BLACKJACK:
            reason, clause = "a Blackjack may not draw or take other decisions", DECISIONS
        elif state.path is Path.SURRENDERED:
            reason, clause = "the hand was surrendered", SURRENDER
        elif last.doubled:
            reason, clause = "a doubled hand is complete after one community card", ONE_CARD
        elif last.split_aces:
            reason, clause = "a split ace is complete after one community card", ONE_CARD
        elif cards.is_bust:
            reason, clause = "the hand is over 21 and was collected", HIT_BUST
        elif cards.total == 21:
            reason, clause = "a hand of 21 may not draw additional cards", DECISIONS
        else:
            reason, clause = "the player has stood; later cards go to the dealer", DEALER_HAND
        raise IllegalActionError(f"{player} cannot {action}: {reason} ({clause}).", rule=clause)

    def verify_hitting(self, player: str) -> None:
        """Raise unless ``player``'s hand may draw (below 21, (z))."""
        hand = self._verify_decision(player, "hit", DECISIONS)
        if hand.hand.total >= 21:  # pragma: no cover - a 21 is complete at once
            raise IllegalActionError(
                f"A hand of 21 may not draw additional cards ({DECISIONS}).", rule=DECISIONS
            )

    def can_hit(self, player: str) -> bool:
        """Whether :meth:`hit` would succeed."""
        return can(self.verify_hitting, player)

    def hit(self, player: str) -> Operation:
        """The next community card goes to ``player``'s hand ((aa)(3))."""
        self.verify_hitting(player)
        operation = self._hit(self.players[player], f"{player} hit")
        self._advance()
        return operation

    def _hit(self, state: PlayerState, command: str | None) -> Operation:
        hand = self._decision_hand(state)
        self._first_decision(state, Path.DREW)
        hand.awaiting_card = True
        state.events.append((len(self.community_cards), "hits", 0))
        return self._log(
            Operation(
                "hit",
                seat=state.number,
                hand=hand.index,
                command=command,
                note=state.player if command else f"{state.player} (countdown default)",
            )
        )

    def verify_standing(self, player: str) -> None:
        """Raise unless ``player`` may stand."""
        self._verify_decision(player, "stand", DECISIONS)

    def can_stand(self, player: str) -> bool:
        """Whether :meth:`stand` would succeed."""
        return can(self.verify_standing, player)

    def stand(self, player: str) -> Operation:
        """Stand: the hand is complete ((aa)(2) on two cards, (aa)(3)(ii) after drawing)."""
        self.verify_standing(player)
        operation = self._stand(self.players[player], f"{player} stand")
        self._advance()
        return operation

    def _stand(self, state: PlayerState, command: str | None) -> Operation:
        hand = self._decision_hand(state)
        self._first_decision(state, Path.STOOD)
        hand.done = True
        state.events.append((len(self.community_cards), "stands", 0))
        return self._log(
            Operation(
                "stand",
                seat=state.number,
                hand=hand.index,
                command=command,
                note=state.player if command else f"{state.player} (countdown default)",
            )
        )

    def verify_doubling_down(self, player: str, amount: int | None = None) -> None:
        """Raise unless ``player`` may double the hand by ``amount`` (§ 633a.10): two cards,
        after a split only with DAS, within the double-down totals."""
        hand = self._verify_decision(player, "double down", DOUBLE)
        cards = hand.hand
        self._verify_double_start(cards, rule=DOUBLE, after_split_rule=f"{SPLIT}(c)")
        self._verify_double(cards.total, hand.amount, amount, DOUBLE)

    def can_double_down(self, player: str, amount: int | None = None) -> bool:
        """Whether :meth:`double_down` would succeed."""
        return can(self.verify_doubling_down, player, amount)

    def double_down(self, player: str, amount: int | None = None) -> Operation:
        """Double (default: by the hand's full wager); exactly one community card follows
        ((aa)(3)(i))."""
        self.verify_doubling_down(player, amount)
        state = self.players[player]
        hand = self._decision_hand(state)
        amount = hand.amount if amount is None else amount
        command = f"{player} double" + ("" if amount == hand.amount else f" {format_cents(amount)}")
        self._first_decision(state, Path.DREW)
        hand.doubled = amount
        hand.amount += amount
        hand.awaiting_card = True
        self._restake(hand.wager_id, hand.amount)
        state.events.append((len(self.community_cards), "doubles", amount))
        operation = self._log(
            Operation(
                "double",
                seat=state.number,
                hand=hand.index,
                amount=amount,
                command=command,
                note=player,
            )
        )
        self._advance()
        return operation

    def verify_splitting(self, player: str) -> None:
        """Raise unless ``player`` may split: two cards of identical value (§ 633a.11(a)), for a
        total of two hands at most ((z))."""
        hand = self._verify_decision(player, "split", SPLIT)
        state = self.players[player]
        if state.split:
            raise IllegalActionError(
                f"Pairs may be split for a total of two hands only; {player} has split already "
                f"({DECISIONS}).",
                rule=DECISIONS,
            )
        self._verify_pair(hand.hand.cards, f"{SPLIT}(a)")

    def can_split(self, player: str) -> bool:
        """Whether :meth:`split` would succeed."""
        return can(self.verify_splitting, player)

    def split(self, player: str) -> Operation:
        """Split the pair into two hands, the second with a wager equal to the original
        (§ 633a.11(a)); hand 1 takes community cards until complete, then hand 2 (A-4, A-9)."""
        self.verify_splitting(player)
        state = self.players[player]
        hand = state.hands[0]
        first, second = hand.hand.cards
        aces = first.is_ace
        self._first_decision(state, Path.DREW)
        state.split = True
        hand.hand = Hand([first], from_split=True)
        hand.split_aces = aces
        hand.awaiting_card = True
        wager_id = self._new_wager(state.number, player, WagerKind.BLACKJACK, state.wager, 1)
        state.hands.append(
            SharedHand(
                1,
                Hand([second], from_split=True),
                wager_id,
                state.wager,
                split_aces=aces,
                awaiting_card=True,
            )
        )
        state.events.append((len(self.community_cards), "splits", state.wager))
        operation = self._log(
            Operation(
                "split",
                seat=state.number,
                hand=0,
                amount=state.wager,
                command=f"{player} split",
                note=player,
            )
        )
        self._advance()
        return operation

    def verify_surrendering(self, player: str) -> None:
        """Raise unless ``player`` may surrender: offered, on the two cards, before any other
        decision (633c.5(z); § 633a.9)."""
        hand = self._verify_decision(player, "surrender", SURRENDER)
        state = self.players[player]
        if not self.rules.surrender:
            raise IllegalActionError(
                f"Surrender is not offered under these rules ({SURRENDER}).", rule=SURRENDER
            )
        if state.acted or hand.index or len(hand.hand) != 2:
            raise IllegalActionError(
                f"Surrender is allowed only on the first two cards, before any other decision "
                f"({SURRENDER}; PA 633c.5(z)).",
                rule=SURRENDER,
            )

    def can_surrender(self, player: str) -> bool:
        """Whether :meth:`surrender` would succeed."""
        return can(self.verify_surrendering, player)

    def surrender(self, player: str) -> Operation:
        """Give up the hand for half its wager (§ 633a.9). Late (A-7 default): settled when the
        dealer's hole card for this player shows no Blackjack; early: at once."""
        self.verify_surrendering(player)
        state = self.players[player]
        hand = state.hands[0]
        self._first_decision(state, Path.SURRENDERED)
        hand.done = True
        state.events.append((len(self.community_cards), "surrenders", 0))
        operation = self._log(
            Operation(
                "surrender", seat=state.number, hand=0, command=f"{player} surrender", note=player
            )
        )
        if self.rules.surrender_timing == "early":
            self._settle_surrender(state, hand, f"{SURRENDER}; A-7 (early)")
        self._advance()
        return operation

    def verify_countdown_expiring(self) -> None:
        """Raise unless some player's decision is awaited (the clock runs only then)."""
        if not self.players_to_decide():
            raise IllegalActionError(
                f"No decision is awaited, so no countdown clock runs: the table waits for "
                f"{self.next_step()} ({DECISIONS}).",
                rule=DECISIONS,
            )

    def can_expire_countdown(self) -> bool:
        """Whether :meth:`countdown_expired` would succeed."""
        return can(self.verify_countdown_expiring)

    def countdown_expired(self) -> Operation:
        """The countdown clock ran out: every player who has not acted declines insurance and
        takes the configured default action ((z), (c)(2)): stand, or hit a hard 11 or less."""
        self.verify_countdown_expiring()
        waiting = [state for state in self.players.values() if self._deciding(state)]
        operation = self._log(
            Operation(
                "countdown-expired",
                command="dealer countdown-expired",
                note=", ".join(state.player for state in waiting),
            )
        )
        for state in waiting:
            if self.insurance_open and not state.insurance_decided:
                state.insurance_decided = True
                self._log(
                    Operation(
                        "no-insurance",
                        seat=state.number,
                        note=f"{state.player} (countdown default)",
                    )
                )
            stage, hand = self._stage(state)
            if stage != _DECIDE:
                continue
            assert hand is not None
            cards = hand.hand
            if self.rules.countdown_action(cards) == "hit" and self.can_hit(state.player):
                self._hit(state, None)
            else:
                self._stand(state, None)
        self._advance()
        return operation

    def _decision_hand(self, state: PlayerState) -> SharedHand:
        for hand in state.hands:
            if not hand.done:
                return hand
        raise AssertionError("a deciding player has an unfinished hand")  # pragma: no cover

    def _first_decision(self, state: PlayerState, path: Path) -> None:
        if state.path is Path.UNDECIDED:
            state.path = path
            state.insurance_decided = True

    # -- commands (notation) ---------------------------------------------------------------

    def apply(self, command: Command | str) -> Operation:
        """Apply one command in the text notation (``"ann hit"``, ``"dealer countdown-expired"``)."""
        if isinstance(command, str):
            command = Command.parse(command)
        return self._dispatch(command)

    # -- the automatic steps ---------------------------------------------------------------

    def _advance(self) -> None:
        """Deal until a decision is awaited, a card from the reader is needed, or every
        player's hand and personal dealer hand is complete."""
        while self.card_request is None:
            phase = self.phase
            if phase is Phase.DEALING:
                if self._deal_step < 3:
                    self._request(_START_TARGETS[self._deal_step])
                else:
                    self._after_deal()
            elif phase is Phase.PLAYING:
                players = self.players.values()
                insurance = self.insurance_open
                if any(self._deciding(state, insurance) for state in players):
                    return
                if all(state.complete for state in players):
                    self.phase = Phase.COMPLETE
                    self._log(
                        Operation("complete", note=f"{len(self.community_cards)} community card(s)")
                    )
                    return
                self._request(CardTarget("community", len(self.community_cards) + 1))
            else:
                return

    def _after_deal(self) -> None:
        self.phase = Phase.PLAYING
        blackjack = self.start.is_blackjack
        for state in self.players.values():
            if blackjack:
                state.path = Path.BLACKJACK
                state.hands[0].done = True
            for side in SIDE_KINDS:
                if side in state.side_wager_ids:
                    self._settle_side_after_deal(state, side)

    def _stage(self, state: PlayerState) -> tuple[int, SharedHand | None]:
        """What the next community card is for ``state``'s player."""
        for hand in state.hands:
            if not hand.done:
                return (_TO_HAND, hand) if hand.awaiting_card else (_DECIDE, hand)
        return (_DONE, None) if state.complete else (_TO_DEALER, None)

    def _deciding(self, state: PlayerState, insurance_open: bool | None = None) -> bool:
        if state.complete:
            return False
        if not state.insurance_decided and (
            self.insurance_open if insurance_open is None else insurance_open
        ):
            return True
        for hand in state.hands:
            if not hand.done:
                return not hand.awaiting_card
        return False

    def _designate(self, card: Card) -> None:
        """Give community ``card`` to each player's hand or personal dealer hand ((aa), (bb))."""
        for state in self.players.values():
            if state.complete:
                state.designations.append(None)
                continue
            target: SharedHand | None = None
            for hand in state.hands:
                if not hand.done:
                    target = hand
                    break
            if target is not None:
                target.hand.add(card)
                target.awaiting_card = False
                state.designations.append(_HAND_LABELS[target.index])
                self._after_hand_card(state, target)
            else:
                state.dealer.add(card)
                state.designations.append("dealer")
                self._after_dealer_card(state)

    def _after_hand_card(self, state: PlayerState, hand: SharedHand) -> None:
        cards = hand.hand
        if cards.is_bust:
            hand.done = True
            clause = ONE_CARD if hand.doubled else HIT_BUST
            self._settle_hand(hand, Result.LOSE, 0, clause)
        elif hand.doubled or hand.split_aces or cards.total == 21:
            hand.done = True

    def _after_dealer_card(self, state: PlayerState) -> None:
        dealer = state.dealer
        if len(dealer) == 2:
            self._dealer_second_card(state)
            if state.path is Path.BLACKJACK:
                # (aa)(1) designates the hole card only: it settles the Blackjack, insurance and
                # the side wager lines that need the dealer's two cards; no wager of this
                # player depends on a later card, and the text adds none to his dealer's hand
                # (unlike (aa)(2)(ii) and (aa)(3)).
                state.complete = True
                return
        if dealer.total >= 17 or state.dealer_blackjack:
            state.complete = True
            self._settle_final(state)

    # -- settlement ------------------------------------------------------------------------

    def _dealer_second_card(self, state: PlayerState) -> None:
        """The dealer's second card for this player: insurance, the dealer-dependent side
        wager lines (A-11), and every hand a dealer Blackjack or its absence decides."""
        dealer_blackjack = state.dealer.is_blackjack
        state.dealer_blackjack = dealer_blackjack
        path = state.path
        if path is Path.BLACKJACK:
            branch = "(aa)(1)(i)" if dealer_blackjack else "(aa)(1)(ii)"
        elif path is Path.DREW:
            branch = "(bb)(1)" if dealer_blackjack else "(bb)(2)"
        else:
            branch = "(aa)(2)(i)" if dealer_blackjack else "(aa)(2)(ii)"
        wager_id = state.insurance_wager_id
        if wager_id is not None:
            amount = self.wagers[wager_id].amount
            if dealer_blackjack:
                paid, rounding = winnings(amount, self.rules.insurance_pays, self.rules.rounding)
                self._record(
                    wager_id, Result.WIN, amount + paid, f"PA 633c.5{branch}, (ee)(1)", rounding
                )
            else:
                self._record(wager_id, Result.LOSE, 0, f"PA 633c.5{branch}")
        for side in state.side_pending:
            self._settle_side(state, side, dealer_blackjack)
        state.side_pending.clear()
        hand = state.hands[0]
        if path is Path.BLACKJACK:
            if dealer_blackjack:
                self._settle_hand(hand, Result.PUSH, hand.amount, "PA 633c.5(aa)(1)(i)")
            else:
                paid, rounding = winnings(
                    hand.amount, self.rules.blackjack_pays, self.rules.rounding
                )
                self._settle_hand(
                    hand,
                    Result.BLACKJACK,
                    hand.amount + paid,
                    "PA 633c.5(aa)(1)(ii), (ee)(2)",
                    rounding,
                )
        elif path is Path.SURRENDERED:
            if not hand.settled:
                if dealer_blackjack:
                    self._settle_hand(hand, Result.LOSE, 0, "PA 633c.5(aa)(2)(i); A-7")
                else:
                    self._settle_surrender(state, hand, f"{SURRENDER}; PA 633c.5(aa)(2)(ii); A-7")
        elif dealer_blackjack:
            if path is Path.STOOD:
                self._settle_hand(hand, Result.LOSE, 0, "PA 633c.5(aa)(2)(i)")
            else:
                self._settle_against_dealer_blackjack(state)

    def _settle_against_dealer_blackjack(self, state: PlayerState) -> None:
        """(bb)(1) after a hit, split or double: a split loses only the original wager, the
        additional split wager returned if its hand did not exceed 21 (A-10); a live double
        loses the original wager and the double is returned (A-19). Busted hands stay lost, so
        the total loss is max(W, busted)."""
        rules = self.rules
        if state.split:
            capped = rules.split_against_dealer_blackjack == "original-wager"
            clause = "PA 633c.5(bb)(1); A-10"
        elif state.hands[0].doubled:
            capped = rules.double_against_dealer_blackjack == "original-wager"
            clause = "PA 633c.5(bb)(1); A-19"
        else:
            capped = True
            clause = (
                "PA 633c.5(bb)(1), (t)(3)(iii)"
                if state.hands[0].hand.total == 21
                else ("PA 633c.5(bb)(1)")
            )
        busted = sum(hand.amount for hand in state.hands if hand.hand.is_bust)
        still_to_lose = max(state.wager - busted, 0)
        for hand in state.hands:
            if hand.settled:
                continue
            if capped:
                lost = min(still_to_lose, hand.amount)
                still_to_lose -= lost
            else:
                lost = hand.amount
            result = Result.LOSE if lost else Result.PUSH
            self._settle_hand(hand, result, hand.amount - lost, clause)

    def _settle_final(self, state: PlayerState) -> None:
        """The player's dealer hand is complete: every hand still open wins, pushes or loses as
        in (t) ((cc))."""
        dealer = state.dealer
        dealer_total = dealer.total
        dealer_bust = dealer.is_bust
        for hand in state.hands:
            if hand.settled:
                continue
            total = hand.hand.total
            if dealer_bust:
                self._settle_hand(
                    hand, Result.WIN, 2 * hand.amount, "PA 633c.5(cc), (t)(1)(i), (ee)(2)"
                )
            elif total > dealer_total:
                self._settle_hand(
                    hand, Result.WIN, 2 * hand.amount, "PA 633c.5(cc), (t)(1)(ii), (ee)(2)"
                )
            elif total == dealer_total:
                self._settle_hand(hand, Result.PUSH, hand.amount, "PA 633c.5(cc), (t)(2)")
            else:
                self._settle_hand(hand, Result.LOSE, 0, "PA 633c.5(cc), (t)(3)(ii)")

    def _settle_surrender(self, state: PlayerState, hand: SharedHand, clause: str) -> None:
        exact = Fraction(hand.amount, 2)
        returned = self.rules.rounding.round(exact)
        self._settle_hand(hand, Result.SURRENDER, returned, clause, exact - returned)

    def _settle_side_after_deal(self, state: PlayerState, side: WagerKind) -> None:
        """Settle a side wager on the shared start at once, unless a line it could win needs
        the dealer's two cards for this player (Crown Treasure, King's Bounty's top line;
        A-11): then it waits for the dealer's second card."""
        first, second = self.start.cards
        rules = self.rules
        if side is WagerKind.ROYAL_MATCH:
            waits = rules.crown_treasure and is_royal_match(first, second)
        elif side is WagerKind.KINGS_BOUNTY:
            waits = "spade-kings" in kings_bounty_lines(first, second, False) and any(
                line == "spade-kings-dealer-blackjack" for line, _ in rules.kings_bounty_lines()
            )
        else:
            waits = False
        if waits:
            state.side_pending.append(side)
        else:
            self._settle_side(state, side, None)

    def _settle_side(
        self, state: PlayerState, side: WagerKind, dealer_blackjack: bool | None
    ) -> None:
        """Pay the highest winning line only ((dd); § 633a.7(g)(4)–(6))."""
        first, second = self.start.cards
        rules = self.rules
        clause = SIDE_CLAUSES[side]
        bonus = Fraction(0)
        if side is WagerKind.ROYAL_MATCH:
            table = rules.royal_match_lines()
            matched = royal_match_lines(first, second)
            if (
                dealer_blackjack is not None
                and rules.crown_treasure
                and "royal-match" in matched
                and is_royal_match(*state.dealer.cards[:2])
            ):
                bonus = rules.crown_treasure_pays
        elif side is WagerKind.BET_THE_SET:
            table = rules.bet_the_set_lines()
            matched = bet_the_set_lines(first, second)
        else:
            table = rules.kings_bounty_lines()
            matched = kings_bounty_lines(first, second, bool(dealer_blackjack))
        best_line = ""
        best = Fraction(0)
        for line, odds in table:
            if line in matched and odds > best:
                best_line, best = line, odds
        if bonus:
            if rules.crown_treasure_in_addition:
                best_line = f"{best_line} + crown-treasure" if best_line else "crown-treasure"
                best += bonus
            else:
                best_line, best = "crown-treasure", bonus
            clause += "; A-11"
        elif side is WagerKind.KINGS_BOUNTY and best_line == "spade-kings-dealer-blackjack":
            clause += "; A-11"
        wager_id = state.side_wager_ids[side]
        amount = self.wagers[wager_id].amount
        state.side_lines[side] = best_line or "no line"
        if best:
            paid, rounding = winnings(amount, best, rules.rounding)
            self._record(wager_id, Result.WIN, amount + paid, clause, rounding, note=best_line)
        else:
            self._record(wager_id, Result.LOSE, 0, clause.split(",")[0], note="no line")

    def _settle_hand(
        self,
        hand: SharedHand,
        result: Result,
        returned: int,
        clause: str,
        rounding: Fraction = Fraction(0),
    ) -> None:
        hand.settled = True
        self._record(hand.wager_id, result, returned, clause, rounding)

    # -- views ((c); 605a) -----------------------------------------------------------------

    def _public_step(self) -> str:
        """:meth:`next_step` without naming who has or has not decided (terminal views)."""
        if self.phase is Phase.PLAYING and self.card_request is None:
            return "decisions"
        return self.next_step()

    def table_view(self) -> dict[str, Any]:
        """The part of a terminal view every terminal shares, and all a terminal without a
        wager this round may show: the phase, the countdown, the shared start, the dealer's
        first card and the community cards, all dealt face up ((y)); plain JSON data.

        >>> from tablejack.games.hybrid_shared_rules import HybridSharedRules
        >>> view = HybridSharedRound(HybridSharedRules()).table_view()
        >>> view["phase"], view["players_cards"], view["dealer"]
        ('wagering', [], {'first_card': None})
        """
        rules = self.rules
        return {
            "game": self.game,
            "phase": self.phase.value,
            "countdown_running": bool(self.players_to_decide()),
            "countdown_seconds": rules.countdown_seconds,
            "countdown_default": rules.countdown_default,
            "waiting_for": self._public_step(),
            "players_cards": [card.code for card in self.start.cards],
            "dealer": {"first_card": _code(self.dealer_first_card)},
            "community_cards": [card.code for card in self.community_cards],
            "insurance_offered": self.insurance_open,
        }

    def terminal_view(self, player: str) -> dict[str, Any]:
        """What ``player``'s electronic wagering terminal may show: the table (the shared start,
        the dealer's first card, the community cards so far, all face up), and the player's own
        wagers, hands, personal dealer hand, where each community card went for him, legal
        actions and settlements. Of the other players only their names (their hands and dealer
        hands once the round is complete); never the shoe or a card not yet dealt."""
        return self._terminal_view(player, self.table_view())

    def terminal_views(self, players: Iterable[str]) -> dict[str, dict[str, Any]]:
        """:meth:`terminal_view` of several players at once, as every terminal at the table
        gets it at each change: the shared part (:meth:`table_view`) is built once and each
        view gets its own shallow copy of it (its nested objects copied one level down)."""
        shared = self.table_view()
        return {
            player: self._terminal_view(
                player,
                {
                    key: dict(value) if isinstance(value, dict) else value
                    for key, value in shared.items()
                },
            )
            for player in players
        }

    def _terminal_view(self, player: str, view: dict[str, Any]) -> dict[str, Any]:
        """``player``'s terminal view over ``view``, a fresh :meth:`table_view`."""
        state = self.player_state(player)
        view["you"] = {
            "player": player,
            "blackjack_wager": state.wager,
            "side_wagers": {
                kind.value: self.wagers[wager_id].amount
                for kind, wager_id in state.side_wager_ids.items()
            },
            "insurance": (
                None
                if state.insurance_wager_id is None
                else self.wagers[state.insurance_wager_id].amount
            ),
            "path": state.path.value,
            "hands": [hand_view(hand) for hand in state.hands],
            "dealer_hand": _dealer_view(state),
            "designations": list(state.designations),
            "next_card": self.next_card_for(player) if self.phase is Phase.PLAYING else None,
            "legal_actions": self.legal_actions(player),
            "awaiting_decision": self.phase is Phase.PLAYING
            and self.card_request is None
            and self._deciding(state),
            "side_wager_lines": {kind.value: line for kind, line in state.side_lines.items()},
            "settlements": [s.to_json() for s in self.settlements if s.player == player],
            "net": sum(s.net for s in self.settlements if s.player == player),
        }
        others: list[dict[str, Any]] = []
        for other in self.players.values():
            if other.player == player:
                continue
            entry: dict[str, Any] = {"player": other.player}
            if self.is_complete:
                entry["hands"] = [
                    {"cards": [c.code for c in h.hand.cards], "total": h.hand.total}
                    for h in other.hands
                ]
                entry["dealer_hand"] = [card.code for card in other.dealer.cards]
            others.append(entry)
        view["players"] = others
        return view

    def audit_view(self) -> dict[str, Any]:
        """Everything, for the surveillance and audit audience: every player's wagers, hands,
        **personal dealer hand** and the designation of every community card, the pending
        decisions, the card request, wagers and settlements."""
        view = self.table_view()
        view["rules"] = self.rules.to_mapping()
        view["card_request"] = None if self.card_request is None else self.card_request.describe()
        view["awaiting_players"] = self.players_to_decide()
        view["next_step"] = self.next_step()
        view["shoe_remaining"] = None if self.shoe is None else self.shoe.remaining
        view["players"] = [
            {
                "player": state.player,
                "number": state.number,
                "blackjack_wager": state.wager,
                "path": state.path.value,
                "insurance_decided": state.insurance_decided,
                "hands": [hand_view(hand) for hand in state.hands],
                "dealer_hand": _dealer_view(state),
                "dealer_blackjack": state.dealer_blackjack,
                "designations": list(state.designations),
                "next_card": self.next_card_for(state.player)
                if self.phase is Phase.PLAYING
                else None,
                "side_wager_lines": {k.value: v for k, v in state.side_lines.items()},
                "complete": state.complete,
            }
            for state in self.players.values()
        ]
        view["wagers"] = [
            {
                "id": w.id,
                "number": w.seat,
                "player": w.player,
                "kind": w.kind.value,
                "amount": w.amount,
                "hand": w.hand,
            }
            for w in self.wagers
        ]
        view["settlements"] = [s.to_json() for s in self.settlements]
        view["cards_dealt"] = [card.code for card in self.cards_dealt]
        view["operations"] = len(self.operations)
        view["house_net"] = self.house_net() if self.is_complete else None
        return view


_HAND_LABELS = ("hand 1", "hand 2")


def _code(card: Card | None) -> str | None:
    return None if card is None else card.code


def _dealer_view(state: PlayerState) -> dict[str, Any]:
    dealer = state.dealer
    return {
        "cards": [card.code for card in dealer.cards],
        "total": dealer.total,
        "soft": dealer.is_soft,
        "blackjack": dealer.is_blackjack,
        "bust": dealer.is_bust,
        "complete": state.complete,
    }


def _side_kind(kind: WagerKind | str) -> WagerKind:
    try:
        side = WagerKind(kind)
    except ValueError:
        side = None
    if side not in SIDE_KINDS:
        raise IllegalActionError(
            f"{kind!r} is not a side wager of this game; use royal_match, bet_the_set or "
            f"kings_bounty ({WAGER}).",
            rule=WAGER,
        )
    assert side is not None
    return side


# -- the registry's functions (tablejack.games.GAMES) -------------------------------------------


def seat_players(round_: HybridSharedRound, seats: tuple[Mapping[str, Any], ...]) -> None:
    """Place each seat entry's wagers (``{player = "ann", wager = "$10", royal_match = "$5",
    bet_the_set = "$5", kings_bounty = "$1"}``), then close wagering and deal."""
    allowed = {"player", "wager", *SIDE_FIELDS}
    for entry in seats:
        unknown = set(entry) - allowed
        if unknown or not {"player", "wager"} <= set(entry):
            raise InvalidNotationError(
                'A hybrid-shared seat is written player = "ann", wager = "$10", with optional '
                f"royal_match, bet_the_set, kings_bounty amounts; got {dict(entry)!r}."
            )
        round_.place_wager(entry["player"], entry["wager"])
        for key, kind in SIDE_FIELDS.items():
            if key in entry:
                round_.place_side_wager(entry["player"], kind, entry[key])
    round_.close_wagering()


def seats_of(round_: HybridSharedRound) -> tuple[dict[str, Any], ...]:
    """The seat entries of a round, for export."""
    entries = []
    for state in round_.players.values():
        entry: dict[str, Any] = {"player": state.player, "wager": state.wager}
        for key, kind in SIDE_FIELDS.items():
            wager_id = state.side_wager_ids.get(kind)
            if wager_id is not None:
                entry[key] = round_.wagers[wager_id].amount
        entries.append(entry)
    return tuple(entries)


def transcript(round_: HybridSharedRound) -> list[str]:
    """A readable account: the shared start, the community cards, then per player the
    decisions, where each community card went, the personal dealer hand and the settlements::

        ann: 10♠ 6♥ = 16, hits, 5♣ to hand 1 = 21; dealer 9♦ 7♦ = 16, 4♠ = 20; ...
    """
    start = " ".join(card.display for card in round_.start.cards)
    first = "?" if round_.dealer_first_card is None else round_.dealer_first_card.display
    community = " ".join(card.display for card in round_.community_cards) or "none"
    lines = [
        f"Shared start: every player {start}; dealer's first card {first}",
        f"Community cards: {community}",
    ]
    for state in round_.players.values():
        parts: list[str] = [_total_text(Hand(round_.start.cards))]
        events = list(state.events)
        hands = [Hand(from_split=state.split) for _ in state.hands]
        if state.split:
            for hand, card in zip(hands, round_.start.cards, strict=False):
                hand.add(card)
        else:
            for card in round_.start.cards:
                hands[0].add(card)
        dealer = Hand([] if round_.dealer_first_card is None else [round_.dealer_first_card])
        for number, card in enumerate(round_.community_cards):
            while events and events[0][0] <= number:
                _, verb, amount = events.pop(0)
                parts.append(f"{verb} {format_cents(amount)}" if amount else verb)
            where = state.designations[number] if number < len(state.designations) else None
            if where is None:
                continue
            if where == "dealer":
                dealer.add(card)
                label = "hole card" if len(dealer) == 2 else "dealer"
                parts.append(f"{card.display} {label} = dealer {_total_text(dealer)}")
            else:
                hand = hands[int(where[-1]) - 1]
                hand.add(card)
                parts.append(f"{card.display} to {where} = {_total_text(hand)}")
        parts.extend(
            f"{verb} {format_cents(amount)}" if amount else verb for _, verb, amount in events
        )
        settled = [
            f"{_KIND_LABELS[s.kind]}"
            + (f" hand {s.hand + 1}" if state.split and s.hand is not None else "")
            + f" {s.describe()}"
            for s in round_.settlements
            if s.player == state.player
        ]
        lines.append(
            f"{state.player}: " + ", ".join(parts) + ("; " if settled else "") + "; ".join(settled)
        )
    return lines


_KIND_LABELS = {
    WagerKind.BLACKJACK: "Blackjack Wager",
    WagerKind.INSURANCE: "insurance",
    WagerKind.ROYAL_MATCH: "Royal Match 21",
    WagerKind.BET_THE_SET: "Bet the Set",
    WagerKind.KINGS_BOUNTY: "King's Bounty",
    WagerKind.EZ_BUST: "EZ Bust",
    WagerKind.BUZZER_BEATER: "Buzzer Beater",
}


def _total_text(hand: Hand) -> str:
    if hand.is_blackjack:
        return f"{' '.join(c.display for c in hand.cards)} Blackjack"
    if hand.is_bust:
        return f"{hand.total} bust"
    soft = "soft " if hand.is_soft and hand.total < 21 else ""
    if len(hand) == 2:
        return f"{' '.join(c.display for c in hand.cards)} = {soft}{hand.total}"
    return f"{soft}{hand.total}"
