"""Finding 2 — the ledger was outside the tamper evidence and the chain could be recomputed.

Every posting is bound into the hash of the event that caused it, and the server signs
checkpoints of the chain heads with a key that is not in the database, also appended to a file
outside it. Each test here plays a floor (a round, a cash-out and a voucher redeemed), stops
the server (a last checkpoint), then tampers as someone with the database owner's rights would
— the database's own guards removed first — and asserts that ``verify-log`` with the public key
reports it, naming the row. A floor nobody touched verifies clean, strictly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store import GENESIS, Store, chain_hash
from tests.support.floor import auth, insert
from tests.support.store import drop_guards

from .conftest import TERMINALS, Floorkit


def play_floor(floor: Floorkit) -> dict[str, Any]:
    """A round at A1, ann's cash-out of $20 to a voucher and bob redeeming it; the server
    stopped. What was played."""
    round_id = floor.play_round()
    ann = floor.session("ann", "EWT-1")
    voucher = floor.client.post("/api/floor/cash-out", json={"amount": 2000}, headers=ann)
    assert voucher.status_code == 200, voucher.text
    bob = floor.session("bob", "EWT-2")
    code = voucher.json()["validation_code"]
    redeemed = insert(
        floor.client,
        "/api/floor/voucher-in",
        json={"code": code},
        headers=bob,
        terminal_key=TERMINALS["EWT-2"],
    )
    assert redeemed.status_code == 200, redeemed.text
    floor.stop()
    return {"round": round_id, "voucher": voucher.json()["voucher_number"]}


def tamper(floor: Floorkit, *statements: str | tuple[str, dict[str, Any]]) -> None:
    """Remove the database's guards, then run ``statements`` (SQL, or SQL and parameters)."""

    async def body(store: Store) -> None:
        await drop_guards(store)
        async with store.engine.begin() as connection:
            for statement in statements:
                sql, values = statement if isinstance(statement, tuple) else (statement, {})
                await connection.execute(text(sql), values)

    floor.run(body)


async def rechain(connection: AsyncConnection, round_id: str) -> None:
    """Recompute a round's chain and head with the package's own chain function (what the
    finding showed passed ``verify-log``)."""
    rows = (
        await connection.execute(
            text(
                "SELECT seq, at_us, kind, actor, terminal, payload FROM events "
                "WHERE round_id = :r ORDER BY seq"
            ),
            {"r": round_id},
        )
    ).all()
    prev = GENESIS
    for seq, at_us, kind, actor, terminal, payload in rows:
        digest = chain_hash(prev, round_id, seq, at_us, kind, actor, terminal, payload)
        await connection.execute(
            text("UPDATE events SET prev_hash = :p, hash = :h WHERE round_id = :r AND seq = :s"),
            {"p": prev, "h": digest, "r": round_id, "s": seq},
        )
        prev = digest
    await connection.execute(
        text("UPDATE rounds SET last_seq = :s, head_hash = :h WHERE id = :r"),
        {"s": rows[-1][0] if rows else 0, "h": prev, "r": round_id},
    )


def rewrite(floor: Floorkit, change: Any) -> None:
    """Remove the guards, run ``change(connection)``, commit."""

    async def body(store: Store) -> None:
        await drop_guards(store)
        async with store.engine.begin() as connection:
            await change(connection)

    floor.run(body)


def problems(floor: Floorkit) -> list[str]:
    return floor.verify(strict=True).problems


def winnings_row(floor: Floorkit) -> tuple[int, str, str]:
    async def body(store: Store) -> tuple[int, str, str]:
        async with store.engine.connect() as connection:
            row = (
                await connection.execute(
                    text(
                        "SELECT id, from_account, to_account FROM ledger_entries "
                        "WHERE kind = 'winnings' ORDER BY id LIMIT 1"
                    )
                )
            ).one()
        return int(row[0]), str(row[1]), str(row[2])

    return floor.run(body)


def test_an_untouched_floor_verifies_clean_with_every_event_signed(floor: Floorkit) -> None:
    play_floor(floor)
    report = floor.verify(strict=True)
    assert (report.problems, report.pending) == ([], [])
    assert report.checkpoints >= 2
    assert report.ledger_rows >= 8


def test_a_ledger_amount_edited_is_named_by_its_row(floor: Floorkit) -> None:
    play_floor(floor)
    row, _, _ = winnings_row(floor)
    tamper(floor, f"UPDATE ledger_entries SET amount = amount + 5000000 WHERE id = {row}")
    found = problems(floor)
    assert any(p.startswith(f"ledger row {row} (winnings 5001000 ") for p in found), found
    assert any("balance" in p and "ledger sums to" in p for p in found), found


def test_a_ledger_amount_edited_with_the_balances_adjusted_is_named_by_its_row(
    floor: Floorkit,
) -> None:
    """The attack of the finding: a ``winnings`` row raised by $50,000 and the two balances
    adjusted to match passed ``verify-log``."""
    play_floor(floor)
    row, source, target = winnings_row(floor)
    tamper(
        floor,
        f"UPDATE ledger_entries SET amount = amount + 5000000 WHERE id = {row}",
        (
            "UPDATE accounts SET balance = balance + 5000000 WHERE id = :to",
            {"to": target},
        ),
        (
            "UPDATE accounts SET balance = balance - 5000000 WHERE id = :from",
            {"from": source},
        ),
    )
    found = problems(floor)
    assert any(f"ledger row {row} (winnings 5001000 house:A1→{target}" in p for p in found), found
    assert all("ledger sums to" not in p for p in found)  # the balances agree with the ledger


def test_an_event_edited_and_its_chain_recomputed_is_caught_by_the_signed_checkpoint(
    floor: Floorkit,
) -> None:
    """The attack of the finding: ann's wager raised to $10,000 in the event, its posting, the
    ledger row and both balances, and the round's chain recomputed with the package's own
    chain function — everything consistent inside the database."""
    played = play_floor(floor)
    round_id = played["round"]

    async def change(connection: AsyncConnection) -> None:
        seq, payload = (
            await connection.execute(
                text(
                    "SELECT seq, payload FROM events WHERE round_id = :r AND kind = 'wager' "
                    "ORDER BY seq LIMIT 1"
                ),
                {"r": round_id},
            )
        ).one()
        data = json.loads(payload)
        data["amount"] = 10_000_00
        data["postings"][0][3] = 10_000_00
        await connection.execute(
            text("UPDATE events SET payload = :p WHERE round_id = :r AND seq = :s"),
            {"p": json.dumps(data, sort_keys=True, separators=(",", ":")), "r": round_id, "s": seq},
        )
        await rechain(connection, round_id)

    rewrite(floor, change)
    found = problems(floor)
    assert any(f"{round_id} #" in p and "not the event checkpoint" in p for p in found), found
    assert all("the event was altered" not in p for p in found)  # the chain itself is whole


def test_a_rounds_last_events_deleted_are_caught_by_the_signed_checkpoint(
    floor: Floorkit,
) -> None:
    played = play_floor(floor)
    round_id = played["round"]

    async def change(connection: AsyncConnection) -> None:
        last = int(
            await connection.scalar(
                text("SELECT MAX(seq) FROM events WHERE round_id = :r"), {"r": round_id}
            )
        )
        await connection.execute(
            text("DELETE FROM ledger_entries WHERE round_id = :r AND seq >= :s"),
            {"r": round_id, "s": last - 1},
        )
        await connection.execute(
            text("DELETE FROM events WHERE round_id = :r AND seq >= :s"),
            {"r": round_id, "s": last - 1},
        )
        await rechain(connection, round_id)

    rewrite(floor, change)
    found = problems(floor)
    assert any(
        p.startswith(f"{round_id}: the log ends at event") and "(events deleted)" in p
        for p in found
    ), found


def test_a_whole_round_deleted_is_caught_by_the_signed_checkpoint(floor: Floorkit) -> None:
    played = play_floor(floor)
    round_id = played["round"]

    async def change(connection: AsyncConnection) -> None:
        for source, target, amount in (
            await connection.execute(
                text(
                    "SELECT from_account, to_account, amount FROM ledger_entries "
                    "WHERE round_id = :r"
                ),
                {"r": round_id},
            )
        ).all():
            await connection.execute(
                text("UPDATE accounts SET balance = balance + :a WHERE id = :f"),
                {"a": amount, "f": source},
            )
            await connection.execute(
                text("UPDATE accounts SET balance = balance - :a WHERE id = :t"),
                {"a": amount, "t": target},
            )
        for table, column in (("ledger_entries", "round_id"), ("events", "round_id")):
            await connection.execute(
                text(f"DELETE FROM {table} WHERE {column} = :r"), {"r": round_id}
            )
        await connection.execute(text("DELETE FROM rounds WHERE id = :r"), {"r": round_id})
        await connection.execute(text("DELETE FROM meters"))

    rewrite(floor, change)
    found = problems(floor)
    assert any(p.startswith(f"{round_id}: deleted — checkpoint") for p in found), found


def test_events_reordered_are_caught_by_the_signed_checkpoint(floor: Floorkit) -> None:
    played = play_floor(floor)
    round_id = played["round"]

    async def change(connection: AsyncConnection) -> None:
        rows = (
            await connection.execute(
                text(
                    "SELECT seq, kind, actor, terminal, payload FROM events WHERE round_id = :r "
                    "AND kind = 'wager' ORDER BY seq"
                ),
                {"r": round_id},
            )
        ).all()
        first, second = rows[0], rows[1]
        for target, source in ((first, second), (second, first)):
            await connection.execute(
                text(
                    "UPDATE events SET kind = :k, actor = :a, terminal = :t, payload = :p "
                    "WHERE round_id = :r AND seq = :s"
                ),
                {
                    "k": source[1],
                    "a": source[2],
                    "t": source[3],
                    "p": source[4],
                    "r": round_id,
                    "s": target[0],
                },
            )
        for target, source in ((first, second), (second, first)):
            await connection.execute(
                text(
                    "UPDATE ledger_entries SET seq = :new WHERE round_id = :r AND seq = :old "
                    "AND kind = 'wager' AND from_account = :player"
                ),
                {"new": target[0], "r": round_id, "old": source[0], "player": source[2]},
            )
        await rechain(connection, round_id)

    rewrite(floor, change)
    found = problems(floor)
    assert any(f"{round_id} #" in p and "not the event checkpoint" in p for p in found), found


def test_a_forged_round_inserted_is_covered_by_no_signed_checkpoint(floor: Floorkit) -> None:
    """A round that never happened — a valid chain, its posting in the event, a ledger row and
    balances that agree — written into the database of a stopped server."""
    play_floor(floor)
    forged = "A1-000099"

    async def change(connection: AsyncConnection) -> None:
        posting = ["winnings", "house:A1", "ann", 5_000_000, 0]
        payload = json.dumps({"postings": [posting]}, sort_keys=True, separators=(",", ":"))
        digest = chain_hash(GENESIS, forged, 1, 1, "complete", "", "", payload)
        await connection.execute(
            text(
                "INSERT INTO rounds (id, table_id, number, kind, game, status, opened_us, "
                "closed_us, last_seq, head_hash, covered_seq) VALUES (:r, 'A1', 99, 'round', "
                "'hybrid', 'complete', 1, 1, 1, :h, 1)"
            ),
            {"r": forged, "h": digest},
        )
        await connection.execute(
            text(
                "INSERT INTO events (round_id, seq, at_us, kind, actor, terminal, payload, "
                "prev_hash, hash) VALUES (:r, 1, 1, 'complete', '', '', :p, :g, :h)"
            ),
            {"r": forged, "p": payload, "g": GENESIS, "h": digest},
        )
        await connection.execute(
            text(
                "INSERT INTO ledger_entries (at_us, from_account, to_account, amount, kind, "
                "round_id, seq, wager_id, memo) VALUES (1, 'house:A1', 'ann', 5000000, "
                "'winnings', :r, 1, 0, '')"
            ),
            {"r": forged},
        )
        await connection.execute(
            text("UPDATE accounts SET balance = balance + 5000000 WHERE id = 'ann'")
        )
        await connection.execute(
            text("UPDATE accounts SET balance = balance - 5000000 WHERE id = 'house:A1'")
        )

    rewrite(floor, change)
    found = problems(floor)
    assert any(
        p.startswith(f"{forged}: events #1–#1 are covered by no signed checkpoint") for p in found
    ), found


def test_the_database_rolled_back_to_an_older_copy_is_caught_against_the_file(
    floor: Floorkit, tmp_path: Path
) -> None:
    """The database is replaced by a copy taken earlier (SQLite: the file itself; PostgreSQL:
    the checkpoints the copy would lack are removed). The checkpoint file kept outside the
    database holds the newer checkpoints."""
    floor.play_round()
    floor.client.post("/api/checkpoints", headers=auth("super"))
    copy = tmp_path / "copy.db"
    if floor.backend.name == "sqlite":
        floor.run(_sqlite_backup(copy))
    kept = int(floor.verify().checkpoints)
    ann = floor.session("ann")
    assert (
        floor.client.post("/api/floor/cash-out", json={"amount": 500}, headers=ann).status_code
        == 200
    )
    floor.stop()
    assert floor.verify(strict=True).problems == []
    if floor.backend.name == "sqlite":
        shutil.copyfile(copy, floor.backend.url)
    else:
        tamper(
            floor,
            f"DELETE FROM checkpoint_heads WHERE number > {kept}",
            f"DELETE FROM checkpoints WHERE number > {kept}",
        )
    found = floor.verify().problems
    assert any(
        f"checkpoint {kept + 1} of checkpoints.jsonl is not in the database: the database was "
        "rolled back" in p
        for p in found
    ), found


def _sqlite_backup(copy: Path) -> Any:
    async def body(store: Store) -> None:
        async with store.engine.connect() as connection:
            await connection.execute(text(f"VACUUM INTO '{copy}'"))

    return body


def test_a_checkpoint_statement_edited_or_its_heads_removed_fails_its_signature_or_root(
    floor: Floorkit,
) -> None:
    play_floor(floor)
    tamper(
        floor,
        (
            "UPDATE checkpoints SET statement = REPLACE(statement, :old, :new) WHERE number = 1",
            {"old": '"v":1', "new": '"v":2'},
        ),
        "DELETE FROM checkpoint_heads WHERE number = 2",
    )
    found = problems(floor)
    assert "checkpoint 1: the signature does not verify (forged or altered)" in found
    assert any(p.startswith("checkpoint 2: its heads in the database are not") for p in found)


def test_a_posting_with_no_event_behind_it_is_named_by_its_row(floor: Floorkit) -> None:
    play_floor(floor)
    tamper(
        floor,
        "INSERT INTO ledger_entries (at_us, from_account, to_account, amount, kind, memo) "
        "VALUES (1, 'cage', 'ann', 100000, 'fund', '')",
        "UPDATE accounts SET balance = balance + 100000 WHERE id = 'ann'",
        "UPDATE accounts SET balance = balance - 100000 WHERE id = 'cage'",
    )
    found = problems(floor)
    assert any(
        p.startswith("ledger row ") and "names no event: a posting with no event behind it" in p
        for p in found
    ), found


def test_a_redeemed_voucher_set_back_to_issued_is_caught(floor: Floorkit) -> None:
    """To redeem it a second time: the row says issued, but an event redeemed it, and the
    vouchers account no longer equals the vouchers outstanding."""
    played = play_floor(floor)
    number = int(played["voucher"])
    tamper(
        floor,
        f"UPDATE vouchers SET status = 'issued', redeemed_us = NULL WHERE id = {number}",
    )
    found = problems(floor)
    assert any(
        p.startswith(f"voucher {number:012d}: marked issued but acct:EWT-2") for p in found
    ), found
    assert any("vouchers outstanding" in p for p in found), found


def test_a_credential_written_into_the_database_is_caught(floor: Floorkit) -> None:
    play_floor(floor)
    tamper(
        floor,
        "INSERT INTO credentials (id, token_hash, role, subject, label, created_us, expires_us) "
        f"VALUES ('cr-forged', '{'0' * 64}', 'supervisor', 'mallory', '', 0, 99999999999999999)",
    )
    found = problems(floor)
    assert (
        "credential cr-forged (supervisor mallory): no event issued it (written into the "
        "database behind the server's back)" in found
    )


@pytest.mark.parametrize("kind", ["ledger", "event"])
def test_the_command_line_names_the_tamper_and_exits_1(
    floor: Floorkit, kind: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from tablejack.cli import app

    played = play_floor(floor)
    if kind == "ledger":
        row, _, _ = winnings_row(floor)
        tamper(floor, f"UPDATE ledger_entries SET amount = 1 WHERE id = {row}")
    else:
        tamper(
            floor,
            (
                "UPDATE events SET actor = 'mallory' WHERE round_id = :r AND seq = 2",
                {"r": played["round"]},
            ),
        )
    result = CliRunner().invoke(
        app,
        [
            "verify-log",
            "--db",
            floor.backend.server_url,
            "--public-key",
            str(floor.public_key),
            "--checkpoints",
            str(floor.checkpoint_file),
        ],
    )
    assert result.exit_code == 1, result.output
    expected = "PROBLEM ledger row" if kind == "ledger" else f"PROBLEM {played['round']} #2"
    assert expected in result.output
