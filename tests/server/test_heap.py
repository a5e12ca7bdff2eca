"""The serving process's garbage collector (:mod:`tablejack.server.support.heap`): with the
thresholds ``tablejack serve`` sets, garbage held in a reference cycle that reached the oldest
generation stays there; the collection on a clock frees it, and ``serve``'s start-up starts
that clock."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.server.support.heap import THRESHOLDS, OldestCollection, settled_after


class Node:
    """An object that refers to itself: freed by the cyclic collector only."""

    def __init__(self) -> None:
        self.me = self
        self.payload = bytearray(64 * 1024)


@contextlib.contextmanager
def serving_thresholds() -> Iterator[None]:
    """The collector as a serving process has it (restored after)."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def old_cycles(count: int) -> list[weakref.ref[Node]]:
    """``count`` cycles that lived through a collection (so are in the oldest generation), then
    became garbage; weak references to them."""
    nodes = [Node() for _ in range(count)]
    gc.collect()  # they are alive: moved to the oldest generation
    refs = [weakref.ref(node) for node in nodes]
    del nodes
    return refs


async def alive_after(
    refs: list[weakref.ref[Node]], seconds: float, until: Callable[[], bool] | None = None
) -> int:
    """How many of ``refs`` still live after ``seconds`` of the event loop turning (with
    allocations going on, as on a serving loop), or, given ``until``, once it holds (at most
    ten times ``seconds``: a loaded machine's loop turns late)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + (seconds if until is None else 10 * seconds)
    while loop.time() < end and not (until is not None and until()):
        _ = [{"n": n} for n in range(100)]  # short-lived work, as a round's
        await asyncio.sleep(0.01)
    return sum(ref() is not None for ref in refs)


def test_the_thresholds_alone_leave_old_cycles_uncollected() -> None:
    """The mechanism: under the serving thresholds, 50 cycles in the oldest generation
    (3.2 MB) are all still there after a second of a busy loop."""

    async def run() -> int:
        refs = old_cycles(50)
        return await alive_after(refs, 1.0)

    with serving_thresholds():
        assert asyncio.run(run()) == 50
    gc.collect()


def test_the_oldest_generation_is_collected_on_its_clock() -> None:
    """With the collection every 0.1 s, the same 50 old cycles are freed by the time two
    collections have run on the loop, and the collection counts them. (It waits for the two
    collections, not for a second of wall time: on a loaded machine a second of the loop's
    time has held only one.)"""

    async def run() -> tuple[int, OldestCollection]:
        collection = OldestCollection(0.1)
        collection.start()
        try:
            refs = old_cycles(50)
            return await alive_after(refs, 1.0, lambda: collection.collections >= 2), collection
        finally:
            collection.stop()

    with serving_thresholds():
        alive, collection = asyncio.run(run())
    assert alive == 0
    assert collection.collections >= 2
    assert collection.freed >= 50
    assert 0 < collection.longest <= collection.took


def test_serve_start_up_starts_the_collection() -> None:
    """``serve``'s start-up (after the floor's own) freezes start-up's heap, sets the
    thresholds and collects the oldest generation on its clock: old cycles made after it are
    freed."""
    setups: list[object] = []

    async def setup(floor: object) -> None:
        setups.append(floor)

    async def run() -> int:
        await settled_after(setup, 0.1)("floor")
        assert gc.get_threshold() == THRESHOLDS
        refs = old_cycles(20)
        return await alive_after(refs, 1.0)

    before = gc.get_threshold()
    try:
        assert asyncio.run(run()) == 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert setups == ["floor"]


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_an_interval_that_is_not_positive_is_refused(seconds: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        OldestCollection(seconds)


@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_serve_refuses_a_full_collection_interval_that_is_not_positive(
    value: str, tmp_path: Path
) -> None:
    """``serve --gc-full-seconds`` below or at 0: a clear error naming the option, and the
    server does not start."""
    result = CliRunner().invoke(
        app, ["serve", "--db", str(tmp_path / "floor.db"), "--gc-full-seconds", value]
    )
    assert result.exit_code == 2
    assert "--gc-full-seconds is a positive number of seconds" in result.output
    assert not (tmp_path / "floor.db").exists()
