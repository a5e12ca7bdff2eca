"""Terminal requests applied in batches: a table's worker applies every wager and decision
waiting when it gets the table's lock, one after the other, and commits them in ONE transaction
(each request's events with its own ledger entries); then it answers each and announces the
change once (:meth:`Batches.submit`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from tablejack.core.errors import TablejackError
from tablejack.server.support.logs import bind
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.errors import RefusedError
from tablejack.server.table.requests import Reply, ReplyCache, Request
from tablejack.server.table.steps import Meter, WritePath, bind_postings
from tablejack.server.table.views import TableViews
from tablejack.store import (
    EventIn,
    EventRecord,
    InsufficientFundsError,
    LimitRefusedError,
    Transfer,
)

__all__ = ["Batches"]

log = logging.getLogger("tablejack.server")


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Batches:
    """The request queue and the worker of ``table``: ``steps`` writes, ``replies`` keeps the
    answers, ``changed`` announces a change (the table's clock, automated dealer, broadcast)."""

    def __init__(
        self,
        table: TableViews,
        steps: WritePath,
        replies: ReplyCache,
        changed: Callable[[], None],
        *,
        step_window: float,
        step_wait: float,
    ) -> None:
        self.table = table
        self.steps = steps
        self.replies = replies
        self.changed = changed
        self.step_window = step_window
        """Seconds the worker, idle when a request arrives, waits for those that follow it
        (see :meth:`submit`)."""
        self.step_wait = max(step_wait, step_window)
        """Seconds at most the worker waits, in a decision window, for the answers of every
        player the window waits for (see :meth:`gather`)."""
        self.queue: list[Request] = []
        self.worker: asyncio.Task[None] | None = None
        self.missing: set[str] = set()
        """The awaited players with no request waiting yet, while the worker gathers."""
        self.gathered: asyncio.Future[None] | None = None
        """Done when :attr:`missing` empties (the worker then stops gathering)."""

    async def submit(self, step: Callable[[Any], EventIn], player: str, command_id: str) -> Reply:
        """Queue a terminal's wager or decision. The table's worker applies every request that
        is waiting when it gets the table's lock, one after the other, and commits them in ONE
        transaction (each request's events with its own ledger entries); then it answers each
        and broadcasts once. A request the engine refuses changes nothing and is answered at
        once; the others go on.

        A worker that was idle when a request arrives first waits the table's
        :attr:`step_window` for the requests that follow it: the terminals of a table answer
        the same update within a few milliseconds of each other, and the first to answer would
        otherwise make a step, a transaction and an update of its own. In a decision window it
        waits instead for every player the window waits for, :attr:`step_wait` at most
        (:meth:`gather`). Requests that arrive while a batch is being applied and committed go
        in the next batch at once."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.queue.append(Request(step, player, command_id, future))
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self.work())
        elif self.missing:
            self.missing.discard(player)
            if not self.missing and self.gathered is not None:
                _finish(self.gathered)
        return await future

    async def work(self) -> None:
        """The worker: the step window, then every batch waiting."""
        table = self.table
        bind(table=table.id, round=table.round_id, terminal=None)  # the logs: the table's batch
        if self.step_wait > 0:  # (never less than the step window)
            await self.gather()
        while self.queue:
            await self.apply_waiting()

    async def gather(self) -> None:
        """The step window. In a decision window, whose players the table knows, the worker
        waits until every one of them has a request waiting — at once when they all have,
        :attr:`step_wait` at most when some are slow — so one decision round is one step;
        otherwise (wagers: who will wager is unknown) it waits :attr:`step_window`."""
        round_ = self.table.round
        missing = set(self.table.adapter.awaited(round_)) if round_ is not None else set()
        if not missing:
            if self.step_window > 0:
                await asyncio.sleep(self.step_window)
            return
        missing.difference_update(request.player for request in self.queue)
        if not missing:
            return
        loop = asyncio.get_running_loop()
        gathered = self.gathered = loop.create_future()
        self.missing = missing
        timer = loop.call_later(self.step_wait, _finish, gathered)
        try:
            await gathered
        finally:
            timer.cancel()
            self.missing = set()
            self.gathered = None

    async def apply_waiting(self) -> None:
        """Apply the requests waiting now as one batch, under the table's lock, then announce
        the change (nothing when none wait). The clock calls it before it acts: a decision or
        a wager waiting in the step window reached the server before the clock ran out, and
        counts as made in time (633c.5(p)(2))."""
        if not self.queue:
            return
        async with self.table.lock:
            batch, self.queue = self.queue, []
            try:
                await self.run_batch(batch)
            except BaseException as error:
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(
                            error if isinstance(error, Exception) else RuntimeError("stopped")
                        )
                if not isinstance(error, Exception):
                    raise
                log.exception("table %s: a batch failed; the round is rebuilt", self.table.id)
                await self.steps.reload()
        self.changed()

    async def run_batch(self, batch: list[Request]) -> None:
        """Apply a batch of terminal requests and commit them together (see :meth:`submit`).
        When a request would overdraw an account, or the commit fails, the round is rebuilt
        from its log and each request is run alone."""
        table = self.table
        shoe = table.shoe
        mark = shoe.mark() if shoe is not None else 0
        work = table.round
        books = Books(table.id, dict(table.books.escrowed), table.books.settled)
        events: list[EventIn] = []
        transfers: list[Transfer] = []
        meters: list[Meter] = []
        done: list[tuple[Request, int]] = []
        echoes: list[tuple[Request, Request]] = []
        firsts: dict[tuple[str, str], Request] = {}
        status: str | None = None
        alone = False
        for request in batch:
            if request.future.done():
                continue
            seen = self.replies.repeat(request.player, request.command_id)
            if seen is not None:
                request.future.set_result(seen)
                continue
            key = (request.player, request.command_id)
            if key in firsts:
                echoes.append((request, firsts[key]))
                continue
            firsts[key] = request
            refusal = self.steps.refusal()
            if refusal is not None or work is None:
                request.future.set_exception(
                    refusal or RefusedError("round", "No round is open.", "PA 633c.5(n)")
                )
                continue
            try:
                event = request.step(work)
            except TablejackError as error:
                request.future.set_exception(RefusedError.from_engine(error))
                continue
            own = len(events)
            events.append(event)
            step = self.steps.consequences(work, events, books, completed=status is not None)
            status = status or step.status
            try:
                table.floor.check_funds([*transfers, *step.moved])
            except InsufficientFundsError:
                alone = True
                break
            index = len(events) - 1
            transfers += bind_postings(step.moved, own, index)
            meters += step.meters
            books.accept(step.escrowed, step.settled)
            done.append((request, index))
        records: list[EventRecord] = []
        if not alone and events:
            try:
                records = await self.steps.commit_round(events, transfers, meters, status)
            except LimitRefusedError:  # a player's limit: the others' requests go on alone
                alone = True
            except Exception:
                log.exception(
                    "table %s: a batch of %d steps failed; each runs alone", table.id, len(done)
                )
                alone = True
        if alone:
            if shoe is not None:
                shoe.reset(mark)
            await self.steps.reload()
            await self._run_alone(batch, echoes)
        else:
            table.books = books
            if records:
                table.last_seq = records[-1].seq
            table.floor.book(transfers)
            for request, index in done:
                reply = {"ok": True, "round_id": table.round_id, "seq": records[index].seq}
                self.replies.remember(request.player, request.command_id, reply)
                if not request.future.done():  # (its socket may have gone meanwhile)
                    request.future.set_result(reply)
        for echo, first in echoes:
            if echo.future.done():
                continue
            if first.future.cancelled():
                echo.future.set_exception(
                    RefusedError("repeat", "The first copy was abandoned.", "protocol")
                )
            elif first.future.exception() is not None:
                echo.future.set_exception(first.future.exception())  # type: ignore[arg-type]
            else:
                echo.future.set_result({**first.future.result(), "repeat": True})

    async def _run_alone(self, batch: list[Request], echoes: list[tuple[Request, Request]]) -> None:
        """Each request of a failed batch as a step of its own (the round rebuilt first)."""
        for request in batch:
            if request.future.done() or any(request is echo for echo, _ in echoes):
                continue
            try:
                reply = await self.steps.run(
                    request.step, player=request.player, command_id=request.command_id
                )
            except Exception as error:  # a refusal, or the store's error
                if not request.future.done():
                    request.future.set_exception(error)
            else:
                if not request.future.done():
                    request.future.set_result(reply)

    async def stop(self) -> None:
        """Refuse every request still waiting for the worker (the table stopped here)."""
        waiting, self.queue = self.queue, []
        for request in waiting:
            if not request.future.done():
                request.future.set_exception(
                    RefusedError("table", f"Table {self.table.id} stopped here.", "table status")
                )
