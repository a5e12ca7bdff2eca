"""Signing in on the pages in a real browser (Playwright driving Debian's Chromium; PA
605a.4(d): tokens never in a URL). A page whose browser is not signed in shows a sign-in form
instead of its content: the terminal page first enrols the browser as a registered terminal
(its id and device credential), then the player signs in there; the dealer console and the
supervisor page take a staff token. A wrong token is refused beside the form and shows nothing
of the page; Sign out brings the form back. The demo's landing page signs a browser in with one
click. No page, request or socket URL ever holds a token (checked after every browser test by
``tests/browser/conftest.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.http.demo import demo_setup, demo_tables
from tablejack.server.table import TableConfig

SCREEN: Any = {"viewport": {"width": 1280, "height": 800}}
UNKNOWN = "Unknown, expired or revoked token. [PA 605a.4(d)]"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.add_player("bob", 100_000, "tok-bob")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.issue_token("operator", "olga", "tok-operator")
        await floor.register_terminal("EWT-1", "A1", key="key-EWT-1")
        await floor.register_terminal("EWT-2", "A1", key="key-EWT-2")

    table = TableConfig(
        "A1",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        title="Hybrid A, sign-in",
    )
    db = str(tmp_path_factory.mktemp("browser-sign-in") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[table], setup=setup)) as url:
        yield url


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    """The demo floor as ``tablejack serve --demo`` builds it."""
    browser_kit.require()
    db = str(tmp_path_factory.mktemp("browser-demo") / "floor.db")
    app = create_app(db, tables=demo_tables(), setup=demo_setup, demo=True)
    with browser_kit.serve(app) as url:
        yield url


def test_605a4d_a_terminal_is_enrolled_then_the_player_signs_in_and_out_with_the_forms(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, **SCREEN)
            page = context.new_page()
            page.goto(f"{server}/static/terminal.html")

            # not an enrolled terminal: the enrol form, nothing of the table
            expect(page.get_by_test_id("enrol-form")).to_be_visible()
            expect(page.locator("main")).to_be_hidden()
            expect(page.get_by_test_id("balance")).to_be_hidden()
            expect(page.get_by_test_id("cashout-button")).to_be_hidden()
            # the form speaks the terminal's language
            page.get_by_test_id("language").select_option("es")
            expect(page.get_by_test_id("enrol-submit")).to_have_text("Registrar este terminal")
            page.get_by_test_id("language").select_option("en")
            expect(page.get_by_test_id("enrol-submit")).to_have_text("Enrol this terminal")
            assert page.get_by_test_id("enrol-key").get_attribute("type") == "password"
            assert page.get_by_test_id("enrol-key").get_attribute("autocomplete") == "off"

            # a wrong device credential is refused beside the form
            page.get_by_test_id("enrol-terminal").fill("EWT-1")
            page.get_by_test_id("enrol-key").fill("key-wrong")
            page.get_by_test_id("enrol-submit").click()
            expect(page.get_by_test_id("enrol-error")).to_have_text(
                "The credential presented is not terminal 'EWT-1''s. [PA 605a.4(d)]"
            )
            expect(page.get_by_test_id("signin-form")).to_have_count(0)

            # the right one: this browser is terminal EWT-1 of table A1; the player signs in
            page.get_by_test_id("enrol-key").fill("key-EWT-1")
            page.get_by_test_id("enrol-submit").click()
            expect(page.get_by_test_id("signin-terminal")).to_have_text("Terminal EWT-1 · table A1")
            browser_kit.secret("key-wrong", "key-EWT-1")
            token = page.get_by_test_id("signin-token")
            assert token.get_attribute("type") == "password"
            assert token.get_attribute("autocomplete") == "off"

            # a wrong token: the server's refusal beside the form, still no page content
            token.fill("tok-nobody")
            page.get_by_test_id("signin-submit").click()
            expect(page.get_by_test_id("signin-error")).to_have_text(UNKNOWN)
            expect(page.locator("main")).to_be_hidden()
            expect(page.get_by_test_id("positions")).to_be_hidden()
            expect(page.get_by_test_id("balance")).to_be_hidden()
            browser_kit.secret("tok-nobody")

            # ann's token: the table of the terminal's binding, ann's balance, the terminal's id
            token.fill("tok-ann")
            page.get_by_test_id("signin-submit").click()
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(page.get_by_test_id("who")).to_have_text("ann · EWT-1")
            expect(page.get_by_test_id("table-name")).to_have_text("Hybrid A, sign-in")
            expect(page.get_by_test_id("position-1")).to_be_visible()
            expect(page.get_by_test_id("signin")).to_have_count(0)
            me = context.request.get(f"{server}/api/me").json()
            assert (me["role"], me["subject"], me["terminal"]) == ("player", "ann", "EWT-1")

            # the session survives a reload (the cookie), without any token in the address
            page.reload()
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            assert page.url == f"{server}/static/terminal.html"

            # sign out: the session ends, the form is back; the browser is still terminal EWT-1
            page.get_by_test_id("sign-out").click()
            expect(page.get_by_test_id("signin-form")).to_be_visible()
            expect(page.get_by_test_id("signin-terminal")).to_have_text("Terminal EWT-1 · table A1")
            expect(page.get_by_test_id("enrol-form")).to_have_count(0)
            expect(page.locator("main")).to_be_hidden()
            expect(page.get_by_test_id("balance")).to_be_hidden()
            assert context.request.get(f"{server}/api/me").status == 401

            # and signs in again at once
            browser_kit.sign_in_with_forms(page, "tok-ann")
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
        finally:
            browser.close()
    assert any(url.startswith("ws://") for url in browser_kit.urls)
    assert f"{server}/static/terminal.html" in browser_kit.urls


def test_605a4d_a_session_ended_in_another_tab_brings_the_form_back(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, **SCREEN)
            page = context.new_page()
            browser_kit.sign_in(page, server, "tok-ann", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html")
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            # another tab of this browser signs out: the session ends, the server closes this
            # page's socket at once (1008 credential ended, without waiting for its next
            # message) and the page shows its sign-in form
            other = context.new_page()
            other.goto(f"{server}/static/terminal.html")
            expect(other.get_by_test_id("balance")).to_have_text("$1,000.00")  # its script runs
            other.get_by_test_id("sign-out").click()
            expect(other.get_by_test_id("signin-form")).to_be_visible()
            expect(page.get_by_test_id("signin-form")).to_be_visible(timeout=10_000)
            expect(page.locator("main")).to_be_hidden()
        finally:
            browser.close()


def test_605a_the_terminals_requests_go_with_its_session_tip_recall_and_cash_out(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, **SCREEN)
            page = context.new_page()
            tips = context.request.put(
                f"{server}/api/floor/settings",
                data={"key": "tips_enabled", "value": True},
                headers={"Authorization": "Bearer tok-operator"},
            )
            assert tips.ok, tips.text()
            browser_kit.sign_in(page, server, "tok-bob", "EWT-2", "key-EWT-2")
            page.goto(f"{server}/static/terminal.html")
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")

            page.get_by_test_id("tip-button").click()
            expect(page.get_by_test_id("tip-text")).to_have_text(
                "A tip comes out of your credit, up to $100.00."
            )
            page.get_by_test_id("tip-amount").fill("5")
            page.get_by_test_id("tip-give").click()
            expect(page.get_by_test_id("tip-text")).to_have_text(
                "Thank you: $5.00 to the dealer. Your balance: $995.00."
            )
            page.get_by_test_id("tip-dialog").get_by_role("button", name="Close").click()

            page.get_by_test_id("recall-button").click()
            expect(page.get_by_test_id("recall-title")).to_have_text(
                "no game played at this terminal"
            )
            page.get_by_test_id("recall-dialog").get_by_role("button", name="Close recall").click()

            page.get_by_test_id("cashout-button").click()
            expect(page.get_by_test_id("cashout-confirm-text")).to_contain_text("$995.00")
            page.get_by_test_id("cashout-yes").click()
            expect(page.get_by_test_id("voucher-text")).to_contain_text("for $995.00")
            expect(page.get_by_test_id("voucher-text")).to_contain_text("validation code")
            expect(page.get_by_test_id("balance")).to_have_text("$0.00")
        finally:
            browser.close()


def test_605a4d_the_dealer_console_and_the_supervisor_sign_in_with_their_forms(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            dealer = browser_kit.context(browser, **SCREEN).new_page()
            dealer.goto(f"{server}/static/dealer.html?table=A1")
            expect(dealer.get_by_test_id("signin-form")).to_be_visible()
            expect(dealer.get_by_test_id("open-round")).to_be_hidden()
            expect(dealer.get_by_test_id("enrol-form")).to_have_count(0)
            # a player's token is no dealer's: a player signs in at a terminal only
            browser_kit.sign_in_with_forms(dealer, "tok-ann")
            expect(dealer.get_by_test_id("signin-error")).to_contain_text(
                "A player signs in at a terminal (this browser is not one)."
            )
            browser_kit.sign_in_with_forms(dealer, "tok-wrong")
            expect(dealer.get_by_test_id("signin-error")).to_have_text(UNKNOWN)
            expect(dealer.get_by_test_id("next")).to_be_hidden()
            browser_kit.secret("tok-wrong")
            browser_kit.sign_in_with_forms(dealer, "tok-dealer")
            expect(dealer.get_by_test_id("who")).to_have_text("dana (dealer)")
            expect(dealer.get_by_test_id("table-select")).to_have_value("A1")
            dealer.get_by_test_id("open-round").click()
            expect(dealer.get_by_test_id("next")).to_contain_text("Wagering is open")
            dealer.get_by_test_id("sign-out").click()
            expect(dealer.get_by_test_id("signin-form")).to_be_visible()
            expect(dealer.get_by_test_id("next")).to_be_hidden()

            supervisor = browser_kit.context(browser, **SCREEN).new_page()
            supervisor.goto(f"{server}/static/supervisor.html")
            expect(supervisor.get_by_test_id("signin-form")).to_be_visible()
            expect(supervisor.get_by_test_id("tables")).to_be_hidden()
            browser_kit.sign_in_with_forms(supervisor, "tok-super")
            expect(supervisor.get_by_test_id("who")).to_have_text("sam (supervisor)")
            expect(supervisor.get_by_test_id("tables")).to_contain_text("A1 — Hybrid A, sign-in")
            supervisor.get_by_test_id("verify-log").click()
            expect(supervisor.get_by_test_id("verified")).to_have_text("log verified")
            supervisor.get_by_test_id("sign-out").click()
            expect(supervisor.get_by_test_id("signin-form")).to_be_visible()
            expect(supervisor.get_by_test_id("tables")).to_be_hidden()
        finally:
            browser.close()


def test_the_landing_page_of_a_floor_lists_the_pages_without_a_token(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser, **SCREEN).new_page()
            page.goto(f"{server}/")
            assert page.url == f"{server}/static/index.html"
            pages = page.get_by_test_id("pages")
            for name in ("Electronic wagering terminal", "Dealer console", "Supervisor"):
                expect(pages.get_by_role("link", name=name)).to_be_visible()
            links = pages.locator("a").evaluate_all("(links) => links.map((a) => a.href)")
            assert f"{server}/static/terminal.html" in links
            assert not [link for link in links if "token" in link]
            expect(page.get_by_test_id("signed-in")).to_be_hidden()
        finally:
            browser.close()


def test_605a4d_the_demo_landing_page_signs_in_with_one_click(
    demo_server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    browser_kit.secret("demo-ann", "demo-key-A1-EWT1", "demo-dealer", "demo-supervisor")
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            ann = browser_kit.context(browser, **SCREEN).new_page()
            ann.goto(f"{demo_server}/")
            expect(ann.get_by_test_id("one-identity")).to_contain_text(
                "One browser holds one identity at a time"
            )
            expect(ann.get_by_test_id("one-identity")).to_contain_text("private window")
            for table in ("A1", "B1", "C1"):
                for number in range(1, 5):
                    terminal = ann.get_by_test_id(f"terminal-{table}-EWT{number}")
                    for player in ("ann", "bob", "cat", "dan"):
                        expect(terminal.get_by_role("button", name=player)).to_be_visible()
                expect(ann.get_by_test_id(f"dealer-{table}")).to_be_visible()
            for role in ("supervisor", "cashier", "operator"):
                expect(ann.get_by_test_id(f"staff-{role}")).to_be_visible()

            # one click: ann at A1-EWT1
            ann.get_by_test_id("terminal-A1-EWT1").get_by_role("button", name="ann").click()
            expect(ann.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(ann.get_by_test_id("who")).to_have_text("ann · A1-EWT1")
            expect(ann.get_by_test_id("table-name")).to_have_text("Hybrid A — Buzzer Beater")
            assert re.fullmatch(
                rf"{re.escape(demo_server)}/static/terminal\.html(\?table=A1)?", ann.url
            )
            # back on the landing page, it says who this browser is
            ann.goto(f"{demo_server}/")
            expect(ann.get_by_test_id("who")).to_have_text("Signed in as ann (player at A1-EWT1)")

            # the dealer console of C1, in a browser of its own
            dealer = browser_kit.context(browser, **SCREEN).new_page()
            dealer.goto(f"{demo_server}/")
            dealer.get_by_test_id("dealer-C1").click()
            expect(dealer.get_by_test_id("who")).to_have_text("dealer-dana (dealer)")
            expect(dealer.get_by_test_id("table-select")).to_have_value("C1")
            assert dealer.url == f"{demo_server}/static/dealer.html?table=C1"

            supervisor = browser_kit.context(browser, **SCREEN).new_page()
            supervisor.goto(f"{demo_server}/")
            supervisor.get_by_test_id("staff-supervisor").click()
            expect(supervisor.get_by_test_id("who")).to_have_text("floor-sam (supervisor)")
            expect(supervisor.get_by_test_id("tables")).to_contain_text("Hybrid A — Buzzer Beater")

            # the cashier's click opens the cage's page, under its own heading
            cashier = browser_kit.context(browser, **SCREEN).new_page()
            cashier.goto(f"{demo_server}/")
            cashier.get_by_test_id("staff-cashier").click()
            expect(cashier.get_by_role("heading", name="Cage — cashier")).to_be_visible()
            expect(cashier.get_by_label("Validation number")).to_be_visible()
            assert cashier.url == f"{demo_server}/static/cage.html"

            # ann's browser is still ann's
            ann.goto(f"{demo_server}/static/terminal.html")
            expect(ann.get_by_test_id("who")).to_have_text("ann · A1-EWT1")
        finally:
            browser.close()
    assert any(url.startswith("ws://") for url in browser_kit.urls)
