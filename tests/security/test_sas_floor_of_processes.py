"""A terminal's SAS link on a floor of two ``tablejack serve`` processes on one PostgreSQL
database (PA 605a.5(a), (c)): the link runs in the first process only, and the terminal's
player reaches the second. Every money route of that terminal runs where its link is —
forwarded there — so a cash-out is validated by the casino system's host and a bill is the
host's event; when the link's process has stopped, the second refuses the terminal's money
(503, ``host_link``) and moves nothing, rather than printing a voucher of its own that the
casino system never saw (the attacker's test: a player who picks the process without the
link).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tablejack.store import Store, terminal_links
from tablejack.store import credentials as creds
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import register_terminal
from tests.floor.test_sas_link import TitoHost
from tests.support.floor import bearer, eventually, insert
from tests.support.serve import FloorProcess, free_port, wait_listening
from tests.support.store import Backend

SETUP = Actor(Role.OPERATOR, "set-up")
KEY = "key-EWT-A"


async def _prepare(db: str) -> None:
    store = await Store.open(db)
    try:
        for table in ("A1", "A2"):
            await store.save_table(table, "hybrid", {}, {})
        await creds.issue(store, "supervisor", "sue", by=SETUP, token="tok-super")
        await register_terminal(store, "EWT-A", "A1", by=SETUP, key=KEY)
        await store.ensure_account("ann", "player", "ann")
        await store.fund("ann", 10_000, actor=Actor(Role.CASHIER, "cage"))
        await creds.issue(store, "player", "ann", by=SETUP, token="tok-ann")
    finally:
        await store.close()


async def _holder(db: str) -> terminal_links.Holder | None:
    store = await Store.open(db, migrate=False)
    try:
        return await terminal_links.holder(store, "EWT-A")
    finally:
        await store.close()


@pytest.fixture
def floor(tmp_path: Path, postgres: Backend) -> Iterator[tuple[FloorProcess, FloorProcess, int]]:
    """The first process holds EWT-A's SAS line (address 1), the second does not."""
    db = postgres.server_url
    asyncio.run(_prepare(db))
    sas = free_port()
    first = FloorProcess(
        db, tmp_path, "first", "--tables", "A1", "--sas", f"EWT-A=tcp://127.0.0.1:{sas},address=1"
    )
    second: FloorProcess | None = None
    try:
        wait_listening(first.process, sas, first.log)
        second = FloorProcess(db, tmp_path, "second", "--tables", "A2")
        found = eventually(lambda: asyncio.run(_holder(db)))
        assert (found.member.startswith("host-first"), found.url) == (True, first.base)
        yield first, second, sas
    finally:
        for process in (first, second):
            if process is not None:
                process.stop()


def _player(process: FloorProcess) -> httpx.Client:
    """ann signed in at EWT-A through ``process``: a client with her session's credential."""
    client = httpx.Client(base_url=process.base, timeout=30)
    answer = client.post(
        "/api/session", json={"token": "tok-ann", "terminal": "EWT-A", "terminal_key": KEY}
    )
    assert answer.status_code == 200, answer.text
    client.headers.update(bearer(str(answer.cookies["tj_session"])))
    client.cookies.clear()
    return client


def _balance(client: httpx.Client) -> int:
    me = client.get("/api/me")
    assert me.status_code == 200, me.text
    return int(me.json()["balance"])


@pytest.mark.slow
def test_605a5a_a_terminals_money_runs_where_its_sas_link_is_or_not_at_all(
    floor: tuple[FloorProcess, FloorProcess, int],
) -> None:
    first, second, sas = floor
    with contextlib.closing(_player(second)) as ann:
        headers: dict[str, Any] = dict(ann.headers)
        # a bill at the process without the line: the line's process takes it (the host's meters)
        billed = insert(
            ann, "/api/floor/bill-in", json={"amount": 2000}, headers=headers, terminal_key=KEY
        )
        assert billed.status_code == 200, billed.text
        assert _balance(ann) == 12_000
        with TitoHost(f"tcp://127.0.0.1:{sas}", addresses=(1,)) as host:
            out = ann.post("/api/floor/cash-out", json={"amount": 1500})
            assert out.status_code == 200, out.text
            code = out.json()["validation_code"]
            # the casino system's host gave the validation number: the ticket is one it knows
            assert eventually(lambda: host.tickets) == {code: 1500}
            record = httpx.get(
                f"{second.base}/api/floor/vouchers/{out.json()['voucher_number']}",
                headers=bearer("tok-super"),
            ).json()
            assert record["validated_by"] == "sas:01"
        assert _balance(ann) == 10_500
        # the attacker's test: the line's process stops; the other one pays nothing past the host
        first.stop()
        refused = ann.post("/api/floor/cash-out", json={"amount": 500})
        assert refused.status_code == 503, refused.text
        assert refused.json()["detail"]["code"] == "host_link"
        assert "EWT-A" in refused.json()["detail"]["message"]
        redeemed = insert(
            ann, "/api/floor/voucher-in", json={"code": code}, headers=headers, terminal_key=KEY
        )
        assert redeemed.status_code == 503, redeemed.text
        assert _balance(ann) == 10_500
        audit = httpx.get(f"{second.base}/api/audit", headers=bearer("tok-super")).json()
        assert any(entry["kind"] == "host_link" for entry in audit)
