"""The floor every server and floor test starts from, and speaking to it as its people do.

**The seed** (:func:`setup_floor`): players ann and bob with :data:`CREDIT` ($1,000.00) each
and cat with nothing (a test that needs her funded buys in at the cage); a dealer (dana), a
supervisor (sam), a cashier (cleo) and an operator (olga), each with the token of
:data:`TOKENS`. No terminal is registered: the first use of one at a table registers it with
the operator's token (:func:`terminal_key`), as a floor's people would.

**The tables**: :func:`hybrid_table` (version A, a one-second clock, a shuffled virtual shoe),
:func:`stacked_table` (the same dealt :data:`ORDER`, the round :func:`play_round` plays),
:func:`classic_table` (EZ Bust) and :func:`one_deck_table` (one deck dealt by the card reader,
the round :data:`ROUND_1` that :func:`play_reader_round` reads) — all dealt by a dealer.

**Speaking to it**: REST with a token (:func:`auth`, :func:`post`, :func:`dealer`, :func:`read`)
or a player's session at a terminal (:func:`session`), a bill or a voucher as the terminal's
validator reports it (:func:`insert`, signed by its simulated controller, :func:`validator`); the WebSocket as a terminal or a console
(:func:`connect`, a :class:`Terminal` that said hello). :func:`clients` opens apps on this seed
(the ``make_client`` fixture); :class:`Kit` hands all of it to a test as the ``kit`` fixture.
"""

from __future__ import annotations

import contextlib
import secrets
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tablejack.core.cards import full_deck
from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tablejack.store import validator as validators
from tests.support.store import Backend

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

# -- the seed ------------------------------------------------------------------------------

TOKENS = {
    "ann": "tok-ann",
    "bob": "tok-bob",
    "cat": "tok-cat",
    "dealer": "tok-dealer",
    "super": "tok-super",
    "cashier": "tok-cashier",
    "operator": "tok-operator",
}
"""The token of each test identity (``super`` is the supervisor)."""
STAFF = ("dealer", "super", "supervisor", "cashier", "operator")
"""The identities that name a console, not a terminal, when they say hello."""
CREDIT = 100_000
"""What ann and bob hold at the start: $1,000.00."""


async def setup_floor(floor: Floor) -> None:
    """ann and bob with $1,000.00 each, cat with nothing; a dealer, a supervisor, a cashier
    and an operator."""
    for player in ("ann", "bob"):
        await floor.add_player(player, CREDIT, TOKENS[player])
    await floor.add_player("cat", 0, TOKENS["cat"])
    await floor.issue_token("dealer", "dana", TOKENS["dealer"])
    await floor.issue_token("supervisor", "sam", TOKENS["super"])
    await floor.issue_token("cashier", "cleo", TOKENS["cashier"])
    await floor.issue_token("operator", "olga", TOKENS["operator"])


# -- the tables ----------------------------------------------------------------------------

ORDER = "10S 9H 6D 5C 9C 10H 4S 8D"
"""The cards of :func:`stacked_table`: position 1 (ann): 10S 5C, hits 4S = 19, stands;
position 2 (bob): 9H 9C stands on the countdown; dealer 6D + hole 10H, draws 8D: 24, busts —
both blackjack wagers win 1 to 1."""
DECK = [card.code for card in full_deck()]
"""One deck's card codes, in order."""
ROUND_1 = ["10S", "10H", "9D", "9S", "8H", "8D"]
"""Round 1 at :func:`one_deck_table`: seat 1 (ann) 10S 9S = 19, seat 2 (bob) 10H 8H = 18,
dealer 9D + hole 8D = 17 stands: both win 1 to 1 once the clock has stood both seats."""


def hybrid_table(table_id: str = "A1", **options: Any) -> TableConfig:
    """A version A table with a one-second clock (``countdown`` seconds), dealt by the dealer
    (not automated) from a shuffled virtual shoe unless ``cards`` says otherwise."""
    rules = HybridRules(countdown_seconds=options.pop("countdown", 1))
    options.setdefault("automated", False)
    options.setdefault("require_procedures", False)
    return TableConfig(table_id, rules, **options)


def stacked_table(table_id: str = "A1", **options: Any) -> TableConfig:
    """A :func:`hybrid_table` dealt :data:`ORDER` (the round of :func:`play_round`)."""
    options.setdefault("cards", ORDER)
    return hybrid_table(table_id, **options)


def classic_table(table_id: str = "C1", **options: Any) -> TableConfig:
    """A classic table with EZ Bust and a one-second clock, dealt by the dealer (not
    automated)."""
    options.setdefault("automated", False)
    options.setdefault("require_procedures", False)
    options.setdefault("countdown_seconds", 1)
    return TableConfig(table_id, ClassicRules(ez_bust=True), **options)


def one_deck_table(**options: Any) -> TableConfig:
    """A classic one-deck table C1 dealt by the card reader (a short shoe shows at once)."""
    options.setdefault("require_procedures", False)
    return TableConfig(
        "C1",
        ClassicRules(decks=1),
        source="reader",
        automated=False,
        countdown_seconds=0.3,
        **options,
    )


@contextlib.contextmanager
def clients(directory: Path) -> Iterator[Callable[..., TestClient]]:
    """``make(tables=None, *, backend=None, db=None, **options)``: a started TestClient of an
    app on the seed with ``tables`` (one :func:`stacked_table` unless given), on ``backend``,
    the database URL ``db``, or an SQLite file in ``directory``; every one opened is stopped,
    the last first, when the block ends."""
    opened: list[TestClient] = []

    def make(
        tables: list[TableConfig] | None = None,
        *,
        backend: Backend | None = None,
        db: str | None = None,
        **options: Any,
    ) -> TestClient:
        url = db or (backend.server_url if backend else str(directory / "floor.db"))
        chosen = tables if tables is not None else [stacked_table()]
        client = TestClient(create_app(url, tables=chosen, setup=setup_floor, **options))
        client.__enter__()
        opened.append(client)
        return client

    try:
        yield make
    finally:
        for client in reversed(opened):
            client.__exit__(None, None, None)


# -- REST ----------------------------------------------------------------------------------


def bearer(token: str) -> dict[str, str]:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


def auth(who: str) -> dict[str, str]:
    """The Authorization header of a test identity."""
    return bearer(TOKENS[who])


def terminal_key(client: Any, terminal: str, table: str) -> str:
    """The device credential of ``terminal`` at ``table``: registered (bound to the table) by
    the operator the first time a test uses it there; moved (a new credential) after."""
    keys: dict[tuple[str, str], str] = client.__dict__.setdefault("terminal_keys", {})
    if (terminal, table) not in keys:
        answer = client.post(
            "/api/floor/terminals",
            json={"terminal": terminal, "table": table, "credential": True},
            headers=auth("operator"),
        )
        assert answer.status_code == 200, answer.text
        for key in [k for k in keys if k[0] == terminal]:
            del keys[key]
        keys[(terminal, table)] = answer.json()["credential"]
    return keys[(terminal, table)]


def session(client: Any, who: str, terminal: str, table: str) -> dict[str, str]:
    """The Authorization header of a session of player ``who`` signed in at ``terminal``
    (registered at ``table``)."""
    answer = client.post(
        "/api/session",
        json={
            "token": TOKENS[who],
            "terminal": terminal,
            "terminal_key": terminal_key(client, terminal, table),
        },
    )
    assert answer.status_code == 200, answer.text
    token = str(answer.cookies["tj_session"])
    client.cookies.clear()
    return bearer(token)


def validator(client: Any, terminal: str, key: str) -> Any:
    """The simulated bill validator controller of ``terminal`` (its Ed25519 key derived from
    the terminal's key ``key``), registered with that key the first time a test uses it."""
    private = validators.controller_key(key)
    registered: set[tuple[str, str]] = client.__dict__.setdefault("validators", set())
    if (terminal, key) not in registered:
        answer = client.post(
            "/api/floor/validator",
            json={
                "public_key": validators.public_key_text(private.public_key()),
                "terminal": terminal,
                "terminal_key": key,
            },
        )
        assert answer.status_code == 200, answer.text
        registered.add((terminal, key))
    return private


def insert(
    client: Any,
    path: str,
    *,
    json: Mapping[str, Any],
    headers: Mapping[str, str],
    event: str | None = None,
    terminal_key: str | None = None,
) -> Any:
    """POST a bill (``/api/floor/bill-in``) or a voucher (``/api/floor/voucher-in``) as the
    validator of the terminal the session in ``headers`` is at reports it: a new event id
    (unless ``event``) and the controller's proof. The terminal's key is the one the kit
    registered (:func:`terminal_key`) unless ``terminal_key``; with no terminal (not a player's
    session there) the proof is a stranger's and the request is refused as before."""
    kind = "bill" if path.endswith("bill-in") else "voucher"
    body = dict(json)
    value = body.get("amount") if kind == "bill" else body.get("code")
    me = client.get("/api/me", headers=dict(headers))
    terminal = str((me.json() if me.status_code == 200 else {}).get("terminal") or "")
    keys: dict[tuple[str, str], str] = client.__dict__.get("terminal_keys", {})
    key = terminal_key or next((k for (t, _), k in keys.items() if t == terminal), None)
    if terminal and key:
        private = validator(client, terminal, key)
    else:
        private = validators.controller_key("a stranger")
    event = event or f"ev-{secrets.token_hex(8)}"
    body.setdefault("event", event)
    body.setdefault("proof", validators.sign(private, terminal, event, kind, str(value)))
    return client.post(path, json=body, headers=dict(headers))


def post(client: Any, path: str, who: str, **body: Any) -> Any:
    """POST ``body`` as JSON with ``who``'s token."""
    return client.post(path, json=body, headers=auth(who))


def dealer(client: Any, command: str, table: str = "C1") -> Any:
    """A dealer console command."""
    return post(client, f"/api/tables/{table}/dealer", "dealer", command=command)


def read(client: Any, *lines: str, table: str = "C1") -> list[str]:
    """Lines of the reader line protocol over HTTP; the answers."""
    body = "\n".join(lines) + "\n"
    answer = client.post(f"/api/tables/{table}/reader", content=body, headers=auth("dealer"))
    assert answer.status_code == 200
    return list(answer.text.splitlines())


def staff_state(client: Any, table: str = "C1") -> dict[str, Any]:
    """The dealer console's state of a table."""
    return dict(client.get(f"/api/tables/{table}/state", headers=auth("dealer")).json())


def balance(client: Any, who: str) -> int:
    """A player's balance in cents."""
    return int(client.get("/api/me", headers=auth(who)).json()["balance"])


def round_statuses(client: Any, table: str = "C1") -> list[str]:
    """The statuses of the table's rounds as the store holds them, newest first."""
    answer = client.get(f"/api/tables/{table}/rounds", headers=auth("super"))
    return [str(row["status"]) for row in answer.json()]


def eventually(check: Callable[[], Any], seconds: float = 10.0) -> Any:
    """Poll until ``check()`` is truthy (the server acts on a closed socket asynchronously)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("not reached in time")


# -- the WebSocket -------------------------------------------------------------------------


def hello(client: Any, who: str, terminal: str, table: str | None) -> dict[str, Any]:
    """The hello of ``who``: a player (``table`` given) proves his terminal registered at
    ``table``; staff name their console."""
    message: dict[str, Any] = {
        "type": "hello",
        "protocol": 2,
        "token": TOKENS[who],
        "terminal": terminal,
    }
    if table is not None and who not in STAFF:
        message["terminal_key"] = terminal_key(client, terminal, table)
    return message


class Terminal:
    """A test terminal: a WebSocket that has said hello."""

    def __init__(self, socket: Any, terminal: str) -> None:
        self.socket = socket
        self.terminal = terminal
        self.counter = 0
        self.seen: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any], command_id: str | None = None) -> str:
        """Send ``message`` with ``command_id`` (the terminal's next one unless given)."""
        self.counter += 1
        command_id = command_id or f"{self.terminal}-{self.counter}"
        self.socket.send_json({**message, "id": command_id})
        return command_id

    def until(
        self, predicate: Callable[[dict[str, Any]], bool], limit: int = 400
    ) -> dict[str, Any]:
        """The first message (already received and not yet taken, or new) that matches."""
        for index, message in enumerate(self.seen):
            if predicate(message):
                del self.seen[index]
                return message
        for _ in range(limit):
            message = dict(self.socket.receive_json())
            if predicate(message):
                return message
            self.seen.append(message)
        raise AssertionError(f"no matching message in {limit}")

    def reply(self, command_id: str) -> dict[str, Any]:
        """The ack or error of ``command_id``."""
        return self.until(lambda m: m.get("id") == command_id and m["type"] in ("ack", "error"))

    def request(self, message: dict[str, Any], command_id: str | None = None) -> dict[str, Any]:
        """Send ``message`` and wait for its ack or error."""
        return self.reply(self.send(message, command_id))

    def state(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first state message that matches."""
        return self.until(lambda m: m["type"] == "state" and predicate(m))


@contextlib.contextmanager
def connect(
    client: TestClient, who: str, terminal: str, table: str | None = None
) -> Iterator[Terminal]:
    """A :class:`Terminal` of ``who`` at ``terminal`` that said hello (and joined ``table``,
    when given); its socket closes when the block ends."""
    with client.websocket_connect("/ws") as socket:
        socket.send_json(hello(client, who, terminal, table))
        term = Terminal(socket, terminal)
        term.until(lambda m: m["type"] == "welcome")
        if table is not None:
            assert term.request({"type": "join", "table": table})["type"] == "ack"
        yield term


def phase(message: dict[str, Any]) -> str | None:
    """The phase of a state message's view (None without a view)."""
    view = message.get("view")
    return None if view is None else str(view["phase"])


# -- rounds played through the terminals ---------------------------------------------------


def play_round(
    client: TestClient,
    *,
    ann_terminal: str = "EWT-1",
    bob_terminal: str = "EWT-2",
    table: str = "A1",
) -> str:
    """One round of :data:`ORDER` at a :func:`stacked_table`: ann wagers $10 and decides
    herself (hit, stand); bob wagers $10 and a $5 Buzzer Beater and lets the countdown stand
    for him. Returns the round id."""
    opened = client.post(
        f"/api/tables/{table}/dealer", json={"command": "open-round"}, headers=auth("dealer")
    ).json()
    with (
        connect(client, "ann", ann_terminal, table) as ann,
        connect(client, "bob", bob_terminal, table) as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
        client.post(
            f"/api/tables/{table}/dealer",
            json={"command": "close-wagering"},
            headers=auth("dealer"),
        )
        ann.state(lambda m: phase(m) == "playing")
        assert ann.request({"type": "action", "verb": "hit"})["ok"]
        ann.state(lambda m: m["view"] is not None and m["view"]["community_cards"] == ["4S"])
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        bob.state(lambda m: phase(m) == "complete")
    return str(opened["round_id"])


def play_reader_round(client: TestClient) -> None:
    """At :func:`one_deck_table`, ann (seat 1) and bob (seat 2) wager $10; the reader deals
    :data:`ROUND_1`."""
    dealer(client, "open-round")
    with (
        connect(client, "ann", "EWT-1", "C1") as ann,
        connect(client, "bob", "EWT-2", "C1") as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        dealer(client, "close-wagering")
        assert all(line.startswith("OK ") for line in read(client, *ROUND_1))
        # (the sockets stay open while their wagers are unsettled)
        eventually(lambda: (staff_state(client)["view"] or {}).get("phase") == "complete")
        # and the round is written: the console's view can run ahead of the commit
        eventually(lambda: round_statuses(client)[:1] == ["complete"])


def fund(client: Any, who: str, amount: int) -> None:
    """The cashier sells ``who`` ``amount`` cents of credit at the cage."""
    answer = post(client, "/api/cage/credit", "cashier", account=who, amount=amount)
    assert answer.status_code == 200, answer.text


class Kit:
    """The helpers above, handed to tests as the ``kit`` fixture."""

    tokens: Mapping[str, str] = TOKENS
    credit = CREDIT
    order = ORDER
    deck = DECK
    round_1 = ROUND_1
    auth = staticmethod(auth)
    bearer = staticmethod(bearer)
    terminal_key = staticmethod(terminal_key)
    session = staticmethod(session)
    hello = staticmethod(hello)
    connect = staticmethod(connect)
    phase = staticmethod(phase)
    hybrid_table = staticmethod(hybrid_table)
    stacked_table = staticmethod(stacked_table)
    classic_table = staticmethod(classic_table)
    one_deck_table = staticmethod(one_deck_table)
    post = staticmethod(post)
    insert = staticmethod(insert)
    validator = staticmethod(validator)
    dealer = staticmethod(dealer)
    read = staticmethod(read)
    staff_state = staticmethod(staff_state)
    balance = staticmethod(balance)
    fund = staticmethod(fund)
    round_statuses = staticmethod(round_statuses)
    eventually = staticmethod(eventually)
    play_round = staticmethod(play_round)
    play_reader_round = staticmethod(play_reader_round)
