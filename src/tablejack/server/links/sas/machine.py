"""The gaming-machine side of SAS for one electronic wagering terminal: its exceptions, its
long polls and its ticket-in/ticket-out (TITO) state. No I/O: the transport hands it the host's
messages (:class:`~tablejack.server.links.sas.framing.Message`) and sends what it answers;
what it needs of the floor (meters, the lock-out, the release's signature) it asks its
:class:`Backend`.

The mapping of every long poll and meter code is in docs/sas.md.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from tablejack.server.links.sas.events import EXCEPTIONS, PRIORITY, ExceptionQueue
from tablejack.server.links.sas.framing import Message, bcd, from_bcd, with_crc
from tablejack.server.links.sas.meters import METER_CODES, METER_POLLS, meter_poll, meter_value

__all__ = [
    "CASHOUT_NOT_WAITING",
    "EXCEPTIONS",
    "METER_CODES",
    "PRIORITY",
    "Backend",
    "GamingMachine",
    "HostRefusedError",
    "TicketRecord",
    "meter_value",
]

READ_NOW = frozenset({*METER_POLLS, 0x1B, 0x1F, 0x48, 0x51, 0x54, 0x7E, 0xA0, 0xB5})
"""Long polls :meth:`GamingMachine.answer_now` answers at once, from the machine's own state
and a meters snapshot: they only read."""

SAS_VERSION = b"602"

EFFECTS = frozenset({0x01, 0x02, 0x4C, 0x4D, 0x58, 0x71, 0x7F, 0x94})
"""Long polls that change something (a lock, a validation number, a redemption, a record
read): a retry with the same bytes is answered again without doing it twice. (``71`` with
transfer code ``FF`` and ``4D`` with function ``FF`` only read.)"""

CASHOUT_NOT_WAITING = 0x80

HANDPAY_REPEAT_SECONDS = 15.0
"""A handpay pending whose information the host has not read (long poll 1B) is reported
again (exception 51) this long after it was last reported (SAS 6.02 §7.8.1), until the host
reads it or it is paid or reset."""

BILL_EXCEPTIONS = {
    100: 0x47,
    500: 0x48,
    1000: 0x49,
    2000: 0x4A,
    5000: 0x4B,
    10000: 0x4C,
    200: 0x4D,
    50000: 0x4E,
    20000: 0x50,
}
"""The exception of a bill accepted, by denomination in cents (SAS 6.02 §7.11 and appendix A:
real-time event reporting is off): $1 47, $5 48, $10 49, $20 4A, $50 4B, $100 4C, $2 4D, $500
4E, $200 50; any other bill 4F. The host then reads the bill with long poll 48."""

BILL_CODES = (
    *(100, 200, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 25_000, 50_000, 100_000),
    *(200_000, 250_000, 500_000, 1_000_000),
)
"""SAS's bill denomination codes (appendix C: 00 $1, 01 $2, 02 $5 … 0A $500 …), by position."""
COUNTRY_US = 0x37
"""The bill acceptor country code of the United States (appendix C: 37, BCD)."""

FEATURES = bytes(
    [
        0b1100_0000,  # ticket redemption (bit 7); validation style 10: system (bits 5-6)
        0b0000_1101,  # extended meters (3); tickets in drop and cancelled credits (2); won
        # credits metered when won (bits 0-1: 01)
        0x01,  # polled as fast as every 40 ms (SAS 6.02 §2.3.3)
        0x00,
    ]
)
"""The enabled features of the machine (long poll A0, SAS 6.02 §7.14)."""

GAME_NAME = b"tablejack blackjack"
PAYTABLE = b"BJ0001"

THREAD_POLLS = frozenset({0x4C, 0x4D, 0x57, 0x58, 0x70, 0x71, 0x7B, 0x7F, 0x94})
"""Long polls with an effect answered in the line's thread from the machine's own state
(:meth:`GamingMachine.answer_now`): a validation number, a ticket's decision, a record read,
the host's clock, a handpay reset; the floor waiting on them is woken (the handpay's lock
lifted) in its event loop. (``0E``, real-time event reporting, is not supported: ignored.)"""


class HostRefusedError(Exception):
    """The host refused (or did not answer) a validation or a ticket."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class TicketRecord:
    """A ticket printed with system validation, for long poll 4D."""

    code: str
    amount: int
    at_us: int
    number: int
    system_id: int


class Backend(Protocol):
    """What a gaming machine asks of the floor for its terminal."""

    async def meters(self) -> Mapping[str, Any]:
        """The terminal's lifetime meters (the floor's readings)."""

    def meters_now(self) -> Mapping[str, Any] | None:
        """The terminal's meters without waiting for the floor's event loop (from a line's
        thread): a fresh snapshot, or None when there is none (the poll then goes through
        :meth:`GamingMachine.answer`)."""

    async def set_enabled(self, enabled: bool) -> bool:
        """Disable (lock out) or enable the terminal; False when it could not."""

    async def rom_signature(self, seed: int) -> int:
        """The release's signature with ``seed``."""

    def rom_signature_now(self, seed: int) -> int | None:
        """The release's signature with ``seed`` from what is computed ahead (None: not yet;
        the event loop answers)."""

    def enable_later(self, enabled: bool) -> bool | None:
        """Disable or enable the terminal after the answer (the floor's part in the event
        loop): True to ACK now, False to NACK, None for the event loop to answer."""

    async def reset_handpay(self) -> int:
        """The host asks to reset a handpay: 0 reset, 1 unable, 2 not in handpay."""

    def reset_handpay_later(self, amount: int) -> int | None:
        """The host asks to reset the handpay of ``amount`` cents, from a line's thread: the
        answer now (0 reset, the lock lifted after in the event loop; 1 unable), None for the
        event loop to answer."""

    def now_us(self) -> int:
        """The floor clock."""


@dataclass
class _Cashout:
    amount: int
    done: asyncio.Future[str]
    answered: bool = False
    """The host gave its answer (LP 58); the future is settled in the event loop."""


@dataclass
class _Ticket:
    code: str
    decided: asyncio.Future[tuple[int, int]]
    status: int = 0x20
    amount: int = 0


@dataclass
class GamingMachine:
    """The SAS gaming machine of one terminal."""

    terminal: str
    address: int
    backend: Backend
    serial: str = ""
    asset: int = 0
    exceptions: ExceptionQueue = field(default_factory=ExceptionQueue)
    last_poll: float = float("-inf")
    """When the host last polled this machine (the link's clock)."""
    polls: int = 0
    validation_id: bytes = b"\x00\x00\x00"
    validation_seq: int = 0
    cashout: _Cashout | None = None
    ticket: _Ticket | None = None
    printed: deque[TicketRecord] = field(default_factory=lambda: deque(maxlen=32))
    unread: deque[TicketRecord] = field(default_factory=deque)
    handpay: int = 0
    """The cents of the handpay pending (0: none)."""
    zone: dt.tzinfo = dt.UTC
    """The floor's time zone (the setting ``sas_time_zone``): SAS clocks are local."""
    clock_offset_us: int = 0
    """What the host's date and time (long poll 7F) adds to the floor clock in this machine's
    answers (7E, the ticket records of 4D); the floor clock and the ledger are never changed."""
    _last: tuple[bytes, bytes | None] | None = None
    _previous: bytes | None = None
    """The host's last message to this machine; None once a message to another address (or a
    global one) was heard since — the implied ACK of SAS §3.1."""
    _unacked: bytes | None = None
    """The exception last answered to a general poll, not yet acknowledged: a general poll
    repeated (the implied NACK) gets it again."""
    _handpay_at: float = float("-inf")
    _handpay_read: bool = False
    last_bill: int = 0
    """The cents of the last bill accepted (long poll 48)."""
    last_bill_count: int = 0
    """How many bills of that denomination the terminal had accepted (its meter)."""

    def __post_init__(self) -> None:
        if not 1 <= self.address <= 127:
            raise ValueError(f"a SAS address is 1 to 127, not {self.address}")

    # events

    def report(self, event: str) -> None:
        """Queue a significant event for the host (by name, :data:`EXCEPTIONS`)."""
        self.exceptions.report(EXCEPTIONS[event])

    def report_code(self, code: int) -> None:
        self.exceptions.report(code)

    def report_bill(self, amount: int, count: int = 0) -> None:
        """A bill of ``amount`` cents accepted (``count``: the terminal's meter of that
        denomination, with it): its denomination's exception (real-time event reporting is
        off), 4F for a denomination without one."""
        self.last_bill, self.last_bill_count = amount, count
        self.exceptions.report(BILL_EXCEPTIONS.get(amount, EXCEPTIONS["bill_accepted"]))

    def next_exception(self, now: float = 0.0) -> int:
        """The exception a general poll answers: the priority ones first, in order; a
        pending system validation or inserted ticket again until the host handles it; a
        handpay pending again every :data:`HANDPAY_REPEAT_SECONDS` until it is paid or reset;
        0x00 when there is none."""
        first = self.exceptions.next_priority()
        if first == EXCEPTIONS["handpay_pending"]:
            self._handpay_at = now
        if first is not None:
            return first
        if (
            self.handpay
            and not self._handpay_read
            and now - self._handpay_at >= HANDPAY_REPEAT_SECONDS
        ):
            self._handpay_at = now
            return EXCEPTIONS["handpay_pending"]
        cashout = self.cashout
        if cashout is not None and not cashout.done.done() and not cashout.answered:
            return EXCEPTIONS["validation_request"]
        if self.ticket is not None and self.ticket.status == 0x20:
            return EXCEPTIONS["ticket_inserted"]
        return self.exceptions.next_other()

    # the host's messages

    async def answer(self, message: Message, now: float) -> bytes | None:
        """The answer to one of the host's messages for this address (None: none is sent).
        A long poll with an effect (:data:`EFFECTS`) repeated with the same bytes (the host's
        retry of an answer it did not get) gets the same answer again, its effect not
        repeated; a read (a meter, the machine ID …) is answered afresh each time."""
        if message.command is None:
            return self.general_poll(now)
        self.last_poll = now
        self.polls += 1
        self._long_poll_heard(message)
        if self._last is not None and self._last[0] == message.raw:
            return self._last[1]
        try:
            reply = await self._long_poll(message)
        except (ValueError, IndexError):  # data a long poll cannot have: ignored
            reply = None
        effect = message.command in EFFECTS and message.data[:1] != b"\xff"
        self._last = (message.raw, reply) if effect else None
        return reply

    def answer_now(self, message: Message, now: float) -> tuple[bool, bytes | None]:
        """``(True, answer)`` for a message answered at once without the floor's event loop
        (from a line's thread): a general poll, or a long poll that only reads
        (:data:`READ_NOW`) while the backend has fresh meters; ``(False, None)``: the message
        goes through :meth:`answer`. The same answer :meth:`answer` gives."""
        if message.command is None:
            return True, self.general_poll(now)
        if message.command not in READ_NOW:
            return self._effect_now(message, now)
        meters: Mapping[str, Any] | None = {}
        if message.command in METER_POLLS:
            meters = self.backend.meters_now()
            if meters is None:
                return False, None
        self.last_poll = now
        self.polls += 1
        self._long_poll_heard(message)
        self._last = None
        try:
            if message.command in METER_POLLS:
                assert meters is not None
                return True, meter_poll(self.address, message.command, message.data, meters)
            if message.command in (0xA0, 0xB5):
                return True, self._game_info(message.command, message.data)
            return True, self._read(message.command)
        except (ValueError, IndexError):  # data a long poll cannot have: ignored
            return True, None

    def _effect_now(self, message: Message, now: float) -> tuple[bool, bytes | None]:
        """A long poll with an effect answered in the line's thread, inside SAS's reply window
        (:data:`THREAD_POLLS`, and ``01``/``02``/``21`` when the backend can answer them at
        once): its answer from the machine's own state, the floor's part (a lock, a waiting
        cash-out or ticket) done after, in the event loop. ``(False, None)``: the event loop
        answers it."""
        command = message.command
        assert command is not None
        if command not in THREAD_POLLS and command not in (0x01, 0x02, 0x21):
            return False, None
        if self._last is not None and self._last[0] == message.raw:  # the host's retry
            self.last_poll = now
            self.polls += 1
            self._long_poll_heard(message)
            return True, self._last[1]
        reply: bytes | None
        try:
            if command == 0x94:
                handled, reply = self._handpay_reset_now()
                if not handled:
                    return False, None
            elif command in (0x01, 0x02):
                done = self.backend.enable_later(command == 0x02)
                if done is None:
                    return False, None
                reply = self._ack() if done else self._nack()
            elif command == 0x21:
                signature = self.backend.rom_signature_now(
                    int.from_bytes(message.data[:2], "little")
                )
                if signature is None:
                    return False, None
                reply = self._reply(0x21, signature.to_bytes(2, "little"))
            else:
                reply = _run_now(_HANDLERS[command](self, message.data))
        except (ValueError, IndexError):  # data a long poll cannot have: ignored
            reply = None
        self.last_poll = now
        self.polls += 1
        self._long_poll_heard(message)  # the implied ACK, as when the event loop answers
        effect = command in EFFECTS and message.data[:1] != b"\xff"
        self._last = (message.raw, reply) if effect else None
        return True, reply

    def heard_other(self) -> None:
        """A message to another address (or to all, address 0) was on the line: the implied
        ACK of this machine's last answer (SAS §3.1) — its exception is gone, and its next
        poll is a new one, not a retry."""
        self._previous = None
        self._unacked = None
        self._last = None

    def _long_poll_heard(self, message: Message) -> None:
        self._unacked = None  # a long poll acknowledges the exception last reported
        self._previous = message.raw

    def local(self, at_us: int) -> dt.datetime:
        """``at_us`` (the floor clock, UTC) as the SAS clock shows it: in the floor's time zone,
        moved by the host's date and time (7F)."""
        return dt.datetime.fromtimestamp((at_us + self.clock_offset_us) / 1e6, self.zone)

    def _read(self, command: int) -> bytes | None:
        if command == 0x1F:
            return self._machine_id()
        if command == 0x48:
            return self._last_bill()
        if command == 0x51:  # no multi-game extensions: 0000 (SAS 6.02 §7.6.3)
            return self._reply(0x51, bcd(0, 2))
        if command in (0xA0, 0xB5):
            raise ValueError("A0 and B5 carry a game number")  # read with their data
        if command == 0x54:
            return self._variable(0x54, SAS_VERSION + self.serial.encode("ascii", "replace")[:40])
        if command == 0x1B:
            self._handpay_read = bool(self.handpay)  # read: no more 51 every 15 s
            # progressive group 0; level 80: cancelled credits (a cash-out above the voucher
            # limit); partial pay 0; reset ID 01: 94 may reset it to the credit meter
            body = bytes([0x00, 0x80 if self.handpay else 0x00]) + bcd(self.handpay, 5)
            reset = b"\x01" if self.handpay else b"\x00"
            return self._reply(0x1B, body + bcd(0, 2) + reset + bytes(10))
        moment = self.local(self.backend.now_us())  # 7E
        return self._reply(
            0x7E,
            bytes.fromhex(moment.strftime("%m%d%Y")) + bytes.fromhex(moment.strftime("%H%M%S")),
        )

    def general_poll(self, now: float) -> bytes:
        """The answer to a general poll (no waiting: the transport answers it at once). The
        same general poll again with nothing between — no long poll, no poll to another
        address — is the host's implied NACK (SAS §3.1: it did not get the answer): the same
        exception is sent again. Anything else acknowledged it, and the next is taken."""
        self.last_poll = now
        self.polls += 1
        poll = bytes([0x80 | self.address])
        if self._previous == poll and self._unacked is not None:
            return self._unacked
        self._previous = poll
        self._last = None
        answer = bytes([self.next_exception(now)])
        self._unacked = answer if answer != b"\x00" else None
        return answer

    def _ack(self) -> bytes:
        return bytes([self.address])

    def _nack(self) -> bytes:
        return bytes([self.address | 0x80])

    def _reply(self, command: int, body: bytes) -> bytes:
        return with_crc(bytes([self.address, command]) + body)

    def _variable(self, command: int, body: bytes) -> bytes:
        return with_crc(bytes([self.address, command, len(body)]) + body)

    async def _long_poll(self, message: Message) -> bytes | None:
        command, data = message.command, message.data
        assert command is not None
        if command in METER_POLLS:
            return meter_poll(self.address, command, data, await self.backend.meters())
        if command in (0xA0, 0xB5):
            return self._game_info(command, data)
        if command in READ_NOW:
            return self._read(command)
        handler = _HANDLERS.get(command)
        if handler is None:
            return None  # a long poll this machine does not support: no answer
        return await handler(self, data)

    async def _enable(self, data: bytes, enabled: bool) -> bytes:
        del data
        return self._ack() if await self.backend.set_enabled(enabled) else self._nack()

    def _machine_id(self) -> bytes:
        body = (
            b"TJ"  # game ID
            + b"000"  # additional ID
            + bytes([0x01])  # accounting denomination: $0.01
            + bytes([0xFF])  # max bet: 255 credits or more
            + bytes([0x00])  # progressive group: none
            + bytes([0x00, 0x00])  # game options
            + b"BJ0001"  # paytable ID
            + b"0000"  # base %: not reported (a game of skill)
        )
        return self._reply(0x1F, body)

    async def _rom_signature(self, data: bytes) -> bytes:
        seed = int.from_bytes(data[:2], "little")
        signature = await self.backend.rom_signature(seed)
        return self._reply(0x21, signature.to_bytes(2, "little"))

    def _game_info(self, command: int, data: bytes) -> bytes | None:
        """A0 (enabled features) and B5 (extended game information) of game 0 (the machine);
        another game: no answer (no multi-game extensions, SAS 6.02 §7.6.3)."""
        if from_bcd(data[:2]) != 0:
            return None
        if command == 0xA0:
            return self._reply(0xA0, data[:2] + FEATURES)
        body = (
            data[:2]
            + bcd(9999, 2)  # max bet: not limited by the machine (the table's limits apply)
            + b"\x00"  # progressive group: none
            + bytes(4)  # progressive levels: none
            + bytes([len(GAME_NAME)])
            + GAME_NAME
            + bytes([len(PAYTABLE)])
            + PAYTABLE
            + bcd(0, 2)  # wager categories: none
            + b"\x01\x01"  # one player denomination: $0.01
        )
        return self._variable(0xB5, body)

    def _last_bill(self) -> bytes:
        """48: the last bill accepted — country code (US), denomination code, and how many
        bills of it the terminal had accepted then; zeros when none was."""
        if self.last_bill not in BILL_CODES:
            return self._reply(0x48, bytes(6))
        code = bcd(BILL_CODES.index(self.last_bill), 1)
        return self._reply(0x48, bytes([COUNTRY_US]) + code + bcd(self.last_bill_count, 4))

    def set_date_time(self, data: bytes) -> bool:
        """7F (or its global broadcast): the host's local date and time, ``MMDDYYYY HHMMSS``
        in BCD, becomes this machine's SAS clock (an offset to the floor clock); False when it
        is no date."""
        text = data[:7].hex()
        if not text.isdigit():
            raise ValueError(f"not BCD: {text}")
        try:
            moment = dt.datetime.strptime(text, "%m%d%Y%H%M%S").replace(tzinfo=self.zone)
        except ValueError:
            return False
        self.clock_offset_us = int(moment.timestamp() * 1e6) - self.backend.now_us()
        return True

    async def _set_date_time(self, data: bytes) -> bytes:
        return self._ack() if self.set_date_time(data) else self._nack()

    async def _handpay_reset(self, data: bytes) -> bytes:
        """94: 00 reset (the handpay is cancelled, the credit stays the player's, the lock is
        lifted, 52 reported), 01 unable, 02 no handpay pending."""
        del data
        if not self.handpay:
            return self._reply(0x94, b"\x02")
        return self._handpay_reset_answer(await self.backend.reset_handpay())

    def _handpay_reset_now(self) -> tuple[bool, bytes | None]:
        """94 from the line's thread, from the machine's own state: 02 with no handpay
        pending; else the backend's answer now (00: reset, its lock lifted after in the event
        loop). ``(False, None)``: the event loop answers it."""
        if not self.handpay:
            return True, self._reply(0x94, b"\x02")
        code = self.backend.reset_handpay_later(self.handpay)
        if code is None:
            return False, None
        return True, self._handpay_reset_answer(code)

    def _handpay_reset_answer(self, code: int) -> bytes:
        if code == 0x00:
            self.handpay = 0
            self.report("handpay_reset")
        return self._reply(0x94, bytes([code]))

    # ticket out (system validation)

    async def _pending_cashout(self, data: bytes) -> bytes:
        del data
        pending = self.cashout
        if pending is None or pending.done.done() or pending.answered:
            return self._reply(0x57, bytes([CASHOUT_NOT_WAITING]) + bcd(0, 5))
        return self._reply(0x57, b"\x00" + bcd(pending.amount, 5))

    async def _validation_number(self, data: bytes) -> bytes:
        pending = self.cashout
        system_id, number = from_bcd(data[:1]), from_bcd(data[1:9])
        if pending is None or pending.done.done():
            return self._reply(0x58, b"\x80")  # not in cashout
        if pending.answered:
            return self._reply(0x58, b"\x80")  # answered already: no cash-out waits
        pending.answered = True
        if system_id == 0 and number == 0:  # the host cannot validate it
            _settle(
                pending.done,
                error=HostRefusedError(0x81, "The host did not validate the cash-out."),
            )
            return self._reply(0x58, b"\x00")
        _settle(pending.done, f"{system_id:02d}{number:016d}")
        return self._reply(0x58, b"\x00")

    async def _set_validation_id(self, data: bytes) -> bytes:
        if any(data[:3]):
            self.validation_id = bytes(data[:3])
            self.validation_seq = int.from_bytes(data[3:6], "little")
        return self._reply(
            0x4C, self.validation_id + (self.validation_seq & 0xFFFFFF).to_bytes(3, "little")
        )

    async def _validation_info(self, data: bytes) -> bytes:
        function = data[0]
        record: TicketRecord | None = None
        if function == 0x00 and self.unread:
            record = self.unread.popleft()
        elif function == 0xFF and self.unread:
            record = self.unread[0]
        elif 0x01 <= function <= 0x1F and function <= len(self.printed):
            record = list(self.printed)[-function]
        if record is None:
            return self._reply(0x4D, bytes(31))
        moment = self.local(record.at_us)
        body = (
            b"\x00"  # validation type: cashable ticket from cashout
            + bytes([function if 0x01 <= function <= 0x1F else 0x00])
            + bytes.fromhex(moment.strftime("%m%d%Y"))
            + bytes.fromhex(moment.strftime("%H%M%S"))
            + bcd(int(record.code[2:]), 8)  # the validation number
            + bcd(record.amount, 5)
            + bcd(record.number % 10_000, 2)  # ticket number
            + bcd(record.system_id, 1)
            + bcd(0, 4)  # expiration: none
            + b"\x00\x00"  # pool ID
        )
        return self._reply(0x4D, body)

    async def _extended_validation(self, data: bytes) -> bytes:
        del data  # the control mask asks for changes this machine does not make
        status = 0b0010_0001  # the printer is the cash-out device; tickets are redeemed
        body = self.asset.to_bytes(4, "little") + status.to_bytes(2, "little") + bcd(0, 2) * 2
        return self._variable(0x7B, body)

    # ticket in

    async def _ticket_data(self, data: bytes) -> bytes:
        del data
        ticket = self.ticket
        if ticket is None or ticket.status != 0x20:
            return self._variable(0x70, b"\xff")  # no ticket waiting
        return self._variable(0x70, b"\x00" + bcd(0, 5) + b"\x00" + bcd(int(ticket.code), 9))

    async def _redeem(self, data: bytes) -> bytes:
        ticket = self.ticket
        if ticket is None:
            return self._variable(0x71, b"\xff" + bcd(0, 5) + b"\x00" + bcd(0, 9))
        transfer = data[0]
        if transfer != 0xFF and ticket.status == 0x20:
            amount = from_bcd(data[1:6])
            if from_bcd(data[7:16]) != int(ticket.code):
                ticket.status = 0x81  # the validation number does not match
                _settle(
                    ticket.decided, error=HostRefusedError(0x81, "The host named another ticket.")
                )
            else:
                ticket.status, ticket.amount = 0x40, amount  # redemption pending
                _settle(ticket.decided, (transfer, amount))
        body = bytes([ticket.status]) + bcd(ticket.amount, 5) + b"\x00" + bcd(int(ticket.code), 9)
        return self._variable(0x71, body)

    # what the floor asks of the host

    async def validate_cashout(self, amount: int, timeout: float) -> str:
        """Ask the host for the validation number of a cash-out of ``amount`` cents (system
        validation, exception 57, long polls 57 and 58); the 18-digit code: the system ID's
        two digits and the 16 of the validation number."""
        if self.cashout is not None and not self.cashout.done.done():
            raise HostRefusedError(0x87, "A cash-out is already waiting for the host.")
        pending = _Cashout(amount, asyncio.get_running_loop().create_future())
        self.cashout = pending
        self.report("validation_request")
        try:
            return await asyncio.wait_for(asyncio.shield(pending.done), timeout)
        except TimeoutError:
            raise HostRefusedError(
                0x88, "The host did not validate the cash-out in time."
            ) from None
        finally:
            self.cashout = None

    def ticket_printed(
        self, code: str, amount: int, at_us: int, number: int, *, report: bool = True
    ) -> None:
        """A ticket was printed with the host's validation number: exception 3D (``report``:
        now; else the caller reports it), and its record for long poll 4D."""
        record = TicketRecord(code, amount, at_us, number, int(code[:2]))
        self.printed.append(record)
        self.unread.append(record)
        if report:
            self.report("ticket_printed")

    async def insert_ticket(self, code: str, timeout: float) -> tuple[int, int]:
        """A ticket inserted: the host's decision (exception 67, long polls 70 and 71): the
        transfer code and amount. The caller ends it with :meth:`ticket_done`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.ticket is not None:  # the last ticket's end not yet read by the host
            if asyncio.get_running_loop().time() > deadline:
                raise HostRefusedError(0x87, "A ticket is already being redeemed.")
            await asyncio.sleep(0.02)
        ticket = _Ticket(code, asyncio.get_running_loop().create_future())
        self.ticket = ticket
        self.report("ticket_inserted")
        try:
            transfer, amount = await asyncio.wait_for(asyncio.shield(ticket.decided), timeout)
        except TimeoutError:
            self.ticket_done(0x88, 0)
            raise HostRefusedError(0x88, "The host did not answer the ticket in time.") from None
        except HostRefusedError:
            self.ticket_done(ticket.status, 0)
            raise
        if transfer >= 0x80:
            self.ticket_done(0x80, 0)
            raise HostRefusedError(transfer, f"The host refused the ticket (code {transfer:02X}).")
        return transfer, amount

    def ticket_done(self, status: int, amount: int, *, report: bool = True) -> None:
        """The ticket's end: its status for long poll 71 (0x00 redeemed), exception 68
        (``report``: now; else the caller reports it)."""
        ticket = self.ticket
        if ticket is None:
            return
        ticket.status, ticket.amount = status, amount
        if report:
            self.report("ticket_complete")

    def ticket_read(self) -> None:
        """The host read the ticket's final status: the reader is free for another."""
        self.ticket = None


def _run_now(awaitable: Awaitable[bytes | None]) -> bytes | None:
    """Run a long poll's handler that never waits (it only reads and sets the machine's own
    state) to its answer, in the calling thread."""
    coroutine = cast("Coroutine[Any, Any, bytes | None]", awaitable)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast("bytes | None", done.value)
    coroutine.close()
    raise RuntimeError("a long poll answered in the line's thread waited")


def _settle(
    future: asyncio.Future[Any], value: Any = None, *, error: BaseException | None = None
) -> None:
    """Settle ``future`` in its event loop (the host's answer came in a line's thread)."""

    def settle() -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    future.get_loop().call_soon_threadsafe(settle)


async def _redeem_then_free(machine: GamingMachine, data: bytes) -> bytes:
    reply = await machine._redeem(data)
    ticket = machine.ticket
    if ticket is not None and data[:1] == b"\xff" and ticket.status not in (0x20, 0x40):
        machine.ticket_read()
    return reply


_HANDLERS: dict[int, Callable[[GamingMachine, bytes], Awaitable[bytes | None]]] = {
    0x01: lambda m, d: m._enable(d, False),
    0x02: lambda m, d: m._enable(d, True),
    0x21: GamingMachine._rom_signature,
    0x94: GamingMachine._handpay_reset,
    0x57: GamingMachine._pending_cashout,
    0x58: GamingMachine._validation_number,
    0x4C: GamingMachine._set_validation_id,
    0x4D: GamingMachine._validation_info,
    0x7B: GamingMachine._extended_validation,
    0x70: GamingMachine._ticket_data,
    0x71: _redeem_then_free,
    0x7F: GamingMachine._set_date_time,
}
