"""The API holds to the document it publishes: schemathesis, with all its checks, over every
operation of ``/openapi.json`` (whatever routes the app has: the document is enumerated, not a
list kept here), on SQLite and PostgreSQL, as each role and as no one.

Every role runs schemathesis's examples, fuzzing (schema-valid and schema-violating requests)
and stateful phases; the supervisor also runs the coverage phase (each bound, each enumeration,
each missing field, each method a path does not have), the most thorough and the slowest
(marked ``slow``: ``make test`` runs it, ``make quick`` leaves it out). A
failure is anything a check finds: a 5xx, a status code the document does not list, a 405
without the path's methods in ``Allow``, a request valid by the schema refused (or one invalid
accepted), an answer that does not match its schema. Before the contract
(:mod:`tablejack.server.support.contract`), the supervisor's run alone found 66 unique failures.

Money moved by the fuzzed requests (credit sold, bill-ins, cash-outs, hand pays, tips) is still
conserved: after the run, every account's balance sums to zero.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events, from_schema
from schemathesis.python import asgi

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.support.contract import AMOUNT_MAX, COUNT_MAX, ERRORS, LIMIT_MAX, SECONDS_MAX
from tablejack.server.table import TableConfig
from tablejack.store import Store
from tests.support.floor import ORDER, TOKENS, auth
from tests.support.store import Backend

from .conftest import Floorkit, setup_floor

SEED = 633
"""The run's seed (with deterministic generation: the same cases every run)."""
ROLES = {
    "anonymous": None,
    "player": "ann",
    "dealer": "dealer",
    "supervisor": "super",
    "cashier": "cashier",
    "operator": "operator",
}
EVERY_PHASE = ["examples", "coverage", "fuzzing", "stateful"]
QUICK_PHASES = ["examples", "fuzzing", "stateful"]


def fuzz(app: Any, headers: dict[str, str], phases: list[str]) -> tuple[list[str], int]:
    """Run schemathesis over the app's whole document with every check: the failures found
    (one line each) and how many requests were made."""
    config = SchemathesisConfig(seed=SEED)
    project = config.projects.default
    project.update(headers=headers)
    project.phases.update(phases=phases)
    project.generation.update(max_examples=3, deterministic=True, database="none")
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=config)
    failures: list[str] = []
    made = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            made += len(event.recorder.interactions)
            for case_id, checks in event.recorder.checks.items():
                for check in checks:
                    if check.status == Status.SUCCESS:
                        continue
                    info = check.failure_info
                    case = event.recorder.cases.get(case_id)
                    failures.append(
                        f"{event.phase.name} {event.label}: {check.name}"
                        + (f" — {info.failure.title}: {info.code_sample}" if info else "")
                        + (f" ({case.value.path_parameters})" if case is not None else "")
                    )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            failures.append(f"error: {event}")
    return failures, made


def balances(backend: Backend) -> dict[str, int]:
    """Every account's balance, read from the database after the run."""

    async def main() -> dict[str, int]:
        store = await Store.open(backend.url, schema=backend.schema, migrate=False)
        try:
            return await store.accounts()
        finally:
            await store.close()

    return asyncio.run(main())


@pytest.mark.parametrize(
    "role",
    [
        pytest.param(role, marks=pytest.mark.slow) if role == "supervisor" else role
        for role in ROLES
    ],
)
def test_the_api_holds_to_its_document(backend: Backend, tmp_path: Path, role: str) -> None:
    rules = HybridRules(countdown_seconds=1)
    app = create_app(
        backend.server_url,
        tables=[
            TableConfig("A1", rules, automated=False, require_procedures=False, cards=ORDER),
            TableConfig("A2", rules, automated=False, require_procedures=False, seed=2),
        ],
        setup=setup_floor,
        demo=True,  # the demo's sign-in route too: the whole document
    )
    who = ROLES[role]
    headers = {} if who is None else {"Authorization": f"Bearer {TOKENS[who]}"}
    try:
        failures, made = fuzz(app, headers, EVERY_PHASE if role == "supervisor" else QUICK_PHASES)
    finally:
        asgi.shutdown_lifespans()  # the floor stops: its last writes are in the database
    assert failures == []
    assert made > 100  # the run made requests (every operation, more than once)
    after = balances(backend)
    assert len(after) >= 3  # the cage and the players
    assert sum(after.values()) == 0  # money conserved, whatever the fuzzer asked for


# -- the 500s the fuzzer found, one by one --------------------------------------------------------

NEGATIVE_COUNTS = [
    ("/api/accounts/ann/ledger?limit=-1", "ann", "limit"),  # a player's own ledger
    ("/api/audit?limit=-1", "super", "limit"),
    ("/api/tables/A1/rounds?limit=-1", "super", "limit"),
    ("/api/terminals/EWT-1/rounds?n=-1", "super", "n"),
    ("/api/floor/meters/clears?limit=-1", "super", "limit"),
]


@pytest.mark.parametrize(("url", "who", "field"), NEGATIVE_COUNTS)
def test_a_negative_limit_is_refused_naming_the_bound(
    floor: Floorkit, url: str, who: str, field: str
) -> None:
    """On PostgreSQL a negative LIMIT was a 500; on SQLite, every row. Now: 422, the field and
    its bound, before the database is asked; the largest page is refused the same way."""
    answer = floor.client.get(url, headers=auth(who))
    assert answer.status_code == 422, answer.text
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["query", field] and problem["type"] == "greater_than_equal"
    too_many = url.replace("=-1", f"={(LIMIT_MAX if field == 'limit' else COUNT_MAX) + 1}")
    assert floor.client.get(too_many, headers=auth(who)).status_code == 422
    assert floor.client.get(url.replace("=-1", "=1"), headers=auth(who)).status_code == 200


def test_a_time_limit_beyond_a_gaming_day_is_refused(floor: Floorkit) -> None:
    """``time_limit_s: 1e20`` by the player was a 500 on both databases."""
    url = "/api/floor/players/ann/limits"
    for value in (1e20, 10**20, SECONDS_MAX + 1):
        answer = floor.client.put(url, json={"time_limit_s": value}, headers=auth("ann"))
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"][0]["loc"] == ["body", "time_limit_s"]
    answer = floor.client.put(url, json={"time_limit_s": 3600}, headers=auth("ann"))
    assert answer.status_code == 200, answer.text


def test_an_amount_is_a_whole_number_of_cents_within_the_bound(floor: Floorkit) -> None:
    url = "/api/cage/credit"
    for amount in (AMOUNT_MAX + 1, 12.5, "1000", True):
        answer = floor.client.post(
            url, json={"account": "ann", "amount": amount}, headers=auth("cashier")
        )
        assert answer.status_code == 422, (amount, answer.text)
    answer = floor.client.post(
        url, json={"account": "ann", "amount": 1000.0}, headers=auth("cashier")
    )  # the JSON number 1000.0 is the integer 1000 by JSON Schema
    assert answer.status_code == 200, answer.text
    assert sum(floor.balances().values()) == 0


def test_a_405_names_every_method_of_the_path(floor: Floorkit) -> None:
    for url, methods in (
        ("/api/tokens", "GET, POST"),
        ("/api/session", "DELETE, POST"),
        ("/api/floor/players/ann/limits", "GET, PUT"),
    ):
        answer = floor.client.options(url, headers=auth("super"))
        assert answer.status_code == 405
        assert answer.headers["allow"] == methods


def test_the_document_lists_every_answer_and_bound(floor: Floorkit) -> None:
    document = floor.client.get("/openapi.json").json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            listed = set(operation["responses"])
            assert {str(status) for status in ERRORS} <= listed, (method, path)
            for parameter in operation.get("parameters", ()):
                schema = parameter["schema"]
                if parameter["name"] in ("limit", "n"):
                    assert schema["minimum"] == 1 and "maximum" in schema, path
                if schema.get("type") == "string":
                    assert "pattern" in schema or "enum" in schema, (path, parameter)
