"""What a release reads of a golden log (:mod:`tests.golden.record` writes it down once; the
test reads it again with the release under test and compares): every round's recall and its
replay through the engine, the verify-log report, the balances and the meters."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablejack.core.notation import to_mapping
from tablejack.games import export, replay
from tablejack.server.duties.recall import recall
from tablejack.server.table import replay_round
from tablejack.server.table.games import adapter_for
from tablejack.server.visibility import Viewer
from tablejack.store import Store
from tablejack.store.keys import load_public_key
from tablejack.store.verify import verify

__all__ = ["SUPERVISOR", "plain", "readings", "replayed"]

SUPERVISOR = Viewer("supervisor", "sam")
"""Who recalls the golden rounds: the floor's supervisor (every card, every player)."""


def plain(value: Any) -> Any:
    """``value`` as the JSON file holds it (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(value, default=str))


async def replayed(store: Store, round_id: str) -> dict[str, Any]:
    """The round rebuilt from its events by the engine (the server's replay, as crash recovery
    and recall do): its phase, settlements, transcript and net; for a complete round, its
    notation and the settlements of that notation replayed on its own."""
    row = await store.round(round_id)
    assert row is not None, round_id
    round_ = replay_round(await store.events(round_id), adapter_for(row["game"]))
    reading: dict[str, Any] = {
        "game": round_.game,
        "phase": str(round_.phase),
        "complete": round_.is_complete,
        "wagers": [
            [w.id, w.seat, w.player, str(w.kind), w.amount, w.hand, w.spot] for w in round_.wagers
        ],
        "settlements": [s.to_json() for s in round_.settlements],
        "house_net": round_.house_net() if round_.is_complete else None,
    }
    if round_.is_complete:
        history = export(round_, round_id=round_id)
        again = replay(history)
        reading["notation"] = to_mapping(history)
        reading["notation_settlements"] = [s.to_json() for s in again.settlements]
    return dict(plain(reading))


async def readings(
    database: Path, checkpoint_file: Path, public_key: Path, rounds: Sequence[str]
) -> dict[str, Any]:
    """Everything read of the golden log at ``database`` (opened, so migrated to this
    release's head), verified with ``public_key`` against ``checkpoint_file``."""
    store = await Store.open(str(database))
    try:
        report = await verify(
            store,
            public_keys=[load_public_key(public_key)],
            checkpoint_file=checkpoint_file,
            strict=True,
        )
        recalled = {}
        for round_id in rounds:
            recalled[round_id] = {
                "recall": await recall(store, round_id, SUPERVISOR),
                "replay": await replayed(store, round_id),
            }
        return dict(
            plain(
                {
                    "rounds": list(rounds),
                    "recalled": recalled,
                    "verify": report.to_json(),
                    "balances": await store.accounts(),
                    "meters": await store.meters(),
                }
            )
        )
    finally:
        await store.close()
