"""Rules of Blackjack on a hybrid gaming table, version A (PA 633c.5(a)–(v)): ``HybridRules``.

The certificate holder's choices for the three-position hybrid table as one frozen object: six
or eight decks ((f)), S17 ((s), (c)(2)), Blackjack 3 to 2 and insurance 2 to 1 ((c)(2), (v)),
the countdown clock and its default action ((c)(2), (p)(2)), the Chapter 633a double and split
options, and the Buzzer Beater wager with its paytable as data ((m), (u), (v)(3)).

The paytable is a tuple of :class:`BuzzerBeaterRow` (player hand, dealer hands, odds); in TOML
each row is written ``{player = "20", dealer = ["21", "blackjack"], pays = "30 to 1"}``.

Constructing rules never warns: a replayed round must be recalled silently. The Rules Submission
*loader*, :meth:`HybridRules.from_toml` (and :func:`tablejack.games.load_rules`, which calls it),
screens the Buzzer Beater paytable and warns with :class:`BuzzerBeaterEdgeWarning` when a row
pays more than ``buzzer_beater_review_odds`` (the text's 20-against-21 row at 30 to 1 does,
A-13). The screen is a coarse flag, not a computation of the edge: the math lab computes that.

>>> rules = HybridRules()
>>> rules.decks, rules.countdown_default, rules.buzzer_beater_paytable[2].describe()
(6, 'stand', 'player 20 against dealer 21 or blackjack pays 30 to 1')
>>> HybridRules(decks=7)
Traceback (most recent call last):
...
tablejack.core.errors.RulesError: decks = 7 is not allowed: Blackjack on a hybrid gaming table is dealt 6 or 8 decks (PA 633c.5(f)).
>>> [row.describe() for row in buzzer_beater_review(rules)]
['player 20 against dealer 21 or blackjack pays 30 to 1']
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar, Self

from tablejack.core.errors import InvalidNotationError, RulesError
from tablejack.core.hands import Hand
from tablejack.core.money import format_odds, parse_odds
from tablejack.core.rules import Chapter633aRules, TableRules, read_toml
from tablejack.games.countdown import (
    COUNTDOWN_CHOICES,
    COUNTDOWN_PRESETS,
    CountdownTable,
    check_countdown,
    countdown_action,
    countdown_rows,
    countdown_text,
    normal_table,
)

__all__ = [
    "BUZZER_BEATER_HANDS",
    "REGULATION_PAYTABLE",
    "BuzzerBeaterEdgeWarning",
    "BuzzerBeaterRow",
    "HybridRules",
    "buzzer_beater_review",
    "warn_if_player_edge",
]

BUZZER_BEATER_HANDS = ("19", "20", "21", "blackjack")
"""The hand labels a Buzzer Beater row may name, weakest first (633c.5(u)(1)); ``"21"`` is a
21 of more than two cards (or of a split hand), ``"blackjack"`` the initial two-card 21."""

_STRENGTH = {label: rank for rank, label in enumerate(BUZZER_BEATER_HANDS)}

COUNTDOWN_DEFAULTS = COUNTDOWN_PRESETS
"""The named countdown defaults; ``countdown_default`` may also be ``"table"``
(:mod:`tablejack.games.countdown`)."""
SPLIT_CARD_ORDERS = ("hand-by-hand", "second-cards-first")
BUZZER_BEATER_HAND_CHOICES = ("first-hand", "best-hand")
BUZZER_BEATER_NO_ROW_CHOICES = ("lose", "push")
PAYTABLE_CLAUSE = "PA 633c.5(v)(3)"


class BuzzerBeaterEdgeWarning(UserWarning):
    """A Buzzer Beater paytable row pays more than the review threshold: the wager may favour
    the player (633c.5(v)(3); ``referenced-rules.md`` A-13)."""


@dataclass(frozen=True, slots=True)
class BuzzerBeaterRow:
    """One line of the Buzzer Beater paytable (633c.5(v)(3)): a player hand, the dealer hands it
    pays against, and the odds."""

    player: str
    dealer: tuple[str, ...]
    pays: Fraction

    @classmethod
    def parse(cls, raw: object) -> BuzzerBeaterRow:
        """A row from a mapping ``{player, dealer, pays}``, its frozen TOML form (sorted pairs),
        a ``(player, dealer, pays)`` triple or a row.

        >>> BuzzerBeaterRow.parse({"player": 19, "dealer": "20", "pays": "10 to 1"})
        BuzzerBeaterRow(player='19', dealer=('20',), pays=Fraction(10, 1))
        """
        if isinstance(raw, BuzzerBeaterRow):
            return raw
        if (
            isinstance(raw, tuple)
            and raw
            and all(
                isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                for item in raw
            )
        ):
            raw = dict(raw)
        if isinstance(raw, Mapping):
            unknown = set(raw) - {"player", "dealer", "pays"}
            if unknown or not {"player", "dealer", "pays"} <= set(raw):
                raise RulesError(
                    f'A Buzzer Beater row is written {{player = "20", dealer = ["20"], pays = '
                    f'"5 to 1"}}; got {dict(raw)!r} ({PAYTABLE_CLAUSE}).',
                    rule=PAYTABLE_CLAUSE,
                )
            player, dealer, pays = raw["player"], raw["dealer"], raw["pays"]
        elif isinstance(raw, tuple | list) and len(raw) == 3:
            player, dealer, pays = raw
        else:
            raise RulesError(
                f"{raw!r} is not a Buzzer Beater paytable row ({PAYTABLE_CLAUSE}).",
                rule=PAYTABLE_CLAUSE,
            )
        dealers = (dealer,) if isinstance(dealer, str | int) else tuple(dealer)
        try:
            odds = parse_odds(pays)
        except InvalidNotationError as error:
            raise RulesError(
                f"Buzzer Beater odds {pays!r}: {error.message} ({PAYTABLE_CLAUSE}).",
                rule=PAYTABLE_CLAUSE,
            ) from None
        return cls(_label(player), tuple(_label(item) for item in dealers), odds)

    def describe(self) -> str:
        """``'player 20 against dealer 21 or blackjack pays 30 to 1'``."""
        return (
            f"player {self.player} against dealer {' or '.join(self.dealer)} pays "
            f"{format_odds(self.pays)}"
        )

    def to_mapping(self) -> dict[str, Any]:
        """TOML-ready data."""
        return {"player": self.player, "dealer": list(self.dealer), "pays": format_odds(self.pays)}


def _label(value: object) -> str:
    text = str(value).strip().lower() if isinstance(value, str | int) else ""
    if isinstance(value, bool) or text not in _STRENGTH:
        raise RulesError(
            f"{value!r} is not a Buzzer Beater hand; use 19, 20, 21 or blackjack "
            f"(PA 633c.5(u)(1)).",
            rule="PA 633c.5(u)(1)",
        )
    return text


REGULATION_PAYTABLE: tuple[BuzzerBeaterRow, ...] = (
    BuzzerBeaterRow("blackjack", ("blackjack",), Fraction(5)),
    BuzzerBeaterRow("20", ("20",), Fraction(5)),
    BuzzerBeaterRow("20", ("21", "blackjack"), Fraction(30)),
    BuzzerBeaterRow("19", ("19",), Fraction(5)),
    BuzzerBeaterRow("19", ("20",), Fraction(10)),
    BuzzerBeaterRow("19", ("21", "blackjack"), Fraction(10)),
)
"""The paytable as 633c.5(v)(3) gives it, in the only consistent parse of its lost layout
(``referenced-rules.md`` §2.3). The 30-to-1 row is suspect (A-13) but is the text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridRules(Chapter633aRules):
    """Blackjack on a hybrid gaming table, version A: three player positions, community cards,
    countdown clock, Buzzer Beater (PA 633c.5(a)–(v)).

    Defaults follow ``referenced-rules.md`` §2.1 and §5: the Chapter 633a options of the classic
    table (double on any two cards, double after split, split to four hands, one card to each
    split ace), insurance and even money, no surrender (A-17), the regulation's Buzzer Beater
    paytable, and the recommended reading of every ambiguity as the default option.
    """

    game: ClassVar[str] = "hybrid"
    allowed_decks: ClassVar[frozenset[int]] = frozenset({6, 8})
    decks_clause: ClassVar[str] = "PA 633c.5(f)"
    s17_clause: ClassVar[str] = "PA 633c.5(s)"
    even_money_clause: ClassVar[str] = "PA 633c.5(o)"
    max_seats: ClassVar[int] = 3
    """Player positions on the layout (633c.5(b)(2), (l))."""

    insurance_pays: Fraction = Fraction(2)
    """Odds of a winning insurance wager: 2 to 1 (633c.5(v)(2), (c)(2))."""

    countdown_seconds: int = 20
    """Length of the countdown clock on the terminals, in seconds (633c.5(p)(2)). The engine has
    no clock: the server runs it and sends ``dealer countdown-expired``."""

    countdown_default: str = "stand"
    """What the clock does for a player who has not acted (633c.5(p)(2), (c)(2)): "stand"
    (the regulation's default), "hit-hard-11-or-less" (hit a hard total of 11 or less, else
    stand; the option 633c.5(z) gives as an example) or "table" (``countdown_table``)."""

    countdown_table: CountdownTable = ()
    """With ``countdown_default = "table"``: the action per hand total, ``{hard-11 = "hit",
    soft-17 = "hit"}`` (hard 4–20, soft 12–20; "hit" or "stand"; a total not named stands)
    (633c.5(c)(2); the options of (z)). Shown in the game rules icon (``countdown_rows``)."""

    split_card_order: str = "hand-by-hand"
    """How a player's split hands take community cards (A-4): "hand-by-hand" (per-player cursor:
    hand 1 is completed, then hand 2 continues from the next community card unused by that
    player; § 633a.11(b)) or "second-cards-first" (each split hand first takes its second card in
    turn, then hand 1 is played on, then hand 2)."""

    buzzer_beater: bool = True
    """The Buzzer Beater wager is offered to players with a Blackjack Wager (633c.5(m))."""

    buzzer_beater_paytable: tuple[BuzzerBeaterRow, ...] = REGULATION_PAYTABLE
    """The Buzzer Beater paytable (633c.5(v)(3)); default: the regulation text (§2.3, A-13)."""

    buzzer_beater_hand: str = "first-hand"
    """Which hand of a player who split decides the Buzzer Beater (A-6): "first-hand" (the
    hand on the dealer's left) or "best-hand" (the hand with the best Buzzer Beater result)."""

    buzzer_beater_no_row: str = "lose"
    """A Buzzer Beater that wins under 633c.5(u)(1) but has no paytable row (player 21 against
    dealer 21, A-14): "lose" (default) or "push"."""

    buzzer_beater_review_odds: Fraction = Fraction(25)
    """The loader warns (:class:`BuzzerBeaterEdgeWarning`) when a paytable row pays more than
    this (a coarse screen for a player edge, A-13; the math lab computes the edge)."""

    @classmethod
    def _game_title(cls) -> str:
        return "Blackjack on a hybrid gaming table"

    def _check(self) -> None:
        super(HybridRules, self)._check()  # named: a slotted dataclass has no bare super()
        if self.blackjack_pays != Fraction(3, 2):
            raise RulesError(
                f"blackjack_pays = {format_odds(self.blackjack_pays)!r} is not allowed: a "
                "Blackjack on a hybrid table pays 3 to 2 (PA 633c.5(v)(1), (c)(2)).",
                rule="PA 633c.5(v)(1)",
            )
        if self.insurance_pays != Fraction(2):
            raise RulesError(
                f"insurance_pays = {format_odds(self.insurance_pays)!r} is not allowed: "
                "insurance pays 2 to 1 (PA 633c.5(v)(2), (c)(2)).",
                rule="PA 633c.5(v)(2)",
            )
        if not 1 <= self.countdown_seconds <= 600:
            raise RulesError(
                f"countdown_seconds = {self.countdown_seconds!r} must be from 1 to 600 "
                "(PA 633c.5(p)(2)).",
                rule="PA 633c.5(p)(2)",
            )
        self._check_choice("countdown_default", COUNTDOWN_CHOICES, "PA 633c.5(c)(2)")
        table = normal_table(self.countdown_table, "PA 633c.5(c)(2)")
        object.__setattr__(self, "countdown_table", table)
        check_countdown(self.countdown_default, table, "PA 633c.5(c)(2)")
        self._check_choice("split_card_order", SPLIT_CARD_ORDERS, "PA 633c.5(q); A-4")
        self._check_choice("buzzer_beater_hand", BUZZER_BEATER_HAND_CHOICES, "PA 633c.5(u); A-6")
        self._check_choice(
            "buzzer_beater_no_row", BUZZER_BEATER_NO_ROW_CHOICES, "PA 633c.5(u)(1); A-14"
        )
        raw_rows = self.buzzer_beater_paytable
        if not isinstance(raw_rows, tuple | list):
            raise RulesError(
                f"buzzer_beater_paytable must be a list of rows, not {raw_rows!r} "
                f"({PAYTABLE_CLAUSE}).",
                rule=PAYTABLE_CLAUSE,
            )
        rows = tuple(BuzzerBeaterRow.parse(row) for row in raw_rows)
        object.__setattr__(self, "buzzer_beater_paytable", rows)
        seen: set[tuple[str, str]] = set()
        for row in rows:
            if not row.dealer:
                raise RulesError(
                    f"Buzzer Beater row {row.describe()!r} names no dealer hand "
                    f"({PAYTABLE_CLAUSE}).",
                    rule=PAYTABLE_CLAUSE,
                )
            if row.pays <= 0:
                raise RulesError(
                    f"Buzzer Beater row {row.describe()!r} must pay more than nothing "
                    f"({PAYTABLE_CLAUSE}).",
                    rule=PAYTABLE_CLAUSE,
                )
            for dealer in row.dealer:
                if _STRENGTH[dealer] < _STRENGTH[row.player]:
                    raise RulesError(
                        f"Buzzer Beater row {row.describe()!r} can never pay: the wager wins only "
                        "when the dealer's hand equals or beats the player's (PA 633c.5(u)(1)).",
                        rule="PA 633c.5(u)(1)",
                    )
                if (row.player, dealer) in seen:
                    raise RulesError(
                        f"The Buzzer Beater paytable pays player {row.player} against dealer "
                        f"{dealer} twice ({PAYTABLE_CLAUSE}).",
                        rule=PAYTABLE_CLAUSE,
                    )
                seen.add((row.player, dealer))
        if self.buzzer_beater and not rows:
            raise RulesError(
                f"buzzer_beater = true needs a paytable ({PAYTABLE_CLAUSE}, (c)(3)).",
                rule=PAYTABLE_CLAUSE,
            )
        if self.buzzer_beater_review_odds <= 0:
            raise RulesError(
                "buzzer_beater_review_odds must be positive odds (A-13).", rule=PAYTABLE_CLAUSE
            )

    # -- derived ---------------------------------------------------------------------------

    def buzzer_beater_odds(self, player: str, dealer: str) -> Fraction | None:
        """The paytable's odds for ``player`` against ``dealer`` (hand labels), or None.

        >>> HybridRules().buzzer_beater_odds("19", "blackjack")
        Fraction(10, 1)
        >>> HybridRules().buzzer_beater_odds("21", "21") is None
        True
        """
        for row in self.buzzer_beater_paytable:
            if row.player == player and dealer in row.dealer:
                return row.pays
        return None

    # -- loading and saving ----------------------------------------------------------------

    @classmethod
    def from_toml(cls, path: str | Path) -> Self:
        """Load a Rules Submission file and screen its Buzzer Beater paytable: warns with
        :class:`BuzzerBeaterEdgeWarning` for a row above ``buzzer_beater_review_odds``."""
        rules = cls.from_mapping(read_toml(path))
        warn_if_player_edge(rules, stacklevel=3)
        return rules

    # -- the countdown default ((p)(2), (c)(2)) --------------------------------------------

    def countdown_action(self, hand: Hand) -> str:
        """What the countdown clock does to ``hand`` of a player who has not acted."""
        return countdown_action(self.countdown_default, self.countdown_table, hand)

    def countdown_rows(self) -> list[dict[str, str]]:
        """The countdown's action for every hard and soft total, for the game rules icon."""
        return countdown_rows(self.countdown_default, self.countdown_table)

    def countdown_text(self) -> str:
        """The countdown's options in words, for the game rules icon ((c)(2))."""
        return countdown_text(self.countdown_default, self.countdown_table)

    def to_mapping(self) -> dict[str, Any]:
        """The rules as TOML-ready data, the paytable as a list of row tables."""
        data = TableRules.to_mapping(self)
        data["countdown_table"] = dict(self.countdown_table)
        data["buzzer_beater_paytable"] = [row.to_mapping() for row in self.buzzer_beater_paytable]
        return data


def buzzer_beater_review(rules: HybridRules) -> list[BuzzerBeaterRow]:
    """The paytable rows that pay more than ``rules.buzzer_beater_review_odds`` (A-13).

    A coarse screen, not an edge calculation: a Buzzer Beater line that pays more than about 25
    to 1 on a hand as common as 20 against a dealer 21 or Blackjack is the pattern that gives the
    text's table a player edge (``referenced-rules.md`` §2.3). The math lab computes the edge.
    """
    if not rules.buzzer_beater:
        return []
    return [
        row for row in rules.buzzer_beater_paytable if row.pays > rules.buzzer_beater_review_odds
    ]


def warn_if_player_edge(rules: HybridRules, *, stacklevel: int = 2) -> list[BuzzerBeaterRow]:
    """Warn with :class:`BuzzerBeaterEdgeWarning` for every flagged row; return those rows."""
    flagged = buzzer_beater_review(rules)
    if flagged:
        warnings.warn(
            "The Buzzer Beater paytable may give the player an edge: "
            + "; ".join(row.describe() for row in flagged)
            + f" exceeds the review threshold {format_odds(rules.buzzer_beater_review_odds)} "
            "(PA 633c.5(v)(3); A-13). Have the math lab compute the edge before approval.",
            BuzzerBeaterEdgeWarning,
            stacklevel=stacklevel + 1,
        )
    return flagged
