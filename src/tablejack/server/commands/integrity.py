"""``tablejack verify-install``: software authentication of the installed package
(PA 605a.4(c)); see :mod:`tablejack.server.support.integrity`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def _refuse(message: str) -> typer.Exit:
    typer.echo(f"verify-install: {message}", err=True)
    return typer.Exit(code=2)


def register(app: typer.Typer) -> None:
    """Add ``verify-install`` to the CLI."""

    @app.command("verify-install")
    def verify_install(
        manifest: Annotated[
            Path | None,
            typer.Option(help="Release manifest to verify against (default: the package's)."),
        ] = None,
        write_manifest: Annotated[
            Path | None,
            typer.Option(help="Write the manifest of the installed files here and exit."),
        ] = None,
        sign_key: Annotated[
            Path | None,
            typer.Option(
                help="With --write-manifest: sign it with this Ed25519 private key (PEM); "
                "the signature goes to the manifest's path + .sig."
            ),
        ] = None,
        public_key: Annotated[
            Path | None,
            typer.Option(
                help="Check the manifest's signature (PATH.sig) with this Ed25519 public key "
                "(PEM) before comparing any file."
            ),
        ] = None,
        generate_key: Annotated[
            Path | None,
            typer.Option(help="Make a release signing key pair in this directory and exit."),
        ] = None,
        root: Annotated[
            Path | None,
            typer.Option(
                help="Package directory to hash (default: the installed tablejack package)."
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    ) -> None:
        """Verify every file of the installed package against the release manifest (SHA-256)
        and, with --public-key, the manifest's Ed25519 signature first; exit 1 on any
        difference, an invalid or missing signature, or when no manifest is found
        (PA 605a.4(c))."""
        from tablejack.server.support.integrity import (
            SignatureError,
            build_manifest,
            generate_key_pair,
            key_id,
            load_private_key,
            load_public_key,
            manifest_hash,
            verify_release,
        )
        from tablejack.server.support.integrity import (
            write_manifest as write,
        )

        if generate_key is not None:
            if write_manifest or sign_key or public_key or manifest:
                raise _refuse("--generate-key makes a key pair and is used alone.")
            try:
                private, public = generate_key_pair(generate_key)
            except (SignatureError, OSError) as error:
                raise _refuse(str(error)) from None
            typer.echo(f"key {key_id(load_public_key(public))}")
            typer.echo(f"private key (sign releases with it; keep it offline): {private}")
            typer.echo(f"public key (give it to the floor and the regulator): {public}")
            return
        if sign_key is not None and write_manifest is None:
            raise _refuse("--sign-key signs the manifest written by --write-manifest; give both.")
        if write_manifest is not None:
            try:
                key = load_private_key(sign_key) if sign_key is not None else None
            except SignatureError as error:
                raise _refuse(str(error)) from None
            actual = build_manifest(root)
            signature = write(write_manifest, actual, key)
            typer.echo(f"manifest {manifest_hash(actual)} ({len(actual['files'])} files)")
            typer.echo(f"written to {write_manifest}")
            if key is not None:
                typer.echo(f"signed with key {key_id(key.public_key())}: {signature}")
            return
        report = verify_release(manifest, public_key=public_key, root=root)
        if as_json:
            typer.echo(json.dumps(report))
        elif report["manifest_hash"] is None or report["signature"] in ("missing", "invalid"):
            typer.echo(
                f"FAIL {report['problems'][0]}; the running files hash to {report['running_hash']}"
            )
        else:
            for line in report["problems"]:
                typer.echo(line)
            if report["signature"] == "verified":
                typer.echo(f"signature verified: key {report['key_id']}")
            verdict = "OK" if report["ok"] else f"FAIL {len(report['problems'])} difference(s)"
            typer.echo(f"{verdict}: manifest {report['manifest_hash']}, {report['files']} files")
        if not report["ok"]:
            raise typer.Exit(code=1)
