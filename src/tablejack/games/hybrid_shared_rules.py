"""Rules of Blackjack on a hybrid gaming table, version B (PA 633c.5(w)–(ee)): no hole card, one
shared start, every later card designated by each player's choices (``hybrid-shared``).

The certificate holder's choices as one frozen object: six or eight decks ((f)), S17 ((c)(2),
(bb)(2)), Blackjack 3 to 2 and insurance 2 to 1 ((ee)(1)–(2)), the countdown clock and its
default action ((z), (c)(2)), surrender and its timing (A-7), the readings of a dealer Blackjack
after a split (A-10) or a double (A-19), and which of Royal Match 21 (with the Crown Treasure
bonus), Bet the Set and King's Bounty are offered ((x)), each with its paytable as data.

The approved § 633a.13(f)–(h) paytables were not available (``referenced-rules.md`` §6.2–6.4), so
each paytable is either the name of a candidate table (:data:`ROYAL_MATCH_TABLES`,
:data:`BET_THE_SET_TABLES`, :data:`KINGS_BOUNTY_TABLES`) or a custom table of line = odds, as the
operator enters the approved one::

    royal_match_paytable = "wizard-v1"
    bet_the_set_paytable = { suited-pair = "20 to 1", pair = "10 to 1" }

>>> rules = HybridSharedRules()
>>> rules.decks, rules.countdown_default, rules.surrender_timing
(6, 'stand', 'late')
>>> dict(rules.royal_match_lines())["suited-match"]
Fraction(5, 2)
>>> HybridSharedRules(bet_the_set_paytable="9-to-5")
Traceback (most recent call last):
...
tablejack.core.errors.RulesError: bet_the_set_paytable = '9-to-5' is not a candidate table (25-10, 20-10, 15-10, 12-10, one-deck-15) nor a table of line = odds (PA 633c.5(ee)(4); 633a.13(g)).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Self

from tablejack.core.cards import Card, Rank
from tablejack.core.errors import InvalidNotationError, RulesError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, format_odds, parse_money, parse_odds
from tablejack.core.rules import DoubleDownTotals, TableRules
from tablejack.games.countdown import (
    COUNTDOWN_CHOICES,
    CountdownTable,
    check_countdown,
    countdown_action,
    countdown_rows,
    countdown_text,
    normal_table,
)

__all__ = [
    "BET_THE_SET_LINES",
    "BET_THE_SET_TABLES",
    "DEALER_BLACKJACK_RULES",
    "KINGS_BOUNTY_LINES",
    "KINGS_BOUNTY_TABLES",
    "ROYAL_MATCH_LINES",
    "ROYAL_MATCH_TABLES",
    "SURRENDER_TIMINGS",
    "HybridSharedRules",
    "Paytable",
    "bet_the_set_lines",
    "is_royal_match",
    "kings_bounty_lines",
    "royal_match_lines",
]

Paytable = tuple[tuple[str, Fraction], ...]
"""A paytable as data: (line, odds) pairs, strongest line first."""

ROYAL_MATCH_CLAUSE = "PA 633c.5(ee)(3); 633a.13(f)"
BET_THE_SET_CLAUSE = "PA 633c.5(ee)(4); 633a.13(g)"
KINGS_BOUNTY_CLAUSE = "PA 633c.5(ee)(5); 633a.13(h)"

ROYAL_MATCH_LINES = ("royal-match", "suited-blackjack", "suited-match")
"""Royal Match 21 lines on the player's first two cards (§ 633a.1): a king and queen of one suit;
an ace and a ten-value card of one suit; any other two cards of one suit."""

BET_THE_SET_LINES = ("suited-pair", "pair")
"""Bet the Set lines: two cards of the same rank and suit; two cards of the same rank (§ 633a.1
"Pair", A-12: K-K pays, K-10 does not)."""

KINGS_BOUNTY_LINES = (
    "spade-kings-dealer-blackjack",
    "spade-kings",
    "suited-kings",
    "suited-queens-jacks-tens",
    "suited-20",
    "unsuited-kings",
    "unsuited-20",
)
"""King's Bounty lines on the player's first two cards; the first also needs the dealer's
Blackjack, judged on the dealer's two cards as formed for that player (A-11)."""


def _table(*pairs: tuple[str, int | Fraction]) -> Paytable:
    return tuple((line, Fraction(odds)) for line, odds in pairs)


ROYAL_MATCH_TABLES: dict[str, Paytable] = {
    "wizard-v1": _table(("royal-match", 25), ("suited-match", Fraction(5, 2))),
    "wizard-v2": _table(("royal-match", 10), ("suited-match", 3)),
    "wizard-v3": _table(
        ("royal-match", 25), ("suited-blackjack", 5), ("suited-match", Fraction(5, 2))
    ),
    "emerald-queen": _table(
        ("royal-match", 25), ("suited-blackjack", 5), ("suited-match", Fraction(5, 2))
    ),
}
"""Candidate Royal Match 21 tables (``referenced-rules.md`` §6.2; § 633a.13(f) not found)."""

BET_THE_SET_TABLES: dict[str, Paytable] = {
    "25-10": _table(("suited-pair", 25), ("pair", 10)),
    "20-10": _table(("suited-pair", 20), ("pair", 10)),
    "15-10": _table(("suited-pair", 15), ("pair", 10)),
    "12-10": _table(("suited-pair", 12), ("pair", 10)),
    "one-deck-15": _table(("pair", 15)),
}
"""Candidate Bet the Set tables (``referenced-rules.md`` §6.3; § 633a.13(g) not found)."""

KINGS_BOUNTY_TABLES: dict[str, Paytable] = {
    "six-deck": _table(
        ("spade-kings-dealer-blackjack", 1000),
        ("spade-kings", 100),
        ("suited-kings", 30),
        ("suited-queens-jacks-tens", 20),
        ("suited-20", 9),
        ("unsuited-kings", 6),
        ("unsuited-20", 4),
    ),
    "two-deck": _table(
        ("spade-kings-dealer-blackjack", 1000),
        ("spade-kings", 200),
        ("suited-kings", 50),
        ("suited-queens-jacks-tens", 25),
        ("suited-20", 9),
        ("unsuited-kings", 6),
        ("unsuited-20", 4),
    ),
}
"""Candidate King's Bounty tables (``referenced-rules.md`` §6.4; § 633a.13(h) not found)."""

SURRENDER_TIMINGS = ("late", "early")
"""A-7: "late" (the surrendered hand's first community card is the dealer's hole card for that
player; a dealer Blackjack takes the whole wager, otherwise half is returned) or "early" (half
returned at once)."""

DEALER_BLACKJACK_RULES = ("original-wager", "full-amount")
"""What a dealer Blackjack (bb)(1) takes from a hand that split (A-10) or doubled (A-19):
"original-wager" (only the original wager W; busted hands stay lost: loss = max(W, busted)) or
"full-amount" (every amount at risk)."""

_MONEY_FIELDS = ("side_wager_minimum", "side_wager_maximum")
_PAYTABLES = {
    "royal_match_paytable": (ROYAL_MATCH_TABLES, ROYAL_MATCH_LINES, ROYAL_MATCH_CLAUSE),
    "bet_the_set_paytable": (BET_THE_SET_TABLES, BET_THE_SET_LINES, BET_THE_SET_CLAUSE),
    "kings_bounty_paytable": (KINGS_BOUNTY_TABLES, KINGS_BOUNTY_LINES, KINGS_BOUNTY_CLAUSE),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridSharedRules(TableRules):
    """Blackjack on a hybrid gaming table without a hole card: one shared start, community cards
    designated by each player's choices (PA 633c.5(w)–(ee)).

    Defaults follow ``referenced-rules.md`` §2.2 and §5: double on any two cards, double after
    split, split to two hands, one card to each split ace (A-9), late surrender (A-7), insurance
    without even money (A-8), a dealer Blackjack taking only the original wager after a split or
    a double (A-10, A-19), and all three side wagers offered with a candidate paytable each.
    """

    game: ClassVar[str] = "hybrid-shared"
    allowed_decks: ClassVar[frozenset[int]] = frozenset({6, 8})
    decks_clause: ClassVar[str] = "PA 633c.5(f)"
    max_seats: ClassVar[int] = 1000
    """Players (electronic wagering terminals) one round accepts; every player shares the start."""

    dealer_hits_soft_17: bool = False
    """H17 if true; not allowed: the dealer's hand is completed to a hard or soft 17–21
    (633c.5(bb)(2), (c)(2))."""

    insurance: bool = True
    """Insurance, up to half the Blackjack Wager, offered when the dealer's first card is an ace
    (633c.5(z); § 633a.8). No separate even money (A-8): a Blackjack holder may insure."""

    insurance_pays: Fraction = Fraction(2)
    """Odds of a winning insurance wager: 2 to 1 (633c.5(ee)(1))."""

    surrender: bool = True
    """Surrender of the first two cards, before any other decision (633c.5(z); § 633a.9)."""

    surrender_timing: str = "late"
    """A-7: "late" (default; the dealer's hole card for that player decides: a Blackjack takes
    the whole wager) or "early" (half the wager returned at once)."""

    double_down_totals: str = DoubleDownTotals.ANY
    """First-two-card totals that may double (§ 633a.10): "any", "9-11" or "10-11"."""

    double_after_split: bool = True
    """DAS: a split hand may double after its second card (§ 633a.11(c))."""

    double_for_less: bool = True
    """A double may be any amount up to the hand's wager, in betting units (§ 633a.10)."""

    split_against_dealer_blackjack: str = "original-wager"
    """A-10 ((bb)(1)): "original-wager" (the original wager is collected, the additional split
    wager returned if its hand did not exceed 21; busted hands stay lost) or "full-amount"."""

    double_against_dealer_blackjack: str = "original-wager"
    """A-19: "original-wager" (a live doubled hand loses the original wager, the double is
    returned; a busted double stays lost) or "full-amount"."""

    countdown_seconds: int = 20
    """Length of the countdown clock on the terminals, in seconds (633c.5(z)). The engine has no
    clock: the server sends ``dealer countdown-expired``."""

    countdown_default: str = "stand"
    """What the clock does for a player who has not acted (633c.5(z), (c)(2)): "stand" (the
    regulation's default), "hit-hard-11-or-less" (hit a hard total of 11 or less, else stand;
    the option (z) gives as an example) or "table" (``countdown_table``). Undecided insurance is
    declined."""

    countdown_table: CountdownTable = ()
    """With ``countdown_default = "table"``: the action per hand total, ``{hard-11 = "hit",
    soft-17 = "hit"}`` (hard 4–20, soft 12–20; "hit" or "stand"; a total not named stands)
    ((z): "different options, such as a player's hand of an 11 will automatically hit";
    explained in the game rules icon, (c)(2), ``countdown_rows``)."""

    royal_match: bool = True
    """The Royal Match 21 wager is offered (633c.5(x); § 633a.6(e)(4))."""

    royal_match_paytable: str | Paytable = "wizard-v1"
    """Royal Match 21 paytable (633c.5(ee)(3); § 633a.13(f)): a name of
    :data:`ROYAL_MATCH_TABLES` or a table of line = odds (lines :data:`ROYAL_MATCH_LINES`)."""

    crown_treasure: bool = True
    """The Crown Treasure bonus is paid when the player's and the dealer's two cards are both a
    Royal Match (§ 633a.1; 633c.5(ee)(3)); the dealer's two cards as formed for that player
    (A-11)."""

    crown_treasure_pays: Fraction = Fraction(1000)
    """Odds of the Crown Treasure bonus (not found for PA; 1,000 to 1 is typical, §6.2)."""

    crown_treasure_in_addition: bool = True
    """The bonus is paid in addition to the Royal Match line (§ 633a.1 "additional payout");
    if false it replaces the line."""

    bet_the_set: bool = True
    """The Bet the Set wager is offered (633c.5(x); § 633a.6(e)(5))."""

    bet_the_set_paytable: str | Paytable = "15-10"
    """Bet the Set paytable (633c.5(ee)(4); § 633a.13(g)): a name of :data:`BET_THE_SET_TABLES`
    or a table of line = odds (lines :data:`BET_THE_SET_LINES`)."""

    kings_bounty: bool = True
    """The King's Bounty wager is offered (633c.5(x); § 633a.6(e)(6); A-18 for the name)."""

    kings_bounty_paytable: str | Paytable = "six-deck"
    """King's Bounty paytable (633c.5(ee)(5); § 633a.13(h)): a name of
    :data:`KINGS_BOUNTY_TABLES` or a table of line = odds (lines :data:`KINGS_BOUNTY_LINES`)."""

    side_wager_minimum: int = 100
    """Smallest Royal Match 21, Bet the Set or King's Bounty wager, in cents (§ 633a.6)."""

    side_wager_maximum: int = 10_000
    """Largest side wager, in cents (§ 633a.6)."""

    @classmethod
    def _game_title(cls) -> str:
        return "Blackjack on a hybrid gaming table"

    def _check(self) -> None:
        super(HybridSharedRules, self)._check()  # named: a slotted dataclass has no bare super()
        if self.dealer_hits_soft_17:
            raise RulesError(
                "dealer_hits_soft_17 = true is not allowed: the dealer's hand is completed to a "
                "hard or soft 17-21 (PA 633c.5(bb)(2), (c)(2)).",
                rule="PA 633c.5(bb)(2)",
            )
        if self.blackjack_pays != Fraction(3, 2):
            raise RulesError(
                f"blackjack_pays = {format_odds(self.blackjack_pays)!r} is not allowed: a "
                "Blackjack pays 3 to 2 (PA 633c.5(ee)(2), (c)(2)).",
                rule="PA 633c.5(ee)(2)",
            )
        if self.insurance_pays != Fraction(2):
            raise RulesError(
                f"insurance_pays = {format_odds(self.insurance_pays)!r} is not allowed: "
                "insurance pays 2 to 1 (PA 633c.5(ee)(1)).",
                rule="PA 633c.5(ee)(1)",
            )
        if self.double_down_totals not in DoubleDownTotals.CHOICES:
            raise RulesError(
                f"double_down_totals = {self.double_down_totals!r} must be one of "
                f"{', '.join(DoubleDownTotals.CHOICES)} (PA 633a.10).",
                rule="PA 633a.10",
            )
        if not 1 <= self.countdown_seconds <= 600:
            raise RulesError(
                f"countdown_seconds = {self.countdown_seconds!r} must be from 1 to 600 "
                "(PA 633c.5(z)).",
                rule="PA 633c.5(z)",
            )
        self._check_choice("countdown_default", COUNTDOWN_CHOICES, "PA 633c.5(z), (c)(2)")
        table = normal_table(self.countdown_table, "PA 633c.5(z), (c)(2)")
        object.__setattr__(self, "countdown_table", table)
        check_countdown(self.countdown_default, table, "PA 633c.5(z), (c)(2)")
        self._check_choice("surrender_timing", SURRENDER_TIMINGS, "PA 633a.9; A-7")
        self._check_choice(
            "split_against_dealer_blackjack", DEALER_BLACKJACK_RULES, "PA 633c.5(bb)(1); A-10"
        )
        self._check_choice(
            "double_against_dealer_blackjack", DEALER_BLACKJACK_RULES, "PA 633a.10; A-19"
        )
        if self.crown_treasure_pays <= 0:
            raise RulesError(
                "crown_treasure_pays must be positive odds (PA 633c.5(ee)(3)).",
                rule=ROYAL_MATCH_CLAUSE,
            )
        for name, (tables, lines, clause) in _PAYTABLES.items():
            object.__setattr__(
                self, name, _paytable(name, getattr(self, name), tables, lines, clause)
            )
        low, high = self.side_wager_minimum, self.side_wager_maximum
        for name, value in (("side_wager_minimum", low), ("side_wager_maximum", high)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise RulesError(
                    f"{name} = {value!r} must be whole cents (PA 633a.6).", rule="PA 633a.6"
                )
        if (
            low < self.betting_unit
            or low % self.betting_unit
            or high < low
            or high % self.betting_unit
        ):
            raise RulesError(
                f"side_wager_minimum = {format_cents(low)} and side_wager_maximum = "
                f"{format_cents(high)} must be multiples of the betting unit, the minimum at "
                "least one unit and the maximum at least the minimum (PA 633a.6).",
                rule="PA 633a.6",
            )

    # -- derived ---------------------------------------------------------------------------

    @property
    def double_totals(self) -> frozenset[int] | None:
        """The totals that may double, or None for any two cards."""
        return DoubleDownTotals.CHOICES[self.double_down_totals]

    def royal_match_lines(self) -> Paytable:
        """The Royal Match 21 paytable in force, as (line, odds) pairs."""
        return _resolve(self.royal_match_paytable, ROYAL_MATCH_TABLES)

    def bet_the_set_lines(self) -> Paytable:
        """The Bet the Set paytable in force, as (line, odds) pairs."""
        return _resolve(self.bet_the_set_paytable, BET_THE_SET_TABLES)

    def kings_bounty_lines(self) -> Paytable:
        """The King's Bounty paytable in force, as (line, odds) pairs."""
        return _resolve(self.kings_bounty_paytable, KINGS_BOUNTY_TABLES)

    # -- loading and saving ----------------------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Self:
        """Rules from a mapping; side wager limits may be dollars as text (``"$5"``).

        >>> HybridSharedRules.from_mapping({"side_wager_maximum": "$25"}).side_wager_maximum
        2500
        >>> HybridSharedRules.from_mapping(
        ...     {"bet_the_set_paytable": {"pair": "11 to 1", "suited-pair": "20 to 1"}}
        ... ).bet_the_set_lines()
        (('suited-pair', Fraction(20, 1)), ('pair', Fraction(11, 1)))
        """
        values = dict(data)
        for key in _MONEY_FIELDS:
            if key in values:
                try:
                    values[key] = parse_money(values[key])
                except InvalidNotationError as error:
                    raise RulesError(
                        f"Rules field {key}: {error.message}", rule="PA 633a.6"
                    ) from None
        base: Any = TableRules.from_mapping
        rules: Self = base.__func__(cls, values)
        return rules

    # -- the countdown default ((z), (c)(2)) ----------------------------------------------

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
        """The rules as TOML-ready data: custom paytables as tables of line = odds."""
        data = TableRules.to_mapping(self)
        data["countdown_table"] = dict(self.countdown_table)
        for key in _MONEY_FIELDS:
            data[key] = format_cents(getattr(self, key))
        for name in _PAYTABLES:
            value = getattr(self, name)
            if not isinstance(value, str):
                data[name] = {line: format_odds(odds) for line, odds in value}
        return data


def _resolve(value: str | Paytable, tables: Mapping[str, Paytable]) -> Paytable:
    return tables[value] if isinstance(value, str) else value


def _paytable(
    name: str,
    value: object,
    tables: Mapping[str, Paytable],
    lines: tuple[str, ...],
    clause: str,
) -> str | Paytable:
    """A paytable name, or a custom table normalised to (line, odds) pairs in line order."""
    if isinstance(value, str):
        if value not in tables:
            raise RulesError(
                f"{name} = {value!r} is not a candidate table ({', '.join(tables)}) nor a table "
                f"of line = odds ({clause}).",
                rule=clause,
            )
        return value
    pairs: dict[str, Fraction] = {}
    items: list[Any]
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, tuple | list):
        items = list(value)
    else:
        raise RulesError(f"{name} = {value!r} is not a paytable ({clause}).", rule=clause)
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str)):
            raise RulesError(
                f"{name}: {item!r} is not a line = odds entry ({clause}).", rule=clause
            )
        line, raw = item
        if line not in lines:
            raise RulesError(
                f"{name}: {line!r} is not a line of this wager; the lines are "
                f"{', '.join(lines)} ({clause}).",
                rule=clause,
            )
        try:
            odds = parse_odds(raw)
        except InvalidNotationError as error:
            raise RulesError(
                f"{name}: {line} = {raw!r}: {error.message} ({clause}).", rule=clause
            ) from None
        if odds <= 0:
            raise RulesError(f"{name}: {line} must pay more than nothing ({clause}).", rule=clause)
        pairs[line] = odds
    if not pairs:
        raise RulesError(f"{name} has no lines ({clause}).", rule=clause)
    return tuple((line, pairs[line]) for line in lines if line in pairs)


# -- judging the side wagers (pure functions of the cards) ------------------------------------


def is_royal_match(first: Card, second: Card) -> bool:
    """A king and a queen of the same suit (§ 633a.1).

    >>> is_royal_match(Card.parse("KH"), Card.parse("QH")), is_royal_match(Card.parse("KH"), Card.parse("QD"))
    (True, False)
    """
    return first.suit is second.suit and {first.rank, second.rank} == {Rank.KING, Rank.QUEEN}


def royal_match_lines(first: Card, second: Card) -> tuple[str, ...]:
    """Every Royal Match 21 line the player's first two cards make (strongest first).

    >>> royal_match_lines(Card.parse("AS"), Card.parse("KS"))
    ('suited-blackjack', 'suited-match')
    """
    if first.suit is not second.suit:
        return ()
    if is_royal_match(first, second):
        return ("royal-match",)
    if (first.is_ace and second.is_ten_value) or (second.is_ace and first.is_ten_value):
        return ("suited-blackjack", "suited-match")
    return ("suited-match",)


def bet_the_set_lines(first: Card, second: Card) -> tuple[str, ...]:
    """Every Bet the Set line: a pair is two cards of the same rank (§ 633a.1, A-12).

    >>> bet_the_set_lines(Card.parse("KS"), Card.parse("10S"))
    ()
    """
    if first.rank is not second.rank:
        return ()
    return ("suited-pair", "pair") if first.suit is second.suit else ("pair",)


def kings_bounty_lines(first: Card, second: Card, dealer_blackjack: bool) -> tuple[str, ...]:
    """Every King's Bounty line the player's two cards (and the dealer's Blackjack) make.

    >>> kings_bounty_lines(Card.parse("KS"), Card.parse("KS"), True)[:2]
    ('spade-kings-dealer-blackjack', 'spade-kings')
    >>> kings_bounty_lines(Card.parse("AH"), Card.parse("9H"), False)
    ('suited-20',)
    """
    total = (first.points + second.points) if not (first.is_ace and second.is_ace) else 12
    if total != 20:
        return ()
    suited = first.suit is second.suit
    lines: list[str] = []
    kings = first.rank is Rank.KING and second.rank is Rank.KING
    if kings and suited and first.suit.value == "S":
        if dealer_blackjack:
            lines.append("spade-kings-dealer-blackjack")
        lines.append("spade-kings")
    if kings and suited:
        lines.append("suited-kings")
    if suited and first.rank is second.rank and first.rank in (Rank.QUEEN, Rank.JACK, Rank.TEN):
        lines.append("suited-queens-jacks-tens")
    if suited:
        lines.append("suited-20")
    else:
        if kings:
            lines.append("unsuited-kings")
        lines.append("unsuited-20")
    return tuple(lines)
