"""Shared fixtures for the tablejack test suite."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablejack.core import ClassicRules, Shoe
from tablejack.games.classic import ClassicRound
from tablejack.store.testing import Backend, postgres_available

# -- the databases: every store, server, floor and security test on SQLite and PostgreSQL -----

_PG_REASON: list[str | None] = []


def _pg_reason() -> str | None:
    if not _PG_REASON:
        _PG_REASON.append(postgres_available())
    return _PG_REASON[0]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh database: an SQLite file, or a new PostgreSQL schema (skipped with the reason
    when no PostgreSQL answers, unless ``CI=true``: then it fails)."""
    if request.param == "sqlite":
        yield Backend.sqlite(tmp_path)
        return
    reason = _pg_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI requires PostgreSQL: {reason}")
        pytest.skip(reason)
    chosen = Backend.postgresql()
    try:
        yield chosen
    finally:
        chosen.drop()


@pytest.fixture
def postgres() -> Iterator[Backend]:
    """A fresh PostgreSQL schema, for what only PostgreSQL has (a floor of several processes):
    skipped with the reason when no PostgreSQL answers, unless ``CI=true``: then it fails."""
    reason = _pg_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI requires PostgreSQL: {reason}")
        pytest.skip(reason)
    chosen = Backend.postgresql()
    try:
        yield chosen
    finally:
        chosen.drop()


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
