"""NJ multi-action blackjack properties (Hypothesis): money is conserved, every wager is settled
exactly once, the exported notation replays to the identical operation log, and the same seed
gives the same history. Players choose at random among the legal actions (doubles on random
spot subsets, insurance of random amounts) under random rules."""

from __future__ import annotations

import random
from collections import defaultdict

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from tablejack.core import Shoe, ShoeExhaustedError, check_settlements, notation
from tablejack.core.records import WagerKind
from tablejack.games import export, replay
from tablejack.games.multi_action import MultiActionRound, MultiActionRules, Phase
from tablejack.games.session import play_rounds

PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STAKES = ("wager", "double", "split", "insurance")

rules_strategy = st.builds(
    MultiActionRules,
    decks=st.integers(1, 4),
    minimum_spots=st.sampled_from([2, 3]),
    dealer_hits_soft_17=st.booleans(),
    double_after_split=st.booleans(),
    max_split_hands=st.integers(3, 4),
    resplit_aces=st.booleans(),
    one_card_to_split_aces=st.booleans(),
    insurance=st.booleans(),
    betting_unit=st.sampled_from([1, 100]),
    table_minimum=st.sampled_from([100, 1000]),
)


def random_command(round_: MultiActionRound, rng: random.Random) -> str:
    """A legal command chosen at random (the round decides what is legal)."""
    if round_.phase is Phase.INSURANCE:
        seat = rng.choice(round_.seats_to_decide())
        choice = rng.randrange(4)
        half = round_.seats[seat].spots[0] // 2
        if choice == 0:
            return "dealer close-insurance"
        if choice == 1 or half < 1:
            return f"{seat} no-insurance"
        if choice == 2:
            return f"{seat} insurance"
        return f"{seat} insurance {rng.randint(1, half)}"
    seat = round_.current_seat
    hand = round_.current_hand
    assert seat is not None and hand is not None
    verb = rng.choice(round_.legal_actions(seat))
    if verb == "double" and rng.random() < 0.6:
        spots = [wager.spot for wager in hand.spots]
        chosen = rng.sample(spots, rng.randint(1, len(spots)))
        return f"{seat} double {','.join(map(str, chosen))}"
    return f"{seat} {verb}"


def play_random(rules: MultiActionRules, seed: int, players: int) -> MultiActionRound:
    """One game from a freshly shuffled shoe with random wagers and random decisions."""
    rng = random.Random(seed)
    round_ = MultiActionRound(rules, Shoe.shuffled(rules.decks, seed=seed))
    for seat in rng.sample(range(1, 8), players):
        count = rng.randint(rules.minimum_spots, 3)
        backed = rng.sample((1, 2, 3), count)
        spots = [
            rules.table_minimum * rng.randint(1, 4) + rules.betting_unit * rng.randint(0, 3)
            if spot in backed
            else 0
            for spot in (1, 2, 3)
        ]
        round_.place_wager(seat, f"p{seat}", spots)
    try:
        round_.close_wagering()
        while not round_.is_complete:
            round_.apply(random_command(round_, rng))
    except ShoeExhaustedError:
        reject()  # seven players on one deck can, rarely, use every card
    return round_


def bookkept_net(round_: MultiActionRound) -> dict[str, int]:
    """Each player's net from the operation log alone: stakes put down, amounts handed back."""
    players = {number: state.player for number, state in round_.seats.items()}
    net: dict[str, int] = defaultdict(int)
    for op in round_.operations:
        if op.kind in STAKES and op.seat is not None and op.amount is not None:
            net[players[op.seat]] -= op.amount
        elif op.kind == "settle" and op.settlement is not None:
            net[op.settlement.player] += op.amount or 0
    return dict(net)


@PROPERTY
@given(rules=rules_strategy, seed=st.integers(0, 2**32), players=st.integers(1, 7))
def test_money_is_conserved(rules: MultiActionRules, seed: int, players: int) -> None:
    round_ = play_random(rules, seed, players)
    independent = bookkept_net(round_)
    house = round_.house_net()
    assert sum(independent.values()) + house == 0
    assert {p: v for p, v in independent.items()} == {
        p: v for p, v in round_.player_net().items() if p in independent
    }


@PROPERTY
@given(rules=rules_strategy, seed=st.integers(0, 2**32), players=st.integers(1, 7))
def test_every_wager_settled_exactly_once_naming_its_spot_and_round(
    rules: MultiActionRules, seed: int, players: int
) -> None:
    round_ = play_random(rules, seed, players)
    check_settlements(round_.wagers, round_.settlements)
    assert sorted(s.wager_id for s in round_.settlements) == [w.id for w in round_.wagers]
    for settlement in round_.settlements:
        if settlement.kind is WagerKind.BLACKJACK:
            assert settlement.spot in (1, 2, 3)
            assert settlement.dealer_round == settlement.spot
            assert settlement.spot == round_.wagers[settlement.wager_id].spot
        else:
            assert settlement.kind is WagerKind.INSURANCE and settlement.dealer_round == 1
    # Rounds are dealt in order, each from the one first card; a round is dealt or skipped.
    dealt = [op.target for op in round_.operations if op.kind == "dealer-round"]
    assert dealt == sorted(dealt)
    for hand in round_.dealer_hands.values():
        assert hand.cards[0] == round_.first_card
    assert sorted([*round_.dealer_hands, *round_.skipped_rounds]) == [1, 2, 3]


@PROPERTY
@given(rules=rules_strategy, seed=st.integers(0, 2**32), players=st.integers(1, 7))
def test_replay_of_exported_notation_is_identical(
    rules: MultiActionRules, seed: int, players: int
) -> None:
    round_ = play_random(rules, seed, players)
    text = notation.dumps(export(round_))
    again = replay(notation.loads(text))
    assert again.operations == round_.operations
    assert again.settlements == round_.settlements
    assert notation.dumps(export(again)) == text


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), insurance=st.booleans(), h17=st.booleans())
def test_same_seed_same_history(seed: int, insurance: bool, h17: bool) -> None:
    rules = MultiActionRules(insurance=insurance, dealer_hits_soft_17=h17)

    def session() -> list[tuple[str, int]]:
        return [
            (notation.dumps(export(r)), r.house_net())
            for r in play_rounds(rules, rounds=8, seed=seed, players=7)
        ]

    first = session()
    assert first == session()
    assert [replay(notation.loads(text)).house_net() for text, _ in first] == [
        house for _, house in first
    ]
