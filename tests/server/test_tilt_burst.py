"""PA 605a's ``connection_lost`` tilt when many terminals drop at once (a switch fails, the
floor's network blips): the floor writes the locks one after another in the order the sockets
closed, on one connection of the store, and reloads its guard and consoles once for each batch
— not once a tilt, which with thousands of sockets emptied the store's pool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.compose import compose
from tablejack.server.duties import tilts as tilts_module
from tablejack.server.duties.tilts import at_stake
from tablejack.server.table import TableConfig
from tablejack.store import Store, protections
from tablejack.store.fencing import Fence
from tablejack.store.settings import set_floor_setting

PLAYERS = (("ann", "EWT-1", 1), ("bob", "EWT-2", 2), ("cat", "EWT-3", 3))


def test_605a_tilt_a_burst_of_lost_connections_is_written_in_order_and_reloaded_once(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        store = await Store.open(str(tmp_path / "burst.db"))
        try:
            composed = compose(store)
            floor, tilts = composed.floor, composed.duties.tilts
            reloads: list[dict[str, list[Any]]] = []

            async def heard() -> None:  # a listener after the duties': the locks it sees
                reloads.append(await protections.open_locks(store))

            floor.lock_listeners.append(heard)
            for player, _, _ in PLAYERS:
                await floor.add_player(player, 100_000)
            config = TableConfig(
                "A1",
                HybridRules(countdown_seconds=30),
                automated=False,
                require_procedures=False,
                cards="10S 9H 6D 5C 9C 10H 4S 8D",
            )
            await floor.add_table(config)
            table = floor.tables["A1"]
            await table.open_round("dana")
            for player, terminal, position in PLAYERS:
                table.select_position(player, position)
                await table.wager(player, terminal, "blackjack", 1000, f"w-{player}")
            await table.dealer_command("close-wagering", "dana")
            sockets = [
                SimpleNamespace(role="player", table="A1", terminal=terminal, subject=player)
                for player, terminal, _ in reversed(PLAYERS)  # cat's socket closes first
            ]
            stakes = [at_stake(floor, socket) for socket in sockets]  # type: ignore[arg-type]
            assert all(stake is not None and not stake["wagering"] for stake in stakes)
            for socket in sockets:  # all three close in one turn of the event loop
                tilts.schedule_connection_lost(socket)  # type: ignore[arg-type]
            await tilts.drain()
            order = ["EWT-3", "EWT-2", "EWT-1"]
            assert list(await protections.open_locks(store)) == order  # locked in turn
            assert len(reloads) == 1 and list(reloads[0]) == order  # one reload, all in it
            mirrored = [t["terminal"] for t in table.tilts if t["scope"] == "terminal"]
            assert sorted(mirrored) == sorted(order)  # the console shows each lock
            # a later burst while nothing is being written: its own batch, its own reload
            await set_floor_setting(store, "tilt_on_connection_loss", "always", by="olga")
            late = SimpleNamespace(role="player", table="A1", terminal="EWT-4", subject="ann")
            tilts.lost(late, {"table": "A1", "round_id": table.round_id, "wagering": False})  # type: ignore[arg-type]
            await tilts.drain()
            assert len(reloads) == 2 and list(reloads[1]) == [*order, "EWT-4"]
        finally:
            await store.close()

    asyncio.run(body())


def test_605a_tilt_a_refused_lock_leaves_the_rest_of_its_batch_written(tmp_path: Path) -> None:
    """A tilt the store refuses (its table's lease is no longer this process's: the fence is
    stale) is logged; the others of its batch are written and reloaded."""

    async def body() -> None:
        store = await Store.open(str(tmp_path / "refused.db"))
        try:
            composed = compose(store)
            floor, tilts = composed.floor, composed.duties.tilts
            for table_id in ("A1", "B1"):
                config = TableConfig(
                    table_id, HybridRules(), automated=False, require_procedures=False
                )
                await floor.add_table(config)
            floor.tables["B1"].fence = Fence("B1", 99)  # B1 was taken over meanwhile
            for terminal, table_id in (("EWT-1", "A1"), ("EWT-9", "B1"), ("EWT-2", "A1")):
                socket = SimpleNamespace(
                    role="player", table=table_id, terminal=terminal, subject="ann"
                )
                stake = {"table": table_id, "round_id": f"{table_id}-000001", "wagering": False}
                tilts.lost(socket, stake)  # type: ignore[arg-type]
            await tilts.drain()
            assert list(await protections.open_locks(store)) == ["EWT-1", "EWT-2"]
        finally:
            await store.close()

    asyncio.run(body())


def test_605a_tilt_a_long_burst_reloads_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a burst is written the guard reloads every ``RELOAD_SECONDS`` (here: at once), so
    a lock applies soon after its write, not after the last of the burst."""
    monkeypatch.setattr(tilts_module, "RELOAD_SECONDS", 0.0)

    async def body() -> None:
        store = await Store.open(str(tmp_path / "long.db"))
        try:
            composed = compose(store)
            floor, tilts = composed.floor, composed.duties.tilts
            seen: list[list[str]] = []

            async def heard() -> None:
                seen.append(list(await protections.open_locks(store)))

            floor.lock_listeners.append(heard)
            await floor.add_table(
                TableConfig("A1", HybridRules(), automated=False, require_procedures=False)
            )
            stake = {"table": "A1", "round_id": "A1-000001", "wagering": False}
            for terminal in ("EWT-1", "EWT-2", "EWT-3"):
                socket = SimpleNamespace(role="player", table="A1", terminal=terminal, subject="a")
                tilts.lost(socket, stake)  # type: ignore[arg-type]
            await tilts.drain()
            assert seen == [["EWT-1"], ["EWT-1", "EWT-2"], ["EWT-1", "EWT-2", "EWT-3"]]
        finally:
            await store.close()

    asyncio.run(body())
