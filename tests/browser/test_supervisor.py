"""The supervisor page in Chromium at 1280×800: the tilts and terminals panel (a terminal locked
and unlocked with a clear code, a table tilt cleared), the licence count of the registered
terminals, an unknown round recalled ("No such round"), each refusal beside the action that
caused it, meters under readable names, the audit log with its column headers, and the page
of a cashier and of the operator (only what their role reads, no request refused). No page
error, and no console error but the refusals a test asks for."""

from __future__ import annotations

import json
import re
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

SCREEN: Any = {"viewport": {"width": 1280, "height": 800}}
REFUSED = re.compile(r"^Failed to load resource: the server responded with a status of (\d+)")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.issue_token("cashier", "cleo", "tok-cashier")
        await floor.issue_token("operator", "olga", "tok-operator")
        for terminal, table, position in (
            ("EWT-1", "A1", None),
            ("EWT-2", "A1", None),
            ("EWT-3", "C1", 1),
            ("EWT-4", "C1", 2),
        ):
            await floor.register_terminal(terminal, table, position=position, key=f"key-{terminal}")

    manual: dict[str, Any] = {"automated": False, "require_procedures": False}
    tables = [
        TableConfig("A1", HybridRules(countdown_seconds=60), title="Hybrid A", **manual),
        TableConfig("C1", ClassicRules(), countdown_seconds=60, title="Classic", **manual),
    ]
    db = str(tmp_path_factory.mktemp("supervisor") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


def call(server: str, method: str, path: str, token: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        f"{server}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def wager(server: str, who: str, terminal: str, table: str, amount: int) -> dict[str, Any]:
    """A Blackjack wager from ``who``'s socket at ``terminal`` (its hello proves the terminal
    with its device credential); the answer."""
    from websockets.sync.client import connect

    with connect(server.replace("http", "ws") + "/ws") as socket:
        hello = {"type": "hello", "protocol": 2, "token": f"tok-{who}", "terminal": terminal}
        socket.send(json.dumps({**hello, "terminal_key": f"key-{terminal}"}))
        socket.send(json.dumps({"type": "join", "table": table, "id": "j"}))
        socket.send(json.dumps({"type": "wager", "kind": "blackjack", "amount": amount, "id": "w"}))
        while True:
            answer = json.loads(socket.recv(timeout=10))
            if answer.get("id") == "w" and answer["type"] in ("ack", "error"):
                return dict(answer)


class Watch:
    """The console errors and page errors of a page; :meth:`check` allows only the refusals
    (HTTP statuses) a test caused on purpose."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def check(self, *allowed: int) -> None:
        for error in self.errors:
            refused = REFUSED.match(error)
            assert refused is not None and int(refused.group(1)) in allowed, self.errors


def signed_in(browser: Any, browser_kit: Any, server: str, token: str, tab: str = "") -> Any:
    page = browser_kit.context(browser, **SCREEN).new_page()
    watch = Watch(page)
    browser_kit.sign_in(page, server, token)
    page.goto(f"{server}/static/supervisor.html{tab}")
    return page, watch


def near(page: Any, first: str, second: str, pixels: float = 120) -> bool:
    """Whether two elements (by test id) are within ``pixels`` of each other vertically (asked
    again for a few seconds: the page redraws its parts every few seconds)."""
    for _ in range(30):
        one = page.get_by_test_id(first).bounding_box()
        two = page.get_by_test_id(second).bounding_box()
        if one and two and abs(two["y"] - (one["y"] + one["height"])) < pixels:
            return True
        page.wait_for_timeout(100)
    return False


def test_605a_a_supervisor_locks_and_unlocks_a_terminal_and_clears_a_table_tilt(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = signed_in(browser, browser_kit, server, "tok-super", "#tilts")
            expect(page.get_by_test_id("no-tilts")).to_have_text(
                "No open tilt: every table and terminal plays."
            )
            expect(page.get_by_test_id("terminal-count")).to_have_text("— 4 active terminals")
            row = page.get_by_test_id("terminal-row-EWT-3")
            for text in ("EWT-3", "C1", "1", "active", "offline", "none"):
                expect(row).to_contain_text(text)
            expect(page.get_by_test_id("terminal-row-EWT-1")).to_contain_text("selects")

            # lock EWT-1 with a tilt code and a reason: no code is chosen for the supervisor
            page.get_by_test_id("lock-EWT-1").click()
            expect(page.get_by_test_id("lock-code-EWT-1")).to_have_value("")
            page.get_by_test_id("lock-EWT-1-reason").fill("cabinet door ajar")
            page.get_by_test_id("lock-EWT-1-submit").click()
            expect(page.get_by_test_id("terminal-EWT-1-error")).to_have_text(
                "Choose the reason from the list first: none is chosen for you."
            )
            assert "EWT-1" not in call(server, "GET", "/api/floor/tilts", "tok-super")
            page.get_by_test_id("lock-code-EWT-1").select_option("door_open")
            page.get_by_test_id("lock-EWT-1-reason").fill("cabinet door ajar")
            page.get_by_test_id("lock-EWT-1-submit").click()
            expect(page.get_by_test_id("terminal-tilts-EWT-1")).to_have_text(
                "Door open: cabinet door ajar"
            )
            expect(page.get_by_test_id("tilt-terminal-EWT-1")).to_contain_text("sam")
            expect(page.get_by_test_id("badge-tilts")).to_have_text("1")
            assert "EWT-1" in call(server, "GET", "/api/floor/tilts", "tok-super")

            # unlock: a clear without a reason is refused beside the clear, then cleared
            page.get_by_test_id("unlock-EWT-1").click()
            page.get_by_test_id("unlock-code-EWT-1").select_option("checked_no_fault")
            page.get_by_test_id("unlock-EWT-1-submit").click()
            error = page.get_by_test_id("terminal-EWT-1-error")
            expect(error).to_have_text("Give the reason for the clear: what was found and done.")
            assert near(page, "unlock-EWT-1-submit", "terminal-EWT-1-error")
            expect(page.get_by_test_id("terminal-tilts-EWT-1")).to_contain_text("Door open")
            page.get_by_test_id("unlock-EWT-1-reason").fill("door closed and checked")
            page.get_by_test_id("unlock-EWT-1-submit").click()
            expect(page.get_by_test_id("terminal-tilts-EWT-1")).to_have_text("none")
            expect(page.get_by_test_id("terminal-EWT-1-error")).to_have_count(0)
            expect(page.get_by_test_id("badge-tilts")).to_have_text("")
            assert call(server, "GET", "/api/floor/tilts", "tok-super") == {}

            # a table tilt raised at the console is listed, and cleared with a clear code
            call(
                server,
                "POST",
                "/api/tables/C1/tilt",
                "tok-dealer",
                {"code": "reader_fault", "reason": "reader jammed"},
            )
            expect(page.get_by_test_id("tilt-table-C1")).to_contain_text("Card reader fault")
            expect(page.get_by_test_id("badge-tilts")).to_have_text("1")
            page.get_by_test_id("clear-table-C1").click()
            page.get_by_test_id("clear-table-code-C1").select_option("fault_repaired")
            page.get_by_test_id("clear-table-C1-reason").fill("reader cleaned")
            page.get_by_test_id("clear-table-C1-submit").click()
            expect(page.get_by_test_id("no-tilts")).to_be_visible()
            assert call(server, "GET", "/api/tables/C1/tilts", "tok-super")["tilts"] == []
            screenshot(page, "supervisor-tilts")
        finally:
            browser.close()
    watch.check(409)


def test_the_supervisor_page_shows_refusals_beside_their_action(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = signed_in(browser, browser_kit, server, "tok-super")
            # an unknown round: said beside the Recall button
            page.get_by_test_id("tab-recall").click()
            page.get_by_test_id("round-id").fill("A1-999999")
            page.get_by_test_id("recall").click()
            expect(page.get_by_test_id("recall-error")).to_have_text("No such round: A1-999999.")
            assert near(page, "recall", "recall-error")
            expect(page.get_by_test_id("recall-out")).to_be_empty()
            page.get_by_test_id("terminal-id").fill("EWT-9")
            page.get_by_test_id("terminal-rounds").click()
            expect(page.get_by_test_id("terminal-rounds-error")).to_contain_text(
                "Terminal EWT-9 has no round to recall"
            )
            # a table action the table refuses: under that table's row, not at the page's end
            page.get_by_test_id("tab-tables").click()
            call(server, "POST", "/api/tables/A1/dealer", "tok-dealer", {"command": "open-round"})
            page.get_by_test_id("void-A1").click()
            page.get_by_test_id("void-A1-reason").fill("a test")
            page.get_by_test_id("void-A1-submit").click()
            expect(page.get_by_test_id("table-A1-error")).to_have_count(0)  # voided
            expect(page.get_by_test_id("void-A1")).to_be_disabled()  # no round in progress now
            page.get_by_test_id("decks-A1").click()
            page.get_by_test_id("decks-A1-submit").click()  # no dealer named
            expect(page.get_by_test_id("table-A1-error")).to_have_text(
                "Name the dealer who inspected the decks (PA 633c.5(i))."
            )
            assert near(page, "decks-A1-submit", "table-A1-error")
            page.get_by_test_id("decks-dealer-A1").fill("dana")
            page.get_by_test_id("decks-A1-submit").click()
            expect(page.get_by_test_id("table-A1-error")).to_have_count(0)
            procedures = call(server, "GET", "/api/tables/A1/procedures", "tok-super")
            last = procedures["history"][-1]
            assert (last["kind"], last["dealer"], last["verified_by"]) == (
                "deck_inspection",
                "dana",
                "sam",
            )
            expect(page.get_by_test_id("table-row-C1")).to_contain_text("Classic")
            screenshot(page, "supervisor-tables")
        finally:
            browser.close()
    watch.check(404)


def test_605a_everything_waiting_for_a_supervisor_is_in_one_list_with_a_way_to_it(
    server: str, browser_kit: Any
) -> None:
    """A table tilted and a terminal locked: the "Waiting for you" tab lists both, in words,
    beside the money that waits for a second person, and each row's button opens the form
    that ends it; cleared, the list is empty."""
    from playwright.sync_api import expect, sync_playwright

    call(server, "POST", "/api/tables/A1/tilt", "tok-dealer", {"code": "other", "reason": "spill"})
    body = {"code": "printer", "reason": "out of paper"}
    call(server, "POST", "/api/floor/terminals/EWT-2/tilt", "tok-super", body)
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = signed_in(browser, browser_kit, server, "tok-super", "#approvals")
            table = page.get_by_test_id("queue-table-A1")
            expect(table).to_contain_text("Table A1")
            expect(table).to_contain_text("a supervisor to clear the tilt «Other»")
            terminal = page.get_by_test_id("queue-terminal-EWT-2")
            expect(terminal).to_contain_text("Terminal EWT-2")
            expect(terminal).to_contain_text("Printer (out of paper)")
            expect(page.get_by_test_id("badge-approvals")).to_have_text("2")
            page.get_by_test_id("queue-terminal-EWT-2-go").click()
            page.get_by_test_id("clear-terminal-code-EWT-2").select_option("replaced")
            page.get_by_test_id("clear-terminal-EWT-2-reason").fill("paper loaded")
            page.get_by_test_id("clear-terminal-EWT-2-submit").click()
            expect(page.get_by_test_id("tilt-terminal-EWT-2")).to_have_count(0)
            page.get_by_test_id("tab-approvals").click()
            page.get_by_test_id("queue-table-A1-go").click()
            page.get_by_test_id("clear-table-code-A1").select_option("fault_repaired")
            page.get_by_test_id("clear-table-A1-reason").fill("table wiped")
            page.get_by_test_id("clear-table-A1-submit").click()
            expect(page.get_by_test_id("tilt-table-A1")).to_have_count(0)
            page.get_by_test_id("tab-approvals").click()
            expect(page.get_by_test_id("queue-empty")).to_have_text(
                "No table or terminal waits for a supervisor."
            )
        finally:
            browser.close()
    watch.check()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    """A floor with one live dealer's table, C1, whose cards the card-reading shoe reads."""
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ann", 100_000, "tok-ann")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        await floor.register_terminal("EWT-3", "C1", position=1, key="key-EWT-3")

    live = TableConfig(
        "C1",
        ClassicRules(),
        source="reader",
        automated=False,
        require_procedures=False,
        countdown_seconds=60,
        title="Live",
    )
    db = str(tmp_path_factory.mktemp("live") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[live], setup=setup)) as url:
        yield url


def test_633a14_the_supervisor_corrects_a_wrong_card_and_voids_a_misdeal_from_the_page(
    live_server: str, browser_kit: Any
) -> None:
    """The live dealer typed 6D for a card that was 7D: the supervisor corrects it from the
    table's row (a card and what was seen; a blank form refused beside it), then voids the
    round as a misdeal; both are in the round's record."""
    from playwright.sync_api import expect, sync_playwright

    def dealer(**body: Any) -> Any:
        return call(live_server, "POST", "/api/tables/C1/dealer", "tok-dealer", body)

    dealer(command="open-round")
    assert wager(live_server, "ann", "EWT-3", "C1", 1000)["type"] == "ack"
    dealer(command="close-wagering")
    call(live_server, "POST", "/api/tables/C1/manual-entry", "tok-super", {"reason": "reader down"})
    for card in ("10S", "5H", "6D"):
        dealer(command="card", card=card)
    round_id = call(live_server, "GET", "/api/tables/C1/state", "tok-super")["round_id"]
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = signed_in(browser, browser_kit, live_server, "tok-super")
            page.get_by_test_id("correct-C1").click()
            page.get_by_test_id("correct-C1-submit").click()  # no card, no reason: refused here
            expect(page.get_by_test_id("table-C1-error")).to_have_text(
                "Give the card (such as 7D) and what was seen."
            )
            page.get_by_test_id("correct-C1-code").fill("7d")
            page.get_by_test_id("correct-C1-reason").fill("the card was the seven of diamonds")
            page.get_by_test_id("correct-C1-submit").click()
            expect(page.get_by_test_id("table-C1-error")).to_have_count(0)
            recall = call(live_server, "GET", f"/api/rounds/{round_id}", "tok-super")
            assert [(c["was"], c["code"]) for c in recall["corrections"]] == [("6D", "7D")]
            page.get_by_test_id("void-C1").click()
            page.get_by_test_id("void-C1-reason").fill("the hole card was exposed")
            page.get_by_test_id("void-C1-misdeal").check()
            page.get_by_test_id("void-C1-submit").click()
            expect(page.get_by_test_id("void-C1")).to_be_disabled()  # no round in progress now
            recall = call(live_server, "GET", f"/api/rounds/{round_id}", "tok-super")
            [voided] = [e for e in recall["events"] if e["kind"] == "void"]
            assert voided["payload"]["misdeal"] is True
        finally:
            browser.close()
    watch.check()


def test_the_licence_count_meters_and_audit_read_as_a_floor_reads_them(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = signed_in(browser, browser_kit, server, "tok-super", "#floor")
            expect(page.get_by_test_id("license")).to_have_text(
                "1 table for 4 active EWTs (a partial group of five counts as a table)"
            )
            expect(page.get_by_test_id("license-tables")).to_contain_text("C1")
            call(
                server,
                "POST",
                "/api/floor/terminals",
                "tok-operator",
                {"terminal": "EWT-4", "table": "C1", "status": "retired"},
            )
            for n in (5, 6, 7):
                call(
                    server,
                    "POST",
                    "/api/floor/terminals",
                    "tok-operator",
                    {"terminal": f"EWT-{n}", "table": "A1"},
                )
            expect(page.get_by_test_id("license")).to_have_text(
                "2 tables for 6 active EWTs (a partial group of five counts as a table)"
            )
            expect(page.get_by_test_id("software-hash")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))

            # a wager at C1: the meters name it and their columns in words
            call(server, "POST", "/api/tables/C1/dealer", "tok-dealer", {"command": "open-round"})
            assert wager(server, "ann", "EWT-3", "C1", 1500)["ok"]
            page.get_by_test_id("tab-meters").click()
            meters = page.get_by_test_id("meters")
            expect(meters).to_contain_text("Blackjack Wager")
            expect(meters).to_contain_text("$15.00")
            expect(meters).not_to_contain_text("blackjack")
            ewt = page.get_by_test_id("ewt-meters")
            for label in ("Coin in", "Coin out", "Vouchers out", "Games played", "Hold %"):
                expect(ewt).to_contain_text(label)
            expect(ewt).not_to_contain_text("coin_in")
            expect(ewt.locator("tr", has_text="Floor")).to_contain_text("$15.00")

            page.get_by_test_id("tab-audit").click()
            audit = page.get_by_test_id("audit")
            for header in ("Time (UTC)", "Table", "Actor", "Terminal", "Kind", "Rule", "Message"):
                expect(audit.locator("th", has_text=header).first).to_be_visible()
            expect(audit).to_contain_text("EWT-4 retired at table C1")
            screenshot(page, "supervisor-audit")
        finally:
            browser.close()
    watch.check()


@pytest.mark.parametrize(
    ("token", "tabs", "absent"),
    [
        (
            "tok-cashier",
            ["tab-tables"],
            ["tab-tilts", "tab-recall", "tab-meters", "tab-floor", "tab-audit", "verify-log"],
        ),
        (
            "tok-operator",
            ["tab-tables", "tab-tilts", "tab-floor"],
            ["tab-recall", "tab-meters", "tab-audit"],
        ),
    ],
)
def test_the_page_of_a_cashier_or_the_operator_shows_what_the_role_reads(
    server: str, browser_kit: Any, token: str, tabs: list[str], absent: list[str]
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = signed_in(browser, browser_kit, server, token)
            expect(page.get_by_test_id("tables")).to_contain_text("A1 — Hybrid A")
            expect(page.get_by_test_id("role-note")).to_contain_text(
                "the parts of the floor your role may read"
            )
            expect(page.get_by_test_id("void-A1")).to_have_count(0)  # the supervisor's controls
            for tab in tabs:
                expect(page.get_by_test_id(tab)).to_be_visible()
            for tab in absent:
                expect(page.get_by_test_id(tab)).to_be_hidden()
            if "tab-tilts" in tabs:
                page.get_by_test_id("tab-tilts").click()
                expect(page.get_by_test_id("tab-tilts")).to_have_text("Terminals")
                expect(page.get_by_test_id("no-tilts")).to_be_hidden()
                expect(page.get_by_test_id("terminal-row-EWT-1")).to_contain_text("A1")
                expect(page.get_by_test_id("terminal-tilts-EWT-1")).to_have_text("—")
                expect(page.get_by_test_id("lock-EWT-1")).to_have_count(0)
                page.get_by_test_id("tab-floor").click()
                expect(page.get_by_test_id("license")).to_contain_text("active EWT")
                page.get_by_test_id("verify-log").click()
                expect(page.get_by_test_id("verified")).to_have_text("log verified")
            page.wait_for_timeout(4500)  # a refresh of the page: still nothing refused
        finally:
            browser.close()
    watch.check()
