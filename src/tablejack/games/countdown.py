"""The countdown clock's default action on a hybrid table: a table of options per hand total.

PA 633c.5(p)(2) and (z): a player who takes no action by the end of the countdown clock is deemed
to stand, "provided that if the certificate holder selects different options, such as a player's
hand of an 11 will automatically hit if the player takes no action at the conclusion of the
countdown clock, those options shall be explained to the player in the game rules icon as
provided in subsection (c)(2)". The options are rules data, shared by version A
(:class:`~tablejack.games.hybrid_rules.HybridRules`) and version B
(:class:`~tablejack.games.hybrid_shared_rules.HybridSharedRules`):

* ``countdown_default = "stand"`` (the regulation's default): every hand stands;
* ``countdown_default = "hit-hard-11-or-less"``: a hard total of 11 or less hits, any other
  hand stands (the example (z) gives);
* ``countdown_default = "table"`` with ``countdown_table``: per hard total (4–20) and soft total
  (12–20), ``"hit"`` or ``"stand"``; a total the table does not name stands. In TOML::

      countdown_default = "table"
      countdown_table = { hard-10 = "hit", hard-11 = "hit", soft-17 = "hit" }

A 21 never draws ((r)(1), (z)), so the table has no ``hard-21`` or ``soft-21``. The action is
taken once per decision window: a hand that hits by default and is still undecided in the next
window is judged again on its new total.

>>> actions = countdown_actions("table", normal_table({"hard-11": "hit", "soft-17": "hit"}, "z"))
>>> actions["hard-11"], actions["hard-12"], actions["soft-17"]
('hit', 'stand', 'hit')
>>> countdown_text("hit-hard-11-or-less", ())
'a hard total of 11 or less is hit automatically; any other hand stands'
>>> normal_table({"hard-21": "hit"}, "PA 633c.5(z), (c)(2)")
Traceback (most recent call last):
...
tablejack.core.errors.RulesError: countdown_table names hard-21: a hand of 21 may not draw; the table covers hard 4-20 and soft 12-20 (PA 633c.5(z), (c)(2)).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tablejack.core.errors import RulesError
from tablejack.core.hands import Hand

__all__ = [
    "COUNTDOWN_ACTIONS",
    "COUNTDOWN_CHOICES",
    "COUNTDOWN_PRESETS",
    "COUNTDOWN_TOTALS",
    "CountdownTable",
    "countdown_action",
    "countdown_actions",
    "countdown_rows",
    "countdown_text",
    "normal_table",
]

COUNTDOWN_PRESETS = ("stand", "hit-hard-11-or-less")
"""The named defaults (``hybrid_rules.COUNTDOWN_DEFAULTS``)."""

COUNTDOWN_CHOICES = (*COUNTDOWN_PRESETS, "table")
"""The values of ``countdown_default``: a preset, or ``"table"`` for ``countdown_table``."""

COUNTDOWN_ACTIONS = ("stand", "hit")
"""What the clock may do to a hand."""

HARD_TOTALS = range(4, 21)
SOFT_TOTALS = range(12, 21)
COUNTDOWN_TOTALS: tuple[str, ...] = (
    *(f"hard-{total}" for total in HARD_TOTALS),
    *(f"soft-{total}" for total in SOFT_TOTALS),
)
"""Every total the table may name: hard 4–20, soft 12–20."""

CountdownTable = tuple[tuple[str, str], ...]
"""A countdown table as data: (total, action) pairs in :data:`COUNTDOWN_TOTALS` order."""

_LABEL = re.compile(r"^(hard|soft)[- ]([0-9]+)$")


def normal_table(raw: object, clause: str) -> CountdownTable:
    """Check a ``countdown_table`` (a mapping ``total = action``, or (total, action) pairs as
    frozen from TOML) and return it in canonical form; :class:`RulesError` citing ``clause``."""
    if isinstance(raw, Mapping):
        items: list[Any] = list(raw.items())
    elif isinstance(raw, Sequence) and not isinstance(raw, str):
        items = list(raw)
    else:
        raise RulesError(
            f'countdown_table must be a table of total = action (hard-11 = "hit"), not {raw!r} '
            f"({clause}).",
            rule=clause,
        )
    table: dict[str, str] = {}
    for item in items:
        if not (isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2):
            raise RulesError(
                f"countdown_table entry {item!r} is not total = action ({clause}).", rule=clause
            )
        label, action = item
        match = _LABEL.match(str(label).strip().lower())
        key = f"{match.group(1)}-{int(match.group(2))}" if match else str(label)
        if key in ("hard-21", "soft-21"):
            raise RulesError(
                f"countdown_table names {key}: a hand of 21 may not draw; the table covers hard "
                f"4-20 and soft 12-20 ({clause}).",
                rule=clause,
            )
        if key not in COUNTDOWN_TOTALS:
            raise RulesError(
                f"countdown_table names {label!r}, which is no hand total: write hard-4 to "
                f"hard-20 or soft-12 to soft-20 ({clause}).",
                rule=clause,
            )
        if action not in COUNTDOWN_ACTIONS:
            raise RulesError(
                f"countdown_table {key} = {action!r}: the countdown may only hit or stand "
                f"({clause}).",
                rule=clause,
            )
        if key in table:
            raise RulesError(f"countdown_table names {key} twice ({clause}).", rule=clause)
        table[key] = action
    return tuple((key, table[key]) for key in COUNTDOWN_TOTALS if key in table)


def check_countdown(default: str, table: CountdownTable, clause: str) -> None:
    """Refuse a table given with a preset (the table applies only with ``"table"``)."""
    if default != "table" and table:
        raise RulesError(
            f'countdown_table applies only with countdown_default = "table", not {default!r} '
            f"({clause}).",
            rule=clause,
        )


def countdown_actions(default: str, table: CountdownTable) -> dict[str, str]:
    """The action for every total (:data:`COUNTDOWN_TOTALS`) under the rules' choice."""
    if default == "hit-hard-11-or-less":
        return {
            label: "hit" if label.startswith("hard-") and int(label[5:]) <= 11 else "stand"
            for label in COUNTDOWN_TOTALS
        }
    named = dict(table) if default == "table" else {}
    return {label: named.get(label, "stand") for label in COUNTDOWN_TOTALS}


def countdown_action(default: str, table: CountdownTable, hand: Hand) -> str:
    """What the clock does to ``hand`` (a hand awaiting its player's decision): hit or stand."""
    if default == "stand":
        return "stand"
    total = hand.total
    if total >= 21:
        return "stand"
    if default == "hit-hard-11-or-less":
        return "hit" if not hand.is_soft and total <= 11 else "stand"
    label = f"{'soft' if hand.is_soft else 'hard'}-{total}"
    for key, action in table:
        if key == label:
            return action
    return "stand"


def countdown_rows(default: str, table: CountdownTable) -> list[dict[str, str]]:
    """The table for the game rules icon ((c)(2)): one row per total, hard then soft, with the
    hand in words (``"hard 11"``) and the action."""
    return [
        {"total": label, "hand": label.replace("-", " "), "action": action}
        for label, action in countdown_actions(default, table).items()
    ]


def _ranges(totals: list[int]) -> str:
    parts: list[str] = []
    start = previous = totals[0]
    for total in [*totals[1:], None]:
        if total is not None and total == previous + 1:
            previous = total
            continue
        parts.append(str(start) if start == previous else f"{start} to {previous}")
        if total is not None:
            start = previous = total
    return ", ".join(parts)


def countdown_text(default: str, table: CountdownTable) -> str:
    """The options in words, for the game rules icon ((c)(2)).

    >>> countdown_text("stand", ())
    'your hand stands'
    >>> countdown_text("table", normal_table({"hard-10": "hit", "hard-11": "hit",
    ...                                        "soft-17": "hit"}, "z"))
    'a hard total of 10 to 11 or a soft total of 17 is hit automatically; any other hand stands'
    """
    if default == "hit-hard-11-or-less":
        return "a hard total of 11 or less is hit automatically; any other hand stands"
    actions = countdown_actions(default, table)
    hits = {
        kind: [
            int(label[5:])
            for label, action in actions.items()
            if label[:4] == kind and action == "hit"
        ]
        for kind in ("hard", "soft")
    }
    if not hits["hard"] and not hits["soft"]:
        return "your hand stands"
    parts = [f"a {kind} total of {_ranges(totals)}" for kind, totals in hits.items() if totals]
    return " or ".join(parts) + " is hit automatically; any other hand stands"
