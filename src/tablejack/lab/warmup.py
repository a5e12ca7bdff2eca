"""Compile the lab's numba kernels ahead of the first command (``tablejack warm-up``).

The kernels are compiled with ``cache=True``: numba writes each compiled signature to its
on-disk cache (the ``__pycache__`` folder beside the kernel modules, or ``NUMBA_CACHE_DIR``) and
a later process loads it in a fraction of a second instead of compiling it for tens of
seconds. :func:`warm_up` fills that cache by running every lab command once, in this process,
on each game and each wager with tiny sizes (a few thousand hands, a few shoes): the kernels are
then compiled for exactly the argument types the commands pass them, which a list of signatures
kept by hand could miss. ``make install`` runs it after installing the package, so the first
lab command of a fresh clone loads the kernels instead of compiling them.

numba keys a cache entry by the kernel module's path and modification time (and the machine's
CPU): after a kernel file is edited, the first command that uses it recompiles it and caches it
again, and ``tablejack warm-up`` recompiles everything at once.

>>> [step.label for step in warm_up_steps()][:2]
['edge classic blackjack', 'edge classic insurance']
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

__all__ = ["WarmUpResult", "WarmUpStep", "register", "warm_up", "warm_up_steps"]

SIMULATED_HANDS = 2000
"""Hands of each warm-up simulation: one block of shoes, enough to run every kernel."""

SHOES = 4
"""Shoes walked by each warm-up exposure run."""


@dataclass(frozen=True, slots=True)
class WarmUpStep:
    """One lab command, run with tiny sizes; ``run(folder)`` writes its files under ``folder``."""

    label: str
    run: Callable[[Path], None]


@dataclass(frozen=True, slots=True)
class WarmUpResult:
    """What one step took: wall-clock seconds, and how many kernels numba compiled (0: every
    kernel it needed came from the cache)."""

    label: str
    seconds: float
    compiled: int


def _rules_file(game: str, folder: Path) -> Path:
    """The game's default rules as a rules file (the par sheet reads one)."""
    import tomli_w

    from tablejack.games import game as engine_game

    path = folder / f"{game}.toml"
    if not path.exists():
        path.write_text(tomli_w.dumps(engine_game(game).rules_class().to_mapping()), "utf-8")
    return path


def _command(name: str, **options: Any) -> Callable[[Path], None]:
    """A step that runs the lab command ``name`` with ``options``."""

    def run(folder: Path) -> None:
        from tablejack.lab import commands

        getattr(commands, name)(**options)

    return run


def _parsheet(game: str) -> Callable[[Path], None]:
    """A step that writes the par sheet of the game's default rules under the folder."""

    def run(folder: Path) -> None:
        from tablejack.lab import commands

        commands.parsheet(
            rules_file=_rules_file(game, folder),
            out=folder / f"parsheet-{game}",
            game=game,
            hands=SIMULATED_HANDS,
            seed=1,
            workers=1,
            variations=False,
            exposure_shoes=0,
            as_json=True,
        )

    return run


def warm_up_steps() -> list[WarmUpStep]:
    """Every lab command on every game: ``edge`` of each wager, ``strategy``, ``dealer-odds``,
    ``simulate``, ``exposure``, ``paytable`` of each side wager and ``parsheet``. Options that
    only repeat work on kernels another step compiles are left at their cheapest: the par
    sheet's rule variations and advantage-play section (the exact analysis, ``exposure``) and
    the exposure's validation shoes (the exact analysis)."""
    from tablejack.lab.games import LAB_GAMES

    steps: list[WarmUpStep] = []
    for game, spec in LAB_GAMES.items():
        for wager in spec.wagers:
            steps.append(
                WarmUpStep(
                    f"edge {game} {wager}", _command("edge", game=game, wager=wager, as_json=True)
                )
            )
    steps.append(
        WarmUpStep("strategy classic", _command("strategy", game="classic", output_format="json"))
    )
    steps.append(WarmUpStep("dealer-odds", _command("dealer_odds", as_json=True)))
    steps.append(
        WarmUpStep(
            "dealer-odds infinite deck",
            _command("dealer_odds", decks="inf", removed="5 T", as_json=True),
        )
    )
    for game, spec in LAB_GAMES.items():
        steps.append(
            WarmUpStep(
                f"simulate {game}",
                _command(
                    "simulate", game=game, hands=SIMULATED_HANDS, seed=0, workers=1, as_json=True
                ),
            )
        )
        steps.append(
            WarmUpStep(
                f"exposure {game}", _command("exposure", game=game, shoes=SHOES, as_json=True)
            )
        )
        for wager in spec.wagers[1:]:
            if wager == "insurance":
                continue
            steps.append(
                WarmUpStep(
                    f"paytable {game} {wager}",
                    _command(
                        "paytable", wager=wager, target_edge="5%", game=game, count=1, as_json=True
                    ),
                )
            )
        steps.append(WarmUpStep(f"parsheet {game}", _parsheet(game)))
    return steps


@contextlib.contextmanager
def _counting() -> Iterator[list[float]]:
    """The seconds of each compilation numba starts within the block."""
    from tablejack.lab.compilation import watch_compilation

    compiled: list[float] = []
    with watch_compilation(lambda: None, compiled.append):
        yield compiled


def warm_up(
    steps: list[WarmUpStep] | None = None,
    report: Callable[[WarmUpResult], None] | None = None,
) -> list[WarmUpResult]:
    """Run ``steps`` (default: :func:`warm_up_steps`) in this process, their printed output
    discarded and their files written in a temporary folder; ``report`` hears of each step as
    it ends. A command that fails raises (``typer.Exit`` for an input error)."""
    results: list[WarmUpResult] = []
    with tempfile.TemporaryDirectory(prefix="tablejack-warm-up-") as name:
        folder = Path(name)
        for step in steps if steps is not None else warm_up_steps():
            started = time.perf_counter()
            with _counting() as compiled, contextlib.redirect_stdout(io.StringIO()):
                step.run(folder)
            result = WarmUpResult(step.label, time.perf_counter() - started, len(compiled))
            results.append(result)
            if report is not None:
                report(result)
    return results


def warm_up_command() -> None:
    """Compile every kernel the lab's commands use into numba's on-disk cache (``make install``
    runs it), so that the first lab command loads them instead of compiling them."""
    from rich.console import Console

    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    started = time.perf_counter()

    def report(result: WarmUpResult) -> None:
        compiled = f"{result.compiled} kernel(s) compiled" if result.compiled else "cached"
        errors.print(f"warm-up: {result.label}: {result.seconds:.1f} s, {compiled}")

    results = warm_up(report=report)
    compiled = sum(result.compiled for result in results)
    errors.print(
        f"warm-up: {len(results)} commands in {time.perf_counter() - started:.1f} s, "
        f"{compiled} kernel(s) compiled"
    )


def register(app: typer.Typer) -> None:
    """Mount ``warm-up`` on the ``tablejack`` CLI."""
    app.command("warm-up")(warm_up_command)
