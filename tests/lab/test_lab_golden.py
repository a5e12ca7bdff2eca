"""Golden figures of the exact analysis: every shipped rules file and offered wager, and a set of
rule variants that reach every branch of the exact kernels, pinned to the last digit.

The figures were written by the exact kernels before they were rewritten to one source per
concept (``tablejack.lab._exact_kernels``); a rewrite of the kernels must reproduce them bit for
bit (floats compared with ``==``, arrays by the SHA-256 of their bytes). Regenerate only for a
deliberate change of the mathematics::

    .venv/bin/python tests/lab/test_lab_golden.py --write
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tablejack.games import load_rules
from tablejack.games.hybrid_rules import BuzzerBeaterEdgeWarning
from tablejack.lab import exact
from tablejack.lab.buzzer import joint_final_hands
from tablejack.lab.games import lab_game
from tablejack.lab.model import AnalysisRules

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "data" / "exact_golden.json"

VARIANTS: dict[str, dict[str, Any]] = {
    "6D S17 DAS SP4 LS peek": {"decks": 6},
    "1D H17": {"decks": 1, "h17": True},
    "2D H17 NDAS D10-11 NS": {
        "decks": 2,
        "h17": True,
        "das": False,
        "double_totals": frozenset({10, 11}),
        "late_surrender": False,
    },
    "infinite deck S17": {"decks": None},
    "infinite deck H17 RSA HSA": {
        "decks": None,
        "h17": True,
        "resplit_aces": True,
        "hit_split_aces": True,
    },
    "8D RSA SP3 6:5": {
        "decks": 8,
        "resplit_aces": True,
        "max_split_hands": 3,
        "blackjack_pays": 1.2,
    },
    "4D no peek (original wager)": {"decks": 4, "peek": False},
    "6D no peek, full double": {"decks": 6, "peek": False, "double_full_amount": True},
    "2D no peek, full amount NS": {
        "decks": 2,
        "peek": False,
        "double_full_amount": True,
        "split_full_amount": True,
        "late_surrender": False,
    },
    "3D no splits D9-11": {"decks": 3, "split": False, "double_totals": frozenset({9, 10, 11})},
    "5D HSA SP8": {"decks": 5, "hit_split_aces": True, "max_split_hands": 8},
}

EZ_VARIANTS = ("6D S17 DAS SP4 LS peek", "1D H17", "2D H17 NDAS D10-11 NS", "5D HSA SP8")
PUSH_ALL_VARIANTS = ("6D S17 DAS SP4 LS peek", "infinite deck H17 RSA HSA")
JOINT_VARIANTS = ("6D S17 DAS SP4 LS peek", "1D H17", "8D RSA SP3 6:5", "5D HSA SP8")


def _digest(array: np.ndarray) -> str:
    data = np.ascontiguousarray(array, dtype=np.float64)
    return hashlib.sha256(data.tobytes()).hexdigest()


def _clean(value: Any) -> Any:
    """JSON-ready data with every float kept exactly (NaN as a string)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, np.floating | float):
        return "nan" if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _analysis_figures(analysis: exact.ExactAnalysis) -> dict[str, Any]:
    return {
        "house_edge": analysis.house_edge,
        "up_return": analysis.up_return.tolist(),
        "hand_values": _digest(analysis.hand_values),
        "strategy": _digest(np.concatenate([a.ravel() for a in analysis.strategy.arrays()])),
    }


def _rules_file_figures(path: Path) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BuzzerBeaterEdgeWarning)
        rules = load_rules(path)
    spec = lab_game(rules.game)
    analysis = AnalysisRules.from_rules(rules)
    out: dict[str, Any] = {"analysis": _analysis_figures(exact.analyse(analysis)), "wagers": {}}
    for wager in spec.offered_wagers(rules):
        out["wagers"][wager] = _clean(spec.exact(analysis, wager, rules))
    return out


def _variant_figures(name: str) -> dict[str, Any]:
    rules = AnalysisRules(**VARIANTS[name])
    out = _analysis_figures(exact.analyse(rules))
    tables = [
        exact.dealer_table(rules, post_peek=post_peek, removed=removed)
        for post_peek in (False, True)
        for removed in ((), ("5", "T", "A"))
        if rules.decks is not None or not removed
    ]
    out["dealer"] = _digest(np.array([[list(u.values()) for u in t.values()] for t in tables]))
    if name in EZ_VARIANTS:
        out["ez_bust"] = _clean(exact.ez_bust(rules, push_all=False))
    if name in PUSH_ALL_VARIANTS:
        out["ez_bust_push_all"] = _clean(exact.ez_bust(rules, push_all=True))
    if name in JOINT_VARIANTS and rules.peek:
        data = joint_final_hands(rules)
        out["joint"] = _clean(
            {"joint": data["joint"], "bust": data["bust"], "surrender": data["surrender"]}
        )
    return out


def compute() -> dict[str, Any]:
    """Every golden figure, as the exact analysis gives it now."""
    return {
        "rules_files": {
            path.name: _rules_file_figures(path) for path in sorted((ROOT / "rules").glob("*.toml"))
        },
        "variants": {name: _variant_figures(name) for name in VARIANTS},
    }


def _golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text())
    return data


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "rules").glob("*.toml")))
def test_rules_file_exact_figures_are_unchanged_to_the_last_digit(name: str) -> None:
    expected = _golden()["rules_files"][name]
    got = _rules_file_figures(ROOT / "rules" / name)
    assert got["analysis"] == expected["analysis"]
    assert got["wagers"] == expected["wagers"]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_rule_variant_exact_figures_are_unchanged_to_the_last_digit(name: str) -> None:
    expected = _golden()["variants"][name]
    got = _variant_figures(name)
    assert got == expected


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit(
            "usage: test_lab_golden.py --write  (regenerates tests/lab/data/exact_golden.json)"
        )
    GOLDEN.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
