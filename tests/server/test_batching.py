"""Terminal requests that arrive together are applied in one batch and committed in one
transaction; each keeps its own answer, its own events and its own ledger entries."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.compose import make_floor
from tablejack.server.floor.floor import Floor
from tablejack.server.table import RefusedError, Table, TableConfig
from tablejack.store import Store


async def _floor(
    tmp_path: Path, *, countdown: int = 30, step_window: float = 0.0, step_wait: float = 0.0
) -> Floor:
    """A version A table A1 dealt by the dealer from a fixed card order; ann and bob with
    $1,000.00, cat with $15.00."""
    store = await Store.open(str(tmp_path / "batch.db"))
    floor = make_floor(store, step_window=step_window, step_wait=step_wait)
    for player, credit in (("ann", 100_000), ("bob", 100_000), ("cat", 1500)):
        await floor.add_player(player, credit)
    config = TableConfig(
        "A1",
        HybridRules(countdown_seconds=countdown),
        automated=False,
        require_procedures=False,
        cards="10S 9H 6D 5C 9C 10H 4S 8D",
    )
    await floor.add_table(config)
    return floor


async def _ann_deciding(floor: Floor) -> Table:
    """Table A1 with a round open, ann at position 1 with a $10.00 wager, wagering closed by
    the dealer: her decision is awaited."""
    table = floor.tables["A1"]
    await table.open_round("dana")
    table.select_position("ann", 1)
    await table.wager("ann", "EWT-1", "blackjack", 1000, "a1")
    await table.dealer_command("close-wagering", "dana")
    return table


async def _seated(
    tmp_path: Path,
    name: str,
    players: tuple[str, ...],
    *,
    broadcast_interval: float = 0.0,
    step_window: float = 0.0,
) -> tuple[Store, Floor, Table]:
    """A floor on a fresh SQLite file with a version A table A1 whose round is open, and
    ``players`` funded, each at a position of his own (1, 2, 3)."""
    store = await Store.open(str(tmp_path / f"{name}.db"))
    floor = make_floor(store, broadcast_interval=broadcast_interval, step_window=step_window)
    for player in players:
        await floor.add_player(player, 100_000)
    config = TableConfig("A1", HybridRules(countdown_seconds=30), require_procedures=False)
    await floor.add_table(config)
    table = floor.tables["A1"]
    await table.open_round("dana")
    for position, player in enumerate(players, start=1):
        table.select_position(player, position)
    return store, floor, table


def test_a_batch_commits_each_request_with_its_own_events_and_ledger_rows(
    tmp_path: Path,
) -> None:
    async def run() -> tuple[list[Any], Any, Any, Any]:
        floor = await _floor(tmp_path)
        try:
            table = floor.tables["A1"]
            await table.open_round("dana")
            for player, position in (("ann", 1), ("bob", 2), ("cat", 3)):
                table.select_position(player, position)
            commits = 0
            commit = floor.store.commit

            async def counted(step: Any) -> Any:
                nonlocal commits
                commits += 1
                return await commit(step)

            floor.store.commit = counted  # type: ignore[method-assign]
            replies = await asyncio.gather(
                table.wager("ann", "EWT-1", "blackjack", 1000, "a1"),
                table.wager("bob", "EWT-2", "blackjack", 999, "b1"),  # not a whole dollar
                table.wager("bob", "EWT-2", "blackjack", 2000, "b2"),
                table.wager("ann", "EWT-1", "blackjack", 1000, "a1"),  # the same id again
                return_exceptions=True,
            )
            floor.store.commit = commit  # type: ignore[method-assign]
            events = await floor.store.events("A1-000001")
            ledger = await floor.store.ledger_of_round("A1-000001")
            return replies, commits, events, ledger
        finally:
            await floor.stop()
            await floor.store.close()

    replies, commits, events, ledger = asyncio.run(run())
    ann, bob_refused, bob, ann_again = replies
    assert commits == 1  # one transaction for the whole batch
    assert ann == {"ok": True, "round_id": "A1-000001", "seq": 2}
    assert isinstance(bob_refused, RefusedError) and bob_refused.rule.startswith("PA 633")
    assert bob == {"ok": True, "round_id": "A1-000001", "seq": 3}
    assert ann_again == {**ann, "repeat": True}
    assert [(e.seq, e.kind, e.actor) for e in events] == [
        (1, "open", "dana"),
        (2, "wager", "ann"),
        (3, "wager", "bob"),
    ]
    assert [(e["seq"], e["from_account"], e["amount"]) for e in ledger] == [
        (2, "ann", 1000),
        (3, "bob", 2000),
    ]


def test_a_request_the_balance_cannot_cover_is_refused_alone_and_the_others_stand(
    tmp_path: Path,
) -> None:
    async def run() -> tuple[list[Any], dict[str, int], list[str]]:
        floor = await _floor(tmp_path)
        try:
            table = floor.tables["A1"]
            await table.open_round("dana")
            for player, position in (("ann", 1), ("bob", 2), ("cat", 3)):
                table.select_position(player, position)
            replies = await asyncio.gather(
                table.wager("ann", "EWT-1", "blackjack", 1000, "a1"),
                table.wager("cat", "EWT-3", "blackjack", 2000, "c1"),  # cat holds $15
                table.wager("bob", "EWT-2", "blackjack", 1000, "b1"),
                return_exceptions=True,
            )
            balances = await floor.store.accounts("player")
            kinds = [e.kind for e in await floor.store.events("A1-000001")]
            assert await floor.store.ledger_check() == []
            return replies, balances, kinds
        finally:
            await floor.stop()
            await floor.store.close()

    replies, balances, kinds = asyncio.run(run())
    ann, cat, bob = replies
    assert ann["ok"] and bob["ok"]
    assert isinstance(cat, RefusedError)
    assert (cat.code, cat.rule) == ("balance", "account balance")
    assert balances == {"ann": 99_000, "bob": 99_000, "cat": 1500}
    assert kinds == ["open", "wager", "wager"]


@pytest.mark.parametrize("verb", ["hit", "stand"])
def test_a_decision_batched_with_a_refused_one_is_applied_once(tmp_path: Path, verb: str) -> None:
    async def run() -> tuple[Any, Any, list[str]]:
        floor = await _floor(tmp_path)
        try:
            table = await _ann_deciding(floor)
            first, second = await asyncio.gather(
                table.action("ann", "EWT-1", verb, None, None, "d1"),
                table.action("bob", "EWT-2", verb, None, None, "d2"),  # bob has no hand
                return_exceptions=True,
            )
            texts = [
                e.payload["text"]
                for e in await floor.store.events("A1-000001")
                if e.kind == "command"
            ]
            return first, second, texts
        finally:
            await floor.stop()
            await floor.store.close()

    first, second, texts = asyncio.run(run())
    assert first["ok"]
    assert isinstance(second, RefusedError) and second.rule == "PA 633c.5(l)"
    assert texts == ["dealer close-wagering", f"ann {verb}"]


class _Watcher:
    """A supervisor's socket watching a table: when each update arrived (the loop's clock)."""

    role = "supervisor"
    subject = "sam"
    terminal = "console"

    def __init__(self) -> None:
        self.last_state: tuple[Any, ...] | None = None
        self.updates: list[float] = []

    def push(self, message: dict[str, Any] | str | None) -> None:
        self.updates.append(asyncio.get_running_loop().time())


def _watch(table: Table, store: Store) -> tuple[_Watcher, int, float]:
    """A watcher on ``table``, the store's transactions so far and the loop's clock now."""
    watcher = _Watcher()
    table.subscribers.add(watcher)
    return watcher, store.transactions, asyncio.get_running_loop().time()


@pytest.mark.parametrize("interval", [0.0, 0.3])
def test_updates_are_at_least_the_broadcast_interval_apart(tmp_path: Path, interval: float) -> None:
    """``--batch-ms``: a change after a quiet spell is sent at once; changes within the
    interval after an update are gathered into one update at its end. Without an interval
    every batch is sent at once (three wagers 50 ms apart: three updates)."""

    async def run() -> list[float]:
        store, floor, table = await _seated(
            tmp_path, "interval", ("ann", "bob", "cat"), broadcast_interval=interval
        )
        try:
            await asyncio.sleep(2 * interval + 0.05)  # quiet: the updates of the set-up went
            watcher = _Watcher()
            table.subscribers.add(watcher)
            loop = asyncio.get_running_loop()
            started = loop.time()
            for n, player in enumerate(("ann", "bob", "cat")):
                await table.wager(player, f"EWT-{n}", "blackjack", 1000, f"w{n}")
                await asyncio.sleep(0.05)
            await asyncio.sleep(interval + 0.1)
            return [at - started for at in watcher.updates]
        finally:
            await floor.stop()
            await store.close()

    updates = asyncio.run(run())
    # "At once": within 0.15 s of the first wager (its commit, on a machine busy with the rest
    # of the suite), where a gathered update would come 0.3 s after the last one.
    if interval == 0:
        assert len(updates) == 3
        assert updates[0] < 0.15
    else:
        assert len(updates) == 2  # the first wager's at once, the other two together
        assert updates[0] < 0.15
        assert updates[1] - updates[0] >= interval - 0.01


@pytest.mark.parametrize("window", [0.0, 0.3])
def test_requests_within_the_step_window_are_applied_as_one_step(
    tmp_path: Path, window: float
) -> None:
    """``--step-ms``: the wagers of ann, bob and cat, 40 ms apart, all within a 300 ms window
    that ann's opens: one batch — one transaction, one update — each wager with its own answer
    and event, in the order they came. Without a window each is a step of its own (each sent
    once the one before is answered: requests that come while a commit is under way are its
    next batch, window or not, and on a loaded machine a commit can take the 40 ms)."""

    async def run() -> tuple[list[Any], int, list[float], list[tuple[int, str]], float]:
        store, floor, table = await _seated(
            tmp_path, "window", ("ann", "bob", "cat"), step_window=window
        )
        try:
            await asyncio.sleep(0.05)  # the set-up's update went
            watcher, before, started = _watch(table, store)
            loop = asyncio.get_running_loop()

            async def wager(n: int, player: str) -> Any:
                await asyncio.sleep(0.04 * n)
                return await table.wager(player, f"EWT-{n}", "blackjack", 1000 * (n + 1), f"w{n}")

            players = list(enumerate(("ann", "bob", "cat")))
            if window:
                replies = await asyncio.gather(*(wager(n, player) for n, player in players))
            else:
                replies = [await wager(min(n, 1), player) for n, player in players]
            answered = loop.time() - started
            await asyncio.sleep(0.05)
            events = [(e.seq, e.actor) for e in await store.events("A1-000001")]
            return replies, store.transactions - before, watcher.updates, events, answered
        finally:
            await floor.stop()
            await store.close()

    replies, transactions, updates, events, answered = asyncio.run(run())
    assert [reply["seq"] for reply in replies] == [2, 3, 4]
    assert events == [(1, "dana"), (2, "ann"), (3, "bob"), (4, "cat")]
    if window == 0:
        assert (transactions, len(updates)) == (3, 3)
    else:
        assert (transactions, len(updates)) == (1, 1)
        assert answered >= window  # ann's wager waited for the window, and no longer than
        assert answered < window + 2.0  # the window and a commit


def test_a_request_after_the_step_window_starts_the_next_step(tmp_path: Path) -> None:
    """A wager 150 ms after a 50 ms window closed is a step of its own: the window gathers
    the requests that follow the first, it does not hold a table's requests back in turns."""

    async def run() -> tuple[int, list[float]]:
        store, floor, table = await _seated(tmp_path, "after", ("ann", "bob"), step_window=0.05)
        try:
            await asyncio.sleep(0.05)
            watcher = _Watcher()
            table.subscribers.add(watcher)
            before = store.transactions
            await table.wager("ann", "EWT-1", "blackjack", 1000, "a1")
            await asyncio.sleep(0.15)
            await table.wager("bob", "EWT-2", "blackjack", 1000, "b1")
            await asyncio.sleep(0.05)
            return store.transactions - before, watcher.updates
        finally:
            await floor.stop()
            await store.close()

    transactions, updates = asyncio.run(run())
    assert transactions == 2
    assert len(updates) == 2


def test_633c5_p2_a_decision_waiting_in_the_step_window_counts_before_the_clock(
    tmp_path: Path,
) -> None:
    """633c.5(p)(2): a player who takes no action by the conclusion of the countdown clock is
    deemed to stand. ann's hit reaches the table 0.7 s into a 1 s countdown, while the step
    still gathers: it waits for bob and cat, who say nothing (a step wait of 1.5 s here, to
    make the race certain). The clock, running out, applies the waiting hit first — answered
    when the clock ran out, not refused after it as the clock's stand would have it."""

    async def run() -> tuple[Any, float, list[tuple[str, str]]]:
        floor = await _floor(tmp_path, countdown=1, step_window=1.5, step_wait=1.5)
        store = floor.store
        try:
            table = await _all_deciding(floor)
            assert table.deadline is not None  # the decision window's clock runs
            await asyncio.sleep(0.7)
            loop = asyncio.get_running_loop()
            sent = loop.time()
            reply = await table.action("ann", "EWT-1", "hit", None, None, "d1")
            waited = loop.time() - sent
            commands = [
                (e.actor, e.payload["text"])
                for e in await store.events("A1-000001")
                if e.kind == "command"
            ]
            return reply, waited, commands
        finally:
            await floor.stop()
            await store.close()

    reply, waited, commands = asyncio.run(run())
    assert reply["ok"]
    assert waited < 1.0  # applied when the clock ran out (0.3 s), not at the window's end
    assert commands[:2] == [("dana", "dealer close-wagering"), ("ann", "ann hit")]
    assert commands[2][0] == "clock"  # then the clock's own command for bob and cat


async def _all_deciding(floor: Floor) -> Table:
    """Table A1 with a round open, ann, bob and cat at positions 1, 2 and 3 with a $10.00
    wager each, wagering closed by the dealer: all three decisions are awaited."""
    table = floor.tables["A1"]
    await table.open_round("dana")
    for position, player in enumerate(("ann", "bob", "cat"), start=1):
        table.select_position(player, position)
        await table.wager(player, f"EWT-{position}", "blackjack", 1000, f"{player}-w")
    await table.dealer_command("close-wagering", "dana")
    return table


def test_a_decision_round_is_one_step_once_every_awaited_player_has_answered(
    tmp_path: Path,
) -> None:
    """``--step-wait-ms``: in a decision window the table knows whom it waits for. ann, bob
    and cat answer 100 ms apart, each after a 50 ms step window would have closed: one step
    all the same — one transaction, one update — applied as soon as cat, the last, answered,
    not when the 2 s wait ran out."""

    async def run() -> tuple[list[Any], int, list[float], float]:
        floor = await _floor(tmp_path, step_window=0.05, step_wait=2.0)
        store = floor.store
        try:
            table = await _all_deciding(floor)
            assert floor.tables["A1"].adapter.awaited(table.round) == {"ann", "bob", "cat"}
            await asyncio.sleep(0.05)
            watcher, before, started = _watch(table, store)
            loop = asyncio.get_running_loop()

            async def stand(n: int, player: str) -> Any:
                await asyncio.sleep(0.1 * n)
                return await table.action(player, f"EWT-{n + 1}", "stand", None, None, f"d{n}")

            replies = await asyncio.gather(
                *(stand(n, player) for n, player in enumerate(("ann", "bob", "cat")))
            )
            answered = loop.time() - started
            await asyncio.sleep(0.05)
            return replies, store.transactions - before, watcher.updates, answered
        finally:
            await floor.stop()
            await store.close()

    replies, transactions, updates, answered = asyncio.run(run())
    assert all(reply["ok"] for reply in replies)
    assert len({reply["seq"] for reply in replies}) == 3
    assert (transactions, len(updates)) == (1, 1)
    assert 0.2 <= answered < 1.5  # cat's answer at 0.2 s closed the step, not the 2 s wait


def test_a_decision_round_waits_no_longer_than_the_step_wait_for_a_silent_player(
    tmp_path: Path,
) -> None:
    """ann and bob stand at once; cat says nothing. Their step waits for cat no longer than
    the 300 ms step wait, then goes without him (cat's decision stays awaited)."""

    async def run() -> tuple[list[Any], float, frozenset[str]]:
        floor = await _floor(tmp_path, step_window=0.05, step_wait=0.3)
        store = floor.store
        try:
            table = await _all_deciding(floor)
            loop = asyncio.get_running_loop()
            started = loop.time()
            replies = await asyncio.gather(
                table.action("ann", "EWT-1", "stand", None, None, "d1"),
                table.action("bob", "EWT-2", "stand", None, None, "d2"),
            )
            waited = loop.time() - started
            return replies, waited, table.adapter.awaited(table.round)
        finally:
            await floor.stop()
            await store.close()

    replies, waited, awaited = asyncio.run(run())
    assert all(reply["ok"] for reply in replies)
    assert 0.3 <= waited < 2.0
    assert awaited == {"cat"}


def test_without_a_decision_window_the_step_waits_the_plain_step_window(
    tmp_path: Path,
) -> None:
    """Wagers: who will wager is unknown, so the step wait does not apply — ann's lone wager
    goes when the 100 ms step window closes, not after the 2 s step wait."""

    async def run() -> tuple[Any, float, frozenset[str]]:
        floor = await _floor(tmp_path, step_window=0.1, step_wait=2.0)
        store = floor.store
        try:
            table = floor.tables["A1"]
            await table.open_round("dana")
            table.select_position("ann", 1)
            awaited = table.adapter.awaited(table.round)
            loop = asyncio.get_running_loop()
            started = loop.time()
            reply = await table.wager("ann", "EWT-1", "blackjack", 1000, "a1")
            return reply, loop.time() - started, awaited
        finally:
            await floor.stop()
            await store.close()

    reply, waited, awaited = asyncio.run(run())
    assert reply["ok"]
    assert awaited == frozenset()
    assert 0.1 <= waited < 1.5
