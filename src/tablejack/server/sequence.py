"""Message sequence numbers of the terminal protocol: a terminal numbers its messages 1, 2,
3 … (field ``seq``); a gap or a repeat is refused (an ``error`` frame, code ``sequence``) and
audited, and the message is not applied.

The numbering belongs to the terminal id, not to the socket: a terminal that reconnects goes on
from its last number, and a second socket claiming the terminal's id must continue the same
sequence — whichever of the two sends a number already used is refused, so the claim shows in
the audit log. A terminal that has once sent a numbered message must number all the following
ones. Resending the last message (same ``seq`` and same ``id``) passes through, and the server
answers it with the first answer (``repeat: true``). The counters live in the server process; a
terminal's first numbered message after a restart starts its sequence anew.

``hello`` and ``ping`` are not numbered.
"""

from __future__ import annotations

import weakref
from typing import Any

from tablejack.server.floor import Connection, Floor
from tablejack.server.table import RefusedError

__all__ = ["SEQUENCE_RULE", "check_sequence"]

SEQUENCE_RULE = "message sequence"

_LAST: weakref.WeakKeyDictionary[Floor, dict[str, tuple[int, str | None]]] = (
    weakref.WeakKeyDictionary()
)


def check_sequence(floor: Floor, connection: Connection, message: Any) -> None:
    """Accept the message's sequence number, or raise :class:`RefusedError`."""
    seq: int | None = getattr(message, "seq", None)
    command_id: str | None = getattr(message, "id", None)
    counters = _LAST.setdefault(floor, {})
    last = counters.get(connection.terminal)
    if seq is None:
        if last is not None:
            raise RefusedError(
                "sequence",
                f"Terminal {connection.terminal} numbers its messages; this one has no seq.",
                SEQUENCE_RULE,
            )
        return
    if last is None or seq == last[0] + 1:
        counters[connection.terminal] = (seq, command_id)
        return
    if seq == last[0] and command_id is not None and command_id == last[1]:
        return  # a resend of the last message: answered with its first answer
    what = "repeats" if seq <= last[0] else "skips ahead of"
    raise RefusedError(
        "sequence",
        f"Message {seq} of terminal {connection.terminal} {what} its sequence (last {last[0]}).",
        SEQUENCE_RULE,
    )
