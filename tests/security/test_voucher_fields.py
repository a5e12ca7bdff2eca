"""Every field of a voucher is under the chain (PA 605a.5(c)): an insider who edits a voucher
row behind the server's back — with the database owner's rights, its guards removed — is found
by ``verify-log``, whichever field he edits:

* **issued** (``issued_us``): back-dated, a live voucher is refused as expired; forward-dated,
  an expired one is paid;
* **validated by** (``validated_by``): which host may redeem it (SAS system validation);
* **terminal**: where it was issued;
* **expiry**: it runs from ``issued_us`` by the floor's ``voucher_expiry_days``, a setting under
  the settings log;
* **state** (``status``): issued or redeemed — and a redeemed voucher's when, to whom and where.

Each test plays a floor (ann cashes out $20 to a voucher at EWT-1 and bob redeems it at EWT-2;
cat's $5 voucher stays issued), stops the server (a last signed checkpoint), edits one field and
asserts that ``verify-log`` names the voucher and the field. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from tablejack.store import Store
from tests.support.floor import auth
from tests.support.store import drop_guards

from .conftest import Floorkit

DAY_US = 86_400_000_000


def play(floor: Floorkit, *, expiry_days: int = 0) -> dict[str, int]:
    """ann's $20 voucher redeemed by bob, and bob's $5 voucher left issued; the server stopped.
    The two vouchers' numbers."""
    if expiry_days:
        answer = floor.client.put(
            "/api/floor/settings",
            json={"key": "voucher_expiry_days", "value": expiry_days},
            headers=auth("operator"),
        )
        assert answer.status_code == 200, answer.text
    ann = floor.session("ann", "EWT-1")
    paid = floor.client.post("/api/floor/cash-out", json={"amount": 2000}, headers=ann)
    assert paid.status_code == 200, paid.text
    bob = floor.session("bob", "EWT-2")
    code = paid.json()["validation_code"]
    redeemed = floor.client.post("/api/floor/voucher-in", json={"code": code}, headers=bob)
    assert redeemed.status_code == 200, redeemed.text
    live = floor.client.post("/api/floor/cash-out", json={"amount": 500}, headers=bob)
    assert live.status_code == 200, live.text
    floor.stop()
    assert floor.verify(strict=True).problems == []
    return {
        "redeemed": int(paid.json()["voucher_number"]),
        "live": int(live.json()["voucher_number"]),
    }


def tamper(floor: Floorkit, sql: str) -> list[str]:
    """Remove the database's guards, run ``sql``; what ``verify-log`` then reports."""

    async def body(store: Store) -> None:
        await drop_guards(store)
        async with store.engine.begin() as connection:
            await connection.execute(text(sql))

    floor.run(body)
    return floor.verify(strict=True).problems


def named(found: list[str], number: int, *words: str) -> bool:
    return any(
        p.startswith(f"voucher {number:012d}: ") and all(w in p for w in words) for p in found
    )


def test_605a5c_a_voucher_back_dated_to_expire_it_is_found(floor: Floorkit) -> None:
    vouchers = play(floor, expiry_days=30)
    live = vouchers["live"]
    found = tamper(
        floor, f"UPDATE vouchers SET issued_us = issued_us - {400 * DAY_US} WHERE id = {live}"
    )
    assert named(found, live, "its row was issued at", "its expiry runs from it"), found


def test_605a5c_a_voucher_forward_dated_to_outlive_its_expiry_is_found(floor: Floorkit) -> None:
    vouchers = play(floor)
    live = vouchers["live"]
    found = tamper(floor, f"UPDATE vouchers SET issued_us = issued_us + 1 WHERE id = {live}")
    assert named(found, live, "its row was issued at"), found


def test_605a5c_a_voucher_given_to_another_validating_host_is_found(floor: Floorkit) -> None:
    live = play(floor)["live"]
    found = tamper(floor, f"UPDATE vouchers SET validated_by = 'sas:0099' WHERE id = {live}")
    assert named(found, live, "validated by 'sas:0099'", "says None"), found


def test_605a5c_a_voucher_moved_to_another_terminal_is_found(floor: Floorkit) -> None:
    live = play(floor)["live"]
    found = tamper(floor, f"UPDATE vouchers SET terminal = 'EWT-3' WHERE id = {live}")
    assert named(found, live, "names terminal 'EWT-3'", "at 'EWT-2'"), found


def test_605a5c_a_vouchers_expiry_changed_in_the_database_is_found(floor: Floorkit) -> None:
    """The expiry is ``issued_us`` plus the floor's ``voucher_expiry_days``: the setting's row
    is compared with the settings log (and ``issued_us`` with its event, above)."""
    play(floor, expiry_days=30)
    found = tamper(floor, "UPDATE floor_settings SET value = '1' WHERE key = 'voucher_expiry_days'")
    assert any(
        p.startswith("floor setting voucher_expiry_days is 1 but floor-settings #1 set it to 30")
        for p in found
    ), found


@pytest.mark.parametrize("state", ["void", "expired", "redeemed"])
def test_605a5c_a_live_vouchers_state_changed_is_found(floor: Floorkit, state: str) -> None:
    live = play(floor)["live"]
    found = tamper(floor, f"UPDATE vouchers SET status = '{state}' WHERE id = {live}")
    if state == "redeemed":
        assert named(found, live, "marked redeemed but no event redeemed it"), found
    else:
        assert named(found, live, f"its state is '{state}'"), found


@pytest.mark.parametrize(
    ("column", "value"),
    [("redeemed_terminal", "'EWT-3'"), ("redeemed_account", "'cat'"), ("redeemed_us", "1")],
)
def test_605a5c_a_redeemed_vouchers_redemption_changed_is_found(
    floor: Floorkit, column: str, value: Any
) -> None:
    redeemed = play(floor)["redeemed"]
    found = tamper(floor, f"UPDATE vouchers SET {column} = {value} WHERE id = {redeemed}")
    assert named(found, redeemed, "its row says redeemed by", "but acct:EWT-2"), found
