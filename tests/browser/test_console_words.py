"""The dealer console in Spanish writes the server's English in the catalog's words (PA 605a;
console_words.js): the banner (the next instruction), the automated table's note and the
round's transcript — its dealer, positions, community cards, decisions and settlements — at the
demo's live-dealer table (L1, the dealer deals every card from the console) and at an automated
table (A1) and the multi-action table (M1, wagers on two spots), each through a round from its
opening to its settlement, and the automated table locked by a tilt until a supervisor clears it. No English word of the
catalog's transcript and banner sentences is left (the cards, amounts, names and clauses stay
as they are), and no page or console error."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablejack import server as server_package
from tablejack.server.app import create_app
from tablejack.server.http.demo import demo_setup, demo_tables, demo_terminal_key
from tablejack.server.table import TableConfig
from tests.support.browser import screenshot

DESK: Any = {"viewport": {"width": 1280, "height": 800}}
I18N = Path(server_package.__file__).parent / "static" / "i18n"
PREFIXES = ("transcript.", "console.next.", "console.automation", "console.halt.", "console.wait.")
"""The catalog's keys for the server's sentences the console writes again."""


def english_words() -> list[str]:
    """The English words of those sentences that no Spanish one of them uses (so "EZ Bust",
    "Blackjack" and "s" are left out), placeholders removed."""
    english = json.loads((I18N / "en.json").read_text("utf-8"))
    spanish = json.loads((I18N / "es.json").read_text("utf-8"))

    def words_of(texts: list[str]) -> set[str]:
        return {
            w for text in texts for w in re.findall(r"[A-Za-z']+", re.sub(r"\{\w+\}", "", text))
        }

    keys = [k for k in english if k.startswith(PREFIXES)]
    found = words_of([english[k] for k in keys]) - words_of([spanish[k] for k in keys])
    return sorted(w for w in found if len(w) > 1 and w not in {"PA"})


def brisk(table: TableConfig) -> TableConfig:
    """A demo table with shorter clocks — 5 s of wagering, a 5 s decision clock, 1 s between
    rounds — so that the automated rounds end sooner: the console's words are the same."""
    if not table.automated:
        return table
    clocks: dict[str, Any] = {"wagering_seconds": 5, "between_rounds_seconds": 1}
    if table.countdown_seconds is not None:
        clocks["countdown_seconds"] = 5
    elif hasattr(table.rules, "countdown_seconds"):  # the hybrid rules carry their own clock
        clocks["rules"] = dataclasses.replace(table.rules, countdown_seconds=5)
    return dataclasses.replace(table, **clocks)


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()
    db = str(tmp_path_factory.mktemp("console-words") / "floor.db")
    app = create_app(
        db, tables=[brisk(table) for table in demo_tables()], setup=demo_setup, demo=True
    )
    with browser_kit.serve(app) as url:
        yield url


def wager(server: str, who: str, table: str, amount: int, spots: list[int] | None = None) -> None:
    """A Blackjack wager at ``table``'s first demo terminal, position 1, from ``who``; at a
    multi-action table (its terminals bound to their seats) on the betting ``spots``."""
    from websockets.sync.client import connect

    terminal = f"{table}-EWT1"
    with connect(server.replace("http", "ws") + "/ws") as socket:
        hello = {"type": "hello", "protocol": 2, "token": f"demo-{who}", "terminal": terminal}
        socket.send(json.dumps({**hello, "terminal_key": demo_terminal_key(terminal)}))
        bet = {"type": "wager", "kind": "blackjack", "amount": amount}
        messages = (
            [{"type": "join", "table": table}, {**bet, "spots": spots}]
            if spots
            else [{"type": "join", "table": table}, {"type": "position", "position": 1}, bet]
        )
        for n, message in enumerate(messages):
            socket.send(json.dumps({**message, "id": str(n)}))
            while True:
                answer = json.loads(socket.recv(timeout=10))
                if answer.get("id") == str(n) and answer["type"] in ("ack", "error"):
                    assert answer["type"] == "ack", answer
                    break


def test_the_check_knows_the_english_of_the_transcript_and_the_banners() -> None:
    words = english_words()
    for word in ("Dealer", "card", "Position", "stands", "wins", "Wagering", "waiting", "server"):
        assert word in words
    assert "Blackjack" not in words


def test_605a_the_dealer_console_in_spanish_writes_the_transcript_and_banners_in_spanish(
    demo_server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    english = english_words()
    errors: list[str] = []

    def no_english(where: str) -> None:
        for testid in ("next", "transcript", "automation", "procedures", "tilts"):
            node = page.get_by_test_id(testid)
            text = node.inner_text() if node.is_visible() else ""
            found = [w for w in english if re.search(rf"(?<![\w'-]){re.escape(w)}(?![\w'-])", text)]
            assert not found, f"{where}, {testid}: English in the Spanish console: {found}\n{text}"

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page: Any = browser_kit.context(browser, **DESK).new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            browser_kit.sign_in(page, demo_server, "demo-dealer")

            # the live dealer's table: every card from the console's shoe
            page.goto(f"{demo_server}/static/dealer.html?table=L1&lang=es")
            expect(page.get_by_test_id("next")).to_have_text("Abra la ronda siguiente.")
            page.get_by_test_id("open-round").click()
            expect(page.get_by_test_id("next")).to_have_text(
                "Las apuestas están abiertas; ciérrelas para repartir."
            )
            wager(demo_server, "ann", "L1", 1000)
            expect(page.get_by_test_id("wagers")).to_contain_text("ann")
            page.get_by_test_id("close-wagering").click()
            transcript = page.get_by_test_id("transcript")
            expect(transcript).to_contain_text("Crupier: carta descubierta")
            no_english("L1, dealing")
            for _ in range(200):
                if "terminada" in page.get_by_test_id("round-label").inner_text():
                    break
                if page.get_by_test_id("shoe-draw").is_visible() and page.get_by_test_id(
                    "card-request"
                ).inner_text().startswith("La mesa pide"):
                    page.get_by_test_id("shoe-draw").click()
                elif page.get_by_test_id("countdown-expired").is_enabled():
                    page.get_by_test_id("countdown-expired").click()
                page.wait_for_timeout(200)
                no_english("L1, the round")
            expect(page.get_by_test_id("round-label")).to_contain_text("terminada")
            expect(transcript).to_contain_text("Posición 1:")
            expect(transcript).to_contain_text("ann (posición 1):")
            expect(transcript).to_contain_text("Apuesta de Blackjack")
            no_english("L1, settled")
            screenshot(page, "console-transcript-spanish")

            # an automated table: its note, its banners, its round played by the server
            page.get_by_test_id("table-select").select_option("A1")
            expect(page.get_by_test_id("automation")).to_contain_text("El servidor abre una ronda")
            expect(page.get_by_test_id("next")).to_have_text(
                re.compile(
                    r"^(La ronda siguiente empieza en breve\.|Las apuestas están abiertas.*)$"
                )
            )
            no_english("A1, between rounds")
            expect(page.get_by_test_id("next")).to_have_text(
                "Las apuestas están abiertas; se espera la primera apuesta.", timeout=30_000
            )
            wager(demo_server, "bob", "A1", 1000)
            expect(page.get_by_test_id("next")).to_contain_text("el servidor las cierra")
            no_english("A1, wagering")
            expect(transcript).to_contain_text("bob (posición 1):", timeout=30_000)
            no_english("A1, deciding")
            expect(page.get_by_test_id("round-label")).to_contain_text("terminada", timeout=60_000)
            expect(transcript).to_contain_text("Apuesta de Blackjack")
            no_english("A1, settled")

            # a tilt raised with no reason: the banner and the tilt list name it by the
            # catalog's label, never by its code, until a supervisor clears it
            def post(path: str, body: dict[str, str], token: str) -> None:
                sent = page.request.post(
                    f"{demo_server}{path}", data=body, headers={"Authorization": f"Bearer {token}"}
                )
                assert sent.ok, sent.text()

            post("/api/tables/A1/tilt", {"code": "door_open"}, "demo-dealer")
            expect(page.get_by_test_id("next")).to_have_text(
                re.compile(
                    r"^ALTO — irregularidad: Puerta abierta\. .*Se espera a: .*«Puerta abierta»"
                )
            )
            expect(page.get_by_test_id("tilts")).to_contain_text(
                "MESA bloqueada — Puerta abierta ("
            )
            for testid in ("next", "tilts"):
                assert "door_open" not in page.get_by_test_id(testid).inner_text()
            no_english("A1, locked")
            post(
                "/api/tables/A1/clear",
                {"code": "fault_repaired", "reason": "puerta cerrada"},
                "demo-supervisor",
            )
            expect(page.get_by_test_id("no-tilts")).to_be_visible()

            # the multi-action table: two betting spots, three dealer rounds (NJ MAB)
            page.get_by_test_id("table-select").select_option("M1")
            expect(page.get_by_test_id("next")).to_have_text(
                "Las apuestas están abiertas; se espera la primera apuesta.", timeout=30_000
            )
            wager(demo_server, "cat", "M1", 2000, spots=[1000, 1000, 0])
            expect(transcript).to_contain_text("casilla 1", timeout=30_000)
            no_english("M1, deciding")
            expect(page.get_by_test_id("round-label")).to_contain_text("terminada", timeout=90_000)
            expect(transcript).to_contain_text("casilla 2")
            no_english("M1, settled")
        finally:
            browser.close()
    assert errors == []
