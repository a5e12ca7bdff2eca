"""A round rebuilt from its log. The engine is deterministic, so replaying a round's ``open``,
``wager``, ``withdraw``, ``change``, ``command`` and ``card`` events gives exactly the round
that was logged: recovery after a crash, the rebuild after a failed commit and game recall are
the same mechanism. A ``card_correction`` (a wrong card corrected with a supervisor's approval,
the round's last card and nothing decided since:
:meth:`tablejack.server.table.dealer.Dealer.correct_card`) puts its card in place of the card
event it names: the round is the one the right card would have made, and the log keeps both."""

from __future__ import annotations

from typing import Any

from tablejack.core.cards import Card
from tablejack.games import GAMES
from tablejack.server.table.games import TableGame
from tablejack.store import EventRecord, StoreError

__all__ = ["apply_command", "corrections", "replay_round"]


def apply_command(round_: Any, text: str) -> None:
    """Apply a logged command: the engine's notation, except ``dealer close-wagering``, which
    every game offers as its ``close_wagering`` verb (not every game's notation names it)."""
    if text == "dealer close-wagering":
        round_.close_wagering()
    else:
        round_.apply(text)


def corrections(events: list[EventRecord]) -> dict[int, str]:
    """The card each ``card_correction`` put in place of a card event: the corrected event's
    ``seq`` → the card's code (a later correction of the same card wins)."""
    return {
        int(record.payload["replaces"]): str(record.payload["code"])
        for record in events
        if record.kind == "card_correction"
    }


def replay_round(events: list[EventRecord], adapter: TableGame[Any]) -> Any:
    """Rebuild a round from its log: ``open`` makes it; ``wager``, ``withdraw`` (a wager taken
    back), ``change`` (a wager's new amount), ``command`` and ``card`` events are applied in
    order. The engine is deterministic, so the round is exactly the one that was logged."""
    round_: Any = None
    fixed = corrections(events)
    for record in events:
        payload = record.payload
        if record.kind == "open":
            spec = GAMES[payload["game"]]
            round_ = spec.new_round(spec.rules_class.from_mapping(payload["rules"]), None)
        elif round_ is None:
            raise StoreError(f"{record.round_id}: event {record.seq} comes before the round opens")
        elif record.kind == "wager" and payload.get("spots") is not None:
            adapter.place_spot_wagers(
                round_,
                payload["player"],
                payload.get("position"),
                payload["amount"],
                payload["spots"],
            )
        elif record.kind == "wager":
            adapter.place_wager(
                round_,
                payload["player"],
                payload.get("position"),
                payload["kind"],
                payload["amount"],
            )
        elif record.kind == "withdraw":
            adapter.withdraw_wager(round_, payload["player"], payload["kind"])
        elif record.kind == "change":
            adapter.change_wager(round_, payload["player"], payload["kind"], payload["amount"])
        elif record.kind == "command":
            apply_command(round_, payload["text"])
        elif record.kind == "card":
            round_.deal_card(Card.parse(fixed.get(record.seq, payload["code"])))
    return round_
