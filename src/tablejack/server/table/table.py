"""One table on the floor: the round in progress, its log, its clock, its cards and its
terminals.

A :class:`Table` owns its round. Every change — a terminal's wager or decision, a dealer
command, a card from the reader, the countdown clock running out — runs under the table's lock,
one at a time: the engine verifies and applies it, the server books the money it moves
(:mod:`tablejack.server.table.bookkeeping`), the events and ledger entries are committed in ONE
transaction, and only then is anything broadcast. A step whose commit fails (a wager above the
account's balance, a database error) leaves the table as it was: the round is rebuilt from its
log, which never saw the step.

On start a table replays the log of any round still open: the round resumes where it stood, or,
under the operator's ``recovery = "void"`` policy, is voided and every unsettled wager refunded.
A process that takes a table over from another (a floor of several processes) starts it the
same way; every write of the table then carries the lease's fence (:attr:`Table.fence`).

A table imports nothing of the floor: it is handed the floor that runs it and its collaborators
— its tilts and its shoe's card inventory — as the small interfaces of
:mod:`tablejack.server.table.collaborators`. What it shows (its views and the broadcast) is in
:mod:`tablejack.server.table.views`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tablejack.core.cards import Card
from tablejack.core.errors import InvalidNotationError, TablejackError
from tablejack.core.money import format_cents
from tablejack.games import GAMES
from tablejack.server.support.logs import bind
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.cards import VirtualShoe
from tablejack.server.table.collaborators import CardInventory, Host, LockOut
from tablejack.server.table.config import TableConfig
from tablejack.server.table.errors import RefusedError, fault
from tablejack.server.table.games import adapter_for
from tablejack.server.table.procedures import Procedures
from tablejack.server.table.replay import apply_command, replay_round
from tablejack.server.table.views import TableViews
from tablejack.store import (
    EventIn,
    EventRecord,
    Fence,
    InsufficientFundsError,
    LimitRefusedError,
    Step,
    Transfer,
)
from tablejack.store.policy import Actor, Role

__all__ = ["AUTOMATION_RULE", "Table"]

log = logging.getLogger("tablejack.server")

VOID_RULE = "PA 633a.14"
AUTOMATION_RULE = "table automation"
"""An automated table's console refusal: the server opens rounds, closes wagering and runs the
clock itself (docs/server.md, "Dealer console")."""
AUTOMATED_COMMANDS = ("open-round", "close-wagering", "countdown-expired")


def bind_postings(moved: list[Transfer], request: int, last: int) -> list[Transfer]:
    """Name the event that caused each posting: a wager (or a double, split, insurance) the
    event of the player's own request, so the policy can see that the money moved is his; a
    settlement the step's last event (the card or the ``complete`` that decided it)."""
    return [dataclasses.replace(t, event=request if t.kind == "wager" else last) for t in moved]


@dataclass(eq=False)
class _Request:
    """A terminal's wager or decision waiting for the table's worker."""

    step: Callable[[Any], EventIn]
    """Applies the request to the round (raises if the engine refuses) and returns its event."""
    player: str
    command_id: str
    future: asyncio.Future[dict[str, Any]]


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _applier(text: str) -> Callable[[Any], None]:
    def apply(round_: Any) -> None:
        apply_command(round_, text)

    return apply


class Table(TableViews):
    """A table of the floor (see the module docstring). ``floor`` runs it; ``lockout`` and
    ``card_inventory`` make the table's tilts and its shoe's card inventory for it."""

    def __init__(
        self,
        floor: Host,
        config: TableConfig,
        *,
        lockout: Callable[[Table], LockOut],
        card_inventory: Callable[[Table], CardInventory],
        fence: Fence | None = None,
    ) -> None:
        self.floor = floor
        self.config = config
        self.id = config.id
        self.fence = fence
        """The lease this process runs the table under (a floor of several processes on
        PostgreSQL): every write of the table carries it, and the store refuses a write whose
        lease another process has taken over (:mod:`tablejack.store.fencing`)."""
        self.actor = Actor(Role.TABLE, config.id)
        """Who books this table's wagers, settlements and refunds (the money-movement policy)."""
        self.rules = config.rules
        self.game = config.rules.game
        self.adapter = adapter_for(self.game)
        self.lock = asyncio.Lock()
        self.status = "closed"
        self.round = None
        self.round_id = None
        self.number = 0
        self.books = Books(self.id)
        self.shoe = (
            VirtualShoe(
                self.rules.decks,
                seed=config.seed,
                penetration=self.rules.penetration,
                order=config.cards,
            )
            if config.source == "virtual"
            else None
        )
        self.procedures = Procedures()
        self.subscribers = set()
        """The sockets watching the table (the broadcast's audience)."""
        self.selected = {}
        """The position each player selected at each terminal (633c.5(l)): (player, terminal)
        → position. A selection belongs to the terminal it was made at; a player signed in at
        two terminals selects at each."""
        self.recent = {}
        self.window_key = None
        self.deadline = None
        self.window_seconds = 0.0
        self._clock_task: asyncio.Task[None] | None = None
        self._auto_task: asyncio.Task[None] | None = None
        self.halt_reason = ""
        self.tilts = []
        """Active tilts (PA 605a lock-out): the table's own and its terminals' (kept by
        :attr:`lockout`)."""
        self.irregular_round = None
        self.void_failure = None
        """Why the last void of the round in progress could not be written: the table holds
        the round (halted) until a supervisor voids it again."""
        self.needs_reload = False
        self.inventory = None
        """The card inventory of the shoe in use (kept by :attr:`card_inventory`)."""
        self.last_seq = 0
        self.broadcast_pending = False
        self.broadcast_interval = floor.broadcast_interval
        self.last_broadcast = float("-inf")
        """When the last update was sent (the event loop's clock; see :meth:`broadcast`)."""
        self._queue: list[_Request] = []
        self._worker: asyncio.Task[None] | None = None
        self.step_window = floor.step_window
        """Seconds the worker, idle when a request arrives, waits for those that follow it
        (see :meth:`_submit`)."""
        self.step_wait = max(floor.step_wait, self.step_window)
        """Seconds at most the worker waits, in a decision window, for the answers of every
        player the window waits for (see :meth:`_gather`)."""
        self._missing: set[str] = set()
        """The awaited players with no request waiting yet, while the worker gathers."""
        self._gathered: asyncio.Future[None] | None = None
        """Done when :attr:`_missing` empties (the worker then stops gathering)."""
        self.stopped = False
        """Stopped (shutdown, or the table moved to another process): no clock, automated
        dealer or broadcast starts again."""
        self.seconds = self.adapter.countdown_seconds(self.rules, config.countdown_seconds)
        self.default_action = self.adapter.countdown_default(self.rules)
        self.lockout = lockout(self)
        """The table's tilts (PA 605a lock-out)."""
        self.card_inventory = card_inventory(self)
        """The card inventory of the table's shoe (PA 605a)."""

    # -- start, recovery -------------------------------------------------------------------

    async def start(self, status: str) -> None:
        """Load the procedure log, recover an open round, and start the automated dealer."""
        store = self.floor.store
        self.number = await store.last_round_number(self.id)
        if await store.round(self.procedures_id) is None:
            await store.commit(
                Step(
                    self.procedures_id,
                    events=[EventIn("table", {"game": self.game, "config": self.config.to_json()})],
                    open_round=(self.id, 0, self.game, "procedures"),
                    at_us=self.floor.now_us(),
                    fence=self.fence,
                )
            )
        procedure_log = await store.events(self.procedures_id)
        for record in procedure_log:
            self.procedures.apply(record)
        self.lockout.restore(procedure_log)  # PA 605a: the tilts and the shoe's inventory
        await self.card_inventory.restore(procedure_log)
        self.status = status
        open_rounds = [
            row
            for state in ("open", "irregular")
            for row in await store.rounds(table_id=self.id, status=state, limit=10)
        ]
        for row in sorted(open_rounds, key=lambda r: r["number"]):
            await self._recover(row)
        await self.lockout.started()
        self.changed()

    async def _recover(self, row: dict[str, Any]) -> None:
        events = await self.floor.store.events(row["id"])
        round_ = replay_round(events, self.adapter)
        self.round, self.round_id = round_, row["id"]
        self.last_seq = events[-1].seq if events else 0
        self.books = Books(
            self.id, {w.id: w.amount for w in round_.wagers}, len(round_.settlements)
        )
        if self.shoe is not None:
            self.shoe.shuffle(out_of_play=round_.cards_dealt)
        if row["status"] == "irregular":
            self.irregular_round = row["id"]
            self.status = "halted"
            self.halt_reason = "irregularity before the restart; a supervisor must void the round"
        elif self.config.recovery == "void":
            try:
                await self._void(
                    "the server restarted; the operator's policy voids the open round",
                    by="recovery",
                )
            except RefusedError as refusal:  # held, halted: a supervisor voids it again
                log.error("table %s: %s", self.id, refusal.message)
        else:
            log.info("table %s resumes round %s", self.id, row["id"])
            if self.status == "closed":
                self.status = "open"
            try:
                await self._commit_auto(self.round, [], resumed=True)
            except Exception as error:  # the store failed: a storage_error tilt (PA 605a)
                await self.lockout.storage_fault(error)

    # -- procedures (633c.5(d), (g), (i)) --------------------------------------------------

    async def log_procedure(self, event: EventIn, *, at_us: int | None = None) -> EventRecord:
        """Append ``event`` to the table's procedure log and take it into the gaming-day
        record (the caller holds the table's lock, or runs where no step can interleave)."""
        [record] = await self.floor.store.commit(
            Step(
                self.procedures_id,
                events=[event],
                at_us=self.floor.now_us() if at_us is None else at_us,
                fence=self.fence,
            )
        )
        self.procedures.apply(record)
        return record

    async def record_procedure(self, kind: str, payload: dict[str, Any], by: str) -> None:
        """Append a gaming-day procedure to the table's log (who, when, result)."""
        if kind == "reader_inspection":
            payload = {**payload, "gaming_day": self.gaming_day()}
        async with self.lock:
            await self.log_procedure(EventIn(kind, {**payload, "by": by}, actor=by))
            if kind == "decks_registered" and self.shoe is not None and self.round is None:
                self.shoe.shuffle()
        self.changed()

    # -- opening and closing ---------------------------------------------------------------

    async def set_status(self, status: str) -> None:
        """Open or close the table (a round in progress is finished first)."""
        async with self.lock:
            self.status = status if self.status != "halted" else self.status
            await self.floor.store.set_table_status(self.id, status, fence=self.fence)
        self.changed()

    async def open_round(self, by: str) -> str:
        """Start a new round (dealer, or the automated dealer)."""
        async with self.lock:
            if self.status != "open":
                raise RefusedError("table", f"Table {self.id} is {self.status}.", "table status")
            if self.round is not None and not self.round.is_complete:
                raise RefusedError(
                    "round", f"Round {self.round_id} is still in progress.", "PA 633c.5(n)"
                )
            problem = self.procedure_problem()
            if problem is not None:
                raise problem
            if self.shoe is not None and self.shoe.needs_shuffle:
                self.shoe.shuffle()
                await self.floor.store.commit(
                    Step(
                        self.procedures_id,
                        events=[
                            EventIn(
                                "shuffle",
                                {"shuffles": self.shoe.shuffles, **self.shoe.loaded()},
                                actor=by,
                            )
                        ],
                        at_us=self.floor.now_us(),
                        fence=self.fence,
                    )
                )
            spec = GAMES[self.game]
            number = self.number + 1
            round_id = f"{self.id}-{number:06d}"
            round_ = spec.new_round(self.rules, None)
            event = EventIn(
                "open",
                {
                    "game": self.game,
                    "rules": self.rules.to_mapping(),
                    "table": self.id,
                    "number": number,
                    "source": self.config.source,
                },
                actor=by,
            )
            await self.floor.store.commit(
                Step(
                    round_id,
                    events=[event],
                    open_round=(self.id, number, self.game, "round"),
                    at_us=self.floor.now_us(),
                    fence=self.fence,
                )
            )
            self.number, self.round_id, self.round = number, round_id, round_
            self.last_seq = 1
            self.halt_reason = ""
            self.books = Books(self.id)
            self.recent.clear()
        self.changed()
        return round_id

    # -- the step ----------------------------------------------------------------------------

    async def _commit_round(
        self,
        events: list[EventIn],
        transfers: list[Transfer],
        meters: list[tuple[str, str, int, int]],
        status: str | None,
    ) -> list[EventRecord]:
        """Write events of the open round with the money they move and the meters they raise,
        as this table, under its lease (the store refuses the step when the lease moved on)."""
        assert self.round_id is not None
        return await self.floor.store.commit(
            Step(
                self.round_id,
                events,
                transfers,
                meters,
                status=status,
                at_us=self.floor.now_us(),
                actor=self.actor,
                fence=self.fence,
            )
        )

    async def _commit_auto(
        self, work: Any, events: list[EventIn], *, resumed: bool = False
    ) -> list[EventRecord]:
        """Deal what the virtual shoe must deal, book the money, commit, adopt ``work``."""
        mark = self.shoe.mark() if self.shoe is not None else 0
        try:
            if self.shoe is not None:
                while work.card_request is not None:
                    card = self.shoe.draw()
                    work.deal_card(card)
                    events.append(
                        EventIn(
                            "card",
                            {"code": card.code, "read_us": self.floor.now_us(), "source": "shoe"},
                            actor="shoe",
                        )
                    )
            moved, meters, escrowed, settled = self.books.diff(work.wagers, work.settlements)
            status = None
            if work.is_complete:
                status = "complete"
                events.append(
                    EventIn(
                        "complete",
                        {
                            "house_net": work.house_net(),
                            "settlements": [s.to_json() for s in work.settlements],
                        },
                    )
                )
            if not events and not moved:
                return []
            transfers = bind_postings(moved, 0, len(events) - 1)
            self.floor.check_funds(transfers)
            records = await self._commit_round(events, transfers, meters, status)
        except BaseException:
            if self.shoe is not None:
                self.shoe.reset(mark)
            raise
        self.books.accept(escrowed, settled)
        self.round = work
        if records:
            self.last_seq = records[-1].seq
        self.floor.book(transfers)
        del resumed
        return records

    async def _run(
        self,
        apply: Callable[[Any], Any],
        event: EventIn | None = None,
        *,
        player: str = "",
        command_id: str | None = None,
    ) -> dict[str, Any]:
        """Apply one request to the round, commit it with its consequences, answer it.
        ``apply`` mutates the round; it may return the event to log (else ``event``)."""
        if command_id is not None and player:
            seen = self.recent.get(player, OrderedDict()).get(command_id)
            if seen is not None:
                return {**seen, "repeat": True}
        if self.status == "halted":
            raise RefusedError(
                "halted", f"Table {self.id} is halted: {self.halt_reason}", "PA 633a.14"
            )
        if self.round is None:
            raise RefusedError("round", f"No round is open at table {self.id}.", "PA 633c.5(n)")
        work = self.round
        try:
            made = apply(work)
        except TablejackError as error:
            raise RefusedError.from_engine(error) from None
        logged = made if isinstance(made, EventIn) else event
        assert logged is not None
        try:
            records = await self._commit_auto(work, [logged])
        except InsufficientFundsError as error:
            await self.reload()
            raise RefusedError(
                "balance",
                f"The wager needs {format_cents(error.needed)}; the account holds "
                f"{format_cents(error.balance)}.",
                "account balance",
            ) from None
        except LimitRefusedError as error:  # a limit or self-exclusion, held by the store
            await self.reload()
            raise RefusedError(error.code, error.message, error.rule) from None
        except Exception as error:  # the store failed: a storage_error tilt (PA 605a)
            raise await self.lockout.storage_fault(error) from error
        reply = {"ok": True, "round_id": self.round_id, "seq": records[-1].seq if records else None}
        if command_id is not None and player:
            answered = self.recent.setdefault(player, OrderedDict())
            answered[command_id] = reply
            while len(answered) > 256:
                answered.popitem(last=False)
        return reply

    async def reload(self) -> None:
        """Rebuild the round from the log after a failed commit."""
        if self.round_id is None:
            return
        events = await self.floor.store.events(self.round_id)
        self.round = replay_round(events, self.adapter)
        self.books = Books(
            self.id, {w.id: w.amount for w in self.round.wagers}, len(self.round.settlements)
        )

    # -- requests ----------------------------------------------------------------------------

    def select_position(self, player: str, position: int, terminal: str = "") -> None:
        """Remember the position a player selected at ``terminal`` (633c.5(l)); without a
        terminal (code that drives a table directly), for each of his terminals that selected
        none."""
        if not 1 <= position <= self.adapter.positions(self.rules):
            raise RefusedError(
                "position",
                f"Position {position} does not exist; select 1 to "
                f"{self.adapter.positions(self.rules)} (PA 633c.5(l)).",
                "PA 633c.5(l)",
            )
        self.selected[(player, terminal)] = position

    def place_wager_on(
        self,
        round_: Any,
        player: str,
        position: int | None,
        kind: str,
        amount: int,
        spots: list[int] | None,
    ) -> None:
        """Place a terminal's wager on ``round_``: refused first when wagering is closed,
        then by the engine (limits, position, side wagers)."""
        closed = self.wagering_closed(round_)
        if closed is not None:
            raise closed
        if spots is not None:
            self.adapter.place_spot_wagers(round_, player, position, amount, spots)
        else:
            self.adapter.place_wager(round_, player, position, kind, amount)

    def try_wager(
        self,
        player: str,
        terminal: str,
        kind: str,
        amount: int,
        spots: list[int] | None = None,
    ) -> None:
        """Raise the refusal a wager would meet now — the table's status, wagering closed,
        the engine's limits, position and side wagers, the account's balance — without placing
        anything (the wager is tried on a copy of the round). The server asks this before it
        asks a player to confirm a large wager, so a wager the table refuses is never asked
        twice (PA 605a double confirmation)."""
        refusal = self._refusal()
        if refusal is not None:
            raise refusal
        trial = copy.deepcopy(self.round)
        try:
            self.place_wager_on(
                trial, player, self.position_of(player, terminal), kind, amount, spots
            )
        except TablejackError as error:
            raise RefusedError.from_engine(error) from None
        balance = self.floor.balances.get(player)
        if balance is not None and amount > balance:
            raise RefusedError(
                "balance",
                f"The wager needs {format_cents(amount)}; the account holds "
                f"{format_cents(balance)}.",
                "account balance",
            )

    async def wager(
        self,
        player: str,
        terminal: str,
        kind: str,
        amount: int,
        command_id: str,
        spots: list[int] | None = None,
    ) -> dict[str, Any]:
        """A terminal's wager before the first card (633c.5(k)); on a multi-action table the
        three spot amounts (``spots``; ``amount`` is their sum)."""

        def step(round_: Any) -> EventIn:
            position = self.position_of(player, terminal)
            self.place_wager_on(round_, player, position, kind, amount, spots)
            payload: dict[str, Any] = {
                "player": player,
                "position": position,
                "kind": kind,
                "amount": amount,
                "command_id": command_id,
            }
            if spots is not None:
                payload["spots"] = list(spots)
            return EventIn(
                "wager",
                payload,
                actor=player,
                terminal=terminal,
            )

        return await self._submit(step, player, command_id)

    async def action(
        self,
        player: str,
        terminal: str,
        verb: str,
        amount: int | None,
        position: int | None,
        command_id: str,
        spots: list[int] | None = None,
    ) -> dict[str, Any]:
        """A terminal player's decision (``spots``: the spots a multi-action double names)."""

        def step(round_: Any) -> EventIn:
            actor = self.adapter.actor(round_, player, position)
            text = self.adapter.command_text(actor, verb, amount, spots)
            apply_command(round_, text)
            return EventIn(
                "command",
                {"text": text, "command_id": command_id},
                actor=player,
                terminal=terminal,
            )

        return await self._submit(step, player, command_id)

    # -- terminal requests, applied in batches -------------------------------------------------

    async def _submit(
        self, step: Callable[[Any], EventIn], player: str, command_id: str
    ) -> dict[str, Any]:
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
        (:meth:`_gather`). Requests that arrive while a batch is being applied and committed go
        in the next batch at once."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(step, player, command_id, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work())
        elif self._missing:
            self._missing.discard(player)
            if not self._missing and self._gathered is not None:
                _finish(self._gathered)
        return await future

    async def _work(self) -> None:
        bind(table=self.id, round=self.round_id, terminal=None)  # the logs: the table's batch
        if self.step_wait > 0:  # (never less than the step window)
            await self._gather()
        while self._queue:
            await self._apply_waiting()

    async def _gather(self) -> None:
        """The step window. In a decision window, whose players the table knows, the worker
        waits until every one of them has a request waiting — at once when they all have,
        :attr:`step_wait` at most when some are slow — so one decision round is one step;
        otherwise (wagers: who will wager is unknown) it waits :attr:`step_window`."""
        round_ = self.round
        missing = set(self.adapter.awaited(round_)) if round_ is not None else set()
        if not missing:
            if self.step_window > 0:
                await asyncio.sleep(self.step_window)
            return
        missing.difference_update(request.player for request in self._queue)
        if not missing:
            return
        loop = asyncio.get_running_loop()
        gathered = self._gathered = loop.create_future()
        self._missing = missing
        timer = loop.call_later(self.step_wait, _finish, gathered)
        try:
            await gathered
        finally:
            timer.cancel()
            self._missing = set()
            self._gathered = None

    async def _apply_waiting(self) -> None:
        """Apply the requests waiting now as one batch, under the table's lock, then announce
        the change (nothing when none wait). The clock calls it before it acts: a decision or
        a wager waiting in the step window reached the server before the clock ran out, and
        counts as made in time (633c.5(p)(2))."""
        if not self._queue:
            return
        async with self.lock:
            batch, self._queue = self._queue, []
            try:
                await self._run_batch(batch)
            except BaseException as error:
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(
                            error if isinstance(error, Exception) else RuntimeError("stopped")
                        )
                if not isinstance(error, Exception):
                    raise
                log.exception("table %s: a batch failed; the round is rebuilt", self.id)
                await self.reload()
        self.changed()

    def _refusal(self) -> RefusedError | None:
        if self.status == "halted":
            return RefusedError(
                "halted", f"Table {self.id} is halted: {self.halt_reason}", "PA 633a.14"
            )
        if self.round is None:
            return RefusedError("round", f"No round is open at table {self.id}.", "PA 633c.5(n)")
        return None

    async def _run_batch(self, batch: list[_Request]) -> None:
        """Apply a batch of terminal requests and commit them together (see :meth:`_submit`).
        When a request would overdraw an account, or the commit fails, the round is rebuilt
        from its log and each request is run alone."""
        shoe = self.shoe
        mark = shoe.mark() if shoe is not None else 0
        work = self.round
        books = Books(self.id, dict(self.books.escrowed), self.books.settled)
        events: list[EventIn] = []
        transfers: list[Transfer] = []
        meters: list[tuple[str, str, int, int]] = []
        done: list[tuple[_Request, int]] = []
        echoes: list[tuple[_Request, _Request]] = []
        firsts: dict[tuple[str, str], _Request] = {}
        status: str | None = None
        alone = False
        for request in batch:
            if request.future.done():
                continue
            seen = self.recent.get(request.player, OrderedDict()).get(request.command_id)
            if seen is not None:
                request.future.set_result({**seen, "repeat": True})
                continue
            key = (request.player, request.command_id)
            if key in firsts:
                echoes.append((request, firsts[key]))
                continue
            firsts[key] = request
            refusal = self._refusal()
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
            if shoe is not None:
                while work.card_request is not None:
                    card = shoe.draw()
                    work.deal_card(card)
                    events.append(
                        EventIn(
                            "card",
                            {"code": card.code, "read_us": self.floor.now_us(), "source": "shoe"},
                            actor="shoe",
                        )
                    )
            moved, metered, escrowed, settled = books.diff(work.wagers, work.settlements)
            if work.is_complete and status is None:
                status = "complete"
                events.append(
                    EventIn(
                        "complete",
                        {
                            "house_net": work.house_net(),
                            "settlements": [s.to_json() for s in work.settlements],
                        },
                    )
                )
            try:
                self.floor.check_funds([*transfers, *moved])
            except InsufficientFundsError:
                alone = True
                break
            index = len(events) - 1
            transfers += bind_postings(moved, own, index)
            meters += metered
            books.accept(escrowed, settled)
            done.append((request, index))
        records: list[EventRecord] = []
        if not alone and events:
            try:
                records = await self._commit_round(events, transfers, meters, status)
            except LimitRefusedError:  # a player's limit: the others' requests go on alone
                alone = True
            except Exception:
                log.exception(
                    "table %s: a batch of %d steps failed; each runs alone", self.id, len(done)
                )
                alone = True
        if alone:
            if shoe is not None:
                shoe.reset(mark)
            await self.reload()
            for request in batch:
                if request.future.done() or any(request is echo for echo, _ in echoes):
                    continue
                try:
                    reply = await self._run(
                        request.step, player=request.player, command_id=request.command_id
                    )
                except Exception as error:  # a refusal, or the store's error
                    if not request.future.done():
                        request.future.set_exception(error)
                else:
                    if not request.future.done():
                        request.future.set_result(reply)
        else:
            self.books = books
            if records:
                self.last_seq = records[-1].seq
            self.floor.book(transfers)
            for request, index in done:
                reply = {"ok": True, "round_id": self.round_id, "seq": records[index].seq}
                answered = self.recent.setdefault(request.player, OrderedDict())
                answered[request.command_id] = reply
                while len(answered) > 256:
                    answered.popitem(last=False)
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

    async def dealer_command(
        self, command: str, by: str, terminal: str = "console", card: str | None = None
    ) -> dict[str, Any]:
        """The dealer console: ``open-round``, ``close-wagering``, ``card``,
        ``countdown-expired``. On an automated table the server opens the rounds, closes
        wagering ``wagering_seconds`` after the first wager and runs the countdown: the first
        three are refused there with a sentence saying so (code ``automated``)."""
        if command in AUTOMATED_COMMANDS and self.config.automated:
            raise self._automated_refusal(command)
        if command == "open-round":
            round_id = await self.open_round(by)
            return {"ok": True, "round_id": round_id}
        if command == "card":
            if card is None:
                raise RefusedError("invalid", "A card command needs the card code.", "PA 633c.5(j)")
            return await self.reader_card(card, by, terminal)
        if command not in ("close-wagering", "countdown-expired"):
            raise RefusedError(
                "invalid",
                f"Unknown dealer command {command!r}; the console sends open-round, "
                "close-wagering, card, countdown-expired.",
                "dealer console",
            )
        async with self.lock:
            text = f"dealer {command}"
            reply = await self._run(
                _applier(text),
                EventIn("command", {"text": text}, actor=by, terminal=terminal),
            )
        self.changed()
        return reply

    def _automated_refusal(self, command: str) -> RefusedError:
        if self.status != "open":
            return RefusedError("table", f"Table {self.id} is {self.status}.", "table status")
        what = {
            "open-round": "opens its rounds",
            "close-wagering": "closes wagering",
            "countdown-expired": "runs the countdown",
        }[command]
        return RefusedError(
            "automated",
            f"Table {self.id} is automated: the server {what} itself, not the console. "
            f"{self.automation()}",
            AUTOMATION_RULE,
        )

    async def reader_card(self, code: str, by: str, terminal: str = "reader") -> dict[str, Any]:
        """A card read by the card-reading shoe (or typed on the console). A card the engine
        did not ask for, or one with no copy left in the shoe's inventory (or one copy too many
        for the decks), stops the round as an irregularity and tilts the table (PA 605a:
        ``card_not_requested``, ``card_inventory``). Every card read is taken out of the
        inventory, whatever becomes of it (:attr:`card_inventory`)."""
        try:
            card = Card.parse(code.strip().upper())
        except InvalidNotationError as error:
            raise RefusedError("invalid", error.message, "PA 633c.5(j)") from None
        async with self.lock:
            if self.shoe is not None and self.round is not None and not self.round.is_complete:
                raise RefusedError(
                    "source",
                    f"Table {self.id} deals from its virtual shoe; reader cards are not taken.",
                    "PA 633c.5(j)",
                )
            held = self.card_inventory.take(card.code)
            if self.status == "halted" and held:
                await self.floor.store.commit(
                    Step(
                        self.procedures_id,
                        events=[
                            EventIn(
                                "card_refused",
                                {"code": card.code, "round_id": self.round_id},
                                actor=by,
                                terminal=terminal,
                            )
                        ],
                        at_us=self.floor.now_us(),
                        fence=self.fence,
                    )
                )
                raise RefusedError(
                    "halted", f"Table {self.id} is halted: {self.halt_reason}", "PA 633a.14"
                )
            if not held:
                message = (
                    f"{card.code} was read but the shoe's inventory holds no copy of it any "
                    "more (a duplicate or an over-full shoe)"
                )
                rule = self.card_inventory.rule
                await self._irregularity(message, rule, by, code=card.code, tilt="card_inventory")
                raise RefusedError("card_inventory", f"{message}.", rule)
            if self.round is None or self.round.is_complete:
                await self._irregularity(
                    f"{card.code} was read but no round is being dealt",
                    "PA 633a.14",
                    by,
                    code=card.code,
                )
                raise RefusedError("irregularity", f"{card.code} was not asked for.", "PA 633a.14")
            try:
                self.round.verify_dealing_card(card)
            except TablejackError as error:
                copies = error.rule == self.rules.decks_clause
                await self._irregularity(
                    f"{card.code} refused: {error.message}",
                    error.rule or "PA 633a.14",
                    by,
                    code=card.code,
                    tilt="card_inventory" if copies else "card_not_requested",
                )
                raise RefusedError("irregularity", error.message, error.rule) from None
            try:
                reply = await self._run(
                    lambda r: r.deal_card(card),
                    EventIn(
                        "card",
                        {"code": card.code, "read_us": self.floor.now_us(), "source": terminal},
                        actor=by,
                        terminal=terminal,
                    ),
                )
            except RefusedError as refusal:
                if refusal.code == "storage_error" and self.inventory is not None:
                    self.inventory.give_back(card.code)  # not recorded: it is read again
                raise
        self.changed()
        return reply

    async def _irregularity(
        self,
        message: str,
        rule: str,
        by: str,
        *,
        code: str | None = None,
        tilt: str = "card_not_requested",
    ) -> None:
        """Stop the round: log the irregularity (with the card ``code`` read, which is out of
        the shoe) and tilt the table (``tilt``); a supervisor voids the round and clears the
        tilt."""
        self.halt_reason = message
        self.status = "halted"
        payload: dict[str, Any] = {"message": message, "rule": rule}
        if code is not None:
            payload["code"] = code
        in_round = (
            self.round_id is not None and self.round is not None and not self.round.is_complete
        )
        if in_round:
            self.irregular_round = self.round_id
        try:
            await self.floor.store.commit(
                Step(
                    self.round_id if in_round and self.round_id else self.procedures_id,
                    events=[EventIn("irregularity", payload, actor=by)],
                    status="irregular" if in_round else None,
                    at_us=self.floor.now_us(),
                    fence=self.fence,
                )
            )
        except Exception as error:  # the table stops all the same; the tilt says why
            failed = fault(error)
            log.error("table %s: the irregularity could not be written: %s", self.id, failed)
            message = f"{message} (the irregularity could not be written: {failed})"
            await self._reload_quietly()
        await self._audit_quietly("irregularity", message, by, rule)
        await self.lockout.raise_tilt(tilt, message, by=by, rule=rule)
        self.changed()

    def settle_status(self) -> None:
        """Halted while a table tilt is active, an irregular round awaits its void or a void
        that could not be written awaits its retry; else open."""
        active = self.table_tilts()
        irregular = (
            self.irregular_round is not None
            and self.irregular_round == self.round_id
            and self.round is not None
            and not self.round.is_complete
        )
        if active:
            self.status = "halted"
            self.halt_reason = "; ".join(f"tilt {t['code']}: {t['message']}" for t in active)
        elif self.void_failure is not None and self.round is not None:
            self.status = "halted"
            self.halt_reason = (
                f"round {self.round_id} was not voided ({self.void_failure}); a supervisor must "
                "void it again"
            )
        elif irregular:
            self.status = "halted"
            self.halt_reason = (
                f"irregularity in round {self.round_id}; a supervisor must void the round"
            )
        elif self.status == "halted":
            self.status = "open"
            self.halt_reason = ""

    async def void(self, by: str, reason: str) -> dict[str, Any]:
        """Void the round in progress and refund every unsettled wager (supervisor). If the
        store fails, nothing is refunded, the round is held (halted, see :meth:`waiting_for`)
        and the refusal (code ``storage_error``) says what failed; the supervisor voids it
        again."""
        try:
            async with self.lock:
                if self.round is None or self.round.is_complete:
                    if self.status == "halted":
                        self.settle_status()  # open unless a tilt is still active (PA 605a)
                        return {"ok": True, "voided": None}
                    raise RefusedError("round", "No round in progress to void.", VOID_RULE)
                voided = await self._void(reason, by=by)
        finally:
            self.changed()  # the clock, the automated dealer and the terminals follow
        return {"ok": True, "voided": voided}

    async def _void(self, reason: str, *, by: str) -> str | None:
        """Write the round's ``void`` (every unsettled wager refunded) and drop the round. A
        write that fails leaves the round as its log has it and raises the refusal
        (:meth:`_void_failed`); a void that was written although the store answered with an
        error is found in the log, here or on the retry, and never written twice."""
        round_id = self.round_id
        assert round_id is not None
        transfers, meters = self.books.refunds(self.round.wagers, self.round.settlements)
        step = Step(
            round_id,
            events=[
                EventIn(
                    "void",
                    {
                        "reason": reason,
                        "refunds": [
                            {"player": t.to_account, "amount": t.amount, "wager_id": t.wager_id}
                            for t in transfers
                        ],
                    },
                    actor=by,
                )
            ],
            transfers=transfers,
            meters=meters,
            status="voided",
            at_us=self.floor.now_us(),
            actor=self.actor,
            fence=self.fence,
        )
        try:
            if self.void_failure is None or not await self._voided_in_log(round_id):
                await self.floor.store.commit(step)
        except Exception as error:
            if not await self._voided_in_log(round_id, quiet=True):
                raise await self._void_failed(round_id, error) from error
        self.floor.book(transfers)
        self.round = None
        self.books = Books(self.id)
        self.void_failure = None
        if self.status == "halted":
            self.settle_status()  # open unless a tilt is still active (PA 605a)
        await self._audit_quietly("void", reason, by)
        return round_id

    async def _voided_in_log(self, round_id: str, *, quiet: bool = False) -> bool:
        """Whether the log already holds the round's void (``quiet``: False if the store
        does not answer)."""
        try:
            row = await self.floor.store.round(round_id)
        except Exception:
            if not quiet:
                raise
            log.exception("table %s: the store does not answer for round %s", self.id, round_id)
            return False
        return row is not None and row["status"] == "voided"

    async def _void_failed(self, round_id: str, error: Exception) -> RefusedError:
        """The void of ``round_id`` could not be written: rebuild the round from its log (as
        :meth:`_run` does), hold it — the table halts until a supervisor voids it again — and
        say what failed."""
        failed = fault(error)
        log.error(
            "table %s: the void of round %s could not be written: %s", self.id, round_id, failed
        )
        await self._reload_quietly()
        self.void_failure = f"the void could not be written: {failed}"
        self.settle_status()
        await self._audit_quietly("void_failed", f"round {round_id}: {self.void_failure}", "server")
        return RefusedError(
            "storage_error",
            f"Round {round_id} was not voided: the store failed ({failed}). Nothing was "
            "refunded; the table holds the round until it is voided again.",
            VOID_RULE,
        )

    async def _reload_quietly(self) -> None:
        """:meth:`reload`, and if the store does not answer, remember to reload later."""
        try:
            await self.reload()
        except Exception:
            self.needs_reload = True
            log.exception("table %s: the round could not be rebuilt from its log", self.id)

    async def _audit_quietly(self, kind: str, message: str, by: str, rule: str = "") -> None:
        """An audit entry; a store that refuses it is logged, and the step it reports stands."""
        try:
            await self.floor.store.audit(kind, message, table_id=self.id, actor=by, rule=rule)
        except Exception:
            log.exception("table %s: the audit entry %r could not be written", self.id, kind)

    # -- the countdown clock and the automated dealer ----------------------------------------

    def _window(self) -> tuple[Any, ...] | None:
        round_ = self.round
        if round_ is None or self.status != "open" or round_.is_complete:
            return None
        if round_.phase.value == "wagering":
            if self.config.automated and round_.wagers:
                return ("wagering", self.number)
            return None
        return self.adapter.window(round_)

    def changed(self) -> None:
        """After every change: restart the clock if the window changed, run the automated
        dealer, broadcast."""
        if self.stopped:
            return
        key = self._window()
        if key != self.window_key:
            if self._clock_task is not None:
                self._clock_task.cancel()
                self._clock_task = None
            self.window_key = key
            self.deadline = None
            if key is not None:
                seconds = self.config.wagering_seconds if key[0] == "wagering" else self.seconds
                self.window_seconds = seconds
                self.deadline = self.floor.clock() + seconds
                self._clock_task = asyncio.create_task(self._countdown(key, seconds))
        if (
            self.config.automated
            and self.status == "open"
            and (self.round is None or self.round.is_complete)
            and (self._auto_task is None or self._auto_task.done())
        ):
            self._auto_task = asyncio.create_task(self._next_round())
        self.broadcast()

    async def _countdown(self, key: tuple[Any, ...], seconds: float) -> None:
        bind(table=self.id, round=self.round_id, terminal="clock")  # the logs: the clock's
        await asyncio.sleep(seconds)
        await self._apply_waiting()  # what came before the clock ran out, first
        async with self.lock:
            if self.window_key != key or self.round is None:
                return
            commands = (
                ["dealer close-wagering"]
                if key[0] == "wagering"
                else self.adapter.on_countdown(self.round)
            )
            for text in commands:
                try:
                    await self._run(
                        _applier(text),
                        EventIn("command", {"text": text}, actor="clock", terminal="clock"),
                    )
                except RefusedError as refusal:
                    log.warning(
                        "table %s: the clock's %r was refused: %s", self.id, text, refusal.message
                    )
                    break
            self.window_key = None
        self.changed()

    async def _next_round(self) -> None:
        bind(table=self.id, round=None, terminal="auto-dealer")
        await asyncio.sleep(self.config.between_rounds_seconds if self.round is not None else 0)
        try:
            await self.open_round("auto-dealer")
        except RefusedError as refusal:
            self.halt_reason = refusal.message
            self.broadcast()
        except Exception:  # the store's: the next change tries again
            log.exception("table %s: the automated dealer could not open a round", self.id)

    async def stop(self) -> None:
        """Cancel the clock and the automated dealer (shutdown, or the table moving to another
        process of the floor); a request still waiting for the table's worker is refused."""
        self.stopped = True
        for task in (self._clock_task, self._auto_task, self._worker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        waiting, self._queue = self._queue, []
        for request in waiting:
            if not request.future.done():
                request.future.set_exception(
                    RefusedError("table", f"Table {self.id} stopped here.", "table status")
                )
