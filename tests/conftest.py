"""The suite's fixtures: those of the tests' kit (:mod:`tests.support.fixtures`: the databases,
the tests' floor and its helpers) and the classic scenarios of the games' tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

from tablejack.core import ClassicRules, Shoe
from tablejack.games.classic import ClassicRound

pytest_plugins = ["tests.support.fixtures"]


# -- the order of the suite on pytest-xdist's workers -----------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``-n N --dist worksteal`` (``make test``), each worker starts with its share of the
    slow runs: worksteal first hands each of the N workers one contiguous Nth of the collection,
    and a worker that runs out steals from the end of another's, so a slow run left near the
    end of a share starts late and the whole run waits for it. The slow tests are therefore
    moved to the starts of the N shares, a module's together, each module to the share with the
    fewest slow tests so far; the other tests keep their order. Every worker collects the same
    order (it depends on the collection and N alone); one process keeps the order as it is."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers < 2 or config.getoption("dist", None) != "worksteal":
        return
    slow: dict[str, list[pytest.Item]] = {}
    rest: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker("slow") is not None:
            slow.setdefault(item.nodeid.split("::")[0], []).append(item)
        else:
            rest.append(item)
    starts: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for module in slow.values():
        min(starts, key=len).extend(module)
    ordered: list[pytest.Item] = []
    left = len(items)
    for number, start in enumerate(starts):
        share = left // (workers - number)  # worksteal's split: the same sizes, in order
        left -= share
        taken = max(0, share - len(start))
        ordered += start + rest[:taken]
        del rest[:taken]
    items[:] = ordered + rest


# -- classic (Chapter 633a) scenarios ---------------------------------------------------------

PLAYERS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus")


def card_order(hands: Sequence[str], up: str, hole: str, rest: str = "") -> str:
    """The card order of § 633a.7 for ``hands`` (two codes per seat, seat 1 first): each seat's
    first card, the up card, each seat's second card, the hole card, then ``rest``."""
    pairs = [hand.split() for hand in hands]
    first = [pair[0] for pair in pairs]
    second = [pair[1] for pair in pairs]
    return " ".join([*first, up, *second, hole, *rest.split()])


def classic_table(
    hands: Sequence[str],
    up: str,
    hole: str,
    rest: str = "",
    *,
    wagers: Iterable[int] | None = None,
    **rules: Any,
) -> ClassicRound:
    """A classic round dealt from a prearranged shoe: seats 1.. with ``hands``, $10 wagers
    unless ``wagers`` says otherwise, wagering closed and the initial cards dealt."""
    table_rules = ClassicRules(**rules)
    shoe = Shoe.prearranged(card_order(hands, up, hole, rest), decks=table_rules.decks)
    round_ = ClassicRound(table_rules, shoe)
    amounts = list(wagers) if wagers is not None else [1000] * len(hands)
    for seat, amount in enumerate(amounts, start=1):
        round_.place_wager(seat, PLAYERS[seat - 1], amount)
    round_.close_wagering()
    return round_


def snapshot(round_: ClassicRound) -> tuple[Any, ...]:
    """Everything a refused action must leave unchanged."""
    return (
        len(round_.operations),
        tuple(round_.operations),
        round_.phase,
        tuple(round_.settlements),
        tuple(round_.wagers),
        tuple(round_.cards_dealt),
        round_.card_request,
        round_.current_seat,
        tuple(
            (
                n,
                s.insurance_decided,
                s.ez_decided,
                tuple(s.ez_wager_ids),
                s.splits,
                *((tuple(h.hand.cards), h.amount, h.done, h.settled) for h in s.hands),
            )
            for n, s in round_.seats.items()
        ),
        tuple(round_.dealer.cards),
        None if round_.shoe is None else round_.shoe.remaining,
    )


@pytest.fixture
def table() -> Callable[..., ClassicRound]:
    """``table(["10S 7H"], "9D", "6C", "5S", ez_bust=True)``: see :func:`classic_table`."""
    return classic_table


@pytest.fixture
def state_of() -> Callable[[ClassicRound], tuple[Any, ...]]:
    """A snapshot of a round for "refused with no state change" checks."""
    return snapshot
