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
