"""A floor of several processes: each ``tablejack serve`` on one PostgreSQL database runs the
tables it holds the lease of (:mod:`tablejack.store.leases`), takes over those of a process
that stopped renewing its own, and stops serving a table the moment it may no longer write it.

:class:`FloorLeases` renews its leases on a thread of its own and runs two loops on the
process's event loop, each every third of the lease time:

* **The renewal** (:mod:`tablejack.server.floor.renewal`) renews every lease this process holds
  (and its membership of the floor) in one transaction, on its own thread, event loop and
  database connection, so a loop saturated by the terminals' traffic cannot delay it — as long
  as that loop still turns: past ``loop_stall`` seconds without a turn of the main loop it
  renews nothing more, and a process whose loop is stuck loses its tables as a dead one does.
* **The heartbeat** acts on what the renewal found. A lease another process took over was not
  renewed: the table is dropped at once (its clock and automated dealer stopped, its sockets
  closed — the terminals reconnect and reach the new holder). When no renewal has succeeded
  (the database is down or cut off) for as long as a lease lasts, counted from the start of the
  last renewal that succeeded, every table is dropped: past that moment another process may
  hold them, and this one must neither write nor show a stale table. The database refuses its
  writes in any case (the fencing token); this is the process keeping its own terminals honest.
* **The balance** reads the leases and the members alive, and takes expired or unheld tables
  up to the process's share — ``ceil(tables / members alive)``, or ``share`` — starting each
  as a restart does (an open round resumed, or voided and refunded: the table's ``recovery``
  policy). A table left unheld for longer than a lease is taken by any member, over its share,
  so none stays dark. A process above its share while another is below it releases, one turn
  at a time, a table between rounds, which the other then takes: a restarted process gets its
  share back without voiding a round.

A write of a table that the store refuses for its fencing token also drops the table at once
(:attr:`tablejack.server.floor.floor.Floor.fenced`). At shutdown the process releases every lease,
so the others take its tables at their next turn rather than after the lease expires.

A terminal that connects to a process which does not run its table is forwarded to the holder
(:mod:`tablejack.server.socket.proxy`); the floor knows the holder's address from the lease
(:attr:`tablejack.server.floor.floor.Floor.elsewhere`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import random
import secrets
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tablejack.server.floor.floor import LEASE_RULE, TABLE_MOVED, Floor, stored_config
from tablejack.server.floor.renewal import TICK_SECONDS, HeldLeases, LoopWatch, Renewal
from tablejack.server.table import Table, TableConfig
from tablejack.store import Fence, Store
from tablejack.store.leases import FloorView, Leases

__all__ = [
    "LEASE_RULE",
    "FloorLeases",
    "LeaseSettings",
    "SingleProcessError",
    "hold_single_process",
    "lease_options",
    "member_id",
    "save_tables",
]

log = logging.getLogger("tablejack.server")


class SingleProcessError(Exception):
    """A second ``tablejack serve`` on an SQLite file another one serves."""


def hold_single_process(db: str) -> IO[str] | None:
    """SQLite: take the exclusive lock of the database's ``.lock`` file beside it, held until
    the returned file is closed (or the process ends, however it ends: the kernel releases
    it); a second ``serve`` on the same file is refused (:class:`SingleProcessError`). None
    for a database in memory."""
    import fcntl

    from tablejack.store.connect import database_location

    database = database_location(db).database
    if not database or database == ":memory:":
        return None
    handle = Path(f"{database}.lock").open("a+", encoding="utf-8")  # noqa: SIM115 (held)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "a process"
        handle.close()
        raise SingleProcessError(
            f"{database} is served by another tablejack serve ({holder}): an SQLite floor runs "
            "in one process. Stop that one first, or run a floor of several processes on "
            'PostgreSQL (docs/server.md, "A floor of several processes").'
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
    handle.flush()
    return handle


def lease_options(settings: LeaseSettings) -> dict[str, Any]:
    """How a process of a floor opens its store: every connection's transaction that sits idle
    (its process stopped or cut off mid-transaction) is ended by PostgreSQL after a lease time,
    so the locks it holds never keep another process from taking its tables over."""
    timeout = max(1000, int(settings.seconds * 1000))
    return {"settings": {"idle_in_transaction_session_timeout": f"{timeout}ms"}}


def member_id(name: str = "") -> str:
    """A member id unique to this run of this process: its name (the host's by default), the
    process id and a random part."""
    return f"{(name or socket.gethostname())[:64]}:{os.getpid()}:{secrets.token_hex(4)}"


def ended(member: str) -> bool:
    """Is ``member`` a process of this host that has ended? (Its connections are closed, so
    it writes nothing more: its tables need not wait for its leases to expire — a process
    restarted after a crash takes its tables back at once.) False when it may be alive, or
    runs on another host."""
    host, _, rest = member.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname()[:64] or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


@dataclass(frozen=True)
class LeaseSettings:
    """How this process takes part in a floor of several processes."""

    url: str
    """Where the other processes reach this one (``http://host:port``; ``https://`` with TLS)."""
    seconds: float = 5.0
    """The lease time: a process that stops renewing loses its tables this long after its
    last renewal."""
    tables: frozenset[str] | None = None
    """The tables this process may run (None: every table of the store, ``--tables auto``)."""
    share: int | None = None
    """How many tables it takes before it leaves the rest to the others (None: the tables
    divided among the members alive, rounded up)."""
    name: str = ""
    """This process's name on the floor, the start of its member id (:func:`member_id`;
    default: the host's name). The processes named after this host see each other's end at
    once (a process restarted after a crash takes its tables back without waiting for their
    leases to expire)."""
    recover_at_once: int = 8
    """How many of the tables taken are recovered side by side (the rest wait their turn, their
    leases renewed meanwhile): a process that takes hundreds of tables at start-up or from a
    process that died keeps answering its terminals and its heartbeat while it recovers them."""
    loop_stall: float = 30.0
    """How long the process's event loop may go without a turn before the renewal's thread
    stops renewing its leases (seconds): a loop that lags but turns keeps its tables, one stuck
    for longer loses them to the others a lease time later."""


async def save_tables(floor: Floor, configs: Iterable[TableConfig]) -> None:
    """Save the tables of a tables file for the floor, open (as a process alone does at
    start); the floor's leases then decide which process runs each. Two processes starting at
    once may both save a new table: the loser of the race tries again and finds it
    (:meth:`tablejack.store.Store.save_table`)."""
    for config in configs:
        await floor.store.save_table(
            config.id, config.rules.game, config.rules.to_mapping(), config.to_json()
        )
        await floor.store.set_table_status(config.id, "open")


def _stub(row: dict[str, Any], where: str | None) -> dict[str, Any]:
    """A table another process runs, as a list shows it."""
    config = row["config"]
    return {
        "id": row["id"],
        "title": config.get("title") or row["rules"].get("name") or row["id"],
        "game": row["game"],
        "status": row["status"] if where else "moving",
        "source": config.get("source", "virtual"),
        "automated": config.get("automated", False),
        "elsewhere": where or None,
    }


class FloorLeases:
    """The leases of one process's floor (see the module docstring)."""

    def __init__(
        self,
        floor: Floor,
        settings: LeaseSettings,
        store: Store | None = None,
        *,
        renewal_store: Callable[[], Awaitable[Store]] | None = None,
    ) -> None:
        """``store``: the store the balance takes and releases leases on (the floor's by
        default); ``renewal_store`` opens the store of the renewal's thread, on the same database
        (called in that thread's event loop; needed to :meth:`start`)."""
        if not settings.loop_stall > 0:
            raise ValueError(f"loop_stall is a positive number of seconds: {settings.loop_stall}")
        self.floor = floor
        self.settings = settings
        self.leases = Leases(
            store or floor.store, member_id(settings.name), settings.url, settings.seconds
        )
        """The leases, on a store of their own when given one (a takeover never waits for a
        connection the tables' writes hold)."""
        self.interval = settings.seconds / 3
        self.fences = HeldLeases()
        """The leases this process holds, by table (read by the renewal's thread too)."""
        self.view: FloorView | None = None
        """The floor as the last turn of the balance read it."""
        self.watch = LoopWatch(
            min(TICK_SECONDS, self.interval / 2), settings.seconds, settings.loop_stall
        )
        """The main loop's watchdog: its last turn and its lag."""
        self._renewal_store = renewal_store
        self.renewal: Renewal | None = None
        """The renewal's thread, once started."""
        self._started_at = time.monotonic()
        self._taken_at: dict[str, float] = {}
        """When each lease held was asked for (this process's clock): a table taken after
        the last renewal that succeeded counts from its taking."""
        self._wakes: set[asyncio.Task[None]] = set()
        self.dropped: Counter[str] = Counter()
        """Tables dropped, by reason (``taken``, ``fenced``, ``cut off``, ``released``)."""
        self.takeovers = 0
        """Tables taken whose lease another process held before (the metrics)."""
        self.refusals = 0
        """Writes of this process's tables the store refused for their fencing token."""
        self.draining = False
        """Set when the process drains (``server.health``): it takes no table any more and
        hands its own back between rounds."""
        self._tasks: list[asyncio.Task[None]] = []
        self._starting: set[asyncio.Task[None]] = set()
        """The tables being recovered (or waiting for their turn)."""
        self._recovering = asyncio.Semaphore(max(1, settings.recover_at_once))
        """Held by each table while it is recovered (``LeaseSettings.recover_at_once``)."""
        self._dropping: set[str] = set()
        floor.elsewhere = self.elsewhere
        floor.fenced = self.fenced
        floor.member = self.member
        floor.url = settings.url

    @property
    def member(self) -> str:
        """This process's member id."""
        return self.leases.member

    @property
    def renewed_at(self) -> float:
        """When the last renewal that succeeded was sent (this process's monotonic clock)."""
        if self.renewal is None:
            return self._started_at
        return self.renewal.renewed_at

    async def start(self) -> None:
        """Join the floor, start the watchdog and the renewal's thread, take this process's
        share of the tables, start both loops."""
        if self._renewal_store is None:
            raise ValueError("FloorLeases.start needs renewal_store: the renewal's own store")
        self._started_at = time.monotonic()
        await self.leases.join()
        log.warning(
            "floor leases: joined the floor as %s (lease %g s), serving at %s",
            self.member,
            self.settings.seconds,
            self.settings.url,
        )
        # the renewal runs from now: the leases of a first share that takes longer than a
        # lease time to recover (hundreds of tables) do not lapse meanwhile
        self.watch.start()
        self.renewal = Renewal(
            member=self.member,
            url=self.settings.url,
            seconds=self.settings.seconds,
            held=self.fences,
            watch=self.watch,
            open_store=self._renewal_store,
            wake=self._wake,
        )
        self.renewal.start()
        self._tasks = [asyncio.create_task(self._every(self.heartbeat, self._next_heartbeat))]
        await self.balance()
        if self._starting:  # serve once this process's first share is recovered
            await asyncio.wait(list(self._starting))
        self._tasks.append(asyncio.create_task(self._every(self.balance, self._next_balance)))

    async def _every(self, turn: Callable[[], Awaitable[None]], delay: Callable[[], float]) -> None:
        while True:
            await asyncio.sleep(delay())
            try:
                await turn()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("floor leases: a turn failed (tried again)")

    def _next_balance(self) -> float:
        """A third of the lease time, or less: just after the next lease another member holds
        expires (a table whose process died is taken over at once, not up to a turn later)."""
        view = self.view
        if view is None:
            return self.interval
        expiring = [
            lease.expires_us - view.now_us
            for lease in view.leases.values()
            if lease.holder and lease.holder != self.member and lease.live(view.now_us)
        ]
        if not expiring:
            return self.interval
        return max(0.05, min(self.interval, min(expiring) / 1e6 + 0.05))

    async def stop(self) -> None:
        """Stop both loops and the renewal, stop every table and release its lease
        (shutdown)."""
        if self._starting:
            await asyncio.wait(list(self._starting), timeout=10)
        if self.renewal is not None:  # first: it wakes the heartbeat no more
            await self.renewal.stop()
        self.watch.stop()
        for task in [*self._tasks, *self._wakes]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for table_id in list(self.fences):
            fence = self.fences.pop(table_id, None)
            if fence is None:  # dropped meanwhile (a write refused for its token)
                continue
            table = self.floor.tables.pop(table_id, None)
            if table is not None:
                await table.stop()
                self._close(table, "the process serving it stopped")
            with contextlib.suppress(Exception):
                await self.leases.release(fence)
        with contextlib.suppress(Exception):
            await self.leases.leave()

    # -- the heartbeat ----------------------------------------------------------------------

    async def heartbeat(self) -> None:
        """Act on the renewal's findings: drop the tables whose lease was taken over, and
        every table once no renewal has succeeded for a lease time (one taken since the last
        renewal that succeeded counts from its taking)."""
        if self.renewal is not None:
            for table_id, fence in self.renewal.take_lost().items():
                if self.fences.get(table_id) == fence:
                    await self.drop(table_id, "taken")
        now = time.monotonic()
        renewed_at = self.renewed_at
        held = self.fences.snapshot()
        self._taken_at = {t: at for t, at in self._taken_at.items() if t in held}
        stale = [
            table_id
            for table_id in held
            if now - max(renewed_at, self._taken_at.get(table_id, 0.0)) >= self.settings.seconds
        ]
        if stale:
            log.error(
                "floor leases: no renewal for %.1f s: every table stops here", now - renewed_at
            )
            for table_id in stale:
                await self.drop(table_id, "cut off")

    def _next_heartbeat(self) -> float:
        """A third of the lease time, or less: when the first lease held lapses on this
        process's clock without a renewal (a cut-off process stops at that moment, before the
        lease can expire in the database)."""
        held = self.fences.snapshot()
        if not held:
            return self.interval
        renewed_at = self.renewed_at
        lapses = min(max(renewed_at, self._taken_at.get(t, 0.0)) for t in held)
        return max(0.01, min(self.interval, lapses + self.settings.seconds - time.monotonic()))

    def _wake(self) -> None:
        """The renewal found a lease lost: act on it now (on the main loop)."""
        task = asyncio.get_running_loop().create_task(self.heartbeat())
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    def fenced(self, table_id: str) -> None:
        """The store refused a write of ``table_id`` for its fencing token: drop it now."""
        self.refusals += 1
        if table_id in self.fences and table_id not in self._dropping:
            asyncio.get_running_loop().create_task(self.drop(table_id, "fenced"))

    async def drop(self, table_id: str, why: str) -> None:
        """Stop serving a table whose lease is lost: out of the floor at once (no terminal
        reaches it here any more), its sockets closed (they reconnect to the new holder), the
        write in flight let finish — the database refuses it — and its tasks stopped."""
        if table_id in self._dropping:
            return
        self._dropping.add(table_id)
        try:
            self.fences.pop(table_id, None)
            table = self.floor.tables.pop(table_id, None)
            if table is None:
                return
            self.dropped[why] += 1
            log.warning("table %s: lease lost (%s); this process stops serving it", table_id, why)
            self._close(table, "it is run by another process of the floor now")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(table.lock.acquire(), timeout=1.0)
                table.lock.release()
            await table.stop()
        finally:
            self._dropping.discard(table_id)

    def _close(self, table: Table, why: str) -> None:
        for connection in list(table.subscribers):
            connection.push(
                {
                    "type": "error",
                    "id": None,
                    "code": "moved",
                    "rule": LEASE_RULE,
                    "message": f"Table {table.id} moved: {why}. Reconnecting.",
                }
            )
            connection.end(TABLE_MOVED)
        table.subscribers.clear()

    # -- the balance ------------------------------------------------------------------------

    def share(self, view: FloorView, tables: int) -> int:
        """How many tables this process takes before it leaves the rest to the others."""
        if self.settings.share is not None:
            return self.settings.share
        members = {member for member in view.members if not ended(member)} | {self.member}
        return max(1, math.ceil(tables / len(members)))

    async def balance(self) -> None:
        """Take expired and unheld tables up to the share (any table left unheld for longer
        than a lease, over it); above the share while another member is below it, release a
        table between rounds."""
        view = await self.leases.view()
        self.view = view
        rows = await self.floor.store.tables()
        allowed = self.settings.tables
        candidates = [row for row in rows if allowed is None or row["id"] in allowed]
        share = self.share(view, len(rows))
        self.floor.others = {
            str(row["id"]): _stub(row, self.elsewhere(str(row["id"]))) for row in rows
        }
        lease_us = self.leases.lease_us
        free: list[tuple[dict[str, Any], str]] = []
        for row in candidates:
            lease = view.leases.get(row["id"])
            if row["id"] in self.fences:
                continue
            if lease is None or not lease.live(view.now_us):
                free.append((row, ""))
            elif lease.holder != self.member and ended(lease.holder):
                free.append((row, lease.holder))  # its process is gone: no need to wait
        random.shuffle(free)
        if self.draining:  # stopping: the others take this process's tables, not it theirs
            free = []
        taken: list[tuple[dict[str, Any], Fence]] = []
        for row, dead in free:
            lease = view.leases.get(row["id"])
            overdue = lease is None or bool(dead) or lease.expires_us + lease_us < view.now_us
            if len(self.fences) >= share and not overdue:
                continue
            asked_at = time.monotonic()
            fence = await self.leases.acquire(row["id"], dead=dead)
            if fence is not None:
                self._taken_at[str(row["id"])] = asked_at
                self.fences[str(row["id"])] = fence
                taken.append((row, fence))
                if lease is not None and lease.holder and lease.holder != self.member:
                    self.takeovers += 1
        # the tables taken are recovered side by side, ``recover_at_once`` at a time, while
        # the turns go on (the heartbeat renews the leases of those still waiting): a dead
        # process's few tables all come back in about the time one takes, its hundreds in
        # batches that leave the process time to serve the tables it runs already
        for row, fence in taken:
            task = asyncio.create_task(self._take(row, fence))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)
        if not self.draining:
            await self._even_out(view, share)

    async def _take(self, row: dict[str, Any], fence: Fence) -> None:
        """Start a table taken under ``fence``: recovered from its log, then served (the floor
        registers it once recovered). A lease lost while it started stops it at once."""
        table_id = str(row["id"])  # (its fence is in ``fences`` since the balance took it)
        started = time.monotonic()
        try:
            async with self._recovering:
                if self.fences.get(table_id) != fence:  # dropped while it waited its turn
                    log.warning("table %s: lease lost before it was recovered", table_id)
                    return
                table = await self.floor.add_table(
                    stored_config(row), status=str(row["status"]), fence=fence
                )
        except Exception:
            log.exception("table %s: could not be started under its lease; released", table_id)
            if self.fences.get(table_id) == fence:
                self.fences.pop(table_id, None)
            with contextlib.suppress(Exception):
                await self.leases.release(fence)
            return
        if self.fences.get(table_id) != fence:  # dropped while it was being recovered
            if self.floor.tables.get(table_id) is table:
                self.floor.tables.pop(table_id, None)
            self._close(table, "it is run by another process of the floor now")
            await table.stop()
            log.warning("table %s: lease lost while it was recovered; not served", table_id)
            return
        log.warning(
            "table %s: taken (fencing token %d), recovered in %.0f ms",
            table_id,
            fence.token,
            1000 * (time.monotonic() - started),
        )

    async def _even_out(self, view: FloorView, share: int) -> None:
        """Above the share while other members are below it: release as many tables between
        rounds as they lack (up to the excess)."""
        excess = len(self.fences) - share
        if excess <= 0:
            return
        counts = Counter(lease.holder for lease in view.leases.values() if lease.live(view.now_us))
        lacking = sum(
            max(0, share - counts.get(member, 0))
            for member in view.members
            if member != self.member and not ended(member)
        )
        for table_id in sorted(self.fences):
            if min(excess, lacking) <= 0:
                return
            if await self.release(table_id):
                excess -= 1
                lacking -= 1

    async def release(self, table_id: str) -> bool:
        """Hand a table back to the floor between rounds (False: a round is in progress):
        stopped here, its lease released for another member to take, its sockets closed."""
        table = self.floor.tables.get(table_id)
        fence = self.fences.get(table_id)
        if table is None or fence is None:
            return False
        async with table.lock:
            round_ = table.round
            untouched = (  # a round no one has wagered on resumes as it is at the other end
                round_ is not None
                and not round_.wagers
                and round_.phase.value == "wagering"
                and table.config.recovery == "resume"
            )
            if round_ is not None and not round_.is_complete and not untouched:
                return False
            self.floor.tables.pop(table_id, None)
            self.fences.pop(table_id, None)
            await table.stop()
        self._close(table, "handed to another process of the floor")
        with contextlib.suppress(Exception):
            await self.leases.release(fence)
        self.dropped["released"] += 1
        log.warning("table %s: released to even out the floor", table_id)
        return True

    # -- where a table is -------------------------------------------------------------------

    def elsewhere(self, table_id: str) -> str | None:
        """The address of the process that runs ``table_id``; ``""`` while no process does
        (it is being taken over: try again shortly); None: the floor has no such table."""
        view = self.view
        if view is None:
            return None
        lease = view.leases.get(table_id)
        if lease is None:
            return None
        if lease.holder == self.member or not lease.live(view.now_us):
            return ""
        return lease.url
