"""``tablejack verify-log`` and ``tablejack recall`` on a store written by the server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import text
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.store import Store
from tests.support.floor import ORDER
from tests.support.store import drop_guards


def play_one_round(make_client: Any, kit: Any, db: str) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER, countdown=30)], db=db)
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer"))
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        client.post(
            "/api/tables/A1/dealer", json={"command": "close-wagering"}, headers=kit.auth("dealer")
        )
        ann.request({"type": "action", "verb": "stand"})
        ann.state(lambda m: kit.phase(m) == "complete")
    client.__exit__(None, None, None)


def test_verify_log_passes_then_detects_an_edited_event(
    make_client: Any, kit: Any, tmp_path: Path
) -> None:
    db = str(tmp_path / "floor.db")
    play_one_round(make_client, kit, db)
    runner = CliRunner()
    clean = runner.invoke(app, ["verify-log", "--db", db])
    assert clean.exit_code == 0, clean.output
    assert "every hash chain intact, the ledger matches the events" in clean.output

    async def tamper() -> None:
        store = await Store.open(db)
        await drop_guards(store)
        async with store.engine.begin() as connection:
            await connection.execute(
                text("UPDATE events SET payload = :p WHERE round_id = 'A1-000001' AND seq = 2"),
                {
                    "p": '{"amount":100,"command_id":"x","kind":"blackjack","player":"ann","position":1}'
                },
            )
        await store.close()

    asyncio.run(tamper())
    broken = runner.invoke(app, ["verify-log", "--db", db])
    assert broken.exit_code == 1
    assert "PROBLEM A1-000001 #2: the event was altered" in broken.output


def test_recall_prints_cards_decisions_and_settlements(
    make_client: Any, kit: Any, tmp_path: Path
) -> None:
    db = str(tmp_path / "floor.db")
    play_one_round(make_client, kit, db)
    result = CliRunner().invoke(app, ["recall", "A1-000001", "--db", db])
    assert result.exit_code == 0, result.output
    assert "ann (position 1): 10♠ 6♦ = 16, stands" in result.output
    assert "Dealer: up card 9♥, turns 5♣, draws 9♣ = 23 bust" in result.output
    assert "ann stand — ann at EWT-1" in result.output
    assert "ann blackjack 1000c" in result.output
    assert "(PA 633c.5(t)" in result.output
    missing = CliRunner().invoke(app, ["recall", "A1-999999", "--db", db])
    assert missing.exit_code == 2
