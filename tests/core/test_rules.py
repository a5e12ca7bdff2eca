"""Rules configuration (the Rules Submission, PA § 601a.2): validation naming the clause, TOML
loading and the mapping round trip."""

from __future__ import annotations

import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tablejack.core import ClassicRules, RoundingPolicy, RulesError
from tablejack.games import load_rules

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"


def test_defaults_follow_the_recommended_reading() -> None:
    rules = ClassicRules()
    assert rules.decks == 6
    assert rules.blackjack_pays == Fraction(3, 2)
    assert rules.dealer_hits_soft_17 is False
    assert rules.double_down_totals == "any"
    assert rules.double_totals is None
    assert rules.double_after_split is True
    assert rules.max_split_hands == 4
    assert rules.resplit_aces is False
    assert rules.one_card_to_split_aces is True
    assert rules.late_surrender is True
    assert rules.insurance is True
    assert rules.even_money is True
    assert rules.hole_card_peek is True
    assert rules.ez_bust is False
    assert rules.ez_bust_push_all is False
    assert rules.rounding is RoundingPolicy.DOWN
    assert (rules.table_minimum, rules.table_maximum, rules.betting_unit) == (1000, 500_000, 100)


@pytest.mark.parametrize("decks", range(1, 9))
def test_633a3_a_one_to_eight_decks_allowed(decks: int) -> None:
    assert ClassicRules(decks=decks).decks == decks


@pytest.mark.parametrize("decks", [0, 9, -1, 12])
def test_633a3_a_decks_outside_1_to_8_refused(decks: int) -> None:
    with pytest.raises(RulesError, match=r"PA 633a\.3\(a\)") as caught:
        ClassicRules(decks=decks)
    assert caught.value.rule == "PA 633a.3(a)"


def test_633a7_dealer_hits_soft_17_refused() -> None:
    with pytest.raises(RulesError, match=r"stands on all 17s.*PA 633a\.7") as caught:
        ClassicRules(dealer_hits_soft_17=True)
    assert caught.value.rule == "PA 633a.7"


@pytest.mark.parametrize("totals", ["any", "9-11", "10-11"])
def test_633a10_double_totals_choices(totals: str) -> None:
    rules = ClassicRules(double_down_totals=totals)
    assert (
        rules.double_totals
        == {
            "any": None,
            "9-11": frozenset({9, 10, 11}),
            "10-11": frozenset({10, 11}),
        }[totals]
    )


@pytest.mark.parametrize("totals", ["11", "8-11", "", "ANY"])
def test_633a10_unknown_double_totals_refused(totals: str) -> None:
    with pytest.raises(RulesError, match=r"PA 633a\.10") as caught:
        ClassicRules(double_down_totals=totals)
    assert caught.value.rule == "PA 633a.10"


@pytest.mark.parametrize("hands", [1, 0, 9])
def test_633a11_c_max_split_hands_outside_2_to_8_refused(hands: int) -> None:
    with pytest.raises(RulesError, match=r"PA 633a\.11\(c\)") as caught:
        ClassicRules(max_split_hands=hands)
    assert caught.value.rule == "PA 633a.11(c)"
    assert ClassicRules(max_split_hands=2).max_split_hands == 2
    assert ClassicRules(max_split_hands=8).max_split_hands == 8


@pytest.mark.parametrize(
    "limits",
    [
        {"table_minimum": 1050},
        {"table_maximum": 500_050},
        {"table_minimum": 0},
        {"table_minimum": 50},
        {"table_minimum": 2000, "table_maximum": 1000},
        {"betting_unit": 0},
        {"betting_unit": 300},
    ],
)
def test_633a6_money_limits_must_be_multiples_of_the_unit(limits: dict[str, int]) -> None:
    with pytest.raises(RulesError, match=r"PA 633a\.6") as caught:
        ClassicRules(**limits)
    assert caught.value.rule == "PA 633a.6"


def test_633a6_odd_limits_with_a_matching_unit_are_fine() -> None:
    rules = ClassicRules(table_minimum=1050, table_maximum=2_000_050, betting_unit=50)
    assert rules.table_minimum == 1050


def test_633a8_e_even_money_without_insurance_refused() -> None:
    with pytest.raises(RulesError, match=r"PA 633a\.8\(e\)") as caught:
        ClassicRules(insurance=False)
    assert caught.value.rule == "PA 633a.8(e)"
    assert ClassicRules(insurance=False, even_money=False).insurance is False


def test_633b16_g_push_all_without_ez_bust_refused() -> None:
    with pytest.raises(RulesError, match=r"PA 633b\.16\(g\)") as caught:
        ClassicRules(ez_bust_push_all=True)
    assert caught.value.rule == "PA 633b.16(g)"
    assert ClassicRules(ez_bust=True, ez_bust_push_all=True).ez_bust_push_all


@pytest.mark.parametrize("pays", [Fraction(2), Fraction(1), Fraction(7, 5)])
def test_633a13_blackjack_pays_3_to_2_or_6_to_5_only(pays: Fraction) -> None:
    with pytest.raises(RulesError, match=r"PA 633a\.13") as caught:
        ClassicRules(blackjack_pays=pays)
    assert caught.value.rule == "PA 633a.13"
    assert ClassicRules(blackjack_pays=Fraction(6, 5)).blackjack_pays == Fraction(6, 5)


@pytest.mark.parametrize("penetration", [0.0, 1.5, -0.1])
def test_633a5_penetration_must_be_a_fraction_of_the_shoe(penetration: float) -> None:
    with pytest.raises(RulesError) as caught:
        ClassicRules(penetration=penetration)
    assert caught.value.rule == "PA 633a.5"


@pytest.mark.parametrize("key", ["deck", "dealer_hits_soft17", "surrender", "ez"])
def test_601a2_unknown_fields_refused(key: str) -> None:
    with pytest.raises(RulesError, match=f"Unknown rules field '{key}'") as caught:
        ClassicRules.from_mapping({key: 1})
    assert caught.value.rule == "PA 601a.2"


@pytest.mark.parametrize(
    "data",
    [
        {"decks": "six"},
        {"decks": 6.0},
        {"decks": True},
        {"late_surrender": "yes"},
        {"late_surrender": 1},
        {"ez_bust": "true"},
        {"name": 7},
        {"penetration": "0.75"},
        {"penetration": False},
        {"blackjack_pays": "three to two"},
        {"blackjack_pays": 1.5},
        {"rounding": "sideways"},
        {"table_minimum": 10.5},
        {"table_minimum": "ten dollars"},
        {"max_split_hands": "4"},
    ],
)
def test_601a2_wrong_types_refused(data: dict[str, Any]) -> None:
    with pytest.raises(RulesError) as caught:
        ClassicRules.from_mapping(data)
    assert caught.value.rule == "PA 601a.2"
    assert next(iter(data)) in caught.value.message


def test_601a2_rules_for_another_game_refused() -> None:
    with pytest.raises(RulesError, match="not 'hybrid'") as caught:
        ClassicRules.from_mapping({"game": "hybrid"})
    assert caught.value.rule == "PA 601a.2"
    assert ClassicRules.from_mapping({"game": "classic"}) == ClassicRules()


def test_from_mapping_converts_money_odds_and_policies() -> None:
    rules = ClassicRules.from_mapping(
        {
            "table_minimum": "$5",
            "table_maximum": 100_000,
            "betting_unit": "$0.50",
            "blackjack_pays": "6 to 5",
            "rounding": "half-up",
            "penetration": 1,
            "decks": 2,
        }
    )
    assert rules.table_minimum == 500
    assert rules.table_maximum == 100_000
    assert rules.betting_unit == 50
    assert rules.blackjack_pays == Fraction(6, 5)
    assert rules.rounding is RoundingPolicy.HALF_UP
    assert rules.penetration == 1.0
    assert isinstance(rules.penetration, float)


def test_from_mapping_still_validates_the_clauses() -> None:
    with pytest.raises(RulesError) as caught:
        ClassicRules.from_mapping({"decks": 9})
    assert caught.value.rule == "PA 633a.3(a)"


VARIANTS = [
    {},
    {"decks": 1, "double_down_totals": "10-11", "double_after_split": False},
    {"decks": 2, "max_split_hands": 2, "resplit_aces": True, "one_card_to_split_aces": False},
    {"late_surrender": False, "insurance": False, "even_money": False, "hole_card_peek": False},
    {"ez_bust": True, "ez_bust_push_all": True, "rounding": RoundingPolicy.UP},
    {"blackjack_pays": Fraction(6, 5), "table_minimum": 550, "betting_unit": 50, "name": "x"},
    {"penetration": 0.5, "double_for_less": False, "double_down_totals": "9-11"},
]


@pytest.mark.parametrize("changes", VARIANTS)
def test_to_mapping_from_mapping_round_trip(changes: dict[str, Any]) -> None:
    rules = ClassicRules(**changes)
    data = rules.to_mapping()
    assert data["game"] == "classic"
    assert ClassicRules.from_mapping(data) == rules


@pytest.mark.parametrize("changes", VARIANTS)
def test_toml_round_trip(changes: dict[str, Any], tmp_path: Path) -> None:
    rules = ClassicRules(**changes)
    path = tmp_path / "rules.toml"
    path.write_text(tomli_w.dumps(rules.to_mapping()), encoding="utf-8")
    assert ClassicRules.from_toml(path) == rules
    assert load_rules(path) == rules
    assert load_rules(path, game_id="classic") == rules


def test_to_mapping_writes_money_and_odds_as_text() -> None:
    data = ClassicRules(table_minimum=2500).to_mapping()
    assert data["table_minimum"] == "$25.00"
    assert data["blackjack_pays"] == "3 to 2"
    assert data["rounding"] == "down"


def test_replace_validates_again() -> None:
    rules = ClassicRules()
    assert rules.replace(decks=2).decks == 2
    with pytest.raises(RulesError):
        rules.replace(decks=9)


def test_invalid_toml_raises_rules_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("decks = = 6\n", encoding="utf-8")
    with pytest.raises(RulesError, match="not valid TOML") as caught:
        ClassicRules.from_toml(path)
    assert caught.value.rule == "PA 601a.2"


def test_load_rules_refuses_a_file_for_another_game(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text('game = "classic"\ndecks = 2\n', encoding="utf-8")
    with pytest.raises(RulesError, match="not 'hybrid'"):
        load_rules(path, game_id="hybrid")


def test_load_rules_unknown_field_in_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text('game = "classic"\ndeck = 2\n', encoding="utf-8")
    with pytest.raises(RulesError, match="Unknown rules field 'deck'"):
        load_rules(path)


CLASSIC_FILES = sorted(
    path
    for path in RULES_DIR.glob("*.toml")
    if tomllib.loads(path.read_text(encoding="utf-8")).get("game", "classic") == "classic"
)


@pytest.mark.parametrize("path", CLASSIC_FILES, ids=[path.name for path in CLASSIC_FILES])
def test_rules_files_in_the_rules_folder_load_and_round_trip(path: Path) -> None:
    rules = load_rules(path)
    assert isinstance(rules, ClassicRules)
    assert ClassicRules.from_toml(path) == rules
    assert ClassicRules.from_mapping(rules.to_mapping()) == rules


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("late_surrender", "yes", "must be true or false"),
        ("max_split_hands", "4", "must be a whole number"),
        ("decks", True, "must be a whole number"),
        ("blackjack_pays", 1.5, "must be odds"),
        ("rounding", "down", "must be a rounding policy"),
    ],
)
def test_601a2_direct_construction_refuses_wrong_types(
    field: str, value: object, expected: str
) -> None:
    with pytest.raises(RulesError, match=expected) as caught:
        ClassicRules(**{field: value})  # type: ignore[arg-type]
    assert caught.value.rule == "PA 601a.2"
