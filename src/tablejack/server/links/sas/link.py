"""The SAS link of the floor: a gaming machine per configured terminal
(:class:`~tablejack.server.links.sas.machine.GamingMachine`), on its endpoint, with the
floor's duties behind it:

* **meters** — the terminal's lifetime readings of :func:`tablejack.store.meters_report.readings`
  (the same the floor's ``/api/floor/meters`` shows as ``lifetime``) and the counts of
  :func:`tablejack.store.links.terminal_counts`, kept as running sums
  (:class:`tablejack.store.meters_running.RunningMeters`: each read folds only the ledger rows
  new since the last); one snapshot for every machine, refreshed in the background before it
  is :attr:`SasLink.meter_seconds` old, so a meter long poll is answered from the line's own
  thread without waiting for the database or the event loop;
* **enable and disable** — long polls 01 and 02 lock the terminal with the ``host_disabled``
  tilt, and lift only that tilt (:func:`tablejack.store.links.clear_link_lock`);
* **events** — tilts (door open and closed, any other tilt), games started and ended at the
  terminal's table, bills accepted, handpays pending and reset, tickets printed and inserted,
  power applied at start;
* **link down** — a machine not polled for :data:`LINK_DOWN_SECONDS` has lost its host: with
  the floor setting ``sas_link_required`` (or ``require_link``) the terminal is locked
  (``host_link_lost``) until the host polls again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import logging
import time
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablejack.server.floor.floor import Floor
from tablejack.server.links.interface import Decision, Link, LinkRefusedError
from tablejack.server.links.sas.framing import Message, crc16
from tablejack.server.links.sas.machine import GamingMachine, HostRefusedError
from tablejack.server.links.sas.transport import (
    LOOPBACK,
    SerialLine,
    TcpLine,
    allowed,
    parse_allow,
    parse_endpoint,
)
from tablejack.store import Store
from tablejack.store import links as store_links
from tablejack.store import protections as store_protections
from tablejack.store.meters_running import RunningMeters
from tablejack.store.vouchers import FloorRefusedError, floor_settings, terminals

__all__ = [
    "LINK_DOWN_SECONDS",
    "SasLink",
    "SasTerminal",
    "listens_beyond_loopback",
    "parse_spec",
]

log = logging.getLogger("tablejack.sas")

LINE_RULE = "PA 605a.5(a)"
"""The clause a refused peer's audit entry names: the EWT talks to *the* central system."""
LINK_DOWN_SECONDS = 5.0
"""SAS: a gaming machine not polled for five seconds has lost its host."""
REDEEMED_ELSEWHERE = 0x84
"""LP 71 transfer code: the ticket was already redeemed (the host's word on a ticket)."""
REFUSAL_AUDIT_SECONDS = 60.0
"""A peer refused a TCP line is audited at most once in this time for one reason (every
refusal is logged; the audit entry counts the ones in between)."""
SIGNATURE_SECONDS = 60.0
"""How old the ROM signature computed ahead may be before LP 21 has it computed again."""
HOST_SECONDS = 10.0
"""How long a cash-out or a ticket waits for the host."""
METER_SECONDS = 5.0
"""A meters snapshot older than this is stale: a meter long poll then asks for a new one (and
waits for it up to :attr:`SasLink.meter_wait`); the link refreshes it in the background at
half this age, so it rarely is."""


@dataclass(frozen=True, slots=True)
class SasTerminal:
    """``--sas TERMINAL=ENDPOINT[,address=N][,allow=IP]...``: ``allow``, the addresses (or
    networks) of the machine interface board allowed to hold a TCP endpoint (none given:
    :data:`~tablejack.server.links.sas.transport.LOOPBACK`, this machine only)."""

    terminal: str
    endpoint: str
    address: int = 1
    allow: tuple[str, ...] = ()


def parse_spec(spec: str) -> SasTerminal:
    """A ``--sas`` value.

    >>> parse_spec("A1-EWT1=tcp://127.0.0.1:7001,address=3")
    SasTerminal(terminal='A1-EWT1', endpoint='tcp://127.0.0.1:7001', address=3, allow=())
    >>> parse_spec("A1-EWT1=tcp://0.0.0.0:7001,allow=10.1.2.3,allow=10.9.0.0/16").allow
    ('10.1.2.3', '10.9.0.0/16')
    """
    terminal, sep, rest = spec.partition("=")
    endpoint, *options = rest.split(",")
    address = 1
    allow: list[str] = []
    for option in options:
        key, _, value = option.partition("=")
        if key.strip() == "address" and value.strip().isdigit():
            address = int(value)
        elif key.strip() == "allow" and value.strip():
            allow.append(value.strip())
        else:
            raise ValueError(f"a --sas option is address=N or allow=IP, not {option!r}")
    if not sep or not terminal.strip():
        raise ValueError(f"--sas is TERMINAL=ENDPOINT[,address=N][,allow=IP]..., not {spec!r}")
    if not 1 <= address <= 127:
        raise ValueError(f"a SAS address is 1 to 127, not {address}")
    kind, _ = parse_endpoint(endpoint.strip())
    if allow and kind != "tcp":
        raise ValueError(f"allow= is for a TCP endpoint, not {endpoint.strip()!r}")
    parse_allow(allow)
    return SasTerminal(terminal.strip(), endpoint.strip(), address, tuple(allow))


def listens_beyond_loopback(entry: SasTerminal) -> bool:
    """Does ``entry``'s TCP endpoint listen on an address other than this machine's own?

    >>> listens_beyond_loopback(parse_spec("T=tcp://0.0.0.0:7001"))
    True
    >>> listens_beyond_loopback(parse_spec("T=tcp://127.0.0.1:7001"))
    False
    """
    kind, where = parse_endpoint(entry.endpoint)
    if kind != "tcp":
        return False
    return where[0] != "localhost" and not allowed(where[0], LOOPBACK)


class _MeterReader:
    """Reads the meters in a process of its own, with its own connection to the database and
    its own running meters (:class:`~tablejack.store.meters_running.RunningMeters`, kept from
    one read to the next): the first read folds the whole ledger, and that Python work — in
    this process, even in a thread — would hold the floor's event loop for as long."""

    def __init__(self, url: str) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.url = url
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    async def read(self, terminals: list[str]) -> dict[str, dict[str, Any]]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, _read_in_process, self.url, terminals)

    async def close(self) -> None:
        await asyncio.to_thread(self.pool.shutdown, True, cancel_futures=True)


_IN_PROCESS: dict[str, Any] = {}
"""The reader process's event loop and running meters, kept between reads."""


def _read_in_process(url: str, terminals: list[str]) -> dict[str, dict[str, Any]]:
    """The meters, read in the reader's process."""
    loop = _IN_PROCESS.get("loop")
    if loop is None:
        loop = _IN_PROCESS["loop"] = asyncio.new_event_loop()
    running = _IN_PROCESS.get(url)
    if running is None:
        store = loop.run_until_complete(Store.open(url, migrate=False, pool_size=1))
        running = _IN_PROCESS[url] = RunningMeters(store)
    result: dict[str, dict[str, Any]] = loop.run_until_complete(running.terminal_meters(terminals))
    return result


class _Backend:
    """What one terminal's gaming machine asks of the floor."""

    def __init__(self, link: SasLink, terminal: str) -> None:
        self.link, self.terminal = link, terminal

    async def meters(self) -> Mapping[str, Any]:
        return await self.link.meters(self.terminal)

    def meters_now(self) -> Mapping[str, Any] | None:
        return self.link.meters_now(self.terminal)

    async def set_enabled(self, enabled: bool) -> bool:
        return await self.link.set_enabled(self.terminal, enabled)

    async def rom_signature(self, seed: int) -> int:
        return await self.link.rom_signature(seed)

    def rom_signature_now(self, seed: int) -> int | None:
        return self.link.rom_signature_now(seed)

    def enable_later(self, enabled: bool) -> bool | None:
        loop = self.link.loop
        if loop is None:
            return None
        asyncio.run_coroutine_threadsafe(self.link.set_enabled(self.terminal, enabled), loop)
        return True

    async def reset_handpay(self) -> int:
        return await self.link.reset_handpay(self.terminal)

    def reset_handpay_later(self, amount: int) -> int | None:
        return self.link.reset_handpay_later(self.terminal, amount)

    def now_us(self) -> int:
        return self.link.floor_now_us()


class SasLink(Link):
    """The SAS gaming machines of the floor's configured terminals."""

    def __init__(
        self,
        terminals: Sequence[SasTerminal],
        *,
        require_link: bool | None = None,
        meter_seconds: float = METER_SECONDS,
        meter_wait: float = 0.005,
        host_seconds: float = HOST_SECONDS,
        reader_url: str | None = None,
        link_down_seconds: float = LINK_DOWN_SECONDS,
    ) -> None:
        seen: dict[tuple[str, int], str] = {}
        for entry in terminals:
            key = (entry.endpoint, entry.address)
            if key in seen:
                raise ValueError(
                    f"{entry.terminal} and {seen[key]} share address {entry.address} on "
                    f"{entry.endpoint}"
                )
            seen[key] = entry.terminal
        self.config = list(terminals)
        self.require_link = require_link
        self.meter_seconds = meter_seconds
        self.meter_wait = meter_wait
        self.link_down_seconds = link_down_seconds
        self.reader = None if reader_url is None else _MeterReader(reader_url)
        """``reader_url``: the database, read for the meters in a process of their own
        (``serve``); None: read on the floor's own connection (tests)."""
        self.host_seconds = host_seconds
        self.machines: dict[str, GamingMachine] = {}
        self.lines: list[TcpLine | SerialLine] = []
        self.floor: Floor | None = None
        self.snapshot: dict[str, dict[str, Any]] | None = None
        self.snapshot_at = float("-inf")
        self.running: RunningMeters | None = None
        self.credits: dict[str, int] = {}
        """The credits of the player signed in at each terminal (read in the event loop, for
        the lines' threads)."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._down: dict[str, bool] = {}
        self._games: dict[str, str | None] = {}
        self._locks: dict[str, set[str]] = {}
        self._tables: dict[str, str] = {}
        self._refusals: dict[tuple[str, str, str], tuple[float, int]] = {}
        self._enabling: dict[str, asyncio.Lock] = {}
        self._signature: tuple[int, tuple[int, ...]] | None = None
        self._signature_at = float("-inf")
        self._reports: set[asyncio.Task[None]] = set()
        self.system = "sas"

    # the interface

    @property
    def protocol(self) -> str:
        return "sas"

    def terminals(self) -> list[str]:
        return sorted({entry.terminal for entry in self.config})

    def serves(self, terminal: str) -> bool:
        return terminal in self.machines

    async def start(self, floor: Floor, *, fds: Mapping[str, int] | None = None) -> None:
        """Open every endpoint (``fds``: an endpoint already open, by name — a
        pseudo-terminal's master side in tests) and start the link's duties."""
        self.floor = floor
        self.loop = asyncio.get_running_loop()
        if self.reader is None:
            self.running = RunningMeters(floor.store)
        by_endpoint: dict[str, dict[int, GamingMachine]] = {}
        allow: dict[str, list[str]] = {}
        for entry in self.config:
            allow.setdefault(entry.endpoint, []).extend(entry.allow)
            machine = GamingMachine(
                entry.terminal, entry.address, _Backend(self, entry.terminal), serial=entry.terminal
            )
            machine.last_poll = time.monotonic()
            self.machines[entry.terminal] = machine
            by_endpoint.setdefault(entry.endpoint, {})[entry.address] = machine
            machine.report("power_applied")
        await self.refresh_meters()  # the first snapshot, before any host is answered
        await self.prepare_signature()  # LP 21 answered in the line's thread
        for endpoint, machines in by_endpoint.items():
            respond, now = self._responder(machines)
            line: TcpLine | SerialLine
            if fds is not None and endpoint in fds:
                line = SerialLine(None, respond, now, fd=fds[endpoint])
            else:
                kind, where = parse_endpoint(endpoint)
                if kind == "tcp":
                    line = TcpLine(
                        where[0],
                        where[1],
                        respond,
                        now,
                        allow=parse_allow(allow[endpoint]) if allow[endpoint] else LOOPBACK,
                        silent_seconds=self.link_down_seconds,
                        refused=self._refused_by(endpoint, list(machines.values())),
                    )
                else:
                    line = SerialLine(where, respond, now)
            line.addresses = frozenset(machines)
            await line.start()
            self.lines.append(line)
        await self._load_state()
        self._watch = asyncio.get_running_loop().create_task(self._watching())

    def _refused_by(self, endpoint: str, machines: list[GamingMachine]) -> Any:
        """What a TCP line calls (in its thread) when it refuses a peer: the refusal audited
        in the event loop, once per :data:`REFUSAL_AUDIT_SECONDS` for a peer and a reason."""
        terminals = " ".join(machine.terminal for machine in machines)

        def refused(peer: str, why: str) -> None:
            loop = self.loop
            key = (endpoint, peer, why.split(" by ", maxsplit=1)[0])
            at = time.monotonic()
            seen, count = self._refusals.get(key, (float("-inf"), 0))
            if at - seen < REFUSAL_AUDIT_SECONDS:
                self._refusals[key] = (seen, count + 1)
                return
            self._refusals[key] = (at, 0)
            if loop is None or self.floor is None:
                return
            more = f" ({count} more since the last entry)" if count else ""
            message = f"SAS line {endpoint} refused the peer {peer}: {why}{more}"
            asyncio.run_coroutine_threadsafe(
                self.floor.store.audit(
                    "sas_refused", message, actor=f"peer:{peer}", terminal=terminals, rule=LINE_RULE
                ),
                loop,
            )

        return refused

    def _responder(self, machines: dict[int, GamingMachine]) -> tuple[Any, Any]:
        def heard(message: Message) -> GamingMachine | None:
            """Every machine on the line hears every message: one to another address (or to
            all) is the implied ACK of its own last answer (SAS §3.1); a global date and time
            (``00 7F``) sets every clock. The machine the message is for, or None."""
            for other in machines.values():
                if other.address != message.address:
                    other.heard_other()
                    if message.address == 0 and message.command == 0x7F:
                        with contextlib.suppress(ValueError):
                            other.set_date_time(message.data)
            return machines.get(message.address)

        async def respond(message: Message) -> bytes | None:
            machine = heard(message)
            if machine is None:
                return None  # another machine's message on a shared line
            return await machine.answer(message, time.monotonic())

        def now(message: Message) -> tuple[bool, bytes | None]:  # in the line's thread
            machine = heard(message)  # again in respond, if it goes there: no matter
            if machine is None:
                return True, None  # another machine's message on a shared line
            return machine.answer_now(message, time.monotonic())

        return respond, now

    async def stop(self) -> None:
        for task in (self._watch, self._refresh, *self._reports):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        for line in self.lines:
            await line.stop()
        if self.reader is not None:
            await self.reader.close()

    def _machine(self, terminal: str) -> GamingMachine:
        machine = self.machines.get(terminal)
        if machine is None:
            raise LinkRefusedError(f"Terminal {terminal} has no SAS link.")
        if time.monotonic() - machine.last_poll > self.link_down_seconds:
            raise LinkRefusedError(f"The SAS host of terminal {terminal} is not polling")
        return machine

    async def validate_cashout(self, terminal: str, amount: int) -> tuple[str, str]:
        machine = self._machine(terminal)
        try:
            code = await machine.validate_cashout(amount, self.host_seconds)
        except HostRefusedError as error:
            raise LinkRefusedError(error.message) from None
        return code, f"{self.system}:{code[:2]}"

    def ticket_printed(self, terminal: str, code: str, amount: int, number: str) -> None:
        machine = self.machines[terminal]
        machine.ticket_printed(code, amount, self.floor_now_us(), int(number or 0), report=False)
        self._after_meters(lambda: machine.report("ticket_printed"))

    async def ticket_inserted(self, terminal: str, code: str) -> Decision:
        machine = self._machine(terminal)
        if len(code) != 18 or not code.isdigit():
            raise LinkRefusedError(f"{code[:24]!r} is no 18-digit ticket")
        try:
            _, amount = await machine.insert_ticket(code, self.host_seconds)
        except HostRefusedError as error:
            elsewhere = f"{self.system}:{code[:2]}" if error.code == REDEEMED_ELSEWHERE else None
            raise LinkRefusedError(error.message, redeemed_elsewhere=elsewhere) from None
        return Decision(amount, f"{self.system}:{code[:2]}")

    def ticket_finished(self, terminal: str, amount: int | None) -> None:
        machine = self.machines[terminal]
        if machine.ticket is None:
            return
        machine.ticket_done(0x00 if amount is not None else 0x80, amount or 0, report=False)
        self._after_meters(lambda: machine.report("ticket_complete"))

    def event(self, terminal: str, name: str, amount: int = 0) -> None:
        """A significant event at ``terminal``; one that moved money (a bill, a hand pay) is
        reported once the meters it changed are in the snapshot the meter long polls read
        (:meth:`_after_meters`)."""
        machine = self.machines.get(terminal)
        if machine is None:
            return
        if name == "handpay_pending":
            machine.handpay = amount
            machine.report("handpay_pending")
        elif name == "handpay_paid":
            if machine.handpay:
                machine.handpay = 0
                self._after_meters(lambda: machine.report("handpay_reset"))
            self._spawn(self._lift_handpay(terminal, "paid by an attendant"))
        elif name == "bill_accepted":

            def report() -> None:
                bills = self._snapshot_of(terminal).get("bills", {})
                machine.report_bill(amount, int(bills.get(amount, 0)))

            self._after_meters(report)
        else:
            machine.report(name)

    async def handpay(self, terminal: str, amount: int) -> None:
        """A cash-out of ``amount`` cents above the voucher limit waits for an attendant: the
        terminal is locked (``handpay_pending``: no wager, no bill) until the handpay is paid
        at the cage or reset by the host (long poll 94), and the host is told (51, 1B)."""
        machine = self.machines.get(terminal)
        floor = self.floor
        if machine is None or floor is None:
            return
        locks = await store_protections.open_locks(floor.store)
        if not any(lock["code"] == "handpay_pending" for lock in locks.get(terminal, [])):
            await store_protections.lock_terminal(
                floor.store,
                terminal,
                "handpay_pending",
                f"handpay pending: ${amount // 100:,}.{amount % 100:02d} to be paid by an "
                "attendant (SAS exception 51)",
                by=f"sas:{machine.address}",
                at_us=floor.now_us(),
            )
            await floor.locks_changed()  # the guard reloads: no wager while it is pending
        machine.handpay = amount
        machine.report("handpay_pending")

    async def reset_handpay(self, terminal: str) -> int:
        """Long poll 94: the handpay pending is reset — its lock lifted (the credit stays the
        player's: nothing moves); 0x00, or 0x01 when the store refused."""
        return 0x00 if await self._lift_handpay(terminal, "reset by the SAS host") else 0x01

    def reset_handpay_later(self, terminal: str, amount: int) -> int | None:
        """Long poll 94 from a line's thread: 00 (reset) now, the handpay's lock lifted after
        in the event loop; a store that refuses to lift it leaves the handpay of ``amount``
        cents pending (51 again). None when there is no event loop to do it (it answers)."""
        loop = self.loop
        if loop is None or self.floor is None:
            return None
        loop.call_soon_threadsafe(lambda: self._spawn(self._reset_after(terminal, amount)))
        return 0x00

    async def _reset_after(self, terminal: str, amount: int) -> None:
        if await self.reset_handpay(terminal) == 0x00:
            return
        machine = self.machines[terminal]
        if not machine.handpay:  # the lock stays: so does the handpay, for the host to see
            machine.handpay = amount
            machine.report("handpay_pending")

    async def _lift_handpay(self, terminal: str, why: str) -> bool:
        floor = self.floor
        assert floor is not None
        try:
            cleared = await store_links.clear_link_lock(
                floor.store,
                terminal,
                "handpay_pending",
                by=f"sas:{self.machines[terminal].address}",
                at_us=floor.now_us(),
            )
        except FloorRefusedError:
            log.exception("SAS: the handpay of %s (%s)", terminal, why)
            return False
        if cleared is not None:
            await floor.locks_changed()
        return True

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    def _after_meters(self, report: Any) -> None:
        """Run ``report`` (an exception queued) once a meters snapshot read after this moment
        is the one the meter long polls answer from: a host that reads the meters on the
        event (SAS hosts read them on 4F, 3D, 7F …) finds them moved."""
        since = time.monotonic()

        async def reported() -> None:
            try:
                while self.snapshot_at < since:
                    await self._refreshing()
            except Exception:  # the meters could not be read: the event is reported anyway
                log.exception("SAS: the meters before an event")
            report()

        self._spawn(reported())

    # the floor's duties

    def floor_now_us(self) -> int:
        return self.floor.now_us() if self.floor is not None else int(time.time() * 1e6)

    async def meters(self, terminal: str) -> Mapping[str, Any]:
        """``terminal``'s meters, with the credits of the player signed in at it (in the event
        loop). A snapshot older than :attr:`meter_seconds` is read again (one read for every
        machine); the answer waits for it up to :attr:`meter_wait` seconds, then uses the
        snapshot it has (the long poll is answered in SAS's reply window; the next one has
        the new readings)."""
        if time.monotonic() - self.snapshot_at > self.meter_seconds:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._refreshing()), self.meter_wait)
        return self._snapshot_of(terminal)

    def meters_now(self, terminal: str) -> Mapping[str, Any] | None:
        """:meth:`meters`, from a line's thread: a stale snapshot is refreshed in the event
        loop, waited for up to :attr:`meter_wait` (the background refresh keeps it fresh, so
        this is rare)."""
        loop = self.loop
        if loop is None or self.snapshot is None:
            return None
        if time.monotonic() - self.snapshot_at > self.meter_seconds:
            future = asyncio.run_coroutine_threadsafe(self._refreshing(), loop)
            with contextlib.suppress(concurrent.futures.TimeoutError):
                future.result(self.meter_wait)
        return self._snapshot_of(terminal)

    def _snapshot_of(self, terminal: str) -> dict[str, Any]:
        snapshot = self.snapshot
        assert snapshot is not None
        meters = dict(snapshot.get(terminal, {}))
        meters["current_credits"] = self.credits.get(terminal, 0)
        return meters

    async def _refreshing(self) -> None:
        """Wait for the refresh under way, or start one."""
        if self._refresh is None or self._refresh.done():
            self._refresh = asyncio.get_running_loop().create_task(self.refresh_meters())
        await asyncio.shield(self._refresh)

    async def refresh_meters(self) -> None:
        """Read every terminal's meters now (the floor's readings and the link's counts, the
        new ledger rows folded into the running sums), and the credits at each terminal."""
        assert self.floor is not None
        at = time.monotonic()
        terminals = list(self.machines)
        self.credits = {terminal: self._credits(terminal) for terminal in terminals}
        if self.reader is not None:
            snapshot = await self.reader.read(terminals)
        else:
            assert self.running is not None
            snapshot = await self.running.terminal_meters(terminals)
        self.snapshot, self.snapshot_at = snapshot, at

    def _credits(self, terminal: str) -> int:
        floor = self.floor
        if floor is None:
            return 0
        for connection in floor.connections:
            if connection.terminal == terminal and connection.role == "player":
                return max(0, floor.balances.get(connection.subject, 0))
        return 0

    async def set_enabled(self, terminal: str, enabled: bool) -> bool:
        """Long polls 01/02: lock the terminal out (``host_disabled``), or lift that lock
        alone."""
        floor = self.floor
        assert floor is not None
        # answered ahead in the line's thread, applied here in the order the host sent them
        async with self._enabling.setdefault(terminal, asyncio.Lock()):
            return await self._set_enabled(floor, terminal, enabled)

    async def _set_enabled(self, floor: Floor, terminal: str, enabled: bool) -> bool:
        by = f"sas:{self.machines[terminal].address}"
        try:
            if enabled:
                await store_links.clear_link_lock(
                    floor.store, terminal, "host_disabled", by=by, at_us=floor.now_us()
                )
            else:
                locks = await store_protections.open_locks(floor.store)
                if not any(lock["code"] == "host_disabled" for lock in locks.get(terminal, [])):
                    await store_protections.lock_terminal(
                        floor.store,
                        terminal,
                        "host_disabled",
                        "disabled by the SAS host (long poll 01)",
                        by=by,
                        at_us=floor.now_us(),
                    )
        except FloorRefusedError:
            log.exception("SAS: %s of %s", "enable" if enabled else "disable", terminal)
            return False
        await floor.locks_changed()  # the guard reloads; the consoles show the lock
        return True

    async def rom_signature(self, seed: int) -> int:
        """Long poll 21: the CRC-16, seeded, of the release manifest the installed files give
        (what ``tablejack verify-install`` checks): a changed file changes the signature."""
        from tablejack.server.support.integrity import build_manifest, canonical_json

        data = await asyncio.to_thread(lambda: canonical_json(build_manifest()))
        return crc16(data, seed)

    async def prepare_signature(self) -> None:
        """Compute the ROM signature ahead, for every seed at once: the CRC is affine in its
        initial value, so ``crc(data, seed) = crc(data, 0) ^ crc(zeros, seed)`` and the second
        is the XOR of the basis ``crc(zeros, 1 << i)`` over the seed's bits."""
        from tablejack.server.support.integrity import build_manifest, canonical_json

        def compute() -> tuple[int, tuple[int, ...]]:
            data = canonical_json(build_manifest())
            zeros = bytes(len(data))
            return crc16(data, 0), tuple(crc16(zeros, 1 << bit) for bit in range(16))

        self._signature = await asyncio.to_thread(compute)
        self._signature_at = time.monotonic()

    def rom_signature_now(self, seed: int) -> int | None:
        """Long poll 21 from a line's thread: the signature computed ahead (:meth:`prepare_signature`),
        computed again in the background when it is older than :data:`SIGNATURE_SECONDS` (a
        changed file shows within that time)."""
        prepared = self._signature
        if prepared is None:
            return None
        if time.monotonic() - self._signature_at > SIGNATURE_SECONDS and self.loop is not None:
            self._signature_at = time.monotonic()  # one refresh at a time
            asyncio.run_coroutine_threadsafe(self.prepare_signature(), self.loop)
        base, basis = prepared
        for bit in range(16):
            if seed >> bit & 1:
                base ^= basis[bit]
        return base

    async def _load_state(self) -> None:
        assert self.floor is not None
        locks = await store_protections.open_locks(self.floor.store)
        for terminal in self.machines:
            self._locks[terminal] = {lock["code"] for lock in locks.get(terminal, [])}
        self._tables = {row["id"]: row["table_id"] for row in await terminals(self.floor.store)}
        await self._zone_step()

    async def _zone_step(self) -> None:
        """The floor's time zone (setting ``sas_time_zone``) for every machine's SAS clock."""
        assert self.floor is not None
        name = str((await floor_settings(self.floor.store)).get("sas_time_zone") or "UTC")
        try:
            zone: dt.tzinfo = zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            zone = dt.UTC
        for machine in self.machines.values():
            machine.zone = zone

    async def _watching(self) -> None:
        """The events the floor does not tell: tilts, games, the host lost."""
        tick = 0
        while True:
            await asyncio.sleep(0.2)
            tick += 1
            try:
                self.credits = {terminal: self._credits(terminal) for terminal in self.machines}
                stale = time.monotonic() - self.snapshot_at > self.meter_seconds / 2
                if stale and (self._refresh is None or self._refresh.done()):
                    self._refresh = asyncio.get_running_loop().create_task(self.refresh_meters())
                self._games_step()
                if tick % 5 == 0:
                    await self._locks_step()
                    await self._link_step()
                    await self._zone_step()
                if tick % 50 == 0:
                    await self._load_tables()
            except asyncio.CancelledError:
                raise
            except Exception:  # a fault reading the floor never ends the link
                log.exception("SAS: watching the floor")

    async def _load_tables(self) -> None:
        assert self.floor is not None
        self._tables = {row["id"]: row["table_id"] for row in await terminals(self.floor.store)}

    def _player(self, terminal: str) -> str | None:
        assert self.floor is not None
        for connection in self.floor.connections:
            if connection.terminal == terminal and connection.role == "player":
                return connection.subject
        return None

    def _games_step(self) -> None:
        assert self.floor is not None
        for terminal, machine in self.machines.items():
            table = self.floor.tables.get(self._tables.get(terminal, ""))
            started = self._games.get(terminal)
            if table is None:
                continue
            round_ = table.round
            if started is not None and (
                table.round_id != started or round_ is None or round_.is_complete
            ):
                self._after_meters(lambda machine=machine: machine.report("game_end"))
                self._games[terminal] = started = None
            player = self._player(terminal)
            if (
                started is None
                and player is not None
                and round_ is not None
                and not round_.is_complete
                and table.in_play(player) > 0
            ):
                self._after_meters(lambda machine=machine: machine.report("game_start"))
                self._games[terminal] = table.round_id

    async def _locks_step(self) -> None:
        assert self.floor is not None
        locks = await store_protections.open_locks(self.floor.store)
        for terminal, machine in self.machines.items():
            now = {lock["code"] for lock in locks.get(terminal, [])}
            before = self._locks.get(terminal, set())
            for code in sorted(now - before):
                if code == "door_open":
                    machine.report("door_open")
                elif code == "printer":
                    machine.report("printer_error")
                elif code not in store_links.LINK_LOCKS:
                    machine.report("tilt")
            if "door_open" in before - now:
                machine.report("door_closed")
            self._locks[terminal] = now

    async def _link_step(self) -> None:
        floor = self.floor
        assert floor is not None
        for terminal, machine in self.machines.items():
            down = time.monotonic() - machine.last_poll > self.link_down_seconds
            if down == self._down.get(terminal, False):
                continue
            self._down[terminal] = down
            required = self.require_link
            if required is None:
                required = bool((await floor_settings(floor.store))["sas_link_required"])
            if not required:
                continue
            by = f"sas:{machine.address}"
            if down:
                await store_protections.lock_terminal(
                    floor.store,
                    terminal,
                    "host_link_lost",
                    f"no SAS poll for {self.link_down_seconds:g} s",
                    by=by,
                    at_us=floor.now_us(),
                )
            else:
                await store_links.clear_link_lock(
                    floor.store, terminal, "host_link_lost", by=by, at_us=floor.now_us()
                )
            await floor.locks_changed()  # the guard reloads; the consoles show the lock
