"""Game recall: a round rebuilt from its log, with every card and when it was read, every
decision and the terminal that made it, and every settlement with the clause that decided it."""

from __future__ import annotations

from typing import Any

from tablejack.games import transcript
from tablejack.server.adapters import adapter_for
from tablejack.server.table import replay_round
from tablejack.store import Store
from tablejack.store.verify import verify_chains

__all__ = ["recall"]


async def recall(store: Store, round_id: str) -> dict[str, Any] | None:
    """The recall document of ``round_id`` (None if there is no such round)."""
    row = await store.round(round_id)
    if row is None or row["kind"] != "round":
        return None
    events = await store.events(round_id)
    round_ = replay_round(events, adapter_for(row["game"]))
    cards = [
        {
            "seq": e.seq,
            "code": e.payload["code"],
            "read_us": e.payload.get("read_us", e.at_us),
            "source": e.payload.get("source", ""),
            "by": e.actor,
        }
        for e in events
        if e.kind == "card"
    ]
    decisions = [
        {
            "seq": e.seq,
            "at_us": e.at_us,
            "kind": e.kind,
            "text": e.payload.get("text")
            or f"{e.payload['player']} {e.payload['kind']} {e.payload['amount']}",
            "actor": e.actor,
            "terminal": e.terminal,
        }
        for e in events
        if e.kind in ("wager", "command")
    ]
    problems = await verify_chains(store, [round_id])
    return {
        "round_id": round_id,
        "table_id": row["table_id"],
        "number": row["number"],
        "game": row["game"],
        "status": row["status"],
        "opened_us": row["opened_us"],
        "closed_us": row["closed_us"],
        "transcript": [] if round_ is None else transcript(round_),
        "cards": cards,
        "decisions": decisions,
        "settlements": [] if round_ is None else [s.to_json() for s in round_.settlements],
        "house_net": round_.house_net() if round_ is not None and round_.is_complete else None,
        "events": [e.to_json() for e in events],
        "log_verified": not problems,
        "log_problems": problems,
    }
