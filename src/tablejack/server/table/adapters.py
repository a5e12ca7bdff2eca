"""How the server drives each game's round — an adapter, never a second copy of a rule.

The engine decides everything; an adapter only maps the server's vocabulary onto the engine's
verbs: who the actor of a terminal player's command is (a seat number at a classic table, the
player's name at a hybrid table), how a terminal's wager becomes an engine call, which view a
terminal may see, when a countdown window is open and what the clock sends when it runs out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, ClassVar

from tablejack.core.cards import Card
from tablejack.core.errors import IllegalActionError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, format_odds

__all__ = [
    "ADAPTERS",
    "Adapter",
    "ClassicAdapter",
    "HybridAdapter",
    "HybridSharedAdapter",
    "MultiActionAdapter",
    "SeatAdapter",
    "adapter_for",
    "paytables",
    "rules_icon",
]

POSITION_RULE = "PA 633c.5(l)"
WAGER_RULE = "PA 633c.5(k)"


class Adapter:
    """The interface; one subclass per game family."""

    game = ""
    side_wagers: tuple[str, ...] = ()
    """Wager kinds a terminal may place before the first card besides ``blackjack``."""

    def positions(self, rules: Any) -> int:
        """How many player boxes the layout shows."""
        return int(rules.max_seats)

    def place_wager(
        self, round_: Any, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        """Place a terminal's wager before the first card (633c.5(k))."""
        raise NotImplementedError

    def place_spot_wagers(
        self, round_: Any, player: str, position: int | None, amount: int, spots: Sequence[int]
    ) -> None:
        """A wager of three spot amounts (multi-action tables only)."""
        raise IllegalActionError(
            f"This table takes one amount per wager, not spot amounts ({WAGER_RULE}).",
            rule=WAGER_RULE,
        )

    def command_text(
        self, actor: str, verb: str, amount: int | None, spots: Sequence[int] | None
    ) -> str:
        """The engine command of a terminal's decision."""
        if spots is not None:
            raise IllegalActionError(
                f"Only a multi-action double names spots ({WAGER_RULE}).", rule=WAGER_RULE
            )
        return f"{actor} {verb}" + ("" if amount is None else f" {amount}")

    def actor(self, round_: Any, player: str, position: int | None) -> str:
        """The command actor for ``player`` (raises if the player has no hand there)."""
        raise NotImplementedError

    def player_position(self, round_: Any, player: str) -> int | None:
        """The position (seat) ``player`` backs this round, or None."""
        raise NotImplementedError

    def player_view(self, round_: Any, player: str) -> dict[str, Any]:
        """What ``player``'s terminal may show."""
        raise NotImplementedError

    def audit_view(self, round_: Any) -> dict[str, Any]:
        """Everything (dealer console, supervisor)."""
        raise NotImplementedError

    def player_views(self, round_: Any, players: Iterable[str]) -> dict[str, dict[str, Any]]:
        """:meth:`player_view` of several players at once (one broadcast)."""
        return {player: self.player_view(round_, player) for player in players}

    def player_texts(
        self, round_: Any, players: Iterable[str], encode: Callable[[Any], str]
    ) -> dict[str, str]:
        """:meth:`player_views` as JSON text (``encode``: compact JSON): a view several
        players share is encoded once."""
        encoded: dict[int, str] = {}
        texts: dict[str, str] = {}
        for player, view in self.player_views(round_, players).items():
            text = encoded.get(id(view))
            if text is None:
                text = encoded[id(view)] = encode(view)
            texts[player] = text
        return texts

    def window(self, round_: Any) -> tuple[Any, ...] | None:
        """A key naming the open decision window (the countdown clock runs while it is the
        same), or None when no player decision is awaited."""
        raise NotImplementedError

    def awaited(self, round_: Any) -> frozenset[str]:
        """The players whose decision the open window still waits for (empty when none is
        awaited): a table's worker gathers their answers into one step."""
        raise NotImplementedError

    def on_countdown(self, round_: Any) -> list[str]:
        """The commands the clock sends when the window's countdown runs out."""
        raise NotImplementedError

    def countdown_seconds(self, rules: Any, config_seconds: float | None) -> float:
        """The countdown length: the rules' own (633c.5(p)(2)) or the table configuration's."""
        own = getattr(rules, "countdown_seconds", None)
        if own is not None:
            return float(own)
        return float(config_seconds if config_seconds is not None else 20)

    def countdown_default(self, rules: Any) -> str:
        """What the clock does for a player who has not acted."""
        return str(getattr(rules, "countdown_default", "stand"))


@contextmanager
def shared_table_view(round_: Any) -> Iterator[None]:
    """While open, the round's ``_table_view`` (the part of a terminal view every terminal
    shares: positions, community cards, the dealer's visible cards, the phase) is built once
    and each terminal view gets its own shallow copy of it, instead of building it again per
    terminal. The engine's ``terminal_view`` still decides everything a player sees."""
    shared = round_._table_view()
    round_._table_view = lambda: {
        key: dict(value) if isinstance(value, dict) else value for key, value in shared.items()
    }
    try:
        yield
    finally:
        del round_._table_view


class SeatAdapter(Adapter):
    """Games with one player per seat (classic, multi-action): the actor is the seat number."""

    seat_rule: ClassVar[str] = POSITION_RULE
    """The clause a player acting for another seat is refused under."""
    holds: ClassVar[str] = "hand"
    """What a seated player has in the round (the refusal's words)."""

    def player_position(self, round_: Any, player: str) -> int | None:
        for number, state in round_.seats.items():
            if state.player == player:
                return int(number)
        return None

    def actor(self, round_: Any, player: str, position: int | None) -> str:
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

    def awaited(self, round_: Any) -> frozenset[str]:
        if round_.card_request is not None or round_.is_complete:
            return frozenset()
        return frozenset(round_.seats[seat].player for seat in round_.seats_to_decide())


class ClassicAdapter(SeatAdapter):
    """Chapter 633a tables (with EZ Bust): one player per seat; the actor is the seat number.

    The countdown clock is a terminal-table service here (Chapter 633a has none): when it runs
    out the insurance or EZ Bust window closes and a seat in turn is deemed to stand, the
    default of 633c.5(p)(2) applied to electronic terminals (documented in docs/server.md).
    """

    game = "classic"

    def place_wager(
        self, round_: Any, player: str, position: int | None, kind: str, amount: int
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

    def _table_view(self, round_: Any, *, hole: bool) -> dict[str, Any]:
        dealer_cards = [card.code for card in round_.dealer.cards]
        shown = hole or round_.hole_card_revealed
        if not shown and len(dealer_cards) > 1:
            dealer_cards[1] = "back"
        seats = []
        for number, state in round_.seats.items():
            seats.append(
                {
                    "position": number,
                    "player": state.player,
                    "wager": state.wager,
                    "hands": [_hand_json(hand) for hand in state.hands],
                }
            )
        return {
            "game": self.game,
            "phase": round_.phase.value,
            "waiting_for": round_.next_step(),
            "positions": seats,
            "community_cards": [],
            "dealer": {
                "cards": dealer_cards,
                "total": round_.dealer.total if round_.hole_card_revealed else None,
                **_dealer_totals(round_.dealer, revealed=shown),
            },
        }

    def player_view(self, round_: Any, player: str) -> dict[str, Any]:
        view = self._table_view(round_, hole=False)
        seat = self.player_position(round_, player)
        view["you"] = (
            None
            if seat is None
            else {
                "player": player,
                "position": seat,
                "hands": [_hand_json(hand) for hand in round_.seats[seat].hands],
                "wagers": _wagers_of(round_.wagers).get(player, []),
                "legal_actions": round_.legal_actions(seat),
                "awaiting_decision": seat in round_.seats_to_decide(),
                "settlements": [s.to_json() for s in round_.settlements if s.player == player],
                "net": round_.player_net().get(player, 0),
            }
        )
        return view

    def audit_view(self, round_: Any) -> dict[str, Any]:
        view = self._table_view(round_, hole=True)
        request = round_.card_request
        view["card_request"] = None if request is None else request.describe()
        view["next_step"] = round_.next_step()
        view["wagers"] = [
            {
                "id": w.id,
                "position": w.seat,
                "player": w.player,
                "kind": w.kind.value,
                "amount": w.amount,
            }
            for w in round_.wagers
        ]
        view["settlements"] = [s.to_json() for s in round_.settlements]
        view["cards_dealt"] = [card.code for card in round_.cards_dealt]
        return view

    def window(self, round_: Any) -> tuple[Any, ...] | None:
        if round_.card_request is not None or round_.is_complete:
            return None
        phase = round_.phase.value
        if phase in ("insurance", "ez bust"):
            return (phase,)
        if phase == "playing" and round_.current_seat is not None:
            return ("playing", round_.current_seat, len(round_.operations))
        return None

    def on_countdown(self, round_: Any) -> list[str]:
        phase = round_.phase.value
        if phase == "insurance":
            return ["dealer close-insurance"]
        if phase == "ez bust":
            return ["dealer close-ez-bust"]
        if phase == "playing" and round_.current_seat is not None:
            return [f"{round_.current_seat} stand"]
        return []


class HybridAdapter(Adapter):
    """Hybrid tables, version A (633c.5(a)–(v)): players by name, any number per position;
    the engine's own terminal and audit views; the engine's ``countdown-expired``."""

    game = "hybrid"
    side_wagers = ("buzzer_beater",)

    def place_wager(
        self, round_: Any, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        if kind == "blackjack":
            if position is None:
                raise IllegalActionError(
                    f"Select a player position between one and three before wagering "
                    f"({POSITION_RULE}).",
                    rule=POSITION_RULE,
                )
            round_.place_wager(player, position, amount)
        elif kind == "buzzer_beater":
            round_.place_buzzer_beater(player, amount)
        else:
            raise IllegalActionError(
                f"{kind!r} is not a wager of this table ({WAGER_RULE}).", rule=WAGER_RULE
            )

    def player_position(self, round_: Any, player: str) -> int | None:
        state = round_.players.get(player)
        return None if state is None else int(state.position)

    def actor(self, round_: Any, player: str, position: int | None) -> str:
        own = self.player_position(round_, player)
        if own is None:
            raise IllegalActionError(
                f"{player} has no Blackjack Wager this round ({POSITION_RULE}).",
                rule=POSITION_RULE,
            )
        if position is not None and position != own:
            raise IllegalActionError(
                f"{player} backs position {own}, not position {position} ({POSITION_RULE}).",
                rule=POSITION_RULE,
            )
        return player

    def player_view(self, round_: Any, player: str) -> dict[str, Any]:
        if player in round_.players:
            return self.player_views(round_, [player])[player]
        public = round_.audit_view()
        for secret in ("hole_card", "all_cards", "dealer_total", "dealer_blackjack"):
            public["dealer"].pop(secret, None)
        public["dealer"].update(_dealer_totals(round_.dealer, revealed=round_.hole_card_revealed))
        return {
            key: public[key]
            for key in (
                "game",
                "phase",
                "decision_round",
                "countdown_running",
                "countdown_seconds",
                "countdown_default",
                "positions",
                "community_cards",
                "dealer",
            )
            if key in public
        } | {
            "waiting_for": public.get("next_step", "") if round_.phase.value == "wagering" else "",
            "you": None,
            "players": [
                {"player": p["player"], "position": p["position"]} for p in public["players"]
            ],
        }

    def audit_view(self, round_: Any) -> dict[str, Any]:
        view: dict[str, Any] = round_.audit_view()
        return view

    def _view_parts(self, round_: Any, playing: list[str]) -> Any:
        """The engine's view parts of ``playing`` (:meth:`HybridRound.terminal_view_parts`)
        with what the terminal adds: the dealer's totals, once for every view, and each
        player's own wagers."""
        parts = round_.terminal_view_parts(playing)
        parts.table["dealer"] = parts.table["dealer"] | _dealer_totals(
            round_.dealer, revealed=round_.hole_card_revealed
        )
        wagers = _wagers_of(round_.wagers)
        for player, you in parts.yous.items():
            you["wagers"] = wagers.get(player, [])
        return parts

    def player_views(self, round_: Any, players: Iterable[str]) -> dict[str, dict[str, Any]]:
        wanted = list(players)
        playing = [player for player in wanted if player in round_.players]
        views: dict[str, dict[str, Any]] = {}
        if playing:
            parts = self._view_parts(round_, playing)
            for player, you in parts.yous.items():
                views[player] = {
                    **parts.table,
                    "you": you,
                    "players": [entry for name, entry in parts.entries if name != player],
                }
        watching = [player for player in wanted if player not in round_.players]
        if watching:  # no wager this round: the same public view for all of them
            public = self.player_view(round_, watching[0])
            views.update(dict.fromkeys(watching, public))
        return views

    def player_texts(
        self, round_: Any, players: Iterable[str], encode: Callable[[Any], str]
    ) -> dict[str, str]:
        """The texts of :meth:`player_views`, each part encoded once: the table's part, every
        player's entry, then per player only his own part, spliced into the same text
        ``encode(view)`` gives."""
        wanted = list(players)
        playing = [player for player in wanted if player in round_.players]
        texts: dict[str, str] = {}
        if playing:
            parts = self._view_parts(round_, playing)
            head = encode(parts.table)[:-1]  # the object left open for "you" and "players"
            encoded = [encode(entry) for _, entry in parts.entries]
            every = ",".join(encoded)  # every entry; each player's text leaves his own out
            spans: dict[str, tuple[int, int]] = {}
            start = 0
            for (name, _), text in zip(parts.entries, encoded, strict=True):
                spans[name] = (start, start + len(text))
                start += len(text) + 1
            for player, you in parts.yous.items():
                start, end = spans[player]  # his entry and the comma before it (or after)
                others = every[: start - 1] + every[end:] if start else every[end + 1 :]
                texts[player] = f'{head},"you":{encode(you)},"players":[{others}]}}'
        watching = [player for player in wanted if player not in round_.players]
        if watching:  # no wager this round: the same public view for all of them
            public = encode(self.player_view(round_, watching[0]))
            texts.update(dict.fromkeys(watching, public))
        return texts

    def window(self, round_: Any) -> tuple[Any, ...] | None:
        if round_.card_request is not None or not round_.window_open:
            return None
        return (round_.phase.value, round_.decision_round, len(round_.operations) * 0)

    def awaited(self, round_: Any) -> frozenset[str]:
        return frozenset(round_.awaiting_players())

    def on_countdown(self, round_: Any) -> list[str]:
        return ["dealer countdown-expired"] if round_.can_countdown_expire() else []


class HybridSharedAdapter(Adapter):
    """Hybrid tables without a hole card, version B (633c.5(w)–(ee)): no player positions (one
    shared start for every player), players by name, side wagers Royal Match 21, Bet the Set
    and King's Bounty (633c.5(x)), the engine's views and ``countdown-expired``."""

    game = "hybrid-shared"
    side_wagers = ("royal_match", "bet_the_set", "kings_bounty")

    def positions(self, rules: Any) -> int:
        return 1

    def place_wager(
        self, round_: Any, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        if kind == "blackjack":
            round_.place_wager(player, amount)
        elif kind in self.side_wagers:
            round_.place_side_wager(player, kind, amount)
        else:
            raise IllegalActionError(
                f"{kind!r} is not a wager of this table (PA 633c.5(x)).", rule="PA 633c.5(x)"
            )

    def player_position(self, round_: Any, player: str) -> int | None:
        return 1 if player in round_.players else None

    def actor(self, round_: Any, player: str, position: int | None) -> str:
        if player not in round_.players:
            raise IllegalActionError(
                f"{player} has no Blackjack Wager this round (PA 633c.5(x)).", rule="PA 633c.5(x)"
            )
        return player

    def player_view(self, round_: Any, player: str) -> dict[str, Any]:
        if player in round_.players:
            return self._completed(round_, round_.terminal_view(player), player, None)
        public: dict[str, Any] = round_._table_view()
        public["dealer"] = _first_card_showing(public["dealer"])
        return public | {"you": None, "players": [{"player": p} for p in round_.players]}

    @staticmethod
    def _completed(
        round_: Any,
        view: dict[str, Any],
        player: str,
        wagers: dict[str, list[dict[str, Any]]] | None,
    ) -> dict[str, Any]:
        """The engine's view with what a terminal draws besides: the total of the dealer's
        first card and the player's own wagers."""
        view["dealer"] = _first_card_showing(view["dealer"])
        view["you"]["wagers"] = (wagers or _wagers_of(round_.wagers)).get(player, [])
        return view

    def audit_view(self, round_: Any) -> dict[str, Any]:
        view: dict[str, Any] = round_.audit_view()
        return view

    def player_views(self, round_: Any, players: Iterable[str]) -> dict[str, dict[str, Any]]:
        views: dict[str, dict[str, Any]] = {}
        watching: list[str] = []
        wagers = _wagers_of(round_.wagers)
        with shared_table_view(round_):
            for player in players:
                if player in round_.players:
                    views[player] = self._completed(
                        round_, round_.terminal_view(player), player, wagers
                    )
                else:
                    watching.append(player)
        if watching:  # no wager this round: the same public view for all of them
            public = self.player_view(round_, watching[0])
            views.update(dict.fromkeys(watching, public))
        return views

    def window(self, round_: Any) -> tuple[Any, ...] | None:
        if round_.card_request is not None or not round_.players_to_decide():
            return None
        return (round_.phase.value, len(round_.community_cards))

    def awaited(self, round_: Any) -> frozenset[str]:
        return frozenset(round_.players_to_decide())

    def on_countdown(self, round_: Any) -> list[str]:
        return ["dealer countdown-expired"] if round_.can_expire_countdown() else []


class MultiActionAdapter(SeatAdapter):
    """NJ multi-action tables (N.J.A.C. 13:47): one player per seat (1–7), three betting
    spots per player placed in one wager (``place_wager(seat, player, [a1, a2, a3])``), one
    hand played against three dealer rounds; the actor is the seat number. The engine has no
    terminal view; the adapter shows the table (every card is dealt face up: there is no hole
    card) and the player's own spots, legal actions and settlements.

    The countdown clock is a terminal-table service (the NJ text has none): when it runs out the
    insurance window closes and the seat in turn stands, as on classic tables (S-1, S-8)."""

    game = "multi-action"
    RULE = "NJ MAB (f)(1)"
    seat_rule = "NJ MAB (e)"
    holds = "wagers"

    def place_wager(
        self, round_: Any, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        raise IllegalActionError(
            "A multi-action wager is three spot amounts, one per betting spot (0 for a spot "
            f"not backed), placed together ({self.RULE}).",
            rule=self.RULE,
        )

    def place_spot_wagers(
        self, round_: Any, player: str, position: int | None, amount: int, spots: Sequence[int]
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
        if spots is not None:
            if verb != "double":
                raise IllegalActionError(
                    f"Only a double names betting spots ({'NJ MAB (a)'}).", rule="NJ MAB (a)"
                )
            return f"{actor} double {','.join(str(spot) for spot in spots)}"
        return f"{actor} {verb}" + ("" if amount is None else f" {amount}")

    def _table_view(self, round_: Any) -> dict[str, Any]:
        seats = []
        for number, state in sorted(round_.seats.items()):
            seats.append(
                {
                    "position": number,
                    "player": state.player,
                    "spots": list(state.spots),
                    "hands": [_spot_hand_json(hand) for hand in state.hands],
                }
            )
        first = round_.first_card
        played = sorted(round_.dealer_hands.items())
        shown = [card.code for card in played[-1][1].cards] if played else []
        return {
            "game": self.game,
            "phase": round_.phase.value,
            "waiting_for": round_.next_step(),
            "positions": seats,
            "community_cards": [],
            "dealer": {
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
                "showing": None if first is None else _showing([first]),
            },
        }

    def player_view(self, round_: Any, player: str) -> dict[str, Any]:
        view = self._table_view(round_)
        seat = self.player_position(round_, player)
        view["you"] = (
            None
            if seat is None
            else {
                "player": player,
                "position": seat,
                "spots": list(round_.seats[seat].spots),
                "legal_actions": round_.legal_actions(seat),
                "awaiting_decision": seat in round_.seats_to_decide(),
                "hands": [_spot_hand_json(hand) for hand in round_.seats[seat].hands],
                "wagers": _wagers_of(round_.wagers).get(player, []),
                "settlements": [s.to_json() for s in round_.settlements if s.player == player],
                "net": round_.player_net().get(player, 0),
            }
        )
        return view

    def audit_view(self, round_: Any) -> dict[str, Any]:
        view = self._table_view(round_)
        request = round_.card_request
        view["card_request"] = None if request is None else request.describe()
        view["next_step"] = round_.next_step()
        view["wagers"] = [
            {
                "id": w.id,
                "position": w.seat,
                "player": w.player,
                "kind": w.kind.value,
                "amount": w.amount,
                "spot": getattr(w, "spot", None),
            }
            for w in round_.wagers
        ]
        view["settlements"] = [s.to_json() for s in round_.settlements]
        view["cards_dealt"] = [card.code for card in round_.cards_dealt]
        return view

    def window(self, round_: Any) -> tuple[Any, ...] | None:
        if round_.card_request is not None or round_.is_complete:
            return None
        phase = round_.phase.value
        if phase == "insurance":
            return (phase,)
        if phase == "playing" and round_.current_seat is not None:
            return ("playing", round_.current_seat, len(round_.operations))
        return None

    def on_countdown(self, round_: Any) -> list[str]:
        phase = round_.phase.value
        if phase == "insurance":
            return ["dealer close-insurance"]
        if phase == "playing" and round_.current_seat is not None:
            return [f"{round_.current_seat} stand"]
        return []


def _spot_hand_json(hand: Any) -> dict[str, Any]:
    cards = hand.hand
    return {
        "index": hand.index,
        "cards": [card.code for card in cards.cards],
        "total": cards.total,
        "soft": cards.is_soft,
        "blackjack": cards.is_blackjack,
        "bust": cards.is_bust,
        "spots": [
            {"spot": w.spot, "amount": w.amount, "doubled": w.doubled, "settled": w.settled}
            for w in hand.spots
        ],
        "wager": sum(w.amount for w in hand.spots),
        "doubled": hand.doubled,
        "complete": hand.done,
    }


def _hand_json(hand: Any) -> dict[str, Any]:
    cards = hand.hand
    return {
        "index": hand.index,
        "cards": [card.code for card in cards.cards],
        "total": cards.total,
        "soft": cards.is_soft,
        "blackjack": cards.is_blackjack,
        "bust": cards.is_bust,
        "wager": hand.amount,
        "doubled": getattr(hand, "doubled", 0),
        "surrendered": getattr(hand, "surrendered", False),
        "complete": hand.done,
        "settled": hand.settled,
    }


def _showing(cards: Sequence[Any]) -> dict[str, Any]:
    """The total of the dealer's cards showing (the up card while the hole card is down)."""
    hand = Hand(cards)
    return {"total": hand.total, "soft": hand.is_soft}


def _dealer_totals(hand: Any, *, revealed: bool) -> dict[str, Any]:
    """The dealer's hand in the terms a terminal shows beside the cards: once the hole card is
    turned, whether the total is soft, a Blackjack or a bust; before, the total of the up card
    only (``showing``), never anything of the hole card."""
    if revealed:
        return {
            "soft": hand.is_soft,
            "blackjack": hand.is_blackjack,
            "bust": hand.is_bust,
            "showing": None,
        }
    up = hand.cards[:1]
    return {
        "soft": False,
        "blackjack": False,
        "bust": False,
        "showing": _showing(up) if up else None,
    }


def _first_card_showing(dealer: dict[str, Any]) -> dict[str, Any]:
    """A version B dealer box (the dealer's first card) with the card's total."""
    first = dealer.get("first_card")
    return dealer | {"showing": None if first is None else _showing([Card.parse(first)])}


def _wagers_of(wagers: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    """Each player's wagers on the layout, as his terminal shows them in chips: the kind, the
    amount at risk now (a double included), the hand (a split's own wager) and the spot."""
    out: dict[str, list[dict[str, Any]]] = {}
    for wager in wagers:
        out.setdefault(wager.player, []).append(
            {
                "kind": wager.kind.value,
                "amount": wager.amount,
                "hand": wager.hand,
                "spot": getattr(wager, "spot", None),
            }
        )
    return out


ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "classic": ClassicAdapter,
    "hybrid": HybridAdapter,
    "hybrid-shared": HybridSharedAdapter,
    "multi-action": MultiActionAdapter,
}


def adapter_for(game_id: str) -> Adapter:
    """The adapter of a game id (the server runs the games it has an adapter for)."""
    factory = ADAPTERS.get(game_id)
    if factory is None:
        raise IllegalActionError(
            f"The table server has no terminal adapter for the game {game_id!r}; it runs "
            f"{', '.join(sorted(ADAPTERS))}.",
            rule="PA 633c.5(a)",
        )
    return factory()


PAYTABLE_LINES: dict[str, str] = {
    "royal-match": "King and queen of the same suit (Royal Match)",
    "suited-blackjack": "Ace and a ten-value card of the same suit",
    "suited-match": "Any two cards of the same suit",
    "crown-treasure": "Crown Treasure: your Royal Match and the dealer's two cards a Royal Match",
    "suited-pair": "Two cards of the same rank and suit",
    "pair": "Two cards of the same rank",
    "spade-kings-dealer-blackjack": "Two kings of spades, and the dealer has Blackjack",
    "spade-kings": "Two kings of spades",
    "suited-kings": "Two kings of the same suit",
    "suited-queens-jacks-tens": "Two queens, two jacks or two tens of the same suit",
    "suited-20": "Any other 20 in one suit",
    "unsuited-kings": "Two kings of different suits",
    "unsuited-20": "Any other 20",
    "dealer-busts": "The dealer busts drawing a third card or more",
    "all-blackjack-or-bust": "Every Blackjack Wager ends in a Blackjack or a bust",
}
"""The paytable lines in words (the rules name them by these keys); the terminal shows them in
the player's language from its catalog, these English words the fallback."""


def _odds(odds: Fraction) -> dict[str, Any]:
    return {"pays": format_odds(odds), "odds": [odds.numerator, odds.denominator]}


def _line(hand: str, odds: Fraction, **extra: Any) -> dict[str, Any]:
    return {"hand": hand, "label": PAYTABLE_LINES.get(hand, hand), **_odds(odds), **extra}


def paytables(rules: Any) -> list[dict[str, Any]]:
    """Every paytable the table offers, as data: per wager kind the rows of hand and odds
    (strongest first), the clause, and notes (633c.5(c)(2)-(3); 633c.5(v)(3), (ee)(3)-(5);
    633b.16(f)-(g))."""
    tables: list[dict[str, Any]] = []
    if getattr(rules, "buzzer_beater", False):
        tables.append(
            {
                "kind": "buzzer_beater",
                "clause": "PA 633c.5(v)(3)",
                "rows": [
                    _line(
                        row.player,
                        row.pays,
                        against=list(row.dealer),
                        label=row.describe().rsplit(" pays ", 1)[0],
                    )
                    for row in rules.buzzer_beater_paytable
                ],
                "notes": [],
            }
        )
    if getattr(rules, "royal_match", False):
        rows = [_line(line, odds) for line, odds in rules.royal_match_lines()]
        notes = []
        if rules.crown_treasure:
            added = rules.crown_treasure_in_addition
            rows.append(_line("crown-treasure", rules.crown_treasure_pays, in_addition=bool(added)))
            notes.append("crown_treasure_in_addition" if added else "crown_treasure_instead")
        tables.append(
            {
                "kind": "royal_match",
                "clause": "PA 633c.5(ee)(3)",
                "rows": rows,
                "notes": [*notes, "highest_line_only"],
            }
        )
    for kind, clause in (("bet_the_set", "PA 633c.5(ee)(4)"), ("kings_bounty", "PA 633c.5(ee)(5)")):
        if getattr(rules, kind, False):
            lines = getattr(rules, f"{kind}_lines")()
            tables.append(
                {
                    "kind": kind,
                    "clause": clause,
                    "rows": [_line(line, odds) for line, odds in lines],
                    "notes": ["highest_line_only"],
                }
            )
    if getattr(rules, "ez_bust", False):
        rows = [_line("dealer-busts", Fraction(1))]
        if getattr(rules, "ez_bust_push_all", False):
            line = "all-blackjack-or-bust"  # 633b.16(g): every EZ Bust wager pushes
            rows.append({"hand": line, "label": PAYTABLE_LINES[line], "pays": "push", "odds": None})
        tables.append(
            {"kind": "ez_bust", "clause": "PA 633b.16(f)", "rows": rows, "notes": ["ez_bust"]}
        )
    return tables


def rules_icon(rules: Any, countdown_seconds: float, countdown_default: str) -> dict[str, Any]:
    """The content of the terminal's game rules icon (633c.5(c)(2)–(3)): Blackjack pays 3 to 2,
    the dealer stands on all soft 17s, insurance pays 2 to 1, what the countdown does, and every
    paytable the table offers (Buzzer Beater, Royal Match 21 with Crown Treasure, Bet the Set,
    King's Bounty, EZ Bust). ``lines`` says it in English; ``facts`` and ``paytables`` are the
    same as data, which the terminal words in the player's language."""
    blackjack_pays: Fraction = rules.blackjack_pays
    insurance_pays: Fraction = getattr(rules, "insurance_pays", Fraction(2))
    hits_soft_17 = bool(getattr(rules, "dealer_hits_soft_17", False))
    lines = [
        f"Blackjack pays {format_odds(blackjack_pays)}.",
        "Dealer stands on all soft 17s." if not hits_soft_17 else "Dealer hits soft 17.",
        f"Insurance pays {format_odds(insurance_pays)}.",
    ]
    default_text = {
        "stand": "your hand stands",
        "hit-hard-11-or-less": "a hard total of 11 or less is hit automatically, any other hand "
        "stands",
    }.get(countdown_default, countdown_default)
    hits: list[str] = []
    if hasattr(rules, "countdown_rows"):  # the rules' own options (633c.5(z), (c)(2))
        default_text = rules.countdown_text()
        hits = [row["total"] for row in rules.countdown_rows() if row["action"] == "hit"]
    lines.append(
        f"If you do not hit or stand before the {int(countdown_seconds)}-second countdown clock "
        f"ends, {default_text}."
    )
    lines.append(
        f"Wagers from {format_cents(rules.table_minimum)} to {format_cents(rules.table_maximum)}."
    )
    buzzer: list[dict[str, str]] = []
    if getattr(rules, "buzzer_beater", False):
        lines.append(
            "Buzzer Beater: an optional wager that your hand will be 19 or better and the "
            "dealer's hand will equal or beat it without exceeding 21."
        )
        for row in rules.buzzer_beater_paytable:
            buzzer.append(
                {
                    "player": row.player,
                    "dealer": " or ".join(row.dealer),
                    "pays": format_odds(row.pays),
                }
            )
    offered = [
        label
        for field, label in (
            ("royal_match", "Royal Match 21"),
            ("bet_the_set", "Bet the Set"),
            ("kings_bounty", "King's Bounty"),
        )
        if getattr(rules, field, False)
    ]
    if offered:
        lines.append(
            "Optional side wagers: " + ", ".join(offered) + ", paid as the posted paytables show."
        )
    if getattr(rules, "ez_bust", False):
        lines.append("EZ Bust: an optional wager that the dealer busts, pays 1 to 1.")
    facts = {
        "blackjack_pays": [blackjack_pays.numerator, blackjack_pays.denominator],
        "dealer_hits_soft_17": hits_soft_17,
        "insurance_pays": [insurance_pays.numerator, insurance_pays.denominator],
        "countdown_seconds": int(countdown_seconds),
        "countdown_default": countdown_default,
        "countdown_hits": hits,
        "table_minimum": rules.table_minimum,
        "table_maximum": rules.table_maximum,
        "decks": getattr(rules, "decks", None),
        "side_wager_minimum": getattr(rules, "side_wager_minimum", None),
        "side_wager_maximum": getattr(rules, "side_wager_maximum", None),
    }
    return {
        "lines": lines,
        "buzzer_beater": buzzer,
        "countdown_default": countdown_default,
        "facts": facts,
        "paytables": paytables(rules),
    }
