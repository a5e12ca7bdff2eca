"""The one lock guard for wagers and money (PA 605a lock-out): what a terminal under each lock
still does (:data:`tablejack.server.duties.protections.LOCK_ALLOWS`), and the refusals that
name the lock and the rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablejack.server.duties.protections import (
    ACTIONS,
    LOCK_ALLOWS,
    allowed_under,
    lock_refusal,
)
from tablejack.store.protections import TILT_CODES, TILT_RULE

EXPECTED = {
    "door_open": set(),
    "bill_validator": set(),
    "printer": set(),
    "connection_lost": {"cash_out"},
    "reader_fault": {"cash_out"},
    "card_not_requested": {"cash_out"},
    "card_inventory": {"cash_out"},
    "storage_error": set(),
    "other": set(),
    "host_disabled": {"cash_out"},
    "host_link_lost": {"cash_out"},
    "handpay_pending": set(),
}
"""The table as docs/floor.md documents it."""
CODES = sorted(set(TILT_CODES) | set(LOCK_ALLOWS) | {"a_code_nobody_knows"})


def test_605a_every_tilt_code_has_its_row_and_the_table_is_the_documented_one() -> None:
    assert set(TILT_CODES) <= set(LOCK_ALLOWS)
    assert {code: set(allows) for code, allows in LOCK_ALLOWS.items()} == EXPECTED
    assert all(allows <= set(ACTIONS) for allows in LOCK_ALLOWS.values())


@pytest.mark.parametrize("code", CODES)
def test_605a_a_locked_terminal_takes_no_wager_and_no_money_in(code: str) -> None:
    for action in ("wager", "bill_in", "voucher_in"):
        assert not allowed_under([code], action)
        refusal = lock_refusal("EWT-1", [{"code": code}], action)
        assert refusal is not None
        assert (refusal.code, refusal.rule) == ("tilt", TILT_RULE)
        assert code in refusal.message


def test_605a_a_cash_out_only_where_the_lock_lets_the_player_leave() -> None:
    assert allowed_under(["host_disabled"], "cash_out")
    assert allowed_under(["host_link_lost"], "cash_out")
    for code in ("handpay_pending", "bill_validator", "door_open", "a_code_nobody_knows"):
        refusal = lock_refusal("EWT-1", [{"code": code}], "cash_out")
        assert refusal is not None and "cash-out" in refusal.message
    assert lock_refusal("EWT-1", [{"code": "host_disabled"}], "cash_out") is None


def test_605a_an_unlocked_terminal_does_everything_and_a_wager_refusal_reads_as_before() -> None:
    for action in ACTIONS:
        assert lock_refusal("EWT-1", [], action) is None
    refusal = lock_refusal("EWT-1", [{"code": "door_open"}, {"code": "printer"}], "wager")
    assert refusal is not None
    assert (
        refusal.message
        == "Terminal EWT-1 is locked (door_open, printer); a supervisor must clear it."
    )


@given(st.lists(st.sampled_from(CODES), max_size=4), st.sampled_from(ACTIONS))
def test_605a_several_locks_allow_only_what_each_allows(codes: list[str], action: str) -> None:
    each = all(action in LOCK_ALLOWS.get(code, frozenset()) for code in codes)
    assert allowed_under(codes, action) == each
    refusal = lock_refusal("EWT-1", [{"code": code} for code in codes], action)
    assert (refusal is None) == (not codes or each)
