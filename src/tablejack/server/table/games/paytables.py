"""The terminal's game rules icon (633c.5(c)(2)–(3)) and every paytable a table offers, as data
the terminal words in the player's language."""

from __future__ import annotations

from fractions import Fraction

from tablejack.core.money import format_cents, format_odds
from tablejack.core.rules import ClassicRules, TableRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.server.table.games.base import JsonObject

__all__ = ["PAYTABLE_LINES", "paytables", "rules_icon"]

PAYTABLE_LINES: dict[str, str] = {
    "royal-match": "King and queen of the same suit (Royal Match)",
    "suited-blackjack": "Ace and a ten-value card of the same suit",
    "suited-match": "Any two cards of the same suit",
    "crown-treasure": "Crown Treasure: your Royal Match and the dealer's two cards a Royal Match",
    "suited-pair": "Two cards of the same rank and suit",
    "pair": "Two cards of the same rank",
    "spade-kings-dealer-blackjack": "Two kings of spades, and the dealer has Blackjack",
    "spade-kings": "Two kings of spades",
    "suited-kings": "Two kings of the same suit",
    "suited-queens-jacks-tens": "Two queens, two jacks or two tens of the same suit",
    "suited-20": "Any other 20 in one suit",
    "unsuited-kings": "Two kings of different suits",
    "unsuited-20": "Any other 20",
    "dealer-busts": "The dealer busts drawing a third card or more",
    "all-blackjack-or-bust": "Every Blackjack Wager ends in a Blackjack or a bust",
}
"""The paytable lines in words (the rules name them by these keys); the terminal shows them in
the player's language from its catalog, these English words the fallback."""


def _odds(odds: Fraction) -> JsonObject:
    return {"pays": format_odds(odds), "odds": [odds.numerator, odds.denominator]}


def _line(hand: str, odds: Fraction, **extra: object) -> JsonObject:
    return {"hand": hand, "label": PAYTABLE_LINES.get(hand, hand), **_odds(odds), **extra}


def paytables(rules: TableRules) -> list[JsonObject]:
    """Every paytable the table offers, as data: per wager kind the rows of hand and odds
    (strongest first), the clause, and notes (633c.5(c)(2)-(3); 633c.5(v)(3), (ee)(3)-(5);
    633b.16(f)-(g))."""
    tables: list[JsonObject] = []
    if isinstance(rules, HybridRules) and rules.buzzer_beater:
        tables.append(
            {
                "kind": "buzzer_beater",
                "clause": "PA 633c.5(v)(3)",
                "rows": [
                    _line(
                        row.player,
                        row.pays,
                        against=list(row.dealer),
                        label=row.describe().rsplit(" pays ", 1)[0],
                    )
                    for row in rules.buzzer_beater_paytable
                ],
                "notes": [],
            }
        )
    if isinstance(rules, HybridSharedRules):
        tables.extend(_side_wager_paytables(rules))
    if isinstance(rules, ClassicRules) and rules.ez_bust:
        rows = [_line("dealer-busts", Fraction(1))]
        if rules.ez_bust_push_all:
            line = "all-blackjack-or-bust"  # 633b.16(g): every EZ Bust wager pushes
            rows.append({"hand": line, "label": PAYTABLE_LINES[line], "pays": "push", "odds": None})
        tables.append(
            {"kind": "ez_bust", "clause": "PA 633b.16(f)", "rows": rows, "notes": ["ez_bust"]}
        )
    return tables


def _side_wager_paytables(rules: HybridSharedRules) -> list[JsonObject]:
    """Royal Match 21 with Crown Treasure, Bet the Set and King's Bounty (633c.5(ee)(3)-(5))."""
    tables: list[JsonObject] = []
    if rules.royal_match:
        rows = [_line(line, odds) for line, odds in rules.royal_match_lines()]
        notes = []
        if rules.crown_treasure:
            added = rules.crown_treasure_in_addition
            rows.append(_line("crown-treasure", rules.crown_treasure_pays, in_addition=bool(added)))
            notes.append("crown_treasure_in_addition" if added else "crown_treasure_instead")
        tables.append(
            {
                "kind": "royal_match",
                "clause": "PA 633c.5(ee)(3)",
                "rows": rows,
                "notes": [*notes, "highest_line_only"],
            }
        )
    for kind, clause, offered, lines in (
        ("bet_the_set", "PA 633c.5(ee)(4)", rules.bet_the_set, rules.bet_the_set_lines),
        ("kings_bounty", "PA 633c.5(ee)(5)", rules.kings_bounty, rules.kings_bounty_lines),
    ):
        if offered:
            tables.append(
                {
                    "kind": kind,
                    "clause": clause,
                    "rows": [_line(line, odds) for line, odds in lines()],
                    "notes": ["highest_line_only"],
                }
            )
    return tables


def rules_icon(rules: TableRules, countdown_seconds: float, countdown_default: str) -> JsonObject:
    """The content of the terminal's game rules icon (633c.5(c)(2)–(3)): Blackjack pays 3 to 2,
    the dealer stands on all soft 17s, insurance pays 2 to 1, what the countdown does, and every
    paytable the table offers (Buzzer Beater, Royal Match 21 with Crown Treasure, Bet the Set,
    King's Bounty, EZ Bust). ``lines`` says it in English; ``facts`` and ``paytables`` are the
    same as data, which the terminal words in the player's language."""
    blackjack_pays = rules.blackjack_pays
    insurance_pays = (
        rules.insurance_pays if isinstance(rules, HybridRules | HybridSharedRules) else Fraction(2)
    )
    hits_soft_17 = bool(getattr(rules, "dealer_hits_soft_17", False))
    lines = [
        f"Blackjack pays {format_odds(blackjack_pays)}.",
        "Dealer stands on all soft 17s." if not hits_soft_17 else "Dealer hits soft 17.",
        f"Insurance pays {format_odds(insurance_pays)}.",
    ]
    default_text = {
        "stand": "your hand stands",
        "hit-hard-11-or-less": "a hard total of 11 or less is hit automatically, any other hand "
        "stands",
    }.get(countdown_default, countdown_default)
    hits: list[str] = []
    if isinstance(rules, HybridRules | HybridSharedRules):  # own options (633c.5(z), (c)(2))
        default_text = rules.countdown_text()
        hits = [row["total"] for row in rules.countdown_rows() if row["action"] == "hit"]
    lines.append(
        f"If you do not hit or stand before the {int(countdown_seconds)}-second countdown clock "
        f"ends, {default_text}."
    )
    lines.append(
        f"Wagers from {format_cents(rules.table_minimum)} to {format_cents(rules.table_maximum)}."
    )
    buzzer: list[dict[str, str]] = []
    if isinstance(rules, HybridRules) and rules.buzzer_beater:
        lines.append(
            "Buzzer Beater: an optional wager that your hand will be 19 or better and the "
            "dealer's hand will equal or beat it without exceeding 21."
        )
        for row in rules.buzzer_beater_paytable:
            buzzer.append(
                {
                    "player": row.player,
                    "dealer": " or ".join(row.dealer),
                    "pays": format_odds(row.pays),
                }
            )
    offered = (
        [
            label
            for shown, label in (
                (rules.royal_match, "Royal Match 21"),
                (rules.bet_the_set, "Bet the Set"),
                (rules.kings_bounty, "King's Bounty"),
            )
            if shown
        ]
        if isinstance(rules, HybridSharedRules)
        else []
    )
    if offered:
        lines.append(
            "Optional side wagers: " + ", ".join(offered) + ", paid as the posted paytables show."
        )
    if isinstance(rules, ClassicRules) and rules.ez_bust:
        lines.append("EZ Bust: an optional wager that the dealer busts, pays 1 to 1.")
    shared = rules if isinstance(rules, HybridSharedRules) else None
    facts = {
        "blackjack_pays": [blackjack_pays.numerator, blackjack_pays.denominator],
        "dealer_hits_soft_17": hits_soft_17,
        "insurance_pays": [insurance_pays.numerator, insurance_pays.denominator],
        "countdown_seconds": int(countdown_seconds),
        "countdown_default": countdown_default,
        "countdown_hits": hits,
        "table_minimum": rules.table_minimum,
        "table_maximum": rules.table_maximum,
        "decks": rules.decks,
        "side_wager_minimum": None if shared is None else shared.side_wager_minimum,
        "side_wager_maximum": None if shared is None else shared.side_wager_maximum,
    }
    return {
        "lines": lines,
        "buzzer_beater": buzzer,
        "countdown_default": countdown_default,
        "facts": facts,
        "paytables": paytables(rules),
    }
