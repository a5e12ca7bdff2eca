"""The cage's shift, tried as an insider on SQLite and PostgreSQL: a cashier's transaction
list holds his own transactions only (a supervisor's every cashier's), with times in the
floor's time zone (``sas_time_zone``) and amounts in dollars; a receipt prints a cashier's own
transaction only, with the voucher number masked but for its last four digits; a player reads
neither."""

from __future__ import annotations

from typing import Any

from tests.security.conftest import Floorkit
from tests.support.floor import auth, bearer


def _second_cashier(floor: Floorkit) -> dict[str, str]:
    answer = floor.client.post(
        "/api/tokens", json={"role": "cashier", "subject": "carl"}, headers=auth("operator")
    )
    assert answer.status_code == 200, answer.text
    return bearer(answer.json()["token"])


def _transactions(floor: Floorkit, who: dict[str, str]) -> Any:
    return floor.client.get("/api/cage/transactions", headers=who)


def test_605a4d_a_cashier_lists_and_prints_only_his_own_transactions(floor: Floorkit) -> None:
    zone = floor.client.put(
        "/api/floor/settings",
        json={"key": "sas_time_zone", "value": "America/New_York"},
        headers=auth("operator"),
    )
    assert zone.status_code == 200, zone.text
    sold = floor.client.post(
        "/api/cage/vouchers/sell", json={"amount": 2575}, headers=auth("cashier")
    )
    assert sold.status_code == 200, sold.text
    carl = _second_cashier(floor)
    paid = floor.client.post(
        "/api/cage/vouchers", json={"code": sold.json()["validation_code"]}, headers=carl
    )
    assert paid.status_code == 200, paid.text
    mine = _transactions(floor, auth("cashier")).json()
    assert mine["time_zone"] == "America/New_York"
    assert [(t["kind"], t["cashier"], t["amount_text"]) for t in mine["transactions"]] == [
        ("voucher_sold", "cleo", "$25.75")
    ]
    assert mine["transactions"][0]["at_text"].endswith(("EST", "EDT"))
    theirs = _transactions(floor, carl).json()["transactions"]
    assert [(t["kind"], t["cashier"]) for t in theirs] == [("voucher_paid", "carl")]
    every = _transactions(floor, auth("super")).json()["transactions"]
    assert {"voucher_sold", "voucher_paid"} <= {t["kind"] for t in every}
    # the receipt: cleo prints her sale, not carl's redemption; the supervisor prints both
    redemption, sale = theirs[0], mine["transactions"][0]
    own = floor.client.get(
        "/api/cage/receipt",
        params={"log": sale["log"], "seq": sale["seq"]},
        headers=auth("cashier"),
    )
    assert own.status_code == 200, own.text
    number = sold.json()["voucher_number"]
    assert "$25.75" in own.text and "VOUCHER SOLD" in own.text and "cleo" in own.text
    assert number not in own.text and f"********{number[-4:]}" in own.text
    assert ("EST" in own.text or "EDT" in own.text) and sale["id"] in own.text
    other = floor.client.get(
        "/api/cage/receipt",
        params={"log": redemption["log"], "seq": redemption["seq"]},
        headers=auth("cashier"),
    )
    assert other.status_code == 404, other.text
    printer = floor.client.get(
        "/api/cage/receipt",
        params={"log": redemption["log"], "seq": redemption["seq"], "format": "escpos"},
        headers=auth("super"),
    )
    assert printer.status_code == 200 and b"VOUCHER REDEEMED" in printer.content
    assert number.encode() not in printer.content


def test_605a4d_a_player_reads_no_transaction_and_no_receipt(floor: Floorkit) -> None:
    sold = floor.client.post(
        "/api/cage/vouchers/sell", json={"amount": 500}, headers=auth("cashier")
    )
    assert sold.status_code == 200, sold.text
    ann = floor.session("ann", "EWT-1")
    for who in (auth("ann"), ann, auth("dealer"), auth("operator")):
        listed = _transactions(floor, who)
        assert listed.status_code == 403, listed.text
        printed = floor.client.get(
            "/api/cage/receipt", params={"log": "acct:cage", "seq": 1}, headers=who
        )
        assert printed.status_code == 403, printed.text


def test_605a_the_cage_sets_a_players_limits_and_self_exclusion_but_a_dealer_does_not(
    floor: Floorkit,
) -> None:
    """The terminal sends a player "to the cage": the cashier reads and sets his limits and
    excludes him; a loosening still waits 24 hours; a dealer, an operator and another player
    are refused (audited)."""
    path = "/api/floor/players/ann/limits"
    set_ = floor.client.put(path, json={"loss_limit": 5000}, headers=auth("cashier"))
    assert set_.status_code == 200, set_.text
    assert set_.json()["loss_limit"] == 5000
    looser = floor.client.put(path, json={"loss_limit": 9000}, headers=auth("cashier"))
    assert looser.status_code == 409, looser.text
    read = floor.client.get(path, headers=auth("cashier"))
    assert read.status_code == 200 and read.json()["loss_limit"] == 5000
    for who in (auth("dealer"), auth("operator"), auth("bob")):
        assert floor.client.get(path, headers=who).status_code == 403
        assert floor.client.put(path, json={"loss_limit": 1}, headers=who).status_code == 403
        excluded = floor.client.post(
            "/api/floor/players/ann/self-exclusion", json={"days": 1}, headers=who
        )
        assert excluded.status_code == 403
    done = floor.client.post(
        "/api/floor/players/ann/self-exclusion", json={"days": 30}, headers=auth("cashier")
    )
    assert done.status_code == 200, done.text
    assert done.json()["excluded_until_us"] is not None


def test_605a4d_a_receipts_event_number_past_the_column_is_refused_422(floor: Floorkit) -> None:
    """An event's ``seq`` is a 32-bit column: a larger number is the request's error (422),
    never a database error; the largest it holds is simply not found (404)."""
    for seq, status in ((2**31, 422), (2**62, 422), (2**31 - 1, 404)):
        answer = floor.client.get(
            "/api/cage/receipt",
            params={"log": "acct:cage", "seq": seq},
            headers=auth("super"),
        )
        assert answer.status_code == status, (seq, answer.text)
