"""Record this release's golden log: a small floor played from stacked shoes, kept in the
tests so that every later release must open it, verify it and recall it identically
(docs/security.md, "Golden logs").

Run it once per release that changes what the log holds (a migration, a new event), from the
repository's root::

    PYTHONPATH=src:. python -m tests.golden.record

It starts the table server on a fresh SQLite file (``create_app`` behind a test client), its
checkpoints signed with the golden test key of ``tests/golden/keys/`` (a test key, never a
casino's), and plays:

- **classic** (C1, EZ Bust): insurance taken and declined against a dealer Blackjack; an EZ Bust
  wager placed and declined, a split and a double; a round voided by a supervisor;
- **hybrid version A** (A1): Blackjack Wagers and a Buzzer Beater, a hit on a community card;
- **hybrid version B** (B1): Blackjack Wagers with Royal Match 21, Bet the Set and King's
  Bounty;
- **multi-action** (M1): two players backing spots one and three;
- the cash: a bill in (cat), a voucher cashed out at one terminal (ann) and redeemed at another
  (bob); a terminal tilt and a table tilt, each raised and cleared.

It writes, beside this file, named after the schema's head revision ``<head>``:
``floor-<head>.sqlite`` (vacuumed), ``checkpoints-<head>.jsonl`` (the checkpoint file outside
the database) and ``expected-<head>.json`` (what the test must read back: every round's recall
as the supervisor reads it and its replay through the engine, the verify-log report, the
balances and the meters). A golden file once checked in is never recorded again nor deleted:
the script refuses to overwrite one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import sys
import tempfile
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.script import ScriptDirectory

from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.http.trust import CheckpointSettings
from tablejack.server.table import TableConfig
from tablejack.store import validator as validators
from tests.golden.readings import readings
from tests.support.floor import TOKENS, auth, eventually, round_statuses

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

HERE = Path(__file__).resolve().parent
KEYS = HERE / "keys"
PRIVATE_KEY = KEYS / "golden-test-checkpoint.key"
"""The golden floor's checkpoint signing key: a test key, checked in, signing nothing else."""
PUBLIC_KEY = KEYS / "golden-test-checkpoint.pub"

TERMINALS = {
    f"{table}-EWT{n}": (table, position, f"golden-key-{table}-EWT{n}")
    for table in ("C1", "A1", "B1", "M1")
    for n, position in ((1, 1), (2, 1 if table == "B1" else 2))
}
"""Each table's two terminals: (table, position, device credential)."""

C1_ORDER = " ".join(
    [
        "10S 8D AS 9H 3C KD",  # ann 19, bob 11; dealer A up, K in the hole: Blackjack
        "8S 6C 6H 8H 5D 10C 10D 9D 9C 10H",  # ann 8 8 splits, bob 11 doubles; dealer 16 busts
        "2C 3C 4C 5C 6C 7C 8C 9C",  # never dealt: the voided round takes no card
    ]
)
A1_ORDER = "10S 9H 6D 5C 9C 10H 4S 8D 2D 3D 4D 5D"
"""ann 10S 5C hits the community 4S: 19; bob 9H 9C: 18; dealer 6D 10H draws 8D: 24."""
B1_ORDER = "KH 9D KH 8C 2C 3C 4C 5C"
"""The shared start KH KH (20) under every side wager; dealer 9D, the community 8C: 17."""
M1_ORDER = "10S 6H 6D 5C 5D 10H 8D 10C 5H KD 2C JD JD JD JD"
"""ann 10S 5C, bob 6H 5D; the dealer's first card 6D and three dealer rounds."""


def head_revision() -> str:
    """The schema's head revision (the golden files are named after it)."""
    config = Config()
    migrations = resources.files("tablejack.store") / "migrations"
    config.set_main_option("script_location", str(migrations))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return str(head)


async def setup_floor(floor: Floor) -> None:
    """ann and bob with $1,000.00 each, cat with nothing; the staff; two terminals a table."""
    for player, credit in (("ann", 100_000), ("bob", 100_000), ("cat", 0)):
        await floor.add_player(player, credit, TOKENS[player])
    for role, subject, who in (
        ("dealer", "dana", "dealer"),
        ("supervisor", "sam", "super"),
        ("cashier", "cleo", "cashier"),
        ("operator", "olga", "operator"),
    ):
        await floor.issue_token(role, subject, TOKENS[who])
    for terminal, (table, position, key) in TERMINALS.items():
        await floor.register_terminal(terminal, table, position=position, key=key)


def tables() -> list[TableConfig]:
    """C1, A1, B1 and M1, each dealt a stacked order by the dealer, a 30-second clock that
    never runs out while the script plays."""
    common: dict[str, Any] = {
        "automated": False,
        "require_procedures": False,
        "countdown_seconds": 30,
        "seed": 1,
    }
    return [
        TableConfig("C1", ClassicRules(ez_bust=True), cards=C1_ORDER, **common),
        TableConfig("A1", HybridRules(countdown_seconds=30), cards=A1_ORDER, **common),
        TableConfig("B1", HybridSharedRules(countdown_seconds=30), cards=B1_ORDER, **common),
        TableConfig("M1", MultiActionRules(), cards=M1_ORDER, **common),
    ]


class Player:
    """A player's socket at a terminal: said hello, joined its table."""

    def __init__(self, socket: Any, who: str, terminal: str) -> None:
        self.socket = socket
        self.terminal = terminal
        self.counter = 0
        self.seen: list[dict[str, Any]] = []
        table, _, key = TERMINALS[terminal]
        socket.send_json(
            {
                "type": "hello",
                "protocol": 2,
                "token": TOKENS[who],
                "terminal": terminal,
                "terminal_key": key,
            }
        )
        welcome = self.until(lambda m: m["type"] in ("welcome", "error"))
        assert welcome["type"] == "welcome", welcome
        assert self.request({"type": "join", "table": table})["type"] == "ack"

    def until(self, predicate: Any) -> dict[str, Any]:
        for index, message in enumerate(self.seen):
            if predicate(message):
                del self.seen[index]
                return message
        for _ in range(400):
            message = dict(self.socket.receive_json())
            if predicate(message):
                return message
            self.seen.append(message)
        raise AssertionError("no matching message")

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.counter += 1
        command_id = f"{self.terminal}-{self.counter}"
        self.socket.send_json({**message, "id": command_id})
        return self.until(lambda m: m.get("id") == command_id and m["type"] in ("ack", "error"))

    def ok(self, message: dict[str, Any]) -> None:
        answer = self.request(message)
        assert answer["type"] == "ack", answer

    def phase(self, wanted: str) -> None:
        self.until(lambda m: m["type"] == "state" and (m.get("view") or {}).get("phase") == wanted)


def dealer(client: TestClient, table: str, command: str) -> dict[str, Any]:
    answer = client.post(
        f"/api/tables/{table}/dealer", json={"command": command}, headers=auth("dealer")
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def post(client: TestClient, path: str, who: str, **body: Any) -> dict[str, Any]:
    answer = client.post(path, json=body, headers=auth(who))
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def play(
    client: TestClient,
    table: str,
    wagers: list[tuple[str, dict[str, Any]]],
    actions: list[tuple[str, dict[str, Any]]],
) -> str:
    """A round at ``table``: ann at its terminal 1 and bob at its terminal 2 place ``wagers``,
    the dealer closes wagering, ``actions`` are sent in order; the round completes and is
    written. Its id."""
    round_id = str(dealer(client, table, "open-round")["round_id"])
    with (
        client.websocket_connect("/ws") as ann_socket,
        client.websocket_connect("/ws") as bob_socket,
    ):
        players = {
            "ann": Player(ann_socket, "ann", f"{table}-EWT1"),
            "bob": Player(bob_socket, "bob", f"{table}-EWT2"),
        }
        for who, wager in wagers:
            players[who].ok({"type": "wager", **wager})
        dealer(client, table, "close-wagering")
        for who, action in actions:
            players[who].ok({"type": "action", **action})
        for player in players.values():
            player.phase("complete")
        eventually(lambda: round_statuses(client, table)[:1] == ["complete"])
    return round_id


def session(client: TestClient, who: str, terminal: str) -> dict[str, str]:
    answer = client.post(
        "/api/session",
        json={"token": TOKENS[who], "terminal": terminal, "terminal_key": TERMINALS[terminal][2]},
    )
    assert answer.status_code == 200, answer.text
    token = answer.cookies["tj_session"]
    client.cookies.clear()
    return {"Authorization": f"Bearer {token}"}


def validated(
    client: TestClient, path: str, headers: dict[str, str], terminal: str, event: str, **body: Any
) -> dict[str, Any]:
    """A bill or a voucher as ``terminal``'s validator reports it (signed by its controller,
    registered with the terminal's key)."""
    key = TERMINALS[terminal][2]
    private = validators.controller_key(key)
    registered = client.post(
        "/api/floor/validator",
        json={
            "public_key": validators.public_key_text(private.public_key()),
            "terminal": terminal,
            "terminal_key": key,
        },
    )
    assert registered.status_code == 200, registered.text
    kind = "bill" if path.endswith("bill-in") else "voucher"
    value = body["amount"] if kind == "bill" else body["code"]
    proof = validators.sign(private, terminal, event, kind, str(value))
    answer = client.post(path, json={**body, "event": event, "proof": proof}, headers=headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def play_floor(client: TestClient) -> list[str]:
    """Everything the golden floor records; the rounds' ids in the order played."""
    rounds = []
    # classic: insurance against a dealer Blackjack (ann takes it, bob declines)
    rounds.append(
        play(
            client,
            "C1",
            [
                ("ann", {"kind": "blackjack", "amount": 1000}),
                ("bob", {"kind": "blackjack", "amount": 1000}),
            ],
            [("ann", {"verb": "insurance", "amount": 500}), ("bob", {"verb": "no-insurance"})],
        )
    )
    # classic: EZ Bust placed and declined, a split, a double; the dealer busts
    rounds.append(
        play(
            client,
            "C1",
            [
                ("ann", {"kind": "blackjack", "amount": 1000}),
                ("bob", {"kind": "blackjack", "amount": 1000}),
            ],
            [
                ("ann", {"verb": "ez-bust", "amount": 500}),
                ("bob", {"verb": "no-ez-bust"}),
                ("ann", {"verb": "split"}),
                ("ann", {"verb": "stand"}),
                ("ann", {"verb": "stand"}),
                ("bob", {"verb": "double"}),
            ],
        )
    )
    # classic: a round voided by a supervisor before its first card
    voided = str(dealer(client, "C1", "open-round")["round_id"])
    with client.websocket_connect("/ws") as ann_socket:
        player = Player(ann_socket, "ann", "C1-EWT1")
        player.ok({"type": "wager", "kind": "blackjack", "amount": 2500})
        answer = post(client, "/api/tables/C1/void", "super", reason="misdeal: shoe dropped")
        assert answer["voided"] == voided, answer
    rounds.append(voided)
    # version A: a Blackjack Wager each and bob's Buzzer Beater; ann hits the community card
    rounds.append(
        play(
            client,
            "A1",
            [
                ("ann", {"kind": "blackjack", "amount": 1000}),
                ("bob", {"kind": "blackjack", "amount": 1000}),
                ("bob", {"kind": "buzzer_beater", "amount": 500}),
            ],
            [("bob", {"verb": "stand"}), ("ann", {"verb": "hit"}), ("ann", {"verb": "stand"})],
        )
    )
    # version B: every side wager of the shared start
    rounds.append(
        play(
            client,
            "B1",
            [
                ("ann", {"kind": "blackjack", "amount": 1000}),
                ("ann", {"kind": "royal_match", "amount": 500}),
                ("ann", {"kind": "bet_the_set", "amount": 500}),
                ("ann", {"kind": "kings_bounty", "amount": 500}),
                ("bob", {"kind": "blackjack", "amount": 1000}),
            ],
            [("ann", {"verb": "stand"}), ("bob", {"verb": "stand"})],
        )
    )
    # multi-action: spots one and three backed
    rounds.append(
        play(
            client,
            "M1",
            [
                ("ann", {"kind": "blackjack", "amount": 2000, "spots": [1000, 0, 1000]}),
                ("bob", {"kind": "blackjack", "amount": 2000, "spots": [1000, 0, 1000]}),
            ],
            [("ann", {"verb": "stand"}), ("bob", {"verb": "stand"})],
        )
    )
    # the cash: cat's bill, ann's voucher cashed out at A1-EWT1 and redeemed by bob at A1-EWT2
    cat = session(client, "cat", "B1-EWT1")
    validated(client, "/api/floor/bill-in", cat, "B1-EWT1", "golden-bill-1", amount=5000)
    ann = session(client, "ann", "A1-EWT1")
    out = client.post("/api/floor/cash-out", json={"amount": 2500}, headers=ann)
    assert out.status_code == 200, out.text
    bob = session(client, "bob", "A1-EWT2")
    code = out.json()["validation_code"]
    validated(client, "/api/floor/voucher-in", bob, "A1-EWT2", "golden-voucher-1", code=code)
    # a terminal tilt and a table tilt, each raised and cleared
    post(client, "/api/floor/terminals/M1-EWT2/tilt", "dealer", code="door_open", reason="door")
    post(
        client, "/api/floor/terminals/M1-EWT2/clear", "super", code="fault_repaired", reason="shut"
    )
    post(client, "/api/tables/B1/tilt", "dealer", code="reader_fault", reason="reader")
    post(client, "/api/tables/B1/clear", "super", code="checked_no_fault", reason="seen")
    return rounds


def record(out: Path) -> Path:
    """Play the golden floor and write its three files into ``out``; the database's path."""
    head = head_revision()
    target = out / f"floor-{head}.sqlite"
    if target.exists():
        raise SystemExit(f"{target} exists: a golden log is never recorded again.")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        database = work / "floor.sqlite"
        checkpoints = work / "checkpoints.jsonl"
        app = create_app(
            str(database),
            tables=tables(),
            setup=setup_floor,
            checkpoints=CheckpointSettings(PRIVATE_KEY, checkpoints, 3600.0),
        )
        with TestClient(app) as client:
            rounds = play_floor(client)
        with sqlite3.connect(database) as connection:  # one file, no write-ahead log beside it
            connection.execute("PRAGMA journal_mode=DELETE")
        connection = sqlite3.connect(database)
        connection.execute("VACUUM")
        connection.close()
        shutil.copyfile(database, target)
        shutil.copyfile(checkpoints, out / f"checkpoints-{head}.jsonl")
        copy = work / target.name  # read a copy: opening a database sets its journal mode
        shutil.copyfile(target, copy)
        checkpoint_file = out / f"checkpoints-{head}.jsonl"  # read only (its name is a note's)
        expected = asyncio.run(readings(copy, checkpoint_file, PUBLIC_KEY, rounds))
    (out / f"expected-{head}.json").write_text(
        json.dumps(expected, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="the folder (tests/golden)")
    arguments = parser.parse_args(argv)
    target = record(arguments.out)
    print(f"recorded {target} ({target.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
