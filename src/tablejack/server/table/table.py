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
import copy
import logging
from collections.abc import Callable
from typing import Any

from tablejack.core.errors import TablejackError
from tablejack.core.money import format_cents
from tablejack.games import GAMES
from tablejack.server.table.batches import Batches
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.cards import VirtualShoe
from tablejack.server.table.clock import Clock
from tablejack.server.table.collaborators import CardInventory, Host, LockOut
from tablejack.server.table.config import TableConfig
from tablejack.server.table.dealer import AUTOMATION_RULE, Dealer
from tablejack.server.table.errors import RefusedError
from tablejack.server.table.games import adapter_for
from tablejack.server.table.procedures import Procedures
from tablejack.server.table.replay import apply_command, replay_round
from tablejack.server.table.requests import ReplyCache
from tablejack.server.table.steps import WritePath
from tablejack.server.table.views import TableViews
from tablejack.store import EventIn, EventRecord, Fence, Step
from tablejack.store.policy import Actor, Role

__all__ = ["AUTOMATION_RULE", "Table"]

log = logging.getLogger("tablejack.server")


class Table(TableViews):
    """A table of the floor (see the module docstring). ``floor`` runs it; ``lockout`` and
    ``card_inventory`` make the table's tilts and its shoe's card inventory for it. Its
    concerns are objects it owns: :attr:`steps` (the write path), :attr:`batches` (the
    terminals' requests), :attr:`dealer` (the dealer's input), :attr:`clock` (the countdown
    and the automated dealer)."""

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
        self.replies = ReplyCache()
        """The answers to terminal requests, for their repeats."""
        self.window_key = None
        self.deadline = None
        self.window_seconds = 0.0
        self.halt_reason = ""
        self.tilts = []
        """Active tilts (PA 605a lock-out): the table's own and its terminals' (kept by
        :attr:`lockout`)."""
        self.irregular_round = None
        self.manual_entry_round = None
        """The round a supervisor allowed the console to enter cards by hand for (PA 633c.5(j))."""
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
        self.stopped = False
        """Stopped (shutdown, or the table moved to another process): no clock, automated
        dealer or broadcast starts again."""
        self.seconds = self.adapter.countdown_seconds(self.rules, config.countdown_seconds)
        self.default_action = self.adapter.countdown_default(self.rules)
        self.lockout = lockout(self)
        """The table's tilts (PA 605a lock-out)."""
        self.card_inventory = card_inventory(self)
        """The card inventory of the table's shoe (PA 605a)."""
        self.steps = WritePath(self, self.replies)
        """The write path: every step applied, committed, then adopted."""
        self.batches = Batches(
            self,
            self.steps,
            self.replies,
            self.changed,
            step_window=floor.step_window,
            step_wait=floor.step_wait,
        )
        """The terminals' requests, applied and committed in batches."""
        self.dealer = Dealer(self, self.steps, open_round=self.open_round, changed=self.changed)
        """The dealer's input: the console, the cards read, irregularities and voids."""
        self.clock = Clock(
            self,
            self.steps,
            apply_waiting=self.batches.apply_waiting,
            open_round=self.open_round,
            changed=self.changed,
        )
        """The countdown and the automated dealer."""

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
        if any(record.kind == "manual_entry" for record in events):
            self.manual_entry_round = row["id"]
        if row["status"] == "irregular":
            self.irregular_round = row["id"]
            self.status = "halted"
            self.halt_reason = "irregularity before the restart; a supervisor must void the round"
        elif self.config.recovery == "void":
            try:
                await self.dealer.void_round(
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
                await self.steps.commit(self.round, [])
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

    async def reload(self) -> None:
        """Rebuild the round from the log after a failed commit."""
        await self.steps.reload()

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
            self.replies.clear()
        self.changed()
        return round_id

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
        refusal = self.steps.refusal()
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

        return await self.batches.submit(step, player, command_id)

    def wager_amount(self, player: str, kind: str) -> int:
        """What ``player``'s wager of ``kind`` in the round in progress stakes now (0: none)."""
        wagers = [] if self.round is None else self.round.wagers
        return next(
            (w.amount for w in reversed(wagers) if w.player == player and w.kind.value == kind),
            0,
        )

    async def withdraw(
        self, player: str, terminal: str, kind: str, command_id: str
    ) -> dict[str, Any]:
        """A terminal takes back a wager it placed, while wagering is open (633c.5(k)): the
        stake goes back from the escrow to the player's account; the Blackjack Wager takes its
        side wagers with it. A recorded step (``withdraw``), replayed like a wager."""

        def step(round_: Any) -> EventIn:
            closed = self.wagering_closed(round_)
            if closed is not None:
                raise closed
            self.adapter.withdraw_wager(round_, player, kind)
            return EventIn(
                "withdraw",
                {"player": player, "kind": kind, "command_id": command_id},
                actor=player,
                terminal=terminal,
            )

        return await self.batches.submit(step, player, command_id)

    async def change_wager(
        self, player: str, terminal: str, kind: str, amount: int, command_id: str
    ) -> dict[str, Any]:
        """A terminal raises or lowers a wager it placed to ``amount``, while wagering is open
        (633c.5(k)), within the table's limits: a raise is staked as a wager is, a lowering
        refunded as a taking back is. A recorded step (``change``)."""

        def step(round_: Any) -> EventIn:
            closed = self.wagering_closed(round_)
            if closed is not None:
                raise closed
            self.adapter.change_wager(round_, player, kind, amount)
            return EventIn(
                "change",
                {"player": player, "kind": kind, "amount": amount, "command_id": command_id},
                actor=player,
                terminal=terminal,
            )

        return await self.batches.submit(step, player, command_id)

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

        return await self.batches.submit(step, player, command_id)

    # -- the dealer's input (dealer.py) ---------------------------------------------------------

    async def dealer_command(
        self, command: str, by: str, terminal: str = "console", card: str | None = None
    ) -> dict[str, Any]:
        """The dealer console (:meth:`Dealer.command`)."""
        return await self.dealer.command(command, by, terminal, card)

    async def reader_card(self, code: str, by: str, terminal: str = "reader") -> dict[str, Any]:
        """A card read by the card-reading shoe (:meth:`Dealer.reader_card`)."""
        return await self.dealer.reader_card(code, by, terminal)

    async def allow_manual_entry(self, by: str, reason: str) -> dict[str, Any]:
        """A supervisor allows the console to enter cards by hand for the round in progress
        (:meth:`Dealer.allow_manual_entry`)."""
        return await self.dealer.allow_manual_entry(by, reason)

    def settle_status(self) -> None:
        """Halted or open as the tilts, an irregular round or a failed void say
        (:meth:`Dealer.settle_status`)."""
        self.dealer.settle_status()

    async def void(self, by: str, reason: str, *, misdeal: bool = False) -> dict[str, Any]:
        """Void the round in progress (supervisor; :meth:`Dealer.void`), a misdeal or not."""
        return await self.dealer.void(by, reason, misdeal=misdeal)

    async def correct_card(self, code: str, by: str, reason: str) -> dict[str, Any]:
        """A wrong card corrected with a supervisor's approval (:meth:`Dealer.correct_card`)."""
        return await self.dealer.correct_card(code, by, reason)

    # -- every change ---------------------------------------------------------------------------

    def changed(self) -> None:
        """After every change: restart the clock if the window changed, run the automated
        dealer, broadcast."""
        if self.stopped:
            return
        self.clock.follow()
        self.broadcast()

    async def stop(self) -> None:
        """Cancel the clock and the automated dealer (shutdown, or the table moving to another
        process of the floor); a request still waiting for the table's worker is refused."""
        self.stopped = True
        await self.clock.stop(self.batches.worker)
        await self.batches.stop()
