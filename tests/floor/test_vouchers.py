"""Game accounts and vouchers (PA 605a.2(d), 605a.5(c)), hand pays (605a.5(d), 605a.4(d)):
on SQLite and PostgreSQL, through the REST API and the store, with the abuse cases."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tablejack.store import Store
from tablejack.store.policy import Actor, Role
from tablejack.store.verify import verify
from tablejack.store.vouchers import (
    FloorRefusedError,
    bill_in,
    cash_out,
    check_code,
    hand_pay,
    make_validation_code,
    pay_voucher,
    redeem_voucher,
)
from tests.support.floor import insert
from tests.support.store import Backend

CASHIER = Actor(Role.CASHIER, "cleo")


def at(client: Any, headers: dict[str, str], path: str, **body: Any) -> Any:
    """POST ``body`` with a player's session at a terminal (``kit.session``); a bill or a
    voucher as the terminal's validator reports it (``kit.insert``)."""
    if path.endswith(("/bill-in", "/voucher-in")):
        return insert(client, path, json=body, headers=headers)
    return client.post(path, json=body, headers=headers)


def ledger(client: Any, kit: Any, account: str) -> dict[str, Any]:
    return dict(client.get(f"/api/accounts/{account}/ledger", headers=kit.auth("super")).json())


def audit(client: Any, kit: Any) -> list[dict[str, Any]]:
    return list(client.get("/api/audit", headers=kit.auth("super")).json())


def audit_rules(client: Any, kit: Any) -> list[tuple[str, str]]:
    return [(e["kind"], e["rule"]) for e in audit(client, kit)]


def test_605a5c_bill_in_voucher_out_and_a_voucher_redeemed_once_anywhere(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table("A1"), kit.stacked_table("B2")], backend=backend)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    # the bill validator of the terminal cat is signed in at reports the bill, not a dealer
    by_dealer = insert(
        client, "/api/floor/bill-in", json={"amount": 10_000}, headers=kit.auth("dealer")
    )
    assert by_dealer.status_code == 403
    assert (by_dealer.json()["detail"]["code"], by_dealer.json()["detail"]["rule"]) == (
        "role",
        "role: player",
    )
    assert kit.balance(client, "cat") == 0
    assert ledger(client, kit, "cat")["entries"] == []
    refusal = audit(client, kit)[0]
    assert (refusal["kind"], refusal["actor"], refusal["rule"]) == ("role", "dana", "role: player")
    paid = at(client, cat, "/api/floor/bill-in", amount=10_000)
    assert paid.status_code == 200
    assert (paid.json()["kind"], paid.json()["balance"], paid.json()["log"]) == (
        "bill_in",
        10_000,
        "acct:EWT-1",
    )
    at(client, cat, "/api/floor/bill-in", amount=2000)
    out = at(client, cat, "/api/floor/cash-out", amount=7000).json()
    assert (out["kind"], out["amount"], out["balance"]) == ("voucher_out", 7000, 5000)
    assert out["voucher_number"] == "000000000001"
    code = out["validation_code"]
    assert check_code(code)
    # the rest, all of it, on a second voucher
    rest = at(client, cat, "/api/floor/cash-out").json()
    assert (rest["amount"], rest["balance"], rest["voucher_number"]) == (5000, 0, "000000000002")
    # redeemed by another player at a terminal of another table: anywhere on the floor
    bob = kit.session(client, "bob", "EWT-9", "B2")
    redeemed = at(client, bob, "/api/floor/voucher-in", code=code)
    assert redeemed.status_code == 200
    assert (redeemed.json()["kind"], redeemed.json()["amount"]) == ("voucher_in", 7000)
    assert kit.balance(client, "bob") == kit.credit + 7000
    # the second redemption is refused, logged, and changes nothing
    ann = kit.session(client, "ann", "EWT-1", "A1")
    again = at(client, ann, "/api/floor/voucher-in", code=code)
    assert again.status_code == 409
    assert again.json()["detail"]["code"] == "redeemed"
    assert again.json()["detail"]["rule"] == "PA 605a.5(c)"
    assert "EWT-9" in again.json()["detail"]["message"]
    assert kit.balance(client, "ann") == kit.credit
    assert ("redeemed", "PA 605a.5(c)") in audit_rules(client, kit)
    record = client.get("/api/floor/vouchers/000000000001", headers=kit.auth("super")).json()
    assert (record["status"], record["amount"], record["terminal"]) == ("redeemed", 7000, "EWT-1")
    assert (record["redeemed_account"], record["redeemed_terminal"]) == ("bob", "EWT-9")
    assert "code_hash" not in record
    # the money: the vouchers account holds exactly the voucher still outstanding
    assert [(e["kind"], e["effect"]) for e in ledger(client, kit, "cat")["entries"]] == [
        ("voucher_out", -5000),
        ("voucher_out", -7000),
        ("bill_in", 2000),
        ("bill_in", 10_000),
    ]
    assert ledger(client, kit, "vouchers")["balance"] == 5000
    # the second voucher is cashed at the cage by the cashier (a dealer may not), once
    refused = kit.post(client, "/api/cage/vouchers", "dealer", code=rest["validation_code"])
    assert (refused.status_code, refused.json()["detail"]["code"]) == (403, "role")
    assert ledger(client, kit, "vouchers")["balance"] == 5000
    cashed = kit.post(client, "/api/cage/vouchers", "cashier", code=rest["validation_code"])
    assert (cashed.status_code, cashed.json()["kind"], cashed.json()["amount"]) == (
        200,
        "voucher_paid",
        5000,
    )
    late = at(client, ann, "/api/floor/voucher-in", code=rest["validation_code"])
    assert (late.status_code, late.json()["detail"]["code"]) == (409, "redeemed")
    assert kit.balance(client, "ann") == kit.credit
    assert ledger(client, kit, "vouchers")["balance"] == 0
    assert [(e["kind"], e["amount"]) for e in ledger(client, kit, "cage")["entries"][:1]] == [
        ("voucher_paid", 5000)
    ]
    verified = client.get("/api/verify-log", headers=kit.auth("super")).json()
    assert (verified["ok"], verified["problems"]) == (True, [])


def test_605a5c_forged_voucher_codes_are_refused_and_logged(make_client: Any, kit: Any) -> None:
    client = make_client()
    ann = kit.session(client, "ann", "EWT-1", "A1")
    bob = kit.session(client, "bob", "EWT-2", "A1")
    code = at(client, ann, "/api/floor/cash-out", amount=1000).json()["validation_code"]
    wrong_digit = code[:-3] + str((int(code[-3]) + 1) % 10) + code[-2:]
    unknown = make_validation_code(1234567890123456)  # check digits right, never issued
    for forged in (wrong_digit, unknown, "not a code", code[:-1]):
        refused = at(client, bob, "/api/floor/voucher-in", code=forged)
        assert refused.status_code == 409, forged
        assert refused.json()["detail"]["code"] == "forged"
    assert kit.balance(client, "bob") == kit.credit
    assert audit_rules(client, kit).count(("forged", "PA 605a.5(c)")) == 4
    # the real code, with the printed dashes, still pays once
    printed = "-".join(code[i : i + 4] for i in range(0, 18, 4))
    ok = at(client, bob, "/api/floor/voucher-in", code=printed)
    assert ok.json()["amount"] == 1000


def test_605a2d_a_player_credits_only_bills_at_his_terminal_and_touches_no_other_account(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    # a player's own token, not a session at a terminal: no bill-in, no cash-out
    own = insert(client, "/api/floor/bill-in", json={"amount": 10_000}, headers=kit.auth("cat"))
    assert (own.status_code, own.json()["detail"]["code"]) == (403, "terminal")
    plain = kit.post(client, "/api/floor/cash-out", "ann")
    assert (plain.status_code, plain.json()["detail"]["code"]) == (403, "terminal")
    # nor credit sold to himself at the cage, nor a bill reported for him by a dealer
    sold = kit.post(client, "/api/cage/credit", "cat", account="cat", amount=10_000)
    assert (sold.status_code, sold.json()["detail"]["rule"]) == (403, "role: cashier")
    by_dealer = insert(
        client, "/api/floor/bill-in", json={"amount": 10_000}, headers=kit.auth("dealer")
    )
    assert (by_dealer.status_code, by_dealer.json()["detail"]["code"]) == (403, "role")
    cat = kit.session(client, "cat", "EWT-1", "A1")
    odd_bill = at(client, cat, "/api/floor/bill-in", amount=300)
    assert odd_bill.status_code == 409
    assert odd_bill.json()["detail"]["code"] == "invalid"
    # the account and the terminal are the session's: a body naming others is refused
    for path, named in (
        ("/api/floor/cash-out", {"account": "ann"}),
        ("/api/floor/cash-out", {"terminal": "EWT-2"}),
        ("/api/floor/bill-in", {"account": "ann", "amount": 1000}),
    ):
        assert at(client, cat, path, **named).status_code == 422, (path, named)
    own_empty = at(client, cat, "/api/floor/cash-out")
    assert (own_empty.status_code, own_empty.json()["detail"]["code"]) == (409, "empty")
    assert "'cat'" in own_empty.json()["detail"]["message"]
    ann = kit.session(client, "ann", "EWT-2", "A1")
    too_much = at(client, ann, "/api/floor/cash-out", amount=kit.credit + 1)
    assert too_much.json()["detail"]["code"] == "balance"
    assert (kit.balance(client, "cat"), kit.balance(client, "ann")) == (0, kit.credit)
    assert ledger(client, kit, "cat")["entries"] == []
    assert [e["kind"] for e in ledger(client, kit, "ann")["entries"]] == ["fund"]
    refusals = [(e["kind"], e["actor"], e["rule"]) for e in audit(client, kit)]
    assert [r for r in refusals if r[0] == "role"] == [
        ("role", "dana", "role: player"),
        ("role", "cat", "role: cashier"),
    ]
    assert {("invalid", "cat"), ("empty", "cat"), ("balance", "ann")} <= {r[:2] for r in refusals}


def test_605a4d_a_hand_pay_above_the_limit_needs_a_supervisor_and_a_dealer_may_not_pay_by_hand(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    assert kit.post(client, "/api/floor/settings", "dealer").status_code == 405
    # the operator sets the hand-pay limit; a supervisor or a dealer may not
    for who in ("super", "dealer"):
        refused_setting = client.put(
            "/api/floor/settings", json={"key": "handpay_limit", "value": 1}, headers=kit.auth(who)
        )
        assert refused_setting.status_code == 403
        assert refused_setting.json()["detail"]["rule"] == "role: operator"
    settings = client.get("/api/floor/settings", headers=kit.auth("super")).json()
    assert settings["handpay_limit"] == 120_000
    changed = client.put(
        "/api/floor/settings",
        json={"key": "handpay_limit", "value": 50_000},
        headers=kit.auth("operator"),
    )
    assert changed.json()["handpay_limit"] == 50_000
    kit.terminal_key(client, "EWT-1", "A1")  # a hand pay is paid at a registered terminal
    body = {"account": "ann", "terminal": "EWT-1", "kind": "jackpot"}
    # a dealer pays nothing by hand, even far below the limit
    by_dealer = kit.post(client, "/api/floor/hand-pay", "dealer", amount=100, **body)
    assert by_dealer.status_code == 403
    assert (by_dealer.json()["detail"]["code"], by_dealer.json()["detail"]["rule"]) == (
        "role",
        "role: supervisor/cashier",
    )
    over = kit.post(client, "/api/floor/hand-pay", "cashier", amount=60_000, **body)
    assert over.status_code == 202  # above the limit: it waits for a supervisor
    waiting = over.json()["request"]
    assert (waiting["status"], waiting["requested_by"], waiting["amount_text"]) == (
        "pending",
        "cleo",
        "$600.00",
    )
    assert kit.balance(client, "ann") == kit.credit
    by_player = kit.post(client, "/api/floor/hand-pay", "ann", amount=100, **body)
    assert by_player.status_code == 403
    assert [e["kind"] for e in ledger(client, kit, "ann")["entries"]] == ["fund"]
    approved = kit.post(client, f"/api/cage/approvals/{waiting['id']}/approve", "super")
    assert approved.status_code == 200, approved.text
    assert approved.json()["movement"]["balance"] == kit.credit - 60_000
    cancelled = dict(body, kind="cancelled_credit")
    paid = kit.post(client, "/api/floor/hand-pay", "cashier", amount=40_000, **cancelled)
    assert paid.json()["balance"] == 0
    refusals = [(e["kind"], e["actor"], e["rule"]) for e in audit(client, kit)]
    assert ("approval", "sam", "PA 605a.4(d): dual control") in refusals
    assert ("role", "dana", "role: supervisor/cashier") in refusals
    assert ("role", "ann", "role: supervisor/cashier") in refusals
    assert ("role", "sam", "role: operator") in refusals
    cage = ledger(client, kit, "cage")
    assert [(e["kind"], e["amount"]) for e in cage["entries"][:2]] == [
        ("cancelled_credit", 40_000),
        ("jackpot", 60_000),
    ]
    assert [(e["kind"], e["effect"]) for e in ledger(client, kit, "ann")["entries"]] == [
        ("cancelled_credit", -40_000),
        ("jackpot", -60_000),
        ("fund", kit.credit),
    ]


def test_605a5c_above_the_voucher_limit_the_terminal_issues_no_voucher(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    client.put(
        "/api/floor/settings",
        json={"key": "voucher_limit", "value": 50_000},
        headers=kit.auth("operator"),
    )
    ann = kit.session(client, "ann", "EWT-1", "A1")
    refused = at(client, ann, "/api/floor/cash-out")
    assert refused.json()["detail"]["code"] == "handpay"
    assert kit.balance(client, "ann") == kit.credit
    assert (
        client.get("/api/floor/vouchers/000000000001", headers=kit.auth("super")).status_code == 404
    )


def test_605a5c_two_terminals_racing_to_redeem_one_voucher_pay_it_once(backend: Backend) -> None:
    async def body(store: Store) -> tuple[list[object], int, int, list[str]]:
        for player in ("ann", "bob", "cat"):
            await store.ensure_account(player, "player")
        await bill_in(store, 10_000, actor=Actor(Role.PLAYER, "ann", "EWT-1"))
        issued = await cash_out(store, actor=Actor(Role.PLAYER, "ann", "EWT-1"))
        assert issued.validation_code is not None
        results = await asyncio.gather(
            redeem_voucher(store, issued.validation_code, actor=Actor(Role.PLAYER, "bob", "EWT-2")),
            redeem_voucher(store, issued.validation_code, actor=Actor(Role.PLAYER, "cat", "EWT-3")),
            return_exceptions=True,
        )
        bob, cat = await store.balance("bob"), await store.balance("cat")
        problems = (await verify(store)).problems + await store.ledger_check()
        return list(results), bob or 0, cat or 0, problems

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
            await cash_out(store, amount, actor=Actor(Role.PLAYER, "ann", "EWT-1"))
        except FloorRefusedError as refusal:
            return refusal.code
        return "accepted"

    assert backend.run(body) == "invalid"


def test_605a4d_the_store_refuses_a_movement_started_by_a_role_the_policy_does_not_name(
    backend: Backend,
) -> None:
    """Below the API: each floor function checks its actor, so a dealer reports no bill and
    pays nothing by hand, a player off any terminal moves nothing, and only the cage cashes a
    voucher; each refusal is audited and changes no balance and no ledger row."""
    dealer = Actor(Role.DEALER, "dana")
    off_terminal = Actor(Role.PLAYER, "ann")

    async def body(store: Store) -> tuple[list[tuple[str, str]], dict[str, int], list[Any]]:
        await store.ensure_account("ann", "player")
        await store.fund("ann", 10_000, actor=CASHIER)
        issued = await cash_out(store, 1000, actor=Actor(Role.PLAYER, "ann", "EWT-1"))
        assert issued.validation_code is not None
        before = (await store.accounts(), len(await store.ledger_of("ann")))
        attempts = [
            bill_in(store, 1000, actor=dealer),
            bill_in(store, 1000, actor=off_terminal),
            cash_out(store, 1000, actor=off_terminal),
            redeem_voucher(store, issued.validation_code, actor=dealer),
            pay_voucher(store, issued.validation_code, actor=Actor(Role.PLAYER, "ann", "EWT-1")),
            hand_pay(store, "ann", "EWT-1", 100, "jackpot", actor=dealer),
        ]
        codes: list[tuple[str, str]] = []
        for attempt in attempts:
            try:
                await attempt
                codes.append(("accepted", ""))
            except FloorRefusedError as refusal:
                codes.append((refusal.code, refusal.rule))
        after = (await store.accounts(), len(await store.ledger_of("ann")))
        assert after == before
        audited = [(e["kind"], e["actor"]) for e in await store.audit_entries(limit=6)]
        return codes, after[0], audited

    codes, balances, audited = backend.run(body)
    assert codes == [("role", "PA 605a.4(d)")] * 6
    assert (balances["ann"], balances["vouchers"]) == (9000, 1000)
    assert audited == [
        ("role", "dana"),
        ("role", "ann"),
        ("role", "dana"),
        ("role", "ann"),
        ("role", "ann"),
        ("role", "dana"),
    ]
