"""Total-dependent basic strategy for the automated players (bots) of every game.

The chart is the standard multi-deck chart for a dealer who stands on soft 17, double on any two
cards, double after split and late surrender (the defaults of ``rules/``). The math lab
generates exact strategy from the rules; this chart is what the bots of ``tablejack deal`` and
the benchmarks play, and what a player at a terminal would expect a hint to say.

>>> from tablejack.core import Hand
>>> basic_strategy(Hand.of("10S 6H"), 10, can_double=True, can_split=False, can_surrender=True)
'surrender'
>>> basic_strategy(Hand.of("AS 7H"), 9, can_double=True, can_split=False, can_surrender=False)
'hit'
>>> basic_strategy(Hand.of("8S 8H"), 10, can_double=True, can_split=True, can_surrender=True)
'split'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from tablejack.core.hands import Hand

__all__ = ["HARD", "PAIRS", "SOFT", "Decision", "basic_strategy", "legal_basic_strategy"]

Decision = Literal["hit", "stand", "double", "split", "surrender"]

# Columns: dealer up card 2, 3, 4, 5, 6, 7, 8, 9, 10, A.
# H hit, S stand, D double (else hit), d double (else stand), P split, R surrender (else hit).
HARD = {
    8: "HHHHHHHHHH",
    9: "HDDDDHHHHH",
    10: "DDDDDDDDHH",
    11: "DDDDDDDDDH",
    12: "HHSSSHHHHH",
    13: "SSSSSHHHHH",
    14: "SSSSSHHHHH",
    15: "SSSSSHHHRH",
    16: "SSSSSHHRRR",
}
"""The hard totals' row per total (8–16; below 8 hit, above 16 stand)."""
SOFT = {
    13: "HHHDDHHHHH",
    14: "HHHDDHHHHH",
    15: "HHDDDHHHHH",
    16: "HHDDDHHHHH",
    17: "HDDDDHHHHH",
    18: "SddddSSHHH",
    19: "SSSSSSSSSS",
    20: "SSSSSSSSSS",
}
"""The soft totals' row per total (13–20)."""
# Pairs by point value of one card (1 = aces); P split, else play the total.
PAIRS = {
    1: "PPPPPPPPPP",
    2: "PPPPPPHHHH",
    3: "PPPPPPHHHH",
    4: "HHHPPHHHHH",
    5: "----------",
    6: "PPPPPHHHHH",
    7: "PPPPPPHHHH",
    8: "PPPPPPPPPP",
    9: "PPPPPSPPSS",
    10: "----------",
}
"""The pairs' row per point value of one card (1 = aces)."""


def basic_strategy(
    hand: Hand,
    up_points: int,
    *,
    can_double: bool,
    can_split: bool,
    can_surrender: bool,
) -> Decision:
    """The basic-strategy decision for ``hand`` against a dealer up card worth ``up_points``
    (2–10, or 11 for an ace), given which options the rules allow now."""
    column = 9 if up_points == 11 else up_points - 2
    cards = hand.cards
    if can_split and len(cards) == 2 and cards[0].points == cards[1].points:
        pair = 1 if cards[0].is_ace else cards[0].points
        if PAIRS[pair][column] == "P":
            return "split"
    total = hand.total
    if total >= 21:
        return "stand"
    if hand.is_soft:
        code = SOFT.get(total, "S" * 10)[column] if total >= 13 else "H"
    elif total >= 17:
        code = "S"
    else:
        code = HARD.get(total, "H" * 10)[column] if total >= 8 else "H"
    if code == "R":
        return "surrender" if can_surrender else "hit"
    if code == "D":
        return "double" if can_double else "hit"
    if code == "d":
        return "double" if can_double else "stand"
    return "hit" if code == "H" else "stand"


def legal_basic_strategy(
    hand: Hand,
    up_points: int,
    allowed: Callable[[Decision], bool],
    *,
    surrender: bool = True,
) -> Decision:
    """The basic-strategy decision that the round allows now.

    ``allowed(decision)`` asks the round (its ``can_…`` methods) and is called only for the option
    the chart wants, so the bots stay cheap; an option the round refuses is taken off and the
    chart read again. ``surrender`` is false where the game has no surrender.

    >>> from tablejack.core import Hand
    >>> legal_basic_strategy(Hand.of("5S 6H"), 6, lambda decision: decision != "double")
    'hit'
    """
    cards = hand.cards
    two = len(cards) == 2
    can_double = two
    can_split = two and cards[0].points == cards[1].points
    can_surrender = surrender and two
    while True:
        decision = basic_strategy(
            hand,
            up_points,
            can_double=can_double,
            can_split=can_split,
            can_surrender=can_surrender,
        )
        if decision == "split" and not allowed("split"):
            can_split = False
        elif decision == "double" and not allowed("double"):
            can_double = False
        elif decision == "surrender" and not allowed("surrender"):
            can_surrender = False
        elif decision == "hit" and not allowed("hit"):
            return "stand"
        else:
            return decision
