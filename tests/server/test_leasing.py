"""The parts of a floor's leases that need no database: member ids, which members a process
may take over without waiting for their leases to expire, and how many tables it recovers at
once."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from typing import Any

from tablejack.server.floor.leasing import FloorLeases, LeaseSettings, ended, member_id
from tablejack.server.floor.renewal import HeldLeases, LoopWatch
from tablejack.store import Fence
from tablejack.store.leases import FloorView


def test_a_member_id_is_the_name_the_process_id_and_a_random_part() -> None:
    name, pid, tail = member_id("floor-2").split(":")
    assert (name, pid, len(tail)) == ("floor-2", str(os.getpid()), 8)
    assert member_id().startswith(f"{socket.gethostname()[:64]}:{os.getpid()}:")
    assert member_id() != member_id()


def test_only_a_process_of_this_host_that_has_ended_is_taken_over_at_once() -> None:
    host = socket.gethostname()[:64]
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = int(child.stdout)
    assert ended(f"{host}:{gone}:0badc0de")  # its process id no longer runs
    assert not ended(f"{host}:{os.getpid()}:0badc0de")  # this very process
    assert not ended(f"{host}:1:0badc0de")  # alive (init), whoever owns it
    assert not ended(f"another-host:{gone}:0badc0de")  # another host's: its leases expire
    assert not ended("not-a-member-id")


class _Store:
    """What the leases read of a store: its dialect and its tables."""

    dialect = "postgresql"

    def __init__(self, tables: int) -> None:
        self.rows = [
            {"id": f"T{n:03d}", "game": "hybrid", "rules": {}, "config": {}, "status": "open"}
            for n in range(tables)
        ]

    async def tables(self) -> list[dict[str, Any]]:
        return self.rows


class _Floor:
    """A floor whose tables take a moment each to recover, counting how many at once."""

    def __init__(self, tables: int) -> None:
        self.store = _Store(tables)
        self.tables: dict[str, Any] = {}
        self.others: dict[str, Any] = {}
        self.recovering = 0
        self.most_at_once = 0
        self.elsewhere: Any = None
        self.fenced: Any = None

    async def add_table(self, config: Any, *, status: str, fence: Fence) -> Any:
        self.recovering += 1
        self.most_at_once = max(self.most_at_once, self.recovering)
        await asyncio.sleep(0.01)
        self.recovering -= 1
        self.tables[config.id] = config
        return config


class _Leases:
    """The store's leases as a floor alone meets them: every table free, each taken at once."""

    member = "floor-1:1:0badc0de"
    lease_us = 5_000_000

    async def view(self) -> FloorView:
        return FloorView(now_us=1, leases={}, members={})

    async def acquire(self, table_id: str, dead: str = "") -> Fence:
        return Fence(table_id, 1)


def test_the_tables_a_process_takes_are_recovered_a_few_at_a_time() -> None:
    """A process that takes hundreds of tables at once (at start-up, or those of a process that
    died) recovers ``recover_at_once`` of them side by side, not all at once: it keeps serving
    and renewing meanwhile; every table taken is recovered in the end."""

    async def scenario() -> _Floor:
        floor = _Floor(40)
        leases = FloorLeases(floor, LeaseSettings(url="http://a:1", recover_at_once=3))  # type: ignore[arg-type]
        leases.leases = _Leases()  # type: ignore[assignment]
        await leases.balance()
        for _ in range(500):
            if len(floor.tables) == 40:
                break
            await asyncio.sleep(0.01)
        return floor

    floor = asyncio.run(scenario())
    assert len(floor.tables) == 40
    assert floor.most_at_once == 3


def test_a_table_whose_lease_is_lost_while_it_waits_its_turn_is_not_recovered() -> None:
    async def scenario() -> _Floor:
        floor = _Floor(6)
        leases = FloorLeases(floor, LeaseSettings(url="http://a:1", recover_at_once=1))  # type: ignore[arg-type]
        leases.leases = _Leases()  # type: ignore[assignment]
        await leases.balance()
        await leases.drop("T005", "taken")  # taken over by another process meanwhile
        for _ in range(500):
            if len(floor.tables) == 5:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        return floor

    floor = asyncio.run(scenario())
    assert sorted(floor.tables) == [f"T{n:03d}" for n in range(5)]


def test_the_watchdog_measures_how_late_the_loop_turns_and_the_renewal_reads_its_stamp() -> None:
    """The main loop's watchdog stamps each turn; a loop blocked for longer than the lease is
    counted once it turns again, and the renewal's thread sees how long it has not turned."""

    # A lease of 0.5 s and a block of 1 s: a machine busy with the rest of the suite has made
    # the loop late by 0.1 s without any block, so the lease is well above that.
    async def scenario() -> tuple[LoopWatch, float, float]:
        watch = LoopWatch(0.02, lease_seconds=0.5, loop_stall=5.0)
        watch.start()
        await asyncio.sleep(0.1)
        assert watch.lags_over_lease == 0
        time.sleep(1.0)  # blocked: no turn
        blocked = watch.since_turn()
        await asyncio.sleep(0.1)
        turned = watch.since_turn()
        watch.stop()
        return watch, blocked, turned

    watch, blocked, turned = asyncio.run(scenario())
    assert blocked >= 1.0
    assert turned < 0.2  # turning again every 0.02 s (with a busy machine's slack)
    assert watch.lags_over_lease == 1
    assert 0.9 <= watch.lag_max < 3.0


def test_the_leases_held_are_read_whole_from_another_thread() -> None:
    held = HeldLeases()
    held["A1"] = Fence("A1", 1)
    copy = held.snapshot()
    held["B1"] = Fence("B1", 3)
    assert held.pop("A1") == Fence("A1", 1)
    assert copy == {"A1": Fence("A1", 1)}  # a copy, not a view
    assert dict(held) == {"B1": Fence("B1", 3)} and "A1" not in held and len(held) == 1
