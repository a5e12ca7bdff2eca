"""A SAS host, small and blocking: the field technician's ``tablejack sas-poll`` and the
tests' and bench's poller. It speaks to one endpoint (``tcp://HOST:PORT`` or a serial device,
where the first byte of each message is sent with mark parity: the wakeup bit) and checks the
CRC of every answer that carries one.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable
from typing import Any

from tablejack.server.links.sas.framing import bcd, crc16, from_bcd, with_crc
from tablejack.server.links.sas.machine import METER_CODES
from tablejack.server.links.sas.transport import BAUD, parse_endpoint

__all__ = ["REPLY_LENGTHS", "BadReplyError", "SasHost", "describe"]

REPLY_LENGTHS: dict[int, int] = {
    **dict.fromkeys([0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x1A, 0x20, 0x46], 8),
    **dict.fromkeys(range(0x31, 0x3D), 8),
    0x0F: 28,
    0x1B: 24,
    0x1C: 36,
    0x1E: 28,
    0x1F: 24,
    0x21: 6,
    0x2D: 10,
    0x4C: 10,
    0x51: 6,
    0x4D: 35,
    0x57: 10,
    0x58: 5,
    0x7E: 11,
    0x94: 5,
    0xA0: 10,
}
"""The whole length of the gaming machine's answer to each fixed-answer long poll."""
ACKED = frozenset({0x01, 0x02, 0x0E, 0x7F})
"""Long polls answered by an ACK (the address) or a NACK (the address | 0x80)."""


class BadReplyError(Exception):
    """No answer, a short one, or one whose CRC does not verify."""


class SasHost:
    """A SAS host on one endpoint."""

    def __init__(self, endpoint: str, *, timeout: float = 0.5) -> None:
        kind, where = parse_endpoint(endpoint)
        self.kind = kind
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self.port: Any = None
        self.last = b""
        """The last message sent (a general poll repeated after it is the host's retry)."""
        if kind == "tcp":
            self.sock = socket.create_connection(where, timeout=timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        else:
            import serial  # type: ignore[import-untyped]

            self.port = serial.Serial(where, BAUD, parity=serial.PARITY_SPACE, timeout=timeout)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        if self.port is not None:
            self.port.close()

    def __enter__(self) -> SasHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, message: bytes) -> None:
        """Send a message, its first byte with the wakeup bit (serial)."""
        self.last = message
        if self.sock is not None:
            self.sock.sendall(message)
            return
        import serial

        self.port.parity = serial.PARITY_MARK
        self.port.write(message[:1])
        self.port.flush()
        self.port.parity = serial.PARITY_SPACE
        self.port.write(message[1:])

    def read(self, count: int) -> bytes:
        """``count`` bytes, or BadReplyError when the line stays quiet."""
        out = bytearray()
        deadline = time.monotonic() + self.timeout
        while len(out) < count:
            if time.monotonic() > deadline:
                raise BadReplyError(f"{len(out)} of {count} bytes before the timeout")
            if self.sock is not None:
                try:
                    chunk = self.sock.recv(count - len(out))
                except TimeoutError:
                    continue
                if not chunk:
                    raise BadReplyError("the gaming machine closed the line")
            else:
                chunk = self.port.read(count - len(out))
            out += chunk
        return bytes(out)

    def drain(self) -> None:
        """Drop whatever waits on the line (after a bad answer)."""
        if self.sock is not None:
            self.sock.settimeout(0.05)
            try:
                while self.sock.recv(4096):
                    pass
            except (TimeoutError, BlockingIOError):
                pass
            finally:
                self.sock.settimeout(self.timeout)
        else:
            self.port.reset_input_buffer()

    def general_poll(self, address: int, *, retry: bool = False) -> int:
        """The gaming machine's next exception code (0 when none). The same general poll
        twice in a row is the host's implied NACK (SAS §3.1: the machine answers the same
        exception again), so a host alone on a line acknowledges the last answer first with a
        general poll of address 0 (``80``, nobody's) — unless it ``retry``-s."""
        poll = bytes([0x80 | address])
        if self.last == poll and not retry:
            self.send(b"\x80")  # the implied ACK
        self.send(poll)
        return self.read(1)[0]

    def long_poll(self, address: int, command: int, data: bytes = b"") -> bytes:
        """Send a long poll; its answer (CRC verified). ``data``: for a long poll that
        carries some, the bytes after the command (a variable one's length byte included)."""
        message = bytes([address, command]) + data
        if data or command in ACKED or command == 0x94:
            message = with_crc(message)
        self.send(message)
        if command in ACKED:
            return self.read(1)
        head = self.read(2)
        if head[0] != address or head[1] != command:
            self.drain()
            raise BadReplyError(f"answer {head.hex()} to long poll {command:02X}")
        if command in REPLY_LENGTHS:
            reply = head + self.read(REPLY_LENGTHS[command] - 2)
        else:
            length = self.read(1)
            reply = head + length + self.read(length[0] + 2)
        if crc16(reply) != 0:
            raise BadReplyError(f"CRC of {reply.hex()} does not verify")
        return reply

    def variable(self, address: int, command: int, body: bytes) -> bytes:
        """A variable-length long poll (its length byte added)."""
        return self.long_poll(address, command, bytes([len(body)]) + body)

    # what a technician reads

    def machine_id(self, address: int) -> dict[str, Any]:
        reply = self.long_poll(address, 0x1F)
        return {
            "game_id": reply[2:4].decode("ascii", "replace"),
            "additional_id": reply[4:7].decode("ascii", "replace"),
            "denomination_code": reply[7],
            "max_bet": reply[8],
            "paytable": reply[12:18].decode("ascii", "replace"),
            "base_percent": reply[18:22].decode("ascii", "replace"),
        }

    def version(self, address: int) -> dict[str, str]:
        reply = self.long_poll(address, 0x54)
        return {
            "sas_version": reply[3:6].decode("ascii", "replace"),
            "serial": reply[6:-2].decode("ascii", "replace"),
        }

    def meters(self, address: int, codes: Iterable[int] | None = None) -> dict[int, int]:
        """Meters by SAS meter code (long poll 2F, game 0)."""
        wanted = list(METER_CODES if codes is None else codes)
        out: dict[int, int] = {}
        for start in range(0, len(wanted), 12):
            body = bcd(0, 2) + bytes(wanted[start : start + 12])
            reply = self.variable(address, 0x2F, body)
            data = reply[5:-2]
            index = 0
            while index < len(data):
                code = data[index]
                size = METER_CODES[code][1]
                out[code] = from_bcd(data[index + 1 : index + 1 + size])
                index += 1 + size
        return out

    def events(self, address: int, limit: int = 64) -> list[int]:
        """General polls until the machine has no exception left (or ``limit``)."""
        out = []
        for _ in range(limit):
            code = self.general_poll(address)
            if code == 0:
                break
            out.append(code)
        return out


EVENT_NAMES = {
    0x11: "slot door opened",
    0x12: "slot door closed",
    0x17: "power applied",
    0x18: "power lost",
    0x20: "general tilt",
    0x3D: "cash-out ticket printed",
    0x3E: "handpay validated",
    0x47: "$1 bill accepted",
    0x48: "$5 bill accepted",
    0x49: "$10 bill accepted",
    0x4A: "$20 bill accepted",
    0x4B: "$50 bill accepted",
    0x4C: "$100 bill accepted",
    0x4D: "$2 bill accepted",
    0x4E: "$500 bill accepted",
    0x4F: "bill accepted",
    0x50: "$200 bill accepted",
    0x51: "handpay pending",
    0x52: "handpay reset",
    0x57: "system validation request",
    0x60: "printer communication error",
    0x67: "ticket inserted",
    0x68: "ticket transfer complete",
    0x70: "exception buffer overflow",
    0x7E: "game started",
    0x7F: "game ended",
}


def describe(endpoint: str, address: int, *, timeout: float = 0.5) -> dict[str, Any]:
    """What ``tablejack sas-poll`` prints: the machine's ID and version, its meters by code
    and name, and the events waiting."""
    with SasHost(endpoint, timeout=timeout) as host:
        meters = host.meters(address)
        return {
            "address": address,
            "machine": host.machine_id(address),
            **host.version(address),
            "meters": {
                f"{code:02X} {METER_CODES[code][0]}": value
                for code, value in sorted(meters.items())
            },
            "events": [
                f"{code:02X} {EVENT_NAMES.get(code, 'exception')}" for code in host.events(address)
            ],
        }
