"""What a terminal is shown besides the engine's own view (``tablejack.server.table.games``): the
dealer's total in every game (soft, Blackjack, bust; before the hole card only the up card's),
each player's own wagers for the chips on the layout, the three dealer rounds of a multi-action
table, and every paytable of the rules icon as data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablejack.core.cards import cards_from_codes
from tablejack.core.errors import IllegalActionError
from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.table.games import ADAPTERS, adapter_for, rules_icon


def play(rules: Any, codes: str, *steps: Callable[[Any], Any] | str) -> Any:
    """A round of ``rules`` dealt ``codes`` in order, through ``steps`` (callables or
    commands)."""
    cards = iter(cards_from_codes(codes))
    round_ = GAMES[rules.game].new_round(rules, None)
    for step in steps:
        if callable(step):
            step(round_)
        else:
            round_.apply(step)
        while round_.card_request is not None:
            round_.deal_card(next(cards))
    return round_


def test_633c5_a_every_registered_game_has_one_table_port_and_no_other_runs() -> None:
    assert list(ADAPTERS) == list(GAMES)  # derived from the registry, in its order
    for game_id, adapter in ADAPTERS.items():
        assert adapter.game == game_id
        assert adapter_for(game_id) is adapter  # stateless: one serves every table
    with pytest.raises(IllegalActionError, match="no terminal adapter") as refused:
        adapter_for("baccarat")
    assert refused.value.rule == "PA 633c.5(a)"


def test_633a_classic_dealer_shows_its_up_card_then_its_total_and_bust() -> None:
    rules = ClassicRules(ez_bust=True)
    codes = "6S 5C 9D 10H 3C AS 9H 7D"
    adapter = adapter_for("classic")
    dealt = play(
        rules, codes, lambda r: r.place_wager(1, "ann", 1000), lambda r: r.close_wagering()
    )
    view = adapter.player_view(dealt, "ann")
    assert view["dealer"]["cards"] == ["5C", "back"]
    assert (view["dealer"]["total"], view["dealer"]["showing"]) == (
        None,
        {"total": 5, "soft": False},
    )
    assert view["you"]["hands"][0]["total"] == 15
    done = play(
        rules,
        codes,
        lambda r: r.place_wager(1, "ann", 1000),
        lambda r: r.close_wagering(),
        "1 ez-bust",
        "1 hit",
        "1 hit",
        "1 hit",
    )
    view = adapter.player_view(done, "ann")
    dealer = view["dealer"]
    assert (dealer["total"], dealer["bust"], dealer["showing"]) == (22, True, None)
    [hand] = view["you"]["hands"]
    assert (hand["cards"], hand["total"], hand["bust"]) == (
        ["6S", "9D", "3C", "AS", "9H"],
        28,
        True,
    )
    assert [(w["kind"], w["amount"]) for w in view["you"]["wagers"]] == [
        ("blackjack", 1000),
        ("ez_bust", 1000),
    ]


def test_633c5_version_a_dealer_totals_and_the_players_wagers_in_one_broadcast() -> None:
    adapter = adapter_for("hybrid")
    round_ = play(
        HybridRules(),
        "6S 10D 5H 7C 9C",
        lambda r: r.place_wager("ann", 1, 2500),
        lambda r: r.place_buzzer_beater("ann", 500),
        lambda r: r.close_wagering(),
    )
    views = adapter.player_views(round_, ["ann", "bob"])
    assert views["ann"]["dealer"]["showing"] == {"total": 10, "soft": False}
    assert views["bob"]["dealer"]["showing"] == {"total": 10, "soft": False}  # watching only
    assert views["bob"]["you"] is None
    round_.apply("ann double")
    while round_.card_request is not None:
        round_.deal_card(cards_from_codes("9C")[0])
    ann = adapter.player_view(round_, "ann")
    assert (ann["dealer"]["total"], ann["dealer"]["soft"], ann["dealer"]["bust"]) == (
        17,
        False,
        False,
    )
    assert [(w["kind"], w["amount"], w["hand"]) for w in ann["you"]["wagers"]] == [
        ("blackjack", 5000, 0),
        ("buzzer_beater", 500, None),
    ]
    assert (ann["you"]["hands"][0]["wager"], ann["you"]["hands"][0]["doubled"]) == (5000, 2500)


def test_633c5_y_version_b_personal_dealer_hand_and_the_first_cards_total() -> None:
    adapter = adapter_for("hybrid-shared")
    round_ = play(
        HybridSharedRules(),
        "AS 9D 6H 3C 7D 10C",
        lambda r: r.place_wager("ann", 1000),
        lambda r: r.close_wagering(),
        "ann hit",
        "ann stand",
    )
    view = adapter.player_views(round_, ["ann"])["ann"]
    assert view["dealer"]["showing"] == {"total": 9, "soft": False}
    dealer_hand = view["you"]["dealer_hand"]
    assert (dealer_hand["cards"], dealer_hand["total"], dealer_hand["bust"]) == (
        ["9D", "7D", "10C"],
        26,
        True,
    )
    assert view["you"]["designations"] == ["hand 1", "dealer", "dealer"]
    assert view["you"]["wagers"] == [{"kind": "blackjack", "amount": 1000, "hand": 0, "spot": None}]


def test_nj_mab_three_dealer_rounds_with_their_totals() -> None:
    adapter = adapter_for("multi-action")
    round_ = play(
        MultiActionRules(),
        "10S 6H 9D 10C 8D 5C 9C AS",
        lambda r: r.place_wager(1, "ann", [1000, 1000, 1000]),
        lambda r: r.close_wagering(),
        "1 stand",
    )
    view = adapter.player_view(round_, "ann")
    rounds = view["dealer"]["rounds"]
    assert [(rounds[k]["total"], rounds[k]["soft"], rounds[k]["bust"]) for k in "123"] == [
        (24, False, True),
        (20, False, False),
        (17, True, False),
    ]
    assert [w["spot"] for w in view["you"]["wagers"]] == [1, 2, 3]


def test_633c5_c2_c3_the_rules_icon_carries_every_paytable_as_data() -> None:
    a = rules_icon(HybridRules(), 20, "stand")
    assert a["facts"]["blackjack_pays"] == [3, 2]
    assert a["facts"]["insurance_pays"] == [2, 1]
    assert a["facts"]["dealer_hits_soft_17"] is False
    [buzzer] = a["paytables"]
    assert buzzer["kind"] == "buzzer_beater"
    assert {"hand": "20", "against": ["21", "blackjack"], "pays": "30 to 1"}.items() <= next(
        row for row in buzzer["rows"] if row["pays"] == "30 to 1"
    ).items()
    b = rules_icon(HybridSharedRules(), 20, "stand")
    kinds = {table["kind"]: table for table in b["paytables"]}
    assert list(kinds) == ["royal_match", "bet_the_set", "kings_bounty"]
    royal = {row["hand"]: row["odds"] for row in kinds["royal_match"]["rows"]}
    assert royal == {"royal-match": [25, 1], "suited-match": [5, 2], "crown-treasure": [1000, 1]}
    top = kinds["kings_bounty"]["rows"][0]
    assert (top["hand"], top["odds"]) == ("spade-kings-dealer-blackjack", [1000, 1])
    assert "posted paytables" in " ".join(b["lines"])  # and now the icon shows them
    ez = rules_icon(ClassicRules(ez_bust=True, ez_bust_push_all=True), 20, "stand")
    [table] = ez["paytables"]
    assert [(row["hand"], row["pays"]) for row in table["rows"]] == [
        ("dealer-busts", "1 to 1"),
        ("all-blackjack-or-bust", "push"),
    ]
    assert rules_icon(ClassicRules(), 20, "stand")["paytables"] == []


def test_633c5_z_the_rules_icon_names_the_totals_the_countdown_hits() -> None:
    rules = HybridSharedRules(
        countdown_default="table", countdown_table={"hard-11": "hit", "soft-17": "hit"}
    )
    icon = rules_icon(rules, 20, "table")
    assert icon["facts"]["countdown_hits"] == ["hard-11", "soft-17"]
    assert "a hard total of 11 or a soft total of 17 is hit automatically" in icon["lines"][3]
    assert rules_icon(HybridRules(), 20, "stand")["facts"]["countdown_hits"] == []


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(1, 21))
def test_633c5_version_a_texts_spliced_from_parts_are_the_views_encoded(
    seed: int, players: int
) -> None:
    """A broadcast encodes the table's part and every player's entry once and splices each
    player's own part in (``player_texts``): at every step of a dealt round, from the deal
    to settlement, each player's text is exactly the encoding of his view, and a terminal
    without a wager this round gets the public view's."""
    import random

    from tablejack.core.shoe import Shoe
    from tablejack.games.hybrid import HybridRound, bot_command, bot_seat
    from tablejack.server.support.wire import dumps

    adapter = adapter_for("hybrid")
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=seed))
    bot_seat(round_, random.Random(seed), players)
    everyone = [*round_.players, "watcher-1", "watcher-2"]
    while True:
        views = adapter.player_views(round_, everyone)
        texts = adapter.player_texts(round_, everyone, dumps)
        assert texts == {player: dumps(view) for player, view in views.items()}
        if round_.is_complete:
            break
        command = bot_command(round_)
        assert command is not None
        round_.apply(command)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(1, 21))
def test_633c5_a_broadcast_conceals_each_piece_once_and_gives_each_player_the_same_text(
    seed: int, players: int
) -> None:
    """The information policy at a broadcast (``Concealer``): the pieces of the players' texts
    are searched for names once, and each player's text is the one concealing his whole text
    would give — his own name kept, every other player's label, a name where it is a key left
    as it is — at every step of a dealt round, for the players and for a watcher."""
    import random

    from tablejack.core.shoe import Shoe
    from tablejack.games.hybrid import HybridRound, bot_command, bot_seat
    from tablejack.server import visibility
    from tablejack.server.support.wire import dumps

    adapter = adapter_for("hybrid")
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=seed))
    bot_seat(round_, random.Random(seed), players)
    everyone = [*round_.players, "watcher-1"]
    every = tuple(visibility.pseudonyms(round_, ""))
    while True:
        pieces = adapter.player_pieces(round_, everyone, dumps)
        concealer = visibility.Concealer(round_, dumps)
        for player in everyone:
            whole = "".join(pieces[player])
            expected = visibility.conceal_text(
                whole, visibility.pseudonyms(round_, player), dumps, every
            )
            assert concealer.text(pieces[player], player) == expected
        if round_.is_complete:
            break
        command = bot_command(round_)
        assert command is not None
        round_.apply(command)


def audit_less_its_secrets(round_: Any) -> dict[str, Any]:
    """A version A terminal's view without a wager this round, read off the audit view: every
    secret of the dealer's taken out (the hole card, every card, his total and Blackjack while
    unturned), the table's keys, what it waits for while wagering, the players' names and
    positions (the oracle of the public view, built the long way)."""
    from tablejack.server.table.games.views import dealer_totals

    public = round_.audit_view()
    for secret in ("hole_card", "all_cards", "dealer_total", "dealer_blackjack"):
        public["dealer"].pop(secret, None)
    public["dealer"].update(dealer_totals(round_.dealer, revealed=round_.hole_card_revealed))
    keys = (
        "game",
        "phase",
        "decision_round",
        "countdown_running",
        "countdown_seconds",
        "countdown_default",
        "positions",
        "community_cards",
        "dealer",
    )
    return {key: public[key] for key in keys if key in public} | {
        "waiting_for": public.get("next_step", "") if round_.phase.value == "wagering" else "",
        "you": None,
        "players": [{"player": p["player"], "position": p["position"]} for p in public["players"]],
    }


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(0, 12))
def test_633c5o_a_terminal_without_a_wager_sees_the_audit_view_less_every_secret(
    seed: int, players: int
) -> None:
    """PA 633c.5(o): the public view a watching terminal gets, built from the table's part of
    the players' views, is at every step the audit view with every secret of the dealer taken
    out, key for key and in the same order (its encoding byte for byte), with and without
    players at the table."""
    import random

    from tablejack.core.shoe import Shoe
    from tablejack.games.hybrid import HybridRound, bot_command, bot_seat
    from tablejack.server.support.wire import dumps

    adapter = adapter_for("hybrid")
    round_ = HybridRound(HybridRules(), Shoe.shuffled(6, seed=seed))
    if players:
        bot_seat(round_, random.Random(seed), players)
    while True:
        expected = dumps(audit_less_its_secrets(round_))
        assert dumps(adapter.player_view(round_, "watcher")) == expected
        pieces = adapter.player_pieces(round_, [*round_.players, "watcher"], dumps)
        assert pieces["watcher"] == (expected,)
        if round_.is_complete or not players:
            break
        command = bot_command(round_)
        assert command is not None
        round_.apply(command)
