"""The commands of the keys and credentials: ``tablejack keygen`` (the key pair that signs the
event log's checkpoints) and ``tablejack tokens issue|list|revoke`` (docs/security.md).

Heavy modules (the database drivers) are imported only when a command runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from tablejack.server.commands.options import DEFAULT_DB, time_text

__all__ = ["keygen", "tokens"]


def keygen(
    out: Annotated[Path, typer.Option(help="Folder for checkpoint.key and checkpoint.pub.")],
) -> None:
    """Make the Ed25519 key pair that signs the checkpoints of the event log: the private
    key (mode 0600) for the server's configuration, the public key for verifiers."""
    from tablejack.store.keys import (
        SignatureError,
        generate_key_pair,
        key_id,
        load_public_key,
    )

    try:
        private, public = generate_key_pair(out, "checkpoint.key", "checkpoint.pub")
    except SignatureError as error:
        typer.echo(f"keygen: {error}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(f"private key: {private} (give it to `tablejack serve --checkpoint-key`)")
    typer.echo(f"public key:  {public} (give it to `tablejack verify-log --public-key`)")
    typer.echo(f"key id:      {key_id(load_public_key(public))}")


tokens = typer.Typer(help="Credentials: issue, list, revoke (docs/security.md).")
"""``tablejack tokens``: its commands issue, list and revoke."""


@tokens.command("issue")
def tokens_issue(
    role: Annotated[str, typer.Option(help="player, dealer, supervisor, cashier, operator.")],
    subject: Annotated[str, typer.Option(help="The player's account or the employee.")],
    db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
    lifetime: Annotated[
        int | None, typer.Option(help="Seconds (default: the role's lifetime).")
    ] = None,
    by: Annotated[str, typer.Option(help="Who issues it (the audit names him).")] = "cli",
) -> None:
    """Issue a credential; its secret is printed once (the first operator's token comes
    from here)."""
    from tablejack.store import Store, StoreError
    from tablejack.store import credentials as creds
    from tablejack.store.policy import Actor, Role

    async def run() -> Any:
        store = await Store.open(db)
        try:
            return await creds.issue(
                store, role, subject, by=Actor(Role.OPERATOR, by), lifetime_s=lifetime
            )
        finally:
            await store.close()

    try:
        issued = asyncio.run(run())
    except StoreError as error:
        typer.echo(f"tokens issue: {error}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(
        f"{issued.credential.id} {role} {subject} expires "
        f"{time_text(issued.credential.expires_us)} UTC"
    )
    typer.echo(issued.token)


@tokens.command("list")
def tokens_list(
    db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
) -> None:
    """Credentials (never their secrets), newest first."""
    from tablejack.store import Store
    from tablejack.store import credentials as creds

    async def run() -> Any:
        store = await Store.open(db)
        try:
            return await creds.credentials(store, role=role, limit=10_000)
        finally:
            await store.close()

    for found in asyncio.run(run()):
        state = "revoked" if found.revoked_us is not None else "valid"
        typer.echo(
            f"{found.id} {found.role:10} {found.subject:24} {state:8} expires "
            f"{time_text(found.expires_us)}" + (f" at {found.terminal}" if found.terminal else "")
        )


@tokens.command("revoke")
def tokens_revoke(
    credential: Annotated[str, typer.Argument(help="The credential's id (cr-…).")],
    db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
    by: Annotated[str, typer.Option(help="The supervisor who revokes it.")] = "cli",
) -> None:
    """Revoke a credential and its sessions; a running server refuses them within a
    second (its revocation watch)."""
    from tablejack.store import Store
    from tablejack.store import credentials as creds
    from tablejack.store.policy import Actor, Role

    async def run() -> list[str]:
        store = await Store.open(db)
        try:
            ids = await creds.revoke(store, credential, by=Actor(Role.SUPERVISOR, by))
            if ids:
                await store.audit(
                    "revoke", f"revoked {', '.join(ids)} from the command line", actor=by
                )
            return ids
        finally:
            await store.close()

    ids = asyncio.run(run())
    if not ids:
        typer.echo(f"tokens revoke: no valid credential {credential!r}.", err=True)
        raise typer.Exit(code=1)
    typer.echo(f"revoked: {', '.join(ids)}")
