"""The REST API of trust: signing in (sessions in an HttpOnly cookie), enrolling a browser
terminal, credentials (issue, list, revoke), the cage's own movements, and the signed
checkpoints — plus the task that takes the checkpoints while the server runs.

* ``POST /api/session`` signs a person in: the token in the body (never a URL); a player also
  proves the terminal (its device cookie, or ``terminal`` and ``terminal_key`` in the body).
  The answer sets the session cookie (HttpOnly, SameSite=Strict, Secure over TLS) holding a new
  session credential that expires with the role's session lifetime and ends when the token it
  was opened with is revoked; a player's also ends when the terminal's key is replaced or the
  terminal retired. ``DELETE /api/session`` signs out (the session is revoked, and the sockets
  it signed in are closed at once).
* ``POST /api/terminal/enrol`` stores a terminal's device credential in the browser that is the
  terminal (an HttpOnly cookie), so players can sign in there.
* ``/api/tokens``: the operator issues credentials (the secret is in the answer, once); a
  supervisor or the operator lists and revokes them. A revocation closes the sockets that use
  the credential (or its terminal) at once.
* ``/api/cage/…``: the cashier opens game accounts, sells credit and pays vouchers; a credit
  above the floor's ``credit_approval_limit`` waits for a supervisor's approval (202, the
  request in the answer; :mod:`tablejack.store.approvals`).
* ``/api/checkpoints``: the signed checkpoints; a supervisor or the operator may take one now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import Field

from tablejack.server.floor.floor import Floor
from tablejack.server.http.access import (
    Strict,
    Who,
    floor_of,
    floor_refusal,
    need,
    refuse,
    set_cookie,
)
from tablejack.server.support.auth import DEVICE_COOKIE, SESSION_COOKIE, AuthRefusedError
from tablejack.server.support.contract import Limit, Whole
from tablejack.server.support.text import REFUSE_CONTROL_CHARACTERS, SafeText
from tablejack.store import StoreError, approvals
from tablejack.store import credentials as creds
from tablejack.store.checkpoints import Checkpointer, newest_checkpoints
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import FloorRefusedError, pay_voucher, refusal_of

__all__ = ["CheckpointSettings", "router", "run_checkpoints"]

log = logging.getLogger("tablejack.server")

ACCESS_RULE = "PA 605a.4(d)"
NAME = r"^[A-Za-z0-9_.@:-]{1,64}$"


@dataclass(frozen=True)
class CheckpointSettings:
    """Where the checkpoint key and the append-only checkpoint file are, and how often a
    checkpoint is taken: every ``seconds`` and every ``events`` events written."""

    key: Path
    file: Path | None = None
    seconds: float = 5.0
    events: int = 1000


async def run_checkpoints(
    floor: Floor,
    checkpointer: Checkpointer,
    every: CheckpointSettings,
    stop: asyncio.Event | None = None,
) -> None:
    """Take a checkpoint every ``seconds``, after every ``events`` events, and at the close of
    each gaming day, until ``stop`` is set: a checkpoint being written then is finished first.
    (Cancelled in the middle of a write instead, its transaction could be left holding
    SQLite's write lock, and the shutdown's own checkpoint would wait on it and fail.)"""
    from tablejack.store.meters_report import gaming_day_of
    from tablejack.store.settings import floor_settings

    store = floor.store
    due = asyncio.Event()
    mark = store.events_written

    def after(written: int) -> None:
        if written - mark >= every.events:
            due.set()

    store.after_write = after
    hour = int((await floor_settings(store))["gaming_day_start_hour"])
    day = gaming_day_of(floor.now_us(), hour)
    stop = stop or asyncio.Event()
    stopping = asyncio.ensure_future(stop.wait())
    stopping.add_done_callback(lambda _: due.set())  # wakes the wait below
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(due.wait(), every.seconds)
        if stop.is_set():
            break
        reason = "events" if due.is_set() else "interval"
        due.clear()
        mark = store.events_written
        try:
            hour = int((await floor_settings(store))["gaming_day_start_hour"])
            today = gaming_day_of(floor.now_us(), hour)
            closing = today != day
            await checkpointer.checkpoint("gaming_day_close" if closing else reason, force=closing)
            day = today
        except Exception:  # the database is away: the next turn tries again
            log.exception("a checkpoint failed; the next one covers what it missed")
    stopping.cancel()


class SignIn(Strict):
    """A sign-in: the person's token, and for a player the terminal (unless this browser is an
    enrolled terminal)."""

    token: SafeText = Field(min_length=1, max_length=128)
    terminal: Annotated[str, Field(pattern=NAME), REFUSE_CONTROL_CHARACTERS] | None = None
    terminal_key: SafeText | None = Field(default=None, min_length=1, max_length=128)


class Enrol(Strict):
    """A browser becomes a registered terminal."""

    terminal: SafeText = Field(pattern=NAME)
    terminal_key: SafeText = Field(min_length=1, max_length=128)


class TokenBody(Strict):
    """A credential to issue."""

    role: SafeText = Field(pattern=r"^(player|dealer|supervisor|cashier|operator)$")
    subject: SafeText = Field(pattern=NAME)
    lifetime_s: Whole | None = Field(default=None, ge=60, le=5 * 365 * 86400)
    label: SafeText = Field(default="", max_length=64)


class AccountBody(Strict):
    """A player's game account to open at the cage."""

    player: SafeText = Field(pattern=r"^[A-Za-z0-9_.@-]{1,64}$")
    name: SafeText = Field(default="", max_length=128)


class CreditBody(Strict):
    """Credit sold at the cage for cash."""

    account: SafeText = Field(pattern=r"^[A-Za-z0-9_.@:-]{1,64}$")
    amount: Whole = Field(gt=0, le=10**11)


class VoucherBody(Strict):
    """A voucher presented at the cage."""

    code: SafeText = Field(min_length=1, max_length=40, pattern=r"^[0-9 -]+$")


router = APIRouter()


@router.post("/api/session")
async def sign_in(request: Request, response: Response, body: SignIn) -> dict[str, Any]:
    """Sign in: a session cookie for a person (a player: at a terminal)."""
    floor = floor_of(request)
    principal = await floor.auth.authenticate(body.token, fresh=True)
    if principal is None or principal.role == Role.TERMINAL.value:
        raise await refuse(
            request, None, "auth", "Unknown, expired or revoked token.", ACCESS_RULE, 401
        )
    parent = await creds.lookup(floor.store, body.token)
    assert parent is not None
    if parent.parent is not None:
        raise await refuse(
            request,
            principal,
            "auth",
            "Sign in with your own token; a session does not open another.",
            ACCESS_RULE,
            401,
        )
    terminal: str | None = None
    proved: creds.Credential | None = None
    if principal.role == Role.PLAYER.value:
        terminal = principal.terminal or body.terminal
        key = body.terminal_key or request.cookies.get(DEVICE_COOKIE)
        if body.terminal is None and body.terminal_key is None and key is not None:
            device = await floor.auth.authenticate(key)
            terminal = device.subject if device is not None else None
        try:
            if terminal is None:
                raise AuthRefusedError(
                    "terminal", "A player signs in at a terminal (this browser is not one)."
                )
            _, proof = await floor.auth.terminal(terminal, key)
        except AuthRefusedError as refusal:
            raise await refuse(
                request, principal, refusal.code, refusal.message, refusal.rule
            ) from None
        proved = await creds.credential_by_id(floor.store, proof.credential)
    try:  # a player's session names the key that proved its terminal: it ends with that key
        session = await creds.open_session(
            floor.store, parent, terminal=terminal, by=principal.actor(), device=proved
        )
    except StoreError as error:  # the key replaced meanwhile
        raise await refuse(request, principal, "terminal", str(error), ACCESS_RULE) from None
    set_cookie(request, response, SESSION_COOKIE, session.token, session.credential.expires_us)
    return {
        "role": principal.role,
        "subject": principal.subject,
        "terminal": terminal,
        "session": session.credential.id,
        "expires_us": session.credential.expires_us,
    }


@router.delete("/api/session")
async def sign_out(request: Request, response: Response) -> dict[str, Any]:
    """Sign out: the session is revoked, the sockets it signed in are closed at once and its
    cookie is cleared."""
    floor = floor_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    revoked: list[str] = []
    closed = 0
    if token:
        found = await creds.lookup(floor.store, token)
        if found is not None and found.parent is not None:
            by = Actor(Role(found.role), found.subject, found.terminal or "")
            revoked, closed = await floor.auth.revoke(
                found.id, by=by, why="Signed out; sign in again."
            )
    response.delete_cookie(SESSION_COOKIE, path="/")
    return {"ok": True, "revoked": revoked, "closed_sockets": closed}


@router.post("/api/terminal/enrol")
async def enrol(request: Request, response: Response, body: Enrol) -> dict[str, Any]:
    """This browser becomes terminal ``terminal`` (its device credential in an HttpOnly
    cookie)."""
    floor = floor_of(request)
    try:
        binding, device = await floor.auth.terminal(body.terminal, body.terminal_key)
    except AuthRefusedError as refusal:
        raise await refuse(
            request, None, refusal.code, refusal.message, refusal.rule, 401
        ) from None
    set_cookie(request, response, DEVICE_COOKIE, body.terminal_key, device.expires_us)
    return {"terminal": binding.terminal, "table": binding.table, "position": binding.position}


@router.get("/api/terminal")
async def this_terminal(request: Request) -> dict[str, Any]:
    """The terminal this browser is enrolled as (404: none)."""
    floor = floor_of(request)
    key = request.cookies.get(DEVICE_COOKIE)
    device = None if key is None else await floor.auth.authenticate(key, fresh=True)
    if device is None or device.role != Role.TERMINAL.value:
        raise HTTPException(404, "This browser is not an enrolled terminal.")
    binding = await floor.auth.binding(device.subject)
    return {"terminal": binding.terminal, "table": binding.table, "position": binding.position}


@router.post("/api/tokens")
async def issue_token(request: Request, body: TokenBody, who: Who) -> dict[str, Any]:
    """Issue a credential (operator); the secret is in this answer only."""
    floor = floor_of(request)
    await need(request, who, "issue_token")
    if body.role == "player" and await floor.store.balance(body.subject) is None:
        raise HTTPException(404, f"No game account {body.subject!r}; the cage opens it first.")
    try:
        issued = await creds.issue(
            floor.store,
            body.role,
            body.subject,
            by=who.actor(),
            lifetime_s=body.lifetime_s,
            label=body.label,
        )
    except StoreError as error:
        raise await refuse(request, who, "invalid", str(error), ACCESS_RULE, 409) from None
    await floor.store.audit(
        "token",
        f"issued {issued.credential.id} ({body.role} {body.subject})",
        actor=who.subject,
    )
    return {"token": issued.token, **issued.credential.to_json()}


@router.get("/api/tokens")
async def list_tokens(
    request: Request, who: Who, role: str | None = None, subject: str | None = None
) -> list[dict[str, Any]]:
    """Credentials, newest first, without their secrets (supervisor, operator)."""
    await need(request, who, "read_tokens")
    found = await creds.credentials(floor_of(request).store, role=role, subject=subject)
    return [c.to_json() for c in found]


@router.post("/api/tokens/{credential_id}/revoke")
async def revoke_token(request: Request, credential_id: str, who: Who) -> dict[str, Any]:
    """Revoke a credential and its sessions (supervisor, operator); its sockets close."""
    floor = floor_of(request)
    await need(request, who, "revoke_token")
    found = await creds.credential_by_id(floor.store, credential_id)
    if found is None:
        raise HTTPException(404, f"No credential {credential_id!r}.")
    ids, closed = await floor.auth.revoke(credential_id, by=who.actor())
    await floor.store.audit(
        "revoke",
        f"revoked {', '.join(ids) or credential_id} ({found.role} {found.subject}); "
        f"{closed} socket(s) closed",
        actor=who.subject,
        rule=ACCESS_RULE,
    )
    return {"revoked": ids, "closed_sockets": closed}


CAGE_REFUSED: dict[int | str, dict[str, Any]] = {
    400: {"description": "A token in the URL (refused and audited)."},
    401: {"description": "No credential, or one unknown, expired or revoked."},
    403: {"description": "The role may not (refused and audited)."},
    409: {"description": "Refused by the rule it names (audited); nothing moved."},
    422: {"description": "The body is not valid."},
}


@router.post("/api/cage/players", responses=CAGE_REFUSED)
async def open_account(request: Request, body: AccountBody, who: Who) -> dict[str, Any]:
    """Open a player's game account (cashier)."""
    floor = floor_of(request)
    await need(request, who, "sell_credit")
    try:
        created = await floor.store.ensure_account(body.player, "player", body.name)
    except StoreError as error:  # a name of another kind of account (vouchers, cage …)
        refusal = refusal_of(error)
        raise await refuse(request, who, refusal.code, refusal.message, refusal.rule, 409) from None
    floor.balances.setdefault(body.player, await floor.store.balance(body.player) or 0)
    return {"account": body.player, "created": created}


@router.post(
    "/api/cage/credit",
    responses={
        **CAGE_REFUSED,
        202: {"description": "Above the credit approval limit: a request waits for a supervisor."},
    },
)
async def sell_credit(
    request: Request, response: Response, body: CreditBody, who: Who
) -> dict[str, Any]:
    """Credit sold for cash at the cage (cashier): cage → the player's game account. Above the
    floor's ``credit_approval_limit`` nothing moves: the answer (202) is the pending request a
    supervisor other than the cashier approves or refuses (``/api/cage/approvals``)."""
    floor = floor_of(request)
    await need(request, who, "sell_credit")
    try:
        if await approvals.credit_needs_approval(floor.store, body.amount):
            asked = await approvals.request(
                floor.store, "credit", body.amount, actor=who.actor(), account=body.account
            )
            response.status_code = 202
            return {"ok": True, "pending": True, "request": asked.to_json()}
        record = await floor.store.fund(
            body.account, body.amount, "credit sold at the cage", actor=who.actor()
        )
    except FloorRefusedError as refused:
        raise floor_refusal(refused) from None
    except StoreError as error:
        refusal = refusal_of(error)
        raise await refuse(request, who, refusal.code, refusal.message, refusal.rule, 409) from None
    if body.account in floor.balances:
        floor.balances[body.account] += body.amount
    return {"ok": True, "log": record.round_id, "seq": record.seq, "amount": body.amount}


@router.post("/api/cage/vouchers", responses=CAGE_REFUSED)
async def cash_voucher(request: Request, body: VoucherBody, who: Who) -> dict[str, Any]:
    """A voucher cashed at the cage (cashier), once."""
    floor = floor_of(request)
    await need(request, who, "voucher_paid")
    try:
        movement = await pay_voucher(floor.store, body.code, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return movement.to_json()


@router.get("/api/checkpoints")
async def checkpoints(request: Request, who: Who, limit: Limit = 20) -> dict[str, Any]:
    """The newest signed checkpoints (supervisor, operator)."""
    await need(request, who, "verify_log")
    rows = await newest_checkpoints(floor_of(request).store, max(1, min(limit, 500)))
    checkpointer: Checkpointer | None = request.app.state.checkpointer
    return {
        "key_id": None if checkpointer is None else checkpointer.key_id,
        "checkpoints": rows,
    }


@router.post("/api/checkpoints")
async def checkpoint_now(request: Request, who: Who) -> dict[str, Any]:
    """Take a checkpoint now (supervisor, operator)."""
    await need(request, who, "verify_log")
    checkpointer: Checkpointer | None = request.app.state.checkpointer
    if checkpointer is None:
        raise HTTPException(409, "This server has no checkpoint key (docs/security.md).")
    made = await checkpointer.checkpoint("manual", force=True)
    return {"checkpoint": None if made is None else made.to_json()}
