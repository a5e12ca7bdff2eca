"""Run a certification: the clause matrix, the scenarios, the property runs, the shuffle
statistics and the exact against simulated edge of every wager; write ``certify.json`` and
``certify.html``.

The clause matrix's tests run in a separate pytest process (``python -m pytest``, in the
project's folder, with its configuration), which writes a JUnit XML file that this module
reads: a test's outcome is what pytest reports, the run cannot disturb this process (numba,
warnings filters, event loops), and it can use pytest-xdist's workers. The tests are found
with ``pytest --collect-only`` and only those whose names carry a clause or an ambiguity run.
See ``docs/certify.md``.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import math
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from tablejack.certify import html
from tablejack.certify.clauses import AMBIGUITIES, CLAUSES, READINGS
from tablejack.certify.matrix import covering, test_citations, text_citations
from tablejack.core import notation
from tablejack.core.errors import TablejackError
from tablejack.core.records import check_settlements
from tablejack.games import export, load_rules, replay, scenarios
from tablejack.games.session import play_rounds

__all__ = ["CertifyOptions", "certify", "project_root"]

FORMAT = "tablejack-certify/1"
AGREEMENT_SE = 4.0
"""Exact and simulated edges agree when they differ by at most this many standard errors."""


def project_root() -> Path:
    """The folder holding ``pyproject.toml``, ``tests`` and ``scenarios`` (a source checkout)."""
    return Path(__file__).resolve().parents[3]


@dataclass(slots=True)
class CertifyOptions:
    """What to certify and at what size."""

    rules_files: Sequence[Path]
    out: Path
    hands: int = 1_000_000
    rounds: int = 2_000
    shoes: int = 1_000_000
    seed: int = 2026
    tests: Sequence[Path] = ()
    scenarios: Path | None = None
    test_workers: int = 4
    sim_workers: int | None = None
    shuffle: bool = True
    generators: Sequence[str] = ("seeded", "secure")
    edges: bool = True


@dataclass(slots=True)
class _Run:
    failures: list[str] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)


# -- tests ---------------------------------------------------------------------------------------


def _pytest(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def collect_tests(paths: Sequence[Path], cwd: Path) -> list[str]:
    """The node ids pytest collects under ``paths``; RuntimeError when collection fails."""
    result = _pytest(["--collect-only", "-q", *map(str, paths)], cwd)
    nodes = [line.strip() for line in result.stdout.splitlines() if "::" in line]
    if result.returncode not in (0, 5) or (result.returncode == 0 and not nodes):
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"pytest could not collect the tests:\n{tail}")
    return nodes


def _junit_key(node: str) -> tuple[str, str]:
    path, *rest = node.split("::")
    name = rest[-1]
    classes = rest[:-1]
    module = path.removesuffix(".py").replace("/", ".")
    return ".".join([module, *classes]), name


def run_tests(
    nodes: Sequence[str], junit: Path, cwd: Path, workers: int
) -> tuple[dict[str, str], list[str]]:
    """Run ``nodes`` in one pytest process writing ``junit``; each node's outcome (passed,
    failed, skipped, or "not run") and the command."""
    args = ["-q", f"--junitxml={junit}", "-o", "junit_family=xunit1"]
    if workers > 1 and importlib.util.find_spec("xdist") is not None:
        args += ["-n", str(workers)]
    args += list(nodes)
    _pytest(args, cwd)
    outcomes: dict[tuple[str, str], str] = {}
    if junit.exists():
        for case in ElementTree.parse(junit).getroot().iter("testcase"):
            key = (case.get("classname", ""), case.get("name", ""))
            if case.find("failure") is not None or case.find("error") is not None:
                outcomes[key] = "failed"
            elif case.find("skipped") is not None:
                outcomes[key] = "skipped"
            else:
                outcomes.setdefault(key, "passed")
    command = ["python", "-m", "pytest", "-p", "no:cacheprovider", *args[: args.index(nodes[0])]]
    return {node: outcomes.get(_junit_key(node), "not run") for node in nodes}, command


# -- the parts -----------------------------------------------------------------------------------


def _scenario_results(folder: Path | None) -> list[dict[str, Any]]:
    if folder is None or not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        clauses, ambiguities = text_citations(text)
        entry: dict[str, Any] = {
            "file": path.name,
            "clauses": list(clauses),
            "ambiguities": list(ambiguities),
        }
        try:
            history = notation.load(path)
            run = scenarios.play(history)
            mismatches = scenarios.check(history, run)
            entry.update(game=history.game, mismatches=mismatches)
            entry["outcome"] = "passed" if not mismatches else "failed"
        except TablejackError as error:
            entry.update(game="", mismatches=[str(error)], outcome="failed")
        out.append(entry)
    return out


def _matrix(
    outcomes: dict[str, str], scenario_results: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    test_cites = {node: test_citations(node.split("::")[-1]) for node in outcomes}
    rows = []
    for item in CLAUSES:
        direct = [n for n, (cl, _) in test_cites.items() if item.id in cl]
        via = [n for n, (cl, _) in test_cites.items() if n not in direct and covering(item.id, cl)]
        scen = [s for s in scenario_results if covering(item.id, s["clauses"])]
        results = [outcomes[n] for n in direct + via] + [s["outcome"] for s in scen]
        if not results:
            status = "no test"
        elif any(r in ("failed", "not run") for r in results):
            status = "failed"
        else:
            status = "passed"
        rows.append(
            {
                "id": item.id,
                "title": item.title,
                "scope": item.scope,
                "status": status,
                "tests": [
                    {
                        "node": n,
                        "outcome": outcomes[n],
                        "cites": "clause" if n in direct else "sub-clause",
                    }
                    for n in direct + via
                ],
                "scenarios": [{"file": s["file"], "outcome": s["outcome"]} for s in scen],
            }
        )

    def readings(entries: Sequence[Any]) -> list[dict[str, Any]]:
        out = []
        for entry in entries:
            linked = set(entry.clauses)
            tests = [
                {"node": n, "outcome": outcomes[n]}
                for n, (cl, am) in test_cites.items()
                if entry.id in am or linked & set(cl)
            ]
            scen = [
                {"file": s["file"], "outcome": s["outcome"]}
                for s in scenario_results
                if entry.id in s["ambiguities"] or linked & set(s["clauses"])
            ]
            out.append(
                {
                    "id": entry.id,
                    "where": entry.where,
                    "reading": entry.reading,
                    "option": entry.option or "none (fixed reading)",
                    "docs": entry.docs,
                    "tests": tests,
                    "scenarios": scen,
                }
            )
        return out

    return rows, readings(AMBIGUITIES), readings(READINGS)


def _properties(rules_file: Path, rules: Any, rounds: int, seed: int) -> dict[str, Any]:
    failures: list[str] = []
    settlements = 0
    counts = {"exactly_once": 0, "conservation": 0, "replay": 0}
    played = 0
    for number, round_ in enumerate(play_rounds(rules, rounds=rounds, seed=seed), start=1):
        played += 1
        settlements += len(round_.settlements)
        try:
            house = check_settlements(round_.wagers, round_.settlements)
        except AssertionError as error:
            counts["exactly_once"] += 1
            failures.append(f"round {number}: {error}")
            continue
        if house + sum(s.net for s in round_.settlements) != 0:
            counts["conservation"] += 1
            failures.append(f"round {number}: players' net plus the house's is not zero")
        again = replay(notation.loads(notation.dumps(export(round_))))
        if again.operations != round_.operations:
            counts["replay"] += 1
            failures.append(f"round {number}: the replayed notation differs")
    return {
        "rules_file": str(rules_file),
        "game": rules.game,
        "rounds": played,
        "seed": seed,
        "settlements": settlements,
        "failed": counts,
        "passed": not failures,
        "failures": failures[:20],
    }


def _edges(
    rules_file: Path, rules: Any, hands: int, seed: int, workers: int | None
) -> list[dict[str, Any]]:
    from tablejack.lab.games import lab_game
    from tablejack.lab.model import AnalysisRules

    try:
        spec = lab_game(rules.game)
        analysis = AnalysisRules.from_rules(rules)
    except ValueError as error:
        return [
            {"rules_file": str(rules_file), "game": rules.game, "wager": "all",
             "verdict": "not analysed", "note": str(error)}
        ]  # fmt: skip
    assert analysis.decks is not None
    first_round = analysis.replace(penetration=1.0 / (52 * analysis.decks))
    sim = spec.simulate(first_round, game_rules=rules, hands=hands, seed=seed, workers=workers)
    simulated = sim.to_json()["wagers"]
    rows = []
    for wager in spec.offered_wagers(rules):
        figures = spec.exact(analysis, wager, rules)
        exact_edge = float(figures["house_edge"])
        row: dict[str, Any] = {
            "rules_file": str(rules_file),
            "game": rules.game,
            "wager": wager,
            "exact_edge": exact_edge,
            "hands": int(sim.rounds),
            "seed": seed,
        }
        sim_row = simulated.get(wager)
        hit = figures.get("hit_frequency", figures.get("win_probability", figures.get("win")))
        row["hit_frequency"] = None if hit is None else float(hit)
        row["hit_frequency_method"] = "exact" if hit is not None else ""
        if sim_row is None:
            row.update(simulated_edge=None, stderr=None, difference_se=None)
            row["verdict"] = "exact only"
            row["note"] = (
                "not simulated: the lab's players play basic strategy, which never insures"
            )
        else:
            se = float(sim_row["stderr"])
            diff = (float(sim_row["house_edge"]) - exact_edge) / se if se > 0 else math.inf
            row.update(
                simulated_edge=float(sim_row["house_edge"]),
                stderr=se,
                difference_se=diff,
                verdict="agree" if abs(diff) <= AGREEMENT_SE else "DISAGREE",
            )
            if row["hit_frequency"] is None:
                row["hit_frequency"] = float(sim_row.get("hit_frequency", sim_row.get("win", 0.0)))
                row["hit_frequency_method"] = "simulated"
        rows.append(row)
    return rows


# -- the whole run -------------------------------------------------------------------------------


def certify(
    options: CertifyOptions, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run everything ``options`` asks for, write ``certify.json`` and ``certify.html`` into
    ``options.out`` and return the report's data (``passed`` false on any failure)."""
    say = progress or (lambda text: None)
    root = project_root()
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    loaded = []
    rules_warnings: list[str] = []
    for path in options.rules_files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded.append((path, load_rules(path)))
        rules_warnings.extend(f"{path.name}: {warning.message}" for warning in caught)

    say("collecting the clause tests")
    tests = list(options.tests) or [root / "tests"]
    nodes = [n for n in collect_tests(tests, root) if any(test_citations(n.split("::")[-1]))]
    outcomes: dict[str, str] = {}
    command: list[str] = []
    if nodes:
        say(f"running {len(nodes)} clause tests")
        outcomes, command = run_tests(nodes, out / "junit.xml", root, options.test_workers)
    for node, outcome in outcomes.items():
        if outcome in ("failed", "not run"):
            failures.append(f"test {node}: {outcome}")
    say("playing the scenarios")
    scenario_folder = options.scenarios if options.scenarios is not None else root / "scenarios"
    scenario_results = _scenario_results(scenario_folder)
    for entry in scenario_results:
        if entry["outcome"] != "passed":
            failures.append(f"scenario {entry['file']}: {'; '.join(entry['mismatches'])}")
    clause_rows, ambiguity_rows, reading_rows = _matrix(outcomes, scenario_results)

    properties = []
    for path, rules in loaded:
        say(f"property runs: {path.name}, {options.rounds:,} rounds")
        result = _properties(path, rules, options.rounds, options.seed)
        properties.append(result)
        failures.extend(f"properties {path.name}: {f}" for f in result["failures"])

    shuffle: list[dict[str, Any]] = []
    if options.shuffle:
        from tablejack.lab.shuffle_stats import shuffle_statistics

        for decks in sorted({rules.decks for _, rules in loaded} or {6}):
            for source in options.generators:
                say(f"shuffle statistics: {source}, {decks} decks, {options.shoes:,} shoes")
                report = shuffle_statistics(
                    source, shoes=options.shoes, decks=decks, seed=options.seed
                )
                shuffle.append(report.to_json())
                failures.extend(
                    f"shuffle {source} {decks} decks: {t.name} p = {t.p_value:.3g}"
                    for t in report.tests
                    if not t.passed
                )

    wagers: list[dict[str, Any]] = []
    if options.edges:
        for path, rules in loaded:
            say(f"exact and simulated edges: {path.name}, {options.hands:,} hands")
            rows = _edges(path, rules, options.hands, options.seed, options.sim_workers)
            wagers.extend(rows)
            failures.extend(
                f"edge {path.name} {row['wager']}: exact {row['exact_edge']:.6f}, simulated "
                f"{row['simulated_edge']:.6f} ± {row['stderr']:.6f} ({row['difference_se']:+.1f} s.e.)"
                for row in rows
                if row["verdict"] == "DISAGREE"
            )

    statuses = [row["status"] for row in clause_rows]
    data: dict[str, Any] = {
        "format": FORMAT,
        "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "options": {
            "rules_files": [str(p) for p in options.rules_files],
            "hands": options.hands,
            "rounds": options.rounds,
            "shoes": options.shoes,
            "seed": options.seed,
            "tests": [str(p) for p in tests],
            "scenarios": str(scenario_folder),
            "agreement_se": AGREEMENT_SE,
            "generators": list(options.generators) if options.shuffle else [],
        },
        "passed": not failures,
        "failures": failures,
        "warnings": rules_warnings,
        "summary": {
            "clauses": len(clause_rows),
            "passed": statuses.count("passed"),
            "failed": statuses.count("failed"),
            "no_test": statuses.count("no test"),
            "no_test_by_scope": {
                scope: sum(
                    1 for r in clause_rows if r["status"] == "no test" and r["scope"] == scope
                )
                for scope in ("engine", "server", "procedure")
            },
            "tests_run": len(outcomes),
            "tests_failed": sum(1 for o in outcomes.values() if o in ("failed", "not run")),
            "scenarios": len(scenario_results),
        },
        "tests": {"command": command, "junit": "junit.xml" if outcomes else None},
        "clauses": clause_rows,
        "ambiguities": ambiguity_rows,
        "readings": reading_rows,
        "scenarios": scenario_results,
        "properties": properties,
        "shuffle": shuffle,
        "wagers": wagers,
    }
    (out / "certify.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    (out / "certify.html").write_text(html.render(data), encoding="utf-8")
    return data
