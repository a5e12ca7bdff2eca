"""The pages in a real browser (Playwright driving Debian's Chromium): two terminals on one
version A table, one hitting and one standing on the countdown, the dealer console dealing,
and the supervisor recalling the round. Each person signs in in a browser context of his own
(its cookie jar); no URL carries a token."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

# position 1 (ann): 10S 5C; position 2 (bob): 9H 9C; dealer 6D + hole 10H; C1 4S; dealer 8D
ORDER = "10S 9H 6D 5C 9C 10H 4S 8D"
# position 1: 6S 5H = 11; dealer 9D + hole 8C = 17; C1 10D (the double's one card)
DOUBLE_ORDER = "6S 9D 5H 8C 10D"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        for player in ("ann", "bob"):
            await floor.add_player(player, 100_000, f"tok-{player}")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        for terminal, table in (("EWT-1", "A1"), ("EWT-2", "A1"), ("EWT-3", "A2"), ("EWT-9", "M1")):
            await floor.register_terminal(terminal, table, key=f"key-{terminal}")

    table = TableConfig(
        "A1",
        HybridRules(countdown_seconds=4),
        automated=False,
        require_procedures=False,
        cards=ORDER,
        title="Hybrid A",
    )
    doubles = TableConfig(
        "A2",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        cards=DOUBLE_ORDER,
        title="Hybrid A, doubles",
    )
    multi = TableConfig(
        "M1",
        MultiActionRules(),
        automated=False,
        require_procedures=False,
        countdown_seconds=30,
        title="Multi-action",
    )
    db = str(tmp_path_factory.mktemp("browser") / "floor.db")
    app = create_app(db, tables=[table, doubles, multi], setup=setup)
    with browser_kit.serve(app) as url:
        yield url


def test_two_terminals_play_a_round_and_the_supervisor_recalls_it(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            tablet: Any = {"viewport": {"width": 1024, "height": 768}}
            dealer = browser_kit.context(browser, **tablet).new_page()
            ann = browser_kit.context(browser, **tablet).new_page()
            bob = browser_kit.context(browser, **tablet).new_page()
            browser_kit.sign_in(dealer, server, "tok-dealer")
            browser_kit.sign_in(ann, server, "tok-ann", "EWT-1", "key-EWT-1")
            browser_kit.sign_in(bob, server, "tok-bob", "EWT-2", "key-EWT-2")
            dealer.goto(f"{server}/static/dealer.html?table=A1")
            ann.goto(f"{server}/static/terminal.html")
            bob.goto(f"{server}/static/terminal.html")
            expect(ann.get_by_test_id("balance")).to_have_text("$1,000.00")

            # the game rules icon (633c.5(c)(2)-(3))
            ann.get_by_test_id("rules-icon").click()
            rules = ann.get_by_test_id("rules-dialog")
            for text in (
                "Blackjack pays 3 to 2.",
                "The dealer stands on all 17s, soft 17 included.",
                "Insurance pays 2 to 1.",
                "your hand stands",
                "30 to 1",
            ):
                expect(rules).to_contain_text(text)
            rules.get_by_role("button", name="Close").click()

            # the console has its table before the dealer opens the round
            expect(dealer.get_by_test_id("next")).to_have_text("Open the next round.")
            dealer.get_by_test_id("open-round").click()
            expect(dealer.get_by_test_id("next")).to_contain_text("Wagering is open")
            for page, position in ((ann, 1), (bob, 2)):
                page.get_by_test_id(f"position-{position}").click()
                expect(page.get_by_test_id("position")).to_have_text(str(position))
                page.get_by_test_id("amount").fill("10")
                page.get_by_test_id("wager").click()
                expect(page.get_by_test_id("balance")).to_have_text("$990.00")
            dealer.get_by_test_id("close-wagering").click()

            # ann hits; bob does nothing and the countdown stands for him
            ann.get_by_test_id("action-hit").click()
            expect(bob.get_by_test_id("countdown")).not_to_have_text("–")
            expect(ann.get_by_test_id("community-box").locator("[data-card='4S']")).to_be_visible(
                timeout=10_000
            )
            expect(ann.get_by_test_id("position-1")).to_contain_text("19")
            ann.get_by_test_id("action-stand").click()
            expect(bob.get_by_test_id("results")).to_contain_text("win", timeout=10_000)
            expect(bob.get_by_test_id("balance")).to_have_text("$1,010.00")
            expect(ann.get_by_test_id("results")).to_contain_text("You win $10.00")
            # the clause that decided it: in the terminal's history, not on the layout
            ann.get_by_test_id("history-button").click()
            expect(ann.get_by_test_id("history-table")).to_contain_text("PA 633c.5(t)(1)(i)")
            ann.get_by_test_id("history-dialog").get_by_role("button", name="Close").click()
            expect(dealer.get_by_test_id("transcript")).to_contain_text(
                "stands (countdown default)"
            )

            supervisor = browser_kit.context(browser, **tablet).new_page()
            browser_kit.sign_in(supervisor, server, "tok-super")
            supervisor.goto(f"{server}/static/supervisor.html")
            supervisor.get_by_test_id("tab-meters").click()
            expect(supervisor.get_by_test_id("meters")).to_contain_text("Blackjack Wager")
            supervisor.get_by_test_id("tab-recall").click()
            supervisor.get_by_test_id("round-id").fill("A1-000001")
            supervisor.get_by_test_id("recall").click()
            expect(supervisor.get_by_test_id("recall-transcript")).to_contain_text(
                "bob (position 2): 9♥ 9♣ = 18, stands (countdown default)"
            )
            decisions = supervisor.get_by_test_id("recall-decisions")
            expect(decisions).to_contain_text("ann hit")
            expect(decisions).to_contain_text("EWT-1")
            expect(decisions).to_contain_text("dealer countdown-expired")
            expect(supervisor.get_by_test_id("recall-cards")).to_contain_text("4S")
            expect(supervisor.get_by_test_id("recall-settlements")).to_contain_text(
                "PA 633c.5(t)(1)(i), (v)(1)"
            )
            supervisor.get_by_test_id("verify-log").click()
            expect(supervisor.get_by_test_id("verified")).to_have_text("log verified")
        finally:
            browser.close()


def test_nj_mab_f1_a_multi_action_terminal_places_three_spot_wagers(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser, viewport={"width": 1024, "height": 768}).new_page()
            browser_kit.sign_in(page, server, "tok-bob", "EWT-9", "key-EWT-9")
            page.goto(f"{server}/static/terminal.html")
            expect(page.get_by_test_id("spots")).to_be_visible()
            expect(page.get_by_test_id("wager")).to_be_hidden()
            dealer = page.request.post(
                f"{server}/api/tables/M1/dealer",
                data={"command": "open-round"},
                headers={"Authorization": "Bearer tok-dealer"},
            )
            assert dealer.ok
            page.get_by_test_id("position-3").click()
            expect(page.get_by_test_id("position")).to_have_text("3")
            for spot, dollars in ((1, "10"), (2, "0"), (3, "25")):
                page.get_by_test_id(f"spot-{spot}").fill(dollars)
            expect(page.get_by_test_id("balance")).to_contain_text("$")
            before = int(
                page.get_by_test_id("balance")
                .inner_text()
                .strip("$")
                .replace(",", "")
                .replace(".", "")
            )
            page.get_by_test_id("spot-wager").click()
            after = before - 3500  # $10 on spot 1, $25 on spot 3
            expect(page.get_by_test_id("balance")).to_have_text(
                f"${after // 100:,}.{after % 100:02d}"
            )
            expect(page.get_by_test_id("position-3")).to_contain_text("bob")
        finally:
            browser.close()


def test_633a10_a_terminal_doubles_for_less_with_the_amount_typed(
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
            browser_kit.sign_in(ann, server, "tok-ann", "EWT-3", "key-EWT-3")
            dealer.goto(f"{server}/static/dealer.html?table=A2")
            ann.goto(f"{server}/static/terminal.html")
            # the console has its table before the dealer opens the round
            expect(dealer.get_by_test_id("next")).to_have_text("Open the next round.")
            dealer.get_by_test_id("open-round").click()
            expect(dealer.get_by_test_id("next")).to_contain_text("Wagering is open")
            balance = ann.get_by_test_id("balance")
            expect(balance).to_have_text(re.compile(r"^\$[0-9,]+\.[0-9]{2}$"))
            before = _dollars(balance.inner_text())
            ann.get_by_test_id("position-1").click()
            ann.get_by_test_id("amount").fill("10")
            ann.get_by_test_id("wager").click()
            expect(balance).to_have_text(_money(before - 10))
            dealer.get_by_test_id("close-wagering").click()
            ann.get_by_test_id("action-amount").fill("5")
            ann.get_by_test_id("action-double").click()
            # 11 doubled for $5 (not the full $10) takes 10D = 21 against the dealer's 17:
            # $15 at risk wins $15, so the balance ends $15 up
            results = ann.get_by_test_id("results")
            expect(results).to_contain_text("You win $15.00", timeout=10_000)
            expect(balance).to_have_text(_money(before + 15))
        finally:
            browser.close()


def _dollars(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def _money(dollars: float) -> str:
    return f"${dollars:,.2f}"
