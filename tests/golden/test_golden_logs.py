"""Golden logs (docs/security.md, "Golden logs"): a floor's log as an earlier release wrote it
(``floor-<head>.sqlite`` and its checkpoint file, recorded once by :mod:`tests.golden.record`)
must open with this release (migrated to its head), verify with the golden test key, recall
and replay every round and read the same balances and meters as the release that wrote it —
a regulator's game recall and a casino's records depend on it for years. Nothing is recorded
again here: what is compared was read back by the recording release (``expected-<head>.json``),
timestamps and all.

What was recorded must be read identically; a later release may add to a document (a new key
of the recall) but not change or drop what was there."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

from tablejack.server.app import create_app
from tablejack.server.duties.recall import recall
from tablejack.store import Store
from tablejack.store.keys import load_public_key
from tablejack.store.verify import Report, verify
from tests.golden.readings import SUPERVISOR, readings
from tests.golden.record import PUBLIC_KEY
from tests.support.floor import auth

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

HERE = Path(__file__).resolve().parent
GOLDEN = sorted(HERE.glob("floor-*.sqlite"))
"""Every golden log checked in, oldest first; none is ever re-recorded or deleted."""


def release(database: Path) -> str:
    """The schema revision a golden log was written at (``floor-0014.sqlite``: ``0014``)."""
    return database.stem.removeprefix("floor-")


def copy(database: Path, into: Path) -> tuple[Path, Path]:
    """The golden log and its checkpoint file copied into ``into`` (the checked-in files are
    never opened: opening a database migrates it)."""
    head = release(database)
    db = into / database.name
    checkpoints = into / f"checkpoints-{head}.jsonl"
    shutil.copyfile(database, db)
    shutil.copyfile(database.with_name(checkpoints.name), checkpoints)
    return db, checkpoints


def expected(database: Path) -> dict[str, Any]:
    path = database.with_name(f"expected-{release(database)}.json")
    return dict(json.loads(path.read_text(encoding="utf-8")))


def differences(recorded: Any, now: Any, where: str = "") -> list[str]:
    """Where ``now`` does not hold what was ``recorded``: a value changed, a key or a list item
    gone or added to a list. Keys ``now`` has besides are allowed (a later release's
    additions)."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        found = []
        for key, value in recorded.items():
            if key not in now:
                found.append(f"{where}/{key}: gone")
            else:
                found += differences(value, now[key], f"{where}/{key}")
        return found
    if isinstance(recorded, list) and isinstance(now, list):
        if len(recorded) != len(now):
            return [f"{where}: {len(recorded)} items recorded, {len(now)} now"]
        found = []
        for index, (old, new) in enumerate(zip(recorded, now, strict=True)):
            found += differences(old, new, f"{where}[{index}]")
        return found
    return [] if recorded == now else [f"{where}: recorded {recorded!r}, now {now!r}"]


def test_a_golden_log_is_checked_in() -> None:
    assert GOLDEN, "no golden log in tests/golden"
    for database in GOLDEN:
        assert database.stat().st_size < 1_000_000
        assert database.with_name(f"checkpoints-{release(database)}.jsonl").exists()
        assert database.with_name(f"expected-{release(database)}.json").exists()


@pytest.mark.parametrize("database", GOLDEN, ids=release)
def test_a_log_written_by_an_earlier_release_verifies_recalls_and_replays_identically(
    database: Path, tmp_path: Path
) -> None:
    db, checkpoints = copy(database, tmp_path)
    recorded = expected(database)
    now = asyncio.run(readings(db, checkpoints, PUBLIC_KEY, recorded["rounds"]))
    # verify-log: every chain, the ledger against the events, every signed checkpoint
    report = now["verify"]
    assert report["ok"] and report["problems"] == [] and report["pending"] == [], report
    summary = {key: value for key, value in recorded["verify"].items() if key != "notes"}
    assert differences(summary, report) == []
    # game recall and the engine's replay of every round
    assert list(now["recalled"]) == recorded["rounds"]
    for round_id in recorded["rounds"]:
        old, new = recorded["recalled"][round_id], now["recalled"][round_id]
        assert new["recall"]["log_verified"] is True, round_id
        assert differences(old["recall"], new["recall"], round_id) == []
        assert differences(old["replay"], new["replay"], round_id) == []
    # the money: every account's balance, the meters
    assert now["balances"] == recorded["balances"]
    assert differences(recorded["meters"], now["meters"], "meters") == []


@pytest.mark.parametrize("database", GOLDEN, ids=release)
def test_a_golden_log_covers_every_game_wager_kind_and_the_floors_events(
    database: Path,
) -> None:
    """What the recording holds (so a later recording that drops a game is seen)."""
    recorded = expected(database)
    recalled = recorded["recalled"].values()
    assert {r["recall"]["game"] for r in recalled} >= {
        "classic",
        "hybrid",
        "hybrid-shared",
        "multi-action",
    }
    kinds = {s["kind"] for r in recalled for s in r["recall"]["settlements"]}
    assert kinds >= {
        "blackjack",
        "insurance",
        "ez_bust",
        "buzzer_beater",
        "royal_match",
        "bet_the_set",
        "kings_bounty",
    }
    assert "voided" in {r["recall"]["status"] for r in recalled}
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        events = {kind for (kind,) in connection.execute("SELECT DISTINCT kind FROM events")}
    finally:
        connection.close()
    assert events >= {"bill_in", "voucher_out", "voucher_in", "tilt", "tilt_clear", "void"}


@pytest.mark.parametrize("database", GOLDEN, ids=release)
def test_the_recall_route_answers_a_golden_logs_rounds_as_the_recording_release_did(
    database: Path, tmp_path: Path
) -> None:
    """``GET /api/rounds/{round_id}`` of a server started on the old log (no table of its own)
    answers the supervisor every round as it was recalled when it was recorded."""
    db, _ = copy(database, tmp_path)
    recorded = expected(database)
    with TestClient(create_app(str(db), tables=[])) as client:
        for round_id in recorded["rounds"]:
            answer = client.get(f"/api/rounds/{round_id}", headers=auth("super"))
            assert answer.status_code == 200, answer.text
            old = recorded["recalled"][round_id]["recall"]
            assert differences(old, answer.json(), round_id) == []


def tampered(database: Path, into: Path) -> tuple[Path, Path]:
    """A copy of the golden log with one byte of one event's payload changed (a card of round
    C1-000002, 10D read as 10H), the database's guards dropped first as its owner could."""
    db, checkpoints = copy(database, into)
    connection = sqlite3.connect(db)
    try:
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall():
            connection.execute(f'DROP TRIGGER "{name}"')
        seq, payload = connection.execute(
            "SELECT seq, payload FROM events WHERE round_id = 'C1-000002' AND kind = 'card' "
            "AND payload LIKE '%\"10D\"%'"
        ).fetchone()
        changed = payload.replace('"10D"', '"10H"', 1)
        assert len(changed) == len(payload) and changed != payload
        connection.execute(
            "UPDATE events SET payload = ? WHERE round_id = 'C1-000002' AND seq = ?",
            (changed, seq),
        )
        connection.commit()
    finally:
        connection.close()
    return db, checkpoints


@pytest.mark.parametrize("database", GOLDEN, ids=release)
def test_one_byte_changed_in_a_golden_logs_event_is_reported_by_verify_and_recall(
    database: Path, tmp_path: Path
) -> None:
    """The golden check is not vacuous: the same reading of a log with one payload byte
    changed fails."""
    db, checkpoints = tampered(database, tmp_path)

    async def read() -> tuple[Report, dict[str, Any] | None]:
        store = await Store.open(str(db))
        try:
            report = await verify(
                store,
                public_keys=[load_public_key(PUBLIC_KEY)],
                checkpoint_file=checkpoints,
                strict=True,
            )
            return report, await recall(store, "C1-000002", SUPERVISOR)
        finally:
            await store.close()

    report, document = asyncio.run(read())
    assert not report.ok
    assert any("C1-000002" in problem for problem in report.problems), report.problems
    assert document is not None and document["log_verified"] is False
    recorded = expected(database)["recalled"]["C1-000002"]["recall"]
    assert differences(recorded, document, "C1-000002") != []
