"""The SAS line as an attacker finds it (PA 605a.5(a): the EWT talks to *the* central system;
605a.5(c): vouchers with system validation), on SQLite and PostgreSQL.

SAS has no authentication: whoever holds the line is the host. So which peer may hold a TCP
line is the floor's configuration (``allow=``, this machine only by default), the first host
keeps it, a refused peer is closed at once, logged and audited, and no peer can wedge the line
by never reading. A ticket whose validation number came from the host is paid only through
that host's redemption (LP 70/71), never by its number at a terminal without the host or at
the cage (docs/sas.md, Security of the line)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

import pytest

from tablejack.server.links.sas.framing import bcd, with_crc
from tablejack.server.links.sas.poll import BadReplyError, SasHost
from tablejack.store.vouchers import check_code
from tests.floor.test_sas_link import ANSWER, TitoHost, endpoint, start_link
from tests.support.floor import insert
from tests.support.store import Backend


def refused_entries(client: Any, kit: Any) -> list[dict[str, Any]]:
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    return [entry for entry in audit if entry["kind"] == "sas_refused"]


def closed_at_once(where: str, message: bytes) -> bool:
    """Connect to ``where``, send ``message``: True when the line closes without a byte of
    answer."""
    with SasHost(where, timeout=ANSWER) as peer:
        with contextlib.suppress(OSError):
            peer.send(message)
        try:
            return peer.read(1) == b""
        except BadReplyError as error:
            return "closed" in str(error)
        except OSError:  # reset: closed too
            return True


def test_605a5a_a_second_peer_is_refused_while_the_first_host_holds_the_line(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    with SasHost(endpoint(link), timeout=ANSWER) as host:
        assert host.general_poll(1) == 0x17  # power applied: the first host holds the line
        # a second peer gets nothing — not the ticket records (4D), not the player's credits
        # (meter 0C) — and is closed at once
        assert closed_at_once(endpoint(link), with_crc(b"\x01\x4d\x00"))
        assert closed_at_once(endpoint(link), with_crc(b"\x01\x2f\x03" + bcd(0, 2) + b"\x0c"))
        assert host.general_poll(1) == 0x00  # the first host still holds it
        assert host.machine_id(1)["game_id"] == "TJ"
    entries = kit.eventually(lambda: refused_entries(client, kit))
    assert "held by 127.0.0.1" in entries[0]["message"]
    assert entries[0]["actor"] == "peer:127.0.0.1" and entries[0]["terminal"] == "EWT-1"
    assert entries[0]["rule"] == "PA 605a.5(a)"


def test_605a5a_a_peer_not_on_the_allow_list_never_holds_the_line(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    floor = client.app.state.floor
    from tablejack.server.links.interface import attach
    from tablejack.server.links.sas.link import SasLink, SasTerminal

    link = SasLink(
        [SasTerminal("EWT-1", "tcp://127.0.0.1:0", 1, ("10.99.0.1",))],
        meter_seconds=60.0,
    )
    client.portal.call(link.start, floor)
    attach(floor, link)
    try:
        assert closed_at_once(endpoint(link), b"\x81")  # not even a general poll
        assert closed_at_once(endpoint(link), with_crc(b"\x01\x4d\x00"))
        entries = kit.eventually(lambda: refused_entries(client, kit))
        assert "not an allowed host" in entries[0]["message"]
        # nobody polled: the machine's power-applied event still waits for its host
        assert link.machines["EWT-1"].polls == 0
    finally:
        client.portal.call(link.stop)


def test_605a5a_a_host_that_never_reads_is_dropped_and_the_line_serves_the_next(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1), meter_seconds=60.0, meter_wait=0.0)
    port = link.lines[0].port
    stopped, wedged, dropped = threading.Event(), threading.Event(), threading.Event()

    def flood() -> None:  # machine-ID polls, never a byte read, until the line stops taking
        sock = socket.socket()  # them (a wedged line) or closes the connection (dropped)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.settimeout(2.0)
        try:
            while not stopped.is_set():
                sock.sendall(b"\x01\x1f" * 512)
        except TimeoutError:  # the line no longer reads: it is wedged; hold it so
            wedged.set()
            stopped.wait(60)
        except OSError:  # dropped by the line
            dropped.set()
        finally:
            sock.close()

    attacker = threading.Thread(target=flood, daemon=True)
    attacker.start()

    def served() -> bool:
        try:
            with SasHost(endpoint(link), timeout=1.0) as host:
                return host.machine_id(1)["game_id"] == "TJ"
        except (BadReplyError, OSError):
            return False

    try:
        assert kit.eventually(lambda: wedged.is_set() or dropped.is_set(), 30.0)
        assert dropped.is_set()  # the line dropped the host that stopped reading
        assert kit.eventually(served, 30.0)  # and serves the next host
    finally:
        stopped.set()
        attacker.join(10)


def test_605a5a_a_host_silent_for_the_link_down_time_loses_the_line(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1), link_down_seconds=0.5)
    with SasHost(endpoint(link), timeout=ANSWER) as first:
        assert first.general_poll(1) == 0x17
        time.sleep(0.6)  # the first host goes silent (a half-open connection)
        with SasHost(endpoint(link), timeout=ANSWER) as second:
            assert second.machine_id(1)["game_id"] == "TJ"
        with pytest.raises((BadReplyError, OSError)):
            first.general_poll(1)


def rogue_number() -> int:
    """A validation number a rogue host picks so that, with system ID 01, the 18 digits carry
    the floor's own check digits (the voucher would pay by its number anywhere)."""
    number = 5_000_000_000_000_000
    while not check_code(f"01{number:016d}"):
        number += 1
    return number


def test_605a5c_a_host_validated_ticket_pays_only_through_the_host(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    cat = kit.session(client, "cat", "EWT-1", "A1")
    assert insert(client, "/api/floor/bill-in", json={"amount": 5000}, headers=cat).is_success
    with TitoHost(endpoint(link), addresses=(1,)) as host:
        host.number = rogue_number() - 1  # the host answers 58 with the number it chose
        out = client.post("/api/floor/cash-out", json={"amount": 3000}, headers=cat)
        assert out.is_success, out.text
    code = out.json()["validation_code"]
    assert check_code(code)  # it would pass as a floor voucher by its digits
    ann = kit.session(client, "ann", "EWT-3", "A1")  # EWT-3: no SAS link
    before = (kit.balance(client, "ann"), kit.balance(client, "cat"))
    elsewhere = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann)
    assert elsewhere.status_code == 409, elsewhere.text
    assert elsewhere.json()["detail"]["code"] == "host"
    assert "only through that system's redemption" in elsewhere.json()["detail"]["message"]
    cage = kit.post(client, "/api/cage/vouchers", "cashier", code=code)
    assert cage.status_code == 409 and cage.json()["detail"]["code"] == "host"
    lookup = kit.post(client, "/api/cage/vouchers/lookup", "cashier", code=code).json()
    assert lookup["payable"] is False and lookup["validated_by"] == "sas:01"
    assert "casino system" in lookup["why"]
    assert (kit.balance(client, "ann"), kit.balance(client, "cat")) == before
    record = client.get(
        f"/api/floor/vouchers/{out.json()['voucher_number']}", headers=kit.auth("super")
    ).json()
    assert record["status"] == "issued"
    audit = client.get("/api/audit", headers=kit.auth("super")).json()
    assert sum(entry["kind"] == "host" for entry in audit) >= 2


def test_605a5c_a_casino_systems_ticket_pays_only_as_its_host_approves_within_the_limit(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """A ticket the floor does not know pays only through a terminal's host (at a terminal
    without one, or at the cage, it is no voucher), and a host approving one above the floor's
    voucher limit is refused: nothing moves."""
    client = make_client(backend=backend)
    link = start_link(client, ("EWT-1", 1))
    ticket = "015555555555555555"
    bob = kit.session(client, "bob", "EWT-3", "A1")  # no SAS link
    assert (
        insert(client, "/api/floor/voucher-in", json={"code": ticket}, headers=bob).status_code
        == 409
    )
    assert kit.post(client, "/api/cage/vouchers", "cashier", code=ticket).status_code == 409
    limit = client.get("/api/floor/settings", headers=kit.auth("operator")).json()
    over = int(limit["voucher_limit"]) + 1
    with TitoHost(endpoint(link), addresses=(1,)) as host:
        host.tickets[ticket] = over
        ann = kit.session(client, "ann", "EWT-1", "A1")
        refused = insert(client, "/api/floor/voucher-in", json={"code": ticket}, headers=ann)
        assert refused.status_code == 409 and refused.json()["detail"]["code"] == "limit"
        kit.eventually(lambda: host.statuses)
        assert host.statuses == [0x80]  # the host reads: rejected
    assert kit.balance(client, "ann") == kit.credit
    assert kit.balance(client, "bob") == kit.credit
