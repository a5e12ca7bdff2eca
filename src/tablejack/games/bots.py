"""Automated players: seat bots at a round and choose their commands by basic strategy.

Used by ``tablejack deal``, the benchmarks and the property tests. A bot never does anything a
player at the table could not: it asks the round what is legal and picks by
:func:`~tablejack.games.strategy.basic_strategy`.
"""

from __future__ import annotations

import random

from tablejack.games.classic import ClassicRound, Phase
from tablejack.games.strategy import basic_strategy

__all__ = ["classic_command", "classic_seat"]

BOT_NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ida", "jon", "kim", "lou")


def classic_seat(round_: ClassicRound, generator: random.Random, players: int) -> None:
    """Seat ``players`` bots on seats 1.. with wagers of 1–5 table minimums, then deal."""
    rules = round_.rules
    for seat in range(1, players + 1):
        units = generator.randint(1, 5)
        amount = min(rules.table_minimum * units, rules.table_maximum)
        round_.place_wager(seat, BOT_NAMES[(seat - 1) % len(BOT_NAMES)], amount)
    round_.close_wagering()


def classic_command(round_: ClassicRound) -> str | None:
    """The next bot command, or None when the round needs no player decision.

    Basic strategy: never insurance or even money, EZ Bust for the full initial wager whenever
    offered (and again after each split)."""
    phase = round_.phase
    if phase is Phase.INSURANCE:
        return f"{round_.seats_to_decide()[0]} no-insurance"
    if phase is Phase.EZ_BUST:
        return f"{round_.seats_to_decide()[0]} ez-bust"
    if phase is not Phase.PLAYING:
        return None
    seat = round_.current_seat
    hand = round_.current_hand
    up = round_.up_card
    if seat is None or hand is None or up is None:
        return None
    if round_.can_place_ez_bust(seat):
        return f"{seat} ez-bust"
    decision = basic_strategy(
        hand.hand,
        up.points,
        can_double=round_.can_double_down(seat),
        can_split=round_.can_split(seat),
        can_surrender=round_.can_surrender(seat),
    )
    if decision == "hit" and not round_.can_hit(seat):
        decision = "stand"
    return f"{seat} {decision}"
