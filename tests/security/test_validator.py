"""A bill or a voucher is an event of the terminal's validator, not of the player's browser
(PA 605a.5(c), 605a.4(d)), and a locked terminal takes no money (PA 605a lock-out): the
attacks of the audit, on SQLite and PostgreSQL.

* a bill-in replayed (the same validator event, the same proof) is answered with the first
  answer and moves nothing — through the API and through a second store on the same database
  (another process, a restart);
* 40 bills in a burst: those past the floor's ``validator_per_minute`` are refused;
* a forged proof, a proof of another bill, a stolen session cookie without the terminal's
  device credential (its own "validator" registered or not): nothing moves;
* after SAS long poll 01 (``host_disabled``) a bill is refused; under a ``bill_validator``
  tilt, bills, vouchers and cash-outs; under a host disable a cash-out is still paid (the
  player may leave), as the lock table documents.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tablejack.server.links.interface import attach
from tablejack.server.links.sas.link import SasLink, SasTerminal
from tablejack.server.links.sas.poll import SasHost
from tablejack.store import Store
from tablejack.store import validator as validators
from tablejack.store.floor_models import VALIDATOR_EVENTS
from tablejack.store.vouchers import FloorRefusedError
from tests.support.store import Backend

BILL = "/api/floor/bill-in"
VOUCHER = "/api/floor/voucher-in"
CASH_OUT = "/api/floor/cash-out"


def ledger(client: Any, kit: Any, account: str) -> list[dict[str, Any]]:
    answer = client.get(f"/api/accounts/{account}/ledger", headers=kit.auth("super"))
    return list(answer.json()["entries"])


def signed(
    client: Any, kit: Any, terminal: str, event: str, amount: int, *, table: str = "A1"
) -> dict[str, Any]:
    """A bill's body as the terminal's own (registered) validator controller signs it."""
    private = kit.validator(client, terminal, kit.terminal_key(client, terminal, table))
    proof = validators.sign(private, terminal, event, "bill", amount)
    return {"amount": amount, "event": event, "proof": proof}


def detail(answer: Any) -> tuple[int, str, str]:
    found = answer.json()["detail"]
    return answer.status_code, found["code"], found["rule"]


def test_605a5c_a_replayed_bill_in_moves_nothing(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    body = signed(client, kit, "EWT-1", "ev-0001", 10_000)
    first = client.post(BILL, json=body, headers=cat)
    assert first.status_code == 200, first.text
    assert first.json()["balance"] == 10_000
    for _ in range(10):  # the same request, ten times: the first answer, nothing moved
        again = client.post(BILL, json=body, headers=cat)
        assert again.status_code == 200
        assert again.json() == first.json()
    assert kit.balance(client, "cat") == 10_000
    assert len(ledger(client, kit, "cat")) == 1
    # the id again for another bill, even signed by the validator: refused, nothing moved
    other = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-0001", 5000), headers=cat)
    assert detail(other) == (409, "event", "PA 605a.4(d)")
    assert kit.balance(client, "cat") == 10_000
    # the event id is the terminal's: the same id at another terminal is another bill
    ann = kit.session(client, "ann", "EWT-2", "A1")
    there = client.post(BILL, json=signed(client, kit, "EWT-2", "ev-0001", 2000), headers=ann)
    assert there.status_code == 200, there.text
    assert kit.balance(client, "ann") == kit.credit + 2000


def test_605a5c_a_validator_event_is_answered_once_across_processes_and_restarts(
    backend: Backend,
) -> None:
    async def main() -> None:
        one = await Store.open(backend.url, schema=backend.schema)
        two = await Store.open(backend.url, schema=backend.schema, migrate=False)
        try:
            claimed = await validators.claim(one, "EWT-9", "ev-1", "bill", 500, "ann", 20)
            assert claimed.first is None
            answer = {"status": 200, "body": {"ok": True, "amount": 500}}
            await validators.settle(one, "EWT-9", "ev-1", "ok", answer)
            again = await validators.claim(two, "EWT-9", "ev-1", "bill", 500, "ann", 20)
            assert again.first == answer
            # the money's own transaction takes an event once: a second take is refused
            async with two.transaction() as connection:
                await connection.execute(
                    VALIDATOR_EVENTS.update().values(status="pending", answer=None)
                )
            async with one.transaction() as connection:
                assert await validators.take(connection, "EWT-9", "ev-1") == {
                    "validator_event": "ev-1"
                }
            try:
                async with two.transaction() as connection:
                    await validators.take(connection, "EWT-9", "ev-1")
            except FloorRefusedError as refusal:
                assert refusal.code == "replay"
            else:
                raise AssertionError("an event was taken twice")
        finally:
            await two.close()
            await one.close()

    asyncio.run(main())


def test_605a5c_40_bills_in_a_burst_past_the_terminal_rate_are_refused(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    rate = client.get("/api/floor/settings", headers=kit.auth("super")).json()
    assert rate["validator_per_minute"] == 20
    answers = [
        client.post(BILL, json=signed(client, kit, "EWT-1", f"ev-{n}", 10_000), headers=cat)
        for n in range(40)
    ]
    paid = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code != 200]
    assert len(paid) == 20
    assert {detail(a) for a in refused} == {(409, "rate", "PA 605a.5(c)")}
    assert kit.balance(client, "cat") == 20 * 10_000
    assert len(ledger(client, kit, "cat")) == 20
    # a refused bill's id stays refused (the validator returned that bill)
    again = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-39", 10_000), headers=cat)
    assert detail(again) == (409, "rate", "PA 605a.5(c)")
    # the floor sets the rate: within it, the terminal's next bill is paid
    changed = client.put(
        "/api/floor/settings",
        json={"key": "validator_per_minute", "value": 25},
        headers=kit.auth("operator"),
    )
    assert changed.status_code == 200, changed.text
    more = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-40", 10_000), headers=cat)
    assert more.status_code == 200, more.text


def test_605a4d_a_forged_proof_or_a_stolen_session_without_the_device_moves_nothing(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    key = kit.terminal_key(client, "EWT-1", "A1")
    thief = validators.controller_key("the thief's own key")

    def bill(event: str, amount: int, proof: str) -> Any:
        return client.post(
            BILL, json={"amount": amount, "event": event, "proof": proof}, headers=cat
        )

    # the stolen session cookie alone: the validator has registered no key yet
    forged = validators.sign(thief, "EWT-1", "ev-1", "bill", 10_000)
    assert detail(bill("ev-1", 10_000, forged)) == (403, "validator", "PA 605a.4(d)")
    # nor may the thief register his own key without the terminal's device credential
    public = validators.public_key_text(thief.public_key())
    own = client.post("/api/floor/validator", json={"public_key": public, "terminal": "EWT-1"})
    assert own.status_code == 401
    guessed = client.post(
        "/api/floor/validator",
        json={"public_key": public, "terminal": "EWT-1", "terminal_key": "key-guess"},
    )
    assert guessed.status_code == 401
    # the terminal's validator registers with the terminal's key (audited)
    kit.validator(client, "EWT-1", key)
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    assert [e["kind"] for e in audit].count("validator_key") == 1
    # a forged proof, a proof of another amount, another terminal's proof: refused
    real = kit.validator(client, "EWT-1", key)
    other = kit.validator(client, "EWT-2", kit.terminal_key(client, "EWT-2", "A1"))
    attempts = [
        ("ev-2", 10_000, validators.sign(thief, "EWT-1", "ev-2", "bill", 10_000)),
        ("ev-3", 10_000, validators.sign(real, "EWT-1", "ev-3", "bill", 100)),
        ("ev-4", 10_000, validators.sign(real, "EWT-1", "ev-x", "bill", 10_000)),
        ("ev-5", 10_000, validators.sign(other, "EWT-2", "ev-5", "bill", 10_000)),
        ("ev-6", 10_000, "A" * 86 + "=="),
    ]
    for event, amount, proof in attempts:
        assert detail(bill(event, amount, proof)) == (403, "proof", "PA 605a.4(d)"), event
    # a voucher needs the same proof
    voucher = client.post(
        VOUCHER,
        json={"code": "123456789012345611", "event": "ev-7", "proof": forged},
        headers=cat,
    )
    assert detail(voucher) == (403, "proof", "PA 605a.4(d)")
    # a body without the proof is not a validator's event at all
    bare = client.post(BILL, json={"amount": 10_000}, headers=cat)
    assert bare.status_code == 422
    assert kit.balance(client, "cat") == 0
    assert ledger(client, kit, "cat") == []
    # a new terminal key (the operator's) ends the old registration: a session opened with
    # the new key needs a controller registered with it
    moved = client.post(
        "/api/floor/terminals",
        json={"terminal": "EWT-1", "table": "A1", "credential": True},
        headers=kit.auth("operator"),
    )
    new_key = moved.json()["credential"]
    opened = client.post(
        "/api/session",
        json={"token": kit.tokens["cat"], "terminal": "EWT-1", "terminal_key": new_key},
    )
    client.cookies.clear()
    cat = kit.bearer(opened.cookies["tj_session"])
    old = bill("ev-8", 10_000, validators.sign(real, "EWT-1", "ev-8", "bill", 10_000))
    assert detail(old) == (403, "validator", "PA 605a.4(d)")
    assert kit.balance(client, "cat") == 0
    renewed = kit.validator(client, "EWT-1", new_key)
    paid = bill("ev-9", 10_000, validators.sign(renewed, "EWT-1", "ev-9", "bill", 10_000))
    assert paid.status_code == 200, paid.text


def start_link(client: Any, terminal: str, address: int) -> SasLink:
    floor = client.app.state.floor
    link = SasLink(
        [SasTerminal(terminal, "tcp://127.0.0.1:0", address)], meter_seconds=0.0, meter_wait=5.0
    )
    client.portal.call(link.start, floor)
    attach(floor, link)
    return link


def test_605a5a_a_bill_after_sas_long_poll_01_host_disabled_is_refused(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    link = start_link(client, "EWT-1", 1)
    paid = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-1", 2000), headers=cat)
    assert paid.status_code == 200, paid.text
    with SasHost(f"tcp://127.0.0.1:{link.lines[0].port}", timeout=10.0) as host:
        assert host.long_poll(1, 0x01) == b"\x01"  # ACK: the host disables the terminal
        refused = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-2", 10_000), headers=cat)
        assert detail(refused) == (409, "tilt", "terminal lock-out")
        assert "host_disabled" in refused.json()["detail"]["message"]
        assert kit.balance(client, "cat") == 2000
        assert len(ledger(client, kit, "cat")) == 1
        # the host enables it again (long poll 02): the next bill is paid
        assert host.long_poll(1, 0x02) == b"\x01"
        after = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-3", 5000), headers=cat)
        assert after.status_code == 200, after.text
    assert kit.balance(client, "cat") == 7000


def tilt(client: Any, kit: Any, terminal: str, code: str) -> None:
    answer = client.post(
        f"/api/floor/terminals/{terminal}/tilt",
        json={"code": code, "reason": "audit"},
        headers=kit.auth("super"),
    )
    assert answer.status_code == 200, answer.text


def clear(client: Any, kit: Any, terminal: str) -> None:
    answer = client.post(
        f"/api/floor/terminals/{terminal}/clear",
        json={"code": "fault_repaired", "reason": "audit"},
        headers=kit.auth("super"),
    )
    assert answer.status_code == 200, answer.text


def test_605a_a_bill_validator_tilt_refuses_bills_vouchers_and_cash_outs(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    ann = kit.session(client, "ann", "EWT-1", "A1")
    bob = kit.session(client, "bob", "EWT-2", "A1")
    voucher = client.post(CASH_OUT, json={"amount": 3000}, headers=bob).json()
    code = voucher["validation_code"]
    entries = len(ledger(client, kit, "ann"))
    tilt(client, kit, "EWT-1", "bill_validator")
    key = kit.terminal_key(client, "EWT-1", "A1")
    real = kit.validator(client, "EWT-1", key)
    refused = [
        client.post(BILL, json=signed(client, kit, "EWT-1", "ev-1", 10_000), headers=ann),
        client.post(
            VOUCHER,
            json={
                "code": code,
                "event": "ev-2",
                "proof": validators.sign(real, "EWT-1", "ev-2", "voucher", code),
            },
            headers=ann,
        ),
        client.post(CASH_OUT, json={"amount": 1000}, headers=ann),
        client.post(CASH_OUT, json={}, headers=ann),
    ]
    for answer in refused:
        assert detail(answer) == (409, "tilt", "terminal lock-out"), answer.text
        assert "bill_validator" in answer.json()["detail"]["message"]
    assert kit.balance(client, "ann") == kit.credit
    record = client.get(
        f"/api/floor/vouchers/{voucher['voucher_number']}", headers=kit.auth("super")
    )
    assert record.json()["status"] == "issued"  # the voucher is still payable
    assert len(ledger(client, kit, "ann")) == entries
    # cleared: the bill the validator returned stays refused; a new one is paid
    clear(client, kit, "EWT-1")
    again = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-1", 10_000), headers=ann)
    assert detail(again) == (409, "tilt", "terminal lock-out")
    paid = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-3", 10_000), headers=ann)
    assert paid.status_code == 200, paid.text
    assert kit.balance(client, "ann") == kit.credit + 10_000


def test_605a_a_cash_out_is_paid_during_a_host_disable_and_not_under_a_lock_that_allows_nothing(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    ann = kit.session(client, "ann", "EWT-1", "A1")
    tilt(client, kit, "EWT-1", "host_disabled")
    bill = client.post(BILL, json=signed(client, kit, "EWT-1", "ev-1", 10_000), headers=ann)
    assert detail(bill) == (409, "tilt", "terminal lock-out")
    assert "A cash-out is still allowed." in bill.json()["detail"]["message"]
    out = client.post(CASH_OUT, json={"amount": 2500}, headers=ann)
    assert out.status_code == 200, out.text  # the player may leave with his credit
    assert kit.balance(client, "ann") == kit.credit - 2500
    # a second lock that allows nothing: the cash-out is refused too
    tilt(client, kit, "EWT-1", "door_open")
    locked = client.post(CASH_OUT, json={"amount": 500}, headers=ann)
    assert detail(locked) == (409, "tilt", "terminal lock-out")
    assert kit.balance(client, "ann") == kit.credit - 2500
