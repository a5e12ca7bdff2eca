"""The renewal of a process's table leases, on a thread of its own.

A process's event loop serves every terminal of its tables; when the floor is busy it lags —
at 500 tables × 20 terminals on two cores, by more than a 5 s lease. A renewal run on that loop
waits its turn behind the terminals' traffic, the leases lapse, the other processes take the
tables over and the terminals follow them: the floor thrashes. A busy process should serve
slowly, not lose its tables. So the renewal runs here, on a thread with its own event loop and
its own connection to the database (:class:`Renewal`), where a busy loop cannot delay it:

* every third of the lease time it renews the leases the process holds
  (:class:`HeldLeases`, shared with the main loop under a lock) through the store's
  :meth:`tablejack.store.leases.Leases.renew` — a renewal may take until the leases would lapse
  on the process's clock: it shares the interpreter's lock with the busy loop, and one that
  succeeds counts from when it was sent — and records, under the same lock, the time the
  last renewal that succeeded was sent and the fences it found lost (taken over by another
  process); the main loop reads them (:meth:`Renewal.take_lost`, :attr:`Renewal.renewed_at`)
  and acts: it drops the tables lost, and every table once no renewal has succeeded for a
  lease time (the database cut off);
* it renews only while the main loop turns: the main loop stamps a watchdog several times a
  second (:class:`LoopWatch`), and once the stamp is older than ``loop_stall`` seconds the
  thread stops renewing — a process whose loop is stuck (an endless computation, a deadlock)
  loses its tables to the others, as a dead one does. A loop that lags, however much, but
  still turns keeps them. A process stopped as a whole (SIGSTOP) or dead renews nothing: the
  thread stops with it.

Taking, dropping, releasing and balancing tables stay on the main loop
(:mod:`tablejack.server.floor.leasing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping

from tablejack.store import Fence, Store
from tablejack.store.leases import Leases

__all__ = ["HeldLeases", "LoopWatch", "Renewal"]

log = logging.getLogger("tablejack.server")

TICK_SECONDS = 0.5
"""How often the main loop stamps its watchdog (at most; a short lease stamps more often)."""
SLOW_LOG_SECONDS = 60.0
"""A slow renewal is logged at most this often (each is counted)."""


class HeldLeases(MutableMapping[str, Fence]):
    """The leases a process holds, by table: changed by the main loop, read by the renewal's
    thread (:meth:`snapshot`) — every access under one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fences: dict[str, Fence] = {}

    def __getitem__(self, table_id: str) -> Fence:
        with self._lock:
            return self._fences[table_id]

    def __setitem__(self, table_id: str, fence: Fence) -> None:
        with self._lock:
            self._fences[table_id] = fence

    def __delitem__(self, table_id: str) -> None:
        with self._lock:
            del self._fences[table_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.snapshot())

    def __len__(self) -> int:
        with self._lock:
            return len(self._fences)

    def __contains__(self, table_id: object) -> bool:
        with self._lock:
            return table_id in self._fences

    def snapshot(self) -> dict[str, Fence]:
        """The leases held now (a copy)."""
        with self._lock:
            return dict(self._fences)


class LoopWatch:
    """The main loop's watchdog: a callback the loop runs every ``tick`` seconds stamps the
    time of its turn (read from any thread: :meth:`since_turn`) and measures how late it ran —
    the loop's lag. A lag longer than the lease time is logged: the process is saturated (its
    leases are renewed meanwhile by the renewal's thread, up to ``loop_stall``)."""

    def __init__(self, tick: float, lease_seconds: float, loop_stall: float) -> None:
        self.tick = tick
        self.lease_seconds = lease_seconds
        self.loop_stall = loop_stall
        self.stamp = time.monotonic()
        """When the main loop last turned (this process's monotonic clock). A float is
        written and read whole across threads."""
        self.lag = 0.0
        """How late the last tick ran (seconds)."""
        self.lag_max = 0.0
        """The largest lag measured since the start."""
        self.lags_over_lease = 0
        """Ticks that ran later than a lease time."""
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0

    def start(self) -> None:
        """Start stamping, on the running loop."""
        self.stamp = time.monotonic()
        self._schedule(self.stamp)

    def _schedule(self, now: float) -> None:
        self._due = now + self.tick
        self._handle = asyncio.get_running_loop().call_later(self.tick, self._turn)

    def _turn(self) -> None:
        now = time.monotonic()
        self.stamp = now
        lag = max(0.0, now - self._due)
        self.lag = lag
        self.lag_max = max(self.lag_max, lag)
        if lag > self.lease_seconds:
            self.lags_over_lease += 1
            log.warning(
                "floor leases: the event loop lagged %.1f s, more than the lease (%g s): this "
                "process is saturated; %s",
                lag,
                self.lease_seconds,
                "its leases were renewed on their own thread meanwhile"
                if lag <= self.loop_stall
                else f"past the loop stall ({self.loop_stall:g} s) its leases were not renewed",
            )
        self._schedule(now)

    def since_turn(self) -> float:
        """Seconds since the main loop last turned (any thread)."""
        return time.monotonic() - self.stamp

    def stop(self) -> None:
        """Stop stamping."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class Renewal:
    """The thread that renews the leases of ``held`` (see the module docstring): ``member``,
    ``url`` and ``seconds`` as the process's :class:`~tablejack.store.leases.Leases`,
    ``open_store`` opens the thread's own store (in the thread's event loop), ``watch`` is the
    main loop's watchdog, ``wake`` is called on the main loop when a lease was found lost."""

    def __init__(
        self,
        *,
        member: str,
        url: str,
        seconds: float,
        held: HeldLeases,
        watch: LoopWatch,
        open_store: Callable[[], Awaitable[Store]],
        wake: Callable[[], None],
    ) -> None:
        self.member = member
        self.url = url
        self.seconds = seconds
        self.interval = seconds / 3
        self.held = held
        self.watch = watch
        self.open_store = open_store
        self.wake = wake
        self._lock = threading.Lock()
        self._renewed_at = time.monotonic()
        self._lost: dict[str, Fence] = {}
        self.withheld = 0
        """Renewals not sent because the main loop had not turned for ``loop_stall``."""
        self.took = 0.0
        """How long the last renewal that succeeded took (seconds)."""
        self.slow = 0
        """Renewals that succeeded but took longer than a third of the lease (the database, or
        this process's share of the CPU, is slow)."""
        self._slow_logged = -SLOW_LOG_SECONDS
        self._main: asyncio.AbstractEventLoop | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._stalled = 0
        """0: the main loop turns; 1: it has not turned for a lease time (logged); 2: past
        ``loop_stall`` (logged, renewals withheld)."""

    @property
    def renewed_at(self) -> float:
        """When the last renewal that succeeded was sent (this process's monotonic clock)."""
        with self._lock:
            return self._renewed_at

    def take_lost(self) -> dict[str, Fence]:
        """The fences found lost since the last call (taken over by another process)."""
        with self._lock:
            lost, self._lost = self._lost, {}
        return lost

    def start(self) -> None:
        """Start the thread (from the main loop): it renews from now on."""
        with self._lock:
            self._renewed_at = time.monotonic()
        self._main = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=self._run, name=f"lease renewal {self.member}", daemon=True
        )
        self._thread.start()
        self._ready.wait(timeout=10)

    async def stop(self) -> None:
        """Stop the thread (its renewal in flight ends first) and close its store."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # its loop already ended
                loop.call_soon_threadsafe(stopping.set)
        await asyncio.to_thread(thread.join, 2 * self.seconds + 5)
        self._thread = None

    def _run(self) -> None:
        try:
            asyncio.run(self._main_of_thread())
        except Exception:  # its leases lapse: the main loop drops every table (cut off)
            log.exception("floor leases: the renewal's thread failed; no lease is renewed")

    async def _main_of_thread(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self._ready.set()
        store = await self.open_store()
        try:
            leases = Leases(store, self.member, self.url, self.seconds)
            while not self._stopping.is_set():
                began = time.monotonic()
                try:
                    await self.turn(leases)
                except Exception:
                    log.exception("floor leases: a renewal failed (tried again)")
                # every third of the lease from the start of the last (a slow one is not
                # followed by a full third of a lease more)
                pause = max(0.0, began + self.interval - time.monotonic())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=pause)
        finally:
            await store.close()

    async def turn(self, leases: Leases) -> None:
        """One renewal: every lease held, unless the main loop has stopped turning."""
        since = self.watch.since_turn()
        if since > self.watch.loop_stall:
            self.withheld += 1
            if self._stalled < 2:
                self._stalled = 2
                log.error(
                    "floor leases: the event loop has not turned for %.1f s (more than %g s): "
                    "the leases are no longer renewed; the other processes take the tables",
                    since,
                    self.watch.loop_stall,
                )
            return
        if since > self.seconds and self._stalled < 1:
            self._stalled = 1
            log.warning(
                "floor leases: the event loop has not turned for %.1f s; the leases are "
                "renewed on their own thread until it has not turned for %g s",
                since,
                self.watch.loop_stall,
            )
        elif since <= self.seconds:
            self._stalled = 0
        asked = self.held.snapshot()
        sent = time.monotonic()
        # a renewal that succeeds counts from when it was sent, however long it took: it may
        # run until the leases lapse on this process's clock (at least a third of a lease)
        budget = max(self.interval, self.renewed_at + self.seconds - sent)
        try:
            kept = await asyncio.wait_for(leases.renew(asked.values()), timeout=budget)
        except Exception as error:
            log.warning(
                "floor leases: renewal failed (%s), %.1f s since the last one",
                str(error) or type(error).__name__,
                time.monotonic() - self.renewed_at,
            )
            return
        took = time.monotonic() - sent
        lost = {table_id: fence for table_id, fence in asked.items() if fence not in kept}
        with self._lock:
            self._renewed_at = sent
            self._lost.update(lost)
        self.took = took
        if took > self.interval:
            self.slow += 1
            if sent - self._slow_logged >= SLOW_LOG_SECONDS:
                self._slow_logged = sent
                log.warning(
                    "floor leases: a renewal took %.1f s, more than a third of the lease (%d "
                    "such renewals so far): the database, or this process's share of the CPU, "
                    "is slow",
                    took,
                    self.slow,
                )
        if lost:
            self._wake_main()

    def _wake_main(self) -> None:
        main = self._main
        if main is not None:
            with contextlib.suppress(RuntimeError):  # the main loop has ended
                main.call_soon_threadsafe(self.wake)
