"""The report of paytable design: the search and its candidates as JSON and as text, and a par
sheet per candidate (the last part of :mod:`tablejack.lab.paytable`; the maths never imports it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from rich.table import Table

from tablejack.games.hybrid_rules import BuzzerBeaterRow
from tablejack.lab import exact
from tablejack.lab.parsheet import write_report
from tablejack.lab.paytable.outcomes import (
    WagerOutcomes,
    buzzer_line_name,
    fraction_text,
    odds_text,
    percent_text,
)
from tablejack.lab.paytable.search import SearchResult, pay_ladder


def base_report(result: SearchResult) -> dict[str, Any]:
    """The base paytable beside the candidates: its exact figures, whether it obeys the
    monotone order (and where not) and whether it lies on the searched lattice."""
    outcomes, lattice = result.outcomes, result.lattice
    pays = outcomes.base_pays
    violations = outcomes.rarity_violations(pays)
    off = []
    for name, (low, high) in lattice.bounds(outcomes).items():
        if outcomes.line_probability(name) == 0:
            continue
        odds = pays[name]
        if odds.denominator != 1 or int(odds) not in pay_ladder(low, high, lattice.pays):
            off.append(f"{name} {odds_text(odds)}")
    edge = outcomes.house_edge(pays)
    return {
        "name": outcomes.base_name,
        "pays": {line: odds_text(odds) for line, odds in pays.items()},
        **_figures_json(outcomes, pays, edge, result.target),
        "monotone": not violations,
        "violations": violations,
        "on_lattice": not violations and not off,
        "off_lattice_pays": off,
    }


def _figures_json(
    outcomes: WagerOutcomes, pays: Mapping[str, Fraction], edge: Fraction, target: Fraction
) -> dict[str, Any]:
    figures = outcomes.figures(pays)
    out: dict[str, Any] = {
        "house_edge": float(edge),
        "distance": float(abs(edge - target)),
        "hit_frequency": figures["hit_frequency"],
        "variance": figures["variance"],
        "stdev": figures["stdev"],
        "player_edge": edge < 0,
    }
    if outcomes.rational:
        out["house_edge_exact"] = fraction_text(edge)
        out["distance_exact"] = fraction_text(abs(edge - target))
        out["variance_exact"] = figures["variance_exact"]
    return out


def report(result: SearchResult, rules: Any) -> dict[str, Any]:
    """The search as one JSON-ready object."""
    outcomes = result.outcomes
    out: dict[str, Any] = {
        "game": outcomes.game,
        "wager": outcomes.wager,
        "title": outcomes.title,
        "target_edge": float(result.target),
        "target_edge_exact": fraction_text(result.target),
        "method": outcomes.method,
        "rules": rules.to_mapping(),
        "lines": [
            {
                "line": line.name,
                "title": line.title,
                "base": odds_text(line.base),
                "probability": float(outcomes.line_probability(line.name)),
            }
            for line in outcomes.lines
        ],
        "outcomes": [
            {
                "outcome": o.label,
                "lines": list(o.lines),
                "probability": float(o.probability),
                **(
                    {"probability_exact": fraction_text(o.probability)} if outcomes.rational else {}
                ),
            }
            for o in sorted(outcomes.outcomes, key=lambda o: o.probability)
        ],
        "lattice": result.lattice.describe(outcomes),
        "paytables": result.paytables,
        "searched": result.searched,
        "reach": [float(result.reach[0]), float(result.reach[1])],
        "base": base_report(result),
        "candidates": [
            {
                "rank": rank,
                "pays": {line: odds_text(odds) for line, odds in c.pays.items()},
                **_figures_json(outcomes, c.pays, c.house_edge, result.target),
            }
            for rank, c in enumerate(result.candidates, 1)
        ],
    }
    return out


def candidate_rules(outcomes: WagerOutcomes, rules: Any, pays: Mapping[str, Fraction]) -> Any:
    """``rules`` with the candidate paytable in force (EZ Bust: the rules' mapping with the
    designed pays under ``ez_bust_paytable``, since 633b.16(i) fixes 1 to 1)."""
    if outcomes.wager == "buzzer_beater":
        rows = tuple(
            BuzzerBeaterRow(row.player, row.dealer, pays[buzzer_line_name(row.player, row.dealer)])
            for row in rules.buzzer_beater_paytable
        )
        return rules.replace(buzzer_beater_paytable=rows)
    if outcomes.wager in ("bet_the_set", "kings_bounty"):
        table = tuple((line.name, pays[line.name]) for line in outcomes.lines)
        return rules.replace(**{f"{outcomes.wager}_paytable": table})
    if outcomes.wager == "royal_match":
        table = tuple(
            (line.name, pays[line.name]) for line in outcomes.lines if line.name != "crown-treasure"
        )
        changes: dict[str, Any] = {"royal_match_paytable": table}
        if "crown-treasure" in pays:
            changes["crown_treasure_pays"] = pays["crown-treasure"]
        return rules.replace(**changes)
    return rules


def parsheet_data(result: SearchResult, rank: int, rules: Any, analysis: Any) -> dict[str, Any]:
    """The par sheet of candidate ``rank`` (1 = nearest) in the form of
    :func:`tablejack.lab.parsheet.build_parsheet`, for :func:`~.parsheet.write_report`."""
    outcomes = result.outcomes
    candidate = result.candidates[rank - 1]
    figures = outcomes.figures(candidate.pays)
    game_rules = candidate_rules(outcomes, rules, candidate.pays)
    mapping = game_rules.to_mapping()
    paytable = [[line, odds_text(odds)] for line, odds in candidate.pays.items()]
    if outcomes.wager == "ez_bust":
        mapping["ez_bust_paytable (designed; 633b.16(i) pays 1 to 1)"] = dict(paytable)
    entry: dict[str, Any] = {
        "wager": outcomes.wager,
        "title": f"{outcomes.title}: {candidate.describe()}",
        "house_edge": float(candidate.house_edge),
        "house_edge_method": "exact (" + outcomes.method + ")",
        "hit_frequency": figures["hit_frequency"],
        "stdev": figures["stdev"],
        "variance": figures["variance"],
        "distribution_method": "exact",
        "lines": figures["lines"],
        "paytable": paytable,
    }
    if outcomes.rational:
        entry["house_edge_exact"] = figures["house_edge_exact"]
        entry["variance_exact"] = figures["variance_exact"]
    if "joint" in outcomes.extra:
        entry["joint"] = outcomes.extra["joint"]
    analysed = exact.analyse(analysis)
    return {
        "game": outcomes.game,
        "title": (
            f"{outcomes.title}, paytable {rank} of {len(result.candidates)} nearest a house "
            f"edge of {percent_text(result.target)} (this one {percent_text(candidate.house_edge)}, "
            f"{percent_text(candidate.distance)} away)"
        ),
        "rules": mapping,
        "analysis_rules": analysis.to_json(),
        "wagers": [entry],
        "player_edge_wagers": [outcomes.wager] if candidate.house_edge < 0 else [],
        "strategy": analysed.strategy.charts(),
        "composition_exceptions": [],
        "dealer_probabilities": exact.dealer_table(analysis),
        "paytable_design": {
            "rank": rank,
            "target_edge": float(result.target),
            "distance": float(candidate.distance),
            "lattice": result.lattice.describe(outcomes),
            "base": {line: odds_text(odds) for line, odds in outcomes.base_pays.items()},
        },
        "method": {
            "exact": outcomes.method,
            "paytable": "the outcome distribution computed once; the paytable's house edge, "
            "hit frequency and variance summed over the outcomes in exact arithmetic; the "
            "player plays the Blackjack Wager's generated basic strategy whatever the side "
            "wager pays",
        },
    }


def write_parsheets(
    result: SearchResult,
    rules: Any,
    analysis: Any,
    out: Any,
    progress: Callable[[int, int], None] | None = None,
) -> list[str]:
    """A par sheet per candidate in ``out/candidate-NN/`` and the search in
    ``out/paytables.json``; the files written, relative to ``out``."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    files = ["paytables.json"]
    total = len(result.candidates)
    for rank in range(1, total + 1):
        folder = f"candidate-{rank:02d}"
        data = write_report(parsheet_data(result, rank, rules, analysis), root / folder)
        files += [f"{folder}/{name}" for name in data["files"]]
        if progress is not None:
            progress(rank, total)
    payload = report(result, rules)
    payload["files"] = files
    (root / "paytables.json").write_text(json.dumps(payload, indent=2), "utf-8")
    return files


def _small_pct(value: float) -> str:
    """A percentage to four places, or in scientific notation when smaller."""
    if value == 0 or value >= 5e-7:
        return f"{value * 100:.4f}%"
    return f"{value * 100:.1e}%"


def print_report(payload: Mapping[str, Any], console: Any) -> None:
    """:func:`report`'s object as text on a rich ``console``: the search, the base paytable
    and a table of the candidates, the lines as lettered columns."""
    lines = [line["line"] for line in payload["lines"]]
    base = payload["base"]
    size = "" if payload["paytables"] is None else f"{payload['paytables']:,} "
    console.print(
        f"{payload['title']}: the {len(payload['candidates'])} paytables nearest a house edge "
        f"of [bold]{payload['target_edge'] * 100:.4f}%[/] ({payload['lattice']['pays']} pays, "
        f"{size}paytables in the lattice, reaching {payload['reach'][0] * 100:.4f}% to "
        f"{payload['reach'][1] * 100:.4f}%)"
    )
    verdict = "on the lattice" if base["on_lattice"] else "not on the lattice"
    console.print(
        f"base paytable ({base['name']}): house edge {base['house_edge'] * 100:.4f}%, {verdict}"
    )
    for violation in base["violations"][:4]:
        console.print(f"  not monotone: {violation}")
    if len(base["violations"]) > 4:
        console.print(f"  ({len(base['violations']) - 4} more with --json)")
    for pay in base["off_lattice_pays"]:
        console.print(f"  off the lattice: {pay}")
    console.print("columns:")
    keys = "abcdefghijklmnopqrstuvwxyz"
    for key, line in zip(keys, payload["lines"], strict=False):
        console.print(
            f"  {key}  {line['line']}: {line['title']} (probability {line['probability']:.6g}, "
            f"base {line['base']})"
        )
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    for key, _ in zip(keys, lines, strict=False):
        table.add_column(key, justify="right")
    for name in ("house edge", "distance", "hit freq.", "std. dev."):
        table.add_column(name, justify="right")
    for c in payload["candidates"]:
        table.add_row(
            str(c["rank"]),
            *(c["pays"][line].removesuffix(" to 1") for line in lines),
            f"{c['house_edge'] * 100:.4f}%",
            _small_pct(c["distance"]),
            f"{c['hit_frequency'] * 100:.4f}%",
            f"{c['stdev']:.4f}",
        )
    console.print(table)
    if payload.get("out"):
        console.print(f"wrote {len(payload['files'])} files in {payload['out']}")
