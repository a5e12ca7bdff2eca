"""The Buzzer Beater wager (PA 633c.5(m), (u), (v)(3)) from the joint distribution of the
player's final hand under the generated strategy and the dealer's final hand, after the peek.

One player at one position plays the generated basic strategy of the hybrid table (version A:
hole card and peek, double any two cards, split to four hands, no surrender, A-17). The joint
table is exact for the player's unsplit hands (the dealer's probabilities are computed for the
shoe without the up card and the player's final cards); after a split the wager is decided by
the first hand (A-6 "first-hand"), valued by the split approximation of :mod:`.exact`.

The wager wins when the player's hand is 19, 20, 21 or a Blackjack and the dealer's hand equals
or beats it without busting ((u)(1)); it is paid by the paytable row of (player, dealer); a win
with no row loses or pushes (A-14); everything else loses ((u)(2), A-5, A-15); a player
Blackjack against an up card 2–9 is cleared as a loss ((p)(1)).

>>> from tablejack.games.hybrid_rules import HybridRules
>>> from tablejack.lab.model import AnalysisRules
>>> rules = HybridRules()
>>> bb = buzzer_beater(AnalysisRules.from_rules(rules), rules)
>>> bb["house_edge"] < 0  # the regulation's 30-to-1 row gives the player an edge (A-13)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tablejack.lab import _exact_kernels
from tablejack.lab.exact import analyse, dealer_dag, scratch_space, up_shoe
from tablejack.lab.model import CARD_LABELS, DEALER_OUTCOMES, AnalysisRules

__all__ = ["PLAYER_ROWS", "buzzer_beater", "joint_final_hands"]

kernels: Any = _exact_kernels

PLAYER_ROWS = ("<=18", "19", "20", "21", "blackjack")
"""Rows of the joint table: the player's final (unbusted) hand."""

_LABELS = {1: "19", 2: "20", 3: "21", 4: "blackjack"}
_DEALER_LABELS = {2: "19", 3: "20", 4: "21", 5: "blackjack"}
_STRENGTH = {"19": 19, "20": 20, "21": 21, "blackjack": 22}


def joint_final_hands(rules: AnalysisRules) -> dict[str, Any]:
    """The joint distribution of the player's final hand (rows :data:`PLAYER_ROWS`) and the
    dealer's final hand (columns :data:`~tablejack.lab.model.DEALER_OUTCOMES`) over a fresh
    shoe, with the probabilities of a player bust and a surrender (they sum to one)."""
    if not rules.peek:
        raise ValueError(
            "The Buzzer Beater joint distribution is for the peek game (PA 633c.5(o))."
        )
    analysis = analyse(rules)
    counts = rules.shoe_counts()
    up_probability = counts / counts.sum()
    finite = 0 if rules.decks is None else 1
    vec = rules.kernel_vector()
    mask = rules.double_mask()
    joint = np.zeros((5, 7))
    bust = 0.0
    surrender = 0.0
    by_up = {}
    for u in range(10):
        base, n0 = up_shoe(rules, u)
        child, drawn, size = dealer_dag(u, rules.h17)
        j, b, s = kernels.final_hands(
            child, drawn, size, scratch_space(), base, n0, finite, u, vec, mask,
            *analysis.strategy.arrays(), rules.late_surrender,
        )  # fmt: skip
        by_up[CARD_LABELS[u]] = (j, b, s)
        joint += up_probability[u] * j
        bust += float(up_probability[u] * b)
        surrender += float(up_probability[u] * s)
    return {"joint": joint, "bust": bust, "surrender": surrender, "by_up": by_up}


def buzzer_beater(rules: AnalysisRules, game_rules: Any) -> dict[str, Any]:
    """The Buzzer Beater's house edge and lines for the paytable of ``game_rules`` (a
    :class:`~tablejack.games.hybrid_rules.HybridRules`), per wager placed."""
    if game_rules.buzzer_beater_hand != "first-hand":
        raise ValueError(
            "The lab analyses the Buzzer Beater with buzzer_beater_hand = 'first-hand' (A-6)."
        )
    data = joint_final_hands(rules)
    joint = data["joint"]
    no_row = 0.0 if game_rules.buzzer_beater_no_row == "push" else -1.0
    lines: dict[tuple[str, float], float] = {}
    mean = 0.0
    second = 0.0
    hits = 0.0
    for row in range(5):
        for col in range(7):
            p = float(joint[row, col])
            if p == 0.0:
                continue
            player = _LABELS.get(row)
            dealer = _DEALER_LABELS.get(col)
            if player is None or dealer is None or _STRENGTH[dealer] < _STRENGTH[player]:
                key = ("loses", -1.0)
            else:
                odds = game_rules.buzzer_beater_odds(player, dealer)
                if odds is None:
                    key = (f"player {player}, dealer {dealer}: no row (A-14)", no_row)
                else:
                    key = (f"player {player}, dealer {dealer}", float(odds))
            lines[key] = lines.get(key, 0.0) + p
    lost = data["bust"] + data["surrender"]
    lines[("loses", -1.0)] = lines.get(("loses", -1.0), 0.0) + lost
    for (_, pays), p in lines.items():
        mean += p * pays
        second += p * pays * pays
        if pays > 0:
            hits += p
    ordered = sorted(lines.items(), key=lambda item: (-item[0][1], item[0][0]))
    return {
        "wager": "buzzer_beater",
        "house_edge": -mean,
        "hit_frequency": hits,
        "stdev": math.sqrt(max(second - mean * mean, 0.0)),
        "lines": [
            {"line": line, "pays": pays, "probability": p, "return": p * pays, "method": "exact"}
            for (line, pays), p in ordered
        ],
        "joint": {
            "rows": list(PLAYER_ROWS),
            "columns": list(DEALER_OUTCOMES),
            "probability": joint.tolist(),
            "player_bust": data["bust"],
            "player_surrender": data["surrender"],
        },
        "paytable": [row.describe() for row in game_rules.buzzer_beater_paytable],
        "method": "exact joint distribution (first hand after a split: split approximation)",
    }
