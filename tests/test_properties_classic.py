"""Properties of the classic game under random legal play (Hypothesis): random rules variants,
random shoes and random choices among ``legal_actions`` (insurance, even money, EZ Bust, splits,
doubles, surrender, the dealer closing a window). Every round completes without error, conserves
money, settles every wager exactly once, replays identically from its exported notation and from
a card reader, and the same seed gives the same history."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.core import (
    ClassicRules,
    Result,
    RoundingPolicy,
    Shoe,
    WagerKind,
    format_cents,
    full_deck,
    hand_total,
)
from tablejack.core.notation import dumps, loads
from tablejack.games import export, replay
from tablejack.games.classic import ClassicRound, Phase

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus")
ROUNDS = 4


@st.composite
def classic_rules(draw: st.DrawFn) -> ClassicRules:
    unit = draw(st.sampled_from([1, 50, 100, 500]))
    minimum = unit * draw(st.integers(1, 20))
    insurance, even_money = draw(st.sampled_from([(True, True), (True, False), (False, False)]))
    ez_bust = draw(st.booleans())
    return ClassicRules(
        decks=draw(st.integers(1, 8)),
        table_minimum=minimum,
        table_maximum=minimum * draw(st.integers(1, 100)),
        betting_unit=unit,
        blackjack_pays=draw(st.sampled_from([Fraction(3, 2), Fraction(6, 5)])),
        rounding=draw(st.sampled_from(list(RoundingPolicy))),
        double_down_totals=draw(st.sampled_from(["any", "9-11", "10-11"])),
        double_after_split=draw(st.booleans()),
        double_for_less=draw(st.booleans()),
        max_split_hands=draw(st.integers(2, 8)),
        resplit_aces=draw(st.booleans()),
        one_card_to_split_aces=draw(st.booleans()),
        late_surrender=draw(st.booleans()),
        insurance=insurance,
        even_money=even_money,
        hole_card_peek=draw(st.booleans()),
        ez_bust=ez_bust,
        ez_bust_push_all=ez_bust and draw(st.booleans()),
    )


def make_shoe(rules: ClassicRules, seed: int, rich: bool) -> Shoe:
    """A shuffled shoe; ``rich`` puts the cards of a few ranks first (many pairs, aces, up
    cards 2-6) so that splits, resplits, insurance and EZ Bust come up often."""
    if not rich:
        return Shoe.shuffled(rules.decks, seed=seed)
    generator = random.Random(seed)
    ranks = set(generator.sample(range(1, 14), generator.randint(2, 5)))
    cards = list(full_deck()) * rules.decks
    generator.shuffle(cards)
    front = [card for card in cards if card.rank in ranks]
    back = [card for card in cards if card.rank not in ranks]
    return Shoe(front + back, decks=rules.decks)


def choose(round_: ClassicRound, generator: random.Random, greedy: bool = False) -> str:
    """A random legal command; ``greedy`` prefers EZ Bust and hitting (to reach every hand
    busted, the EZ Bust push-all case)."""
    rules = round_.rules
    if round_.phase in (Phase.INSURANCE, Phase.EZ_BUST):
        if generator.random() < 0.1:
            return (
                "dealer close-insurance"
                if round_.phase is Phase.INSURANCE
                else "dealer close-ez-bust"
            )
        seat = generator.choice(round_.seats_to_decide())
    else:
        current = round_.current_seat
        assert current is not None
        seat = current
    actions = round_.legal_actions(seat)
    assert actions, f"no legal action for seat {seat} in {round_.phase}"
    action = generator.choice(actions)
    if greedy:
        action = next((a for a in ("ez-bust", "hit") if a in actions), action)
    state = round_.seats[seat]
    amount: int | None = None
    if action == "insurance" and generator.random() < 0.5 and state.wager // 2 >= 1:
        amount = generator.randint(1, state.wager // 2)
    elif action == "ez-bust" and generator.random() < 0.5:
        amount = rules.betting_unit * generator.randint(1, state.wager // rules.betting_unit)
    elif action == "double" and rules.double_for_less and generator.random() < 0.5:
        hand = round_.current_hand
        assert hand is not None
        amount = rules.betting_unit * generator.randint(1, hand.amount // rules.betting_unit)
    if amount is None:
        return f"{seat} {action}"
    return f"{seat} {action} {format_cents(amount)}"


def play(rules: ClassicRules, seed: int, rich: bool) -> ClassicRound:
    """One round: random seats and wagers, then random legal commands until complete."""
    generator = random.Random(seed)
    round_ = ClassicRound(rules, make_shoe(rules, seed, rich))
    seats = generator.sample(range(1, 8), generator.randint(1, min(7, 2 + rules.decks)))
    for seat in seats:
        units = generator.randint(1, rules.table_maximum // rules.betting_unit)
        amount = max(rules.table_minimum, units * rules.betting_unit)
        round_.place_wager(seat, NAMES[seat - 1], amount)
    round_.close_wagering()
    greedy = generator.random() < 0.25
    while not round_.is_complete:
        round_.apply(choose(round_, generator, greedy))
    return round_


def play_many(rules: ClassicRules, seed: int, rich: bool) -> list[ClassicRound]:
    """A few rounds with consecutive seeds (each from its own shoe)."""
    return [play(rules, seed + offset, rich) for offset in range(ROUNDS)]


def reader_twin(round_: ClassicRound) -> ClassicRound:
    """The same round fed card by card, without a shoe."""
    twin = ClassicRound(round_.rules)
    for op in round_.operations:
        if op.kind == "wager":
            assert op.seat is not None and op.amount is not None and op.note is not None
            twin.place_wager(op.seat, op.note, op.amount)
    twin.close_wagering()
    cards = iter(round_.cards_dealt)
    commands = iter(op.command for op in round_.operations if op.command)
    while not twin.is_complete:
        if twin.card_request is not None:
            twin.deal_card(next(cards))
        else:
            twin.apply(next(commands))
    return twin


def check_round(round_: ClassicRound) -> None:
    assert round_.is_complete
    wagers = round_.wagers
    settlements = round_.settlements
    # Every wager settled exactly once (check_settlements raises otherwise).
    house = round_.house_net()
    assert sorted(s.wager_id for s in settlements) == [w.id for w in wagers]
    assert sum(op.kind == "settle" for op in round_.operations) == len(wagers)
    # Money conserved: players' net + house net = 0, and from the raw amounts.
    assert sum(round_.player_net().values()) == -house
    assert sum(w.amount for w in wagers) - sum(s.returned for s in settlements) == house
    assert all(wager.amount >= 1 for wager in wagers)
    for settlement in settlements:
        assert 0 <= settlement.returned <= 3 * settlement.amount
        assert settlement.amount % round_.rules.betting_unit == 0 or (
            settlement.kind is WagerKind.INSURANCE
        )
    # S17: the dealer drew only below 17 and stood on 17 or more (unless nothing needed it).
    dealer = round_.dealer.cards
    for count in range(2, len(dealer)):
        assert hand_total(dealer[:count])[0] < 17
    # EZ Bust (633b.16): settled before the seat's Blackjack Wagers (h), and by (f)/(g)/(i).
    position = {s.wager_id: i for i, s in enumerate(settlements)}
    for state in round_.seats.values():
        blackjack_positions = [position[h.wager_id] for h in state.hands]
        for wager_id in state.ez_wager_ids:
            assert position[wager_id] < min(blackjack_positions)
            settlement = settlements[position[wager_id]]
            if round_.ez_push_all:
                assert settlement.result is Result.PUSH
            elif len(dealer) >= 3 and round_.dealer.is_bust:
                assert (settlement.result, settlement.returned) == (
                    Result.WIN,
                    2 * settlement.amount,
                )
            else:
                assert (settlement.result, settlement.returned) == (Result.LOSE, 0)
        assert len(state.ez_wager_ids) <= 1 + state.splits
        assert all(round_.wagers[w].amount <= state.wager for w in state.ez_wager_ids)
        assert len(state.hands) <= round_.rules.max_split_hands


SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@SETTINGS
@given(rules=classic_rules(), seed=st.integers(0, 2**32), rich=st.booleans())
def test_random_legal_play_conserves_money_and_settles_every_wager_once(
    rules: ClassicRules, seed: int, rich: bool
) -> None:
    for round_ in play_many(rules, seed, rich):
        check_round(round_)


@pytest.mark.slow
@SETTINGS
@given(rules=classic_rules(), seed=st.integers(0, 2**32), rich=st.booleans())
def test_replay_of_the_exported_notation_reproduces_the_round(
    rules: ClassicRules, seed: int, rich: bool
) -> None:
    for round_ in play_many(rules, seed, rich):
        exported = export(round_)
        assert loads(dumps(exported)) == exported
        again = replay(loads(dumps(exported)))
        assert again.operations == round_.operations
        assert again.settlements == round_.settlements
        assert export(again) == exported


@pytest.mark.slow
@SETTINGS
@given(rules=classic_rules(), seed=st.integers(0, 2**32), rich=st.booleans())
def test_card_reader_round_has_the_same_operation_log(
    rules: ClassicRules, seed: int, rich: bool
) -> None:
    for round_ in play_many(rules, seed, rich):
        twin = reader_twin(round_)
        assert twin.operations == round_.operations
        assert twin.settlements == round_.settlements


@settings(max_examples=60, deadline=None)
@given(rules=classic_rules(), seed=st.integers(0, 2**32), rich=st.booleans())
def test_same_seed_gives_the_same_history(rules: ClassicRules, seed: int, rich: bool) -> None:
    for one, two in zip(play_many(rules, seed, rich), play_many(rules, seed, rich), strict=True):
        assert one.operations == two.operations
        assert dumps(export(one)) == dumps(export(two))


def _summary(round_: Any) -> tuple[Any, ...]:
    return (tuple(round_.operations), tuple(round_.settlements))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), ez_bust=st.booleans())
def test_bot_sessions_are_reproducible_and_balanced(seed: int, ez_bust: bool) -> None:
    from tablejack.games.session import play_rounds

    rules = ClassicRules(decks=6, ez_bust=ez_bust)
    one = [_summary(r) for r in play_rounds(rules, rounds=5, seed=seed, players=7)]
    two = list(play_rounds(rules, rounds=5, seed=seed, players=7))
    assert one == [_summary(r) for r in two]
    for round_ in two:
        check_round(round_)
