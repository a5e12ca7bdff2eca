"""The server's logs: one JSON object per line for a log store (``serve --log-format json``), or
plain text; the level by option (``--log-level``). Each line carries the ids of what it is
about — ``table``, ``round``, ``terminal``, ``request_id`` — from context variables the server
sets where it knows them (a request, a terminal's socket, a table's step), so a log store
finds every line of a round or a terminal.

uvicorn's access log goes through the same handler with its query strings' secrets redacted
(:class:`RedactAccess`: ``?token=…`` and the like); it never logs a header, so no
Authorization and no Cookie reach it. A request's id is the ``X-Request-ID`` it came with
(a load balancer's), or a fresh one, and is sent back in the response's ``X-Request-ID``.
"""

from __future__ import annotations

import logging
import re
import secrets
import sys
from contextvars import ContextVar
from typing import Any

__all__ = [
    "ContextFilter",
    "RedactAccess",
    "RequestIds",
    "bind",
    "configure",
    "redact",
]

table_id: ContextVar[str | None] = ContextVar("table_id", default=None)
round_id: ContextVar[str | None] = ContextVar("round_id", default=None)
terminal_id: ContextVar[str | None] = ContextVar("terminal_id", default=None)
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

_IDS = {"table": table_id, "round": round_id, "terminal": terminal_id, "request_id": request_id}
SECRET_NAMES = re.compile(r"token|key|secret|passw|session|credential|auth|cookie|signature", re.I)
"""A query parameter whose name matches has its value redacted in the logs."""
_QUERY_PAIR = re.compile(r"([?&;])([^=&;#\s]+)=([^&;#\s]*)")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
REDACTED = "REDACTED"


def bind(**ids: str | None) -> None:
    """Set the context's ids (``table``, ``round``, ``terminal``, ``request_id``) for the lines
    logged from here on in this task (and the tasks it starts)."""
    for name, value in ids.items():
        _IDS[name].set(value)


def redact(text: str) -> str:
    """``text`` with the value of every query parameter that names a secret replaced."""

    def replace(match: re.Match[str]) -> str:
        sep, name, value = match.groups()
        return f"{sep}{name}={REDACTED if SECRET_NAMES.search(name) and value else value}"

    return _QUERY_PAIR.sub(replace, text)


class ContextFilter(logging.Filter):
    """Give each record the context's ids (those it carries itself, by ``extra``, win)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in _IDS.items():
            if getattr(record, name, None) is None:
                setattr(record, name, var.get())
        return True


class RedactAccess(logging.Filter):
    """uvicorn's access lines (``client - "METHOD path HTTP/v" status``) without the secrets of
    the path's query string; any other line's message is redacted the same way."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str) and not record.args:
            record.msg = redact(record.msg)
        return True


def _json_formatter() -> logging.Formatter:
    from pythonjsonlogger.json import JsonFormatter

    return JsonFormatter(
        "%(asctime)s %(levelname)s %(name)s %(message)s %(table)s %(round)s %(terminal)s "
        "%(request_id)s",
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        timestamp=False,
    )


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(fmt: str = "text", level: str = "warning", stream: Any = None) -> logging.Handler:
    """Send the server's and uvicorn's logs to ``stream`` (stderr) as ``json`` lines or
    ``text``, at ``level`` and above; uvicorn's access lines (at ``info``) redacted."""
    if fmt not in ("json", "text"):
        raise ValueError(f"A log format is json or text, not {fmt!r}.")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(_json_formatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(ContextFilter())
    handler.addFilter(RedactAccess())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
        logger.setLevel(level.upper())
    return handler


class RequestIds:
    """ASGI middleware: each request and socket gets an id in the logs' context (the
    ``X-Request-ID`` it came with when well-formed, else a fresh one), returned in the
    response's ``X-Request-ID``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = next(
            (v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"x-request-id"),
            "",
        )
        rid = given if _REQUEST_ID.fullmatch(given) else secrets.token_hex(8)
        token = request_id.set(rid)
        try:
            if scope["type"] == "http":

                async def send_with_id(message: Any) -> None:
                    if message["type"] == "http.response.start":
                        headers = [*message.get("headers", ()), (b"x-request-id", rid.encode())]
                        message = {**message, "headers": headers}
                    await send(message)

                await self.app(scope, receive, send_with_id)
            else:
                await self.app(scope, receive, send)
        finally:
            request_id.reset(token)
