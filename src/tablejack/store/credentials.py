"""Credentials: people's tokens, terminals' device credentials and the sessions opened with
them — hashed at rest, with a lifetime, revocable.

A credential is a random secret shown once, when it is issued; the store keeps only its SHA-256
(``credentials.token_hash``) beside a public id (``cr-…``) by which it is listed and revoked.
Every credential has a role (:class:`tablejack.store.policy.Role`), a subject (the player's
account, the employee, the terminal), an expiry (``expires_us``: the role's lifetime, see
:data:`DEFAULT_LIFETIMES` and the floor setting ``token_lifetimes``) and, once revoked, the time
and who revoked it. A *session* is a credential opened with another (``parent``): a player signed
in at a terminal (bound to that terminal), or a person signed in on a page; revoking the parent
ends its sessions, and a session never outlives its parent. A player's session at a terminal
also names the terminal's device credential that proved the terminal (``device``: the
terminal's key generation): it lives only while that credential is valid and the terminal is
active, so replacing the terminal's key or retiring the terminal ends it (:func:`living`, the
one test of a credential's life that every request and every open socket goes through).

Issuing and revoking are events of the credentials log (:data:`AUTH_LOG`), chained and covered
by the signed checkpoints like every other log, so ``verify-log`` finds a credential row that
no event issued (one written into the database behind the server's back).

>>> token_hash("tok-ann")[:16]
'8be15d835bd98e22'
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select, update

from tablejack.store.db import EventIn, Store, StoreError, now_us
from tablejack.store.floor_models import TERMINALS
from tablejack.store.models import CREDENTIALS
from tablejack.store.policy import Actor, Role
from tablejack.store.settings import floor_settings

__all__ = [
    "AUTH_LOG",
    "DEFAULT_LIFETIMES",
    "SESSION_LIFETIME_S",
    "Credential",
    "Issued",
    "alive",
    "credential_by_id",
    "credentials",
    "issue",
    "lifetimes",
    "living",
    "lookup",
    "open_session",
    "revoke",
    "revoked_since",
    "still_valid",
    "terminal_keys",
    "token_hash",
]

AUTH_LOG = "auth:credentials"
"""The log of every credential issued and revoked."""
DAY_S = 24 * 3600
DEFAULT_LIFETIMES: dict[str, int] = {
    Role.PLAYER.value: 365 * DAY_S,
    Role.DEALER.value: 30 * DAY_S,
    Role.SUPERVISOR.value: 30 * DAY_S,
    Role.CASHIER.value: 30 * DAY_S,
    Role.OPERATOR.value: 30 * DAY_S,
    Role.TERMINAL.value: 365 * DAY_S,
}
"""How long a credential of each role lives (seconds) unless the floor setting
``token_lifetimes`` says otherwise: a player's card a year, staff tokens 30 days (re-issued with
the roster), a terminal's device credential a year."""
SESSION_LIFETIME_S = 12 * 3600
"""A session (a sign-in at a terminal or on a page) lives 12 hours, never past its parent; the
floor setting ``session_lifetime_s`` changes it."""
TOKEN_RULE = "PA 605a.4(d)"
"""The clause of the system's access controls."""


def token_hash(token: str) -> str:
    """The SHA-256 (hex) the store keeps of a secret."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Credential:
    """A credential as stored (never the secret)."""

    id: str
    role: str
    subject: str
    terminal: str | None
    parent: str | None
    label: str
    created_us: int
    expires_us: int
    revoked_us: int | None
    revoked_by: str | None
    device: str | None = None
    """The device credential (key generation) that proved a session's terminal."""

    def valid_at(self, at_us: int) -> bool:
        """Neither expired nor revoked at ``at_us``."""
        return self.revoked_us is None and at_us < self.expires_us

    def to_json(self) -> dict[str, Any]:
        """Plain data for the API (no secret, no hash)."""
        return {
            "id": self.id,
            "role": self.role,
            "subject": self.subject,
            "terminal": self.terminal,
            "parent": self.parent,
            "label": self.label,
            "created_us": self.created_us,
            "expires_us": self.expires_us,
            "revoked_us": self.revoked_us,
            "revoked_by": self.revoked_by,
            "device": self.device,
        }


@dataclass(frozen=True, slots=True)
class Issued:
    """A credential just issued: the secret (shown once) and its record."""

    token: str
    credential: Credential


def _credential(row: Any) -> Credential:
    return Credential(
        row["id"],
        row["role"],
        row["subject"],
        row["terminal"],
        row["parent"],
        row["label"],
        int(row["created_us"]),
        int(row["expires_us"]),
        None if row["revoked_us"] is None else int(row["revoked_us"]),
        row["revoked_by"],
        row["device"],
    )


async def lifetimes(store: Store) -> tuple[dict[str, int], int]:
    """The lifetime of each role's credentials and of a session (seconds)."""
    settings = await floor_settings(store)
    return (
        {**DEFAULT_LIFETIMES, **dict(settings.get("token_lifetimes") or {})},
        int(settings.get("session_lifetime_s") or SESSION_LIFETIME_S),
    )


async def issue(
    store: Store,
    role: str,
    subject: str,
    *,
    by: Actor,
    token: str | None = None,
    lifetime_s: int | None = None,
    terminal: str | None = None,
    parent: Credential | None = None,
    device: Credential | None = None,
    label: str = "",
) -> Issued:
    """Issue a credential of ``role`` for ``subject`` (a new random secret unless ``token`` is
    given, as the demo and tests do). Issuing a token already held by the same role and subject
    renews its expiry; a revoked one is never renewed."""
    try:
        chosen = Role(role)
    except ValueError:
        raise StoreError(
            f"Unknown role {role!r}; the roles are {', '.join(r.value for r in Role)}."
        ) from None
    if chosen is Role.TABLE:
        raise StoreError("A table's runtime holds no credential.")
    secret = token or f"tj_{secrets.token_urlsafe(32)}"
    digest = token_hash(secret)
    roles, session_s = await lifetimes(store)
    now = now_us()
    seconds = (
        lifetime_s
        if lifetime_s is not None
        else (session_s if parent is not None else int(roles[chosen.value]))
    )
    expires = now + int(seconds) * 1_000_000
    if parent is not None:
        expires = min(expires, parent.expires_us)
    if device is not None:
        expires = min(expires, device.expires_us)
    existing = await lookup(store, secret)
    if existing is not None:
        if (existing.role, existing.subject) != (chosen.value, subject):
            raise StoreError("That token is already issued to someone else; choose another.")
        if existing.revoked_us is not None:
            raise StoreError(f"Credential {existing.id} was revoked; issue a new one.")
        async with store.transaction() as connection:
            await connection.execute(
                update(CREDENTIALS)
                .where(CREDENTIALS.c.id == existing.id)
                .values(expires_us=expires)
            )
        await _log(
            store,
            "renewed",
            existing.id,
            digest,
            chosen.value,
            subject,
            expires,
            by,
            bound={"terminal": existing.terminal},
        )
        renewed = await credential_by_id(store, existing.id)
        assert renewed is not None
        return Issued(secret, renewed)
    credential_id = f"cr-{secrets.token_hex(8)}"
    row = {
        "id": credential_id,
        "token_hash": digest,
        "role": chosen.value,
        "subject": subject[:64],
        "terminal": terminal,
        "parent": None if parent is None else parent.id,
        "label": label[:64],
        "created_us": now,
        "expires_us": expires,
        "revoked_us": None,
        "revoked_by": None,
        "device": None if device is None else device.id,
    }
    async with store.transaction() as connection:
        await connection.execute(CREDENTIALS.insert().values(**row))
    await _log(
        store,
        "issued",
        credential_id,
        digest,
        chosen.value,
        subject,
        expires,
        by,
        bound={"terminal": terminal, "parent": row["parent"], "device": row["device"]},
    )
    return Issued(secret, _credential(row))


async def _log(
    store: Store,
    what: str,
    credential_id: str,
    digest: str,
    role: str,
    subject: str,
    expires_us: int,
    by: Actor,
    bound: dict[str, Any] | None = None,
) -> None:
    """``bound``: what an issued credential is bound to (its terminal, the credential a
    session was opened with, the device credential that proved the terminal), so that
    ``verify-log`` finds a row rebound behind the server's back."""
    await store.commit_logged(
        AUTH_LOG,
        EventIn(
            f"credential_{what}",
            {
                "credential": credential_id,
                "token_sha256": digest,
                "role": role,
                "subject": subject,
                "expires_us": expires_us,
                "by": by.describe(),
                **(bound or {}),
            },
            actor=by.subject,
            terminal=by.terminal,
        ),
        [],
        None,
        owner="auth",
        log_kind="auth",
    )


async def open_session(
    store: Store,
    parent: Credential,
    *,
    terminal: str | None,
    by: Actor,
    device: Credential | None = None,
) -> Issued:
    """A session opened with ``parent``; a player's at a terminal is bound to ``terminal`` and
    to ``device``, the terminal's device credential that proved it (required: a session at a
    terminal never outlives the key that proved the terminal)."""
    proven = device is not None and (device.role, device.subject) == (Role.TERMINAL.value, terminal)
    if terminal is not None and parent.role == Role.PLAYER.value and not proven:
        raise StoreError(
            f"A player's session at terminal {terminal!r} is opened with that terminal's "
            f"device credential ({TOKEN_RULE})."
        )
    return await issue(
        store,
        parent.role,
        parent.subject,
        by=by,
        terminal=terminal,
        parent=parent,
        device=device,
        label="session",
    )


async def lookup(store: Store, token: str) -> Credential | None:
    """The credential of a secret (valid or not), or None."""
    async with store.engine.connect() as connection:
        row = (
            (
                await connection.execute(
                    select(CREDENTIALS).where(CREDENTIALS.c.token_hash == token_hash(token))
                )
            )
            .mappings()
            .first()
        )
    return None if row is None else _credential(row)


async def credential_by_id(store: Store, credential_id: str) -> Credential | None:
    """A credential by its public id."""
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(CREDENTIALS).where(CREDENTIALS.c.id == credential_id)))
            .mappings()
            .first()
        )
    return None if row is None else _credential(row)


async def credentials(
    store: Store, *, role: str | None = None, subject: str | None = None, limit: int = 500
) -> list[Credential]:
    """Credentials, newest first."""
    statement = select(CREDENTIALS).order_by(CREDENTIALS.c.created_us.desc()).limit(limit)
    if role is not None:
        statement = statement.where(CREDENTIALS.c.role == role)
    if subject is not None:
        statement = statement.where(CREDENTIALS.c.subject == subject)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).mappings().all()
    return [_credential(row) for row in rows]


async def terminal_keys(store: Store, at_us: int) -> dict[str, Credential]:
    """Each terminal's device credential valid at ``at_us`` (neither revoked nor expired; the
    newest when there are several), by terminal: a terminal not in it has no key it can sign
    players in with (never issued, revoked, or expired)."""
    statement = (
        select(CREDENTIALS)
        .where(
            (CREDENTIALS.c.role == Role.TERMINAL.value)
            & CREDENTIALS.c.revoked_us.is_(None)
            & (CREDENTIALS.c.expires_us > at_us)
        )
        .order_by(CREDENTIALS.c.created_us)
    )
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).mappings().all()
    return {str(row["subject"]): _credential(row) for row in rows}


async def revoke(store: Store, credential_id: str, *, by: Actor) -> list[str]:
    """Revoke a credential and every session opened with it; the ids revoked (none: it was
    already revoked or does not exist)."""
    found = await credential_by_id(store, credential_id)
    if found is None or found.revoked_us is not None:
        return []
    now = now_us()
    async with store.transaction() as connection:
        children = [
            row[0]
            for row in (
                await connection.execute(
                    select(CREDENTIALS.c.id).where(
                        (CREDENTIALS.c.parent == credential_id) & CREDENTIALS.c.revoked_us.is_(None)
                    )
                )
            ).all()
        ]
        ids = [credential_id, *children]
        await connection.execute(
            update(CREDENTIALS)
            .where(CREDENTIALS.c.id.in_(ids) & CREDENTIALS.c.revoked_us.is_(None))
            .values(revoked_us=now, revoked_by=by.describe()[:64])
        )
    for revoked in ids:
        await store.commit_logged(
            AUTH_LOG,
            EventIn(
                "credential_revoked",
                {"credential": revoked, "by": by.describe(), "at_us": now},
                actor=by.subject,
                terminal=by.terminal,
            ),
            [],
            None,
            owner="auth",
            log_kind="auth",
        )
    return ids


async def revoked_since(store: Store, since_us: int) -> list[tuple[str, int, str]]:
    """``(token_hash, revoked_us, role)`` of the credentials revoked at or after ``since_us``
    (the server's revocation watch: a terminal's device credential revoked also ends the
    sessions it proved, which are not revoked themselves)."""
    async with store.engine.connect() as connection:
        rows = (
            await connection.execute(
                select(
                    CREDENTIALS.c.token_hash, CREDENTIALS.c.revoked_us, CREDENTIALS.c.role
                ).where(CREDENTIALS.c.revoked_us >= since_us)
            )
        ).all()
    return [(str(row[0]), int(row[1]), str(row[2])) for row in rows]


async def still_valid(store: Store, hashes: list[str], at_us: int) -> set[str]:
    """Which of ``hashes`` name a credential that is alive (:func:`living`)."""
    return set(await living(store, hashes, at_us))


def _living(at_us: int, *columns: Any) -> tuple[Any, Any]:
    """The credentials table as ``own`` and the statement of :func:`living`: each credential
    alive at ``at_us`` with its hash, its expiry, its parent's and its device credential's (and
    ``columns`` of ``own``, named by their names)."""
    own, parent, device = (
        CREDENTIALS.alias("own"),
        CREDENTIALS.alias("parent"),
        CREDENTIALS.alias("device"),
    )

    def valid(row: Any) -> Any:
        return row.c.revoked_us.is_(None) & (row.c.expires_us > at_us)

    at_terminal = own.c.terminal.is_not(None) & (own.c.role == Role.PLAYER.value)
    statement = (
        select(
            own.c.token_hash,
            own.c.expires_us,
            parent.c.expires_us,
            device.c.expires_us,
            *(own.c[name].label(f"own_{name}") for name in columns),
        )
        .select_from(
            own.outerjoin(parent, parent.c.id == own.c.parent)
            .outerjoin(device, device.c.id == own.c.device)
            .outerjoin(TERMINALS, TERMINALS.c.id == own.c.terminal)
        )
        .where(
            valid(own)
            & (own.c.parent.is_(None) | (parent.c.id.is_not(None) & valid(parent)))
            & or_(
                ~at_terminal & own.c.device.is_(None),
                at_terminal
                & device.c.id.is_not(None)
                & valid(device)
                & (device.c.role == Role.TERMINAL.value)
                & (device.c.subject == own.c.terminal),
            )
            & (own.c.terminal.is_(None) | (TERMINALS.c.status == "active"))
        )
    )
    return own, statement


async def alive(store: Store, token: str, at_us: int) -> tuple[Credential, int] | None:
    """The credential of a secret if it is alive at ``at_us`` (:func:`living`), with when it
    ends; None: unknown, or not alive. One query, where :func:`lookup` and :func:`living` are
    two (a hello asks it twice: the player's credential and the terminal's)."""
    names = [column.name for column in CREDENTIALS.columns]
    own, statement = _living(at_us, *names)
    async with store.engine.connect() as connection:
        row = (
            await connection.execute(statement.where(own.c.token_hash == token_hash(token)))
        ).first()
    if row is None:
        return None
    ends = [int(value) for value in row[1:4] if value is not None]
    return _credential(dict(zip(names, row[4:], strict=True))), min(ends)


async def living(store: Store, hashes: list[str], at_us: int) -> dict[str, int]:
    """Of ``hashes``, those of a credential alive at ``at_us``, each with when it ends (the
    earliest expiry of it, its parent and its device credential). Alive: the credential
    exists, is neither revoked nor expired; a session's parent too; a player's session at a
    terminal names the terminal's device credential that proved it, which is still valid
    (the key was not replaced) and still that terminal's; and a credential bound to a terminal
    (a session there, the terminal's own) needs the terminal registered and active. A
    credential deleted, or changed behind the server's back, is not alive.

    The one test of a credential's life: every REST request (:meth:`Auth.authenticate
    <tablejack.server.support.auth.Auth>`) and the revocation watch over the open sockets use it."""
    if not hashes:
        return {}
    own, statement = _living(at_us)
    found: dict[str, int] = {}
    async with store.engine.connect() as connection:
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            rows = (await connection.execute(statement.where(own.c.token_hash.in_(chunk)))).all()
            for row in rows:
                ends = [int(value) for value in row[1:] if value is not None]
                found[str(row[0])] = min(ends)
    return found
