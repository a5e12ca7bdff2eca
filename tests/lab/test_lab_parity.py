"""Parity: identical shoes through the engine (ClassicRound) and the numba kernel give
identical per-round, per-wager results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.core import ClassicRules
from tablejack.lab import _sim_kernels as kern
from tablejack.lab import simulate as sim
from tablejack.lab.exact import analyse
from tablejack.lab.model import AnalysisRules
from tablejack.lab.players import play_engine_shoe

pytestmark = pytest.mark.slow  # engine and kernel on many shoes, kernel compiles

CASES = {
    "6D EZ Bust": ClassicRules(decks=6, ez_bust=True),
    "2D push-all RSA SP3": ClassicRules(
        decks=2,
        ez_bust=True,
        ez_bust_push_all=True,
        resplit_aces=True,
        max_split_hands=3,
        penetration=0.6,
    ),
    "1D D10-11 NS HSA NDAS": ClassicRules(
        decks=1,
        double_down_totals="10-11",
        late_surrender=False,
        one_card_to_split_aces=False,
        double_after_split=False,
    ),
    # no peek (PA 633a.10(b), 633a.11(d)): a dealer Blackjack found at the end takes the
    # original wager of a double or a split, busted hands stay lost
    "6D no peek EZ Bust": ClassicRules(decks=6, hole_card_peek=False, ez_bust=True),
    "1D no peek RSA SP4 NS": ClassicRules(
        decks=1, hole_card_peek=False, resplit_aces=True, late_surrender=False
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_engine_and_kernel_settle_identical_shoes_identically(name: str) -> None:
    rules = CASES[name]
    lab_rules = AnalysisRules.from_rules(rules)
    assert lab_rules.decks is not None
    strategy = analyse(lab_rules.replace(penetration=0.75)).strategy
    cut = sim._cut(lab_rules)
    rounds = 0
    for index in range(40):
        engine = play_engine_shoe(rules, strategy, sim.shoe_cards(77, index, lab_rules.decks), cut)
        words = sim._block_words(77, index // sim.BLOCK, 52 * lab_rules.decks)[index % sim.BLOCK]
        out = np.zeros((600, 4))
        count = kern.record_shoe(
            words, lab_rules.decks, cut, sim._kernel_rules(lab_rules), *strategy.arrays(),
            lab_rules.double_mask(), out,
        )  # fmt: skip
        kernel = [
            {"main": row[0], "ez": row[1], "ez_wagers": int(row[2]), "cards": int(row[3])}
            for row in out[:count]
        ]
        assert kernel == engine, f"shoe {index}"
        rounds += count
    assert rounds > 40 * 5


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    decks=st.sampled_from([1, 2, 4, 6, 8]),
    das=st.booleans(),
    surrender=st.booleans(),
    split_hands=st.integers(min_value=2, max_value=4),
    rsa=st.booleans(),
    one_card=st.booleans(),
    totals=st.sampled_from(["any", "9-11", "10-11"]),
    ez=st.sampled_from([(False, False), (True, False), (True, True)]),
    peek=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_property_engine_and_kernel_agree_for_any_rules_and_seed(
    decks: int,
    das: bool,
    surrender: bool,
    split_hands: int,
    rsa: bool,
    one_card: bool,
    totals: str,
    ez: tuple[bool, bool],
    peek: bool,
    seed: int,
) -> None:
    rules = ClassicRules(
        decks=decks, double_after_split=das, late_surrender=surrender,
        max_split_hands=split_hands, resplit_aces=rsa, one_card_to_split_aces=one_card,
        double_down_totals=totals, ez_bust=ez[0], ez_bust_push_all=ez[1], hole_card_peek=peek,
    )  # fmt: skip
    lab_rules = AnalysisRules.from_rules(rules)
    assert lab_rules.decks is not None
    strategy = analyse(lab_rules.replace(penetration=0.75)).strategy
    cut = sim._cut(lab_rules)
    for index in (0, 1):
        engine = play_engine_shoe(rules, strategy, sim.shoe_cards(seed, index, decks), cut)
        words = sim._block_words(seed, 0, 52 * decks)[index]
        out = np.zeros((600, 4))
        count = kern.record_shoe(
            words, decks, cut, sim._kernel_rules(lab_rules), *strategy.arrays(),
            lab_rules.double_mask(), out,
        )  # fmt: skip
        kernel = [
            {"main": row[0], "ez": row[1], "ez_wagers": int(row[2]), "cards": int(row[3])}
            for row in out[:count]
        ]
        assert kernel == engine


def _index(rank: int) -> int:
    """A card index (rank-major, 0–51) of the rank 1 (ace) … 13 (king)."""
    return (rank - 1) * 4


@pytest.mark.parametrize(
    ("start", "kind"),
    [
        # 6 and 5 against a ten up, an ace in the hole: the player doubles 11 and draws a 9
        ((6, 10, 5, 1, 9), "double"),
        # 8 and 8 against an ace up, a ten in the hole: the player splits and plays both hands
        ((8, 1, 8, 13, 2, 3), "split"),
    ],
)
def test_633a10b_633a11d_without_the_peek_a_dealer_blackjack_takes_only_the_original_wager(
    start: tuple[int, ...], kind: str
) -> None:
    """The engine and the kernel on one prearranged round without the peek: the dealer's
    Blackjack is found at the end and collects the original wager only, not the double or the
    split wagers (§ 633a.10(b), § 633a.11(d)): a net of exactly -1 unit."""
    rules = ClassicRules(decks=6, hole_card_peek=False, late_surrender=False)
    lab_rules = AnalysisRules.from_rules(rules)
    strategy = analyse(lab_rules).strategy
    cards = [_index(rank) for rank in start] + [_index(rank) + 1 for rank in (10, 11, 12, 13)] * 3
    engine = play_engine_shoe(rules, strategy, cards, cut=1)
    shoe = np.array([0 if c < 4 else min(c // 4 + 1, 10) - 1 for c in cards], dtype=np.int8)
    words = np.zeros(len(cards), dtype=np.uint64)  # zero words deal the shoe in its order
    res = np.zeros(6)
    counts = np.zeros(kern.OUTCOMES, dtype=np.int64)
    tab = kern.pack_tables(*strategy.arrays(), lab_rules.double_mask())
    work = np.zeros((8, kern.MAX_HANDS), dtype=np.int64)
    bet = np.zeros(kern.MAX_HANDS)
    end = kern.play_round(
        shoe, words, 0, len(cards), sim._kernel_rules(lab_rules), tab, res, counts, work, bet
    )
    assert res[5 if kind == "double" else 4] >= 1  # the round did double / split
    assert res[3] >= 2.0  # more than the original wager was at risk
    assert engine == [{"main": -1.0, "ez": 0.0, "ez_wagers": 0, "cards": end}]
    assert res[0] == -1.0
