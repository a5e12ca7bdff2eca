"""The `tablejack` commands of the table server: serve, verify-log, recall, keys and tokens,
sas-poll, the release's integrity, the demo floor.

:func:`register` mounts them on the CLI (:mod:`tablejack.cli`), in the order its help lists
them; each module defines its commands and imports its heavy modules only when one runs.
"""

from __future__ import annotations

import typer

from tablejack.server.commands import keys, records, sas, serve

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``sas-poll``, ``serve``, ``verify-log``, ``keygen``, ``recall`` and ``tokens`` to
    the CLI."""
    app.command("sas-poll")(sas.sas_poll)
    app.command()(serve.serve)
    app.command("verify-log")(records.verify_log)
    app.command()(keys.keygen)
    app.add_typer(keys.tokens, name="tokens")
    app.command()(records.recall)
