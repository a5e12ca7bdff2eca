"""Every page of the demo as each person on the floor opens it, in Chromium at 1280×800 and
390×844, in English and in Spanish: the landing page; a player's terminal at every demo table;
the dealer console of every table; the supervisor's, the operator's and the cashier's pages with
each of their tabs. No page throws, no page logs a console error, no request (the pages' icon
included) is refused or missing, no page is wider than the screen, and every staff page's
heading names its role."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.server.app import create_app
from tablejack.server.http.demo import DEMO_STAFF, demo_setup, demo_tables, demo_terminal_key

SCREENS = {"desk": (1280, 800), "phone": (390, 844)}
HEADINGS = {
    "en": {
        "dealer": "Dealer console",
        "supervisor": "Floor supervisor",
        "operator": "Operator — floor settings and terminals",
        "cashier": "Cage — cashier",
    },
    "es": {
        "dealer": "Consola del crupier",
        "supervisor": "Supervisor de sala",
        "operator": "Operador — ajustes de sala y terminales",
        "cashier": "Caja — cajero",
    },
}
PAGES = {
    "dealer": "dealer.html",
    "supervisor": "supervisor.html",
    "operator": "supervisor.html",
    "cashier": "cage.html",
}


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()
    db = str(tmp_path_factory.mktemp("demo-pages") / "floor.db")
    app = create_app(db, tables=demo_tables(), setup=demo_setup, demo=True)
    with browser_kit.serve(app) as url:
        yield url


class Watch:
    """A page's thrown errors, console errors and refused or missing requests. ``signed_out``:
    the one refusal a signed-out page meets — ``GET /api/me`` answers 401, which is how it
    learns that nobody is signed in — is expected."""

    def __init__(self, page: Any, where: str, signed_out: bool = False) -> None:
        self.problems: list[str] = []
        self.where, self.signed_out = where, signed_out
        page.on("console", self.console)
        page.on("pageerror", lambda error: self.problems.append(f"{where}: page error: {error}"))
        page.on("response", self.response)
        self.pending: set[Any] = set()
        self.last = time.monotonic()
        page.on("request", self.started)
        page.on("requestfinished", self.ended)
        page.on("requestfailed", self.ended)

    def started(self, request: Any) -> None:
        self.pending.add(request)
        self.last = time.monotonic()

    def ended(self, request: Any) -> None:
        self.pending.discard(request)
        self.last = time.monotonic()

    def settle(self, page: Any, quiet: float = 0.3, limit: float = 15.0) -> None:
        """Wait until every request the page made has been answered and none has started for
        ``quiet`` seconds (what the page asks for after a frame or a click is then in the
        watch), ``limit`` seconds at most."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if not self.pending and time.monotonic() - self.last >= quiet:
                return
            page.wait_for_timeout(50)

    def expected(self, status: int, url: str) -> bool:
        return self.signed_out and status == 401 and url.endswith("/api/me")

    def console(self, message: Any) -> None:
        if message.type != "error":
            return
        url = (message.location or {}).get("url", "")
        if self.expected(401, url) and "status of 401" in message.text:
            return
        self.problems.append(f"{self.where}: console: {message.text} ({url})")

    def response(self, answer: Any) -> None:
        if answer.status >= 400 and not self.expected(answer.status, answer.url):
            self.problems.append(f"{self.where}: {answer.status} {answer.url}")


WIDE = """() => document.documentElement.scrollWidth <= innerWidth + 1 ? null
  : [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
      .slice(0, 4).map((e) => `${e.tagName}#${e.id} ${Math.round(e.getBoundingClientRect().right)}`)"""
"""The elements that reach beyond the screen's right edge, or null when the page fits."""


def wide(page: Any) -> Any:
    """What reaches beyond the screen once any card or meter animation has ended (a card
    dealt turns as it lands, a win's meter swells, for a fraction of a second)."""
    if page.evaluate(WIDE) is None:
        return None
    page.wait_for_timeout(1200)
    return page.evaluate(WIDE)


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_demo_page_opens_for_every_role_without_an_error(
    demo_server: str, browser_kit: Any, screen: str, lang: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    width, height = SCREENS[screen]
    viewport = {"viewport": {"width": width, "height": height}}
    problems: list[str] = []
    tables = [table.id for table in demo_tables()]
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            # the landing page, signed out
            page = browser_kit.context(browser, **viewport).new_page()
            watch = Watch(page, "landing", signed_out=True)
            page.goto(f"{demo_server}/?lang={lang}")
            expect(page.get_by_role("heading", level=1)).to_be_visible()
            expect(page.get_by_test_id(f"dealer-{tables[0]}")).to_be_visible()
            if beyond := wide(page):
                problems.append(f"landing: wider than the screen: {beyond}")
            problems += watch.problems

            # a player at every table
            for table in tables:
                terminal = f"{table}-EWT1"
                page = browser_kit.context(browser, **viewport).new_page()
                watch = Watch(page, f"terminal {table}")
                browser_kit.sign_in(
                    page, demo_server, "demo-ann", terminal, demo_terminal_key(terminal)
                )
                page.goto(f"{demo_server}/static/terminal.html?lang={lang}")
                expect(page.get_by_test_id("balance")).to_contain_text("$")
                expect(page.get_by_test_id("status")).not_to_be_empty()
                watch.settle(page)  # what the page asked for after the table's frames
                problems += watch.problems
                if beyond := wide(page):
                    problems.append(f"terminal {table}: wider than the screen: {beyond}")
                page.context.close()

            # each staff role on its own page; the dealer at every table
            for role, page_name in PAGES.items():
                page = browser_kit.context(browser, **viewport).new_page()
                watch = Watch(page, role)
                browser_kit.sign_in(page, demo_server, DEMO_STAFF[role][1])
                for table in tables if role == "dealer" else [""]:
                    query = f"?lang={lang}" + (f"&table={table}" if table else "")
                    page.goto(f"{demo_server}/static/{page_name}{query}")
                    expect(page.get_by_role("heading", level=1)).to_have_text(HEADINGS[lang][role])
                    if role == "dealer":
                        expect(page.get_by_test_id("next")).not_to_be_empty()
                    for tab in page.locator("[data-tab]:visible").all():
                        tab.click()
                        expect(tab).to_have_attribute("aria-selected", "true")
                    watch.settle(page)  # what each tab asked for
                    if beyond := wide(page):
                        problems.append(f"{role} {table}: wider than the screen: {beyond}")
                problems += watch.problems
                page.context.close()
        finally:
            browser.close()
    assert problems == [], problems


def test_the_pages_icon_is_served_to_the_landing_page(demo_server: str, browser_kit: Any) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser).new_page()
            answer = page.request.get(f"{demo_server}/favicon.ico")
            assert answer.status == 200
            assert answer.headers["content-type"].startswith("image/svg+xml")
        finally:
            browser.close()
