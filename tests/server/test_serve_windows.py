"""``tablejack serve``'s pacing options reach the floor and are said at start: the step window
(``--step-ms``, 3 by default), the longest wait for a decision round's answers
(``--step-wait-ms``, 12), the group commit window (``--commit-ms``, 2) and the interval
between a table's updates (``--batch-ms``, 0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tablejack.cli import app

runner = CliRunner()


def _serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str
) -> tuple[list[str], dict[str, Any]]:
    """``serve`` with ``options``, stopped before it listens: its start-up text and the
    arguments it built the app with."""
    import tablejack.server.app as app_module
    from tablejack.server.http import health

    built: dict[str, Any] = {}
    real = app_module.create_app

    def recording(*args: Any, **kwargs: Any) -> Any:
        built.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(app_module, "create_app", recording)
    monkeypatch.setattr(health, "run_server", lambda application, drain, **settings: None)
    result = runner.invoke(
        app, ["serve", "--unsigned", "--db", str(tmp_path / "floor.sqlite"), *options]
    )
    assert result.exit_code == 0, result.output
    return result.output.splitlines(), built


def test_serve_gathers_steps_for_3_ms_and_commits_for_2_ms_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, built = _serve(tmp_path, monkeypatch)
    assert (built["step_window"], built["commit_window"]) == (0.003, 0.002)
    assert built["step_wait"] == 0.012
    assert built["broadcast_interval"] == 0
    assert "  steps gathered for 3 ms (a decision round's up to 12 ms), commits for 2 ms" in lines


def test_serve_takes_its_windows_and_interval_from_the_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, built = _serve(
        tmp_path,
        monkeypatch,
        "--step-ms",
        "0",
        "--step-wait-ms",
        "20",
        "--commit-ms",
        "5",
        "--batch-ms",
        "25",
    )
    assert (built["step_window"], built["commit_window"]) == (0, 0.005)
    assert built["step_wait"] == 0.02
    assert built["broadcast_interval"] == 0.025
    assert (
        "  steps gathered for 0 ms (a decision round's up to 20 ms), commits for 5 ms, "
        "updates at least 25 ms apart"
    ) in lines
