"""Dual control and the drawer on the pages (PA 605a.4(d)), in Chromium: the cashier opens her
drawer with a float, asks a $5,000.00 credit, which waits (the cage page says so, and no money
moves); the supervisor approves it from the approval queue and the player's balance moves;
the cashier counts and closes the drawer and sees its variance. Every amount is shown in
dollars and cents."""

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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 0, "tok-ann")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.issue_token("cashier", "cleo", "tok-cashier")
        await floor.register_terminal("EWT-1", "A1", key="key-EWT-1")

    tables = [TableConfig("A1", HybridRules(), automated=False, require_procedures=False)]
    db = str(tmp_path_factory.mktemp("dual") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


def balance(server: str, token: str) -> int:
    asked = urllib.request.Request(f"{server}/api/me", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(asked) as answer:
        return int(json.load(answer)["balance"])


def test_605a4d_a_credit_above_the_threshold_waits_for_the_supervisor_and_the_drawer_closes(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            desk = browser_kit.context(browser).new_page()
            browser_kit.sign_in(desk, server, "tok-cashier")
            desk.goto(f"{server}/static/cage.html?lang=en")
            # the drawer: none open, then opened with a $500.00 float
            expect(desk.get_by_test_id("drawer")).to_contain_text("No drawer open")
            desk.get_by_test_id("drawer-float").fill("500")
            desk.get_by_test_id("drawer-open").click()
            expect(desk.get_by_test_id("drawer-done")).to_have_text(
                "Drawer opened with a float of $500.00."
            )
            expect(desk.get_by_test_id("drawer-expected")).to_have_text("It should hold $500.00")
            # a $5,000.00 credit: above the $3,000.00 threshold, it waits
            desk.get_by_test_id("credit-account").fill("ann")
            desk.get_by_test_id("credit-amount").fill("5000")
            desk.get_by_test_id("credit-submit").click()
            expect(desk.get_by_test_id("credit-done")).to_have_text(
                "$5,000.00 waits for a supervisor's approval (request 1); no money has moved yet."
            )
            expect(desk.get_by_test_id("request-status-1")).to_have_text("waiting for a supervisor")
            assert balance(server, "tok-ann") == 0

            # the supervisor's approval queue
            office = browser_kit.context(browser).new_page()
            browser_kit.sign_in(office, server, "tok-super")
            office.goto(f"{server}/static/supervisor.html?lang=en#approvals")
            expect(office.get_by_test_id("badge-approvals")).to_have_text("1")
            expect(office.get_by_test_id("approval-amount-1")).to_have_text("$5,000.00")
            expect(office.get_by_test_id("approval-1")).to_contain_text("cleo")
            office.get_by_test_id("approve-1").click()
            expect(office.get_by_test_id("approvals-done")).to_have_text(
                "Request 1 approved: $5,000.00 moved."
            )
            expect(office.get_by_test_id("approvals")).to_contain_text("Nothing waits")
            assert balance(server, "tok-ann") == 500_000

            # the cashier's page: approved; the drawer took the credit's cash in
            desk.reload()
            expect(desk.get_by_test_id("request-status-1")).to_have_text("approved")
            expect(desk.get_by_test_id("drawer-expected")).to_have_text("It should hold $5,500.00")
            expect(desk.get_by_test_id("cashier-cleo")).to_contain_text("$5,000.00")
            # counted $10.00 short, closed: the variance
            desk.get_by_test_id("drawer-counted").fill("5490")
            desk.get_by_test_id("drawer-close").click()
            expect(desk.get_by_test_id("drawer-variance")).to_have_text(
                "Drawer closed: counted $5,490.00, expected $5,500.00, variance -$10.00."
            )
            expect(desk.get_by_test_id("cage-drawers")).to_contain_text("-$10.00")
            expect(desk.get_by_test_id("drawer-float")).to_be_visible()
        finally:
            browser.close()
