"""What a table shows, and the broadcast that sends it: its summary and layout, the state
message of each player's terminal and of the staff, the dealer's next instruction, the gaming-day
record, the running clock — each built from the table's state without changing it
(:class:`TableViews`, which :class:`~tablejack.server.table.table.Table` extends).

The broadcast sends a table's state to everyone watching it once per burst of changes: the
shared part of the terminal views is built once, each player's own part once per player, each
message encoded once; a terminal whose state did not change gets the short ``seq`` message.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from typing import Any

from tablejack.games import transcript
from tablejack.server import visibility
from tablejack.server.support.wire import dumps as _encode
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.cards import ShoeInventory, VirtualShoe
from tablejack.server.table.collaborators import CardInventory, Host, LockOut, Subscriber
from tablejack.server.table.config import TableConfig
from tablejack.server.table.errors import RefusedError, WageringClosedError
from tablejack.server.table.games import ADAPTERS, TableGame, rules_icon
from tablejack.server.table.procedures import (
    DAY_US,
    DECK_AGE_RULE,
    DECK_INSPECTION_RULE,
    READER_RULE,
    Procedures,
)
from tablejack.store import Fence
from tablejack.store.policy import Actor

__all__ = ["WAGERING_RULES", "TableViews"]

WAGERING_RULES = {game_id: adapter.wagering_rule for game_id, adapter in ADAPTERS.items()}
"""The clause of each game that wagers are placed before the first card (the engine's own)."""


class TableViews:
    """The questions a table answers and the messages it sends, read from its state (set by
    :class:`~tablejack.server.table.table.Table`, which also changes it)."""

    floor: Host
    config: TableConfig
    id: str
    rules: Any
    game: str
    adapter: TableGame[Any]
    status: str
    round: Any
    round_id: str | None
    number: int
    books: Books
    shoe: VirtualShoe | None
    procedures: Procedures
    subscribers: set[Subscriber]
    selected: dict[tuple[str, str], int]
    window_key: tuple[Any, ...] | None
    deadline: float | None
    window_seconds: float
    halt_reason: str
    tilts: list[dict[str, Any]]
    irregular_round: str | None
    manual_entry_round: str | None
    void_failure: str | None
    inventory: ShoeInventory | None
    card_inventory: CardInventory
    last_seq: int
    broadcast_pending: bool
    broadcast_interval: float
    last_broadcast: float
    seconds: float
    default_action: str
    fence: Fence | None
    actor: Actor
    lock: asyncio.Lock
    lockout: LockOut
    needs_reload: bool
    stopped: bool

    # -- the gaming day's procedures (633c.5(d), (g), (i)) ----------------------------------

    @property
    def procedures_id(self) -> str:
        """The id of the table's gaming-day procedure log."""
        return f"{self.id}-procedures"

    def gaming_day(self, at_us: int | None = None) -> str:
        """The gaming day (a date) of a moment: days start at ``gaming_day_start_hour`` UTC."""
        moment = self.floor.now_us() if at_us is None else at_us
        shifted = moment // 1_000_000 - self.config.gaming_day_start_hour * 3600
        return dt.datetime.fromtimestamp(shifted, dt.UTC).date().isoformat()

    def procedure_problem(self) -> RefusedError | None:
        """Why the table may not deal now, or None (633c.5(d), (g), (i))."""
        if not self.config.require_procedures:
            return None
        if (missing_shoe := self.card_inventory.problem()) is not None:
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

    # -- positions and wagers ----------------------------------------------------------------

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
        rule = self.adapter.wagering_rule
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

    # -- what the table shows ----------------------------------------------------------------

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

    def table_tilts(self) -> list[dict[str, Any]]:
        """The table's own active tilts (not those of its terminals)."""
        return [t for t in self.tilts if t["scope"] == "table"]

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
            "simulated_shoe": self.config.simulated_shoe,
            "manual_entry": self.round_id is not None and self.manual_entry_round == self.round_id,
            "automated": self.config.automated,
            "automation": self.automation(),
            "halt_reason": self.halt_reason,
            "waiting_for": self.waiting_for(),
            "needs": self.needs(),
            "tilts": self.tilts,
        }

    def needs(self) -> list[dict[str, Any]]:
        """What a halted table waits for from a supervisor before play goes on, one item
        each, for a page to put in its reader's words: a table tilt to clear
        (``{"action": "clear", "code": …}``) and the round to void (``{"action": "void",
        "round_id": …, "failed": …}``, ``failed``: the void the store did not write). Empty
        when it waits for nothing."""
        if self.status != "halted":
            return []
        out: list[dict[str, Any]] = [
            {"action": "clear", "code": t["code"]} for t in self.table_tilts()
        ]
        round_open = self.round is not None and not self.round.is_complete
        if round_open and self.void_failure is not None:
            out.append({"action": "void", "round_id": self.round_id, "failed": self.void_failure})
        elif round_open and self.irregular_round == self.round_id:
            out.append({"action": "void", "round_id": self.round_id, "failed": None})
        return out

    def waiting_for(self) -> str | None:
        """What a halted table waits for before play goes on, in English words (None: it
        waits for nothing; :meth:`needs` says it item by item)."""
        if self.status != "halted":
            return None
        needs = [
            f"clear the tilt {need['code']}"
            if need["action"] == "clear"
            else f"void round {need['round_id']}"
            + (f" ({need['failed']})" if need["failed"] is not None else "")
            for need in self.needs()
        ]
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
        """The state message for a player's terminal (the position he selected there), as the
        information policy lets him see it (:func:`~tablejack.server.visibility.player_view`)."""
        round_ = self.round
        view = visibility.player_view(
            visibility.Viewer("player", player, terminal),
            round_,
            None if round_ is None else self.adapter.player_view(round_, player),
        )
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
        many terminals, each player's view built once, the views built by the adapter in one
        pass and in pieces, and the other players' names concealed in each shared piece once
        (:class:`~tablejack.server.visibility.Concealer`)."""
        players = {player for player, _ in terminals}
        pieces = (
            {} if self.round is None else self.adapter.player_pieces(self.round, players, _encode)
        )
        concealer = (
            None if self.round is None else visibility.Concealer(self.round, _encode, players)
        )
        countdown = self.countdown()
        clock = None if countdown is None else (countdown["ends_at_ms"], countdown["window"])
        head = (
            f'{{"type":"state","table":{_encode(self.id)},"status":{_encode(self.status)},'
            f'"round_id":{_encode(self.round_id)},"seq":{self.last_seq},"countdown":'
            f"{_encode(countdown)},"
        )
        out: dict[tuple[str, str], tuple[tuple[Any, ...], str]] = {}
        texts: dict[str, str] = {}
        for player, terminal in terminals:
            text = texts.get(player)
            if text is None:  # the information policy: the others by their labels
                own = pieces.get(player, ("null",))
                text = texts[player] = (
                    "".join(own) if concealer is None else concealer.text(own, player)
                )
            position = self.position_of(player, terminal)
            balance = self.floor.balances.get(player)
            key = (self.id, self.status, self.round_id, text, position, balance, clock)
            out[(player, terminal)] = (
                key,
                f'{head}"view":{text},"position":{_encode(position)},"balance":{_encode(balance)}}}',
            )
        return out

    def state_for(self, viewer: visibility.Viewer) -> dict[str, Any]:
        """The state message ``viewer`` may see (the REST state and the WebSocket join): a
        player's own, or the staff's as his role may see it (the information policy)."""
        if viewer.role == "player":
            return self.player_state(viewer.subject, viewer.terminal)
        return visibility.staff_state(viewer, self.staff_state())

    def staff_state(self) -> dict[str, Any]:
        """The state message for the dealer console and the supervisor: the whole table, no
        card face down (:func:`~tablejack.server.visibility.staff_view`, PA 633c.5(o))."""
        round_ = self.round
        view = (
            None
            if round_ is None
            else visibility.staff_view(round_, self.adapter.audit_view(round_))
        )
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
            "controls": self.controls(),
            "shoe": visibility.shoe(
                round_, None if self.inventory is None else self.inventory.to_json()
            ),
        }

    def controls(self) -> dict[str, bool]:
        """What the dealer console can send now, so that it offers nothing else (a control
        the round cannot take is disabled, not refused after a click): ``open_round`` with no
        round in progress, ``close_wagering`` while wagering is open, ``countdown_expired``
        while a decision window counts down, ``shoe_draw`` (the simulated shoe) and ``card``
        (entry by hand, only where a supervisor allowed it: ``manual_entry``) only while the
        round waits for a card."""
        manual = self.config.source == "reader" and not self.config.automated
        round_ = self.round
        playing = self.status == "open" and not self.config.automated
        in_round = round_ is not None and not round_.is_complete
        wanted = self.status == "open" and in_round and round_.card_request is not None
        allowed = self.config.manual_entry == "open" or (
            self.manual_entry_round is not None and self.manual_entry_round == self.round_id
        )
        window = self.window_key
        return {
            "open_round": playing and not in_round,
            "close_wagering": playing and in_round and round_.phase.value == "wagering",
            "countdown_expired": playing and window is not None and window[0] != "wagering",
            "shoe_draw": wanted and self.config.simulated_shoe,
            "card": wanted and manual and allowed,
            "manual_entry": in_round and manual and allowed,
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

    # -- the broadcast -----------------------------------------------------------------------

    def broadcast(self) -> None:
        """Send the table's state to everyone watching it, once per burst of changes: the
        send is scheduled for the next turn of the event loop, so steps committed back to back
        produce one update; each state message carries the last committed sequence number.

        With a ``broadcast_interval``, updates are at least that far apart: a change after a
        quiet spell is sent at the next turn as without one, a change within the interval
        after the last update waits for its end, gathered with every change meanwhile (a
        burst of wagers or decisions costs one update per interval, not one per batch)."""
        if self.broadcast_pending:
            return
        self.broadcast_pending = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (called from synchronous code): send now
            self._send_state()
            return
        wait = self.last_broadcast + self.broadcast_interval - loop.time()
        if wait > 0:
            loop.call_later(wait, self._send_state)
        else:
            loop.call_soon(self._send_state)

    def _send_state(self) -> None:
        """One update of the table: the shared part of the terminal views is built once, each
        player's own part once per player, each message encoded once. A terminal whose state
        (view, balance, position, status, clock) is the one it was last sent is sent nothing —
        at human pace most steps are one player's decision, which changes no one else's view —
        unless a command of its own is in flight or was answered at a sequence number it has
        not been told: it gets the short ``seq`` message, the state it holds current at that
        number."""
        self.broadcast_pending = False
        with contextlib.suppress(RuntimeError):  # (no loop: sent from synchronous code)
            self.last_broadcast = asyncio.get_running_loop().time()
        subscribers = list(self.subscribers)
        players = {(c.subject, c.terminal) for c in subscribers if c.role == "player"}
        states = self.player_states(players) if players else {}
        staff: dict[bool, str] = {}  # by whether the role reads the round in progress
        same: str | None = None
        seq = self.last_seq
        for connection in subscribers:
            if connection.role == "player":
                key, text = states[(connection.subject, connection.terminal)]
                wants = connection.wants_seq
                if key == connection.last_state:
                    if wants is None or wants > seq:
                        continue  # nothing it shows changed, and it awaits nothing
                    if same is None:
                        same = _encode(
                            {"type": "seq", "table": self.id, "round_id": self.round_id, "seq": seq}
                        )
                    text = same
                else:
                    connection.last_state = key
                connection.push(text)
                connection.told = (self.round_id, seq)
                if wants:  # the answered command's number told
                    connection.wants_seq = None
            else:
                reads = connection.role in visibility.ROUND_READERS
                if reads not in staff:
                    viewer = visibility.Viewer(connection.role, connection.subject)
                    staff[reads] = _encode(visibility.staff_state(viewer, self.staff_state()))
                connection.push(staff[reads])
