"""The checkpoint signer of a running server (``run_checkpoints``) at shutdown: told to stop,
it finishes the checkpoint it is writing and ends. (Cancelled in the middle of a write, as it
once was, its transaction could be left holding SQLite's write lock, and the shutdown's own
checkpoint then failed with "database is locked", leaving the last events unsigned.)"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tablejack.server.http.trust import CheckpointSettings, run_checkpoints
from tablejack.store import Store


class SlowCheckpointer:
    """A checkpointer whose write takes until ``release`` is set; records what it began and
    what it finished."""

    def __init__(self) -> None:
        self.began: list[str] = []
        self.finished: list[str] = []
        self.writing = asyncio.Event()
        self.release = asyncio.Event()

    async def checkpoint(self, reason: str, *, force: bool = False) -> None:
        self.began.append(reason)
        self.writing.set()
        await self.release.wait()
        self.finished.append(reason)


@contextlib.asynccontextmanager
async def running_signer(
    folder: Path, seconds: float
) -> AsyncIterator[tuple[SlowCheckpointer, asyncio.Event, asyncio.Task[None]]]:
    """``run_checkpoints`` every ``seconds`` on a fresh SQLite floor, with a slow
    checkpointer and a stop event."""
    store = await Store.open(f"sqlite:///{folder / 'floor.sqlite'}")
    try:
        floor: Any = SimpleNamespace(store=store, now_us=lambda: 1_800_000_000_000_000)
        signer = SlowCheckpointer()
        stop = asyncio.Event()
        every = CheckpointSettings(key=folder / "unused.key", seconds=seconds)
        task = asyncio.create_task(run_checkpoints(floor, signer, every, stop))  # type: ignore[arg-type]
        yield signer, stop, task
    finally:
        await store.close()


def test_a_signer_told_to_stop_finishes_the_checkpoint_it_is_writing(tmp_path: Path) -> None:
    async def main() -> tuple[SlowCheckpointer, bool, bool]:
        async with running_signer(tmp_path, 0.01) as (signer, stop, task):
            await asyncio.wait_for(signer.writing.wait(), 10)
            stop.set()
            await asyncio.sleep(0.05)
            running_while_writing = not task.done()
            signer.release.set()
            await asyncio.wait_for(task, 10)
            return signer, running_while_writing, task.cancelled()

    signer, running_while_writing, cancelled = asyncio.run(main())
    assert running_while_writing  # it waited for the write under way
    assert not cancelled
    assert signer.began == ["interval"] and signer.finished == ["interval"]


def test_a_signer_told_to_stop_while_waiting_ends_at_once(tmp_path: Path) -> None:
    """Between checkpoints (a long interval), the stop wakes it: it ends without writing."""

    async def main() -> tuple[SlowCheckpointer, float]:
        async with running_signer(tmp_path, 3600) as (signer, stop, task):
            await asyncio.sleep(0.1)
            started = asyncio.get_running_loop().time()
            stop.set()
            await asyncio.wait_for(task, 10)
            return signer, asyncio.get_running_loop().time() - started

    signer, seconds = asyncio.run(main())
    assert signer.began == [] and seconds < 1
