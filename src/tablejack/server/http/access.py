"""The REST API's access control: who a request is (:func:`identity`) and what its role may do
(:func:`need`), each refusal answered with the rule and written to the audit log.

Every router of :mod:`tablejack.server.http` imports these (and the pieces they share: the
terminal's name pattern, the signed-in player's check, the session cookie); none of them
imports another router (an import-linter contract, docs/architecture.md).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request, Response
from pydantic import BaseModel, ConfigDict

from tablejack.server.duties.floor_duties import FloorDuties
from tablejack.server.floor.floor import Floor
from tablejack.server.links import interface as links
from tablejack.server.socket.proxy import FORWARDED, caller_host, forward_request
from tablejack.server.support.auth import Principal, bearer
from tablejack.server.table import Table
from tablejack.store import StoreError
from tablejack.store.policy import PERMISSIONS, Role

__all__ = [
    "AT_LINK",
    "TERMINAL",
    "Strict",
    "Who",
    "at_link",
    "duties_of",
    "floor_of",
    "floor_refusal",
    "identity",
    "need",
    "refuse",
    "set_cookie",
    "signed_in_player",
    "table_of",
]

log = logging.getLogger("tablejack.server")

AT_LINK: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "The terminal's link to the casino system runs at another process of "
        "the floor that is stopped or does not answer: refused (host_link, audited), nothing "
        "moved (PA 605a.5(a))."
    }
}
"""The answer a route forwarded to the process of a terminal's link adds (:func:`at_link`)."""

TERMINAL = r"^[A-Za-z0-9_.:-]{1,58}$"
"""The pattern of a terminal's name in a request body."""


class Strict(BaseModel):
    """A request body: a field it does not define is refused (422), never ignored — a request
    cannot, say, name the account a movement should touch."""

    model_config = ConfigDict(extra="forbid")


def floor_of(request: Request) -> Floor:
    """The floor the app serves."""
    floor: Floor = request.app.state.floor
    return floor


def duties_of(request: Request) -> FloorDuties:
    """The duties of the floor the app serves (built with it, :mod:`tablejack.server.compose`)."""
    duties: FloorDuties = request.app.state.duties
    return duties


def table_of(request: Request, table_id: str) -> Table:
    """The floor's table ``table_id``; 404 when the floor has none."""
    table = floor_of(request).tables.get(table_id)
    if table is None:
        raise HTTPException(404, f"No table {table_id!r}.")
    return table


async def refuse(
    request: Request,
    who: Principal | None,
    code: str,
    message: str,
    rule: str,
    status: int = 403,
    *,
    lookup: bool = False,
) -> HTTPException:
    """Audit a refusal and the HTTP error that answers it. A refusal of someone authenticated
    is an audit row of its own; one before authentication (``who`` None) is counted, one row
    per code and window (:meth:`tablejack.server.socket.gate.Gate.unauthenticated`); so is a
    refused look-up (``lookup``: a number that names nothing) has its row, and the others of
    the same person and code within the window are counted in one more
    (:meth:`tablejack.server.socket.gate.Gate.refused_lookup`)."""
    gate = getattr(request.app.state, "gate", None)
    if who is None and gate is not None:
        gate.unauthenticated(request, code, message, rule)
    elif (
        lookup
        and who is not None
        and gate is not None
        and not gate.refused_lookup(request, who.subject, who.terminal, code, message, rule)
    ):
        pass  # counted: one row for the rest of the window
    else:
        await floor_of(request).store.audit(
            code,
            message,
            actor="" if who is None else who.subject,
            terminal="" if who is None else who.terminal,
            rule=rule,
        )
    return HTTPException(status, {"code": code, "rule": rule, "message": message})


async def identity(request: Request) -> Principal:
    """The principal of the request's credential (the Authorization header, or the session
    cookie), checked in the database. A token in the URL is refused, and so is a request by
    cookie whose ``Origin`` is not the host it was sent to (forwarded by another process of the
    floor: the host its caller sent it to there, :func:`~tablejack.server.socket.proxy.caller_host`)."""
    if "token" in request.query_params:
        raise await refuse(
            request,
            None,
            "token_in_url",
            "A token is never accepted in a URL (logs and browser history keep URLs); send it "
            "in the Authorization header or sign in (POST /api/session).",
            "PA 605a.4(d)",
            400,
        )
    token = bearer(request.headers, request.cookies)
    if not token:
        raise HTTPException(401, "A bearer token or a session is required.")
    origin = request.headers.get("origin")
    by_cookie = "authorization" not in request.headers
    if by_cookie and origin is not None and urlsplit(origin).netloc != caller_host(request):
        raise await refuse(
            request,
            None,
            "origin",
            "A session cookie is accepted only from this server's own pages.",
            "PA 605a.4(d)",
        )
    found = await floor_of(request).auth.authenticate(token, fresh=True)
    if found is None:
        raise HTTPException(
            401,
            "Unknown, expired or revoked credential (a session also ends when its terminal's "
            "key is replaced or the terminal retired); sign in again.",
        )
    if found.role == Role.TERMINAL.value:
        raise await refuse(
            request,
            found,
            "role",
            "A terminal's device credential signs players in; it makes no request of its own.",
            "PA 605a.4(d)",
        )
    return found


Who = Annotated[Principal, Depends(identity)]


def _names(operation: str) -> str:
    roles = [r.value for r in Role if r in PERMISSIONS[operation]]
    return roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " or " + roles[-1]


async def need(request: Request, who: Principal, operation: str) -> str:
    """The caller's subject when its role may do ``operation``; else refused (403) and audited."""
    if who.may(operation):
        return who.subject
    what = operation.replace("_", " ")
    raise await refuse(
        request,
        who,
        "role",
        f"The {who.role} role may not {what}; it needs {_names(operation)} (least privilege).",
        f"role: {'/'.join(r.value for r in Role if r in PERMISSIONS[operation])}",
    )


def floor_refusal(refusal: StoreError) -> HTTPException:
    """A floor refusal (already audited by the store) as the HTTP error: 403 for a role, 409
    for the rest, with the code, the rule and the sentence."""
    code = getattr(refusal, "code", "refused")
    status = 403 if code in ("role", "supervisor", "terminal") else 409
    return HTTPException(
        status,
        {"code": code, "rule": getattr(refusal, "rule", ""), "message": str(refusal)},
    )


async def signed_in_player(request: Request, who: Principal) -> None:
    """A game-account movement at a terminal needs a player signed in at it (audited)."""
    if who.role != "player" or not who.terminal:
        raise await refuse(
            request,
            who,
            "terminal",
            "Only a player signed in at a terminal (POST /api/session) moves his game account "
            "there.",
            "PA 605a.4(d)",
        )


def set_cookie(
    request: Request, response: Response, name: str, value: str, expires_us: int
) -> None:
    """Set an HttpOnly, SameSite=Strict cookie (Secure over TLS) that lasts as long as the
    credential it holds."""
    now = floor_of(request).now_us()
    response.set_cookie(
        name,
        value,
        max_age=max(1, (expires_us - now) // 1_000_000),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )


async def at_link(
    request: Request, who: Principal, terminal: str, response: Response | None = None
) -> dict[str, Any] | None:
    """A money route of ``terminal`` whose link to the casino's systems another process of
    the floor holds runs there (PA 605a.5(a)): that process's answer (its refusal raised as
    its HTTP error; ``response`` is given that process's status, a 202 say); None when the
    route runs here (the link is here, or the terminal has none). When that process is
    stopped or does not answer, or the request was forwarded already, it is refused (503,
    ``host_link``, audited) and nothing moved: a cash-out or a redemption past the host would
    be a ticket the casino system never saw."""
    found = await links.elsewhere(floor_of(request), terminal)
    if found is None:
        return None
    why = ""
    if FORWARDED in request.headers:
        why = "this request was forwarded to this process already"
    elif not found.url:
        why = f"the process that holds it ({found.member}) has stopped"
    else:
        try:
            answer = await forward_request(request, found.url)
        except Exception as error:  # that process does not answer: refused below
            log.warning("terminal %s: its link's process at %s: %s", terminal, found.url, error)
            why = f"the process that holds it ({found.member}) does not answer"
        else:
            try:
                payload = answer.json()
            except ValueError:
                payload = {"detail": answer.text}
            if answer.is_success:
                if response is not None:
                    response.status_code = answer.status_code
                return dict(payload)
            headers = {k: v for k, v in answer.headers.items() if k.lower() == "retry-after"}
            raise HTTPException(answer.status_code, payload.get("detail"), headers=headers)
    raise await refuse(
        request,
        who,
        "host_link",
        f"Terminal {terminal}'s {found.protocol.upper()} link to the casino system runs at "
        f"another process of the floor, and {why}: nothing moved; try again in a moment "
        f"({links.HOST_RULE}).",
        links.HOST_RULE,
        503,
    )
