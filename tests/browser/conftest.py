"""What every browser test needs: Debian's Chromium driven by Playwright, and an app served by
uvicorn in a thread on a free port (fixture ``browser_kit``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


class BrowserKit:
    """The browser to launch and a way to serve an app for it."""

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

    @contextlib.contextmanager
    def serve(self, app: Any) -> Iterator[str]:
        """Serve ``app`` on a free port of 127.0.0.1 until the block ends; yields its URL."""
        import uvicorn

        self.require()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
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


@pytest.fixture(scope="session")
def browser_kit() -> BrowserKit:
    return BrowserKit()
