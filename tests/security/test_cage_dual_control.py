"""Dual control at the cage, tried as an insider (PA 605a.4(d)), on SQLite and PostgreSQL: a
cashier alone moves no credit, no voucher sale and no hand pay above the floor's thresholds; he
cannot approve his own request or any request; a request moves money once, even when two
supervisors approve it at once from two processes; a refusal is recorded; a hand pay goes only
to a terminal the floor has; a void names its reason; a cashier sees only his own drawer."""

from __future__ import annotations

from typing import Any

from tablejack.store import approvals
from tablejack.store.policy import Actor, Role
from tablejack.store.settings import FloorRefusedError
from tests.security.conftest import Floorkit
from tests.support.floor import auth, bearer

BILLION = 100_000_000_000
"""$1,000,000,000.00 in cents."""


def _staff(floor: Floorkit, role: str, subject: str) -> dict[str, str]:
    """A second person of ``role`` (the operator issues the credential)."""
    answer = floor.client.post(
        "/api/tokens", json={"role": role, "subject": subject}, headers=auth("operator")
    )
    assert answer.status_code == 200, answer.text
    return bearer(answer.json()["token"])


def _ask_credit(floor: Floorkit, amount: int, who: dict[str, str] | None = None) -> Any:
    return floor.client.post(
        "/api/cage/credit",
        json={"account": "ann", "amount": amount},
        headers=who or auth("cashier"),
    )


def _audit(floor: Floorkit) -> list[dict[str, Any]]:
    return list(floor.client.get("/api/audit", headers=auth("super")).json())


def test_605a4d_a_billion_dollar_credit_waits_and_its_approval_is_recorded(
    floor: Floorkit,
) -> None:
    before = floor.balances()
    rows = floor.ledger_rows()
    asked = _ask_credit(floor, BILLION)
    assert asked.status_code == 202, asked.text
    request = asked.json()["request"]
    assert (request["status"], request["requested_by"], request["amount_text"]) == (
        "pending",
        "cleo",
        "$1,000,000,000.00",
    )
    assert floor.balances() == before and floor.ledger_rows() == rows  # nothing moved
    queue = floor.client.get("/api/cage/approvals", headers=auth("super")).json()["requests"]
    assert [r["id"] for r in queue] == [request["id"]]
    approved = floor.client.post(
        f"/api/cage/approvals/{request['id']}/approve", headers=auth("super")
    )
    assert approved.status_code == 200, approved.text
    done = approved.json()["request"]
    assert (done["status"], done["requested_by"], done["decided_by"]) == (
        "approved",
        "cleo",
        "sam",
    )
    assert floor.balances()["ann"] == before["ann"] + BILLION
    # both people are in the chained event of the movement, and verify-log holds
    log = floor.client.get("/api/accounts/cage/ledger", headers=auth("super")).json()
    assert log["entries"][0]["kind"] == "fund"

    async def fund_event(store: Any) -> dict[str, Any]:
        events = await store.events("acct:cage")
        found = [e for e in events if e.kind == "fund" and e.payload.get("request")]
        return dict(found[-1].payload)

    payload = floor.run(fund_event)
    assert (payload["by"], payload["approved_by"], payload["request"]) == (
        "cleo",
        "sam",
        request["id"],
    )
    report = floor.verify()
    assert report.ok, report.problems


def test_605a4d_a_cashier_approves_nothing_not_even_his_own_request(floor: Floorkit) -> None:
    before = floor.balances()
    request = _ask_credit(floor, 500_000).json()["request"]
    for path in ("approve", "refuse"):
        answer = floor.client.post(
            f"/api/cage/approvals/{request['id']}/{path}",
            json={"reason": "mine"} if path == "refuse" else None,
            headers=auth("cashier"),
        )
        assert answer.status_code == 403, answer.text
        assert answer.json()["detail"]["code"] == "role"
    # a second cashier may not either
    carl = _staff(floor, "cashier", "carl")
    other = floor.client.post(f"/api/cage/approvals/{request['id']}/approve", headers=carl)
    assert other.status_code == 403
    assert floor.balances() == before
    assert any(e["kind"] == "role" and e["actor"] == "cleo" for e in _audit(floor))


def test_605a4d_a_supervisor_does_not_approve_his_own_request(floor: Floorkit) -> None:
    """A supervisor's hand pay above the limit is his request; only another supervisor
    approves it."""
    before = floor.balances()
    limit = {"key": "handpay_limit", "value": 50_000}
    assert floor.client.put("/api/floor/settings", json=limit, headers=auth("operator")).is_success
    asked = floor.client.post(
        "/api/floor/hand-pay",
        json={"account": "ann", "terminal": "EWT-1", "amount": 90_000, "kind": "jackpot"},
        headers=auth("super"),
    )
    assert asked.status_code == 202, asked.text
    number = asked.json()["request"]["id"]
    own = floor.client.post(f"/api/cage/approvals/{number}/approve", headers=auth("super"))
    assert own.status_code == 409
    assert own.json()["detail"]["code"] == "own_request"
    assert floor.balances() == before
    sue = _staff(floor, "supervisor", "sue")
    approved = floor.client.post(f"/api/cage/approvals/{number}/approve", headers=sue)
    assert approved.status_code == 200, approved.text
    assert floor.balances()["ann"] == before["ann"] - 90_000


def test_605a4d_a_request_is_decided_once(floor: Floorkit) -> None:
    before = floor.balances()
    number = _ask_credit(floor, 400_000).json()["request"]["id"]
    sue = _staff(floor, "supervisor", "sue")
    first = floor.client.post(f"/api/cage/approvals/{number}/approve", headers=auth("super"))
    assert first.status_code == 200, first.text
    again = floor.client.post(f"/api/cage/approvals/{number}/approve", headers=sue)
    assert again.status_code == 409
    assert again.json()["detail"]["code"] == "decided"
    late = floor.client.post(
        f"/api/cage/approvals/{number}/refuse", json={"reason": "too late"}, headers=sue
    )
    assert late.status_code == 409
    assert floor.balances()["ann"] == before["ann"] + 400_000


def test_605a4d_two_approvals_at_once_move_the_money_once(floor: Floorkit) -> None:
    """Two supervisors approve one request at the same moment from two processes (two
    stores on the database): one approval moves the money, the other is refused."""
    before = floor.balances()
    rows = floor.ledger_rows()
    number = _ask_credit(floor, 700_000).json()["request"]["id"]

    results = floor.race(
        lambda store: approvals.approve(store, number, actor=Actor(Role.SUPERVISOR, "sam")),
        lambda store: approvals.approve(store, number, actor=Actor(Role.SUPERVISOR, "sue")),
    )
    refused = [r for r in results if isinstance(r, FloorRefusedError)]
    decided = [r for r in results if isinstance(r, approvals.Decision)]
    assert len(decided) == 1 and len(refused) == 1, results
    assert refused[0].code == "decided"
    assert floor.balances()["ann"] == before["ann"] + 700_000
    assert floor.ledger_rows() == rows + 1


def test_605a4d_a_refusal_is_recorded_and_moves_nothing(floor: Floorkit) -> None:
    before = floor.balances()
    sold = floor.client.post(
        "/api/cage/vouchers/sell", json={"amount": 1_000_000}, headers=auth("cashier")
    )
    assert sold.status_code == 202, sold.text  # $10,000.00 voucher: above $3,000.00
    assert "validation_code" not in sold.json()
    number = sold.json()["request"]["id"]
    blank = floor.client.post(
        f"/api/cage/approvals/{number}/refuse", json={"reason": "  "}, headers=auth("super")
    )
    assert blank.status_code == 422  # a refusal names its reason
    refused = floor.client.post(
        f"/api/cage/approvals/{number}/refuse",
        json={"reason": "no cash seen"},
        headers=auth("super"),
    )
    assert refused.status_code == 200, refused.text
    done = refused.json()["request"]
    assert (done["status"], done["decided_by"], done["decision_reason"]) == (
        "refused",
        "sam",
        "no cash seen",
    )
    assert floor.balances() == before
    listed = floor.client.get("/api/cage/approvals?status=refused", headers=auth("super"))
    assert [r["id"] for r in listed.json()["requests"]] == [number]

    async def refusal_events(store: Any) -> list[Any]:
        return [e for e in await store.events("acct:cage") if e.kind == "cage_refused"]

    [event] = floor.run(refusal_events)
    assert (event.payload["request"], event.payload["refused_by"]) == (number, "sam")
    assert floor.verify().ok


def test_605a5d_a_hand_pay_to_a_terminal_the_floor_has_not_is_refused(floor: Floorkit) -> None:
    before = floor.balances()
    for amount in (500, 900_000):  # below the limit, and above it (no request either)
        answer = floor.client.post(
            "/api/floor/hand-pay",
            json={"account": "ann", "terminal": "ZZ-9", "amount": amount, "kind": "jackpot"},
            headers=auth("cashier"),
        )
        assert answer.status_code == 409, answer.text
        assert answer.json()["detail"]["code"] == "terminal_unknown"
    assert floor.balances() == before
    assert floor.client.get("/api/cage/approvals", headers=auth("super")).json()["requests"] == []
    meters = floor.client.get("/api/floor/meters", headers=auth("super")).text
    assert "ZZ-9" not in meters


def test_a_void_names_its_reason(floor: Floorkit) -> None:
    for body in ({}, {"reason": ""}, {"reason": "   "}):
        answer = floor.client.post("/api/tables/A1/void", json=body, headers=auth("super"))
        assert answer.status_code == 422, (body, answer.text)


def test_605a4d_a_cashier_sees_only_his_own_drawer_and_requests(floor: Floorkit) -> None:
    carl = _staff(floor, "cashier", "carl")
    for who in (auth("cashier"), carl):
        opened = floor.client.post("/api/cage/drawer/open", json={"opening": 50_000}, headers=who)
        assert opened.status_code == 200, opened.text
    _ask_credit(floor, 400_000)  # cleo's request
    report = floor.client.get("/api/cage/report", headers=carl).json()
    assert [d["cashier"] for d in report["drawers"]] == ["carl"]
    assert floor.client.get("/api/cage/approvals", headers=carl).json()["requests"] == []
    full = floor.client.get("/api/cage/report", headers=auth("super")).json()
    assert sorted(d["cashier"] for d in full["drawers"]) == ["carl", "cleo"]
    # the drawer is a cashier's: a supervisor opens none, a dealer reads none
    assert (
        floor.client.post(
            "/api/cage/drawer/open", json={"opening": 1}, headers=auth("super")
        ).status_code
        == 403
    )
    assert floor.client.get("/api/cage/drawer", headers=auth("dealer")).status_code == 403
    assert floor.client.get("/api/cage/approvals", headers=auth("dealer")).status_code == 403


def test_605a4d_a_drawer_counts_its_cashiers_movements_and_closes_with_its_variance(
    floor: Floorkit,
) -> None:
    cleo = auth("cashier")
    floor.client.post("/api/cage/drawer/open", json={"opening": 100_000}, headers=cleo)
    assert _ask_credit(floor, 20_000).status_code == 200  # $200 taken in
    sold = floor.client.post("/api/cage/vouchers/sell", json={"amount": 5_000}, headers=cleo)
    paid = floor.client.post(
        "/api/cage/vouchers", json={"code": sold.json()["validation_code"]}, headers=cleo
    )
    assert paid.status_code == 200  # $50 in, $50 out
    drawer = floor.client.get("/api/cage/drawer", headers=cleo).json()["drawer"]
    assert (drawer["cash_in"], drawer["cash_out"], drawer["expected"]) == (25_000, 5_000, 120_000)
    closed = floor.client.post("/api/cage/drawer/close", json={"counted": 119_000}, headers=cleo)
    assert closed.status_code == 200, closed.text
    done = closed.json()["drawer"]
    assert (done["status"], done["expected"], done["counted"], done["variance"]) == (
        "closed",
        120_000,
        119_000,
        -1_000,
    )
    assert done["variance_text"] == "-$10.00"
    again = floor.client.post("/api/cage/drawer/close", json={"counted": 1}, headers=cleo)
    assert again.status_code == 409
    report = floor.client.get("/api/cage/report", headers=auth("super")).json()
    assert report["cashiers"]["cleo"]["cash_in"] >= 25_000
    assert floor.verify().ok
