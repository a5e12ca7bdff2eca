"""The fixtures every folder of the suite may use (``tests/conftest.py`` loads them):

- ``backend``: a fresh database, an SQLite file and then a PostgreSQL schema (each test that
  takes it runs on both); ``postgres``: a PostgreSQL schema alone (a floor of several
  processes). Without a reachable PostgreSQL these are skipped with the reason, unless
  ``CI=true``: then they fail.
- ``make_client``: apps on the tests' floor (:func:`tests.support.floor.clients`), stopped
  after the test; ``kit``: the helpers of :mod:`tests.support.floor`.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.floor import Kit, clients
from tests.support.store import Backend, postgres_available

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

__all__ = ["backend", "kit", "make_client", "postgres"]


@functools.cache
def _postgres_missing() -> str | None:
    """Why PostgreSQL cannot be used (asked once a process), or None."""
    return postgres_available()


def _require_postgres() -> None:
    reason = _postgres_missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI requires PostgreSQL: {reason}")
        pytest.skip(reason)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh database: an SQLite file, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        yield Backend.sqlite(tmp_path)
        return
    _require_postgres()
    chosen = Backend.postgresql()
    try:
        yield chosen
    finally:
        chosen.drop()


@pytest.fixture
def postgres() -> Iterator[Backend]:
    """A fresh PostgreSQL schema, for what only PostgreSQL has (a floor of several processes)."""
    _require_postgres()
    chosen = Backend.postgresql()
    try:
        yield chosen
    finally:
        chosen.drop()


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``make_client(tables=None, *, backend=None, db=None, **options)``: a started TestClient
    of an app on the tests' floor (see :func:`tests.support.floor.clients`)."""
    with clients(tmp_path) as make:
        yield make


@pytest.fixture
def kit() -> type[Kit]:
    """The floor's helpers: ``kit.auth(who)``, ``kit.connect(client, who, terminal, table)``,
    ``kit.play_round(client)``, ``kit.hybrid_table(...)``, … (:class:`tests.support.floor.Kit`)."""
    return Kit
