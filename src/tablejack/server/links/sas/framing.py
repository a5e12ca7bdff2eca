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
CRC that does not verify makes the framer discard what follows until the next byte with the
wakeup bit, the next byte that is a machine's address on the line or its general poll
(:class:`Framer` ``addresses``), or the line is quiet (:meth:`Framer.gap`): SAS has the gaming
machine ignore a message it cannot read, and the host retry. Every long poll of SAS 6.02 has its
length here (:data:`FIXED_LENGTHS`, :data:`VARIABLE`), so one this machine does not implement
is skipped by its length, unanswered, and the next poll is read.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
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


VARIABLE = frozenset(
    {0x2F, 0x6E, 0x6F, 0x71, 0x72, 0x73, 0x75, 0x76, 0x7A, 0x7B, 0x7C, 0x7D, 0x86, 0xAF, 0xB0, 0xB7}
)
"""Long polls whose third byte is the length of their data (the message is ``3 + length + 2``
bytes: address, command, length, data, CRC): selected meters (2F), authentication (6E),
extended meters (6F, AF), ticket redemption (71), AFT (72, 73, 75, 76), extended progressive
broadcast (7A), extended validation and ticket data (7B–7D), multiple-level progressive
broadcast (86), the multi-denomination preamble (B0) and set machine numbers (B7)."""

_R_POLLS = (
    *range(0x0F, 0x21),  # meters, handpay information (1B), machine ID (1F), bills value (20)
    *range(0x22, 0x2D),  # 27 promotional credits, 28 transfer logs, 2A/2B true coin, 2C hopper
    *range(0x31, 0x3F),  # bills by denomination (31–3C), 3D last cash-out ticket, 3E
    *(0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x4B, 0x4F),
    *(0x51, 0x54, 0x55, 0x56, 0x57, 0x6A, 0x70, 0x7E, 0x84, 0x85, 0x87, 0x8E, 0x8F, 0x90),
    *(0xB1, 0xB2, 0xB3),
)
FIXED_LENGTHS: dict[int, int] = {
    **dict.fromkeys(_R_POLLS, 2),  # type R: address and command, no CRC
    # type S: address, command, CRC — shutdown, startup, sound off and on, game sounds off,
    # bill acceptor enable and disable, maintenance mode in and out, remote handpay reset
    **dict.fromkeys([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0A, 0x0B, 0x94], 4),
    0x08: 9,  # configure bill denominations: denominations (4), action (1)
    0x09: 7,  # enable/disable game N: game number (2 BCD), enable (1)
    0x0E: 5,  # enable/disable real-time event reporting: enable (1)
    0x21: 6,  # ROM signature verification: a 2-byte seed
    0x2D: 6,  # total hand-paid cancelled credits of game N (2 BCD)
    0x2E: 6,  # game delay: delay time (2 BCD)
    0x4C: 10,  # set secure enhanced validation ID: machine ID (3), sequence number (3)
    0x4D: 5,  # send enhanced validation information: a function code
    0x50: 5,  # send validation meters: validation type (1)
    0x52: 6,  # send game N meters: game number (2 BCD)
    0x53: 6,  # send game N configuration: game number (2 BCD)
    0x58: 13,  # receive validation number: system ID (1 BCD), validation number (8 BCD)
    0x74: 8,  # AFT game lock and status: lock code, condition, lock timeout (2 BCD)
    0x7F: 11,  # receive date and time: date (4 BCD), time (3 BCD)
    0x80: 11,  # single-level progressive broadcast: group, level, amount (5 BCD)
    0x83: 6,  # send cumulative progressive wins of game N (2 BCD)
    0x8A: 9,  # initiate legacy bonus pay: amount (4 BCD), tax status (1)
    0x8B: 15,  # initiate multiplied jackpot mode
    0x8C: 13,  # enter/exit tournament mode
    **dict.fromkeys(range(0x95, 0x9B), 6),  # tournament and bonus meters of game N (2 BCD)
    0xA0: 6,  # send enabled features of game N (2 BCD)
    0xA4: 6,  # send cash-out limit of game N (2 BCD)
    0xA8: 5,  # enable jackpot handpay reset method: method (1)
    0xAA: 5,  # enable/disable game auto rebet: (1)
    0xB4: 8,  # send wager category information: game number (2 BCD), category (2 BCD)
    0xB5: 6,  # send extended game N information: game number (2 BCD)
    0xB6: 6,  # meter collect status
}
"""The whole length of each fixed-length long poll of SAS 6.02 (§7, the long polls), whether
this gaming machine answers it or not: the address, the command, the data and (except type R
polls, 2 bytes) the CRC. A long poll the machine does not implement is framed by this length
and not answered, and the line stays in step for the next poll."""

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
    line, and because a poll to another address is an implied ACK, SAS §3.1) and yielded, the
    general poll of address 0 (``80``, nobody's) included; the gaming machine answers its own
    only. A long poll with a CRC that does not verify, an unknown command or an impossible
    length is counted in :attr:`bad` and never yielded.

    After such a message the framer *resynchronises*: with the wakeup bit, at the next byte
    that carries it; without it (TCP, a pseudo-terminal), at the next byte that is one of the
    line's ``addresses`` (a long poll to a machine on it) or a general poll of one of them (or
    of address 0) — or, with no addresses given, once the line is quiet (:meth:`gap`).

    >>> framer = Framer()
    >>> [m.command for m in framer.feed(bytes([0x81, 0x01, 0x1F]))]
    [None, 31]
    >>> list(framer.feed(bytes([0x01, 0x02, 0x00, 0x00]))), framer.bad
    ([], 1)
    >>> framer = Framer({1})
    >>> [m.command for m in framer.feed(bytes([0x01, 0xC9, 0x33, 0x44, 0x81, 0x01, 0x1F]))]
    [None, 31]
    """

    def __init__(self, addresses: Collection[int] = ()) -> None:
        self._buffer = bytearray()
        self._discarding = False
        self.addresses = frozenset(addresses)
        """The addresses of the machines on this line (a discard ends at one of them)."""
        self.bad = 0
        """Messages dropped: a bad CRC, an unknown command, a length that cannot be."""

    def gap(self) -> None:
        """The line was quiet: drop a partial message, end a discard."""
        if self._buffer:
            self.bad += 1
        self._buffer.clear()
        self._discarding = False

    def _starts(self, byte: int) -> bool:
        """Can ``byte`` start a message on this line (the end of a discard)?"""
        return bool(self.addresses) and (byte == 0x80 or (byte & 0x7F) in self.addresses)

    def feed(self, data: bytes, *, wakeup: bool = False) -> Iterator[Message]:
        """The messages completed by ``data``."""
        if wakeup and data:
            self.gap()
        for byte in data:
            if self._discarding:
                if not self._starts(byte):
                    continue
                self._discarding = False
            self._buffer.append(byte)
            message = self._complete()
            if message is not None:
                self._buffer.clear()
                yield message

    def _drop(self) -> None:
        self.bad += 1
        self._buffer.clear()
        self._discarding = True

    def _complete(self) -> Message | None:
        buffer = self._buffer
        first = buffer[0]
        if first & 0x80:  # a general poll (0x80: address 0, nobody's, an implied ACK)
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
