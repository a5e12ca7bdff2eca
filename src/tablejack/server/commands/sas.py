"""``tablejack sas-poll``: poll one terminal's SAS link as a host would (docs/sas.md).

The SAS modules are imported only when the command runs.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

__all__ = ["sas_poll"]


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
