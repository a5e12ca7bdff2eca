"""Rules configuration: the certificate holder's Rules Submission (PA § 601a.2) as data.

One frozen object per table game; one documented field per choice the certificate holder makes,
each citing its clause. Every value is validated when the object is made: an invalid value raises
:class:`~tablejack.core.errors.RulesError` naming the clause. Rules load from TOML files (see
``rules/`` and ``docs/rules.md``) with the same field names; money is given as integer cents or
dollars as text (``"$10.00"``), odds as ``"3 to 2"``.

>>> rules = ClassicRules(decks=6)
>>> rules.blackjack_pays, rules.dealer_hits_soft_17
(Fraction(3, 2), False)
>>> ClassicRules(decks=9)
Traceback (most recent call last):
...
tablejack.core.errors.RulesError: decks = 9 is not allowed: Chapter 633a Blackjack is dealt from 1 to 8 decks (PA 633a.3(a)).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar, Self, get_type_hints

from tablejack.core.errors import RulesError
from tablejack.core.money import (
    RoundingPolicy,
    format_cents,
    format_odds,
    parse_money,
    parse_odds,
)

__all__ = [
    "Chapter633aRules",
    "ClassicRules",
    "DoubleDownTotals",
    "TableRules",
    "rules_from_toml_text",
]

MONEY_FIELDS = frozenset({"table_minimum", "table_maximum", "betting_unit"})


class DoubleDownTotals:
    """Which first-two-card totals may double (§ 633a.10): ``"any"``, ``"9-11"`` or ``"10-11"``."""

    ANY = "any"
    NINE_TO_ELEVEN = "9-11"
    TEN_OR_ELEVEN = "10-11"
    CHOICES: ClassVar[dict[str, frozenset[int] | None]] = {
        "any": None,
        "9-11": frozenset({9, 10, 11}),
        "10-11": frozenset({10, 11}),
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRules:
    """What every tablejack table game configures. Subclassed once per game."""

    game: ClassVar[str] = ""
    allowed_decks: ClassVar[frozenset[int]] = frozenset(range(1, 9))
    decks_clause: ClassVar[str] = "PA 633a.3(a)"
    max_seats: ClassVar[int] = 7

    name: str = ""
    """A name for this Rules Submission, shown on reports (free text)."""

    decks: int = 6
    """Number of decks shuffled together in the shoe (game-specific legal set)."""

    penetration: float = 0.75
    """Fraction of the shoe dealt before the cut card comes out (§ 633a.5, house procedure)."""

    table_minimum: int = 1000
    """Smallest main wager, in cents (§ 633a.6, posted table limits)."""

    table_maximum: int = 500_000
    """Largest main wager, in cents (§ 633a.6, posted table limits)."""

    betting_unit: int = 100
    """Every wager is a whole multiple of this many cents (§ 633a.6, chip denominations)."""

    blackjack_pays: Fraction = Fraction(3, 2)
    """Odds paid on a player Blackjack that wins (§ 633a.13; 633c.5(v)(1): 3 to 2)."""

    rounding: RoundingPolicy = RoundingPolicy.DOWN
    """How an uneven payout is rounded to a whole cent (house policy, § 633a.13)."""

    def __post_init__(self) -> None:
        self._check_types()
        self._check()

    def _check_types(self) -> None:
        """Refuse a value of the wrong type for a plain field (``late_surrender="yes"``)."""
        hints = _field_types(type(self))
        for item in fields(self):
            expected = hints.get(item.name)
            value = getattr(self, item.name)
            if expected is None or _is_type(value, expected):
                continue
            raise RulesError(
                f"Rules field {item.name} = {value!r} must be {_TYPE_NAMES[expected]} "
                f"({self.game} rules).",
                rule="PA 601a.2",
            )

    def _check(self) -> None:
        if self.decks not in self.allowed_decks:
            low, high = min(self.allowed_decks), max(self.allowed_decks)
            legal = (
                f"from {low} to {high} decks"
                if len(self.allowed_decks) == high - low + 1
                else " or ".join(str(n) for n in sorted(self.allowed_decks)) + " decks"
            )
            raise RulesError(
                f"decks = {self.decks!r} is not allowed: {self._game_title()} is dealt {legal} "
                f"({self.decks_clause}).",
                rule=self.decks_clause,
            )
        if not 0.0 < self.penetration <= 1.0:
            raise RulesError(
                f"penetration = {self.penetration!r} must be a fraction in (0, 1] (PA 633a.5).",
                rule="PA 633a.5",
            )
        if self.betting_unit < 1:
            raise RulesError(
                f"betting_unit = {self.betting_unit!r} must be at least one cent (PA 633a.6).",
                rule="PA 633a.6",
            )
        if self.table_minimum < self.betting_unit or self.table_minimum % self.betting_unit:
            raise RulesError(
                f"table_minimum = {self.table_minimum!r} cents must be a positive multiple of the "
                f"betting unit {self.betting_unit} (PA 633a.6).",
                rule="PA 633a.6",
            )
        if self.table_maximum < self.table_minimum or self.table_maximum % self.betting_unit:
            raise RulesError(
                f"table_maximum = {self.table_maximum!r} cents must be at least the minimum "
                f"{self.table_minimum} and a multiple of the betting unit (PA 633a.6).",
                rule="PA 633a.6",
            )
        if self.blackjack_pays not in (Fraction(3, 2), Fraction(6, 5)):
            raise RulesError(
                f"blackjack_pays = {format_odds(self.blackjack_pays)!r} is not allowed: a "
                "Blackjack pays 3 to 2 (PA 633a.13; 633c.5(v)(1)) or 6 to 5 where approved.",
                rule="PA 633a.13",
            )

    def _check_choice(self, name: str, choices: tuple[str, ...], rule: str) -> None:
        """Raise unless the field ``name`` holds one of ``choices``."""
        value = getattr(self, name)
        if value not in choices:
            raise RulesError(
                f"{name} = {value!r} must be one of {', '.join(choices)} ({rule}).", rule=rule
            )

    @classmethod
    def _game_title(cls) -> str:
        return cls.game

    # -- loading and saving ----------------------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Self:
        """Rules from a mapping of field names (as read from TOML); strict about names and types.

        >>> ClassicRules.from_mapping({"decks": 2, "table_minimum": "$5"}).table_minimum
        500
        >>> ClassicRules.from_mapping({"deck": 2})
        Traceback (most recent call last):
        ...
        tablejack.core.errors.RulesError: Unknown rules field 'deck' for the classic game; known fields: betting_unit, ...
        """
        known = {f.name: f for f in fields(cls)}
        hints = get_type_hints(cls)
        values: dict[str, Any] = {}
        for key, raw in data.items():
            if key == "game":
                if raw != cls.game:
                    raise RulesError(
                        f"These rules are for the {cls.game!r} game, not {raw!r}.", rule="PA 601a.2"
                    )
                continue
            if key not in known:
                raise RulesError(
                    f"Unknown rules field {key!r} for the {cls.game} game; known fields: "
                    f"{', '.join(sorted(known))}.",
                    rule="PA 601a.2",
                )
            values[key] = _coerce(cls.game, key, hints[key], raw)
        return cls(**values)

    @classmethod
    def from_toml(cls, path: str | Path) -> Self:
        """Rules from a TOML file (see ``rules/``)."""
        return cls.from_mapping(read_toml(path))

    def to_mapping(self) -> dict[str, Any]:
        """The rules as TOML-ready data; ``from_mapping(to_mapping())`` gives equal rules."""
        data: dict[str, Any] = {"game": self.game}
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Fraction):
                value = format_odds(value)
            elif isinstance(value, RoundingPolicy):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            elif item.name in MONEY_FIELDS:
                value = format_cents(value)
            data[item.name] = value
        return data

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


_TYPE_NAMES: dict[type, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    str: "text",
    Fraction: "odds",
    RoundingPolicy: "a rounding policy",
}
_FIELD_TYPES: dict[type, dict[str, type]] = {}


def _field_types(cls: type) -> dict[str, type]:
    """The fields of a rules class whose annotation is one of the plain types checked."""
    cached = _FIELD_TYPES.get(cls)
    if cached is None:
        hints = get_type_hints(cls)
        cached = {
            item.name: hints[item.name]
            for item in fields(cls)
            if hints.get(item.name) in _TYPE_NAMES
        }
        _FIELD_TYPES[cls] = cached
    return cached


def _is_type(value: object, expected: type) -> bool:
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, expected)


def read_toml(path: str | Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise RulesError(f"{path} is not valid TOML: {error}.", rule="PA 601a.2") from None


def rules_from_toml_text(text: str) -> dict[str, Any]:
    """Parse TOML text into a mapping, raising :class:`RulesError` on a syntax error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RulesError(f"The rules are not valid TOML: {error}.", rule="PA 601a.2") from None


def _coerce(game: str, key: str, hint: Any, raw: Any) -> Any:
    """Turn a TOML value into the field's type, or raise a RulesError naming the field."""

    def wrong(expected: str) -> RulesError:
        return RulesError(
            f"Rules field {key} = {raw!r} must be {expected} ({game} rules).", rule="PA 601a.2"
        )

    try:
        if key in MONEY_FIELDS:
            return parse_money(raw)
        if hint is bool:
            if not isinstance(raw, bool):
                raise wrong("true or false")
            return raw
        if hint is int:
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise wrong("a whole number")
            return raw
        if hint is float:
            if isinstance(raw, bool) or not isinstance(raw, int | float):
                raise wrong("a number")
            return float(raw)
        if hint is str:
            if not isinstance(raw, str):
                raise wrong("text")
            return raw
        if hint is Fraction:
            return parse_odds(raw)
        if hint is RoundingPolicy:
            return RoundingPolicy(raw)
        if isinstance(hint, type) and issubclass(hint, RoundingPolicy):
            return hint(raw)
    except ValueError as error:
        if isinstance(error, RulesError):
            raise
        raise wrong(f"valid ({error})") from None
    # Tuples and enumerations specific to a game: the field's own validation decides.
    if isinstance(raw, list):
        return tuple(_freeze(item) for item in raw)
    return _freeze(raw)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Chapter633aRules(TableRules):
    """The Chapter 633a choices every PA table game inherits: the dealer's soft 17, insurance and
    even money (§ 633a.8), double down (§ 633a.10) and splitting (§ 633a.11). Subclassed by the
    classic table and the hybrid tables, which cite their own clause for S17."""

    s17_clause: ClassVar[str] = "PA 633a.7"
    """The clause that makes the dealer stand on all 17s in this game."""
    even_money_clause: ClassVar[str] = "PA 633a.8(e)"
    """The clause that offers even money in this game."""

    dealer_hits_soft_17: bool = False
    """H17 if true. The PA texts require the dealer to stand on all 17s (S17, § 633a.7;
    633c.5(s)), so a PA table may not set it."""

    insurance: bool = True
    """Insurance up to half the Blackjack Wager when the up card is an ace, pays 2 to 1
    (§ 633a.8)."""

    even_money: bool = True
    """A player Blackjack may take even money against an up ace (§ 633a.8(e))."""

    double_down_totals: str = DoubleDownTotals.ANY
    """First-two-card totals that may double (§ 633a.10): "any", "9-11" or "10-11"."""

    double_after_split: bool = True
    """DAS: a split hand may double after its second card (§ 633a.11(c))."""

    double_for_less: bool = True
    """A double may be any amount up to the hand's wager, in betting units (§ 633a.10)."""

    max_split_hands: int = 4
    """The most hands one initial hand may become by splitting and resplitting (§ 633a.11(c))."""

    resplit_aces: bool = False
    """RSA: split aces may be split again (§ 633a.11(c))."""

    one_card_to_split_aces: bool = True
    """Each split ace receives exactly one card (§ 633a.11; industry norm, 633c.5(aa)(3)(i))."""

    def _check(self) -> None:
        super(Chapter633aRules, self)._check()  # named: a slotted dataclass has no bare super()
        if self.dealer_hits_soft_17:
            raise RulesError(
                "dealer_hits_soft_17 = true is not allowed: the dealer stands on all 17s, hard "
                f"or soft ({self.s17_clause}).",
                rule=self.s17_clause,
            )
        if self.double_down_totals not in DoubleDownTotals.CHOICES:
            raise RulesError(
                f"double_down_totals = {self.double_down_totals!r} must be one of "
                f"{', '.join(DoubleDownTotals.CHOICES)} (PA 633a.10).",
                rule="PA 633a.10",
            )
        if not 2 <= self.max_split_hands <= 8:
            raise RulesError(
                f"max_split_hands = {self.max_split_hands!r} must be from 2 to 8 (PA 633a.11(c)).",
                rule="PA 633a.11(c)",
            )
        if self.even_money and not self.insurance:
            raise RulesError(
                "even_money = true needs insurance = true: even money is the insurance of a "
                f"Blackjack ({self.even_money_clause}).",
                rule=self.even_money_clause,
            )

    @property
    def double_totals(self) -> frozenset[int] | None:
        """The totals that may double, or None for any two cards."""
        return DoubleDownTotals.CHOICES[self.double_down_totals]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassicRules(Chapter633aRules):
    """Chapter 633a Blackjack on a standard table, with the optional EZ Bust wager (633b.16).

    Defaults follow ``referenced-rules.md`` §1: S17, double on any two cards, double after
    split, split to four hands, no resplit of aces, one card to each split ace, late surrender,
    insurance and even money, hole card checked with the card reader device.
    """

    game: ClassVar[str] = "classic"

    late_surrender: bool = True
    """LS: after the dealer checks for Blackjack, a first two-card hand may surrender half
    (§ 633a.9)."""

    hole_card_peek: bool = True
    """The dealer checks the hole card with the card reader device when the up card is an ace or
    ten-value (§ 633a.1, § 633a.2). If false, a dealer Blackjack is found only at the dealer's
    turn and collects only the original wager (§ 633a.10(b), § 633a.11(d))."""

    ez_bust: bool = False
    """EZ Bust Blackjack side wager offered (633b.16(a))."""

    ez_bust_push_all: bool = False
    """All EZ Bust wagers push when every Blackjack Wager ended in a Blackjack or a bust
    (633b.16(g))."""

    @classmethod
    def _game_title(cls) -> str:
        return "Chapter 633a Blackjack"

    def _check(self) -> None:
        super(ClassicRules, self)._check()  # named: a slotted dataclass has no bare super()
        if self.ez_bust_push_all and not self.ez_bust:
            raise RulesError(
                "ez_bust_push_all = true needs ez_bust = true (PA 633b.16(g)).",
                rule="PA 633b.16(g)",
            )
