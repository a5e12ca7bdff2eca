"""Each game names the players its open decision window waits for (``Adapter.awaited``): the
players whose terminals show ``awaiting_decision``. A table's step gathers their answers into
one step (``--step-wait-ms``, docs/server.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.compose import make_floor
from tablejack.server.table import Table, TableConfig
from tablejack.store import Store

TERMINALS = {"ann": "EWT-1", "bob": "EWT-2"}
"""Each player's terminal."""


async def _dealt(tmp_path: Path, rules: Any, cards: str) -> tuple[Store, Table]:
    """A table on a fresh SQLite file whose round is dealt from ``cards``: ann at position 1
    and bob at 2 (both at the one position of version B), $10.00 each ($10.00 on each of two
    spots at multi-action), wagering closed by the dealer."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = await Store.open(str(tmp_path / "awaited.db"))
    floor = make_floor(store)
    for player in ("ann", "bob"):
        await floor.add_player(player, 100_000)
    config = TableConfig("X1", rules, automated=False, require_procedures=False, cards=cards)
    await floor.add_table(config)
    table = floor.tables["X1"]
    await table.open_round("dana")
    positions = table.adapter.positions(rules)
    for terminal, player in ((1, "ann"), (2, "bob")):
        table.select_position(player, min(terminal, positions))
        multi = isinstance(rules, MultiActionRules)
        spots = [1000, 1000, 0] if multi else None
        amount = 2000 if multi else 1000
        await table.wager(player, f"EWT-{terminal}", "blackjack", amount, f"{player}-w", spots)
    await table.dealer_command("close-wagering", "dana")
    return store, table


def _awaiting_on_terminals(table: Table) -> set[str]:
    """The players whose own view says their decision is awaited."""
    return {
        player
        for player in ("ann", "bob")
        if (table.player_state(player, TERMINALS[player])["view"] or {})
        .get("you", {})
        .get("awaiting_decision")
    }


def _steps(tmp_path: Path, rules: Any, cards: str, stands: list[str]) -> list[frozenset[str]]:
    """The awaited players after the deal and after each of ``stands``'s stands."""

    async def run() -> list[frozenset[str]]:
        store, table = await _dealt(tmp_path, rules, cards)
        try:
            seen = [table.adapter.awaited(table.round)]
            assert seen[0] == _awaiting_on_terminals(table)
            for n, player in enumerate(stands):
                await table.action(player, TERMINALS[player], "stand", None, None, f"s{n}")
                seen.append(table.adapter.awaited(table.round))
            return seen
        finally:
            await table.floor.stop()
            await store.close()

    return asyncio.run(run())


def test_633c5_p_version_a_waits_for_every_player_at_once(tmp_path: Path) -> None:
    """Version A: one decision window for every position (633c.5(p)); ann's stand leaves bob."""
    seen = _steps(tmp_path, HybridRules(countdown_seconds=30), "10S 9H 6D 5C 9C 10H", ["ann"])
    assert seen == [{"ann", "bob"}, {"bob"}]


def test_633c5_y_version_b_waits_for_every_player_on_the_shared_start(tmp_path: Path) -> None:
    rules = GAMES["hybrid-shared"].rules_class(
        royal_match=False, bet_the_set=False, kings_bounty=False, countdown_seconds=30
    )
    seen = _steps(tmp_path, rules, "10S 9D 6H 5C 7D 4S 2C", ["ann"])
    assert seen == [{"ann", "bob"}, {"bob"}]


def test_633a_seated_games_wait_for_the_seat_in_turn(tmp_path: Path) -> None:
    """Chapter 633a and multi-action: one seat in turn; the window moves on with each stand,
    and none is awaited once the dealer plays."""
    classic = _steps(
        tmp_path / "classic", ClassicRules(), "10S 9H 6D 10C 8H 7D 10D", ["ann", "bob"]
    )
    multi = _steps(
        tmp_path / "multi",
        MultiActionRules(),
        "10S 9H 6D 10C 8H 10H 8D 10D 5H KD 2C",
        ["ann", "bob"],
    )
    assert classic == [{"ann"}, {"bob"}, frozenset()]
    assert multi == [{"ann"}, {"bob"}, frozenset()]
