"""A wager placed, raised and taken back on the terminal page in a real browser (Playwright
driving Debian's Chromium, PA 633c.5(k)): while wagering is open the player changes his
Blackjack wager to the amount in the box and takes it back, his balance following each step;
the two controls are disabled before a wager is placed and after the first card."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

ORDER = "10S 9D 8H 8C"
DEALER = {"Authorization": "Bearer tok-dealer"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.register_terminal("EWT-1", "T1", key="key-EWT-1")

    table = TableConfig(
        "T1",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        cards=ORDER,
        title="Hybrid A, take back",
    )
    db = str(tmp_path_factory.mktemp("browser-take-back") / "floor.db")
    app = create_app(db, tables=[table], setup=setup)
    with browser_kit.serve(app) as url:
        yield url


def test_633c5_k_a_player_places_raises_and_takes_back_a_wager_at_the_terminal(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 1024, "height": 768})
            page: Any = context.new_page()
            browser_kit.sign_in(page, server, "tok-ann", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html")
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            opened = page.request.post(
                f"{server}/api/tables/T1/dealer", data={"command": "open-round"}, headers=DEALER
            )
            assert opened.ok
            page.get_by_test_id("position-1").click()
            expect(page.get_by_test_id("position")).to_have_text("1")
            expect(page.get_by_test_id("wager-withdraw")).to_be_disabled()  # nothing placed
            expect(page.get_by_test_id("wager-change")).to_be_disabled()
            page.get_by_test_id("amount").fill("10")
            page.get_by_test_id("wager").click()
            expect(page.get_by_test_id("balance")).to_have_text("$990.00")
            # raised to $25.00: only the difference moves
            expect(page.get_by_test_id("wager-change")).to_be_enabled()
            page.get_by_test_id("amount").fill("25")
            page.get_by_test_id("wager-change").click()
            expect(page.get_by_test_id("balance")).to_have_text("$975.00")
            # taken back: exactly the stake comes back
            page.get_by_test_id("wager-withdraw").click()
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(page.get_by_test_id("wager-withdraw")).to_be_disabled()
            # placed again, and after the first card neither control is offered
            page.get_by_test_id("amount").fill("10")
            page.get_by_test_id("wager").click()
            expect(page.get_by_test_id("balance")).to_have_text("$990.00")
            closed = page.request.post(
                f"{server}/api/tables/T1/dealer", data={"command": "close-wagering"}, headers=DEALER
            )
            assert closed.ok
            expect(page.get_by_test_id("action-stand")).to_be_visible()
            expect(page.get_by_test_id("wager-withdraw")).to_be_disabled()
        finally:
            browser.close()
