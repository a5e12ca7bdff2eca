"""Finding 4 — tokens lived forever. Credentials are hashed at rest, expire (per role), are
revoked by a supervisor over REST or the command line — effective on the next message — and
never travel in a URL; staff roles have the least privilege each needs (PA 605a.4(d))."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from tablejack.cli import app as cli
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.support import auth as auth_module
from tablejack.server.table import TableConfig
from tablejack.store import Store
from tablejack.store.policy import PERMISSIONS, Role
from tests.support.floor import TOKENS, auth
from tests.support.store import Backend

from .conftest import Floorkit, Socketkit, setup_floor


def test_605a4d_tokens_are_kept_as_their_sha256_only(floor: Floorkit) -> None:
    floor.session("ann")

    async def body(store: Store) -> tuple[set[str], str]:
        async with store.engine.connect() as connection:
            hashes = {
                str(row[0])
                for row in (await connection.execute(text("SELECT token_hash FROM credentials")))
            }
            rows = []
            for table in ("credentials", "events", "audit", "ledger_entries"):
                rows += (await connection.execute(text(f"SELECT * FROM {table}"))).all()
            dump = "\n".join(str(tuple(row)) for row in rows)
        return hashes, dump

    hashes, dump = floor.run(body)
    for token in TOKENS.values():
        assert hashlib.sha256(token.encode()).hexdigest() in hashes
        assert token not in dump


def test_a_token_in_a_url_is_refused_and_audited(floor: Floorkit) -> None:
    answer = floor.client.get(f"/api/me?token={TOKENS['super']}")
    assert answer.status_code == 400
    assert answer.json()["detail"]["code"] == "token_in_url"
    with_header = floor.client.get(f"/api/me?token={TOKENS['super']}", headers=auth("super"))
    assert with_header.status_code == 400
    floor.stop()  # refusals before authentication are counted: one row per window
    rows = floor.run(lambda store: store.audit_entries(limit=1000))
    [row] = [row for row in rows if row["kind"] == "token_in_url"]
    assert row["message"].startswith("2 refused requests before authentication")


def test_no_page_puts_a_token_in_a_url() -> None:
    static = Path(__import__("tablejack.server", fromlist=["x"]).__file__).parent / "static"
    for page in static.glob("*.*"):
        source = page.read_text(encoding="utf-8")
        assert "token=" not in source and "query.token" not in source, page.name


class Clock:
    """A floor clock the test moves."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture
def timed(backend: Backend) -> Any:
    clock = Clock()
    rules = HybridRules(countdown_seconds=1)
    table = TableConfig("A1", rules, automated=False, require_procedures=False)
    client = TestClient(
        create_app(backend.server_url, tables=[table], setup=setup_floor, clock=clock)
    )
    client.__enter__()
    try:
        yield client, clock
    finally:
        client.__exit__(None, None, None)


def test_605a4d_credentials_expire_with_their_roles_lifetime(timed: Any) -> None:
    client, clock = timed
    terminal = {"terminal": "EWT-1", "terminal_key": "key-EWT-1"}
    session = client.post("/api/session", json={"token": TOKENS["ann"], **terminal})
    headers = {"Authorization": f"Bearer {session.cookies['tj_session']}"}
    client.cookies.clear()
    with client.websocket_connect("/ws") as socket:
        ann = Socketkit(
            socket, {"type": "hello", "protocol": 2, "token": TOKENS["ann"], **terminal}, "A1"
        )
        assert client.get("/api/me", headers=headers).status_code == 200
        clock.offset = 13 * 3600  # past a session's 12 hours, inside the dealer's 30 days
        assert client.get("/api/me", headers=headers).status_code == 401
        assert client.get("/api/me", headers=auth("dealer")).status_code == 200
        clock.offset = 31 * 86400  # past a staff token's 30 days
        assert client.get("/api/me", headers=auth("dealer")).status_code == 401
        assert client.get("/api/me", headers=auth("ann")).status_code == 200  # a card: a year
        clock.offset = 366 * 86400  # past the terminal's credential and ann's card
        socket.send_json({"type": "ping", "id": "p"})
        expired = ann.until(lambda m: m["type"] == "error")
        assert expired["code"] == "credential"
        with pytest.raises(WebSocketDisconnect):
            socket.receive_json()


def test_605a4d_the_operator_sets_a_roles_lifetime(floor: Floorkit) -> None:
    answer = floor.client.put(
        "/api/floor/settings",
        json={"key": "token_lifetimes", "value": {"dealer": 3600}},
        headers=auth("operator"),
    )
    assert answer.status_code == 200, answer.text
    issued = floor.client.post(
        "/api/tokens", json={"role": "dealer", "subject": "dave"}, headers=auth("operator")
    ).json()
    assert abs(issued["expires_us"] - issued["created_us"] - 3600 * 10**6) < 10**6
    refused = floor.client.put(
        "/api/floor/settings",
        json={"key": "token_lifetimes", "value": {"dealer": 1}},
        headers=auth("operator"),
    )
    assert refused.status_code == 409
    by_supervisor = floor.client.put(
        "/api/floor/settings",
        json={"key": "session_lifetime_s", "value": 600},
        headers=auth("super"),
    )
    assert by_supervisor.status_code == 403


def credential_of(floor: Floorkit, role: str, subject: str) -> str:
    listed = floor.client.get(
        f"/api/tokens?role={role}&subject={subject}", headers=auth("super")
    ).json()
    return str(next(c["id"] for c in listed if c["parent"] is None))


def test_605a4d_a_supervisor_revokes_a_token_effective_on_the_next_message(
    floor: Floorkit,
) -> None:
    session = floor.session("ann")
    with floor.client.websocket_connect("/ws") as socket:
        ann = Socketkit(socket, floor.hello("ann"), "A1")
        revoked = floor.client.post(
            f"/api/tokens/{credential_of(floor, 'player', 'ann')}/revoke", headers=auth("super")
        ).json()
        assert len(revoked["revoked"]) == 2  # the token and the session opened with it
        assert revoked["closed_sockets"] == 1
        closing = ann.until(lambda m: m["type"] == "error")
        assert closing["code"] == "credential"
    assert floor.client.get("/api/me", headers=auth("ann")).status_code == 401
    assert floor.client.get("/api/me", headers=session).status_code == 401
    sign_in = floor.client.post(
        "/api/session",
        json={"token": TOKENS["ann"], "terminal": "EWT-1", "terminal_key": "key-EWT-1"},
    )
    assert sign_in.status_code == 401
    refusal = floor.client.post(
        f"/api/tokens/{credential_of(floor, 'supervisor', 'sam')}/revoke", headers=auth("dealer")
    )
    assert refusal.status_code == 403


def refused_once_watched(socket: Any, kit: Socketkit) -> dict[str, Any]:
    """Ping until the socket's next message is refused (the revocation watch has seen what
    changed in the database), at most ten watch intervals; the error frame (or the last pong)."""
    deadline = time.monotonic() + 10 * auth_module.WATCH_SECONDS
    frame: dict[str, Any] = {}
    while time.monotonic() < deadline:
        time.sleep(auth_module.WATCH_SECONDS / 2)
        socket.send_json({"type": "ping", "id": "p"})
        frame = kit.until(lambda m: m["type"] in ("pong", "error"))
        if frame["type"] == "error":
            break
    return frame


def test_605a4d_a_token_revoked_from_the_command_line_stops_a_running_server(
    floor: Floorkit,
) -> None:
    with floor.client.websocket_connect("/ws") as socket:
        ann = Socketkit(socket, floor.hello("ann"), "A1")
        result = CliRunner().invoke(
            cli,
            [
                "tokens",
                "revoke",
                credential_of(floor, "player", "ann"),
                "--db",
                floor.backend.server_url,
                "--by",
                "sam",
            ],
        )
        assert result.exit_code == 0, result.output
        assert floor.client.get("/api/me", headers=auth("ann")).status_code == 401  # at once
        assert refused_once_watched(socket, ann)["code"] == "credential"


def test_a_token_deleted_from_the_database_stops_working(floor: Floorkit) -> None:
    """The attack of the finding: a token deleted from the database kept working (cached)."""
    with floor.client.websocket_connect("/ws") as socket:
        dealer = Socketkit(
            socket, {"type": "hello", "protocol": 2, "token": TOKENS["dealer"]}, None
        )

        async def delete(store: Store) -> None:
            from tests.support.store import drop_guards

            await drop_guards(store)
            async with store.engine.begin() as connection:
                await connection.execute(
                    text("DELETE FROM credentials WHERE role = 'dealer' AND subject = 'dana'")
                )

        floor.run(delete)
        assert floor.client.get("/api/me", headers=auth("dealer")).status_code == 401
        assert refused_once_watched(socket, dealer)["code"] == "credential"


def test_signing_out_ends_the_session(floor: Floorkit) -> None:
    signed = floor.client.post(
        "/api/session",
        json={"token": TOKENS["ann"], "terminal": "EWT-1", "terminal_key": "key-EWT-1"},
    )
    cookie = signed.cookies["tj_session"]
    assert "httponly" in signed.headers["set-cookie"].lower()
    assert "samesite=strict" in signed.headers["set-cookie"].lower()
    assert floor.client.get("/api/me").json()["terminal"] == "EWT-1"  # the cookie signs in
    floor.client.delete("/api/session")
    floor.client.cookies.clear()
    assert (
        floor.client.get("/api/me", headers={"Authorization": f"Bearer {cookie}"}).status_code
        == 401
    )


# -- least privilege: each staff role may do what it needs and nothing more ----------------------

REQUESTS: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    "hand_pay": (
        "POST",
        "/api/floor/hand-pay",
        {"account": "ann", "terminal": "EWT-1", "amount": 100, "kind": "jackpot"},
    ),
    "void_round": ("POST", "/api/tables/A1/void", {"reason": "test"}),
    "allow_manual_entry": ("POST", "/api/tables/A1/manual-entry", {"reason": "the reader fails"}),
    "correct_card": ("POST", "/api/tables/A1/correct-card", {"code": "7D", "reason": "read wrong"}),
    "dealer_command": ("POST", "/api/tables/A1/dealer", {"command": "open-round"}),
    "sell_credit": ("POST", "/api/cage/credit", {"account": "ann", "amount": 100}),
    "sell_voucher": ("POST", "/api/cage/vouchers/sell", {"amount": 100}),
    "change_settings": ("PUT", "/api/floor/settings", {"key": "tips_enabled", "value": True}),
    "register_terminal": ("POST", "/api/floor/terminals", {"terminal": "EWT-7", "table": "A1"}),
    "issue_token": ("POST", "/api/tokens", {"role": "dealer", "subject": "x"}),
    "meter_clear": (
        "POST",
        "/api/floor/meters/clear",
        {"scope": "floor", "scope_id": "floor", "reason": "test"},
    ),
    "read_audit": ("GET", "/api/audit", None),
    "read_setting_history": ("GET", "/api/floor/settings/history", None),
    "void_voucher": (
        "POST",
        "/api/cage/vouchers/void",
        {"code": "123456789012345611", "reason": "test"},
    ),
    "read_cage_transactions": ("GET", "/api/cage/transactions", None),
    "read_player_limits": ("GET", "/api/floor/players/ann/limits", None),
    "set_player_limits": ("PUT", "/api/floor/players/ann/limits", {"wager_limit": 100_000}),
    "clear_tilt": ("POST", "/api/floor/terminals/EWT-1/clear", {"code": "other", "reason": "x"}),
}
STAFF = {"dealer": "dealer", "supervisor": "super", "cashier": "cashier", "operator": "operator"}


@pytest.mark.parametrize("role", sorted(STAFF))
def test_605a4d_each_staff_role_has_the_least_privilege(floor: Floorkit, role: str) -> None:
    """A dealer cannot pay out or sell credit; a cashier cannot touch rounds; the operator
    cannot move money or run rounds; a supervisor cannot issue tokens or register terminals.
    Each refusal answers 403, is audited and changes no balance."""
    before = floor.balances()
    for operation, (method, path, body) in REQUESTS.items():
        answer = floor.client.request(method, path, json=body, headers=auth(STAFF[role]))
        allowed = Role(role) in PERMISSIONS[operation]
        if allowed:
            assert answer.status_code != 403, (role, operation, answer.text)
        else:
            assert answer.status_code == 403, (role, operation, answer.status_code)
            assert answer.json()["detail"]["code"] == "role"
    if role in ("dealer", "operator"):  # neither moves money at all
        assert floor.balances() == before


def test_a_session_does_not_open_another(floor: Floorkit) -> None:
    session = floor.session("ann")["Authorization"][7:]
    again = floor.client.post(
        "/api/session",
        json={"token": session, "terminal": "EWT-1", "terminal_key": "key-EWT-1"},
    )
    assert again.status_code == 401


def test_another_site_cannot_ride_the_session_cookie(floor: Floorkit) -> None:
    """Cross-site request forgery and cross-site WebSocket hijacking: a request or a socket
    carrying the session cookie from a page of another origin is refused (the cookie is also
    SameSite=Strict, so a browser does not send it)."""
    signed = floor.client.post("/api/session", json={"token": TOKENS["super"]})
    assert signed.status_code == 200
    evil = {"Origin": "https://evil.example"}
    assert floor.client.get("/api/me").status_code == 200
    forged = floor.client.post("/api/tables/A1/void", json={"reason": "forged"}, headers=evil)
    assert forged.status_code == 403
    assert forged.json()["detail"]["code"] == "origin"
    with floor.client.websocket_connect("/ws", headers=evil) as socket:
        socket.send_json({"type": "hello", "protocol": 2})
        refused = socket.receive_json()
        assert (refused["type"], refused["code"]) == ("error", "origin")
    floor.client.cookies.clear()
