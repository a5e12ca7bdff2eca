"""Text fields refuse control characters (``SafeText``): a NUL or another control character in
any free-text field of a REST body is refused with 422 naming the rule, on SQLite and on
PostgreSQL (whose text columns cannot hold a NUL), and nothing changes: the round is not voided,
the balances stand, the table keeps running."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Annotated, Any, get_args, get_origin

import pytest
from pydantic import BaseModel

from tablejack import server
from tablejack.server.socket.gate import GateLimits
from tablejack.server.support.text import SafeText
from tests.support.store import Backend

SAFE = get_args(SafeText)[1].func
NUL_RULE = (
    "Text may not hold control characters (U+0000 to U+001F, U+007F); U+0000 at character 5 "
    "is refused (text: no control characters)."
)


def round_of(client: Any, kit: Any, round_id: str) -> dict[str, Any]:
    return dict(client.get(f"/api/rounds/{round_id}", headers=kit.auth("super")).json())


def test_a_nul_in_a_void_reason_is_refused_with_422_and_the_round_is_not_voided(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    table = kit.stacked_table(automated=True, wagering_seconds=30, between_rounds_seconds=0)
    client = make_client([table], backend=backend, gate=GateLimits(audit_seconds=0.2))
    kit.eventually(lambda: kit.staff_state(client, "A1")["round_id"] == "A1-000001")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        refused = kit.post(client, "/api/tables/A1/void", "super", reason="shoe\x00replaced")
        assert refused.status_code == 422
        [problem] = refused.json()["detail"]
        assert (problem["loc"], problem["type"], problem["msg"]) == (
            ["body", "reason"],
            "control_character",
            NUL_RULE,
        )
        # nothing changed: the round runs on with ann's wager, her balance stands
        state = kit.staff_state(client, "A1")
        assert (state["status"], state["round_id"], state["view"]["phase"]) == (
            "open",
            "A1-000001",
            "wagering",
        )
        assert [w["amount"] for w in state["view"]["wagers"]] == [1000]
        assert state["countdown"]["window"] == "wagering"
        assert kit.balance(client, "ann") == kit.credit - 1000
        assert round_of(client, kit, "A1-000001")["status"] == "open"
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
    # the table keeps running: a void with a proper reason refunds, the next round opens
    voided = kit.post(client, "/api/tables/A1/void", "super", reason="shoe replaced")
    assert voided.json() == {"ok": True, "voided": "A1-000001"}
    assert kit.balance(client, "ann") == kit.credit
    assert round_of(client, kit, "A1-000001")["events"][-1]["payload"]["reason"] == "shoe replaced"
    kit.eventually(lambda: kit.staff_state(client, "A1")["round_id"] == "A1-000002")
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True
    [row] = kit.eventually(lambda: refused_rows(client, kit))  # one row for the burst
    assert (row["table_id"], row["rule"]) == ("A1", "text: no control characters")
    assert row["message"] == (
        "refused request from testclient: body.reason: control_character; POST "
        f"/api/tables/A1/void: {NUL_RULE}"
    )


def refused_rows(client: Any, kit: Any) -> list[dict[str, Any]]:
    rows = client.get("/api/audit", headers=kit.auth("super")).json()
    return [row for row in rows if row["kind"] == "invalid_request"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/rounds/A1-000001%00",
        "/api/accounts/ann%00/ledger",
        "/api/meters?table=A1%00",
        "/api/audit?table=%00",
        "/api/tables/A1%1b/state",
    ],
)
def test_a_control_character_in_a_path_or_query_is_refused_with_422_before_the_database(
    make_client: Any, backend: Backend, kit: Any, path: str
) -> None:
    client = make_client(backend=backend, gate=GateLimits(audit_seconds=0.2))
    refused = client.get(path, headers=kit.auth("super"))
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["type"] == "control_character"
    assert problem["msg"].endswith("is refused (text: no control characters).")
    assert client.get("/api/audit", headers=kit.auth("super")).status_code == 200
    [row] = kit.eventually(lambda: refused_rows(client, kit))
    assert row["rule"] == "text: no control characters"
    assert "\x00" not in row["message"]


@pytest.mark.parametrize(
    ("path", "who", "body", "field"),
    [
        ("/api/tables/A1/procedures/reader-inspection", "super", {"note": "ok\x00"}, "note"),
        ("/api/tables/A1/procedures/deck-inspection", "super", {"dealer": "da\x1bna"}, "dealer"),
        ("/api/tables/A1/tilt", "dealer", {"code": "other", "reason": "x\x7f"}, "reason"),
        ("/api/tables/A1/shoe/load", "dealer", {"cards": "AS\x00 KS"}, "cards"),
        (
            "/api/floor/meters/clear",
            "super",
            {"scope": "floor", "scope_id": "x", "reason": "a\nb"},
            "reason",
        ),
        (
            "/api/floor/voucher-in",
            "ann",
            {"code": "12\x00", "event": "ev-1", "proof": "A" * 86 + "=="},
            "code",
        ),
    ],
)
def test_a_control_character_in_a_text_field_is_refused_with_422_naming_the_rule(
    make_client: Any, backend: Backend, kit: Any, path: str, who: str, body: Any, field: str
) -> None:
    client = make_client(backend=backend, gate=GateLimits(audit_seconds=0.2))
    before = kit.staff_state(client, "A1")
    refused = kit.post(client, path, who, **body)
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert (problem["loc"], problem["type"]) == (["body", field], "control_character")
    assert problem["msg"].endswith("is refused (text: no control characters).")
    after = kit.staff_state(client, "A1")
    assert (after["status"], after["tilts"], after["procedures"]) == (
        before["status"],
        before["tilts"],
        before["procedures"],
    )
    assert kit.balance(client, "ann") == kit.credit
    [row] = kit.eventually(lambda: refused_rows(client, kit))
    assert row["message"].startswith(f"refused request from testclient: body.{field}: ")


def _plain_strings(annotation: Any, metadata: tuple[Any, ...] = ()) -> bool:
    """Whether a field's type holds a ``str`` that is not :data:`SafeText`."""
    if annotation is str:
        return not any(getattr(m, "func", None) is SAFE for m in metadata)
    if get_origin(annotation) is Annotated:
        inner, *extra = get_args(annotation)
        return _plain_strings(inner, (*metadata, *extra))
    return any(_plain_strings(arg) for arg in get_args(annotation))


def test_every_text_field_of_every_body_and_message_is_safe_text() -> None:
    """No plain ``str`` in any pydantic model of the server (REST bodies, WebSocket messages,
    the keys of a dict included): each text is ``SafeText``."""
    plain, seen = [], 0
    for info in pkgutil.walk_packages(server.__path__, f"{server.__name__}."):
        module = importlib.import_module(info.name)
        for name, model in vars(module).items():
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                continue
            if model.__module__ != module.__name__:
                continue
            for field, spec in model.model_fields.items():
                seen += 1
                if _plain_strings(spec.annotation, tuple(spec.metadata)):
                    plain.append(f"{module.__name__}.{name}.{field}")
    assert seen > 50  # the models were found
    assert plain == []
