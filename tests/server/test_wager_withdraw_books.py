"""Money conserved while wagers are placed, changed and taken back before the first card
(PA 633c.5(k)): whatever a terminal asks, in any order, the table's books move exactly the
difference between what each wager stakes and what the escrow holds, so the escrow holds the
sum of the wagers on the layout, each player has lost exactly his wagers, and no cent is made
or lost; a round replayed from the steps the engine accepted is the same round."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tablejack.core.errors import IllegalActionError
from tablejack.games.hybrid import HybridRound
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.games.hybrid import HybridAdapter

ADAPTER = HybridAdapter()
PLAYERS = ("ann", "bob", "cat")
KINDS = ("blackjack", "buzzer_beater")
AMOUNTS = (1, 100, 500, 1000, 2500, 10_000, 600_000)

steps = st.lists(
    st.tuples(
        st.sampled_from(("wager", "change", "withdraw")),
        st.sampled_from(PLAYERS),
        st.sampled_from(KINDS),
        st.sampled_from(AMOUNTS),
        st.integers(1, 3),
    ),
    max_size=30,
)


def apply(round_: HybridRound, step: tuple[str, str, str, int, int]) -> None:
    verb, player, kind, amount, position = step
    if verb == "wager":
        ADAPTER.place_wager(round_, player, position, kind, amount)
    elif verb == "change":
        ADAPTER.change_wager(round_, player, kind, amount)
    else:
        ADAPTER.withdraw_wager(round_, player, kind)


@settings(max_examples=150, deadline=None)
@given(steps)
def test_633c5_k_money_is_conserved_when_wagers_are_changed_and_taken_back(
    asked: list[tuple[str, str, str, int, int]],
) -> None:
    round_ = HybridRound(HybridRules())
    books = Books("A1")
    balances: Counter[str] = Counter()
    accepted = []
    for step in asked:
        try:
            apply(round_, step)
        except IllegalActionError:
            continue  # refused: nothing changed, nothing booked
        accepted.append(step)
        transfers, _, escrowed, settled = books.diff(round_.wagers, round_.settlements)
        books.accept(escrowed, settled)
        for transfer in transfers:
            balances[transfer.from_account] -= transfer.amount
            balances[transfer.to_account] += transfer.amount
        assert sum(balances.values()) == 0
        on_layout = sum(w.amount for w in round_.wagers)
        assert balances["escrow:A1"] == on_layout == sum(escrowed.values())
        for player in PLAYERS:
            staked = sum(w.amount for w in round_.wagers if w.player == player)
            assert balances[player] == -staked
    replayed = HybridRound(HybridRules())
    for step in accepted:
        apply(replayed, step)
    assert replayed.wagers == round_.wagers
    assert replayed.operations == round_.operations
