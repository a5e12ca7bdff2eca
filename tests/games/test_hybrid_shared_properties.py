"""``hybrid-shared`` as a whole: properties over many bot rounds (money conserved by independent
bookkeeping, every wager settled exactly once, replay of the exported notation identical, same
seed same history, card-reader play identical to shoe play), the registry, the views, the rules
file and the scenario files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.core import RulesError, Shoe, notation
from tablejack.games import GAMES, export, load_rules, replay
from tablejack.games.hybrid_shared import HybridSharedRound
from tablejack.games.hybrid_shared_bots import bot_command, bot_seat
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.session import play_rounds

ROOT = Path(__file__).resolve().parents[2]
STAKES = {"wager", "royal_match", "bet_the_set", "kings_bounty", "insurance", "double", "split"}

# The countdown's options: the two presets and a table ((z), (c)(2)) that hits some totals.
COUNTDOWNS = st.sampled_from(
    [
        ("stand", {}),
        ("hit-hard-11-or-less", {}),
        ("table", {"hard-10": "hit", "hard-16": "hit", "soft-17": "hit", "soft-18": "hit"}),
    ]
)


def _rules(countdown: tuple[str, dict[str, str]], **fields: object) -> HybridSharedRules:
    return HybridSharedRules(countdown_default=countdown[0], countdown_table=countdown[1], **fields)


rules_variants = st.builds(
    _rules,
    COUNTDOWNS,
    decks=st.sampled_from([6, 8]),
    surrender_timing=st.sampled_from(["late", "early"]),
    split_against_dealer_blackjack=st.sampled_from(["original-wager", "full-amount"]),
    double_against_dealer_blackjack=st.sampled_from(["original-wager", "full-amount"]),
    royal_match_paytable=st.sampled_from(["wizard-v1", "wizard-v3"]),
    kings_bounty_paytable=st.sampled_from(["six-deck", "two-deck"]),
    crown_treasure_in_addition=st.booleans(),
)

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ledger(round_: HybridSharedRound) -> dict[str, int]:
    """Each player's net from the operation log alone: stakes placed out, returns back in."""
    net: dict[str, int] = {}
    for op in round_.operations:
        if op.kind in STAKES and op.amount is not None:
            player = str(op.note).split()[0]
            net[player] = net.get(player, 0) - op.amount
        elif op.settlement is not None:
            player = op.settlement.player
            net[player] = net.get(player, 0) + op.settlement.returned
    return net


@PROPERTY
@given(rules=rules_variants, seed=st.integers(0, 10_000), players=st.integers(1, 24))
def test_property_money_conserved_and_every_wager_settled_once(
    rules: HybridSharedRules, seed: int, players: int
) -> None:
    for round_ in play_rounds(rules, rounds=3, seed=seed, players=players):
        house = round_.house_net()  # raises unless each wager was settled exactly once
        assert len(round_.settlements) == len(round_.wagers)
        books = ledger(round_)
        assert books == round_.player_net()
        assert sum(books.values()) + house == 0


@PROPERTY
@given(rules=rules_variants, seed=st.integers(0, 10_000), players=st.integers(1, 24))
def test_property_replay_of_the_exported_notation_is_identical(
    rules: HybridSharedRules, seed: int, players: int
) -> None:
    for round_ in play_rounds(rules, rounds=2, seed=seed, players=players):
        text = notation.dumps(export(round_))
        again = replay(notation.loads(text))
        assert again.operations == round_.operations
        assert again.settlements == round_.settlements


@PROPERTY
@given(seed=st.integers(0, 10_000), players=st.integers(1, 24))
def test_property_same_seed_same_history(seed: int, players: int) -> None:
    rules = HybridSharedRules()
    first = [
        notation.dumps(export(r)) for r in play_rounds(rules, rounds=3, seed=seed, players=players)
    ]
    second = [
        notation.dumps(export(r)) for r in play_rounds(rules, rounds=3, seed=seed, players=players)
    ]
    assert first == second


@PROPERTY
@given(seed=st.integers(0, 10_000), players=st.integers(1, 24))
def test_property_card_reader_play_equals_shoe_play(seed: int, players: int) -> None:
    import random

    rules = HybridSharedRules()
    with_shoe = HybridSharedRound(rules, Shoe.shuffled(6, seed=seed))
    bot_seat(with_shoe, random.Random(seed), players)
    while not with_shoe.is_complete:
        command = bot_command(with_shoe)
        assert command is not None
        with_shoe.apply(command)
    cards = iter(with_shoe.cards_dealt)
    reader = HybridSharedRound(rules)
    bot_seat(reader, random.Random(seed), players)
    while not reader.is_complete:
        if reader.card_request is not None:
            reader.deal_card(next(cards))
        else:
            command = bot_command(reader)
            assert command is not None
            reader.apply(command)
    assert reader.operations == with_shoe.operations


def random_round(rules: HybridSharedRules, seed: int, players: int) -> HybridSharedRound:
    """A round where every command is a random legal one: any waiting player's legal verb
    (insurance amounts and doubles for less included) or the countdown clock."""
    import random

    generator = random.Random(seed)
    round_ = HybridSharedRound(rules, Shoe.shuffled(rules.decks, seed=seed))
    bot_seat(round_, generator, players)
    while not round_.is_complete:
        waiting = round_.players_to_decide()
        assert waiting, round_.next_step()
        if generator.random() < 0.1:
            round_.apply("dealer countdown-expired")
            continue
        player = generator.choice(waiting)
        verb = generator.choice(round_.legal_actions(player))
        if verb in ("insurance", "double") and generator.random() < 0.5:
            round_.apply(f"{player} {verb} $1")
        else:
            round_.apply(f"{player} {verb}")
    return round_


@PROPERTY
@given(rules=rules_variants, seed=st.integers(0, 100_000), players=st.integers(1, 12))
def test_property_random_legal_play_conserves_money_and_replays(
    rules: HybridSharedRules, seed: int, players: int
) -> None:
    round_ = random_round(rules, seed, players)
    house = round_.house_net()
    assert len(round_.settlements) == len(round_.wagers)
    books = ledger(round_)
    assert books == round_.player_net()
    assert sum(books.values()) + house == 0
    for state in round_.players.values():
        dealer = state.dealer
        if round_.start.is_blackjack:
            # (aa)(1): a Blackjack's community card is the hole card and nothing more.
            assert len(dealer) == 2 and len(round_.community_cards) == 1
        else:
            assert len(dealer) >= 2 and (dealer.total >= 17 or dealer.is_blackjack)
        assert len(state.designations) <= len(round_.community_cards)
    again = replay(notation.loads(notation.dumps(export(round_))))
    assert again.operations == round_.operations


# -- registry and automated play -----------------------------------------------------------------


def test_registry_entry_plays_twenty_bots_on_one_shared_start() -> None:
    spec = GAMES["hybrid-shared"]
    assert spec.rules_class is HybridSharedRules
    assert spec.default_players == 20
    rounds = list(play_rounds(HybridSharedRules(), rounds=30, seed=11, players=20))
    assert all(r.is_complete and len(r.players) == 20 for r in rounds)
    paths = {state.path.value for r in rounds for state in r.players.values()}
    assert {"stood", "drew"} <= paths
    # Different choices on the same start give different personal dealer hands.
    assert any(len({tuple(s.dealer.cards) for s in r.players.values()}) > 1 for r in rounds)
    kinds = {s.kind.value for r in rounds for s in r.settlements}
    assert {"royal_match", "bet_the_set", "kings_bounty"} <= kinds
    assert any(op.kind == "countdown-expired" for r in rounds for op in r.operations)
    assert all(line for r in rounds for line in spec.transcript(r))


def test_seats_of_exports_side_wagers_as_seat_entries() -> None:
    (round_,) = play_rounds(HybridSharedRules(), rounds=1, seed=4, players=6)
    entries = GAMES["hybrid-shared"].seats_of(round_)
    assert [entry["player"] for entry in entries] == list(round_.players)
    text = notation.dumps(export(round_))
    assert notation.loads(text).seats == entries


# -- views ----------------------------------------------------------------------------------------


def test_views_terminal_shows_only_the_player_and_audit_shows_every_dealer_hand() -> None:
    rules = HybridSharedRules()
    round_ = HybridSharedRound(rules, Shoe.prearranged("10S KD 6H AC 5H 2D 9S", decks=6))
    round_.place_wager("ann", 1000)
    round_.place_wager("bob", 2000)
    round_.place_side_wager("bob", "kings_bounty", 300)
    round_.close_wagering()
    view = round_.terminal_view("ann")
    text = json.dumps(view)
    assert view["players"] == [{"player": "bob"}]  # a name, nothing else
    assert "kings_bounty" not in text and "2000" not in text
    assert view["community_cards"] == [] and view["you"]["awaiting_decision"] is True
    assert view["countdown_running"] is True and view["waiting_for"] == "decisions"
    assert view["you"]["legal_actions"] == ["hit", "stand", "double", "surrender"]
    assert "shoe_remaining" not in text and "cards_dealt" not in text
    round_.stand("ann")
    ann = round_.terminal_view("ann")
    assert ann["you"]["legal_actions"] == [] and ann["you"]["next_card"] == "dealer"
    assert "AC" not in json.dumps(ann)  # the next card is not dealt until bob decides
    round_.hit("bob")
    round_.stand("bob")
    audit = round_.audit_view()
    json.dumps(audit)
    dealers = {p["player"]: p["dealer_hand"]["cards"] for p in audit["players"]}
    assert dealers == {"ann": ["KD", "AC"], "bob": ["KD", "5H", "2D"]}
    assert [p["designations"] for p in audit["players"]] == [
        ["dealer", None, None],
        ["hand 1", "dealer", "dealer"],
    ]
    assert audit["house_net"] == -sum(round_.player_net().values())
    ann = round_.terminal_view("ann")
    assert ann["you"]["dealer_hand"]["cards"] == ["KD", "AC"] and ann["you"]["net"] == -1000
    assert ann["players"][0]["dealer_hand"] == ["KD", "5H", "2D"]  # shown once complete
    assert "9S" not in json.dumps(ann)  # never dealt


# -- rules ----------------------------------------------------------------------------------------


def test_633c5_f_six_or_eight_decks_and_s17() -> None:
    with pytest.raises(RulesError, match=r"6 or 8 decks \(PA 633c.5\(f\)\)"):
        HybridSharedRules(decks=2)
    with pytest.raises(RulesError) as caught:
        HybridSharedRules(dealer_hits_soft_17=True)
    assert caught.value.rule == "PA 633c.5(bb)(2)"
    with pytest.raises(RulesError, match="A-7"):
        HybridSharedRules(surrender_timing="never")
    with pytest.raises(RulesError, match="A-10"):
        HybridSharedRules(split_against_dealer_blackjack="half")


def test_rules_file_loads_and_round_trips() -> None:
    rules = load_rules(ROOT / "rules" / "pa-hybrid-b.toml")
    assert isinstance(rules, HybridSharedRules)
    assert rules == HybridSharedRules()
    assert HybridSharedRules.from_mapping(rules.to_mapping()) == rules


@pytest.mark.parametrize(
    "path", sorted((ROOT / "scenarios").glob("hybrid-shared-*.toml")), ids=lambda p: p.name
)
def test_scenarios_replay_and_meet_their_expectations(path: Path) -> None:
    history = notation.load(path)
    round_ = replay(history)
    net: dict[str, Any] = {}
    for settlement in round_.settlements:
        net[settlement.player] = net.get(settlement.player, 0) + settlement.net
    assert history.expect["net"] == net
    assert round_.house_net() == -sum(net.values())
