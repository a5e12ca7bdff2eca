"""SAS framing, CRC and the gaming machine's answers to bad input (PA 605a.5(a): the link to
the central system): properties of the framer over every long poll's length, garbage, partial
and interleaved bytes; a bad message is ignored and the next good one answered."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
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


def test_605a5a_crc_is_kermit_as_sas_sends_it() -> None:
    assert crc16(b"123456789") == 0x2189  # the CRC-16/KERMIT check value
    # sas-comm-py's CRC (a host library the project did not write) gives the same bytes
    message = bytes([0x01, 0x2F, 0x05, 0x00, 0x00, 0x00, 0x01, 0x05])
    ours = with_crc(message)[-2:]
    assert f"{KERMIT(message):04x}" == ours.hex()


@given(st.binary(max_size=300))
def test_605a5a_crc_of_a_message_with_its_crc_is_zero_and_any_flip_is_caught(data: bytes) -> None:
    framed = with_crc(data)
    assert crc16(framed) == 0
    assert f"{KERMIT(data):04x}" == framed[-2:].hex()
    for index in range(len(framed)):
        flipped = bytearray(framed)
        flipped[index] ^= 0x01
        assert crc16(bytes(flipped)) != 0


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


@given(addresses, commands, st.binary(max_size=255))
def test_605a5a_every_long_poll_is_framed_by_its_length(
    address: int, command: int, data: bytes
) -> None:
    raw = long_poll(address, command, data)
    framer = Framer()
    found = list(framer.feed(raw))
    assert found == [Message(address, command, raw)]
    assert framer.bad == 0


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
        return 1

    def now_us(self) -> int:
        return 1_764_475_200_000_000


@settings(max_examples=200)
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
        got = [(await machine.answer(poll, 0.0)) for _ in range(4)]
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


@settings(max_examples=300)
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
