"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, "the README has a Python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
    # The seeded shoe deals seat 1 against a 2-6 up card: the EZ Bust window opens (633b.16(c)).
    assert capsys.readouterr().out == "EZ Bust decisions from seats 1 ['ez-bust', 'no-ez-bust']\n"


def test_readme_stays_short() -> None:
    """The README is for its readers: what it is, the two commands, what works, the headline
    figures and links; the experiment log lives in docs/performance.md."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines"
    first_screen = "\n".join(lines[:40])
    assert "make demo" in first_screen
    assert "make test" in first_screen
