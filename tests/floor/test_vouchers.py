"""Game accounts and vouchers (PA 605a.2(d), 605a.5(c)), hand pays (605a.5(d), 605a.4(d)):
on SQLite and PostgreSQL, through the REST API and the store, with the abuse cases."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tablejack.store import Store
from tablejack.store.testing import Backend
from tablejack.store.vouchers import (
    FloorRefusedError,
    bill_in,
    cash_out,
    check_code,
    make_validation_code,
    redeem_voucher,
)


def post(client: Any, kit: Any, path: str, who: str, **body: Any) -> Any:
    return client.post(path, json=body, headers=kit.auth(who))


def balance(client: Any, kit: Any, player: str) -> int:
    return int(client.get("/api/me", headers=kit.auth(player)).json()["balance"])


def audit_rules(client: Any, kit: Any) -> list[tuple[str, str]]:
    entries = client.get("/api/audit", headers=kit.auth("super")).json()
    return [(e["kind"], e["rule"]) for e in entries]


def test_605a5c_bill_in_voucher_out_and_a_voucher_redeemed_once_anywhere(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    paid = post(
        client, kit, "/api/floor/bill-in", "dealer", account="cat", terminal="EWT-1", amount=10_000
    )
    assert paid.status_code == 200
    assert (paid.json()["kind"], paid.json()["balance"], paid.json()["log"]) == (
        "bill_in",
        10_000,
        "acct:EWT-1",
    )
    post(client, kit, "/api/floor/bill-in", "dealer", account="cat", terminal="EWT-1", amount=2000)
    out = post(client, kit, "/api/floor/cash-out", "cat", terminal="EWT-1", amount=7000).json()
    assert (out["kind"], out["amount"], out["balance"]) == ("voucher_out", 7000, 5000)
    assert out["voucher_number"] == "000000000001"
    code = out["validation_code"]
    assert check_code(code)
    # the rest, all of it, on a second voucher
    rest = post(client, kit, "/api/floor/cash-out", "cat", terminal="EWT-1").json()
    assert (rest["amount"], rest["balance"], rest["voucher_number"]) == (5000, 0, "000000000002")
    # redeemed by another player at a terminal of another table: anywhere on the floor
    redeemed = post(client, kit, "/api/floor/voucher-in", "bob", terminal="EWT-9", code=code)
    assert redeemed.status_code == 200
    assert (redeemed.json()["kind"], redeemed.json()["amount"]) == ("voucher_in", 7000)
    assert balance(client, kit, "bob") == kit.credit + 7000
    # the second redemption is refused, logged, and changes nothing
    again = post(client, kit, "/api/floor/voucher-in", "ann", terminal="EWT-1", code=code)
    assert again.status_code == 409
    assert again.json()["detail"]["code"] == "redeemed"
    assert again.json()["detail"]["rule"] == "PA 605a.5(c)"
    assert "EWT-9" in again.json()["detail"]["message"]
    assert balance(client, kit, "ann") == kit.credit
    assert ("redeemed", "PA 605a.5(c)") in audit_rules(client, kit)
    record = client.get("/api/floor/vouchers/000000000001", headers=kit.auth("super")).json()
    assert (record["status"], record["amount"], record["terminal"]) == ("redeemed", 7000, "EWT-1")
    assert (record["redeemed_account"], record["redeemed_terminal"]) == ("bob", "EWT-9")
    assert "code_hash" not in record
    # the money: the vouchers account holds exactly the voucher still outstanding
    ledger = client.get("/api/accounts/cat/ledger", headers=kit.auth("super")).json()
    assert [(e["kind"], e["effect"]) for e in ledger["entries"]] == [
        ("voucher_out", -5000),
        ("voucher_out", -7000),
        ("bill_in", 2000),
        ("bill_in", 10_000),
    ]
    vouchers = client.get("/api/accounts/vouchers/ledger", headers=kit.auth("super")).json()
    assert vouchers["balance"] == 5000
    verified = client.get("/api/verify-log", headers=kit.auth("super")).json()
    assert (verified["ok"], verified["problems"]) == (True, [])


def test_605a5c_forged_voucher_codes_are_refused_and_logged(make_client: Any, kit: Any) -> None:
    client = make_client()
    code = post(client, kit, "/api/floor/cash-out", "ann", terminal="EWT-1", amount=1000).json()[
        "validation_code"
    ]
    wrong_digit = code[:-3] + str((int(code[-3]) + 1) % 10) + code[-2:]
    unknown = make_validation_code(1234567890123456)  # check digits right, never issued
    for forged in (wrong_digit, unknown, "not a code", code[:-1]):
        refused = post(client, kit, "/api/floor/voucher-in", "bob", terminal="EWT-2", code=forged)
        assert refused.status_code == 409, forged
        assert refused.json()["detail"]["code"] == "forged"
    assert balance(client, kit, "bob") == kit.credit
    assert audit_rules(client, kit).count(("forged", "PA 605a.5(c)")) == 4
    # the real code, with the printed dashes, still pays once
    printed = "-".join(code[i : i + 4] for i in range(0, 18, 4))
    ok = post(client, kit, "/api/floor/voucher-in", "bob", terminal="EWT-2", code=printed)
    assert ok.json()["amount"] == 1000


def test_605a2d_a_player_cannot_create_credit_nor_touch_another_account(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    own = post(
        client, kit, "/api/floor/bill-in", "cat", account="cat", terminal="EWT-1", amount=10_000
    )
    assert own.status_code == 403
    other = post(client, kit, "/api/floor/cash-out", "cat", account="ann", terminal="EWT-1")
    assert other.status_code == 403
    odd_bill = post(
        client, kit, "/api/floor/bill-in", "dealer", account="cat", terminal="EWT-1", amount=300
    )
    assert odd_bill.status_code == 409
    assert odd_bill.json()["detail"]["code"] == "invalid"
    too_much = post(
        client, kit, "/api/floor/cash-out", "ann", terminal="EWT-1", amount=kit.credit + 1
    )
    assert too_much.json()["detail"]["code"] == "balance"
    empty = post(client, kit, "/api/floor/cash-out", "cat", terminal="EWT-1")
    assert empty.json()["detail"]["code"] == "empty"
    assert (balance(client, kit, "cat"), balance(client, kit, "ann")) == (0, kit.credit)
    kinds = [kind for kind, _ in audit_rules(client, kit)]
    assert kinds.count("role") == 2
    assert {"invalid", "balance", "empty"} <= set(kinds)


def test_605a4d_a_hand_pay_above_the_limit_needs_a_supervisor(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    assert post(client, kit, "/api/floor/settings", "dealer").status_code == 405
    changed = client.put(
        "/api/floor/settings",
        json={"key": "handpay_limit", "value": 50_000},
        headers=kit.auth("super"),
    )
    assert changed.json()["handpay_limit"] == 50_000
    refused_setting = client.put(
        "/api/floor/settings", json={"key": "handpay_limit", "value": 1}, headers=kit.auth("dealer")
    )
    assert refused_setting.status_code == 403
    body = {"account": "ann", "terminal": "EWT-1", "kind": "jackpot"}
    over = post(client, kit, "/api/floor/hand-pay", "dealer", amount=60_000, **body)
    assert over.status_code == 403
    assert over.json()["detail"] == {
        "code": "supervisor",
        "rule": "PA 605a.4(d)",
        "message": "A hand pay of 60000 cents is above the limit of 50000 cents; a supervisor "
        "must pay it (PA 605a.4(d)).",
    }
    assert balance(client, kit, "ann") == kit.credit
    by_player = post(client, kit, "/api/floor/hand-pay", "ann", amount=100, **body)
    assert by_player.status_code == 403
    assert (
        post(client, kit, "/api/floor/hand-pay", "super", amount=60_000, **body).json()["balance"]
        == kit.credit - 60_000
    )
    cancelled = dict(body, kind="cancelled_credit")
    paid = post(client, kit, "/api/floor/hand-pay", "dealer", amount=40_000, **cancelled)
    assert paid.json()["balance"] == 0
    assert ("supervisor", "PA 605a.4(d)") in audit_rules(client, kit)
    cage = client.get("/api/accounts/cage/ledger", headers=kit.auth("super")).json()
    assert [(e["kind"], e["amount"]) for e in cage["entries"][:2]] == [
        ("cancelled_credit", 40_000),
        ("jackpot", 60_000),
    ]


def test_605a5c_above_the_voucher_limit_the_terminal_issues_no_voucher(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    client.put(
        "/api/floor/settings",
        json={"key": "voucher_limit", "value": 50_000},
        headers=kit.auth("super"),
    )
    refused = post(client, kit, "/api/floor/cash-out", "ann", terminal="EWT-1")
    assert refused.json()["detail"]["code"] == "handpay"
    assert balance(client, kit, "ann") == kit.credit
    assert (
        client.get("/api/floor/vouchers/000000000001", headers=kit.auth("super")).status_code == 404
    )


def test_605a5c_two_terminals_racing_to_redeem_one_voucher_pay_it_once(backend: Backend) -> None:
    async def body(store: Store) -> tuple[list[object], int, int, list[str]]:
        for player in ("ann", "bob", "cat"):
            await store.ensure_account(player, "player")
        await bill_in(store, "ann", "EWT-1", 10_000, by="dana")
        issued = await cash_out(store, "ann", "EWT-1", by="ann")
        assert issued.validation_code is not None
        results = await asyncio.gather(
            redeem_voucher(store, issued.validation_code, "bob", "EWT-2", by="bob"),
            redeem_voucher(store, issued.validation_code, "cat", "EWT-3", by="cat"),
            return_exceptions=True,
        )
        bob, cat = await store.balance("bob"), await store.balance("cat")
        return results, bob or 0, cat or 0, await store.verify_log() + await store.ledger_check()

    results, bob, cat, problems = backend.run(body)
    refused = [r for r in results if isinstance(r, FloorRefusedError)]
    assert len(refused) == 1
    assert refused[0].code == "redeemed"
    assert sorted([bob, cat]) == [0, 10_000]
    assert problems == []


@pytest.mark.parametrize("amount", [0, -5])
def test_605a2d_amounts_are_positive_cents(backend: Backend, amount: int) -> None:
    async def body(store: Store) -> str:
        await store.ensure_account("ann", "player")
        try:
            await cash_out(store, "ann", "EWT-1", amount, by="ann")
        except FloorRefusedError as refusal:
            return refusal.code
        return "accepted"

    assert backend.run(body) == "invalid"
