"""Accounting for every cent of a floor's log: each round replayed from its events against the
ledger rows it wrote (:func:`account_for_rounds`), for the tests that crash, fail over or load a
floor and then prove that nothing was paid twice, lost or left in escrow."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from tablejack.server.table import replay_round
from tablejack.server.table.games import adapter_for
from tablejack.store import Store

__all__ = ["account_for_rounds"]


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
            if not wager.amount:  # taken back before the first card (633c.5(k)): refunded
                assert held[wager.id] == 0, (row["id"], wager)
                assert paid[wager.id] == 0, (row["id"], wager)
            elif wager.id in settled:
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
