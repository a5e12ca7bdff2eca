"""The certification report as one self-contained HTML page (no scripts, no external files)."""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["render"]

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #ddd; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.passed, .agree { color: #186a1e; } .failed, .DISAGREE { color: #b00020; font-weight: bold; }
.notest { color: #8a5a00; } .watch { background: #fff4d6; }
.verdict { font-size: 1.3em; padding: .5em 1em; display: inline-block; }
.verdict.passed { background: #e3f4e4; } .verdict.failed { background: #fbe3e6; }
small, .muted { color: #666; }
"""


def _e(value: Any) -> str:
    return escape(str(value))


def _status(status: str) -> str:
    css = {"no test": "notest"}.get(status, status)
    return f'<span class="{_e(css)}">{_e(status)}</span>'


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.4f}%"


def _table(head: list[str], rows: list[list[str]]) -> str:
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{header}</tr>{body}</table>"


def _list(items: list[dict[str, Any]], key: str) -> str:
    if not items:
        return '<span class="muted">—</span>'
    return "<br>".join(f"{_e(item[key])} {_status(item['outcome'])}" for item in items)


def render(data: dict[str, Any]) -> str:
    """The page for a certification's data (``certify.json``)."""
    summary = data["summary"]
    verdict = "passed" if data["passed"] else "failed"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>tablejack certification report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>tablejack certification report</h1>",
        f"<p class='verdict {verdict}'>{'PASSED' if data['passed'] else 'FAILED'}</p>",
        f"<p class='muted'>Generated {_e(data['generated'])}; rules files: "
        f"{_e(', '.join(data['options']['rules_files']))}; seed {_e(data['options']['seed'])}.</p>",
    ]
    if data.get("warnings"):
        parts.append("<h2>Rules file warnings</h2><ul>")
        parts += [f"<li>{_e(w)}</li>" for w in data["warnings"]]
        parts.append("</ul>")
    if data["failures"]:
        parts.append("<h2>Failures</h2><ul>")
        parts += [f"<li class='failed'>{_e(f)}</li>" for f in data["failures"]]
        parts.append("</ul>")
    scope = summary["no_test_by_scope"]
    parts.append(
        "<h2>Clause matrix</h2>"
        f"<p>{summary['clauses']} clauses of PA 633b.16, PA 633c.5 and NJ multi-action blackjack: "
        f"{summary['passed']} proved by passing tests or scenarios, {summary['failed']} failed, "
        f"{summary['no_test']} without a test ({scope['engine']} engine, {scope['server']} "
        f"server, {scope['procedure']} floor procedure). {summary['tests_run']} clause tests run "
        f"({summary['tests_failed']} failed), {summary['scenarios']} scenarios.</p>"
    )
    parts.append(
        _table(
            ["clause", "title", "scope", "status", "tests", "scenarios"],
            [
                [
                    f"<b>{_e(r['id'])}</b>",
                    _e(r["title"]),
                    _e(r["scope"]),
                    _status(r["status"]),
                    _list(r["tests"], "node"),
                    _list(r["scenarios"], "file"),
                ]
                for r in data["clauses"]
            ],
        )
    )
    parts.append("<h2>Ambiguities and readings</h2>")
    parts.append(
        _table(
            [
                "id",
                "where",
                "reading taken",
                "option that changes it",
                "documented",
                "tests",
                "scenarios",
            ],
            [
                [
                    f"<b>{_e(r['id'])}</b>",
                    _e(r["where"]),
                    _e(r["reading"]),
                    _e(r["option"]),
                    _e(r["docs"]),
                    _list(r["tests"], "node"),
                    _list(r["scenarios"], "file"),
                ]
                for r in [*data["ambiguities"], *data["readings"]]
            ],
        )
    )
    parts.append("<h2>Wagers: exact and simulated house edge</h2>")
    parts.append(
        "<p class='muted'>Exact: the lab's combinatorial analysis for a fresh shoe under the "
        "generated strategy. Simulated: one round per freshly shuffled shoe (no cut-card effect), "
        f"the same strategy; they agree within {data['options']['agreement_se']:g} standard "
        "errors.</p>"
    )
    parts.append(
        _table(
            [
                "rules file",
                "wager",
                "exact edge",
                "simulated edge ± s.e.",
                "difference",
                "hit frequency",
                "hands",
                "verdict",
            ],
            [
                [
                    _e(r["rules_file"].rsplit("/", 1)[-1]),
                    _e(r["wager"]),
                    _pct(r.get("exact_edge")),
                    "—"
                    if r.get("simulated_edge") is None
                    else f"{_pct(r['simulated_edge'])} ± {_pct(r['stderr'])}",
                    "—" if r.get("difference_se") is None else f"{r['difference_se']:+.2f} s.e.",
                    "—"
                    if r.get("hit_frequency") is None
                    else f"{_pct(r['hit_frequency'])} <small>{_e(r['hit_frequency_method'])}</small>",
                    _e(f"{r.get('hands', 0):,}"),
                    f"<span class='{_e(r['verdict'])}'>{_e(r['verdict'])}</span>"
                    + (f"<br><small>{_e(r['note'])}</small>" if r.get("note") else ""),
                ]
                for r in data["wagers"]
            ],
        )
    )
    parts.append("<h2>Shuffle and generator statistics</h2>")
    for report in data["shuffle"]:
        parts.append(
            f"<h3>{_e(report['source'])} generator, {report['decks']} decks, "
            f"{report['shoes']:,} shoes {_status('passed' if report['passed'] else 'failed')}</h3>"
        )
        parts.append(
            _table(
                ["test", "statistic", "df", "p-value", "result"],
                [
                    [
                        _e(t["name"]),
                        f"{t['statistic']:.3f}",
                        "z" if t["df"] is None else _e(t["df"]),
                        f"<span class='{'watch' if t['watch'] else ''}'>{t['p_value']:.4g}</span>",
                        _status("passed" if t["passed"] else "failed"),
                    ]
                    for t in report["tests"]
                ],
            )
        )
        counts = report["first_card_frequencies"]
        low, high = min(counts.values()), max(counts.values())
        parts.append(
            f"<p class='muted'>First card dealt: each of the 52 cards between {low:,} and "
            f"{high:,} times (expected {report['shoes'] / 52:,.1f}).</p>"
        )
    parts.append("<h2>Property runs</h2>")
    parts.append(
        _table(
            [
                "rules file",
                "game",
                "rounds",
                "settlements",
                "exactly once",
                "conservation",
                "replay",
                "result",
            ],
            [
                [
                    _e(p["rules_file"].rsplit("/", 1)[-1]),
                    _e(p["game"]),
                    _e(f"{p['rounds']:,}"),
                    _e(f"{p['settlements']:,}"),
                    _e(p["failed"]["exactly_once"]) + " failed",
                    _e(p["failed"]["conservation"]) + " failed",
                    _e(p["failed"]["replay"]) + " failed",
                    _status("passed" if p["passed"] else "failed"),
                ]
                for p in data["properties"]
            ],
        )
    )
    parts.append("<h2>Scenarios</h2>")
    parts.append(
        _table(
            ["file", "game", "clauses cited", "result"],
            [
                [
                    _e(s["file"]),
                    _e(s["game"]),
                    _e(", ".join(s["clauses"])),
                    _status(s["outcome"])
                    + "".join(f"<br><small>{_e(m)}</small>" for m in s["mismatches"]),
                ]
                for s in data["scenarios"]
            ],
        )
    )
    if data["tests"]["command"]:
        parts.append(
            f"<p class='muted'>Clause tests: <code>{_e(' '.join(data['tests']['command']))} "
            "…</code>; outcomes read from junit.xml.</p>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)
