"""Par sheets: a report per rules file that a regulator could file (HTML, JSON, PNG plots).

Per wager: the house edge, hit frequency, standard deviation, every paytable line with its
probability and return contribution, the method (exact, or simulated with the number of hands
and the standard error); then the generated strategy tables, the dealer probabilities and the
rules. A wager whose paytable gives the player an edge is flagged in red at the top.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tablejack.lab.model import AnalysisRules

__all__ = ["build_parsheet", "write_parsheet", "write_report"]


def build_parsheet(
    spec: Any,
    rules: Any,
    analysis: AnalysisRules,
    *,
    hands: int,
    seed: int,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    what_if: Any = None,
    variations: bool = True,
) -> dict[str, Any]:
    """The par sheet's data (what ``parsheet.json`` holds). ``what_if`` is the
    :class:`~tablejack.lab.whatif.LabRules` the rules came from, when they may be what-if rules
    (a banner names each departure); ``variations`` adds the rule-variation table."""
    from tablejack.lab import whatif

    build = _classic_parsheet if spec.id == "classic" else _game_parsheet
    data = build(spec, rules, analysis, hands=hands, seed=seed, workers=workers, progress=progress)
    whatif.add_to_parsheet(
        data, spec, rules, analysis, what_if, workers=workers, variations=variations
    )
    return data


def _classic_parsheet(
    spec: Any,
    rules: Any,
    analysis: AnalysisRules,
    *,
    hands: int,
    seed: int,
    workers: int | None,
    progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """The par sheet of the ``classic`` game."""
    from tablejack.lab import exact

    result = exact.analyse(analysis)
    sim = spec.simulate(analysis, hands=hands, seed=seed, workers=workers, progress=progress)
    sim_json = sim.to_json()
    main_sim = sim_json["wagers"]["blackjack"]
    net = sim.net_distribution()
    main_lines = [
        {
            "line": f"round net {key} unit(s)",
            "pays": float(key),
            "probability": p,
            "return": float(key) * p,
            "method": "simulated",
        }
        for key, p in sorted(net.items(), key=lambda item: float(item[0]))
    ]
    wagers: list[dict[str, Any]] = [
        {
            "wager": "blackjack",
            "title": "Blackjack Wager (PA 633a.6(d)): 1 to 1, Blackjack 3 to 2",
            "house_edge": result.house_edge,
            "house_edge_method": "exact (generated total-dependent strategy, fresh shoe)",
            "hit_frequency": main_sim["hit_frequency"],
            "stdev": main_sim["stdev"],
            "distribution_method": (
                f"simulated: {sim.rounds:,} hands, seed {seed}, house edge "
                f"{main_sim['house_edge']:.6f} ± {main_sim['stderr']:.6f} (1 s.e.)"
            ),
            "simulated_house_edge": main_sim["house_edge"],
            "simulated_stderr": main_sim["stderr"],
            "lines": main_lines,
            "hand_outcomes": sim.hand_outcomes(),
        }
    ]
    ins = exact.insurance(analysis)
    wagers.append(
        {
            "wager": "insurance",
            "title": "Insurance (PA 633a.8): 2 to 1 against an up ace",
            "house_edge": ins["house_edge"],
            "house_edge_method": "exact (fresh shoe, only the up ace seen)",
            "hit_frequency": ins["win_probability"],
            "stdev": ins["stdev"],
            "distribution_method": "exact",
            "lines": [{**line, "method": "exact"} for line in ins["lines"]],
        }
    )
    if analysis.ez_bust:
        ez = exact.ez_bust(analysis)
        lines = [
            {"line": "dealer busts (633b.16(f)(1))", "pays": 1.0, "probability": ez["win"],
             "return": ez["win"], "method": "exact"},
            {"line": "dealer ends at 21 or less (633b.16(f)(2), A-21)", "pays": -1.0,
             "probability": ez["lose"], "return": -ez["lose"], "method": "exact"},
        ]  # fmt: skip
        if ez["push_all"]:
            lines.append(
                {"line": "push-all (633b.16(g), single-player table)", "pays": 0.0,
                 "probability": ez["push"], "return": 0.0, "method": "exact"}
            )  # fmt: skip
        wager = {
            "wager": "ez_bust",
            "title": "EZ Bust (PA 633b.16): 1 to 1, against an up card 2-6",
            "house_edge": ez["house_edge"],
            "house_edge_method": "exact (single-player table playing the generated strategy)",
            "hit_frequency": ez["win"],
            "stdev": ez["stdev"],
            "distribution_method": "exact",
            "lines": lines,
            "by_up_card": ez["by_up"],
        }
        sim_ez = sim_json["wagers"].get("ez_bust")
        if sim_ez:
            wager["simulated_house_edge"] = sim_ez["house_edge"]
            wager["simulated_stderr"] = sim_ez["stderr"]
        wagers.append(wager)
    flagged = [w["wager"] for w in wagers if w["house_edge"] < 0]
    return {
        "game": spec.id,
        "title": getattr(rules, "name", "") or f"{spec.id} par sheet",
        "rules": rules.to_mapping(),
        "analysis_rules": analysis.to_json(),
        "wagers": wagers,
        "player_edge_wagers": flagged,
        "strategy": result.strategy.charts(),
        "composition_exceptions": [
            {k: e[k] for k in ("up", "hand", "best", "gain")}
            for e in result.composition_exceptions()
        ],
        "dealer_probabilities": exact.dealer_table(analysis),
        "method": {
            "exact": "combinatorial analysis, dealer probabilities exact for the cards removed; "
            "split hands by the split approximation (docs/lab.md)",
            "simulation": {
                "hands": sim.rounds,
                "shoes": sim.shoes,
                "seed": seed,
                "penetration": analysis.penetration,
                "kernel": "tablejack.lab._sim_kernels (numba), one seat",
            },
        },
    }


TITLES = {
    "blackjack": "Blackjack Wager: 1 to 1, Blackjack 3 to 2",
    "insurance": "Insurance: 2 to 1 against an up ace",
    "buzzer_beater": "Buzzer Beater (PA 633c.5(m), (u), (v)(3))",
    "royal_match": "Royal Match 21 with Crown Treasure (PA 633c.5(x), (ee)(3); 633a.13(f))",
    "bet_the_set": "Bet the Set (PA 633c.5(x), (ee)(4); 633a.13(g))",
    "kings_bounty": "King's Bounty (PA 633c.5(x), (ee)(5); 633a.13(h))",
}

METHODS = {
    "hybrid": "exact: the peek game of one player at one position (community cards are the "
    "next cards of the shoe for that player); split hands by the split approximation; the Buzzer "
    "Beater from the exact joint distribution of the player's and the dealer's final hands "
    "(first hand after a split, A-6)",
    "hybrid-shared": "exact: no hole card, each player's dealer hand from the cards after the "
    "player's own (for one player exactly the shoe order); a dealer Blackjack takes the original "
    "wager of a live double or split (A-19, A-10: max of the original and the busted wagers) or "
    "the full amount, per the rules; split hands by the split approximation; side wagers by "
    "enumeration of every deal in exact rational arithmetic",
    "multi-action": "exact per betting spot: each round's dealer hand, given the player's final "
    "hand, is distributed as a fresh dealer hand from the shoe without the player's cards (the "
    "rounds are dependent but each has that marginal), so the expected return of each spot is "
    "the single-round no-hole-card game's, and the strategy that maximises one spot maximises "
    "all; the dealer Blackjack takes every amount at risk (A-29); split hands by the split "
    "approximation",
}


def _game_parsheet(
    spec: Any,
    rules: Any,
    analysis: AnalysisRules,
    *,
    hands: int,
    seed: int,
    workers: int | None,
    progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """The par sheet of a game other than ``classic``: every offered wager's exact figures;
    the main wager's distribution simulated when the game has a kernel."""
    from tablejack.lab import exact
    from tablejack.lab.model import CARD_LABELS

    result = exact.analyse(analysis)
    sim = spec.simulate(
        analysis, game_rules=rules, hands=hands, seed=seed, workers=workers, progress=progress
    )
    sim_json = sim.to_json()
    wagers: list[dict[str, Any]] = []
    for name in spec.offered_wagers(rules):
        if name == "blackjack":
            main = sim_json["wagers"]["blackjack"]
            spots = analysis.spots
            wager: dict[str, Any] = {
                "wager": name,
                "title": TITLES[name] + (" (per betting spot)" if spots > 1 else ""),
                "house_edge": result.house_edge,
                "house_edge_method": "exact (generated total-dependent strategy, fresh shoe)",
                "hit_frequency": main["hit_frequency"],
                "stdev": main["stdev"],
                "distribution_method": (
                    f"simulated: {sim_json['hands']:,} hands, seed {seed}, house edge "
                    f"{main['house_edge']:.6f} ± {main['stderr']:.6f} (1 s.e.)"
                ),
                "simulated_house_edge": main["house_edge"],
                "simulated_stderr": main["stderr"],
                "lines": [
                    {
                        "line": f"round net {key} unit(s)"
                        + (f" over {spots} spots" if spots > 1 else ""),
                        "pays": float(key) / spots,
                        "probability": p,
                        "return": float(key) / spots * p,
                        "method": "simulated",
                    }
                    for key, p in sorted(
                        sim.net_distribution().items(), key=lambda item: float(item[0])
                    )
                ],
                "exact_by_up_card": {
                    CARD_LABELS[u]: {
                        "probability": float(result.up_probability[u]),
                        "player_return": float(result.up_return[u]),
                    }
                    for u in range(10)
                },
            }
            wagers.append(wager)
            continue
        figures = spec.exact(analysis, name, rules)
        entry = {
            "wager": name,
            "title": TITLES.get(name, name),
            "house_edge": figures["house_edge"],
            "house_edge_method": figures.get("method", "exact"),
            "hit_frequency": figures.get("hit_frequency", figures.get("win_probability")),
            "stdev": figures["stdev"],
            "distribution_method": "exact",
            "lines": [{**line, "method": "exact"} for line in figures["lines"]],
        }
        for key in ("joint", "paytable", "house_edge_exact"):
            if key in figures:
                entry[key] = figures[key]
        if name in sim_json["wagers"]:
            entry["simulated_house_edge"] = sim_json["wagers"][name]["house_edge"]
            entry["simulated_stderr"] = sim_json["wagers"][name]["stderr"]
        wagers.append(entry)
    flagged = [w["wager"] for w in wagers if w["house_edge"] < 0]
    simulation = {
        "hands": sim.rounds,
        "shoes": sim.shoes,
        "seed": seed,
        "penetration": analysis.penetration,
        "kernel": "tablejack.lab._sim_games (numba), one player",
        "house_edge": sim_json["house_edge"],
        "stderr": sim_json["stderr"],
    }
    return {
        "game": spec.id,
        "title": getattr(rules, "name", "") or f"{spec.id} par sheet",
        "rules": rules.to_mapping(),
        "analysis_rules": analysis.to_json(),
        "wagers": wagers,
        "player_edge_wagers": flagged,
        "strategy": result.strategy.charts(),
        "composition_exceptions": [
            {k: e[k] for k in ("up", "hand", "best", "gain")}
            for e in result.composition_exceptions()
        ],
        "dealer_probabilities": exact.dealer_table(analysis),
        "method": {"exact": METHODS.get(spec.id, "exact"), "simulation": simulation},
    }


def write_parsheet(
    spec: Any,
    rules: Any,
    analysis: AnalysisRules,
    out: Path,
    *,
    hands: int,
    seed: int,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    exposure_shoes: int = 0,
    what_if: Any = None,
    variations: bool = True,
) -> dict[str, Any]:
    """Write ``parsheet.json``, ``parsheet.html`` and the PNG plots into ``out``; with
    ``exposure_shoes`` also the advantage-play exposure of the offered wagers
    (:mod:`tablejack.lab.exposure`, that many seeded shoes)."""
    data = build_parsheet(
        spec, rules, analysis, hands=hands, seed=seed, workers=workers, progress=progress,
        what_if=what_if, variations=variations,
    )  # fmt: skip
    if exposure_shoes > 0 and analysis.decks is not None:
        from tablejack.lab import exposure

        data["exposure"] = exposure.exposure(
            spec.id, rules, analysis, wagers=spec.offered_wagers(rules), shoes=exposure_shoes,
            seed=seed,
        )  # fmt: skip
    return write_report(data, out)


def write_report(data: dict[str, Any], out: Path) -> dict[str, Any]:
    """Write the par sheet ``data`` (as :func:`build_parsheet` makes it; also the paytable
    designer's, :mod:`.paytable`) into ``out``: ``parsheet.json``, ``parsheet.html``, plots."""
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(data, out)
    if "exposure" in data:  # the advantage-play exposure's plot
        from tablejack.lab import exposure

        plots.append(exposure.plot_exposure(data["exposure"], out / exposure.PLOT_FILE))
    data["files"] = ["parsheet.json", "parsheet.html", *plots]
    (out / "parsheet.json").write_text(json.dumps(data, indent=2, default=float), "utf-8")
    (out / "parsheet.html").write_text(_html(data, plots), "utf-8")
    return data


def _plots(data: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    ups = list(data["dealer_probabilities"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(ups, [data["dealer_probabilities"][u]["bust"] for u in ups], color="#4a6fa5")
    ax.set_xlabel("dealer up card")
    ax.set_ylabel("probability of a bust")
    ax.set_title("Dealer bust probability (before the peek)")
    fig.tight_layout()
    fig.savefig(out / "dealer_bust.png", dpi=100)
    plt.close(fig)
    files.append("dealer_bust.png")
    for wager in data["wagers"]:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        labels = [str(line["pays"]) for line in wager["lines"]]
        ax.bar(labels, [line["probability"] for line in wager["lines"]], color="#6a8f4e")
        ax.set_xlabel("net result (units)")
        ax.set_ylabel("probability")
        ax.set_title(f"{wager['wager']}: distribution of the result")
        fig.tight_layout()
        name = f"{wager['wager']}_distribution.png"
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        files.append(name)
    return files


def _pct(value: float) -> str:
    return f"{value * 100:.4f}%" if math.isfinite(value) else "n/a"


def _num(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "n/a"


def _html(data: dict[str, Any], plots: list[str]) -> str:
    from tablejack.lab import whatif

    e = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(data['title'])}</title>",
        "<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto}"
        "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #999;"
        "padding:2px 6px;text-align:right}.flag{background:#c00;color:#fff;padding:1rem;"
        "font-weight:bold}.whatif{background:#fc0;color:#000;padding:1rem;font-weight:bold;"
        "border:3px solid #000}</style></head><body>",
        f"<h1>Par sheet: {e(data['title'])}</h1>",
        *whatif.banner_html(data),
    ]
    for name in data["player_edge_wagers"]:
        wager = next(w for w in data["wagers"] if w["wager"] == name)
        parts.append(
            f"<div class='flag'>PLAYER EDGE: the {e(name)} wager returns "
            f"{_pct(-wager['house_edge'])} to the player (house edge "
            f"{_pct(wager['house_edge'])}).</div>"
        )
    parts.append(
        "<h2>Summary</h2><table><tr><th>wager</th><th>house edge</th>"
        "<th>hit frequency</th><th>standard deviation</th><th>method</th></tr>"
    )
    for w in data["wagers"]:
        parts.append(
            f"<tr><td>{e(w['title'])}</td><td>{_pct(w['house_edge'])}</td>"
            f"<td>{_pct(w['hit_frequency'])}</td><td>{_num(w['stdev'])}</td>"
            f"<td>{e(w['house_edge_method'])}; distribution: {e(w['distribution_method'])}</td></tr>"
        )
    parts.append("</table>")
    for w in data["wagers"]:
        parts.append(
            f"<h2>{e(w['title'])}</h2><table><tr><th>line</th><th>pays (net)</th>"
            "<th>probability</th><th>return contribution</th><th>method</th></tr>"
        )
        for line in w["lines"]:
            parts.append(
                f"<tr><td>{e(line['line'])}</td><td>{line['pays']:+g}</td>"
                f"<td>{line['probability']:.8f}</td><td>{line['return']:+.8f}</td>"
                f"<td>{e(line['method'])}</td></tr>"
            )
        total = sum(line["return"] for line in w["lines"])
        parts.append(f"<tr><th>total</th><td></td><td></td><td>{total:+.8f}</td><td></td></tr>")
        parts.append("</table>")
        if "joint" in w:
            joint = w["joint"]
            parts.append(
                "<p>Joint distribution of the player's final hand (rows) and the dealer's "
                "final hand (columns):</p><table><tr><th></th>"
                + "".join(f"<th>{e(c)}</th>" for c in joint["columns"])
                + "</tr>"
            )
            for label, row in zip(joint["rows"], joint["probability"], strict=True):
                parts.append(
                    f"<tr><th>{e(label)}</th>" + "".join(f"<td>{p:.6f}</td>" for p in row) + "</tr>"
                )
            parts.append(
                f"<tr><th>player bust</th><td colspan='7'>{joint['player_bust']:.6f}</td></tr>"
                "</table>"
            )
        if "exact_by_up_card" in w:
            parts.append(
                "<p>Exact return by the dealer's up card (per initial wager):</p><table><tr>"
                "<th>up card</th><th>probability</th><th>player's return</th></tr>"
            )
            for up, row in w["exact_by_up_card"].items():
                parts.append(
                    f"<tr><td>{e(up)}</td><td>{row['probability']:.6f}</td>"
                    f"<td>{row['player_return']:+.6f}</td></tr>"
                )
            parts.append("</table>")
        if "by_up_card" in w:
            parts.append(
                "<table><tr><th>up card</th><th>win</th><th>lose</th><th>push</th>"
                "<th>house edge</th></tr>"
            )
            for up, row in w["by_up_card"].items():
                parts.append(
                    f"<tr><td>{e(up)}</td><td>{row['win']:.6f}</td><td>{row['lose']:.6f}</td>"
                    f"<td>{row['push']:.6f}</td><td>{_pct(row['house_edge'])}</td></tr>"
                )
            parts.append("</table>")
        plot = f"{w['wager']}_distribution.png"
        if plot in plots:
            parts.append(f"<img src='{plot}' alt='{e(w['wager'])} distribution'>")
    if "exposure" in data:
        from tablejack.lab.exposure import html_section

        parts.append(html_section(data["exposure"]))
    parts.extend(whatif.variations_html(data))
    parts.append("<h2>Basic strategy (generated from the rules)</h2>")
    for name, chart in data["strategy"].items():
        parts.append(
            f"<h3>{e(name)}</h3><table><tr><th></th>"
            + "".join(f"<th>{u}</th>" for u in "23456789TA")
            + "</tr>"
        )
        for row, codes in chart.items():
            parts.append(
                f"<tr><th>{e(row)}</th>" + "".join(f"<td>{c}</td>" for c in codes) + "</tr>"
            )
        parts.append("</table>")
    parts.append("<h2>Dealer probabilities</h2><img src='dealer_bust.png' alt='dealer bust'>")
    parts.append("<h2>Rules</h2><table>")
    for key, value in data["rules"].items():
        parts.append(f"<tr><th>{e(str(key))}</th><td>{e(str(value))}</td></tr>")
    parts.append("</table><h2>Method</h2>")
    parts.append(f"<pre>{e(json.dumps(data['method'], indent=2))}</pre></body></html>")
    return "\n".join(parts)
