"""Fixtures of the security tests: a floor on each backend whose checkpoints are signed with a
key kept outside the database, the people of the tests' floor (:mod:`tests.support.floor`)
with terminals registered up front, and what an attacker with the database owner's rights can
do."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.http.trust import CheckpointSettings
from tablejack.server.socket.gate import GateLimits
from tablejack.server.table import TableConfig
from tablejack.store import Store
from tablejack.store.keys import generate_key_pair, load_public_key
from tablejack.store.verify import Report, verify
from tests.support.floor import ORDER, TOKENS, auth
from tests.support.floor import setup_floor as seed
from tests.support.store import Backend

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TERMINALS = {"EWT-1": "key-EWT-1", "EWT-2": "key-EWT-2", "EWT-3": "key-EWT-3"}


async def setup_floor(floor: Floor) -> None:
    """The tests' seed (:func:`tests.support.floor.setup_floor`: ann and bob with $1,000.00
    each, cat with nothing, a dealer, a supervisor, a cashier and an operator) and terminals
    EWT-1..3 at table A1 with their device credentials."""
    await seed(floor)
    for terminal, key in TERMINALS.items():
        await floor.register_terminal(terminal, "A1", key=key)


@dataclass
class Floorkit:
    """A running floor and what its tests need: the client, the database, the keys."""

    client: TestClient
    backend: Backend
    keys: Path

    @property
    def public_key(self) -> Path:
        """The checkpoint signer's public key."""
        return self.keys / "checkpoint.pub"

    @property
    def checkpoint_file(self) -> Path:
        """The append-only checkpoint file outside the database."""
        return self.keys / "checkpoints.jsonl"

    def session(self, who: str, terminal: str = "EWT-1") -> dict[str, str]:
        """The Authorization header of a session of ``who`` signed in at ``terminal``."""
        answer = self.client.post(
            "/api/session",
            json={"token": TOKENS[who], "terminal": terminal, "terminal_key": TERMINALS[terminal]},
        )
        assert answer.status_code == 200, answer.text
        token = answer.cookies["tj_session"]
        self.client.cookies.clear()
        return {"Authorization": f"Bearer {token}"}

    def hello(self, who: str, terminal: str | None = "EWT-1", **extra: Any) -> dict[str, Any]:
        """A hello of ``who`` (a player at ``terminal`` with its credential)."""
        message: dict[str, Any] = {"type": "hello", "protocol": 2, "token": TOKENS[who]}
        if terminal is not None:
            message |= {"terminal": terminal, "terminal_key": TERMINALS.get(terminal)}
        return message | extra

    def balances(self) -> dict[str, int]:
        """Every account's balance, read from the database."""
        return self.run(lambda store: store.accounts())

    def ledger_rows(self) -> int:
        """How many ledger rows there are."""

        async def count(store: Store) -> int:
            async with store.engine.connect() as connection:
                return int(await connection.scalar(text("SELECT COUNT(*) FROM ledger_entries")))

        return self.run(count)

    def run(self, body: Callable[[Store], Any]) -> Any:
        """Run ``body(store)`` on a second connection to the floor's database."""

        async def main() -> Any:
            store = await Store.open(self.backend.url, schema=self.backend.schema, migrate=False)
            try:
                return await body(store)
            finally:
                await store.close()

        return asyncio.run(main())

    def race(self, *bodies: Callable[[Store], Any]) -> list[Any]:
        """Run each ``body(store)`` as its own process would: a store of its own, on its own
        thread and event loop, all let go at one moment; each one's answer or exception, in
        order. (Two stores on one event loop are no model of two processes: SQLite's writes of
        one would wait on the loop the other needs to finish its transaction.)"""
        gate = threading.Barrier(len(bodies))

        async def main(body: Callable[[Store], Any]) -> Any:
            store = await Store.open(self.backend.url, schema=self.backend.schema, migrate=False)
            try:
                await asyncio.to_thread(gate.wait, 30)
                return await body(store)
            finally:
                await store.close()

        def one(body: Callable[[Store], Any]) -> Any:
            try:
                return asyncio.run(main(body))
            except Exception as error:  # the race's answer, as gather(return_exceptions=True)
                return error

        with concurrent.futures.ThreadPoolExecutor(len(bodies)) as pool:
            return list(pool.map(one, bodies))

    def verify(self, *, strict: bool = False, file: bool = True) -> Report:
        """``verify-log`` with the public key (and the checkpoint file)."""
        key = load_public_key(self.public_key)
        return self.run(
            lambda store: verify(
                store,
                public_keys=[key],
                checkpoint_file=self.checkpoint_file if file else None,
                strict=strict,
            )
        )

    def stop(self) -> None:
        """Stop the server (it signs a last checkpoint)."""
        self.client.__exit__(None, None, None)

    def play_round(self) -> str:
        """One round of :data:`ORDER` at A1: ann and bob wager $10, both win. Its id."""
        client = self.client
        opened = client.post(
            "/api/tables/A1/dealer", json={"command": "open-round"}, headers=auth("dealer")
        ).json()
        with (
            client.websocket_connect("/ws") as ann_socket,
            client.websocket_connect("/ws") as bob_socket,
        ):
            ann = Socketkit(ann_socket, self.hello("ann", "EWT-1"), "A1")
            bob = Socketkit(bob_socket, self.hello("bob", "EWT-2"), "A1")
            assert ann.request({"type": "position", "position": 1})["type"] == "ack"
            assert bob.request({"type": "position", "position": 2})["type"] == "ack"
            assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
            assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
            client.post(
                "/api/tables/A1/dealer", json={"command": "close-wagering"}, headers=auth("dealer")
            )
            ann.until(
                lambda m: m["type"] == "state" and (m.get("view") or {}).get("phase") == "playing"
            )
            assert ann.request({"type": "action", "verb": "hit"})["ok"]
            ann.until(
                lambda m: (
                    m["type"] == "state" and (m.get("view") or {}).get("community_cards") == ["4S"]
                )
            )
            assert ann.request({"type": "action", "verb": "stand"})["ok"]
            bob.until(
                lambda m: m["type"] == "state" and (m.get("view") or {}).get("phase") == "complete"
            )
        return str(opened["round_id"])


class Socketkit:
    """A WebSocket that said hello and joined a table."""

    def __init__(self, socket: Any, hello: dict[str, Any], table: str | None) -> None:
        self.socket = socket
        self.counter = 0
        self.seen: list[dict[str, Any]] = []
        socket.send_json(hello)
        self.welcome = self.until(lambda m: m["type"] in ("welcome", "error"))
        if table is not None and self.welcome["type"] == "welcome":
            assert self.request({"type": "join", "table": table})["type"] == "ack"

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

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.counter += 1
        command_id = f"c-{self.counter}"
        self.socket.send_json({**message, "id": command_id})
        return self.until(lambda m: m.get("id") == command_id and m["type"] in ("ack", "error"))


@pytest.fixture
def gate_limits() -> GateLimits | None:
    """The ``floor``'s gate limits: the server's defaults (a test module overrides this fixture
    to set its own)."""
    return None


@pytest.fixture
def floor(backend: Backend, tmp_path: Path, gate_limits: GateLimits | None) -> Iterator[Floorkit]:
    """A running floor on ``backend``: tables A1 (version A, a stacked shoe) and A2, signed checkpoints
    (every 0.2 s and at shutdown) appended to a file beside the key."""
    keys = tmp_path / "keys"
    generate_key_pair(keys, "checkpoint.key", "checkpoint.pub")
    rules = HybridRules(countdown_seconds=1)
    table = TableConfig("A1", rules, automated=False, require_procedures=False, cards=ORDER)
    other = TableConfig("A2", rules, automated=False, require_procedures=False, seed=2)
    app = create_app(
        backend.server_url,
        tables=[table, other],
        setup=setup_floor,
        checkpoints=CheckpointSettings(keys / "checkpoint.key", keys / "checkpoints.jsonl", 0.2),
        **({} if gate_limits is None else {"gate": gate_limits}),
    )
    client = TestClient(app)
    client.__enter__()
    kit = Floorkit(client, backend, keys)
    try:
        yield kit
    finally:
        with contextlib.suppress(RuntimeError):  # (stopped by the test already)
            client.__exit__(None, None, None)
