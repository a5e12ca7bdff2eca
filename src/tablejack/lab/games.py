"""The lab's game registry: how each game's rules become an analysis and a simulation.

A game plugs into the lab with one :class:`LabGame` entry in :data:`LAB_GAMES`: which wagers it
has, how its rules object becomes :class:`~tablejack.lab.model.AnalysisRules` (and how the CLI's
rule flags change it), the exact figures of each wager, and its simulation kernel. The
``classic`` game (Chapter 633a with EZ Bust, 633b.16) is the first entry.

>>> sorted(LAB_GAMES)
['classic', 'hybrid', 'hybrid-shared', 'multi-action']
>>> lab_game("classic").wagers
('blackjack', 'insurance', 'ez_bust')
>>> lab_game("hybrid-shared").wagers
('blackjack', 'insurance', 'royal_match', 'bet_the_set', 'kings_bounty')
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablejack.core.errors import RulesError
from tablejack.games import game as engine_game
from tablejack.games import load_rules
from tablejack.games.hybrid_rules import BuzzerBeaterEdgeWarning
from tablejack.lab.model import AnalysisRules
from tablejack.lab.offers import classic_offered, hybrid_offered, multi_offered, shared_offered

__all__ = ["LAB_GAMES", "LabGame", "UnknownError", "lab_game", "rules_for"]


class UnknownError(ValueError):
    """An unknown game or wager."""


@dataclass(frozen=True, slots=True)
class LabGame:
    """A game as the lab sees it."""

    id: str
    wagers: tuple[str, ...]
    """The game's wagers, the main wager first."""
    flag_fields: Mapping[str, str]
    """CLI rule flag -> the game's rules field it sets."""
    exact: Callable[[AnalysisRules, str, Any], dict[str, Any]]
    """The exact figures of one wager, ``exact(analysis, wager, game_rules)``: at least
    ``house_edge`` (positive favours the house)."""
    simulate: Callable[..., Any]
    """The simulation: ``simulate(rules, hands=, seed=, workers=, scheduler=, progress=)``."""

    offered: Callable[[Any], tuple[str, ...]] | None = None
    """The wagers a rules object offers (default: every wager)."""

    def offered_wagers(self, rules: Any) -> tuple[str, ...]:
        """The wagers ``rules`` offers, the main wager first."""
        return self.wagers if self.offered is None else self.offered(rules)

    def wager(self, name: str) -> str:
        """The wager called ``name`` (``-`` and ``_`` alike; ``main`` for the main wager)."""
        key = name.strip().lower().replace("-", "_")
        if key == "main":
            return self.wagers[0]
        if key not in self.wagers:
            raise UnknownError(
                f"Unknown wager {name!r} for the {self.id} game; its wagers are "
                f"{', '.join(self.wagers)}."
            )
        return key


def _main_exact(rules: AnalysisRules) -> dict[str, Any]:
    from tablejack.lab import exact

    analysis = exact.analyse(rules)
    return {
        "house_edge": analysis.house_edge,
        "per": "initial wager" if rules.spots == 1 else "initial wager on each betting spot",
        "by_up_card": {
            label: {
                "probability": float(analysis.up_probability[u]),
                "player_return": float(analysis.up_return[u]),
            }
            for u, label in enumerate(("A", "2", "3", "4", "5", "6", "7", "8", "9", "T"))
        },
    }


def _classic_exact(rules: AnalysisRules, wager: str, game_rules: Any = None) -> dict[str, Any]:
    from tablejack.lab import exact

    if wager == "blackjack":
        return _main_exact(rules)
    if wager == "insurance":
        return exact.insurance(rules)
    return exact.ez_bust(rules)


def _hybrid_exact(rules: AnalysisRules, wager: str, game_rules: Any = None) -> dict[str, Any]:
    from tablejack.games.hybrid_rules import HybridRules
    from tablejack.lab import exact
    from tablejack.lab.buzzer import buzzer_beater

    if wager == "blackjack":
        return _main_exact(rules)
    if wager == "insurance":
        return exact.insurance(rules)
    return buzzer_beater(rules, game_rules if game_rules is not None else HybridRules())


def _shared_exact(rules: AnalysisRules, wager: str, game_rules: Any = None) -> dict[str, Any]:
    from tablejack.games.hybrid_shared_rules import HybridSharedRules
    from tablejack.lab import exact
    from tablejack.lab.sidebets import side_wager

    if wager == "blackjack":
        return _main_exact(rules)
    if wager == "insurance":
        return exact.insurance(rules)
    source = game_rules if game_rules is not None else HybridSharedRules()
    return side_wager(source, wager, rules.decks)


def _multi_exact(rules: AnalysisRules, wager: str, game_rules: Any = None) -> dict[str, Any]:
    from tablejack.lab import exact

    if wager == "blackjack":
        return _main_exact(rules)
    return exact.insurance(rules)


def _game_simulate(game_id: str) -> Callable[..., Any]:
    def simulate(rules: AnalysisRules, *, game_rules: Any = None, **options: Any) -> Any:
        from tablejack.lab.simulate_games import simulate_game

        source = game_rules if game_rules is not None else engine_game(game_id).rules_class()
        return simulate_game(game_id, rules, source, **options)

    return simulate


def _classic_simulate(rules: AnalysisRules, *, game_rules: Any = None, **options: Any) -> Any:
    from tablejack.lab.simulate import simulate

    return simulate(rules, **options)


LAB_GAMES: dict[str, LabGame] = {
    "classic": LabGame(
        id="classic",
        wagers=("blackjack", "insurance", "ez_bust"),
        flag_fields={
            "decks": "decks",
            "h17": "dealer_hits_soft_17",
            "das": "double_after_split",
            "split_hands": "max_split_hands",
            "rsa": "resplit_aces",
            "surrender": "late_surrender",
            "blackjack_pays": "blackjack_pays",
            "peek": "hole_card_peek",
            "double_on": "double_down_totals",
            "hsa": "one_card_to_split_aces",
        },
        exact=_classic_exact,
        simulate=_classic_simulate,
        offered=classic_offered,
    ),
    "hybrid": LabGame(
        id="hybrid",
        wagers=("blackjack", "insurance", "buzzer_beater"),
        flag_fields={
            "decks": "decks",
            "h17": "dealer_hits_soft_17",
            "das": "double_after_split",
            "split_hands": "max_split_hands",
            "rsa": "resplit_aces",
            "blackjack_pays": "blackjack_pays",
            "double_on": "double_down_totals",
            "hsa": "one_card_to_split_aces",
        },
        exact=_hybrid_exact,
        simulate=_game_simulate("hybrid"),
        offered=hybrid_offered,
    ),
    "hybrid-shared": LabGame(
        id="hybrid-shared",
        wagers=("blackjack", "insurance", "royal_match", "bet_the_set", "kings_bounty"),
        flag_fields={
            "decks": "decks",
            "h17": "dealer_hits_soft_17",
            "das": "double_after_split",
            "surrender": "surrender",
            "blackjack_pays": "blackjack_pays",
            "double_on": "double_down_totals",
        },
        exact=_shared_exact,
        simulate=_game_simulate("hybrid-shared"),
        offered=shared_offered,
    ),
    "multi-action": LabGame(
        id="multi-action",
        wagers=("blackjack", "insurance"),
        flag_fields={
            "decks": "decks",
            "h17": "dealer_hits_soft_17",
            "das": "double_after_split",
            "split_hands": "max_split_hands",
            "rsa": "resplit_aces",
            "blackjack_pays": "blackjack_pays",
            "hsa": "one_card_to_split_aces",
        },
        exact=_multi_exact,
        simulate=_game_simulate("multi-action"),
        offered=multi_offered,
    ),
}


def lab_game(game_id: str) -> LabGame:
    """The lab's entry for ``game_id``; an unknown or not yet analysed game raises."""
    try:
        return LAB_GAMES[game_id]
    except KeyError:
        pass
    try:
        engine_game(game_id)
    except ValueError:
        raise UnknownError(
            f"Unknown game {game_id!r}; the lab analyses {', '.join(sorted(LAB_GAMES))}."
        ) from None
    raise UnknownError(
        f"The {game_id} game has no math lab yet; the lab analyses {', '.join(sorted(LAB_GAMES))}."
    )


def rules_for(
    game_id: str, rules_file: Path | None = None, **flags: Any
) -> tuple[Any, AnalysisRules]:
    """The game's rules (from ``rules_file`` or the game's defaults) with the CLI ``flags``
    that are not None applied, validated by the game's rules class, and their analysis."""
    spec = lab_game(game_id)
    if rules_file is not None:
        with warnings.catch_warnings():
            # the loader's coarse Buzzer Beater screen: the lab computes the edge itself
            # and the par sheet flags a player edge
            warnings.simplefilter("ignore", BuzzerBeaterEdgeWarning)
            rules = load_rules(rules_file, game_id=game_id)
    else:
        rules = engine_game(game_id).rules_class()
    changes = {}
    for flag, value in flags.items():
        if value is None:
            continue
        if flag not in spec.flag_fields:
            raise RulesError(f"The {game_id} game has no rule flag --{flag}.", rule="PA 601a.2")
        changes[spec.flag_fields[flag]] = value
    if changes:
        rules = rules.replace(**changes)
    return rules, AnalysisRules.from_rules(rules)
