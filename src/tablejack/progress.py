"""Feedback on standard error while a command works: what it is doing, how far it is, and that
numba is compiling the kernels when it is.

A command makes one :class:`Feedback` and runs its long work inside :meth:`Feedback.step`.
Standard output carries only the command's results; the feedback goes to standard error, in one
of three ways chosen by what standard error is:

- ``live`` (standard error is a terminal): a rich display (spinner, bar, done of total, elapsed
  time), erased when the step ends;
- ``plain`` (a pipe, a file, CI): at most a few plain lines, such as ``dealing 100,000
  rounds…``, ``compiling the kernels (first run only)…`` and ``done in 37.2 s``, never a
  control sequence;
- ``quiet`` (not a terminal, and the command prints ``--json``): nothing, so standard error
  stays empty unless something is wrong.

rich's ``TTY_INTERACTIVE`` variable overrides the choice: ``1`` asks for the live display
whatever standard error is, ``0`` for plain lines (or none with ``--json``) on a terminal.
``FORCE_COLOR`` alone does not make a CI log live.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

__all__ = ["COMPILING", "Feedback", "Step", "stderr_mode"]

COMPILING = "compiling the kernels (first run only)…"
"""What a step says while numba compiles (numba then caches the kernels on disk)."""

Mode = Literal["live", "plain", "quiet"]


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def stderr_mode(json_output: bool) -> Mode:
    """How feedback is shown: ``live`` on a terminal, else ``plain`` lines, or ``quiet`` when the
    command prints JSON; ``TTY_INTERACTIVE=1``/``0`` forces live on or off."""
    asked = os.environ.get("TTY_INTERACTIVE")
    if asked == "1":
        return "live"
    dumb = os.environ.get("TERM", "").lower() in ("dumb", "unknown")
    if asked != "0" and _is_terminal(sys.stderr) and not dumb:
        return "live"
    return "quiet" if json_output else "plain"


class _DoneColumn(ProgressColumn):
    """``done/total unit`` once the total is known; nothing before."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        unit = task.fields.get("unit", "")
        return Text(f"{int(task.completed):,}/{int(task.total):,}{' ' + unit if unit else ''}")


class Step:
    """One piece of a command's work, as its display sees it: pass :meth:`update` as a
    ``progress(done, total)`` callback, or call :meth:`advance`."""

    def __init__(self, progress: Progress | None, task: TaskID | None, label: str) -> None:
        self._progress = progress
        self._task = task
        self.label = label

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` of ``total`` (``None``: the total as it was)."""
        if self._progress is not None and self._task is not None:
            if total is None:
                self._progress.update(self._task, completed=done)
            else:
                self._progress.update(self._task, completed=done, total=total)

    def advance(self, amount: int = 1) -> None:
        """``amount`` more done."""
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, amount)

    def relabel(self, label: str) -> None:
        """Show ``label`` from now on."""
        self.label = label
        self.show(label)

    def show(self, description: str) -> None:
        """Show ``description`` for now, keeping the label (the compiling note)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=description, refresh=True)


class Feedback:
    """The feedback of one command run (see the module's description)."""

    def __init__(self, *, json_output: bool = False) -> None:
        self.mode: Mode = stderr_mode(json_output)
        self.json_output = json_output
        self.compile_seconds = 0.0
        """Seconds numba spent compiling during the steps so far."""
        self._compiling = 0
        self._compiled = False
        self._printed = False
        self._reported = False
        self._step: Step | None = None

    def _say(self, text: str) -> None:
        """One plain line on standard error (plain mode only)."""
        if self.mode == "plain":
            print(text, file=sys.stderr, flush=True)
            self._printed = True

    @contextmanager
    def step(
        self,
        label: str,
        *,
        total: int | None = None,
        unit: str = "",
        announce: bool = False,
        visible: bool = True,
    ) -> Iterator[Step]:
        """Run one piece of work under ``label``: live, a display (when ``visible``) with a bar
        once ``total`` is known; plain, the line ``label…`` first when ``announce`` (work that
        is long by its size), and ``done in …`` at the end when any line was written."""
        started = time.perf_counter()
        self._printed = False
        with ExitStack() as stack:
            progress: Progress | None = None
            task: TaskID | None = None
            if self.mode == "live" and visible:
                progress = Progress(
                    SpinnerColumn(),
                    TextColumn("{task.description}"),
                    BarColumn(),
                    _DoneColumn(),
                    TimeElapsedColumn(),
                    console=Console(
                        stderr=True, force_terminal=True, force_interactive=True, highlight=False
                    ),
                    transient=True,
                    # what the command prints meanwhile goes above the display, but only when
                    # standard output is a terminal too (never divert results to stderr)
                    redirect_stdout=_is_terminal(sys.stdout),
                )
                stack.enter_context(progress)
                task = progress.add_task(label, total=total, unit=unit)
            if announce:
                self._say(f"{label}…")
            step = Step(progress, task, label)
            self._step = step
            try:
                yield step
            finally:
                self._step = None
        self._finish(time.perf_counter() - started)

    def _finish(self, seconds: float) -> None:
        if self.mode == "plain" and self._printed:
            compiling = f" ({self.compile_seconds:.1f} s compiling the kernels)"
            self._say(f"done in {seconds:.1f} s{compiling if self._compiled else ''}")
        elif self.mode == "live" and self._compiled and not self._reported and not self.json_output:
            self._reported = True
            Console(stderr=True, highlight=False).print(
                f"[dim]compiled the kernels in {self.compile_seconds:.1f} s (first run only: "
                "numba caches them)[/]"
            )

    def compile_started(self) -> None:
        """numba started compiling: say so (once in plain lines; live, while it lasts)."""
        self._compiling += 1
        if not self._compiled:
            self._compiled = True
            self._say(COMPILING)
        if self._step is not None:
            self._step.show(COMPILING)

    def compile_finished(self, seconds: float) -> None:
        """numba finished compiling after ``seconds``."""
        self._compiling = max(0, self._compiling - 1)
        self.compile_seconds += seconds
        if self._step is not None and not self._compiling:
            self._step.show(self._step.label)
