"""Benchmark: the terminal views of one broadcast at a version A table (PA 633c.5), as the
server builds them at every change of a round.

Plays rounds of ``--players`` basic-strategy bots (seated round the three positions) and, at
every step of each round, builds the JSON text of every player's view plus two watching
terminals' two ways, interleaved step by step:

* **whole views**: ``HybridAdapter.player_views``, every player's legal actions checked, then
  each view encoded (the way before ``player_texts``);
* **parts**: ``HybridAdapter.player_texts``, each part encoded once and spliced per player,
  the legal actions checked only for the players the window waits for.

Both give the same texts (checked at every step). Prints the microseconds per broadcast of each
and their ratio, the best of ``--repeat`` runs.

    .venv/bin/python benchmarks/views.py [--players N] [--rounds R] [--repeat K]
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from typing import Any

from tablejack.core.shoe import Shoe
from tablejack.games.hybrid import HybridRound, HybridRules, bot_command, bot_seat
from tablejack.server.support.wire import dumps
from tablejack.server.table.games import adapter_for


def whole_views(adapter: Any, round_: Any, players: list[str]) -> dict[str, str]:
    """The texts the way before ``player_texts``: each view built whole, every player's
    legal actions checked (as ``terminal_views`` did for all of them), then each view
    encoded (a view several players share encoded once)."""
    encoded: dict[int, str] = {}
    texts: dict[str, str] = {}
    for player, view in adapter.player_views(round_, players).items():
        if view.get("you") is not None:
            view["you"]["legal_actions"] = round_.legal_actions(player)
        if id(view) not in encoded:
            encoded[id(view)] = dumps(view)
        texts[player] = encoded[id(view)]
    return texts


def run(players: int, rounds: int, seed: int) -> tuple[float, float, int]:
    """Seconds spent building every broadcast's texts the two ways, and the broadcasts."""
    adapter = adapter_for("hybrid")
    whole = parts = 0.0
    broadcasts = 0
    for number in range(rounds):
        round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=seed + number))
        bot_seat(round_, random.Random(seed + number), players)
        everyone = [*round_.players, "watcher-1", "watcher-2"]
        while True:
            start = time.perf_counter()
            old = whole_views(adapter, round_, everyone)
            middle = time.perf_counter()
            new = adapter.player_texts(round_, everyone, dumps)
            end = time.perf_counter()
            if old != new:
                raise AssertionError("the two ways gave different texts")
            whole += middle - start
            parts += end - middle
            broadcasts += 1
            if round_.is_complete:
                break
            command = bot_command(round_)
            assert command is not None
            round_.apply(command)
    return whole, parts, broadcasts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}"
    )
    best: tuple[float, float, int] | None = None
    for repeat in range(args.repeat):
        whole, parts, broadcasts = run(args.players, args.rounds, seed=repeat * 10_000)
        print(
            f"run {repeat + 1}: {broadcasts:,} broadcasts of {args.players} players + 2 watching: "
            f"whole views {whole / broadcasts * 1e6:.1f} µs, parts {parts / broadcasts * 1e6:.1f} µs "
            f"a broadcast (×{whole / parts:.2f})"
        )
        if best is None or whole / parts > best[0] / best[1]:
            best = (whole, parts, broadcasts)
    assert best is not None
    whole, parts, broadcasts = best
    print(
        f"best run: whole views {whole / broadcasts * 1e6:.1f} µs, parts "
        f"{parts / broadcasts * 1e6:.1f} µs a broadcast: ×{whole / parts:.2f}"
    )


if __name__ == "__main__":
    main()
