"""The revocation watch on a large floor (PA 605a.4(d)): each turn reads the revocations since
the last one and checks a slice of the credentials the process knows, a sweep of them all taking
``SWEEP_SECONDS``; a terminal's device credential revoked elsewhere (its key replaced, the
terminal retired) makes the next turn check every one, and a credential past its end closes its
sockets at the next turn without a query."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tablejack.server.support import auth as auth_module
from tablejack.server.support.auth import Auth
from tablejack.store import Store
from tablejack.store import credentials as creds
from tablejack.store.policy import Actor, Role
from tests.support.floor import TOKENS

from .conftest import Floorkit, Socketkit
from .test_session_binding import Closing

OLGA = Actor(Role.OPERATOR, "olga")


def on_store(tmp_path: Path, body: Callable[[Store], Awaitable[None]]) -> None:
    """Run ``body`` on a store of its own (an SQLite file): no server's watch beside it."""

    async def main() -> None:
        store = await Store.open(str(tmp_path / "watch.db"))
        try:
            await body(store)
        finally:
            await store.close()

    asyncio.run(main())


class Watched:
    """An :class:`Auth` of its own on the floor's database that knows ``count`` players'
    credentials, with every call of ``living`` recorded (the hashes it was asked about)."""

    def __init__(self, store: Store, count: int, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store = store
        self.later_us = 0
        """How far the watch's clock is ahead of the store's (a credential's end reached without
        waiting for it on the wall clock)."""
        self.auth = Auth(store, lambda: creds.now_us() + self.later_us)
        self.asked: list[list[str]] = []
        self.ended: list[set[str]] = []
        self.auth.on_end = lambda digests, why: self.ended.append(set(digests)) or len(digests)
        self.count = count
        living = creds.living

        async def recorded(store: Store, hashes: list[str], at_us: int) -> dict[str, int]:
            self.asked.append(list(hashes))
            return await living(store, hashes, at_us)

        monkeypatch.setattr(creds, "living", recorded)

    async def know(self) -> list[str]:
        tokens = [
            (await creds.issue(self.store, "player", f"sweep-{n}", by=OLGA)).token
            for n in range(self.count)
        ]
        for token in tokens:
            assert await self.auth.authenticate(token) is not None
        self.asked.clear()
        return [creds.token_hash(token) for token in tokens]


def test_605a4d_a_sweep_checks_every_known_credential_once_a_slice_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = math.ceil(auth_module.SWEEP_SECONDS / auth_module.WATCH_SECONDS)

    async def body(store: Store) -> None:
        watched = Watched(store, 40, monkeypatch)
        hashes = await watched.know()
        for _ in range(turns):
            await watched.auth.refresh(every=False)
        asked = [digest for call in watched.asked for digest in call]
        ours = [digest for digest in asked if digest in set(hashes)]
        assert sorted(ours) == sorted(hashes)  # each once in the sweep
        slice_ = math.ceil(len(asked) / turns)
        assert all(len(call) <= slice_ for call in watched.asked)
        assert len(watched.asked[0]) < len(hashes)  # a slice, not all of them
        watched.asked.clear()
        await watched.auth.refresh()  # a route's refresh: every credential at once
        assert set(hashes) <= set(watched.asked[0])

    on_store(tmp_path, body)


def test_605a4d_a_device_credential_revoked_elsewhere_makes_the_next_turn_check_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body(store: Store) -> None:
        watched = Watched(store, 20, monkeypatch)
        hashes = await watched.know()
        await watched.auth.refresh(every=False)
        assert len(watched.asked[-1]) < len(hashes)
        player = await creds.issue(store, "player", "sweep-player", by=OLGA)
        await watched.auth.refresh(every=False)
        assert len(watched.asked[-1]) < len(hashes)  # a player's revocation: no full check
        await creds.revoke(store, player.credential.id, by=OLGA)
        await watched.auth.refresh(every=False)
        assert len(watched.asked[-1]) < len(hashes)
        device = await creds.issue(store, "terminal", "EWT-SWEEP", by=OLGA)
        await creds.revoke(store, device.credential.id, by=OLGA)  # another process rekeyed
        await watched.auth.refresh(every=False)
        assert set(hashes) <= set(watched.asked[-1])
        await watched.auth.refresh(every=False)  # seen once: back to slices
        assert len(watched.asked[-1]) < len(hashes)

    on_store(tmp_path, body)


def test_605a4d_a_credential_past_its_end_is_ended_by_the_next_turn_without_a_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body(store: Store) -> None:
        watched = Watched(store, 3, monkeypatch)
        issued = await creds.issue(store, "player", "brief", by=OLGA, lifetime_s=60)
        await watched.know()
        digest = creds.token_hash(issued.token)
        assert await watched.auth.authenticate(issued.token) is not None
        watched.asked.clear()
        watched.later_us = (
            61_000_000  # past its end, on the watch's clock (no wait on a loaded machine)
        )
        await watched.auth.refresh(every=False)
        assert any(digest in ended for ended in watched.ended)
        assert all(digest not in call for call in watched.asked)

    on_store(tmp_path, body)


def test_605a4d_a_credential_deleted_behind_the_server_closes_its_silent_socket_in_a_sweep(
    floor: Floorkit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No request with the deleted credential (which would end it at once): the watch's sweep
    finds it and closes the socket that says nothing."""
    monkeypatch.setattr(auth_module, "SWEEP_SECONDS", 2.0)
    with floor.client.websocket_connect("/ws") as socket:
        dealer = Socketkit(
            socket, {"type": "hello", "protocol": 2, "token": TOKENS["dealer"]}, None
        )
        assert dealer.welcome["type"] == "welcome"
        closing = Closing(socket)

        async def delete(store: Store) -> Any:
            from tests.support.store import drop_guards

            await drop_guards(store)
            async with store.engine.begin() as connection:
                await connection.execute(
                    text("DELETE FROM credentials WHERE role = 'dealer' AND subject = 'dana'")
                )

        started = time.monotonic()
        floor.run(delete)
        limit = 2 * auth_module.SWEEP_SECONDS + 3 * auth_module.WATCH_SECONDS
        code, reason, _ = closing.wait(limit)
        assert time.monotonic() - started < limit
    assert (code, reason) == (1008, "credential ended")


def test_605a4d_one_query_tells_a_credentials_life_as_lookup_and_living_do(
    tmp_path: Path,
) -> None:
    """A hello asks ``credentials.alive`` (one query) where it asked ``lookup`` and then
    ``living`` (two): for a player's token, a terminal's key and a session at the terminal —
    alive, then its terminal's row altered to another status, its terminal's key revoked, past
    its expiry, revoked
    itself, and a secret no one holds — both give the same answer and the same end."""
    from tablejack.store.vouchers import register_terminal

    async def both(store: Store, token: str, at_us: int) -> tuple[Any, Any]:
        known = await creds.lookup(store, token)
        living = (
            {} if known is None else await creds.living(store, [creds.token_hash(token)], at_us)
        )
        old = None if known is None or not living else (known.id, min(living.values()))
        found = await creds.alive(store, token, at_us)
        return old, None if found is None else (found[0].id, found[1])

    async def body(store: Store) -> None:
        player = await creds.issue(store, "player", "lena", by=OLGA)
        key = await register_terminal(store, "EWT-L", "T1", by=OLGA)
        assert key is not None
        session = await creds.open_session(
            store, player.credential, terminal="EWT-L", by=OLGA, device=key.credential
        )
        now = creds.now_us()
        answers = []
        for token in (player.token, key.token, session.token):
            answers.append(await both(store, token, now))
        assert all(old == new and new is not None for old, new in answers)
        far = now + 2 * 365 * 24 * 3600 * 1_000_000  # past every expiry
        assert await both(store, session.token, far) == (None, None)
        assert await both(store, "no one's secret", now) == (None, None)
        for status in ("suspended", "active"):  # the terminal's row altered behind the server
            async with store.engine.begin() as connection:
                await connection.execute(
                    text("UPDATE terminals SET status = :status WHERE id = 'EWT-L'"),
                    {"status": status},
                )
            if status != "active":
                assert await both(store, session.token, now) == (None, None)
        old, new = await both(store, session.token, now)
        assert old == new and new is not None
        await creds.revoke(store, key.credential.id, by=OLGA)
        assert await both(store, session.token, now) == (None, None)
        assert await both(store, key.token, now) == (None, None)
        old, new = await both(store, player.token, now)
        assert old == new and new is not None
        await creds.revoke(store, player.credential.id, by=OLGA)
        assert await both(store, player.token, now) == (None, None)

    on_store(tmp_path, body)


def test_605a4d_a_revocation_counts_the_sockets_it_closed_though_the_watch_turns_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch's turn can come while a revocation is being written: it must not read the
    revocation just committed and close its sockets itself — the supervisor who revoked is told
    how many sockets closed, and each is closed once."""

    async def body(store: Store) -> None:
        watched = Watched(store, 2, monkeypatch)
        issued = await creds.issue(store, "player", "revoked-mid-turn", by=OLGA)
        assert await watched.auth.authenticate(issued.token) is not None
        digest = creds.token_hash(issued.token)
        revoke = creds.revoke
        turns: list[asyncio.Task[int]] = []

        async def committed_then_a_turn(store: Store, credential_id: str, **kw: Any) -> Any:
            ids = await revoke(store, credential_id, **kw)
            turns.append(asyncio.create_task(watched.auth.refresh(every=False)))
            await asyncio.wait(turns, timeout=0.5)  # the turn runs now, if it may
            return ids

        monkeypatch.setattr(creds, "revoke", committed_then_a_turn)
        revocation = await watched.auth.revoke(issued.credential.id, by=OLGA)
        assert revocation.closed == 1
        assert await turns[0] == 0  # the turn came after, with nothing left to close
        assert [ended for ended in watched.ended if digest in ended] == [{digest}]

    on_store(tmp_path, body)
