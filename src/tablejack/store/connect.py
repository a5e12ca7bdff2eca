"""Where the store's database is and how it is reached: the async driver URL of a path or URL
(:func:`async_url`), the database a URL names (:func:`database_location`), the engines of
:meth:`tablejack.store.db.Store.open` (:func:`create_engines`), SQLite's settings of every
connection and the Alembic migrations shipped inside the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from sqlalchemy import Engine, create_engine
from sqlalchemy import event as sa_event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

__all__ = [
    "DatabaseLocation",
    "async_url",
    "create_engines",
    "database_location",
    "migrate_to_head",
    "sqlite_pragmas",
]


def async_url(url: str) -> str:
    """The async driver URL for ``url``: ``sqlite:///f.db`` → ``sqlite+aiosqlite:///f.db``,
    ``postgresql://…`` → ``postgresql+asyncpg://…``; a bare path is an SQLite file.

    >>> async_url("postgresql://postgres@127.0.0.1/test")
    'postgresql+asyncpg://postgres@127.0.0.1/test'
    >>> async_url("floor.db")
    'sqlite+aiosqlite:///floor.db'
    """
    if "://" not in url:
        return f"sqlite+aiosqlite:///{url}"
    scheme, rest = url.split("://", 1)
    base = scheme.split("+", 1)[0]
    if base == "sqlite":
        return f"sqlite+aiosqlite://{rest}"
    if base in ("postgresql", "postgres"):
        return f"postgresql+asyncpg://{rest}"
    return url


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """SQLite's settings of every connection: a wait for the writer's lock (first: the journal
    mode's own statement may meet a lock), WAL, foreign keys."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def migrate_to_head(connection: Any) -> None:
    """Apply every Alembic migration not yet applied, on ``connection`` (a synchronous one)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    location = resources.files("tablejack.store") / "migrations"
    config.set_main_option("script_location", str(location))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def create_engines(
    url: str,
    *,
    schema: str | None = None,
    pool_size: int = 10,
    settings: Mapping[str, str] | None = None,
) -> tuple[AsyncEngine, Engine | None]:
    """The async engine of ``url`` (SQLite path or URL, PostgreSQL URL) and, for an SQLite
    file, the synchronous engine of its play write path. ``schema`` (PostgreSQL; or
    ``?schema=name`` at the end of the URL) selects a schema through ``search_path``;
    ``settings``: PostgreSQL settings of every connection."""
    full = async_url(url)
    if "?schema=" in full:
        full, schema = full.split("?schema=", 1)
    kwargs: dict[str, Any] = {}
    if full.startswith("postgresql"):
        kwargs["pool_size"] = pool_size
        server_settings = dict(settings or {})
        if schema:
            server_settings["search_path"] = schema
        if server_settings:
            kwargs["connect_args"] = {"server_settings": server_settings}
    engine = create_async_engine(full, **kwargs)
    sync_engine = None
    if engine.dialect.name == "sqlite":
        sa_event.listen(engine.sync_engine, "connect", sqlite_pragmas)
        database = engine.url.database
        if database and database != ":memory:":
            sync_engine = create_engine(
                f"sqlite:///{database}", connect_args={"check_same_thread": False}
            )
            sa_event.listen(sync_engine, "connect", sqlite_pragmas)
    return engine, sync_engine


@dataclass(frozen=True, slots=True)
class DatabaseLocation:
    """The database a URL names: its backend (``sqlite``, ``postgresql``) and database (an
    SQLite file's path, ``:memory:``, a server database's name; empty when the URL names
    none)."""

    backend: str
    database: str


def database_location(url: str) -> DatabaseLocation:
    """Where the database of ``url`` (a path or URL, as :meth:`Store.open` takes it) is.

    >>> database_location("floor.db")
    DatabaseLocation(backend='sqlite', database='floor.db')
    >>> database_location("postgresql://tj@db:5432/casino?sslmode=require")
    DatabaseLocation(backend='postgresql', database='casino')
    """
    parsed = make_url(async_url(url))
    return DatabaseLocation(parsed.get_backend_name(), parsed.database or "")
