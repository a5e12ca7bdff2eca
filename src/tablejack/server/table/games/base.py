"""The port a table drives a game through: :class:`TableGame`, and :class:`GameAdapter`, the
defaults every game's adapter shares.

The engine decides everything; an adapter only maps the server's vocabulary onto the engine's
verbs: who the actor of a terminal player's command is (a seat number at a classic table, the
player's name at a hybrid table), how a terminal's wager becomes an engine call, which view a
terminal may see, when a countdown window is open and what the clock sends when it runs out.
An adapter holds no state of its own: one instance serves every table of its game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from tablejack.core.errors import IllegalActionError
from tablejack.core.rules import TableRules

__all__ = [
    "POSITION_RULE",
    "WAGER_RULE",
    "Encode",
    "GameAdapter",
    "JsonObject",
    "TableGame",
    "WindowKey",
]

POSITION_RULE = "PA 633c.5(l)"
WAGER_RULE = "PA 633c.5(k)"

JsonObject = dict[str, Any]
"""A view as JSON data (what a terminal, the console or the audit log is sent)."""

Encode = Callable[[Any], str]
"""Compact JSON text of a JSON value."""

WindowKey = tuple[str | int, ...]
"""Names an open decision window: the countdown clock runs while the key stays the same."""

RoundT_contra = TypeVar("RoundT_contra", contravariant=True)


class TableGame(Protocol[RoundT_contra]):
    """What a table needs of its game: the wagers, the actor and the text of a command, the
    views, the decision window and the countdown. ``RoundT_contra`` is the engine's round class of
    the game (:class:`~tablejack.games.classic.ClassicRound`, …)."""

    @property
    def game(self) -> str:
        """The game id (a key of :data:`tablejack.games.GAMES`)."""
        ...

    @property
    def side_wagers(self) -> tuple[str, ...]:
        """Wager kinds a terminal may place before the first card besides ``blackjack``."""
        ...

    @property
    def wagering_rule(self) -> str:
        """The game's clause that wagers are placed before the first card (the engine's)."""
        ...

    def positions(self, rules: TableRules) -> int:
        """How many player boxes the layout shows."""
        ...

    def place_wager(
        self, round_: RoundT_contra, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        """Place a terminal's wager before the first card (633c.5(k))."""
        ...

    def place_spot_wagers(
        self,
        round_: RoundT_contra,
        player: str,
        position: int | None,
        amount: int,
        spots: Sequence[int],
    ) -> None:
        """A wager of spot amounts (multi-action tables only)."""
        ...

    def withdraw_wager(self, round_: RoundT_contra, player: str, kind: str) -> None:
        """Take back a terminal's wager of ``kind`` before the first card (633c.5(k)); the
        Blackjack Wager takes its side wagers with it."""
        ...

    def change_wager(self, round_: RoundT_contra, player: str, kind: str, amount: int) -> None:
        """Raise or lower a terminal's wager of ``kind`` to ``amount`` before the first card
        (633c.5(k))."""
        ...

    def command_text(
        self, actor: str, verb: str, amount: int | None, spots: Sequence[int] | None
    ) -> str:
        """The engine command of a terminal's decision."""
        ...

    def actor(self, round_: RoundT_contra, player: str, position: int | None) -> str:
        """The command actor for ``player`` (raises if the player has no hand there)."""
        ...

    def player_position(self, round_: RoundT_contra, player: str) -> int | None:
        """The position (seat) ``player`` backs this round, or None."""
        ...

    def player_view(self, round_: RoundT_contra, player: str) -> JsonObject:
        """What ``player``'s terminal may show."""
        ...

    def player_views(self, round_: RoundT_contra, players: Iterable[str]) -> dict[str, JsonObject]:
        """:meth:`player_view` of several players at once (one broadcast)."""
        ...

    def player_texts(
        self, round_: RoundT_contra, players: Iterable[str], encode: Encode
    ) -> dict[str, str]:
        """Each player's view as JSON text (one broadcast)."""
        ...

    def player_pieces(
        self, round_: RoundT_contra, players: Iterable[str], encode: Encode
    ) -> dict[str, tuple[str, ...]]:
        """:meth:`player_texts` in pieces whose concatenation is each text, a piece several
        players' texts hold being one string for all of them (the broadcast conceals each
        piece once: :class:`~tablejack.server.visibility.Concealer`)."""
        ...

    def audit_view(self, round_: RoundT_contra) -> JsonObject:
        """Everything (dealer console, supervisor)."""
        ...

    def window(self, round_: RoundT_contra) -> WindowKey | None:
        """The open decision window, or None when no player decision is awaited."""
        ...

    def awaited(self, round_: RoundT_contra) -> frozenset[str]:
        """The players whose decision the open window still waits for."""
        ...

    def on_countdown(self, round_: RoundT_contra) -> list[str]:
        """The commands the clock sends when the window's countdown runs out."""
        ...

    def countdown_seconds(self, rules: TableRules, config_seconds: float | None) -> float:
        """The countdown's length in seconds."""
        ...

    def countdown_default(self, rules: TableRules) -> str:
        """What the clock does for a player who has not acted."""
        ...


R = TypeVar("R")


class GameAdapter(Generic[R]):
    """What most games' adapters share; each game's module subclasses it for its round class
    ``R`` and fills in the rest of :class:`TableGame`."""

    game: ClassVar[str] = ""
    side_wagers: ClassVar[tuple[str, ...]] = ()
    wagering_rule: ClassVar[str] = ""

    def positions(self, rules: TableRules) -> int:
        """How many player boxes the layout shows: one per seat of the rules."""
        return rules.max_seats

    def place_spot_wagers(
        self, round_: R, player: str, position: int | None, amount: int, spots: Sequence[int]
    ) -> None:
        """Refused: only multi-action tables take spot amounts."""
        raise IllegalActionError(
            f"This table takes one amount per wager, not spot amounts ({WAGER_RULE}).",
            rule=WAGER_RULE,
        )

    def withdraw_wager(self, round_: R, player: str, kind: str) -> None:
        """Refused: this game's engine keeps a placed wager until the round settles it."""
        raise IllegalActionError(
            f"A wager placed at a {self.game} table is not taken back at the terminal; it "
            f"stands until the round settles it ({WAGER_RULE}).",
            rule=WAGER_RULE,
        )

    def change_wager(self, round_: R, player: str, kind: str, amount: int) -> None:
        """Refused: this game's engine keeps a placed wager until the round settles it."""
        raise IllegalActionError(
            f"A wager placed at a {self.game} table is not changed at the terminal; it "
            f"stands until the round settles it ({WAGER_RULE}).",
            rule=WAGER_RULE,
        )

    def command_text(
        self, actor: str, verb: str, amount: int | None, spots: Sequence[int] | None
    ) -> str:
        """``actor verb [amount]``; spots are refused (only a multi-action double names them)."""
        if spots is not None:
            raise IllegalActionError(
                f"Only a multi-action double names spots ({WAGER_RULE}).", rule=WAGER_RULE
            )
        return f"{actor} {verb}" + ("" if amount is None else f" {amount}")

    def player_view(self, round_: R, player: str) -> JsonObject:
        """What ``player``'s terminal may show."""
        raise NotImplementedError

    def player_views(self, round_: R, players: Iterable[str]) -> dict[str, JsonObject]:
        """:meth:`player_view` of several players at once (one broadcast)."""
        return {player: self.player_view(round_, player) for player in players}

    def player_texts(self, round_: R, players: Iterable[str], encode: Encode) -> dict[str, str]:
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

    def player_pieces(
        self, round_: R, players: Iterable[str], encode: Encode
    ) -> dict[str, tuple[str, ...]]:
        """:meth:`player_texts`, each text one piece (a view several players share is one
        string)."""
        return {
            player: (text,) for player, text in self.player_texts(round_, players, encode).items()
        }

    def countdown_seconds(self, rules: TableRules, config_seconds: float | None) -> float:
        """The countdown length: the rules' own (633c.5(p)(2)) or the table configuration's."""
        own = getattr(rules, "countdown_seconds", None)
        if own is not None:
            return float(own)
        return float(config_seconds if config_seconds is not None else 20)

    def countdown_default(self, rules: TableRules) -> str:
        """What the clock does for a player who has not acted."""
        return str(getattr(rules, "countdown_default", "stand"))
