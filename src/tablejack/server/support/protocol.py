"""The terminal WebSocket protocol, version 1: JSON messages validated with pydantic.

Every client message is a JSON object with a ``type``; every message that asks for something
carries an ``id`` (1–64 characters) chosen by the client. The server answers each with ``ack``
or ``error`` carrying the same id; a message whose id was already answered gets the same answer
again (``"repeat": true``) and is not applied twice. See docs/server.md for the full protocol.

>>> parse_client('{"type": "action", "id": "c1", "verb": "hit"}')
Action(seq=None, type='action', id='c1', verb='hit', amount=None, position=None, spots=None)
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from tablejack.server.support.text import TEXT_RULE, SafeText, first_control_character

__all__ = [
    "PROTOCOL_VERSION",
    "Action",
    "ClientMessage",
    "DealerCommand",
    "Hello",
    "Join",
    "MalformedMessageError",
    "Ping",
    "Repeat",
    "SelectPosition",
    "WagerChange",
    "WagerMessage",
    "Withdraw",
    "parse_client",
    "read_client",
]

PROTOCOL_VERSION = 2
"""Bumped on any incompatible change of a message (2: a player's hello proves its terminal)."""

MAX_AMOUNT = 10**11
"""The largest amount a message may carry, in cents."""

CommandId = Annotated[SafeText, Field(min_length=1, max_length=64)]
Cents = Annotated[int, Field(gt=0, le=MAX_AMOUNT)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    seq: Annotated[int, Field(ge=1, le=2**53)] | None = None
    """The terminal's message sequence number (optional; see :mod:`tablejack.server.socket.sequence`)."""


class Hello(_Message):
    """First message: the protocol version, a bearer token (none: the page's session cookie),
    and for a player the terminal's id and its device credential (``terminal_key``; none: the
    session is already bound to the terminal). Staff name their console (a label)."""

    type: Literal["hello"]
    protocol: int
    token: Annotated[SafeText, Field(min_length=1, max_length=128)] | None = None
    terminal: Annotated[SafeText, Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")] | None = None
    terminal_key: Annotated[SafeText, Field(min_length=1, max_length=128)] | None = None


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
        Annotated[
            list[Annotated[int, Field(ge=0, le=MAX_AMOUNT)]], Field(min_length=3, max_length=3)
        ]
        | None
    ) = None
    """Multi-action tables: the three spot amounts (0 = spot not backed); ``amount`` is
    their sum."""
    confirm: bool | None = None
    """The player confirmed the wager a second time (PA 605a double confirmation: needed when
    ``amount`` is above the table's ``confirm_above``)."""


class Withdraw(_Message):
    """Take back a wager placed this round while wagering is open, before the first card
    (633c.5(k)): its stake is refunded; taking back the ``blackjack`` wager takes back the side
    wagers that need it."""

    type: Literal["withdraw"]
    id: CommandId
    kind: Annotated[SafeText, Field(pattern=r"^[a-z_]{1,32}$")] = "blackjack"


class WagerChange(_Message):
    """Raise or lower a wager placed this round to ``amount`` while wagering is open, before
    the first card (633c.5(k)); the table's limits hold for the new amount (``confirm``: as
    for a wager)."""

    type: Literal["change"]
    id: CommandId
    kind: Annotated[SafeText, Field(pattern=r"^[a-z_]{1,32}$")] = "blackjack"
    amount: Cents
    confirm: bool | None = None


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
    a card code entered by hand), ``shoe-draw`` (the demonstration's simulated shoe),
    ``countdown-expired``."""

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
    Hello
    | Join
    | SelectPosition
    | WagerMessage
    | Withdraw
    | WagerChange
    | Action
    | DealerCommand
    | Repeat
    | Ping,
    Field(discriminator="type"),
]
_CLIENT: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


def parse_client(text: str | bytes) -> ClientMessage:
    """Parse one client frame; raises ``pydantic.ValidationError`` if it is not JSON or not a
    protocol message."""
    return _CLIENT.validate_json(text)


# -- refusals of frames that are not protocol messages ----------------------------------------

_TYPES = ", ".join(
    (
        "hello",
        "join",
        "position",
        "wager",
        "withdraw",
        "change",
        "action",
        "dealer",
        "repeat",
        "ping",
    )
)

_FIELDS: dict[str, tuple[str, str]] = {
    "id": ("A message id", "is a string of 1 to 64 characters"),
    "seq": ("A sequence number", "is a whole number from 1 to 2**53"),
    "protocol": (
        "The protocol version",
        f"is a whole number (this server speaks {PROTOCOL_VERSION})",
    ),
    "token": ("A token", "is a string of 1 to 128 characters"),
    "terminal": ("A terminal id", "is 1 to 64 letters, digits or the characters _ . : -"),
    "table": ("A table id", "is a string of 1 to 64 characters"),
    "position": ("A position", "is a whole number from 1 to 16"),
    "kind": ("A wager kind", "is 1 to 32 lower-case letters or _ (blackjack, buzzer_beater, …)"),
    "amount": ("An amount", "is a whole positive number of cents"),
    "verb": ("A verb", "is 1 to 24 lower-case letters or - (hit, stand, double, …)"),
    "command": (
        "A dealer command",
        "is 1 to 24 lower-case letters or - (open-round, close-wagering, card, countdown-expired)",
    ),
    "card": ("A card code", "is 2 or 3 characters (10S, AH, …)"),
    "confirm": ("The field confirm", "is true or false"),
}
"""Per field: what it is called and what it must be (the sentences of a refusal)."""

_SUBJECTS: dict[tuple[str, str], tuple[str, str]] = {
    ("wager", "amount"): ("A wager amount", "is a whole positive number of cents"),
    ("change", "amount"): (
        "A wager's new amount",
        "is a whole positive number of cents (to take a wager back, send withdraw)",
    ),
    ("action", "amount"): (
        "The amount of a double, insurance or EZ Bust",
        "is a whole positive number of cents (left out: the full amount)",
    ),
    ("wager", "spots"): (
        "The spots of a multi-action wager",
        "are three whole numbers of cents, 0 for a spot not backed",
    ),
    ("action", "spots"): ("The spots a double names", "are one to three spot numbers from 1 to 3"),
}
"""What a field is called and must be in one message type, where that differs."""


class MalformedMessageError(ValueError):
    """A frame that is not a protocol message (cannot parse): the message is a sentence naming
    what was wrong and the rule; ``rule`` names the rule (``protocol: amount``, ``protocol:
    JSON``, ``text: no control characters`` …) and ``command_id`` is the frame's ``id`` when it
    could be read (else None). Nothing was applied.

    >>> try:
    ...     read_client('{"type": "wager", "id": "w1", "amount": 1.5}')
    ... except MalformedMessageError as error:
    ...     print(error.command_id, error.rule, error.message, sep=" | ")
    w1 | protocol: amount | A wager amount is a whole positive number of cents, not 1.5 (protocol: amount).
    """

    code = "malformed"
    """The ``code`` of the error frame."""

    def __init__(self, message: str, rule: str, command_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.command_id = command_id

    def frame(self) -> dict[str, Any]:
        """The ``error`` frame that answers the frame."""
        return {
            "type": "error",
            "id": self.command_id,
            "code": self.code,
            "rule": self.rule,
            "message": self.message,
        }

    @classmethod
    def not_utf8(cls) -> MalformedMessageError:
        """A binary frame whose bytes are not UTF-8 text."""
        return cls(
            "A frame is JSON text; this binary frame is not UTF-8 (protocol: JSON).",
            "protocol: JSON",
        )

    @classmethod
    def from_validation(cls, error: ValidationError, text: str) -> MalformedMessageError:
        """The refusal of a frame pydantic refused: its first problem in a sentence."""
        command_id = _readable_id(text)
        problems = error.errors(include_url=False)
        first = problems[0]
        kind, loc = first["type"], tuple(first["loc"])
        others = len(problems) - 1
        more = {0: "", 1: " 1 more problem is not listed."}.get(
            others, f" {others} more problems are not listed."
        )
        if kind == "json_invalid":
            detail = str((first.get("ctx") or {}).get("error", "not JSON"))
            return cls(
                f"A frame is one JSON object; this one is not JSON ({detail}) (protocol: JSON).",
                "protocol: JSON",
                command_id,
            )
        if not loc:
            if kind == "union_tag_invalid":
                tag = (first.get("ctx") or {}).get("tag", "")
                sentence = f"There is no message type {_shown(tag)}; a type is one of {_TYPES}"
            elif kind == "union_tag_not_found":
                sentence = f"A message names its type: one of {_TYPES}"
            else:
                sentence = f"A frame is one JSON object with a type, not {_shown(first['input'])}"
            return cls(f"{sentence} (protocol: type).", "protocol: type", command_id)
        message_type, field = str(loc[0]), str(loc[1]) if len(loc) > 1 else "type"
        subject, must = _SUBJECTS.get((message_type, field)) or _FIELDS.get(
            field, (f"The field {field!r}", "is as the protocol defines it")
        )
        rule = f"protocol: {field}"
        if kind == "control_character":
            ctx = first.get("ctx") or {}
            return cls(
                f"{subject} may not hold control characters; {ctx.get('code')} at character "
                f"{ctx.get('at')} is refused ({TEXT_RULE}).{more}",
                TEXT_RULE,
                command_id,
            )
        if kind == "extra_forbidden":
            rule = f"protocol: {message_type}"
            sentence = f"A {message_type} message has no field {field!r}"
            return cls(f"{sentence} ({rule}).{more}", rule, command_id)
        if kind == "missing":
            sentence = f"A {message_type} message needs its {field}, which {must}"
            return cls(f"{sentence} ({rule}).{more}", rule, command_id)
        if kind == "less_than_equal" and field == "amount":
            limit = (first.get("ctx") or {}).get("le")
            sentence = f"{subject} is at most {limit} cents, not {_shown(first['input'])}"
            return cls(f"{sentence} ({rule}).{more}", rule, command_id)
        spot = f" (item {loc[2] + 1})" if len(loc) > 2 and isinstance(loc[2], int) else ""
        sentence = f"{subject} {must}, not {_shown(first['input'])}{spot}"
        return cls(f"{sentence} ({rule}).{more}", rule, command_id)


def _shown(value: Any) -> str:
    """A client's value quoted in a sentence: as JSON, control characters escaped, cut short."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # (JSON has no word for it: 1e400 arrives as inf)
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _readable_id(text: str) -> str | None:
    """The ``id`` of a frame, if it is JSON with an id the protocol allows."""
    try:
        data = json.loads(text)  # (not orjson: it refuses 1e400, which the id stands beside)
    except (ValueError, RecursionError):
        return None
    found = data.get("id") if isinstance(data, dict) else None
    if isinstance(found, str) and 1 <= len(found) <= 64 and first_control_character(found) is None:
        return found
    return None


def read_client(text: str) -> ClientMessage:
    """Parse one client frame; raises :class:`MalformedMessageError` (a sentence naming the
    rule, and the frame's id if it could be read) if it is not JSON or not a protocol
    message."""
    try:
        return _CLIENT.validate_json(text)
    except ValidationError as error:
        raise MalformedMessageError.from_validation(error, text) from None
