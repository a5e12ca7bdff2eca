"""Exact money: integer cents, odds as fractions, rounding as a named policy (§ 633a.13)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tablejack.core import (
    InvalidNotationError,
    RoundingPolicy,
    format_cents,
    format_odds,
    parse_money,
    parse_odds,
    winnings,
)


@pytest.mark.parametrize(
    ("value", "cents"),
    [
        (1000, 1000),
        ("$25", 2500),
        ("25", 2500),
        ("$25.00", 2500),
        ("12.5", 1250),
        ("0.05", 5),
        (".75", 75),
        ("1,000.50", 100050),
        ("$ 7", 700),
        ("-$3.10", -310),
        ("+4", 400),
    ],
)
def test_parse_money(value: int | str, cents: int) -> None:
    assert parse_money(value) == cents


@pytest.mark.parametrize("value", [2.5, True, None, "ten", "$1.234", "", "$", "1e3", [1]])
def test_parse_money_refuses_floats_and_junk(value: object) -> None:
    with pytest.raises(InvalidNotationError):
        parse_money(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cents", "text", "signed"),
    [(150050, "$1,500.50", "+$1,500.50"), (5, "$0.05", "+$0.05"), (0, "$0.00", "$0.00")],
)
def test_format_cents(cents: int, text: str, signed: str) -> None:
    assert format_cents(cents) == text
    assert format_cents(cents, signed=True) == signed
    assert parse_money(text) == cents
    assert format_cents(-cents) == ("-" + text if cents else text)


@pytest.mark.parametrize(
    ("text", "odds"),
    [("3:2", Fraction(3, 2)), ("3 to 2", Fraction(3, 2)), ("6/5", Fraction(6, 5)), ("1:1", 1)],
)
def test_parse_odds(text: str, odds: Fraction) -> None:
    assert parse_odds(text) == odds
    assert parse_odds(format_odds(parse_odds(text))) == odds
    assert parse_odds(Fraction(odds)) == odds


@pytest.mark.parametrize("text", ["3", "3:0", "three to two", "-3:2", 1.5])
def test_parse_odds_refuses_junk(text: object) -> None:
    with pytest.raises(InvalidNotationError):
        parse_odds(text)  # type: ignore[arg-type]
    with pytest.raises(InvalidNotationError):
        parse_odds(Fraction(-1, 2))


def test_format_odds() -> None:
    assert format_odds(Fraction(3, 2)) == "3 to 2"
    assert format_odds(Fraction(2)) == "2 to 1"


@pytest.mark.parametrize(
    ("policy", "paid", "rounding"),
    [
        (RoundingPolicy.DOWN, 1501, Fraction(1, 2)),
        (RoundingPolicy.HALF_UP, 1502, Fraction(-1, 2)),
        (RoundingPolicy.UP, 1502, Fraction(-1, 2)),
    ],
)
def test_633a13_odd_cents_at_3_to_2_rounded_by_policy(
    policy: RoundingPolicy, paid: int, rounding: Fraction
) -> None:
    assert winnings(1001, Fraction(3, 2), policy) == (paid, rounding)
    assert winnings(1000, Fraction(3, 2), policy) == (1500, Fraction(0))


@pytest.mark.parametrize(
    ("exact", "down", "half_up", "up"),
    [
        (Fraction(7, 5), 1, 1, 2),
        (Fraction(3, 2), 1, 2, 2),
        (Fraction(8, 5), 1, 2, 2),
        (Fraction(4), 4, 4, 4),
    ],
)
def test_rounding_policies(exact: Fraction, down: int, half_up: int, up: int) -> None:
    assert RoundingPolicy.DOWN.round(exact) == down
    assert RoundingPolicy.HALF_UP.round(exact) == half_up
    assert RoundingPolicy.UP.round(exact) == up


def test_6_to_5_on_odd_cents() -> None:
    assert winnings(1005, Fraction(6, 5), RoundingPolicy.DOWN) == (1206, Fraction(0))
    assert winnings(1001, Fraction(6, 5), RoundingPolicy.DOWN) == (1201, Fraction(1, 5))
    assert winnings(1001, Fraction(6, 5), RoundingPolicy.HALF_UP) == (1201, Fraction(1, 5))
    assert winnings(1001, Fraction(6, 5), RoundingPolicy.UP) == (1202, Fraction(-4, 5))
