"""Finding 2 — a terminal's session outlived the replacement of the terminal's key and the
terminal's retirement, and moved money: bill-ins credited, a cash-out voucher the cage paid,
``GET /api/me`` an unhandled 500. A session now lives only as long as the device credential (the
key generation) that proved its terminal, the terminal's registration (active) and the
credential it was opened with; each ends it at once, over REST and on open sockets.

Finding 7 (part) — signing out left the open WebSocket receiving the table's state until it next
spoke. Signing out, a revocation, a key replaced and a retirement now close the socket at once
(1008 ``credential ended``) without waiting for it to speak; a change made by another process
or the command line closes it within the revocation watch's interval (PA 605a.4(d))."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

import pytest
from starlette.websockets import WebSocketDisconnect

from tablejack.server.support import auth as auth_module
from tablejack.store import Store
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import register_terminal
from tests.support.floor import TOKENS, auth, insert

from .conftest import TERMINALS, Floorkit, Socketkit

NEW = "EWT-9"


def register(floor: Floorkit, terminal: str = NEW, **extra: Any) -> dict[str, Any]:
    """The operator registers, re-keys (``credential=True``) or retires a terminal at A1."""
    answer = floor.client.post(
        "/api/floor/terminals",
        json={"terminal": terminal, "table": "A1", **extra},
        headers=auth("operator"),
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def session_at(floor: Floorkit, terminal: str, key: str, who: str = "ann") -> dict[str, str]:
    """The Authorization header of ``who``'s session opened at ``terminal`` with ``key``."""
    answer = floor.client.post(
        "/api/session", json={"token": TOKENS[who], "terminal": terminal, "terminal_key": key}
    )
    assert answer.status_code == 200, answer.text
    token = answer.cookies["tj_session"]
    floor.client.cookies.clear()
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("change", ["key_replaced", "retired", "key_replaced_then_retired"])
def test_605a4d_a_session_ends_with_its_terminals_key_and_registration(
    floor: Floorkit, change: str
) -> None:
    """The attack of the finding: register, open a session with the key, replace the key and
    (or) retire the terminal; the session then moves no money, ``/api/me`` answers 401."""
    key = register(floor)["credential"]
    session = session_at(floor, NEW, key)
    cashed = floor.client.post("/api/floor/cash-out", json={"amount": 1000}, headers=session)
    assert cashed.status_code == 200, cashed.text  # the session worked before
    voucher = cashed.json()["validation_code"]
    if change.startswith("key_replaced"):
        new_key = register(floor, credential=True)["credential"]
        assert new_key and new_key != key
    if change.endswith("retired"):
        register(floor, status="retired")
    balances, rows = floor.balances(), floor.ledger_rows()
    for _ in range(5):
        billed = insert(floor.client, "/api/floor/bill-in", json={"amount": 10000}, headers=session)
        assert billed.status_code == 401, billed.text
    cash_out = floor.client.post("/api/floor/cash-out", json={"amount": 500}, headers=session)
    assert cash_out.status_code == 401, cash_out.text
    redeemed = insert(
        floor.client, "/api/floor/voucher-in", json={"code": voucher}, headers=session
    )
    assert redeemed.status_code == 401, redeemed.text
    me = floor.client.get("/api/me", headers=session)
    assert me.status_code == 401, me.text
    assert "expired or revoked" in me.text
    assert floor.balances() == balances  # nothing moved
    assert floor.ledger_rows() == rows
    paid = floor.client.post("/api/cage/vouchers", json={"code": voucher}, headers=auth("cashier"))
    assert paid.status_code == 200, paid.text  # the voucher cashed out before stays good
    if change == "key_replaced":  # the terminal with its new key signs players in again
        fresh = session_at(floor, NEW, new_key)
        billed = insert(
            floor.client,
            "/api/floor/bill-in",
            json={"amount": 100},
            headers=fresh,
            terminal_key=new_key,
        )
        assert billed.status_code == 200, billed.text
        old = floor.client.post(
            "/api/session", json={"token": TOKENS["ann"], "terminal": NEW, "terminal_key": key}
        )
        assert old.status_code == 403, old.text
    floor.stop()  # (a checkpoint taken while verify-log reads would be in the file only)
    report = floor.verify()
    assert report.ok, report.problems


def test_605a4d_a_session_ends_when_its_terminal_is_retired_behind_the_server(
    floor: Floorkit,
) -> None:
    """Retired by another process (or the command line): the next request is refused."""
    session = floor.session("ann", "EWT-2")
    assert floor.client.get("/api/me", headers=session).status_code == 200

    async def retire(store: Store) -> None:
        await register_terminal(
            store, "EWT-2", "A1", by=Actor(Role.OPERATOR, "olga"), status="retired"
        )

    floor.run(retire)
    assert floor.client.get("/api/me", headers=session).status_code == 401
    billed = insert(floor.client, "/api/floor/bill-in", json={"amount": 100}, headers=session)
    assert billed.status_code == 401


def test_605a4d_a_session_outlives_a_move_of_its_terminal(floor: Floorkit) -> None:
    """Not everything ends a session: moving the terminal to another position keeps its key."""
    session = floor.session("ann", "EWT-3")
    register(floor, "EWT-3", position=3)
    billed = insert(
        floor.client,
        "/api/floor/bill-in",
        json={"amount": 100},
        headers=session,
        terminal_key=TERMINALS["EWT-3"],
    )
    assert billed.status_code == 200, billed.text


class Closing:
    """Reads a socket in a thread of its own, without sending anything, until the server
    closes it: the frames it got and the close code and reason."""

    def __init__(self, socket: Any) -> None:
        self.frames: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None
        self.thread = threading.Thread(target=self._read, args=(socket,), daemon=True)
        self.thread.start()

    def _read(self, socket: Any) -> None:
        try:
            while True:
                self.frames.append(socket.receive_json())
        except WebSocketDisconnect as closed:
            self.closed = (closed.code, closed.reason)
        except Exception:  # the test's end tore the socket down: not a close
            return

    def wait(self, seconds: float) -> tuple[int, str, str]:
        """The close code, its reason and the message of the error frame before it."""
        self.thread.join(seconds)
        assert self.closed is not None, f"the socket is still open after {seconds} s"
        errors = [f for f in self.frames if f["type"] == "error"]
        assert errors and errors[-1]["code"] == "credential", self.frames
        return (*self.closed, errors[-1]["message"])


def ending(floor: Floorkit, how: str, terminal: str) -> dict[str, Any]:
    """End the socket's identity ``how``: the answer of the request that did it."""
    if how == "key_replaced":
        return register(floor, terminal, credential=True)
    if how == "retired":
        return register(floor, terminal, status="retired")
    if how == "signed_out":
        return dict(floor.client.delete("/api/session").json())
    listed = floor.client.get("/api/tokens?role=player&subject=ann", headers=auth("super")).json()
    token = next(c["id"] for c in listed if c["parent"] is None)
    answer = floor.client.post(f"/api/tokens/{token}/revoke", headers=auth("super"))
    return dict(answer.json())


WHY = {
    "key_replaced": "given a new key",
    "retired": "was retired",
    "revoked": "revoked",
    "signed_out": "Signed out",
}


@pytest.mark.parametrize(
    ("how", "signed_in"),
    [
        ("key_replaced", "hello"),
        ("key_replaced", "session"),
        ("retired", "hello"),
        ("retired", "session"),
        ("revoked", "hello"),
        ("revoked", "session"),
        ("signed_out", "session"),
    ],
)
def test_605a4d_an_open_socket_closes_at_once_when_its_identity_ends(
    floor: Floorkit, how: str, signed_in: str
) -> None:
    """The socket says nothing after its join: the server closes it (1008) with an error frame
    that says why, and the request that ended the identity counts it. The revocation watch is
    stopped first: the close is the request's doing, not the watch's a moment later."""
    portal, app = floor.client.portal, cast(Any, floor.client.app)
    assert portal is not None
    portal.call(app.state.floor.auth.stop)
    terminal = "EWT-2"
    if signed_in == "session":  # the page's socket, signed in by its session cookie
        answer = floor.client.post(
            "/api/session",
            json={
                "token": TOKENS["ann"],
                "terminal": terminal,
                "terminal_key": TERMINALS[terminal],
            },
        )
        assert answer.status_code == 200
        hello: dict[str, Any] = {"type": "hello", "protocol": 2}
    else:
        hello = floor.hello("ann", terminal)
    with floor.client.websocket_connect("/ws") as socket:
        kit = Socketkit(socket, hello, "A1")
        assert kit.welcome["type"] == "welcome", kit.welcome
        closing = Closing(socket)
        answer = ending(floor, how, terminal)
        assert answer["closed_sockets"] == 1, answer
        code, reason, why = closing.wait(5.0)
    assert (code, reason) == (1008, "credential ended")
    assert WHY[how] in why, why
    floor.client.cookies.clear()


def test_605a4d_a_socket_closes_within_the_watch_when_another_process_rekeys(
    floor: Floorkit,
) -> None:
    """The key replaced by another process of the floor (here: a second connection to the
    database, as the command line or another server): the silent socket closes within a few
    of the revocation watch's intervals."""
    with floor.client.websocket_connect("/ws") as socket:
        kit = Socketkit(socket, floor.hello("ann", "EWT-3"), "A1")
        assert kit.welcome["type"] == "welcome"
        closing = Closing(socket)

        async def rekey(store: Store) -> None:
            await register_terminal(
                store, "EWT-3", "A1", by=Actor(Role.OPERATOR, "olga"), credential=True
            )

        started = time.monotonic()
        floor.run(rekey)
        code, reason, _ = closing.wait(5 * auth_module.WATCH_SECONDS)
        assert time.monotonic() - started < 5 * auth_module.WATCH_SECONDS
    assert (code, reason) == (1008, "credential ended")


def test_605a4d_verify_log_finds_a_session_rebound_behind_the_server(floor: Floorkit) -> None:
    """The session's terminal and key generation are in the event that issued it: a row
    rebound in the database (another device credential) is reported by ``verify-log``."""
    floor.session("ann", "EWT-1")
    floor.stop()

    async def rebind(store: Store) -> None:
        from sqlalchemy import text

        from tests.support.store import drop_guards

        await drop_guards(store)
        async with store.engine.begin() as connection:
            other = await connection.scalar(
                text("SELECT id FROM credentials WHERE role = 'terminal' AND subject = 'EWT-2'")
            )
            await connection.execute(
                text("UPDATE credentials SET device = :other WHERE label = 'session'"),
                {"other": other},
            )

    assert floor.verify().ok
    floor.run(rebind)
    problems = floor.verify().problems
    assert any("differs from the event that issued it" in p for p in problems), problems
