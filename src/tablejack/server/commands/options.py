"""The options and settings the server's commands share: the defaults of ``serve``, the
``--tables`` and ``--sas`` options and the ``[server]`` table of a tables file, the demo's
checkpoint key, and the time as the commands print it.

Heavy modules (the web framework, the database drivers) are imported only when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

__all__ = [
    "BODY_MAX_BYTES",
    "COMMIT_MS",
    "DEFAULT_DB",
    "SERVER_PATHS",
    "STEP_MS",
    "STEP_WAIT_MS",
    "demo_key",
    "demo_keys_folder",
    "sas_option",
    "server_settings",
    "tables_option",
    "time_text",
]

DEFAULT_DB = "tablejack.sqlite"
STEP_MS = 3.0
"""``serve``'s step window by default, in milliseconds (docs/server.md, "Running it")."""
STEP_WAIT_MS = 12.0
"""``serve``'s longest wait, in a decision window, for every awaited player's answer, in
milliseconds (docs/server.md, "Running it")."""
COMMIT_MS = 2.0
"""``serve``'s group commit window by default, in milliseconds (docs/server.md, "Running it")."""
BODY_MAX_BYTES = 64 * 1024
"""``serve``'s largest request body by default (:data:`tablejack.server.support.bounds.BODY_MAX_BYTES`,
not imported here: the web framework is imported only when a command runs)."""


SERVER_PATHS = (
    "tls_cert",
    "tls_key",
    "release_manifest",
    "manifest_public_key",
    "checkpoint_key",
    "checkpoint_log",
)


def demo_keys_folder(db: str) -> Path:
    """Where the demo keeps the checkpoint key it makes, whatever the spelling of ``--db``: an
    SQLite file's beside it (``floor.db`` → ``floor-keys/`` in the file's folder); a server
    database's (PostgreSQL) in the current folder, named after the database
    (``postgresql://…/casino`` → ``casino-keys/``); an SQLite database in memory's
    ``tablejack-keys/`` in the current folder.

    >>> demo_keys_folder("sqlite:////srv/x/floor.db").as_posix()
    '/srv/x/floor-keys'
    >>> demo_keys_folder("demo.sqlite").as_posix()
    'demo-keys'
    >>> demo_keys_folder("postgresql://tj@db:5432/casino?sslmode=require").as_posix()
    'casino-keys'
    """
    import re

    from tablejack.store.connect import database_location

    location = database_location(db)
    database = location.database
    if location.backend == "sqlite":
        if not database or database == ":memory:" or database.startswith("file::memory:"):
            return Path("tablejack-keys")
        file = Path(database)
        return file.parent / f"{file.stem}-keys"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", database).lstrip(".") or "tablejack"
    return Path(f"{name}-keys")


def demo_key(db: str) -> Path:
    """The demo's checkpoint key in :func:`demo_keys_folder` (made on first use)."""
    from tablejack.store.keys import generate_key_pair

    folder = demo_keys_folder(db)
    key = folder / "checkpoint.key"
    if not key.exists():
        generate_key_pair(folder, "checkpoint.key", "checkpoint.pub")
    return key


def tables_option(value: str | None, leased: bool) -> tuple[Path | None, frozenset[str] | None]:
    """``--tables``: a tables file, or (a floor of several processes) ``auto`` or a list of
    table ids: the file (or None) and the tables this process may run (None: every one)."""
    import re

    if value is None or value == "auto":
        return None, None
    path = Path(value)
    if path.exists() or value.endswith(".toml"):
        return path, None
    ids = [part.strip() for part in value.split(",") if part.strip()]
    if not ids or not all(re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", part) for part in ids):
        typer.echo(
            f"tablejack serve: --tables {value!r} is no tables file, `auto` or list of table "
            "ids. The server did not start.",
            err=True,
        )
        raise typer.Exit(code=2)
    if not leased:
        typer.echo(
            "tablejack serve: a list of table ids chooses a process's tables on a floor of "
            "several processes (PostgreSQL); an SQLite floor runs every table in one process. "
            "The server did not start.",
            err=True,
        )
        raise typer.Exit(code=2)
    return None, frozenset(ids)


def server_settings(tables: Path) -> dict[str, Path]:
    """The ``[server]`` table of a tables file: the paths of ``SERVER_PATHS`` (relative to the
    file); the command line's options take precedence."""
    import tomllib

    with tables.open("rb") as handle:
        section = tomllib.load(handle).get("server", {})
    unknown = sorted(set(section) - set(SERVER_PATHS))
    if unknown:
        typer.echo(
            f"tablejack serve: unknown [server] key(s) {', '.join(unknown)} in {tables}; "
            f"known: {', '.join(SERVER_PATHS)}.",
            err=True,
        )
        raise typer.Exit(code=2)
    return {key: tables.parent / str(value) for key, value in section.items()}


def sas_option(specs: list[str], tables: Path | None) -> list[Any]:
    """``--sas`` values and the tables file's ``[[sas]]`` entries (``terminal``,
    ``endpoint``, ``address``, ``allow``: an address or a list); a bad one stops the server
    before it starts."""
    import tomllib

    from tablejack.server.links.sas.link import SasTerminal, parse_spec

    try:
        out = [parse_spec(spec) for spec in specs]
        if tables is not None:
            with tables.open("rb") as handle:
                for entry in tomllib.load(handle).get("sas", []):
                    allow = entry.get("allow", [])
                    allow = [allow] if isinstance(allow, str) else list(allow)
                    out.append(
                        parse_spec(
                            f"{entry['terminal']}={entry['endpoint']},"
                            f"address={int(entry.get('address', 1))}"
                            + "".join(f",allow={value!s}" for value in allow)
                        )
                    )
        known = {entry.terminal for entry in out}
        if len(known) != len(out):
            raise ValueError("a terminal has one SAS link")
    except (ValueError, KeyError, TypeError) as error:
        typer.echo(f"tablejack serve: --sas: {error}. The server did not start.", err=True)
        raise typer.Exit(code=2) from None
    return [SasTerminal(e.terminal, e.endpoint, e.address, e.allow) for e in out]


def time_text(us: int) -> str:
    """A time in microseconds as the commands print it (UTC, to the millisecond).

    >>> time_text(1_700_000_000_123_456)
    '2023-11-14 22:13:20.123'
    """
    import datetime as dt

    return dt.datetime.fromtimestamp(us / 1e6, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
