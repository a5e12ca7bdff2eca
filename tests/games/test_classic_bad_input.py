"""Bad input to a classic round: each is refused with the right error naming the clause, and
changes nothing (the operation log, the phase, the wagers and the settlements are as before)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tablejack.core import (
    ClassicRules,
    IllegalActionError,
    InvalidNotationError,
    RulesError,
    Shoe,
    TablejackError,
)
from tablejack.games.classic import ClassicRound

Table = Callable[..., ClassicRound]


def wagering(table: Table) -> ClassicRound:
    round_ = ClassicRound(ClassicRules(), Shoe.prearranged("10S 7H 6D 9C 5C", decks=6))
    round_.place_wager(1, "ann", 1000)
    return round_


def playing(table: Table) -> ClassicRound:
    return table(["10S 7H", "10D 2H"], "9D", "7C", "3C 5C 5D")


def ez_window(table: Table) -> ClassicRound:
    return table(["10S 7H"], "6D", "10C", "10H", ez_bust=True)


def insurance_window(table: Table) -> ClassicRound:
    return table(["10S 7H"], "AD", "9C", wagers=[1500])


def three_cards(table: Table) -> ClassicRound:
    round_ = table(["5S 2H"], "9D", "7C", "3C 10H")
    round_.hit(1)
    return round_


def _insured(table: Table) -> ClassicRound:
    round_ = table(["10S 7H", "10D 8H"], "AD", "9C")
    round_.take_insurance(1)
    return round_


def complete(table: Table) -> ClassicRound:
    round_ = playing(table)
    round_.stand(1)
    round_.stand(2)
    return round_


CASES: list[
    tuple[str, Callable[[Table], ClassicRound], Callable[[ClassicRound], Any], type, str]
] = [
    (
        "wager below minimum",
        wagering,
        lambda r: r.place_wager(2, "bob", 900),
        IllegalActionError,
        "PA 633a.6(d)",
    ),
    (
        "wager above maximum",
        wagering,
        lambda r: r.place_wager(2, "bob", 500_100),
        IllegalActionError,
        "PA 633a.6(d)",
    ),
    (
        "wager not a unit multiple",
        wagering,
        lambda r: r.place_wager(2, "bob", 1050),
        IllegalActionError,
        "PA 633a.6(d)",
    ),
    (
        "wager not cents",
        wagering,
        lambda r: r.place_wager(2, "bob", "$10"),
        IllegalActionError,
        "PA 633a.6(d)",
    ),
    (
        "wager float",
        wagering,
        lambda r: r.place_wager(2, "bob", 1000.0),
        IllegalActionError,
        "PA 633a.6(d)",
    ),
    (
        "second wager on a seat",
        wagering,
        lambda r: r.place_wager(1, "bob", 1000),
        IllegalActionError,
        "PA 633a.6(d)",
    ),
    ("seat 0", wagering, lambda r: r.place_wager(0, "bob", 1000), IllegalActionError, "PA 633a.2"),
    ("seat 8", wagering, lambda r: r.place_wager(8, "bob", 1000), IllegalActionError, "PA 633a.2"),
    (
        "bad player name",
        wagering,
        lambda r: r.place_wager(2, "bo b", 1000),
        IllegalActionError,
        "PA 633a.6",
    ),
    (
        "empty player name",
        wagering,
        lambda r: r.place_wager(2, "", 1000),
        IllegalActionError,
        "PA 633a.6",
    ),
    ("hit before the deal", wagering, lambda r: r.hit(1), IllegalActionError, "PA 633a.7"),
    (
        "insurance before the deal",
        wagering,
        lambda r: r.take_insurance(1),
        IllegalActionError,
        "PA 633a.8",
    ),
    (
        "close insurance before the deal",
        wagering,
        lambda r: r.close_insurance(),
        IllegalActionError,
        "PA 633a.8",
    ),
    (
        "wager after the deal",
        playing,
        lambda r: r.place_wager(3, "cat", 1000),
        IllegalActionError,
        "PA 633a.6",
    ),
    (
        "close wagering twice",
        playing,
        lambda r: r.close_wagering(),
        IllegalActionError,
        "PA 633a.7",
    ),
    ("out of turn", playing, lambda r: r.hit(2), IllegalActionError, "PA 633a.7"),
    ("seat without a hand", playing, lambda r: r.stand(5), IllegalActionError, "PA 633a.7"),
    (
        "double on three cards",
        three_cards,
        lambda r: r.double_down(1),
        IllegalActionError,
        "PA 633a.10",
    ),
    (
        "surrender on three cards",
        three_cards,
        lambda r: r.surrender(1),
        IllegalActionError,
        "PA 633a.9",
    ),
    (
        "split on three cards",
        three_cards,
        lambda r: r.split(1),
        IllegalActionError,
        "PA 633a.11(a)",
    ),
    ("split of unequal values", playing, lambda r: r.split(1), IllegalActionError, "PA 633a.11(a)"),
    (
        "insurance over half",
        insurance_window,
        lambda r: r.take_insurance(1, 800),
        IllegalActionError,
        "PA 633a.8",
    ),
    (
        "insurance of nothing",
        insurance_window,
        lambda r: r.take_insurance(1, 0),
        IllegalActionError,
        "PA 633a.8",
    ),
    (
        "insurance twice",
        _insured,
        lambda r: r.take_insurance(1),
        IllegalActionError,
        "PA 633a.8",
    ),
    (
        "decision in the insurance window",
        insurance_window,
        lambda r: r.stand(1),
        IllegalActionError,
        "PA 633a.7",
    ),
    (
        "EZ Bust over the initial wager",
        ez_window,
        lambda r: r.place_ez_bust(1, 1100),
        IllegalActionError,
        "PA 633b.16(d)",
    ),
    (
        "EZ Bust outside its window",
        playing,
        lambda r: r.place_ez_bust(1),
        IllegalActionError,
        "PA 633b.16(a)",
    ),
    (
        "EZ Bust outside its window (offered)",
        lambda table: table(["10S 7H"], "9D", "7C", ez_bust=True),
        lambda r: r.place_ez_bust(1),
        IllegalActionError,
        "PA 633b.16(c)",
    ),
    (
        "decline EZ Bust outside its window",
        playing,
        lambda r: r.decline_ez_bust(1),
        IllegalActionError,
        "PA 633b.16(c)",
    ),
    (
        "decision in the EZ Bust window",
        ez_window,
        lambda r: r.hit(1),
        IllegalActionError,
        "PA 633a.7",
    ),
    ("hit on a finished round", complete, lambda r: r.hit(1), IllegalActionError, "PA 633a.7"),
    ("stand on a finished round", complete, lambda r: r.stand(2), IllegalActionError, "PA 633a.7"),
    ("unknown verb", playing, lambda r: r.apply("1 fly"), InvalidNotationError, ""),
    ("amount on a plain verb", playing, lambda r: r.apply("1 stand $5"), InvalidNotationError, ""),
    ("unknown dealer verb", playing, lambda r: r.apply("dealer hit"), InvalidNotationError, ""),
    ("actor not a seat", playing, lambda r: r.apply("ann hit"), InvalidNotationError, ""),
    ("malformed command", playing, lambda r: r.apply("1"), InvalidNotationError, ""),
    ("illegal command text", playing, lambda r: r.apply("2 hit"), IllegalActionError, "PA 633a.7"),
]


@pytest.mark.parametrize(
    ("setup", "action", "error", "rule"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input_refused_with_its_clause_and_no_state_change(
    state_of: Any,
    table: Table,
    setup: Callable[[Table], ClassicRound],
    action: Callable[[ClassicRound], Any],
    error: type[TablejackError],
    rule: str,
) -> None:
    round_ = setup(table)
    before = state_of(round_)
    with pytest.raises(error) as caught:
        action(round_)
    assert caught.value.rule == rule
    if rule:
        assert rule in caught.value.message
    assert state_of(round_) == before


@pytest.mark.parametrize("decks", [0, 9])
def test_633a3_a_decks_outside_the_allowed_set_refused(decks: int) -> None:
    with pytest.raises(RulesError) as caught:
        ClassicRules(decks=decks)
    assert caught.value.rule == "PA 633a.3(a)"


def test_633a3_a_shoe_with_more_decks_than_the_rules_refused() -> None:
    with pytest.raises(IllegalActionError) as caught:
        ClassicRound(ClassicRules(decks=2), Shoe.shuffled(6, seed=1))
    assert caught.value.rule == "PA 633a.3(a)"


def test_a_round_needs_classic_rules() -> None:
    with pytest.raises(TypeError):
        ClassicRound({"decks": 6})  # type: ignore[arg-type]


def test_can_answers_match_the_verbs(table: Table) -> None:
    round_ = playing(table)
    assert round_.can_hit(1) and not round_.can_hit(2)
    assert not round_.can_place_wager(3, "cat", 1000)
    assert not round_.can_split(1)
    assert wagering(table).can_place_wager(2, "bob", 1000)
    assert not wagering(table).can_place_wager(2, "bob", 999)
