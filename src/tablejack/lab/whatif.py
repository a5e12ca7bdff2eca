"""What-if rules: the lab's figures for rule sets a game's regulation does not allow.

A game mathematician compares rule sets the jurisdiction forbids (H17 on a Chapter 633a table,
6 to 5 on a hybrid table, two decks on a 633c.5 table). The game engine still refuses them:
its rules classes raise :class:`~tablejack.core.errors.RulesError` from their own checks. The lab
asks those same checks, one requested change at a time, and records each refusal as a
:class:`Departure` (the rules field, the value, the clause and the engine's own sentence)
instead of raising. The analysis is then built by
:meth:`~tablejack.lab.model.AnalysisRules.from_rules`, the mapping every permitted rule set
goes through, from the permitted rules with the departed values laid over them. Every figure
computed from such rules carries its departures: ``what_if`` in the JSON, a
``what-if: not permitted under PA 633a.7 (dealer hits soft 17)`` line in the text, a banner on
the par sheet. A permitted rule set has none.

What stays an error: a value the Rules Submission format refuses (an unknown field, a wrong
type: PA 601a.2), a departure in a field the analysis does not read (the lab would silently
ignore it), and a value the lab cannot compute (nine decks).

>>> lab = lab_rules("classic", h17=True)
>>> [d.label for d in lab.what_if]
['what-if: not permitted under PA 633a.7 (dealer hits soft 17)']
>>> lab.analysis.h17, lab.rules.dealer_hits_soft_17
(True, False)
>>> lab_rules("classic", das=False).what_if
()
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, get_type_hints

from tablejack.core.errors import RulesError
from tablejack.core.money import format_odds, parse_money, parse_odds
from tablejack.core.rules import read_toml
from tablejack.games import game as engine_game
from tablejack.lab.games import lab_game, rules_for
from tablejack.lab.model import AnalysisRules

__all__ = [
    "FORMAT_CLAUSE",
    "Departure",
    "LabRules",
    "add_to_parsheet",
    "banner_html",
    "describe",
    "lab_rules",
    "rule_variations",
    "variations_html",
]

FORMAT_CLAUSE = "PA 601a.2"
"""The Rules Submission clause the engine cites for a value it cannot read at all (an unknown
field, a wrong type, another game's file): never a what-if."""

FLAG_VALUES: dict[str, Callable[[Any], Any]] = {
    "blackjack_pays": parse_odds,
    "hsa": lambda hit: not hit,
}
"""CLI rule flags whose value is not the rules field's value as given (``--blackjack-pays 6:5``
is odds, ``--hsa`` sets ``one_card_to_split_aces`` to false)."""


# -- the departures ---------------------------------------------------------------------------


def _yes_no(yes: str, no: str) -> Callable[[Any], str]:
    return lambda value: yes if value else no


_DESCRIPTIONS: dict[str, Callable[[Any], str]] = {
    "decks": lambda n: f"{n} deck" + ("s" if n != 1 else ""),
    "dealer_hits_soft_17": _yes_no("dealer hits soft 17", "dealer stands on soft 17"),
    "blackjack_pays": lambda odds: f"Blackjack pays {format_odds(Fraction(odds))}",
    "double_after_split": _yes_no("double after split", "no double after split"),
    "max_split_hands": lambda n: f"split to {n} hands",
    "resplit_aces": _yes_no("resplit aces", "no resplitting of aces"),
    "one_card_to_split_aces": _yes_no("one card to each split ace", "split aces may hit"),
    "late_surrender": _yes_no("late surrender", "no surrender"),
    "surrender": _yes_no("late surrender", "no surrender"),
    "hole_card_peek": _yes_no(
        "the dealer peeks for Blackjack", "no peek: a dealer Blackjack is found at the end"
    ),
    "double_down_totals": lambda totals: f"double on {totals}",
    "double_down": _yes_no("double on 10 or 11", "no doubling"),
    "split_pairs": _yes_no("pairs may split", "no splitting"),
    "insurance": _yes_no("insurance offered", "no insurance"),
    "split_against_dealer_blackjack": lambda how: f"a dealer Blackjack takes the {how} of a split",
    "double_against_dealer_blackjack": lambda how: (
        f"a dealer Blackjack takes the {how} of a double"
    ),
}


def describe(field_name: str, value: Any) -> str:
    """A rules field's value in words.

    >>> describe("dealer_hits_soft_17", True), describe("blackjack_pays", Fraction(6, 5))
    ('dealer hits soft 17', 'Blackjack pays 6 to 5')
    >>> describe("countdown_seconds", 5)
    'countdown_seconds = 5'
    """
    words = _DESCRIPTIONS.get(field_name)
    return words(value) if words is not None else f"{field_name} = {_json_value(value)}"


def _json_value(value: Any) -> Any:
    if isinstance(value, Fraction):
        return format_odds(value)
    return value


@dataclass(frozen=True, slots=True)
class Departure:
    """One requested rules value the game's rules refuse: the field, the value, and the clause
    and sentence of the engine's own refusal."""

    field: str
    value: Any
    rule: str
    sentence: str

    @property
    def description(self) -> str:
        """The value in words: ``'dealer hits soft 17'``."""
        return describe(self.field, self.value)

    @property
    def label(self) -> str:
        """``'what-if: not permitted under PA 633a.7 (dealer hits soft 17)'``."""
        return f"what-if: not permitted under {self.rule} ({self.description})"

    def to_json(self) -> dict[str, Any]:
        """The departure as JSON-ready data."""
        return {
            "field": self.field,
            "value": _json_value(self.value),
            "rule": self.rule,
            "sentence": self.sentence,
            "label": self.label,
        }


class _Overlay:
    """The permitted rules with the departed values laid over them, as
    :meth:`AnalysisRules.from_rules` reads them; remembers which names were read so that a
    departure the analysis never looks at is refused rather than ignored."""

    def __init__(self, rules: Any, values: Mapping[str, Any]) -> None:
        self.base_rules = rules
        self.values = dict(values)
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        # only names that are not the overlay's own attributes arrive here
        self.read.add(name)
        if name in self.values:
            return self.values[name]
        derived = getattr(type(self.base_rules), name, None)
        if isinstance(derived, property) and derived.fget is not None:
            return derived.fget(self)
        return getattr(self.base_rules, name)


@dataclass(frozen=True)
class LabRules:
    """The rules a lab command analyses: the game's permitted rules, the analysis (with any
    what-if values) and the departures (empty for a permitted rule set)."""

    game: str
    rules: Any
    """The game's rules object with every permitted requested value (the engine accepts it)."""
    analysis: AnalysisRules
    what_if: tuple[Departure, ...] = ()
    requested: Mapping[str, Any] = field(default_factory=dict)
    """Every value asked for (from the rules file and the flags), permitted or not."""
    start: Any = None
    """The rules the requested values were applied to (the game's defaults or the file)."""

    @property
    def labels(self) -> list[str]:
        """One ``what-if: …`` line per departure."""
        return [d.label for d in self.what_if]

    def what_if_json(self) -> list[dict[str, Any]]:
        """The departures as JSON-ready data (an empty list for permitted rules)."""
        return [d.to_json() for d in self.what_if]

    def rules_mapping(self) -> dict[str, Any]:
        """The rules as analysed: the game's rules with the departed values in place."""
        data: dict[str, Any] = self.rules.to_mapping()
        for departure in self.what_if:
            data[departure.field] = _json_value(departure.value)
        return data

    def value(self, name: str) -> Any:
        """The value of a rules field as analysed (departed or permitted)."""
        for departure in self.what_if:
            if departure.field == name:
                return departure.value
        return getattr(self.rules, name)

    def with_changes(self, changes: Mapping[str, Any]) -> LabRules:
        """These rules with some more values asked for (each checked the same way)."""
        start = self.start if self.start is not None else self.rules
        return _apply(self.game, start, {**self.requested, **changes})


def lab_rules(game_id: str, rules_file: Path | None = None, **flags: Any) -> LabRules:
    """The rules of ``game_id`` (from ``rules_file`` or the game's defaults) with the CLI
    ``flags`` that are not None, each value the game's rules refuse kept as a what-if
    :class:`Departure`; errors that are not what-ifs raise as the engine raises them."""
    spec = lab_game(game_id)
    changes: dict[str, Any] = {}
    for flag, value in flags.items():
        if value is None:
            continue
        if flag not in spec.flag_fields:
            raise RulesError(
                f"The {game_id} game has no rule flag --{flag.replace('_', '-')}.",
                rule=FORMAT_CLAUSE,
            )
        convert = FLAG_VALUES.get(flag)
        changes[spec.flag_fields[flag]] = convert(value) if convert else value
    try:
        rules, _ = rules_for(game_id, rules_file)
        requested: dict[str, Any] = {}
    except RulesError as error:
        if rules_file is None or error.rule == FORMAT_CLAUSE:
            raise
        rules, requested = _file_values(game_id, rules_file)
    return _apply(game_id, rules, {**requested, **changes})


def _file_values(game_id: str, rules_file: Path) -> tuple[Any, dict[str, Any]]:
    """A rules file the game's rules refuse as a whole: its values one by one, each read by
    the engine's own reader (on the game's defaults) where it can be, as given otherwise."""
    cls = engine_game(game_id).rules_class
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, raw in read_toml(rules_file).items():
        if key == "game":
            continue
        try:
            values[key] = getattr(cls.from_mapping({key: raw}), key)
        except RulesError as error:
            if error.rule == FORMAT_CLAUSE:
                raise
            values[key] = _typed(hints.get(key), raw)
    return cls(), values


def _typed(hint: Any, raw: Any) -> Any:
    """A TOML value as its field's type where TOML has no such type (odds, money, a whole
    number for a float); the engine's own type check judges the result."""
    if hint is Fraction:
        return parse_odds(raw)
    if hint is int and isinstance(raw, str):
        return parse_money(raw)
    if hint is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    return raw


def _apply(game_id: str, start: Any, requested: Mapping[str, Any]) -> LabRules:
    """Apply the ``requested`` values to the permitted rules ``start`` through the engine's
    checks (``replace`` validates again), keeping every value they refuse as a departure;
    values that become permitted once another is applied are retried until none changes."""
    rules = start
    pending: list[tuple[str, Any, RulesError | None]] = [(k, v, None) for k, v in requested.items()]
    progress = True
    while progress and pending:
        progress = False
        refused: list[tuple[str, Any, RulesError | None]] = []
        for name, value, _ in pending:
            try:
                rules = rules.replace(**{name: value})
            except RulesError as error:
                if error.rule == FORMAT_CLAUSE:
                    raise
                refused.append((name, value, error))
            else:
                progress = True
        pending = refused
    departures = tuple(
        Departure(name, value, error.rule, error.message)
        for name, value, error in pending
        if error is not None
    )
    overlay = _Overlay(rules, {d.field: d.value for d in departures})
    try:
        analysis = AnalysisRules.from_rules(overlay)
    except (ValueError, LookupError, TypeError) as error:
        if not departures:
            raise
        reason = f"it has no analysis for {error}" if isinstance(error, LookupError) else error
        raise RulesError(
            " ".join(d.sentence for d in departures)
            + f" The lab cannot analyse this as a what-if either: {reason}",
            rule=departures[0].rule,
        ) from None
    for departure in departures:
        if departure.field not in overlay.read:
            raise RulesError(
                f"{departure.sentence} The lab's analysis does not read {departure.field}, so "
                "it cannot analyse that value as a what-if.",
                rule=departure.rule,
            )
    return LabRules(game_id, rules, analysis, departures, dict(requested), start)


# -- the rule-variation table -----------------------------------------------------------------


def _variations(lab: LabRules) -> list[tuple[str, dict[str, Any]]]:
    """Each single change of the rules worth a row: (its name, the rules values it sets)."""
    names = {f.name for f in dataclasses.fields(type(lab.rules))}
    out: list[tuple[str, dict[str, Any]]] = []

    def toggle(name: str, on: str, off: str) -> None:
        if name in names:
            now = bool(lab.value(name))
            out.append((off if now else on, {name: not now}))

    decks = lab.value("decks")
    for n in (1, 2, 4, 6, 8):
        if n != decks:
            out.append((describe("decks", n), {"decks": n}))
    toggle("dealer_hits_soft_17", "H17 (dealer hits soft 17)", "S17 (dealer stands on soft 17)")
    toggle("double_after_split", "DAS (double after split)", "no double after split")
    toggle("late_surrender", "late surrender", "no surrender")
    toggle("surrender", "late surrender", "no surrender")
    toggle("resplit_aces", "RSA (resplit aces)", "no resplitting of aces")
    toggle("one_card_to_split_aces", "one card to each split ace", "HSA (split aces may hit)")
    if "max_split_hands" in names:
        for n in (2, 3, 4):
            if n != lab.value("max_split_hands"):
                out.append((describe("max_split_hands", n), {"max_split_hands": n}))
    if "double_down_totals" in names:
        doubles = {"any": "any two cards", "9-11": "9-11 only", "10-11": "10-11 only"}
        for totals, words in doubles.items():
            if totals != lab.value("double_down_totals"):
                out.append((f"double on {words}", {"double_down_totals": totals}))
    toggle("double_down", "double on 10 or 11", "no doubling")
    toggle("split_pairs", "pairs may split", "no splitting")
    pays = Fraction(lab.value("blackjack_pays"))
    other = Fraction(6, 5) if pays == Fraction(3, 2) else Fraction(3, 2)
    out.append((describe("blackjack_pays", other), {"blackjack_pays": other}))
    toggle("hole_card_peek", "the dealer peeks for Blackjack", "no peek (original wager only)")
    enhc = ("split_against_dealer_blackjack", "double_against_dealer_blackjack")
    if all(name in names for name in enhc):
        full = all(lab.value(name) == "full-amount" for name in enhc)
        how = "original-wager" if full else "full-amount"
        text = "original wager only" if full else "every amount at risk (ENHC)"
        out.append((f"a dealer Blackjack takes {text}", dict.fromkeys(enhc, how)))
    return out


def _house_edge(rules: AnalysisRules) -> float:
    from tablejack.lab.exact import analyse

    return analyse(rules).house_edge


def _edges(analyses: list[AnalysisRules], workers: int | None) -> list[float]:
    """The exact house edge of each rule set, on ``workers`` processes (default all cores)."""
    count = workers if workers is not None else (os.cpu_count() or 1)
    count = max(1, min(count, len(analyses)))
    if count == 1:
        return [_house_edge(rules) for rules in analyses]
    with ProcessPoolExecutor(max_workers=count) as pool:
        return list(pool.map(_house_edge, analyses))


def rule_variations(lab: LabRules, *, workers: int | None = None) -> dict[str, Any]:
    """The exact house edge of the main wager under the rules of ``lab`` and under each single
    change of them (decks, H17, DAS, surrender, RSA, split hands, 6 to 5, peek, …), each change
    checked against the game's rules like any other request (``what_if`` per row)."""
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    analyses: list[AnalysisRules] = []
    for name, changes in _variations(lab):
        row: dict[str, Any] = {
            "change": name,
            "values": {k: _json_value(v) for k, v in changes.items()},
        }
        try:
            variant = lab.with_changes(changes)
        except ValueError as error:
            rows.append({**row, "house_edge": None, "effect": None, "not_analysed": str(error)})
            continue
        row["abbreviation"] = variant.analysis.abbreviation()
        row["what_if"] = variant.what_if_json()
        rows.append(row)
        analyses.append(variant.analysis)
    base = _house_edge(lab.analysis)  # the par sheet's own analysis, cached in this process
    edges = iter(_edges(analyses, workers))
    for row in rows:
        if "not_analysed" not in row:
            row["house_edge"] = next(edges)
            row["effect"] = row["house_edge"] - base
    return {
        "base": {"house_edge": base, "abbreviation": lab.analysis.abbreviation()},
        "rows": rows,
        "method": "exact: each row is a fresh analysis (its own generated basic strategy) of "
        "the base rules with one change; effect = row house edge - base house edge (positive "
        "costs the player); what_if: every departure of the row's rules",
        "seconds": time.perf_counter() - started,
    }


# -- the par sheet ----------------------------------------------------------------------------


def add_to_parsheet(
    data: dict[str, Any],
    spec: Any,
    rules: Any,
    analysis: AnalysisRules,
    lab: LabRules | None,
    *,
    workers: int | None = None,
    variations: bool = True,
) -> None:
    """Add to a par sheet's ``data`` what what-if rules change: ``what_if`` (the departures),
    ``rules`` as analysed, the main wager's Blackjack odds as analysed, and the
    ``rule_variations`` table."""
    if lab is None:
        lab = LabRules(spec.id, rules, analysis)
    data["what_if"] = lab.what_if_json()
    data["rules"] = lab.rules_mapping()
    odds = format_odds(Fraction(lab.value("blackjack_pays")))
    for wager in data["wagers"]:
        if wager["wager"] == "blackjack":
            wager["title"] = wager["title"].replace("Blackjack 3 to 2", f"Blackjack {odds}")
    if variations:
        data["rule_variations"] = rule_variations(lab, workers=workers)


def banner_html(data: Mapping[str, Any]) -> list[str]:
    """The par sheet's what-if banner (nothing for permitted rules)."""
    import html

    if not data.get("what_if"):
        return []
    items = "".join(
        f"<li><b>{html.escape(d['label'])}</b>: {html.escape(d['sentence'])}</li>"
        for d in data["what_if"]
    )
    return [
        "<div class='whatif'>WHAT-IF RULES: these figures are for rules the regulation does "
        f"not permit; the game engine refuses them.<ul>{items}</ul></div>"
    ]


def variations_html(data: Mapping[str, Any]) -> list[str]:
    """The par sheet's rule-variation table."""
    import html

    table = data.get("rule_variations")
    if not table:
        return []
    e = html.escape
    base = table["base"]
    parts = [
        "<h2>Rule variations (main wager, exact)</h2>",
        f"<p>Base rules {e(base['abbreviation'])}: house edge {_pct(base['house_edge'])}. "
        "Each row changes one rule; effect is the change in the house edge (positive costs "
        "the player); the last column names every departure of the row's rules from the "
        f"regulation. Computed in {table['seconds']:.1f} s.</p>",
        "<table class='variations'><tr><th>change</th><th>rules</th><th>house edge</th>"
        "<th>effect</th><th>permitted</th></tr>",
    ]
    for row in table["rows"]:
        if row.get("not_analysed"):
            parts.append(
                f"<tr><td>{e(row['change'])}</td><td colspan='4'>not analysed: "
                f"{e(row['not_analysed'])}</td></tr>"
            )
            continue
        labels = "; ".join(d["label"] for d in row["what_if"]) or "yes"
        parts.append(
            f"<tr><td>{e(row['change'])}</td><td>{e(row['abbreviation'])}</td>"
            f"<td>{_pct(row['house_edge'])}</td><td>{row['effect'] * 100:+.4f}%</td>"
            f"<td>{e(labels)}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _pct(value: float) -> str:
    return f"{value * 100:.4f}%" if math.isfinite(value) else "n/a"
