"""``/docs`` in Chromium with every address but the server's own cut off (a floor's closed
network): Swagger UI draws the API from the server's own files."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.table import TableConfig


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()
    table = TableConfig("A1", HybridRules(), automated=False, require_procedures=False)
    db = str(tmp_path_factory.mktemp("docs") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[table])) as url:
        yield url


def test_docs_draws_the_api_with_no_network_but_the_servers(server: str, browser_kit: Any) -> None:
    from playwright.sync_api import expect, sync_playwright

    own = urlsplit(server).netloc
    elsewhere: list[str] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page = browser_kit.context(browser, viewport={"width": 1280, "height": 800}).new_page()

            def only_here(route: Any) -> None:
                if urlsplit(route.request.url).netloc == own:
                    route.continue_()
                else:
                    elsewhere.append(route.request.url)
                    route.abort()

            page.route("**/*", only_here)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(f"{server}/docs")
            # Swagger UI draws the whole API document: give it time on a loaded machine
            expect(page.locator(".swagger-ui .title")).to_contain_text(
                "tablejack table server", timeout=30_000
            )
            expect(page.locator(".opblock-summary-path").first).to_be_visible()
            expect(page.get_by_text("/api/protocol", exact=True)).to_be_visible()
        finally:
            browser.close()
    assert elsewhere == []
    assert errors == []
