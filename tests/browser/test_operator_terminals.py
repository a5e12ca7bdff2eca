"""The operator's terminals and the settings' audit in Chromium (PA 605a.4(d)): a terminal
registered from the page at a seat of a classic table, its key shown once with a copy button;
re-keyed (a new key shown once, the old one refused at once); moved to a version A table, where
the player selects the position; retired after a confirmation (no key left). Then the hand-pay
limit set to $500.00 and read back in the settings' history: who, when in the floor's time zone,
the setting by its name, before and after in dollars — in English and in Spanish; the
supervisor reads the same history under the audit and manages no terminal."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tests.support.browser import screenshot

from .test_supervisor import SCREEN, Watch


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.issue_token("operator", "olga", "tok-operator")
        await floor.issue_token("supervisor", "sam", "tok-super")

    tables = [
        TableConfig("A1", HybridRules(countdown_seconds=60), automated=False),
        TableConfig("C1", ClassicRules(), automated=False, require_procedures=False),
    ]
    db = str(tmp_path_factory.mktemp("terminals") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


def enrols(server: str, terminal: str, key: str) -> int:
    """The status of enrolling a browser as ``terminal`` with ``key``."""
    request = urllib.request.Request(
        f"{server}/api/terminal/enrol",
        data=json.dumps({"terminal": terminal, "terminal_key": key}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)


def test_605a4d_the_operator_registers_rekeys_moves_and_retires_a_terminal_and_reads_the_audit(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(
                browser, permissions=["clipboard-read", "clipboard-write"], **SCREEN
            )
            page = context.new_page()
            watch = Watch(page)
            browser_kit.sign_in(page, server, "tok-operator")
            page.goto(f"{server}/static/supervisor.html#tilts")
            by = page.get_by_test_id
            expect(by("tab-tilts")).to_contain_text("Terminals")
            # register C1-EWT9 at seat 3 of the classic table: its key shown once
            by("register-id").fill("C1-EWT9")
            by("register-table").select_option("C1")
            expect(by("register-position")).to_contain_text("seat 7")
            by("register-position").select_option("3")
            by("register-submit").click()
            expect(by("new-key")).to_be_visible()
            expect(by("new-key-title")).to_have_text(
                "The new key of terminal C1-EWT9 — shown this once"
            )
            first = by("new-key-secret").inner_text()
            screenshot(page, "operator-terminals")
            assert first.startswith("tj_")
            browser_kit.secret(first)
            by("new-key-copy").click()
            expect(by("new-key-copied")).not_to_have_text("")
            expect(by("terminal-table-C1-EWT9")).to_have_text("C1")
            expect(by("terminal-position-C1-EWT9")).to_have_text("3")
            expect(by("terminal-key-C1-EWT9")).to_contain_text("issued")
            by("new-key-done").click()
            expect(by("new-key")).to_be_hidden()
            assert first not in page.content()  # gone from the page once hidden
            assert enrols(server, "C1-EWT9", first) == 200
            # registering it again is refused beside the form, in words
            by("register-id").fill("C1-EWT9")
            by("register-submit").click()
            expect(by("register-error")).to_have_text(
                "Terminal C1-EWT9 is already registered: move it, or give it a new key, in its row."
            )
            # re-key: a confirmation, then the new key shown once; the old one stops working
            by("rekey-C1-EWT9").click()
            expect(by("terminal-C1-EWT9-error").locator("..")).to_contain_text(
                "Its old key stops working at once"
            )
            by("rekey-C1-EWT9-submit").click()
            expect(by("new-key-warning")).to_contain_text("its old key no longer works")
            second = by("new-key-secret").inner_text()
            browser_kit.secret(second)
            assert second.startswith("tj_") and second != first
            assert enrols(server, "C1-EWT9", first) in (401, 403)
            assert enrols(server, "C1-EWT9", second) == 200
            by("new-key-done").click()
            # move to the version A table: the player selects the position there
            by("move-C1-EWT9").click()
            by("move-table-C1-EWT9").select_option("A1")
            expect(by("move-position-C1-EWT9")).to_have_text("the player selects")
            by("move-C1-EWT9-submit").click()
            expect(by("terminal-table-C1-EWT9")).to_have_text("A1")
            expect(by("terminal-position-C1-EWT9")).to_have_text("selects")
            expect(by("new-key")).to_be_hidden()  # a move issues no key
            # retire, after a confirmation: no key left
            by("retire-C1-EWT9").click()
            expect(by("retire-C1-EWT9-submit")).to_have_text("Yes, retire it")
            by("retire-C1-EWT9-submit").click()
            expect(by("terminal-status-C1-EWT9")).to_have_text("retired")
            expect(by("terminal-key-C1-EWT9")).to_have_text("no key")
            assert enrols(server, "C1-EWT9", second) in (401, 403)
            # the settings: the hand-pay limit set to $500.00, then read in the history
            by("tab-settings").click()
            by("setting-input-handpay_limit").fill("500.00")
            by("setting-save-handpay_limit").click()
            expect(by("setting-value-handpay_limit")).to_have_text("$500.00")
            expect(by("history-zone")).to_have_text("times in UTC")
            expect(by("history-before-0")).to_have_text("$1,200.00 (the default)")
            expect(by("history-after-0")).to_have_text("$500.00")
            row = by("history-0")
            by("setting-history").scroll_into_view_if_needed()
            screenshot(page, "operator-settings-history")
            expect(row).to_contain_text("olga")
            expect(row).to_contain_text("UTC")
            assert "50000" not in by("setting-history").inner_text()
            # in Spanish: the same history and the terminals' words from the catalog
            page.get_by_test_id("language").select_option("es")
            expect(by("history-zone")).to_have_text("horas en UTC")
            expect(by("history-before-0")).to_have_text("$1,200.00 (el valor por defecto)")
            by("tab-tilts").click()
            expect(by("terminal-key-C1-EWT9")).to_have_text("sin clave")
            by("register-id").fill("C1-EWT9")
            by("register-submit").click()
            expect(by("register-error")).to_contain_text("ya está registrado")
            # the supervisor reads the same history under the audit, and registers nothing
            other = browser_kit.context(browser, **SCREEN).new_page()
            watch_other = Watch(other)
            browser_kit.sign_in(other, server, "tok-super")
            other.goto(f"{server}/static/supervisor.html?lang=en#audit")
            history = other.get_by_test_id("audit-setting-history")
            expect(history).to_contain_text("$1,200.00 (the default)")
            expect(history).to_contain_text("$500.00")
            expect(history).to_contain_text("olga")
            other.get_by_test_id("tab-tilts").click()
            expect(other.get_by_test_id("terminal-row-C1-EWT9")).to_be_visible()
            expect(other.get_by_test_id("register-form")).to_be_hidden()
            expect(other.get_by_test_id("retire-C1-EWT9")).to_have_count(0)
        finally:
            browser.close()
    watch.check()
    watch_other.check()
