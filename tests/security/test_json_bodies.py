"""No body value that JSON cannot carry reaches a handler: ``NaN``, ``Infinity``,
``-Infinity`` and ``1e309`` (a double's infinity) in any field of any operation's body are
refused with 422 naming the rule, before a route, a validator or a log line holds them
(:class:`tablejack.server.support.bounds.StrictJson`). Before, 31 operations answered 500 with
a 5.7 KB traceback in the log — three of them without a credential (``/api/session``,
``/api/terminal/enrol``, ``/api/demo/sign-in``): a 422 that quoted the refused ``NaN`` could not
be written as JSON, and a field taking any value (a floor setting's) stored it.

Every operation of ``/openapi.json`` with a body is enumerated (not a list kept here), each
value in each field of its body, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.support.bounds import JSON_RULE
from tablejack.server.table import TableConfig
from tests.support.floor import ORDER, auth
from tests.support.store import Backend

from .conftest import setup_floor

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

UNCARRIED = ["NaN", "Infinity", "-Infinity", "1e309"]
"""Numbers JSON has no value for, as a client writes them (Python's ``json`` reads each)."""
MARK = "__uncarried__"


@pytest.fixture
def client(backend: Backend, tmp_path: Path) -> Iterator[TestClient]:
    rules = HybridRules(countdown_seconds=1)
    app = create_app(
        backend.server_url,
        tables=[TableConfig("A1", rules, automated=False, require_procedures=False, cards=ORDER)],
        setup=setup_floor,
        demo=True,  # the demo's sign-in too: the whole document
    )
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = document["components"]["schemas"][name]
    return schema


def bodies(document: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """Every operation with a JSON body and each field of it (``""``: the body itself)."""
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            schema = resolve(document, content["application/json"]["schema"])
            fields = list(schema.get("properties", {})) or [""]
            for field in fields:
                yield method.upper(), path, field


def concrete(path: str) -> str:
    """A path with its parameters filled (a table, a terminal, a voucher that exist or not)."""
    names = {"table_id": "A1", "terminal": "EWT-1", "terminal_id": "EWT-1", "account": "ann"}
    return re.sub(r"\{([^}]*)\}", lambda m: names.get(m.group(1), "1"), path)


def test_no_body_value_json_cannot_carry_reaches_a_handler(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    document = client.get("/openapi.json").json()
    cases = list(bodies(document))
    operations = {(method, path) for method, path, _ in cases}
    assert len(operations) >= 31
    assert {("POST", "/api/session"), ("POST", "/api/terminal/enrol")} <= operations
    assert ("POST", "/api/demo/sign-in") in operations
    caplog.set_level(logging.ERROR)
    seen = []
    for method, path, field in cases:
        for value in UNCARRIED:
            text = value if not field else json.dumps({field: MARK}).replace(f'"{MARK}"', value)
            for who in ("operator", None):
                answer = client.request(
                    method,
                    concrete(path),
                    content=text,
                    headers={"Content-Type": "application/json", **(auth(who) if who else {})},
                )
                seen.append((method, path, field, value, who, answer.status_code))
                assert answer.status_code == 422, (method, path, field, value, who, answer.text)
                [problem] = answer.json()["detail"]
                assert problem["type"] == "json_invalid" and JSON_RULE in problem["msg"]
    tracebacks = [r for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]
    assert tracebacks == [], [r.getMessage() for r in tracebacks][:3]
    assert len(seen) >= 31 * len(UNCARRIED) * 2


def test_a_finite_body_still_reaches_its_route(client: TestClient) -> None:
    """The strict reading changes nothing else: a large finite number is the route's to judge
    (422 naming the field and its bound), a JSON charset is JSON, and a body that is not JSON
    at all is refused as before."""
    answer = client.put(
        "/api/floor/players/ann/limits",
        content=b'{"time_limit_s": 1e308}',
        headers={"Content-Type": "application/json; charset=utf-8", **auth("ann")},
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == ["body", "time_limit_s"]
    done = client.put(
        "/api/floor/players/ann/limits",
        content=b'{"time_limit_s": 3600.0}',
        headers={"Content-Type": "application/json", **auth("ann")},
    )
    assert done.status_code == 200, done.text
    broken = client.post(
        "/api/session", content=b'{"token": ', headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 422


def test_a_floor_setting_of_nan_is_refused_and_nothing_stored(client: TestClient) -> None:
    """A setting takes any JSON value: ``NaN`` reached the store before (and was written as the
    text ``NaN``, which no JSON reader takes back)."""
    before = client.get("/api/floor/settings", headers=auth("operator")).json()
    for value in UNCARRIED:
        answer = client.put(
            "/api/floor/settings",
            content=f'{{"key": "handpay_limit", "value": {value}}}',
            headers={"Content-Type": "application/json", **auth("operator")},
        )
        assert answer.status_code == 422, answer.text
    assert client.get("/api/floor/settings", headers=auth("operator")).json() == before
