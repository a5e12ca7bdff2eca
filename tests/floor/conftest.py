"""Fixtures of the floor tests (PA Chapter 605a): an app on a fresh database (SQLite file or a
PostgreSQL schema), players, staff tokens, and a round played through two terminals."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tablejack.core.cards import full_deck
from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.support import testing
from tablejack.server.table import TableConfig
from tablejack.store.testing import Backend

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TOKENS = {
    "ann": "tok-ann",
    "bob": "tok-bob",
    "cat": "tok-cat",
    "dealer": "tok-dealer",
    "super": "tok-super",
    "cashier": "tok-cashier",
    "operator": "tok-operator",
}
CREDIT = 100_000
# position 1 (ann): 10S 5C, hits 4S = 19, stands; position 2 (bob): 9H 9C stands on the
# countdown; dealer 6D + hole 10H, draws 8D: 24, busts — both blackjack wagers win 1 to 1
ORDER = "10S 9H 6D 5C 9C 10H 4S 8D"


def auth(who: str) -> dict[str, str]:
    """The Authorization header of a test identity."""
    return {"Authorization": f"Bearer {TOKENS[who]}"}


def terminal_key(client: Any, terminal: str, table: str) -> str:
    """The device credential of ``terminal``, registered at ``table`` on first use."""
    return testing.terminal_key(client, terminal, table, TOKENS["operator"])


def hello(client: Any, who: str, terminal: str, table: str | None) -> dict[str, Any]:
    """The hello of a test identity: a player proves the terminal (registered at ``table``)."""
    return testing.hello(client, TOKENS, who, terminal, table)


def session(client: Any, who: str, terminal: str, table: str) -> dict[str, str]:
    """The Authorization header of a session of player ``who`` signed in at ``terminal``."""
    return testing.session(client, TOKENS, who, terminal, table)


async def setup_floor(floor: Floor) -> None:
    """ann and bob with $1,000.00 each, cat with nothing; a dealer and a supervisor."""
    for player in ("ann", "bob"):
        await floor.add_player(player, CREDIT, TOKENS[player])
    await floor.add_player("cat", 0, TOKENS["cat"])
    await floor.issue_token("dealer", "dana", TOKENS["dealer"])
    await floor.issue_token("supervisor", "sam", TOKENS["super"])
    await floor.issue_token("cashier", "cleo", TOKENS["cashier"])
    await floor.issue_token("operator", "olga", TOKENS["operator"])


def hybrid_table(table_id: str = "A1", **options: Any) -> TableConfig:
    """A version A table with a one-second clock, dealt from a stacked virtual shoe."""
    options.setdefault("automated", False)
    options.setdefault("require_procedures", False)
    options.setdefault("cards", ORDER)
    return TableConfig(table_id, HybridRules(countdown_seconds=1), **options)


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``make_client(tables=None, backend=None, **options)``: a started TestClient."""
    opened: list[TestClient] = []

    def make(
        tables: list[TableConfig] | None = None,
        *,
        backend: Backend | None = None,
        **options: Any,
    ) -> TestClient:
        url = backend.server_url if backend else str(tmp_path / "floor.db")
        chosen = tables if tables is not None else [hybrid_table()]
        client = TestClient(create_app(url, tables=chosen, setup=setup_floor, **options))
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in reversed(opened):
        client.__exit__(None, None, None)


class Terminal:
    """A test terminal: a WebSocket that has said hello and joined a table."""

    def __init__(self, socket: Any, terminal: str) -> None:
        self.socket = socket
        self.terminal = terminal
        self.counter = 0
        self.seen: list[dict[str, Any]] = []

    def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        for index, message in enumerate(self.seen):
            if predicate(message):
                del self.seen[index]
                return message
        for _ in range(400):
            message = self.socket.receive_json()
            if predicate(message):
                return message
            self.seen.append(message)
        raise AssertionError("no matching message")

    def request(self, message: dict[str, Any], command_id: str | None = None) -> dict[str, Any]:
        self.counter += 1
        command_id = command_id or f"{self.terminal}-{self.counter}"
        self.socket.send_json({**message, "id": command_id})
        return self.until(lambda m: m.get("id") == command_id and m["type"] in ("ack", "error"))

    def state(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return self.until(lambda m: m["type"] == "state" and predicate(m))


class _Connect:
    def __init__(self, client: TestClient, who: str, terminal: str, table: str) -> None:
        self.client, self.who, self.terminal, self.table = client, who, terminal, table

    def __enter__(self) -> Terminal:
        self.manager = self.client.websocket_connect("/ws")
        socket = self.manager.__enter__()
        socket.send_json(hello(self.client, self.who, self.terminal, self.table))
        term = Terminal(socket, self.terminal)
        term.until(lambda m: m["type"] == "welcome")
        assert term.request({"type": "join", "table": self.table})["type"] == "ack"
        return term

    def __exit__(self, *exc: object) -> None:
        self.manager.__exit__(*exc)


def phase(message: dict[str, Any]) -> str | None:
    view = message.get("view")
    return None if view is None else str(view["phase"])


def play_round(
    client: TestClient,
    *,
    ann_terminal: str = "EWT-1",
    bob_terminal: str = "EWT-2",
    table: str = "A1",
) -> str:
    """One round of :data:`ORDER`: ann wagers $10 and decides herself (hit, stand); bob wagers
    $10 and a $5 Buzzer Beater and lets the countdown stand for him. Returns the round id."""
    opened = client.post(
        f"/api/tables/{table}/dealer", json={"command": "open-round"}, headers=auth("dealer")
    ).json()
    with (
        _Connect(client, "ann", ann_terminal, table) as ann,
        _Connect(client, "bob", bob_terminal, table) as bob,
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


# -- a one-deck table dealt by the card reader (card inventory and automatic tilts) ---------

DECK = [card.code for card in full_deck()]
# round 1 at the one-deck table: seat 1 (ann) 10S 9S = 19, seat 2 (bob) 10H 8H = 18, dealer
# 9D + hole 8D = 17 stands: both win 1 to 1 once the clock has stood both seats
ROUND_1 = ["10S", "10H", "9D", "9S", "8H", "8D"]


def one_deck_table(**options: Any) -> TableConfig:
    """A classic one-deck table dealt by the card reader (a short shoe shows at once)."""
    options.setdefault("require_procedures", False)
    return TableConfig(
        "C1",
        ClassicRules(decks=1),
        source="reader",
        automated=False,
        countdown_seconds=0.3,
        **options,
    )


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


def eventually(check: Callable[[], Any], seconds: float = 10.0) -> Any:
    """Poll until ``check()`` is truthy (the server acts on a closed socket asynchronously)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("not reached in time")


def play_reader_round(client: TestClient) -> None:
    """ann (seat 1) and bob (seat 2) wager $10; the reader deals :data:`ROUND_1`."""
    dealer(client, "open-round")
    with (
        _Connect(client, "ann", "EWT-1", "C1") as ann,
        _Connect(client, "bob", "EWT-2", "C1") as bob,
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


def round_statuses(client: TestClient, table: str = "C1") -> list[str]:
    """The statuses of the table's rounds as the store holds them, newest first."""
    answer = client.get(f"/api/tables/{table}/rounds", headers=auth("super"))
    return [str(row["status"]) for row in answer.json()]


class Kit:
    """The helpers above, handed to tests as the ``kit`` fixture."""

    auth = staticmethod(auth)
    connect = _Connect
    hello = staticmethod(hello)
    session = staticmethod(session)
    terminal_key = staticmethod(terminal_key)
    hybrid_table = staticmethod(hybrid_table)
    play_round = staticmethod(play_round)
    tokens = TOKENS
    credit = CREDIT
    deck = DECK
    round_1 = ROUND_1
    one_deck_table = staticmethod(one_deck_table)
    post = staticmethod(post)
    dealer = staticmethod(dealer)
    read = staticmethod(read)
    staff_state = staticmethod(staff_state)
    balance = staticmethod(balance)
    eventually = staticmethod(eventually)
    play_reader_round = staticmethod(play_reader_round)


@pytest.fixture
def kit() -> type[Kit]:
    """Helpers: ``kit.auth(who)``, ``kit.connect(client, who, terminal, table)``,
    ``kit.play_round(client)``, ``kit.hybrid_table(...)``."""
    return Kit
