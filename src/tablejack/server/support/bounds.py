"""What a request may cost the server before anyone knows who sent it.

* **Bodies** (:class:`LimitBody`): an HTTP request body larger than the configured size
  (``tablejack serve --body-max-bytes``, :data:`BODY_MAX_BYTES` by default) is answered ``413``
  with a JSON body naming the limit. A declared ``Content-Length`` over the limit is refused
  before a byte of the body is read; a body without one (chunked) is counted as it arrives and
  refused at the first chunk past the limit: the server never holds more than the limit and one
  chunk of it.
* **JSON** (:class:`StrictJson`): a JSON body is read once, strictly, before any route: a
  value JSON cannot carry — ``NaN``, ``Infinity``, ``-Infinity``, a number beyond a double's
  range (``1e309``), a lone surrogate in a text, a body that is not JSON — is answered ``422``
  naming the rule (:data:`JSON_RULE`) and counted for the audit log like every 422; no route,
  no validator and no log line ever holds such a value (before, a ``NaN`` in a field a model
  refused made its 422 answer unwritable: a 500 and a traceback).
* **422 answers** (:func:`validation_errors`): a refused request's answer names each field and
  rule, and quotes at most :data:`ECHO_MAX_CHARS` characters of a refused text; a refused object
  or list is not quoted at all (a 1 MB body never comes back as a 2 MB answer).

The refusals of requests without a valid credential are counted, not written one by one, by the
socket gate's audit bursts (:meth:`tablejack.server.socket.gate.Gate.unauthenticated`); the audit log's
text is capped by the store (:data:`tablejack.store.db.AUDIT_MESSAGE_MAX`).
"""

from __future__ import annotations

import email.message
import math
from collections.abc import Sequence
from typing import Any

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tablejack.server.support.text import printable

__all__ = [
    "BODY_MAX_BYTES",
    "BODY_RULE",
    "ECHO_MAX_CHARS",
    "JSON_RULE",
    "BodyTooLargeError",
    "LimitBody",
    "StrictJson",
    "is_json",
    "json_refusal",
    "validation_errors",
]

BODY_MAX_BYTES = 64 * 1024
"""The largest HTTP request body the API reads (bytes); every body the API defines fits in a
few hundred."""
BODY_RULE = "request body size"
"""The rule a 413 names."""
ECHO_MAX_CHARS = 64
"""The most characters of a refused text a 422 quotes back."""
JSON_RULE = "request body: JSON (RFC 8259)"
"""The rule a body JSON cannot carry is refused by."""


def _refusal(limit: int) -> dict[str, str]:
    return {
        "code": "body_too_large",
        "rule": BODY_RULE,
        "message": f"A request body may hold at most {limit} bytes; this one is larger.",
    }


class BodyTooLargeError(HTTPException):
    """Raised from the body's stream when it passes the limit (FastAPI passes an HTTP exception
    from the body's reading on unchanged: the answer is the 413, not a 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _refusal(limit))  # type: ignore[arg-type]
        self.limit = limit


class LimitBody:
    """ASGI middleware: an HTTP request's body of more than ``limit`` bytes is refused with 413
    (see the module docstring); WebSocket frames have their own limits
    (:mod:`tablejack.server.socket.gate`)."""

    def __init__(self, app: ASGIApp, limit: int = BODY_MAX_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limit:
                    await self._refuse(scope, receive, send)
                    return
        read = 0
        started = False

        async def counted() -> Message:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > limit:
                    raise BodyTooLargeError(limit)
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except BodyTooLargeError:
            if started:
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = JSONResponse({"detail": _refusal(self.limit)}, 413, {"Connection": "close"})
        await response(scope, receive, send)


def is_json(content_type: str | None) -> bool:
    """Whether a request's ``Content-Type`` makes FastAPI read its body as JSON
    (``application/json`` or ``application/…+json``, read as FastAPI reads it)."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def json_refusal(body: bytes) -> dict[str, Any] | None:
    """The 422 problem of a JSON body that holds what JSON cannot carry (or is not JSON), or
    None when it is strict JSON: ``NaN`` and ``Infinity`` are no JSON values, a number beyond a
    double's range is read as infinity, a lone surrogate is no character (RFC 8259)."""
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        why = str(error.msg).rstrip(".")
        message = (
            "A request body holds JSON only: finite numbers (no NaN, Infinity or -Infinity, "
            f"none beyond ±1.8e308) and whole characters; refused at {where}: {why} "
            f"({JSON_RULE})."
        )
        return {
            "type": "json_invalid",
            "loc": ["body", error.pos],
            "msg": message,
            "ctx": {"rule": JSON_RULE},
        }
    return None


class StrictJson:
    """ASGI middleware: an HTTP request whose JSON body holds a value JSON cannot carry (see
    :func:`json_refusal`) is answered 422 naming the rule before any route reads it, and
    counted for the audit log (the app's ``state.gate``, one row per client address and
    window); any other request passes on with its body as it came. Installed inside
    :class:`LimitBody`: the body read here is already bounded."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on with its body."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        if not is_json(request.headers.get("content-type")):
            await self.app(scope, receive, send)
            return
        body = await request.body()
        problem = json_refusal(body) if body else None
        if problem is not None:
            gate = getattr(scope["app"].state, "gate", None) if "app" in scope else None
            if gate is not None:
                gate.invalid_request(request, [problem])
            response = JSONResponse({"detail": [problem]}, 422)
            await response(scope, receive, send)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _quoted(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # (never reaches here from a body; a JSON answer cannot hold it)
    if isinstance(value, str):
        return printable(value, ECHO_MAX_CHARS)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return None


def validation_errors(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """Pydantic's errors as a 422 answers them: the type, the field's location, the sentence
    and the rule's context; the refused input quoted only when it is a number or a text (cut to
    :data:`ECHO_MAX_CHARS`)."""
    answer = []
    for error in errors:
        item = {key: error[key] for key in ("type", "loc", "msg") if key in error}
        quoted = _quoted(error.get("input"))
        if quoted is not None:
            item["input"] = quoted
        context = error.get("ctx")
        if isinstance(context, dict):
            item["ctx"] = {key: _quoted(value) for key, value in context.items()}
        answer.append(item)
    return answer
