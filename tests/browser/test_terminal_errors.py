"""Bad input and a lost connection on the terminal page in a real browser (Playwright driving
Debian's Chromium): an amount that is not whole positive cents is refused beside the amount box
and nothing is sent; an error frame from the server is shown beside the control that sent the
message; when the socket closes the page says so, reconnects by itself and re-joins its table."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

DEALER = {"Authorization": "Bearer tok-dealer"}
AMOUNT_INVALID = (
    "Type the wager in dollars: a positive amount in whole cents, e.g. 10 or 12.50. "
    "Nothing was sent."
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[Any]:
    browser_kit.require()
    running: dict[str, Any] = {}

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.register_terminal("EWT-1", "E1", key="key-EWT-1")
        running["floor"], running["loop"] = floor, asyncio.get_running_loop()

    table = TableConfig(
        "E1",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        title="Hybrid A, bad input",
    )
    db = str(tmp_path_factory.mktemp("browser-errors") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[table], setup=setup)) as url:
        running["url"] = url
        yield running


def drop_every_socket(served: Any) -> None:
    """Close every socket from the server's side (as a restart or a network fault would)."""
    floor = served["floor"]
    served["loop"].call_soon_threadsafe(lambda: [c.push(None) for c in list(floor.connections)])


def test_a_bad_amount_is_refused_on_the_page_an_error_frame_is_shown_and_the_page_reconnects(
    served: Any, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = served["url"]
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 1024, "height": 768})
            page: Any = context.new_page()
            browser_kit.sign_in(page, server, "tok-ann", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html")
            balance = page.get_by_test_id("balance")
            expect(balance).to_have_text("$1,000.00")
            opened = page.request.post(
                f"{server}/api/tables/E1/dealer", data={"command": "open-round"}, headers=DEALER
            )
            assert opened.ok
            page.get_by_test_id("position-1").click()
            expect(page.get_by_test_id("position")).to_have_text("1")

            # an empty, zero, negative or sub-cent amount: the reason beside the box, no frame
            wager_error = page.get_by_test_id("wager-error")
            for typed in ("", "0", "-5", "10.555"):
                page.get_by_test_id("amount").fill(typed)
                page.get_by_test_id("wager").click()
                expect(wager_error).to_have_text(AMOUNT_INVALID)
            state = page.request.get(f"{server}/api/tables/E1/state", headers=DEALER).json()
            assert state["view"]["wagers"] == []
            expect(balance).to_have_text("$1,000.00")

            # an error frame (below the table minimum) is shown beside the control that sent it
            page.get_by_test_id("amount").fill("5")
            page.get_by_test_id("wager").click()
            expect(wager_error).to_contain_text("PA 633a.6")
            expect(page.get_by_test_id("error")).to_have_text("")  # shown once, beside the control
            assert wager_error.inner_text().count("PA 633a.6") == 1  # the rule cited once

            # the page still works: a whole amount is placed and the line beside it cleared
            page.get_by_test_id("amount").fill("10")
            page.get_by_test_id("wager").click()
            expect(balance).to_have_text("$990.00")
            expect(wager_error).to_have_text("")

            # the server drops the socket: the page says so, reconnects and re-joins its table
            drop_every_socket(served)
            expect(page.get_by_test_id("offline")).to_be_visible()
            expect(page.get_by_test_id("offline")).to_have_text("Connection lost — reconnecting…")
            expect(page.get_by_test_id("offline")).to_be_hidden(timeout=10_000)
            page.get_by_test_id("side-amount-buzzer_beater").fill("10")
            page.get_by_test_id("side-buzzer_beater").click()  # the table still takes wagers
            expect(balance).to_have_text("$980.00")
            state = page.request.get(f"{server}/api/tables/E1/state", headers=DEALER).json()
            assert sorted((w["kind"], w["amount"]) for w in state["view"]["wagers"]) == [
                ("blackjack", 1000),
                ("buzzer_beater", 1000),
            ]
        finally:
            browser.close()


def test_a_page_waits_between_half_and_all_of_its_backoff_before_it_reconnects(
    served: Any, browser_kit: Any
) -> None:
    """The terminals of tables handed to another process, or of a process that drains, come
    back spread over their wait, not in one burst: the page's socket draws each wait between
    half of its backoff and all of it (1 s, then 2 s …), and reports it (``retry_ms``)."""
    from playwright.sync_api import sync_playwright

    server = served["url"]
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 1024, "height": 768})
            page: Any = context.new_page()
            page.goto(f"{server}/static/terminal.html")
            waits = page.evaluate(
                """async () => {
                  const { Socket } = await import("/static/common.js");
                  const waits = [];
                  for (const draw of [0, 0.5, 0.999999]) {
                    const real = Math.random;
                    Math.random = () => draw;
                    const closed = new Promise((resolve) => {
                      const socket = new Socket((message) => {
                        if (message.type !== "closed") return;
                        socket.stopped = true;
                        resolve(message.retry_ms);
                      });
                      socket.ws.addEventListener("open", () => socket.ws.close());
                    });
                    waits.push(await closed);
                    Math.random = real;
                  }
                  return waits;
                }"""
            )
            assert waits == [500, 750, 1000]
        finally:
            browser.close()
