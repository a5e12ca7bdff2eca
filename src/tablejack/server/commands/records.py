"""The commands that read the store's records: ``tablejack verify-log`` (every hash chain, the
ledger against the events, the signed checkpoints) and ``tablejack recall`` (a round, step by
step).

Heavy modules (the database drivers) are imported only when a command runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from tablejack.server.commands.options import DEFAULT_DB, time_text

__all__ = ["recall", "verify_log"]


def verify_log(
    db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
    public_key: Annotated[
        list[Path] | None,
        typer.Option(help="Public key(s) of the checkpoint signer (PEM; repeat for keys rotated)."),
    ] = None,
    checkpoints: Annotated[
        list[Path] | None,
        typer.Option(
            help="The append-only checkpoint file kept outside the database (repeat for "
            "each process of a floor); checked both ways against the database's."
        ),
    ] = None,
    strict: Annotated[
        bool | None,
        typer.Option(help="Events no signed checkpoint covers are problems (default: with a key)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Verify the store: every hash chain, the ledger against the events, the invariants of
    every account kind, and (with the public key) every signed checkpoint and the file
    outside the database; exit 1 on any problem."""
    from tablejack.store import Store
    from tablejack.store.keys import SignatureError, load_public_key
    from tablejack.store.verify import verify

    try:
        keys = [load_public_key(path) for path in public_key or []]
    except SignatureError as error:
        typer.echo(f"verify-log: {error}", err=True)
        raise typer.Exit(code=2) from None

    async def run() -> Any:
        store = await Store.open(db)
        try:
            return await verify(
                store,
                public_keys=keys,
                checkpoint_files=checkpoints or [],
                strict=bool(keys) if strict is None else strict,
            )
        finally:
            await store.close()

    from tablejack.progress import Feedback

    # a floor's log takes a while to re-hash: a spinner on a terminal, nothing elsewhere
    with Feedback(json_output=as_json).step("verifying the store"):
        report = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        for problem in report.problems:
            typer.echo(f"PROBLEM {problem}")
        if report.pending and not report.problems:
            typer.echo(
                f"note: {len(report.pending)} stream(s) hold events no signed checkpoint "
                "covers yet (--strict lists them as problems)"
            )
        for note in report.notes:
            typer.echo(f"note: {note}")
        if report.ok:
            signed = (
                f", {report.checkpoints} signed checkpoints verified"
                if keys and report.checkpoints
                else ""
            )
            typer.echo(
                f"ok: {report.rounds} rounds and {report.streams - report.rounds} logs, "
                f"{report.events} events, {report.ledger_rows} ledger rows: every hash chain "
                f"intact, the ledger matches the events, every invariant holds{signed}"
            )
    if not report.ok:
        raise typer.Exit(code=1)


def recall(
    round_id: Annotated[str, typer.Argument(help="Round id, e.g. A1-000042.")],
    db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print the recall as JSON.")] = False,
) -> None:
    """Recall a round: transcript, cards with read times, decisions, settlements."""
    from tablejack.server.duties.recall import recall as recall_round
    from tablejack.server.visibility import Viewer
    from tablejack.store import Store

    async def run() -> dict[str, Any] | None:
        store = await Store.open(db)
        try:  # the operator's console: no card face down while the round is open
            return await recall_round(store, round_id, Viewer("operator"))
        finally:
            await store.close()

    document = asyncio.run(run())
    if document is None:
        typer.echo(f"No round {round_id!r}.", err=True)
        raise typer.Exit(code=2)
    if as_json:
        typer.echo(json.dumps(document, indent=2, default=str))
        return
    typer.echo(
        f"Round {round_id} ({document['game']}, table {document['table_id']}): {document['status']}"
    )
    for line in document["transcript"]:
        typer.echo("  " + line)
    typer.echo("Cards:")
    for card in document["cards"]:
        typer.echo(
            f"  #{card['seq']} {card['code']} read at {time_text(card['read_us'])} "
            f"({card['source']})"
        )
    typer.echo("Decisions:")
    for item in document["decisions"]:
        typer.echo(
            f"  #{item['seq']} {time_text(item['at_us'])} {item['text']} "
            f"— {item['actor']} at {item['terminal'] or '-'}"
        )
    typer.echo("Settlements:")
    for s in document["settlements"]:
        typer.echo(
            f"  {s['player']} {s['kind']} {s['amount']}c {s['result']} "
            f"returned {s['returned']}c ({s['clause']})"
        )
    typer.echo("Log: " + ("verified" if document["log_verified"] else "PROBLEMS"))
