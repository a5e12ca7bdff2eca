"""Exact side-wager math by enumeration of the cards (hybrid-shared: PA 633c.5(x), (dd), (ee)).

Royal Match 21 (with the Crown Treasure bonus), Bet the Set and King's Bounty are decided by
the player's first two cards and, for two lines, by the dealer's two cards as formed for that
player (A-11). Every ordered deal of card identities (rank and suit) is enumerated from a shoe
of ``decks`` decks, with exact rational probabilities (:class:`fractions.Fraction`); each deal is
judged by the engine's own functions (:func:`tablejack.games.hybrid_shared_rules.royal_match_lines`
and the others) and paid by the engine's rule: the highest line only, the Crown Treasure bonus
in addition to the Royal Match line or instead of it (633c.5(dd); § 633a.7(g)(4)–(6)).

The dealer's second card for a player is the first community card after that player's last
card. Whatever the player's strategy, that card is distributed as the fourth card of the shoe
(the share of each card left in the shoe is a martingale, so it is the same at the stopping
time): the figures below are exact for every strategy.

>>> from fractions import Fraction
>>> bts = bet_the_set(6, (("suited-pair", Fraction(15)), ("pair", Fraction(10))))
>>> round(bts["house_edge"] * 100, 2)
10.61
>>> rm = royal_match(6, (("royal-match", Fraction(25)), ("suited-match", Fraction(5, 2))))
>>> round(rm["house_edge"] * 100, 4)
6.6658
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from typing import Any

from tablejack.core.cards import Card, full_deck
from tablejack.games.hybrid_shared_rules import (
    Paytable,
    bet_the_set_lines,
    is_royal_match,
    kings_bounty_lines,
    royal_match_lines,
)

__all__ = ["bet_the_set", "kings_bounty", "royal_match", "side_wager"]

DECK: tuple[Card, ...] = full_deck()


def _sequence_probability(decks: int, cards: Sequence[int]) -> Fraction:
    """Probability that the shoe's first cards are exactly the card identities ``cards``
    (indices into :data:`DECK`), in that order."""
    total = 52 * decks
    seen: dict[int, int] = defaultdict(int)
    p = Fraction(1)
    for i, card in enumerate(cards):
        left = decks - seen[card]
        if left <= 0:
            return Fraction(0)
        p *= Fraction(left, total - i)
        seen[card] += 1
    return p


@cache
def _player_pairs(decks: int) -> tuple[tuple[int, int, Fraction], ...]:
    """Every ordered pair of the player's card identities with its probability."""
    out = []
    for a in range(52):
        for b in range(52):
            p = _sequence_probability(decks, (a, b))
            if p:
                out.append((a, b, p))
    return tuple(out)


def _dealer_probability(
    decks: int, a: int, b: int, event: Callable[[Card, Card], bool]
) -> Fraction:
    """Probability that the dealer's two cards (the second and fourth cards of the deal, A-11)
    satisfy ``event``, given the player's cards ``a`` and ``b`` (the first and third)."""
    p = Fraction(0)
    for up in range(52):
        for second in range(52):
            if event(DECK[up], DECK[second]):
                p += _sequence_probability(decks, (a, b, up, second))
    return p / _sequence_probability(decks, (a, b))


def _dealer_blackjack(up: Card, second: Card) -> bool:
    return (up.is_ace and second.is_ten_value) or (second.is_ace and up.is_ten_value)


def _best(table: Paytable, matched: Sequence[str]) -> tuple[str, Fraction]:
    best_line, best = "", Fraction(0)
    for line, odds in table:
        if line in matched and odds > best:
            best_line, best = line, odds
    return best_line, best


def _summary(
    wager: str, outcomes: dict[tuple[str, Fraction], Fraction], table: Paytable, **extra: Any
) -> dict[str, Any]:
    """House edge, hit frequency, standard deviation and the lines of a wager whose results are
    ``outcomes``: (line, odds) -> probability (``("no line", -1)`` for the loss)."""
    mean = sum((p * odds for (_, odds), p in outcomes.items()), Fraction(0))
    second = sum((p * odds * odds for (_, odds), p in outcomes.items()), Fraction(0))
    hits = sum((p for (_, odds), p in outcomes.items() if odds > 0), Fraction(0))
    lines = [
        {
            "line": line,
            "pays": float(odds),
            "odds": f"{odds.numerator} to {odds.denominator}" if odds > 0 else "loses",
            "probability": float(p),
            "probability_exact": f"{p.numerator}/{p.denominator}",
            "return": float(p * odds),
            "method": "exact",
        }
        for (line, odds), p in sorted(outcomes.items(), key=lambda item: -item[0][1])
    ]
    return {
        "wager": wager,
        "paytable": [[line, f"{odds.numerator} to {odds.denominator}"] for line, odds in table],
        "house_edge": float(-mean),
        "house_edge_exact": f"{(-mean).numerator}/{(-mean).denominator}",
        "hit_frequency": float(hits),
        "stdev": math.sqrt(float(second - mean * mean)),
        "lines": lines,
        **extra,
    }


def royal_match(
    decks: int,
    table: Paytable,
    *,
    crown_treasure: Fraction | None = None,
    in_addition: bool = True,
) -> dict[str, Any]:
    """Royal Match 21 (§ 633a.13(f)) on the player's first two cards, with the Crown Treasure
    bonus ``crown_treasure`` (odds; None: not offered) when the dealer's two cards are a Royal
    Match too (A-11), paid in addition to the line or instead of it.

    >>> t = (("royal-match", Fraction(10)), ("suited-match", Fraction(3)))
    >>> round(royal_match(8, t)["house_edge"] * 100, 3)  # a player edge (§6.2, version 2)
    -1.353
    """
    outcomes: dict[tuple[str, Fraction], Fraction] = defaultdict(Fraction)
    for a, b, p_deal in _player_pairs(decks):
        p = p_deal
        first, second = DECK[a], DECK[b]
        matched = royal_match_lines(first, second)
        line, odds = _best(table, matched)
        if crown_treasure and "royal-match" in matched:
            p_crown = _dealer_probability(decks, a, b, is_royal_match)
            if in_addition:
                bonus_line = f"{line} + crown-treasure" if line else "crown-treasure"
                outcomes[(bonus_line, odds + crown_treasure)] += p * p_crown
            else:
                outcomes[("crown-treasure", crown_treasure)] += p * p_crown
            p *= 1 - p_crown
        outcomes[(line, odds) if odds else ("no line", Fraction(-1))] += p
    return _summary(
        "royal_match",
        dict(outcomes),
        table,
        decks=decks,
        crown_treasure=None if crown_treasure is None else float(crown_treasure),
        crown_treasure_in_addition=in_addition,
    )


def bet_the_set(decks: int, table: Paytable) -> dict[str, Any]:
    """Bet the Set (§ 633a.13(g)): a pair of the same rank (A-12), suited or not.

    >>> t = (("suited-pair", Fraction(20)), ("pair", Fraction(10)))
    >>> round(bet_the_set(8, t)["house_edge"] * 100, 2)
    0.96
    """
    outcomes: dict[tuple[str, Fraction], Fraction] = defaultdict(Fraction)
    for a, b, p_deal in _player_pairs(decks):
        p = p_deal
        line, odds = _best(table, bet_the_set_lines(DECK[a], DECK[b]))
        outcomes[(line, odds) if odds else ("no line", Fraction(-1))] += p
    return _summary("bet_the_set", dict(outcomes), table, decks=decks)


def kings_bounty(decks: int, table: Paytable) -> dict[str, Any]:
    """King's Bounty (§ 633a.13(h)): a two-card 20, the top line (two kings of spades and a
    dealer Blackjack, A-11) judged with the dealer's two cards.

    >>> from tablejack.games.hybrid_shared_rules import KINGS_BOUNTY_TABLES
    >>> round(kings_bounty(2, KINGS_BOUNTY_TABLES["two-deck"])["house_edge"] * 100, 3)
    24.733
    """
    outcomes: dict[tuple[str, Fraction], Fraction] = defaultdict(Fraction)
    top = any(line == "spade-kings-dealer-blackjack" for line, _ in table)
    for a, b, p_deal in _player_pairs(decks):
        p = p_deal
        first, second = DECK[a], DECK[b]
        plain = kings_bounty_lines(first, second, False)
        if top and "spade-kings" in plain:
            p_bj = _dealer_probability(decks, a, b, _dealer_blackjack)
            line, odds = _best(table, kings_bounty_lines(first, second, True))
            outcomes[(line, odds)] += p * p_bj
            p *= 1 - p_bj
        line, odds = _best(table, plain)
        outcomes[(line, odds) if odds else ("no line", Fraction(-1))] += p
    return _summary("kings_bounty", dict(outcomes), table, decks=decks)


def side_wager(rules: Any, wager: str, decks: int | None = None) -> dict[str, Any]:
    """The exact figures of one side wager of a :class:`HybridSharedRules` (``royal_match``,
    ``bet_the_set`` or ``kings_bounty``) for ``decks`` (default: the rules' decks)."""
    n = rules.decks if decks is None else decks
    if wager == "royal_match":
        return royal_match(
            n,
            rules.royal_match_lines(),
            crown_treasure=rules.crown_treasure_pays if rules.crown_treasure else None,
            in_addition=rules.crown_treasure_in_addition,
        )
    if wager == "bet_the_set":
        return bet_the_set(n, rules.bet_the_set_lines())
    if wager == "kings_bounty":
        return kings_bounty(n, rules.kings_bounty_lines())
    raise ValueError(f"{wager!r} is not a side wager of the hybrid-shared game.")
