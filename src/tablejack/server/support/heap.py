"""The server's garbage collector: tuned for a long-running process, with its oldest generation
collected on a clock.

``tablejack serve`` freezes what start-up built out of the collector's scans (:func:`gc.freeze`)
and collects the young generation after 20,000 allocations instead of 700
(:data:`THRESHOLDS`): a round creates many short-lived objects, and with the defaults the server
spent 37.2 ms of CPU per round against 28.9 ms with these (docs/server.md, "Load").

With those thresholds the oldest generation is collected after 20 × 100 young collections,
and CPython collects it only once a quarter as many objects as it held have come into it since;
at human pace (200 tables × 20 terminals on two processes) a young collection ran about every
11 s, so the oldest generation would go hours without a collection. What comes into it is what
was alive at a collection of the middle one: the sockets, the rounds in play (a round lasts
about 40 s at human pace), the requests waiting. What of it later dies in a reference cycle —
a closed socket's objects in the web server and the framework, a round's — only a collection
of the oldest generation frees, and until then the process's memory holds it.
:class:`OldestCollection` collects the oldest generation every ``seconds`` on the event loop,
so the garbage kept is at most what that many seconds make.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "FULL_COLLECTION_SECONDS",
    "THRESHOLDS",
    "OldestCollection",
    "settle",
    "settled_after",
]

THRESHOLDS = (20_000, 20, 100)
"""The collector's thresholds (:func:`gc.set_threshold`) of a serving process."""
FULL_COLLECTION_SECONDS = 60.0
"""How often a serving process collects the oldest generation (``serve --gc-full-seconds``)."""


def settle() -> None:
    """Collect, freeze what is left out of the collector's scans (start-up's code, tables and
    accounts), and set :data:`THRESHOLDS`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


class OldestCollection:
    """A collection of the oldest generation every ``seconds`` on the running event loop
    (:meth:`start`), with how many ran, what they freed and the CPU they took."""

    def __init__(self, seconds: float = FULL_COLLECTION_SECONDS) -> None:
        if not seconds > 0:  # (NaN too)
            raise ValueError(f"The full collection's interval is a positive number, not {seconds}.")
        self.seconds = seconds
        self.collections = 0
        """Full collections run so far."""
        self.freed = 0
        """Unreachable objects they found, in all."""
        self.took = 0.0
        """Seconds they took, in all."""
        self.longest = 0.0
        """The longest one (seconds): the loop waits for it."""
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Collect every :attr:`seconds` from now on (on the running loop)."""
        self._handle = asyncio.get_running_loop().call_later(self.seconds, self._collect)

    def stop(self) -> None:
        """Collect no more."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _collect(self) -> None:
        started = time.perf_counter()
        self.freed += gc.collect(2)
        took = time.perf_counter() - started
        self.collections += 1
        self.took += took
        self.longest = max(self.longest, took)
        self.start()


def settled_after(
    setup: Callable[[Any], Awaitable[None]] | None,
    collection: OldestCollection | float = FULL_COLLECTION_SECONDS,
) -> Callable[[Any], Awaitable[None]]:
    """The floor's start-up ``setup``, then :func:`settle` and the oldest generation collected
    on the clock of ``collection`` (an :class:`OldestCollection`, whose figures ``/metrics``
    shows, or its interval in seconds): ``tablejack serve``'s start-up."""
    if not isinstance(collection, OldestCollection):
        collection = OldestCollection(collection)  # (a bad interval refused before the start)

    async def run(floor: Any) -> None:
        if setup is not None:
            await setup(floor)
        settle()
        collection.start()

    return run
