"""The wagers a game's rules object offers, the main wager first: what the lab's registry
(:mod:`tablejack.lab.games`) and the simulations (:mod:`tablejack.lab.simulate_games`) both ask,
here so that neither imports the other.

>>> from tablejack.games.hybrid_shared_rules import HybridSharedRules
>>> offered_wagers("hybrid-shared", HybridSharedRules())
('blackjack', 'insurance', 'royal_match', 'bet_the_set', 'kings_bounty')
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "classic_offered",
    "hybrid_offered",
    "multi_offered",
    "offered_wagers",
    "shared_offered",
]


def hybrid_offered(rules: Any) -> tuple[str, ...]:
    return (
        ("blackjack",)
        + (("insurance",) if rules.insurance else ())
        + (("buzzer_beater",) if rules.buzzer_beater else ())
    )


def shared_offered(rules: Any) -> tuple[str, ...]:
    sides = tuple(w for w in ("royal_match", "bet_the_set", "kings_bounty") if getattr(rules, w))
    return ("blackjack",) + (("insurance",) if rules.insurance else ()) + sides


def multi_offered(rules: Any) -> tuple[str, ...]:
    return ("blackjack",) + (("insurance",) if rules.insurance else ())


def classic_offered(rules: Any) -> tuple[str, ...]:
    return (
        ("blackjack",)
        + (("insurance",) if rules.insurance else ())
        + (("ez_bust",) if rules.ez_bust else ())
    )


def offered_wagers(game: str, rules: Any) -> tuple[str, ...]:
    """The wagers ``rules`` of the lab's game ``game`` offers, the main wager first."""
    return {
        "classic": classic_offered,
        "hybrid": hybrid_offered,
        "hybrid-shared": shared_offered,
        "multi-action": multi_offered,
    }[game](rules)
