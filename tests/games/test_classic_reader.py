"""Driving a classic round from a card-reading shoe, one card at a time (``deal_card``): the same
operation log as dealing from a shoe object; unrequested or impossible cards refused with no
state change (§ 633a.3(a), § 633a.14 irregularities)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablejack.core import (
    Card,
    ClassicRules,
    IllegalActionError,
    InvalidNotationError,
    Shoe,
)
from tablejack.core.notation import RoundHistory, load
from tablejack.games import export, replay, scenarios
from tablejack.games.classic import CardTarget, ClassicRound, Phase

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def play_with_reader(
    rules: ClassicRules,
    seats: Iterable[tuple[int, str, int]],
    cards: Sequence[Card],
    commands: Sequence[str],
) -> ClassicRound:
    """Play a round without a shoe: feed a card whenever one is requested, else a command."""
    round_ = ClassicRound(rules)
    for seat, player, wager in seats:
        round_.place_wager(seat, player, wager)
    round_.close_wagering()
    feed = iter(cards)
    todo = iter(commands)
    while not round_.is_complete:
        if round_.card_request is not None:
            round_.deal_card(next(feed))
        else:
            round_.apply(next(todo))
    assert next(feed, None) is None
    assert next(todo, None) is None
    return round_


def reader_twin(history: RoundHistory) -> ClassicRound:
    rules = ClassicRules.from_mapping(history.rules)
    seats = [(s["seat"], s["player"], s["wager"]) for s in history.seats]
    return play_with_reader(rules, seats, history.cards, history.commands)


HISTORIES = [
    RoundHistory(
        game="classic",
        rules={"ez_bust": True},
        seats=({"seat": 1, "player": "ann", "wager": 1000},),
        cards=tuple(Card.parse(c) for c in ["8S", "6H", "8D", "10C", "3S", "10D", "5C", "9H"]),
        commands=("1 ez-bust", "1 split", "1 ez-bust", "1 double", "1 stand"),
    ),
    RoundHistory(
        game="classic",
        rules={},
        seats=(
            {"seat": 1, "player": "ann", "wager": 1000},
            {"seat": 2, "player": "bob", "wager": 2000},
        ),
        cards=tuple(Card.parse(c) for c in ["AH", "10S", "AS", "KD", "9H", "7C", "2C"]),
        commands=("1 even-money", "2 insurance $5", "2 hit"),
    ),
    RoundHistory(
        game="classic",
        rules={"hole_card_peek": False},
        seats=({"seat": 3, "player": "cat", "wager": 1500},),
        cards=tuple(Card.parse(c) for c in ["8S", "KD", "8D", "AS", "10C", "9C"]),
        commands=("3 split", "3 stand", "3 stand"),
    ),
]


@pytest.mark.parametrize("history", HISTORIES, ids=["ez-split", "even-money", "no-peek"])
def test_633a14_reader_round_log_equals_shoe_round_log(history: RoundHistory) -> None:
    from_shoe = replay(history)
    from_reader = reader_twin(history)
    assert from_reader.operations == from_shoe.operations
    assert from_reader.settlements == from_shoe.settlements
    assert from_reader.cards_dealt == from_shoe.cards_dealt
    assert from_reader.shoe is None


SCENARIO_FILES = sorted(SCENARIOS.glob("classic-*.toml"))


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.name for p in SCENARIO_FILES])
def test_633a14_scenario_files_played_from_the_reader(path: Path) -> None:
    # The commands the round applied (a scenario's expected refusals change nothing).
    history = export(scenarios.play(load(path)).round)
    assert reader_twin(history).operations == replay(history).operations


def test_633a14_card_request_names_the_target_in_deal_order() -> None:
    round_ = ClassicRound(ClassicRules(decks=1))
    round_.place_wager(2, "bob", 1000)
    round_.place_wager(1, "ann", 1000)
    assert round_.card_request is None
    round_.close_wagering()
    wanted = []
    for code in ["2S", "3S", "4S", "5S", "6S", "7S"]:
        request = round_.card_request
        assert request is not None
        wanted.append(request.describe())
        round_.deal_card(code)
    assert wanted == [
        "seat 1",
        "seat 2",
        "dealer up card",
        "seat 1",
        "seat 2",
        "dealer hole card",
    ]
    assert round_.card_request is None
    assert round_.phase is Phase.PLAYING
    assert round_.next_step() == "decision from seat 1"
    round_.hit(1)
    assert round_.card_request == CardTarget("seat", 1, 0)
    assert round_.next_step() == "deal a card to seat 1"


def _waiting_for_decision() -> ClassicRound:
    round_ = ClassicRound(ClassicRules(decks=1))
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    for code in ["10S", "7H", "6D", "9C"]:
        round_.deal_card(code)
    return round_


def test_633a14_card_when_none_is_wanted_refused(state_of: Any) -> None:
    round_ = _waiting_for_decision()
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="No card is wanted") as caught:
        round_.deal_card("2C")
    assert caught.value.rule == "PA 633a.14"
    assert state_of(round_) == before
    assert not round_.can_deal_card(Card.parse("2C"))


def test_633a14_card_before_the_deal_refused(state_of: Any) -> None:
    round_ = ClassicRound(ClassicRules())
    round_.place_wager(1, "ann", 1000)
    before = state_of(round_)
    with pytest.raises(IllegalActionError) as caught:
        round_.deal_card("2C")
    assert caught.value.rule == "PA 633a.14"
    assert state_of(round_) == before


def test_633a14_card_after_the_round_refused(state_of: Any) -> None:
    round_ = _waiting_for_decision()
    round_.stand(1)
    round_.deal_card("2C")
    assert round_.is_complete
    before = state_of(round_)
    with pytest.raises(IllegalActionError):
        round_.deal_card("3C")
    assert state_of(round_) == before


def test_633a3_a_one_copy_more_than_the_decks_hold_refused(state_of: Any) -> None:
    round_ = ClassicRound(ClassicRules(decks=1))
    round_.place_wager(1, "ann", 1000)
    round_.place_wager(2, "bob", 1000)
    round_.close_wagering()
    round_.deal_card("AS")
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="hold only 1") as caught:
        round_.deal_card("AS")
    assert caught.value.rule == "PA 633a.3(a)"
    assert state_of(round_) == before
    round_.deal_card("AD")
    assert round_.seats[2].hands[0].hand.cards == [Card.parse("AD")]


def test_633a3_a_two_decks_hold_two_copies() -> None:
    round_ = ClassicRound(ClassicRules(decks=2))
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    round_.deal_card("AS")
    round_.deal_card("AS")
    assert not round_.can_deal_card(Card.parse("AS"))
    assert round_.can_deal_card(Card.parse("AH"))


@pytest.mark.parametrize("code", ["ZZ", "1S", "", "AS KD"])
def test_unknown_card_code_from_the_reader_refused(state_of: Any, code: str) -> None:
    round_ = ClassicRound(ClassicRules())
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    before = state_of(round_)
    with pytest.raises(InvalidNotationError):
        round_.deal_card(code)
    assert state_of(round_) == before


def test_not_a_card_refused(state_of: Any) -> None:
    round_ = ClassicRound(ClassicRules())
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    before = state_of(round_)
    with pytest.raises(InvalidNotationError):
        round_.deal_card(17)  # type: ignore[arg-type]
    assert state_of(round_) == before


def test_633a14_reader_card_refused_when_the_round_has_a_shoe(state_of: Any) -> None:
    round_ = ClassicRound(ClassicRules(), Shoe.prearranged("10S 7H 6D 9C 5C", decks=6))
    round_.place_wager(1, "ann", 1000)
    round_.close_wagering()
    before = state_of(round_)
    with pytest.raises(IllegalActionError, match="its own shoe") as caught:
        round_.deal_card("2C")
    assert caught.value.rule == "PA 633a.14"
    assert state_of(round_) == before


def test_633a7_decision_refused_while_a_card_is_awaited(state_of: Any) -> None:
    round_ = _waiting_for_decision()
    round_.hit(1)
    before = state_of(round_)
    for action in (round_.hit, round_.stand, round_.double_down, round_.split):
        with pytest.raises(IllegalActionError, match="must first deal a card") as caught:
            action(1)
        assert caught.value.rule == "PA 633a.7"
    assert state_of(round_) == before
    assert round_.legal_actions(1) == []
