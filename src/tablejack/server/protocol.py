"""The terminal WebSocket protocol, version 1: JSON messages validated with pydantic.

Every client message is a JSON object with a ``type``; every message that asks for something
carries an ``id`` (1–64 characters) chosen by the client. The server answers each with ``ack``
or ``error`` carrying the same id; a message whose id was already answered gets the same answer
again (``"repeat": true``) and is not applied twice. See docs/server.md for the full protocol.

>>> parse_client('{"type": "action", "id": "c1", "verb": "hit"}')
Action(seq=None, type='action', id='c1', verb='hit', amount=None, position=None, spots=None)
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tablejack.server.text import SafeText

__all__ = [
    "PROTOCOL_VERSION",
    "Action",
    "ClientMessage",
    "DealerCommand",
    "Hello",
    "Join",
    "Ping",
    "Repeat",
    "SelectPosition",
    "WagerMessage",
    "parse_client",
]

PROTOCOL_VERSION = 1
"""Bumped on any incompatible change of a message."""

CommandId = Annotated[SafeText, Field(min_length=1, max_length=64)]
Cents = Annotated[int, Field(gt=0, le=10**11)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    seq: Annotated[int, Field(ge=1, le=2**53)] | None = None
    """The terminal's message sequence number (optional; see :mod:`tablejack.server.sequence`)."""


class Hello(_Message):
    """First message: the protocol version, a bearer token and the terminal's id."""

    type: Literal["hello"]
    protocol: int
    token: Annotated[SafeText, Field(min_length=1, max_length=128)]
    terminal: Annotated[SafeText, Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")] = "terminal"


class Join(_Message):
    """Watch and play at a table."""

    type: Literal["join"]
    id: CommandId
    table: Annotated[SafeText, Field(min_length=1, max_length=64)]


class SelectPosition(_Message):
    """Select the player position (seat) for the next Blackjack Wager (633c.5(l))."""

    type: Literal["position"]
    id: CommandId
    position: Annotated[int, Field(ge=1, le=16)]


class WagerMessage(_Message):
    """A wager before the first card (633c.5(k)): ``blackjack`` or a side wager the table
    offers then (``buzzer_beater``)."""

    type: Literal["wager"]
    id: CommandId
    kind: Annotated[SafeText, Field(pattern=r"^[a-z_]{1,32}$")] = "blackjack"
    amount: Cents
    spots: (
        Annotated[list[Annotated[int, Field(ge=0, le=10**11)]], Field(min_length=3, max_length=3)]
        | None
    ) = None
    """Multi-action tables: the three spot amounts (0 = spot not backed); ``amount`` is
    their sum."""
    confirm: bool | None = None
    """The player confirmed the wager a second time (PA 605a double confirmation: needed when
    ``amount`` is above the table's ``confirm_above``)."""


class Action(_Message):
    """A decision: ``hit``, ``stand``, ``double``, ``split``, ``surrender``, ``insurance``,
    ``no-insurance``, ``even-money``, ``ez-bust``, ``no-ez-bust`` (what the engine allows).
    ``position``, if given, must be the player's own."""

    type: Literal["action"]
    id: CommandId
    verb: Annotated[SafeText, Field(pattern=r"^[a-z-]{1,24}$")]
    amount: Cents | None = None
    position: Annotated[int, Field(ge=1, le=16)] | None = None
    spots: (
        Annotated[list[Annotated[int, Field(ge=1, le=3)]], Field(min_length=1, max_length=3)] | None
    ) = None
    """Multi-action tables: the betting spots a double names (``[1, 3]``); none: every spot."""


class DealerCommand(_Message):
    """Dealer console commands: ``open-round``, ``close-wagering``, ``card`` (with ``card``,
    a card code read by the reader or typed), ``countdown-expired``."""

    type: Literal["dealer"]
    id: CommandId
    command: Annotated[SafeText, Field(pattern=r"^[a-z-]{1,24}$")]
    card: Annotated[SafeText, Field(min_length=2, max_length=3)] | None = None


class Repeat(_Message):
    """Repeat last bet (PA 605a): place again, in the round now in wagering, the wagers the
    player placed in his last round at this table (``confirm``: as for a wager)."""

    type: Literal["repeat"]
    id: CommandId
    confirm: bool | None = None


class Ping(_Message):
    """Keep-alive; answered with ``pong``."""

    type: Literal["ping"]
    id: CommandId | None = None


ClientMessage = Annotated[
    Hello | Join | SelectPosition | WagerMessage | Action | DealerCommand | Repeat | Ping,
    Field(discriminator="type"),
]
_CLIENT: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


def parse_client(text: str | bytes) -> ClientMessage:
    """Parse one client frame; raises ``pydantic.ValidationError`` if it is not JSON or not a
    protocol message."""
    return _CLIENT.validate_json(text)
