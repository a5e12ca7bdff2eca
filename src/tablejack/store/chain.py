"""The event chain: each event's hash is SHA-256 over the previous hash and the event's own
fields, its payload in one canonical JSON text (:func:`canonical`); the first event of every
chain follows :data:`GENESIS`. :func:`tablejack.store.verify.verify` recomputes every chain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["GENESIS", "canonical", "chain_hash"]

GENESIS = "0" * 64
"""The previous hash of every chain's first event."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The encoder of :func:`canonical`, made once (``json.dumps`` with arguments makes one per
call)."""
_CHAINED = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""The encoder of the text :func:`chain_hash` hashes."""


def canonical(payload: Mapping[str, Any]) -> str:
    """The one JSON text of a payload that the hash covers (sorted keys, no spaces): what
    ``json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` gives.

    >>> canonical({"b": [1, 2.5], "a": "é"})
    '{"a":"é","b":[1,2.5]}'
    """
    return _CANONICAL.encode(payload)


def chain_hash(
    prev_hash: str,
    round_id: str,
    seq: int,
    at_us: int,
    kind: str,
    actor: str,
    terminal: str,
    payload: str,
) -> str:
    """SHA-256 (hex) of an event chained to the previous one.

    >>> chain_hash(GENESIS, "T1-000001", 1, 0, "open", "", "", "{}")[:12]
    '6c814c17a47a'
    """
    text = _CHAINED.encode([prev_hash, round_id, seq, at_us, kind, actor, terminal, payload])
    return hashlib.sha256(text.encode()).hexdigest()
