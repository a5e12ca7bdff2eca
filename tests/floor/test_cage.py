"""The cage's desk (PA 605a.5(c)–(d)): a voucher looked up by its validation number before it
is paid, paid once, refused when paid, expired or unknown; the cage's report of the day; and
the voucher as a printable ticket with its barcode — each route with its attacker (a player
may not look up or pay at the cage, nor print another player's ticket). On SQLite and
PostgreSQL."""

from __future__ import annotations

import re
from typing import Any

from tablejack.server.support.ticket import amount_in_words, grouped
from tablejack.store import Store
from tablejack.store.cage import cage_report, voucher_by_code
from tablejack.store.policy import Actor, Role
from tablejack.store.settings import set_floor_setting
from tablejack.store.vouchers import FloorRefusedError, bill_in, cash_out, pay_voucher
from tests.support.floor import insert
from tests.support.store import Backend

CASHIER = Actor(Role.CASHIER, "cleo")


def cashed_out(client: Any, kit: Any, amount: int = 5000) -> tuple[dict[str, str], str]:
    """cat's session at EWT-1 after a bill in and a cash-out of ``amount``; the code."""
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert (
        insert(client, "/api/floor/bill-in", json={"amount": 10_000}, headers=cat).status_code
        == 200
    )
    out = client.post("/api/floor/cash-out", json={"amount": amount}, headers=cat).json()
    return cat, str(out["validation_code"])


def audit_kinds(client: Any, kit: Any) -> list[tuple[str, str]]:
    rows = client.get("/api/audit", headers=kit.auth("super")).json()
    return [(row["kind"], row["actor"]) for row in rows]


def test_605a5c_the_cage_reads_a_voucher_by_its_validation_number_then_pays_it_once(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    _, code = cashed_out(client, kit)
    lookup = "/api/cage/vouchers/lookup"
    seen = client.post(lookup, json={"code": grouped(code)}, headers=kit.auth("cashier"))
    assert seen.status_code == 200, seen.text
    assert {k: seen.json()[k] for k in ("amount", "status", "terminal", "payable")} == {
        "amount": 5000,
        "status": "issued",
        "terminal": "EWT-1",
        "payable": True,
    }
    assert code not in seen.text  # the record, never the code
    paid = client.post("/api/cage/vouchers", json={"code": code}, headers=kit.auth("cashier"))
    assert (paid.status_code, paid.json()["amount"]) == (200, 5000)
    again = client.post(lookup, json={"code": code}, headers=kit.auth("cashier")).json()
    assert (again["status"], again["payable"], again["redeemed_terminal"]) == (
        "redeemed",
        False,
        "cage",
    )
    twice = client.post("/api/cage/vouchers", json={"code": code}, headers=kit.auth("cashier"))
    assert (twice.status_code, twice.json()["detail"]["code"]) == (409, "redeemed")
    report = client.get("/api/cage/report", headers=kit.auth("cashier")).json()
    assert report["kinds"]["voucher_paid"] == {"count": 1, "total": 5000}
    assert report["cash_out"] >= 5000


def test_605a5c_an_unknown_validation_number_is_refused_and_audited(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    unknown = client.post(
        "/api/cage/vouchers/lookup",
        json={"code": "123456789012345611"},
        headers=kit.auth("cashier"),
    )
    assert unknown.status_code == 404
    assert unknown.json()["detail"]["rule"] == "PA 605a.5(c)"
    assert ("forged", "cleo") in audit_kinds(client, kit)
    too_long = client.post(
        "/api/cage/vouchers/lookup", json={"code": "1" * 41}, headers=kit.auth("cashier")
    )
    assert too_long.status_code == 422


def test_605a4d_a_player_may_not_look_up_or_pay_a_voucher_at_the_cage(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    cat, code = cashed_out(client, kit)
    for path in ("/api/cage/vouchers/lookup", "/api/cage/vouchers"):
        refused = client.post(path, json={"code": code}, headers=cat)
        assert (refused.status_code, refused.json()["detail"]["code"]) == (403, "role"), path
    report = client.get("/api/cage/report", headers=cat)
    assert report.status_code == 403
    status = client.post(
        "/api/cage/vouchers/lookup", json={"code": code}, headers=kit.auth("cashier")
    ).json()["status"]
    assert status == "issued"  # nothing was paid


def test_605a5c_the_ticket_is_printed_for_the_player_who_cashed_out_and_for_the_cage(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    cat, code = cashed_out(client, kit, 9_876)
    ticket = client.post("/api/floor/vouchers/ticket", json={"code": code}, headers=cat)
    assert ticket.status_code == 200, ticket.text
    assert ticket.headers["content-type"].startswith("text/html")
    text = ticket.text
    for field in ("$98.76", amount_in_words(9_876), grouped(code), "EWT-1", "000000000001"):
        assert field in text, field
    assert "table A1" in text and "does not expire" in text and "tablejack" in text
    assert len(re.findall(r"<rect [^>]*fill:black", text)) > 40  # the barcode's bars
    assert (
        client.post(
            "/api/floor/vouchers/ticket", json={"code": code}, headers=kit.auth("cashier")
        ).status_code
        == 200
    )
    # another player who learnt the number gets no ticket, and the try is audited
    bob = kit.session(client, "bob", "EWT-2", "A1")
    stolen = client.post("/api/floor/vouchers/ticket", json={"code": code}, headers=bob)
    assert (stolen.status_code, stolen.json()["detail"]["code"]) == (403, "role")
    assert ("role", "bob") in audit_kinds(client, kit)
    dealer = client.post(
        "/api/floor/vouchers/ticket", json={"code": code}, headers=kit.auth("dealer")
    )
    assert dealer.status_code == 403


def test_605a5c_a_voucher_older_than_the_expiry_is_refused(backend: Backend) -> None:
    async def body(store: Store) -> tuple[str, int, dict[str, Any] | None, int]:
        await store.ensure_account("ann", "player")
        ann = Actor(Role.PLAYER, "ann", "EWT-1")
        await bill_in(store, 10_000, actor=ann)
        issued = await cash_out(store, 4000, actor=ann)
        assert issued.validation_code is not None
        from sqlalchemy import update

        from tablejack.store.floor_models import VOUCHERS

        async with store.transaction() as connection:  # issued three days ago
            await connection.execute(
                update(VOUCHERS).values(issued_us=VOUCHERS.c.issued_us - 3 * 86_400_000_000)
            )
        await set_floor_setting(store, "voucher_expiry_days", 2, by="olga")
        try:
            await pay_voucher(store, issued.validation_code, actor=CASHIER)
            code = "paid"
        except FloorRefusedError as refusal:
            code = refusal.code
        report = await cage_report(store, 0, 2**62)
        found = await voucher_by_code(store, issued.validation_code)
        return (
            code,
            report["kinds"]["voucher_paid"]["count"],
            found,
            await store.balance("vouchers") or 0,
        )

    code, paid, found, outstanding = backend.run(body)
    assert (code, paid, outstanding) == ("expired", 0, 4000)
    assert found is not None and found["status"] == "issued"


def test_605a5c_the_ticket_for_a_receipt_printer_is_esc_pos_with_the_printer_s_own_barcode(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    cat, code = cashed_out(client, kit, 7000)
    body = {"code": code, "format": "escpos"}
    printed = client.post("/api/floor/vouchers/ticket", json=body, headers=cat)
    assert printed.status_code == 200
    assert printed.headers["content-type"] == "application/octet-stream"
    data = printed.content
    # GS k 70 (Interleaved 2 of 5, function B), the length, then the 18 digits
    assert b"\x1dkF\x12" + code.encode() in data
    assert b"$70.00" in data and amount_in_words(7000).encode() in data
    assert data.endswith(b"\x1dV\x00")  # the cut
    bad = client.post(
        "/api/floor/vouchers/ticket", json={"code": code, "format": "pdf"}, headers=cat
    )
    assert bad.status_code == 422
    bob = kit.session(client, "bob", "EWT-2", "A1")
    assert client.post("/api/floor/vouchers/ticket", json=body, headers=bob).status_code == 403


def test_605a5c_the_cage_sells_a_voucher_for_cash_that_a_terminal_redeems_once(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """A cashier sells a $25.00 voucher for cash: the cage takes the cash (the day's report
    counts it as taken in), the vouchers outstanding grow by it, its ticket prints for the
    cage, a player's terminal redeems it once into his game account, and the log verifies."""
    client = make_client(backend=backend)
    cashier = kit.auth("cashier")
    sold = client.post("/api/cage/vouchers/sell", json={"amount": 2500}, headers=cashier)
    assert sold.status_code == 200, sold.text
    code = str(sold.json()["validation_code"])
    assert (sold.json()["kind"], sold.json()["amount"]) == ("voucher_sold", 2500)
    seen = client.post("/api/cage/vouchers/lookup", json={"code": code}, headers=cashier).json()
    assert (seen["amount"], seen["status"], seen["terminal"], seen["payable"]) == (
        2500,
        "issued",
        "cage",
        True,
    )
    ticket = client.post("/api/floor/vouchers/ticket", json={"code": code}, headers=cashier)
    assert ticket.status_code == 200 and "$25.00" in ticket.text
    report = client.get("/api/cage/report", headers=cashier).json()
    assert report["kinds"]["voucher_sold"] == {"count": 1, "total": 2500}
    assert report["cash_in"] == report["kinds"]["fund"]["total"] + 2500
    cat = kit.session(client, "cat", "EWT-1", "A1")
    before = insert(client, "/api/floor/bill-in", json={"amount": 1000}, headers=cat).json()[
        "balance"
    ]
    redeemed = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=cat)
    assert (redeemed.status_code, redeemed.json()["balance"]) == (200, before + 2500)
    again = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=cat)
    assert (again.status_code, again.json()["detail"]["code"]) == (409, "redeemed")
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_605a5c_a_voucher_above_the_voucher_limit_is_not_sold(make_client: Any, kit: Any) -> None:
    client = make_client()
    cashier = kit.auth("cashier")
    limit = client.get("/api/floor/settings", headers=kit.auth("super")).json()["voucher_limit"]
    over = client.post("/api/cage/vouchers/sell", json={"amount": limit + 1}, headers=cashier)
    assert (over.status_code, over.json()["detail"]["code"]) == (409, "limit")
    assert over.json()["detail"]["rule"] == "PA 605a.5(c)"
    for amount in (0, -500, 12.5, "100", True):
        bad = client.post("/api/cage/vouchers/sell", json={"amount": amount}, headers=cashier)
        assert bad.status_code == 422, amount
    report = client.get("/api/cage/report", headers=cashier).json()
    assert report["kinds"]["voucher_sold"]["count"] == 0
    assert ("limit", "cleo") in audit_kinds(client, kit)
