"""The floor: the store, every table, the balance cache, tokens and the connected sockets.

One process serves many tables (:class:`Floor`). Tables come from a tables file (TOML, see
docs/server.md) or the demo; each is saved to the store with its rules, so a restart finds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import tomllib
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablejack.core.rules import read_toml
from tablejack.games import GAMES
from tablejack.server.support.auth import ACCESS_RULE, Auth, Principal, TerminalBinding
from tablejack.server.support.wire import dumps
from tablejack.server.table import CardInventory, LockOut, Table, TableConfig
from tablejack.store import Fence, InsufficientFundsError, Store, Transfer
from tablejack.store import credentials as creds
from tablejack.store.policy import Actor, Role

__all__ = [
    "CREDENTIAL_ENDED",
    "LEASE_RULE",
    "OUTBOX_LIMIT",
    "SETUP",
    "TABLE_MOVED",
    "Connection",
    "Floor",
    "Outboxes",
    "TableElsewhereError",
    "load_tables_file",
    "stored_config",
    "table_config_from",
]

log = logging.getLogger("tablejack.server")

SETUP = Actor(Role.CASHIER, "floor set-up")
"""Who funds and issues tokens when the floor is set up from code (the demo, the tests)."""
SETUP_OPERATOR = Actor(Role.OPERATOR, "floor set-up")


OUTBOX_LIMIT = 256
"""Messages a connection may have waiting to be sent; one more disconnects it (too slow)."""
CREDENTIAL_ENDED = "credential ended"
"""The reason of the 1008 close of a socket whose credential ended (signed out, revoked,
expired, its terminal's key replaced, the terminal retired)."""
CLOSING = (1008, "closing")
"""The close code and reason of a socket the server ends without saying why."""
TABLE_MOVED = "table moved"
"""The reason of the 1008 close of a socket whose table another process of the floor runs now
(the terminal reconnects and reaches it there)."""


class Outboxes:
    """The sending of every connection of a process: a connection's messages wait in its own
    outbox, in order; one task per turn of the event loop sends every outbox that has
    messages, one after the other. uvicorn writes a frame to the socket's transport without
    waiting (a slow reader's frames wait in the transport's buffer), so one task sends them
    all, where a writer task per socket cost a task switch and a queue hand-off per frame."""

    def __init__(self) -> None:
        self._ready: list[Connection] = []
        self._task: asyncio.Task[None] | None = None

    def wake(self, connection: Connection) -> None:
        """``connection`` has a message to send: send it at the next turn."""
        self._ready.append(connection)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        try:
            while self._ready:
                ready, self._ready = self._ready, []
                for connection in ready:
                    await connection.send_waiting()
        finally:
            self._task = None


_NO_OUTBOXES = Outboxes()
"""The outboxes of connections made outside a floor's sockets (tests)."""


@dataclass(eq=False)
class Connection:
    """A connected WebSocket: who it is (role, subject, terminal) and its outbox.

    Sending never blocks a table: messages wait in the connection's outbox until the process's
    :class:`Outboxes` sends them; a terminal that falls :data:`OUTBOX_LIMIT` messages behind is
    disconnected."""

    role: str
    subject: str
    terminal: str
    principal: Principal | None = None
    """The credential the socket signed in with (checked before every message)."""
    session: str = ""
    """The session the socket belongs to: its message sequence numbers are the session's."""
    binding: TerminalBinding | None = None
    """A player's terminal: the table and position its registration binds it to."""
    device: Principal | None = None
    """The terminal's device credential the hello presented (checked before every message)."""
    outbox: deque[dict[str, Any] | str | None] = field(default_factory=deque)
    """Messages waiting to be sent, in order (None: close the socket)."""
    table: str | None = None
    overflowed: bool = False
    last_state: tuple[Any, ...] | None = None
    """What the last broadcast state showed this terminal (an unchanged state is not sent)."""
    told: tuple[str | None, int] = (None, -1)
    """The round and sequence number a broadcast last told this socket (in a ``state`` or a
    ``seq``; a round's numbers start again at 1)."""
    wants_seq: int | None = None
    """A command of this socket's in flight (0), or answered at a sequence number the socket
    has not been told yet (the ``ack``'s ``seq``): a broadcast that changes nothing it shows
    still tells it the table's sequence number (``seq``); None: nothing awaited."""
    writable: asyncio.Event | None = field(default=None, repr=False)
    """Set while the socket's transport takes frames without waiting (the server's
    ``tablejack.writable`` scope extension; None: a server that does not tell, whose sends
    are taken not to wait)."""
    outboxes: Outboxes = field(default=_NO_OUTBOXES, repr=False)
    send: Callable[[str], Awaitable[None]] | None = field(default=None, repr=False)
    """Sends a frame's text on the socket (None until the socket is attached, and after it
    ended)."""
    send_texts: Callable[[list[str]], bool] | None = field(default=None, repr=False)
    """Sends several frames' texts in one write, False once the socket takes no more (the
    server's ``tablejack.send_texts`` scope extension; None: a server that has none, whose
    frames go one by one through :attr:`send`)."""
    close: Callable[[int, str], Awaitable[None]] | None = field(default=None, repr=False)
    abort: Callable[[], None] | None = field(default=None, repr=False)
    """Drops the connection at once, no close handshake (the server's ``tablejack.abort``
    scope extension; None: a server that has none)."""
    ended: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    """Set when the socket was closed from this side, or ended."""
    closing: tuple[int, str] | None = None
    """The close code and reason when the server ends the socket: 1008 and a reason
    (:meth:`end`), or 1012 for a drain (``server.health``); None: 1008 ``closing``."""
    _waiting: asyncio.Task[None] | None = field(default=None, repr=False)
    """Waits for the transport to drain (see :meth:`send_waiting`)."""

    def push(self, message: dict[str, Any] | str | None) -> None:
        """Queue a message (a dict, or its JSON text already encoded; None: close).

        One message past :data:`OUTBOX_LIMIT` closes the socket as too slow: with a 1008 close
        frame when its transport still takes frames, or, when its transport is full (a client
        that reads nothing would never take the close frame either), by dropping the
        connection at once (:attr:`abort`)."""
        if self.ended.is_set():
            return
        if len(self.outbox) >= OUTBOX_LIMIT:
            if self.overflowed:
                return  # the close is already waiting
            self.overflowed = True
            writable, abort = self.writable, self.abort
            if abort is not None and writable is not None and not writable.is_set():
                log.warning("dropped %s's socket: too slow, its transport full", self.subject)
                self.detach()
                abort()
                return
            self.outbox.pop()
            message = None
        first = not self.outbox
        self.outbox.append(message)
        if first and self.send is not None:
            self.outboxes.wake(self)

    def end(self, reason: str) -> None:
        """Close the socket (1008 ``reason``) after the messages already waiting."""
        self.closing = self.closing or (1008, reason)
        self.push(None)

    def ended_because(self, by_reader: str) -> str:
        """Why the socket ended, as ``tablejack_socket_ends_total`` counts it: ``too slow``
        (its outbox overflowed), ``drained`` (a 1012 close), the reason the server gave when it
        ended it (:meth:`end`), or else ``by_reader``, what the reading side saw (``peer``:
        the terminal closed it or the connection was cut)."""
        if self.overflowed:
            return "too slow"
        if self.closing is not None:
            return "drained" if self.closing[0] == 1012 else self.closing[1]
        return by_reader

    def attach(
        self,
        send: Callable[[str], Awaitable[None]],
        close: Callable[[int, str], Awaitable[None]],
        outboxes: Outboxes,
        writable: asyncio.Event | None = None,
        abort: Callable[[], None] | None = None,
        send_texts: Callable[[list[str]], bool] | None = None,
    ) -> None:
        """Send this connection's messages on a socket (those already waiting first)."""
        self.send, self.close, self.outboxes, self.writable = send, close, outboxes, writable
        self.abort, self.send_texts = abort, send_texts
        if self.outbox:
            outboxes.wake(self)

    async def _when_writable(self) -> None:
        """Wake the sending again when the transport drained (or the socket ended)."""
        assert self.writable is not None
        await self.writable.wait()
        if self.outbox and self.send is not None:
            self.outboxes.wake(self)

    def detach(self) -> None:
        """The socket ended: nothing more is sent."""
        self.send = self.close = self.abort = self.send_texts = None
        self.outbox.clear()
        self.ended.set()

    async def send_waiting(self) -> None:
        """Send the waiting messages (the :class:`Outboxes` task): a None closes the socket
        (1008 ``too slow`` after an overflow); a failed send ends the sending, the reader
        notices the socket went away. With :attr:`send_texts`, the messages up to the next
        None leave in one write."""
        while self.outbox and self.send is not None:
            writable = self.writable
            if writable is not None and not writable.is_set():  # a client that does not read
                if self._waiting is None or self._waiting.done():
                    self._waiting = asyncio.get_running_loop().create_task(self._when_writable())
                return  # the others' frames go on; this outbox fills up to too slow
            if self.send_texts is not None and self.outbox[0] is not None:
                outbox, texts = self.outbox, []
                while outbox and outbox[0] is not None:
                    message = outbox.popleft()
                    texts.append(message if isinstance(message, str) else dumps(message))
                if not self.send_texts(texts):  # the socket went away: the reader will notice
                    self.detach()
                    return
                continue
            message = self.outbox.popleft()
            if message is None:
                close = self.close
                self.detach()
                if close is not None:
                    with contextlib.suppress(Exception):
                        await close(
                            *((1008, "too slow") if self.overflowed else self.closing or CLOSING)
                        )
                return
            try:
                await self.send(message if isinstance(message, str) else dumps(message))
            except Exception:  # the socket went away: the reader will notice
                self.detach()
                return


def table_config_from(entry: Mapping[str, Any], base: Path | None = None) -> TableConfig:
    """A table from a tables-file entry: ``id``, ``rules`` (a rules file path, relative to the
    tables file) or ``game`` (the game's defaults), ``[tables.rules_override]`` and the
    run options of :class:`TableConfig`."""
    data = dict(entry)
    table_id = str(data.pop("id"))
    rules_path = data.pop("rules", None)
    override = dict(data.pop("rules_override", {}))
    game_id = data.pop("game", None)
    if rules_path is not None:
        path = Path(rules_path)
        if base is not None and not path.is_absolute():
            path = base / path
        mapping = dict(read_toml(path))
    else:
        mapping = {"game": game_id or "classic"}
    mapping.update(override)
    chosen = str(mapping.get("game", game_id or "classic"))
    rules = GAMES[chosen].rules_class.from_mapping(mapping)
    return TableConfig(id=table_id, rules=rules, **data)


def load_tables_file(path: str | Path) -> list[TableConfig]:
    """Every ``[[tables]]`` entry of a tables file."""
    file = Path(path)
    with file.open("rb") as handle:
        data = tomllib.load(handle)
    return [table_config_from(entry, file.parent) for entry in data.get("tables", [])]


def stored_config(row: Mapping[str, Any]) -> TableConfig:
    """A table as the store keeps it (a row of :meth:`Store.tables`)."""
    rules = GAMES[row["game"]].rules_class.from_mapping(row["rules"])
    options = {k: v for k, v in row["config"].items() if k in TableConfig.__dataclass_fields__}
    return TableConfig(id=row["id"], rules=rules, **options)


LEASE_RULE = "table lease"
"""The rule a refusal or a close names when a table moves to another process of the floor."""


class TableElsewhereError(Exception):
    """The table is run by another process of the floor, which serves at ``url``."""

    def __init__(self, table_id: str, url: str) -> None:
        super().__init__(f"Table {table_id} is run by the process at {url}.")
        self.table_id = table_id
        self.url = url


def _nowhere(table_id: str) -> str | None:
    del table_id
    return None


def _ignore(table_id: str) -> None:
    del table_id


class Floor:
    """Everything one server process runs."""

    def __init__(
        self,
        store: Store,
        *,
        lockout: Callable[[Floor, Table], LockOut],
        card_inventory: Callable[[Table], CardInventory],
        clock: Callable[[], float] = time.time,
        broadcast_interval: float = 0.0,
        step_window: float = 0.0,
        step_wait: float = 0.0,
    ) -> None:
        self.store = store
        self.lockout = lockout
        """Makes a table's tilts (PA 605a lock-out) for it; the composition root hands the
        floor its duties (``server.tilts``), so the floor imports none of them."""
        self.card_inventory = card_inventory
        """Makes the card inventory of a table's shoe (PA 605a, ``server.inventory``)."""
        self.clock = clock
        self.broadcast_interval = broadcast_interval
        """Seconds a table gathers changes before it sends one update (0: next loop turn)."""
        self.step_window = step_window
        """Seconds a table's worker, idle when a terminal's request arrives, waits for the
        requests that follow it, to apply them all as one step (0: those waiting at the next
        loop turn; :meth:`Batches.submit <tablejack.server.table.batches.Batches.submit>`)."""
        self.step_wait = step_wait
        """Seconds at most a table's worker waits, in a decision window, for the answers of
        every player the window waits for (never less than :attr:`step_window`)."""
        self.tables: dict[str, Table] = {}
        self.balances: dict[str, int] = {}
        self.connections: set[Connection] = set()
        self.outboxes = Outboxes()
        """Sends every connection's waiting messages."""
        self.auth = Auth(store, self.now_us)
        self.auth.on_end = self.end_sockets  # a credential that ends closes its sockets
        self.sequences: dict[str, tuple[int, str | None]] = {}
        """The last message number (and id) of each session."""
        self.elsewhere: Callable[[str], str | None] = _nowhere
        """The address of the process of the floor that runs a table this one does not (set
        by the floor's leases, :mod:`tablejack.server.floor.leasing`), or None."""
        self.member = ""
        """This process's member id on a floor of several (set by the floor's leases; '' for a
        floor of one process)."""
        self.url = ""
        """The address the floor's other processes reach this one at ('' for a floor of one)."""
        self.others: dict[str, dict[str, Any]] = {}
        """The tables other processes of the floor run, as a list shows them (kept by the
        floor's leases): id, title, game, status and where."""
        self.fenced: Callable[[str], None] = _ignore
        """Told when the store refused a write of a table for its fencing token: another
        process took the table over (the floor's leases stop serving it here)."""
        self.lock_listeners: list[Callable[[], Awaitable[None]]] = []
        """Told by :meth:`locks_changed` (the floor's duties: the guard reloads the locked
        terminals, the consoles show them); the floor knows none of them."""

    async def locks_changed(self) -> None:
        """A terminal was locked or unlocked in the store (by staff, a tilt, the SAS host):
        tell the listeners (:attr:`lock_listeners`), in order."""
        for listener in list(self.lock_listeners):
            await listener()

    def summaries(self, table_id: str | None = None) -> list[dict[str, Any]]:
        """Every table of the floor for a list: this process's, then the others'. With
        ``table_id``: that table alone (a terminal's), or every table while the floor does not
        know it."""
        if table_id is not None:
            table = self.tables.get(table_id)
            if table is not None:
                return [table.summary()]
            if table_id in self.others:
                return [self.others[table_id]]
        own = [table.summary() for table in self.tables.values()]
        return own + [row for key, row in sorted(self.others.items()) if key not in self.tables]

    def now_us(self) -> int:
        """The floor clock in microseconds."""
        return int(self.clock() * 1_000_000)

    async def add_table(
        self, config: TableConfig, *, status: str = "open", fence: Fence | None = None
    ) -> Table:
        """Register (or re-register) a table and start it (recovering an open round). The
        table is handed its collaborators: its tilts and its shoe's card inventory. With a
        ``fence`` the table was taken under a lease (:mod:`tablejack.server.floor.leasing`): it is
        started as the store keeps it (its configuration and status are not written again) and
        every write of it carries the fence."""
        if fence is None:
            await self.store.save_table(
                config.id, config.rules.game, config.rules.to_mapping(), config.to_json()
            )
        table = Table(
            self,
            config,
            lockout=lambda table: self.lockout(self, table),
            card_inventory=self.card_inventory,
            fence=fence,
        )
        if fence is None:
            self.tables[config.id] = table
            await self.store.set_table_status(config.id, status)
            await table.start(status)
        else:  # a process serving already: no request reaches the table before its recovery
            await table.start(status)
            self.tables[config.id] = table
        return table

    async def load_stored_tables(self, skip: Iterable[str] = ()) -> None:
        """Start the tables saved in the store that no tables file named this time."""
        skipped = set(skip)
        for row in await self.store.tables():
            if row["id"] in skipped or row["id"] in self.tables:
                continue
            await self.add_table(stored_config(row), status=row["status"])

    async def refresh_balances(self) -> None:
        """Load every player balance into the cache (player accounts only: a table's escrow
        is never a balance a terminal shows)."""
        self.balances = await self.store.accounts("player")

    async def add_player(self, player: str, credit: int, token: str | None = None) -> str:
        """An account with ``credit`` cents sold by the cage, and a player token."""
        created = await self.store.ensure_account(player, "player", player)
        if created and credit:
            await self.store.fund(player, credit, "opening credit", actor=SETUP)
        self.balances[player] = await self.store.balance(player) or 0
        return await self.issue_token("player", player, token)

    async def issue_token(self, role: str, subject: str, token: str | None = None) -> str:
        """A credential for ``role`` and ``subject`` issued at set-up (the secret)."""
        issued = await creds.issue(self.store, role, subject, by=SETUP_OPERATOR, token=token)
        return issued.token

    async def register_terminal(
        self, terminal: str, table: str, *, position: int | None = None, key: str | None = None
    ) -> str:
        """Register a terminal at set-up; its device credential (the secret)."""
        from tablejack.store.vouchers import register_terminal

        issued = await register_terminal(
            self.store, terminal, table, by=SETUP_OPERATOR, position=position, key=key
        )
        assert issued is not None  # a registration with a credential
        return issued.token

    def signed_in(self, connection: Connection) -> bool:
        """Are the socket's credential (and its terminal's) still valid? (No I/O.)"""
        return all(
            principal is None or self.auth.valid(principal)
            for principal in (connection.principal, connection.device)
        )

    def end_sockets(self, ended: set[str], why: str) -> int:
        """Close at once the sockets signed in with a credential of ``ended`` (hashes), or at a
        terminal by its device credential of ``ended``: an ``error`` frame (code
        ``credential``) saying ``why``, then 1008 :data:`CREDENTIAL_ENDED`. How many."""
        closed = 0
        for connection in list(self.connections):
            if connection.ended.is_set() or connection.closing:
                continue
            if any(
                principal is not None and principal.token_hash in ended
                for principal in (connection.principal, connection.device)
            ):
                connection.push(
                    {
                        "type": "error",
                        "id": None,
                        "code": "credential",
                        "rule": ACCESS_RULE,
                        "message": why,
                    }
                )
                connection.end(CREDENTIAL_ENDED)
                closed += 1
        return closed

    def book(self, transfers: Iterable[Transfer]) -> None:
        """Apply committed transfers to the balance cache."""
        for transfer in transfers:
            if transfer.from_account in self.balances:
                self.balances[transfer.from_account] -= transfer.amount
            if transfer.to_account in self.balances:
                self.balances[transfer.to_account] += transfer.amount

    def check_funds(self, transfers: Iterable[Transfer]) -> None:
        """Refuse early (the database refuses too) when a player's cached balance is short."""
        deltas: dict[str, int] = {}
        for transfer in transfers:
            deltas[transfer.from_account] = deltas.get(transfer.from_account, 0) - transfer.amount
            deltas[transfer.to_account] = deltas.get(transfer.to_account, 0) + transfer.amount
        for account, delta in deltas.items():
            balance = self.balances.get(account)
            if balance is not None and delta < 0 and balance + delta < 0:
                raise InsufficientFundsError(account, -delta, balance)

    async def stop(self) -> None:
        """Stop every table's clock and automated dealer."""
        for table in self.tables.values():
            await table.stop()
