"""Alembic environment for the tablejack store.

Works from an installed package: :func:`tablejack.store.migrate` builds the Alembic
configuration in code (no ``alembic.ini``) and hands over an open connection in
``config.attributes["connection"]``; this file then runs the migrations on it.
"""

from __future__ import annotations

from alembic import context

from tablejack.store.models import Base


def run_migrations() -> None:
    """Run the migrations on the connection :func:`tablejack.store.Store.migrate` provides."""
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("Run the tablejack migrations through tablejack.store.Store.migrate.")
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


try:
    _running = context.config is not None
except AttributeError:  # imported outside Alembic (documentation tools, doctest collection)
    _running = False
if _running:
    run_migrations()
