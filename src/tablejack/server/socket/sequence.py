"""Message sequence numbers of the terminal protocol: a terminal numbers its messages 1, 2,
3 … (field ``seq``); a gap or a repeat is refused (an ``error`` frame, code ``sequence``) and
audited, and the message is not applied.

The numbering belongs to the socket's **session**, never to a terminal id someone claims: a
session is opened by a sign-in that proved both the player and the terminal (a hello with the
terminal's device credential, or a session cookie bound to the terminal), so no one can use up
or disturb another's numbers. A page that reconnects with its session cookie goes on from its
last number; a hello that signs in anew starts a new session. A session that has once sent a
numbered message must number all the following ones. Resending the last message (same ``seq``
and same ``id``) passes through, and the server answers it with the first answer
(``repeat: true``). The counters live in the server process; a session's first numbered message
after a restart starts its sequence anew.

``hello`` and ``ping`` are not numbered.
"""

from __future__ import annotations

from typing import Any

from tablejack.server.floor.floor import Connection, Floor
from tablejack.server.table import RefusedError

__all__ = ["SEQUENCE_RULE", "check_sequence"]

SEQUENCE_RULE = "message sequence"
MAX_SESSIONS = 100_000
"""Sessions whose counters are kept (the oldest are forgotten first)."""


def check_sequence(floor: Floor, connection: Connection, message: Any) -> None:
    """Accept the message's sequence number, or raise :class:`RefusedError`."""
    seq: int | None = getattr(message, "seq", None)
    command_id: str | None = getattr(message, "id", None)
    counters = floor.sequences
    key = connection.session or f"socket-{id(connection)}"
    last = counters.get(key)
    if seq is None:
        if last is not None:
            raise RefusedError(
                "sequence",
                f"This session of terminal {connection.terminal} numbers its messages; this one "
                "has no seq.",
                SEQUENCE_RULE,
            )
        return
    if last is None or seq == last[0] + 1:
        if last is None and len(counters) >= MAX_SESSIONS:
            counters.pop(next(iter(counters)))
        counters[key] = (seq, command_id)
        return
    if seq == last[0] and command_id is not None and command_id == last[1]:
        return  # a resend of the last message: answered with its first answer
    what = "repeats" if seq <= last[0] else "skips ahead of"
    raise RefusedError(
        "sequence",
        f"Message {seq} of terminal {connection.terminal} {what} its session's sequence (last "
        f"{last[0]}).",
        SEQUENCE_RULE,
    )
