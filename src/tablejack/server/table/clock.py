"""A table's clock and automated dealer: the countdown of the open window — wagering at an
automated table, a decision window (633c.5(p)(2)) — and what it does when it runs out, and the
next round an automated table opens by itself."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from tablejack.server.support.logs import bind
from tablejack.server.table.errors import RefusedError
from tablejack.server.table.games.base import WindowKey
from tablejack.server.table.steps import WritePath, applier
from tablejack.server.table.views import TableViews
from tablejack.store import EventIn

__all__ = ["Clock"]

log = logging.getLogger("tablejack.server")


class Clock:
    """The countdown and the automated dealer of ``table``: ``steps`` writes what the clock
    sends, ``apply_waiting`` applies the requests that came before it ran out, ``open_round``
    opens the next round, ``changed`` announces a change."""

    def __init__(
        self,
        table: TableViews,
        steps: WritePath,
        *,
        apply_waiting: Callable[[], Awaitable[None]],
        open_round: Callable[[str], Awaitable[str]],
        changed: Callable[[], None],
    ) -> None:
        self.table = table
        self.steps = steps
        self.apply_waiting = apply_waiting
        self.open_round = open_round
        self.changed = changed
        self.countdown_task: asyncio.Task[None] | None = None
        self.auto_task: asyncio.Task[None] | None = None

    def window(self) -> WindowKey | None:
        """The open window the clock counts down, or None."""
        table = self.table
        round_ = table.round
        if round_ is None or table.status != "open" or round_.is_complete:
            return None
        if round_.phase.value == "wagering":
            if table.config.automated and any(w.amount for w in round_.wagers):
                return ("wagering", table.number)
            return None
        return table.adapter.window(round_)

    def follow(self) -> None:
        """Restart the countdown if the window changed; at an automated table with no round
        in progress, start the next."""
        table = self.table
        key = self.window()
        if key != table.window_key:
            if self.countdown_task is not None:
                self.countdown_task.cancel()
                self.countdown_task = None
            table.window_key = key
            table.deadline = None
            if key is not None:
                seconds = table.config.wagering_seconds if key[0] == "wagering" else table.seconds
                table.window_seconds = seconds
                table.deadline = table.floor.clock() + seconds
                self.countdown_task = asyncio.create_task(self.countdown(key, seconds))
        if (
            table.config.automated
            and table.status == "open"
            and (table.round is None or table.round.is_complete)
            and (self.auto_task is None or self.auto_task.done())
        ):
            self.auto_task = asyncio.create_task(self.next_round())

    async def countdown(self, key: WindowKey, seconds: float) -> None:
        """Wait out the window's ``seconds``; then, if the window is still open, send what the
        game's countdown sends (wagering: close it)."""
        table = self.table
        bind(table=table.id, round=table.round_id, terminal="clock")  # the logs: the clock's
        await asyncio.sleep(seconds)
        await self.apply_waiting()  # what came before the clock ran out, first
        async with table.lock:
            if table.window_key != key or table.round is None:
                return
            commands = (
                ["dealer close-wagering"]
                if key[0] == "wagering"
                else table.adapter.on_countdown(table.round)
            )
            for text in commands:
                try:
                    await self.steps.run(
                        applier(text),
                        EventIn("command", {"text": text}, actor="clock", terminal="clock"),
                    )
                except RefusedError as refusal:
                    log.warning(
                        "table %s: the clock's %r was refused: %s", table.id, text, refusal.message
                    )
                    break
            table.window_key = None
        self.changed()

    async def next_round(self) -> None:
        """The automated dealer: open the next round after the pause between rounds."""
        table = self.table
        bind(table=table.id, round=None, terminal="auto-dealer")
        await asyncio.sleep(table.config.between_rounds_seconds if table.round is not None else 0)
        try:
            await self.open_round("auto-dealer")
        except RefusedError as refusal:
            table.halt_reason = refusal.message
            table.broadcast()
        except Exception:  # the store's: the next change tries again
            log.exception("table %s: the automated dealer could not open a round", table.id)

    async def stop(self, *also: asyncio.Task[None] | None) -> None:
        """Cancel the countdown and the automated dealer (and the tasks ``also``)."""
        for task in (self.countdown_task, self.auto_task, *also):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
