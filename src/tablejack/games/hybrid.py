"""PA 633c.5(a)–(v), Blackjack on a hybrid gaming table, version A: the ``hybrid`` game.

Three player positions; any number of terminal players back them (633c.5(l), A-1). Each player
has an independent hand made of his position's two cards and the community cards his own
decisions take, his own Blackjack Wager and, if offered, a Buzzer Beater wager ((m)).

A round is one explicit state (:class:`HybridRound`) changed only by its verbs. Each verb checks
first (``verify_…`` raises :class:`IllegalActionError` naming the clause; ``can_…`` answers yes
or no), then changes the state and appends a frozen :class:`Operation` to the log.

The round runs: wagering ((k), (l), (m)) → the deal ((n): position 1, farthest to the dealer's
left, first: one card to each selected position, the dealer's up card, a second card to each
selected position (A-2), the hole card face down) → insurance / even money against an up ace,
then the card reader peek against an up ace or ten-value ((o)) → player Blackjacks paid against
2–9 ((p)(1)) → **decision rounds** ((p)(2), (q), (r)) → the hole card turned up and the dealer
drawing to 17–21 ((s)) → settlement ((t), (u), (v)).

Decision rounds. Every player with a hand to play decides within one countdown window, in any
order; nothing is drawn until every one of them has decided or the dealer reports
``countdown-expired`` (the configured default then acts for the rest, (p)(2)). The dealer then
draws **one** community card face up ((q)), and it goes to every player whose hand asked for a
card: each player takes community cards in order through his own cursor (A-3, A-4). Every
player still playing takes exactly one card per round of the clock (a hit, a double, a split, a
split hand's second card), so at every window all of them stand at the same cursor and no one
has seen the card he is deciding to take. A player who needs a card but no decision (the second
card of a split hand) waits for the next draw; when nobody has a decision to make the dealer
draws on without a window.

Cards come from a :class:`~tablejack.core.shoe.Shoe` given to the round or, without one, one at
a time through :meth:`HybridRound.deal_card` as the card-reading shoe reads them;
:attr:`HybridRound.card_request` says which card the engine waits for.

>>> from tablejack.core import Shoe
>>> shoe = Shoe.prearranged("10S 9D 6H 7C 5S 4H", decks=6)
>>> table = HybridRound(HybridRules(), shoe)
>>> _ = table.place_wager("ann", 1, 1000); _ = table.place_wager("bob", 1, 1000)
>>> _ = table.close_wagering()
>>> _ = table.hit("ann"); _ = table.stand("bob")
>>> [str(card) for card in table.community_cards], table.players["ann"].hands[0].hand.total
(['5S'], 21)
>>> table.dealer.describe(), table.player_net()
('9♦ 7♣ 4♥ = 20', {'ann': 1000, 'bob': -1000})
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Any

from tablejack.core.cards import Card
from tablejack.core.commands import Command
from tablejack.core.errors import IllegalActionError, InvalidNotationError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, winnings
from tablejack.core.records import (
    Operation,
    Result,
    Settlement,
    WagerKind,
)
from tablejack.core.round import RoundRecords, can
from tablejack.core.shoe import Shoe
from tablejack.games.hybrid_rules import (
    BuzzerBeaterEdgeWarning,
    BuzzerBeaterRow,
    HybridRules,
    buzzer_beater_review,
    warn_if_player_edge,
)
from tablejack.games.strategy import legal_basic_strategy
from tablejack.games.views import hand_view

__all__ = [
    "BuzzerBeaterEdgeWarning",
    "BuzzerBeaterRow",
    "HybridCardTarget",
    "HybridHand",
    "HybridRound",
    "HybridRules",
    "Phase",
    "PlayerState",
    "TerminalViewParts",
    "bot_command",
    "bot_seat",
    "buzzer_beater_review",
    "seat_players",
    "seats_of",
    "transcript",
    "warn_if_player_edge",
]

WAGERS = "PA 633c.5(k)"
POSITIONS = "PA 633c.5(l)"
BUZZER = "PA 633c.5(m)"
DEAL = "PA 633c.5(n)"
PEEK = "PA 633c.5(o)"
DECIDE = "PA 633c.5(p)(2)"
COMMUNITY = "PA 633c.5(q)"
HIT = "PA 633c.5(r)"
NO_DRAW = "PA 633c.5(r)(1)"
READER = "PA 633c.5(j)"
INSURANCE = "PA 633a.8"
EVEN_MONEY = "PA 633a.8(e)"
DOUBLE = "PA 633a.10"
SPLIT = "PA 633a.11"
LIMITS = "PA 633a.6"


class Phase(StrEnum):
    """Where a round stands."""

    WAGERING = "wagering"
    DEALING = "dealing"
    INSURANCE = "insurance"
    PLAYING = "playing"
    DEALER = "dealer"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class HybridCardTarget:
    """Where the next card goes: ``position`` (``number`` 1–3), ``up``, ``hole``,
    ``community`` (``number`` = its place in the community sequence) or ``dealer``."""

    kind: str
    number: int | None = None

    def describe(self) -> str:
        """``'position 2'``, ``'community card 3'``, ``'dealer hole card'``…"""
        if self.kind == "position":
            return f"position {self.number}"
        if self.kind == "community":
            return f"community card {self.number}"
        return {"up": "dealer up card", "hole": "dealer hole card", "dealer": "dealer"}[self.kind]


@dataclass(slots=True)
class HybridHand:
    """One hand of one player: its cards, its Blackjack Wager and how far it has been played."""

    index: int
    hand: Hand
    wager_id: int
    amount: int
    doubled: int = 0
    split_aces: bool = False
    done: bool = False
    settled: bool = False
    awaiting_card: bool = False
    by_default: bool = False
    steps: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TerminalViewParts:
    """The parts of every terminal view of one moment (:meth:`HybridRound.terminal_view_parts`):
    the table's part all views share, every player's public entry in the table's order, and
    each wanted player's own part."""

    table: dict[str, Any]
    entries: list[tuple[str, dict[str, Any]]]
    yous: dict[str, dict[str, Any]]


@dataclass(slots=True)
class PlayerState:
    """A terminal player in this round: his position, wagers and hands."""

    name: str
    position: int
    wager: int
    hands: list[HybridHand] = field(default_factory=list)
    buzzer_beater_id: int | None = None
    insurance_decided: bool = False
    insurance_wager_id: int | None = None
    buzzer_beater: int = 0
    buzzer_beater_settled: bool = False
    cursor: int = 0
    splits: int = 0
    side_steps: list[str] = field(default_factory=list)


class HybridRound(RoundRecords):
    """One round of Blackjack on a hybrid gaming table, version A (PA 633c.5(a)–(v))."""

    game = "hybrid"
    irregularity_clause = READER

    def __init__(self, rules: HybridRules, shoe: Shoe | None = None) -> None:
        if not isinstance(rules, HybridRules):
            raise TypeError(f"A hybrid round needs HybridRules, not {type(rules).__name__}.")
        self._start_records(rules, shoe)
        self.rules: HybridRules = rules
        self.phase = Phase.WAGERING
        self.players: dict[str, PlayerState] = {}
        self.dealer = Hand()
        self.position_cards: dict[int, list[Card]] = {}
        self.community_cards: list[Card] = []
        self.hole_card_revealed = False
        self.dealer_blackjack: bool | None = None
        self.decision_round = 0
        self._deal_queue: list[HybridCardTarget] = []
        self._order: list[PlayerState] = []
        self._window_open = False
        self._deciders: dict[str, bool] = {}
        self._draw_due = False
        self._takers: list[tuple[PlayerState, HybridHand]] = []

    # -- queries ---------------------------------------------------------------------------

    @property
    def up_card(self) -> Card | None:
        """The dealer's up card, once dealt."""
        return self.dealer.cards[0] if self.dealer.cards else None

    @property
    def hole_card(self) -> Card | None:
        """The dealer's hole card (known to the engine through the card reader, never shown
        to a terminal before it is turned up)."""
        return self.dealer.cards[1] if len(self.dealer.cards) > 1 else None

    @property
    def is_complete(self) -> bool:
        """True once every wager is settled."""
        return self.phase is Phase.COMPLETE

    @property
    def players_in_order(self) -> list[PlayerState]:
        """The players in the order of play (633c.5(l)): by position, then in the order they
        wagered at it; before the first card, in the order they wagered.

        >>> from tablejack.games.hybrid_rules import HybridRules
        >>> round_ = HybridRound(HybridRules())
        >>> _ = round_.place_wager("bob", 2, 1000)
        >>> _ = round_.place_wager("ann", 1, 1000)
        >>> [state.name for state in round_.players_in_order]
        ['bob', 'ann']
        """
        return self._order or list(self.players.values())

    @property
    def positions(self) -> list[int]:
        """The positions selected by any player, in dealing order (1 first)."""
        return sorted({state.position for state in self.players.values()})

    @property
    def window_open(self) -> bool:
        """True while a countdown window waits for decisions (insurance or play)."""
        return self.phase is Phase.INSURANCE or (self.phase is Phase.PLAYING and self._window_open)

    def awaiting_players(self) -> list[str]:
        """The players the open countdown window still waits for, in table order."""
        if self.card_request is not None:
            return []
        if self.phase is Phase.INSURANCE:
            return [s.name for s in self._order if not s.insurance_decided]
        if self.phase is Phase.PLAYING and self._window_open:
            return [s.name for s in self._order if self._deciders.get(s.name) is False]
        return []

    def current_hand(self, player: str) -> HybridHand | None:
        """The hand ``player`` decides on now, or None."""
        state = self.players.get(player)
        if state is None:
            return None
        need = self._need(state)
        return need[1] if need is not None and need[0] == "decide" else None

    def next_step(self) -> str:
        """What the table waits for, in words (dealer console, transcripts)."""
        if self.card_request is not None:
            return f"deal a card to {self.card_request.describe()}"
        if self.phase is Phase.WAGERING:
            return "place wagers, then close wagering"
        if self.phase is Phase.INSURANCE:
            return "insurance decisions from " + ", ".join(self.awaiting_players())
        if self.phase is Phase.PLAYING:
            return (
                f"decisions in decision round {self.decision_round} from "
                + ", ".join(self.awaiting_players())
                + " (or countdown-expired)"
            )
        return "round complete"

    def _public_step(self) -> str:
        """:meth:`next_step` without naming who has or has not decided (terminal views)."""
        if self.card_request is not None or self.phase is Phase.WAGERING:
            return self.next_step()
        if self.phase is Phase.INSURANCE:
            return "insurance decisions"
        if self.phase is Phase.PLAYING:
            return f"decisions in decision round {self.decision_round}"
        return self.phase.value

    def legal_actions(self, player: str) -> list[str]:
        """The command words ``player`` may use now. Each verb's own check decides; the
        phase only skips the checks that its first condition would refuse (insurance and even
        money are offered in the insurance phase alone, the decisions of (r)–(t) in an open
        decision window alone), which matters because every terminal's view asks this at each
        change of the table."""
        checks: list[tuple[str, Callable[[], bool]]]
        if self.phase is Phase.INSURANCE:
            checks = [
                ("insurance", lambda: self.can_take_insurance(player)),
                ("no-insurance", lambda: self.can_decline_insurance(player)),
                ("even-money", lambda: self.can_take_even_money(player)),
            ]
        elif self.phase is Phase.PLAYING and self.card_request is None and self._window_open:
            checks = [
                ("hit", lambda: self.can_hit(player)),
                ("stand", lambda: self.can_stand(player)),
                ("double", lambda: self.can_double_down(player)),
                ("split", lambda: self.can_split(player)),
            ]
        else:
            return []
        return [name for name, check in checks if check()]

    # -- wagering ((k), (l), (m)) ----------------------------------------------------------

    def verify_placing_wager(self, player: str, position: int, amount: int) -> None:
        """Raise unless ``player`` may back ``position`` with a Blackjack Wager of ``amount``."""
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(
                f"Wagers are placed before the first card is dealt; the round is in {self.phase} "
                f"({WAGERS}).",
                rule=WAGERS,
            )
        if (
            not isinstance(player, str)
            or not player
            or player != player.strip()
            or len(player.split()) != 1
            or player.lower() == "dealer"
        ):
            raise IllegalActionError(
                f"{player!r} is not a player name (one word, not 'dealer') ({POSITIONS}).",
                rule=POSITIONS,
            )
        if player in self.players:
            state = self.players[player]
            raise IllegalActionError(
                f"{player} already has a Blackjack Wager on position {state.position}; each "
                f"player selects one position ({POSITIONS}).",
                rule=POSITIONS,
            )
        if (
            isinstance(position, bool)
            or not isinstance(position, int)
            or not 1 <= position <= self.rules.max_seats
        ):
            raise IllegalActionError(
                f"Position {position!r} does not exist: a player selects a position between one "
                f"and three ({POSITIONS}).",
                rule=POSITIONS,
            )
        self._verify_limits(amount, "Blackjack Wager", POSITIONS, limit_rule=LIMITS)

    def can_place_wager(self, player: str, position: int, amount: int) -> bool:
        """Whether :meth:`place_wager` would succeed."""
        return can(self.verify_placing_wager, player, position, amount)

    def place_wager(self, player: str, position: int, amount: int) -> Operation:
        """``player`` selects ``position`` and places a Blackjack Wager (633c.5(k), (l))."""
        self.verify_placing_wager(player, position, amount)
        wager_id = self._new_wager(position, player, WagerKind.BLACKJACK, amount, 0)
        state = PlayerState(player, position, amount)
        state.hands.append(HybridHand(0, Hand(), wager_id, amount))
        self.players[player] = state
        return self._log(
            Operation("wager", seat=position, hand=0, amount=amount, note=player, target=player)
        )

    def verify_placing_buzzer_beater(self, player: str, amount: int) -> None:
        """Raise unless ``player`` may place a Buzzer Beater wager of ``amount`` now: offered by
        the rules, with a Blackjack Wager, before the first card ((k), (m)); from one betting
        unit up to the player's Blackjack Wager (house limit)."""
        if not self.rules.buzzer_beater:
            raise IllegalActionError(
                f"The Buzzer Beater wager is not offered under these rules ({BUZZER}).",
                rule=BUZZER,
            )
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(
                f"A Buzzer Beater wager is placed before the first card is dealt; the round is "
                f"in {self.phase} ({WAGERS}).",
                rule=WAGERS,
            )
        state = self.players.get(player)
        if state is None:
            raise IllegalActionError(
                f"{player!r} has no Blackjack Wager: the Buzzer Beater is offered only to a "
                f"player who placed one ({BUZZER}).",
                rule=BUZZER,
            )
        if state.buzzer_beater_id is not None:
            raise IllegalActionError(
                f"{player} already has a Buzzer Beater wager ({BUZZER}).", rule=BUZZER
            )
        self._verify_buzzer_amount(player, state.wager, amount)

    def _verify_buzzer_amount(self, player: str, wager: int, amount: Any) -> None:
        """A Buzzer Beater of ``amount``: a positive whole amount of the betting unit, no more
        than ``player``'s Blackjack Wager of ``wager`` (the house's limit, (m))."""
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
            raise IllegalActionError(
                f"A Buzzer Beater wager of {amount!r} is not a positive amount ({BUZZER}).",
                rule=BUZZER,
            )
        if amount > wager:
            raise IllegalActionError(
                f"A Buzzer Beater wager of {format_cents(amount)} exceeds {player}'s Blackjack "
                f"Wager of {format_cents(wager)} (house limit, {BUZZER}).",
                rule=BUZZER,
            )
        self._verify_unit(amount, "Buzzer Beater wager", LIMITS)

    def can_place_buzzer_beater(self, player: str, amount: int) -> bool:
        """Whether :meth:`place_buzzer_beater` would succeed."""
        return can(self.verify_placing_buzzer_beater, player, amount)

    def place_buzzer_beater(self, player: str, amount: int) -> Operation:
        """Place ``player``'s Buzzer Beater wager (633c.5(m)): his hand will be 19 or more and
        lose to (or tie) the dealer's."""
        self.verify_placing_buzzer_beater(player, amount)
        state = self.players[player]
        state.buzzer_beater_id = self._new_wager(
            state.position, player, WagerKind.BUZZER_BEATER, amount, None
        )
        state.buzzer_beater = amount
        return self._log(
            Operation("buzzer-beater", seat=state.position, amount=amount, note=player)
        )

    def _verify_wager_open(self, player: str, kind: str, doing: str) -> tuple[PlayerState, int]:
        """The player and the id of his wager of ``kind`` (``blackjack`` or ``buzzer_beater``)
        that ``doing`` (taking back, changing) applies to: only while wagering is open, before
        the first card ((k))."""
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(
                f"A wager is {doing} only while wagering is open, before the first card is "
                f"dealt; the round is in {self.phase} ({WAGERS}).",
                rule=WAGERS,
            )
        state = self.players.get(player)
        if kind == "blackjack" and state is not None:
            return state, state.hands[0].wager_id
        if kind == "buzzer_beater" and state is not None and state.buzzer_beater_id is not None:
            return state, state.buzzer_beater_id
        if kind not in ("blackjack", "buzzer_beater"):
            raise IllegalActionError(
                f"{kind!r} is not a wager of this table ({WAGERS}).", rule=WAGERS
            )
        raise IllegalActionError(
            f"{player!r} has no {kind.replace('_', ' ')} wager to be {doing} ({WAGERS}).",
            rule=WAGERS,
        )

    def verify_withdrawing_wager(self, player: str, kind: str = "blackjack") -> None:
        """Raise unless ``player`` may take back his wager of ``kind`` now: wagers are placed
        before the first card ((k)), and until then a wager placed may be taken back."""
        self._verify_wager_open(player, kind, "taken back")

    def can_withdraw_wager(self, player: str, kind: str = "blackjack") -> bool:
        """Whether :meth:`withdraw_wager` would succeed."""
        return can(self.verify_withdrawing_wager, player, kind)

    def withdraw_wager(self, player: str, kind: str = "blackjack") -> Operation:
        """``player`` takes back his wager of ``kind`` before the first card ((k)): its amount
        becomes 0 (nothing to settle). Taking back the Blackjack Wager takes back the Buzzer
        Beater that needs it ((m)) and leaves the position; he may wager again."""
        state, wager_id = self._verify_wager_open(player, kind, "taken back")
        if kind == "blackjack":
            if state.buzzer_beater_id is not None:
                self._restake(state.buzzer_beater_id, 0)
            self._restake(wager_id, 0)
            del self.players[player]
        else:
            self._restake(wager_id, 0)
            state.buzzer_beater_id = None
            state.buzzer_beater = 0
        return self._log(
            Operation("withdraw", seat=state.position, amount=0, note=player, target=kind)
        )

    def verify_changing_wager(self, player: str, kind: str, amount: int) -> None:
        """Raise unless ``player`` may change his wager of ``kind`` to ``amount`` now: before
        the first card ((k)), within the limits of a new wager of that kind; a Blackjack Wager
        not below the player's Buzzer Beater, a Buzzer Beater not above his Blackjack Wager
        ((m), house limit)."""
        state, _ = self._verify_wager_open(player, kind, "changed")
        if kind == "blackjack":
            self._verify_limits(amount, "Blackjack Wager", POSITIONS, limit_rule=LIMITS)
            if state.buzzer_beater_id is not None and amount < state.buzzer_beater:
                raise IllegalActionError(
                    f"A Blackjack Wager of {format_cents(amount)} is below {player}'s Buzzer "
                    f"Beater wager of {format_cents(state.buzzer_beater)}; lower or take back "
                    f"the Buzzer Beater first (house limit, {BUZZER}).",
                    rule=BUZZER,
                )
            return
        self._verify_buzzer_amount(player, state.wager, amount)

    def can_change_wager(self, player: str, kind: str, amount: int) -> bool:
        """Whether :meth:`change_wager` would succeed."""
        return can(self.verify_changing_wager, player, kind, amount)

    def change_wager(self, player: str, kind: str, amount: int) -> Operation:
        """``player`` raises or lowers his wager of ``kind`` to ``amount`` before the first
        card ((k))."""
        self.verify_changing_wager(player, kind, amount)
        state, wager_id = self._verify_wager_open(player, kind, "changed")
        self._restake(wager_id, amount)
        if kind == "blackjack":
            state.wager = amount
            state.hands[0].amount = amount
        else:
            state.buzzer_beater = amount
        return self._log(
            Operation("change", seat=state.position, amount=amount, note=player, target=kind)
        )

    def verify_closing_wagering(self) -> None:
        """Raise unless wagering can close and the deal begin."""
        if self.phase is not Phase.WAGERING:
            raise IllegalActionError(f"Wagering is already closed ({DEAL}).", rule=DEAL)
        if not self.players:
            raise IllegalActionError(
                f"No player has placed a Blackjack Wager; there is nothing to deal ({POSITIONS}).",
                rule=POSITIONS,
            )

    def close_wagering(self) -> Operation:
        """No more wagers: deal the initial cards in the order of 633c.5(n)."""
        self.verify_closing_wagering()
        seating = {name: number for number, name in enumerate(self.players)}
        self._order = sorted(self.players.values(), key=lambda s: (s.position, seating[s.name]))
        positions = self.positions
        self.position_cards = {position: [] for position in positions}
        first = [HybridCardTarget("position", position) for position in positions]
        self._deal_queue = [*first, HybridCardTarget("up"), *first, HybridCardTarget("hole")]
        self.phase = Phase.DEALING
        operation = self._log(Operation("deal", note=f"positions {', '.join(map(str, positions))}"))
        self._advance()
        return operation

    # -- cards -----------------------------------------------------------------------------

    def _receive(self, target: HybridCardTarget, card: Card) -> Operation:
        self._count_card(card)
        kind = target.kind
        if self.phase is Phase.DEALING:
            self._deal_queue.pop(0)
        if kind == "position":
            assert target.number is not None
            self.position_cards[target.number].append(card)
        elif kind == "community":
            self.community_cards.append(card)
        else:
            self.dealer.add(card)
        operation = self._log(
            Operation(
                "card",
                seat=target.number if kind == "position" else None,
                card=card,
                target=target.describe(),
            )
        )
        if kind == "position":
            for state in self._order:
                if state.position == target.number:
                    state.hands[0].hand.add(card)
        elif kind == "community":
            takers, self._takers = self._takers, []
            number = len(self.community_cards)
            for state, hand in takers:
                self._take(state, hand, card, number)
        return operation

    def _take(self, state: PlayerState, hand: HybridHand, card: Card, number: int) -> None:
        """``hand`` of ``state`` takes community card ``number`` (its player's next one)."""
        hand.hand.add(card)
        hand.awaiting_card = False
        state.cursor = number
        hand.steps.append(f"takes C{number} {card.display} = {hand.hand.total_text()}")
        self._log(
            Operation(
                "take",
                seat=state.position,
                hand=hand.index,
                card=card,
                target=state.name,
                note=f"community card {number}",
            )
        )
        self._finish_if_complete(state, hand)

    def _finish_if_complete(self, state: PlayerState, hand: HybridHand) -> None:
        cards = hand.hand
        rules = self.rules
        if cards.is_bust:
            hand.done = True
            self._settle_hand(state, hand, Result.LOSE, 0, "PA 633c.5(t)(3)(i); A-5")
        elif (
            cards.total == 21
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
        ):
            hand.done = True

    # -- insurance and even money ((o); § 633a.8) ------------------------------------------

    def _verify_insurance_window(self, player: str, rule: str) -> PlayerState:
        if self.phase is not Phase.INSURANCE:
            raise IllegalActionError(
                f"Insurance is not offered now; the round is in {self.phase} ({PEEK}; {rule}).",
                rule=rule,
            )
        state = self.players.get(player)
        if state is None:
            raise IllegalActionError(
                f"{player!r} has no Blackjack Wager this round ({POSITIONS}).", rule=POSITIONS
            )
        if state.insurance_decided:
            raise IllegalActionError(
                f"{player} has already decided on insurance ({rule}).", rule=rule
            )
        return state

    def verify_taking_insurance(self, player: str, amount: int | None = None) -> None:
        """Raise unless ``player`` may insure for ``amount`` (at most half his Blackjack
        Wager)."""
        state = self._verify_insurance_window(player, INSURANCE)
        self._verify_insurance_amount(state.wager, amount, INSURANCE, "the Blackjack Wager")

    def can_take_insurance(self, player: str, amount: int | None = None) -> bool:
        """Whether :meth:`take_insurance` would succeed."""
        return can(self.verify_taking_insurance, player, amount)

    def take_insurance(self, player: str, amount: int | None = None) -> Operation:
        """Insure ``player`` for ``amount`` (default half his wager); pays 2 to 1 ((v)(2))."""
        self.verify_taking_insurance(player, amount)
        state = self.players[player]
        half = state.wager // 2
        amount = half if amount is None else amount
        state.insurance_decided = True
        state.insurance_wager_id = self._new_wager(
            state.position, player, WagerKind.INSURANCE, amount, None
        )
        state.side_steps.append(f"insures {format_cents(amount)}")
        command = f"{player} insurance" + ("" if amount == half else f" {format_cents(amount)}")
        operation = self._log(
            Operation("insurance", seat=state.position, amount=amount, note=player, command=command)
        )
        self._advance()
        return operation

    def verify_declining_insurance(self, player: str) -> None:
        """Raise unless ``player`` may decline insurance now."""
        self._verify_insurance_window(player, INSURANCE)

    def can_decline_insurance(self, player: str) -> bool:
        """Whether :meth:`decline_insurance` would succeed."""
        return can(self.verify_declining_insurance, player)

    def decline_insurance(self, player: str) -> Operation:
        """``player`` takes no insurance."""
        self.verify_declining_insurance(player)
        state = self.players[player]
        state.insurance_decided = True
        operation = self._log(
            Operation(
                "no-insurance", seat=state.position, note=player, command=f"{player} no-insurance"
            )
        )
        self._advance()
        return operation

    def verify_taking_even_money(self, player: str) -> None:
        """Raise unless ``player`` holds a Blackjack against an up ace with even money offered."""
        state = self._verify_insurance_window(player, EVEN_MONEY)
        if not self.rules.even_money:
            raise IllegalActionError(
                f"Even money is not offered under these rules ({EVEN_MONEY}).", rule=EVEN_MONEY
            )
        hand = state.hands[0].hand
        if not hand.is_blackjack:
            raise IllegalActionError(
                f"Even money is offered only to a player Blackjack; {player} holds "
                f"{hand.describe()} ({PEEK}; {EVEN_MONEY}).",
                rule=EVEN_MONEY,
            )

    def can_take_even_money(self, player: str) -> bool:
        """Whether :meth:`take_even_money` would succeed."""
        return can(self.verify_taking_even_money, player)

    def take_even_money(self, player: str) -> Operation:
        """Settle ``player``'s Blackjack at 1 to 1 now, before the peek ((o); § 633a.8(e))."""
        self.verify_taking_even_money(player)
        state = self.players[player]
        state.insurance_decided = True
        hand = state.hands[0]
        hand.steps.append("takes even money")
        operation = self._log(
            Operation(
                "even-money", seat=state.position, note=player, command=f"{player} even-money"
            )
        )
        self._settle_hand(state, hand, Result.EVEN_MONEY, 2 * hand.amount, f"{PEEK}; {EVEN_MONEY}")
        self._advance()
        return operation

    # -- the countdown clock ((p)(2), (c)(2)) ----------------------------------------------

    def verify_countdown_expiring(self) -> None:
        """Raise unless a countdown window is open."""
        if self.card_request is not None or not self.window_open:
            raise IllegalActionError(
                f"No countdown clock is running: the table waits for {self.next_step()} "
                f"({DECIDE}).",
                rule=DECIDE,
            )

    def can_countdown_expire(self) -> bool:
        """Whether :meth:`countdown_expired` would be accepted."""
        return can(self.verify_countdown_expiring)

    def countdown_expired(self) -> Operation:
        """The countdown clock ran out: the configured default acts for every player who has
        not acted ((p)(2): stand; or the certificate holder's option, (c)(2)); an insurance
        window closes with no insurance for the undecided."""
        self.verify_countdown_expiring()
        operation = self._log(
            Operation(
                "countdown-expired",
                note=f"decision round {self.decision_round}",
                command="dealer countdown-expired",
            )
        )
        if self.phase is Phase.INSURANCE:
            for state in self._order:
                if not state.insurance_decided:
                    state.insurance_decided = True
                    self._log(
                        Operation(
                            "no-insurance",
                            seat=state.position,
                            note=state.name,
                            target="countdown default",
                        )
                    )
        else:
            for state in self._order:
                if self._deciders.get(state.name) is False:
                    self._apply_default(state)
        self._advance()
        return operation

    def _apply_default(self, state: PlayerState) -> None:
        while True:
            need = self._need(state)
            if need is None or need[0] != "decide":
                break
            hand = need[1]
            cards = hand.hand
            hit = self.rules.countdown_action(cards) == "hit" and self.can_hit(state.name)
            if hit:
                self._do_hit(state, hand, default=True)
            else:
                hand.by_default = True
                self._do_stand(state, hand, default=True)
        self._deciders[state.name] = True

    # -- player decisions ((p)(2), (r); § 633a.10, § 633a.11) ------------------------------

    def _verify_decision(
        self, player: str, action: str, rule: str, position: int | None, hand: int | None
    ) -> tuple[PlayerState, HybridHand]:
        state = self.players.get(player)
        if state is None:
            raise IllegalActionError(
                f"{player!r} has no Blackjack Wager this round and cannot {action} ({POSITIONS}).",
                rule=POSITIONS,
            )
        if position is not None and position != state.position:
            raise IllegalActionError(
                f"{player} backs position {state.position}, not position {position!r}: a player "
                f"decides only for his own hand ({POSITIONS}; A-1).",
                rule=POSITIONS,
            )
        if self.card_request is not None:
            raise IllegalActionError(
                f"{player} cannot {action} now: the dealer must first deal a card to "
                f"{self.card_request.describe()} ({COMMUNITY}).",
                rule=COMMUNITY,
            )
        if self.phase is not Phase.PLAYING or not self._window_open:
            raise IllegalActionError(
                f"{player} cannot {action} now: no decision round is open; the table waits for "
                f"{self.next_step()} ({DECIDE}).",
                rule=DECIDE,
            )
        need = self._need(state)
        if need is None:
            last = state.hands[-1].hand
            if last.is_blackjack or last.total == 21:
                raise IllegalActionError(
                    f"{player}'s hand is complete: a Blackjack or a total of 21 may not draw "
                    f"({NO_DRAW}).",
                    rule=NO_DRAW,
                )
            how = (
                "by the countdown clock's default"
                if any(h.by_default for h in state.hands)
                else "already"
            )
            raise IllegalActionError(
                f"{player}'s hands are complete ({how}); he cannot {action} ({DECIDE}).",
                rule=DECIDE,
            )
        if self._deciders.get(player) is not False or need[0] != "decide":
            raise IllegalActionError(
                f"{player} has already decided in decision round {self.decision_round}; his "
                f"hand waits for the next community card ({DECIDE}, {COMMUNITY}).",
                rule=DECIDE,
            )
        current = need[1]
        if hand is not None and hand != current.index:
            owned = any(h.index == hand for h in state.hands)
            raise IllegalActionError(
                f"{player} decides on his hand {current.index + 1} now, not hand "
                f"{hand + 1 if isinstance(hand, int) else hand!r}"
                + (
                    ": split hands are completed in order (PA 633a.11(b); A-4)."
                    if owned
                    else ": that hand is not his (PA 633c.5(l); A-1)."
                ),
                rule=f"{SPLIT}(b)" if owned else POSITIONS,
            )
        return state, current

    def verify_hitting(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> None:
        """Raise unless ``player``'s current hand may draw a community card ((r))."""
        _, current = self._verify_decision(player, "hit", HIT, position, hand)
        cards = current.hand
        if cards.is_blackjack or cards.total >= 21:
            raise IllegalActionError(
                f"A Blackjack or a total of 21 may not draw ({NO_DRAW}).", rule=NO_DRAW
            )
        if current.split_aces and self.rules.one_card_to_split_aces:
            raise IllegalActionError(f"A split ace receives one card only ({SPLIT}).", rule=SPLIT)

    def can_hit(self, player: str, *, position: int | None = None, hand: int | None = None) -> bool:
        """Whether :meth:`hit` would succeed."""
        return can(lambda: self.verify_hitting(player, position=position, hand=hand))

    def hit(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> Operation:
        """``player`` draws: his hand takes his next community card at the end of the round of
        the clock ((q), (r))."""
        self.verify_hitting(player, position=position, hand=hand)
        state = self.players[player]
        current = self.current_hand(player)
        assert current is not None
        operation = self._do_hit(state, current, default=False)
        self._decided(state)
        self._advance()
        return operation

    def _do_hit(self, state: PlayerState, hand: HybridHand, *, default: bool) -> Operation:
        hand.awaiting_card = True
        hand.steps.append("hits" + (" (countdown default)" if default else ""))
        return self._log(
            Operation(
                "hit",
                seat=state.position,
                hand=hand.index,
                note=state.name,
                target="countdown default" if default else None,
                command=None if default else f"{state.name} hit",
            )
        )

    def verify_standing(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> None:
        """Raise unless ``player`` may stand on his current hand."""
        self._verify_decision(player, "stand", DECIDE, position, hand)

    def can_stand(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> bool:
        """Whether :meth:`stand` would succeed."""
        return can(lambda: self.verify_standing(player, position=position, hand=hand))

    def stand(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> Operation:
        """``player`` stands: his current hand is complete."""
        self.verify_standing(player, position=position, hand=hand)
        state = self.players[player]
        current = self.current_hand(player)
        assert current is not None
        operation = self._do_stand(state, current, default=False)
        self._decided(state)
        self._advance()
        return operation

    def _do_stand(self, state: PlayerState, hand: HybridHand, *, default: bool) -> Operation:
        hand.done = True
        hand.steps.append("stands" + (" (countdown default)" if default else ""))
        return self._log(
            Operation(
                "stand",
                seat=state.position,
                hand=hand.index,
                note=state.name,
                target="countdown default" if default else None,
                command=None if default else f"{state.name} stand",
            )
        )

    def verify_doubling_down(
        self,
        player: str,
        amount: int | None = None,
        *,
        position: int | None = None,
        hand: int | None = None,
    ) -> None:
        """Raise unless ``player`` may double his current hand by ``amount`` (§ 633a.10)."""
        _, current = self._verify_decision(player, "double down", DOUBLE, position, hand)
        cards = current.hand
        self._verify_double_start(
            cards,
            rule=DOUBLE,
            after_split_rule=f"{SPLIT}(c)",
            split_aces=current.split_aces,
            split_rule=SPLIT,
            no_draw_rule=NO_DRAW,
        )
        self._verify_double(cards.total, current.amount, amount, DOUBLE)

    def can_double_down(
        self,
        player: str,
        amount: int | None = None,
        *,
        position: int | None = None,
        hand: int | None = None,
    ) -> bool:
        """Whether :meth:`double_down` would succeed."""
        return can(lambda: self.verify_doubling_down(player, amount, position=position, hand=hand))

    def double_down(
        self,
        player: str,
        amount: int | None = None,
        *,
        position: int | None = None,
        hand: int | None = None,
    ) -> Operation:
        """Double ``player``'s current hand (default: by its full wager); it takes exactly one
        community card, his next ((r)(2))."""
        self.verify_doubling_down(player, amount, position=position, hand=hand)
        state = self.players[player]
        current = self.current_hand(player)
        assert current is not None
        amount = current.amount if amount is None else amount
        command = f"{player} double" + (
            "" if amount == current.amount else f" {format_cents(amount)}"
        )
        current.doubled = amount
        current.amount += amount
        current.awaiting_card = True
        current.steps.append(f"doubles {format_cents(amount)}")
        self._restake(current.wager_id, current.amount)
        operation = self._log(
            Operation(
                "double",
                seat=state.position,
                hand=current.index,
                amount=amount,
                note=player,
                command=command,
            )
        )
        self._decided(state)
        self._advance()
        return operation

    def verify_splitting(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> None:
        """Raise unless ``player`` may split his current hand (§ 633a.11)."""
        state, current = self._verify_decision(player, "split", SPLIT, position, hand)
        self._verify_split(
            current.hand.cards, len(state.hands), current.split_aces, f"{SPLIT}(a)", f"{SPLIT}(c)"
        )

    def can_split(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> bool:
        """Whether :meth:`split` would succeed."""
        return can(lambda: self.verify_splitting(player, position=position, hand=hand))

    def split(
        self, player: str, *, position: int | None = None, hand: int | None = None
    ) -> Operation:
        """Split ``player``'s pair into two hands, the new one with a wager equal to the
        original (§ 633a.11(a)); each takes its community cards through the player's cursor
        in the configured order (A-4)."""
        self.verify_splitting(player, position=position, hand=hand)
        state = self.players[player]
        current = self.current_hand(player)
        assert current is not None
        first, second = current.hand.cards
        aces = first.is_ace
        current.hand = Hand([first], from_split=True)
        current.split_aces = aces
        current.awaiting_card = True
        new_index = len(state.hands)
        wager_id = self._new_wager(
            state.position, player, WagerKind.BLACKJACK, state.wager, new_index
        )
        new_hand = HybridHand(
            new_index,
            Hand([second], from_split=True),
            wager_id,
            state.wager,
            split_aces=aces,
            awaiting_card=True,
            steps=[f"split from hand {current.index + 1}: {second.display}"],
        )
        state.hands.insert(state.hands.index(current) + 1, new_hand)
        state.splits += 1
        current.steps.append(f"splits {first.display} {second.display}")
        operation = self._log(
            Operation(
                "split",
                seat=state.position,
                hand=current.index,
                amount=state.wager,
                note=player,
                target=f"new hand {new_index}",
                command=f"{player} split",
            )
        )
        self._decided(state)
        self._advance()
        return operation

    def _decided(self, state: PlayerState) -> None:
        need = self._need(state)
        if need is None or need[0] != "decide":
            self._deciders[state.name] = True

    # -- commands (notation) ---------------------------------------------------------------

    def apply(self, command: Command | str) -> Operation:
        """Apply one command in the text notation (``"ann hit"``,
        ``"dealer countdown-expired"``)."""
        if isinstance(command, str):
            command = Command.parse(command)
        verb = command.verb
        if command.actor == "dealer":
            dealer_verbs: dict[str, Callable[[], Operation]] = {
                "countdown-expired": self.countdown_expired,
                "close-wagering": self.close_wagering,
            }
            if verb not in dealer_verbs or command.amount is not None:
                raise InvalidNotationError(
                    f"{str(command)!r}: the dealer's commands are {', '.join(dealer_verbs)}."
                )
            return dealer_verbs[verb]()
        player = command.actor
        amount = command.amount
        if verb == "surrender":
            raise IllegalActionError(
                f"{str(command)!r}: surrender is not among the options of a hybrid table with "
                f"player positions ({DECIDE}; A-17).",
                rule=DECIDE,
            )
        if verb == "double":
            return self.double_down(player, amount)
        if verb == "insurance":
            return self.take_insurance(player, amount)
        plain: dict[str, Callable[[str], Operation]] = {
            "hit": self.hit,
            "stand": self.stand,
            "split": self.split,
            "no-insurance": self.decline_insurance,
            "even-money": self.take_even_money,
        }
        if verb not in plain:
            raise InvalidNotationError(
                f"{str(command)!r}: unknown verb {verb!r}; players use double, insurance, "
                f"{', '.join(plain)}."
            )
        if amount is not None:
            raise InvalidNotationError(f"{str(command)!r}: {verb!r} takes no amount.")
        return plain[verb](player)

    # -- the automatic steps ---------------------------------------------------------------

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
                if any(not s.insurance_decided for s in self._order):
                    return
                self._after_insurance()
            elif phase is Phase.PLAYING:
                if not self._play_step():
                    return
            elif phase is Phase.DEALER:
                self._dealer_step()
            else:
                return

    def _after_deal(self) -> None:
        up = self.up_card
        assert up is not None
        for state in self._order:
            hand = state.hands[0]
            hand.steps.append(hand.hand.describe())
            if hand.hand.is_blackjack:
                hand.done = True
        if up.is_ace and self.rules.insurance:
            self.phase = Phase.INSURANCE
            self._log(Operation("insurance-window", note="dealer up card is an ace"))
        else:
            self._after_insurance()

    def _after_insurance(self) -> None:
        up = self.up_card
        assert up is not None
        if up.is_ace or up.is_ten_value:
            self.dealer_blackjack = self.dealer.is_blackjack
            self._log(
                Operation("peek", note="Blackjack" if self.dealer_blackjack else "no Blackjack")
            )
            self._settle_insurance()
            if self.dealer_blackjack:
                self._reveal_hole_card()
                self._settle_dealer_blackjack()
                return
        else:
            self.dealer_blackjack = False
        if 2 <= up.points <= 9:
            for state in self._order:
                hand = state.hands[0]
                if hand.hand.is_blackjack and not hand.settled:
                    self._settle_blackjack(state, hand, "PA 633c.5(p)(1), (v)(1)")
                    if state.buzzer_beater_id is not None:
                        state.buzzer_beater_settled = True
                        self._record(state.buzzer_beater_id, Result.LOSE, 0, "PA 633c.5(p)(1)")
        self.phase = Phase.PLAYING
        self._draw_due = False

    def _need(self, state: PlayerState) -> tuple[str, HybridHand] | None:
        """What ``state`` needs next: ("card", hand), ("decide", hand) or None (complete)."""
        open_hands = [hand for hand in state.hands if not hand.done]
        if not open_hands:
            return None
        if self.rules.split_card_order == "second-cards-first":
            for hand in open_hands:
                if len(hand.hand) < 2:
                    return ("card", hand)
        first = open_hands[0]
        return ("card", first) if first.awaiting_card else ("decide", first)

    def _play_step(self) -> bool:
        """One automatic step of the decision rounds; False while waiting for decisions."""
        if self._window_open:
            if not all(self._deciders.values()):
                return False
            self._window_open = False
            self._draw_due = True
        takers: list[tuple[PlayerState, HybridHand]] = []
        deciders: list[PlayerState] = []
        for state in self._order:
            need = self._need(state)
            if need is None:
                continue
            if need[0] == "card":
                takers.append((state, need[1]))
            else:
                deciders.append(state)
        if takers and (self._draw_due or not deciders):
            self._draw_due = False
            self._takers = takers
            self._request(HybridCardTarget("community", len(self.community_cards) + 1))
            return True
        self._draw_due = False
        if deciders:
            self.decision_round += 1
            self._deciders = {state.name: False for state in deciders}
            self._window_open = True
            self._log(
                Operation(
                    "decision-round",
                    amount=self.rules.countdown_seconds,
                    note=f"decision round {self.decision_round}: "
                    + ", ".join(state.name for state in deciders),
                )
            )
            return False
        self.phase = Phase.DEALER
        return True

    def _dealer_step(self) -> None:
        """(s): turn the hole card up, draw to a hard or soft 17–21, then settle."""
        if not self.hole_card_revealed:
            self._reveal_hole_card()
            return
        if self.dealer.total < 17:
            self._request(HybridCardTarget("dealer"))
            return
        self._settle_round()

    def _reveal_hole_card(self) -> None:
        self.hole_card_revealed = True
        self._log(
            Operation(
                "reveal",
                card=self.hole_card,
                target="dealer hole card",
                note=self.dealer.describe(),
            )
        )

    # -- settlement ((o), (p)(1), (t), (u), (v)) -------------------------------------------

    def _settle_insurance(self) -> None:
        for state in self._order:
            wager_id = state.insurance_wager_id
            if wager_id is None:
                continue
            amount = self.wagers[wager_id].amount
            if self.dealer_blackjack:
                paid, rounding = winnings(amount, self.rules.insurance_pays, self.rules.rounding)
                self._record(wager_id, Result.WIN, amount + paid, f"{PEEK}, (v)(2)", rounding)
            else:
                self._record(wager_id, Result.LOSE, 0, f"{PEEK}; {INSURANCE}")

    def _settle_dealer_blackjack(self) -> None:
        """(o): no more cards; every Blackjack and Buzzer Beater wager settles now."""
        for state in self._order:
            hand = state.hands[0]
            hand.done = True
            if not hand.settled:
                if hand.hand.is_blackjack:
                    self._settle_hand(state, hand, Result.PUSH, hand.amount, f"{PEEK}, (t)(2)")
                else:
                    self._settle_hand(state, hand, Result.LOSE, 0, f"{PEEK}, (t)(3)(ii)")
            self._settle_buzzer_beater(state, prefix=f"{PEEK}, ")
        self._complete()

    def _settle_round(self) -> None:
        dealer = self.dealer
        total = dealer.total
        for state in self._order:
            for hand in state.hands:
                if hand.settled:
                    continue
                cards = hand.hand
                if cards.is_blackjack:
                    if dealer.is_bust:
                        clause = "PA 633c.5(t)(1)(i), (v)(1)"
                    elif total == 21:
                        clause = "PA 633c.5(t)(1)(iii), (v)(1)"
                    else:
                        clause = "PA 633c.5(t)(1)(ii), (v)(1)"
                    self._settle_blackjack(state, hand, clause)
                elif dealer.is_bust:
                    self._settle_hand(
                        state, hand, Result.WIN, 2 * hand.amount, "PA 633c.5(t)(1)(i), (v)(1)"
                    )
                elif cards.total > total:
                    self._settle_hand(
                        state, hand, Result.WIN, 2 * hand.amount, "PA 633c.5(t)(1)(ii), (v)(1)"
                    )
                elif cards.total == total:
                    self._settle_hand(state, hand, Result.PUSH, hand.amount, "PA 633c.5(t)(2)")
                else:
                    self._settle_hand(state, hand, Result.LOSE, 0, "PA 633c.5(t)(3)(ii)")
            self._settle_buzzer_beater(state, prefix="")
        self._complete()

    def _complete(self) -> None:
        self.phase = Phase.COMPLETE
        self._log(Operation("complete", note=self.dealer.describe()))

    def _settle_buzzer_beater(self, state: PlayerState, *, prefix: str) -> None:
        wager_id = state.buzzer_beater_id
        if wager_id is None or state.buzzer_beater_settled:
            return
        amount = self.wagers[wager_id].amount
        if self.rules.buzzer_beater_hand == "best-hand":
            candidates = state.hands
        else:
            candidates = state.hands[:1]
        outcomes = [self.buzzer_beater_outcome(hand.hand, amount) for hand in candidates]
        best = max(range(len(outcomes)), key=lambda i: (outcomes[i][1], -i))
        result, returned, clause, rounding = outcomes[best]
        state.buzzer_beater_settled = True
        if state.splits:
            clause += f"; A-6 {self.rules.buzzer_beater_hand} (hand {candidates[best].index + 1})"
        if prefix:
            clause = prefix + clause.removeprefix("PA 633c.5")
        self._record(wager_id, result, returned, clause, rounding)

    def buzzer_beater_outcome(self, hand: Hand, amount: int) -> tuple[Result, int, str, Fraction]:
        """How a Buzzer Beater of ``amount`` on ``hand`` ends against the dealer's hand as it
        stands: (result, amount returned, clause, rounding) per 633c.5(u) and (v)(3)."""
        dealer = self.dealer
        player_label = _bb_label(hand)
        if hand.is_bust:
            return Result.LOSE, 0, "PA 633c.5(u)(2)(ii); A-5", Fraction(0)
        if dealer.is_bust:
            return Result.LOSE, 0, "PA 633c.5(u)(2)(i)", Fraction(0)
        mine, theirs = _strength(hand), _strength(dealer)
        if mine > theirs:
            return Result.LOSE, 0, "PA 633c.5(u)(2)(i)", Fraction(0)
        if player_label is None:
            if mine < theirs:
                return Result.LOSE, 0, "PA 633c.5(u)(2)(ii)", Fraction(0)
            return Result.LOSE, 0, "PA 633c.5(u); A-15", Fraction(0)
        dealer_label = _bb_label(dealer)
        assert dealer_label is not None
        odds = self.rules.buzzer_beater_odds(player_label, dealer_label)
        if odds is None:
            if self.rules.buzzer_beater_no_row == "push":
                return Result.PUSH, amount, "PA 633c.5(u)(1), (v)(3); A-14", Fraction(0)
            return Result.LOSE, 0, "PA 633c.5(u)(1), (v)(3); A-14", Fraction(0)
        paid, rounding = winnings(amount, odds, self.rules.rounding)
        return Result.WIN, amount + paid, "PA 633c.5(u)(1), (v)(3)", rounding

    def _settle_blackjack(self, state: PlayerState, hand: HybridHand, clause: str) -> None:
        paid, rounding = winnings(hand.amount, self.rules.blackjack_pays, self.rules.rounding)
        self._settle_hand(state, hand, Result.BLACKJACK, hand.amount + paid, clause, rounding)

    def _settle_hand(
        self,
        state: PlayerState,
        hand: HybridHand,
        result: Result,
        returned: int,
        clause: str,
        rounding: Fraction = Fraction(0),
    ) -> None:
        hand.settled = True
        settlement = self._record(hand.wager_id, result, returned, clause, rounding)
        hand.steps.append(f"Blackjack Wager {settlement.describe()}")

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
        settlement = super()._record(
            wager_id, result, returned, clause, rounding, dealer_round, note
        )
        kind = settlement.kind
        if kind is not WagerKind.BLACKJACK:
            label = "Buzzer Beater" if kind is WagerKind.BUZZER_BEATER else "insurance"
            self.players[settlement.player].side_steps.append(f"{label} {settlement.describe()}")
        return settlement

    # -- views ((c); 605a) -----------------------------------------------------------------

    def _dealer_view(self) -> dict[str, Any]:
        shown = list(self.dealer.cards) if self.hole_card_revealed else self.dealer.cards[:1]
        return {
            "up_card": None if self.up_card is None else self.up_card.code,
            "hole_card": (
                self.hole_card.code if self.hole_card_revealed and self.hole_card else None
            ),
            "hole_card_dealt": self.hole_card is not None,
            "cards": [card.code for card in shown],
            "total": self.dealer.total if self.hole_card_revealed else None,
            "peek": (
                None
                if self.dealer_blackjack is None or not self._peeked()
                else ("Blackjack" if self.dealer_blackjack else "no Blackjack")
            ),
        }

    def _peeked(self) -> bool:
        return any(op.kind == "peek" for op in self.operations)

    def _table_view(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "phase": self.phase.value,
            "decision_round": self.decision_round,
            "countdown_running": self.window_open and self.card_request is None,
            "countdown_seconds": self.rules.countdown_seconds,
            "countdown_default": self.rules.countdown_default,
            "waiting_for": self._public_step(),
            "positions": {
                str(position): [card.code for card in cards]
                for position, cards in self.position_cards.items()
            },
            "community_cards": [card.code for card in self.community_cards],
            "dealer": self._dealer_view(),
        }

    def terminal_view(self, player: str) -> dict[str, Any]:
        """What ``player``'s electronic wagering terminal may show: the table (positions,
        community cards, the dealer's up card -- the hole card only once turned up), his own
        wagers, hands, choices and settlements, and of the other players only their names and
        positions (their hands and results once the round is complete). Plain JSON data."""
        return self.terminal_views([player])[player]

    def terminal_views(self, players: Iterable[str]) -> dict[str, dict[str, Any]]:
        """:meth:`terminal_view` of several players at once, as every terminal at the table
        gets it at each change: the table's part, the players' entries, the settlements and
        the nets are built once for all of them, not once per player. The views share those
        parts; treat them as read-only."""
        parts = self.terminal_view_parts(players)
        views: dict[str, dict[str, Any]] = {}
        for player, you in parts.yous.items():
            view = dict(parts.table)
            view["you"] = you
            view["players"] = [entry for name, entry in parts.entries if name != player]
            views[player] = view
        return views

    def terminal_view_parts(self, players: Iterable[str]) -> TerminalViewParts:
        """The parts :meth:`terminal_views` assembles, for a caller that serialises each part
        once: ``player``'s view is ``table`` with ``"you"`` (``yous[player]``) and
        ``"players"`` (every entry of ``entries`` but his own, in order) added, in that
        order."""
        wanted = list(players)
        for player in wanted:
            if player not in self.players:
                raise IllegalActionError(
                    f"{player!r} has no Blackjack Wager this round ({POSITIONS}).", rule=POSITIONS
                )
        table = self._table_view()
        awaiting = set(self.awaiting_players())
        nets = self.player_net()
        settlements: dict[str, list[dict[str, Any]]] = {}
        for settlement in self.settlements:
            settlements.setdefault(settlement.player, []).append(settlement.to_json())
        entries: list[tuple[str, dict[str, Any]]] = []
        for other in self.players_in_order:
            entry: dict[str, Any] = {"player": other.name, "position": other.position}
            if self.is_complete:
                entry["hands"] = [
                    {"cards": [c.code for c in h.hand.cards], "total": h.hand.total}
                    for h in other.hands
                ]
            entries.append((other.name, entry))
        yous: dict[str, dict[str, Any]] = {}
        for player in wanted:
            state = self.players[player]
            yous[player] = {
                "player": state.name,
                "position": state.position,
                "blackjack_wager": state.wager,
                "buzzer_beater": state.buzzer_beater,
                "insurance": (
                    None
                    if state.insurance_wager_id is None
                    else self.wagers[state.insurance_wager_id].amount
                ),
                "hands": [hand_view(hand) for hand in state.hands],
                "community_cards_used": state.cursor,
                # only a player the window waits for has a decision to make (p)(2): the
                # others' checks would each refuse, at a cost every terminal pays per change
                "legal_actions": self.legal_actions(player) if player in awaiting else [],
                "awaiting_decision": player in awaiting,
                "settlements": settlements.get(player, []),
                "net": nets[player],
            }
        return TerminalViewParts(table, entries, yous)

    def audit_view(self) -> dict[str, Any]:
        """Everything, for the surveillance and audit audience: the hole card, every player's
        wagers, hands and pending decisions, the wagers, settlements and the card request."""
        view = self._table_view()
        view["dealer"]["hole_card"] = None if self.hole_card is None else self.hole_card.code
        view["dealer"]["all_cards"] = [card.code for card in self.dealer.cards]
        view["dealer"]["dealer_total"] = self.dealer.total if self.dealer.cards else None
        view["dealer"]["dealer_blackjack"] = self.dealer_blackjack
        view["rules"] = self.rules.to_mapping()
        view["card_request"] = None if self.card_request is None else self.card_request.describe()
        view["awaiting_players"] = self.awaiting_players()
        view["next_step"] = self.next_step()
        view["players"] = [
            {
                "player": state.name,
                "position": state.position,
                "blackjack_wager": state.wager,
                "buzzer_beater": state.buzzer_beater,
                "insurance_decided": state.insurance_decided,
                "community_cards_used": state.cursor,
                "decided_this_round": self._deciders.get(state.name),
                "hands": [hand_view(hand) for hand in state.hands],
            }
            for state in self.players_in_order
        ]
        view["wagers"] = [
            {
                "id": w.id,
                "position": w.seat,
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


def _bb_label(hand: Hand) -> str | None:
    """The Buzzer Beater hand label of ``hand`` (633c.5(u)(1)), or None below 19 or bust."""
    if hand.is_blackjack:
        return "blackjack"
    total = hand.total
    if 19 <= total <= 21:
        return str(total)
    return None


def _strength(hand: Hand) -> int:
    """Comparable strength: a Blackjack beats a 21 of more cards ((t)(1)(iii), (3)(iii))."""
    return 22 if hand.is_blackjack else hand.total


# -- the registry's functions (tablejack.games.GAMES["hybrid"]) ------------------------------

SEAT_KEYS = frozenset({"player", "position", "wager", "buzzer_beater"})


def seat_players(round_: HybridRound, seats: tuple[Mapping[str, Any], ...]) -> None:
    """Place the wagers of notation seat entries in order, then deal:
    ``{player = "ann", position = 2, wager = "$10", buzzer_beater = "$5"}``."""
    for entry in seats:
        keys = set(entry)
        if keys - SEAT_KEYS or not {"player", "position", "wager"} <= keys:
            raise InvalidNotationError(
                'A hybrid seat is written player = "ann", position = 2, wager = "$10" '
                f'(and optionally buzzer_beater = "$5"); got {dict(entry)!r}.'
            )
        round_.place_wager(entry["player"], entry["position"], entry["wager"])
        if "buzzer_beater" in entry:
            round_.place_buzzer_beater(entry["player"], entry["buzzer_beater"])
    round_.close_wagering()


def seats_of(round_: HybridRound) -> tuple[dict[str, Any], ...]:
    """The seat entries of a round, in the order the Blackjack Wagers were placed."""
    entries: list[dict[str, Any]] = []
    for state in round_.players.values():
        entry: dict[str, Any] = {
            "player": state.name,
            "position": state.position,
            "wager": state.wager,
        }
        if state.buzzer_beater_id is not None:
            entry["buzzer_beater"] = state.buzzer_beater
        entries.append(entry)
    return tuple(entries)


def transcript(round_: HybridRound) -> list[str]:
    """A readable account of a round: the dealer, the positions, the community cards, then
    one line per player hand and one for each player's side wagers::

        ann (position 1): 10♠ 6♥ = 16, hits, takes C1 5♠ = 21, Blackjack Wager wins $10.00 (…)
    """
    dealer_parts: list[str] = []
    for op in round_.operations:
        if op.kind == "peek":
            dealer_parts.append(f"card reader: {op.note}")
        elif op.kind == "reveal" and op.card is not None:
            dealer_parts.append(f"turns {op.card.display}")
        elif op.kind == "card" and op.target == "dealer" and op.card is not None:
            dealer_parts.append(f"draws {op.card.display}")
    up = round_.up_card.display if round_.up_card is not None else "?"
    final = f" = {round_.dealer.total_text()}" if round_.hole_card_revealed else ""
    out = [f"Dealer: up card {up}" + "".join(f", {part}" for part in dealer_parts) + final]
    for position, cards in round_.position_cards.items():
        out.append(f"Position {position}: " + " ".join(card.display for card in cards))
    if round_.community_cards:
        out.append(
            "Community cards: "
            + ", ".join(
                f"C{n} {card.display}" for n, card in enumerate(round_.community_cards, start=1)
            )
        )
    for state in round_.players_in_order:
        for hand in state.hands:
            label = f"{state.name} (position {state.position})" + (
                f" hand {hand.index + 1}" if state.splits else ""
            )
            out.append(f"{label}: " + ", ".join(hand.steps))
        if state.side_steps:
            out.append(f"{state.name} side wagers: " + ", ".join(state.side_steps))
    return out


BOT_NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ida", "jon", "kim", "lou")


def bot_seat(round_: HybridRound, generator: random.Random, players: int) -> None:
    """Seat ``players`` bots round the three positions (1, 2, 3, 1, …) with Blackjack Wagers
    of 1–5 table minimums; about a third also place a Buzzer Beater of half their wager
    (at least one betting unit). Then deal."""
    rules = round_.rules
    unit = rules.betting_unit
    for number in range(players):
        name = BOT_NAMES[number % len(BOT_NAMES)]
        if number >= len(BOT_NAMES):
            name += str(number // len(BOT_NAMES) + 1)
        amount = min(rules.table_minimum * generator.randint(1, 5), rules.table_maximum)
        round_.place_wager(name, number % rules.max_seats + 1, amount)
        if rules.buzzer_beater and generator.random() < 1 / 3:
            round_.place_buzzer_beater(name, max(unit, amount // 2 // unit * unit))
    round_.close_wagering()


def bot_command(round_: HybridRound) -> Command | None:
    """The next bot command, or None when no player decision is awaited: no insurance, no
    even money, and basic strategy (no surrender in version A, A-17). Options are asked of the
    round (``can_…``) only when the strategy would use them."""
    waiting = round_.awaiting_players()
    if not waiting:
        return None
    player = waiting[0]
    if round_.phase is Phase.INSURANCE:
        return Command.of(player, "no-insurance")
    hand = round_.current_hand(player)
    up = round_.up_card
    if hand is None or up is None:  # pragma: no cover - an awaited player has a hand
        return None
    checks = {
        "split": round_.can_split,
        "double": round_.can_double_down,
        "hit": round_.can_hit,
    }
    decision = legal_basic_strategy(
        hand.hand, up.points, lambda option: checks[option](player), surrender=False
    )
    return Command.of(player, decision)
