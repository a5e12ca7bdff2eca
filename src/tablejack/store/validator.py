"""A terminal's bill validator (PA 605a.5(c)): a bill or a voucher inserted is an event of the
validator, proven by its controller, reported once.

* **The controller's key.** A terminal's bill validator controller holds an Ed25519 private key;
  its public key is registered with the terminal's device credential (``validator_keys``,
  :func:`register_key`), bound to that key generation: a new terminal key (the operator's) ends
  every key registered with the old one, and the controller registers again.
* **The proof.** Every bill or voucher carries the validator's event id (unique at that
  terminal) and the controller's signature of :func:`message` — the terminal, the event id, the
  kind (``bill`` or ``voucher``) and the amount in cents or the voucher's code — checked by
  :func:`proof_holds`. A player's session alone proves nothing: the browser has no such key.
* **Once.** Each event id is a row of ``validator_events`` (primary key: terminal and event):
  claimed ``pending`` (:func:`claim`), then ``ok`` in the same transaction as the money it moves
  (:func:`take`, for a bill) or after it (a voucher, which itself pays once), or ``refused``.
  A repeat of the id is answered with the first answer and moves nothing, across processes and
  restarts.
* **The rate.** A terminal's validator reports at most the floor setting
  ``validator_per_minute`` bills and vouchers in any 60 seconds (:func:`claim`); past it an
  event is refused (``rate``), recorded, and moves nothing.

>>> message("EWT-1", "ev-1", "bill", 2000)
b'tablejack-validator-v1\\nEWT-1\\nev-1\\nbill\\n2000'
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import Store, now_us
from tablejack.store.floor_models import VALIDATOR_EVENTS, VALIDATOR_KEYS
from tablejack.store.settings import FloorRefusedError

__all__ = [
    "KINDS",
    "PROOF_RULE",
    "RATE_RULE",
    "Claim",
    "answer_of",
    "claim",
    "controller_key",
    "first",
    "keys_of",
    "message",
    "proof_holds",
    "public_key_text",
    "register_key",
    "settle",
    "sign",
    "take",
    "value_of",
]

KINDS = ("bill", "voucher")
PROOF_RULE = "PA 605a.4(d)"
"""The clause of the system's access controls: a validator's event is proven by its device."""
RATE_RULE = "PA 605a.5(c)"
"""The clause of the bills and vouchers a terminal accepts."""
WINDOW_US = 60_000_000
"""The rate's window: 60 seconds."""


def message(terminal: str, event: str, kind: str, value: int | str) -> bytes:
    """What the controller signs: the terminal, the validator's event id, the kind (``bill``
    or ``voucher``) and the amount in cents (a bill) or the code as read (a voucher), one per
    line after the scheme's name."""
    return "\n".join(("tablejack-validator-v1", terminal, event, kind, str(value))).encode()


def value_of(kind: str, value: int | str) -> str:
    """What ``validator_events`` keeps of an event's value: a bill's cents, a voucher code's
    SHA-256 (the code itself is printed on the voucher only)."""
    return str(value) if kind == "bill" else hashlib.sha256(str(value).encode()).hexdigest()


def public_key_text(key: Ed25519PublicKey) -> str:
    """A public key as the controller registers it: its 32 raw bytes in base64."""
    return base64.b64encode(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def controller_key(seed: str) -> Ed25519PrivateKey:
    """A simulated controller's private key derived from ``seed`` (the demo's bots derive it
    from their terminal's key, so a bot started again registers the same public key)."""
    digest = hashlib.sha256(f"tablejack-validator-seed\n{seed}".encode()).digest()
    return Ed25519PrivateKey.from_private_bytes(digest)


def sign(key: Ed25519PrivateKey, terminal: str, event: str, kind: str, value: int | str) -> str:
    """The controller's proof of an event: the Ed25519 signature of :func:`message`, base64."""
    return base64.b64encode(key.sign(message(terminal, event, kind, value))).decode()


def proof_holds(
    public_key: str, terminal: str, event: str, kind: str, value: int | str, proof: str
) -> bool:
    """True when ``proof`` is the signature by ``public_key`` (base64) of the event."""
    try:
        raw_key = base64.b64decode(public_key, validate=True)
        signature = base64.b64decode(proof, validate=True)
        if len(raw_key) != 32 or len(signature) != 64:
            return False
        Ed25519PublicKey.from_public_bytes(raw_key).verify(
            signature, message(terminal, event, kind, value)
        )
    except (binascii.Error, ValueError, InvalidSignature):
        return False
    return True


async def keys_of(store: Store, terminal: str, device: str) -> list[str]:
    """The controller keys registered for ``terminal`` with its device credential ``device``
    (public keys, base64; those registered with an older terminal key are not among them)."""
    statement = select(VALIDATOR_KEYS.c.public_key).where(
        (VALIDATOR_KEYS.c.terminal == terminal) & (VALIDATOR_KEYS.c.device == device)
    )
    async with store.engine.connect() as connection:
        return [str(row[0]) for row in (await connection.execute(statement)).all()]


async def register_key(store: Store, terminal: str, device: str, public_key: str) -> bool:
    """Register ``public_key`` (base64 of 32 bytes) as a controller key of ``terminal``, proven
    with the device credential ``device``; True when it is new (the same key again, with the
    same terminal key, is a no-op)."""
    try:
        raw = base64.b64decode(public_key, validate=True)
        Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError):
        raise FloorRefusedError(
            "invalid",
            "A validator's public key is the 32 bytes of an Ed25519 key in base64.",
            PROOF_RULE,
        ) from None
    async with store.transaction() as connection:
        found = await connection.scalar(
            select(VALIDATOR_KEYS.c.device).where(
                (VALIDATOR_KEYS.c.terminal == terminal)
                & (VALIDATOR_KEYS.c.public_key == public_key)
            )
        )
        if found == device:
            return False
        values = {"device": device, "registered_us": now_us()}
        if found is None:
            await connection.execute(
                VALIDATOR_KEYS.insert().values(terminal=terminal, public_key=public_key, **values)
            )
        else:  # registered with an older terminal key: bound to the new one
            await connection.execute(
                update(VALIDATOR_KEYS)
                .where(
                    (VALIDATOR_KEYS.c.terminal == terminal)
                    & (VALIDATOR_KEYS.c.public_key == public_key)
                )
                .values(**values)
            )
    return True


@dataclass(frozen=True, slots=True)
class Claim:
    """An event id claimed: ``first`` is the first answer when the id was answered before
    (``{"status": <HTTP status>, "body": …}``); None: this request goes on (a new event, or one
    whose first attempt did not finish)."""

    first: Mapping[str, Any] | None


def _same(row: Mapping[str, Any], kind: str, value: str) -> None:
    if (row["kind"], row["value"]) != (kind, value):
        raise FloorRefusedError(
            "event",
            f"Validator event {row['event']!r} of terminal {row['terminal']} was another "
            f"{row['kind']}; an event id is used once.",
            PROOF_RULE,
        )


async def claim(
    store: Store,
    terminal: str,
    event: str,
    kind: str,
    value: int | str,
    account: str,
    per_minute: int,
) -> Claim:
    """Claim the validator event ``event`` of ``terminal`` (``pending``), or find its first
    answer. Past the terminal's rate (``per_minute`` events not refused in the last 60
    seconds) the event is recorded refused and that refusal raised. An id used for another
    kind or value is refused (``event``)."""
    kept = value_of(kind, value)
    for _ in range(3):
        now = now_us()
        try:
            async with store.transaction() as connection:
                await connection.execute(  # one terminal's events one at a time (PostgreSQL)
                    select(VALIDATOR_KEYS.c.terminal)
                    .where(VALIDATOR_KEYS.c.terminal == terminal)
                    .with_for_update()
                )
                row = await _row(connection, terminal, event)
                if row is not None:
                    _same(row, kind, kept)
                    if row["status"] == "pending":
                        return Claim(None)
                    return Claim(_answered(row))
                recent = await connection.scalar(
                    select(func.count())
                    .select_from(VALIDATOR_EVENTS)
                    .where(
                        (VALIDATOR_EVENTS.c.terminal == terminal)
                        & (VALIDATOR_EVENTS.c.at_us > now - WINDOW_US)
                        & (VALIDATOR_EVENTS.c.status != "refused")
                    )
                )
                over = int(recent or 0) >= per_minute
                refusal = FloorRefusedError(
                    "rate",
                    f"Terminal {terminal}'s validator reports at most {per_minute} bills and "
                    "vouchers a minute; this one is refused and returned.",
                    RATE_RULE,
                )
                await connection.execute(
                    VALIDATOR_EVENTS.insert().values(
                        terminal=terminal,
                        event=event,
                        kind=kind,
                        value=kept,
                        account=account[:64],
                        at_us=now,
                        status="refused" if over else "pending",
                        answer=json.dumps(answer_of(refusal)) if over else None,
                    )
                )
        except IntegrityError:  # the same id claimed meanwhile (another process): read it
            continue
        if over:
            raise refusal
        return Claim(None)
    raise FloorRefusedError(
        "event", f"Validator event {event!r} is being reported; try again.", PROOF_RULE
    )


def _answered(row: Mapping[str, Any]) -> Mapping[str, Any]:
    if row["answer"] is None:  # taken, its answer not yet kept: moments after the movement
        raise FloorRefusedError(
            "event", f"Validator event {row['event']!r} is being reported; try again.", PROOF_RULE
        )
    return dict(json.loads(row["answer"]))


async def first(store: Store, terminal: str, event: str) -> Mapping[str, Any]:
    """The first answer to ``event`` of ``terminal`` (an attempt that lost the race to take it)."""
    async with store.engine.connect() as connection:
        row = await _row(connection, terminal, event)
    if row is None or row["status"] == "pending":
        raise FloorRefusedError(
            "event", f"Validator event {event!r} is being reported; try again.", PROOF_RULE
        )
    return _answered(row)


def answer_of(refusal: FloorRefusedError, status: int = 409) -> dict[str, Any]:
    """The answer kept for a refused event: the HTTP status and the refusal."""
    return {
        "status": status,
        "body": {"code": refusal.code, "rule": refusal.rule, "message": refusal.message},
    }


async def _row(connection: AsyncConnection, terminal: str, event: str) -> Mapping[str, Any] | None:
    statement = select(VALIDATOR_EVENTS).where(
        (VALIDATOR_EVENTS.c.terminal == terminal) & (VALIDATOR_EVENTS.c.event == event)
    )
    row = (await connection.execute(statement)).mappings().first()
    return None if row is None else dict(row)


async def take(connection: AsyncConnection, terminal: str, event: str) -> dict[str, Any]:
    """In the transaction that moves a bill's money: the claimed event becomes ``ok``, or,
    when another attempt took it first, the movement is refused (``replay``) and rolls back.
    Returns what the movement's event records of it (its validator event id)."""
    taken = await connection.execute(
        update(VALIDATOR_EVENTS)
        .where(
            (VALIDATOR_EVENTS.c.terminal == terminal)
            & (VALIDATOR_EVENTS.c.event == event)
            & (VALIDATOR_EVENTS.c.status == "pending")
        )
        .values(status="ok")
    )
    if taken.rowcount != 1:
        raise FloorRefusedError(
            "replay",
            f"Validator event {event!r} of terminal {terminal} was reported already; it moves "
            "nothing again.",
            PROOF_RULE,
        )
    return {"validator_event": event}


async def settle(
    store: Store, terminal: str, event: str, status: str, answer: Mapping[str, Any]
) -> None:
    """Keep the answer given to a claimed event (``status`` ``ok`` or ``refused``): a repeat of
    the id gets it. An event already answered keeps its first answer."""
    async with store.transaction() as connection:
        await connection.execute(
            update(VALIDATOR_EVENTS)
            .where(
                (VALIDATOR_EVENTS.c.terminal == terminal)
                & (VALIDATOR_EVENTS.c.event == event)
                & (
                    (VALIDATOR_EVENTS.c.status == "pending")
                    | ((VALIDATOR_EVENTS.c.status == status) & VALIDATOR_EVENTS.c.answer.is_(None))
                )
            )
            .values(status=status, answer=json.dumps(dict(answer)))
        )
