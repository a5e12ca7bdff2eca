"""The browser tests' fixtures: the kit of :mod:`tests.support.browser` (Chromium driven by
Playwright, an app served on a free port, signing in as the pages' users do), and after each
test the check that no page, request or socket URL held a credential."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.browser import BrowserKit


@pytest.fixture(scope="session")
def browser_kit() -> BrowserKit:
    return BrowserKit()


@pytest.fixture(autouse=True)
def no_token_in_any_url(browser_kit: BrowserKit) -> Iterator[None]:
    """After each browser test: no page, request or socket URL held a credential."""
    browser_kit.urls.clear()
    browser_kit.secrets.clear()
    yield
    browser_kit.check_urls()
