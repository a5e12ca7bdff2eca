"""Signing a WebSocket in: the hello's credential (or the page's session cookie), and for a
player the terminal that proves who it is.

* A player's socket is bound to an authenticated terminal: the hello carries the terminal's id
  and its device credential (``terminal_key``), or the player's session was opened at that
  terminal (the page's cookie). A terminal id without its credential is refused.
* Staff (dealer, supervisor, cashier, operator) sign in with their own credential; the name of
  their console is only a label, and may not be a registered terminal's id.
* A socket signed in by cookie must come from a page of this server (its ``Origin`` is this
  host): another site cannot open a socket with the cookie (cross-site WebSocket hijacking).
* The socket's session — a cookie session, or a new one per hello — owns its message sequence
  numbers (:mod:`tablejack.server.socket.sequence`).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from tablejack.server.floor.floor import Connection, Floor
from tablejack.server.support.auth import SESSION_COOKIE, Auth, AuthRefusedError
from tablejack.server.support.protocol import Hello
from tablejack.store.policy import Role
from tablejack.store.vouchers import terminal as terminal_row

__all__ = ["sign_in"]


def _same_origin(headers: Mapping[str, str]) -> bool:
    origin = headers.get("origin")
    if origin is None:  # not a browser: no cookie jar to abuse
        return True
    return urlsplit(origin).netloc == headers.get("host", "")


async def sign_in(
    floor: Floor, hello: Hello, cookies: Mapping[str, str], headers: Mapping[str, str]
) -> Connection:
    """The connection a hello opens, or :class:`AuthRefusedError`."""
    token = hello.token
    session: str | None = None
    if token is None:
        token = cookies.get(SESSION_COOKIE)
        if not token:
            raise AuthRefusedError(
                "auth", "A hello carries a token, or the page signs in first (POST /api/session)."
            )
        if not _same_origin(headers):
            raise AuthRefusedError(
                "origin", "A session cookie is accepted only from this server's own pages."
            )
    principal = await floor.auth.authenticate(token, fresh=True)  # alive in the database now
    if principal is None:
        raise AuthRefusedError("auth", "Unknown, expired or revoked credential.")
    if hello.token is None:  # a page's session: its numbering survives a reconnect
        session = principal.credential
    if principal.role == Role.TERMINAL.value:
        raise AuthRefusedError(
            "role", "A terminal's device credential signs a player in; it does not play."
        )
    if principal.role == Role.PLAYER.value:
        if principal.terminal:  # a session opened at a terminal
            if hello.terminal not in (None, principal.terminal):
                raise AuthRefusedError(
                    "terminal",
                    f"This session belongs to terminal {principal.terminal}, not {hello.terminal}.",
                )
            binding = await floor.auth.binding(principal.terminal)
            session = principal.credential
            device = None
        else:
            if not hello.terminal:
                raise AuthRefusedError(
                    "terminal", "A player signs in at a terminal: name it and its credential."
                )
            binding, device = await floor.auth.terminal(hello.terminal, hello.terminal_key)
            session = Auth.session_key()
        return Connection(
            "player",
            principal.subject,
            binding.terminal,
            principal=principal,
            session=session,
            binding=binding,
            device=device,
        )
    label = hello.terminal or "console"
    if await terminal_row(floor.store, label) is not None:
        raise AuthRefusedError(
            "terminal",
            f"{label} is a registered terminal; a {principal.role}'s console is not a terminal.",
        )
    return Connection(
        principal.role,
        principal.subject,
        label,
        principal=principal,
        session=session or Auth.session_key(),
    )
