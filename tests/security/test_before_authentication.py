"""Before authentication, what a request costs is bounded: a body over the limit is refused
(413) before it is read, refusals without a credential are counted (one audit row per kind and
window) instead of written one by one, a 422 quotes no large input, an audit row's text is
capped, and behind a trusted proxy the failed-hello bucket is the client's, not the proxy's.

Every test runs on SQLite and PostgreSQL (the ``floor`` fixture) and failed before these
bounds existed: 200 refused requests wrote 200 rows, a 5 MB text wrote a 5 MB row, a 100 MB
body was read into memory, a 422 echoed the whole input, and behind nginx every terminal shared
the proxy's bucket.
"""

from __future__ import annotations

import asyncio
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tablejack.server.app import create_app
from tablejack.server.socket.gate import GateLimits
from tablejack.server.support.bounds import BODY_MAX_BYTES, ECHO_MAX_CHARS, LimitBody
from tablejack.store import Store
from tablejack.store.db import AUDIT_MESSAGE_MAX
from tests.support.floor import TOKENS, auth
from tests.support.store import Backend

from .conftest import Floorkit, setup_floor

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient, WebSocketDisconnect

ATTEMPTS = 200


def audit_kinds(floor: Floorkit) -> Counter[str]:
    """How many audit rows of each kind the floor's database holds."""
    rows = floor.run(lambda store: store.audit_entries(limit=100_000))
    return Counter(row["kind"] for row in rows)


@pytest.fixture
def gate_limits() -> GateLimits:
    """An audit window longer than any run of these tests (the default is 10 s), so that the
    800 refusals of the first test fall in one window however slow the machine: a window that
    closes mid-test writes its row early, which is the counting working, not a row per request."""
    return GateLimits(audit_seconds=3600)


def test_refusals_before_authentication_are_counted_not_written_one_by_one(
    floor: Floorkit,
) -> None:
    client = floor.client
    before = audit_kinds(floor)
    for number in range(ATTEMPTS):
        assert client.get(f"/api/audit?token=guess-{number}").status_code == 400
        signed = client.post("/api/session", json={"token": f"guess-{number}"})
        assert signed.status_code == 401
        enrolled = client.post(
            "/api/terminal/enrol", json={"terminal": "EWT-1", "terminal_key": f"guess-{number}"}
        )
        assert enrolled.status_code == 401
        foreign = client.get(
            "/api/audit",
            headers={"Origin": "https://attacker.example", "Cookie": f"tj_session=guess-{number}"},
        )
        assert foreign.status_code == 403
    client.cookies.clear()
    assert audit_kinds(floor) - before == Counter()  # nothing written per request
    floor.stop()  # the open windows are written at shutdown
    rows = floor.run(lambda store: store.audit_entries(limit=100_000))
    new = rows[: len(rows) - before.total()]  # the newest first
    assert Counter(row["kind"] for row in new) == Counter(
        {"token_in_url": 1, "auth": 1, "terminal": 1, "origin": 1}
    )
    for row in new:
        assert f"{ATTEMPTS} refused requests before authentication" in row["message"]


def test_refusals_of_someone_authenticated_keep_a_row_each(floor: Floorkit) -> None:
    before = audit_kinds(floor)["role"]
    for _ in range(3):
        assert floor.client.get("/api/audit", headers=auth("ann")).status_code == 403
    assert audit_kinds(floor)["role"] == before + 3


def test_a_body_over_the_limit_is_refused_before_it_is_read(floor: Floorkit) -> None:
    big = b'{"token": "' + b"x" * (2 * BODY_MAX_BYTES) + b'"}'
    answer = floor.client.post(
        "/api/session", content=big, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 413
    assert answer.json()["detail"]["code"] == "body_too_large"
    assert str(BODY_MAX_BYTES) in answer.json()["detail"]["message"]
    tip = floor.client.post(
        "/api/floor/tip",
        json={"amount": "9" * 5_000_000},
        headers=floor.session("ann"),
    )
    assert tip.status_code == 413
    longest = max(len(row["message"]) for row in floor.run(lambda s: s.audit_entries(limit=1000)))
    assert longest <= AUDIT_MESSAGE_MAX


def test_a_chunked_body_stops_being_read_at_the_limit() -> None:
    """100 MB offered in 16 KiB chunks without a Content-Length: the middleware reads the
    limit's worth and one chunk more, then answers 413; the app never sees the rest."""
    chunk = b"x" * 16_384
    total = 100_000_000 // len(chunk)
    pulled = 0
    seen = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": pulled < total}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal seen
        while True:  # an app that reads the whole body
            message = await receive()
            seen += len(message["body"])
            if not message["more_body"]:
                break
        raise AssertionError("the body was read to its end")

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [], "query_string": b""}
    asyncio.run(LimitBody(app, BODY_MAX_BYTES)(scope, receive, send))
    assert pulled == BODY_MAX_BYTES // len(chunk) + 1
    assert seen <= BODY_MAX_BYTES
    assert sent[0]["status"] == 413


def test_a_422_quotes_no_large_input(floor: Floorkit) -> None:
    text = "y" * 60_000
    answer = floor.client.post("/api/session", json={"token": text})
    assert answer.status_code == 422
    assert len(answer.content) < 1000
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["body", "token"] and problem["type"] == "string_too_long"
    assert len(problem["input"]) <= ECHO_MAX_CHARS + 1
    extra = floor.client.post(
        "/api/session", json={"token": "t", "filler": ["z" * 1000] * 50}
    )  # a refused field's list is not quoted at all
    assert extra.status_code == 422
    assert len(extra.content) < 1000


def test_an_audit_message_is_capped_where_it_is_stored(backend: Backend) -> None:
    async def main() -> list[dict[str, Any]]:
        store = await Store.open(backend.url, schema=backend.schema)
        try:
            await store.audit("tip", "amount " + "9" * 5_000_000, rule="PA 633c.5")
            return await store.audit_entries(limit=1)
        finally:
            await store.close()

    [row] = asyncio.run(main())
    assert len(row["message"]) == AUDIT_MESSAGE_MAX


def closed_with(socket: Any) -> tuple[int, str]:
    """The close code and reason the server ends ``socket`` with (frames before it skipped)."""
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            socket.receive_json()
    return closed.value.code, closed.value.reason


def failed_hello(client: TestClient, forwarded_for: str) -> tuple[int, str]:
    """A hello with a made-up token through a proxy that says the client is ``forwarded_for``."""
    with client.websocket_connect("/ws", headers={"X-Forwarded-For": forwarded_for}) as socket:
        socket.send_json({"type": "hello", "protocol": 2, "token": "guess", "terminal": "EWT-1"})
        return closed_with(socket)


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted-proxy", "untrusted-peer"])
def test_the_failed_hello_bucket_is_the_client_behind_a_trusted_proxy(
    backend: Backend, tmp_path: Path, trusted: bool
) -> None:
    """Behind the trusted proxy 10.0.0.1, one client's failed hellos empty its own bucket and
    leave another client's full; a peer that is no trusted proxy names no client: its header is
    ignored, and every hello through it shares its bucket."""
    app = create_app(
        backend.server_url,
        setup=setup_floor,
        gate=GateLimits(failed_hellos=3, failed_hello_seconds=600),
        forwarded_allow_ips="10.0.0.1",
    )
    peer = ("10.0.0.1" if trusted else "10.0.0.9", 40000)
    with TestClient(app, client=peer) as client:
        codes = [failed_hello(client, "203.0.113.5") for _ in range(4)]
        assert codes[-1] == (1008, "too many failed hellos")
        other = failed_hello(client, "203.0.113.6")
        if trusted:
            assert other == (1008, "unknown token")  # its own bucket: judged, not shut out
        else:
            assert other == (1008, "too many failed hellos")  # the peer's bucket
        with client.websocket_connect(
            "/ws", headers={"X-Forwarded-For": "203.0.113.7"}
        ) as socket:  # a good hello from a third client
            socket.send_json({"type": "hello", "protocol": 2, "token": TOKENS["dealer"]})
            if trusted:
                assert socket.receive_json()["type"] == "welcome"
            else:
                assert closed_with(socket) == (1008, "too many failed hellos")
