"""SAS framing, CRC and the gaming machine's answers to bad input (PA 605a.5(a): the link to
the central system): properties of the framer over every long poll's length, garbage, partial
and interleaved bytes; a bad message is ignored and the next good one answered."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sas_comm_py.crc import CRC16K

from tablejack.server.links.sas.framing import (
    FIXED_LENGTHS,
    VARIABLE,
    Framer,
    Message,
    bcd,
    crc16,
    from_bcd,
    with_crc,
)
from tablejack.server.links.sas.machine import READ_NOW, THREAD_POLLS, GamingMachine
from tablejack.server.links.sas.transport import MarkDecoder

KERMIT = CRC16K().compute
STEADY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Properties steady on a machine busy with the rest of the suite (no timing in them)."""


def test_605a5a_crc_is_kermit_as_sas_sends_it() -> None:
    assert crc16(b"123456789") == 0x2189  # the CRC-16/KERMIT check value
    # sas-comm-py's CRC (a host library the project did not write) gives the same bytes
    message = bytes([0x01, 0x2F, 0x05, 0x00, 0x00, 0x00, 0x01, 0x05])
    ours = with_crc(message)[-2:]
    assert f"{KERMIT(message):04x}" == ours.hex()


@STEADY
@given(st.binary(max_size=300))
def test_605a5a_crc_of_a_message_with_its_crc_is_zero_and_any_flip_is_caught(data: bytes) -> None:
    framed = with_crc(data)
    assert crc16(framed) == 0
    assert f"{KERMIT(data):04x}" == framed[-2:].hex()
    for index in range(len(framed)):
        flipped = bytearray(framed)
        flipped[index] ^= 0x01
        assert crc16(bytes(flipped)) != 0


@STEADY
@given(st.integers(min_value=0, max_value=10**10 - 1), st.integers(min_value=1, max_value=5))
def test_605a5d_bcd_keeps_the_digits_that_fit_as_sas_meters_roll_over(
    value: int, size: int
) -> None:
    assert from_bcd(bcd(value, size)) == value % 10 ** (2 * size)
    assert len(bcd(value, size)) == size


def long_poll(address: int, command: int, data: bytes) -> bytes:
    """A well-formed long poll of ``command`` (its length from the tables)."""
    if command in VARIABLE:
        return with_crc(bytes([address, command, len(data)]) + data)
    total = FIXED_LENGTHS[command]
    if total == 2:
        return bytes([address, command])
    body = (data + bytes(total))[: total - 4]
    return with_crc(bytes([address, command]) + body)


commands = st.sampled_from(sorted(set(FIXED_LENGTHS) | VARIABLE))
addresses = st.integers(min_value=1, max_value=127)
messages = st.builds(long_poll, addresses, commands, st.binary(max_size=40)) | st.builds(
    lambda a: bytes([0x80 | a]), addresses
)


@STEADY
@given(addresses, commands, st.binary(max_size=255))
def test_605a5a_every_long_poll_is_framed_by_its_length(
    address: int, command: int, data: bytes
) -> None:
    raw = long_poll(address, command, data)
    framer = Framer()
    found = list(framer.feed(raw))
    assert found == [Message(address, command, raw)]
    assert framer.bad == 0


@STEADY
@given(st.lists(messages, min_size=1, max_size=12), st.data())
def test_605a5a_partial_and_interleaved_messages_frame_in_order(
    raws: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(raws)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    framer = Framer()
    found: list[Message] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        found += framer.feed(stream[start:cut])
        start = cut
    assert [m.raw or bytes([0x80 | m.address]) for m in found] == raws


@STEADY
@given(st.binary(max_size=400), messages)
def test_605a5a_garbage_never_crashes_and_the_next_message_after_a_quiet_line_is_read(
    garbage: bytes, raw: bytes
) -> None:
    framer = Framer()
    list(framer.feed(garbage))  # whatever it frames or drops, it does not raise
    framer.gap()
    found = list(framer.feed(raw))
    assert len(found) == 1
    assert (found[0].raw or bytes([0x80 | found[0].address])) == raw


@STEADY
@given(messages, st.integers(min_value=0, max_value=400))
def test_605a5a_wakeup_bit_starts_a_message_whatever_came_before(raw: bytes, cut: int) -> None:
    framer = Framer()
    list(framer.feed(bytes([0x01, 0x2F, 0x40])[: cut % 4]))  # a partial message left behind
    found = list(framer.feed(raw, wakeup=True))
    assert len(found) == 1


def test_605a5a_a_bad_crc_is_ignored_until_the_line_is_quiet() -> None:
    framer = Framer()
    good = with_crc(bytes([0x01, 0x21, 0x12, 0x34]))
    bad = good[:-1] + bytes([good[-1] ^ 0xFF])
    assert list(framer.feed(bad + bytes([0x81]))) == []  # the poll after it is discarded too
    assert framer.bad == 1
    framer.gap()
    assert list(framer.feed(bytes([0x81]))) == [Message(1, None)]


def test_605a5a_an_unknown_command_is_dropped_not_guessed() -> None:
    framer = Framer()
    assert list(framer.feed(bytes([0x01, 0xEE, 0x81, 0x81]))) == []
    assert framer.bad == 1


@STEADY
@given(st.binary(max_size=200))
def test_605a5a_mark_decoder_finds_the_wakeup_bytes(data: bytes) -> None:
    decoder = MarkDecoder()
    marked = bytes([0xFF, 0x00, 0x01]) + data.replace(b"\xff", b"\xff\xff")
    runs = list(decoder.feed(marked))
    assert b"".join(run for run, _ in runs) == bytes([0x01]) + data
    assert runs[0][1] is True


class _Backend:
    def __init__(self, *, ahead: bool = True) -> None:
        self.enabled: list[bool] = []
        self.later: list[bool] | None = [] if ahead else None
        """What ``enable_later`` was asked (None: the backend cannot answer ahead)."""
        self.coin_in = 12_345
        self.reset = 1
        """What a handpay reset answers (1: unable)."""
        self.resets: list[int] = []
        """The handpays ``reset_handpay_later`` was asked to reset after its answer."""

    async def meters(self) -> Mapping[str, Any]:
        return self.meters_now()

    def meters_now(self) -> Mapping[str, Any]:
        return {
            "coin_in": self.coin_in,
            "coin_out": 10_000,
            "games_played": 7,
            "games_won": 3,
            "bills_in": 12_000,
            "cancelled_credits": 500,
            "vouchers_out": 3000,
            "bills": {2000: 1, 10000: 1},
        }

    async def set_enabled(self, enabled: bool) -> bool:
        self.enabled.append(enabled)
        return True

    async def rom_signature(self, seed: int) -> int:
        return crc16(b"release", seed)

    def rom_signature_now(self, seed: int) -> int | None:
        return None if self.later is None else crc16(b"release", seed)

    def enable_later(self, enabled: bool) -> bool | None:
        if self.later is None:
            return None
        self.later.append(enabled)
        return True

    async def reset_handpay(self) -> int:
        return self.reset

    def reset_handpay_later(self, amount: int) -> int | None:
        if self.later is None:
            return None
        self.resets.append(amount)
        return self.reset

    def now_us(self) -> int:
        return 1_764_475_200_000_000


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_605a5a_the_machine_answers_garbage_with_nothing_that_breaks_it(garbage: bytes) -> None:
    async def run() -> None:
        backend = _Backend()
        machine = GamingMachine("T1", 1, backend)
        framer = Framer()
        for message in framer.feed(garbage):
            if message.address == 1:
                await machine.answer(message, 0.0)
        framer.gap()
        # still answers a machine-ID long poll with a CRC that verifies
        (message,) = framer.feed(bytes([0x01, 0x1F]))
        reply = await machine.answer(message, 1.0)
        assert reply is not None and crc16(reply) == 0 and len(reply) == 24

    asyncio.run(run())


def test_605a5a_exceptions_priority_first_a_retried_disable_done_once_a_meter_read_afresh() -> None:
    async def run() -> None:
        backend = _Backend()
        machine = GamingMachine("T1", 5, backend)
        machine.report("game_start")
        machine.report("door_open")
        machine.report("handpay_pending")
        poll = Message(5, None)
        got = []
        for _ in range(4):
            got.append(await machine.answer(poll, 0.0))
            machine.heard_other()  # a poll to another address: the implied ACK (SAS §3.1)
        assert got == [b"\x51", b"\x7e", b"\x11", b"\x00"]
        disable = Message(5, 0x01, with_crc(bytes([5, 0x01])))
        assert await machine.answer(disable, 0.0) == b"\x05"
        assert await machine.answer(disable, 0.0) == b"\x05"  # the host's retry
        assert backend.enabled == [False]  # done once
        coin_in = Message(5, 0x11, bytes([5, 0x11]))
        assert await machine.answer(coin_in, 0.0) == with_crc(bytes([5, 0x11, 0, 1, 0x23, 0x45]))
        backend.coin_in = 99
        assert await machine.answer(coin_in, 0.0) == with_crc(bytes([5, 0x11, 0, 0, 0, 0x99]))
        backend.coin_in = 12_345
        meters = with_crc(bytes([5, 0x2F, 5, 0, 0, 0x00, 0x05, 0x99]))
        reply = await machine.answer(Message(5, 0x2F, meters), 0.0)
        assert reply is not None and crc16(reply) == 0
        # game 0, coin in 12345 (4 BCD), games played 7; 0x99 is no meter: left out
        assert reply[2:-2].hex() == "0c" + "0000" + "00" + "00012345" + "05" + "00000007"

    asyncio.run(run())


def test_605a5a_exception_queue_overflow_is_reported_and_priority_ones_kept() -> None:
    machine = GamingMachine("T1", 1, _Backend())
    machine.report("handpay_pending")
    for _ in range(40):
        machine.report("game_start")
    codes = [machine.next_exception() for _ in range(40)]
    assert codes[:2] == [0x51, 0x70]
    assert codes.count(0x7E) == 32


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(READ_NOW)),
    st.binary(max_size=12),
    st.integers(min_value=0, max_value=10**9),
)
def test_605a5a_a_read_answered_in_the_lines_thread_is_the_answer_of_the_event_loop(
    command: int, data: bytes, handpay: int
) -> None:
    """Long polls that only read are answered at once from the line's thread
    (``answer_now``): byte for byte what the event loop's ``answer`` gives, for any data."""
    length = bytes([len(data)]) if command in VARIABLE else b""
    body = bytes([3, command]) + length + data
    message = Message(3, command, with_crc(body))
    first, second = GamingMachine("T1", 3, _Backend()), GamingMachine("T1", 3, _Backend())
    first.handpay = second.handpay = handpay
    handled, now = first.answer_now(message, 2.0)
    assert handled
    assert now == asyncio.run(second.answer(message, 2.0))
    assert first.polls == second.polls == 1 and first.last_poll == 2.0


def test_605a5a_every_reply_is_given_in_the_lines_thread_the_floors_part_after() -> None:
    """SAS's 20 ms reply window whatever the floor is doing: disable and enable (ACK, the
    lock-out applied by the event loop after), the ROM signature (computed ahead), the
    validation number, the ticket's decision, the handpay reset and the ticket records are
    answered from the line's thread; a backend that cannot answer ahead leaves 01/02/21 to
    the event loop."""
    machine = GamingMachine("T1", 1, _Backend())
    machine.report("door_open")
    assert machine.answer_now(Message(1, None), 1.0) == (True, b"\x11")
    assert machine.answer_now(Message(1, 0x01, b"\x01\x01"), 1.0) == (True, b"\x01")
    assert machine.answer_now(Message(1, 0x02, b"\x01\x02"), 1.0) == (True, b"\x01")
    assert machine.backend.later == [False, True]  # type: ignore[attr-defined]
    rom = machine.answer_now(Message(1, 0x21, with_crc(b"\x01\x21\x34\x12")), 1.0)
    assert rom == (True, with_crc(b"\x01\x21" + crc16(b"release", 0x1234).to_bytes(2, "little")))
    for command in (0x4D, 0x57, 0x58, 0x70, 0x71, 0x94):
        body = bytes([1, command]) + (b"\x01\x00" if command in VARIABLE else bytes(9))
        handled, reply = machine.answer_now(Message(1, command, with_crc(body)), 1.0)
        assert handled and reply is not None, command
    behind = GamingMachine("T1", 1, _Backend(ahead=False))
    for command in (0x01, 0x02, 0x21):
        assert behind.answer_now(Message(1, command, bytes([1, command])), 1.0) == (False, None)


def test_605a5a_a_long_poll_answered_in_the_lines_thread_is_an_implied_ack() -> None:
    """SAS §3.1: a long poll acknowledges the exception last reported whether the line's
    thread or the event loop answers it — the general poll after it gets the next exception,
    not the same one again."""
    machine = GamingMachine("T1", 1, _Backend())
    for event in ("door_open", "door_closed"):
        machine.report(event)
    poll = Message(1, None)
    assert machine.answer_now(poll, 0.0) == (True, b"\x11")
    assert machine.answer_now(poll, 0.0) == (True, b"\x11")  # the implied NACK
    clock = Message(1, 0x7F, with_crc(bytes.fromhex("017f" + "11292025" + "231500")))
    assert machine.answer_now(clock, 0.0) == (True, b"\x01")  # in the thread: the ACK of 11
    assert machine.answer_now(poll, 0.0) == (True, b"\x12")


def test_605a5a_a_handpay_reset_is_answered_in_the_lines_thread_its_lock_lifted_after() -> None:
    """SAS 6.02 §7.9 inside the 20 ms window: 94 with a handpay pending answers 00 from the
    line's thread and reports 52, the floor asked once to lift the lock after (a retry gets
    the same answer, no second reset); 02 once none is pending; a backend without an event
    loop to lift it leaves 94 to the event loop."""
    backend = _Backend()
    backend.reset = 0
    machine = GamingMachine("T1", 1, backend)
    machine.handpay = 2000
    reset = Message(1, 0x94, with_crc(bytes([1, 0x94])))
    assert machine.answer_now(reset, 1.0) == (True, with_crc(bytes([1, 0x94, 0x00])))
    assert machine.answer_now(reset, 1.1) == (True, with_crc(bytes([1, 0x94, 0x00])))  # retry
    assert backend.resets == [2000] and machine.handpay == 0
    assert machine.next_exception(2.0) == 0x52
    machine.heard_other()
    assert machine.answer_now(reset, 3.0) == (True, with_crc(bytes([1, 0x94, 0x02])))
    behind = GamingMachine("T1", 1, _Backend(ahead=False))
    behind.handpay = 2000
    assert behind.answer_now(reset, 1.0) == (False, None)
    assert behind.handpay == 2000


@settings(max_examples=200)
@given(
    st.sampled_from(sorted(THREAD_POLLS)),
    st.binary(max_size=20),
    st.integers(min_value=0, max_value=10**9),
)
def test_605a5a_an_effect_answered_in_the_lines_thread_is_the_answer_of_the_event_loop(
    command: int, data: bytes, handpay: int
) -> None:
    """A long poll with an effect answered in the line's thread gives byte for byte the
    answer the event loop's ``answer`` gives, for any data, and a retry the same again."""
    length = bytes([len(data)]) if command in VARIABLE else b""
    message = Message(3, command, with_crc(bytes([3, command]) + length + data))
    first, second = GamingMachine("T1", 3, _Backend()), GamingMachine("T1", 3, _Backend())
    first.handpay = second.handpay = handpay
    handled, now = first.answer_now(message, 2.0)
    assert handled
    assert now == asyncio.run(second.answer(message, 2.0))
    assert first.answer_now(message, 3.0) == (True, now)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted({*FIXED_LENGTHS, *VARIABLE})), st.binary(max_size=20))
def test_605a5a_any_sas_602_long_poll_is_skipped_by_its_length_and_the_next_poll_read(
    command: int, data: bytes
) -> None:
    """SAS 6.02 §7: every long poll has a fixed length or carries its data's length; one the
    machine does not implement is framed by it, left unanswered, and the general poll right
    behind it (at a 40 ms poll rate no quiet line comes between) is read."""
    raw = long_poll(1, command, data)
    framer = Framer({1})
    found = list(framer.feed(raw + bytes([0x81])))
    assert [m.command for m in found] == [command, None]

    async def run() -> None:
        machine = GamingMachine("T1", 1, _Backend())
        machine.report("door_open")
        assert await machine.answer(found[1], 0.0) == b"\x11"

    asyncio.run(run())


def test_605a5a_an_unknown_long_poll_is_dropped_and_the_line_resynchronises_at_an_address() -> None:
    """No wakeup bit on TCP: after a command that no SAS 6.02 long poll has, the framer drops
    bytes up to the next one that is a machine's address on the line or its general poll."""
    framer = Framer({1, 2})
    found = list(framer.feed(bytes([0x01, 0xEE, 0x40, 0x7F, 0x33, 0x82, 0x01, 0x1F])))
    assert found == [Message(2, None), Message(1, 0x1F, bytes([0x01, 0x1F]))]
    assert framer.bad == 1
    # sas-comm-py's leading 80 (the general poll of address 0) is a message too: an implied ACK
    assert list(Framer({1}).feed(bytes([0x80, 0x01, 0x1F]))) == [
        Message(0, None),
        Message(1, 0x1F, bytes([0x01, 0x1F])),
    ]


def test_605a5a_a0_51_and_b5_answered_as_a_one_game_machine() -> None:
    """SAS 6.02 §7.6.3: a machine without multi-game extensions answers 51 (number of games
    implemented) with 0000 and ignores a multi-game poll for a game other than 0; §7.14 (A0,
    enabled features: ticket redemption, system validation, extended meters, a 40 ms poll
    rate), §7.23 (B5, extended game information)."""

    async def run() -> None:
        machine = GamingMachine("T1", 1, _Backend())
        games = Message(1, 0x51, bytes([1, 0x51]))
        assert await machine.answer(games, 0.0) == with_crc(bytes([1, 0x51, 0x00, 0x00]))
        a0 = Message(1, 0xA0, with_crc(bytes([1, 0xA0, 0x00, 0x00])))
        reply = await machine.answer(a0, 0.0)
        assert reply == with_crc(bytes([1, 0xA0, 0x00, 0x00, 0xC0, 0x0D, 0x01, 0x00]))
        assert reply[4] & 0x80 and (reply[4] >> 5) & 0b11 == 0b10  # redemption; system
        for game in (0x01, 0x02):
            other = Message(1, 0xA0, with_crc(bytes([1, 0xA0, 0x00, game])))
            assert await machine.answer(other, 0.0) is None
            meters = with_crc(bytes([1, 0x2F, 3, 0x00, game, 0x00]))
            assert await machine.answer(Message(1, 0x2F, meters), 0.0) is None
        b5 = await machine.answer(Message(1, 0xB5, with_crc(bytes([1, 0xB5, 0, 0]))), 0.0)
        assert b5 is not None and crc16(b5) == 0 and b5[2] == len(b5) - 5
        body = b5[3:-2]
        assert body[:2] == b"\x00\x00" and body[9] == len(b"tablejack blackjack")
        assert body[10:29] == b"tablejack blackjack"
        assert body[-2:] == b"\x01\x01"  # one player denomination: $0.01

    asyncio.run(run())


def test_605a5a_real_time_event_reporting_is_unsupported_and_events_stay_bytes() -> None:
    """SAS 6.02 §4.4: a long poll the machine does not support is ignored, not NACKed — 0E
    (real-time event reporting, §12) gets no answer; the general poll still answers one
    exception byte, and 48 the last bill (§7.11: country 37, denomination code, its meter)."""

    async def run() -> None:
        machine = GamingMachine("T1", 3, _Backend())
        on = Message(3, 0x0E, with_crc(bytes([3, 0x0E, 0x01])))
        off = Message(3, 0x0E, with_crc(bytes([3, 0x0E, 0x00])))
        assert await machine.answer(on, 0.0) is None
        assert await machine.answer(off, 0.0) is None
        last = Message(3, 0x48, bytes([3, 0x48]))
        assert await machine.answer(last, 0.0) == with_crc(bytes([3, 0x48]) + bytes(6))
        machine.report_bill(2000, 7)
        assert await machine.answer(Message(3, None), 0.0) == b"\x4a"
        reply = await machine.answer(last, 0.0)
        assert reply == with_crc(bytes.fromhex("0348" + "37" + "04" + "00000007"))  # $20: 04

    asyncio.run(run())


def test_605a5a_bills_reported_by_denomination_without_real_time_reporting() -> None:
    """SAS 6.02 §2.2 (general poll exceptions): 47 $1, 48 $5, 49 $10, 4A $20, 4B $50, 4C $100,
    4D $2, 4E $500, 50 $200; any other bill 4F."""
    machine = GamingMachine("T1", 1, _Backend())
    bills = (100, 500, 1000, 2000, 5000, 10_000, 200, 50_000, 20_000, 100_000, 2500)
    for amount in bills:
        machine.report_bill(amount)
    codes = [machine.next_exception() for _ in bills]
    assert codes == [0x47, 0x48, 0x49, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x50, 0x4F, 0x4F]


def test_605a5a_implied_ack_and_nack_of_general_and_long_polls() -> None:
    """SAS §3.1: the same general poll again is the implied NACK (the same exception is sent
    again); a long poll, or any poll to another address, is the implied ACK (the next one)."""

    async def run() -> None:
        machine = GamingMachine("T1", 1, _Backend())
        for event in ("door_open", "door_closed", "game_start"):
            machine.report(event)
        poll = Message(1, None)
        assert await machine.answer(poll, 0.0) == b"\x11"
        assert await machine.answer(poll, 0.0) == b"\x11"  # the host's retry
        machine.heard_other()  # 80 or 82 …: acknowledged
        assert await machine.answer(poll, 0.0) == b"\x12"
        assert await machine.answer(Message(1, 0x1F, bytes([1, 0x1F])), 0.0) is not None
        assert await machine.answer(poll, 0.0) == b"\x7e"  # the long poll acknowledged 12
        machine.heard_other()
        assert await machine.answer(poll, 0.0) == b"\x00"
        assert await machine.answer(poll, 0.0) == b"\x00"

    asyncio.run(run())


def test_605a5a_local_date_and_time_and_the_hosts_clock() -> None:
    """7E answers the floor's local date and time (MMDDYYYY HHMMSS, BCD) in its time zone; 7F
    sets the machine's SAS clock (an offset: the floor clock is not changed); a date that is
    none is NACKed."""
    import zoneinfo

    async def run() -> None:
        backend = _Backend()  # 2025-11-30 04:00:00 UTC
        machine = GamingMachine("T1", 1, backend)
        read = Message(1, 0x7E, bytes([1, 0x7E]))
        assert await machine.answer(read, 0.0) == with_crc(bytes.fromhex("017e11302025040000"))
        machine.zone = zoneinfo.ZoneInfo("America/New_York")  # UTC−5 in November
        assert await machine.answer(read, 0.0) == with_crc(bytes.fromhex("017e11292025230000"))
        set_to = with_crc(bytes.fromhex("017f" + "11292025" + "231500"))
        assert await machine.answer(Message(1, 0x7F, set_to), 0.0) == b"\x01"
        assert machine.clock_offset_us == 15 * 60 * 1_000_000
        assert await machine.answer(read, 0.0) == with_crc(bytes.fromhex("017e11292025231500"))
        assert backend.now_us() == 1_764_475_200_000_000  # the floor clock did not move
        bad = with_crc(bytes.fromhex("017f" + "13402025" + "250000"))
        assert await machine.answer(Message(1, 0x7F, bad), 0.0) == b"\x81"

    asyncio.run(run())


def test_605a5a_a_handpay_pending_is_reported_again_until_reset() -> None:
    """SAS 6.02 §7.8.1: 51 again every 15 s while the handpay is pending and the host has not
    read it (1B: level 80, cancelled credits); §7.9: 94 resets it (00, then 52), 02 when none
    is pending."""

    class Resets(_Backend):
        async def reset_handpay(self) -> int:
            return 0

    async def run() -> None:
        machine = GamingMachine("T1", 1, Resets())
        machine.handpay = 2000
        machine.report("handpay_pending")
        assert machine.next_exception(100.0) == 0x51
        assert machine.next_exception(110.0) == 0x00
        assert machine.next_exception(115.0) == 0x51  # 15 s on, still pending, 1B not read
        info = await machine.answer(Message(1, 0x1B, bytes([1, 0x1B])), 0.0)
        assert info is not None and from_bcd(info[4:9]) == 2000 and info[2:4] == b"\x00\x80"
        assert machine.next_exception(131.0) == 0x00  # read: not again (§7.8.1)
        reset = Message(1, 0x94, with_crc(bytes([1, 0x94])))
        assert await machine.answer(reset, 0.0) == with_crc(bytes([1, 0x94, 0x00]))
        assert machine.handpay == 0
        machine.heard_other()
        assert machine.next_exception(200.0) == 0x52
        assert machine.next_exception(300.0) == 0x00
        assert await machine.answer(reset, 1.0) == with_crc(bytes([1, 0x94, 0x02]))

    asyncio.run(run())
