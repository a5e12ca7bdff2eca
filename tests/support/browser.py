"""What every browser test needs: Debian's Chromium driven by Playwright, an app served by
uvicorn in a thread on a free port, and signing in as the pages' users do (:class:`BrowserKit`,
the ``browser_kit`` fixture of ``tests/browser/conftest.py``); :func:`screenshot` saves the
pictures of the documentation when ``$TABLEJACK_SCREENSHOTS`` names a folder.

No test puts a credential in a URL: a browser context (one cookie jar, one identity) signs in
with the pages' own forms (:meth:`BrowserKit.sign_in_with_forms`) or, where the test is not
about signing in, with the requests those forms make (:meth:`BrowserKit.sign_in`). Every URL a
context made by :meth:`BrowserKit.context` shows or asks for is recorded, and after each test
none may hold a token (``token=``) or any secret a test signed in with."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.support.serve import free_port

__all__ = ["SCREENSHOTS", "BrowserKit", "screenshot"]

SCREENSHOTS = "TABLEJACK_SCREENSHOTS"
"""The environment variable naming a folder the browser tests save their pictures in
(``docs/screens/make.py`` sets it); unset, they save none."""


def screenshot(page: Any, name: str) -> None:
    """Save a picture of a Playwright ``page`` as ``<name>.png`` in the folder
    ``$TABLEJACK_SCREENSHOTS`` names (nothing when it is unset)."""
    folder = os.environ.get(SCREENSHOTS)
    if folder:
        page.wait_for_timeout(600)  # the cards dealt last have landed
        page.screenshot(path=os.path.join(folder, f"{name}.png"))


class BrowserKit:
    """The browser to launch, a way to serve an app for it, and signing in."""

    chromium = os.environ.get("TABLEJACK_CHROMIUM", "/usr/bin/chromium")
    args = (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    )

    def __init__(self) -> None:
        self.urls: list[str] = []
        """Every URL the contexts of the current test showed or asked for."""
        self.secrets: set[str] = set()
        """The tokens and terminal credentials the current test signed in with."""

    def missing(self) -> str | None:
        """Why the browser tests cannot run here, or None."""
        if not (Path(self.chromium).exists() or shutil.which(self.chromium)):
            return f"Chromium not found at {self.chromium}"
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError as error:
            return f"playwright is not installed: {error}"
        return None

    def require(self) -> None:
        """Skip the test when the browser is missing, with the reason; under CI=true fail."""
        reason = self.missing()
        if reason is not None:
            if os.environ.get("CI") == "true":
                pytest.fail(f"CI requires the browser tests: {reason}")
            pytest.skip(reason)

    def launch(self, playwright: Any) -> Any:
        """Chromium, headless, from its Debian path (never a downloaded browser)."""
        return playwright.chromium.launch(executable_path=self.chromium, args=list(self.args))

    def context(self, browser: Any, **options: Any) -> Any:
        """A new browser context — its own cookie jar, so its own identity — whose every page
        URL, request URL and WebSocket URL is recorded for :meth:`check_urls`."""
        context = browser.new_context(**options)
        context.on("request", lambda request: self.urls.append(request.url))
        context.on("page", self._watch)
        return context

    def _watch(self, page: Any) -> None:
        page.on("framenavigated", lambda frame: self.urls.append(frame.url))
        page.on("websocket", lambda socket: self.urls.append(socket.url))

    def secret(self, *secrets: str) -> None:
        """Secrets no URL may show (besides those :meth:`sign_in` learns)."""
        self.secrets.update(secrets)

    def sign_in(
        self,
        page: Any,
        server: str,
        token: str,
        terminal: str | None = None,
        key: str | None = None,
    ) -> None:
        """Sign ``page``'s browser context in as the forms do, without the forms: a player's
        browser is first enrolled as ``terminal`` (its device credential ``key``,
        ``POST /api/terminal/enrol``), then ``POST /api/session`` with the token in the body.
        The context's requests share its cookie jar, so its pages are then signed in."""
        self.secret(token, *(k for k in (key,) if k))
        request = page.context.request
        if terminal is not None:
            enrolled = request.post(
                f"{server}/api/terminal/enrol", data={"terminal": terminal, "terminal_key": key}
            )
            assert enrolled.ok, enrolled.text()
        session = request.post(f"{server}/api/session", data={"token": token})
        assert session.ok, session.text()

    def sign_in_with_forms(
        self, page: Any, token: str, terminal: str | None = None, key: str | None = None
    ) -> None:
        """Sign in with the sign-in form the page shows: on the terminal page of a browser that
        is not yet a terminal, enrol it as ``terminal`` with ``key`` first."""
        self.secret(token, *(k for k in (key,) if k))
        if terminal is not None:
            page.get_by_test_id("enrol-terminal").fill(terminal)
            page.get_by_test_id("enrol-key").fill(key or "")
            page.get_by_test_id("enrol-submit").click()
        page.get_by_test_id("signin-token").fill(token)
        page.get_by_test_id("signin-submit").click()

    def check_urls(self) -> None:
        """No URL recorded holds a token parameter or a secret the test signed in with."""
        for url in self.urls:
            names = {name.lower() for name, _ in parse_qsl(urlsplit(url).query)}
            assert "token" not in names and "token=" not in url.lower(), url
            for secret in self.secrets:
                assert secret not in url, (secret, url)

    @contextlib.contextmanager
    def serve(self, app: Any) -> Iterator[str]:
        """Serve ``app`` on a free port of 127.0.0.1 until the block ends; yields its URL."""
        import uvicorn

        self.require()
        port = free_port()
        config = uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", ws="websockets-sansio"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
        thread.start()
        deadline = time.time() + 15
        while not server.started:
            if time.time() > deadline:  # pragma: no cover
                raise RuntimeError("the server did not start")
            time.sleep(0.05)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=10)
