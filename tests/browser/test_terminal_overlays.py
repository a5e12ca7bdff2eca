"""PA 605a lock-out and a lost connection on the terminal page, in a real browser (Playwright
driving Debian's Chromium): a supervisor's tilt of the table (REST) covers the whole page with
"call an attendant" and disables every control; the clear takes the overlay and its words
away and the round goes on. A locked terminal does the same until its clear; a dropped socket
shows its own overlay until the page is back, with the round as it was."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

DEALER = {"Authorization": "Bearer tok-dealer"}
SUPERVISOR = {"Authorization": "Bearer tok-super"}
# position 1: 10S 8H = 18 against the dealer's 9D and hole card 8C = 17: a stand wins
ORDER = "10S 9D 8H 8C"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[Any]:
    browser_kit.require()
    running: dict[str, Any] = {}

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.register_terminal("EWT-1", "L1", key="key-EWT-1")
        running["floor"], running["loop"] = floor, asyncio.get_running_loop()

    table = TableConfig(
        "L1",
        HybridRules(countdown_seconds=60),
        automated=False,
        require_procedures=False,
        cards=ORDER,
        title="Hybrid A, lock-out",
    )
    db = str(tmp_path_factory.mktemp("terminal-overlays") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[table], setup=setup)) as url:
        running["url"] = url
        yield running


def test_605a_a_tilt_covers_the_terminal_until_the_supervisor_clears_it(
    served: Any, browser_kit: Any
) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect, sync_playwright

    server = served["url"]

    def post(path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        answer = page.request.post(f"{server}{path}", data=body, headers=headers)
        assert answer.ok, answer.text()

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 1280, "height": 800})
            page: Any = context.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            browser_kit.sign_in(page, server, "tok-ann", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html?lang=en")
            overlay, lock = page.get_by_test_id("lock-overlay"), page.get_by_test_id("lock")
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(overlay).to_be_hidden()
            post("/api/tables/L1/dealer", {"command": "open-round"}, DEALER)
            page.get_by_test_id("position-1").click()
            page.get_by_test_id("amount").fill("10")
            page.get_by_test_id("wager").click()
            expect(page.get_by_test_id("balance")).to_have_text("$990.00")
            post("/api/tables/L1/dealer", {"command": "close-wagering"}, DEALER)
            hit, stand = page.get_by_test_id("action-hit"), page.get_by_test_id("action-stand")
            expect(stand).to_be_enabled()

            # the supervisor tilts the table: the page is covered, nothing can be pressed
            post("/api/tables/L1/tilt", {"code": "door_open", "reason": "cabinet door"}, SUPERVISOR)
            expect(overlay).to_be_visible()
            expect(page.get_by_test_id("lock-title")).to_have_text("Play is stopped at this table")
            expect(overlay).to_contain_text("Please call an attendant.")
            expect(lock).to_have_text("a door is open")  # the code for the attendant in its title
            expect(lock).to_have_attribute("title", re.compile(r"^door_open: "))
            for control in (hit, stand):
                expect(control).to_be_disabled()
            assert page.evaluate("document.getElementById('action-bar').inert") is True
            assert page.evaluate("document.getElementById('felt').inert") is True
            box = overlay.bounding_box()
            assert box == {"x": 0, "y": 0, "width": 1280, "height": 800}
            with pytest.raises(PlaywrightError):  # a player cannot press it
                stand.click(timeout=1000)
            # but he may leave: the lock's notice offers the cash-out (PA 605a), confirmed
            page.get_by_test_id("lock-cashout").click()
            expect(page.get_by_test_id("cashout-confirm")).to_be_visible()
            expect(page.get_by_test_id("cashout-confirm-text")).to_contain_text("$990.00")
            page.get_by_test_id("cashout-no").click()
            expect(page.get_by_test_id("cashout-confirm")).to_be_hidden()
            expect(overlay).to_be_visible()

            # the clear: the overlay and its words go, the round goes on
            post(
                "/api/tables/L1/clear", {"code": "checked_no_fault", "reason": "closed"}, SUPERVISOR
            )
            expect(overlay).to_be_hidden()
            expect(lock).to_have_text("")
            expect(page.get_by_test_id("status")).to_have_text("Players decide — your decision")
            stand.click()
            expect(page.get_by_test_id("results")).to_contain_text("You win $10.00")
            expect(page.get_by_test_id("balance")).to_have_text("$1,010.00")

            # a terminal lock-out: the same overlay, in the terminal's words, until its clear
            post(
                "/api/floor/terminals/EWT-1/tilt",
                {"code": "printer", "reason": "paper"},
                SUPERVISOR,
            )
            expect(overlay).to_be_visible()
            expect(page.get_by_test_id("lock-title")).to_have_text("This terminal is locked")
            expect(lock).to_have_text("printer fault")
            expect(
                page.get_by_test_id("lock-cashout")
            ).to_be_hidden()  # a printer lock: no cash-out
            expect(page.get_by_test_id("wager")).to_be_disabled()
            post(
                "/api/floor/terminals/EWT-1/clear",
                {"code": "fault_repaired", "reason": "paper in"},
                SUPERVISOR,
            )
            expect(overlay).to_be_hidden()
            expect(lock).to_have_text("")
            assert errors == []
        finally:
            browser.close()


def drop_every_socket(served: Any) -> None:
    """Close every socket from the server's side (as a restart or a network fault would)."""
    floor = served["floor"]
    served["loop"].call_soon_threadsafe(lambda: [c.push(None) for c in list(floor.connections)])


def test_a_lost_connection_covers_the_terminal_and_the_round_is_back_after_it(
    served: Any, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = served["url"]
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 390, "height": 844})
            page: Any = context.new_page()
            browser_kit.sign_in(page, server, "tok-ann", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html?lang=en")
            expect(page.get_by_test_id("balance")).not_to_have_text("—")
            opened = page.request.post(
                f"{server}/api/tables/L1/dealer", data={"command": "open-round"}, headers=DEALER
            )
            assert opened.ok
            expect(page.get_by_test_id("wager")).to_be_enabled()
            drop_every_socket(served)
            offline = page.get_by_test_id("offline")
            expect(offline).to_be_visible()
            expect(offline).to_have_text("Connection lost — reconnecting…")
            expect(page.get_by_test_id("wager")).to_be_disabled()
            assert page.evaluate("document.getElementById('action-bar').inert") is True
            box = offline.bounding_box()
            assert box == {"x": 0, "y": 0, "width": 390, "height": 844}
            expect(offline).to_be_hidden(timeout=10_000)
            expect(page.get_by_test_id("wager")).to_be_enabled()
            expect(page.get_by_test_id("status")).to_have_text("Place your wagers")
        finally:
            browser.close()
