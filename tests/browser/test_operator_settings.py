"""The operator's floor settings in Chromium: each setting a form field of its type and unit,
drawn from its spec (``GET /api/floor/settings/specs``) — dollars and cents, a checklist of the
bills that exist, seconds, a select — never raw JSON, never cents. The operator sets the
hand-pay limit to $500.00 and the floor stores 50000 cents; a value out of range is refused with
the sentence naming the range in dollars, which stays beside its setting through the page's
refresh; the bills are chosen from those that exist."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

from .test_supervisor import SCREEN, Watch


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.issue_token("operator", "olga", "tok-operator")

    table = TableConfig("A1", HybridRules(countdown_seconds=60), automated=False)
    db = str(tmp_path_factory.mktemp("operator") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[table], setup=setup)) as url:
        yield url


def stored(server: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{server}/api/floor/settings", headers={"Authorization": "Bearer tok-operator"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return dict(json.loads(answer.read()))


def test_605a4d_the_operator_sets_the_hand_pay_limit_in_dollars_and_sees_the_range(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser, **SCREEN).new_page()
            watch = Watch(page)
            browser_kit.sign_in(page, server, "tok-operator")
            page.goto(f"{server}/static/supervisor.html")
            page.get_by_test_id("tab-settings").click()
            limit = page.get_by_test_id("setting-input-handpay_limit")
            expect(limit).to_have_value("1200.00")  # dollars, not 120000 cents
            expect(page.get_by_test_id("setting-value-handpay_limit")).to_have_text("$1,200.00")
            expect(page.get_by_test_id("setting-range-handpay_limit")).to_have_text(
                "From $1.00 to $100,000.00"
            )
            # $500.00 typed: the floor stores 50000 cents
            limit.fill("500.00")
            page.get_by_test_id("setting-save-handpay_limit").click()
            expect(page.get_by_test_id("setting-value-handpay_limit")).to_have_text("$500.00")
            assert stored(server)["handpay_limit"] == 50_000
            # out of range: refused with the range in dollars, and the sentence stays
            page.get_by_test_id("setting-input-handpay_limit").fill("1000000")
            page.get_by_test_id("setting-save-handpay_limit").click()
            error = page.get_by_test_id("setting-error-handpay_limit")
            expect(error).to_have_text(
                "The largest hand pay without a supervisor is between $1.00 and $100,000.00, "
                "not $1,000,000.00 (PA 605a.5(d))."
            )
            page.get_by_test_id("tab-settings").focus()  # nothing typed into: the page redraws
            page.wait_for_timeout(4500)  # a refresh of the page (every 4 s)
            expect(error).to_contain_text("between $1.00 and $100,000.00")
            assert stored(server)["handpay_limit"] == 50_000
            # not dollars at all: the page says how to type them, nothing is sent
            page.get_by_test_id("setting-input-handpay_limit").fill("five hundred")
            page.get_by_test_id("setting-save-handpay_limit").click()
            expect(error).to_have_text("Type dollars and cents, such as 500.00.")
            # the bills: a checklist of those that exist; the $1 bill taken off
            expect(page.get_by_test_id("setting-input-bill_denominations")).to_contain_text("$100")
            page.get_by_test_id("setting-bill-bill_denominations-100").uncheck()
            page.get_by_test_id("setting-save-bill_denominations").click()
            expect(page.get_by_test_id("setting-value-bill_denominations")).to_have_text(
                "$2, $5, $10, $20, $50, $100"
            )
            assert stored(server)["bill_denominations"] == [200, 500, 1000, 2000, 5000, 10000]
            # seconds and a select: each in its unit, no JSON to type
            expect(page.get_by_test_id("setting-value-session_lifetime_s")).to_have_text(
                "43200 seconds"
            )
            page.get_by_test_id("setting-input-tips_enabled").select_option("true")
            page.get_by_test_id("setting-save-tips_enabled").click()
            expect(page.get_by_test_id("setting-value-tips_enabled")).to_have_text("Yes")
            assert stored(server)["tips_enabled"] is True
            text = page.get_by_test_id("settings").inner_text()
            assert "120000" not in text and "50000" not in text  # never a raw cents figure
        finally:
            browser.close()
    watch.check(409)
