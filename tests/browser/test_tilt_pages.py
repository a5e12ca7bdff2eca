"""PA 605a lock-out in a real browser (Playwright driving Debian's Chromium): a shoe refused at
load tilts the table; the terminal shows the lock, the dealer console lists the tilt, and the
supervisor page's Clear tilt form clears it with a clear code and a reason."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.core.cards import full_deck
from tablejack.core.rules import ClassicRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.register_terminal("EWT-1", "C1", key="key-EWT-1")

    table = TableConfig(
        "C1",
        ClassicRules(decks=1),
        source="reader",
        automated=False,
        require_procedures=False,
        countdown_seconds=30,
        title="Classic, one deck",
    )
    db = str(tmp_path_factory.mktemp("tilt-pages") / "floor.db")
    app = create_app(db, tables=[table], setup=setup)
    with browser_kit.serve(app) as url:
        yield url


def _post(url: str, token: str, body: dict[str, Any]) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_605a_tilt_pages_show_the_lock_and_the_supervisor_clears_it(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            tablet: Any = {"viewport": {"width": 1024, "height": 768}}
            dealer = browser_kit.context(browser, **tablet).new_page()
            ann = browser_kit.context(browser, **tablet).new_page()
            browser_kit.sign_in(dealer, server, "tok-dealer")
            browser_kit.sign_in(ann, server, "tok-ann", "EWT-1", "key-EWT-1")
            dealer.goto(f"{server}/static/dealer.html?table=C1")
            ann.goto(f"{server}/static/terminal.html")
            expect(ann.get_by_test_id("balance")).to_have_text("$1,000.00")
            short = " ".join(card.code for card in full_deck()[:-1])
            assert _post(f"{server}/api/tables/C1/shoe/load", "tok-dealer", {"cards": short}) == 409
            expect(ann.get_by_test_id("lock")).to_have_text("the cards in the shoe do not add up")
            expect(ann.get_by_test_id("lock")).to_have_attribute("data-code", "card_inventory")
            expect(dealer.get_by_test_id("tilts")).to_contain_text("TABLE locked — Card inventory")
            expect(dealer.get_by_test_id("next")).to_contain_text("STOP")

            supervisor = browser_kit.context(browser, **tablet).new_page()
            browser_kit.sign_in(supervisor, server, "tok-super")
            supervisor.goto(f"{server}/static/supervisor.html")
            supervisor.get_by_test_id("clear-C1").click()  # the table's row: Clear tilt…
            supervisor.get_by_test_id("clear-code-C1").select_option("replaced")
            supervisor.get_by_test_id("clear-C1-reason").fill("deck replaced")
            supervisor.get_by_test_id("clear-C1-submit").click()
            expect(dealer.get_by_test_id("tilts")).to_have_text("")
            expect(ann.get_by_test_id("lock")).to_have_text("")
            expect(dealer.get_by_test_id("next")).not_to_contain_text("STOP")
        finally:
            browser.close()
