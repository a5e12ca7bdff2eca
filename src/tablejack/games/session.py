"""Automated play: many rounds from one shoe, reshuffled at the cut card, bots on every seat.

>>> from tablejack.core import ClassicRules
>>> rounds = list(play_rounds(ClassicRules(ez_bust=True), rounds=3, seed=1, players=7))
>>> len(rounds), all(r.is_complete for r in rounds)
(3, True)
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tablejack.core.shoe import Shoe

__all__ = ["play_rounds", "shoe_seed"]


def shoe_seed(seed: int, shoe_index: int) -> int:
    """The seed of the ``shoe_index``-th shoe of a session seeded ``seed`` (independent of how
    rounds are chunked)."""
    return (seed * 1_000_003 + shoe_index) & 0xFFFF_FFFF_FFFF


def play_rounds(
    rules: Any,
    *,
    rounds: int,
    seed: int | None = None,
    players: int | None = None,
) -> Iterator[Any]:
    """Yield ``rounds`` completed rounds played by bots. With ``seed`` the whole session is
    reproducible; without one every shoe is shuffled by the secure generator."""
    from tablejack.games import game

    spec = game(rules.game)
    generator = random.Random(seed)
    shoe_index = 0
    shoe = _new_shoe(rules, seed, shoe_index)
    count = players if players is not None else spec.default_players
    new_round, bot_seat, bot_command = spec.new_round, spec.bot_seat, spec.bot_command
    for _ in range(rounds):
        if shoe.cut_card_reached:
            shoe_index += 1
            shoe = _new_shoe(rules, seed, shoe_index)
        round_ = new_round(rules, shoe)
        bot_seat(round_, generator, count)
        apply = round_.apply
        while not round_.is_complete:
            command = bot_command(round_)
            if command is None:  # pragma: no cover - a round always waits for someone
                raise RuntimeError(f"bots cannot continue: {round_.next_step()}")
            apply(command)
        yield round_


def _new_shoe(rules: Any, seed: int | None, index: int) -> Shoe:
    return Shoe.shuffled(
        rules.decks,
        seed=None if seed is None else shoe_seed(seed, index),
        penetration=rules.penetration,
    )
