"""The math lab's commands: ``edge``, ``dealer-odds``, ``strategy``, ``simulate``, ``parsheet``,
``paytable``, ``exposure`` (``warm-up``, which compiles their kernels ahead of time, is
:mod:`tablejack.lab.warmup`).

:func:`register` mounts them on the ``tablejack`` CLI. numpy and numba load inside the command
bodies, so ``tablejack --help`` stays fast. Every command takes ``--json`` and prints one JSON
object; a bad game, wager, rule combination or option prints a sentence and exits with code 2.
While a command works, :mod:`tablejack.progress` shows on standard error how far it is and,
told by :mod:`tablejack.lab.compilation`, when numba is compiling the kernels.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from tablejack.progress import Feedback, Step

__all__ = ["register"]

errors = Console(stderr=True, highlight=False, soft_wrap=True)
console = Console(highlight=False, soft_wrap=True)

GameOption = Annotated[
    str, typer.Option("--game", help="Game id: classic, hybrid, hybrid-shared, multi-action.")
]
RulesOption = Annotated[
    Path | None, typer.Option("--rules", help="Rules file (TOML); default: the game's defaults.")
]
DecksOption = Annotated[int | None, typer.Option("--decks", help="Number of decks.")]
H17Option = Annotated[
    bool | None, typer.Option("--h17/--s17", help="Dealer hits (H17) or stands on soft 17.")
]
DasOption = Annotated[bool | None, typer.Option("--das/--no-das", help="Double after split.")]
SplitOption = Annotated[
    int | None, typer.Option("--split-hands", help="Most hands from splitting one hand.")
]
RsaOption = Annotated[bool | None, typer.Option("--rsa/--no-rsa", help="Resplit aces.")]
SurrenderOption = Annotated[
    bool | None, typer.Option("--surrender/--no-surrender", help="Late surrender.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
BlackjackPaysOption = Annotated[
    str | None, typer.Option("--blackjack-pays", help="Odds of a player Blackjack, e.g. 6:5.")
]
PeekOption = Annotated[
    bool | None, typer.Option("--peek/--no-peek", help="The dealer peeks for Blackjack (classic).")
]
DoubleOnOption = Annotated[
    str | None, typer.Option("--double-on", help="Totals that may double: any, 9-11, 10-11.")
]
HsaOption = Annotated[bool | None, typer.Option("--hsa/--no-hsa", help="Split aces may hit.")]

RULE_FLAGS: dict[str, Any] = {
    "decks": DecksOption,
    "h17": H17Option,
    "das": DasOption,
    "split_hands": SplitOption,
    "rsa": RsaOption,
    "surrender": SurrenderOption,
    "blackjack_pays": BlackjackPaysOption,
    "peek": PeekOption,
    "double_on": DoubleOnOption,
    "hsa": HsaOption,
}
"""The rule options every analysing command takes (``edge``, ``strategy``, ``simulate``,
``parsheet``), by parameter name: each unset by default, the rules file's or the game's value
then holds; a rule the game does not permit is kept as a labelled what-if."""


def with_rule_flags(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the options of :data:`RULE_FLAGS` added to its signature (as typer
    reads it) and handed to it as one mapping, its ``flags`` parameter: the options are
    declared once for every command that takes them."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "flags"]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=kind)
        for name, kind in RULE_FLAGS.items()
    ]

    @functools.wraps(command)
    def with_flags(**options: Any) -> None:
        flags = {name: options.pop(name, None) for name in RULE_FLAGS}
        command(**options, flags=flags)

    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
    with_flags.__signature__ = signature.replace(parameters=keyword + added)  # type: ignore[attr-defined]
    with_flags.__annotations__ = {
        **{p.name: p.annotation for p in own},
        **RULE_FLAGS,
        "return": None,
    }
    return with_flags


class _InputError(Exception):
    """A user error to print and exit 2 on."""


def _fail(message: str) -> typer.Exit:
    errors.print(f"[bold red]error:[/] {message}")
    return typer.Exit(code=2)


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Turn the lab's and the engine's input errors into a message and exit code 2."""
    try:
        yield
    except typer.Exit:
        raise
    except (ValueError, ConnectionError, OSError, _InputError) as error:
        rule = getattr(error, "rule", "")
        text = str(error) + (f" ({rule})" if rule and rule not in str(error) else "")
        raise _fail(text) from None


def _what_if_rules(game: str, rules_file: Path | None, **flags: Any) -> tuple[Any, Any]:
    """The game and its rules, rule sets the game does not permit kept as labelled what-ifs
    (:mod:`tablejack.lab.whatif`)."""
    from tablejack.lab.games import lab_game
    from tablejack.lab.whatif import lab_rules

    return lab_game(game), lab_rules(game, rules_file, **flags)


def _print_what_if(lab: Any) -> None:
    for label in lab.labels:
        console.print(f"[bold yellow]{label}[/]")


def _print_json(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, indent=2, default=_json_default))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


@contextmanager
def _working(
    label: str, *, as_json: bool, unit: str = "", announce: bool = False
) -> Iterator[Step]:
    """The command's work as one step on standard error (:mod:`tablejack.progress`), which also
    says "compiling the kernels (first run only)…" while numba compiles in this process."""
    from tablejack.lab import compilation

    feedback = Feedback(json_output=as_json)
    with (
        feedback.step(label, unit=unit, announce=announce) as step,
        compilation.watch_compilation(feedback.compile_started, feedback.compile_finished),
    ):
        yield step


def _compile_here(
    spec: Any, analysis: Any, game_rules: Any, workers: int | None, scheduler: str | None
) -> None:
    """Before a simulation on local worker processes, play one block of shoes in this process:
    a cold numba cache is then compiled here, where the compile message can be shown, and the
    workers find the kernel compiled instead of each compiling it unseen. (A Dask cluster's
    workers compile on their own machines.) The result is discarded; a run's figures depend
    only on its seed."""
    if scheduler is None and workers != 1:
        spec.simulate(analysis, game_rules=game_rules, hands=1, seed=0, workers=1)


@with_rule_flags
def edge(
    game: GameOption = "classic",
    rules_file: RulesOption = None,
    wager: Annotated[
        str,
        typer.Option(
            "--wager",
            help="Wager: blackjack (main), insurance, ez_bust, buzzer_beater, royal_match, bet_the_set, kings_bounty.",
        ),
    ] = "blackjack",
    as_json: JsonOption = False,
    flags: dict[str, Any] | None = None,
) -> None:
    """The exact house edge of a wager under the generated basic strategy (fresh shoe)."""
    with _clean_errors(), _working("exact analysis", as_json=as_json):
        spec, lab = _what_if_rules(game, rules_file, **(flags or {}))
        rules, analysis = lab.rules, lab.analysis
        name = spec.wager(wager)
        figures = spec.exact(analysis, name, rules)
        payload = {
            "game": game,
            "wager": name,
            "rules": {**lab.rules_mapping(), "analysis": analysis.to_json()},
            "what_if": lab.what_if_json(),
            "house_edge": figures["house_edge"],
            "method": "exact",
            "details": {k: v for k, v in figures.items() if k != "house_edge"},
        }
    if as_json:
        _print_json(payload)
        return
    _print_what_if(lab)
    console.print(
        f"{game} {name} ({analysis.abbreviation()}): house edge "
        f"[bold]{payload['house_edge'] * 100:.4f}%[/] (exact)"
    )


def dealer_odds(
    decks: Annotated[
        str, typer.Option("--decks", help="Decks (1-8) or 'inf' for an infinite deck.")
    ] = "6",
    h17: Annotated[
        bool, typer.Option("--h17/--s17", help="Dealer hits (H17) or stands on soft 17.")
    ] = False,
    post_peek: Annotated[
        bool, typer.Option("--post-peek", help="Given the dealer has no Blackjack.")
    ] = False,
    removed: Annotated[
        str, typer.Option("--removed", help="Cards already seen, e.g. '5 5 T'.")
    ] = "",
    as_json: JsonOption = False,
) -> None:
    """The dealer's final-outcome probabilities by up card."""
    with _clean_errors(), _working("dealer probabilities", as_json=as_json):
        from tablejack.lab.exact import dealer_table
        from tablejack.lab.model import DEALER_OUTCOMES, AnalysisRules

        deck_count = _parse_decks(decks)
        rules = AnalysisRules(decks=deck_count, h17=h17)
        table = dealer_table(rules, post_peek=post_peek, removed=removed.replace(",", " ").split())
    if as_json:
        _print_json(
            {
                "decks": deck_count if deck_count is not None else "inf",
                "h17": h17,
                "post_peek": post_peek,
                "removed": removed.replace(",", " ").split(),
                "upcards": table,
            }
        )
        return
    console.print(
        f"Dealer outcomes, {rules.deck_label}, {'H17' if h17 else 'S17'}"
        f"{', post-peek' if post_peek else ''}"
    )
    console.print("up   " + " ".join(f"{o:>9}" for o in DEALER_OUTCOMES))
    for up, probs in table.items():
        console.print(f"{up:<4} " + " ".join(f"{probs[o]:>9.6f}" for o in DEALER_OUTCOMES))


def _parse_decks(text: str) -> int | None:
    if text.strip().lower() in ("inf", "infinite", "0"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise _InputError(f"--decks {text!r} must be a whole number 1-8 or 'inf'.") from None
    if not 1 <= value <= 8:
        raise _InputError(f"--decks {value} must be from 1 to 8 (or 'inf').")
    return value


@with_rule_flags
def strategy(
    game: GameOption = "classic",
    rules_file: RulesOption = None,
    output_format: Annotated[str, typer.Option("--format", help="text, csv or json.")] = "text",
    as_json: JsonOption = False,
    flags: dict[str, Any] | None = None,
) -> None:
    """The basic strategy generated from the rules (hard, soft and pair tables)."""
    with _clean_errors():
        if output_format not in ("text", "csv", "json"):
            raise _InputError(f"--format {output_format!r} must be text, csv or json.")
        with _working("strategy", as_json=as_json or output_format == "json"):
            spec, lab = _what_if_rules(game, rules_file, **(flags or {}))
            from tablejack.lab.exact import analyse

            analysis = lab.analysis
            result = analyse(analysis)
    if as_json or output_format == "json":
        _print_json(
            {
                "game": spec.id,
                "rules": analysis.to_json(),
                "what_if": lab.what_if_json(),
                **result.strategy.charts(),
                "legend": {
                    "H": "hit",
                    "S": "stand",
                    "D": "double, else hit",
                    "Ds": "double, else stand",
                    "R": "surrender, else hit",
                    "Rs": "surrender, else stand",
                    "P": "split",
                },
                "composition_exceptions": [
                    {k: e[k] for k in ("up", "hand", "best", "gain")}
                    for e in result.composition_exceptions()
                ],
            }
        )
    elif output_format == "csv":
        print("".join(f"# {label}\n" for label in lab.labels), end="")
        print(result.strategy.to_csv(), end="")
    else:
        print("".join(f"{label}\n" for label in lab.labels), end="")
        print(f"{spec.id} basic strategy, {analysis.abbreviation()}")
        print(result.strategy.to_text(), end="")


@with_rule_flags
def simulate(
    game: GameOption = "classic",
    rules_file: RulesOption = None,
    hands: Annotated[int, typer.Option("--hands", help="Hands (rounds) to simulate.")] = 1_000_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the shoes.")] = 0,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Processes (default: all cores).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler address.")
    ] = None,
    as_json: JsonOption = False,
    flags: dict[str, Any] | None = None,
) -> None:
    """Simulate the game with its numba kernel; house edge per wager with standard errors."""
    with _clean_errors():
        if hands < 1:
            raise _InputError(f"--hands {hands} must be at least 1.")
        if seed < 0:
            raise _InputError(f"--seed {seed} must not be negative.")
        if workers is not None and workers < 1:
            raise _InputError(f"--workers {workers} must be at least 1.")
        with _working(
            f"simulating {hands:,} hands", as_json=as_json, unit="blocks", announce=True
        ) as step:
            spec, lab = _what_if_rules(game, rules_file, **(flags or {}))
            game_rules, analysis = lab.rules, lab.analysis
            _compile_here(spec, analysis, game_rules, workers, scheduler)
            result = spec.simulate(
                analysis,
                game_rules=game_rules,
                hands=hands,
                seed=seed,
                workers=workers,
                scheduler=scheduler,
                progress=step.update,
            )
        payload = {"game": spec.id, **result.to_json(), "what_if": lab.what_if_json()}
    if as_json:
        _print_json(payload)
        return
    _print_what_if(lab)
    console.print(
        f"{payload['hands']:,} hands in {payload['seconds']:.2f} s "
        f"({payload['hands_per_second'] / 1e6:.2f} M hands/s, {payload['workers']} worker(s))"
    )
    for name, figures in payload["wagers"].items():
        low, high = figures["ci95"]
        console.print(
            f"  {name}: house edge {figures['house_edge'] * 100:.4f}% ± "
            f"{figures['stderr'] * 100:.4f}% (95%: {low * 100:.4f}% to {high * 100:.4f}%)"
        )


@with_rule_flags
def parsheet(
    rules_file: Annotated[Path, typer.Option("--rules", help="Rules file (TOML).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the report.")],
    game: Annotated[
        str | None, typer.Option("--game", help="Game id (default: the file's).")
    ] = None,
    hands: Annotated[
        int, typer.Option("--hands", help="Hands simulated for the distribution figures.")
    ] = 2_000_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated shoes.")] = 1,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Processes (default: all cores).")
    ] = None,
    variations: Annotated[
        bool,
        typer.Option("--variations/--no-variations", help="The rule-variation table (exact)."),
    ] = True,
    exposure_shoes: Annotated[
        int,
        typer.Option("--exposure-shoes", help="Shoes of the advantage-play section (0: none)."),
    ] = 1000,
    as_json: JsonOption = False,
    flags: dict[str, Any] | None = None,
) -> None:
    """Write a par sheet (HTML, JSON and PNG plots) for every wager of a rules file."""
    with _clean_errors():
        if hands < 1:
            raise _InputError(f"--hands {hands} must be at least 1.")
        if exposure_shoes < 0:
            raise _InputError(f"--exposure-shoes {exposure_shoes} must not be negative.")
        from tablejack.core.rules import read_toml
        from tablejack.lab.parsheet import write_parsheet

        game_id = game or str(read_toml(rules_file).get("game", "classic"))
        with _working(
            f"par sheet ({hands:,} hands simulated)", as_json=as_json, unit="blocks", announce=True
        ) as step:
            spec, lab = _what_if_rules(game_id, rules_file, **(flags or {}))
            rules, analysis = lab.rules, lab.analysis
            _compile_here(spec, analysis, rules, workers, None)

            def update(done: int, total: int) -> None:
                step.update(done, total)
                if done >= total:
                    step.relabel("par sheet: rule variations, plots and report")

            report = write_parsheet(
                spec,
                rules,
                analysis,
                out,
                hands=hands,
                seed=seed,
                workers=workers,
                progress=update,
                exposure_shoes=exposure_shoes,
                what_if=lab,
                variations=variations,
            )
    if as_json:
        _print_json(
            {
                "out": str(out),
                "files": report["files"],
                "what_if": report["what_if"],
                "player_edge_wagers": report["player_edge_wagers"],
                "house_edge": {w["wager"]: w["house_edge"] for w in report["wagers"]},
            }
        )
        return
    _print_what_if(lab)
    for wager in report["wagers"]:
        console.print(f"{wager['wager']}: house edge {wager['house_edge'] * 100:.4f}%")
    if report["player_edge_wagers"]:
        console.print(f"[bold red]player edge:[/] {', '.join(report['player_edge_wagers'])}")
    console.print(f"wrote {', '.join(report['files'])} in {out}")


def paytable(
    wager: Annotated[
        str,
        typer.Option(
            "--wager",
            help="Side wager: ez_bust (classic), buzzer_beater (hybrid), royal_match, "
            "bet_the_set, kings_bounty (hybrid-shared).",
        ),
    ],
    target_edge: Annotated[
        str, typer.Option("--target-edge", help="House edge to aim at: 0.05, 5% or 1/20.")
    ],
    game: GameOption = "classic",
    decks: DecksOption = None,
    rules_file: RulesOption = None,
    count: Annotated[int, typer.Option("--count", help="Paytables to find.")] = 10,
    max_pay: Annotated[
        int | None,
        typer.Option("--max-pay", help="Highest pay, N to 1 (default: the base's, at least 20)."),
    ] = None,
    min_pay: Annotated[int, typer.Option("--min-pay", help="Lowest pay, N to 1.")] = 1,
    pays: Annotated[
        str, typer.Option("--pays", help="round (every N to 20, round figures above) or integers.")
    ] = "round",
    pay: Annotated[
        list[str] | None, typer.Option("--pay", help="A line's range, LINE=LOW:HIGH (repeatable).")
    ] = None,
    hold: Annotated[
        list[str] | None, typer.Option("--hold", help="Keep a line at its base pay (repeatable).")
    ] = None,
    form: Annotated[
        str, typer.Option("--form", help="EZ Bust: regulation (one line) or by-up-card.")
    ] = "regulation",
    out: Annotated[
        Path | None, typer.Option("--out", help="Directory for a par sheet per paytable.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """The paytables of a side wager nearest a target house edge (integer odds, pays never
    falling as the hand gets rarer), with exact house edge, hit frequency and variance."""
    from tablejack.lab import paytable as design

    with _clean_errors():
        target = design.parse_edge(target_edge)
        ranges = dict(design.parse_pay_range(item) for item in pay or [])
        if pays not in design.PAY_FORMS:
            raise _InputError(f"--pays {pays!r} must be one of {', '.join(design.PAY_FORMS)}.")
        if not 1 <= count <= 1000:
            raise _InputError(f"--count {count} must be from 1 to 1000.")
        lattice = design.Lattice(
            min_pay=min_pay, max_pay=max_pay, pays=pays, ranges=ranges, hold=frozenset(hold or ())
        )
        # the Buzzer Beater and EZ Bust need the exact analysis (seconds); par sheets too
        long = out is not None or game in ("hybrid", "classic")
        with _working("paytable search", as_json=as_json, announce=long) as step:
            spec, lab = _what_if_rules(game, rules_file, decks=decks)
            rules, analysis = lab.rules, lab.analysis
            outcomes = design.wager_outcomes(spec.id, spec.wager(wager), rules, analysis, form=form)
            result = design.search(outcomes, target, count, lattice)
            payload = design.report(result, rules) | {"what_if": lab.what_if_json()}
            if out is not None:
                step.relabel("paytable par sheets")
                payload["out"] = str(out)
                payload["files"] = design.write_parsheets(
                    result, rules, analysis, out, progress=step.update
                )
    if as_json:
        _print_json(payload)
        return
    _print_what_if(lab)
    design.print_report(payload, console)


def exposure(
    game: GameOption = "classic",
    wager: Annotated[
        str, typer.Option("--wager", help="One wager (default: every wager of the game).")
    ] = "all",
    decks: DecksOption = None,
    rules_file: RulesOption = None,
    shoes: Annotated[int, typer.Option("--shoes", help="Seeded shoes to walk.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the shoes.")] = 1,
    spread: Annotated[
        int, typer.Option("--spread", help="Largest bet of the counter's spread, in units.")
    ] = 8,
    max_penetration: Annotated[
        float, typer.Option("--max-penetration", help="Deepest penetration walked (0-1).")
    ] = 0.9,
    validate: Annotated[
        int, typer.Option("--validate", help="Sample shoes checking the linear estimate.")
    ] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Directory for exposure.json and the plot.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """What a card counter gains against each wager as the shoe is dealt (advantage play)."""
    with _clean_errors():
        if shoes < 1:
            raise _InputError(f"--shoes {shoes} must be at least 1.")
        if spread < 1:
            raise _InputError(f"--spread {spread} must be at least 1.")
        if validate < 0:
            raise _InputError(f"--validate {validate} must not be negative.")
        with _working(
            f"exposure ({shoes:,} shoes)", as_json=as_json, unit="steps", announce=True
        ) as step:
            from tablejack.lab import exposure as exposure_module

            spec, lab = _what_if_rules(game, rules_file, decks=decks)
            game_rules, analysis = lab.rules, lab.analysis
            result = exposure_module.exposure(
                spec.id,
                game_rules,
                analysis,
                wagers=None if wager == "all" else [wager],
                shoes=shoes,
                seed=seed,
                max_penetration=max_penetration,
                spread=float(spread),
                validate=validate,
                progress=step.update,
            ) | {"what_if": lab.what_if_json()}
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                (out / "exposure.json").write_text(
                    json.dumps(result, indent=2, default=_json_default), "utf-8"
                )
                exposure_module.plot_exposure(result, out / exposure_module.PLOT_FILE)
    if as_json:
        _print_json(result)
        return
    _print_what_if(lab)
    print(exposure_module.render_text(result), end="")
    if out is not None:
        console.print(f"wrote exposure.json, {exposure_module.PLOT_FILE} in {out}")


def register(app: typer.Typer) -> None:
    """Mount the lab's commands on the ``tablejack`` CLI."""
    app.command("edge")(edge)
    app.command("dealer-odds")(dealer_odds)
    app.command("strategy")(strategy)
    app.command("simulate")(simulate)
    app.command("parsheet")(parsheet)
    app.command("paytable")(paytable)
    app.command("exposure")(exposure)
