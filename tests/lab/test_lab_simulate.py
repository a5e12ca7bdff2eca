"""Simulation: seeding independent of chunking and workers, agreement with the exact
analysis, Dask, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tablejack.lab import _sim_kernels as kern
from tablejack.lab import exact
from tablejack.lab.model import AnalysisRules
from tablejack.lab.simulate import BLOCK, run_words, shoe_cards, simulate

pytestmark = pytest.mark.slow  # simulations at size, a Dask cluster

RULES = AnalysisRules(decks=6, ez_bust=True)


def test_a_shoe_is_a_permutation_of_its_decks() -> None:
    cards = shoe_cards(5, 3, 6)
    assert sorted(np.bincount(cards, minlength=52)) == [6] * 52
    assert not np.array_equal(cards, shoe_cards(5, 4, 6))
    assert np.array_equal(cards, shoe_cards(5, 3, 6))


MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def _splitmix64_output(z: int) -> int:
    """SplitMix64's output function, in Python integers (Steele, Lea and Flood 2014)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _reference_shoe(seed: int, index: int, decks: int) -> list[int]:
    """The shoe as docs/lab.md describes it, computed independently of the kernel."""
    w0, w1 = (int(w) for w in np.random.SeedSequence(seed).generate_state(2, np.uint64))
    key = _splitmix64_output(w0 ^ _splitmix64_output((w1 + index * GAMMA) & MASK))
    cards = [i % 52 for i in range(52 * decks)]
    n = len(cards)
    for p in range(n):
        r = _splitmix64_output((key + (p + 1) * GAMMA) & MASK) >> 32
        j = p + ((r * (n - p)) >> 32)
        cards[p], cards[j] = cards[j], cards[p]
    return cards


def test_the_generator_is_splitmix64() -> None:
    # the reference generator's first outputs from state 0 (splitmix64.c, Vigna)
    assert [_splitmix64_output(k * GAMMA & MASK) for k in (1, 2, 3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
    ]  # fmt: skip
    assert int(kern.mix64(np.uint64(GAMMA))) == 0xE220A8397B1DCDAF
    assert int(kern.mix64(np.uint64(3 * GAMMA & MASK))) == 0x06C45D188009454F


@pytest.mark.parametrize(("seed", "index", "decks"), [(0, 0, 1), (5, 3, 6), (2026, 70_000, 8)])
def test_a_shoe_is_the_documented_keyed_fisher_yates_shuffle(
    seed: int, index: int, decks: int
) -> None:
    assert shoe_cards(seed, index, decks).tolist() == _reference_shoe(seed, index, decks)
    assert run_words(seed).dtype == np.uint64


def test_results_do_not_depend_on_chunking() -> None:
    hands = 3 * BLOCK * 40
    one = simulate(RULES, hands=hands, seed=9, workers=1, chunk_blocks=1)
    three = simulate(RULES, hands=hands, seed=9, workers=1, chunk_blocks=3)
    assert np.array_equal(one.stats, three.stats)
    assert np.array_equal(one.hist, three.hist)
    assert np.array_equal(one.counts, three.counts)


def test_results_do_not_depend_on_the_number_of_processes() -> None:
    hands = 2 * BLOCK * 40
    local = simulate(RULES, hands=hands, seed=4, workers=1, chunk_blocks=1)
    pooled = simulate(RULES, hands=hands, seed=4, workers=2, chunk_blocks=1)
    assert pooled.workers == 2
    assert np.array_equal(local.stats, pooled.stats)


def test_simulation_agrees_with_the_exact_house_edge_within_three_standard_errors() -> None:
    result = simulate(RULES, hands=1_500_000, seed=2026, workers=1)
    assert result.rounds >= 1_000_000
    edge = exact.analyse(RULES).house_edge
    assert abs(result.house_edge - edge) < 3 * result.stderr
    ez = result.ez_bust()
    assert ez is not None
    assert abs(ez["house_edge"] - exact.ez_bust(RULES)["house_edge"]) < 3 * ez["stderr"]
    low, high = result.to_json()["wagers"]["blackjack"]["ci95"]
    assert low < result.house_edge < high
    assert 1.1 < result.stdev < 1.2  # blackjack's well-known standard deviation per hand


def test_first_round_of_each_shoe_agrees_with_the_fresh_shoe_exact_edge() -> None:
    """With the cut card at the first card every shoe plays one round from a fresh shoe, the
    exact analysis's situation: no cut-card effect (docs/lab.md)."""
    rules = AnalysisRules(decks=6, penetration=1 / 312, ez_bust=True)
    result = simulate(rules, hands=1_200_000, seed=31, workers=1)
    assert result.rounds == result.shoes
    edge = exact.analyse(AnalysisRules(decks=6, ez_bust=True)).house_edge
    assert abs(result.house_edge - edge) < 3 * result.stderr
    ez = result.ez_bust()
    assert ez is not None
    assert abs(ez["house_edge"] - exact.ez_bust(rules)["house_edge"]) < 3 * ez["stderr"]


def test_dask_local_cluster_gives_the_same_results() -> None:
    distributed = pytest.importorskip("distributed")
    hands = 2 * BLOCK * 40
    local = simulate(RULES, hands=hands, seed=8, workers=1, chunk_blocks=1)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
    ):
        remote = simulate(
            RULES, hands=hands, seed=8, scheduler=cluster.scheduler_address, chunk_blocks=1
        )
    assert remote.scheduler == cluster.scheduler_address
    assert np.array_equal(local.stats, remote.stats)


def test_an_unreachable_scheduler_is_a_connection_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    from tablejack.lab import simulate as module

    monkeypatch.setattr(module, "DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(ConnectionError, match="Cannot reach the Dask scheduler"):
        simulate(RULES, hands=10, seed=1, scheduler="tcp://127.0.0.1:9")


def test_bad_input_raises_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        simulate(RULES, hands=0, seed=1)
    with pytest.raises(ValueError, match="finite shoe"):
        simulate(AnalysisRules(decks=None), hands=10, seed=1)
    with pytest.raises(ValueError, match="peek"):
        simulate(AnalysisRules(decks=6, peek=False), hands=10, seed=1)
