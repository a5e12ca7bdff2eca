"""The API's contract: what ``/openapi.json`` publishes is what the server does.

Integrators (a casino's systems, a test lab) generate their clients from the document, so it
states every bound the server enforces and every answer it can give:

* **Bounds.** A page of rows is :data:`Limit` (1 to :data:`LIMIT_MAX`), a count of rounds is
  :data:`Count` (1 to :data:`COUNT_MAX`), an amount is :data:`AMOUNT_MAX` cents at most (a
  positive integer), a duration :data:`SECONDS_MAX` at most. A value outside is refused with 422
  naming the field and the bound, before a database sees it.
* **Text.** Every text of a path, a query or a body refuses control characters
  (:mod:`tablejack.server.support.text`): the document says so with :data:`TEXT_PATTERN` on each string
  that declares no stricter pattern of its own (:func:`document`).
* **Answers.** Every operation documents the errors the API answers with (:data:`ERRORS`:
  400 a token in the URL, 401 no valid credential, 403 a role or a rule, 404 nothing of that
  name, 409 a refusal of the floor, 413 a body too large, 422 a request the schema refuses,
  503 a table moving between processes), each with its body (:data:`ERROR_SCHEMA`).
* **405.** A method a path does not have is answered 405 with an ``Allow`` header listing every
  method the path has (:func:`method_not_allowed`), not only those of the first route matched.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.openapi.utils import get_openapi
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException
from starlette.responses import Response

__all__ = [
    "AMOUNT_MAX",
    "COUNT_MAX",
    "ERRORS",
    "ERROR_SCHEMA",
    "LIMIT_MAX",
    "SECONDS_MAX",
    "SEQ_MAX",
    "TEXT_PATTERN",
    "Count",
    "Limit",
    "Whole",
    "document",
    "method_not_allowed",
    "publish",
]

LIMIT_MAX = 1000
"""The most rows one page of a list (``limit``) holds."""
COUNT_MAX = 100
"""The most rounds a count (``n``) asks for."""
AMOUNT_MAX = 10**11
"""The largest amount a request names, in cents ($1,000,000,000.00)."""
SEQ_MAX = 2**31 - 1
"""The largest event number a request names: an event's ``seq`` is a 32-bit column."""
SECONDS_MAX = 86_400
"""The longest duration a request names (a gaming day), in seconds."""
TEXT_PATTERN = "^[^\\u0000-\\u001f\\u007f]*$"
"""The JSON Schema pattern of a text: no control character (U+0000 to U+001F, U+007F)."""


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)  # 5.0 is the JSON number 5: an integer by the document's schema
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("int_type", "Input should be a whole number")
    return value


Whole = Annotated[int, BeforeValidator(_whole)]
"""A whole number of a body (cents, counts, seconds): a JSON integer, or a number without a
fraction (``5.0``, which JSON Schema counts as an integer); never a text or a boolean."""

Limit = Annotated[int, Query(ge=1, le=LIMIT_MAX, description="Rows at most (newest first).")]
"""A page's ``limit`` query parameter."""
Count = Annotated[int, Query(ge=1, le=COUNT_MAX, description="Rounds at most (newest first).")]
"""A count's ``n`` query parameter."""

ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {
            "anyOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": {"type": "string"},
                        "rule": {"type": "string"},
                        "message": {"type": "string"},
                    },
                },
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["loc", "msg", "type"],
                        "properties": {
                            "loc": {
                                "type": "array",
                                "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                            },
                            "msg": {"type": "string"},
                            "type": {"type": "string"},
                        },
                    },
                },
            ]
        }
    },
}
"""An error's body: ``detail`` is a sentence, a refusal (``code``, ``rule``, ``message``) or,
for 422, the list of the fields refused."""

ERRORS: dict[int, str] = {
    400: "A token in the URL (never accepted there).",
    401: "No valid credential (or sign-in refused).",
    403: "The caller's role or a rule forbids it (least privilege, PA 605a).",
    404: "Nothing of that name.",
    409: "Refused by the floor (a rule, a state, funds); the rule is named.",
    413: "The request body is larger than the server reads.",
    422: "The request does not match this document (field, rule).",
    503: "The table is moving between processes (Retry-After).",
}
"""The errors every operation may answer with."""


def document(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document with the contract's additions (see the module docstring)."""
    spec = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
    )
    components = spec.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = ERROR_SCHEMA
    for name, schema in components.items():
        if name not in ("Error", "HTTPValidationError", "ValidationError"):
            _texts(schema)
    for path in spec.get("paths", {}).values():
        for operation in path.values():
            for parameter in operation.get("parameters", ()):
                _texts(parameter.get("schema", {}))
            responses = operation.setdefault("responses", {})
            for status, description in ERRORS.items():
                own = responses.get(str(status))
                if own is not None and "HTTPValidationError" not in str(own):
                    continue  # a route's own answer stays its own (/readyz's 503)
                responses[str(status)] = {
                    "description": description,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
    return spec


_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}


def _texts(schema: Any) -> None:
    """Give every string of ``schema`` without a pattern, an enumeration or a format the
    pattern that refuses control characters, and every bound its JSON Schema name."""
    if isinstance(schema, list):
        for item in schema:
            _texts(item)
        return
    if not isinstance(schema, dict):
        return
    for bound, keyword in _BOUNDS.items():  # pydantic's names, left in a nullable number's schema
        if bound in schema and schema.get("type") in ("integer", "number"):
            schema[keyword] = schema.pop(bound)
    if (
        schema.get("type") == "string"
        and not {"pattern", "enum", "const", "format"} & schema.keys()
    ):
        schema["pattern"] = TEXT_PATTERN
    if isinstance(schema.get("additionalProperties"), dict) and "propertyNames" not in schema:
        schema["propertyNames"] = {"pattern": TEXT_PATTERN}  # a map's keys are texts too
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "$defs"):
            for item in value.values():
                _texts(item)
        elif (
            key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "not")
            or key == "propertyNames"
        ):
            _texts(value)


def publish(app: FastAPI) -> None:
    """Serve :func:`document` at ``/openapi.json`` and answer 405 with the path's methods."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_exception_handler(HTTPException, method_not_allowed)


async def method_not_allowed(request: Request, error: Exception) -> Response:
    """An HTTP error as FastAPI answers it; a 405's ``Allow`` lists every method the document
    gives the path, with those of the route that answered (Starlette names only the first
    route's)."""
    assert isinstance(error, HTTPException)
    if error.status_code == 405:
        path = request.url.path
        matched = [(t, m) for t, m in _methods(request.app).items() if t.fullmatch(path)]
        literal = [m for t, m in matched if t.pattern == re.escape(path)]
        if literal:  # a literal path is its own, not a template's that also matches it
            allowed = set().union(*literal)
        else:
            allowed = {m.strip() for m in (error.headers or {}).get("Allow", "").split(",") if m}
            for _, methods in matched:
                allowed |= methods
        error.headers = dict(error.headers or {}) | {"Allow": ", ".join(sorted(allowed))}
    return await http_exception_handler(request, error)


def _methods(app: FastAPI) -> dict[re.Pattern[str], set[str]]:
    """Each path of the document as a pattern, with its methods."""
    found: dict[re.Pattern[str], set[str]] | None = getattr(app.state, "contract_methods", None)
    if found is None:
        found = {}
        for path, operations in app.openapi().get("paths", {}).items():
            pattern = re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(path))
            found[re.compile(pattern)] = {method.upper() for method in operations}
        app.state.contract_methods = found
    return found
