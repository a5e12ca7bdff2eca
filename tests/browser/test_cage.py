"""The voucher's way from the terminal to the cage (PA 605a.5(c)), in Chromium at 1280×800 and
390×844: a player adds credit with the terminal's bill validator, cashes out after a
confirmation that names the amount, and gets a printable ticket whose barcode (Interleaved
2 of 5, read back here bar by bar) carries the validation number; the cashier scans that
number into the cage's page, sees the voucher's amount and state, redeems it once, and is
refused a second time and for an unknown number. The cashier also sells a voucher for cash,
prints its ticket, and a player's terminal takes it in. Every staff page's heading names its role;
the operator's page has no tilts part; the pages' icon is served."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tests.support.browser import screenshot

SCREENS = {"desk": (1280, 800), "phone": (390, 844)}
REFUSED = re.compile(r"^Failed to load resource: the server responded with a status of (\d+)")
ITF = {
    "NNWWN": "0",
    "WNNNW": "1",
    "NWNNW": "2",
    "WWNNN": "3",
    "NNWNW": "4",
    "WNWNN": "5",
    "NWWNN": "6",
    "NNNWW": "7",
    "WNNWN": "8",
    "NWNWN": "9",
}


def read_itf(svg: str) -> str:
    """The digits of an Interleaved 2 of 5 barcode drawn as SVG bars: the widths of the bars
    and of the gaps between them, narrow or wide, after the start pattern (four narrow)."""
    bars = [
        (float(x), float(w))
        for x, w in re.findall(
            r'<rect x="([\d.]+)(?:mm)?" y="[\d.]+(?:mm)?" width="([\d.]+)(?:mm)?"', svg
        )
    ]
    widths: list[float] = []
    for index, (x, w) in enumerate(bars):
        if index:
            previous_x, previous_w = bars[index - 1]
            widths.append(round(x - previous_x - previous_w, 3))
        widths.append(w)
    narrow = min(widths)
    marks = "".join("W" if w > 1.5 * narrow else "N" for w in widths)
    assert marks.startswith("NNNN") and marks.endswith("WNN"), marks
    body = marks[4:-3]
    digits = ""
    for start in range(0, len(body), 10):
        pair = body[start : start + 10]
        digits += ITF[pair[0::2]] + ITF[pair[1::2]]
    return digits


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 0, "tok-ann")
        await floor.add_player("bob", 0, "tok-bob")
        await floor.add_player("cat", 0, "tok-cat")
        await floor.add_player("dan", 0, "tok-dan")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.issue_token("cashier", "cleo", "tok-cashier")
        await floor.issue_token("operator", "olga", "tok-operator")
        for number in (1, 2, 3, 4):
            await floor.register_terminal(f"EWT-{number}", "A1", key=f"key-EWT-{number}")

    tables = [
        TableConfig(
            "A1",
            HybridRules(countdown_seconds=60),
            title="Hybrid A",
            automated=False,
            require_procedures=False,
        )
    ]
    db = str(tmp_path_factory.mktemp("cage") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


class Watch:
    """Console and page errors; :meth:`check` allows only the refusals a test asked for."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def check(self, *allowed: int) -> None:
        for error in self.errors:
            refused = REFUSED.match(error)
            assert refused is not None and int(refused.group(1)) in allowed, self.errors


@pytest.mark.parametrize("screen", list(SCREENS))
def test_605a5c_a_cashier_redeems_the_printed_voucher_from_the_cage_page(
    server: str, browser_kit: Any, screen: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    width, height = SCREENS[screen]
    viewport = {"viewport": {"width": width, "height": height}}
    player, terminal = ("ann", "EWT-1") if screen == "desk" else ("bob", "EWT-2")
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser, **viewport).new_page()
            watch = Watch(page)
            browser_kit.sign_in(page, server, f"tok-{player}", terminal, f"key-{terminal}")
            page.goto(f"{server}/static/terminal.html?lang=en")
            expect(page.get_by_test_id("balance")).to_have_text("$0.00")
            if screen == "phone":
                page.get_by_test_id("menu-button").click()
            # at $0.00 a cash-out says there is nothing to cash out, and prints nothing
            page.get_by_test_id("cashout-button").click()
            expect(page.get_by_test_id("cashout-confirm-text")).to_have_text(
                "Nothing to cash out: your balance is $0.00."
            )
            expect(page.get_by_test_id("cashout-yes")).to_be_hidden()
            page.get_by_test_id("cashout-no").click()
            # the bill validator: a $20 and a $50 bill
            if screen == "phone" and not page.get_by_test_id("buyin-button").is_visible():
                page.get_by_test_id("menu-button").click()
            page.get_by_test_id("buyin-button").click()
            page.get_by_test_id("bill-2000").click()
            expect(page.get_by_test_id("buyin-text")).to_have_text(
                "$20.00 credited. Balance $20.00."
            )
            page.get_by_test_id("bill-5000").click()
            expect(page.get_by_test_id("buyin-text")).to_have_text(
                "$50.00 credited. Balance $70.00."
            )
            page.get_by_test_id("buyin-dialog").get_by_role("button", name="Close").click()
            expect(page.get_by_test_id("balance")).to_have_text("$70.00")
            # the cash-out names its amount before it happens
            if screen == "phone" and not page.get_by_test_id("cashout-button").is_visible():
                page.get_by_test_id("menu-button").click()
            page.get_by_test_id("cashout-button").click()
            expect(page.get_by_test_id("cashout-confirm-text")).to_contain_text("$70.00")
            expect(page.get_by_test_id("cashout-yes")).to_have_text("Cash out $70.00")
            page.get_by_test_id("cashout-yes").click()
            expect(page.get_by_test_id("voucher-dialog")).to_contain_text("Your voucher")
            expect(page.get_by_test_id("ticket-frame")).to_be_visible()
            ticket = page.frame_locator("[data-testid=ticket-frame]")
            expect(ticket.get_by_test_id("ticket-amount")).to_have_text("$70.00")
            expect(ticket.get_by_test_id("ticket-words")).to_have_text("SEVENTY DOLLARS AND 00/100")
            expect(page.get_by_test_id("ticket-print")).to_be_visible()
            svg = ticket.get_by_test_id("ticket-barcode").inner_html()
            code = read_itf(svg)
            assert len(code) == 18
            printed = ticket.get_by_test_id("ticket-code").inner_text()
            assert printed.replace("-", "") == code
            expect(page.get_by_test_id("balance")).to_have_text("$0.00")
            screenshot(page, f"terminal-voucher-{screen}")
            watch.check()

            # the cage: the scanner types the barcode's digits and Enter
            desk = browser_kit.context(browser, **viewport).new_page()
            cage_watch = Watch(desk)
            browser_kit.sign_in(desk, server, "tok-cashier")
            desk.goto(f"{server}/static/cage.html?lang=en")
            expect(desk.get_by_role("heading", name="Cage — cashier")).to_be_visible()
            box = desk.get_by_label("Validation number")
            box.click()
            desk.keyboard.type(code + "\n")
            expect(desk.get_by_test_id("voucher-amount")).to_have_text("$70.00")
            expect(desk.get_by_test_id("voucher-state")).to_have_text(
                "Not yet paid: it may be redeemed now."
            )
            expect(desk.get_by_test_id("voucher-found")).to_contain_text(terminal)
            screenshot(desk, f"cage-{screen}")
            desk.get_by_role("button", name="Redeem").click()
            expect(desk.get_by_test_id("redeem-done")).to_contain_text("Paid $70.00 in cash")
            # the day's report counts it (the module's server: another screen's voucher too)
            paid = re.compile(r"vouchers paid\s*[12]\s*\$(70|140)\.00")
            expect(desk.get_by_test_id("report-voucher_paid")).to_have_text(paid)
            # the same voucher again: shown as paid, refused
            box.fill(printed)
            desk.get_by_role("button", name="Redeem").click()
            expect(desk.get_by_test_id("voucher-state")).to_contain_text("Already paid")
            desk.get_by_role("button", name="Redeem").click()
            expect(desk.get_by_test_id("redeem-error")).to_have_text(
                "This voucher may not be paid."
            )
            # a number no voucher has
            box.fill("123456789012345611")
            desk.get_by_test_id("voucher-lookup").click()
            expect(desk.get_by_test_id("redeem-error")).to_contain_text(
                "No voucher has the validation number …5611"
            )
            expect(desk.get_by_test_id("voucher-found")).to_be_empty()
            overflow = desk.evaluate("document.documentElement.scrollWidth > innerWidth")
            assert not overflow, "the cage's page is wider than the screen"
            cage_watch.check(404)
        finally:
            browser.close()


@pytest.mark.parametrize("screen", list(SCREENS))
def test_605a5c_a_cashier_sells_a_voucher_for_cash_and_a_terminal_takes_it_in(
    server: str, browser_kit: Any, screen: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    width, height = SCREENS[screen]
    viewport = {"viewport": {"width": width, "height": height}}
    player, terminal = ("cat", "EWT-3") if screen == "desk" else ("dan", "EWT-4")
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            desk = browser_kit.context(browser, **viewport).new_page()
            cage_watch = Watch(desk)
            browser_kit.sign_in(desk, server, "tok-cashier")
            desk.goto(f"{server}/static/cage.html?lang=en")
            panel = desk.get_by_test_id("sell-panel")
            expect(panel.get_by_role("heading")).to_have_text(
                "Sell a voucher for cash (PA 605a.5(c))"
            )
            amount = panel.get_by_label("Amount ($)")
            amount.fill("twenty")
            panel.get_by_role("button", name="Sell a voucher").click()
            expect(desk.get_by_test_id("sell-error")).to_have_text(
                "Type an amount in dollars and cents, e.g. 20 or 12.50."
            )
            amount.fill("25")
            panel.get_by_role("button", name="Sell a voucher").click()
            expect(desk.get_by_test_id("sell-error")).to_be_empty()
            done = desk.get_by_test_id("sell-done")
            expect(done).to_contain_text("sold for $25.00 in cash")
            ticket = desk.frame_locator("[data-testid=sold-ticket]")
            expect(ticket.get_by_test_id("ticket-amount")).to_have_text("$25.00")
            expect(ticket.get_by_test_id("ticket-words")).to_have_text(
                "TWENTY-FIVE DOLLARS AND 00/100"
            )
            expect(desk.get_by_role("button", name="Print the ticket")).to_be_visible()
            code = read_itf(ticket.get_by_test_id("ticket-barcode").inner_html())
            assert re.sub(r"\D", "", done.inner_text()).endswith(code)
            expect(desk.get_by_test_id("report-voucher_sold")).to_have_text(
                re.compile(r"vouchers sold\s*[12]\s*\$(25|50)\.00")
            )
            overflow = desk.evaluate("document.documentElement.scrollWidth > innerWidth")
            assert not overflow, "the cage's page is wider than the screen"
            screenshot(desk, f"cage-sold-{screen}")
            cage_watch.check()

            # the player inserts the voucher at his terminal: the game account is credited
            page = browser_kit.context(browser, **viewport).new_page()
            watch = Watch(page)
            browser_kit.sign_in(page, server, f"tok-{player}", terminal, f"key-{terminal}")
            page.goto(f"{server}/static/terminal.html?lang=en")
            expect(page.get_by_test_id("balance")).to_have_text("$0.00")
            if screen == "phone" and not page.get_by_test_id("buyin-button").is_visible():
                page.get_by_test_id("menu-button").click()
            page.get_by_test_id("buyin-button").click()
            page.get_by_test_id("voucher-in-code").fill(code)
            page.get_by_test_id("voucher-in-submit").click()
            expect(page.get_by_test_id("buyin-text")).to_contain_text("$25.00 credited")
            page.get_by_test_id("buyin-dialog").get_by_role("button", name="Close").click()
            expect(page.get_by_test_id("balance")).to_have_text("$25.00")
            watch.check()
        finally:
            browser.close()


@pytest.mark.parametrize(
    ("token", "heading", "page_path"),
    [
        ("tok-super", "Floor supervisor", "supervisor.html"),
        ("tok-operator", "Operator — floor settings and terminals", "supervisor.html"),
        ("tok-cashier", "Cage — cashier", "cage.html"),
    ],
)
def test_every_staff_page_s_heading_names_its_role(
    server: str, browser_kit: Any, token: str, heading: str, page_path: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser, viewport={"width": 1280, "height": 800}).new_page()
            watch = Watch(page)
            browser_kit.sign_in(page, server, token)
            page.goto(f"{server}/static/{page_path}?lang=en")
            expect(page.get_by_role("heading", level=1)).to_have_text(heading)
            if token == "tok-operator":
                page.get_by_test_id("tab-tilts").click()
                expect(page.get_by_test_id("tab-tilts")).to_have_text("Terminals")
                expect(page.get_by_test_id("open-tilts")).to_be_hidden()
                expect(page.get_by_text("Your role does not read the tilts")).to_be_hidden()
                expect(page.get_by_test_id("terminal-row-EWT-1")).to_be_visible()
                # what an operator does: the floor's settings, each under its name
                page.get_by_test_id("tab-settings").click()
                row = page.get_by_test_id("setting-casino_name")
                expect(row).to_contain_text("Casino name printed on vouchers")
                page.get_by_test_id("setting-input-casino_name").fill("Riverside Casino")
                page.get_by_test_id("setting-save-casino_name").click()
                expect(page.get_by_test_id("setting-value-casino_name")).to_have_text(
                    "Riverside Casino"
                )
                expect(page.get_by_test_id("setting-value-voucher_limit")).to_have_text(
                    "$10,000.00"
                )
                # the floor's keys: a dealer's token issued (its secret shown once), revoked
                page.get_by_test_id("tab-keys").click()
                expect(page.get_by_test_id("key-cleo-cashier")).to_contain_text("active")
                page.get_by_test_id("issue-role").select_option("dealer")
                page.get_by_test_id("issue-subject").fill("dave")
                page.get_by_role("button", name="Issue a token").click()
                issued = page.get_by_test_id("issued")
                expect(issued).to_contain_text("Token for the dealer dave: ")
                token = issued.inner_text().split(": ", 1)[1].split(" — ")[0]
                browser_kit.secret(token)
                row = page.get_by_test_id("key-dave-dealer")
                expect(row).to_contain_text("active")
                row.get_by_role("button", name="Revoke").click()
                expect(row).to_contain_text("revoked")
                refused = page.context.request.post(
                    f"{server}/api/session", data={"token": token}, fail_on_status_code=False
                )
                assert refused.status == 401
            else:
                expect(page.get_by_test_id("tab-settings")).to_have_count(
                    1 if page_path == "supervisor.html" else 0
                )
                if page_path == "supervisor.html":  # reads and revokes keys, issues none
                    page.get_by_test_id("tab-keys").click()
                    expect(page.get_by_test_id("key-olga-operator")).to_contain_text("active")
                    expect(page.get_by_test_id("issue-form")).to_be_hidden()
                if page_path == "supervisor.html":
                    expect(page.get_by_test_id("tab-settings")).to_be_hidden()
            watch.check()
        finally:
            browser.close()


def test_the_pages_icon_is_served(server: str) -> None:
    with urllib.request.urlopen(f"{server}/favicon.ico", timeout=10) as answer:
        assert answer.status == 200
        assert answer.headers["content-type"].startswith("image/svg+xml")
