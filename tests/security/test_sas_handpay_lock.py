"""An attacker at a terminal with a handpay pending (SAS exception 51: a cash-out above the
voucher limit waits for an attendant) tries to keep playing and to put money in: the terminal
is locked (``handpay_pending``) until the handpay is paid or the host resets it, so his wager
and his bill are refused, naming the lock, and nothing moves (docs/sas.md). On SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any

from tablejack.server.links.interface import attach
from tablejack.server.links.sas.link import SasLink, SasTerminal
from tests.support.store import Backend


def test_605a5c_a_wager_and_a_bill_during_a_handpay_pending_are_refused(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    floor = client.app.state.floor
    link = SasLink([SasTerminal("EWT-1", "tcp://127.0.0.1:0", 1)], meter_seconds=0.0)
    client.portal.call(link.start, floor)
    attach(floor, link)
    try:
        limit = client.put(
            "/api/floor/settings",
            json={"key": "voucher_limit", "value": 1000},
            headers=kit.auth("operator"),
        )
        assert limit.is_success, limit.text
        cat = kit.session(client, "cat", "EWT-1", "A1")
        assert client.post("/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
        handpay = client.post("/api/floor/cash-out", json={"amount": 2000}, headers=cat)
        assert handpay.status_code == 409 and handpay.json()["detail"]["code"] == "handpay"
        ledger_before = kit.balance(client, "cat")

        bill = client.post("/api/floor/bill-in", json={"amount": 10_000}, headers=cat)
        assert bill.status_code == 409, bill.text
        assert bill.json()["detail"]["code"] == "tilt"
        assert "handpay_pending" in bill.json()["detail"]["message"]

        client.post(
            "/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer")
        )
        with kit.connect(client, "cat", "EWT-1", "A1") as player:
            assert player.request({"type": "position", "position": 1})["type"] == "ack"
            wager = player.request({"type": "wager", "kind": "blackjack", "amount": 1000})
            assert wager["type"] == "error" and wager["code"] == "tilt"
        assert kit.balance(client, "cat") == ledger_before == 5000
        meters = client.get("/api/floor/meters", headers=kit.auth("super")).json()
        lifetime = meters["terminal"]["EWT-1"]["lifetime"]
        assert lifetime["bills_in"] == 5000 and lifetime["coin_in"] == 0
        # the lock is the link's: a supervisor's clear code is not needed once it is paid
        paid = kit.post(
            client,
            "/api/floor/hand-pay",
            "cashier",
            account="cat",
            terminal="EWT-1",
            amount=2000,
            kind="cancelled_credit",
        )
        assert paid.is_success, paid.text

        def codes() -> list[str]:
            tilts = client.get("/api/floor/tilts", headers=kit.auth("super")).json()
            return [t["code"] for t in tilts.get("EWT-1", [])]

        assert kit.eventually(lambda: codes() == [])
        again = client.post("/api/floor/bill-in", json={"amount": 100}, headers=cat)
        assert again.is_success, again.text
    finally:
        client.portal.call(link.stop)
