"""A table's answers to terminal requests, kept for their repeats: a terminal that sends a
request again under the same ``command_id`` (its answer was lost with its connection) gets the
first answer back, marked ``repeat``, and nothing is applied twice."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KEPT_PER_PLAYER", "Reply", "ReplyCache", "Request"]

KEPT_PER_PLAYER = 256
"""The answers kept per player (the oldest dropped first)."""

Reply = dict[str, Any]
"""A request's answer: ``ok``, the round and the ``seq`` of its event (JSON)."""


@dataclass(eq=False)
class Request:
    """A terminal's wager or decision waiting for the table's worker."""

    step: Callable[[Any], Any]
    """Applies the request to the round (raises if the engine refuses) and returns its event."""
    player: str
    command_id: str
    future: asyncio.Future[Reply]


class ReplyCache:
    """Each player's latest answers by ``command_id`` (:data:`KEPT_PER_PLAYER` of them)."""

    def __init__(self) -> None:
        self._answered: dict[str, OrderedDict[str, Reply]] = {}

    def repeat(self, player: str, command_id: str | None) -> Reply | None:
        """The answer already given to ``player``'s ``command_id``, marked as a repeat, or
        None (never answered, or no ``command_id``)."""
        if command_id is None or not player:
            return None
        seen = self._answered.get(player, OrderedDict()).get(command_id)
        return None if seen is None else {**seen, "repeat": True}

    def remember(self, player: str, command_id: str | None, reply: Reply) -> None:
        """Keep ``reply`` as the answer to ``player``'s ``command_id``."""
        if command_id is None or not player:
            return
        answered = self._answered.setdefault(player, OrderedDict())
        answered[command_id] = reply
        while len(answered) > KEPT_PER_PLAYER:
            answered.popitem(last=False)

    def clear(self) -> None:
        """Forget every answer (a new round: its commands are new)."""
        self._answered.clear()
