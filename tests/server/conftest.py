"""Fixtures of the server tests: an app on a fresh database, tokens, and socket helpers."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.support import testing
from tablejack.server.table import TableConfig, replay_round
from tablejack.server.table.games import adapter_for
from tablejack.store import Store
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
    """Players ann, bob ($1,000 each) and cat ($15); a dealer and a supervisor."""
    for player in ("ann", "bob"):
        await floor.add_player(player, CREDIT, TOKENS[player])
    await floor.add_player("cat", 1500, TOKENS["cat"])
    await floor.issue_token("dealer", "dana", TOKENS["dealer"])
    await floor.issue_token("supervisor", "sam", TOKENS["super"])
    await floor.issue_token("cashier", "cleo", TOKENS["cashier"])
    await floor.issue_token("operator", "olga", TOKENS["operator"])


def hybrid_table(table_id: str = "A1", **options: Any) -> TableConfig:
    """A version A table with a one-second clock, dealt by the dealer (not automated)."""
    rules = HybridRules(countdown_seconds=options.pop("countdown", 1))
    options.setdefault("automated", False)
    options.setdefault("require_procedures", False)
    return TableConfig(table_id, rules, **options)


def classic_table(table_id: str = "C1", **options: Any) -> TableConfig:
    """A classic table with EZ Bust, dealt by the dealer (not automated)."""
    options.setdefault("automated", False)
    options.setdefault("require_procedures", False)
    options.setdefault("countdown_seconds", 1)
    return TableConfig(table_id, ClassicRules(ez_bust=True), **options)


class Terminal:
    """A test terminal: a WebSocket that has said hello."""

    def __init__(self, socket: Any, terminal: str) -> None:
        self.socket = socket
        self.terminal = terminal
        self.counter = 0
        self.seen: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any], command_id: str | None = None) -> str:
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
            message = self.socket.receive_json()
            if predicate(message):
                return message
            self.seen.append(message)
        raise AssertionError(f"no matching message in {limit}")

    def reply(self, command_id: str) -> dict[str, Any]:
        return self.until(lambda m: m.get("id") == command_id and m["type"] in ("ack", "error"))

    def request(self, message: dict[str, Any], command_id: str | None = None) -> dict[str, Any]:
        return self.reply(self.send(message, command_id))

    def state(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return self.until(lambda m: m["type"] == "state" and predicate(m))


def phase(message: dict[str, Any]) -> str | None:
    view = message.get("view")
    return None if view is None else str(view["phase"])


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``make_client(tables, backend=None, clock=None)``: a started TestClient."""
    opened: list[TestClient] = []

    def make(
        tables: list[TableConfig],
        *,
        backend: Backend | None = None,
        db: str | None = None,
        **options: Any,
    ) -> TestClient:
        url = db or (backend.server_url if backend else str(tmp_path / "floor.db"))
        client = TestClient(create_app(url, tables=tables, setup=setup_floor, **options))
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in reversed(opened):
        client.__exit__(None, None, None)


def connect(client: TestClient, who: str, terminal: str, table: str | None = None) -> Any:
    """A context manager yielding a :class:`Terminal` that said hello (and joined)."""

    class _Context:
        def __enter__(self) -> Terminal:
            self.manager = client.websocket_connect("/ws")
            socket = self.manager.__enter__()
            socket.send_json(hello(client, who, terminal, table))
            term = Terminal(socket, terminal)
            term.until(lambda m: m["type"] == "welcome")
            if table is not None:
                assert term.request({"type": "join", "table": table})["type"] == "ack"
            return term

        def __exit__(self, *exc: object) -> None:
            self.manager.__exit__(*exc)

    return _Context()


class Kit:
    """The helpers above, handed to tests as the ``kit`` fixture."""

    auth = staticmethod(auth)
    connect = staticmethod(connect)
    hello = staticmethod(hello)
    session = staticmethod(session)
    terminal_key = staticmethod(terminal_key)
    hybrid_table = staticmethod(hybrid_table)
    classic_table = staticmethod(classic_table)
    phase = staticmethod(phase)
    tokens = TOKENS
    credit = CREDIT


@pytest.fixture
def kit() -> type[Kit]:
    """Helpers: ``kit.auth(who)``, ``kit.connect(client, who, terminal, table)``,
    ``kit.hybrid_table(...)``, ``kit.classic_table(...)``, ``kit.phase(message)``."""
    return Kit


async def account_for_rounds(
    store: Store, players: Iterable[str], credit: int, tables: Iterable[str]
) -> dict[str, int]:
    """Replay every round of the log and account for each cent of it, for a floor whose
    ``players`` each started with ``credit`` and played nowhere but at ``tables``: a settled
    wager holds nothing in escrow and its ledger rows pay the player exactly its settlement's
    net (a wager settled twice would pay twice), each settled once; a voided round's wagers
    are refunded; an unfinished (open, irregular) round's wagers are held in full; each
    player's balance is his credit and nets less what escrow holds of his, each table's
    escrow holds exactly its unfinished wagers, and every account sums to zero. Returns the
    rounds counted by status."""
    balances = await store.accounts()
    expected = dict.fromkeys(players, credit)
    escrow_expected: dict[str, int] = defaultdict(int)
    statuses: dict[str, int] = defaultdict(int)
    for row in await store.rounds(limit=10**9):
        statuses[row["status"]] += 1
        round_ = replay_round(await store.events(row["id"]), adapter_for(row["game"]))
        escrow = f"escrow:{row['table_id']}"
        held: dict[int, int] = defaultdict(int)
        paid: dict[int, int] = defaultdict(int)  # to the wager's player, less from him
        owner = {wager.id: wager.player for wager in round_.wagers}
        for entry in await store.ledger_of_round(row["id"]):
            wager_id = entry["wager_id"]
            if entry["to_account"] == escrow:
                held[wager_id] += entry["amount"]
            if entry["from_account"] == escrow:
                held[wager_id] -= entry["amount"]
            if entry["to_account"] == owner.get(wager_id):
                paid[wager_id] += entry["amount"]
            if entry["from_account"] == owner.get(wager_id):
                paid[wager_id] -= entry["amount"]
        settled = {s.wager_id: s for s in round_.settlements}
        assert len(settled) == len(round_.settlements), row["id"]  # each settled once
        for wager in round_.wagers:
            if wager.id in settled:
                assert held[wager.id] == 0, (row["id"], wager)
                assert paid[wager.id] == settled[wager.id].net, (row["id"], wager)
                expected[wager.player] += settled[wager.id].net
            elif row["status"] == "voided":
                assert held[wager.id] == 0, (row["id"], wager)  # refunded
                assert paid[wager.id] == 0, (row["id"], wager)
            else:
                assert row["status"] in ("open", "irregular"), row
                assert held[wager.id] == wager.amount, (row["id"], wager)
                assert paid[wager.id] == -wager.amount, (row["id"], wager)
                expected[wager.player] -= wager.amount
                escrow_expected[escrow] += wager.amount
        if row["status"] == "complete":
            assert round_.is_complete
            round_.house_net()  # every wager settled exactly once, for its full amount
    for player, balance in expected.items():
        assert balances[player] == balance, player
    for table in tables:
        escrow = f"escrow:{table}"
        assert balances[escrow] == escrow_expected[escrow], escrow
    assert sum(balances.values()) == 0
    return dict(statuses)
