"""The demo's checkpoint keys — the private key among them — go where docs/server.md says,
whatever the spelling of ``--db``: beside an SQLite file, in a folder named after the
database for PostgreSQL; never into a folder named after the URL's scheme (``sqlite:/…``,
``postgresql:/…``) under the current directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablejack.server.commands.options import demo_key


def _scheme_folders(where: Path) -> list[str]:
    return sorted(p.name for p in where.iterdir() if p.name.startswith(("sqlite", "postgres")))


@pytest.mark.parametrize("spelling", ["absolute", "relative", "bare"])
def test_an_sqlite_floors_keys_are_made_beside_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    folder = tmp_path / "x" if spelling == "absolute" else here / "x"
    folder.mkdir()
    db = {
        "absolute": f"sqlite:///{folder}/floor.db",  # sqlite:////abs/x/floor.db
        "relative": "sqlite:///x/floor.db",
        "bare": "x/floor.db",
    }[spelling]
    key = demo_key(db)
    assert key.resolve() == (folder / "floor-keys" / "checkpoint.key").resolve()
    assert key.exists() and (folder / "floor-keys" / "checkpoint.pub").exists()
    assert key.stat().st_mode & 0o077 == 0  # the private key is the owner's alone
    assert _scheme_folders(here) == []
    assert demo_key(db) == key  # made once, then reused


def test_a_postgresql_floors_keys_are_made_in_a_folder_named_after_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    key = demo_key("postgresql://tj@db.casino:5432/casino?sslmode=require")
    assert key.resolve() == (tmp_path / "casino-keys" / "checkpoint.key").resolve()
    assert _scheme_folders(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["casino-keys"]
