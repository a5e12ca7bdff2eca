"""The dealer console in Chromium at 1280×800 on every kind of table — hybrid version A and
version B, classic (dealt by the card reader, cards typed on the console once a supervisor
allowed entry by hand for the round) and multi-action, and
an automated table — with no console error and no page error: the procedures, the shoe's count,
the tilts and the next instruction on each; a control is enabled only when the round can take
it; the controls an automated table does not take are hidden and the table's automation is said
instead; a refusal shows beside its control.

Players wager through their own sockets (the terminal page has its own tests)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tests.support.browser import screenshot

SCREEN: Any = {"viewport": {"width": 1280, "height": 800}}
# A1 position 1 (ann): 10S 5C; position 2 (bob): 9H 9C; dealer 6D + hole 10H; then 4S 8D
HYBRID_ORDER = "10S 9H 6D 5C 9C 10H 4S 8D"
# C1 (reader): seat 1 (ann) 10S 7H, seat 2 (bob) 9S 8H, dealer 9D + hole 9C
READER_CARDS = ["10S", "9S", "9D", "7H", "8H", "9C"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        for player in ("ann", "bob"):
            await floor.add_player(player, 100_000, f"tok-{player}")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        for table in ("A1", "B1", "C1", "M1", "AUTO"):
            for n in (1, 2):
                terminal = f"{table}-EWT{n}"
                await floor.register_terminal(terminal, table, key=f"key-{terminal}")

    manual: dict[str, Any] = {"automated": False, "require_procedures": False}
    tables = [
        TableConfig(
            "A1", HybridRules(countdown_seconds=60), cards=HYBRID_ORDER, title="Hybrid A", **manual
        ),
        TableConfig(
            "C1",
            ClassicRules(),
            source="reader",
            countdown_seconds=60,
            title="Classic, card reader",
            **manual,
        ),
        TableConfig(
            "M1", MultiActionRules(), countdown_seconds=60, seed=4, title="Multi-action", **manual
        ),
        TableConfig(
            "AUTO",
            HybridRules(countdown_seconds=60),
            wagering_seconds=120,
            between_rounds_seconds=0,
            require_procedures=False,
            title="Hybrid A, automated",
        ),
    ]
    if "hybrid-shared" in GAMES:
        rules = GAMES["hybrid-shared"].rules_class(countdown_seconds=60)
        tables.append(TableConfig("B1", rules, seed=3, title="Hybrid B", **manual))
    db = str(tmp_path_factory.mktemp("console") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


@contextmanager
def player(server: str, who: str, table: str, n: int) -> Iterator[Any]:
    """A player's socket at ``<table>-EWT<n>`` (a hello with his token and the terminal's
    device credential), joined to ``table``; yields a function that sends a message and
    returns its answer."""
    from websockets.sync.client import connect

    terminal = f"{table}-EWT{n}"
    with connect(server.replace("http", "ws") + "/ws") as socket:
        socket.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": 2,
                    "token": f"tok-{who}",
                    "terminal": terminal,
                    "terminal_key": f"key-{terminal}",
                }
            )
        )
        counter = 0

        def request(message: dict[str, Any]) -> dict[str, Any]:
            nonlocal counter
            counter += 1
            sent = f"{terminal}-{counter}"
            socket.send(json.dumps({**message, "id": sent}))
            while True:
                answer = json.loads(socket.recv(timeout=10))
                if answer.get("id") == sent and answer["type"] in ("ack", "error"):
                    return dict(answer)

        request({"type": "join", "table": table})
        yield request


class Watch:
    """Every console message of type error and every uncaught page error of a page."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))


def console(browser: Any, browser_kit: Any, server: str, table: str) -> tuple[Any, Watch]:
    page = browser_kit.context(browser, **SCREEN).new_page()
    watch = Watch(page)
    browser_kit.sign_in(page, server, "tok-dealer")
    page.goto(f"{server}/static/dealer.html?table={table}")
    return page, watch


def common_panels(page: Any) -> None:
    """What every table's console shows: the procedures, the shoe, the tilts, the clock."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("procedures")).to_contain_text("Gaming day")
    expect(page.get_by_test_id("procedures")).to_contain_text("Card reader")
    expect(page.get_by_test_id("no-tilts")).to_be_visible()
    expect(page.get_by_test_id("countdown-panel")).to_be_visible()


def test_the_console_of_a_version_a_table_deals_a_round(server: str, browser_kit: Any) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = console(browser, browser_kit, server, "A1")
            expect(page.get_by_test_id("next")).to_have_text("Open the next round.")
            expect(page.get_by_test_id("automation")).to_be_hidden()
            expect(page.get_by_test_id("card-entry")).to_be_hidden()  # a virtual shoe
            expect(page.get_by_test_id("virtual-note")).to_be_visible()
            common_panels(page)
            expect(page.get_by_test_id("shoe")).to_contain_text("Virtual shoe, 6 decks")
            # only what the round can take is offered: no round, nothing to close or count down
            expect(page.get_by_test_id("close-wagering")).to_be_disabled()
            expect(page.get_by_test_id("countdown-expired")).to_be_disabled()
            page.get_by_test_id("open-round").click()
            expect(page.get_by_test_id("command-error")).to_be_hidden()
            expect(page.get_by_test_id("next")).to_have_text(
                "Wagering is open; close wagering to deal."
            )
            with player(server, "ann", "A1", 1) as ann, player(server, "bob", "A1", 2) as bob:
                ann({"type": "position", "position": 1})
                bob({"type": "position", "position": 2})
                assert ann({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
                assert bob({"type": "wager", "kind": "blackjack", "amount": 2500})["ok"]
                wagers = page.get_by_test_id("wagers")
                expect(wagers).to_contain_text("Blackjack Wager")
                expect(wagers).to_contain_text("$25.00")
                page.get_by_test_id("close-wagering").click()
                expect(
                    page.get_by_test_id("position-1").locator("[data-card='5C']")
                ).to_be_visible()
                expect(page.get_by_test_id("position-2")).to_contain_text("bob $25.00: 18")
                dealer_box = page.get_by_test_id("dealer-box")  # the hole card face down
                expect(dealer_box.locator("[data-card='back']")).to_be_visible()
                expect(dealer_box.locator("[data-card='10H']")).to_have_count(0)
                expect(page.get_by_test_id("next")).to_contain_text("decisions in decision round 1")
                expect(page.get_by_test_id("countdown")).to_have_text(re.compile(r"^\d+$"))
                expect(page.get_by_test_id("shoe")).to_contain_text(
                    "2 cards left of 8 (6 dealt"
                )  # a stacked shoe
                expect(page.get_by_test_id("transcript")).to_contain_text("ann")
                screenshot(page, "console-version-a")
        finally:
            browser.close()
    assert watch.errors == []


@pytest.mark.skipif("hybrid-shared" not in GAMES, reason="no version B engine")
def test_the_console_of_a_version_b_table_shows_the_shared_start(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = console(browser, browser_kit, server, "B1")
            expect(page.get_by_test_id("game")).to_have_text("Hybrid B")
            expect(page.get_by_test_id("next")).to_have_text("Open the next round.")
            common_panels(page)
            expect(page.get_by_test_id("shoe")).to_contain_text("cards left of 312")
            page.get_by_test_id("open-round").click()
            expect(page.get_by_test_id("players")).to_contain_text("No wager yet.")
            with player(server, "ann", "B1", 1) as ann, player(server, "bob", "B1", 2) as bob:
                assert ann({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
                assert bob({"type": "wager", "kind": "blackjack", "amount": 2000})["ok"]
                assert bob({"type": "wager", "kind": "kings_bounty", "amount": 500})["ok"]
                expect(page.get_by_test_id("wagers")).to_contain_text("King's Bounty")
                page.get_by_test_id("close-wagering").click()
                expect(page.get_by_test_id("shared-start").locator(".card")).to_have_count(2)
                expect(page.get_by_test_id("dealer-box").locator(".card")).to_have_count(1)
                expect(page.get_by_test_id("player-ann")).to_contain_text("dealer hand")
                expect(page.get_by_test_id("player-bob")).to_contain_text("$20.00")
                expect(page.get_by_test_id("next")).not_to_have_text("Open the next round.")
                screenshot(page, "console-version-b")
        finally:
            browser.close()
    assert watch.errors == []


def test_the_console_of_a_reader_table_takes_the_cards_the_table_asks_for(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = console(browser, browser_kit, server, "C1")
            expect(page.get_by_test_id("card-entry")).to_be_visible()
            expect(page.get_by_test_id("virtual-note")).to_be_hidden()
            common_panels(page)
            expect(page.get_by_test_id("shoe")).to_contain_text("No shoe loaded")
            for n in range(1, 8):
                expect(page.get_by_test_id(f"position-{n}")).to_contain_text(f"Seat {n}")
            # entry by hand waits for a supervisor (PA 633c.5(j)); nothing to click before
            expect(page.get_by_test_id("manual-note")).to_contain_text("supervisor's approval")
            expect(page.get_by_test_id("card-input")).to_be_hidden()
            expect(page.get_by_test_id("close-wagering")).to_be_disabled()
            page.get_by_test_id("open-round").click()
            expect(page.get_by_test_id("next")).to_contain_text("Wagering is open")
            expect(page.get_by_test_id("open-round")).to_be_disabled()
            with player(server, "ann", "C1", 1) as ann, player(server, "bob", "C1", 2) as bob:
                ann({"type": "position", "position": 1})
                bob({"type": "position", "position": 2})
                assert ann({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
                assert bob({"type": "wager", "kind": "blackjack", "amount": 1500})["ok"]
                page.get_by_test_id("close-wagering").click()
                expect(page.get_by_test_id("next")).to_have_text("Deal a card to seat 1.")
                expect(page.get_by_test_id("card-input")).to_be_hidden()
                allowed = httpx.post(
                    f"{server}/api/tables/C1/manual-entry",
                    json={"reason": "the shoe's reader is being replaced"},
                    headers={"Authorization": "Bearer tok-super"},
                )
                assert allowed.status_code == 200, allowed.text
                expect(page.get_by_test_id("manual-note")).to_contain_text("allowed for this round")
                expect(page.get_by_test_id("card-request")).to_contain_text("seat 1")
                # a code that is no card is refused beside the card box, before anything is sent
                page.get_by_test_id("card-input").fill("ZZ")
                page.get_by_test_id("read-card").click()
                expect(page.get_by_test_id("card-error")).to_contain_text('"ZZ" is not a card code')
                for code in READER_CARDS:
                    page.get_by_test_id("card-input").fill(code)
                    page.get_by_test_id("card-input").press("Enter")
                    layout = page.get_by_test_id("layout")
                    shown = "back" if code == "9C" else code  # the hole card face down
                    expect(layout.locator(f"[data-card='{shown}']").first).to_be_visible()
                expect(page.get_by_test_id("card-error")).to_be_hidden()
                expect(page.get_by_test_id("position-1")).to_contain_text("17")
                expect(page.get_by_test_id("position-2")).to_contain_text("bob · $15.00")
                dealer_box = page.get_by_test_id("dealer-box")  # PA 633c.5(o): not to him either
                expect(dealer_box.locator("[data-card='back']")).to_be_visible()
                expect(dealer_box.locator("[data-card='9C']")).to_have_count(0)
                expect(page.get_by_test_id("next")).to_contain_text("seat 1")
                screenshot(page, "console-classic")
        finally:
            browser.close()
    assert watch.errors == []


def test_the_console_of_a_multi_action_table_shows_the_spots(server: str, browser_kit: Any) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = console(browser, browser_kit, server, "M1")
            common_panels(page)
            page.get_by_test_id("open-round").click()
            expect(page.get_by_test_id("next")).to_contain_text("Wagering is open")
            with player(server, "ann", "M1", 1) as ann:
                ann({"type": "position", "position": 3})
                spots = [1000, 0, 2500]
                assert ann({"type": "wager", "kind": "blackjack", "amount": 3500, "spots": spots})[
                    "ok"
                ]
                expect(page.get_by_test_id("wagers")).to_contain_text("(spot 3)")
                page.get_by_test_id("close-wagering").click()
                seat = page.get_by_test_id("position-3")
                expect(seat).to_contain_text("ann · spots $10.00 / $0.00 / $25.00")
                expect(seat.locator(".card")).to_have_count(2)
                expect(page.get_by_test_id("dealer-box").locator(".card")).to_have_count(1)
                screenshot(page, "console-multi-action")
        finally:
            browser.close()
    assert watch.errors == []


def test_an_automated_tables_console_hides_what_the_server_does_itself(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page, watch = console(browser, browser_kit, server, "AUTO")
            expect(page.get_by_test_id("automation")).to_contain_text(
                "Automated table. The server opens a round 0 s after the last one ends, closes "
                "wagering 120 s after the first wager and runs the 60-second countdown; cards "
                "come from the virtual shoe."
            )
            for control in ("open-round", "close-wagering", "countdown-expired", "card-input"):
                expect(page.get_by_test_id(control)).to_be_hidden()
            expect(page.get_by_test_id("next")).to_have_text(
                "Wagering is open; waiting for the first wager."
            )
            common_panels(page)
            with player(server, "ann", "AUTO", 1) as ann:
                ann({"type": "position", "position": 2})
                assert ann({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
                expect(page.get_by_test_id("next")).to_have_text(
                    "Wagering is open; the server closes it 120 s after the first wager."
                )
                expect(page.get_by_test_id("countdown-what")).to_contain_text("close wagering")
            # the console's table list switches tables in place
            page.get_by_test_id("table-select").select_option("A1")
            expect(page.get_by_test_id("automation")).to_be_hidden()
            expect(page.get_by_test_id("open-round")).to_be_visible()
        finally:
            browser.close()
    assert watch.errors == []
