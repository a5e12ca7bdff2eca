"""Finding 1 — a dealer's token could create money: every money movement goes through one policy
(role, account kinds, invariant), held by the write path AND the database.

Each attack asserts the refusal, that no balance and no ledger row changed, and what
``verify-log`` says (PA 605a.2(d) game accounts, 605a.4(d) access controls, 605a.5(c)–(d))."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from tablejack.server.support.auth import Principal
from tablejack.store import EventIn, Step, Store, Transfer
from tablejack.store.db import InvariantError, PostingRefusedError
from tablejack.store.policy import MOVEMENTS, Actor, Role
from tablejack.store.vouchers import cash_out
from tests.support.floor import CREDIT, auth

from .conftest import Floorkit, Socketkit


def test_605a4d_a_dealer_may_not_pay_by_hand_even_from_a_players_account(floor: Floorkit) -> None:
    before, rows = floor.balances(), floor.ledger_rows()
    answer = floor.client.post(
        "/api/floor/hand-pay",
        json={"account": "ann", "terminal": "EWT-1", "amount": 1000, "kind": "jackpot"},
        headers=auth("dealer"),
    )
    assert answer.status_code == 403
    assert answer.json()["detail"]["code"] == "role"
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)
    audit = floor.client.get("/api/audit", headers=auth("super")).json()
    assert audit[0]["kind"] == "role" and audit[0]["actor"] == "dana"
    assert floor.verify().problems == []


@pytest.mark.parametrize("account", ["vouchers", "escrow:A1", "house:A1", "cage", "bills"])
def test_605a2d_a_hand_pay_comes_from_a_players_game_account_only(
    floor: Floorkit, account: str
) -> None:
    """The attack of the finding: a hand pay of $10 from the ``vouchers`` account (or an
    escrow) was accepted. Now the cashier's request is refused with the rule, nothing booked."""
    before, rows = floor.balances(), floor.ledger_rows()
    answer = floor.client.post(
        "/api/floor/hand-pay",
        json={"account": account, "terminal": "EWT-1", "amount": 1000, "kind": "jackpot"},
        headers=auth("cashier"),
    )
    assert answer.status_code == 409
    assert answer.json()["detail"]["code"] in ("account", "balance")
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)
    assert floor.verify().problems == []


@pytest.mark.parametrize("who", ["dealer", "super", "operator", "ann"])
def test_605a5c_only_a_cashier_sells_a_voucher_for_cash(floor: Floorkit, who: str) -> None:
    """A voucher sold at the cage is money the cage took in: a dealer, a supervisor, the
    operator or a player (even at his terminal) who asks for one is refused with the rule and
    audited; no voucher, balance or ledger row appears."""
    headers = floor.session("ann") if who == "ann" else auth(who)
    before, rows = floor.balances(), floor.ledger_rows()
    answer = floor.client.post("/api/cage/vouchers/sell", json={"amount": 1000}, headers=headers)
    assert (answer.status_code, answer.json()["detail"]["code"]) == (403, "role")
    assert "validation_code" not in answer.text
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)
    audit = floor.client.get("/api/audit", headers=auth("super")).json()
    assert audit[0]["kind"] == "role"
    assert floor.verify().problems == []


def test_605a5c_the_database_refuses_a_voucher_sold_from_anything_but_the_cage(
    floor: Floorkit,
) -> None:
    """With the application bypassed, a ``voucher_sold`` ledger row from a player's account,
    a table's house or the bills to the vouchers — money made into a voucher without cash at
    the cage — is refused by the database's policy trigger."""

    async def attack(store: Store) -> list[str]:
        outcome = []
        for source in ("ann", "house:A1", "bills"):
            try:
                async with store.engine.begin() as connection:
                    await connection.execute(
                        text(
                            "INSERT INTO ledger_entries (at_us, from_account, to_account, amount, "
                            f"kind, memo) VALUES (0, '{source}', 'vouchers', 5000, "
                            "'voucher_sold', '')"
                        )
                    )
            except Exception as error:  # the driver's integrity or internal error
                outcome.append(type(error).__name__)
            else:
                outcome.append("accepted")
        return outcome

    before, rows = floor.balances(), floor.ledger_rows()
    assert "accepted" not in floor.run(attack)
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)


def test_605a2d_cash_out_moves_only_the_signed_in_players_own_account(floor: Floorkit) -> None:
    """The attack of the finding: during a $50 wager the dealer cashed ``escrow:A1`` out to a
    voucher. A dealer may not cash out at all; a player's session cashes out only his own
    account — the request names no account any more — and only the credit he holds."""
    floor.client.post(
        "/api/tables/A1/dealer", json={"command": "open-round"}, headers=auth("dealer")
    )
    with floor.client.websocket_connect("/ws") as socket:
        ann = Socketkit(socket, floor.hello("ann"), "A1")
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 5000})["ok"]
    before, rows = floor.balances(), floor.ledger_rows()
    assert before["escrow:A1"] == 5000
    for headers, body in (
        (auth("dealer"), {"amount": 5000}),
        (auth("dealer"), {"amount": 5000, "account": "escrow:A1"}),
        (auth("ann"), {}),  # a player's token, but no session at a terminal
    ):
        answer = floor.client.post("/api/floor/cash-out", json=body, headers=headers)
        assert answer.status_code in (403, 422), answer.text
    session = floor.session("bob", "EWT-2")
    mine = floor.client.post(
        "/api/floor/cash-out", json={"amount": 5000, "account": "escrow:A1"}, headers=session
    )
    assert mine.status_code == 422  # the request cannot even name another account
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)
    audit = floor.client.get("/api/audit", headers=auth("super")).json()
    assert ("terminal", "ann") in [(e["kind"], e["actor"]) for e in audit]
    assert [(e["kind"], e["actor"]) for e in audit].count(("role", "dana")) == 1  # (+ one 422)
    assert floor.verify().problems == []


def test_the_policy_refuses_a_voucher_from_an_escrow_in_the_write_path(floor: Floorkit) -> None:
    """Below the API: whatever code calls the store, a posting the policy forbids is refused
    in the write path itself — here a voucher issued out of a table's escrow by a dealer, by a
    player from another's account, and a table booking a wager from a player who did not ask."""

    async def attack(store: Store) -> list[str]:
        refused = []
        for actor, transfer, requester in (
            (
                Actor(Role.DEALER, "dana"),
                Transfer("escrow:A1", "vouchers", 5000, "voucher_out"),
                "dana",
            ),
            (
                Actor(Role.PLAYER, "ann", "EWT-1"),
                Transfer("bob", "vouchers", 100, "voucher_out"),
                "ann",
            ),
            (Actor(Role.TABLE, "A1"), Transfer("bob", "escrow:A1", 100, "wager"), "ann"),
            (Actor(Role.TABLE, "A1"), Transfer("ann", "escrow:B9", 100, "wager"), "ann"),
            (Actor(Role.CASHIER, "cleo"), Transfer("cage", "escrow:A1", 100, "fund"), "cleo"),
            (Actor(Role.PLAYER, "ann"), Transfer("bills", "ann", 100, "bill_in"), "ann"),
        ):
            step = Step(
                "acct:attack",
                events=[EventIn("attack", {}, actor=requester)],
                transfers=[transfer],
                open_round=("attack", 0, "", "accounts"),
                actor=actor,
            )
            with pytest.raises(PostingRefusedError) as caught:
                await store.commit(step)
            refused.append(caught.value.code)
        return refused

    before, rows = floor.balances(), floor.ledger_rows()
    assert floor.run(attack) == ["role", "account", "account", "account", "account", "terminal"]
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)
    assert floor.verify().problems == []


def test_the_store_refuses_a_dealers_cash_out_of_an_escrow(floor: Floorkit) -> None:
    async def attack(store: Store) -> str:
        from tablejack.store.vouchers import FloorRefusedError

        with pytest.raises(FloorRefusedError) as caught:
            await cash_out(store, 5000, actor=Actor(Role.DEALER, "dana", "EWT-1"))
        return caught.value.code

    assert floor.run(attack) == "role"


def test_the_database_holds_the_movement_kinds_and_the_account_invariants(
    floor: Floorkit,
) -> None:
    """With the application bypassed — SQL straight into the database — the triggers and
    CHECKs refuse a ledger row the policy does not allow, a player below zero, an escrow below
    zero, a player named like an escrow, and any change or deletion of a ledger row or event."""

    async def attack(store: Store) -> list[str]:
        refused = []
        statements = [
            "INSERT INTO ledger_entries (at_us, from_account, to_account, amount, kind, memo) "
            "VALUES (0, 'escrow:A1', 'vouchers', 5000, 'voucher_out', '')",
            "INSERT INTO ledger_entries (at_us, from_account, to_account, amount, kind, memo) "
            "VALUES (0, 'cage', 'ann', 5000, 'gift', '')",
            "INSERT INTO ledger_entries (at_us, from_account, to_account, amount, kind, memo) "
            "VALUES (0, 'ann', 'ann', 5000, 'wager', '')",
            "UPDATE accounts SET balance = -1 WHERE id = 'ann'",
            "UPDATE accounts SET balance = -50 WHERE id = 'escrow:A1'",
            "INSERT INTO accounts (id, kind, name, balance, created_us) "
            "VALUES ('bills', 'bills', 'bills', 10, 0)",
            "INSERT INTO accounts (id, kind, name, balance, created_us) "
            "VALUES ('escrow:Z9', 'player', 'x', 0, 0)",
            "UPDATE ledger_entries SET amount = amount + 5000000",
            "DELETE FROM ledger_entries",
            "UPDATE events SET payload = '{}'",
            "DELETE FROM events",
        ]
        for statement in statements:
            try:
                async with store.engine.begin() as connection:
                    await connection.execute(text(statement))
            except Exception as error:  # the driver's integrity or internal error
                refused.append(type(error).__name__)
            else:
                refused.append("accepted")
        return refused

    before, rows = floor.balances(), floor.ledger_rows()
    outcome = floor.run(attack)
    assert "accepted" not in outcome, outcome
    assert (floor.balances(), floor.ledger_rows()) == (before, rows)


def test_the_write_path_reports_a_database_invariant_as_a_store_error(floor: Floorkit) -> None:
    async def attack(store: Store) -> type[Exception]:
        async with store.engine.begin() as connection:  # a row the policy shape check allows
            await connection.execute(
                text("UPDATE accounts SET kind = 'house' WHERE id = 'house:A1'")
            )
        step = Step(
            "acct:EWT-1",
            events=[EventIn("tip", {"amount": 10**12}, actor="ann")],
            transfers=[Transfer("ann", "escrow:A1", 10**12, "wager")],
            actor=Actor(Role.TABLE, "A1"),
        )
        with pytest.raises((InvariantError, PostingRefusedError, Exception)) as caught:
            await store.commit(step)
        return caught.type

    assert floor.run(attack) is not None
    assert floor.balances()["ann"] == CREDIT


def test_escrow_is_never_a_balance_a_terminal_shows(floor: Floorkit) -> None:
    """The cache the server keeps for terminals holds player accounts only: after every kind
    of movement no escrow, house, cage or vouchers account is in it."""
    session = floor.session("ann")
    cashed = floor.client.post("/api/floor/cash-out", json={"amount": 100}, headers=session)
    assert cashed.status_code == 200, cashed.text
    cashier = floor.client.post(
        "/api/floor/hand-pay",
        json={"account": "ann", "terminal": "EWT-1", "amount": 100, "kind": "jackpot"},
        headers=auth("cashier"),
    )
    assert cashier.status_code == 200, cashier.text
    floor.play_round()
    balances: dict[str, Any] = floor.client.app.state.floor.balances  # type: ignore[attr-defined]
    assert set(balances) == {"ann", "bob", "cat"}  # the floor's players, nothing else


def test_every_movement_kind_names_the_roles_that_start_it_and_two_account_kinds() -> None:
    """The policy table is complete: each movement kind has at least one role, a source and a
    target kind, and a clause; a player-started one moves only his own account at a terminal."""
    for kind, rule in MOVEMENTS.items():
        assert rule.roles and rule.source is not rule.target and rule.rule.startswith("PA "), kind
        if Role.PLAYER in rule.roles:
            assert rule.own and rule.at_terminal, kind
    assert Principal("dealer", "dana").may("hand_pay") is False
    assert Principal("cashier", "cleo").may("void_round") is False
    assert Principal("cashier", "cleo").may("dealer_command") is False
    assert Principal("dealer", "dana").may("cash_out") is False
