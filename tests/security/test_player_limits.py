"""Player protections hold in the write transaction: a player's loss limit, wager limit, time
limit and self-exclusion are checked against his committed usage under his lock, together with
the wagers and tips of the same transaction, so no interleaving of wagers sent at once — at
several tables, by several processes — passes a limit (issue #27, finding 3). A refused wager
comes back as the usual error frame naming the rule; nothing is written for it and the other
players' wagers of the same step and commit land."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tablejack.store import EventIn, LimitRefusedError, Step, Store, Transfer
from tablejack.store.meters_report import day_bounds, gaming_day_of
from tablejack.store.models import LEDGER
from tablejack.store.policy import Actor, Role
from tablejack.store.protections import self_exclude, set_limits
from tablejack.store.settings import DEFAULT_SETTINGS
from tablejack.store.wager_limits import DEFAULT_START_HOUR, LIMIT_RULE, Usage, day_start
from tests.support.floor import CREDIT, TOKENS, auth
from tests.support.store import Backend

from .conftest import Socketkit

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TABLES = ("A1", "B1", "C1")
KEYS = {f"EWT-{table}": f"key-{table}" for table in TABLES} | {"EWT-B2": "key-B2"}
CASHIER = Actor(Role.CASHIER, "cleo")


# -- the finding at the terminals: three $15.00 wagers at once at A1, B1 and C1 --------------


async def _three_tables(floor: Floor) -> None:
    for player in ("ann", "bob"):
        await floor.add_player(player, CREDIT, TOKENS[player])
    await floor.issue_token("dealer", "dana", TOKENS["dealer"])
    for terminal, key in KEYS.items():
        await floor.register_terminal(terminal, terminal[4] + "1", key=key)


@pytest.fixture
def three_tables(backend: Backend) -> Iterator[TestClient]:
    """A floor of tables A1, B1 and C1 whose tables gather a step for 50 ms and whose store
    gathers a group commit for 20 ms: wagers sent at once are written in one transaction."""
    rules = HybridRules(countdown_seconds=5)
    app = create_app(
        backend.server_url,
        tables=[
            TableConfig(t, rules, automated=False, require_procedures=False, seed=n)
            for n, t in enumerate(TABLES, 1)
        ],
        setup=_three_tables,
        step_window=0.05,
        commit_window=0.02,
    )
    client = TestClient(app)
    client.__enter__()
    try:
        yield client
    finally:
        with contextlib.suppress(RuntimeError):
            client.__exit__(None, None, None)


def _hello(player: str, terminal: str) -> dict[str, Any]:
    return {
        "type": "hello",
        "protocol": 2,
        "token": TOKENS[player],
        "terminal": terminal,
        "terminal_key": KEYS[terminal],
    }


def test_player_protection_a_loss_limit_holds_against_three_wagers_sent_at_once_at_three_tables(
    three_tables: TestClient,
) -> None:
    client = three_tables
    limits = client.put(
        "/api/floor/players/ann/limits", json={"loss_limit": 2000}, headers=auth("ann")
    )
    assert limits.json()["loss_limit"] == 2000
    for table in TABLES:
        opened = client.post(
            f"/api/tables/{table}/dealer", json={"command": "open-round"}, headers=auth("dealer")
        )
        assert opened.status_code == 200, opened.text
    with contextlib.ExitStack() as stack:
        sockets = {
            table: Socketkit(
                stack.enter_context(client.websocket_connect("/ws")),
                _hello("ann", f"EWT-{table}"),
                table,
            )
            for table in TABLES
        }
        bob = Socketkit(
            stack.enter_context(client.websocket_connect("/ws")), _hello("bob", "EWT-B2"), "B1"
        )
        for socket in (*sockets.values(), bob):
            assert (
                socket.request({"type": "position", "position": 1 if socket is not bob else 2})[
                    "type"
                ]
                == "ack"
            )
        for table, socket in sockets.items():  # at once: none waits for an answer
            socket.socket.send_json(
                {"type": "wager", "kind": "blackjack", "amount": 1500, "id": f"w-{table}"}
            )
        bob.socket.send_json({"type": "wager", "kind": "blackjack", "amount": 1500, "id": "w-bob"})
        answers = [
            socket.until(
                lambda m, t=table: m.get("id") == f"w-{t}" and m["type"] in ("ack", "error")
            )
            for table, socket in sockets.items()
        ]
        bobs = bob.until(lambda m: m.get("id") == "w-bob" and m["type"] in ("ack", "error"))
    assert sorted(a["type"] for a in answers) == ["ack", "error", "error"]
    for refused in (a for a in answers if a["type"] == "error"):
        assert (refused["code"], refused["rule"]) == ("limit", LIMIT_RULE)
        assert "loss limit of $20.00" in refused["message"]
    assert bobs["type"] == "ack"  # another player's wager, in the same step and commit
    me = client.get("/api/me", headers=auth("ann")).json()
    assert me["balance"] == CREDIT - 1500
    today = client.get("/api/floor/players/ann/limits", headers=auth("ann")).json()["today"]
    assert (today["wagered"], today["loss"]) == (1500, 1500)
    assert client.get("/api/me", headers=auth("bob")).json()["balance"] == CREDIT - 1500


# -- the store: concurrent writers of one player's wagers ------------------------------------


def _table(table: str) -> Actor:
    return Actor(Role.TABLE, table)


def wager(table: str, number: int, player: str, amount: int, *, at_us: int | None = None) -> Step:
    """A step of ``table`` opening its round ``number`` with ``player``'s wager."""
    return Step(
        f"{table}-{number:06d}",
        events=[EventIn("wager", {"player": player, "amount": amount}, actor=player)],
        transfers=[Transfer(player, f"escrow:{table}", amount, "wager", 0, "blackjack")],
        meters=[(table, "blackjack", amount, 0)],
        open_round=(table, number, "hybrid", "round"),
        at_us=at_us,
        actor=_table(table),
    )


def win(table: str, number: int, player: str, amount: int) -> Step:
    """A step of ``table`` opening its round ``number`` that pays ``player`` winnings."""
    return Step(
        f"{table}-{number:06d}",
        events=[EventIn("settle", {"player": player, "amount": amount})],
        transfers=[Transfer(f"house:{table}", player, amount, "winnings", 0, "blackjack win")],
        meters=[(table, "blackjack", 0, -amount)],
        open_round=(table, number, "hybrid", "round"),
        actor=_table(table),
    )


async def _floor(store: Store, players: tuple[str, ...] = ("ann", "bob")) -> None:
    for table in TABLES:
        await store.save_table(table, "hybrid", {}, {})
    for player in players:
        await store.ensure_account(player, "player")
        await store.fund(player, CREDIT, actor=CASHIER)


async def _wagers_of(store: Store, player: str) -> list[int]:
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            select(LEDGER.c.amount)
            .where((LEDGER.c.from_account == player) & (LEDGER.c.kind == "wager"))
            .order_by(LEDGER.c.id)
        )
        return [int(row[0]) for row in rows]


def test_player_protection_three_wagers_at_once_at_three_tables_one_commit_one_lands(
    backend: Backend,
) -> None:
    """The group commit writes the three tables' steps in one transaction: the check counts
    the transaction's own postings, refuses the steps that pass the limit, and writes the rest
    (bob's wager among them)."""

    async def body(store: Store) -> None:
        store.commit_window = 0.02  # the four steps in one transaction
        await _floor(store)
        await set_limits(store, "ann", {"loss_limit": 2000}, by="ann", at_us=time.time_ns() // 1000)
        results = await asyncio.gather(
            *(store.commit(wager(t, 1, "ann", 1500)) for t in TABLES),
            store.commit(wager("B1", 2, "bob", 1500)),
            return_exceptions=True,
        )
        refused = [r for r in results[:3] if isinstance(r, BaseException)]
        assert len(refused) == 2, results
        assert all(isinstance(r, LimitRefusedError) for r in refused), refused
        assert {(r.code, r.rule) for r in refused if isinstance(r, LimitRefusedError)} == {
            ("limit", LIMIT_RULE)
        }
        assert not isinstance(results[3], BaseException)
        assert await _wagers_of(store, "ann") == [1500]
        assert await _wagers_of(store, "bob") == [1500]
        assert await store.balance("ann") == CREDIT - 1500
        refused_rounds = {r.round_id for r in refused if isinstance(r, LimitRefusedError)}
        for round_id in refused_rounds:  # nothing written for a refused step
            assert await store.round(round_id) is None
        assert await store.ledger_check() == []

    backend.run(body)


def test_player_protection_self_exclusion_and_time_limit_hold_in_the_write(
    backend: Backend,
) -> None:
    """A step written straight to the store (no server's guard before it) is refused by the
    write transaction: a self-excluded player's wager and tip, a wager past the time limit."""

    async def body(store: Store) -> None:
        await _floor(store, ("ann", "bob", "cat"))
        now = time.time_ns() // 1000
        await self_exclude(store, "bob", now + 3600 * 10**6, by="bob", at_us=now)
        with pytest.raises(LimitRefusedError) as excluded:
            await store.commit(wager("A1", 1, "bob", 100, at_us=now + 1))
        assert (excluded.value.code, excluded.value.rule) == ("excluded", LIMIT_RULE)
        await store.ensure_account("tips:A1", "tips")
        with pytest.raises(LimitRefusedError):
            await store.commit_logged(
                "acct:EWT-A1",
                EventIn("tip", {"account": "bob", "amount": 100}, actor="bob", terminal="EWT-A1"),
                [Transfer("bob", "tips:A1", 100, "tip")],
                Actor(Role.PLAYER, "bob", "EWT-A1", "A1"),
                owner="EWT-A1",
            )
        assert await store.balance("bob") == CREDIT
        await set_limits(store, "cat", {"time_limit_s": 60}, by="cat", at_us=now)
        await store.commit(wager("A1", 2, "cat", 100, at_us=now))
        await store.commit(wager("B1", 1, "cat", 100, at_us=now + 59 * 10**6))
        with pytest.raises(LimitRefusedError, match="time limit of 60 seconds"):
            await store.commit(wager("C1", 1, "cat", 100, at_us=now + 60 * 10**6))
        assert await _wagers_of(store, "cat") == [100, 100]

    backend.run(body)


def test_player_protection_two_writers_racing_for_one_player_on_postgresql(
    postgres: Backend,
) -> None:
    """Two store instances on one database — two processes' writers, each with its own
    connections, one writing a batch in one statement and the other in statements — race to
    write one player's wagers at three tables: the per-player lock lets exactly as many land
    as the wager limit allows."""

    async def main() -> None:
        first = await postgres.open()
        second = await Store.open(postgres.url, schema=postgres.schema, migrate=False)
        try:
            await _floor(first)
            await set_limits(
                first, "ann", {"wager_limit": 10_000}, by="ann", at_us=time.time_ns() // 1000
            )
            second.write_at_once = False
            for store in (first, second):
                store.commit_window = 0.005
            results: list[Any] = []
            for turn in range(8):  # eight turns of five wagers sent at once
                results += await asyncio.gather(
                    *(
                        (first if n % 2 else second).commit(wager(TABLES[n % 3], n, "ann", 700))
                        for n in range(5 * turn + 1, 5 * turn + 6)
                    ),
                    return_exceptions=True,
                )
            landed = [r for r in results if not isinstance(r, BaseException)]
            refused = [r for r in results if isinstance(r, BaseException)]
            assert all(isinstance(r, LimitRefusedError) for r in refused), refused[:3]
            assert len(landed) == 10_000 // 700
            assert sum(await _wagers_of(first, "ann")) == 700 * (10_000 // 700)
            assert await first.ledger_check() == []
            assert first.batches_at_once > 0  # the one-statement write checks and writes
        finally:
            await second.close()
            await first.close()

    asyncio.run(main())


# -- any interleaving: the player's usage never passes his limits ----------------------------

ROUNDS = itertools.count(1)
"""Round numbers, unique over the examples of a test."""
MOVES = st.lists(
    st.tuples(st.sampled_from(("wager", "win", "tip")), st.integers(1, 900), st.integers(0, 2)),
    min_size=1,
    max_size=14,
)


@pytest.mark.parametrize("at_once", [True, False], ids=["one-statement", "statements"])
def test_player_protection_no_interleaving_of_wagers_tips_and_wins_passes_a_limit(
    backend: Backend, at_once: bool
) -> None:
    """Hypothesis: a player's wagers, tips and wins at three tables, sent in random groups at
    once (each group one gather, so one or several transactions), against a random loss and
    wager limit: replayed in the order they were written, no wager or tip ever brought the
    day's losses or wagers past a limit; and when all of them fit, none was refused."""
    if not at_once and backend.name == "sqlite":
        pytest.skip("SQLite has one write path")

    async def main(
        store: Store, moves: list[tuple[str, int, int]], split: int, limits: Any
    ) -> None:
        player = f"p{time.time_ns()}"
        await store.ensure_account(player, "player")
        await store.fund(player, 10**7, actor=CASHIER)
        now = time.time_ns() // 1000
        await set_limits(store, player, limits, by=player, at_us=now)

        def make(kind: str, amount: int, table_index: int) -> Any:
            table = TABLES[table_index]
            if kind == "wager":
                return store.commit(wager(table, next(ROUNDS), player, amount))
            if kind == "win":
                return store.commit(win(table, next(ROUNDS), player, amount))
            return store.commit_logged(
                f"acct:EWT-{table}",
                EventIn("tip", {"account": player, "amount": amount}, actor=player),
                [Transfer(player, f"tips:{table}", amount, "tip")],
                Actor(Role.PLAYER, player, f"EWT-{table}", table),
                owner=f"EWT-{table}",
            )

        outcomes: list[Any] = []
        for start in range(0, len(moves), split):
            group = moves[start : start + split]
            outcomes += await asyncio.gather(*(make(*m) for m in group), return_exceptions=True)
        for outcome in outcomes:
            assert not isinstance(outcome, BaseException) or isinstance(
                outcome, LimitRefusedError
            ), outcome
        async with store.engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(LEDGER.c.kind, LEDGER.c.amount)
                    .where((LEDGER.c.from_account == player) | (LEDGER.c.to_account == player))
                    .order_by(LEDGER.c.id)
                )
            ).all()
        used = Usage()
        for kind, amount in rows:
            used.add(kind, int(amount), now)
            if kind in ("wager", "tip"):
                assert limits.get("loss_limit") is None or used.loss <= limits["loss_limit"]
                assert limits.get("wager_limit") is None or used.wagered <= limits["wager_limit"]
        debits = sum(a for k, a, _ in moves if k in ("wager", "tip"))
        wagers = sum(a for k, a, _ in moves if k == "wager")
        if debits <= limits.get("loss_limit", debits) and wagers <= limits.get(
            "wager_limit", wagers
        ):
            assert all(not isinstance(o, BaseException) for o in outcomes)

    async def setup() -> None:
        store = await backend.open()
        try:
            await _floor(store, ())
            for table in TABLES:
                await store.ensure_account(f"tips:{table}", "tips")
        finally:
            await store.close()

    asyncio.run(setup())

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        moves=MOVES,
        split=st.integers(1, 6),
        limits=st.fixed_dictionaries(
            {"loss_limit": st.integers(1, 3000)}, optional={"wager_limit": st.integers(1, 4000)}
        ),
    )
    def check(moves: list[tuple[str, int, int]], split: int, limits: dict[str, int]) -> None:
        async def run() -> None:
            store = await Store.open(backend.url, schema=backend.schema, migrate=False)
            store.write_at_once = at_once
            store.commit_window = 0.002
            try:
                await main(store, moves, split, limits)
            finally:
                await store.close()

        asyncio.run(run())

    check()


@given(at_us=st.integers(10**15, 4 * 10**15), hour=st.integers(0, 23))
def test_player_protection_the_write_checks_the_gaming_day_the_reports_use(
    at_us: int, hour: int
) -> None:
    """The write transaction's gaming day (integer arithmetic, also in migration 0007's SQL)
    starts where the floor's reports start it."""
    assert day_start(at_us, hour) == day_bounds(gaming_day_of(at_us, hour), hour)[0]
    assert DEFAULT_SETTINGS["gaming_day_start_hour"] == DEFAULT_START_HOUR
