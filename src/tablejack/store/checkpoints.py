"""Signed checkpoints of the event log, in the manner of Certificate Transparency's signed tree
heads: a chain no one can recompute unseen.

Every round and every log (account logs, procedures, tilts, credentials …) is a hash chain
(:func:`tablejack.store.chain.chain_hash`), and every posting is inside the event that caused it.
A chain alone has no key: someone who can write the database can edit an event and recompute
the hashes after it. So the server signs, with an Ed25519 key that is not in the database, a
**checkpoint** of the chain heads: at every gaming-day close, every N events or T seconds, at
start and at shutdown. A checkpoint covers the head ``(stream, seq, hash)`` of every stream that
moved since the one before; the leaves, sorted, are the leaves of an RFC 6962 Merkle tree whose
root the statement signs, and each statement names the SHA-256 of the statement before it, so
the checkpoints form a chain of their own::

    {"v": 1, "number": 42, "at_us": …, "reason": "interval", "prev": "<sha256 of #41>",
     "heads": 17, "root": "<merkle root>", "key_id": "<sha256 of the public key>"}

The statements, their signatures and the heads are kept in the database (``checkpoints``,
``checkpoint_heads``) and each statement is also appended to a file outside it (JSON lines: an
append-only file the operator ships elsewhere), so a database rolled back to an older copy is
caught against the file. :func:`tablejack.store.verify.verify` checks all of it.

>>> merkle_root([]) == hashlib.sha256(b"").hexdigest()
True
>>> merkle_root([b"a"]) == hashlib.sha256(b"\\x00a").hexdigest()
True
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy import bindparam, func, select, text, update
from sqlalchemy.exc import DBAPIError

from tablejack.store.chain import GENESIS, canonical
from tablejack.store.db import Store, StoreError
from tablejack.store.keys import key_id
from tablejack.store.models import CHECKPOINT_HEADS, CHECKPOINTS, ROUNDS
from tablejack.store.records import now_us

__all__ = [
    "LOCK_WAIT_SECONDS",
    "REASONS",
    "CheckpointLockBusyError",
    "CheckpointRecord",
    "Checkpointer",
    "leaf",
    "merkle_root",
    "newest_checkpoints",
    "read_checkpoint_file",
    "signature_ok",
    "statement_hash",
    "uncovered_streams",
]

log = logging.getLogger("tablejack.store")

REASONS = ("start", "interval", "events", "gaming_day_close", "shutdown", "key_rotation", "manual")
"""Why a checkpoint was taken."""
_ADVISORY_LOCK = 0x74_6A_63_6B
"""'tjck': one checkpointer at a time across the processes of a floor, with the hash of the
schema's name as the lock's second key (floors in other schemas of a database do not wait)."""
LOCK_WAIT_SECONDS = 10.0
"""How long a checkpoint waits at most for another process's checkpoint to end (PostgreSQL)."""


class CheckpointLockBusyError(StoreError):
    """Another process of the floor held the checkpoint lock for longer than the wait: no
    checkpoint was taken (the next one covers what this one would have). A process frozen in
    the middle of its checkpoint (``SIGSTOP``) keeps the lock until it is continued or ends: its
    session is not idle in a transaction but in the middle of a statement, which PostgreSQL
    neither times out nor ends."""


def leaf(stream: str, seq: int, digest: str) -> bytes:
    """The Merkle leaf of a chain head."""
    return json.dumps([stream, seq, digest], separators=(",", ":")).encode()


def merkle_root(leaves: Sequence[bytes]) -> str:
    """The RFC 6962 Merkle tree hash (hex) of ``leaves``: a leaf hashed with a 0x00 prefix, a
    node with 0x01, the tree split at the largest power of two below its size."""
    if not leaves:
        return hashlib.sha256(b"").hexdigest()
    return _tree([hashlib.sha256(b"\x00" + item).digest() for item in leaves]).hex()


def _tree(hashes: Sequence[bytes]) -> bytes:
    if len(hashes) == 1:
        return hashes[0]
    split = 1 << ((len(hashes) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + _tree(hashes[:split]) + _tree(hashes[split:])).digest()


def statement_hash(statement: str) -> str:
    """The SHA-256 of a statement's text (the next statement's ``prev``)."""
    return hashlib.sha256(statement.encode()).hexdigest()


def signature_ok(statement: str, signature: str, public_key: Ed25519PublicKey) -> bool:
    """True when ``signature`` (base64) is the key's Ed25519 signature of ``statement``."""
    try:
        public_key.verify(base64.b64decode(signature, validate=True), statement.encode())
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    """A checkpoint as stored and as written to the file."""

    number: int
    at_us: int
    reason: str
    statement: str
    signature: str
    key_id: str

    def to_json(self) -> dict[str, Any]:
        """The file's line (and the API's answer)."""
        return {
            "number": self.number,
            "at_us": self.at_us,
            "reason": self.reason,
            "statement": self.statement,
            "signature": self.signature,
            "key_id": self.key_id,
        }


def read_checkpoint_file(path: Path) -> tuple[list[CheckpointRecord], list[str]]:
    """The checkpoints of an append-only file and the lines that are not checkpoints."""
    records: list[CheckpointRecord] = []
    bad: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                records.append(
                    CheckpointRecord(
                        int(data["number"]),
                        int(data["at_us"]),
                        str(data["reason"]),
                        str(data["statement"]),
                        str(data["signature"]),
                        str(data["key_id"]),
                    )
                )
            except (ValueError, KeyError, TypeError):
                bad.append(f"{path}: line {number} is not a checkpoint")
    return records, bad


class Checkpointer:
    """Takes the signed checkpoints of one store with one key, and appends each to ``file``."""

    def __init__(
        self, store: Store, private_key: Ed25519PrivateKey, file: Path | None = None
    ) -> None:
        self.store = store
        self.private_key = private_key
        self.key_id = key_id(private_key.public_key())
        self.file = file
        self._file_last: int | None = None
        self.checked_at: float | None = None
        """When (``time.time()``) the log was last found covered, by a checkpoint made or
        with nothing to sign (the metrics' checkpoint age)."""

    async def last(self) -> CheckpointRecord | None:
        """The newest checkpoint in the database."""
        async with self.store.engine.connect() as connection:
            row = (
                (
                    await connection.execute(
                        select(CHECKPOINTS).order_by(CHECKPOINTS.c.number.desc()).limit(1)
                    )
                )
                .mappings()
                .first()
            )
        return None if row is None else _record(row)

    async def checkpoint(
        self, reason: str, *, force: bool = False, lock_wait: float = LOCK_WAIT_SECONDS
    ) -> CheckpointRecord | None:
        """Sign the heads of every stream that moved since the last checkpoint (none moved and
        not ``force``: no checkpoint). The database holds it before the file does. On
        PostgreSQL one process of a floor checkpoints at a time: :class:`CheckpointLockBusyError`
        when another held the checkpoint lock for ``lock_wait`` seconds (nothing written)."""
        if reason not in REASONS:
            raise ValueError(f"A checkpoint's reason is one of {REASONS}, not {reason!r}.")
        checked = time.time()
        made = await self._write(reason, force, lock_wait)
        self.checked_at = checked
        await self.sync_file()
        return made

    async def _write(self, reason: str, force: bool, lock_wait: float) -> CheckpointRecord | None:
        store = self.store
        try:
            return await self._write_locked(reason, force, lock_wait)
        except DBAPIError as error:
            if store.dialect == "postgresql" and "lock timeout" in str(error.orig):
                raise CheckpointLockBusyError(
                    f"Another process held the checkpoint lock (or a round's row) for more than "
                    f"{lock_wait:g} s: no checkpoint now (the next one covers this one's heads)."
                ) from None
            raise

    async def _write_locked(
        self, reason: str, force: bool, lock_wait: float
    ) -> CheckpointRecord | None:
        store = self.store
        async with store.transaction() as connection:
            if store.dialect == "postgresql":  # bounded: a holder may be frozen mid-statement
                wait_ms = max(1, int(lock_wait * 1000))
                await connection.execute(text(f"SET LOCAL lock_timeout = '{wait_ms}ms'"))
                await connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key, hashtext(current_schema()))"),
                    {"key": _ADVISORY_LOCK},
                )
            last = (
                (
                    await connection.execute(
                        select(CHECKPOINTS).order_by(CHECKPOINTS.c.number.desc()).limit(1)
                    )
                )
                .mappings()
                .first()
            )
            heads = (
                await connection.execute(
                    select(ROUNDS.c.id, ROUNDS.c.last_seq, ROUNDS.c.head_hash)
                    .where(ROUNDS.c.last_seq > ROUNDS.c.covered_seq)
                    .order_by(ROUNDS.c.id)
                )
            ).all()
            rotated = last is not None and last["key_id"] != self.key_id
            if not heads and not force and not rotated:
                return None
            if rotated and reason in ("start", "interval", "events"):
                reason = "key_rotation"
            number = 1 if last is None else int(last["number"]) + 1
            at = now_us()
            ordered = sorted((str(h[0]), int(h[1]), str(h[2])) for h in heads)
            statement = canonical(
                {
                    "v": 1,
                    "number": number,
                    "at_us": at,
                    "reason": reason,
                    "prev": GENESIS if last is None else statement_hash(last["statement"]),
                    "heads": len(ordered),
                    "root": merkle_root([leaf(*head) for head in ordered]),
                    "key_id": self.key_id,
                }
            )
            signature = base64.b64encode(self.private_key.sign(statement.encode())).decode()
            record = CheckpointRecord(number, at, reason, statement, signature, self.key_id)
            await connection.execute(
                CHECKPOINTS.insert().values(
                    number=number,
                    at_us=at,
                    reason=reason,
                    statement=statement,
                    signature=signature,
                    key_id=self.key_id,
                )
            )
            if ordered:
                await connection.execute(
                    CHECKPOINT_HEADS.insert(),
                    [
                        {"number": number, "stream": stream, "seq": seq, "hash": digest}
                        for stream, seq, digest in ordered
                    ],
                )
                await connection.execute(
                    update(ROUNDS)
                    .where(
                        (ROUNDS.c.id == bindparam("b_id"))
                        & (ROUNDS.c.covered_seq < bindparam("b_seq"))
                    )
                    .values(covered_seq=bindparam("b_seq")),
                    [{"b_id": stream, "b_seq": seq} for stream, seq, _ in ordered],
                )
        return record

    async def sync_file(self) -> None:
        """Append to the file every checkpoint of the database it does not hold yet (a failed
        append is retried at the next checkpoint)."""
        if self.file is None:
            return
        try:
            if self._file_last is None:
                self._file_last = 0
                if self.file.exists():
                    held, _ = read_checkpoint_file(self.file)
                    self._file_last = max((r.number for r in held), default=0)
            async with self.store.engine.connect() as connection:
                rows = (
                    (
                        await connection.execute(
                            select(CHECKPOINTS)
                            .where(CHECKPOINTS.c.number > self._file_last)
                            .order_by(CHECKPOINTS.c.number)
                        )
                    )
                    .mappings()
                    .all()
                )
            if not rows:
                return
            self.file.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(_record(row).to_json(), sort_keys=True) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            self._file_last = int(rows[-1]["number"])
        except OSError as error:
            log.error("checkpoint file %s: %s (retried at the next checkpoint)", self.file, error)


async def newest_checkpoints(store: Store, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` checkpoints in the database, newest first, each its row (number,
    time, reason, statement, signature, key id)."""
    statement = select(CHECKPOINTS).order_by(CHECKPOINTS.c.number.desc()).limit(limit)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).mappings().all()
    return [dict(row) for row in rows]


async def uncovered_streams(store: Store) -> int:
    """How many streams (rounds and logs) hold events no checkpoint covers yet."""
    async with store.engine.connect() as connection:
        count = await connection.scalar(
            select(func.count()).where(ROUNDS.c.last_seq > ROUNDS.c.covered_seq)
        )
    return int(count or 0)


def _record(row: Any) -> CheckpointRecord:
    return CheckpointRecord(
        int(row["number"]),
        int(row["at_us"]),
        str(row["reason"]),
        str(row["statement"]),
        str(row["signature"]),
        str(row["key_id"]),
    )
