"""``tablejack verify-install``: software authentication of the installed package
(PA 605a.4(c)); see :mod:`tablejack.server.integrity`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


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
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    ) -> None:
        """Verify every file of the installed package against the release manifest (SHA-256);
        exit 1 on any difference or when no manifest is found (PA 605a.4(c))."""
        from tablejack.server.integrity import (
            MANIFEST_NAME,
            build_manifest,
            compare,
            installed_manifest,
            manifest_hash,
            package_root,
        )

        actual = build_manifest()
        if write_manifest is not None:
            write_manifest.write_text(
                json.dumps(actual, sort_keys=True, indent=1) + "\n", encoding="utf-8"
            )
            typer.echo(f"manifest {manifest_hash(actual)} ({len(actual['files'])} files)")
            typer.echo(f"written to {write_manifest}")
            return
        release = installed_manifest(manifest)
        if release is None:
            where = manifest or package_root() / MANIFEST_NAME
            message = f"no release manifest at {where}"
            if as_json:
                typer.echo(json.dumps({"ok": False, "problems": [message]}))
            else:
                typer.echo(f"FAIL {message}; the running files hash to {manifest_hash(actual)}")
            raise typer.Exit(code=1)
        problems = compare(release, actual)
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "ok": not problems,
                        "manifest_hash": manifest_hash(release),
                        "running_hash": manifest_hash(actual),
                        "files": len(actual["files"]),
                        "problems": problems,
                    }
                )
            )
        else:
            for line in problems:
                typer.echo(line)
            verdict = "OK" if not problems else f"FAIL {len(problems)} difference(s)"
            typer.echo(
                f"{verdict}: manifest {manifest_hash(release)}, {len(release['files'])} files"
            )
        if problems:
            raise typer.Exit(code=1)
