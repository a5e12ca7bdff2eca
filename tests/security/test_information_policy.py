"""Finding 1 — a player read the dealer's hole card before it was turned: the round's recall, the
terminal's recall of the open round and the staff's table state and WebSocket join all carried
it. One information policy (:mod:`tablejack.server.visibility`) now decides what each role sees.

The attack of the finding is replayed on every game the server runs (classic with a hole card,
version A with a hole card, version B, multi-action): at each phase of a round every GET route of
the app (walked from ``app.routes``) is asked by every role — the player, another player, the
dealer, the supervisor, the cashier, the operator, a terminal's device credential, anonymous —
and every WebSocket frame each of them receives is kept. No answer may carry a card face down
(the hole card before it is turned: PA 633c.5(o) has the dealer insert it into the card reader
"without exposing it to anyone at the table, including the dealer") or a card not yet dealt,
and a player's answers carry no other player's name or balance.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.routing import APIRoute

from tablejack.core.cards import Card
from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tests.support.store import Backend

from .conftest import Socketkit

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TOKENS = {
    "ann": "tok-ann",
    "bob": "tok-bob",
    "dealer": "tok-dealer",
    "super": "tok-super",
    "cashier": "tok-cashier",
    "operator": "tok-operator",
}
ANN_CREDIT = 100_000
BOB_CREDIT = 123_457  # a balance no other number of the floor has
"""bob's balance, which ann must never read; it is ``BOB_CREDIT - 1000`` once he wagers."""


@dataclass(frozen=True)
class Game:
    """A table of one game, its stacked shoe and the round played at it: ann (position 1) and
    bob (position 2) wager $10 each, ``actions`` are sent after the deal, the round completes.
    ``face_down``: the card dealt face down (the hole card); ``undealt``: the shoe's next card,
    dealt to nobody this round."""

    table: str
    rules: Any
    order: str
    face_down: str | None
    undealt: str
    actions: tuple[tuple[str, dict[str, Any]], ...]
    spots: tuple[int, ...] | None = None

    @property
    def stake(self) -> int:
        """What each player wagers (cents)."""
        return 1000 if self.spots is None else sum(self.spots)


GAMES = [
    # ann 10S 7C = 17, bob 9H 9C = 18; dealer 6D + hole QH (16) draws 2S: 18
    Game(
        "C1",
        ClassicRules(),
        "10S 9H 6D 7C 9C QH 2S 4D",
        "QH",
        "4D",
        (("ann", {"verb": "stand"}), ("bob", {"verb": "stand"})),
    ),
    # version A: ann 10S 5C = 15, bob 9H 9C = 18; dealer 6D + hole QH (16) draws 4S: 20
    Game(
        "A1",
        HybridRules(countdown_seconds=30),
        "10S 9H 6D 5C 9C QH 4S 3D 3D 3D",
        "QH",
        "3D",
        (("ann", {"verb": "stand"}), ("bob", {"verb": "stand"})),
    ),
    # version B: shared start 10S 6H, the dealer's first card 9D, community 5C 7D 4S 2C
    Game(
        "B1",
        HybridSharedRules(
            royal_match=False, bet_the_set=False, kings_bounty=False, countdown_seconds=30
        ),
        "10S 9D 6H 5C 7D 4S 2C QD QD QD",
        None,
        "QD",
        (("ann", {"verb": "stand"}), ("bob", {"verb": "stand"})),
    ),
    # multi-action: ann 10S 5C, bob 6H 5D; the dealer's first card 6D; three dealer rounds
    Game(
        "M1",
        MultiActionRules(),
        "10S 6H 6D 5C 5D 10H 8D 10C 5H KD 2C JD JD JD JD",
        None,
        "JD",
        (("ann", {"verb": "stand"}), ("bob", {"verb": "stand"})),
        spots=(1000, 0, 1000),
    ),
]
READER = "R1"
"""A classic table dealt from a card-reading shoe of one deck (its count by code is shown)."""
TERMINAL_KEYS = {
    f"{table}-EWT{n}": f"key-{table}-EWT{n}"
    for table in [*(game.table for game in GAMES), READER]
    for n in (1, 2)
}
ROLES = ("ann", "bob", "dealer", "super", "cashier", "operator", "terminal", "anonymous")
"""Every viewer: the player, another player, the staff, a terminal's device, nobody."""


async def setup_floor(floor: Floor) -> None:
    """ann and bob; a dealer, a supervisor, a cashier and an operator; two terminals per table
    (position 1 and 2)."""
    await floor.add_player("ann", ANN_CREDIT, TOKENS["ann"])
    await floor.add_player("bob", BOB_CREDIT, TOKENS["bob"])
    for role, subject, key in (
        ("dealer", "dana", "dealer"),
        ("supervisor", "sam", "super"),
        ("cashier", "cleo", "cashier"),
        ("operator", "olga", "operator"),
    ):
        await floor.issue_token(role, subject, TOKENS[key])
    for table in [*(game.table for game in GAMES), READER]:
        for n in (1, 2):
            terminal = f"{table}-EWT{n}"
            position = 1 if table == "B1" else n
            await floor.register_terminal(
                terminal, table, position=position, key=TERMINAL_KEYS[terminal]
            )


@pytest.fixture
def client(backend: Backend) -> Iterator[TestClient]:
    """A floor with one table of each game, dealt from stacked shoes by the dealer."""
    tables = [
        TableConfig(
            game.table,
            game.rules,
            automated=False,
            require_procedures=False,
            countdown_seconds=30,
            cards=game.order,
        )
        for game in GAMES
    ]
    tables.append(
        TableConfig(
            READER,
            ClassicRules(decks=1),
            automated=False,
            require_procedures=False,
            countdown_seconds=30,
            source="reader",
        )
    )
    app = create_app(backend.server_url, tables=tables, setup=setup_floor)
    with TestClient(app) as running:
        yield running


@dataclass
class Seen:
    """What the viewers were shown: (phase, viewer, what) → the JSON answer or frame."""

    answers: list[tuple[str, str, str, Any]] = field(default_factory=list)

    def add(self, phase: str, viewer: str, what: str, body: Any) -> None:
        self.answers.append((phase, viewer, what, body))


def strings(value: Any) -> Iterator[str]:
    """Every string value of a JSON document (keys too, but not the keys of a count by card
    code, whose keys are every code of the shoe and say nothing of the order)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        counts = value and all(isinstance(v, int) for v in value.values()) and _codes(value)
        for key, item in value.items():
            if not counts:
                yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def _codes(mapping: dict[str, Any]) -> bool:
    try:
        for key in mapping:
            Card.parse(key)
    except Exception:
        return False
    return True


def numbers(value: Any) -> Iterator[int]:
    """Every integer of a JSON document."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from numbers(item)


def shows(body: Any, code: str) -> bool:
    """True when ``code`` (or its printed form, e.g. ``Q♥``) is in a string of ``body`` as a
    token of its own: not inside a longer run of letters and digits, such as a hash or the
    server's install path (``/tmp/tmp.A7PZF16Dqr`` holds no six of diamonds)."""
    display = Card.parse(code).display
    pattern = re.compile(
        rf"(?<![0-9A-Za-z])(?:{re.escape(code)}|{re.escape(display)})(?![0-9A-Za-z])"
    )
    return any(pattern.search(text) for text in strings(body))


def headers(client: TestClient, viewer: str, game: Game) -> dict[str, str]:
    """The Authorization header of ``viewer`` at ``game``'s table (a player's session at his
    terminal; a terminal's own device credential; none for anonymous)."""
    if viewer == "anonymous":
        return {}
    if viewer == "terminal":
        return {"Authorization": f"Bearer {TERMINAL_KEYS[f'{game.table}-EWT1']}"}
    if viewer in ("ann", "bob"):
        terminal = f"{game.table}-EWT{1 if viewer == 'ann' else 2}"
        answer = client.post(
            "/api/session",
            json={
                "token": TOKENS[viewer],
                "terminal": terminal,
                "terminal_key": TERMINAL_KEYS[terminal],
            },
        )
        assert answer.status_code == 200, answer.text
        token = answer.cookies["tj_session"]
        client.cookies.clear()
        return {"Authorization": f"Bearer {token}"}
    return {"Authorization": f"Bearer {TOKENS[viewer]}"}


def walk(routes: list[Any]) -> Iterator[APIRoute]:
    """Every API route of ``routes``, those of included routers too."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from walk(included.routes)


def get_routes(client: TestClient) -> list[str]:
    """The path of every GET route of the app's API."""
    app: Any = client.app
    documented = {path for path, verbs in app.openapi()["paths"].items() if "get" in verbs}
    paths = sorted(
        {
            route.path
            for route in walk(app.routes)
            if "GET" in route.methods
            and (route.path.startswith("/api") or route.path in documented)  # /metrics too
        }
    )
    assert documented <= set(paths), documented - set(paths)  # the walk found the whole API
    return paths


def ask_every_route(
    client: TestClient, seen: Seen, phase: str, game: Game, round_id: str, auth: dict[str, Any]
) -> None:
    """Every GET route, each path parameter filled with this round's table, round, terminal,
    account (ann's and bob's)."""
    values = {
        "table_id": [game.table],
        "round_id": [round_id],
        "terminal": [f"{game.table}-EWT1", f"{game.table}-EWT2"],
        "account_id": ["ann", "bob"],
        "account": ["ann", "bob"],
        "number": ["1"],
        "name": ["en.json"],
    }
    for path in get_routes(client):
        fills = [{}]
        for parameter, options in values.items():
            if "{" + parameter + "}" in path:
                fills = [fill | {parameter: option} for fill in fills for option in options]
        for fill in fills:
            url = path.format(**fill)
            for viewer in ROLES:
                answer = client.get(url, headers=auth[viewer])
                try:
                    body = answer.json()
                except ValueError:
                    body = answer.text
                seen.add(phase, viewer, f"GET {url} {answer.status_code}", body)


def dealer(client: TestClient, game: Game, command: str) -> dict[str, Any]:
    answer = client.post(
        f"/api/tables/{game.table}/dealer",
        json={"command": command},
        headers={"Authorization": f"Bearer {TOKENS['dealer']}"},
    )
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def phase_of(message: dict[str, Any]) -> str | None:
    view = message.get("view") if message.get("type") == "state" else None
    return None if not view else view.get("phase")


def play(client: TestClient, game: Game, seen: Seen) -> str:
    """One round at ``game``'s table, every surface asked at each phase; the round id."""
    auth = {viewer: headers(client, viewer, game) for viewer in ROLES}
    ask_every_route(client, seen, "before the round", game, f"{game.table}-000001", auth)
    opened = dealer(client, game, "open-round")
    round_id = str(opened["round_id"])
    seen.add("wagering", "dealer", "POST dealer open-round", opened)
    sockets: dict[str, Socketkit] = {}
    with (
        client.websocket_connect("/ws") as ann_socket,
        client.websocket_connect("/ws") as bob_socket,
        client.websocket_connect("/ws") as dealer_socket,
        client.websocket_connect("/ws") as super_socket,
        client.websocket_connect("/ws") as cashier_socket,
        client.websocket_connect("/ws") as operator_socket,
        client.websocket_connect("/ws") as anonymous_socket,
    ):
        for viewer, socket in (
            ("ann", ann_socket),
            ("bob", bob_socket),
            ("dealer", dealer_socket),
            ("super", super_socket),
            ("cashier", cashier_socket),
            ("operator", operator_socket),
        ):
            hello: dict[str, Any] = {"type": "hello", "protocol": 2, "token": TOKENS[viewer]}
            if viewer in ("ann", "bob"):
                terminal = f"{game.table}-EWT{1 if viewer == 'ann' else 2}"
                hello |= {"terminal": terminal, "terminal_key": TERMINAL_KEYS[terminal]}
            sockets[viewer] = Socketkit(socket, hello, game.table)
            seen.add("wagering", viewer, "frame welcome", sockets[viewer].welcome)
        anonymous_socket.send_json({"type": "hello", "protocol": 2})
        seen.add("wagering", "anonymous", "frame", anonymous_socket.receive_json())
        for player in ("ann", "bob"):
            wager: dict[str, Any] = {"type": "wager", "kind": "blackjack", "amount": game.stake}
            if game.spots is not None:
                wager["spots"] = list(game.spots)
            kit = sockets[player]
            ack = kit.request(wager)
            assert ack["type"] == "ack", ack
            kit.socket.send_json({"type": "ping", "id": "p"})
            pong = kit.until(lambda m: m["type"] == "pong")
            error = kit.request({"type": "action", "verb": "fly"})
            for frame in (ack, pong, error):
                seen.add("wagering", player, f"frame {frame['type']}", frame)
        ask_every_route(client, seen, "wagering", game, round_id, auth)
        seen.add(
            "dealt", "dealer", "POST dealer close-wagering", dealer(client, game, "close-wagering")
        )
        drain(sockets, seen, "dealt", "playing")
        ask_every_route(client, seen, "dealt", game, round_id, auth)
        for player, action in game.actions:
            ack = sockets[player].request({"type": "action", **action})
            assert ack["type"] == "ack", ack
            seen.add("complete", player, "frame ack", ack)
        drain(sockets, seen, "complete", "complete")
    ask_every_route(client, seen, "complete", game, round_id, auth)
    return round_id


def drain(sockets: dict[str, Socketkit], seen: Seen, phase: str, reached: str) -> None:
    """Keep every frame each socket received until the round reached ``reached``: the
    players, the dealer and the supervisor see the round's phase; the cashier and the operator
    (no round in their state) are drained up to the answer of a ping sent after it."""
    for viewer, kit in sockets.items():
        if viewer in ("cashier", "operator"):
            kit.socket.send_json({"type": "ping", "id": f"drain-{phase}"})
            matched = kit.until(lambda m: m["type"] == "pong")
        else:
            matched = kit.until(lambda m: phase_of(m) == reached)
        for message in [*kit.seen, matched]:
            seen.add(phase, viewer, f"frame {message.get('type')}", message)
        kit.seen.clear()


HIDDEN_PHASES = ("before the round", "wagering", "dealt")


@pytest.mark.parametrize("game", GAMES, ids=[g.table for g in GAMES])
def test_633c5_o_nobody_reads_a_face_down_or_undealt_card_nor_another_players_data(
    client: TestClient, game: Game
) -> None:
    seen = Seen()
    play(client, game, seen)
    frames = {what for _, _, what, _ in seen.answers if what.startswith("frame")}
    every = {"welcome", "table", "state", "ack", "pong", "error"}
    assert {f"frame {kind}" for kind in every} <= frames
    dealt_cards = set(game.order.split()) - {game.undealt}
    leaks = []
    for phase, viewer, what, body in seen.answers:
        if phase in HIDDEN_PHASES and game.face_down is not None and shows(body, game.face_down):
            leaks.append(f"{phase}: {viewer} read the face-down {game.face_down} in {what}")
        if shows(body, game.undealt):
            leaks.append(f"{phase}: {viewer} read the undealt {game.undealt} in {what}")
        if phase == "dealt" and viewer in ("cashier", "operator", "terminal", "anonymous"):
            for code in dealt_cards:  # no card of the round in progress: not their need
                if shows(body, code):
                    leaks.append(f"{phase}: {viewer} read the card {code} in {what}")
        status = what.rsplit(" ", 1)[-1]
        if viewer == "ann" and (what.startswith("frame") or status.startswith("2")):
            if any(text == "bob" or " bob" in text or "bob " in text for text in strings(body)):
                leaks.append(f"{phase}: ann read bob's name in {what}")
            if {BOB_CREDIT, BOB_CREDIT - game.stake} & set(numbers(body)):
                leaks.append(f"{phase}: ann read bob's balance in {what}")
    assert not leaks, "\n".join(sorted(set(leaks))[:40])
    # the hole card was dealt and is shown once turned: the test looks where it would be
    complete = [
        body
        for phase, viewer, what, body in seen.answers
        if phase == "complete" and viewer == "ann" and what.startswith("GET /api/rounds/")
    ]
    assert complete and complete[0]["status"] == "complete"
    if game.face_down is not None:
        assert shows(complete[0], game.face_down)
    dealt = [c["code"] for c in complete[0]["cards"]]
    assert game.undealt not in dealt  # the shoe's next card was dealt to nobody


def test_633c5_o_a_shoes_count_by_code_does_not_tell_the_hole_card(client: TestClient) -> None:
    """The count of the cards left in a reader table's shoe, per code, read before and after
    the hole card is read: it would tell the hole card by the one code whose count fell. The
    policy counts a face-down card as still in the shoe until it is turned."""
    dealer_auth = {"Authorization": f"Bearer {TOKENS['dealer']}"}
    super_auth = {"Authorization": f"Bearer {TOKENS['super']}"}
    deck = [
        f"{rank}{suit}"
        for suit in "SHDC"
        for rank in ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    ]
    loaded = client.post(
        f"/api/tables/{READER}/shoe/load", json={"cards": " ".join(deck)}, headers=dealer_auth
    )
    assert loaded.status_code == 200, loaded.text

    def counts() -> list[dict[str, int]]:
        """Every count by code the staff can read: the shoe route's, the table state's."""
        shoe = client.get(f"/api/tables/{READER}/shoe", headers=super_auth).json()["loaded"]
        state = client.get(f"/api/tables/{READER}/state", headers=dealer_auth).json()["shoe"]
        return [shoe["remaining_by_code"], state["remaining_by_code"]]

    def card(code: str) -> None:
        """The card-reading shoe reads ``code`` (the reader line)."""
        answer = client.post(
            f"/api/tables/{READER}/reader", content=f"{code}\n", headers=dealer_auth
        )
        assert answer.status_code == 200 and answer.text.startswith("OK "), answer.text

    game = Game(READER, ClassicRules(decks=1), "", None, "", ())
    client.post(f"/api/tables/{READER}/dealer", json={"command": "open-round"}, headers=dealer_auth)
    with client.websocket_connect("/ws") as socket:
        hello = {"type": "hello", "protocol": 2, "token": TOKENS["ann"]}
        terminal = f"{READER}-EWT1"
        ann = Socketkit(
            socket, hello | {"terminal": terminal, "terminal_key": TERMINAL_KEYS[terminal]}, READER
        )
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        dealer(client, game, "close-wagering")
        for code in ("10S", "6D", "7C"):  # ann, the dealer's up card, ann
            card(code)
        before = counts()
        assert [c["QH"] for c in before] == [1, 1]
        card("QH")  # the hole card, face down
        after = counts()
        assert after == before  # nothing tells which card went in face down
        state = client.get(f"/api/tables/{READER}/state", headers=dealer_auth).json()
        assert state["view"]["dealer"]["cards"] == ["6D", "back"]
        assert not shows(state, "QH")
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        card("2S")  # the hole card turned: 16, the dealer draws 2S: 18
        turned = counts()
    assert [c.get("QH", 0) for c in turned] == [0, 0]  # once turned it is counted out
    assert [c.get("2S", 0) for c in turned] == [0, 0]
