"""Sound cues and card animations on the terminal page, and a page that logs no error whatever
the player opens, in a real browser (Playwright driving Debian's Chromium): one switch turns
sounds and animations off and the terminal remembers it; a browser that asks for reduced
motion gets no animation; a round with every dialog opened, both languages and the switch
leaves the console without an error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

DEALER = {"Authorization": "Bearer tok-dealer"}
ORDER = "10S 9D 8H 8C"  # position 1: 10S 8H = 18 stands against 9D 8C = 17 and wins
TABLES = ("E1", "E2", "E3")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.issue_token("dealer", "dana", "tok-dealer")
        for table in TABLES:
            player = f"p{table.lower()}"
            await floor.add_player(player, 100_000, f"tok-{player}")
            await floor.register_terminal(f"T-{table}", table, key=f"key-{table}")

    tables = [
        TableConfig(
            table,
            HybridRules(countdown_seconds=30),
            automated=False,
            require_procedures=False,
            cards=ORDER,
            title="Hybrid A, effects",
        )
        for table in TABLES
    ]
    db = str(tmp_path_factory.mktemp("terminal-effects") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


class Page:
    """A signed-in terminal page of one table that records every console error."""

    def __init__(self, browser: Any, kit: Any, server: str, table: str, **options: Any) -> None:
        from playwright.sync_api import expect

        context = kit.context(browser, viewport={"width": 1280, "height": 800}, **options)
        self.page = context.new_page()
        self.server, self.table = server, table
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        player = f"p{table.lower()}"
        kit.sign_in(self.page, server, f"tok-{player}", f"T-{table}", f"key-{table}")
        self.page.goto(f"{server}/static/terminal.html?lang=en")
        expect(self.by("balance")).to_have_text("$1,000.00")

    def by(self, test_id: str) -> Any:
        return self.page.get_by_test_id(test_id)

    def dealer(self, command: str) -> None:
        sent = self.page.request.post(
            f"{self.server}/api/tables/{self.table}/dealer",
            data={"command": command},
            headers=DEALER,
        )
        assert sent.ok, sent.text()

    def deal(self) -> None:
        """Open a round, wager $10 on position 1 and deal."""
        from playwright.sync_api import expect

        self.dealer("open-round")
        self.by("position-1").click()
        self.by("amount").fill("10")
        self.by("wager").click()
        expect(self.by("balance")).to_have_text("$990.00")
        self.dealer("close-wagering")
        expect(self.by("hand-total-1")).to_have_text("18")

    def animation(self, selector: str) -> str:
        name: str = self.page.evaluate(
            "(s) => getComputedStyle(document.querySelector(s)).animationName", selector
        )
        return name


def test_one_switch_turns_sounds_and_animations_off_and_is_remembered(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            terminal = Page(browser, browser_kit, server, "E1")
            switch = terminal.by("sound-toggle")
            expect(switch).to_have_attribute("aria-pressed", "true")
            expect(terminal.page.locator("body")).to_have_class(
                "terminal effects-on"
            )  # animations on by default
            terminal.deal()
            dealt = "[data-testid=hand-1] .card.deal"
            assert terminal.animation(dealt) == "tj-deal"
            switch.click()
            expect(switch).to_have_attribute("aria-pressed", "false")
            assert "effects-on" not in (terminal.page.locator("body").get_attribute("class") or "")
            assert terminal.animation("[data-testid=hand-1] .card") == "none"
            terminal.by("action-stand").click()
            expect(terminal.by("balance")).to_have_text("$1,010.00")
            # (a reload in the middle of a round would lock the terminal: connection_lost)
            terminal.page.reload()
            expect(terminal.by("balance")).to_have_text("$1,010.00")
            expect(terminal.by("sound-toggle")).to_have_attribute("aria-pressed", "false")
            assert terminal.page.evaluate("localStorage.getItem('tablejack.effects')") == "off"
            terminal.by("sound-toggle").click()
            expect(terminal.by("sound-toggle")).to_have_attribute("aria-pressed", "true")
            assert terminal.errors == []
        finally:
            browser.close()


def test_no_animation_when_the_browser_asks_for_reduced_motion(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            terminal = Page(browser, browser_kit, server, "E2", reduced_motion="reduce")
            expect(terminal.by("sound-toggle")).to_have_attribute("aria-pressed", "false")
            assert "effects-on" not in (terminal.page.locator("body").get_attribute("class") or "")
            terminal.deal()
            assert terminal.animation("[data-testid=hand-1] .card") == "none"
            terminal.by("sound-toggle").click()  # sound may be turned on; cards still do not move
            expect(terminal.by("sound-toggle")).to_have_attribute("aria-pressed", "true")
            terminal.by("action-stand").click()
            expect(terminal.by("results")).to_contain_text("You win $10.00")
            assert terminal.animation("[data-testid=dealer-box] .card:last-child") == "none"
            assert terminal.errors == []
        finally:
            browser.close()


def test_the_terminal_page_logs_no_error_through_a_round_and_every_dialog(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            terminal = Page(browser, browser_kit, server, "E3")
            terminal.deal()
            terminal.by("action-stand").click()
            expect(terminal.by("results")).to_contain_text("You win $10.00")
            for button, dialog in (
                ("rules-icon", "rules-dialog"),
                ("history-button", "history-dialog"),
                ("recall-button", "recall-dialog"),
                ("rg-button", "rg-dialog"),
            ):
                terminal.by(button).click()
                expect(terminal.by(dialog)).to_be_visible()
                terminal.page.keyboard.press("Escape")
                expect(terminal.by(dialog)).to_be_hidden()
            expect(terminal.by("history-table")).to_contain_text("+$10.00")
            expect(terminal.by("rg-limits")).to_contain_text("Wagers per day")
            terminal.by("recall-button").click()
            terminal.by("recall-all").click()
            expect(terminal.by("recall-steps")).to_contain_text("PA 633c.5(t)(1)")
            terminal.page.keyboard.press("Escape")
            terminal.by("language").select_option("es")
            expect(terminal.by("status")).to_have_text("Ronda terminada")
            terminal.by("language").select_option("en")
            expect(terminal.by("status")).to_have_text("Round over")
            terminal.by("sound-toggle").click()
            terminal.by("result-ok").click()
            expect(terminal.by("results")).to_have_text("")
            terminal.by("cashout-button").click()
            expect(terminal.by("cashout-yes")).to_have_text("Cash out $1,010.00")
            terminal.by("cashout-yes").click()
            expect(terminal.by("voucher-text")).to_contain_text("for $1,010.00")
            assert terminal.errors == []
        finally:
            browser.close()
