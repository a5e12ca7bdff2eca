"""The demo's live-dealer table (PA 633c.5, a version A table dealt by a person at a
card-reading shoe), in Chromium: the dealer opens the round at the console, two terminals — one
at 1280×800, one at 390×844 — wager, the dealer closes wagering and deals every card the table
asks for from the console's simulated card-reading shoe (never told a card, PA 633c.5(o); entry
by hand waits for a supervisor), and both terminals follow the round live to its result. No page or console error on any of the three pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.server.app import create_app
from tablejack.server.http.demo import demo_setup, demo_tables
from tests.support.browser import screenshot

DESK: Any = {"viewport": {"width": 1280, "height": 800}}
PHONE: Any = {"viewport": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()
    db = str(tmp_path_factory.mktemp("live-demo") / "floor.db")
    app = create_app(db, tables=demo_tables(), setup=demo_setup, demo=True)
    with browser_kit.serve(app) as url:
        yield url


CARD_CODE = re.compile(r"\b(10|[2-9AJQK])[SHDC]\b")
"""A card's code in a text (the console's picker shows suits as symbols)."""


def test_the_demo_has_a_table_dealt_by_a_person() -> None:
    live = [c for c in demo_tables() if c.id == "L1"]
    assert len(live) == 1
    assert (live[0].source, live[0].automated) == ("reader", False)


def test_633c5_the_dealer_deals_a_live_round_while_two_terminals_play_it(
    demo_server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    errors: list[str] = []

    def watch(page: Any) -> Any:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        return page

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            dealer = watch(browser_kit.context(browser, **DESK).new_page())
            browser_kit.sign_in(dealer, demo_server, "demo-dealer")
            dealer.goto(f"{demo_server}/static/dealer.html?table=L1&lang=en")
            expect(dealer.get_by_test_id("round-controls")).to_be_visible()
            expect(dealer.get_by_test_id("card-entry")).to_be_visible()
            # PA 633c.5(j): the cards come from the shoe; entry by hand waits for a supervisor
            expect(dealer.get_by_test_id("card-picker")).to_be_hidden()
            expect(dealer.get_by_test_id("manual-note")).to_contain_text("supervisor's approval")
            expect(dealer.get_by_test_id("shoe-draw")).to_have_text("Deal from the shoe")
            expect(dealer.get_by_test_id("shoe-draw")).to_be_disabled()  # no card is wanted
            expect(dealer.get_by_test_id("close-wagering")).to_be_disabled()
            expect(dealer.get_by_test_id("automation")).to_be_hidden()

            players = []
            for name, number, screen in (("ann", 1, DESK), ("bob", 2, PHONE)):
                page = watch(browser_kit.context(browser, **screen).new_page())
                terminal = f"L1-EWT{number}"
                key = f"demo-key-{terminal}"
                browser_kit.sign_in(page, demo_server, f"demo-{name}", terminal, key)
                page.goto(f"{demo_server}/static/terminal.html?table=L1&lang=en")
                expect(page.get_by_test_id("table-name")).to_have_text("Hybrid A — live dealer")
                players.append(page)

            dealer.get_by_test_id("open-round").click()
            expect(dealer.get_by_test_id("next")).to_contain_text("Wagering is open")
            for number, page in enumerate(players, start=1):
                page.get_by_test_id(f"position-{number}").click()
                page.get_by_test_id("amount").fill("10")
                page.get_by_test_id("wager").click()
                expect(page.get_by_test_id("balance")).to_have_text("$990.00")
            expect(dealer.get_by_test_id("wagers")).to_contain_text("bob")
            dealer.get_by_test_id("close-wagering").click()
            expect(dealer.get_by_test_id("card-request")).to_contain_text("The table asks for")

            expect(dealer.get_by_test_id("open-round")).to_be_disabled()
            # every card from the shoe; the players stand when asked
            dealt, shot = 0, False
            for _ in range(400):
                if all(page.get_by_test_id("results").inner_text().strip() for page in players):
                    break
                for page in players:  # no insurance, and every hand stands
                    for action in ("action-no-insurance", "action-stand"):
                        button = page.get_by_test_id(action)
                        if button.is_visible() and button.is_enabled():
                            button.click()
                            break
                asked = dealer.get_by_test_id("card-request").inner_text()
                if asked.startswith("The table asks for"):
                    count = dealer.get_by_test_id("shoe").inner_text()
                    dealer.get_by_test_id("shoe-draw").click()
                    # PA 633c.5(o): the console never names the card it read (the hole card)
                    expect(dealer.get_by_test_id("card-entry")).not_to_contain_text(CARD_CODE)
                    # the card is in: the shoe's count changed (so no card is sent twice)
                    expect(dealer.get_by_test_id("shoe")).not_to_have_text(count)
                    dealt += 1
                    if dealt >= 6 and not shot:  # the README's picture of the live table
                        screenshot(dealer, "console-live-dealer")
                        shot = True
                dealer.wait_for_timeout(150)
            for page in players:
                expect(page.get_by_test_id("results")).to_contain_text("Blackjack wager")
                assert page.get_by_test_id("dealer-box").locator("[data-card]").count() >= 2
            assert dealt >= 4, dealt  # two of each hand at least came from the console
            assert dealer.get_by_test_id("card-error").inner_text() == ""
        finally:
            browser.close()
    assert errors == []
