"""Whether numba compiles a kernel in this process, told as it happens.

numba broadcasts a ``"numba:compile"`` event when a dispatcher starts and when it ends compiling
a signature, and only on a miss: after it has looked in the overloads this process already holds
and in its on-disk cache (``cache=True``: the ``__pycache__`` folder beside the kernel modules, or
``NUMBA_CACHE_DIR``). :func:`watch_compilation` turns those events into two callbacks, so a
command says "compiling the kernels" exactly while it compiles, and never when the kernels come
from the cache.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from numba.core import event as _event

__all__ = ["watch_compilation"]

event: Any = _event
"""numba's event module (untyped for mypy)."""


class _CompileListener(_event.Listener):
    """Counts the compilations in progress; the outermost one of a kernel that compiles the
    functions it calls is the one reported."""

    def __init__(self, started: Callable[[], None], finished: Callable[[float], None]) -> None:
        self._started = started
        self._finished = finished
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._depth = 0
        self._since = 0.0

    def on_start(self, event: Any) -> None:
        if os.getpid() != self._pid:  # a worker forked meanwhile compiles on its own
            return
        with self._lock:
            self._depth += 1
            outermost = self._depth == 1
            if outermost:
                self._since = time.perf_counter()
        if outermost:
            self._started()

    def on_end(self, event: Any) -> None:
        if os.getpid() != self._pid:
            return
        with self._lock:
            self._depth -= 1
            outermost = self._depth == 0
        if outermost:
            self._finished(time.perf_counter() - self._since)


@contextmanager
def watch_compilation(
    started: Callable[[], None], finished: Callable[[float], None]
) -> Iterator[None]:
    """Within the block, call ``started()`` when numba starts compiling in this process and
    ``finished(seconds)`` when it is done; a kernel loaded from the cache calls neither."""
    with event.install_listener("numba:compile", _CompileListener(started, finished)):
        yield
