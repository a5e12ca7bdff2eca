"""A player's session on the terminal page in a real browser (Playwright driving Debian's
Chromium, PA 605a): the history sets the rounds of an earlier sign-in apart from this
session's count and net; a refusal whose rule names no clause, and a refused tip, read in the
page's language with no English left in them; the player's name and terminal read whole in the
top bar in both languages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

DEALER = {"Authorization": "Bearer tok-dealer"}
OPERATOR = {"Authorization": "Bearer tok-operator"}
ORDER = "10S 9D 8H 8C " * 3  # each round: position 1 10S 8H = 18 stands on 9D 8C = 17, wins
DESK = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("operator", "olga", "tok-operator")
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.add_player("bob", 100_000, "tok-bob")
        await floor.add_player("cat", 0, "tok-cat")
        await floor.register_terminal("EWT-1", "S1", key="key-EWT-1")
        await floor.register_terminal("EWT-2", "S2", key="key-EWT-2")
        await floor.register_terminal("EWT-12", "S2", key="key-EWT-12")

    tables = [
        TableConfig(
            table,
            HybridRules(countdown_seconds=30),
            automated=False,
            require_procedures=False,
            cards=ORDER.strip(),
            title=f"Hybrid A, session {table}",
        )
        for table in ("S1", "S2")
    ]
    db = str(tmp_path_factory.mktemp("terminal-session") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


def _errors(page: Any) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def tips_on(context: Any, server: str) -> None:
    """The operator enables tips on the floor, so the terminal shows its every tool."""
    tips = context.request.put(
        f"{server}/api/floor/settings",
        data={"key": "tips_enabled", "value": True},
        headers=OPERATOR,
    )
    assert tips.ok, tips.text()


def _dealer(page: Any, server: str, table: str, command: str) -> None:
    sent = page.request.post(
        f"{server}/api/tables/{table}/dealer", data={"command": command}, headers=DEALER
    )
    assert sent.ok, sent.text()


def test_605a_history_sets_earlier_sessions_apart_after_signing_in_again(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport=DESK)
            page = context.new_page()
            errors = _errors(page)
            browser_kit.sign_in(page, server, "tok-ann", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html?lang=en")
            by = page.get_by_test_id
            expect(by("balance")).to_have_text("$1,000.00")

            def play() -> None:
                _dealer(page, server, "S1", "open-round")
                before = by("balance").inner_text()
                by("position-1").click()
                by("amount").fill("10")
                by("wager").click()
                expect(by("balance")).not_to_have_text(before)  # the wager is taken
                _dealer(page, server, "S1", "close-wagering")
                expect(by("hand-total-1")).to_have_text("18")
                by("action-stand").click()
                expect(by("results")).to_contain_text("You win $10.00")

            def history() -> list[str]:
                by("history-button").click()
                expect(by("history-dialog")).to_be_visible()
                rows = by("history-table").locator("tr")
                expect(rows).not_to_have_count(1)
                texts: list[str] = rows.all_inner_texts()
                return texts

            play()
            first = history()
            expect(by("history-session")).to_contain_text("Rounds this session: 1 · net +$10.00")
            expect(by("history-earlier")).to_have_count(0)
            assert len(first) == 2 and "+$10.00" in first[1]
            page.keyboard.press("Escape")

            # the player signs out and in again: a new session, the earlier round set apart
            assert errors == []
            by("sign-out").click()
            expect(by("signin-form")).to_be_visible()  # (its check of /api/me answered 401)
            browser_kit.sign_in(page, server, "tok-ann")
            page.goto(f"{server}/static/terminal.html?lang=en")
            errors.clear()
            expect(by("balance")).to_have_text("$1,010.00")
            again = history()
            expect(by("history-session")).to_contain_text("Rounds this session: 0 · net $0.00")
            assert again[1] == "Earlier sessions", again
            assert "+$10.00" in again[2]
            page.keyboard.press("Escape")

            # a round of this session sits above the heading, the earlier one below it
            if by("result-ok").is_visible():
                by("result-ok").click()
            play()
            now = history()
            expect(by("history-session")).to_contain_text("Rounds this session: 1 · net +$10.00")
            assert "+$10.00" in now[1] and now[2] == "Earlier sessions" and "+$10.00" in now[3]
            page.keyboard.press("Escape")
            by("language").select_option("es")
            by("history-button").click()
            expect(by("history-earlier")).to_have_text("Sesiones anteriores")
            assert errors == []
        finally:
            browser.close()


def test_605a_a_refusal_without_a_clause_and_a_refused_tip_read_in_spanish(
    server: str, browser_kit: Any
) -> None:
    """The server's rules that name no clause ("message sequence", "table lock-out") are
    worded from the catalog; a refused tip is in the page's language with its clause once."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport=DESK)
            tips_on(context, server)
            page = context.new_page()
            errors = _errors(page)
            sockets: list[Any] = []

            def route(socket: Any) -> None:  # the page's own socket, passed through
                socket.connect_to_server()
                sockets.append(socket)

            page.route_web_socket("**/ws", route)
            browser_kit.sign_in(page, server, "tok-cat", "EWT-2", "key-EWT-2")
            page.goto(f"{server}/static/terminal.html?lang=es")
            by = page.get_by_test_id
            expect(by("balance")).to_have_text("$0.00")
            assert sockets, "the terminal's socket was not seen"

            # two refusals as the server frames them, their rules naming no clause
            for frame, words in (
                (
                    {"code": "sequence", "rule": "message sequence",
                     "message": "Message 7 of terminal EWT-2 skips ahead of its session's sequence (last 5)."},
                    "Un mensaje llegó fuera de secuencia y no se aplicó. [secuencia de mensajes]",
                ),
                (
                    {"code": "storage_error", "rule": "table lock-out",
                     "message": "Table S2 could not record the step; play is locked until a supervisor clears the tilt."},
                    "Las reglas de la mesa no lo permiten ahora. [bloqueo de la mesa]",
                ),
            ):  # fmt: skip
                sockets[0].send(json.dumps({"type": "error", "id": None, **frame}))
                expect(by("error")).to_have_text(words)
                assert "sequence" not in words and "lock-out" not in words

            # a tip above the maximum, and one the balance does not cover: refused in Spanish
            by("tip-button").click()
            expect(by("tip-text")).to_have_text("La propina sale de su crédito, hasta $100.00.")
            by("tip-amount").fill("500")
            by("tip-give").click()
            expect(by("tip-text")).to_have_text(
                "La propina es como máximo $100.00; escriba una menor. [PA 605a.5(d)]"
            )
            by("tip-amount").fill("5")
            by("tip-give").click()
            expect(by("tip-text")).to_have_text("Su saldo no cubre esta propina. [PA 605a.2(d)]")
            by("language").select_option("en")
            by("tip-give").click()
            expect(by("tip-text")).to_have_text(
                "Your balance does not cover this tip. [PA 605a.2(d)]"
            )
            # the browser logs each refused request (409) itself; nothing else went wrong
            assert [e for e in errors if "status of 409" not in e] == []
            assert len(errors) == 3
        finally:
            browser.close()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_players_name_and_terminal_read_whole_in_the_top_bar(
    server: str, browser_kit: Any, lang: str
) -> None:
    """At 1280×800 with every tool shown (tips enabled) the name and terminal are never cut
    to "ann · …", and the page is no wider than the screen."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport=DESK)
            tips_on(context, server)
            page = context.new_page()
            browser_kit.sign_in(page, server, "tok-bob", "EWT-12", "key-EWT-12")
            page.goto(f"{server}/static/terminal.html?lang={lang}")
            who = page.get_by_test_id("who")
            expect(who).to_have_text("bob · EWT-12")
            expect(page.get_by_test_id("tip-button")).to_be_visible()
            cut = who.evaluate("e => e.scrollWidth > e.clientWidth")
            assert cut is False, "the name and terminal are cut short"
            fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert fits is True
            # the table's name gives way first, and reads whole in its title
            expect(page.get_by_test_id("table-name")).to_have_attribute(
                "title", "Hybrid A, session S2"
            )
        finally:
            browser.close()
