"""The suite's fixtures: those of the tests' kit (:mod:`tests.support.fixtures`: the databases,
the tests' floor and its helpers) and the classic scenarios of the games' tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

from tablejack.core import ClassicRules, Shoe
from tablejack.games.classic import ClassicRound

pytest_plugins = ["tests.support.fixtures"]

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
