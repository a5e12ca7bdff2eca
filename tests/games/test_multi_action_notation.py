"""NJ multi-action blackjack: the rules configuration, the command notation, the registry entry,
the rules file and the scenario files."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest

from tablejack.core import Command, InvalidNotationError, RulesError, Shoe, notation
from tablejack.core.errors import IllegalActionError
from tablejack.games import GAMES, export, load_rules, replay, scenarios, transcript
from tablejack.games.multi_action import MultiActionRound, MultiActionRules, parse_command
from tablejack.games.multi_action_bots import bot_command, bot_seat
from tablejack.games.session import play_rounds

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").glob("multi-action-*.toml"))


# -- rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize("decks", [1, 2, 3, 4])
def test_nj_b2_one_to_four_decks(decks: int) -> None:
    assert MultiActionRules(decks=decks).decks == decks


@pytest.mark.parametrize("decks", [0, 5, 6, 8])
def test_nj_b2_other_deck_counts_refused(decks: int) -> None:
    with pytest.raises(RulesError, match="1 to 4 decks") as error:
        MultiActionRules(decks=decks)
    assert error.value.rule == "NJ MAB (b)(2)"


def test_nj_f5_blackjack_pays_3_to_2_only() -> None:
    with pytest.raises(RulesError, match="3 to 2") as error:
        MultiActionRules(blackjack_pays=Fraction(6, 5))
    assert error.value.rule == "NJ MAB (f)(5)"


@pytest.mark.parametrize("minimum", [0, 1, 4])
def test_nj_f1_minimum_spots_is_two_or_three(minimum: int) -> None:
    with pytest.raises(RulesError, match="at least two of the three") as error:
        MultiActionRules(minimum_spots=minimum)
    assert error.value.rule == "NJ MAB (f)(1)"


def test_nj_f1_table_limits_cite_the_nj_clause() -> None:
    with pytest.raises(RulesError) as error:
        MultiActionRules(table_minimum=1050)
    assert error.value.rule == "NJ MAB (f)(1)"


@pytest.mark.parametrize(
    "changes",
    [
        {"max_split_hands": 5},
        {"max_split_hands": 1},
        {"resplit_aces": True},
        {"double_after_split": True, "double_down": False},
    ],
)
def test_nj_a_split_and_double_options_validated(changes: dict[str, object]) -> None:
    with pytest.raises(RulesError):
        MultiActionRules(**changes)  # type: ignore[arg-type]


def test_nj_a24_defaults() -> None:
    rules = MultiActionRules()
    assert (rules.decks, rules.minimum_spots, rules.dealer_hits_soft_17, rules.insurance) == (
        4,
        2,
        False,
        False,
    )
    assert MultiActionRules(dealer_hits_soft_17=True).dealer_hits_soft_17


def test_rules_file_has_every_field_and_round_trips() -> None:
    rules = load_rules(ROOT / "rules" / "nj-multi-action.toml")
    assert isinstance(rules, MultiActionRules)
    text = (ROOT / "rules" / "nj-multi-action.toml").read_text(encoding="utf-8")
    for name in rules.to_mapping():
        if name != "game":
            assert f"\n{name} = " in text, name
    assert MultiActionRules.from_mapping(rules.to_mapping()) == rules


# -- command notation --------------------------------------------------------------------------


def test_notation_double_spot_list_and_errors() -> None:
    assert parse_command("3 double 1,3") == ("3", "double", "1,3")
    round_ = MultiActionRound(
        MultiActionRules(), Shoe.prearranged("5S 9D 6H 10C 10D 10H 10S", decks=4)
    )
    round_.place_wager(1, "ann", (1000, 1000, 1000))
    round_.close_wagering()
    for bad in ("1 double 1,4", "1 double 1;3", "1 double $5", "1 hit 5", "ann hit", "1 fold"):
        with pytest.raises(InvalidNotationError):
            round_.apply(bad)
    with pytest.raises(IllegalActionError, match="twice"):
        round_.apply("1 double 1,1")
    with pytest.raises(InvalidNotationError, match="names spots"):
        round_.apply(Command("1", "double", 500))
    with pytest.raises(InvalidNotationError, match="close-insurance"):
        round_.apply("dealer close-ez-bust")
    assert round_.apply(Command("1", "double")).command == "1 double"
    assert round_.is_complete and round_.player_net() == {"ann": 6000}


# -- registry, bots, session ---------------------------------------------------------------------


def test_registry_entry_is_complete() -> None:
    spec = GAMES["multi-action"]
    assert spec.rules_class is MultiActionRules and spec.new_round is MultiActionRound
    assert spec.default_players == 7


def test_bots_back_two_or_three_spots_and_finish_the_game() -> None:
    generator = random.Random(11)
    counts = set()
    for seed in range(20):
        round_ = MultiActionRound(MultiActionRules(), Shoe.shuffled(4, seed=seed))
        bot_seat(round_, generator, 7)
        counts |= {len(state.backed) for state in round_.seats.values()}
        while not round_.is_complete:
            command = bot_command(round_)
            assert command is not None
            round_.apply(command)
        round_.house_net()
    assert counts == {2, 3}


def test_bots_with_three_spots_and_minimum_three() -> None:
    round_ = MultiActionRound(MultiActionRules(minimum_spots=3), Shoe.shuffled(4, seed=1))
    bot_seat(round_, random.Random(1), 7)
    assert all(state.backed == (1, 2, 3) for state in round_.seats.values())


def test_session_plays_seven_players_and_replays() -> None:
    rounds = list(play_rounds(MultiActionRules(insurance=True), rounds=40, seed=9, players=7))
    assert len(rounds) == 40 and all(r.is_complete for r in rounds)
    for round_ in rounds:
        text = notation.dumps(export(round_))
        assert replay(notation.loads(text)).operations == round_.operations
        assert transcript(round_)[0].startswith("Dealer: first card ")


# -- scenario files -------------------------------------------------------------------------------


def test_scenario_files_exist() -> None:
    assert "multi-action-basic.toml" in [path.name for path in SCENARIOS]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.name)
def test_scenario_meets_its_expectations(path: Path) -> None:
    history = notation.load(path)
    run = scenarios.play(history)
    assert scenarios.check(history, run) == []
    round_ = run.round
    assert round_.player_net() == history.expect["net"]
    assert round_.house_net() == -sum(history.expect["net"].values())
    again = replay(notation.loads(notation.dumps(export(round_))))
    assert again.operations == round_.operations


def test_scenario_basic_card_order_and_results() -> None:
    round_ = replay(notation.load(ROOT / "scenarios" / "multi-action-basic.toml"))
    assert [round_.dealer_hands[k].describe() for k in (1, 2, 3)] == [
        "K♦ 7♣ = 17",
        "K♦ A♦ = Blackjack",
        "K♦ 9♣ = 19",
    ]
    assert [
        (s.player, s.spot, s.dealer_round, s.result.value, s.net) for s in round_.settlements
    ] == [
        ("cat", 2, 2, "lose", -2000),
        ("cat", 3, 3, "lose", -2000),
        ("ann", 1, 1, "blackjack", 1500),
        ("bob", 1, 1, "win", 2000),
        ("ann", 2, 2, "push", 0),
        ("bob", 2, 2, "lose", -1000),
        ("ann", 3, 3, "blackjack", 1500),
    ]
