"""The SAS link of a terminal (PA 605a.5(a): the central system reads its meters and events,
enables and disables it; 605a.5(c): vouchers with system validation; 605a.5(d): its meters),
on SQLite and PostgreSQL: a host on the link's TCP endpoint reads the machine ID and the
meters (equal to the floor's), disables and enables the terminal, and validates and redeems a
voucher across two terminals, once."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from tablejack.server.links.interface import attach
from tablejack.server.links.sas.framing import bcd, crc16, from_bcd, with_crc
from tablejack.server.links.sas.link import SasLink, SasTerminal
from tablejack.server.links.sas.machine import METER_CODES
from tablejack.server.links.sas.poll import SasHost
from tests.support.floor import eventually, insert
from tests.support.store import Backend

ANSWER = 10.0
"""How long the tests' host waits for an answer: the link answers within milliseconds, but on
a machine busy with the rest of the suite its event loop has taken more than the host's own
0.5 s (a test that expects silence waits for none: it drains the line)."""


def start_link(client: Any, *terminals: tuple[str, int], **options: Any) -> SasLink:
    """A SAS link on one TCP line (a shared line: one address per terminal), fresh meters."""
    floor = client.app.state.floor
    options.setdefault("meter_seconds", 0.0)
    options.setdefault("meter_wait", 5.0)
    link = SasLink([SasTerminal(t, "tcp://127.0.0.1:0", a) for t, a in terminals], **options)
    client.portal.call(link.start, floor)
    attach(floor, link)
    return link


def endpoint(link: SasLink) -> str:
    return f"tcp://127.0.0.1:{link.lines[0].port}"


def floor_meters(client: Any, kit: Any, terminal: str) -> dict[str, Any]:
    meters = client.get("/api/floor/meters", headers=kit.auth("super")).json()
    return dict(meters["terminal"][terminal]["lifetime"])


def activity(client: Any, kit: Any) -> None:
    """A round (ann at EWT-1, bob at EWT-2), a $100 and a $20 bill and a voucher out at
    EWT-2, a hand pay at EWT-1."""
    kit.play_round(client)
    cat = kit.session(client, "cat", "EWT-2", "A1")
    for amount in (10_000, 2000):
        assert insert(client, "/api/floor/bill-in", json={"amount": amount}, headers=cat).is_success
    assert client.post("/api/floor/cash-out", json={"amount": 3000}, headers=cat).is_success
    paid = kit.post(
        client,
        "/api/floor/hand-pay",
        "cashier",
        account="ann",
        terminal="EWT-1",
        amount=500,
        kind="cancelled_credit",
    )
    assert paid.is_success, paid.text


def test_605a5a_machine_id_version_and_crc_of_every_answer(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        machine = host.machine_id(1)  # long_poll checks the CRC of the answer
        assert machine["denomination_code"] == 0x01  # $0.01: a credit is a cent
        assert machine["game_id"] == "TJ"
        assert host.version(1) == {"sas_version": "602", "serial": "EWT-1"}
        assert host.events(1) == [0x17]  # power applied when the link started
        raw = host.long_poll(1, 0x21, b"\x34\x12")
        assert crc16(raw) == 0 and len(raw) == 6
        host.send(bytes([0x02, 0x1F]))  # another address on the shared line: no answer
        host.drain()
        assert host.general_poll(1) == 0x00


def test_605a5d_meters_over_sas_equal_the_floors(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    activity(client, kit)
    link = start_link(client, ("EWT-1", 1), ("EWT-2", 2))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        for terminal, address in (("EWT-1", 1), ("EWT-2", 2)):
            floor = floor_meters(client, kit, terminal)
            sas = host.meters(address)
            assert sas[0x00] == floor["coin_in"] > 0
            assert sas[0x01] == floor["coin_out"] > 0
            assert sas[0x02] == floor["jackpots"]
            assert sas[0x03] == floor["cancelled_credits"]
            assert sas[0x04] == floor["cancelled_credits"] + floor["vouchers_out"]
            assert sas[0x05] == floor["games_played"] == 1
            assert sas[0x06] == 1  # both won their round
            assert sas[0x0B] == floor["bills_in"]
            assert sas[0x0D] == sas[0x15] == floor["vouchers_in"]
            assert sas[0x0E] == sas[0x16] == floor["vouchers_out"]
            # the one-meter and group long polls say the same
            assert from_bcd(host.long_poll(address, 0x11)[2:6]) == floor["coin_in"]
            group = host.long_poll(address, 0x1C)
            assert from_bcd(group[2:6]) == floor["coin_in"]
            assert from_bcd(group[6:10]) == floor["coin_out"]
        ewt2 = host.meters(2)
        assert ewt2[0x44] == 1 and ewt2[0x47] == 1  # one $20 and one $100 bill
        assert ewt2[0x12] == 1  # one voucher out
        assert floor_meters(client, kit, "EWT-2")["bills_in"] == 12_000
        assert floor_meters(client, kit, "EWT-1")["cancelled_credits"] == 500
        # the extended meters long poll (6F): 2-byte codes, each with its size
        reply = host.variable(1, 0x6F, bcd(0, 2) + b"\x00\x00\x05\x00\x99\x00")
        body = reply[5:-2]
        assert body[:3] == b"\x00\x00\x04"
        assert from_bcd(body[3:7]) == floor_meters(client, kit, "EWT-1")["coin_in"]
        assert body[7:10] == b"\x05\x00\x04" and from_bcd(body[10:14]) == 1
        assert body[14:] == b"\x99\x00\x00"  # no such meter: size 0


def test_605a5a_host_disables_the_terminal_and_enables_only_what_it_disabled(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    kit.terminal_key(client, "EWT-1", "A1")
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert host.long_poll(1, 0x01) == b"\x01"  # ACK (in the reply window; the lock after)

        def codes() -> list[str]:
            tilts = client.get("/api/floor/tilts", headers=kit.auth("super")).json()
            return [t["code"] for t in tilts.get("EWT-1", [])]

        assert kit.eventually(lambda: codes() == ["host_disabled"])
        client.post(
            "/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer")
        )
        with kit.connect(client, "ann", "EWT-1", "A1") as ann:
            assert ann.request({"type": "position", "position": 1})["type"] == "ack"
            refused = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
            assert refused["type"] == "error" and refused["code"] == "tilt"
        # a supervisor's tilt stays when the host enables the terminal
        locked = kit.post(
            client, "/api/floor/terminals/EWT-1/tilt", "super", code="door_open", reason="audit"
        )
        assert locked.is_success, locked.text
        assert host.long_poll(1, 0x02) == b"\x01"
        assert kit.eventually(lambda: codes() == ["door_open"])
        events = kit.eventually(lambda: [e for e in host.events(1) if e == 0x11])
        assert events == [0x11]  # the slot door opened, reported to the host
        cleared = kit.post(
            client,
            "/api/floor/terminals/EWT-1/clear",
            "super",
            code="checked_no_fault",
            reason="closed",
        )
        assert cleared.is_success
        assert kit.eventually(lambda: [e for e in host.events(1) if e == 0x12]) == [0x12]


class TitoHost:
    """A host doing system validation and ticket redemption for addresses 1 and 2: it gives
    validation numbers, keeps the tickets it validated and redeems each once — unless
    ``approve_always`` (a host that would pay a ticket twice)."""

    def __init__(
        self, where: str, *, approve_always: bool = False, addresses: tuple[int, ...] = (1, 2)
    ) -> None:
        self.host = SasHost(where, timeout=1.0)
        self.addresses = addresses
        self.override: int | None = None
        """An amount the host approves any ticket for (a rogue host)."""
        self.approve_always = approve_always
        self.tickets: dict[str, int] = {}
        self.redeemed: set[str] = set()
        self.statuses: list[int] = []
        self.events: list[tuple[int, int]] = []
        self.printed: list[bytes] = []
        self.number = 4_711_000_000_000_000
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self) -> TitoHost:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)
        self.host.close()

    def run(self) -> None:
        while not self.stop.is_set():
            for address in self.addresses:
                code = self.host.general_poll(address)
                if code:
                    self.events.append((address, code))
                    self.handle(address, code)
            time.sleep(0.01)

    def handle(self, address: int, code: int) -> None:
        host = self.host
        if code == 0x57:
            reply = host.long_poll(address, 0x57)
            if reply[2] == 0x80:
                return
            amount = from_bcd(reply[3:8])
            self.number += 1
            status = host.long_poll(address, 0x58, b"\x01" + bcd(self.number, 8))
            if status[2] == 0x00:
                self.tickets[f"01{self.number:016d}"] = amount
        elif code == 0x3D:
            self.printed.append(host.long_poll(address, 0x4D, b"\x00"))
        elif code == 0x67:
            reply = host.long_poll(address, 0x70)
            if reply[3] != 0x00:
                return
            ticket = f"{from_bcd(reply[10:19]):018d}"
            amount = self.tickets.get(ticket)
            if self.override is not None:
                transfer, amount = 0x00, self.override
            elif amount is None:
                transfer, amount = 0x82, 0  # not in the system
            elif ticket in self.redeemed and not self.approve_always:
                transfer, amount = 0x84, 0  # already redeemed
            else:
                transfer = 0x00
                self.redeemed.add(ticket)
            body = bytes([transfer]) + bcd(amount, 5) + b"\x00" + bcd(int(ticket), 9)
            host.variable(address, 0x71, body + bcd(0, 4) + b"\x00\x00")
        elif code == 0x68:
            self.statuses.append(host.variable(address, 0x71, b"\xff")[3])


def test_605a5c_voucher_validated_by_the_host_redeemed_at_another_terminal_once(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1), ("EWT-2", 2))
    cat = kit.session(client, "cat", "EWT-1", "A1")
    ann = kit.session(client, "ann", "EWT-2", "A1")
    bob = kit.session(client, "bob", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    with TitoHost(endpoint(link)) as host:
        out = client.post("/api/floor/cash-out", json={"amount": 3000}, headers=cat)
        assert out.is_success, out.text
        code = out.json()["validation_code"]
        # the host's validation number is on the voucher (its thread records the ticket once
        # the gaming machine's answer is in, which may be just after the cash-out returns)
        assert kit.eventually(lambda: host.tickets) == {code: 3000}
        record = client.get(
            f"/api/floor/vouchers/{out.json()['voucher_number']}", headers=kit.auth("super")
        ).json()
        assert record["validated_by"] == "sas:01"
        kit.eventually(lambda: host.printed)  # exception 3D, then long poll 4D
        assert from_bcd(host.printed[0][11:19]) == int(code[2:])
        assert from_bcd(host.printed[0][19:24]) == 3000
        before = kit.balance(client, "ann")
        redeemed = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann)
        assert redeemed.is_success, redeemed.text
        assert kit.balance(client, "ann") == before + 3000
        kit.eventually(lambda: host.statuses)
        assert host.statuses == [0x00]  # ticket redeemed
        again = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=bob)
        assert again.status_code == 409 and again.json()["detail"]["code"] == "host"
        assert kit.balance(client, "bob") == kit.credit
        forged = insert(
            client, "/api/floor/voucher-in", json={"code": "019999999999999999"}, headers=bob
        )
        assert forged.status_code == 409
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    assert any(entry["kind"] == "host" for entry in audit)


def test_605a5c_a_host_that_would_pay_twice_is_refused_by_the_ledger(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1), ("EWT-2", 2))
    cat = kit.session(client, "cat", "EWT-1", "A1")
    ann = kit.session(client, "ann", "EWT-2", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    with TitoHost(endpoint(link), approve_always=True) as host:
        code = client.post("/api/floor/cash-out", json={"amount": 2000}, headers=cat).json()[
            "validation_code"
        ]
        before = kit.balance(client, "ann")
        assert insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann).is_success
        second = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann)
        assert second.status_code == 409 and second.json()["detail"]["code"] == "redeemed"
        assert kit.balance(client, "ann") == before + 2000
        kit.eventually(lambda: len(host.statuses) == 2)
        assert host.statuses == [0x00, 0x80]  # the second: rejected


def test_605a5c_no_host_polling_means_no_cash_out_and_nothing_moves(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    start_link(client, ("EWT-1", 1), host_seconds=0.3)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    refused = client.post("/api/floor/cash-out", json={"amount": 2000}, headers=cat)
    assert refused.status_code == 409 and refused.json()["detail"]["code"] == "host"
    assert kit.balance(client, "cat") == 5000


def test_605a5d_handpay_pending_until_the_cage_pays_it(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    set_limit = client.put(
        "/api/floor/settings",
        json={"key": "voucher_limit", "value": 1000},
        headers=kit.auth("operator"),
    )
    assert set_limit.is_success, set_limit.text
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert kit.eventually(lambda: [e for e in host.events(1) if e == 0x4B]) == [0x4B]
        refused = client.post("/api/floor/cash-out", json={"amount": 2000}, headers=cat)
        assert refused.json()["detail"]["code"] == "handpay"
        assert host.events(1) == [0x51]
        assert tilt_codes(client, kit, "EWT-1") == ["handpay_pending"]  # a lock-up
        info = host.long_poll(1, 0x1B)
        assert from_bcd(info[4:9]) == 2000
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
        assert kit.eventually(lambda: host.events(1)) == [0x52]
        assert from_bcd(host.long_poll(1, 0x1B)[4:9]) == 0
        assert host.meters(1, [0x03])[0x03] == 2000
        assert kit.eventually(lambda: tilt_codes(client, kit, "EWT-1") == [])
        assert host.long_poll(1, 0x94) == with_crc(b"\x01\x94\x02")  # no handpay pending


def tilt_codes(client: Any, kit: Any, terminal: str) -> list[str]:
    tilts = client.get("/api/floor/tilts", headers=kit.auth("super")).json()
    return [t["code"] for t in tilts.get(terminal, [])]


def test_605a5d_a_handpay_is_a_lock_up_that_the_hosts_reset_lifts(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """SAS §7 (long poll 94, remote handpay reset): while a handpay is pending the terminal
    takes no wager; the host's reset answers 00, lifts the lock, reports 52; the credit stays
    the player's (nothing moves)."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    assert client.put(
        "/api/floor/settings",
        json={"key": "voucher_limit", "value": 1000},
        headers=kit.auth("operator"),
    ).is_success
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert kit.insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    refused = client.post("/api/floor/cash-out", json={"amount": 2000}, headers=cat)
    assert refused.json()["detail"]["code"] == "handpay"
    assert tilt_codes(client, kit, "EWT-1") == ["handpay_pending"]
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer"))
    with kit.connect(client, "cat", "EWT-1", "A1") as player:
        assert player.request({"type": "position", "position": 1})["type"] == "ack"
        wager = player.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert wager["type"] == "error" and wager["code"] == "tilt"
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert 0x51 in kit.eventually(lambda: host.events(1))
        assert host.long_poll(1, 0x94) == with_crc(b"\x01\x94\x00")  # reset
        assert kit.eventually(lambda: tilt_codes(client, kit, "EWT-1") == [])  # lifted after
        assert kit.eventually(lambda: host.events(1)) == [0x52]
        assert from_bcd(host.long_poll(1, 0x1B)[4:9]) == 0
        assert host.long_poll(1, 0x94) == with_crc(b"\x01\x94\x02")  # none pending
    assert kit.balance(client, "cat") == 5000  # nothing moved


def test_605a5a_a_repeated_general_poll_gets_the_same_exception_again(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """SAS §3.1 (implied ACK and NACK): the host that did not get an exception polls again
    with the same general poll and gets the same exception; a poll to another address (or a
    long poll) acknowledges it, and the next general poll gets the next one."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert host.general_poll(1) == 0x17  # power applied
        assert host.general_poll(1) == 0x00
        locked = kit.post(
            client, "/api/floor/terminals/EWT-1/tilt", "super", code="door_open", reason="audit"
        )
        assert locked.is_success, locked.text
        first = kit.eventually(lambda: host.general_poll(1))
        assert first == 0x11  # slot door opened
        assert host.general_poll(1, retry=True) == 0x11  # the retry: the same, not lost
        assert host.general_poll(1, retry=True) == 0x11
        host.send(b"\x82")  # a general poll of another address: the implied ACK
        assert host.general_poll(1, retry=True) == 0x00  # the door-open event was taken
        kit.post(
            client,
            "/api/floor/terminals/EWT-1/clear",
            "super",
            code="checked_no_fault",
            reason="closed",
        )
        assert kit.eventually(lambda: host.general_poll(1)) == 0x12
        assert host.long_poll(1, 0x1F)[:2] == b"\x01\x1f"  # a long poll acknowledges it too
        assert host.general_poll(1, retry=True) == 0x00


def test_605a5d_a_bills_exception_comes_after_its_meter_moved(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """A host reads the meters when a bill is reported (SAS §2.2: 47 a $1 bill, 4A $20, 4C
    $100, without real-time event reporting): the meters are in the snapshot the meter long
    polls answer from before the exception is queued. The snapshot is not read again on a
    poll here (60 s): only the event's own refresh moves it."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1), meter_seconds=60.0, meter_wait=0.0)
    cat = kit.session(client, "cat", "EWT-1", "A1")
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert host.meters(1, [0x0B])[0x0B] == 0
        for amount, code, total in ((100, 0x47, 100), (2000, 0x4A, 2100), (10_000, 0x4C, 12_100)):
            assert kit.insert(client, "/api/floor/bill-in", json={"amount": amount}, headers=cat)
            seen = kit.eventually(lambda: [e for e in host.events(1) if e in (0x47, 0x4A, 0x4C)])
            assert seen == [code]
            assert host.meters(1, [0x0B])[0x0B] == total  # read at once on the event
            assert from_bcd(host.long_poll(1, 0x46)[2:6]) == total


def test_605a5d_a_voided_round_moves_coin_in_less_coin_out_by_nothing(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """A voided round refunds its wagers: SAS's coin in counts wagers not refunded, so coin
    in, coin out and games played stand as before the round (docs/sas.md)."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        before = host.meters(1, [0x00, 0x01, 0x05])
        client.post(
            "/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer")
        )
        with kit.connect(client, "ann", "EWT-1", "A1") as ann:
            assert ann.request({"type": "position", "position": 1})["type"] == "ack"
            assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert floor_meters(client, kit, "EWT-1")["coin_in"] == 1000
        assert host.meters(1, [0x00])[0x00] == before[0x00] + 1000  # wagered, in play
        voided = kit.post(client, "/api/tables/A1/void", "super", reason="test void")
        assert voided.is_success, voided.text
        floor = floor_meters(client, kit, "EWT-1")
        assert floor["voided"] == 1000 and floor["coin_in"] == 1000
        after = host.meters(1, [0x00, 0x01, 0x05])
    assert after == before  # coin in − coin out: +0, games played: +0


def test_605a5a_garbage_on_the_line_does_not_stop_the_link(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        host.send(bytes(range(256)) + b"\x01\x21\x00")  # garbage and a partial long poll
        time.sleep(0.2)  # a quiet line ends the discard
        host.drain()
        assert host.machine_id(1)["game_id"] == "TJ"
        bad = bytearray(with_crc(bytes([1, 0x21, 0, 0])))
        bad[-1] ^= 0xFF
        host.send(bytes(bad))  # a bad CRC: no answer (the host retries)
        time.sleep(0.2)
        host.drain()
        assert host.long_poll(1, 0x11)[:2] == b"\x01\x11"
    assert set(METER_CODES)  # the table the host reads the answers with


def test_605a5d_sas_poll_shows_a_technician_the_meters_and_events(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    from typer.testing import CliRunner

    from tablejack.cli import app

    client = make_client(backend=backend)
    activity(client, kit)
    link = start_link(client, ("EWT-2", 9))
    # the host waits as long as the suite's other hosts: each meter poll here reads the meters
    # afresh (meter_seconds 0), seconds on a loaded machine — past sas-poll's own 0.5 s
    wait = ["--timeout", str(ANSWER)]
    result = CliRunner().invoke(
        app, ["sas-poll", endpoint(link), "--address", "9", "--json", *wait]
    )
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    floor = floor_meters(client, kit, "EWT-2")
    assert found["serial"] == "EWT-2"
    assert found["meters"]["00 coin_in"] == floor["coin_in"]
    assert found["meters"]["0B bills_in"] == floor["bills_in"] == 12_000
    assert found["events"] == ["17 power applied"]
    # the line passes to the next host once it has seen the first one close (docs/sas.md); on a
    # loaded machine the second connection can come first and be refused: it tries again
    polls: list[Any] = []

    def second_poll() -> bool:
        polls.append(CliRunner().invoke(app, ["sas-poll", endpoint(link), "--address", "9", *wait]))
        return polls[-1].exit_code == 0

    kit.eventually(second_poll, seconds=30)
    assert "meter 0E vouchers_out" in polls[-1].output
    silent = CliRunner().invoke(app, ["sas-poll", endpoint(link), "--address", "8"])
    assert silent.exit_code == 1  # no machine at that address: no answer


def test_605a5d_meters_read_in_a_process_of_their_own_agree(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    activity(client, kit)
    link = start_link(client, ("EWT-2", 4), reader_url=backend.server_url)
    with SasHost(endpoint(link), timeout=30.0) as host:  # the reader process starts first
        sas = host.meters(4, [0x00, 0x01, 0x0B])
    floor = floor_meters(client, kit, "EWT-2")
    assert sas == {0x00: floor["coin_in"], 0x01: floor["coin_out"], 0x0B: 12_000}


def test_605a5a_a_bad_sas_option_stops_serve_before_it_starts(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from tablejack.cli import app

    for bad in (
        "EWT-1",
        "EWT-1=ftp://x",
        "EWT-1=tcp://127.0.0.1:7001,address=128",
        "EWT-1=tcp://127.0.0.1:7001,allow=the-board",  # allow= is an address or a network
        "EWT-1=/dev/ttyS1,allow=10.0.0.1",  # allow= is for a TCP line
    ):
        result = CliRunner().invoke(
            app, ["serve", "--db", str(tmp_path / "x.db"), "--unsigned", "--sas", bad]
        )
        assert result.exit_code == 2, result.output
        assert "--sas" in result.output and "did not start" in result.output
    tables = tmp_path / "tables.toml"
    tables.write_text(
        '[[sas]]\nterminal = "EWT-1"\nendpoint = "tcp://127.0.0.1:7001"\n'
        '[[sas]]\nterminal = "EWT-1"\nendpoint = "tcp://127.0.0.1:7002"\n'
    )
    twice = CliRunner().invoke(
        app, ["serve", "--db", str(tmp_path / "x.db"), "--unsigned", "--tables", str(tables)]
    )
    assert twice.exit_code == 2 and "one SAS link" in twice.output
    tables.write_text(
        '[[sas]]\nterminal = "EWT-1"\nendpoint = "tcp://127.0.0.1:7001"\nallow = "10.0.0.300"\n'
    )
    allow = CliRunner().invoke(
        app, ["serve", "--db", str(tmp_path / "x.db"), "--unsigned", "--tables", str(tables)]
    )
    assert allow.exit_code == 2 and "allow=" in allow.output


def test_605a5a_host_lost_locks_the_terminal_when_the_floor_requires_the_link(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    kit.terminal_key(client, "EWT-1", "A1")
    kit.terminal_key(client, "EWT-2", "A1")
    required = client.put(
        "/api/floor/settings",
        json={"key": "sas_link_required", "value": True},
        headers=kit.auth("operator"),
    )
    assert required.is_success, required.text
    refused = client.put(
        "/api/floor/settings",
        json={"key": "sas_link_required", "value": "yes"},
        headers=kit.auth("operator"),
    )
    assert refused.status_code >= 400
    link = start_link(client, ("EWT-1", 1), link_down_seconds=0.5)

    def codes() -> list[str]:
        tilts = client.get("/api/floor/tilts", headers=kit.auth("super")).json()
        return [t["code"] for t in tilts.get("EWT-1", [])]

    assert kit.eventually(lambda: codes() == ["host_link_lost"])
    assert "EWT-2" not in client.get("/api/floor/tilts", headers=kit.auth("super")).json()
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        stop = time.monotonic() + 10
        while codes() and time.monotonic() < stop:  # polled again: the link's tilt lifted
            host.general_poll(1)
            time.sleep(0.1)
        assert codes() == []


def test_605a5a_rom_signature_is_the_releases_with_the_seed(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    from tablejack.server.support.integrity import build_manifest, canonical_json

    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=10.0) as host:
        one = host.long_poll(1, 0x21, b"\x34\x12")
        two = host.long_poll(1, 0x21, b"\x00\x00")
    release = canonical_json(build_manifest())
    assert int.from_bytes(one[2:4], "little") == crc16(release, 0x1234)
    assert int.from_bytes(two[2:4], "little") == crc16(release, 0)
    assert one[2:4] != two[2:4]


def test_605a5c_a_host_giving_one_validation_number_twice_is_refused(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    with TitoHost(endpoint(link), addresses=(1,)) as host:
        first = client.post("/api/floor/cash-out", json={"amount": 1000}, headers=cat)
        assert first.is_success, first.text
        host.number -= 1  # the host hands out the same number again
        second = client.post("/api/floor/cash-out", json={"amount": 1000}, headers=cat)
        assert second.status_code == 409 and second.json()["detail"]["code"] == "forged"
    assert kit.balance(client, "cat") == 4000


def test_605a5a_serve_demo_with_a_sas_terminal_end_to_end(tmp_path: Any) -> None:
    """``serve --demo --sas A1-EWT1=tcp://…,address=1``: machine ID and meters (CRC checked,
    equal to the floor's), a voucher round trip through system validation, and a disable."""
    import httpx

    from tests.support import serve
    from tests.support.floor import bearer

    port, sas_port = serve.free_port(), serve.free_port()
    log = tmp_path / "serve.log"
    server = serve.start_serve(
        [
            "--demo",
            "--unsigned",
            "--db",
            str(tmp_path / "demo.db"),
            "--port",
            str(port),
            "--sas",
            f"A1-EWT1=tcp://127.0.0.1:{sas_port},address=1",
        ],
        log,
    )
    try:
        serve.wait_listening(server, port, log)
        serve.wait_listening(server, sas_port, log)
        where = f"tcp://127.0.0.1:{sas_port}"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            staff = bearer("demo-supervisor")

            def floor(name: str) -> int:
                meters = client.get("/api/floor/meters", headers=staff).json()["terminal"]
                return int(meters.get("A1-EWT1", {}).get("lifetime", {}).get(name, 0))

            def session(player: str) -> dict[str, str]:
                answer = client.post(
                    "/api/session",
                    json={
                        "token": f"demo-{player}",
                        "terminal": "A1-EWT1",
                        "terminal_key": "demo-key-A1-EWT1",
                    },
                )
                assert answer.status_code == 200, answer.text
                token = str(answer.cookies["tj_session"])
                client.cookies.clear()
                return bearer(token)

            with SasHost(where, timeout=10.0) as host:
                assert host.machine_id(1)["game_id"] == "TJ"
                assert host.meters(1, [0x0B])[0x0B] == floor("bills_in") == 0
            cat = session("cat")
            key = "demo-key-A1-EWT1"
            billed = insert(
                client, "/api/floor/bill-in", json={"amount": 2000}, headers=cat, terminal_key=key
            )
            assert billed.status_code == 200, billed.text
            with TitoHost(where, addresses=(1,)) as tito:
                out = client.post("/api/floor/cash-out", json={"amount": 1500}, headers=cat)
                assert out.status_code == 200, out.text
                code = out.json()["validation_code"]
                assert tito.tickets == {code: 1500}
                dan = session("dan")
                redeemed = insert(
                    client,
                    "/api/floor/voucher-in",
                    json={"code": code},
                    headers=dan,
                    terminal_key=key,
                )
                assert redeemed.status_code == 200, redeemed.text
                assert redeemed.json()["amount"] == 1500
            with SasHost(where, timeout=10.0) as host:
                wanted = {0x0B: 2000, 0x0D: 1500, 0x0E: 1500}
                deadline = time.monotonic() + 30  # the meters' snapshot is at most 5 s old
                while (seen := host.meters(1, list(wanted))) != wanted:
                    assert time.monotonic() < deadline, seen
                    time.sleep(0.5)
                assert wanted == {
                    0x0B: floor("bills_in"),
                    0x0D: floor("vouchers_in"),
                    0x0E: floor("vouchers_out"),
                }
                assert host.long_poll(1, 0x01) == b"\x01"

            def codes() -> list[str]:
                tilts = client.get("/api/floor/tilts", headers=staff).json()
                return [t["code"] for t in tilts.get("A1-EWT1", [])]

            assert eventually(lambda: codes() == ["host_disabled"])
    finally:
        server.terminate()
        server.wait(20)


def test_605a5c_a_rogue_host_cannot_pay_a_floor_voucher_or_another_amount(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    cat = kit.session(client, "cat", "EWT-3", "A1")  # EWT-3: no SAS link, the floor's vouchers
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    own = client.post("/api/floor/cash-out", json={"amount": 2000}, headers=cat).json()
    record = client.get(f"/api/floor/vouchers/{own['voucher_number']}", headers=kit.auth("super"))
    assert record.json()["validated_by"] is None
    ann = kit.session(client, "ann", "EWT-1", "A1")
    with TitoHost(endpoint(link), addresses=(1,)) as host:
        host.override = 2000  # approves whatever is inserted
        floor_voucher = insert(
            client, "/api/floor/voucher-in", json={"code": own["validation_code"]}, headers=ann
        )
        assert floor_voucher.status_code == 409
        assert floor_voucher.json()["detail"]["code"] == "forged"
        host.override = None
        bob = kit.session(client, "bob", "EWT-1", "A1")
        code = client.post("/api/floor/cash-out", json={"amount": 1000}, headers=bob).json()[
            "validation_code"
        ]
        ann = kit.session(client, "ann", "EWT-1", "A1")
        host.override = 9000  # approves the host's own ticket for more than it is worth
        more = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann)
        assert more.status_code == 409 and more.json()["detail"]["code"] == "forged"
    assert kit.balance(client, "ann") == kit.credit
    # the floor's voucher still pays once at a terminal without a host
    cat = kit.session(client, "cat", "EWT-3", "A1")
    paid = insert(
        client, "/api/floor/voucher-in", json={"code": own["validation_code"]}, headers=cat
    )
    assert paid.is_success, paid.text


def test_605a5a_polls_and_meter_reads_are_answered_while_the_event_loop_is_busy(
    make_client: Any, kit: Any
) -> None:
    """Each line answers in a thread of its own (SAS's 20 ms reply window): a general poll, a
    meter long poll (meters equal to the floor's), a disable (01: ACK at once, the lock-out
    applied by the event loop after) and the ROM signature (21, computed ahead) get their
    answer while the floor's event loop is held."""
    client = make_client()
    activity(client, kit)
    link = start_link(client, ("EWT-1", 1), meter_seconds=60.0, meter_wait=0.0)
    expected = floor_meters(client, kit, "EWT-1")
    signature = client.portal.call(link.rom_signature, 0x1234)
    held, release = threading.Event(), threading.Event()

    async def hold_the_loop() -> None:
        held.set()
        release.wait(30)  # the point: the event loop does nothing else meanwhile

    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert host.general_poll(1) == 0x17  # power applied
        blocker = threading.Thread(target=client.portal.call, args=(hold_the_loop,))
        blocker.start()
        try:
            assert held.wait(5)
            assert host.general_poll(1) == 0x00
            meters = host.meters(1, [0x00, 0x01, 0x05])
            assert host.long_poll(1, 0x01) == b"\x01"  # ACK while the loop is held
            rom = host.long_poll(1, 0x21, b"\x34\x12")
            assert blocker.is_alive()  # all of it answered with the loop still held
        finally:
            release.set()
            blocker.join()
    assert meters == {0x00: expected["coin_in"], 0x01: expected["coin_out"], 0x05: 1}
    assert int.from_bytes(rom[2:4], "little") == signature

    def codes() -> list[str]:
        tilts = client.get("/api/floor/tilts", headers=kit.auth("super")).json()
        return [t["code"] for t in tilts.get("EWT-1", [])]

    assert kit.eventually(lambda: codes() == ["host_disabled"])  # applied after


def verified(client: Any, kit: Any) -> dict[str, Any]:
    report: dict[str, Any] = client.get("/api/verify-log", headers=kit.auth("super")).json()
    assert report["ok"] is True, report
    return report


def test_605a5c_floor_wide_tito_a_casino_systems_ticket_is_credited_once_from_the_system(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """A ticket the floor does not know (the casino system validated it for a slot machine) is
    offered to the host at the terminal (exception 67, LP 70/71) and credited when the host
    approves it, for the host's amount, from the floor's account with that system; the host
    saying it again does not pay it twice."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    ticket = "019876543210987654"  # a slot machine's ticket, validated by system 01
    with TitoHost(endpoint(link), addresses=(1,), approve_always=True) as host:
        host.tickets[ticket] = 2500
        ann = kit.session(client, "ann", "EWT-1", "A1")
        paid = insert(client, "/api/floor/voucher-in", json={"code": ticket}, headers=ann)
        assert paid.is_success, paid.text
        assert kit.balance(client, "ann") == kit.credit + 2500
        kit.eventually(lambda: host.statuses)
        assert host.statuses == [0x00]  # the host reads: redeemed
        again = insert(client, "/api/floor/voucher-in", json={"code": ticket}, headers=ann)
        assert again.status_code == 409 and again.json()["detail"]["code"] == "redeemed"
    assert kit.balance(client, "ann") == kit.credit + 2500
    record = client.get(
        f"/api/floor/vouchers/{paid.json()['voucher_number']}", headers=kit.auth("super")
    ).json()
    assert record["status"] == "redeemed" and record["validated_by"] == "sas:01"
    assert record["account"] == "system:sas.01" and record["redeemed_terminal"] == "EWT-1"
    verified(client, kit)


def test_605a5c_floor_wide_tito_the_floors_ticket_redeemed_elsewhere_is_marked_so(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """The host validated a floor ticket, then paid it elsewhere on its floor; inserted here
    the host answers 'already redeemed' (LP 71 transfer code 84): the floor marks it redeemed
    by the system and moves its amount from the vouchers outstanding to the system's account;
    nothing is credited."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    with TitoHost(endpoint(link), addresses=(1,)) as host:
        out = client.post("/api/floor/cash-out", json={"amount": 3000}, headers=cat).json()
        code = out["validation_code"]
        kit.eventually(lambda: code in host.tickets)
        host.redeemed.add(code)  # a slot machine on the host's floor took it
        ann = kit.session(client, "ann", "EWT-1", "A1")
        refused = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann)
        assert refused.status_code == 409 and refused.json()["detail"]["code"] == "host"
    assert kit.balance(client, "ann") == kit.credit
    record = client.get(
        f"/api/floor/vouchers/{out['voucher_number']}", headers=kit.auth("super")
    ).json()
    assert record["status"] == "redeemed" and record["redeemed_terminal"] == "sas:01"
    assert record["redeemed_account"] == "system:sas.01"
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    assert any(entry["kind"] == "host_redeemed" for entry in audit)
    verified(client, kit)


def test_605a5a_the_hosts_global_date_and_time_sets_every_sas_clock_not_the_floors(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """SAS 6.02 §7.17: the host's date and time, broadcast to address 00 (type G, unanswered),
    sets the SAS clock of every machine on the line — read back with 7E, in the floor's time
    zone — and never the floor's own clock."""
    client = make_client(backend=backend)
    zone = client.put(
        "/api/floor/settings",
        json={"key": "sas_time_zone", "value": "Europe/Paris"},
        headers=kit.auth("operator"),
    )
    assert zone.is_success, zone.text
    link = start_link(client, ("EWT-1", 1), ("EWT-2", 2))
    floor = client.app.state.floor
    before = floor.now_us()
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        host.send(with_crc(bytes.fromhex("007f" + "07041999" + "120000")))
        host.drain()  # no machine answers a global broadcast
        for address in (1, 2):
            reply = host.long_poll(address, 0x7E)
            assert reply[2:6].hex() == "07041999"
            assert reply[6:8].hex() in ("1200", "1201")
    assert floor.now_us() >= before > 1_700_000_000_000_000  # the floor's clock: today's
