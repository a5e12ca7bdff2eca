"""The games: one module per game, each a round state machine over the core.

The registry :data:`GAMES` maps a game id to its rules class, round class and the functions that
seat players from notation, export a round and write its transcript. :func:`replay` and
:func:`export` are the round notation's other half (:mod:`tablejack.core.notation`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tablejack.core.commands import Command
from tablejack.core.errors import InvalidNotationError, RulesError, TablejackError
from tablejack.core.notation import RoundHistory
from tablejack.core.records import Operation, Settlement, Wager
from tablejack.core.rules import ClassicRules, TableRules, read_toml
from tablejack.core.shoe import Shoe
from tablejack.games import (
    bots,
    classic,
    hybrid,
    hybrid_shared,
    hybrid_shared_bots,
    hybrid_shared_rules,
    multi_action,
    multi_action_bots,
)

__all__ = ["GAMES", "Game", "GameRound", "export", "load_rules", "new_round", "replay"]


class GameRound(Protocol):
    """What every game's round offers the registry, the CLI and the server."""

    game: str
    rules: Any
    operations: list[Operation]
    settlements: list[Settlement]
    wagers: list[Wager]
    cards_dealt: list[Any]

    @property
    def is_complete(self) -> bool: ...

    def apply(self, command: Any) -> Operation: ...

    def next_step(self) -> str: ...

    def house_net(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Game:
    """A game id with everything needed to play, replay and describe its rounds."""

    id: str
    title: str
    rules_class: type[TableRules]
    new_round: Callable[[Any, Shoe | None], Any]
    seat_players: Callable[[Any, tuple[Mapping[str, Any], ...]], None]
    seats_of: Callable[[Any], tuple[dict[str, Any], ...]]
    transcript: Callable[[Any], list[str]]
    bot_seat: Callable[[Any, random.Random, int], None]
    """Seat that many bots with wagers and start the deal."""
    bot_command: Callable[[Any], Command | str | None]
    """The next bot command, or None when no player decision is awaited."""
    default_players: int = 7


def _classic_seat_players(
    round_: classic.ClassicRound, seats: tuple[Mapping[str, Any], ...]
) -> None:
    for entry in seats:
        unknown = set(entry) - {"seat", "player", "wager"}
        if unknown or not {"seat", "player", "wager"} <= set(entry):
            raise InvalidNotationError(
                f'A classic seat is written seat = N, player = "name", wager = "$10"; got '
                f"{dict(entry)!r}."
            )
        round_.place_wager(entry["seat"], entry["player"], entry["wager"])
    round_.close_wagering()


def _classic_seats_of(round_: classic.ClassicRound) -> tuple[dict[str, Any], ...]:
    # In the order the wagers were placed, so that replay logs them in the same order.
    placed = [op.seat for op in round_.operations if op.kind == "wager"]
    return tuple(
        {"seat": state.number, "player": state.player, "wager": state.wager}
        for state in (round_.seats[seat] for seat in placed if seat is not None)
    )


GAMES: dict[str, Game] = {
    "classic": Game(
        id="classic",
        title="PA Chapter 633a Blackjack (EZ Bust, 633b.16)",
        rules_class=ClassicRules,
        new_round=classic.ClassicRound,
        seat_players=_classic_seat_players,
        seats_of=_classic_seats_of,
        transcript=classic.transcript,
        bot_seat=bots.classic_seat,
        bot_command=bots.classic_command,
    ),
    "multi-action": Game(
        id="multi-action",
        title="NJ multi-action blackjack (N.J.A.C. 13:47)",
        rules_class=multi_action.MultiActionRules,
        new_round=multi_action.MultiActionRound,
        seat_players=multi_action.seat_players,
        seats_of=multi_action.seats_of,
        transcript=multi_action.transcript,
        bot_seat=multi_action_bots.bot_seat,
        bot_command=multi_action_bots.bot_command,
    ),
    "hybrid": Game(
        id="hybrid",
        title="PA 633c.5 Blackjack on a hybrid gaming table, version A (Buzzer Beater)",
        rules_class=hybrid.HybridRules,
        new_round=hybrid.HybridRound,
        seat_players=hybrid.seat_players,
        seats_of=hybrid.seats_of,
        transcript=hybrid.transcript,
        bot_seat=hybrid.bot_seat,
        bot_command=hybrid.bot_command,
        default_players=12,
    ),
    "hybrid-shared": Game(
        id="hybrid-shared",
        title="PA 633c.5(w)-(ee) hybrid table, no hole card, one shared start",
        rules_class=hybrid_shared_rules.HybridSharedRules,
        new_round=hybrid_shared.HybridSharedRound,
        seat_players=hybrid_shared.seat_players,
        seats_of=hybrid_shared.seats_of,
        transcript=hybrid_shared.transcript,
        bot_seat=hybrid_shared_bots.bot_seat,
        bot_command=hybrid_shared_bots.bot_command,
        default_players=20,
    ),
}


def game(game_id: str) -> Game:
    """The registered game ``game_id``."""
    try:
        return GAMES[game_id]
    except KeyError:
        raise InvalidNotationError(
            f"Unknown game {game_id!r}; tablejack plays {', '.join(sorted(GAMES))}."
        ) from None


def load_rules(path: str | Path, *, game_id: str | None = None) -> Any:
    """Load a rules file; its ``game`` field (or ``game_id``) picks the rules class."""
    data = read_toml(path)
    chosen = data.get("game", game_id or "classic")
    if game_id is not None and chosen != game_id:
        raise RulesError(f"{path} holds rules for {chosen!r}, not {game_id!r}.", rule="PA 601a.2")
    return game(str(chosen)).rules_class.from_toml(path)


def new_round(rules: Any, shoe: Shoe | None = None) -> Any:
    """A new round of the game the rules are for."""
    return game(rules.game).new_round(rules, shoe)


def replay(history: RoundHistory, *, strict: bool = True) -> Any:
    """Play a history: the rules, the seats, the card order, then every command in order.

    Raises :class:`InvalidNotationError` when a command is missing (the round is not complete
    when the commands end), extra (a command after the round is complete), or when ``strict``
    and cards are left over; any illegal command raises with its position in the list.
    """
    spec = game(history.game)
    rules = spec.rules_class.from_mapping(history.rules)
    shoe = Shoe.prearranged(history.cards, decks=rules.decks)
    round_ = spec.new_round(rules, shoe)
    try:
        spec.seat_players(round_, history.seats)
    except TablejackError as error:
        raise type(error)(f"Seating the players: {error.message}", rule=error.rule) from None
    for number, command in enumerate(history.commands, start=1):
        if round_.is_complete:
            raise InvalidNotationError(
                f"Command {number} ({command!r}) comes after the round is complete: an extra "
                "command."
            )
        try:
            round_.apply(command)
        except TablejackError as error:
            raise type(error)(
                f"Command {number} ({command!r}): {error.message}", rule=error.rule
            ) from None
    if not round_.is_complete:
        raise InvalidNotationError(
            f"The commands end before the round is complete: the table waits for "
            f"{round_.next_step()} (a missing command)."
        )
    if strict and shoe.remaining:
        left = " ".join(card.code for card in shoe.peek(shoe.remaining))
        raise InvalidNotationError(f"{shoe.remaining} card(s) were never dealt: {left}.")
    return round_


def export(round_: Any, *, round_id: str = "") -> RoundHistory:
    """The notation of a round played so far (complete for game recall)."""
    spec = game(round_.game)
    return RoundHistory(
        game=round_.game,
        rules={k: v for k, v in round_.rules.to_mapping().items() if k != "game"},
        seats=spec.seats_of(round_),
        cards=tuple(round_.cards_dealt),
        commands=tuple(op.command for op in round_.operations if op.command),
        round_id=round_id,
    )


def transcript(round_: Any) -> list[str]:
    """The readable account of a round."""
    return game(round_.game).transcript(round_)
