"""The store's backends: every contract test runs on an SQLite file and on PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablejack.store.testing import Backend, postgres_available

_PG_REASON: list[str | None] = []


def _pg_reason() -> str | None:
    if not _PG_REASON:
        _PG_REASON.append(postgres_available())
    return _PG_REASON[0]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh database: an SQLite file, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        yield Backend.sqlite(tmp_path)
        return
    reason = _pg_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI requires PostgreSQL: {reason}")
        pytest.skip(reason)
    chosen = Backend.postgresql()
    try:
        yield chosen
    finally:
        chosen.drop()
