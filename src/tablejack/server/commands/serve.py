"""``tablejack serve``: the table server — terminals, dealer console, supervisor API and pages
(docs/server.md, "Running it").

Heavy modules (the web framework, the database drivers) are imported only when the command runs.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from tablejack.server.commands.options import (
    BODY_MAX_BYTES,
    COMMIT_MS,
    DEFAULT_DB,
    STEP_MS,
    STEP_WAIT_MS,
    demo_key,
    sas_option,
    server_settings,
    tables_option,
)
from tablejack.server.support.heap import FULL_COLLECTION_SECONDS, OldestCollection, settled_after

__all__ = ["serve"]


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
    loop_stall: Annotated[
        float,
        typer.Option(
            help="PostgreSQL: the leases are renewed on a thread of their own while the "
            "event loop turns; one that has not turned for this long (seconds) stops their "
            "renewal, and the process loses its tables (docs/server.md)."
        ),
    ] = 30.0,
    gc_full_seconds: Annotated[
        float,
        typer.Option(
            help="Collect the garbage collector's oldest generation every this many seconds "
            "(its thresholds, tuned for the rounds' short-lived objects, would leave it "
            "uncollected for hours: the memory of closed sockets and ended rounds held in "
            "reference cycles; docs/server.md)."
        ),
    ] = FULL_COLLECTION_SECONDS,
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
        typer.Option(help="Release manifest of the supervisor's software check (PA 605a.4(c))."),
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
            help="A terminal's SAS link: TERMINAL=ENDPOINT[,address=N][,allow=IP]..., "
            "ENDPOINT a serial device or tcp://HOST:PORT; allow= the host(s) that may hold a "
            "TCP line (default: this machine only) (repeatable; docs/sas.md)."
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
        typer.echo(f"tablejack serve: --metrics-from: {error}. The server did not start.", err=True)
        raise typer.Exit(code=2) from None
    if not loop_stall > 0:  # (NaN too)
        typer.echo(
            f"tablejack serve: --loop-stall is a positive number of seconds, not {loop_stall}. "
            "The server did not start.",
            err=True,
        )
        raise typer.Exit(code=2)
    if not gc_full_seconds > 0:  # (NaN too)
        typer.echo(
            "tablejack serve: --gc-full-seconds is a positive number of seconds, not "
            f"{gc_full_seconds}. The server did not start.",
            err=True,
        )
        raise typer.Exit(code=2)
    floor_of_processes = async_url(db).startswith("postgresql")
    tables_file, table_ids = tables_option(tables, floor_of_processes)
    settings = server_settings(tables_file) if tables_file is not None else {}
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
    sas_terminals = sas_option(sas or [], tables_file)
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
            loop_stall=loop_stall,
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
    raise_open_files()
    collection = OldestCollection(gc_full_seconds)
    application = create_app(
        db,
        tables=configs,
        setup=settled_after(setup, collection),
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
    application.state.metrics.heap = collection  # its collections on /metrics
    base = f"{scheme}://{host}:{port}"
    typer.echo(f"tablejack table server on {base} (database {db})")
    typer.echo(f"  terminals connect to {ws_scheme}://{host}:{port}/ws")
    if reader_port is not None:
        typer.echo(f"  card readers on TCP port {reader_port}" + (" over TLS" if tls else ""))
    from tablejack.server.links.sas.link import listens_beyond_loopback

    for entry in sas_terminals:
        allow = ", ".join(entry.allow) or "this machine only"
        typer.echo(
            f"  SAS: {entry.terminal} at address {entry.address} on {entry.endpoint}"
            + (f" (hosts allowed: {allow})" if entry.endpoint.startswith("tcp://") else "")
        )
    if any(listens_beyond_loopback(entry) for entry in sas_terminals):
        typer.echo(
            "  WARNING: SAS on a network address: SAS has no authentication or encryption; "
            "the line must be reachable only from the slot network, and only the allow= "
            "hosts may hold it (docs/sas.md, Security of the line)."
        )
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
            f"  checkpoints signed with key {checkpoint_id[:16]}… and appended to {signing.file}"
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


def _with_sas(setup: Any, terminals: list[Any], db: str) -> Any:
    """The floor's start-up, then its SAS link (docs/sas.md)."""

    async def run(floor: Any) -> None:
        from tablejack.server.links.interface import announce, attach
        from tablejack.server.links.sas.link import SasLink

        if setup is not None:
            await setup(floor)
        link = SasLink(terminals, reader_url=db)
        await link.start(floor)
        attach(floor, link)
        await announce(floor, link)  # a floor of processes: the others forward here

    return run


def raise_open_files() -> int:
    """Raise the process's soft limit of open files to its hard limit: a socket is a file, and
    a floor's process holds one for each terminal (5,000 for 500 tables × 20 terminals on two
    processes) beside its database connections, while a login shell's soft limit is often
    1,024 — past it the server refuses connections (``EMFILE``). Returns the limit now.
    systemd sets it with ``LimitNOFILE``."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
