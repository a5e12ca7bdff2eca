"""Player protections on the terminal page in a real browser (Playwright driving Debian's
Chromium, PA 605a): the language selector switches the page to Spanish (and is remembered), a
wager above the table's ``confirm_above`` is confirmed a second time, Repeat bet places the
last round's wager in the next round, and the result stays on screen into the next round until
the player presses OK."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

# position 1: 10S 8H = 18; dealer 9D + hole 8C = 17 stands: the Blackjack wager wins 1 to 1
ORDER = "10S 9D 8H 8C"
DEALER = {"Authorization": "Bearer tok-dealer"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.register_terminal("EWT-1", "P1", key="key-EWT-1")
        await floor.register_terminal("EWT-2", "P2", key="key-EWT-2")

    table = TableConfig(
        "P1",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        cards=ORDER,
        title="Hybrid A, protections",
        confirm_above=5000,
        result_hold_seconds=120,
    )
    short = TableConfig(
        "P2",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        cards=ORDER,
        title="Hybrid A, short hold",
        result_hold_seconds=2,
    )
    db = str(tmp_path_factory.mktemp("browser-protections") / "floor.db")
    app = create_app(db, tables=[table, short], setup=setup)
    with browser_kit.serve(app) as url:
        yield url


def test_605a_terminal_in_spanish_confirms_repeats_and_holds_the_result(
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
            expect(page.get_by_test_id("wager")).to_have_text("Place Blackjack wager")

            # the language catalog: Spanish chosen on the terminal, remembered on reload
            page.get_by_test_id("language").select_option("es")
            expect(page.get_by_test_id("wager")).to_have_text("Apostar al Blackjack")
            page.reload()
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            for test_id, text in (
                ("wager", "Apostar al Blackjack"),
                ("repeat", "Repetir apuesta"),
                ("cashout-button", "Cobrar"),
                ("recall-button", "Historial"),
                ("position", "ninguna — toque una casilla de jugador"),
                ("position-1", "Jugador 1"),
            ):
                expect(page.get_by_test_id(test_id)).to_contain_text(text)
            expect(page.locator("#dealer-box h3")).to_have_text("Crupier")
            expect(page.get_by_test_id("results-panel")).to_contain_text("Resultados")
            assert page.evaluate("document.documentElement.lang") == "es"
            untranslated = page.evaluate(
                """async () => {
                  const es = await (await fetch('/static/i18n/es.json')).json();
                  return [...document.querySelectorAll('[data-i18n]')]
                    .filter((n) => n.textContent !== es[n.dataset.i18n])
                    .map((n) => n.dataset.i18n);
                }"""
            )
            assert untranslated == []

            # a wager above the confirmation amount ($50.00) is asked a second time
            opened = page.request.post(
                f"{server}/api/tables/P1/dealer", data={"command": "open-round"}, headers=DEALER
            )
            assert opened.ok
            page.get_by_test_id("position-1").click()
            expect(page.get_by_test_id("position")).to_have_text("1")
            # nothing to repeat yet: the refusal in Spanish, its rule cited in Spanish too (PA 605a)
            page.get_by_test_id("repeat").click()
            expect(page.get_by_test_id("wager-error")).to_have_text(
                "No hay nada que repetir ahora. [PA 605a repetir la última apuesta]"
            )
            expect(page.get_by_test_id("error")).to_have_text("")  # once, beside the control
            page.get_by_test_id("amount").fill("60")
            page.get_by_test_id("wager").click()
            dialog = page.get_by_test_id("confirm-dialog")
            expect(dialog).to_be_visible()
            expect(page.get_by_test_id("confirm-text")).to_have_text(
                "¿Confirmar una apuesta de $60.00?"
            )
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            page.get_by_test_id("confirm-yes").click()
            expect(page.get_by_test_id("balance")).to_have_text("$940.00")

            # the round: ann stands on 18, the dealer stands on 17, ann wins
            closed = page.request.post(
                f"{server}/api/tables/P1/dealer", data={"command": "close-wagering"}, headers=DEALER
            )
            assert closed.ok
            page.get_by_test_id("action-stand").click()
            results = page.get_by_test_id("results")
            expect(results).to_contain_text("Apuesta Blackjack Gana $60.00", timeout=10_000)
            expect(page.get_by_test_id("balance")).to_have_text("$1,060.00")

            # the next round opens: the result is held on screen
            second = page.request.post(
                f"{server}/api/tables/P1/dealer", data={"command": "open-round"}, headers=DEALER
            )
            assert second.ok
            expect(page.get_by_test_id("results-panel")).to_have_attribute("data-held", "true")
            expect(results).to_contain_text("Gana")
            expect(page.get_by_test_id("result-hold-text")).to_contain_text("P1-000001")

            # Repeat bet places the last $60.00 wager again, after the second confirmation
            page.get_by_test_id("repeat").click()
            expect(page.get_by_test_id("confirm-text")).to_contain_text("$60.00")
            page.get_by_test_id("confirm-yes").click()
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(page.get_by_test_id("notice")).to_have_text("Repetida: Apuesta Blackjack $60.00")

            # the player has seen the result: OK takes it off the screen
            expect(results).to_contain_text("Gana")
            page.get_by_test_id("result-ok").click()
            expect(page.get_by_test_id("result-hold")).to_be_hidden()
            expect(results).to_have_text("")
        finally:
            browser.close()


def test_605a_result_hold_time_passes_without_the_player(server: str, browser_kit: Any) -> None:
    from playwright.sync_api import expect, sync_playwright

    def dealer(command: str) -> None:
        sent = page.request.post(
            f"{server}/api/tables/P2/dealer", data={"command": command}, headers=DEALER
        )
        assert sent.ok

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 1024, "height": 768})
            page: Any = context.new_page()
            browser_kit.sign_in(page, server, "tok-ann", "EWT-2", "key-EWT-2")
            page.goto(f"{server}/static/terminal.html?lang=en")
            expect(page.get_by_test_id("wager")).to_have_text("Place Blackjack wager")
            dealer("open-round")
            page.get_by_test_id("position-1").click()
            expect(page.get_by_test_id("position")).to_have_text("1")
            page.get_by_test_id("amount").fill("10")
            page.get_by_test_id("wager").click()
            expect(page.get_by_test_id("confirm-dialog")).to_be_hidden()  # no confirm_above
            dealer("close-wagering")
            page.get_by_test_id("action-stand").click()
            results = page.get_by_test_id("results")
            expect(results).to_contain_text("Blackjack wager You win $10.00", timeout=10_000)
            dealer("open-round")
            expect(page.get_by_test_id("results-panel")).to_have_attribute("data-held", "true")
            expect(page.get_by_test_id("result-hold-text")).to_contain_text("2 s")
            # nobody presses OK: two seconds after the result the panel is cleared
            expect(page.get_by_test_id("result-hold")).to_be_hidden(timeout=8_000)
            expect(results).to_have_text("")
            expect(page.get_by_test_id("results-panel")).to_have_attribute("data-held", "false")
        finally:
            browser.close()
