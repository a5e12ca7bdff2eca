"""The lease renewal on a thread of its own (:mod:`tablejack.server.floor.renewal`), with two
members of a floor on one PostgreSQL schema, each with its own event loop as two processes have:

* the first member's event loop blocked for twice the lease time (a process saturated by its
  terminals' traffic): its leases are still renewed, the second member takes nothing, and the
  table is still served by the first once its loop turns again;
* its loop blocked past ``loop_stall`` (stuck): the renewal stops, the second member takes the
  table over with the next fencing token, and the first drops it when its loop turns again;
* the first member cut off from the database (its connections black-holed): no renewal
  succeeds, and a lease time after the last one it drops every table (``cut off``) while the
  second takes them over.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.server.compose import make_floor
from tablejack.server.floor.floor import Floor
from tablejack.server.floor.leasing import FloorLeases, LeaseSettings, lease_options
from tablejack.server.http.metrics import Metrics
from tablejack.store import Store
from tablejack.store.leases import FloorView, Leases
from tests.support.store import Backend

LEASE = 1.0
"""The members' lease time (seconds)."""
TABLE = "T1"


class Member:
    """One member of the floor: a floor on its own stores (the tables', the balance's, the
    renewal's), as ``tablejack serve`` opens them, reached at ``url``."""

    def __init__(
        self, backend: Backend, name: str, *, loop_stall: float = 30.0, url: str | None = None
    ) -> None:
        self.backend = backend
        self.url = url or backend.url
        self.settings = LeaseSettings(
            url=f"http://{name}:1", seconds=LEASE, name=f"host-{name}", loop_stall=loop_stall
        )
        self.store: Store | None = None
        self.lease_store: Store | None = None
        self.floor: Floor | None = None
        self.leases: FloorLeases | None = None

    async def _open(self, pool_size: int) -> Store:
        return await Store.open(
            self.url,
            schema=self.backend.schema,
            migrate=False,
            pool_size=pool_size,
            **lease_options(self.settings),
        )

    async def start(self) -> FloorLeases:
        self.store = await self._open(5)
        self.lease_store = await self._open(2)
        self.floor = make_floor(self.store)
        self.leases = FloorLeases(
            self.floor, self.settings, self.lease_store, renewal_store=lambda: self._open(1)
        )
        await self.leases.start()
        return self.leases

    async def stop(self) -> None:
        if self.leases is not None:
            await self.leases.stop()
        if self.floor is not None:
            await self.floor.stop()
        for store in (self.lease_store, self.store):
            if store is not None:
                await store.close()

    def serves(self, table_id: str) -> bool:
        """Does this member hold ``table_id``'s lease and serve it?"""
        assert self.leases is not None and self.floor is not None
        return table_id in self.leases.fences and table_id in self.floor.tables


class Elsewhere:
    """A member on an event loop of its own thread, as another process runs: it notes every
    table it ever held."""

    def __init__(self, member: Member) -> None:
        self.member = member
        self.held_ever: set[str] = set()
        self._started = threading.Event()
        self._stopping = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        assert self._started.wait(20), "the second member did not start"
        if self._failed is not None:
            raise self._failed

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(30)
        if self._failed is not None:
            raise self._failed

    @property
    def leases(self) -> FloorLeases:
        assert self.member.leases is not None
        return self.member.leases

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # shown by start() or stop()
            self._failed = error
            self._started.set()

    async def _main(self) -> None:
        leases = await self.member.start()
        try:
            await leases.balance()  # it has seen the first member's lease
            self._started.set()
            while not self._stopping.is_set():
                self.held_ever |= set(leases.fences)
                await asyncio.sleep(0.02)
        finally:
            await self.member.stop()


async def prepare(backend: Backend) -> None:
    store = await backend.open()
    try:
        await store.save_table(TABLE, "hybrid", {}, {})
        await store.set_table_status(TABLE, "open")
    finally:
        await store.close()


async def until(check: Callable[[], Awaitable[bool]], seconds: float, what: str) -> float:
    """Poll ``check()`` until it is true; the seconds it took."""
    start = time.monotonic()
    while not await check():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"not within {seconds} s: {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def view(member: Member) -> FloorView:
    """The leases as ``member`` reads them (on its own loop)."""
    assert member.leases is not None
    return await member.leases.leases.view()


async def observe(backend: Backend) -> FloorView:
    """The leases as a store of its own reads them."""
    store = await Store.open(backend.url, schema=backend.schema, migrate=False, pool_size=1)
    try:
        return await Leases(store, "observer", "", LEASE).view()
    finally:
        await store.close()


def floor_of_two(
    backend: Backend,
    scenario: Callable[[Member, Elsewhere], Awaitable[dict[str, Any]]],
    *,
    loop_stall: float = 30.0,
    first_url: str | None = None,
) -> dict[str, Any]:
    """The first member starts alone on this thread's loop and takes the table; the second
    starts on a thread of its own and finds it held; ``scenario(first, second)`` runs."""
    asyncio.run(prepare(backend))
    first = Member(backend, "first", loop_stall=loop_stall, url=first_url)
    second = Elsewhere(Member(backend, "second"))

    async def main() -> dict[str, Any]:
        try:
            await first.start()
            await until(lambda: _true(first.serves(TABLE)), 10, "the first member serves T1")
            second.start()
            return await scenario(first, second)
        finally:
            second.stop()
            await first.stop()

    return asyncio.run(main())


def samples(metrics: Metrics) -> dict[str, float]:
    """The unlabelled samples of ``/metrics``, through prometheus-client's parser."""
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for sample in family.samples
        if not sample.labels
    }


async def _true(value: bool) -> bool:
    return value


def test_a_loop_blocked_for_twice_the_lease_keeps_its_tables(postgres: Backend) -> None:
    """A saturated process serves slowly, it does not lose its tables: its loop blocked for
    2 × the lease, its renewal (on its own thread) keeps the lease, the other member takes
    nothing, and the table is served by the same member under the same fencing token."""

    async def scenario(first: Member, second: Elsewhere) -> dict[str, Any]:
        before = (await view(first)).leases[TABLE]
        time.sleep(2 * LEASE)  # the event loop does nothing else meanwhile
        await asyncio.sleep(LEASE)  # the heartbeat and the balance turn again
        assert first.leases is not None and first.floor is not None
        metrics = Metrics()
        metrics.attach(first.floor, first.leases)
        return {
            "metrics": samples(metrics),
            "before": before,
            "after": (await view(first)).leases[TABLE],
            "member": first.leases.member,
            "serves": first.serves(TABLE),
            "dropped": dict(first.leases.dropped),
            "lag": first.leases.watch.lag_max,
            "over_lease": first.leases.watch.lags_over_lease,
            "taken_elsewhere": TABLE in second.held_ever,
            "takeovers_elsewhere": second.leases.takeovers,
        }

    outcome = floor_of_two(postgres, scenario)
    assert outcome["before"].holder == outcome["member"]
    assert outcome["after"].holder == outcome["member"]
    assert outcome["after"].token == outcome["before"].token  # never taken over
    assert not outcome["taken_elsewhere"]
    assert outcome["takeovers_elsewhere"] == 0
    assert outcome["serves"]
    assert outcome["dropped"] == {}
    assert outcome["lag"] >= 2 * LEASE * 0.9  # the watchdog saw the loop lag
    assert outcome["over_lease"] >= 1
    metrics = outcome["metrics"]  # and /metrics shows it
    assert metrics["tablejack_loop_lags_over_lease_total"] == outcome["over_lease"]
    assert 0 <= metrics["tablejack_loop_lag_seconds"] < LEASE
    assert metrics["tablejack_lease_renewal_age_seconds"] < LEASE
    assert metrics["tablejack_lease_renewals_withheld_total"] == 0
    assert 0 < metrics["tablejack_lease_renewal_seconds"] < LEASE
    assert metrics["tablejack_leases_held"] == 1


def test_a_loop_stalled_past_loop_stall_loses_its_tables(postgres: Backend) -> None:
    """A stuck process loses its tables: past ``loop_stall`` without a turn of its loop its
    leases are no longer renewed, the other member takes the table with the next fencing token,
    and the first drops it once its loop turns again."""
    stall = 1.5

    async def scenario(first: Member, second: Elsewhere) -> dict[str, Any]:
        assert first.leases is not None
        before = (await view(first)).leases[TABLE]
        time.sleep(stall + 2 * LEASE + 0.5)  # the lease lapses a lease time after the stall
        await until(lambda: _true(not first.serves(TABLE)), 5, "the first drops T1")
        await until(lambda: _true(TABLE in second.leases.fences), 5, "the second member holds T1")
        renewal = first.leases.renewal
        assert renewal is not None
        assert first.floor is not None
        metrics = Metrics()
        metrics.attach(first.floor, first.leases)
        return {
            "withheld_metric": samples(metrics)["tablejack_lease_renewals_withheld_total"],
            "before": before,
            "after": (await view(first)).leases[TABLE],
            "second": second.leases.member,
            "dropped": dict(first.leases.dropped),
            "withheld": renewal.withheld,
            "takeovers_elsewhere": second.leases.takeovers,
        }

    outcome = floor_of_two(postgres, scenario, loop_stall=stall)
    assert outcome["after"].holder == outcome["second"]
    assert outcome["after"].token == outcome["before"].token + 1
    assert outcome["takeovers_elsewhere"] == 1
    assert outcome["withheld"] >= 1
    assert outcome["withheld_metric"] == outcome["withheld"]
    assert sum(outcome["dropped"].values()) == 1  # taken, or cut off: its lease lapsed


class Cable:
    """A TCP relay to PostgreSQL on a thread of its own, which can be cut: from then on it
    forwards nothing either way and accepts no connection (a network partition, the
    connections black-holed rather than reset); closed, it resets them all."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.cut_off = False
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._listen())
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_off:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self._writers |= {writer, up_writer}
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
        )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                if not self.cut_off:
                    writer.write(data)
                    await writer.drain()
        finally:
            writer.close()

    def cut(self) -> None:
        def cut_now() -> None:
            self.cut_off = True
            if self._server is not None:
                self._server.close()

        self._loop.call_soon_threadsafe(cut_now)

    def close(self) -> None:
        def close_all() -> None:
            self.cut_off = True
            if self._server is not None:
                self._server.close()
            for writer in self._writers:
                with contextlib.suppress(Exception):
                    writer.transport.abort()
            self._loop.call_later(0.1, self._loop.stop)  # once the sockets are closed

        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(close_all)
        self._thread.join(10)


def test_a_member_cut_off_from_the_database_drops_every_table_after_a_lease(
    postgres: Backend,
) -> None:
    """The database cut off (every connection of the first member black-holed, its loop free):
    no renewal succeeds, and a lease time after the last one that did the first drops every
    table (``cut off``); the second takes them over."""
    url = make_url(postgres.url)
    cable = Cable(url.host or "127.0.0.1", url.port or 5432)
    through = url.set(host="127.0.0.1", port=cable.port).render_as_string(hide_password=False)

    async def scenario(first: Member, second: Elsewhere) -> dict[str, Any]:
        assert first.leases is not None
        await asyncio.sleep(LEASE)  # renewals through the cable
        before = first.leases.renewed_at
        cut = time.monotonic()
        cable.cut()
        took = await until(lambda: _true(not first.serves(TABLE)), 3 * LEASE, "T1 dropped")
        await until(
            lambda: _true(TABLE in second.leases.fences), 5 * LEASE, "the second member holds T1"
        )
        outcome = {
            "took": took,
            "renewed_before_cut": cut - before,
            "renewed_since_cut": first.leases.renewed_at > cut,
            "dropped": dict(first.leases.dropped),
            "second": second.leases.member,
            "holder": (await observe(first.backend)).leases[TABLE].holder,
        }
        cable.close()  # the first member's connections reset: it stops without waiting
        return outcome

    try:
        outcome = floor_of_two(postgres, scenario, first_url=through)
    finally:
        cable.close()
    assert outcome["dropped"] == {"cut off": 1}
    assert not outcome["renewed_since_cut"]
    # dropped a lease time after the start of the last renewal that succeeded, not before
    assert outcome["took"] + outcome["renewed_before_cut"] >= LEASE
    assert outcome["took"] < LEASE + 2.0
    assert outcome["holder"] == outcome["second"]


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_serve_refuses_a_loop_stall_that_is_not_a_positive_number(
    tmp_path: Path, value: str
) -> None:
    result = CliRunner().invoke(
        app, ["serve", "--unsigned", "--db", str(tmp_path / "x.sqlite"), "--loop-stall", value]
    )
    assert result.exit_code == 2
    assert "--loop-stall is a positive number of seconds" in result.output
    assert "The server did not start." in result.output
    with pytest.raises(ValueError, match="loop_stall"):
        FloorLeases(None, LeaseSettings(url="http://a:1", loop_stall=float(value)))  # type: ignore[arg-type]
