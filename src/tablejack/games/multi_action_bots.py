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
from tablejack.games.strategy import basic_strategy

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
        return _command(round_.seats_to_decide()[0], "no-insurance")
    if phase is not Phase.PLAYING:
        return None
    seat = round_.current_seat
    hand = round_.current_hand
    up = round_.up_card
    if seat is None or hand is None or up is None:
        return None
    cards = hand.hand
    two = len(cards.cards) == 2
    can_double = two
    can_split = two and cards.cards[0].points == cards.cards[1].points
    while True:
        decision = basic_strategy(
            cards, up.points, can_double=can_double, can_split=can_split, can_surrender=False
        )
        # Ask the round only about the option the strategy wants; fall back if it is illegal.
        if decision == "split" and not round_.can_split(seat):
            can_split = False
        elif decision == "double" and not round_.can_double_down(seat):
            can_double = False
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
