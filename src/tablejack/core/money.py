"""Exact money: integer cents, odds as :class:`fractions.Fraction`, rounding as a named policy.

No float ever carries money. An uneven payout (3 to 2 on an odd number of cents, half of an odd
wager on surrender) is rounded by the :class:`RoundingPolicy` the rules name, and the rounding is
recorded in the settlement.

>>> format_cents(150050)
'$1,500.50'
>>> parse_money("$25"), parse_money("12.5"), parse_money(1000)
(2500, 1250, 1000)
>>> parse_odds("3:2"), parse_odds("30 to 1")
(Fraction(3, 2), Fraction(30, 1))
>>> winnings(1001, parse_odds("3:2"), RoundingPolicy.DOWN)
(1501, Fraction(1, 2))
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from enum import Enum
from fractions import Fraction

from tablejack.core.errors import InvalidNotationError

__all__ = [
    "RoundingPolicy",
    "format_cents",
    "format_odds",
    "parse_money",
    "parse_odds",
    "winnings",
]


class RoundingPolicy(Enum):
    """How an uneven payout is rounded to a whole cent (PA 633a.13 payouts; house policy).

    ``DOWN``: the player receives the whole cents, the fraction stays with the house.
    ``HALF_UP``: round to the nearest cent, half a cent up.
    ``UP``: the player receives the next whole cent.
    """

    DOWN = "down"
    HALF_UP = "half-up"
    UP = "up"

    def round(self, exact: Fraction) -> int:
        """Round an exact non-negative amount of cents to a whole number of cents."""
        whole, rest = divmod(exact.numerator, exact.denominator)
        if rest == 0 or self is RoundingPolicy.DOWN:
            return whole
        if self is RoundingPolicy.UP:
            return whole + 1
        return whole + 1 if 2 * rest >= exact.denominator else whole


def winnings(amount: int, odds: Fraction, policy: RoundingPolicy) -> tuple[int, Fraction]:
    """What ``amount`` cents win at ``odds``, rounded by ``policy``; also the rounding made
    (exact minus paid, positive when the player received less than the exact amount)."""
    exact = amount * odds
    paid = policy.round(exact)
    return paid, exact - paid


def format_cents(cents: int, *, signed: bool = False) -> str:
    """``$1,234.56`` (``+``/``-`` prefixed when ``signed``)."""
    sign = "-" if cents < 0 else ("+" if signed and cents > 0 else "")
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


_MONEY = re.compile(r"^([+-]?)\$?\s*([0-9][0-9,]*(?:\.[0-9]{1,2})?|\.[0-9]{1,2})$")


def parse_money(value: int | str) -> int:
    """Money as integer cents: an ``int`` is cents already; text is dollars (``"$25.00"``,
    ``"25"``, ``"1,000.5"``). Floats are refused: they cannot carry cents exactly.

    >>> parse_money(2.5)
    Traceback (most recent call last):
    ...
    tablejack.core.errors.InvalidNotationError: 2.5 is not money: give integer cents or dollars as text such as "$25.00".
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidNotationError(
            f'{value!r} is not money: give integer cents or dollars as text such as "$25.00".'
        )
    if isinstance(value, int):
        return value
    match = _MONEY.match(value.strip())
    if match is None:
        raise InvalidNotationError(f'{value!r} is not money: write dollars such as "$25.00".')
    try:
        dollars = Decimal(match.group(2).replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise InvalidNotationError(f"{value!r} is not money.") from None
    cents = int(dollars * 100)
    return -cents if match.group(1) == "-" else cents


_ODDS = re.compile(r"^\s*([0-9]+)\s*(?::|to|TO|/)\s*([0-9]+)\s*$")


def parse_odds(value: str | Fraction | int) -> Fraction:
    """Odds ``"3:2"``, ``"3 to 2"`` or a :class:`Fraction` as the win per unit wagered."""
    if isinstance(value, Fraction):
        odds = value
    elif isinstance(value, int) and not isinstance(value, bool):
        odds = Fraction(value)
    elif isinstance(value, str) and (match := _ODDS.match(value)) is not None:
        if int(match.group(2)) == 0:
            raise InvalidNotationError(f"{value!r} is not odds: the second number must not be 0.")
        odds = Fraction(int(match.group(1)), int(match.group(2)))
    else:
        raise InvalidNotationError(f'{value!r} is not odds; write them as "3 to 2" or "3:2".')
    if odds < 0:
        raise InvalidNotationError(f"Odds {value!r} must not be negative.")
    return odds


def format_odds(odds: Fraction) -> str:
    """``Fraction(3, 2)`` as ``'3 to 2'``."""
    return f"{odds.numerator} to {odds.denominator}"
