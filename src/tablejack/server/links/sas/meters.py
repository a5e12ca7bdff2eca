"""The meters of a SAS gaming machine: the SAS meter codes and the long polls that read
them (``0F``–``17``, ``1A``, ``1C``, ``1E``, ``20``, ``2D``, ``2F``, ``31``–``3C``, ``46``,
``6F``, ``AF``), answered from a terminal's readings alone — pure, no I/O, no waiting, so a
line may answer them from its own thread (:meth:`GamingMachine.answer_now
<tablejack.server.links.sas.machine.GamingMachine.answer_now>`).

The mapping of every meter code is in docs/sas.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablejack.server.links.sas.framing import bcd, from_bcd, with_crc

__all__ = [
    "BILL_POLLS",
    "GROUPS",
    "METER_CODES",
    "METER_POLLS",
    "SINGLE_METERS",
    "meter_poll",
    "meter_value",
]

METER_CODES: dict[int, tuple[str, int]] = {
    0x00: ("coin_in", 4),  # total coin in (credits wagered, less those refunded by a void)
    0x01: ("coin_out", 4),  # total coin out
    0x02: ("jackpots", 4),  # total jackpot (attendant-paid jackpots)
    0x03: ("cancelled_credits", 4),  # total hand-paid cancelled credits
    0x04: ("all_cancelled", 4),  # total cancelled credits (hand paid and ticketed)
    0x05: ("games_played", 4),
    0x06: ("games_won", 4),
    0x07: ("games_lost", 4),
    0x0B: ("bills_in", 4),  # total credits from bills accepted
    0x0C: ("current_credits", 4),
    0x0D: ("vouchers_in", 5),  # total SAS cashable ticket in (cents)
    0x0E: ("vouchers_out", 5),  # total SAS cashable ticket out (cents)
    0x11: ("vouchers_in_count", 4),  # total SAS cashable ticket in, quantity
    0x12: ("vouchers_out_count", 4),  # total SAS cashable ticket out, quantity
    0x15: ("vouchers_in", 4),  # total ticket in (credits)
    0x16: ("vouchers_out", 4),  # total ticket out (credits)
    0x1F: ("jackpots", 4),  # total attendant-paid paytable win
    0x23: ("hand_paid", 4),  # total hand-paid credits
    0x24: ("drop", 4),  # total drop: bills and tickets in
    0x40: ("bills:100", 4),  # number of $1 bills accepted
    0x41: ("bills:200", 4),
    0x42: ("bills:500", 4),
    0x43: ("bills:1000", 4),
    0x44: ("bills:2000", 4),
    0x45: ("bills:2500", 4),
    0x46: ("bills:5000", 4),
    0x47: ("bills:10000", 4),
    0x48: ("bills:20000", 4),
    0x49: ("bills:25000", 4),
    0x4A: ("bills:50000", 4),
    0x4B: ("bills:100000", 4),
}
"""The meters this gaming machine reports by SAS meter code (long polls 2F, 6F, AF): the
floor's meter each one is and its size in BCD bytes. The accounting denomination is $0.01, so
a credit is a cent."""

BILL_POLLS = {
    0x31: 100,
    0x32: 200,
    0x33: 500,
    0x34: 1000,
    0x35: 2000,
    0x36: 5000,
    0x37: 10000,
    0x38: 50000,
    0x39: 100000,
    0x3A: 20000,
    0x3B: 2500,
    0x3C: 200000,
}
"""Long polls 31–3C: the number of bills of one denomination (cents) accepted."""

SINGLE_METERS = {
    0x10: "all_cancelled",
    0x11: "coin_in",
    0x12: "coin_out",
    0x13: "drop",
    0x14: "jackpots",
    0x15: "games_played",
    0x16: "games_won",
    0x17: "games_lost",
    0x1A: "current_credits",
    0x46: "bills_in",
}
"""The long polls that answer one meter (4 BCD bytes)."""

GROUPS = {
    0x0F: ("all_cancelled", "coin_in", "coin_out", "drop", "jackpots", "games_played"),
    0x1C: (
        "coin_in",
        "coin_out",
        "drop",
        "jackpots",
        "games_played",
        "games_won",
        "door_opens",
        "power_resets",
    ),
    0x1E: ("bills:100", "bills:500", "bills:1000", "bills:2000", "bills:5000", "bills:10000"),
}
"""The long polls that answer a group of meters (4 BCD bytes each, in this order)."""


def meter_value(meters: Mapping[str, Any], name: str) -> int:
    """One meter of a terminal's readings (the floor's meters and the counts of
    :func:`tablejack.store.link_meters.terminal_counts`), those SAS adds made of them."""
    get = meters.get
    if name.startswith("bills:"):
        return int(get("bills", {}).get(int(name[6:]), 0))
    derived = {
        # a voided round's wager was refunded: SAS's coin in counts wagers not refunded, so
        # coin in − coin out moves by what was won or lost (0 for a void; docs/sas.md)
        "coin_in": lambda: int(get("coin_in", 0)) - int(get("voided", 0)),
        "all_cancelled": lambda: int(get("cancelled_credits", 0)) + int(get("vouchers_out", 0)),
        "games_lost": lambda: int(get("games_played", 0)) - int(get("games_won", 0)),
        "hand_paid": lambda: int(get("jackpots", 0)) + int(get("cancelled_credits", 0)),
        "drop": lambda: int(get("bills_in", 0)) + int(get("vouchers_in", 0)),
    }
    if name in derived:
        return max(0, derived[name]())
    return max(0, int(get(name, 0)))


def _reply(address: int, command: int, body: bytes) -> bytes:
    return with_crc(bytes([address, command]) + body)


def _variable(address: int, command: int, body: bytes) -> bytes:
    return with_crc(bytes([address, command, len(body)]) + body)


def _selected(address: int, data: bytes, meters: Mapping[str, Any]) -> bytes | None:
    if from_bcd(data[:2]) != 0:
        return None  # game 0 (the machine) only: no multi-game extensions (SAS 6.02 §7.6.3)
    body = bytearray(data[:2])
    for code in data[2:]:
        if code in METER_CODES:
            name, size = METER_CODES[code]
            body += bytes([code]) + bcd(meter_value(meters, name), size)
    return _variable(address, 0x2F, bytes(body))


def _extended(address: int, command: int, data: bytes, meters: Mapping[str, Any]) -> bytes | None:
    codes = data[2:]
    if from_bcd(data[:2]) != 0 or len(codes) % 2:
        return None
    body = bytearray(data[:2])
    for index in range(0, len(codes), 2):
        code = int.from_bytes(codes[index : index + 2], "little")
        if code in METER_CODES:
            name, size = METER_CODES[code]
            value = bcd(meter_value(meters, name), size if command == 0x6F else max(size, 5))
            body += codes[index : index + 2] + bytes([len(value)]) + value
        else:
            body += codes[index : index + 2] + b"\x00"  # not supported: size 0
    return _variable(address, command, bytes(body))


def meter_poll(address: int, command: int, data: bytes, meters: Mapping[str, Any]) -> bytes | None:
    """The answer of the machine at ``address`` to meter long poll ``command`` (one of
    :data:`METER_POLLS`) with ``data``, from the terminal's readings ``meters``; None: no
    answer (a game this machine does not have). Data it cannot have raises ValueError or
    IndexError (the machine ignores the poll)."""
    if command in SINGLE_METERS or command in BILL_POLLS:
        name = SINGLE_METERS.get(command) or f"bills:{BILL_POLLS[command]}"
        return _reply(address, command, bcd(meter_value(meters, name), 4))
    if command in GROUPS:
        body = b"".join(bcd(meter_value(meters, name), 4) for name in GROUPS[command])
        return _reply(address, command, body)
    if command == 0x20:  # total dollar value of bills
        return _reply(address, 0x20, bcd(meter_value(meters, "bills_in") // 100, 4))
    if command == 0x2D:  # hand-paid cancelled credits, game 0 (no multi-game, SAS §7.6.3)
        if from_bcd(data[:2]) != 0:
            return None
        return _reply(address, 0x2D, data[:2] + bcd(meter_value(meters, "cancelled_credits"), 4))
    if command == 0x2F:
        return _selected(address, data, meters)
    return _extended(address, command, data, meters)


METER_POLLS = frozenset({*SINGLE_METERS, *BILL_POLLS, *GROUPS, 0x20, 0x2D, 0x2F, 0x6F, 0xAF})
"""The long polls answered from the meters alone (:func:`meter_poll`)."""
