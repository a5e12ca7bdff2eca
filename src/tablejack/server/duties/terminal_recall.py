"""Terminal recall (PA 605a.4(d) game recall as test labs expect it): the last game of a
terminal and the nine before it, step by step, from the round's event log and the ledger.

Each step is an event of the round in order: the round opening, every wager, every card in the
order it came out of the shoe, every decision with its source — ``player`` (from a terminal),
``dealer`` (the console), or ``countdown default`` (the clock ran out, 633c.5(p)(2)) — and the
settlements, each split into the two amounts a winning wager pays: the ``wager_returned`` and
the ``winnings`` (605a.2(d)). The terminal's player's credits are given before the round,
after each step that moved them, and after the round, all summed from his ledger rows.
"""

from __future__ import annotations

from typing import Any

from tablejack.store import Store
from tablejack.store.recall import balance_before

__all__ = ["RECALL_GAMES", "recall_terminal", "settlement_amounts"]

RECALL_GAMES = 10
"""The last game and the nine before it."""


def settlement_amounts(settlement: dict[str, Any]) -> dict[str, Any]:
    """A settlement with its two visible amounts: the wager returned and the winnings.

    >>> s = settlement_amounts({"amount": 1000, "returned": 2500})
    >>> s["wager_returned"], s["winnings"]
    (1000, 1500)
    >>> settlement_amounts({"amount": 1000, "returned": 500})["winnings"]
    0
    """
    amount, returned = int(settlement["amount"]), int(settlement["returned"])
    return {
        **settlement,
        "wager_returned": min(amount, returned),
        "winnings": max(returned - amount, 0),
    }


def _source(event: Any) -> str:
    if event.terminal == "clock" or event.actor == "clock":
        return "countdown default"
    text = str(event.payload.get("text", ""))
    if text.startswith("dealer") or event.terminal in ("console", "reader"):
        return "dealer"
    return "player"


async def recall_round_steps(
    store: Store, round_id: str, terminal: str, player: str | None
) -> dict[str, Any] | None:
    """One round as the terminal recalls it (``player``: only his own wagers, decisions and
    settlements beside the cards and the dealer's steps; None: everyone's)."""
    row = await store.round(round_id)
    if row is None or row["kind"] != "round":
        return None
    events = await store.events(round_id)
    owner = player
    if owner is None:
        owner = next((e.actor for e in events if e.kind == "wager" and e.terminal == terminal), "")
    entries = [
        e
        for e in await store.ledger_of_round(round_id)
        if owner in (e["from_account"], e["to_account"])
    ]
    before = await balance_before(store, owner, entries[0]["id"]) if entries and owner else None
    credits = before
    steps: list[dict[str, Any]] = []
    for event in events:
        payload = event.payload
        step: dict[str, Any] = {"seq": event.seq, "at_us": event.at_us, "kind": event.kind}
        if event.kind == "open":
            step["text"] = f"round {payload.get('number')} opens ({payload.get('game')})"
        elif event.kind == "wager":
            if player is not None and payload["player"] != player:
                continue
            step |= {
                "player": payload["player"],
                "wager_kind": payload["kind"],
                "amount": payload["amount"],
                "position": payload.get("position"),
                "terminal": event.terminal,
                "source": "player",
            }
        elif event.kind == "command":
            source = _source(event)
            if player is not None and source == "player" and event.actor != player:
                continue
            step |= {
                "text": payload["text"],
                "source": source,
                "actor": event.actor,
                "terminal": event.terminal,
            }
        elif event.kind == "card":
            step |= {
                "card": payload["code"],
                "read_us": payload.get("read_us"),
                "source": payload.get("source", ""),
            }
        elif event.kind == "card_correction":
            step |= {
                "card": payload["code"],
                "was": payload["was"],
                "reason": payload.get("reason", ""),
                "source": "correction",
            }
        elif event.kind == "complete":
            settlements = [
                settlement_amounts(s)
                for s in payload.get("settlements", [])
                if player is None or s.get("player") == player
            ]
            step |= {"settlements": settlements}
            if player is None:
                step["house_net"] = payload.get("house_net")
        elif event.kind == "void":
            step |= {
                "reason": payload.get("reason"),
                "refunds": [
                    r
                    for r in payload.get("refunds", [])
                    if player is None or r.get("player") == player
                ],
            }
        else:
            step |= {"text": str(payload.get("message", ""))}
        moved = [e for e in entries if e["seq"] == event.seq]
        if moved and credits is not None:
            for entry in moved:
                credits += entry["amount"] if entry["to_account"] == owner else -entry["amount"]
            step["credits_after"] = credits
        steps.append(step)
    return {
        "round_id": round_id,
        "table_id": row["table_id"],
        "number": row["number"],
        "game": row["game"],
        "status": row["status"],
        "opened_us": row["opened_us"],
        "closed_us": row["closed_us"],
        "terminal": terminal,
        "player": owner,
        "credits_before": before,
        "credits_after": credits,
        "steps": steps,
    }


async def recall_terminal(
    store: Store, terminal: str, *, player: str | None = None, n: int = RECALL_GAMES
) -> list[dict[str, Any]]:
    """The last ``n`` games played at ``terminal`` (newest first), step by step. With
    ``player``, only the games he played there."""
    out: list[dict[str, Any]] = []
    for round_id in await store.rounds_of_terminal(terminal, 100 if player else n):
        if len(out) >= n:
            break
        if player is not None:
            events = await store.events(round_id)
            if not any(e.actor == player and e.terminal == terminal for e in events):
                continue
        document = await recall_round_steps(store, round_id, terminal, player)
        if document is not None:
            out.append(document)
    return out
