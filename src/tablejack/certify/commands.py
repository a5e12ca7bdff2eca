"""The ``tablejack certify`` command (:func:`register` mounts it on the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from tablejack.progress import Feedback

__all__ = ["register"]

errors = Console(stderr=True, highlight=False, soft_wrap=True)
console = Console(highlight=False, soft_wrap=True)


def certify(
    rules: Annotated[
        list[Path],
        typer.Option("--rules", help="Rules file(s) (TOML) to certify; repeat the option."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for certify.json and certify.html.")],
    hands: Annotated[
        int, typer.Option(min=1000, help="Simulated rounds per rules file (edge check).")
    ] = 1_000_000,
    rounds: Annotated[
        int, typer.Option(min=1, help="Bot rounds per rules file for the property runs.")
    ] = 2_000,
    shoes: Annotated[
        int, typer.Option(min=100, help="Shuffled shoes per generator and deck count.")
    ] = 1_000_000,
    seed: Annotated[
        int, typer.Option(help="Seed of the property runs, shoes and simulation.")
    ] = 2026,
    tests: Annotated[
        list[Path] | None,
        typer.Option(
            "--tests", help="Test files or folders to search for clause tests (default: tests/)."
        ),
    ] = None,
    scenarios: Annotated[
        Path | None, typer.Option(help="Scenario folder (default: scenarios/).")
    ] = None,
    test_workers: Annotated[
        int, typer.Option(min=0, help="pytest-xdist workers for the clause tests (0: none).")
    ] = 4,
    workers: Annotated[
        int | None, typer.Option(help="Processes for the simulation (default: all cores).")
    ] = None,
    no_shuffle: Annotated[
        bool, typer.Option("--no-shuffle", help="Skip the shuffle statistics.")
    ] = False,
    generator: Annotated[
        list[str] | None,
        typer.Option(
            "--generator",
            help="Shoe generator(s) to test: seeded, secure (default both; repeat the option).",
        ),
    ] = None,
    no_edges: Annotated[
        bool, typer.Option("--no-edges", help="Skip the exact and simulated edges.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report's summary as JSON.")
    ] = False,
) -> None:
    """Certify rules files: the clause matrix, scenarios, property runs, shuffle statistics and
    every wager's exact and simulated edge; writes certify.json and certify.html.

    Exits 0 when everything passed, 1 on any failure (a clause with no test is listed, not a
    failure), 2 on bad input.
    """
    from tablejack.certify.run import CertifyOptions
    from tablejack.certify.run import certify as run_certify
    from tablejack.core.errors import TablejackError

    options = CertifyOptions(
        rules_files=rules,
        out=out,
        hands=hands,
        rounds=rounds,
        shoes=shoes,
        seed=seed,
        tests=tests or (),
        scenarios=scenarios,
        test_workers=test_workers,
        sim_workers=workers,
        shuffle=not no_shuffle,
        generators=tuple(generator or ("seeded", "secure")),
        edges=not no_edges,
    )
    unknown = set(options.generators) - {"seeded", "secure"}
    if unknown:
        errors.print(
            f"[bold red]error:[/] unknown generator {', '.join(sorted(unknown))}; "
            "known: seeded, secure."
        )
        raise typer.Exit(code=2)
    feedback = Feedback(json_output=as_json)
    try:
        with feedback.step("certifying", announce=True) as step:
            data = run_certify(options, progress=step.relabel)
    except (TablejackError, OSError, RuntimeError, ValueError) as error:
        errors.print(f"[bold red]error:[/] {error}")
        raise typer.Exit(code=2) from None
    for warning in data["warnings"]:
        errors.print(f"[bold yellow]warning:[/] {warning}")
    summary = {
        "passed": data["passed"],
        "failures": data["failures"],
        "summary": data["summary"],
        "report": str(out / "certify.html"),
        "json": str(out / "certify.json"),
    }
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        s = data["summary"]
        console.print(
            f"{s['clauses']} clauses: {s['passed']} passed, {s['failed']} failed, "
            f"{s['no_test']} without a test; {s['tests_run']} clause tests, "
            f"{s['scenarios']} scenarios."
        )
        for failure in data["failures"]:
            console.print(f"[bold red]failed:[/] {failure}")
        console.print(("PASSED" if data["passed"] else "FAILED") + f": {out / 'certify.html'}")
    if not data["passed"]:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Mount ``certify`` on the ``tablejack`` CLI."""
    app.command("certify")(certify)
