"""Tips to the dealer and the tip report of PA 605a.5(d) ("tip report if tips are enabled"):
the floor setting, the ``tip`` movement player → ``tips:<table>``, the refusals, the tip
meter per EWT, table and floor (never coin in, drop or win), and the report per gaming day;
on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tablejack.store import Store
from tablejack.store.meters_report import day_bounds, gaming_day_of, readings
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import lock_terminal, self_exclude, set_limits, usage
from tablejack.store.tips import give_tip, tip_report
from tablejack.store.vouchers import FloorRefusedError, register_terminal, set_floor_setting
from tests.support.floor import insert
from tests.support.store import Backend

DAY_US = 24 * 3600 * 1_000_000
CASHIER = Actor(Role.CASHIER, "cleo")
OPERATOR = Actor(Role.OPERATOR, "olga")


def setting(client: Any, kit: Any, key: str, value: Any, who: str = "operator") -> Any:
    return client.put(
        "/api/floor/settings", json={"key": key, "value": value}, headers=kit.auth(who)
    )


def tip(
    client: Any,
    kit: Any,
    who: str,
    amount: Any,
    terminal: str = "EWT-1",
    table: str = "A1",
    at: str | None = None,
) -> Any:
    """A tip to the dealer of ``table`` by ``who`` signed in at ``terminal`` (registered at
    ``at``, by default ``table``)."""
    session = kit.session(client, who, terminal, at or table)
    return client.post("/api/floor/tip", json={"table": table, "amount": amount}, headers=session)


def audit(client: Any, kit: Any) -> list[dict[str, Any]]:
    return list(client.get("/api/audit", headers=kit.auth("super")).json())


def meters(client: Any, kit: Any) -> dict[str, Any]:
    return dict(client.get("/api/floor/meters", headers=kit.auth("super")).json())


def test_605a5d_tip_refused_while_tips_are_disabled(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    assert client.get("/api/floor/tip", headers=kit.auth("ann")).json() == {
        "enabled": False,
        "maximum": 10_000,
        "rule": "PA 605a.5(d)",
    }
    refused = tip(client, kit, "ann", 500)
    assert refused.status_code == 409
    assert refused.json()["detail"] == {
        "code": "tips_disabled",
        "rule": "PA 605a.5(d)",
        "message": "Tips are not enabled on this floor (setting tips_enabled) (PA 605a.5(d)).",
    }
    assert kit.balance(client, "ann") == kit.credit
    assert client.get("/api/accounts/tips:A1/ledger", headers=kit.auth("super")).status_code == 404
    entry = audit(client, kit)[0]
    assert (entry["kind"], entry["actor"], entry["terminal"], entry["rule"]) == (
        "tips_disabled",
        "ann",
        "EWT-1",
        "PA 605a.5(d)",
    )


def test_605a5d_tips_enabled_by_the_operator_only_and_audited(make_client: Any, kit: Any) -> None:
    client = make_client()
    for who, subject in (("dealer", "dana"), ("super", "sam")):
        refused = setting(client, kit, "tips_enabled", True, who=who)
        assert refused.status_code == 403
        assert (refused.json()["detail"]["code"], refused.json()["detail"]["rule"]) == (
            "role",
            "role: operator",
        )
        entry = audit(client, kit)[0]
        assert (entry["kind"], entry["actor"], entry["rule"]) == ("role", subject, "role: operator")
    assert client.get("/api/floor/tip", headers=kit.auth("ann")).json()["enabled"] is False
    assert setting(client, kit, "tips_enabled", "yes").status_code == 409  # a boolean only
    assert setting(client, kit, "tip_maximum", 0).status_code == 409
    assert setting(client, kit, "tips_enabled", True).json()["tips_enabled"] is True
    assert setting(client, kit, "tip_maximum", 2500).json()["tip_maximum"] == 2500
    kinds = [(e["kind"], e["actor"], e["message"]) for e in audit(client, kit)[:2]]
    assert kinds == [
        ("setting", "olga", "tip_maximum = 2500"),
        ("setting", "olga", "tips_enabled = true"),
    ]
    assert client.get("/api/floor/tip", headers=kit.auth("bob")).json()["maximum"] == 2500


def test_605a5d_a_tip_moves_money_from_the_player_to_the_tables_tip_account(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    setting(client, kit, "tips_enabled", True)
    given = tip(client, kit, "ann", 500)
    assert given.status_code == 200
    assert {k: given.json()[k] for k in ("kind", "amount", "balance", "log", "table")} == {
        "kind": "tip",
        "amount": 500,
        "balance": kit.credit - 500,
        "log": "acct:EWT-1",
        "table": "A1",
    }
    tip(client, kit, "bob", 250, terminal="EWT-2")
    assert kit.balance(client, "ann") == kit.credit - 500
    box = client.get("/api/accounts/tips:A1/ledger", headers=kit.auth("super")).json()
    assert box["balance"] == 750
    assert [(e["kind"], e["from_account"], e["amount"]) for e in box["entries"]] == [
        ("tip", "bob", 250),
        ("tip", "ann", 500),
    ]
    # double entry: every hash chain and the ledger still agree (the balances sum to zero)
    verified = client.get("/api/verify-log", headers=kit.auth("super")).json()
    assert (verified["ok"], verified["problems"]) == (True, [])

    async def body(store: Store) -> tuple[int, list[str], list[Any]]:
        events = await store.events("acct:EWT-1")
        return (
            await store.total(),
            await store.ledger_check(),
            [(e.kind, e.payload) for e in events],
        )

    total, problems, events = backend.run(body)
    assert (total, problems) == (0, [])
    # the event names the ledger row it moved (the posting bound into the event)
    assert events == [
        (
            "tip",
            {
                "account": "ann",
                "amount": 500,
                "terminal": "EWT-1",
                "table": "A1",
                "by": "ann",
                "postings": [["tip", "ann", "tips:A1", 500, None]],
            },
        )
    ]


@pytest.mark.parametrize(
    ("amount", "code", "rule"),
    [
        (0, "invalid", "PA 605a.2(d)"),
        (-100, "invalid", "PA 605a.2(d)"),
        (2.5, "invalid", "PA 605a.2(d)"),
        ("500", "invalid", "PA 605a.2(d)"),
        (True, "invalid", "PA 605a.2(d)"),
        (10_001, "tip_maximum", "PA 605a.5(d)"),
    ],
)
def test_605a5d_a_tip_is_whole_positive_cents_up_to_the_tip_maximum(
    make_client: Any, kit: Any, amount: Any, code: str, rule: str
) -> None:
    client = make_client()
    setting(client, kit, "tips_enabled", True)
    refused = tip(client, kit, "ann", amount)
    assert refused.status_code == 409
    assert (refused.json()["detail"]["code"], refused.json()["detail"]["rule"]) == (code, rule)
    assert kit.balance(client, "ann") == kit.credit
    assert (audit(client, kit)[0]["kind"], audit(client, kit)[0]["actor"]) == (code, "ann")
    assert tip(client, kit, "ann", 10_000).status_code == 200  # the maximum itself is allowed


def test_605a2d_a_tip_above_the_balance_is_refused(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    setting(client, kit, "tips_enabled", True)
    cat = kit.session(client, "cat", "EWT-3", "A1")
    assert (
        insert(client, "/api/floor/bill-in", json={"amount": 500}, headers=cat).status_code == 200
    )
    refused = tip(client, kit, "cat", 600, terminal="EWT-3")
    assert refused.status_code == 409
    assert refused.json()["detail"]["code"] == "balance"
    assert refused.json()["detail"]["rule"] == "PA 605a.2(d)"
    assert kit.balance(client, "cat") == 500
    assert ("balance", "cat") in [(e["kind"], e["actor"]) for e in audit(client, kit)]
    assert tip(client, kit, "cat", 500, terminal="EWT-3").json()["balance"] == 0


def test_605a4d_only_the_player_tips_and_only_the_table_his_terminal_serves(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.stacked_table("A1"), kit.stacked_table("B2")])
    setting(client, kit, "tips_enabled", True)
    body = {"table": "A1", "amount": 100}
    for who in ("dealer", "super"):
        refused = kit.post(client, "/api/floor/tip", who, **body)
        assert (refused.status_code, refused.json()["detail"]["rule"]) == (403, "role: player")
    # the player's own token is not a session at a terminal: the tip has no terminal
    plain = kit.post(client, "/api/floor/tip", "ann", **body)
    assert (plain.status_code, plain.json()["detail"]["code"]) == (403, "terminal")
    # nor may a body name the terminal: it is the session's
    ann = kit.session(client, "ann", "EWT-1", "A1")
    named = client.post("/api/floor/tip", json=dict(body, terminal="EWT-7"), headers=ann)
    assert named.status_code == 422
    unknown = tip(client, kit, "ann", 100, table="Z9", at="A1")
    assert unknown.status_code == 409
    # EWT-7 serves A1: a tip from it to another table's dealer is refused
    wrong = tip(client, kit, "ann", 100, terminal="EWT-7", table="B2", at="A1")
    assert wrong.status_code == 409
    assert wrong.json()["detail"]["message"] == (
        "Terminal EWT-7 serves table A1; it cannot tip the dealer of B2."
    )
    assert kit.balance(client, "ann") == kit.credit
    assert client.get("/api/accounts/tips:B2/ledger", headers=kit.auth("super")).status_code == 404
    assert tip(client, kit, "ann", 100).json()["balance"] == kit.credit - 100
    ann_left = kit.credit - 100
    assert kit.balance(client, "ann") == ann_left
    refusals = [(e["kind"], e["actor"], e["rule"]) for e in audit(client, kit)]
    assert [r for r in refusals if r[0] == "role"] == [
        ("role", "sam", "role: player"),
        ("role", "dana", "role: player"),
    ]
    assert [r[:2] for r in refusals if r[0] == "invalid"] == [("invalid", "ann")] * 2


def test_player_protection_a_self_excluded_player_may_not_tip_and_tips_count_toward_the_loss_limit(
    backend: Backend,
) -> None:
    now = time.time_ns() // 1000

    async def body(store: Store) -> list[Any]:
        for player in ("ann", "bob"):
            await store.ensure_account(player, "player")
            await store.fund(player, 10_000, actor=CASHIER)
        await set_floor_setting(store, "tips_enabled", True, by="olga")
        ann, bob = Actor(Role.PLAYER, "ann", "EWT-1"), Actor(Role.PLAYER, "bob", "EWT-2")
        out: list[Any] = []
        await self_exclude(store, "ann", now + DAY_US, by="ann", at_us=now)
        try:
            await give_tip(store, "A1", 100, actor=ann, at_us=now)
        except FloorRefusedError as refusal:
            out.append((refusal.code, refusal.rule))
        await set_limits(store, "bob", {"loss_limit": 1000}, by="bob", at_us=now)
        await give_tip(store, "A1", 800, actor=bob, at_us=now)
        try:
            await give_tip(store, "A1", 201, actor=bob, at_us=now)
        except FloorRefusedError as refusal:
            out.append((refusal.code, refusal.rule))
        day = day_bounds(gaming_day_of(now, 6), 6)
        out.append((await usage(store, "bob", *day))["loss"])
        out.append((await store.balance("ann"), await store.balance("bob")))
        out.append([e["kind"] for e in await store.audit_entries(limit=3)])
        return out

    excluded, past_loss, loss, balances, kinds = backend.run(body)
    assert excluded == ("excluded", "player protection")
    assert past_loss == ("limit", "player protection")
    assert loss == 800  # the tip counts toward the loss limit (not toward the wager limit)
    assert balances == (10_000, 9200)
    assert kinds[0] == "limit"


def test_605a5d_a_tip_is_not_coin_in_drop_or_win(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    kit.play_round(client)  # registers EWT-1 and EWT-2 at A1
    before = meters(client, kit)
    setting(client, kit, "tips_enabled", True)
    assert tip(client, kit, "ann", 700).status_code == 200
    after = meters(client, kit)
    money = (
        "coin_in",
        "voided",
        "coin_out",
        "jackpots",
        "cancelled_credits",
        "bills_in",
        "vouchers_in",
        "vouchers_out",
        "games_played",
        "drop",
        "win",
        "hold_percent",
        "wager_kinds",
    )
    for scope, scope_id in (("terminal", "EWT-1"), ("table", "A1"), ("floor", "floor")):
        assert {k: after[scope][scope_id][k] for k in money} == {
            k: before[scope][scope_id][k] for k in money
        }
        assert after[scope][scope_id]["tips"] == 700
    table = after["table"]["A1"]
    assert table["coin_in"] - table["voided"] - table["coin_out"] == table["win"]
    # the table's own meters (drop and win per wager kind) are untouched too
    bumped = client.get("/api/meters", headers=kit.auth("super")).json()
    assert {(m["wager_kind"], m["drop"], m["win"]) for m in bumped} == {
        (kind, entry["drop"], entry["win"]) for kind, entry in table["wager_kinds"].items()
    }


def test_605a5d_tip_meter_per_ewt_table_and_floor(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table("A1"), kit.stacked_table("B2")], backend=backend)
    setting(client, kit, "tips_enabled", True)
    tip(client, kit, "ann", 500)
    tip(client, kit, "ann", 100)
    tip(client, kit, "bob", 200, terminal="EWT-2")
    tip(client, kit, "bob", 1000, terminal="EWT-3", table="B2")  # EWT-3 registered at B2
    read = meters(client, kit)
    found = {
        (scope, scope_id): (m["tips"], m["tips_count"], m["lifetime"]["tips"])
        for scope in ("terminal", "table", "floor")
        for scope_id, m in read[scope].items()
    }
    assert found == {
        ("terminal", "EWT-1"): (600, 2, 600),
        ("terminal", "EWT-2"): (200, 1, 200),
        ("terminal", "EWT-3"): (1000, 1, 1000),
        ("table", "A1"): (800, 3, 800),
        ("table", "B2"): (1000, 1, 1000),
        ("floor", "floor"): (1800, 4, 1800),
    }
    assert read["table"]["B2"]["coin_in"] == 0


def test_605a5d_tip_report_per_gaming_day(make_client: Any, backend: Backend, kit: Any) -> None:
    client = make_client(backend=backend)
    setting(client, kit, "tips_enabled", True)
    tip(client, kit, "ann", 500)
    tip(client, kit, "ann", 300)
    tip(client, kit, "bob", 200, terminal="EWT-2")
    today = gaming_day_of(time.time_ns() // 1000, 6)
    live = client.get(f"/api/floor/reports/tips?day={today}", headers=kit.auth("super")).json()
    assert {k: live[k] for k in ("gaming_day", "final", "tips_enabled", "statement", "rule")} == {
        "gaming_day": today,
        "final": False,
        "tips_enabled": True,
        "statement": None,
        "rule": "PA 605a.5(d)",
    }
    assert live["tables"] == {"A1": {"count": 3, "amount": 1000}}
    assert live["terminals"] == {
        "EWT-1": {"count": 2, "amount": 800},
        "EWT-2": {"count": 1, "amount": 200},
    }
    assert live["floor"] == {"count": 3, "amount": 1000}
    assert client.get("/api/floor/reports/tips", headers=kit.auth("super")).json() == live
    # once the day has ended: from the day's snapshot, the same figures, final
    later = day_bounds(today, 6)[1] + 1

    async def body(store: Store) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        report = await tip_report(store, today, later)
        start, end = day_bounds(today, 6)
        day = await readings(store, since_us=start, until_us=end)
        next_day = await tip_report(store, gaming_day_of(later, 6), later + DAY_US)
        return report, day["floor"]["floor"], next_day

    report, day, next_day = backend.run(body)
    assert report["final"] is True
    assert (report["tables"], report["terminals"], report["floor"]) == (
        live["tables"],
        live["terminals"],
        live["floor"],
    )
    assert (day["tips"], day["tips_count"]) == (1000, 3)
    assert (next_day["final"], next_day["floor"], next_day["tables"]) == (
        True,
        {"count": 0, "amount": 0},
        {},
    )


def test_605a5d_tip_report_states_that_tips_are_disabled(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    setting(client, kit, "tips_enabled", True)
    tip(client, kit, "ann", 400)
    setting(client, kit, "tips_enabled", False)
    assert tip(client, kit, "ann", 400).json()["detail"]["code"] == "tips_disabled"
    report = client.get("/api/floor/reports/tips", headers=kit.auth("super")).json()
    assert report["tips_enabled"] is False
    assert "Tips are disabled on this floor" in report["statement"]
    assert report["floor"] == {"count": 1, "amount": 400}  # tipped while they were enabled


def test_605a5d_tip_report_needs_a_supervisor(make_client: Any, kit: Any) -> None:
    client = make_client()
    for who in ("dealer", "ann"):
        refused = client.get("/api/floor/reports/tips", headers=kit.auth(who))
        assert refused.status_code == 403
        assert refused.json()["detail"]["code"] == "role"
    entries = audit(client, kit)
    assert [(e["kind"], e["actor"]) for e in entries[:2]] == [("role", "ann"), ("role", "dana")]
    bad = client.get("/api/floor/reports/tips?day=yesterday", headers=kit.auth("super"))
    assert bad.status_code == 409


def test_605a5d_a_tilted_terminal_takes_no_tip(backend: Backend) -> None:
    now = time.time_ns() // 1000

    async def body(store: Store) -> tuple[str, int | None]:
        await store.ensure_account("ann", "player")
        await store.fund("ann", 10_000, actor=CASHIER)
        await set_floor_setting(store, "tips_enabled", True, by="olga")
        await register_terminal(store, "EWT-1", "A1", by=OPERATOR)
        await lock_terminal(store, "EWT-1", "door_open", "door", by="dana", at_us=now)
        try:
            await give_tip(store, "A1", 100, actor=Actor(Role.PLAYER, "ann", "EWT-1"), at_us=now)
        except FloorRefusedError as refusal:
            return refusal.code, await store.balance("ann")
        return "accepted", await store.balance("ann")

    assert backend.run(body) == ("tilt", 10_000)
