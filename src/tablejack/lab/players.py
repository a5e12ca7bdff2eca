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


def game_command(legal: Sequence[str], cards: Any, up: Card, strategy: Strategy) -> str:
    """The verb the generated strategy chooses among the ``legal`` verbs for ``cards`` (a
    :class:`~tablejack.core.hands.Hand`) against ``up``: never insurance or even money; split,
    double, surrender, hit or stand by the tables (the kernels' order)."""
    if "no-insurance" in legal:
        return "no-insurance"
    u = 0 if up.is_ace else min(up.points, 10) - 1
    total = cards.total
    soft = cards.is_soft
    if "split" in legal:
        first = cards.cards[0]
        c = 0 if first.is_ace else first.points - 1
        if strategy.split[u, c]:
            return "split"
    if len(cards) == 2:
        code = (strategy.first_soft if soft else strategy.first_hard)[u, total]
        if code == 1 and "double" in legal:
            return "double"
        if code == 2 and "surrender" in legal:
            return "surrender"
    hit = (strategy.hit_soft if soft else strategy.hit_hard)[u, total] and total < 21
    return "hit" if hit and "hit" in legal else "stand"


SIDE_KINDS = {
    "hybrid": (WagerKind.BUZZER_BEATER,),
    "hybrid-shared": (WagerKind.ROYAL_MATCH, WagerKind.BET_THE_SET, WagerKind.KINGS_BOUNTY),
}


def _engine_round(game: str, rules: Any, shoe: Shoe, wager: int) -> Any:
    """A round of ``game`` with one player's wagers placed and wagering closed."""
    if game == "hybrid":
        from tablejack.games.hybrid import HybridRound

        hybrid = HybridRound(rules, shoe)
        hybrid.place_wager("lab", 1, wager)
        if rules.buzzer_beater:
            hybrid.place_buzzer_beater("lab", wager)
        hybrid.close_wagering()
        return hybrid
    if game == "hybrid-shared":
        from tablejack.games.hybrid_shared import HybridSharedRound

        shared = HybridSharedRound(rules, shoe)
        shared.place_wager("lab", wager)
        for kind in SIDE_KINDS[game]:
            if getattr(rules, kind.value):
                shared.place_side_wager("lab", kind, wager)
        shared.close_wagering()
        return shared
    from tablejack.games.multi_action import MultiActionRound

    multi = MultiActionRound(rules, shoe)
    multi.place_wager(1, "lab", (wager, wager, wager))
    multi.close_wagering()
    return multi


def play_engine_game_shoe(
    game: str, rules: Any, strategy: Strategy, cards: Sequence[int], cut: int, *, wager: int = 1000
) -> list[dict[str, Any]]:
    """Play one player through the engine of ``game`` (``hybrid``, ``hybrid-shared`` or
    ``multi-action``) from the shoe ``cards`` until the cut card; per round the main-wager net
    (every spot), the side-wager nets (multi-action: each spot's net) in units of ``wager``,
    and the cards used — the numbers :func:`tablejack.lab.simulate_games.record_game_shoe` gives."""
    shoe = Shoe.prearranged([Card.from_index(int(i)) for i in cards], decks=rules.decks)
    rounds: list[dict[str, Any]] = []
    while shoe.dealt < cut:
        start = shoe.dealt
        round_ = _engine_round(game, rules, shoe, wager)
        while not round_.is_complete:
            if game == "multi-action":
                actor: str = "1"
                waiting = [str(s) for s in round_.seats_to_decide()]
                legal = round_.legal_actions(1) if waiting else []
                hand = round_.current_hand
                up = round_.up_card
            else:
                actor = "lab"
                waiting = (
                    round_.awaiting_players() if game == "hybrid" else round_.players_to_decide()
                )
                legal = round_.legal_actions("lab") if waiting else []
                hand = round_.current_hand("lab")
                up = round_.up_card if game == "hybrid" else round_.dealer_first_card
            if not waiting:  # pragma: no cover - a round always waits for the player
                raise RuntimeError(f"no decision awaited at {round_.next_step()}")
            verb = (
                "no-insurance"
                if "no-insurance" in legal or hand is None
                else game_command(legal, hand.hand, up, strategy)
            )
            round_.apply(f"{actor} {verb}")
        round_.house_net()  # every wager settled exactly once
        settlements = round_.settlements
        main = sum(s.net for s in settlements if s.kind is WagerKind.BLACKJACK)
        row: dict[str, Any] = {"main": main / wager}
        if game == "multi-action":
            for spot in (1, 2, 3):
                row[f"side{spot}"] = (
                    sum(
                        s.net
                        for s in settlements
                        if s.kind is WagerKind.BLACKJACK and s.spot == spot
                    )
                    / wager
                )
        else:
            kinds = SIDE_KINDS[game]
            for q in range(3):
                kind = kinds[q] if q < len(kinds) else None
                row[f"side{q + 1}"] = (
                    sum(s.net for s in settlements if s.kind is kind) / wager if kind else 0.0
                )
        row["cards"] = shoe.dealt - start
        rounds.append(row)
    return rounds
