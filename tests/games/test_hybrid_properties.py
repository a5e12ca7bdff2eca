"""PA 633c.5 version A: properties over random rounds with many players per position.

Random players back random positions (several per position), with and without Buzzer Beater
and insurance, and decide at random among the legal actions in random order, the countdown
clock expiring at random. For every round: money is conserved by independent bookkeeping, every
wager is settled exactly once, the exported notation replays to the identical operation log,
the same seeds give the same history, and at every decision window every player still playing
stands at the same community-card cursor (no one has seen the card he decides to take).
"""

from __future__ import annotations

import random
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from tablejack.core import Shoe
from tablejack.core.notation import dumps, loads
from tablejack.games import export, replay
from tablejack.games.hybrid import HybridRound, HybridRules, Phase
from tablejack.games.session import play_rounds

# The countdown's options: the two presets and a table ((z), (c)(2)) that hits some totals.
COUNTDOWNS = st.sampled_from(
    [
        ("stand", {}),
        ("hit-hard-11-or-less", {}),
        ("table", {"hard-10": "hit", "hard-16": "hit", "soft-17": "hit", "soft-18": "hit"}),
    ]
)


def _rules(countdown: tuple[str, dict[str, str]], **fields: object) -> HybridRules:
    return HybridRules(countdown_default=countdown[0], countdown_table=countdown[1], **fields)


RULE_VARIANTS = st.builds(
    _rules,
    COUNTDOWNS,
    decks=st.sampled_from([6, 8]),
    split_card_order=st.sampled_from(["hand-by-hand", "second-cards-first"]),
    buzzer_beater_hand=st.sampled_from(["first-hand", "best-hand"]),
    buzzer_beater_no_row=st.sampled_from(["lose", "push"]),
    resplit_aces=st.booleans(),
    one_card_to_split_aces=st.booleans(),
    double_after_split=st.booleans(),
)

DEBITS = frozenset({"wager", "buzzer-beater", "insurance", "double", "split"})


def play_random(rules: HybridRules, shoe_seed: int, choice_seed: int, players: int) -> HybridRound:
    """A complete round: random seating, random legal decisions in random order."""
    rng = random.Random(choice_seed)
    round_ = HybridRound(rules, Shoe.shuffled(rules.decks, seed=shoe_seed))
    unit = rules.betting_unit
    for number in range(players):
        name = f"p{number}"
        wager = rules.table_minimum * rng.randint(1, 4)
        round_.place_wager(name, rng.randint(1, 3), wager)
        if rules.buzzer_beater and rng.random() < 0.5:
            round_.place_buzzer_beater(name, unit * rng.randint(1, wager // unit))
    round_.close_wagering()
    while not round_.is_complete:
        waiting = round_.awaiting_players()
        assert waiting, round_.next_step()
        if round_.phase is Phase.PLAYING:
            check_same_cursor(round_)
        if rng.random() < 0.12:
            round_.apply("dealer countdown-expired")
            continue
        player = rng.choice(waiting)
        actions = round_.legal_actions(player)
        assert actions, (player, round_.next_step())
        round_.apply(f"{player} {rng.choice(actions)}")
    return round_


def check_same_cursor(round_: HybridRound) -> None:
    drawn = len(round_.community_cards)
    for state in round_.players.values():
        if any(not hand.done for hand in state.hands):
            assert state.cursor == drawn, (state.name, state.cursor, drawn)


def bookkept_net(round_: HybridRound) -> dict[str, int]:
    """Each player's net from the operation log alone: money out at each wager, double, split
    and insurance, money back at each settlement."""
    totals: dict[str, int] = defaultdict(int)
    for op in round_.operations:
        if op.kind in DEBITS:
            assert op.note is not None and op.amount is not None
            totals[op.note] -= op.amount
        elif op.kind == "settle":
            assert op.note is not None and op.amount is not None
            totals[op.note] += op.amount
    return dict(totals)


@settings(max_examples=120, deadline=None)
@given(
    rules=RULE_VARIANTS,
    shoe_seed=st.integers(0, 2**32),
    choice_seed=st.integers(0, 2**32),
    players=st.integers(1, 12),
)
def test_633c5_property_money_conserved_and_every_wager_settled_once(
    rules: HybridRules, shoe_seed: int, choice_seed: int, players: int
) -> None:
    round_ = play_random(rules, shoe_seed, choice_seed, players)
    house = round_.house_net()  # raises unless every wager is settled exactly once
    bookkept = bookkept_net(round_)
    assert bookkept == round_.player_net()
    assert sum(bookkept.values()) + house == 0
    assert all(s.clause.startswith("PA 633") for s in round_.settlements)
    assert round_.hole_card_revealed


@settings(max_examples=60, deadline=None)
@given(
    rules=RULE_VARIANTS,
    shoe_seed=st.integers(0, 2**32),
    choice_seed=st.integers(0, 2**32),
    players=st.integers(1, 12),
)
def test_633c5_property_replay_of_the_notation_is_identical(
    rules: HybridRules, shoe_seed: int, choice_seed: int, players: int
) -> None:
    round_ = play_random(rules, shoe_seed, choice_seed, players)
    again = replay(loads(dumps(export(round_))))
    assert again.operations == round_.operations
    assert again.settlements == round_.settlements
    assert again.audit_view() == round_.audit_view()


@settings(max_examples=30, deadline=None)
@given(
    rules=RULE_VARIANTS,
    shoe_seed=st.integers(0, 2**32),
    choice_seed=st.integers(0, 2**32),
    players=st.integers(1, 12),
)
def test_633c5_property_same_seeds_same_history(
    rules: HybridRules, shoe_seed: int, choice_seed: int, players: int
) -> None:
    first = play_random(rules, shoe_seed, choice_seed, players)
    second = play_random(rules, shoe_seed, choice_seed, players)
    assert export(first) == export(second)
    assert first.operations == second.operations


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_633c5_property_bot_sessions_twelve_players_deterministic(seed: int) -> None:
    rules = HybridRules()
    first = [export(r) for r in play_rounds(rules, rounds=5, seed=seed, players=12)]
    second = [export(r) for r in play_rounds(rules, rounds=5, seed=seed, players=12)]
    assert first == second
    for history in first:
        assert len(history.seats) == 12
        assert {seat["position"] for seat in history.seats} == {1, 2, 3}
        replay(history)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 100_000), players=st.integers(1, 21))
def test_633c5p2_only_a_player_the_window_waits_for_has_legal_actions(
    seed: int, players: int
) -> None:
    """§ 633c.5(p)(2): decisions are made within the open window by the players it waits
    for. At every step of rounds played with random legal choices (insurance, even money,
    hits, stands, doubles, splits) and random countdown expiries, a player the window does
    not wait for has no legal action (a terminal view relies on it to skip his checks), and
    a player it waits for has at least one."""
    generator = random.Random(seed)
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=seed))
    for number in range(players):
        round_.place_wager(f"p{number}", number % 3 + 1, 1000 * generator.randint(1, 5))
    round_.close_wagering()
    while not round_.is_complete:
        awaiting = set(round_.awaiting_players())
        for player in round_.players:
            legal = round_.legal_actions(player)
            assert bool(legal) == (player in awaiting), (player, legal, round_.phase)
        if round_.can_countdown_expire() and generator.random() < 0.1:
            round_.countdown_expired()
            continue
        player = generator.choice(sorted(awaiting))
        round_.apply(f"{player} {generator.choice(round_.legal_actions(player))}")
