"""The engine's public views the table server reads: ``HybridSharedRound.table_view`` and
``terminal_views`` (633c.5(y): every card of version B is dealt face up, so the table's part is
the same on every terminal) and ``HybridRound.players_in_order`` (633c.5(l): the order of play).
The server reads these instead of any private attribute of a round."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.core import Shoe
from tablejack.games import GAMES
from tablejack.games.hybrid import HybridRound
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared import HybridSharedRound
from tablejack.games.hybrid_shared_rules import HybridSharedRules

PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _states(round_: Any, seed: int, players: int) -> Iterator[Any]:
    """The round after its bots wager, then after each bot command until it is complete."""
    spec = GAMES[round_.game]
    spec.bot_seat(round_, random.Random(seed), players)
    yield round_
    while not round_.is_complete:
        command = spec.bot_command(round_)
        assert command is not None, round_.next_step()
        round_.apply(command)
        yield round_


@PROPERTY
@given(seed=st.integers(0, 10_000), players=st.integers(1, 8))
def test_633c5_y_terminal_views_share_the_table_view_and_equal_each_terminal_view(
    seed: int, players: int
) -> None:
    rules = HybridSharedRules()
    round_ = HybridSharedRound(rules, Shoe.shuffled(rules.decks, seed=seed))
    for state in _states(round_, seed, players):
        names = list(state.players)
        table = state.table_view()
        views = state.terminal_views(names)
        assert list(views) == names
        for name in names:
            assert views[name] == state.terminal_view(name)
            # the shared part, and nothing of any player's own, is what the table view holds
            assert {key: views[name][key] for key in table} == table
            assert "you" not in table and "players" not in table
        if len(names) > 1:  # each view owns its copy: changing one leaves the others alone
            first, second = views[names[0]], views[names[1]]
            first["dealer"]["first_card"] = "changed"
            assert second["dealer"]["first_card"] == table["dealer"]["first_card"]


def test_633c5_y_table_view_before_the_first_card_shows_no_card() -> None:
    view = HybridSharedRound(HybridSharedRules()).table_view()
    assert view["phase"] == "wagering"
    assert view["players_cards"] == [] and view["community_cards"] == []
    assert view["dealer"] == {"first_card": None}


@PROPERTY
@given(seed=st.integers(0, 10_000), players=st.integers(1, 12))
def test_633c5_l_players_in_order_by_position_then_by_wager(seed: int, players: int) -> None:
    rules = HybridRules()
    round_ = HybridRound(rules, Shoe.shuffled(rules.decks, seed=seed))
    for state in _states(round_, seed, players):
        order = [player.name for player in state.players_in_order]
        assert sorted(order) == sorted(state.players)  # every player once
        if state.phase.value != "wagering":  # dealt: by position, ties in wagering order
            wagered = list(state.players)
            assert order == sorted(
                order, key=lambda name: (state.players[name].position, wagered.index(name))
            )
        else:
            assert order == list(state.players)
