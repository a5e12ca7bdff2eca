"""Play the engine by the lab's generated strategy (the kernel's twin player).

:func:`strategy_command` answers the next command for a one-seat classic round exactly as the
simulation kernel plays: no insurance or even money, an EZ Bust wager whenever one may be
placed (633b.16(c)), then split, double, surrender, hit or stand by the tables.
:func:`play_engine_shoe` plays a whole shoe through the engine, round by round, for the parity
tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablejack.core.cards import Card
from tablejack.core.records import WagerKind
from tablejack.core.shoe import Shoe
from tablejack.games.classic import ClassicRound, Phase
from tablejack.lab.exact import Strategy

__all__ = ["play_engine_shoe", "strategy_command"]


def strategy_command(round_: ClassicRound, strategy: Strategy, seat: int = 1) -> str | None:
    """The next command for ``seat`` by ``strategy``, or None when no decision is awaited."""
    phase = round_.phase
    if phase is Phase.INSURANCE:
        return f"{seat} no-insurance"
    if phase is Phase.EZ_BUST:
        return f"{seat} ez-bust"
    if phase is not Phase.PLAYING or round_.current_seat != seat:
        return None
    if round_.can_place_ez_bust(seat):
        return f"{seat} ez-bust"
    hand = round_.current_hand
    up = round_.up_card
    assert hand is not None and up is not None
    u = 0 if up.is_ace else min(up.points, 10) - 1
    cards = hand.hand
    total = cards.total
    soft = cards.is_soft
    if round_.can_split(seat):
        first = cards.cards[0]
        c = 0 if first.is_ace else first.points - 1
        if strategy.split[u, c]:
            return f"{seat} split"
    if len(cards) == 2:
        code = (strategy.first_soft if soft else strategy.first_hard)[u, total]
        if code == 1 and round_.can_double_down(seat):
            return f"{seat} double"
        if code == 2 and round_.can_surrender(seat):
            return f"{seat} surrender"
    hit = (strategy.hit_soft if soft else strategy.hit_hard)[u, total] and total < 21
    return f"{seat} hit" if hit and round_.can_hit(seat) else f"{seat} stand"


def play_engine_shoe(
    rules: Any, strategy: Strategy, cards: Sequence[int], cut: int, *, wager: int = 1000
) -> list[dict[str, Any]]:
    """Play one seat through the engine from the shoe ``cards`` (card indices) until the cut
    card; per round the main-wager and EZ Bust nets in units of ``wager``, the EZ Bust wagers
    and the cards used."""
    shoe = Shoe.prearranged([Card.from_index(int(i)) for i in cards], decks=rules.decks)
    rounds: list[dict[str, Any]] = []
    while shoe.dealt < cut:
        start = shoe.dealt
        round_ = ClassicRound(rules, shoe)
        round_.place_wager(1, "lab", wager)
        round_.close_wagering()
        while not round_.is_complete:
            command = strategy_command(round_, strategy)
            if command is None:  # pragma: no cover - a round always waits for the seat
                raise RuntimeError(f"no command for {round_.next_step()}")
            round_.apply(command)
        round_.house_net()  # every wager settled exactly once
        main = sum(s.net for s in round_.settlements if s.kind is WagerKind.BLACKJACK)
        ez = [s for s in round_.settlements if s.kind is WagerKind.EZ_BUST]
        rounds.append(
            {
                "main": main / wager,
                "ez": sum(s.net for s in ez) / wager,
                "ez_wagers": len(ez),
                "cards": shoe.dealt - start,
            }
        )
    return rounds
