"""Automated players: seat bots at a round and choose their commands by basic strategy.

Used by ``tablejack deal``, the benchmarks and the property tests. A bot never does anything a
player at the table could not: it asks the round what is legal and picks by
:func:`~tablejack.games.strategy.basic_strategy`.
"""

from __future__ import annotations

import random

from tablejack.core.commands import Command
from tablejack.games.classic import ClassicRound, Phase
from tablejack.games.strategy import basic_strategy

__all__ = ["classic_command", "classic_seat"]

BOT_NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ida", "jon", "kim", "lou")


def classic_seat(round_: ClassicRound, generator: random.Random, players: int) -> None:
    """Seat ``players`` bots on seats 1.. with wagers of 1–5 table minimums, then deal."""
    rules = round_.rules
    for seat in range(1, players + 1):
        units = 1 + int(generator.random() * 5)
        amount = min(rules.table_minimum * units, rules.table_maximum)
        round_.place_wager(seat, BOT_NAMES[(seat - 1) % len(BOT_NAMES)], amount)
    round_.close_wagering()


def classic_command(round_: ClassicRound) -> Command | None:
    """The next bot command, or None when the round needs no player decision.

    Basic strategy: never insurance or even money, EZ Bust for the full initial wager whenever
    offered (and again after each split). Options are asked of the round (``can_…``) only when
    the strategy would use them.
    """
    phase = round_.phase
    if phase is Phase.INSURANCE:
        return _command(round_.seats_to_decide()[0], "no-insurance")
    if phase is Phase.EZ_BUST:
        return _command(round_.seats_to_decide()[0], "ez-bust")
    if phase is not Phase.PLAYING:
        return None
    seat = round_.current_seat
    hand = round_.current_hand
    up = round_.up_card
    if seat is None or hand is None or up is None:
        return None
    state = round_.seats[seat]
    if state.ez_split_wagers < state.splits and round_.can_place_ez_bust(seat):
        return _command(seat, "ez-bust")
    cards = hand.hand
    two = len(cards.cards) == 2
    pair = two and cards.cards[0].points == cards.cards[1].points
    can_double = two
    can_split = pair
    can_surrender = two and not hand.acted
    while True:
        decision = basic_strategy(
            cards,
            up.points,
            can_double=can_double,
            can_split=can_split,
            can_surrender=can_surrender,
        )
        # Ask the round only about the option the strategy wants; fall back if it is illegal.
        if decision == "split" and not round_.can_split(seat):
            can_split = False
        elif decision == "double" and not round_.can_double_down(seat):
            can_double = False
        elif decision == "surrender" and not round_.can_surrender(seat):
            can_surrender = False
        elif decision == "hit" and not round_.can_hit(seat):
            decision = "stand"
            break
        else:
            break
    return _command(seat, decision)


_COMMANDS: dict[tuple[int, str], Command] = {}


def _command(seat: int, verb: str) -> Command:
    command = _COMMANDS.get((seat, verb))
    if command is None:
        command = _COMMANDS[(seat, verb)] = Command(str(seat), verb)
    return command
