"""The ``tablejack`` command line.

``tablejack deal`` plays automated rounds with basic-strategy bots and prints transcripts or a JSON
summary; ``tablejack scenario`` plays a scenario file (round notation) and prints every
settlement; ``tablejack rules`` checks a rules file and prints it in full.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from tablejack.core import notation
from tablejack.core.errors import TablejackError
from tablejack.core.money import format_cents, format_odds
from tablejack.core.records import check_settlements
from tablejack.games import GAMES, export, game, load_rules, scenarios, transcript
from tablejack.games.session import play_rounds
from tablejack.progress import Feedback

__all__ = ["app", "main"]

app = typer.Typer(
    name="tablejack",
    help="Regulated blackjack table games: engine, scenarios and automated play.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)

PROGRESS_THRESHOLD = 2000
"""Runs of at least this many rounds (about a second's work) show their progress on standard
error (:mod:`tablejack.progress`)."""


def _fail(error: Exception) -> typer.Exit:
    rule = getattr(error, "rule", "")
    suffix = f" [dim]({rule})[/]" if rule and rule not in str(error) else ""
    errors.print(f"[bold red]error:[/] {error}{suffix}")
    return typer.Exit(code=2)


def _load_rules(path: Path, game_id: str | None = None) -> Any:
    """Load a rules file, showing the loader's warnings (such as a paytable that may favour the
    player) as plain warning lines."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rules = load_rules(path, game_id=game_id)
    for warning in caught:
        errors.print(f"[bold yellow]warning:[/] {warning.message}")
    return rules


def _rules_for(game_id: str, rules_file: Path | None) -> Any:
    if rules_file is not None:
        return _load_rules(rules_file, game_id)
    return game(game_id).rules_class()


@app.command()
def deal(
    game_id: Annotated[
        str, typer.Option("--game", help=f"Game id: {', '.join(sorted(GAMES))}.")
    ] = "classic",
    rounds: Annotated[int, typer.Option(min=1, help="Number of rounds to play.")] = 5,
    seed: Annotated[
        int | None, typer.Option(help="Seed for a reproducible session (default: secure shuffle).")
    ] = None,
    rules_file: Annotated[
        Path | None,
        typer.Option("--rules", help="Rules file (TOML); default: the game's defaults."),
    ] = None,
    players: Annotated[
        int | None, typer.Option(min=1, help="Bot players (default: a full table).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary object.")] = False,
    notation_dir: Annotated[
        Path | None, typer.Option("--save", help="Write each round's notation into this folder.")
    ] = None,
) -> None:
    """Play automated rounds with a basic-strategy bot on every seat."""
    try:
        rules = _rules_for(game_id, rules_file)
        summary = _Summary()
        long_run = rounds >= PROGRESS_THRESHOLD
        with Feedback(json_output=as_json).step(
            f"dealing {rounds:,} rounds",
            total=rounds,
            unit="rounds",
            announce=long_run,
            visible=long_run,
        ) as step:
            for number, round_ in enumerate(
                play_rounds(rules, rounds=rounds, seed=seed, players=players), start=1
            ):
                summary.add(round_)
                if notation_dir is not None:
                    notation_dir.mkdir(parents=True, exist_ok=True)
                    history = export(round_, round_id=f"{game_id}-{seed}-{number}")
                    (notation_dir / f"round-{number:06d}.toml").write_text(
                        notation.dumps(history), encoding="utf-8"
                    )
                if not as_json:
                    console.print(f"[bold]Round {number}[/]")
                    for line in transcript(round_):
                        console.print("  " + line)
                step.advance()
    except TablejackError as error:
        raise _fail(error) from None
    if as_json:
        print(json.dumps(summary.to_json(game_id, seed), indent=2))
    else:
        console.print(summary.text())


class _Summary:
    """Totals over many rounds: per wager kind the amount wagered and the players' net."""

    def __init__(self) -> None:
        self.rounds = 0
        self.hands = 0
        self.wagered: dict[str, int] = defaultdict(int)
        self.net: dict[str, int] = defaultdict(int)
        self.count: dict[str, int] = defaultdict(int)
        self.house = 0
        self.balanced = True

    def add(self, round_: Any) -> None:
        self.rounds += 1
        house = check_settlements(round_.wagers, round_.settlements)
        players = 0
        hands: set[tuple[str, int, int | None]] = set()
        for settlement in round_.settlements:
            kind = settlement.kind.value
            self.wagered[kind] += settlement.amount
            self.net[kind] += settlement.net
            self.count[kind] += 1
            players += settlement.net
            if kind == "blackjack":
                hands.add((settlement.player, settlement.seat, settlement.hand))
        self.hands += len(hands)
        self.house += house
        self.balanced = self.balanced and players + house == 0

    def to_json(self, game_id: str, seed: int | None) -> dict[str, Any]:
        kinds = {}
        for kind in sorted(self.wagered):
            wagered = self.wagered[kind]
            kinds[kind] = {
                "wagers": self.count[kind],
                "wagered_cents": wagered,
                "player_net_cents": self.net[kind],
                "house_edge": (-self.net[kind] / wagered) if wagered else None,
            }
        return {
            "game": game_id,
            "seed": seed,
            "rounds": self.rounds,
            "hands": self.hands,
            "total_wagered_cents": sum(self.wagered.values()),
            "player_net_cents": sum(self.net.values()),
            "house_net_cents": self.house,
            "by_wager": kinds,
            "conservation": {
                "players_plus_house_cents": sum(self.net.values()) + self.house,
                "balanced": self.balanced and sum(self.net.values()) + self.house == 0,
            },
        }

    def text(self) -> str:
        lines = [f"{self.rounds} round(s), {self.hands} hand(s)."]
        for kind in sorted(self.wagered):
            lines.append(
                f"  {kind}: {self.count[kind]} wager(s), {format_cents(self.wagered[kind])} "
                f"wagered, players {format_cents(self.net[kind], signed=True)}"
            )
        state = "balanced" if self.balanced else "NOT BALANCED"
        lines.append(f"  house {format_cents(self.house, signed=True)}; money {state}.")
        return "\n".join(lines)


@app.command()
def scenario(
    file: Annotated[Path, typer.Argument(help="Scenario file in the round notation (TOML).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the settlements as JSON.")] = False,
) -> None:
    """Play a scenario file (rules, seats, card order, commands) and print every settlement.

    Exits 1 when the file's [expect] results differ, 2 on an invalid file or an illegal command
    the file does not expect to be refused.
    """
    try:
        history = notation.load(file)
        run = scenarios.play(history)
    except TablejackError as error:
        raise _fail(error) from None
    round_ = run.round
    mismatches = scenarios.check(history, run)
    if as_json:
        print(json.dumps(scenario_json(file, history, run, mismatches), indent=2))
    else:
        for line in transcript(round_):
            console.print(line)
        for refusal in run.refusals:
            rule = f" [dim]({refusal.rule})[/]" if refusal.rule not in refusal.message else ""
            console.print(
                f"Step {refusal.step} ({refusal.command}) refused: {refusal.message}{rule}"
            )
        if run.stopped_at is not None:
            console.print(f"The scenario stops at step {run.stopped_at}.")
        for message in mismatches:
            errors.print(f"[bold red]expectation failed:[/] {message}")
    if mismatches:
        raise typer.Exit(code=1)


def scenario_json(
    file: Path, history: Any, run: scenarios.ScenarioRun, mismatches: list[str]
) -> dict[str, Any]:
    """The JSON document of ``tablejack scenario --json`` (``docs/notation.md``)."""
    round_ = run.round
    settlements = []
    for order, settlement in enumerate(round_.settlements, start=1):
        entry = settlement.to_json()
        odds = scenarios.odds_paid(settlement)
        entry["order"] = order
        entry["odds"] = None if odds is None else format_odds(odds)
        settlements.append(entry)
    net_by_player: dict[str, int] = defaultdict(int)
    for settlement in round_.settlements:
        net_by_player[settlement.player] += settlement.net
    return {
        "scenario": str(file),
        "game": history.game,
        "complete": bool(round_.is_complete),
        "stopped_at": run.stopped_at,
        "refusals": [refusal.to_json() for refusal in run.refusals],
        "settlements": settlements,
        "net_by_player": dict(net_by_player),
        # A scenario stopped by a refusal leaves wagers open: the house's net so far.
        "house_net": round_.house_net()
        if round_.is_complete
        else -sum(settlement.net for settlement in round_.settlements),
        "dealer": {
            name: {
                "cards": [card.code for card in hand.cards],
                "total": hand.total,
                "total_text": hand.total_text() if hand.cards else "",
            }
            for name, hand in scenarios.dealer_hands(round_).items()
        },
        "cards_used": run.cards_used,
        "cards_left": run.cards_left,
        "expectations_met": not mismatches,
        "mismatches": mismatches,
    }


@app.command("rules")
def rules_command(
    file: Annotated[Path, typer.Argument(help="Rules file (TOML).")],
) -> None:
    """Validate a rules file and print every field, defaults included."""
    try:
        rules = _load_rules(file)
    except TablejackError as error:
        raise _fail(error) from None
    for key, value in rules.to_mapping().items():
        console.print(f"{key} = {value!r}")


def _register_optional_commands() -> None:
    """Mount the commands of the math lab (edge, dealer-odds, strategy, simulate, parsheet,
    paytable, exposure, warm-up), of the certification report (certify) and of the table server
    (serve, verify-log, recall, verify-install); each imports its heavy modules only when its
    command runs."""
    for module_name in (
        "tablejack.lab.commands",
        "tablejack.lab.warmup",
        "tablejack.certify.commands",
        "tablejack.server.commands",
        "tablejack.server.commands.integrity",
    ):
        if importlib.util.find_spec(module_name.rsplit(".", 1)[0]) is None:  # pragma: no cover
            continue
        importlib.import_module(module_name).register(app)


_register_optional_commands()


def main() -> None:
    """Entry point of the ``tablejack`` script."""
    try:
        app()
    except BrokenPipeError:  # pragma: no cover - e.g. piping into head
        sys.stderr.close()


if __name__ == "__main__":  # pragma: no cover
    main()
