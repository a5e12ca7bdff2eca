"""The store's errors: a write the store refused, and nothing of it was written.

Every one is a :class:`StoreError`. A driver's integrity error from the write path is translated
(:func:`translate`): a duplicate key of an event log is a :class:`DuplicateEventError`, any other
row the database's invariants refuse an :class:`InvariantError`.
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError

from tablejack.core.money import format_cents
from tablejack.store.fencing import Fence
from tablejack.store.policy import PolicyError
from tablejack.store.wager_limits import LIMIT_RULE

__all__ = [
    "DuplicateEventError",
    "FencedError",
    "InsufficientFundsError",
    "InvariantError",
    "LimitRefusedError",
    "PostingRefusedError",
    "StoreError",
    "translate",
]


class StoreError(Exception):
    """A write the store refused; nothing was written."""


class InsufficientFundsError(StoreError):
    """A player account would go below zero."""

    def __init__(self, account: str, needed: int, balance: int) -> None:
        super().__init__(
            f"Account {account!r} holds {format_cents(balance)}; the step needs "
            f"{format_cents(needed)} more."
        )
        self.account = account
        self.needed = needed
        self.balance = balance


class DuplicateEventError(StoreError):
    """An event with the same ``(round_id, seq)`` is already in the log."""


class FencedError(StoreError):
    """A write of a table made under a lease that is no longer the table's current one: another
    process took the table over (:mod:`tablejack.store.fencing`); nothing was written."""

    def __init__(self, fence: Fence, current: int | None) -> None:
        super().__init__(
            f"The write of table {fence.table_id!r} carries fencing token {fence.token}; the "
            f"table's current token is {current}: another process runs it now. Nothing was "
            "written."
        )
        self.fence = fence
        self.current = current


class PostingRefusedError(StoreError):
    """A posting the money-movement policy forbids (:mod:`tablejack.store.policy`): ``rule``
    names the clause, ``code`` the kind of refusal (``role``, ``account``, ``policy`` …)."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(error.message)
        self.message = error.message
        self.rule = error.rule
        self.code = error.code


class LimitRefusedError(StoreError):
    """A step's wager or tip that the player's limits or self-exclusion forbid, checked in the
    transaction that would write it (:mod:`tablejack.store.wager_limits`): ``code`` (``limit``,
    ``excluded``), ``rule`` and a sentence. Nothing of the step was written."""

    def __init__(self, code: str, message: str, round_id: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rule = LIMIT_RULE
        self.round_id = round_id


class InvariantError(StoreError):
    """The database refused a write that breaks one of the invariants it holds (an account
    kind's balance, the movement kinds, an append-only table)."""


def translate(error: IntegrityError, round_id: str) -> StoreError:
    """A driver's integrity error as the store's: a duplicate key of the log, or an invariant
    the database holds."""
    text = str(error.orig)
    if any(key in text for key in ("pk_events", "events.round_id", "pk_rounds", "rounds.id")):
        return DuplicateEventError(
            f"The log of round {round_id!r} already holds an event at that sequence number: {text}"
        )
    return InvariantError(f"The database refused the step of {round_id!r}: {text.strip()}")
