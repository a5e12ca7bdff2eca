"""What ``verify-log`` sees beyond the event log: the checkpoint file checked both ways, and the
rows the server keeps beside the log — the meters, the floor settings, a credential's terminal.

Each test plays a floor, stops the server (a last checkpoint, appended to the file), then
edits as someone with the database owner's rights (or the file's writer) would, and asserts
that ``verify-log`` with the public key and the file names it. A floor nobody touched verifies
clean (``test_tamper.py::test_an_untouched_floor_verifies_clean_with_every_event_signed``,
which now runs these checks too)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from tablejack.store import Store
from tests.support.floor import auth
from tests.support.store import drop_guards

from .conftest import Floorkit


def tamper(floor: Floorkit, *statements: str | tuple[str, dict[str, Any]]) -> None:
    """Remove the database's guards, then run ``statements`` (SQL, or SQL and parameters)."""

    async def body(store: Store) -> None:
        await drop_guards(store)
        async with store.engine.begin() as connection:
            for statement in statements:
                sql, values = statement if isinstance(statement, tuple) else (statement, {})
                await connection.execute(text(sql), values)

    floor.run(body)


def problems(floor: Floorkit) -> list[str]:
    return floor.verify(strict=True).problems


def test_the_last_line_dropped_from_the_checkpoint_file_is_reported(floor: Floorkit) -> None:
    floor.play_round()
    floor.stop()
    assert problems(floor) == []
    lines = floor.checkpoint_file.read_text().splitlines(keepends=True)
    last = len(lines)  # the file holds checkpoints 1..N, the shutdown's last
    floor.checkpoint_file.write_text("".join(lines[:-1]))
    found = problems(floor)
    assert any(
        p.startswith(f"checkpoint {last} of the database is in no checkpoint file") for p in found
    ), found
    # a line from the middle too, once the last is back
    floor.checkpoint_file.write_text("".join(lines[:1] + lines[2:]))
    found = problems(floor)
    assert [p for p in found if "in no checkpoint file" in p] == [
        "checkpoint 2 of the database is in no checkpoint file (checkpoints.jsonl): its line "
        "was dropped from the file, or a file of the floor was not given"
    ], found


def test_the_command_line_reports_a_checkpoint_missing_from_the_files_and_exits_1(
    floor: Floorkit, tmp_path: Any
) -> None:
    from typer.testing import CliRunner

    from tablejack.cli import app

    floor.play_round()
    floor.stop()
    lines = floor.checkpoint_file.read_text().splitlines(keepends=True)
    other = tmp_path / "other-process.jsonl"  # a second process's file holding the last line
    other.write_text(lines[-1])
    floor.checkpoint_file.write_text("".join(lines[:-1]))
    command = [
        "verify-log", "--db", floor.backend.server_url, "--public-key", str(floor.public_key),
        "--checkpoints", str(floor.checkpoint_file),
    ]  # fmt: skip
    alone = CliRunner().invoke(app, command)
    assert alone.exit_code == 1, alone.output
    assert (
        f"PROBLEM checkpoint {len(lines)} of the database is in no checkpoint file" in alone.output
    )
    both = CliRunner().invoke(app, [*command, "--checkpoints", str(other)])
    assert both.exit_code == 0, both.output  # every checkpoint is in one of the floor's files


def test_a_checkpoint_signed_just_now_and_not_yet_in_the_file_is_pending_not_a_problem(
    floor: Floorkit,
) -> None:
    floor.play_round()
    floor.stop()
    lines = floor.checkpoint_file.read_text().splitlines(keepends=True)
    floor.checkpoint_file.write_text("".join(lines[:-1]))
    report = floor.verify(strict=False)
    assert report.problems == []
    assert any(f"checkpoint {len(lines)} (signed" in p for p in report.pending), report.pending


def test_a_meters_win_edited_in_the_database_is_reported(floor: Floorkit) -> None:
    floor.play_round()  # ann and bob win $10 each: the house's win is -2000 cents
    floor.stop()
    assert problems(floor) == []
    tamper(floor, "UPDATE meters SET win = win + 5000 WHERE table_id = 'A1'")
    assert (
        "meters A1 blackjack: drop 2000, win 3000 but the ledger books drop 2000, win -2000 "
        "(the meters row was changed)"
    ) in problems(floor)


def test_the_handpay_limit_edited_in_the_database_is_reported(floor: Floorkit) -> None:
    answer = floor.client.put(
        "/api/floor/settings",
        json={"key": "handpay_limit", "value": 50_000},
        headers=auth("operator"),
    )
    assert answer.status_code == 200, answer.text
    floor.stop()
    assert problems(floor) == []
    tamper(floor, "UPDATE floor_settings SET value = '99999999' WHERE key = 'handpay_limit'")
    found = problems(floor)
    assert any(
        p.startswith(
            "floor setting handpay_limit is 99999999 but floor-settings #1 set it to 50000"
        )
        for p in found
    ), found
    # a setting written straight into the database, and one deleted
    tamper(
        floor,
        "INSERT INTO floor_settings (key, value, set_by, set_us) "
        "VALUES ('voucher_limit', '100000000', 'mallory', 0)",
        "DELETE FROM floor_settings WHERE key = 'handpay_limit'",
    )
    found = problems(floor)
    assert any(p.startswith("floor setting voucher_limit: no event") for p in found), found
    assert any(
        p.startswith("floor setting handpay_limit: set by floor-settings #1 but its row is gone")
        for p in found
    ), found


@pytest.mark.parametrize("change", ["moved", "unbound"])
def test_a_credentials_terminal_edited_in_the_database_is_reported(
    floor: Floorkit, change: str
) -> None:
    floor.session("ann", "EWT-1")  # a session bound to terminal EWT-1
    floor.stop()
    assert problems(floor) == []
    value = "'EWT-3'" if change == "moved" else "NULL"
    tamper(floor, f"UPDATE credentials SET terminal = {value} WHERE terminal = 'EWT-1'")
    found = problems(floor)
    assert any(
        p.startswith("credential cr-")
        and "(player ann): the row differs from the event that issued it" in p
        for p in found
    ), found
