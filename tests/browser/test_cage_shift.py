"""A cashier's shift at the cage (PA 605a.5(c), 605a.4(d), Chapter 605a), in Chromium: she
sells two vouchers and sees each sale's receipt (casino, cashier, the floor's local time, the
amount in dollars, the voucher number masked but for its last four digits, the transaction's
id); voids the first with a reason (refused without one), and the voided voucher shows as
voided; redeems the second and sees its receipt; reads the shift's transactions in dollars, in
the floor's time zone; sets a player's loss limit in dollars at the cage."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tablejack.store.settings import set_floor_setting


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 0, "tok-ann")
        await floor.issue_token("cashier", "cleo", "tok-cashier")
        await set_floor_setting(floor.store, "sas_time_zone", "America/New_York", by="olga")
        await set_floor_setting(floor.store, "casino_name", "Keystone Casino", by="olga")

    tables = [TableConfig("A1", HybridRules(), automated=False, require_procedures=False)]
    db = str(tmp_path_factory.mktemp("shift") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


CODE = re.compile(r"validation number ([\d-]{18,})")
LOCAL = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} E[SD]T")


def _sell(desk: Any, amount: str) -> tuple[str, str]:
    """Sell a voucher of ``amount`` dollars: its number and validation code."""
    from playwright.sync_api import expect

    desk.get_by_test_id("sell-amount").fill(amount)
    desk.get_by_test_id("sell-submit").click()
    done = desk.get_by_test_id("sell-done")
    expect(done).to_contain_text("in cash (validation number")
    text = done.inner_text()
    number = re.search(r"Voucher (\d{12})", text)
    code = CODE.search(text)
    assert number and code, text
    return number.group(1), code.group(1).replace("-", "")


def test_605a5c_the_cashier_sells_voids_redeems_and_reads_receipts_and_her_shift(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            desk = browser_kit.context(browser).new_page()
            browser_kit.sign_in(desk, server, "tok-cashier")
            desk.goto(f"{server}/static/cage.html?lang=en")
            # two vouchers sold; each sale's receipt
            first, first_code = _sell(desk, "25")
            receipt = desk.frame_locator("[data-testid=sold-receipt]").get_by_test_id("receipt")
            expect(receipt).to_contain_text("Keystone Casino")
            expect(receipt).to_contain_text("VOUCHER SOLD")
            expect(receipt).to_contain_text("$25.00")
            expect(receipt).to_contain_text("cleo")
            expect(receipt).to_contain_text(f"********{first[-4:]}")
            expect(receipt).to_contain_text(LOCAL)
            expect(receipt).to_contain_text("acct:cage#")
            assert first not in receipt.inner_text()
            second, second_code = _sell(desk, "10.50")
            expect(receipt).to_contain_text("$10.50")

            # the first voided: a reason is required; then the cash goes back
            desk.get_by_test_id("void-code").fill(first_code)
            desk.get_by_test_id("void-submit").click()
            expect(desk.get_by_test_id("void-error")).to_have_text("Name the reason for the void.")
            desk.get_by_test_id("void-reason").fill("sold in error")
            desk.get_by_test_id("void-submit").click()
            expect(desk.get_by_test_id("void-done")).to_have_text(
                f"Voucher {first} voided (sold in error): hand back $25.00 in cash."
            )
            desk.get_by_test_id("voucher-code").fill(first_code)
            expect(desk.get_by_test_id("voucher-state")).to_contain_text("Voided at the cage")

            # the second redeemed, with its receipt
            desk.get_by_test_id("voucher-code").fill(second_code)
            expect(desk.get_by_test_id("voucher-amount")).to_have_text("$10.50")
            desk.get_by_test_id("voucher-redeem").click()
            expect(desk.get_by_test_id("redeem-done")).to_have_text(
                f"Paid $10.50 in cash for voucher {second}."
            )
            paid = desk.frame_locator("[data-testid=redeem-receipt]").get_by_test_id("receipt")
            expect(paid).to_contain_text("VOUCHER REDEEMED")
            expect(paid).to_contain_text("$10.50")
            expect(paid).to_contain_text(f"********{second[-4:]}")

            # the shift's transactions, newest first, in dollars and the floor's time zone
            expect(desk.get_by_test_id("transactions-zone")).to_have_text(
                "Times in the floor's time zone (America/New_York)."
            )
            rows = desk.get_by_test_id("cage-transactions").locator("tbody tr")
            expect(rows).to_have_count(4)
            expect(rows.nth(0)).to_contain_text("voucher redeemed")
            expect(rows.nth(0)).to_contain_text("$10.50")
            expect(rows.nth(1)).to_contain_text("voucher voided")
            expect(rows.nth(1)).to_contain_text("sold in error")
            expect(rows.nth(3)).to_contain_text("voucher sold")
            expect(rows.nth(3)).to_contain_text("$25.00")
            expect(rows.nth(3)).to_contain_text(re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"))
            rows.nth(1).get_by_role("button").click()
            voided = desk.frame_locator("[data-testid=row-receipt]").get_by_test_id("receipt")
            expect(voided).to_contain_text("VOUCHER VOIDED")
            expect(voided).to_contain_text("sold in error")
            expect(desk.get_by_test_id("report-voucher_voided")).to_contain_text("$25.00")
            assert not re.search(r"\b(2500|1050) cents\b", desk.inner_text("body"))

            # a player sent to the cage: his loss limit set in dollars
            desk.get_by_test_id("limits-account").fill("ann")
            desk.get_by_test_id("limits-find").click()
            expect(desk.get_by_test_id("limits-exclusion")).to_have_text("Not self-excluded.")
            desk.get_by_test_id("limit-loss").fill("50")
            desk.get_by_test_id("limits-set").click()
            expect(desk.get_by_test_id("limits-done")).to_have_text("The limits of ann are saved.")
            expect(desk.get_by_test_id("limits-line")).to_contain_text("loss limit $50.00")
            browser_kit.check_urls()
        finally:
            browser.close()
