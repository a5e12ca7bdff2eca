"""``tablejack serve``'s bounds before authentication reach the app: ``--body-max-bytes``
(64 KiB by default, :data:`tablejack.server.support.bounds.BODY_MAX_BYTES`) and
``--forwarded-allow-ips`` (no proxy trusted by default); uvicorn's own proxy-header handling
is off, so only the app's, with the proxies named, reads ``X-Forwarded-For``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.server.commands.options import BODY_MAX_BYTES as SERVE_DEFAULT
from tablejack.server.support.bounds import BODY_MAX_BYTES

runner = CliRunner()


def serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``serve`` stopped before it listens: the app's arguments and uvicorn's settings."""
    import tablejack.server.app as app_module
    from tablejack.server.http import health

    built: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    real = app_module.create_app

    def recording(*args: Any, **kwargs: Any) -> Any:
        built.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(app_module, "create_app", recording)
    monkeypatch.setattr(
        health, "run_server", lambda application, drain, **given: settings.update(given)
    )
    result = runner.invoke(
        app, ["serve", "--unsigned", "--db", str(tmp_path / "floor.sqlite"), *options]
    )
    assert result.exit_code == 0, result.output
    return built, settings


def test_serve_caps_bodies_and_trusts_no_proxy_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built, settings = serve(tmp_path, monkeypatch)
    assert SERVE_DEFAULT == BODY_MAX_BYTES
    assert built["body_max_bytes"] == BODY_MAX_BYTES
    assert built["forwarded_allow_ips"] == ""
    assert settings["proxy_headers"] is False  # uvicorn trusts 127.0.0.1 by default: not here


def test_serve_takes_the_limit_and_the_trusted_proxies_from_its_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built, _ = serve(
        tmp_path,
        monkeypatch,
        "--body-max-bytes",
        "8192",
        "--forwarded-allow-ips",
        "10.0.0.5,10.0.1.0/24",
    )
    assert built["body_max_bytes"] == 8192
    assert built["forwarded_allow_ips"] == "10.0.0.5,10.0.1.0/24"
