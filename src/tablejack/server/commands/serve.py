"""The table system's commands for the ``tablejack`` CLI: ``serve``, ``verify-log``, ``recall``,
``keygen`` and ``tokens``.

Heavy modules (the web framework, the database drivers) are imported only when a command runs.
"""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["demo_key", "demo_keys_folder", "register"]

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


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``verify-log`` and ``recall`` to the CLI."""
    _register_sas(app)

    @app.command()
    def serve(
        db: Annotated[
            str, typer.Option(help="Database: an SQLite file or a postgresql:// URL.")
        ] = DEFAULT_DB,
        host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
        tables: Annotated[
            str | None,
            typer.Option(
                help="Tables file (TOML, [[tables]] entries); on PostgreSQL also `auto` (every "
                "table of the floor, this process's share) or a list of table ids (A1,B1)."
            ),
        ] = None,
        lease_seconds: Annotated[
            float,
            typer.Option(
                help="PostgreSQL: the table lease time; a process that stops renewing loses "
                "its tables to the others this long after (docs/server.md)."
            ),
        ] = 5.0,
        share: Annotated[
            int | None,
            typer.Option(
                help="PostgreSQL: tables this process takes (default: the floor's tables "
                "divided among its processes alive, rounded up)."
            ),
        ] = None,
        member: Annotated[
            str | None,
            typer.Option(
                help="PostgreSQL: this process's name on the floor (default: the host's name; "
                "processes named after their host take a crashed sibling's tables at once)."
            ),
        ] = None,
        advertise: Annotated[
            str | None,
            typer.Option(
                help="PostgreSQL: the address the floor's other processes reach this one at "
                "(default: http(s)://HOST:PORT, this machine's name for 0.0.0.0)."
            ),
        ] = None,
        demo: Annotated[
            bool, typer.Option(help="Demo floor: tables, players with credit, staff tokens.")
        ] = False,
        batch_ms: Annotated[
            float,
            typer.Option(
                help="A table's updates at least this far apart: a change after a quiet spell "
                "goes at once, changes within it are gathered (busy floors; 0: every batch)."
            ),
        ] = 0.0,
        step_ms: Annotated[
            float,
            typer.Option(
                help="A table applies the terminals' requests that arrive within this long of "
                "the first as one step: one transaction, one update (0: those waiting at the "
                "next turn; docs/server.md)."
            ),
        ] = STEP_MS,
        step_wait_ms: Annotated[
            float,
            typer.Option(
                help="In a decision window a table's step waits for the answer of every player "
                "the window waits for: at once when all have answered, this long at most "
                "(never less than --step-ms; docs/server.md)."
            ),
        ] = STEP_WAIT_MS,
        commit_ms: Annotated[
            float,
            typer.Option(
                help="The group commit window: a step waits up to this long for the steps that "
                "follow it, to be written in one transaction (0: at once; docs/server.md)."
            ),
        ] = COMMIT_MS,
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
        checkpoint_key: Annotated[
            Path | None,
            typer.Option(
                help="Ed25519 private key (PEM, `tablejack keygen`) that signs the checkpoints "
                "of the event log; keep it off the database's machine's backups."
            ),
        ] = None,
        checkpoint_log: Annotated[
            Path | None,
            typer.Option(
                help="Append-only file every signed checkpoint is also written to (ship it "
                "elsewhere); default: beside the key, checkpoints.jsonl."
            ),
        ] = None,
        checkpoint_seconds: Annotated[
            float, typer.Option(help="Sign a checkpoint at least this often (seconds).")
        ] = 5.0,
        checkpoint_events: Annotated[
            int, typer.Option(help="Sign a checkpoint after this many events.")
        ] = 1000,
        body_max_bytes: Annotated[
            int,
            typer.Option(
                min=1024,
                help="The largest HTTP request body the server reads (bytes); a larger one is "
                "refused with 413 before it is read (docs/server.md).",
            ),
        ] = BODY_MAX_BYTES,
        forwarded_allow_ips: Annotated[
            str,
            typer.Option(
                help="Comma-separated addresses or networks of trusted proxies (nginx): their "
                "X-Forwarded-For and X-Forwarded-Proto name the client. Default: none, every "
                "request's address is its peer's (docs/server.md, behind nginx).",
            ),
        ] = "",
        sas: Annotated[
            list[str] | None,
            typer.Option(
                help="A terminal's SAS link: TERMINAL=ENDPOINT[,address=N], ENDPOINT a serial "
                "device or tcp://HOST:PORT (repeatable; docs/sas.md)."
            ),
        ] = None,
        unsigned: Annotated[
            bool,
            typer.Option(
                "--unsigned",
                help="Run without a checkpoint key (a database writer could then rewrite the "
                "log unseen): development only.",
            ),
        ] = False,
        log_format: Annotated[
            str,
            typer.Option(help="Logs on stderr: `json` (one object a line) or `text`."),
        ] = "text",
        log_level: Annotated[
            str,
            typer.Option(
                help="Log level: debug, info (with the access log), warning, error, critical."
            ),
        ] = "warning",
        metrics_from: Annotated[
            list[str] | None,
            typer.Option(
                help="An address or network (CIDR) that may read /metrics without a staff "
                "credential, e.g. 127.0.0.1 for a Prometheus on this host (repeat for more)."
            ),
        ] = None,
        drain_seconds: Annotated[
            float,
            typer.Option(
                help="On SIGTERM: how long to wait for the tables' rounds to end before the "
                "shutdown hands them over (docs/server.md, Operations)."
            ),
        ] = 30.0,
    ) -> None:
        """Run the table server: terminals, dealer console, supervisor API and pages."""
        import ipaddress

        from tablejack.server.app import create_app
        from tablejack.server.floor.floor import load_tables_file
        from tablejack.server.floor.leasing import (
            LeaseSettings,
            SingleProcessError,
            hold_single_process,
        )
        from tablejack.server.http.demo import demo_setup, demo_tables, demo_urls
        from tablejack.server.socket.gate import FRAME_MAX_BYTES
        from tablejack.server.socket.transport import event_loop, protocol_class
        from tablejack.server.support.integrity import SignatureError, key_id, load_public_key
        from tablejack.server.support.tls import TLSConfigError, tls_context
        from tablejack.store import async_url

        if log_format not in ("json", "text") or log_level.lower() not in (
            "debug",
            "info",
            "warning",
            "error",
            "critical",
        ):
            typer.echo(
                "tablejack serve: --log-format is json or text, --log-level debug, info, "
                "warning, error or critical. The server did not start.",
                err=True,
            )
            raise typer.Exit(code=2)
        try:
            networks = [ipaddress.ip_network(item, strict=False) for item in metrics_from or []]
        except ValueError as error:
            typer.echo(
                f"tablejack serve: --metrics-from: {error}. The server did not start.", err=True
            )
            raise typer.Exit(code=2) from None
        floor_of_processes = async_url(db).startswith("postgresql")
        tables_file, table_ids = _tables_option(tables, floor_of_processes)
        settings = _server_settings(tables_file) if tables_file is not None else {}
        tls_cert = tls_cert or settings.get("tls_cert")
        tls_key = tls_key or settings.get("tls_key")
        release_manifest = release_manifest or settings.get("release_manifest")
        manifest_public_key = manifest_public_key or settings.get("manifest_public_key")
        checkpoint_key = checkpoint_key or settings.get("checkpoint_key")
        checkpoint_log = checkpoint_log or settings.get("checkpoint_log")
        if checkpoint_key is None and demo and not unsigned:
            checkpoint_key = demo_key(db)
        if checkpoint_key is None and not unsigned:
            typer.echo(
                "tablejack serve: no checkpoint key. Make one with `tablejack keygen --out DIR` "
                "and give --checkpoint-key DIR/checkpoint.key (or run --unsigned for "
                "development). The server did not start.",
                err=True,
            )
            raise typer.Exit(code=2)
        signing = None
        if checkpoint_key is not None:
            from tablejack.server.http.trust import CheckpointSettings

            signing = CheckpointSettings(
                checkpoint_key,
                checkpoint_log or checkpoint_key.parent / "checkpoints.jsonl",
                checkpoint_seconds,
                checkpoint_events,
            )
        try:
            tls = tls_context(tls_cert, tls_key)
            signer = load_public_key(manifest_public_key) if manifest_public_key else None
            if signing is not None:
                from tablejack.store.keys import load_private_key

                checkpoint_id = key_id(load_private_key(signing.key).public_key())
        except (TLSConfigError, SignatureError) as error:
            typer.echo(f"tablejack serve: {error} The server did not start.", err=True)
            raise typer.Exit(code=2) from None
        configs = load_tables_file(tables_file) if tables_file is not None else []
        setup = None
        if demo:
            known = {c.id for c in configs}
            configs += [c for c in demo_tables() if c.id not in known]
            setup = demo_setup
        sas_terminals = _sas_option(sas or [], tables_file)
        if sas_terminals:
            setup = _with_sas(setup, sas_terminals, db)
        scheme, ws_scheme = ("https", "wss") if tls is not None else ("http", "ws")
        lease = single = None
        if floor_of_processes:  # one floor, several processes: tables by lease
            import socket

            shown = socket.getfqdn() if host in ("0.0.0.0", "::") else host
            lease = LeaseSettings(
                url=advertise or f"{scheme}://{shown}:{port}",
                seconds=lease_seconds,
                tables=table_ids,
                share=share,
                name=member or "",
            )
        else:  # SQLite: one process per file
            try:
                single = hold_single_process(db)
            except SingleProcessError as error:
                typer.echo(f"tablejack serve: {error} The server did not start.", err=True)
                raise typer.Exit(code=2) from None
        application = create_app(
            db,
            tables=configs,
            setup=_settle_heap_after(setup),
            broadcast_interval=batch_ms / 1000,
            commit_window=commit_ms / 1000,
            step_window=step_ms / 1000,
            step_wait=step_wait_ms / 1000,
            reader_port=reader_port,
            reader_host=host,
            reader_tls=tls,
            release_manifest=release_manifest,
            manifest_public_key=manifest_public_key,
            checkpoints=signing,
            demo=demo,
            lease=lease,
            metrics_from=networks,
            body_max_bytes=body_max_bytes,
            forwarded_allow_ips=forwarded_allow_ips,
        )
        base = f"{scheme}://{host}:{port}"
        typer.echo(f"tablejack table server on {base} (database {db})")
        typer.echo(f"  terminals connect to {ws_scheme}://{host}:{port}/ws")
        if reader_port is not None:
            typer.echo(f"  card readers on TCP port {reader_port}" + (" over TLS" if tls else ""))
        for entry in sas_terminals:
            typer.echo(f"  SAS: {entry.terminal} at address {entry.address} on {entry.endpoint}")
        if tls is None and host not in ("127.0.0.1", "localhost", "::1"):
            typer.echo(
                "  WARNING: plain HTTP on a network address: tokens, wagers and cards travel "
                "unencrypted; give --tls-cert and --tls-key, or put a TLS-terminating proxy "
                "in front (docs/server.md, TLS)."
            )
        if lease is not None:
            typer.echo(
                f"  one process of the floor: tables by {lease.seconds:g} s lease "
                f"({'every table' if table_ids is None else ', '.join(sorted(table_ids))}"
                f"{'' if share is None else f', {share} at most'}), reached at {lease.url}"
            )
        if signer is not None:
            typer.echo(f"  release manifest signatures checked with key {key_id(signer)}")
        if signing is not None:
            typer.echo(
                f"  checkpoints signed with key {checkpoint_id[:16]}… and appended to "
                f"{signing.file}"
            )
        else:
            typer.echo("  WARNING: --unsigned: no signed checkpoints (development only)")
        typer.echo(f"  event loop: {event_loop()}")
        typer.echo(
            f"  steps gathered for {step_ms:g} ms (a decision round's up to "
            f"{max(step_ms, step_wait_ms):g} ms), commits for {commit_ms:g} ms"
            + (f", updates at least {batch_ms:g} ms apart" if batch_ms else "")
        )
        if demo:
            for line in demo_urls(base, configs):
                typer.echo("  " + line)
        from tablejack.server.http.health import run_server
        from tablejack.server.support.logs import configure

        configure(log_format, log_level)  # the server's and uvicorn's lines, with the time
        try:
            run_server(  # drains on SIGTERM (server.health)
                application,
                drain_seconds,
                host=host,
                port=port,
                log_config=None,  # server.logs configured them
                access_log=log_level.lower() in ("debug", "info"),
                proxy_headers=False,  # the app's own, with --forwarded-allow-ips (server.app)
                ws=protocol_class(),  # uvicorn's sans-I/O protocol, fewer pauses
                loop=event_loop(),  # uvloop where installed
                ws_per_message_deflate=False,
                ws_max_size=FRAME_MAX_BYTES,  # a bigger frame closes with 1009 (server.gate)
                ssl_certfile=tls_cert if tls is not None else None,
                ssl_keyfile=tls_key if tls is not None else None,
            )
        finally:
            if single is not None:  # the SQLite file is free for the next serve
                single.close()

    @app.command("verify-log")
    def verify_log(
        db: Annotated[str, typer.Option(help="Database: SQLite file or URL.")] = DEFAULT_DB,
        public_key: Annotated[
            list[Path] | None,
            typer.Option(
                help="Public key(s) of the checkpoint signer (PEM; repeat for keys rotated)."
            ),
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
            typer.Option(
                help="Events no signed checkpoint covers are problems (default: with a key)."
            ),
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

    @app.command()
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
    app.add_typer(tokens, name="tokens")

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
            f"{_time(issued.credential.expires_us)} UTC"
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
                f"{_time(found.expires_us)}" + (f" at {found.terminal}" if found.terminal else "")
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

    @app.command()
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


def _tables_option(value: str | None, leased: bool) -> tuple[Path | None, frozenset[str] | None]:
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


def _register_sas(app: typer.Typer) -> None:
    @app.command("sas-poll")
    def sas_poll(
        endpoint: Annotated[str, typer.Argument(help="tcp://HOST:PORT or a serial device.")],
        address: Annotated[int, typer.Option(help="The gaming machine's SAS address.")] = 1,
        timeout: Annotated[float, typer.Option(help="Seconds to wait for an answer.")] = 0.5,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Poll one terminal's SAS link as a host would: its machine ID, meters and the
        events waiting (docs/sas.md)."""
        from tablejack.server.links.sas.poll import BadReplyError, describe

        try:
            found = describe(endpoint, address, timeout=timeout)
        except (BadReplyError, OSError, ValueError) as error:
            typer.echo(f"tablejack sas-poll: {error}", err=True)
            raise typer.Exit(code=1) from None
        if as_json:
            typer.echo(json.dumps(found, indent=2))
            return
        machine = found["machine"]
        typer.echo(
            f"SAS {found['sas_version']} machine {found['serial']} at address {address}: game "
            f"{machine['game_id']}, paytable {machine['paytable']}, denomination code "
            f"{machine['denomination_code']:02X}"
        )
        for name, value in found["meters"].items():
            typer.echo(f"  meter {name:<28} {value:>12}")
        typer.echo("  events: " + (", ".join(found["events"]) or "none"))


def _sas_option(specs: list[str], tables: Path | None) -> list[Any]:
    """``--sas`` values and the tables file's ``[[sas]]`` entries (``terminal``,
    ``endpoint``, ``address``); a bad one stops the server before it starts."""
    import tomllib

    from tablejack.server.links.sas.link import SasTerminal, parse_spec

    try:
        out = [parse_spec(spec) for spec in specs]
        if tables is not None:
            with tables.open("rb") as handle:
                for entry in tomllib.load(handle).get("sas", []):
                    out.append(
                        parse_spec(
                            f"{entry['terminal']}={entry['endpoint']},"
                            f"address={int(entry.get('address', 1))}"
                        )
                    )
        known = {entry.terminal for entry in out}
        if len(known) != len(out):
            raise ValueError("a terminal has one SAS link")
    except (ValueError, KeyError, TypeError) as error:
        typer.echo(f"tablejack serve: --sas: {error}. The server did not start.", err=True)
        raise typer.Exit(code=2) from None
    return [SasTerminal(e.terminal, e.endpoint, e.address) for e in out]


def _with_sas(setup: Any, terminals: list[Any], db: str) -> Any:
    """The floor's start-up, then its SAS link (docs/sas.md)."""

    async def run(floor: Any) -> None:
        from tablejack.server.links.interface import attach
        from tablejack.server.links.sas.link import SasLink

        if setup is not None:
            await setup(floor)
        link = SasLink(terminals, reader_url=db)
        await link.start(floor)
        attach(floor, link)

    return run


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
