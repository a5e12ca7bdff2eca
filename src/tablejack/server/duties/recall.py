"""Game recall: a round rebuilt from its log, with every card and when it was read, every
decision and the terminal that made it, and every settlement with the clause that decided it;
and the terminal's recall of its last games. Both as their reader may see them: the information
policy (:mod:`tablejack.server.visibility`) shows no card face down, and a player only his own
part of the round."""

from __future__ import annotations

from typing import Any

from tablejack.games import transcript
from tablejack.server import visibility
from tablejack.server.duties.terminal_recall import RECALL_GAMES, recall_terminal
from tablejack.server.table import corrections, replay_round
from tablejack.server.table.games import adapter_for
from tablejack.server.visibility import Viewer
from tablejack.store import Store
from tablejack.store.verify import verify_chains

__all__ = ["face_down_seqs", "recall", "terminal_recall"]


async def face_down_seqs(store: Store, round_id: str, game: str) -> set[int]:
    """The seqs of the ``card`` events of ``round_id`` whose cards are face down now
    (:func:`~tablejack.server.visibility.face_down`, by the round replayed from its log)."""
    events = await store.events(round_id)
    round_ = replay_round(events, adapter_for(game))
    places = set(visibility.face_down(round_))
    if not places:
        return set()
    cards = [e.seq for e in events if e.kind == "card"]
    return {seq for place, seq in enumerate(cards) if place in places}


async def terminal_recall(
    store: Store, terminal: str, viewer: Viewer, *, n: int = RECALL_GAMES
) -> list[dict[str, Any]]:
    """The last ``n`` games of ``terminal`` as ``viewer`` may read them: a player only the
    games he played there (his own wagers, decisions and settlements beside the cards and the
    dealer's steps), and nobody a card face down."""
    player = viewer.subject if viewer.role == "player" else None
    documents = await recall_terminal(store, terminal, player=player, n=n)
    hidden = {
        str(d["round_id"]): await face_down_seqs(store, str(d["round_id"]), str(d["game"]))
        for d in documents
        if d["status"] == "open"
    }
    return visibility.terminal_recall(viewer, documents, hidden)


async def recall(store: Store, round_id: str, viewer: Viewer) -> dict[str, Any] | None:
    """The recall document of ``round_id`` as ``viewer`` may read it (None if there is no such
    round)."""
    row = await store.round(round_id)
    if row is None or row["kind"] != "round":
        return None
    events = await store.events(round_id)
    round_ = replay_round(events, adapter_for(row["game"]))
    fixed = corrections(events)
    cards = [
        {
            "seq": e.seq,
            "code": fixed.get(e.seq, e.payload["code"]),
            "read_us": e.payload.get("read_us", e.at_us),
            "source": e.payload.get("source", ""),
            "by": e.actor,
        }
        | ({"read_as": e.payload["code"]} if e.seq in fixed else {})
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
    document = {
        "round_id": round_id,
        "table_id": row["table_id"],
        "number": row["number"],
        "game": row["game"],
        "status": row["status"],
        "opened_us": row["opened_us"],
        "closed_us": row["closed_us"],
        "transcript": [] if round_ is None else transcript(round_),
        "cards": cards,
        "manual_entry": [  # entry by hand allowed by a supervisor (PA 633c.5(j))
            {"seq": e.seq, "at_us": e.at_us, "by": e.actor, "reason": e.payload.get("reason", "")}
            for e in events
            if e.kind == "manual_entry"
        ],
        "corrections": [  # a wrong card corrected with a supervisor's approval (PA 633a.14)
            {
                "seq": e.seq,
                "at_us": e.at_us,
                "by": e.actor,
                "replaces": e.payload["replaces"],
                "was": e.payload["was"],
                "code": e.payload["code"],
                "reason": e.payload.get("reason", ""),
            }
            for e in events
            if e.kind == "card_correction"
        ],
        "decisions": decisions,
        "settlements": [] if round_ is None else [s.to_json() for s in round_.settlements],
        "house_net": round_.house_net() if round_ is not None and round_.is_complete else None,
        "events": [e.to_json() for e in events],
        "log_verified": not problems,
        "log_problems": problems,
    }
    return visibility.round_recall(viewer, document, round_)
