"""Automatic tilts and lock-out (PA Chapter 605a): a fault the table system detects locks play
until a supervisor clears it with a clear code and a reason.

Two scopes:

* **Table tilts** — ``reader_fault`` (the reader sent ``FAULT`` or its connection dropped while
  the engine waited for a card), ``card_not_requested``, ``card_inventory`` (a card with no copy
  left in the shoe's inventory, a refused load, a mismatch at the end of a shoe) and
  ``storage_error`` (a step's commit failed). The table is ``halted``: it deals nothing and
  takes no wager or decision at any of its terminals. Each tilt is an event of the table's
  procedure log (``tilt``; its clear ``tilt_clear``), so a restart finds it, and an audit entry.
  ``POST /api/tables/{id}/clear`` (supervisor only) clears them; a round stopped as an
  irregularity also needs the supervisor's void (every unsettled wager refunded) before play
  resumes.
* **Terminal tilts** — ``connection_lost``: a player's terminal dropped its connection while he
  had an unsettled wager in the round (floor setting ``tilt_on_connection_loss``: ``mid_round``
  by default, once wagering has closed; ``always``; ``off``).
  The terminal is locked in the store like a staff tilt
  (:func:`tablejack.store.protections.lock_terminal`) and cleared by the same endpoint
  (``POST /api/floor/terminals/{terminal}/clear``); his seat and wagers stay, and his open
  decisions fall to the countdown default.

The dealer console and the supervisor see the table's tilts (``tilts`` in the staff state
message: the table's own and those of its terminals); every terminal at the table is told at
once with an ``error`` frame of code ``tilt``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tablejack.server.floor.floor import LEASE_RULE
from tablejack.server.table import RefusedError, Table
from tablejack.store import EventIn, EventRecord, FencedError, protections
from tablejack.store.protections import CLEAR_CODES, TILT_CODES, TILT_RULE
from tablejack.store.vouchers import floor_settings
from tablejack.store.vouchers import terminals as registered_terminals

if TYPE_CHECKING:
    from tablejack.server.floor.floor import Connection, Floor

__all__ = [
    "CONNECTION_SETTING",
    "RELOAD_SECONDS",
    "TABLE_TILT_RULE",
    "TableTilts",
    "TerminalTilts",
    "at_stake",
    "clear_table",
    "on_join",
    "raise_tilt",
    "restore",
    "settle_after_start",
    "storage_fault",
]

log = logging.getLogger("tablejack.server")

RELOAD_SECONDS = 1.0
"""While a burst of ``connection_lost`` tilts is written, the guard and the consoles reload at
least this often (a lock written applies within this time, the rest of the burst still to
write)."""

TABLE_TILT_RULE = "table lock-out"
"""The rule a table tilt's refusals name (a terminal's tilt names ``terminal lock-out``)."""
SWEEP_SECONDS = 1.0
"""How often, while a ``connection_lost`` lock is open, the floor looks whether its cause has
ended (the player back, nothing of his unsettled): the lock ends within this time."""
CLEAR_SETTING = "connection_lost_clear"
"""The floor setting: a ``connection_lost`` lock ends by itself once its player is back at the
terminal and holds no unsettled wager (``on_return``, the default), or only by a supervisor's
clear (``supervisor``)."""
CONNECTION_SETTING = "tilt_on_connection_loss"
"""The floor setting: lock a terminal whose connection drops while its player has an
unsettled wager in the round — ``mid_round`` (the default: once wagering has closed),
``always`` (from his wager on, wagering still open included) or ``off``."""


class TableTilts:
    """A table's tilts as the table is handed them (its
    :class:`~tablejack.server.table.LockOut`): the floor makes one for each table
    (:meth:`TerminalTilts.lockout`)."""

    def __init__(self, terminals: TerminalTilts, table: Table) -> None:
        self.terminals = terminals
        self.floor = terminals.floor
        self.table = table

    def restore(self, records: Iterable[EventRecord]) -> None:
        """The table's active tilts from its procedure log (:func:`restore`)."""
        restore(self.table, records)

    async def started(self) -> None:
        """After the start's recovery: an active tilt keeps the table locked, and the locks of
        its terminals are shown (:func:`settle_after_start`, :meth:`TerminalTilts.refresh`)."""
        settle_after_start(self.table)
        await self.terminals.refresh([self.table])

    async def raise_tilt(self, code: str, message: str, *, by: str, rule: str) -> dict[str, Any]:
        """Lock the table (:func:`raise_tilt`)."""
        return await raise_tilt(self.table, code, message, by=by, rule=rule)

    async def storage_fault(self, error: BaseException) -> RefusedError:
        """A step's commit failed (:func:`storage_fault`). Refused for its fencing token,
        the table is another process's now: no tilt; the floor stops serving it here."""
        if isinstance(error, FencedError):
            table = self.table
            log.warning("table %s: a write refused by the store: %s", table.id, error)
            self.floor.fenced(table.id)
            with contextlib.suppress(Exception):
                await table.reload()
            return RefusedError(
                "moved",
                f"Table {table.id} is run by another process of the floor now; nothing of this "
                "step was written. The terminal reconnects to it.",
                LEASE_RULE,
            )
        return await storage_fault(self.table, error)


def _push(table: Table, message: str, rule: str) -> None:
    frame = {"type": "error", "id": None, "code": "tilt", "rule": rule, "message": message}
    for connection in list(table.subscribers):
        connection.push(frame)


async def raise_tilt(
    table: Table,
    code: str,
    message: str,
    *,
    by: str,
    rule: str = TABLE_TILT_RULE,
    terminal: str = "",
) -> dict[str, Any]:
    """Lock the table with a tilt ``code`` (the caller holds the table's lock, or runs where no
    step can interleave). The lock applies in memory first, so a tilt raised because the store
    failed still locks play; the event and the audit entry follow (logged, not raised, if the
    store fails again)."""
    if code not in TILT_CODES:
        raise ValueError(f"A tilt code is one of {', '.join(TILT_CODES)}, not {code}.")
    at_us = table.floor.now_us()
    entry: dict[str, Any] = {
        "scope": "table",
        "code": code,
        "message": message,
        "rule": rule,
        "by": by,
        "at_us": at_us,
        "round_id": table.round_id,
    }
    table.tilts = [*table.table_tilts(), entry, *(t for t in table.tilts if t["scope"] != "table")]
    table.settle_status()
    text = f"Table {table.id} locked ({code}): {message} Call the floorperson."
    _push(table, text, TABLE_TILT_RULE)
    try:
        await table.log_procedure(  # the gaming-day record shows the tilt
            EventIn(
                "tilt",
                {k: entry[k] for k in ("code", "message", "rule", "round_id")},
                actor=by,
                terminal=terminal,
            ),
            at_us=at_us,
        )
        await table.floor.store.audit(
            "tilt",
            f"table {table.id} {code}: {message}"[:500],
            table_id=table.id,
            actor=by,
            terminal=terminal,
            rule=TABLE_TILT_RULE,
        )
    except Exception:
        entry["logged"] = False
        log.exception("table %s: the %s tilt could not be written to the store", table.id, code)
    log.warning("table %s locked: %s %s", table.id, code, message)
    table.changed()
    return entry


async def clear_table(table: Table, code: str, reason: str, *, by: str) -> dict[str, Any]:
    """A supervisor clears the table's tilts with a clear code and a reason (the caller
    checked the role). An irregular round still needs the supervisor's void."""
    if code not in CLEAR_CODES or not reason.strip():
        raise RefusedError(
            "invalid",
            f"A clear names a code ({', '.join(CLEAR_CODES)}) and a reason.",
            TABLE_TILT_RULE,
        )
    async with table.lock:
        active = table.table_tilts()
        if not active:
            raise RefusedError("invalid", f"Table {table.id} has no tilt.", TABLE_TILT_RULE)
        payload = {
            "clear_code": code,
            "reason": reason[:200],
            "cleared": [t["code"] for t in active],
        }
        await table.log_procedure(EventIn("tilt_clear", payload, actor=by))
        table.tilts = [t for t in table.tilts if t["scope"] != "table"]
        if table.needs_reload:
            await table.reload()
            table.needs_reload = False
        table.settle_status()
        await table.floor.store.audit(
            "tilt_clear",
            f"table {table.id} {code}: {reason[:200]}",
            table_id=table.id,
            actor=by,
            rule=TABLE_TILT_RULE,
        )
    table.changed()
    return {**payload, "table": table.id, "status": table.status, "halt_reason": table.halt_reason}


def restore(table: Table, records: Iterable[EventRecord]) -> None:
    """Rebuild the table's active tilts from its procedure log (at start)."""
    active: list[dict[str, Any]] = []
    for record in records:
        if record.kind == "tilt":
            active.append(
                {"scope": "table", **record.payload, "by": record.actor, "at_us": record.at_us}
            )
        elif record.kind == "tilt_clear":
            active = []
    table.tilts = [*active, *(t for t in table.tilts if t["scope"] != "table")]


def settle_after_start(table: Table) -> None:
    """After the restart's recovery: a table with an active tilt stays locked."""
    if table.table_tilts():
        table.settle_status()


async def storage_fault(table: Table, error: BaseException) -> RefusedError:
    """A step's commit failed (the store raised): rebuild the round from its log (if the store
    answers), lock the table with ``storage_error`` and give the request its refusal."""
    log.error("table %s: a step's commit failed: %r", table.id, error)
    try:
        await table.reload()
    except Exception:
        table.needs_reload = True
        log.exception("table %s: the round could not be rebuilt; locked", table.id)
    await raise_tilt(
        table,
        "storage_error",
        f"the store refused a step ({type(error).__name__}); nothing of it was applied.",
        by="server",
    )
    return RefusedError(
        "storage_error",
        f"Table {table.id} could not record the step; play is locked until a supervisor "
        "clears the tilt.",
        TABLE_TILT_RULE,
    )


# -- terminal tilts ------------------------------------------------------------------------


def at_stake(floor: Floor, connection: Connection) -> dict[str, Any] | None:
    """What a closing player socket leaves at stake now: None unless its player has an
    unsettled wager in his table's round and no other socket of the terminal is open; else the
    table, the round and whether wagering is still open."""
    table = floor.tables.get(connection.table or "")
    round_ = None if table is None else table.round
    if connection.role != "player" or table is None or round_ is None or round_.is_complete:
        return None
    if any(c.terminal == connection.terminal for c in floor.connections if c is not connection):
        return None
    settled = {s.wager_id for s in round_.settlements}
    if not any(
        w.player == connection.subject and w.amount and w.id not in settled for w in round_.wagers
    ):
        return None
    return {
        "table": table.id,
        "round_id": table.round_id,
        "wagering": round_.phase.value == "wagering",
    }


class TerminalTilts:
    """The terminal tilts of one floor (the composition root makes it): the ``connection_lost``
    checks under way, the table at which each terminal was last locked automatically, and the
    locked terminals mirrored into each table's ``tilts``."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.last_table: dict[str, str] = {}
        """The table at which each terminal was last locked automatically."""
        self._lost: list[tuple[Connection, dict[str, Any]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None

    def lockout(self, floor: Floor, table: Table) -> TableTilts:
        """A table's tilts (the floor's factory of :class:`~tablejack.server.table.LockOut`)."""
        if floor is not self.floor:
            raise ValueError(f"Table {table.id}'s floor is not the floor of these tilts.")
        return TableTilts(self, table)

    def schedule_connection_lost(self, connection: Connection) -> None:
        """A player's socket closed: take the round as it stands at this moment
        (:func:`at_stake`) and queue the check (:meth:`lost`)."""
        stake = at_stake(self.floor, connection)
        if stake is not None:
            self.lost(connection, stake)

    def lost(self, connection: Connection, stake: dict[str, Any]) -> None:
        """Queue the ``connection_lost`` check of a socket that closed with ``stake``. One
        task of the floor writes the queue, one lock after another, in the order the sockets
        closed — a task apart from the closing socket's handler, so that its cancelling does
        not cancel the tilt. When a switch drops every terminal of the floor at once, the
        thousands of tilts take one connection of the store's pool, not all of it, and do not
        race each other for the head of the ``floor-tilts`` log; the guard and the consoles
        reload once for each batch written (what queued while the last was written), not once
        a tilt — and at least every :data:`RELOAD_SECONDS` while a long batch is written, so
        that a lock applies within that time of its write."""
        self._lost.append((connection, stake))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        floor = self.floor
        clock = asyncio.get_running_loop().time
        while self._lost:
            batch, self._lost = self._lost, []
            try:
                when = str((await floor_settings(floor.store)).get(CONNECTION_SETTING, "mid_round"))
            except Exception:
                log.exception("the connection_lost tilts of %d terminal(s) failed", len(batch))
                continue
            unheard, since = 0, clock()  # locks written and not yet reloaded, since when
            for number, (connection, stake) in enumerate(batch, 1):
                try:
                    unheard += await self._lock(connection, stake, when) is not None
                except Exception:
                    log.exception("the connection_lost tilt of %s failed", connection.terminal)
                if unheard:
                    self.watch_returns()
                if unheard and (number == len(batch) or clock() - since >= RELOAD_SECONDS):
                    try:  # the guard reloads, the consoles show the locks
                        await floor.locks_changed()
                    except Exception:
                        log.exception("the reload after %d connection_lost tilt(s) failed", unheard)
                    unheard, since = 0, clock()

    def watch_returns(self) -> None:
        """While a ``connection_lost`` lock is open, look every :data:`SWEEP_SECONDS` whether
        it has ended (:meth:`end_returned`); the sweep stops when none is left open."""
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                if not await self.end_returned():
                    return
            except Exception:
                log.exception("the sweep of the connection_lost locks failed")

    def _holds_unsettled(self, connection: Connection) -> bool | None:
        """Whether the player of ``connection`` holds an unsettled wager at the tables this
        process runs that his terminal plays at (None: his table runs elsewhere, unknown)."""
        names = {connection.table or "", self.last_table.get(connection.terminal or "", "")}
        names.discard("")
        if not names or any(name not in self.floor.tables for name in names):
            return None
        for name in names:
            round_ = self.floor.tables[name].round
            if round_ is None or round_.is_complete:
                continue
            settled = {s.wager_id for s in round_.settlements}
            if any(w.player == connection.subject and w.id not in settled for w in round_.wagers):
                return True
        return False

    async def end_returned(self) -> int:
        """End the ``connection_lost`` locks whose cause has ended — the terminal's player is
        back at it, at a table this process runs, and holds no unsettled wager — when the floor
        setting :data:`CLEAR_SETTING` is ``on_return``: cleared with the code ``returned`` by
        ``server`` (:func:`tablejack.store.protections.end_lost_connection`). Returns how
        many such locks are still open (0 under ``supervisor``: nothing to watch)."""
        floor = self.floor
        if str((await floor_settings(floor.store)).get(CLEAR_SETTING, "on_return")) != "on_return":
            return 0
        open_ = {
            terminal
            for terminal, tilts in (await protections.open_locks(floor.store)).items()
            if any(t["code"] == "connection_lost" for t in tilts)
        }
        ended = 0
        for terminal in sorted(open_):
            here = [c for c in floor.connections if c.terminal == terminal and c.role == "player"]
            if not here or any(self._holds_unsettled(c) is not False for c in here):
                continue
            who = ", ".join(sorted({c.subject for c in here}))
            done = await protections.end_lost_connection(
                floor.store,
                terminal,
                f"{who} back at the terminal with no wager unsettled",
                at_us=floor.now_us(),
            )
            ended += done is not None
        if ended:
            await floor.locks_changed()  # the guard reloads; the consoles and the pages show it
        return len(open_) - ended

    async def drain(self) -> None:
        """Let the queued ``connection_lost`` checks finish (at shutdown, before the store
        closes)."""
        sweeper = self._sweeper
        if sweeper is not None and not sweeper.done():
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
        writer = self._writer
        if writer is not None and not writer.done():
            await asyncio.wait([writer], timeout=5)
        if self._lost:
            log.error("%d connection_lost tilt(s) not written at shutdown", len(self._lost))

    async def _lock(
        self, connection: Connection, stake: dict[str, Any], when: str
    ) -> dict[str, Any] | None:
        """Lock the terminal (``connection_lost``) of a socket that closed with ``stake`` (see
        :func:`at_stake`) when the floor setting ``tilt_on_connection_loss`` (``when``) asks for
        it: ``mid_round`` once wagering had closed, ``always``, or ``off``. Returns the tilt, or
        None."""
        if when == "off" or (when == "mid_round" and stake["wagering"]):
            return None
        floor = self.floor
        table = floor.tables.get(stake["table"])
        if table is None:  # the table moved to another process of the floor: not this one's
            return None
        reason = (
            f"connection lost at table {stake['table']} in round {stake['round_id']} with "
            f"{connection.subject}'s wager unsettled"
        )
        done = await protections.lock_terminal(
            floor.store,
            connection.terminal,
            "connection_lost",
            reason,
            by="server",
            at_us=floor.now_us(),
            fence=table.fence,
        )
        self.last_table[connection.terminal] = stake["table"]
        return done

    async def refresh(self, tables: Iterable[Table] | None = None) -> None:
        """Mirror the locked terminals into each table's ``tilts`` (shown to the console): the
        terminals connected to the table, registered to it, or locked automatically at it."""
        floor = self.floor
        locks = await protections.open_locks(floor.store)
        if any(t["code"] == "connection_lost" for tilts in locks.values() for t in tilts):
            self.watch_returns()  # one that ends by itself (its player back) is looked at
        registered = await registered_terminals(floor.store)
        last = self.last_table
        for table in list(floor.tables.values()) if tables is None else tables:
            here = {c.terminal for c in table.subscribers if c.role == "player"}
            here |= {
                r["id"] for r in registered if r["table_id"] == table.id and r["status"] == "active"
            }
            here |= {t for t, at in last.items() if at == table.id}
            mirrored = [
                {
                    "scope": "terminal",
                    "terminal": terminal,
                    "code": lock["code"],
                    "message": lock["reason"],
                    "rule": TILT_RULE,
                    "by": lock["locked_by"],
                    "at_us": lock["locked_us"],
                }
                for terminal in sorted(here)
                for lock in locks.get(terminal, [])
            ]
            before = [t for t in table.tilts if t["scope"] == "terminal"]
            if mirrored != before:
                table.tilts = [*table.table_tilts(), *mirrored]
                table.broadcast()
                cleared = {t["terminal"] for t in before} - {t["terminal"] for t in mirrored}
                for connection in list(floor.connections):
                    if connection.terminal in cleared:  # the terminal's page drops its lock line
                        connection.push(
                            {
                                "type": "error",
                                "id": None,
                                "code": "tilt_cleared",
                                "rule": TILT_RULE,
                                "message": f"Terminal {connection.terminal} unlocked.",
                            }
                        )


def on_join(connection: Connection, table: Table) -> None:
    """Tell a terminal that joins a locked table, or whose own terminal is locked, at once."""
    for tilt in table.tilts:
        if tilt["scope"] == "table":
            message = f"Table {table.id} locked ({tilt['code']}): call the floorperson."
        elif tilt["terminal"] == connection.terminal:
            message = f"Terminal locked ({tilt['code']}): call an attendant."
        else:
            continue
        connection.push(
            {"type": "error", "id": None, "code": "tilt", "rule": tilt["rule"], "message": message}
        )
