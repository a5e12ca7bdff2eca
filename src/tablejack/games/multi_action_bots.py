"""Automated players for NJ multi-action blackjack: seat bots and choose their commands.

A bot backs two or three of the three betting spots at random (all three when the rules'
``minimum_spots`` is 3, or when asked to), each with 1 to 5 table minimums, and plays its one
hand by :func:`~tablejack.games.strategy.basic_strategy` against the dealer's first card. It
doubles only where the round allows it (a first-two-card total of 10 or 11, NJ MAB (a)) and then
on every backed spot, splits where the chart says so, never surrenders (not offered) and never
insures.

>>> import random
>>> from tablejack.core import Shoe
>>> from tablejack.games.multi_action import MultiActionRound, MultiActionRules
>>> table = MultiActionRound(MultiActionRules(), Shoe.shuffled(4, seed=3))
>>> bot_seat(table, random.Random(3), 7)
>>> while not table.is_complete:
...     _ = table.apply(bot_command(table))
>>> table.house_net() == -sum(table.player_net().values())
True
"""

from __future__ import annotations

import random

from tablejack.core.commands import Command
from tablejack.games.bots import BOT_NAMES
from tablejack.games.multi_action import MultiActionRound, Phase
from tablejack.games.strategy import legal_basic_strategy

__all__ = ["bot_command", "bot_seat"]


def bot_seat(
    round_: MultiActionRound,
    generator: random.Random,
    players: int,
    *,
    spots: int | None = None,
) -> None:
    """Seat ``players`` bots on seats 1.. and deal. Each backs ``spots`` spots (default: two or
    three at random, at least the rules' ``minimum_spots``), each spot 1–5 table minimums."""
    rules = round_.rules
    for seat in range(1, players + 1):
        count = spots if spots is not None else generator.randint(rules.minimum_spots, 3)
        backed = set(generator.sample((1, 2, 3), count))
        amounts = [
            min(rules.table_minimum * generator.randint(1, 5), rules.table_maximum)
            if spot in backed
            else 0
            for spot in (1, 2, 3)
        ]
        round_.place_wager(seat, BOT_NAMES[(seat - 1) % len(BOT_NAMES)], amounts)
    round_.close_wagering()


def bot_command(round_: MultiActionRound) -> Command | None:
    """The next bot command, or None when the round needs no player decision."""
    phase = round_.phase
    if phase is Phase.INSURANCE:
        return Command.of(round_.seats_to_decide()[0], "no-insurance")
    if phase is not Phase.PLAYING:
        return None
    seat = round_.current_seat
    hand = round_.current_hand
    up = round_.up_card
    if seat is None or hand is None or up is None:
        return None
    checks = {
        "split": round_.can_split,
        "double": round_.can_double_down,
        "hit": round_.can_hit,
    }
    decision = legal_basic_strategy(
        hand.hand, up.points, lambda option: checks[option](seat), surrender=False
    )
    return Command.of(seat, decision)
