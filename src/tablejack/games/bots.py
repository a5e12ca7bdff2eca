"""Automated players: seat bots at a round and choose their commands by basic strategy.

Used by ``tablejack deal``, the benchmarks and the property tests. A bot never does anything a
player at the table could not: it asks the round what is legal and picks by
:func:`~tablejack.games.strategy.basic_strategy`.
"""

from __future__ import annotations

import random

from tablejack.core.commands import Command
from tablejack.games.classic import ClassicRound, Phase
from tablejack.games.strategy import legal_basic_strategy

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
        return Command.of(round_.seats_to_decide()[0], "no-insurance")
    if phase is Phase.EZ_BUST:
        return Command.of(round_.seats_to_decide()[0], "ez-bust")
    if phase is not Phase.PLAYING:
        return None
    seat = round_.current_seat
    hand = round_.current_hand
    up = round_.up_card
    if seat is None or hand is None or up is None:
        return None
    state = round_.seats[seat]
    if state.ez_split_wagers < state.splits and round_.can_place_ez_bust(seat):
        return Command.of(seat, "ez-bust")
    decision = legal_basic_strategy(
        hand.hand,
        up.points,
        lambda option: bool(_CLASSIC_CHECKS[option](round_, seat)),
        surrender=not hand.acted,
    )
    return Command.of(seat, decision)


_CLASSIC_CHECKS = {
    "split": ClassicRound.can_split,
    "double": ClassicRound.can_double_down,
    "surrender": ClassicRound.can_surrender,
    "hit": ClassicRound.can_hit,
}
