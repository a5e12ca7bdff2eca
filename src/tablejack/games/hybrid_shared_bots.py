"""Automated players for ``hybrid-shared``: many bots on one shared start, choosing differently.

Every bot sees the same two cards and the same dealer's first card, so what separates their
rounds is their choices (and so their personal dealer hands, 633c.5(aa)–(bb)). The bots come in
four styles, by player number:

* ``basic`` (1, 5, 9, …): :func:`~tablejack.games.strategy.basic_strategy` with double, split
  and surrender; never insures;
* ``mimic`` (2, 6, 10, …): hits below 17 like the dealer, never doubles or splits; insures only
  a Blackjack (A-8: insurance is the even money of version B);
* ``stand`` (3, 7, 11, …): stands on the two cards whatever they are, and always insures;
* ``idle`` (4, 8, 12, …): never acts; the countdown clock decides for it
  (``dealer countdown-expired``, the configured default action, 633c.5(z)).

Each bot places a Blackjack Wager of 1–5 table minimums and each offered side wager with
probability one half, for 1–5 side wager minimums.

>>> import random
>>> from tablejack.core import Shoe
>>> from tablejack.games.hybrid_shared import HybridSharedRound
>>> from tablejack.games.hybrid_shared_rules import HybridSharedRules
>>> table = HybridSharedRound(HybridSharedRules(), Shoe.shuffled(6, seed=3))
>>> bot_seat(table, random.Random(3), 20)
>>> while not table.is_complete:
...     _ = table.apply(bot_command(table))
>>> table.house_net() == -sum(table.player_net().values())
True
"""

from __future__ import annotations

import random

from tablejack.core.commands import Command
from tablejack.games.bots import BOT_NAMES
from tablejack.games.hybrid_shared import HybridSharedRound, Phase, PlayerState
from tablejack.games.strategy import legal_basic_strategy

__all__ = ["STYLES", "bot_command", "bot_name", "bot_seat", "bot_style"]

STYLES = ("idle", "basic", "mimic", "stand")
"""Bot styles by player number modulo 4."""

SIDE_KEYS = ("royal_match", "bet_the_set", "kings_bounty")


def bot_name(number: int) -> str:
    """The name of bot ``number`` (1-based): ``ann`` … ``lou``, then ``ann2`` …"""
    base = BOT_NAMES[(number - 1) % len(BOT_NAMES)]
    lap = (number - 1) // len(BOT_NAMES)
    return base if lap == 0 else f"{base}{lap + 1}"


def bot_style(number: int) -> str:
    """The style of bot ``number``: ``basic``, ``mimic``, ``stand`` or ``idle``."""
    return STYLES[number % 4]


def bot_seat(round_: HybridSharedRound, generator: random.Random, players: int) -> None:
    """Seat ``players`` bots with Blackjack Wagers and random side wagers, then deal."""
    rules = round_.rules
    offered = [
        key
        for key, on in zip(
            SIDE_KEYS, (rules.royal_match, rules.bet_the_set, rules.kings_bounty), strict=True
        )
        if on
    ]
    for number in range(1, players + 1):
        name = bot_name(number)
        amount = min(rules.table_minimum * generator.randint(1, 5), rules.table_maximum)
        round_.place_wager(name, amount)
        for key in offered:
            if generator.random() < 0.5:
                side = min(
                    rules.side_wager_minimum * generator.randint(1, 5), rules.side_wager_maximum
                )
                round_.place_side_wager(name, key, side)
    round_.close_wagering()


def bot_command(round_: HybridSharedRound) -> Command | None:
    """The next bot command: the first waiting bot that acts, else the dealer's countdown
    expiry when only idle bots are waiting; None when no decision is awaited."""
    if round_.phase is not Phase.PLAYING:
        return None
    waiting = round_.players_to_decide()
    if not waiting:
        return None
    for name in waiting:
        state = round_.players[name]
        style = bot_style(state.number)
        if style != "idle":
            return Command.of(name, _decide(round_, state, style))
    return Command.of("dealer", "countdown-expired")


def _decide(round_: HybridSharedRound, state: PlayerState, style: str) -> str:
    name = state.player
    hand = round_.current_hand(name)
    if round_.insurance_open and not state.insurance_decided:
        if style == "stand" or (style == "mimic" and round_.start.is_blackjack):
            return "insurance"
        if hand is None:
            return "no-insurance"
    assert hand is not None
    cards = hand.hand
    if style == "stand":
        return "stand"
    if style == "mimic":
        return "hit" if cards.total < 17 else "stand"
    first = round_.dealer_first_card
    assert first is not None
    checks = {
        "split": round_.can_split,
        "double": round_.can_double_down,
        "surrender": round_.can_surrender,
        "hit": round_.can_hit,
    }
    return legal_basic_strategy(
        cards,
        first.points,
        lambda option: checks[option](name),
        surrender=not state.acted and not state.split,
    )
