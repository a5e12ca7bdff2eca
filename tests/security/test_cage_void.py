"""A voucher the cage sold, voided before it is used (PA 605a.5(c)), tried as an attacker on
SQLite and PostgreSQL: a voucher already paid cannot be voided, a voided one cannot be paid at
the cage or redeemed at a terminal, a player cannot void, a voucher a terminal issued is not
the cage's to void, a void names its reason, two voids of one voucher (even at once, from two
processes) move its money once, and a void above the sale approval limit waits for a
supervisor. ``verify-log`` holds after each."""

from __future__ import annotations

from typing import Any

from tablejack.store.policy import Actor, Role
from tablejack.store.settings import FloorRefusedError
from tablejack.store.vouchers import void_voucher
from tests.security.conftest import TERMINALS, Floorkit
from tests.support.floor import auth, insert


def _sell(floor: Floorkit, amount: int = 2500) -> dict[str, Any]:
    sold = floor.client.post(
        "/api/cage/vouchers/sell", json={"amount": amount}, headers=auth("cashier")
    )
    assert sold.status_code == 200, sold.text
    return dict(sold.json())


def _void(floor: Floorkit, code: str, who: str = "cashier", reason: str = "sold in error") -> Any:
    return floor.client.post(
        "/api/cage/vouchers/void", json={"code": code, "reason": reason}, headers=auth(who)
    )


def _vouchers_account(floor: Floorkit) -> int:
    return floor.balances().get("vouchers", 0)


def test_605a5c_a_sold_voucher_voided_hands_its_cash_back_once_and_pays_nowhere(
    floor: Floorkit,
) -> None:
    sold = _sell(floor)
    before = floor.balances()
    voided = _void(floor, sold["validation_code"])
    assert voided.status_code == 200, voided.text
    assert (voided.json()["kind"], voided.json()["amount"]) == ("voucher_voided", 2500)
    after = floor.balances()
    assert after["vouchers"] == before["vouchers"] - 2500
    assert after["cage"] == before["cage"] + 2500
    looked = floor.client.post(
        "/api/cage/vouchers/lookup", json={"code": sold["validation_code"]}, headers=auth("cashier")
    ).json()
    assert (looked["status"], looked["payable"]) == ("voided", False)
    # the cage does not pay it, a terminal does not redeem it: each names the rule
    paid = floor.client.post(
        "/api/cage/vouchers", json={"code": sold["validation_code"]}, headers=auth("cashier")
    )
    assert paid.status_code == 409 and paid.json()["detail"]["code"] == "voided"
    assert "voided" in paid.json()["detail"]["rule"]
    ann = floor.session("ann", "EWT-1")
    redeemed = insert(
        floor.client,
        "/api/floor/voucher-in",
        json={"code": sold["validation_code"]},
        headers=ann,
        terminal_key=TERMINALS["EWT-1"],
    )
    assert redeemed.status_code == 409, redeemed.text
    assert redeemed.json()["detail"]["code"] == "voided"
    assert floor.balances() == after
    # voided twice: the second moves nothing
    again = _void(floor, sold["validation_code"])
    assert again.status_code == 409 and again.json()["detail"]["code"] == "voided"
    assert floor.balances() == after
    audit = floor.client.get("/api/audit", headers=auth("super")).json()
    assert any(row["kind"] == "voucher_voided" for row in audit)
    report = floor.verify()
    assert report.ok, report.problems


def test_605a5c_a_paid_voucher_cannot_be_voided(floor: Floorkit) -> None:
    sold = _sell(floor)
    paid = floor.client.post(
        "/api/cage/vouchers", json={"code": sold["validation_code"]}, headers=auth("cashier")
    )
    assert paid.status_code == 200, paid.text
    before = floor.balances()
    rows = floor.ledger_rows()
    voided = _void(floor, sold["validation_code"])
    assert voided.status_code == 409 and voided.json()["detail"]["code"] == "redeemed"
    assert floor.balances() == before and floor.ledger_rows() == rows


def test_605a5c_a_player_cannot_void_and_a_void_names_its_reason(floor: Floorkit) -> None:
    sold = _sell(floor)
    before = floor.balances()
    for who in ("ann", "dealer", "super", "operator"):
        refused = _void(floor, sold["validation_code"], who=who)
        assert refused.status_code == 403, (who, refused.text)
    ann = floor.session("ann", "EWT-1")
    by_session = floor.client.post(
        "/api/cage/vouchers/void",
        json={"code": sold["validation_code"], "reason": "mine"},
        headers=ann,
    )
    assert by_session.status_code == 403, by_session.text
    for reason in ("", "   "):
        blank = _void(floor, sold["validation_code"], reason=reason)
        assert blank.status_code == 422, blank.text
    assert floor.balances() == before

    # nor by the store's own door: a player's actor is refused, naming the rule
    async def as_player(store: Any) -> Any:
        try:
            await void_voucher(
                store, sold["validation_code"], "mine", actor=Actor(Role.PLAYER, "ann", "EWT-1")
            )
        except FloorRefusedError as refusal:
            return refusal
        return None

    refusal = floor.run(as_player)
    assert refusal is not None and refusal.code == "role" and "voided" in refusal.rule
    assert floor.balances() == before


def test_605a5c_a_voucher_a_terminal_issued_is_not_the_cages_to_void(floor: Floorkit) -> None:
    ann = floor.session("ann", "EWT-1")
    out = floor.client.post("/api/floor/cash-out", json={"amount": 1000}, headers=ann)
    assert out.status_code == 200, out.text
    before = floor.balances()
    voided = _void(floor, out.json()["validation_code"])
    assert voided.status_code == 409 and voided.json()["detail"]["code"] == "not_sold"
    assert floor.balances() == before


def test_605a5c_two_voids_at_once_move_the_money_once(floor: Floorkit) -> None:
    """Two cashiers void one voucher at the same moment from two processes: one moves the
    money, the other is refused."""
    sold = _sell(floor, 4000)
    before = _vouchers_account(floor)
    rows = floor.ledger_rows()

    code = sold["validation_code"]
    results = floor.race(
        lambda store: void_voucher(store, code, "a", actor=Actor(Role.CASHIER, "cleo")),
        lambda store: void_voucher(store, code, "b", actor=Actor(Role.CASHIER, "carl")),
    )
    refused = [r for r in results if isinstance(r, FloorRefusedError)]
    assert len(refused) == 1 and refused[0].code == "voided", results
    assert _vouchers_account(floor) == before - 4000
    assert floor.ledger_rows() == rows + 1
    report = floor.verify()
    assert report.ok, report.problems


def test_605a4d_a_void_above_the_sale_approval_limit_waits_for_a_supervisor(
    floor: Floorkit,
) -> None:
    asked = floor.client.post(
        "/api/cage/vouchers/sell", json={"amount": 400_000}, headers=auth("cashier")
    )
    assert asked.status_code == 202, asked.text
    approved = floor.client.post(
        f"/api/cage/approvals/{asked.json()['request']['id']}/approve", headers=auth("super")
    )
    assert approved.status_code == 200, approved.text
    code = approved.json()["movement"]["validation_code"]
    before = floor.balances()
    waits = _void(floor, code, reason="customer changed his mind")
    assert waits.status_code == 202, waits.text
    request = waits.json()["request"]
    assert (request["kind"], request["amount"], request["reason"]) == (
        "voucher_void",
        400_000,
        "customer changed his mind",
    )
    assert floor.balances() == before  # nothing moved yet
    done = floor.client.post(f"/api/cage/approvals/{request['id']}/approve", headers=auth("super"))
    assert done.status_code == 200, done.text
    assert done.json()["movement"]["kind"] == "voucher_voided"
    assert floor.balances()["vouchers"] == before["vouchers"] - 400_000
    report = floor.verify()
    assert report.ok, report.problems


def _tamper(floor: Floorkit, sql: str) -> list[str]:
    from sqlalchemy import text

    from tests.support.store import drop_guards

    async def body(store: Any) -> None:
        await drop_guards(store)
        async with store.engine.begin() as connection:
            await connection.execute(text(sql))

    floor.run(body)
    return list(floor.verify(strict=True).problems)


def test_605a5c_a_voided_voucher_revived_or_a_live_one_marked_voided_is_found(
    floor: Floorkit,
) -> None:
    """An insider who sets a voided voucher back to issued (to cash it again), or marks a live
    one voided behind the server's back, is named by ``verify-log``."""
    voided = _sell(floor, 1500)
    live = _sell(floor, 700)
    assert _void(floor, voided["validation_code"]).status_code == 200
    floor.stop()
    assert floor.verify(strict=True).problems == []
    number, other = int(voided["voucher_number"]), int(live["voucher_number"])
    found = _tamper(floor, f"UPDATE vouchers SET status = 'issued' WHERE id = {number}")
    assert any(p.startswith(f"voucher {number:012d}: marked issued but") for p in found), found
    found = _tamper(floor, f"UPDATE vouchers SET status = 'voided' WHERE id = {other}")
    assert any(
        p.startswith(f"voucher {other:012d}: marked voided but no event voided it") for p in found
    ), found
