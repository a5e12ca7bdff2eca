"""PA 633c.5 version A rules configuration (HybridRules) and the Buzzer Beater paytable screen."""

from __future__ import annotations

import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tablejack.core import ClassicRules, RulesError
from tablejack.core.rules import rules_from_toml_text
from tablejack.games import GAMES, load_rules
from tablejack.games.hybrid import HybridRound
from tablejack.games.hybrid_rules import (
    REGULATION_PAYTABLE,
    BuzzerBeaterEdgeWarning,
    BuzzerBeaterRow,
    HybridRules,
    buzzer_beater_review,
    warn_if_player_edge,
)

RULES_FILE = Path(__file__).parents[2] / "rules" / "pa-hybrid-a.toml"

MILD_TABLE = [
    {"player": "blackjack", "dealer": ["blackjack"], "pays": "5 to 1"},
    {"player": "20", "dealer": ["20"], "pays": "5 to 1"},
    {"player": "20", "dealer": ["21", "blackjack"], "pays": "15 to 1"},
    {"player": "19", "dealer": ["19"], "pays": "5 to 1"},
    {"player": 19, "dealer": ["20", "21", "blackjack"], "pays": "10 to 1"},
]


def test_633c5_f_six_or_eight_decks_only() -> None:
    assert HybridRules(decks=6).decks == 6
    assert HybridRules(decks=8).decks == 8
    for decks in (1, 2, 7):
        with pytest.raises(RulesError) as caught:
            HybridRules(decks=decks)
        assert caught.value.rule == "PA 633c.5(f)"


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({"dealer_hits_soft_17": True}, "PA 633c.5(s)"),
        ({"blackjack_pays": Fraction(6, 5)}, "PA 633c.5(v)(1)"),
        ({"insurance_pays": Fraction(1)}, "PA 633c.5(v)(2)"),
        ({"insurance": False}, "PA 633c.5(o)"),
        ({"double_down_totals": "8-11"}, "PA 633a.10"),
        ({"max_split_hands": 1}, "PA 633a.11(c)"),
        ({"countdown_seconds": 0}, "PA 633c.5(p)(2)"),
        ({"countdown_default": "hit"}, "PA 633c.5(c)(2)"),
        ({"split_card_order": "dealer-left"}, "PA 633c.5(q); A-4"),
        ({"buzzer_beater_hand": "last-hand"}, "PA 633c.5(u); A-6"),
        ({"buzzer_beater_no_row": "win"}, "PA 633c.5(u)(1); A-14"),
        ({"buzzer_beater_paytable": ()}, "PA 633c.5(v)(3)"),
    ],
)
def test_633c5_c2_rules_validation_names_the_clause(changes: dict[str, Any], rule: str) -> None:
    with pytest.raises(RulesError) as caught:
        HybridRules(**changes)
    assert caught.value.rule == rule
    assert rule in caught.value.message


@pytest.mark.parametrize(
    ("row", "rule"),
    [
        ({"player": "18", "dealer": ["19"], "pays": "5 to 1"}, "PA 633c.5(u)(1)"),
        ({"player": "20", "dealer": ["19"], "pays": "5 to 1"}, "PA 633c.5(u)(1)"),
        ({"player": "20", "dealer": ["20"], "pays": "0 to 1"}, "PA 633c.5(v)(3)"),
        ({"player": "20", "dealer": ["20"], "pays": "lots"}, "PA 633c.5(v)(3)"),
        ({"player": "20", "dealer": [], "pays": "5 to 1"}, "PA 633c.5(v)(3)"),
        ({"player": "20", "pays": "5 to 1"}, "PA 633c.5(v)(3)"),
        ("20 vs 20", "PA 633c.5(v)(3)"),
    ],
)
def test_633c5_v3_invalid_paytable_rows_refused(row: Any, rule: str) -> None:
    with pytest.raises(RulesError) as caught:
        HybridRules(buzzer_beater_paytable=(row,))
    assert caught.value.rule == rule


def test_633c5_v3_a_row_may_not_pay_the_same_hands_twice() -> None:
    rows = (("20", "20", "5 to 1"), ("20", ["21", "20"], "9 to 1"))
    with pytest.raises(RulesError) as caught:
        HybridRules(buzzer_beater_paytable=rows)
    assert "twice" in caught.value.message


def test_633c5_v3_default_paytable_is_the_regulation_text() -> None:
    rules = HybridRules()
    assert rules.buzzer_beater_paytable == REGULATION_PAYTABLE
    assert [row.describe() for row in rules.buzzer_beater_paytable] == [
        "player blackjack against dealer blackjack pays 5 to 1",
        "player 20 against dealer 20 pays 5 to 1",
        "player 20 against dealer 21 or blackjack pays 30 to 1",
        "player 19 against dealer 19 pays 5 to 1",
        "player 19 against dealer 20 pays 10 to 1",
        "player 19 against dealer 21 or blackjack pays 10 to 1",
    ]
    assert rules.buzzer_beater_odds("20", "blackjack") == 30
    assert rules.buzzer_beater_odds("21", "21") is None


def test_633c5_rules_round_trip_through_toml() -> None:
    rules = HybridRules(
        decks=8,
        countdown_default="hit-hard-11-or-less",
        split_card_order="second-cards-first",
        buzzer_beater_hand="best-hand",
        buzzer_beater_no_row="push",
        buzzer_beater_paytable=tuple(BuzzerBeaterRow.parse(row) for row in MILD_TABLE),
    )
    text = tomli_w.dumps(rules.to_mapping())
    again = HybridRules.from_mapping(rules_from_toml_text(text))
    assert again == rules
    assert HybridRules.from_mapping(HybridRules().to_mapping()) == HybridRules()


def test_633c5_rules_from_mapping_refuses_unknown_fields_and_other_games() -> None:
    with pytest.raises(RulesError):
        HybridRules.from_mapping({"surrender": True})
    with pytest.raises(RulesError):
        HybridRules.from_mapping({"game": "classic"})


def test_633c5_v3_a13_loader_warns_for_the_30_to_1_row() -> None:
    with pytest.warns(BuzzerBeaterEdgeWarning, match="20 against dealer 21 or blackjack"):
        rules = load_rules(RULES_FILE)
    assert isinstance(rules, HybridRules)
    assert rules.buzzer_beater_paytable == REGULATION_PAYTABLE
    assert rules.name == "PA 633c.5 hybrid table, version A, six decks"
    with pytest.warns(BuzzerBeaterEdgeWarning):
        HybridRules.from_toml(RULES_FILE)


def test_633c5_v3_a13_constructing_or_replaying_rules_never_warns() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rules = HybridRules()
        HybridRules.from_mapping(rules.to_mapping())
    assert [row.pays for row in buzzer_beater_review(rules)] == [Fraction(30)]


def test_633c5_v3_a13_no_warning_below_the_threshold_or_when_not_offered(
    tmp_path: Path,
) -> None:
    mild = tmp_path / "mild.toml"
    mild.write_text(
        tomli_w.dumps({"game": "hybrid", "buzzer_beater_paytable": MILD_TABLE}), encoding="utf-8"
    )
    off = tmp_path / "off.toml"
    off.write_text('game = "hybrid"\nbuzzer_beater = false\n', encoding="utf-8")
    strict = tmp_path / "strict.toml"
    strict.write_text(
        tomli_w.dumps(
            {
                "game": "hybrid",
                "buzzer_beater_paytable": MILD_TABLE,
                "buzzer_beater_review_odds": "12 to 1",
            }
        ),
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_rules(mild).buzzer_beater_odds("20", "21") == 15
        assert warn_if_player_edge(load_rules(off)) == []
    with pytest.warns(BuzzerBeaterEdgeWarning, match="15 to 1"):
        load_rules(strict)


def test_633c5_hybrid_game_is_registered() -> None:
    spec = GAMES["hybrid"]
    assert spec.rules_class is HybridRules
    assert spec.default_players == 12
    with pytest.raises(TypeError):
        HybridRound(ClassicRules())  # type: ignore[arg-type]
