"""The engine core: cards, shoe, hands, money, rules, records, commands and errors.

Pure: no I/O, no clock, no global random. Everything a game needs is here.
"""

from tablejack.core.cards import Card, Rank, Suit, cards_from_codes, full_deck
from tablejack.core.commands import Command
from tablejack.core.errors import (
    IllegalActionError,
    InvalidNotationError,
    RulesError,
    ShoeExhaustedError,
    TablejackError,
)
from tablejack.core.hands import Hand, hand_total
from tablejack.core.money import (
    RoundingPolicy,
    format_cents,
    format_odds,
    parse_money,
    parse_odds,
    winnings,
)
from tablejack.core.records import (
    Operation,
    Result,
    Settlement,
    Wager,
    WagerKind,
    check_settlements,
)
from tablejack.core.rules import ClassicRules, DoubleDownTotals, TableRules
from tablejack.core.shoe import Shoe

__all__ = [
    "Card",
    "ClassicRules",
    "Command",
    "DoubleDownTotals",
    "Hand",
    "IllegalActionError",
    "InvalidNotationError",
    "Operation",
    "Rank",
    "Result",
    "RoundingPolicy",
    "RulesError",
    "Settlement",
    "Shoe",
    "ShoeExhaustedError",
    "Suit",
    "TableRules",
    "TablejackError",
    "Wager",
    "WagerKind",
    "cards_from_codes",
    "check_settlements",
    "format_cents",
    "format_odds",
    "full_deck",
    "hand_total",
    "parse_money",
    "parse_odds",
    "winnings",
]
