"""The SAS link polled by a host library the project did not write (sas-comm-py, on PyPI)
over a pseudo-terminal pair, as a serial line (PA 605a.5(a), (d)): the machine ID, meters
equal to the floor's after a round, and a disable that locks the terminal. sas-comm-py sends
the wakeup bit as a leading 0x80 byte (a general poll of address 0, which no machine answers)
and checks every answer's CRC itself (``WrongCRC``)."""

from __future__ import annotations

import os
import pty
from typing import Any

from sas_comm_py import SlotMachine

from tablejack.server.links.interface import attach
from tablejack.server.links.sas.link import SasLink, SasTerminal
from tests.support.store import Backend


class Host(SlotMachine):  # type: ignore[misc]
    """sas-comm-py's SlotMachine; this release calls a ``get_serial_number`` it does not
    define, so the host defines it with the library's own long poll (54: SAS version and
    serial number)."""

    def get_serial_number(self) -> str:
        reply = self.write_type_R(0x54, following_length=True)
        if not reply:
            return ""
        text = bytes(int(x, 16) for x in reply.data[1:])
        return text[3:].decode("ascii")


ANSWER = 10.0
"""How long the host waits for an answer (sas-comm-py's own second is short for an answer that
waits for the floor on a machine busy with the suite)."""


def wait(host: Host, seconds: float) -> None:
    """How long sas-comm-py's port waits for a byte (its own: 1 s). pyserial applies a new
    ``timeout`` to the terminal too, which a pseudo-terminal refuses (EINVAL): only the read's
    deadline is changed."""
    vars(host.port)["_timeout"] = seconds


def bcd(values: list[str]) -> int:
    return int("".join(values))


def test_605a5d_sas_comm_py_reads_machine_id_and_meters_equal_to_the_floors(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    kit.play_round(client)
    master, slave = pty.openpty()
    floor = client.app.state.floor
    link = SasLink([SasTerminal("EWT-1", "pty", 3)], meter_seconds=0.0, meter_wait=5.0)
    client.portal.call(lambda: link.start(floor, fds={"pty": master}))
    attach(floor, link)
    host = Host(os.ttyname(slave), address=3)  # polls 54 at once
    wait(host, ANSWER)  # a disable waits for the floor: seconds on a busy machine
    try:
        assert host.serial_number == "EWT-1"
        machine = host.write_type_R(0x1F, length_to_read=20)  # machine ID; its CRC checked
        assert machine and machine.command == "1f"
        assert bytes(int(x, 16) for x in machine.data[:2]) == b"TJ"
        assert machine.data[5] == "01"  # accounting denomination $0.01
        meters = host.write_type_M(0x2F, optional_data=[0x00, 0x01, 0x05], add_length_binary=True)
        assert meters and meters.data[:2] == ["00", "00"]
        data = meters.data[2:]
        sas = {int(data[i], 16): bcd(data[i + 1 : i + 5]) for i in range(0, len(data), 5)}
        floor_meters = client.get("/api/floor/meters", headers=kit.auth("super")).json()
        lifetime = floor_meters["terminal"]["EWT-1"]["lifetime"]
        assert sas == {
            0x00: lifetime["coin_in"],
            0x01: lifetime["coin_out"],
            0x05: lifetime["games_played"],
        }
        assert sas[0x00] == 1000 and sas[0x01] == 2000  # ann's $10 wager, paid 1 to 1
        coin_in = host.write_type_R(0x11, length_to_read=4)
        assert bcd(coin_in.data) == lifetime["coin_in"]
        disabled = host.write(0x01, poll_type="S", response_type="ack_nack")
        assert disabled.ack_nack == b"\x03"  # ACK: the address
        tilts = lambda: client.get("/api/floor/tilts", headers=kit.auth("super")).json()  # noqa: E731
        # ACKed inside the reply window; the lock-out applied after by the event loop
        assert kit.eventually(
            lambda: [t["code"] for t in tilts().get("EWT-1", [])] == ["host_disabled"]
        )
        enabled = host.write(0x02, poll_type="S", response_type="ack_nack")
        assert enabled.ack_nack == b"\x03"
        assert kit.eventually(lambda: tilts() == {})
    finally:
        host.port.close()
        os.close(slave)


def test_605a5a_sas_comm_py_discovers_a_one_game_machine_and_its_clock(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """What a host asks at discovery, driven by sas-comm-py: 51 (0000: no multi-game), A0
    (enabled features, SAS §7.14: system validation, ticket redemption), B5 (extended game
    information); a long poll the machine does not implement (09, enable game N) goes
    unanswered and the next one is answered; 0E (real-time events) ignored; 7F sets the SAS
    clock that 7E reads back (the floor's time zone), and 94 with no handpay answers 02."""
    client = make_client(backend=backend)
    set_zone = client.put(
        "/api/floor/settings",
        json={"key": "sas_time_zone", "value": "America/New_York"},
        headers=kit.auth("operator"),
    )
    assert set_zone.is_success, set_zone.text
    master, slave = pty.openpty()
    floor = client.app.state.floor
    link = SasLink([SasTerminal("EWT-1", "pty", 3)], meter_seconds=0.0, meter_wait=5.0)
    client.portal.call(lambda: link.start(floor, fds={"pty": master}))
    attach(floor, link)
    host = Host(os.ttyname(slave), address=3)
    wait(host, ANSWER)
    try:
        games = host.write_type_R(0x51, length_to_read=2)
        assert games and games.data == ["00", "00"]  # no multi-game extensions
        features = host.write_type_M(0xA0, following_length=False, length_to_read=6)
        assert features and features.raw_data[:4] == ["03", "a0", "00", "00"]
        first = int(features.raw_data[4], 16)  # (a type M answer's data: the library's guess)
        assert first & 0x80 and (first >> 5) & 0b11 == 0b10  # redemption; system validation
        info = host.write_type_M(0xB5)  # game 0000: the machine
        assert info and info.data[:2] == ["00", "00"]
        name = bytes(int(x, 16) for x in info.data[10 : 10 + int(info.data[9], 16)])
        assert name == b"tablejack blackjack"
        wait(host, 0.2)  # silence is waited for: sas-comm-py reads five times
        unanswered = host.write_type_S(0x09, optional_data=[0x00, 0x01, 0x01])
        assert not unanswered  # not implemented: no answer, and the line stays in step
        rte = host.write(0x0E, optional_data=[0x01], poll_type="S")
        assert not rte  # not supported: ignored — no answer, no NACK (SAS §4.4)
        wait(host, ANSWER)
        machine = host.write_type_R(0x1F, length_to_read=20)
        assert machine and bytes(int(x, 16) for x in machine.data[:2]) == b"TJ"
        clock = [0x12, 0x24, 0x20, 0x26, 0x18, 0x30, 0x00]  # 12/24/2026 18:30:00, local
        acked = host.write(0x7F, optional_data=clock, poll_type="S", response_type="ack_nack")
        assert acked.ack_nack == b"\x03"
        now = host.write_type_R(0x7E, length_to_read=7)
        assert now and "".join(now.data[:4]) == "12242026"
        assert "".join(now.data[4:6]) in ("1830", "1831")  # a second or so later
        reset = host.write(0x94, poll_type="S", length_to_read=1)
        assert reset and reset.data == ["02"]  # no handpay pending
    finally:
        host.port.close()
        os.close(slave)
