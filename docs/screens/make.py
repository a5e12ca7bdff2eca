"""Make the pictures of the pages in this folder: the player terminal of every game (a round on
a stacked shoe, at 1280×800 and on a phone's 390×844), the dealer console (and the demo's
live-dealer table dealt from it), the supervisor page, the cage's page and a cash-out voucher's
ticket at the terminal. The browser tests take them (Debian's Chromium through Playwright, as `make test` does)
while they play their scenes; this script runs those tests with ``TABLEJACK_SCREENSHOTS`` set
and keeps the pictures the docs and the README show.

    .venv/bin/python docs/screens/make.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TESTS = [
    "tests/browser/test_terminal_layout.py",
    "tests/browser/test_console.py",
    "tests/browser/test_supervisor.py",
    "tests/browser/test_live_dealer.py",
    "tests/browser/test_cage.py",
]
KEEP = {
    "A1-2-decide.png": "terminal-version-a-1280x800.png",
    "A1-3-result.png": "terminal-version-a-result-1280x800.png",
    "A2-2-decide.png": "terminal-version-a-390x844.png",
    "B1-3-result.png": "terminal-version-b-1280x800.png",
    "C1-2-result.png": "terminal-classic-ez-bust-1280x800.png",
    "M1-2-result.png": "terminal-multi-action-1280x800.png",
    "console-version-a.png": "dealer-console-version-a.png",
    "console-version-b.png": "dealer-console-version-b.png",
    "supervisor-tables.png": "supervisor-tables.png",
    "supervisor-tilts.png": "supervisor-tilts.png",
    "console-live-dealer.png": "dealer-console-live-dealer.png",
    "cage-desk.png": "cage-1280x800.png",
    "terminal-voucher-desk.png": "terminal-voucher-1280x800.png",
    "terminal-voucher-phone.png": "terminal-voucher-390x844.png",
}
"""The pictures kept (the tests' name → this folder's name)."""


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        environment = {**os.environ, "TABLEJACK_SCREENSHOTS": folder}
        ran = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:xdist",
                *TESTS,
            ],
            cwd=ROOT,
            env=environment,
            check=False,
        )
        if ran.returncode != 0:
            print("the browser tests failed: no picture was kept", file=sys.stderr)
            return ran.returncode
        missing = []
        for taken, kept in KEEP.items():
            source = Path(folder) / taken
            if not source.exists():
                missing.append(taken)
                continue
            shutil.copyfile(source, HERE / kept)
            print(f"docs/screens/{kept}")
        if missing:
            print(f"not taken: {', '.join(missing)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
