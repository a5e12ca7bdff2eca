"""The trust model under random use: a Hypothesis state machine drives REST and WebSocket calls
as every role — players at their terminals, a player's bare token, the dealer, the supervisor,
the cashiers, the operator, and credentials that are anonymous, unknown, expired, revoked or a
terminal's — against one fresh floor per example (SQLite and PostgreSQL), legal requests and
forbidden ones alike, and checks after **every** step, by reading the database over a second
connection, that:

* all account balances sum to 0 and each equals the machine's own model of it;
* every account kind keeps its invariant — players, escrow and tips never below 0, bills never
  above 0, the escrow equal to the open wagers, the vouchers account equal to the vouchers
  outstanding — and ``verify-log`` finds no problem (PA 605a.2(d) game accounts, PA 605a.5(c)
  vouchers);
* a request the policy forbids (PA 605a.4(d): role separation; a player only at an
  authenticated terminal and only his own account) is answered 4xx and changes nothing: the
  ledger, the balances, the vouchers, the credentials, the settings and the event logs are
  exactly as before it — and so does any other refused request;
* an allowed request that succeeded moved exactly the amount the model expects, between the
  accounts it expects (a round's settlements: each wager's escrow released in full, to its own
  player);
* every ledger row's (kind, from-kind, to-kind) is in :data:`MOVEMENTS`, and the event that
  started it is by a role the movement allows (a wager: the player's own request at his
  terminal).

What each role may do comes from :data:`tablejack.store.policy.PERMISSIONS` and
:data:`tablejack.store.policy.MOVEMENTS`; the machine keeps no permission table of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.support.contract import AMOUNT_MAX
from tablejack.server.table import TableConfig
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store import validator as validators
from tablejack.store.floor_models import SETTINGS, VOUCHERS
from tablejack.store.models import CREDENTIALS, EVENTS, LEDGER, MOVEMENT_KINDS, ROUNDS
from tablejack.store.policy import (
    MOVEMENTS,
    PERMISSIONS,
    AccountKind,
    Actor,
    Role,
    account_kind_of,
)
from tablejack.store.settings import DEFAULT_SETTINGS, set_floor_setting
from tablejack.store.verify import verify
from tests.support.store import Backend

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

T = TypeVar("T")
TABLE = "A1"
ESCROW, HOUSE, TIPS = f"escrow:{TABLE}", f"house:{TABLE}", f"tips:{TABLE}"
CREDIT = 100_000
RULES = HybridRules(countdown_seconds=600)
"""The clock never runs out during an example: only the dealer's ``countdown-expired`` ends a
decision window, so nothing moves money between two steps behind the machine's back."""
PLAYERS = {"ann": "EWT-1", "bob": "EWT-2", "dan": "EWT-3"}
POSITIONS = {"EWT-1": 1, "EWT-2": 2, "EWT-3": 3}
KEYS = {terminal: f"key-{terminal}" for terminal in POSITIONS}
STAFF = {  # subject: (role, token)
    "dana": ("dealer", "tok-dealer"),
    "sam": ("supervisor", "tok-super"),
    "cleo": ("cashier", "tok-cashier"),
    "carl": ("cashier", "tok-carl"),
    "olga": ("operator", "tok-operator"),
}
SET_UP = "floor set-up"
"""The subject of the set-up's own actors (a cashier funds, an operator issues)."""
REVOCABLE = ("dan", "carl")
"""The credentials the machine may revoke (a player with a session and a socket, a cashier)."""
TABLE_KINDS = frozenset(k for k, r in MOVEMENTS.items() if Role.TABLE in r.roles)
SETTLEMENT_KINDS = ("returned", "lost", "winnings")
NEXT: dict[str | None, str] = {
    None: "open-round",
    "complete": "open-round",
    "wagering": "close-wagering",
}
"""The dealer's next command in each phase (any other: ``countdown-expired``)."""
FORGED = ("123456789012345611", "99", "0000 0000 0000 0000 00", "abc")
"""Voucher codes no voucher has: good check digits but unknown, bad check digits, not digits."""


@dataclass(frozen=True, repr=False)
class Caller:
    """Who makes a REST request: the role its credential carries (``valid``: the server knows
    it and it is neither expired nor revoked at the start), its subject, and for a player's
    session the terminal it was opened at."""

    name: str
    role: str
    subject: str = ""
    terminal: str = ""
    token: str | None = None
    valid: bool = True

    def __repr__(self) -> str:
        return f"CALLERS[{self.name!r}]"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # Hypothesis' step listing
        printer.text(repr(self))


CALLERS = {
    c.name: c
    for c in (
        *(Caller(f"{p}@{t}", "player", p, t) for p, t in PLAYERS.items()),
        Caller("ann's bare token", "player", "ann", token="tok-ann"),
        *(Caller(s, role, s, token=token) for s, (role, token) in STAFF.items()),
        Caller("anonymous", "", valid=False),
        Caller("unknown token", "", token="tok-nobody", valid=False),
        Caller("expired cashier", "cashier", "cora", token="tok-expired", valid=False),
        Caller("revoked supervisor", "supervisor", "sid", token="tok-revoked", valid=False),
        Caller("terminal device", "terminal", "EWT-1", token=KEYS["EWT-1"]),
    )
}
SUBJECT_ROLES = {
    **{p: Role.PLAYER for p in PLAYERS},
    **{s: Role(role) for s, (role, _) in STAFF.items()},
    SET_UP: Role.CASHIER,
}
"""The role of each subject an event can name as the one who started a movement."""
SOCKET_ROLES = {"ann": "player", "bob": "player", "dan": "player"} | {
    s: STAFF[s][0] for s in ("dana", "sam", "cleo")
}
"""The WebSocket clients: the players at their terminals and three staff consoles."""
SOCKET_MESSAGES = (  # (message, the operation of PERMISSIONS it is)
    ({"type": "wager", "kind": "blackjack", "amount": 1_000}, "wager"),
    ({"type": "action", "verb": "stand"}, "wager"),
    ({"type": "dealer", "command": "open-round"}, "dealer_command"),
    ({"type": "dealer", "command": "close-wagering"}, "dealer_command"),
    ({"type": "dealer", "command": "countdown-expired"}, "dealer_command"),
)
OUT_OF_ROLE = [
    (who, message)
    for who, role in SOCKET_ROLES.items()
    for message, operation in SOCKET_MESSAGES
    if Role(role) not in PERMISSIONS[operation]
]
"""Every socket message its client's role may not send (a wager or a decision from a staff
console, a dealer command from a player's terminal or another console)."""
BAD_HELLOS = {
    "expired token": {"token": "tok-expired", "terminal": "console-x"},
    "revoked token": {"token": "tok-revoked", "terminal": "console-x"},
    "unknown token": {"token": "tok-nobody", "terminal": "console-x"},
    "device credential as a person": {"token": KEYS["EWT-1"], "terminal": "EWT-1"},
    "player without the terminal's key": {"token": "tok-ann", "terminal": "EWT-1"},
    "player with another terminal's key": {
        "token": "tok-ann",
        "terminal": "EWT-1",
        "terminal_key": KEYS["EWT-2"],
    },
    "staff console named like a terminal": {"token": "tok-cashier", "terminal": "EWT-2"},
}
BAD_SIGN_INS = {
    "expired token": ("tok-expired", "EWT-1", KEYS["EWT-1"]),
    "revoked token": ("tok-revoked", "EWT-1", KEYS["EWT-1"]),
    "unknown token": ("tok-nobody", "EWT-1", KEYS["EWT-1"]),
    "device credential as a person": (KEYS["EWT-1"], "EWT-1", KEYS["EWT-1"]),
    "player without the terminal's key": ("tok-ann", "EWT-1", None),
    "player with another terminal's key": ("tok-ann", "EWT-1", KEYS["EWT-2"]),
}


def callers(*legal: str) -> st.SearchStrategy[Caller]:
    """Anyone, with the callers the request is meant for drawn half of the time."""
    everyone = st.sampled_from(sorted(CALLERS.values(), key=lambda c: c.name))
    if not legal:
        return everyone
    return st.one_of(st.sampled_from([CALLERS[name] for name in legal]), everyone)


CENTS = [-500, 0, 1, 100, 500, 2_000, 10_000, 50_000, 150_000, 10**11, 10**15]
"""Amounts: negative, zero, a cent, bills, above the hand-pay limit, huge."""
LAX = [True, "500", 5.0, 2.5]
"""What a lax reading would take for cents (1, 500, 5, 2): every money body refuses a boolean, a
text and a fraction (422); ``5.0`` is the JSON number 5, a whole number of cents by the
document's schema (``server.contract.Whole``)."""
AMOUNTS = st.sampled_from([*CENTS, *LAX])


def cents(amount: Any) -> bool:
    """A whole number of cents the API reads (JSON's ``true``, ``"500"`` and ``2.5`` are not;
    ``5.0`` is 5), at most the contract's largest amount."""
    whole = (isinstance(amount, int) and not isinstance(amount, bool)) or (
        isinstance(amount, float) and amount.is_integer()
    )
    return whole and amount <= AMOUNT_MAX


# -- the database, read over a second connection ---------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """Everything a refused request must leave as it was (the audit log aside)."""

    last_row: int
    balances: dict[str, int]
    vouchers: tuple[tuple[int, str], ...]
    credentials: tuple[tuple[str, bool], ...]
    settings: tuple[tuple[str, str], ...]
    events: int
    rounds: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class Row:
    """A ledger row with the event that caused it and the stream it belongs to."""

    id: int
    kind: str
    source: str
    target: str
    amount: int
    wager: int | None
    stream: str
    actor: str | None
    terminal: str | None
    stream_kind: str | None
    table: str | None

    @property
    def posting(self) -> tuple[str, str, str, int]:
        return (self.kind, self.source, self.target, self.amount)


class Reader:
    """A second :class:`Store` on the floor's database, on an event loop of its own."""

    def __init__(self, backend: Backend) -> None:
        self.loop = asyncio.new_event_loop()
        self.store = self.loop.run_until_complete(
            Store.open(backend.url, schema=backend.schema, migrate=False)
        )

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(work)

    def close(self) -> None:
        self.run(self.store.close())
        self.loop.close()

    def snapshot(self) -> Snapshot:
        async def read() -> Snapshot:
            async with self.store.engine.connect() as c:
                last = await c.scalar(select(func.coalesce(func.max(LEDGER.c.id), 0)))
                vouchers = (await c.execute(select(VOUCHERS.c.id, VOUCHERS.c.status))).all()
                credentials = (
                    await c.execute(select(CREDENTIALS.c.id, CREDENTIALS.c.revoked_us))
                ).all()
                stored = (await c.execute(select(SETTINGS.c.key, SETTINGS.c.value))).all()
                events = await c.scalar(select(func.count()).select_from(EVENTS))
                rounds = (
                    await c.execute(select(ROUNDS.c.id, ROUNDS.c.status, ROUNDS.c.last_seq))
                ).all()
            return Snapshot(
                int(last or 0),
                await self.store.accounts(),
                tuple(sorted((int(i), str(s)) for i, s in vouchers)),
                tuple(sorted((str(i), r is None) for i, r in credentials)),
                tuple(sorted((str(k), str(v)) for k, v in stored)),
                int(events or 0),
                tuple(sorted((str(i), str(s), int(n)) for i, s, n in rounds)),
            )

        return self.run(read())

    def rows_since(self, last: int) -> list[Row]:
        async def read() -> list[Row]:
            statement = (
                select(
                    LEDGER.c.id,
                    LEDGER.c.kind,
                    LEDGER.c.from_account,
                    LEDGER.c.to_account,
                    LEDGER.c.amount,
                    LEDGER.c.wager_id,
                    LEDGER.c.round_id,
                    EVENTS.c.actor,
                    EVENTS.c.terminal,
                    ROUNDS.c.kind,
                    ROUNDS.c.table_id,
                )
                .select_from(
                    LEDGER.outerjoin(
                        EVENTS,
                        (EVENTS.c.round_id == LEDGER.c.round_id) & (EVENTS.c.seq == LEDGER.c.seq),
                    ).outerjoin(ROUNDS, ROUNDS.c.id == LEDGER.c.round_id)
                )
                .where(LEDGER.c.id > last)
                .order_by(LEDGER.c.id)
            )
            async with self.store.engine.connect() as c:
                found = (await c.execute(statement)).all()
            return [
                Row(
                    int(r[0]),
                    str(r[1]),
                    str(r[2]),
                    str(r[3]),
                    int(r[4]),
                    None if r[5] is None else int(r[5]),
                    str(r[6] or ""),
                    r[7],
                    r[8],
                    r[9],
                    r[10],
                )
                for r in found
            ]

        return self.run(read())

    def problems(self) -> list[str]:
        return list(self.run(verify(self.store)).problems)

    def movement_kinds(self) -> dict[str, tuple[str, str]]:
        async def read() -> dict[str, tuple[str, str]]:
            async with self.store.engine.connect() as c:
                rows = (await c.execute(select(MOVEMENT_KINDS))).all()
            return {str(r[0]): (str(r[1]), str(r[2])) for r in rows}

        return self.run(read())


# -- the WebSocket clients ---------------------------------------------------------------------


class Socket:
    """A WebSocket that said hello (and joined the table when welcomed); ``opened``: every
    socket of the example, closed at its teardown."""

    def __init__(self, client: TestClient, hello: dict[str, Any], opened: list[Socket]) -> None:
        self.manager = client.websocket_connect("/ws")
        self.socket = self.manager.__enter__()
        opened.append(self)  # closed at teardown whatever happens (a socket left open hangs it)
        self.counter = 0
        self.closed = False
        self.why = ""
        """Why the server closed the socket (its close code and last error)."""
        self.last_error: dict[str, Any] | None = None
        self.socket.send_json({"type": "hello", "protocol": 2, **hello})
        first = self.receive()
        self.welcomed = first is not None and first["type"] == "welcome"
        self.refusal = None if first is None or self.welcomed else first
        if self.welcomed:
            joined = self.request({"type": "join", "table": TABLE})
            assert joined is not None and joined["type"] == "ack", joined
        else:
            assert self.refusal is None or self.refusal["type"] == "error", first
            self.receive()  # the server closes a refused hello
            self.closed = True

    def receive(self) -> dict[str, Any] | None:
        if self.closed:
            return None
        try:
            message = dict(self.socket.receive_json())
        except WebSocketDisconnect as closing:
            self.closed = True
            self.why = f"closed by the server ({closing.code}) after {self.last_error}"
            return None
        if message["type"] == "error" and message.get("id") is None:
            self.last_error = message
        return message

    def request(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The ack or error answering ``message`` (None: the server closed the socket)."""
        if self.closed:
            return None
        self.counter += 1
        command_id = f"m{self.counter}"
        self.socket.send_json({**message, "id": command_id})
        while (answer := self.receive()) is not None:
            if answer.get("id") == command_id and answer["type"] in ("ack", "error"):
                return answer
        return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.manager.__exit__(None, None, None)
        self.closed = True


# -- the floor -----------------------------------------------------------------------------------


def set_up(ids: dict[str, str]) -> Callable[[Floor], Any]:
    """The floor's set-up: ann, bob and dan with $1,000.00 each at terminals EWT-1..3
    (positions 1..3 of table A1); the staff; a cashier token that has expired and a supervisor
    token already revoked; every fixed and table account opened. ``ids``: the credential ids of
    :data:`REVOCABLE`, filled in."""

    async def setup(floor: Floor) -> None:
        store = floor.store
        operator = Actor(Role.OPERATOR, SET_UP)
        # a socket that closes never locks its terminal here: that is the tilt tests' business
        await set_floor_setting(store, "tilt_on_connection_loss", "off", by=SET_UP)
        for account, kind in (
            ("bills", "bills"),
            ("vouchers", "voucher"),
            ("cage", "cage"),
            (ESCROW, "escrow"),
            (HOUSE, "house"),
            (TIPS, "tips"),
        ):
            await store.ensure_account(account, kind, account)
        for player in PLAYERS:
            await floor.add_player(player, CREDIT, f"tok-{player}")
        for subject, (role, token) in STAFF.items():
            await floor.issue_token(role, subject, token)
        for terminal, position in POSITIONS.items():
            await floor.register_terminal(terminal, TABLE, position=position, key=KEYS[terminal])
        await creds.issue(store, "cashier", "cora", by=operator, token="tok-expired", lifetime_s=0)
        revoked = await creds.issue(store, "supervisor", "sid", by=operator, token="tok-revoked")
        await floor.auth.revoke(revoked.credential.id, by=operator)
        for subject in REVOCABLE:
            token = f"tok-{subject}" if subject in PLAYERS else STAFF[subject][1]
            found = await creds.lookup(store, token)
            assert found is not None
            ids[subject] = found.id

    return setup


@dataclass
class Voucher:
    code: str
    amount: int
    outstanding: bool = True


@dataclass
class Model:
    """What the machine knows the floor holds."""

    balances: dict[str, int] = field(default_factory=dict)
    vouchers: list[Voucher] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    dead: set[str] = field(default_factory=set)
    """Subjects whose credential the machine revoked."""
    open_wagers: dict[int, list[Any]] = field(default_factory=dict)
    """Wager id → [player, cents in escrow] of the round in progress."""
    stake: dict[str, int] = field(default_factory=dict)
    """Each player's Blackjack Wager of the round in progress."""


class FloorMachine(RuleBasedStateMachine):
    """Random requests of every role against a fresh floor; the books checked after each."""

    new_backend: Callable[[], Backend]

    def __init__(self) -> None:
        super().__init__()
        self.backend = type(self).new_backend()
        self.ids: dict[str, str] = {}
        self.sockets: dict[str, Socket] = {}
        self.opened: list[Socket] = []
        self.failed_hellos = 0
        self.headers: dict[str, dict[str, str]] = {}
        table = TableConfig(TABLE, RULES, automated=False, require_procedures=False, seed=1)
        self.client = TestClient(
            create_app(self.backend.server_url, tables=[table], setup=set_up(self.ids))
        )
        try:
            self.client.__enter__()
            self.start()
        except BaseException:
            self.teardown()  # Hypothesis tears down only a machine that was made
            raise

    def start(self) -> None:
        """Sessions for the players at their terminals, the model's opening balances, and the
        policy's movements as the database holds them."""
        self.reader = Reader(self.backend)
        for caller in CALLERS.values():
            if caller.role == "player" and caller.terminal:
                self.headers[caller.name] = self.sign_in(caller.subject, caller.terminal)
            elif caller.token is not None:
                self.headers[caller.name] = {"Authorization": f"Bearer {caller.token}"}
            else:
                self.headers[caller.name] = {}
        for terminal, key in KEYS.items():  # each terminal's bill validator controller
            public = validators.public_key_text(validators.controller_key(key).public_key())
            registered = self.client.post(
                "/api/floor/validator",
                json={"public_key": public, "terminal": terminal, "terminal_key": key},
            )
            assert registered.status_code == 200, registered.text
        # a rate no example reaches (the rate has its own attacker's test)
        self.reader.run(
            set_floor_setting(self.reader.store, "validator_per_minute", 120, by="olga")
        )
        self.inserted: list[tuple[Caller, str, dict[str, Any], bool]] = []
        """The bills and vouchers sent: who, where, the body, and whether it was paid."""
        self.model = Model(balances=dict(self.reader.snapshot().balances))
        self.model.settings["validator_per_minute"] = 120
        self.checked = 0
        """The last ledger row the invariant has checked."""
        stored = self.reader.movement_kinds()
        assert stored == {k: (r.source.value, r.target.value) for k, r in MOVEMENTS.items()}

    def teardown(self) -> None:
        for socket in self.opened:
            socket.close()
        with contextlib.suppress(Exception):
            self.client.__exit__(None, None, None)
        reader = self.__dict__.get("reader")  # (none when the floor failed to start)
        if reader is not None:
            reader.close()
        self.backend.drop()

    # -- the policy, as the machine reads it ---------------------------------------------

    def sign_in(self, player: str, terminal: str) -> dict[str, str]:
        answer = self.client.post(
            "/api/session",
            json={"token": f"tok-{player}", "terminal": terminal, "terminal_key": KEYS[terminal]},
        )
        assert answer.status_code == 200, answer.text
        token = answer.cookies["tj_session"]
        self.client.cookies.clear()
        return {"Authorization": f"Bearer {token}"}

    def authenticated(self, caller: Caller) -> bool:
        return caller.valid and caller.subject not in self.model.dead

    def may(self, caller: Caller, operation: str, movement: str | None = None) -> bool:
        """May ``caller`` do ``operation`` (and start ``movement``)? :data:`PERMISSIONS` and
        :data:`MOVEMENTS` say."""
        if not self.authenticated(caller) or caller.role not in {r.value for r in Role}:
            return False
        role = Role(caller.role)
        if role not in PERMISSIONS[operation]:
            return False
        if movement is not None:
            rule_ = MOVEMENTS[movement]
            if role not in rule_.roles:
                return False
            if rule_.at_terminal and role is Role.PLAYER and not caller.terminal:
                return False
        return True

    def gate(self, caller: Caller, permitted: bool, body_ok: bool = True) -> int | None:
        """The status a request is refused with before its business is looked at: an unknown,
        expired or revoked credential 401; a terminal's device credential 403; a malformed
        body 422; a role (or a player away from a terminal) the policy forbids 403."""
        if not self.authenticated(caller):
            return 401
        if caller.role == Role.TERMINAL.value:
            return 403
        if not body_ok:
            return 422
        if not permitted:
            return 403
        return None

    def player_account(self, account: str) -> bool:
        return account in self.model.balances and account_kind_of(account) is AccountKind.PLAYER

    # -- one REST request, checked ------------------------------------------------------------

    def call(
        self,
        caller: Caller,
        method: str,
        path: str,
        body: Any,
        *,
        refused: int | bool | None,
        postings: list[tuple[str, str, str, int]] | None = None,
        pending: bool = False,
    ) -> Any:
        """Make the request and check it: ``refused`` (True, or the exact status) — answered
        4xx and nothing changed; ``pending`` — above its approval threshold, answered 202
        and no money moved (dual control); else (None, False) answered 200 and exactly
        ``postings`` booked."""
        before = self.reader.snapshot()
        answer = self.client.request(method, path, json=body, headers=self.headers[caller.name])
        self.client.cookies.clear()
        after = self.reader.snapshot()
        what = f"{caller.name}: {method} {path} {body!r} → {answer.status_code} {answer.text[:300]}"
        note(what)
        if refused:
            assert 400 <= answer.status_code < 500, f"not refused: {what}"
            if refused is not True:
                assert answer.status_code == refused, f"refused with the wrong status: {what}"
            self.unchanged(before, after, what)
            return None
        if pending:
            assert answer.status_code == 202, f"not left for a supervisor: {what}"
            assert (after.last_row, after.balances) == (before.last_row, before.balances), what
            return answer.json()
        assert answer.status_code == 200, f"an allowed request failed: {what}"
        self.book(before, postings or [], what)
        return answer.json()

    def unchanged(self, before: Snapshot, after: Snapshot, what: str) -> None:
        assert after == before, (
            f"a refused request changed the store: {what}\n"
            f"ledger rows: {self.reader.rows_since(before.last_row)}\n"
            f"balances before {before.balances}\nafter {after.balances}"
        )

    def book(self, before: Snapshot, postings: list[tuple[str, str, str, int]], what: str) -> None:
        """The request booked exactly ``postings``; the model moves the same money."""
        rows = self.reader.rows_since(before.last_row)
        assert Counter(r.posting for r in rows) == Counter(postings), (
            f"booked {[r.posting for r in rows]}, expected {postings}: {what}"
        )
        self.move(rows)

    def move(self, rows: list[Row]) -> None:
        for row in rows:
            self.model.balances[row.source] = self.model.balances.get(row.source, 0) - row.amount
            self.model.balances[row.target] = self.model.balances.get(row.target, 0) + row.amount

    # -- money at the cage and the terminals ------------------------------------------------------

    @rule(
        caller=callers("cleo", "carl"),
        account=st.sampled_from(
            ["ann", "bob", "dan", "ann", "bob", "eve", "cage", "vouchers", ESCROW, "nobody"]
        ),
        amount=AMOUNTS,
    )
    def sell_credit(self, caller: Caller, account: str, amount: int) -> None:
        """Credit sold at the cage: a cashier only, to a player's game account (PA 605a.2(d))."""
        status = self.gate(
            caller, self.may(caller, "sell_credit", "fund"), cents(amount) and 0 < amount <= 10**11
        )
        refused = status or not self.player_account(account)
        limit = self.model.settings.get("credit_approval_limit", 300_000)
        self.call(
            caller,
            "POST",
            "/api/cage/credit",
            {"account": account, "amount": amount},
            refused=refused,
            postings=[("fund", "cage", account, amount)],
            pending=not refused and amount > limit,  # dual control: a supervisor approves
        )

    @rule(
        caller=callers("cleo"),
        name=st.sampled_from(["eve", "ann", "escrow:A1", "a b", "vouchers", "cage", "bills"]),
    )
    def open_account(self, caller: Caller, name: str) -> None:
        """A game account opened at the cage (cashier); it moves no money; a name of another
        kind of account (the vouchers, the cage, the bills) is refused (409)."""
        body_ok = all(ch.isalnum() or ch in "_.@-" for ch in name)
        status = self.gate(caller, self.may(caller, "sell_credit"), body_ok)
        if status is None and name in ("vouchers", "cage", "bills"):
            status = 409
        self.call(caller, "POST", "/api/cage/players", {"player": name}, refused=status)
        if status is None:
            self.model.balances.setdefault(name, 0)

    def validated(
        self, caller: Caller, kind: str, value: Any, body: dict[str, Any]
    ) -> dict[str, Any]:
        """``body`` as the validator of the caller's terminal reports it: a new event id and
        its controller's proof (a stranger's where the caller is at no terminal)."""
        event = f"ev-{len(self.inserted)}"
        key = KEYS.get(caller.terminal, "a stranger")
        proof = validators.sign(
            validators.controller_key(key), caller.terminal, event, kind, str(value)
        )
        return {**body, "event": event, "proof": proof}

    @rule(pick=st.integers(0, 7))
    def replay(self, pick: int) -> None:
        """A bill or a voucher sent again, the same event and proof: answered as the first
        time and nothing moves (PA 605a.5(c))."""
        if not self.inserted:
            return
        caller, path, body, paid = self.inserted[pick % len(self.inserted)]
        status = self.gate(caller, True)
        self.call(caller, "POST", path, body, refused=status or not paid, postings=[])

    @rule(caller=callers("ann@EWT-1", "bob@EWT-2"), amount=st.sampled_from([*CENTS, 300, *LAX]))
    def bill_in(self, caller: Caller, amount: int) -> None:
        """A bill accepted at the terminal the player is signed in at credits his own account;
        anyone else (a bare player token, staff) is refused (PA 605a.5(c), 605a.4(d))."""
        status = self.gate(
            caller, self.may(caller, "bill_in", "bill_in"), cents(amount) and amount > 0
        )
        refused = status or amount not in self.model.settings["bill_denominations"]
        body = self.validated(caller, "bill", amount, {"amount": amount})
        self.call(
            caller,
            "POST",
            "/api/floor/bill-in",
            body,
            refused=refused,
            postings=[("bill_in", "bills", caller.subject, amount)],
        )
        self.inserted.append((caller, "/api/floor/bill-in", body, not refused))

    @rule(
        caller=callers("ann@EWT-1", "bob@EWT-2", "dan@EWT-3"),
        amount=st.sampled_from([None, None, *CENTS, 1_500_000, *LAX]),
        decoy=st.none() | st.sampled_from(["bob", "ann", "escrow:A1"]),
    )
    def cash_out(self, caller: Caller, amount: int | None, decoy: str | None) -> None:
        """Cash out at a terminal: a voucher for the player's own credit, within the voucher
        limit (PA 605a.5(c)); a body that names an ``account`` is refused (422): no request
        names the account a player's movement touches."""
        body_ok = (amount is None or (cents(amount) and amount > 0)) and decoy is None
        status = self.gate(caller, self.may(caller, "cash_out", "voucher_out"), body_ok)
        balance = self.model.balances.get(caller.subject, 0)
        wanted = balance if amount is None else amount
        valid = cents(wanted) and 0 < wanted <= min(balance, self.model.settings["voucher_limit"])
        answer = self.call(
            caller,
            "POST",
            "/api/floor/cash-out",
            {"amount": amount} if decoy is None else {"amount": amount, "account": decoy},
            refused=status or not valid,
            postings=[("voucher_out", caller.subject, "vouchers", wanted)],
        )
        if answer is not None:
            assert answer["balance"] == self.model.balances[caller.subject]
            self.model.vouchers.append(Voucher(answer["validation_code"], wanted))

    def voucher(self, pick: int) -> tuple[str, Voucher | None]:
        """A voucher cashed out in this example (``pick`` < 4, when there is one, redeemed or
        not), else a forged code."""
        vouchers = self.model.vouchers
        if pick < 4 and vouchers:
            found = vouchers[pick % len(vouchers)]
            return found.code, found
        return FORGED[pick % len(FORGED)], None

    @rule(caller=callers("ann@EWT-1", "bob@EWT-2"), pick=st.integers(0, 7))
    def voucher_in(self, caller: Caller, pick: int) -> None:
        """A voucher redeemed at a terminal credits the player signed in there, once; a forged
        code or a second redemption is refused (PA 605a.5(c))."""
        code, found = self.voucher(pick)
        status = self.gate(caller, self.may(caller, "voucher_in", "voucher_in"))
        valid = found is not None and found.outstanding
        amount = 0 if found is None else found.amount
        body = self.validated(caller, "voucher", code, {"code": code})
        self.call(
            caller,
            "POST",
            "/api/floor/voucher-in",
            body,
            refused=status or not valid,
            postings=[("voucher_in", "vouchers", caller.subject, amount)],
        )
        self.inserted.append((caller, "/api/floor/voucher-in", body, not (status or not valid)))
        if status is None and valid and found is not None:
            found.outstanding = False

    @rule(caller=callers("cleo"), pick=st.integers(0, 7))
    def pay_voucher(self, caller: Caller, pick: int) -> None:
        """A voucher cashed at the cage by a cashier, once (PA 605a.5(c))."""
        code, found = self.voucher(pick)
        body_ok = all(ch.isdigit() or ch in " -" for ch in code)
        status = self.gate(caller, self.may(caller, "voucher_paid", "voucher_paid"), body_ok)
        valid = found is not None and found.outstanding
        amount = 0 if found is None else found.amount
        self.call(
            caller,
            "POST",
            "/api/cage/vouchers",
            {"code": code},
            refused=status or not valid,
            postings=[("voucher_paid", "vouchers", "cage", amount)],
        )
        if status is None and valid and found is not None:
            found.outstanding = False

    @rule(
        caller=callers("cleo", "sam"),
        account=st.sampled_from(["ann", "bob", "dan", "vouchers", ESCROW, "cage", TIPS, "nobody"]),
        amount=AMOUNTS,
        kind=st.sampled_from(["jackpot", "cancelled_credit"]),
    )
    def hand_pay(self, caller: Caller, account: str, amount: int, kind: str) -> None:
        """A hand pay from a player's game account: a cashier or a supervisor up to the
        hand-pay limit, above it only on a second person's approval (it waits); never a
        dealer, a player (not even to himself) or the operator, never from the vouchers, the cage, a table's escrow or toke box (PA 605a.4(d))."""
        status = self.gate(caller, self.may(caller, "hand_pay", kind), cents(amount) and amount > 0)
        limit = self.model.settings[MOVEMENTS[kind].limit]
        valid = (
            cents(amount)
            and self.player_account(account)
            and amount <= self.model.balances[account]
        )
        self.call(
            caller,
            "POST",
            "/api/floor/hand-pay",
            {
                "account": account,
                "terminal": "EWT-1",
                "amount": amount,
                "kind": kind,
                "reason": "stateful test",
            },
            refused=status or not valid,
            postings=[(kind, account, "cage", amount)],
            pending=not (status or not valid) and amount > limit,
        )

    @rule(
        caller=callers("ann@EWT-1", "bob@EWT-2"),
        table=st.sampled_from([TABLE, TABLE, "B9"]),
        amount=st.sampled_from([-1, 0, 1, 500, 10_000, 10_001, 10**15, 2.5, "250", True]),
    )
    def tip(self, caller: Caller, table: str, amount: Any) -> None:
        """A tip from the player's own account to the table's toke box, only while tips are
        enabled, in whole positive cents up to the tip maximum (PA 605a.5(d))."""
        status = self.gate(caller, self.may(caller, "tip", "tip"))
        cents = isinstance(amount, int) and not isinstance(amount, bool)
        valid = (
            self.model.settings["tips_enabled"]
            and table == TABLE
            and cents
            and 0 < amount <= self.model.settings["tip_maximum"]
            and amount <= self.model.balances.get(caller.subject, 0)
        )
        self.call(
            caller,
            "POST",
            "/api/floor/tip",
            {"table": table, "amount": amount},
            refused=status or not valid,
            postings=[("tip", caller.subject, TIPS, amount if cents else 0)],
        )

    @rule(
        caller=callers("olga"),
        change=st.sampled_from(
            [
                ("tips_enabled", True, True),
                ("tips_enabled", False, True),
                ("tips_enabled", "yes", False),
                ("handpay_limit", 2_000, True),
                ("handpay_limit", 120_000, True),
                ("handpay_limit", 0, False),
                ("credit_approval_limit", 2_000, True),
                ("credit_approval_limit", 10**12, False),
            ]
        ),
    )
    def change_setting(self, caller: Caller, change: tuple[str, Any, bool]) -> None:
        """A floor setting changed by the operator only (PA 605a.4(d))."""
        key, value, valid = change
        status = self.gate(caller, self.may(caller, "change_settings"))
        self.call(
            caller,
            "PUT",
            "/api/floor/settings",
            {"key": key, "value": value},
            refused=status or not valid,
        )
        if status is None and valid:
            self.model.settings[key] = value

    @rule(caller=callers("sam", "olga"), whom=st.sampled_from(REVOCABLE))
    def revoke(self, caller: Caller, whom: str) -> None:
        """A credential revoked by a supervisor or the operator: its sessions end with it and
        every request with them is refused from then on (PA 605a.4(d))."""
        status = self.gate(caller, self.may(caller, "revoke_token"))
        answer = self.call(
            caller, "POST", f"/api/tokens/{self.ids[whom]}/revoke", None, refused=status
        )
        if answer is not None:
            if whom in self.model.dead:
                assert answer["revoked"] == []
            else:
                assert self.ids[whom] in answer["revoked"]
            self.model.dead.add(whom)

    @rule(caller=callers("sam", "olga"))
    def verify_log(self, caller: Caller) -> None:
        """``verify-log`` (supervisor, operator) finds no problem."""
        status = self.gate(caller, self.may(caller, "verify_log"))
        answer = self.call(caller, "GET", "/api/verify-log", None, refused=status)
        if answer is not None:
            assert answer["problems"] == []

    @rule(attempt=st.sampled_from(sorted(BAD_SIGN_INS)))
    def bad_sign_in(self, attempt: str) -> None:
        """A sign-in with a credential that is not valid, or a player without his terminal's
        own key, opens no session."""
        token, terminal, key = BAD_SIGN_INS[attempt]
        body = {"token": token, "terminal": terminal, "terminal_key": key}
        self.call(CALLERS["anonymous"], "POST", "/api/session", body, refused=True)

    # -- the round: REST and WebSocket ------------------------------------------------------------

    def phase(self) -> str | None:
        state = self.client.get(f"/api/tables/{TABLE}/state", headers=self.headers["dana"])
        assert state.status_code == 200, state.text
        return (state.json().get("view") or {}).get("phase")

    def socket(self, name: str) -> Socket:
        """``name``'s socket, (re)connected unless its hello was refused once (a revoked
        player's is refused for good; see :meth:`may_fail_a_hello`)."""
        socket = self.sockets.get(name)
        if socket is None or (socket.closed and socket.welcomed):
            if name in PLAYERS:
                terminal = PLAYERS[name]
                hello = {
                    "token": f"tok-{name}",
                    "terminal": terminal,
                    "terminal_key": KEYS[terminal],
                }
            else:
                hello = {"token": STAFF[name][1], "terminal": f"console-{name}"}
            socket = self.sockets[name] = Socket(self.client, hello, self.opened)
            if not socket.welcomed:
                self.failed_hellos += 1
        return socket

    def may_fail_a_hello(self) -> bool:
        """May a rule spend another failed hello? The server closes every new socket of a
        client address that failed 5 hellos within 10 s (its gate): the machine spends at most
        3 on purpose and 1 on the revoked player, so its own players and consoles always get
        in."""
        return self.failed_hellos < 3

    def round_step(
        self,
        what: str,
        act: Callable[[], bool],
        *,
        must: str,
        player: str | None = None,
        wager_money: int | None = 0,
        void: bool = False,
    ) -> None:
        """Make a round request (``act``: True when accepted) and check it. ``must``: ``ok``,
        ``refuse`` or ``either`` (what the engine decides). Accepted: only the table's
        movements; wagers only from ``player``, ``wager_money`` in all (None: any); each
        settlement releases its wager's whole escrow to its own player (or the house); a void
        refunds every open wager in full; a complete round leaves nothing in escrow."""
        before = self.reader.snapshot()
        accepted = act()
        after = self.reader.snapshot()
        note(f"{what}: {'accepted' if accepted else 'refused'} (must: {must})")
        if not accepted:
            assert must != "ok", f"refused, yet allowed and valid: {what}"
            self.unchanged(before, after, what)
            return
        assert must != "refuse", f"accepted, yet forbidden or impossible: {what}"
        rows = self.reader.rows_since(before.last_row)
        model = self.model
        assert all(r.kind in TABLE_KINDS and r.stream_kind == "round" for r in rows), rows
        wagers = [r for r in rows if r.kind == "wager"]
        assert all(r.source == player and r.target == ESCROW for r in wagers), (what, wagers)
        if wager_money is not None:
            assert sum(r.amount for r in wagers) == wager_money, (what, wagers)
        for r in wagers:
            assert r.wager is not None
            held = model.open_wagers.setdefault(r.wager, [r.source, 0])
            assert held[0] == r.source, (what, r)
            held[1] += r.amount
        refunds = [r for r in rows if r.kind == "refund"]
        if void:
            expected = Counter((ESCROW, p, a) for p, a in model.open_wagers.values())
            assert Counter((r.source, r.target, r.amount) for r in refunds) == expected, rows
            model.open_wagers.clear()
        else:
            assert not refunds, (what, rows)
        settled: dict[int, list[Row]] = {}
        for r in rows:
            if r.kind in SETTLEMENT_KINDS:
                assert r.wager is not None
                settled.setdefault(r.wager, []).append(r)
        for wager, paid in settled.items():
            assert wager in model.open_wagers, (what, wager, paid)
            owner, held = model.open_wagers.pop(wager)
            back = sum(r.amount for r in paid if r.kind in ("returned", "lost"))
            assert back == held, f"wager {wager} of {held} cents released {back}: {paid}"
            for r in paid:
                route = {
                    "returned": (ESCROW, owner),
                    "lost": (ESCROW, HOUSE),
                    "winnings": (HOUSE, owner),
                }
                assert (r.source, r.target) == route[r.kind], (what, r)
                assert r.kind != "winnings" or r.amount <= 50 * held, (what, r)
        if settled or refunds:
            note(f"settled {len(settled)} wagers, refunded {len(refunds)}")
        self.move(rows)
        if self.phase() in (None, "complete"):
            assert not model.open_wagers, f"the round ended with wagers open: {model.open_wagers}"

    def in_progress(self, phase: str | None) -> bool:
        return phase not in (None, "complete")

    @rule(
        caller=callers("dana"),
        command=st.sampled_from(
            ["next", "next", "open-round", "close-wagering", "countdown-expired"]
        ),
        socket=st.booleans(),
    )
    def deal(self, caller: Caller, command: str, socket: bool) -> None:
        """The dealer's console commands (REST, or the dealer's socket): a dealer only; nobody
        else opens a round, closes wagering or ends a decision window (PA 605a.4(d))."""
        phase = self.phase()
        if command == "next":  # what the phase calls for
            command = NEXT.get(phase, "countdown-expired")
        if socket and caller.name == "dana":
            self.dealer_step(f"dealer socket: {command}", phase, command, self.ws_dealer(command))
            return
        status = self.gate(caller, self.may(caller, "dealer_command"))
        path = f"/api/tables/{TABLE}/dealer"
        if status is not None:
            self.call(caller, "POST", path, {"command": command}, refused=status)
            return

        def act() -> bool:
            answer = self.client.post(path, json={"command": command}, headers=self.headers["dana"])
            note(f"dealer: {command} → {answer.status_code} {answer.text[:200]}")
            assert answer.status_code in (200, 409), answer.text
            if answer.status_code == 200 and command == "open-round":
                self.model.stake.clear()
            return bool(answer.status_code == 200)

        self.dealer_step(f"dealer: {command}", phase, command, act)

    def ws_dealer(self, command: str) -> Callable[[], bool]:
        def act() -> bool:
            socket = self.socket("dana")
            answer = socket.request({"type": "dealer", "command": command})
            assert answer is not None, f"the dealer's socket was {socket.why}"
            if answer["type"] == "ack" and command == "open-round":
                self.model.stake.clear()
            return bool(answer["type"] == "ack")

        return act

    def dealer_step(
        self, what: str, phase: str | None, command: str, act: Callable[[], bool]
    ) -> None:
        if command == "open-round":
            must = "refuse" if self.in_progress(phase) else "ok"
        elif command == "close-wagering":  # with at least one Blackjack Wager to deal to
            must = "ok" if phase == "wagering" and self.model.stake else "refuse"
        else:
            must = "either" if self.in_progress(phase) else "refuse"
        self.round_step(what, act, must=must)

    @rule(caller=callers("sam"))
    def void(self, caller: Caller) -> None:
        """A round voided by the supervisor only — never a cashier or a dealer — refunding
        every open wager in full (PA 633a.14, 605a.4(d))."""
        phase = self.phase()
        status = self.gate(caller, self.may(caller, "void_round"))
        path = f"/api/tables/{TABLE}/void"
        if status is not None:
            self.call(caller, "POST", path, {"reason": "stateful test"}, refused=status)
            return

        def act() -> bool:
            answer = self.client.post(
                path, json={"reason": "stateful"}, headers=self.headers["sam"]
            )
            note(f"void → {answer.status_code} {answer.text[:200]}")
            assert answer.status_code in (200, 409), answer.text
            return bool(answer.status_code == 200)

        self.round_step("void", act, must="ok" if self.in_progress(phase) else "refuse", void=True)

    @rule(
        player=st.sampled_from(sorted(PLAYERS)),
        kind=st.sampled_from(["blackjack", "blackjack", "buzzer_beater"]),
        amount=st.sampled_from([-100, 0, 50, 1_000, 1_000, 2_500, 10_000, 600_000, 10**11 + 1]),
    )
    def wager(self, player: str, kind: str, amount: int) -> None:
        """A wager from the player's own socket at his terminal moves exactly its amount from
        his account to the table's escrow; never more than he holds, never outside wagering
        (PA 633c.5(k)); a malformed amount (not 1 to 10^11 cents) is refused and moves
        nothing."""
        phase = self.phase()
        model = self.model
        alive = player not in model.dead
        malformed = not 0 < amount <= 10**11
        fits = (
            RULES.table_minimum <= amount <= RULES.table_maximum
            and amount % RULES.betting_unit == 0
        )
        if not alive or malformed or phase != "wagering" or amount > model.balances[player]:
            must = "refuse"
        elif kind == "blackjack" and player not in model.stake and fits:
            must = "ok"
        else:
            must = "either"

        def act() -> bool:
            socket = self.socket(player)
            answer = socket.request({"type": "wager", "kind": kind, "amount": amount})
            note(f"{player}'s wager → {answer or socket.why}")
            if malformed or not alive:
                assert answer is None or answer["type"] == "error", answer
            accepted = answer is not None and answer["type"] == "ack"
            if accepted and kind == "blackjack":
                model.stake[player] = amount
            return accepted

        self.round_step(
            f"{player} wagers {kind} {amount}", act, must=must, player=player, wager_money=amount
        )

    @rule(
        player=st.sampled_from(sorted(PLAYERS)),
        verb=st.sampled_from(["hit", "stand", "stand", "double", "split", "surrender"]),
    )
    def decide(self, player: str, verb: str) -> None:
        """A decision from the player's own socket: only for a hand he wagered on this round;
        a double or a split takes exactly his wager again, from his own account."""
        phase = self.phase()
        model = self.model
        stake = model.stake.get(player)
        refuse = player in model.dead or not self.in_progress(phase) or stake is None
        money = stake if verb in ("double", "split") else 0

        def act() -> bool:
            socket = self.socket(player)
            answer = socket.request({"type": "action", "verb": verb})
            note(f"{player}'s {verb} → {answer or socket.why}")
            return answer is not None and answer["type"] == "ack"

        self.round_step(
            f"{player} {verb}s",
            act,
            must="refuse" if refuse else "either",
            player=player,
            wager_money=money,
        )

    @rule(sent=st.sampled_from(OUT_OF_ROLE))
    def socket_out_of_role(self, sent: tuple[str, dict[str, Any]]) -> None:
        """Over the WebSocket, a staff console places no wager or decision and a player (or a
        cashier, a supervisor) sends no dealer command: refused with ``role``, nothing moved
        (PA 605a.4(d))."""
        who, message = sent
        before = self.reader.snapshot()
        socket = self.socket(who)
        answer = socket.request(message)
        after = self.reader.snapshot()
        what = f"{who}'s socket sends {message} → {answer or socket.why}"
        note(what)
        if who in self.model.dead:
            assert answer is None or answer["type"] == "error", what
        else:
            assert answer is not None and answer["type"] == "error", what
            assert answer["code"] == "role", what
        self.unchanged(before, after, what)

    @rule(data=st.data(), moves=st.integers(1, 8))
    def advance(self, data: st.DataObject, moves: int) -> None:
        """The round moved on by up to ``moves`` legal steps — the dealer opens, players at
        their terminals wager, the dealer closes wagering, players decide or the dealer ends
        the decision window — each checked like the rules above and followed by the checks of
        every step, so that rounds are played through between the random requests."""
        for _ in range(moves):
            phase = self.phase()
            model = self.model
            able = [
                p
                for p in sorted(PLAYERS)
                if p not in model.dead and p not in model.stake and model.balances[p] >= 1_000
            ]
            staked = sorted(p for p in model.stake if p not in model.dead)
            if not self.in_progress(phase):
                self.deal(CALLERS["dana"], "open-round", data.draw(st.booleans()))
            elif phase == "wagering" and able and (not model.stake or data.draw(st.booleans())):
                amount = data.draw(st.sampled_from([1_000, 2_500, 10_000]))
                self.wager(data.draw(st.sampled_from(able)), "blackjack", amount)
            elif phase == "wagering":
                self.deal(CALLERS["dana"], "close-wagering", data.draw(st.booleans()))
            elif bool(staked) and data.draw(st.booleans()):
                verb = data.draw(st.sampled_from(["hit", "stand", "stand", "double"]))
                self.decide(data.draw(st.sampled_from(staked)), verb)
            else:
                self.deal(CALLERS["dana"], "countdown-expired", data.draw(st.booleans()))
            self.books_hold()

    @precondition(may_fail_a_hello)
    @rule(attempt=st.sampled_from(sorted(BAD_HELLOS)))
    def bad_hello(self, attempt: str) -> None:
        """A hello with an expired, revoked, unknown or device credential, a player without
        his terminal's own key, a console posing as a terminal: refused, the socket closed,
        nothing changed."""
        before = self.reader.snapshot()
        socket = Socket(self.client, BAD_HELLOS[attempt], self.opened)
        self.failed_hellos += 1
        after = self.reader.snapshot()
        note(f"bad hello ({attempt}): {socket.refusal}")
        assert not socket.welcomed and socket.closed, attempt
        socket.close()
        self.unchanged(before, after, f"bad hello: {attempt}")

    @precondition(lambda self: "dan" in self.model.dead)
    @rule()
    def revoked_player_plays(self) -> None:
        """dan's revoked credential: his socket is closed and a new hello is refused; his
        wager moves nothing."""
        before = self.reader.snapshot()
        answer = self.socket("dan").request({"type": "wager", "kind": "blackjack", "amount": 1000})
        after = self.reader.snapshot()
        assert answer is None or answer["type"] == "error", answer
        self.unchanged(before, after, "the revoked player wagers")

    # -- after every step -------------------------------------------------------------------------

    @invariant()
    def books_hold(self) -> None:
        """Every balance as the model has it, all summing to 0; each account kind within its
        invariant; ``verify-log`` clean; every new ledger row a movement of the policy, started
        by a role the movement allows."""
        model = self.model
        balances = self.reader.snapshot().balances
        assert balances == model.balances, (
            f"the database holds {balances}, the model {model.balances}"
        )
        assert sum(balances.values()) == 0, balances
        for account, balance in balances.items():
            kind = account_kind_of(account)
            if kind in (AccountKind.PLAYER, AccountKind.ESCROW, AccountKind.TIPS):
                assert balance >= 0, (account, balance)
            if kind is AccountKind.BILLS:
                assert balance <= 0, (account, balance)
        assert balances[ESCROW] == sum(held for _, held in model.open_wagers.values())
        assert balances["vouchers"] == sum(v.amount for v in model.vouchers if v.outstanding)
        problems = self.reader.problems()
        assert problems == [], problems
        rows = self.reader.rows_since(self.checked)
        for row in rows:
            self.check_row(row)
        if rows:
            self.checked = rows[-1].id

    def check_row(self, row: Row) -> None:
        rule_ = MOVEMENTS.get(row.kind)
        assert rule_ is not None, f"{row}: not a movement of the policy"
        sides = (account_kind_of(row.source), account_kind_of(row.target))
        assert sides == (rule_.source, rule_.target), f"{row}: {sides} is not {rule_.sides()}"
        assert row.actor is not None, f"{row}: no event started it"
        if row.stream_kind == "round":
            assert Role.TABLE in rule_.roles, f"{row}: a table booked {row.kind}"
            for account in (row.source, row.target):
                if ":" in account:
                    assert account.partition(":")[2] == row.table, f"{row}: another table's"
            if row.kind == "wager":  # the player's own request, from his terminal
                assert row.actor == row.source and row.terminal, f"{row}: not the player's own"
            return
        role = SUBJECT_ROLES.get(row.actor)
        assert role is not None and role in rule_.roles, f"{row}: started by {row.actor} ({role})"
        if rule_.own:
            player = row.source if rule_.source is AccountKind.PLAYER else row.target
            assert player == row.actor, f"{row}: {row.actor} moved {player}'s account"
        if rule_.at_terminal:
            assert row.terminal, f"{row}: a player's movement away from a terminal"


MACHINE = settings(
    max_examples=10,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)


@pytest.fixture
def new_backend(backend: Backend, tmp_path: Path) -> Callable[[], Backend]:
    """A maker of fresh databases (one per example) on ``backend``'s kind: an SQLite file, or
    a PostgreSQL schema (the ``backend`` fixture skips or fails without a server)."""
    if backend.name == "sqlite":
        return lambda: Backend.sqlite(tmp_path)
    return Backend.postgresql


def test_every_role_at_random_keeps_the_books(new_backend: Callable[[], Backend]) -> None:
    """Random REST and WebSocket requests of every role, legal and forbidden, on a fresh
    floor per example: after every step the balances sum to 0 and match the model, every
    account kind keeps its invariant and ``verify-log`` is clean (PA 605a.2(d), 605a.5(c)),
    every refused request changed nothing, every allowed one moved exactly what it should, and
    every ledger row is a movement the policy allows to the role that started it
    (PA 605a.4(d))."""
    machine = type("FloorUnderTest", (FloorMachine,), {"new_backend": staticmethod(new_backend)})
    run_state_machine_as_test(machine, settings=MACHINE)
