"""A floor of two ``tablejack serve`` processes on one PostgreSQL database, as its staff use it:
the pages signed in by a session cookie at one process act on the tables the other runs.

* Every kind of staff action on a table of the other process works from either process: a
  procedure, a table's tilt and its clear (forwarded to the table's process), a terminal
  registered at it (a store write), a terminal's tilt and clear (forwarded to the process of
  the terminal's table, whose console shows it at once).
* The session cookie's ``Origin`` check holds across the hop: the forwarding process proves
  the hop with the floor's hop key, and the table's process compares the ``Origin`` with the
  host the caller reached. An outside caller who sends a foreign ``Origin`` — directly with
  forged forwarding headers, or through the other process — is refused (the attacker's test).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from starlette.requests import Request

from tablejack.server.socket.proxy import (
    CALLER_HOST,
    FORWARDED,
    HOP,
    HOP_SECONDS,
    caller_host,
    hop_holds,
    hop_proof,
)
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import register_terminal
from tests.support.serve import FloorProcess
from tests.support.store import Backend

SETUP = Actor(Role.OPERATOR, "set-up")
STAFF = {"dealer": "tok-dealer", "supervisor": "tok-super", "operator": "tok-operator"}


async def _prepare(db: str) -> None:
    store = await Store.open(db)
    try:
        for table in ("A1", "A2"):
            await store.save_table(table, "hybrid", {}, {})
        for role, token in STAFF.items():
            await creds.issue(store, role, f"{role}-1", by=SETUP, token=token)
        await register_terminal(store, "EWT-B", "A2", by=SETUP, key="key-EWT-B")
        await store.ensure_account("ann", "player", "ann")
        await store.fund("ann", 10_000, actor=Actor(Role.CASHIER, "cage"))
        await creds.issue(store, "player", "ann", by=SETUP, token="tok-ann")
    finally:
        await store.close()


async def _holders(db: str) -> dict[str, str]:
    store = await Store.open(db, migrate=False)
    try:
        async with store.engine.connect() as connection:
            rows = await connection.execute(
                text(
                    "SELECT table_id, url FROM table_leases WHERE holder <> '' AND expires_us > "
                    "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
                )
            )
            return {str(r[0]): str(r[1]) for r in rows}
    finally:
        await store.close()


@pytest.fixture
def floor(tmp_path: Path, postgres: Backend) -> Iterator[tuple[FloorProcess, FloorProcess]]:
    """A1 run by the first process, A2 by the second."""
    db = postgres.server_url
    asyncio.run(_prepare(db))
    first = FloorProcess(db, tmp_path, "first", "--tables", "A1")
    second: FloorProcess | None = None
    try:
        second = FloorProcess(db, tmp_path, "second", "--tables", "A2")
        wanted = {"A1": first.base, "A2": second.base}
        deadline = time.monotonic() + 20
        while asyncio.run(_holders(db)) != wanted:
            assert time.monotonic() < deadline, asyncio.run(_holders(db))
            time.sleep(0.2)
        time.sleep(1.5)  # each process's balance has read the other's lease
        yield first, second
    finally:
        for process in (first, second):
            if process is not None:
                process.stop()


def session(process: FloorProcess, role: str) -> str:
    """A session cookie of ``role`` signed in at ``process``'s pages."""
    answer = httpx.post(f"{process.base}/api/session", json={"token": STAFF[role]})
    assert answer.status_code == 200, answer.text
    return str(answer.cookies["tj_session"])


def page(process: FloorProcess, cookie: str, **extra: str) -> dict[str, str]:
    """The headers of a request from ``process``'s own pages: the cookie and the Origin."""
    return {"Cookie": f"tj_session={cookie}", "Origin": process.base, **extra}


def post(process: FloorProcess, path: str, headers: dict[str, str], body: Any) -> httpx.Response:
    return httpx.post(f"{process.base}{path}", json=body, headers=headers, timeout=20)


def terminal_tilts(process: FloorProcess, table: str) -> list[dict[str, Any]]:
    """The terminal tilts ``table``'s console shows, asked of the process that runs it."""
    state = httpx.get(
        f"{process.base}/api/tables/{table}/state",
        headers={"Authorization": f"Bearer {STAFF['supervisor']}"},
    )
    assert state.status_code == 200, state.text
    return [t for t in state.json()["tilts"] if t["scope"] == "terminal"]


@pytest.mark.slow
def test_every_staff_action_works_from_either_process_by_the_pages_session(
    floor: tuple[FloorProcess, FloorProcess],
) -> None:
    first, second = floor
    supervisor, dealer, operator = (session(first, r) for r in ("supervisor", "dealer", "operator"))
    # a procedure of the table the other process runs (633c.5(d))
    done = post(
        first,
        "/api/tables/A2/procedures/reader-inspection",
        page(first, supervisor),
        {"result": "ok"},
    )
    assert done.status_code == 200, done.text
    assert done.json()["reader_inspected"] is True
    assert done.json()["reader_by"] == "supervisor-1"
    # the table's tilt by the dealer and its clear by the supervisor
    tilted = post(
        first, "/api/tables/A2/tilt", page(first, dealer), {"code": "other", "reason": "spill"}
    )
    assert tilted.status_code == 200, tilted.text
    cleared = post(
        first,
        "/api/tables/A2/clear",
        page(first, supervisor),
        {"code": "fault_repaired", "reason": "checked"},
    )
    assert cleared.status_code == 200, cleared.text
    # a terminal registered at the other process's table (PA 605a.9(b))
    registered = post(
        first,
        "/api/floor/terminals",
        page(first, operator),
        {"terminal": "EWT-C", "table": "A2", "credential": True},
    )
    assert registered.status_code == 200, registered.text
    assert registered.json()["terminal"]["table_id"] == "A2"
    assert (
        post(
            first,
            "/api/floor/terminals",
            page(first, operator),
            {"terminal": "EWT-D", "table": "Z9"},
        ).status_code
        == 404
    )  # a table of no process
    # a terminal of the other process's table locked and cleared: its console shows it at once
    locked = post(
        first,
        "/api/floor/terminals/EWT-B/tilt",
        page(first, dealer),
        {"code": "door_open", "reason": "door"},
    )
    assert locked.status_code == 200, locked.text
    assert [t["code"] for t in terminal_tilts(second, "A2")] == ["door_open"]
    unlocked = post(
        first,
        "/api/floor/terminals/EWT-B/clear",
        page(first, supervisor),
        {"code": "fault_repaired", "reason": "closed"},
    )
    assert unlocked.status_code == 200, unlocked.text
    assert terminal_tilts(second, "A2") == []
    # the other way round: the second process's pages act on the first's table
    decks = post(
        second,
        "/api/tables/A1/procedures/decks",
        page(second, session(second, "dealer")),
        {"decks": 6},
    )
    assert decks.status_code == 200, decks.text
    assert decks.json()["decks_by"] == "dealer-1"
    # a player signed in at the first process's pages, at a terminal of the second's table, tips
    enabled = httpx.put(
        f"{first.base}/api/floor/settings",
        json={"key": "tips_enabled", "value": True},
        headers=page(first, operator),
    )
    assert enabled.status_code == 200, enabled.text
    signed_in = httpx.post(
        f"{first.base}/api/session",
        json={"token": "tok-ann", "terminal": "EWT-B", "terminal_key": "key-EWT-B"},
    )
    assert signed_in.status_code == 200, signed_in.text
    ann = str(signed_in.cookies["tj_session"])
    tipped = post(first, "/api/floor/tip", page(first, ann), {"table": "A2", "amount": 100})
    assert tipped.status_code == 200, tipped.text


@pytest.mark.slow
def test_a_foreign_origin_is_refused_across_the_hop_and_forged_hop_headers_prove_nothing(
    floor: tuple[FloorProcess, FloorProcess],
) -> None:
    first, second = floor
    cookie = session(first, "supervisor")
    evil = "http://evil.example"
    forged = {
        FORWARDED: "1",
        CALLER_HOST: "evil.example",
        HOP: hop_proof(
            b"\0" * 32, "POST", "/api/tables/A2/tilt", "evil.example", time.time_ns() // 1000
        ),
    }
    attempts = {
        # straight at the table's process, claiming a hop from a host matching the Origin
        "forged hop": (second, {"Cookie": f"tj_session={cookie}", "Origin": evil, **forged}),
        # the same without any proof
        "no proof": (
            second,
            {"Cookie": f"tj_session={cookie}", "Origin": evil, FORWARDED: "1", CALLER_HOST: "evil.example"},
        ),
        # through the other process: the hop is real, the Origin is still foreign
        "through the floor": (first, {"Cookie": f"tj_session={cookie}", "Origin": evil}),
        # the forging headers through the other process: it replaces them with its own
        "forged through the floor": (
            first, {"Cookie": f"tj_session={cookie}", "Origin": evil, CALLER_HOST: "evil.example"}
        ),
    }  # fmt: skip
    for what, (process, headers) in attempts.items():
        answer = post(process, "/api/tables/A2/tilt", headers, {"code": "other", "reason": "spill"})
        assert answer.status_code == 403, (what, answer.text)
        # a forged proof is refused as such; without one, the Origin is judged by the host
        assert answer.json()["detail"]["code"] == ("hop" if what == "forged hop" else "origin")
    # nothing was locked by them; the pages' own request is taken
    assert (
        post(
            first, "/api/tables/A2/tilt", page(first, cookie), {"code": "other", "reason": "spill"}
        ).status_code
        == 200
    )


def test_a_hop_proof_holds_for_its_key_method_path_host_body_credential_and_half_minute_only() -> (
    None
):
    key, path, now = b"k" * 32, "/api/tables/A2/tilt", time.time_ns() // 1000
    body, credential = b'{"code":"other","reason":"spill"}', "Bearer tok-super\n"
    proof = hop_proof(key, "POST", path, "a:1", now, body, credential)
    assert hop_holds(key, "POST", path, "a:1", body, credential, proof)
    stale = hop_proof(
        key, "POST", path, "a:1", now - int((HOP_SECONDS + 1) * 1e6), body, credential
    )
    refused = {
        "another key": (b"x" * 32, "POST", path, "a:1", body, credential, proof),
        "no key here (one process)": (None, "POST", path, "a:1", body, credential, proof),
        "another method": (key, "GET", path, "a:1", body, credential, proof),
        "another path": (key, "POST", "/api/tables/A1/tilt", "a:1", body, credential, proof),
        "another host claimed": (key, "POST", path, "evil.example", body, credential, proof),
        "the body altered": (key, "POST", path, "a:1", body.replace(b"spill", b"fixed"), credential, proof),
        "the body dropped": (key, "POST", path, "a:1", b"", credential, proof),
        "the credential swapped": (key, "POST", path, "a:1", body, "Bearer tok-dealer\n", proof),
        "a cookie added": (key, "POST", path, "a:1", body, credential + "tj_session=x", proof),
        "too old": (key, "POST", path, "a:1", body, credential, stale),
        "no proof": (key, "POST", path, "a:1", body, credential, ""),
        "not a proof": (key, "POST", path, "a:1", body, credential, "soon.0000"),
    }  # fmt: skip
    for what, arguments in refused.items():
        assert not hop_holds(*arguments), what


def test_the_caller_host_counts_only_once_the_proof_held() -> None:
    """The claimed host alone (the header, even with a proof beside it) counts for nothing:
    only the receiving check, which reads the body, names it."""
    key = b"k" * 32
    proof = hop_proof(key, "POST", "/api/tables/A2/tilt", "a:1", time.time_ns() // 1000)
    headers = [(b"host", b"b:2"), (CALLER_HOST.encode(), b"a:1"), (HOP.encode(), proof.encode())]
    app = SimpleNamespace(state=SimpleNamespace(hop_key=key))
    scope = {"type": "http", "method": "POST", "path": "/api/tables/A2/tilt", "headers": headers}
    assert caller_host(Request({**scope, "app": app})) == "b:2"
