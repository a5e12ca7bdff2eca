"""One table on the floor: the round in progress, its log, its clock and its terminals.

A :class:`Table` owns its round. Every change — a terminal's wager or decision, a dealer
command, a card from the reader, the countdown clock running out — runs under the table's lock,
one at a time: the engine verifies and applies it, the server books the money it moves
(:mod:`tablejack.server.bookkeeping`), the events and ledger entries are committed in ONE
transaction, and only then is anything broadcast. A step whose commit fails (a wager above the
account's balance, a database error) leaves the table as it was: the round is rebuilt from its
log, which never saw the step.

On start a table replays the log of any round still open: the round resumes where it stood, or,
under the operator's ``recovery = "void"`` policy, is voided and every unsettled wager refunded.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import datetime as dt
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tablejack.core.cards import Card
from tablejack.core.errors import IllegalActionError, InvalidNotationError, TablejackError
from tablejack.core.money import format_cents
from tablejack.games import GAMES, classic, hybrid, hybrid_shared, multi_action, transcript
from tablejack.server.adapters import Adapter, adapter_for, rules_icon
from tablejack.server.bookkeeping import Books
from tablejack.server.cards import VirtualShoe
from tablejack.server.inventory import ShoeInventory
from tablejack.server.wire import dumps as _encode
from tablejack.store import (
    EventIn,
    EventRecord,
    InsufficientFundsError,
    Step,
    StoreError,
    Transfer,
)
from tablejack.store.policy import Actor, Role

if TYPE_CHECKING:
    from tablejack.server.floor import Floor

__all__ = [
    "AUTOMATION_RULE",
    "WAGERING_RULES",
    "RefusedError",
    "Table",
    "TableConfig",
    "WageringClosedError",
    "apply_command",
    "replay_round",
]

log = logging.getLogger("tablejack.server")

DAY_US = 24 * 3600 * 1_000_000
READER_RULE = "PA 633c.5(d)"
DECK_AGE_RULE = "PA 633c.5(g)"
DECK_INSPECTION_RULE = "PA 633c.5(i)"
VOID_RULE = "PA 633a.14"
AUTOMATION_RULE = "table automation"
"""An automated table's console refusal: the server opens rounds, closes wagering and runs the
clock itself (docs/server.md, "Dealer console")."""
AUTOMATED_COMMANDS = ("open-round", "close-wagering", "countdown-expired")
WAGERING_RULES = {
    "hybrid": hybrid.WAGERS,
    "hybrid-shared": hybrid_shared.BEFORE_FIRST_CARD,
    "classic": classic.WAGER,
    "multi-action": multi_action.WAGER,
}
"""The clause of each game that wagers are placed before the first card (the engine's own)."""


def _fault(error: BaseException) -> str:
    """What a store's error says, in one short line (its type and first line)."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= 160 else text[:159] + "…"


class RefusedError(Exception):
    """A request the server refuses: ``code`` (machine), ``rule`` (clause or server rule) and
    a sentence. Nothing was changed."""

    def __init__(self, code: str, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.message = message

    @classmethod
    def from_engine(cls, error: TablejackError) -> RefusedError:
        """An engine refusal (illegal action or bad notation); an error may name its own
        ``code`` (:class:`WageringClosedError`)."""
        code = getattr(error, "code", None) or (
            "illegal" if isinstance(error, IllegalActionError) else "invalid"
        )
        return cls(str(code), error.message, error.rule)


class WageringClosedError(IllegalActionError):
    """A wager outside the round's wagering phase: refused before the engine looks at the
    wager itself, so the player reads that wagering is closed (code ``wagering_closed``), not
    that he already has a wager or that a limit is passed."""

    code = "wagering_closed"


@dataclass
class TableConfig:
    """A table: its id, rules and how it is run (see docs/server.md, "Tables file")."""

    id: str
    rules: Any
    title: str = ""
    source: str = "virtual"
    """``virtual`` (shuffled shoe, automated dealing) or ``reader`` (card reader / console)."""
    automated: bool = True
    """The server opens rounds and closes wagering by itself (the demo's automated dealer)."""
    wagering_seconds: float = 15.0
    between_rounds_seconds: float = 5.0
    countdown_seconds: float | None = None
    """Clock length for games whose rules have none (classic); hybrid rules carry their own."""
    recovery: str = "resume"
    """After a crash: ``resume`` the open round, or ``void`` it and refund every wager."""
    seed: int | None = None
    require_procedures: bool = True
    """Refuse to deal without today's card reader inspection, inspected decks under 24 hours."""
    gaming_day_start_hour: int = 6
    cards: str | None = None
    """A stacked card order for the virtual shoe's first shoe (scenario tests, demonstrations)."""
    confirm_above: int | None = None
    """PA 605a double confirmation: a wager above this many cents must be confirmed a second
    time by the player (``"confirm": true``); None: no second confirmation."""
    result_hold_seconds: float = 30.0
    """PA 605a: a settled round's result stays on the terminal until the player acknowledges
    it or this many seconds pass, even when the next round opens meanwhile."""

    def __post_init__(self) -> None:
        above = self.confirm_above
        if above is not None and (isinstance(above, bool) or not isinstance(above, int)):
            raise ValueError(f"confirm_above = {above!r} must be whole cents (PA 605a).")
        if above is not None and above <= 0:
            raise ValueError(f"confirm_above = {above!r} cents must be positive (PA 605a).")
        hold = self.result_hold_seconds
        if isinstance(hold, bool) or not isinstance(hold, int | float) or not 0 <= hold <= 3600:
            raise ValueError(
                f"result_hold_seconds = {hold!r} must be between 0 and 3600 seconds (PA 605a)."
            )

    def to_json(self) -> dict[str, Any]:
        """The configuration without the rules (stored beside them)."""
        return {
            "title": self.title,
            "source": self.source,
            "automated": self.automated,
            "wagering_seconds": self.wagering_seconds,
            "between_rounds_seconds": self.between_rounds_seconds,
            "countdown_seconds": self.countdown_seconds,
            "recovery": self.recovery,
            "seed": self.seed,
            "require_procedures": self.require_procedures,
            "gaming_day_start_hour": self.gaming_day_start_hour,
            "cards": self.cards,
            "confirm_above": self.confirm_above,
            "result_hold_seconds": self.result_hold_seconds,
        }


@dataclass
class Procedures:
    """The table's gaming-day record (rebuilt from its procedure log)."""

    reader_day: str | None = None
    reader_by: str = ""
    decks_us: int | None = None
    decks_by: str = ""
    decks_inspected: bool = False
    inspected_by: str = ""
    history: list[dict[str, Any]] = field(default_factory=list)


def apply_command(round_: Any, text: str) -> None:
    """Apply a logged command: the engine's notation, except ``dealer close-wagering``, which
    every game offers as its ``close_wagering`` verb (not every game's notation names it)."""
    if text == "dealer close-wagering":
        round_.close_wagering()
    else:
        round_.apply(text)


def replay_round(events: list[EventRecord], adapter: Adapter) -> Any:
    """Rebuild a round from its log: ``open`` makes it; ``wager``, ``command`` and ``card``
    events are applied in order. The engine is deterministic, so the round is exactly the one
    that was logged."""
    round_: Any = None
    for record in events:
        payload = record.payload
        if record.kind == "open":
            spec = GAMES[payload["game"]]
            round_ = spec.new_round(spec.rules_class.from_mapping(payload["rules"]), None)
        elif round_ is None:
            raise StoreError(f"{record.round_id}: event {record.seq} comes before the round opens")
        elif record.kind == "wager" and payload.get("spots") is not None:
            adapter.place_spot_wagers(
                round_,
                payload["player"],
                payload.get("position"),
                payload["amount"],
                payload["spots"],
            )
        elif record.kind == "wager":
            adapter.place_wager(
                round_,
                payload["player"],
                payload.get("position"),
                payload["kind"],
                payload["amount"],
            )
        elif record.kind == "command":
            apply_command(round_, payload["text"])
        elif record.kind == "card":
            round_.deal_card(Card.parse(payload["code"]))
    return round_


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


def _applier(text: str) -> Callable[[Any], None]:
    def apply(round_: Any) -> None:
        apply_command(round_, text)

    return apply


class Table:
    """A table of the floor (see the module docstring)."""

    def __init__(self, floor: Floor, config: TableConfig) -> None:
        self.floor = floor
        self.config = config
        self.id = config.id
        self.actor = Actor(Role.TABLE, config.id)
        """Who books this table's wagers, settlements and refunds (the money-movement policy)."""
        self.rules = config.rules
        self.game = config.rules.game
        self.adapter = adapter_for(self.game)
        self.lock = asyncio.Lock()
        self.status = "closed"
        self.round: Any = None
        self.round_id: str | None = None
        self.number = 0
        self.books = Books(self.id)
        self.shoe: VirtualShoe | None = (
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
        self.subscribers: set[Any] = set()
        self.selected: dict[tuple[str, str], int] = {}
        """The position each player selected at each terminal (633c.5(l)): (player, terminal)
        → position. A selection belongs to the terminal it was made at; a player signed in at
        two terminals selects at each."""
        self.recent: dict[str, OrderedDict[str, dict[str, Any]]] = {}
        self.window_key: tuple[Any, ...] | None = None
        self.deadline: float | None = None
        self.window_seconds: float = 0.0
        self._clock_task: asyncio.Task[None] | None = None
        self._auto_task: asyncio.Task[None] | None = None
        self.halt_reason = ""
        self.tilts: list[dict[str, Any]] = []
        """Active tilts (PA 605a lock-out): the table's own and its terminals'
        (:mod:`tablejack.server.tilts`)."""
        self.irregular_round: str | None = None
        self.void_failure: str | None = None
        """Why the last void of the round in progress could not be written: the table holds
        the round (halted) until a supervisor voids it again."""
        self.needs_reload = False
        self.inventory: ShoeInventory | None = None
        """The card inventory of the shoe in use (:mod:`tablejack.server.inventory`)."""
        self.last_seq = 0
        self.broadcast_pending = False
        self._queue: list[_Request] = []
        self._worker: asyncio.Task[None] | None = None
        self.seconds = self.adapter.countdown_seconds(self.rules, config.countdown_seconds)
        self.default_action = self.adapter.countdown_default(self.rules)

    @property
    def procedures_id(self) -> str:
        """The id of the table's gaming-day procedure log."""
        return f"{self.id}-procedures"

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
                )
            )
        procedure_log = await store.events(self.procedures_id)
        for record in procedure_log:
            self._apply_procedure(record)
        from tablejack.server import inventory, tilts  # PA 605a: tilts and the shoe inventory

        tilts.restore(self, procedure_log)
        await inventory.restore(self, procedure_log)
        self.status = status
        open_rounds = [
            row
            for state in ("open", "irregular")
            for row in await store.rounds(table_id=self.id, status=state, limit=10)
        ]
        for row in sorted(open_rounds, key=lambda r: r["number"]):
            await self._recover(row)
        tilts.settle_after_start(self)
        await tilts.refresh_terminals(self.floor, [self])
        self._changed()

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
                from tablejack.server.tilts import storage_fault

                await storage_fault(self, error)

    # -- procedures (633c.5(d), (g), (i)) --------------------------------------------------

    def gaming_day(self, at_us: int | None = None) -> str:
        """The gaming day (a date) of a moment: days start at ``gaming_day_start_hour`` UTC."""
        moment = self.floor.now_us() if at_us is None else at_us
        shifted = moment // 1_000_000 - self.config.gaming_day_start_hour * 3600
        return dt.datetime.fromtimestamp(shifted, dt.UTC).date().isoformat()

    def _apply_procedure(self, record: EventRecord) -> None:
        payload = record.payload
        proc = self.procedures
        entry = {"kind": record.kind, "at_us": record.at_us, **payload}
        if record.kind == "reader_inspection" and payload.get("result") == "ok":
            proc.reader_day, proc.reader_by = payload["gaming_day"], payload["by"]
        elif record.kind == "reader_inspection":
            proc.reader_day = None
        elif record.kind == "decks_registered":
            proc.decks_us, proc.decks_by = record.at_us, payload["by"]
            proc.decks_inspected = False
        elif record.kind == "deck_inspection":
            proc.decks_inspected = payload.get("result") == "ok"
            proc.inspected_by = f"{payload['dealer']} / {payload['verified_by']}"
        if record.kind != "table":
            proc.history.append(entry)
            del proc.history[:-50]

    async def record_procedure(self, kind: str, payload: dict[str, Any], by: str) -> None:
        """Append a gaming-day procedure to the table's log (who, when, result)."""
        if kind == "reader_inspection":
            payload = {**payload, "gaming_day": self.gaming_day()}
        async with self.lock:
            [record] = await self.floor.store.commit(
                Step(
                    self.procedures_id,
                    events=[EventIn(kind, {**payload, "by": by}, actor=by)],
                    at_us=self.floor.now_us(),
                )
            )
            self._apply_procedure(record)
            if kind == "decks_registered" and self.shoe is not None and self.round is None:
                self.shoe.shuffle()
        self._changed()

    def procedure_problem(self) -> RefusedError | None:
        """Why the table may not deal now, or None (633c.5(d), (g), (i))."""
        if not self.config.require_procedures:
            return None
        from tablejack.server.inventory import problem as inventory_problem

        if (missing_shoe := inventory_problem(self)) is not None:
            return missing_shoe
        proc = self.procedures
        if proc.reader_day != self.gaming_day():
            return RefusedError(
                "procedure",
                "The card reader device has not been inspected this gaming day; the "
                f"floorperson must inspect it before the first round ({READER_RULE}).",
                READER_RULE,
            )
        if proc.decks_us is None or self.floor.now_us() - proc.decks_us >= DAY_US:
            return RefusedError(
                "procedure",
                "The decks in use are 24 hours old or more (or none are registered); register "
                f"new decks before dealing ({DECK_AGE_RULE}).",
                DECK_AGE_RULE,
            )
        if not proc.decks_inspected:
            return RefusedError(
                "procedure",
                "The decks have not been inspected by the dealer and verified by the "
                f"floorperson ({DECK_INSPECTION_RULE}).",
                DECK_INSPECTION_RULE,
            )
        return None

    # -- opening and closing ---------------------------------------------------------------

    async def set_status(self, status: str) -> None:
        """Open or close the table (a round in progress is finished first)."""
        async with self.lock:
            self.status = status if self.status != "halted" else self.status
            await self.floor.store.set_table_status(self.id, status)
        self._changed()

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
                from tablejack.server.inventory import virtual_load  # the shoe's own inventory

                await self.floor.store.commit(
                    Step(
                        self.procedures_id,
                        events=[
                            EventIn(
                                "shuffle",
                                {"shuffles": self.shoe.shuffles, **virtual_load(self)},
                                actor=by,
                            )
                        ],
                        at_us=self.floor.now_us(),
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
                )
            )
            self.number, self.round_id, self.round = number, round_id, round_
            self.last_seq = 1
            self.halt_reason = ""
            self.books = Books(self.id)
            self.recent.clear()
        self._changed()
        return round_id

    # -- the step ----------------------------------------------------------------------------

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
            assert self.round_id is not None
            records = await self.floor.store.commit(
                Step(
                    self.round_id,
                    events,
                    transfers,
                    meters,
                    status=status,
                    at_us=self.floor.now_us(),
                    actor=self.actor,
                )
            )
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
            await self._reload()
            raise RefusedError(
                "balance",
                f"The wager needs {format_cents(error.needed)}; the account holds "
                f"{format_cents(error.balance)}.",
                "account balance",
            ) from None
        except Exception as error:  # the store failed: a storage_error tilt (PA 605a)
            from tablejack.server.tilts import storage_fault

            raise await storage_fault(self, error) from error
        reply = {"ok": True, "round_id": self.round_id, "seq": records[-1].seq if records else None}
        if command_id is not None and player:
            answered = self.recent.setdefault(player, OrderedDict())
            answered[command_id] = reply
            while len(answered) > 256:
                answered.popitem(last=False)
        return reply

    async def _reload(self) -> None:
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

    def position_of(self, player: str, terminal: str = "") -> int | None:
        """The position ``player`` selected at ``terminal`` (else one selected without a
        terminal), or None."""
        found = self.selected.get((player, terminal))
        return found if found is not None else self.selected.get((player, ""))

    def in_play(self, player: str) -> int:
        """The cents of ``player``'s wagers in the round in progress that the table's escrow
        holds (booked and not yet settled): money that is his but not his to cash out yet."""
        round_ = self.round
        if round_ is None or round_.is_complete:
            return 0
        settled = {s.wager_id for s in round_.settlements}
        return sum(
            self.books.escrowed.get(w.id, 0)
            for w in round_.wagers
            if w.player == player and w.id not in settled
        )

    def wagering_closed(self, round_: Any) -> WageringClosedError | None:
        """Why ``round_`` takes no wager now — it is past its wagering phase — or None. This
        comes before every other check of a wager, the engine's included."""
        phase = round_.phase.value
        if phase == "wagering":
            return None
        rule = WAGERING_RULES.get(self.game, hybrid.WAGERS)
        if round_.is_complete:
            return WageringClosedError(
                f"Wagering is closed: round {self.round_id} is complete; wager when the next "
                f"round opens ({rule}).",
                rule=rule,
            )
        return WageringClosedError(
            f"Wagering is closed: wagers are placed before the first card is dealt, and round "
            f"{self.round_id} is in {phase} ({rule}).",
            rule=rule,
        )

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
        once; the others go on."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(step, player, command_id, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work())
        return await future

    async def _work(self) -> None:
        while self._queue:
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
                    await self._reload()
            self._changed()

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
            assert self.round_id is not None
            try:
                records = await self.floor.store.commit(
                    Step(
                        self.round_id,
                        events,
                        transfers,
                        meters,
                        status=status,
                        at_us=self.floor.now_us(),
                        actor=self.actor,
                    )
                )
            except Exception:
                log.exception(
                    "table %s: a batch of %d steps failed; each runs alone", self.id, len(done)
                )
                alone = True
        if alone:
            if shoe is not None:
                shoe.reset(mark)
            await self._reload()
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
        self._changed()
        return reply

    def automation(self) -> str | None:
        """What the server does itself at an automated table, in words (None: the dealer runs
        the table)."""
        if not self.config.automated:
            return None
        cards = (
            "cards come from the virtual shoe"
            if self.shoe is not None
            else "the dealer deals the cards the table asks for"
        )
        return (
            f"The server opens a round {self.config.between_rounds_seconds:g} s after the last "
            f"one ends, closes wagering {self.config.wagering_seconds:g} s after the first "
            f"wager and runs the {self.seconds:g}-second countdown; {cards}."
        )

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
        inventory, whatever becomes of it (:mod:`tablejack.server.inventory`)."""
        from tablejack.server import inventory

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
            held = inventory.take(self, card.code)
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
                await self._irregularity(
                    message, inventory.INVENTORY_RULE, by, code=card.code, tilt="card_inventory"
                )
                raise RefusedError("card_inventory", f"{message}.", inventory.INVENTORY_RULE)
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
        self._changed()
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
        from tablejack.server.tilts import raise_tilt

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
                )
            )
        except Exception as error:  # the table stops all the same; the tilt says why
            fault = _fault(error)
            log.error("table %s: the irregularity could not be written: %s", self.id, fault)
            message = f"{message} (the irregularity could not be written: {fault})"
            await self._reload_quietly()
        await self._audit_quietly("irregularity", message, by, rule)
        await raise_tilt(self, tilt, message, by=by, rule=rule)
        self._changed()

    async def void(self, by: str, reason: str) -> dict[str, Any]:
        """Void the round in progress and refund every unsettled wager (supervisor). If the
        store fails, nothing is refunded, the round is held (halted, see :meth:`waiting_for`)
        and the refusal (code ``storage_error``) says what failed; the supervisor voids it
        again."""
        try:
            async with self.lock:
                if self.round is None or self.round.is_complete:
                    if self.status == "halted":
                        from tablejack.server.tilts import settle_status

                        settle_status(self)  # open unless a tilt is still active (PA 605a)
                        return {"ok": True, "voided": None}
                    raise RefusedError("round", "No round in progress to void.", VOID_RULE)
                voided = await self._void(reason, by=by)
        finally:
            self._changed()  # the clock, the automated dealer and the terminals follow
        return {"ok": True, "voided": voided}

    async def _void(self, reason: str, *, by: str) -> str | None:
        """Write the round's ``void`` (every unsettled wager refunded) and drop the round. A
        write that fails leaves the round as its log has it and raises the refusal
        (:meth:`_void_failed`); a void that was written although the store answered with an
        error is found in the log, here or on the retry, and never written twice."""
        from tablejack.server.tilts import settle_status

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
            settle_status(self)  # open unless a tilt is still active (PA 605a)
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
        from tablejack.server.tilts import settle_status

        fault = _fault(error)
        log.error(
            "table %s: the void of round %s could not be written: %s", self.id, round_id, fault
        )
        await self._reload_quietly()
        self.void_failure = f"the void could not be written: {fault}"
        settle_status(self)
        await self._audit_quietly("void_failed", f"round {round_id}: {self.void_failure}", "server")
        return RefusedError(
            "storage_error",
            f"Round {round_id} was not voided: the store failed ({fault}). Nothing was "
            "refunded; the table holds the round until it is voided again.",
            VOID_RULE,
        )

    async def _reload_quietly(self) -> None:
        """:meth:`_reload`, and if the store does not answer, remember to reload later."""
        try:
            await self._reload()
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

    def _changed(self) -> None:
        """After every change: restart the clock if the window changed, run the automated
        dealer, broadcast."""
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
        self.floor.broadcast(self)

    async def _countdown(self, key: tuple[Any, ...], seconds: float) -> None:
        await asyncio.sleep(seconds)
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
        self._changed()

    async def _next_round(self) -> None:
        await asyncio.sleep(self.config.between_rounds_seconds if self.round is not None else 0)
        try:
            await self.open_round("auto-dealer")
        except RefusedError as refusal:
            self.halt_reason = refusal.message
            self.floor.broadcast(self)

    async def stop(self) -> None:
        """Cancel the clock and the automated dealer (shutdown)."""
        for task in (self._clock_task, self._auto_task, self._worker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    # -- views -------------------------------------------------------------------------------

    def countdown(self) -> dict[str, Any] | None:
        """The running clock: when it ends (epoch ms), its length and what it does."""
        if self.deadline is None or self.window_key is None:
            return None
        wagering = self.window_key[0] == "wagering"
        return {
            "ends_at_ms": int(self.deadline * 1000),
            "seconds": self.window_seconds,
            "window": "wagering" if wagering else str(self.window_key[0]),
            "default": "close wagering" if wagering else self.default_action,
            "now_ms": int(self.floor.clock() * 1000),
        }

    def summary(self) -> dict[str, Any]:
        """The table for lists."""
        return {
            "id": self.id,
            "title": self.config.title or self.rules.name or self.id,
            "game": self.game,
            "status": self.status,
            "round_id": self.round_id,
            "phase": None if self.round is None else self.round.phase.value,
            "positions": self.adapter.positions(self.rules),
            "source": self.config.source,
            "automated": self.config.automated,
            "automation": self.automation(),
            "halt_reason": self.halt_reason,
            "waiting_for": self.waiting_for(),
            "tilts": self.tilts,
        }

    def waiting_for(self) -> str | None:
        """What a halted table waits for before play goes on, in words (None: it waits for
        nothing)."""
        from tablejack.server.tilts import table_tilts

        if self.status != "halted":
            return None
        needs = [f"clear the tilt {t['code']}" for t in table_tilts(self)]
        round_open = self.round is not None and not self.round.is_complete
        if round_open and self.void_failure is not None:
            needs.append(f"void round {self.round_id} ({self.void_failure})")
        elif round_open and self.irregular_round == self.round_id:
            needs.append(f"void round {self.round_id}")
        if not needs:
            return self.halt_reason or None
        return "a supervisor to " + " and to ".join(needs)

    def info(self) -> dict[str, Any]:
        """What a terminal needs once to draw the table: layout and the rules icon."""
        return {
            **self.summary(),
            "rules_icon": rules_icon(self.rules, self.seconds, self.default_action),
            "side_wagers": list(self.adapter.side_wagers),
            "table_minimum": self.rules.table_minimum,
            "table_maximum": self.rules.table_maximum,
            "betting_unit": self.rules.betting_unit,
            "decks": self.rules.decks,
            "confirm_above": self.config.confirm_above,
            "result_hold_seconds": self.config.result_hold_seconds,
        }

    def player_state(self, player: str, terminal: str = "") -> dict[str, Any]:
        """The state message for a player's terminal (the position he selected there)."""
        view = None if self.round is None else self.adapter.player_view(self.round, player)
        return {
            "type": "state",
            "table": self.id,
            "status": self.status,
            "round_id": self.round_id,
            "seq": self.last_seq,
            "view": view,
            "position": self.position_of(player, terminal),
            "balance": self.floor.balances.get(player),
            "countdown": self.countdown(),
        }

    def player_states(
        self, terminals: set[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[tuple[Any, ...], str]]:
        """The state message of each (player, terminal) as JSON text, with a key naming what
        it shows (everything but ``seq`` and the clock's ``now_ms``): :meth:`player_state` for
        many terminals, each player's view built once and the views built by the adapter in
        one pass."""
        players = {player for player, _ in terminals}
        views = {} if self.round is None else self.adapter.player_views(self.round, players)
        countdown = self.countdown()
        clock = None if countdown is None else (countdown["ends_at_ms"], countdown["window"])
        head = (
            f'{{"type":"state","table":{_encode(self.id)},"status":{_encode(self.status)},'
            f'"round_id":{_encode(self.round_id)},"seq":{self.last_seq},"countdown":'
            f"{_encode(countdown)},"
        )
        encoded: dict[int, str] = {}
        out: dict[tuple[str, str], tuple[tuple[Any, ...], str]] = {}
        for player, terminal in terminals:
            view = views.get(player)
            text = encoded.get(id(view))
            if text is None:
                text = encoded[id(view)] = _encode(view)
            position = self.position_of(player, terminal)
            balance = self.floor.balances.get(player)
            key = (self.id, self.status, self.round_id, text, position, balance, clock)
            out[(player, terminal)] = (
                key,
                f'{head}"view":{text},"position":{_encode(position)},"balance":{_encode(balance)}}}',
            )
        return out

    def staff_state(self) -> dict[str, Any]:
        """The state message for the dealer console and the supervisor."""
        round_ = self.round
        view = None if round_ is None else self.adapter.audit_view(round_)
        return {
            "type": "state",
            "table": self.id,
            "status": self.status,
            "round_id": self.round_id,
            "seq": self.last_seq,
            "view": view,
            "next": self.next_instruction(),
            "waiting_for": self.waiting_for(),
            "countdown": self.countdown(),
            "procedures": self.procedures_state(),
            "transcript": None if round_ is None else transcript(round_),
            "tilts": self.tilts,
            "shoe": None if self.inventory is None else self.inventory.to_json(),
        }

    def procedures_state(self) -> dict[str, Any]:
        """The gaming-day record for the console."""
        proc = self.procedures
        return {
            "gaming_day": self.gaming_day(),
            "reader_inspected": proc.reader_day == self.gaming_day(),
            "reader_by": proc.reader_by,
            "decks_registered_us": proc.decks_us,
            "decks_by": proc.decks_by,
            "decks_inspected": proc.decks_inspected,
            "inspected_by": proc.inspected_by,
            "problem": None if (p := self.procedure_problem()) is None else p.message,
        }

    def next_instruction(self) -> str:
        """What the dealer does next, in words (the console's banner)."""
        if self.status == "halted":
            return f"STOP — irregularity: {self.halt_reason}. Call the floorperson."
        if self.status != "open":
            return f"Table {self.status}."
        round_ = self.round
        if round_ is None or round_.is_complete:
            problem = self.procedure_problem()
            if problem is not None:
                return problem.message
            return "Open the next round." if not self.config.automated else "Next round soon."
        request = round_.card_request
        if request is not None:
            target = request.describe()
            if target == "dealer hole card":
                return "Deal the hole card face down and insert it into the card reader."
            if target.startswith("community"):
                return f"Draw {target} face up into the community box."
            if target == "dealer":
                return "Turn the hole card; draw a card for the dealer."
            return f"Deal a card to {target}."
        if round_.phase.value == "wagering" and self.config.automated:
            if self.deadline is not None and self.window_key is not None:
                return (
                    "Wagering is open; the server closes it "
                    f"{self.config.wagering_seconds:g} s after the first wager."
                )
            return "Wagering is open; waiting for the first wager."
        if round_.phase.value == "wagering":
            return "Wagering is open; close wagering to deal."
        if round_.phase.value == "dealer":
            return "Turn the hole card."
        step: str = round_.next_step()
        return f"Wait: {step}."
