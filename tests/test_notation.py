"""The round notation: ``loads(dumps(h)) == h``, replay of an exported round reproduces its
operation log exactly, hand-written scenarios with ``rules_file``, and malformed notation or
command lists refused (missing, extra or illegal commands, left-over cards)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablejack.core import (
    Card,
    ClassicRules,
    IllegalActionError,
    InvalidNotationError,
    RulesError,
    ShoeExhaustedError,
)
from tablejack.core.notation import FORMAT, RoundHistory, dumps, load, loads
from tablejack.games import export, replay, scenarios
from tablejack.games.session import play_rounds

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("classic-*.toml"))

BASIC = """
game = "classic"
cards = "10S 7H 9D 6C 5S"
commands = ["1 stand"]
[rules]
decks = 1
[[seats]]
seat = 1
player = "ann"
wager = "$10"
"""


def _history(cards: str, commands: list[str], **rules: object) -> RoundHistory:
    return RoundHistory(
        game="classic",
        rules=dict(rules),
        seats=({"seat": 1, "player": "ann", "wager": 1000},),
        cards=tuple(Card.parse(code) for code in cards.split()),
        commands=tuple(commands),
    )


def test_loads_normalises_money_cards_and_commands() -> None:
    history = loads(BASIC)
    assert history.game == "classic"
    assert history.rules == {"decks": 1}
    assert history.seats == ({"seat": 1, "player": "ann", "wager": 1000},)
    assert history.cards == tuple(Card.parse(c) for c in ["10S", "7H", "9D", "6C", "5S"])
    assert history.commands == ("1 stand",)
    assert loads(dumps(history)) == history
    assert f'format = "{FORMAT}"' in dumps(history)
    assert 'wager = "$10.00"' in dumps(history)


def test_replay_plays_a_hand_written_round() -> None:
    round_ = replay(loads(BASIC))
    assert round_.is_complete
    assert round_.player_net() == {"ann": 1000}
    assert round_.dealer.total == 18


def test_extras_survive_the_round_trip() -> None:
    text = 'round_id = "t3/42"\ndescription = "a stand"\n' + BASIC.replace(
        "[rules]", 'expect = { net = { ann = "+$10" } }\n[rules]'
    )
    history = loads(text)
    assert history.round_id == "t3/42"
    assert history.description == "a stand"
    assert history.expect == {"net": {"ann": 1000}}
    assert loads(dumps(history)) == history


def test_cards_as_a_list_and_commands_with_extra_spaces() -> None:
    text = BASIC.replace('"10S 7H 9D 6C 5S"', '["10s", "7H", "9d", "6C", "5S"]').replace(
        '"1 stand"', '"1    stand"'
    )
    assert loads(text) == loads(BASIC)


EXPORTED = [
    _history("10S 7H 9D 6C 5S", ["1 stand"], decks=1),
    _history(
        "8S 6H 8D 10C 3S 10D 5C 9H",
        ["1 ez-bust", "1 split", "1 ez-bust", "1 double", "1 stand"],
        ez_bust=True,
    ),
    _history("AH AS KD QC", ["1 even-money"]),
    _history("10S AS 6H 9C", ["1 insurance $3.00", "1 surrender"]),
    _history("8S KD 8D AS 10C 9C", ["1 split", "1 stand", "1 stand"], hole_card_peek=False),
    _history("AS 10D AD 8C KC 5H", ["1 split"]),
    _history(
        "10D 5D 6H 10C 10H", ["1 ez-bust $4.00", "1 hit"], ez_bust=True, ez_bust_push_all=True
    ),
    _history("6S 10D 5D 7C 10C", ["1 double $5.00"], betting_unit=100),
]


@pytest.mark.parametrize("history", EXPORTED)
def test_replay_of_the_export_reproduces_the_operation_log(history: RoundHistory) -> None:
    round_ = replay(history)
    exported = export(round_, round_id="r1")
    assert exported.round_id == "r1"
    assert exported.cards == history.cards
    assert exported.commands == history.commands
    assert loads(dumps(exported)) == exported
    again = replay(loads(dumps(exported)))
    assert again.operations == round_.operations
    assert again.settlements == round_.settlements
    assert export(again, round_id="r1") == exported


def test_export_of_bot_rounds_round_trips_and_replays() -> None:
    rules = ClassicRules(ez_bust=True, decks=2)
    for round_ in play_rounds(rules, rounds=30, seed=7, players=5):
        exported = export(round_)
        assert loads(dumps(exported)) == exported
        assert replay(exported).operations == round_.operations


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario_files_replay_to_their_expected_results(path: Path) -> None:
    history = load(path)
    run = scenarios.play(history)
    round_ = run.round
    assert round_.is_complete
    assert scenarios.check(history, run) == []
    if "net" in history.expect:
        assert round_.player_net() == history.expect["net"]
    exported = export(round_)
    assert replay(loads(dumps(exported))).operations == round_.operations


def test_hand_written_notation_with_rules_file(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "table.toml").write_text(
        'game = "classic"\ndecks = 2\nez_bust = true\ntable_minimum = "$5"\n', encoding="utf-8"
    )
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(
        """
game = "classic"
rules_file = "rules/table.toml"
cards = "10S 6H 8D 10C 10H"
commands = ["1 ez-bust $5", "1 stand"]
[rules]
ez_bust_push_all = true
[[seats]]
seat = 1
player = "ann"
wager = "$5"
""",
        encoding="utf-8",
    )
    history = load(scenario)
    assert history.rules == {
        "decks": 2,
        "ez_bust": True,
        "table_minimum": "$5",
        "ez_bust_push_all": True,
    }
    round_ = replay(history)
    assert round_.rules.table_minimum == 500
    assert round_.rules.ez_bust_push_all
    assert round_.dealer.is_bust
    assert round_.player_net() == {"ann": 1000}


def test_rules_file_in_the_rules_folder(tmp_path: Path) -> None:
    rules_file = ROOT / "rules" / "pa-classic-6deck.toml"
    if not rules_file.exists():
        pytest.skip("rules/pa-classic-6deck.toml is not in this checkout")
    text = BASIC.replace("[rules]\ndecks = 1\n", f'rules_file = "{rules_file}"\n')
    round_ = replay(loads(text))
    assert round_.rules.decks == 6
    assert round_.rules.ez_bust is True


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("game = ", "not valid TOML"),
        ("colour = 'red'\n" + BASIC, "Unknown field"),
        ('format = "tablejack-round/9"\n' + BASIC, "Format"),
        (BASIC.replace('game = "classic"', ""), "needs game"),
        (BASIC.replace('game = "classic"', "game = 3"), "needs game"),
        (BASIC.replace("10S 7H", "10S 7X"), "not a card code"),
        (BASIC.replace('"10S 7H 9D 6C 5S"', "17"), "cards must be"),
        (BASIC.replace('["1 stand"]', '"1 stand"'), "commands must be"),
        (BASIC.replace('["1 stand"]', "[1]"), "commands must be"),
        (BASIC.replace("[rules]\ndecks = 1\n", "rules = 6\n"), "rules"),
        (BASIC.replace('wager = "$10"', 'wager = "ten"'), "not money"),
        (BASIC.replace('wager = "$10"', "wager = 10.5"), "not money"),
        ('seats = "ann"\n' + BASIC.split("[[seats]]", maxsplit=1)[0], "seats must be"),
        (BASIC.replace("[rules]", 'expect = "win"\n[rules]'), "expect"),
        (BASIC.replace("[rules]", 'expect = { net = "win" }\n[rules]'), "expect.net"),
        (BASIC.replace("[rules]", 'rules_file = "no/such.toml"\n[rules]'), "rules_file"),
    ],
)
def test_malformed_notation_raises_invalid_notation(text: str, match: str) -> None:
    with pytest.raises(InvalidNotationError, match=match):
        loads(text)


def test_load_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidNotationError, match="Cannot read"):
        load(tmp_path / "missing.toml")


def test_replay_refuses_an_unknown_game() -> None:
    with pytest.raises(InvalidNotationError, match="Unknown game"):
        replay(loads(BASIC.replace('"classic"', '"roulette"')))


def test_replay_refuses_invalid_rules() -> None:
    with pytest.raises(RulesError) as caught:
        replay(loads(BASIC.replace("decks = 1", "decks = 9")))
    assert caught.value.rule == "PA 633a.3(a)"
    with pytest.raises(RulesError, match="Unknown rules field"):
        replay(loads(BASIC.replace("decks = 1", "deck = 1")))


def test_replay_missing_command() -> None:
    with pytest.raises(
        InvalidNotationError, match=r"waits for decision from seat 1 \(a missing command\)"
    ):
        replay(loads(BASIC.replace('["1 stand"]', "[]")))


def test_replay_extra_command() -> None:
    with pytest.raises(InvalidNotationError, match=r"Command 2 .* extra command"):
        replay(loads(BASIC.replace('["1 stand"]', '["1 stand", "1 hit"]')))


def test_replay_left_over_cards() -> None:
    text = BASIC.replace("10S 7H 9D 6C 5S", "10S 7H 9D 6C 5S 2C 3C")
    with pytest.raises(InvalidNotationError, match=r"2 card.* never dealt: 2C 3C"):
        replay(loads(text))
    assert replay(loads(text), strict=False).is_complete


def test_replay_too_few_cards() -> None:
    with pytest.raises(ShoeExhaustedError, match="Command 1"):
        replay(loads(BASIC.replace("10S 7H 9D 6C 5S", "10S 7H 9D 6C")))
    with pytest.raises(ShoeExhaustedError, match="Seating the players"):
        replay(loads(BASIC.replace("10S 7H 9D 6C 5S", "10S 7H 9D")))


def test_replay_illegal_command_names_its_position_and_clause() -> None:
    text = BASIC.replace('["1 stand"]', '["1 double $20"]')
    with pytest.raises(IllegalActionError, match=r"Command 1 \('1 double \$20'\)") as caught:
        replay(loads(text))
    assert caught.value.rule == "PA 633a.10"


def test_replay_malformed_command() -> None:
    with pytest.raises(InvalidNotationError, match="Command 1"):
        replay(loads(BASIC.replace('["1 stand"]', '["1 fly"]')))


def test_replay_refuses_more_copies_than_the_decks_hold() -> None:
    with pytest.raises(IllegalActionError) as caught:
        replay(loads(BASIC.replace("10S 7H 9D 6C 5S", "10S 7H 9D 6C 10S")))
    assert caught.value.rule == "PA 633a.3(a)"


@pytest.mark.parametrize(
    ("seat", "error", "match"),
    [
        ('seat = 1\nplayer = "ann"\n', InvalidNotationError, "classic seat"),
        (
            'seat = 1\nplayer = "ann"\nwager = "$10"\nhat = "red"\n',
            InvalidNotationError,
            "classic seat",
        ),
        ('seat = 1\nplayer = "ann"\nwager = "$9"\n', IllegalActionError, "Seating the players"),
        ('seat = 9\nplayer = "ann"\nwager = "$10"\n', IllegalActionError, "Seating the players"),
    ],
)
def test_replay_refuses_bad_seat_entries(seat: str, error: type, match: str) -> None:
    text = BASIC.split("[[seats]]", maxsplit=1)[0] + "[[seats]]\n" + seat
    with pytest.raises(error, match=match):
        replay(loads(text))


def test_replay_refuses_a_round_without_seats() -> None:
    with pytest.raises(IllegalActionError, match="Seating the players"):
        replay(loads(BASIC.split("[[seats]]", maxsplit=1)[0]))
