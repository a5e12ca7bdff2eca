"""SAS framing, pure (no I/O): the CRC, BCD, and the reassembly of a host's byte stream into
messages.

The Slot Accounting System (SAS) protocol runs between a gaming machine (here: one
electronic wagering terminal) and the host (the casino management system's machine interface
board). The host's messages are:

* a **general poll**: one byte, ``0x80 | address``, sent with the wakeup (9th) bit set;
* a **long poll**: the address (1–127, wakeup bit set on it), the command byte, and for most
  commands data and a CRC-16. Some long polls are a fixed length (:data:`FIXED_LENGTHS`, the
  whole message: address, command, data, CRC); the others carry their data's length in their
  third byte (:data:`VARIABLE`), the whole message then being ``3 + length + 2`` bytes.

The CRC is CRC-16/KERMIT (the CCITT polynomial ``x^16 + x^12 + x^5 + 1``, reflected, initial
value 0), sent low byte first; it covers every byte of the message before it (the address
included), so a message followed by its CRC has a CRC of 0.

>>> crc16(b"123456789") == 0x2189
True
>>> with_crc(bytes([0x01, 0x21, 0x00, 0x00])).hex()
'012100005c45'
>>> crc16(with_crc(b"\\x01\\x1f"))
0
>>> bcd(1234, 4).hex(), from_bcd(bytes.fromhex("00001234"))
('00001234', 1234)

:class:`Framer` takes the bytes as they arrive, with the wakeup bit when the line carries it
(a serial port read with parity marking) or without it (a TCP socket, a pseudo-terminal: the
bytes of the serial line, the wakeup bit dropped). Without the wakeup bit a message is framed
by its length alone; a byte that cannot start a message, an unknown command, a bad length or a
CRC that does not verify makes the framer discard what follows until the line is quiet
(:meth:`Framer.gap`) or the next byte with the wakeup bit: SAS has the gaming machine ignore a
message it cannot read, and the host retry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "FIXED_LENGTHS",
    "MAX_MESSAGE",
    "VARIABLE",
    "Framer",
    "Message",
    "bcd",
    "crc16",
    "from_bcd",
    "with_crc",
]


def _table() -> tuple[int, ...]:
    out = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
        out.append(crc)
    return tuple(out)


_TABLE = _table()


def crc16(data: bytes, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` (SAS's CRC), as an integer (sent low byte first)."""
    for byte in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return crc


def with_crc(data: bytes) -> bytes:
    """``data`` followed by its CRC, low byte first."""
    return data + crc16(data).to_bytes(2, "little")


def bcd(value: int, size: int) -> bytes:
    """``value`` as ``size`` bytes of packed BCD, most significant digit first. A meter wider
    than its field rolls over, as SAS meters do (the digits that fit are kept).

    >>> bcd(123_456_789, 4).hex()
    '23456789'
    """
    if value < 0:
        raise ValueError(f"BCD holds no negative value ({value})")
    digits = f"{value % 10 ** (2 * size):0{2 * size}d}"
    return bytes.fromhex(digits)


def from_bcd(data: bytes) -> int:
    """The value of packed BCD bytes; ValueError on a nibble above 9.

    >>> from_bcd(b"\\x12\\x3a")
    Traceback (most recent call last):
    ...
    ValueError: not BCD: 123a
    """
    text = data.hex()
    if not text.isdigit():
        raise ValueError(f"not BCD: {text}")
    return int(text) if text else 0


VARIABLE = frozenset({0x2F, 0x6F, 0xAF, 0x71, 0x72, 0x73, 0x74, 0x7B, 0x7C, 0x7D, 0x8E, 0xB5})
"""Long polls whose third byte is the length of their data (the message is ``3 + length + 2``
bytes: address, command, length, data, CRC)."""

_R_POLLS = (
    *(0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1E),
    *(0x1F, 0x20, 0x2A, 0x2B, 0x46, 0x48, 0x54, 0x57, 0x70, 0x7E),
    *range(0x31, 0x3E),
)
FIXED_LENGTHS: dict[int, int] = {
    **dict.fromkeys(_R_POLLS, 2),  # type R: address and command, no CRC
    **dict.fromkeys([0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x0A, 0x0B, 0x94], 4),  # type S
    0x08: 9,  # configure bill denominations: 4 bytes of denominations, an action byte
    0x0E: 5,  # enable/disable real-time event reporting
    0x21: 6,  # ROM signature verification: a 2-byte seed
    0x2D: 6,  # total hand-paid cancelled credits of a game: 2 BCD bytes of game number
    0x4C: 10,  # set secure enhanced validation ID: machine ID (3), sequence number (3)
    0x4D: 5,  # send enhanced validation information: a function code
    0x58: 13,  # receive validation number: system ID (1 BCD), validation number (8 BCD)
    0x7F: 11,  # receive date and time: date (4 BCD), time (3 BCD)
}
"""The whole length of each fixed-length long poll this gaming machine frames: the address,
the command, the data and (except type R polls, 2 bytes) the CRC."""

MAX_MESSAGE = 3 + 255 + 2
"""The longest message: a variable-length long poll with 255 bytes of data."""


@dataclass(frozen=True, slots=True)
class Message:
    """A message of the host: a general poll (``command`` None) or a long poll (its bytes in
    ``raw``, the CRC verified where it carries one)."""

    address: int
    command: int | None
    raw: bytes = b""

    @property
    def data(self) -> bytes:
        """The long poll's data: after the command (and the length byte), before the CRC."""
        if self.command is None:
            return b""
        if self.command in VARIABLE:
            return self.raw[3:-2]
        if len(self.raw) == 2:
            return b""
        return self.raw[2:-2]


class Framer:
    """Reassembles the host's messages from bytes as they arrive.

    ``feed(data)`` takes bytes without the wakeup bit (framed by length); ``feed(data,
    wakeup=True)`` marks the first byte of ``data`` as sent with the wakeup bit (a new message
    starts there: a partial one before it is dropped). ``gap()`` tells the framer that the line
    was quiet for longer than a message's bytes may be apart: a partial message is dropped and
    a discard ends. Messages for other addresses are framed too (to stay in step on a shared
    line) and yielded; the gaming machine answers its own only. A long poll with a CRC that
    does not verify, an unknown command or an impossible length is counted in :attr:`bad` and
    never yielded.

    >>> framer = Framer()
    >>> [m.command for m in framer.feed(bytes([0x81, 0x01, 0x1F]))]
    [None, 31]
    >>> list(framer.feed(bytes([0x01, 0x02, 0x00, 0x00]))), framer.bad
    ([], 1)
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._discarding = False
        self.bad = 0
        """Messages dropped: a bad CRC, an unknown command, a length that cannot be."""

    def gap(self) -> None:
        """The line was quiet: drop a partial message, end a discard."""
        if self._buffer:
            self.bad += 1
        self._buffer.clear()
        self._discarding = False

    def feed(self, data: bytes, *, wakeup: bool = False) -> Iterator[Message]:
        """The messages completed by ``data``."""
        if wakeup and data:
            self.gap()
        for byte in data:
            if self._discarding:
                continue
            self._buffer.append(byte)
            message = self._complete()
            if message is not None:
                self._buffer.clear()
                if message.command is not None or message.address:
                    yield message

    def _drop(self) -> None:
        self.bad += 1
        self._buffer.clear()
        self._discarding = True

    def _complete(self) -> Message | None:
        buffer = self._buffer
        first = buffer[0]
        if first & 0x80:  # a general poll (0x80: address 0, nobody's: ignored)
            return Message(first & 0x7F, None)
        if len(buffer) < 2:
            return None
        command = buffer[1]
        if command in VARIABLE:
            if len(buffer) < 3:
                return None
            total = 3 + buffer[2] + 2
        elif command in FIXED_LENGTHS:
            total = FIXED_LENGTHS[command]
        else:
            self._drop()
            return None
        if len(buffer) < total:
            return None
        raw = bytes(buffer)
        if total > 2 and crc16(raw) != 0:
            self._drop()
            return None
        return Message(first, command, raw)
