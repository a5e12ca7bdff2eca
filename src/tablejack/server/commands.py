"""The table system's commands for the ``tablejack`` CLI: ``serve``, ``verify-log``, ``recall``.

Heavy modules (the web framework, the database drivers) are imported only when a command runs.
"""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["register"]

DEFAULT_DB = "tablejack.sqlite"


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``verify-log`` and ``recall`` to the CLI."""

    @app.command()
    def serve(
        db: Annotated[
            str, typer.Option(help="Database: an SQLite file or a postgresql:// URL.")
        ] = DEFAULT_DB,
        host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
        tables: Annotated[
            Path | None, typer.Option(help="Tables file (TOML, [[tables]] entries).")
        ] = None,
        demo: Annotated[
            bool, typer.Option(help="Demo floor: tables, players with credit, staff tokens.")
        ] = False,
        batch_ms: Annotated[
            float,
            typer.Option(
                help="Gather a table's changes this long before one update (busy floors)."
            ),
        ] = 0.0,
        reader_port: Annotated[
            int | None,
            typer.Option(help="Also take card reader lines on this raw TCP port (docs/server.md)."),
        ] = None,
        tls_cert: Annotated[
            Path | None,
            typer.Option(
                help="TLS certificate (PEM; chain after it): serve HTTPS/WSS and a TLS reader port."
            ),
        ] = None,
        tls_key: Annotated[
            Path | None, typer.Option(help="The TLS certificate's private key (PEM, unencrypted).")
        ] = None,
        release_manifest: Annotated[
            Path | None,
            typer.Option(
                help="Release manifest of the supervisor's software check (PA 605a.4(c))."
            ),
        ] = None,
        manifest_public_key: Annotated[
            Path | None,
            typer.Option(
                help="Ed25519 public key (PEM) the release manifest's signature must verify with."
            ),
        ] = None,
    ) -> None:
        """Run the table server: terminals, dealer console, supervisor API and pages."""
        import uvicorn

        from tablejack.server.app import create_app
        from tablejack.server.demo import demo_setup, demo_tables, demo_urls
        from tablejack.server.floor import load_tables_file
        from tablejack.server.gate import FRAME_MAX_BYTES
        from tablejack.server.integrity import SignatureError, key_id, load_public_key
        from tablejack.server.tls import TLSConfigError, tls_context

        settings = _server_settings(tables) if tables is not None else {}
        tls_cert = tls_cert or settings.get("tls_cert")
        tls_key = tls_key or settings.get("tls_key")
        release_manifest = release_manifest or settings.get("release_manifest")
        manifest_public_key = manifest_public_key or settings.get("manifest_public_key")
        try:
            tls = tls_context(tls_cert, tls_key)
            signer = load_public_key(manifest_public_key) if manifest_public_key else None
        except (TLSConfigError, SignatureError) as error:
            typer.echo(f"tablejack serve: {error} The server did not start.", err=True)
            raise typer.Exit(code=2) from None
        configs = load_tables_file(tables) if tables is not None else []
        setup = None
        if demo:
            known = {c.id for c in configs}
            configs += [c for c in demo_tables() if c.id not in known]
            setup = demo_setup
        application = create_app(
            db,
            tables=configs,
            setup=_settle_heap_after(setup),
            broadcast_interval=batch_ms / 1000,
            reader_port=reader_port,
            reader_host=host,
            reader_tls=tls,
            release_manifest=release_manifest,
            manifest_public_key=manifest_public_key,
        )
        scheme, ws_scheme = ("https", "wss") if tls is not None else ("http", "ws")
        base = f"{scheme}://{host}:{port}"
        typer.echo(f"tablejack table server on {base} (database {db})")
        typer.echo(f"  terminals connect to {ws_scheme}://{host}:{port}/ws")
        if reader_port is not None:
            typer.echo(f"  card readers on TCP port {reader_port}" + (" over TLS" if tls else ""))
        if tls is None and host not in ("127.0.0.1", "localhost", "::1"):
            typer.echo(
                "  WARNING: plain HTTP on a network address: tokens, wagers and cards travel "
                "unencrypted; give --tls-cert and --tls-key, or put a TLS-terminating proxy "
                "in front (docs/server.md, TLS)."
            )
        if signer is not None:
            typer.echo(f"  release manifest signatures checked with key {key_id(signer)}")
        if demo:
            for line in demo_urls(base, configs):
                typer.echo("  " + line)
        uvicorn.run(
            application,
            host=host,
            port=port,
            log_level="warning",
            ws="websockets-sansio",
            ws_per_message_deflate=False,
            ws_max_size=FRAME_MAX_BYTES,  # a bigger frame closes with 1009 (server.gate)
            ssl_certfile=tls_cert if tls is not None else None,
            ssl_keyfile=tls_key if tls is not None else None,
        )

    @app.command("verify-log")
    def verify_log(
        db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
    ) -> None:
        """Recompute every round's hash chain and the ledger; exit 1 on any problem."""
        from tablejack.store import Store

        async def run() -> tuple[list[str], int]:
            store = await Store.open(db)
            try:
                problems = await store.verify_log() + await store.ledger_check()
                count = len(await store.rounds(limit=10**9))
                return problems, count
            finally:
                await store.close()

        problems, count = asyncio.run(run())
        for problem in problems:
            typer.echo(f"PROBLEM {problem}")
        if problems:
            raise typer.Exit(code=1)
        typer.echo(f"ok: {count} rounds, every hash chain intact, the ledger balances")

    @app.command()
    def recall(
        round_id: Annotated[str, typer.Argument(help="Round id, e.g. A1-000042.")],
        db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
        as_json: Annotated[bool, typer.Option("--json", help="Print the recall as JSON.")] = False,
    ) -> None:
        """Recall a round: transcript, cards with read times, decisions, settlements."""
        from tablejack.server.recall import recall as recall_round
        from tablejack.store import Store

        async def run() -> dict[str, Any] | None:
            store = await Store.open(db)
            try:
                return await recall_round(store, round_id)
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
            f"Round {round_id} ({document['game']}, table {document['table_id']}): "
            f"{document['status']}"
        )
        for line in document["transcript"]:
            typer.echo("  " + line)
        typer.echo("Cards:")
        for card in document["cards"]:
            typer.echo(
                f"  #{card['seq']} {card['code']} read at {_time(card['read_us'])} "
                f"({card['source']})"
            )
        typer.echo("Decisions:")
        for item in document["decisions"]:
            typer.echo(
                f"  #{item['seq']} {_time(item['at_us'])} {item['text']} "
                f"— {item['actor']} at {item['terminal'] or '-'}"
            )
        typer.echo("Settlements:")
        for s in document["settlements"]:
            typer.echo(
                f"  {s['player']} {s['kind']} {s['amount']}c {s['result']} "
                f"returned {s['returned']}c ({s['clause']})"
            )
        typer.echo("Log: " + ("verified" if document["log_verified"] else "PROBLEMS"))


SERVER_PATHS = ("tls_cert", "tls_key", "release_manifest", "manifest_public_key")


def _server_settings(tables: Path) -> dict[str, Path]:
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


def _time(us: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(us / 1e6, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _settle_heap_after(setup: Any) -> Any:
    """The floor's start-up, then the garbage collector tuned for a long-running server: what
    start-up built (the code, the tables, the accounts) is frozen out of the collector's scans
    (:func:`gc.freeze`), and the young generation is collected after 20,000 allocations instead
    of 700. A round creates many short-lived objects; with the default thresholds the server
    spent 37.2 ms of CPU per round against 28.9 ms with these (``benchmarks/load.py``, 50
    tables × 20 terminals, back to back; docs/server.md, "Load")."""

    async def run(floor: Any) -> None:
        if setup is not None:
            await setup(floor)
        gc.collect()
        gc.freeze()
        gc.set_threshold(20_000, 20, 100)

    return run
