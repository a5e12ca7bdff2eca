"""Benchmark: the information policy at one broadcast of a version A table (PA 633c.5): every
terminal's text with the other players named by their labels, two ways, interleaved step by
step over rounds of ``--players`` basic-strategy bots:

* **per viewer**: each player's text (``HybridAdapter.player_texts``), then the round's names
  searched for and replaced in it, viewer by viewer (``visibility.conceal_text`` with the
  viewer's ``pseudonyms``: the way before ``Concealer``);
* **pieces**: the texts in pieces (``player_pieces``: the table's part and each player's entry
  one string for every viewer), each distinct piece searched once for the whole broadcast
  (``visibility.Concealer``), each viewer's text its pieces joined.

Both give the same texts (checked at every step). Prints the microseconds per broadcast of each
and their ratio, the best of ``--repeat`` runs.

    .venv/bin/python benchmarks/conceal.py [--players N] [--rounds R] [--repeat K]
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from typing import Any

from tablejack.core.shoe import Shoe
from tablejack.games.hybrid import HybridRound, HybridRules, bot_command, bot_seat
from tablejack.server import visibility
from tablejack.server.support.wire import dumps
from tablejack.server.table.games import adapter_for


def per_viewer(adapter: Any, round_: Any, viewers: list[str]) -> dict[str, str]:
    """Each viewer's whole text concealed on its own (the way before ``Concealer``)."""
    texts = adapter.player_texts(round_, viewers, dumps)
    every = tuple(visibility.pseudonyms(round_, ""))
    return {
        viewer: visibility.conceal_text(
            texts[viewer], visibility.pseudonyms(round_, viewer), dumps, every
        )
        for viewer in viewers
    }


def by_pieces(adapter: Any, round_: Any, viewers: list[str]) -> dict[str, str]:
    """The pieces, each searched once (``Concealer``)."""
    pieces = adapter.player_pieces(round_, viewers, dumps)
    concealer = visibility.Concealer(round_, dumps)
    return {viewer: concealer.text(pieces[viewer], viewer) for viewer in viewers}


def run(players: int, rounds: int, seed: int) -> tuple[float, float, int]:
    """Seconds spent on every broadcast's texts the two ways, and the broadcasts."""
    adapter = adapter_for("hybrid")
    old_s = new_s = 0.0
    broadcasts = 0
    for number in range(rounds):
        round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=seed + number))
        bot_seat(round_, random.Random(seed + number), players)
        viewers = [*round_.players, "watcher-1", "watcher-2"]
        while True:
            start = time.perf_counter()
            old = per_viewer(adapter, round_, viewers)
            middle = time.perf_counter()
            new = by_pieces(adapter, round_, viewers)
            end = time.perf_counter()
            if old != new:
                raise AssertionError("the two ways gave different texts")
            old_s += middle - start
            new_s += end - middle
            broadcasts += 1
            if round_.is_complete:
                break
            command = bot_command(round_)
            assert command is not None
            round_.apply(command)
    return old_s, new_s, broadcasts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}"
    )
    best: tuple[float, float, int] | None = None
    for repeat in range(args.repeat):
        old, new, broadcasts = run(args.players, args.rounds, seed=repeat * 10_000)
        print(
            f"run {repeat + 1}: {broadcasts:,} broadcasts of {args.players} players + 2 watching: "
            f"per viewer {old / broadcasts * 1e6:.1f} µs, pieces {new / broadcasts * 1e6:.1f} µs "
            f"a broadcast (×{old / new:.2f})"
        )
        if best is None or old / new > best[0] / best[1]:
            best = (old, new, broadcasts)
    assert best is not None
    old, new, broadcasts = best
    print(
        f"best run: per viewer {old / broadcasts * 1e6:.1f} µs, pieces "
        f"{new / broadcasts * 1e6:.1f} µs a broadcast: ×{old / new:.2f}"
    )


if __name__ == "__main__":
    main()
