"""The lab's game registry: how each game's rules become an analysis and a simulation.

A game plugs into the lab with one :class:`LabGame` entry in :data:`LAB_GAMES`: which wagers it
has, how its rules object becomes :class:`~tablejack.lab.model.AnalysisRules` (and how the CLI's
rule flags change it), the exact figures of each wager, and its simulation kernel. The
``classic`` game (Chapter 633a with EZ Bust, 633b.16) is the first entry.

>>> sorted(LAB_GAMES)
['classic']
>>> lab_game("classic").wagers
('blackjack', 'insurance', 'ez_bust')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablejack.core.errors import RulesError
from tablejack.games import game as engine_game
from tablejack.games import load_rules
from tablejack.lab.model import AnalysisRules

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
    exact: Callable[[AnalysisRules, str], dict[str, Any]]
    """The exact figures of one wager: at least ``house_edge`` (positive favours the house)."""
    simulate: Callable[..., Any]
    """The simulation: ``simulate(rules, hands=, seed=, workers=, scheduler=, progress=)``."""

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


def _classic_exact(rules: AnalysisRules, wager: str) -> dict[str, Any]:
    from tablejack.lab import exact

    if wager == "blackjack":
        analysis = exact.analyse(rules)
        return {
            "house_edge": analysis.house_edge,
            "by_up_card": {
                label: {
                    "probability": float(analysis.up_probability[u]),
                    "player_return": float(analysis.up_return[u]),
                }
                for u, label in enumerate(("A", "2", "3", "4", "5", "6", "7", "8", "9", "T"))
            },
        }
    if wager == "insurance":
        return exact.insurance(rules)
    return exact.ez_bust(rules)


def _classic_simulate(rules: AnalysisRules, **options: Any) -> Any:
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
        },
        exact=_classic_exact,
        simulate=_classic_simulate,
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
    rules = (
        load_rules(rules_file, game_id=game_id)
        if rules_file is not None
        else engine_game(game_id).rules_class()
    )
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
