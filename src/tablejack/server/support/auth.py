"""Who is asking: bearer credentials, sessions, terminals that prove who they are, and the
role each request needs.

* A request carries its credential in the ``Authorization: Bearer`` header, or — the pages —
  in the HttpOnly, SameSite=Strict cookie :data:`SESSION_COOKIE` set by ``POST /api/session``.
  A token in a URL (``?token=``) is refused: URLs end up in logs and browser history.
* A credential is alive while :func:`tablejack.store.credentials.living` says so: not revoked,
  not expired, its parent alive, and — a player's session at a terminal — the terminal's device
  credential that proved the terminal (its key generation) still valid and the terminal still
  active. Replacing the key or retiring the terminal ends the session.
* A REST request checks its credential in the database every time (a revocation is effective
  on the next request). A WebSocket checks it before every message against the process's view,
  which a revocation through this process updates at once, and which the revocation watch
  (:meth:`Auth.watch`, every :data:`WATCH_SECONDS`) updates with what changed elsewhere
  (``tablejack tokens revoke``, another process, the database).
* A credential that ends closes its open sockets without waiting for them to speak
  (:attr:`Auth.on_end`): at once when it ends through this process (signing out, a revocation,
  a key replaced, a terminal retired); within :data:`WATCH_SECONDS` when it is revoked elsewhere
  (a key replaced or a terminal retired revokes its device credential: every credential this
  process knows is then checked again) or expires; within two :data:`SWEEP_SECONDS` when it
  ends elsewhere without a revocation (a credential's or a terminal's row deleted or altered behind
  the server's back). Each turn of the watch reads the revocations since the last one and
  checks a slice of the credentials it knows, a sweep of them all taking :data:`SWEEP_SECONDS`:
  checking every credential of every socket every second grew with the floor
  (docs/security.md, "An identity that ends closes its sockets at once").
* A player plays at an electronic wagering terminal that proves itself: the hello names the
  terminal and carries its device credential (``terminal_key``), or the player's session is
  already bound to the terminal (a sign-in at the terminal). A terminal id without its
  credential is refused and audited. The terminal's registration binds it to its table and
  (seat games) its position.
* Every request's role is checked against :data:`tablejack.store.policy.PERMISSIONS`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import secrets
from collections.abc import Callable
from typing import Any, NamedTuple

from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.policy import PERMISSIONS, Actor, Role
from tablejack.store.vouchers import terminal as terminal_row

__all__ = [
    "ACCESS_RULE",
    "DEVICE_COOKIE",
    "SESSION_COOKIE",
    "SWEEP_SECONDS",
    "WATCH_SECONDS",
    "Auth",
    "AuthRefusedError",
    "Principal",
    "Revocation",
    "TerminalBinding",
]

log = logging.getLogger("tablejack.server")

SESSION_COOKIE = "tj_session"
"""The pages' session cookie (HttpOnly, SameSite=Strict; Secure over TLS)."""
DEVICE_COOKIE = "tj_device"
"""A browser terminal's device credential, set once when the terminal is enrolled."""
WATCH_SECONDS = 1.0
"""How often the revocation watch looks for credentials revoked or expired elsewhere."""
SWEEP_SECONDS = 5.0
"""How long the revocation watch takes to check every credential it knows against the
database, a slice at each turn (a credential that ends without a revocation)."""
ACCESS_RULE = "PA 605a.4(d)"


class AuthRefusedError(Exception):
    """A credential or terminal refused: ``code``, ``rule`` and a sentence."""

    def __init__(self, code: str, message: str, rule: str = ACCESS_RULE) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rule = rule


class Principal(NamedTuple):
    """Who a credential is: ``(role, subject)`` first (so ``who[0]``, ``who[1]`` read as
    before), the terminal a player's session is bound to, the credential's id and hash, and
    when it expires."""

    role: str
    subject: str
    terminal: str = ""
    credential: str = ""
    token_hash: str = ""
    expires_us: int = 0

    def actor(self, table: str = "") -> Actor:
        """The policy's actor of this principal."""
        return Actor(Role(self.role), self.subject, self.terminal, table)

    def may(self, operation: str) -> bool:
        """True when the role may do ``operation`` (:data:`PERMISSIONS`)."""
        return self.role in {r.value for r in PERMISSIONS[operation]}


class Revocation(NamedTuple):
    """A revocation: the credentials revoked (the one asked and its sessions) and how many open
    sockets it closed."""

    revoked: list[str]
    closed: int


ENDED = (
    "The credential of this session ended (revoked or expired, or its terminal's key was "
    "replaced or the terminal retired); sign in again."
)
"""Why a socket is closed when the revocation watch finds its credential ended."""


class TerminalBinding(NamedTuple):
    """A registered terminal's table and position (None: the player selects one)."""

    terminal: str
    table: str
    position: int | None


class Auth:
    """The floor's credentials as this process sees them."""

    def __init__(self, store: Store, now_us: Callable[[], int]) -> None:
        self.store = store
        self.now_us = now_us
        self._known: dict[str, Principal] = {}
        """Credentials seen valid, by their hash."""
        self._gone: set[str] = set()
        """Hashes revoked, expired or deleted since they were seen."""
        self._watched_us = now_us()
        self._seen_revoked: set[str] = set()
        """The revocations the last turn of the watch read (each is read again for 5 s)."""
        self._sweep: collections.deque[str] = collections.deque()
        """The credentials the watch's sweep has still to check, and its slice per turn."""
        self._slice = 0
        self._task: asyncio.Task[None] | None = None
        self._turn = asyncio.Lock()
        """One look at what ended at a time: a revocation and the watch's turn never interleave
        (else the watch could read the revocation just committed and close its sockets, and the
        revocation would report none closed)."""
        self.on_end: Callable[[set[str], str], int] | None = None
        """Closes the open sockets of credentials that ended, given their hashes and why; the
        number closed (set by the floor)."""

    async def authenticate(self, token: str, *, fresh: bool = False) -> Principal | None:
        """The principal of a valid credential (a session's parent valid too), or None.
        ``fresh``: ask the database even when this process knows the credential."""
        digest = creds.token_hash(token)
        now = self.now_us()
        if digest in self._gone:
            return None
        known = self._known.get(digest)
        if known is not None and not fresh:
            return known if now < known.expires_us else None
        found = await creds.alive(self.store, token, now)
        if found is None:
            if self._forget(digest):
                self._end({digest}, ENDED)
            return None
        credential, ends_us = found
        bound = credential.terminal if credential.role == Role.PLAYER.value else ""
        principal = Principal(
            credential.role, credential.subject, bound or "", credential.id, digest, ends_us
        )
        self._known[digest] = principal
        return principal

    def _forget(self, digest: str) -> bool:
        """Forget a credential that ended; True when this process knew it."""
        if self._known.pop(digest, None) is not None:
            self._gone.add(digest)
            return True
        return False

    def _end(self, digests: set[str], why: str) -> int:
        """Close the open sockets of ``digests`` (:attr:`on_end`); how many."""
        if not digests or self.on_end is None:
            return 0
        return self.on_end(digests, why)

    def valid(self, principal: Principal) -> bool:
        """Is the credential still good (per WebSocket message: no I/O)?"""
        return principal.token_hash not in self._gone and self.now_us() < principal.expires_us

    async def revoke(
        self,
        credential_id: str,
        *,
        by: Actor,
        why: str = "The credential of this session was revoked; sign in again.",
    ) -> Revocation:
        """Revoke a credential and its sessions; effective in this process at once: their
        open sockets (and those of sessions that lived by it) are closed, saying ``why``."""
        async with self._turn:
            ids = await creds.revoke(self.store, credential_id, by=by)
            ended = {d for d, p in self._known.items() if p.credential in ids}
            for digest in ended:
                self._forget(digest)
            closed = self._end(ended, why)
            return Revocation(ids, closed + await self._refresh(why, every=True))

    async def refresh(self, why: str = ENDED, *, every: bool = True) -> int:
        """Take in what changed: revocations since the last look, and any known credential
        that is no longer alive in the database (deleted, altered, expired, its terminal's key
        replaced or the terminal retired); their open sockets are closed, saying ``why``. The
        number of sockets closed.

        ``every``: check every credential known (a route that changed something, a
        revocation); else (the watch's turn) those expired by their known end, and a slice of
        the rest — every one once per :data:`SWEEP_SECONDS` — unless a terminal's device
        credential was revoked, which ends the sessions it proved (they are not revoked
        themselves: their parent is the player's credential): then every one."""
        async with self._turn:
            return await self._refresh(why, every=every)

    async def _refresh(self, why: str, *, every: bool) -> int:
        """:meth:`refresh`, the turn held."""
        now = self.now_us()
        since, self._watched_us = self._watched_us, now
        ended: set[str] = set()
        revoked = await creds.revoked_since(self.store, since - 5_000_000)
        for digest, _, _ in revoked:
            if self._forget(digest):
                ended.add(digest)
            self._gone.add(digest)
        devices = [  # a terminal's key replaced or the terminal retired, new since last turn
            digest
            for digest, _, role in revoked
            if role == Role.TERMINAL.value and digest not in self._seen_revoked
        ]
        self._seen_revoked = {digest for digest, _, _ in revoked}
        ended.update(
            digest
            for digest, principal in list(self._known.items())
            if principal.expires_us <= now and self._forget(digest)
        )
        checked = self._to_check(every or bool(devices))
        if checked:
            alive = await creds.living(self.store, checked, now)
            ended.update(
                digest for digest in checked if digest not in alive and self._forget(digest)
            )
        return self._end(ended, why)

    def _to_check(self, every: bool) -> list[str]:
        """The known credentials this turn checks against the database: all of them, or the
        next slice of the sweep — each sweep takes the credentials known when it starts, in
        slices over :data:`SWEEP_SECONDS`. What is first seen during the query is not judged."""
        if every:
            self._sweep.clear()
            return list(self._known)
        if not self._sweep:
            self._sweep.extend(self._known)
            self._slice = math.ceil(len(self._sweep) * WATCH_SECONDS / SWEEP_SECONDS)
        taken: list[str] = []
        while self._sweep and len(taken) < self._slice:
            digest = self._sweep.popleft()
            if digest in self._known:
                taken.append(digest)
        return taken

    def start(self) -> None:
        """Start the revocation watch."""
        if self._task is None:
            self._task = asyncio.create_task(self.watch())

    async def watch(self) -> None:
        """Every :data:`WATCH_SECONDS`: :meth:`refresh`."""
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                await self.refresh(every=False)
            except Exception:  # the database is away: the next look tries again
                log.exception("the revocation watch failed; it tries again")

    async def stop(self) -> None:
        """Stop the watch."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def terminal(self, terminal: str, key: str | None) -> tuple[TerminalBinding, Principal]:
        """The registration and device principal of a terminal that proved itself with its
        device credential, or :class:`AuthRefusedError`."""
        if not key:
            raise AuthRefusedError(
                "terminal",
                f"Terminal {terminal[:64]!r} presented no credential; a terminal proves who it "
                "is with its device credential (terminal_key).",
            )
        device = await self.authenticate(key, fresh=True)
        if device is None or device.role != Role.TERMINAL.value or device.subject != terminal:
            raise AuthRefusedError(
                "terminal",
                f"The credential presented is not terminal {terminal[:64]!r}'s.",
            )
        return await self.binding(terminal), device

    async def binding(self, terminal: str) -> TerminalBinding:
        """The table and position an active registered terminal is bound to."""
        row = await terminal_row(self.store, terminal)
        if row is None or row["status"] != "active":
            raise AuthRefusedError(
                "terminal", f"Terminal {terminal[:64]!r} is not an active registered terminal."
            )
        position = row.get("position")
        return TerminalBinding(
            terminal, str(row["table_id"]), None if position is None else int(position)
        )

    @staticmethod
    def session_key() -> str:
        """A new in-memory session (a hello that signs a player in at a terminal)."""
        return f"ws-{secrets.token_hex(8)}"


def bearer(headers: Any, cookies: Any) -> str | None:
    """The credential of a request: the Authorization header, else the session cookie."""
    header = str(headers.get("authorization", ""))
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    cookie = cookies.get(SESSION_COOKIE)
    return str(cookie) if cookie else None
