"""Settlement records and the exactly-once check that keeps every round balanced."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tablejack.core import Result, Settlement, Wager, WagerKind, check_settlements


def _wager(wager_id: int, amount: int = 1000) -> Wager:
    return Wager(wager_id, 1, "ann", WagerKind.BLACKJACK, amount, 0)


def _settle(wager_id: int, result: Result, returned: int, amount: int = 1000) -> Settlement:
    return Settlement(wager_id, 1, "ann", WagerKind.BLACKJACK, 0, amount, result, returned, "x")


def test_settlement_net_winnings_and_wager_returned() -> None:
    win = _settle(0, Result.WIN, 2000)
    lose = _settle(0, Result.LOSE, 0)
    surrender = _settle(0, Result.SURRENDER, 500)
    assert (win.net, win.winnings, win.wager_returned) == (1000, 1000, 1000)
    assert (lose.net, lose.winnings, lose.wager_returned) == (-1000, 0, 0)
    assert (surrender.net, surrender.winnings, surrender.wager_returned) == (-500, 0, 500)
    assert win.to_json()["net"] == 1000
    assert win.to_json()["rounding"] == "0"
    assert "$10.00" in win.describe()
    assert "$10.00 returned" in _settle(0, Result.PUSH, 1000).describe()


def test_check_settlements_returns_the_house_net() -> None:
    wagers = [_wager(0), _wager(1, 500), _wager(2)]
    settlements = [
        _settle(0, Result.WIN, 2000),
        _settle(1, Result.LOSE, 0, 500),
        _settle(2, Result.BLACKJACK, 2500),
    ]
    assert check_settlements(wagers, settlements) == -1000 + 500 - 1500


def test_check_settlements_refuses_a_double_settlement() -> None:
    with pytest.raises(AssertionError, match="settled twice"):
        check_settlements([_wager(0)], [_settle(0, Result.WIN, 2000), _settle(0, Result.WIN, 2000)])


def test_check_settlements_refuses_a_missing_settlement() -> None:
    with pytest.raises(AssertionError, match=r"never settled: \[1\]"):
        check_settlements([_wager(0), _wager(1)], [_settle(0, Result.LOSE, 0)])


def test_check_settlements_refuses_unknown_wrong_amount_and_negative() -> None:
    with pytest.raises(AssertionError, match="unknown wager"):
        check_settlements([_wager(0)], [_settle(5, Result.LOSE, 0)])
    with pytest.raises(AssertionError, match="settled as"):
        check_settlements([_wager(0)], [_settle(0, Result.LOSE, 0, amount=900)])
    with pytest.raises(AssertionError, match="negative"):
        check_settlements([_wager(0)], [_settle(0, Result.LOSE, -1)])


def test_rounding_is_recorded() -> None:
    settlement = Settlement(
        0, 1, "ann", WagerKind.BLACKJACK, 0, 1001, Result.BLACKJACK, 2502, "x", Fraction(1, 2)
    )
    assert settlement.rounding == Fraction(1, 2)
    assert settlement.to_json()["rounding"] == "1/2"
