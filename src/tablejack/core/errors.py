"""The three kinds of error tablejack raises, kept apart.

* :class:`InvalidNotationError` -- the input cannot be parsed at all (a card code, a money
  amount, a command line, a round notation file).
* :class:`IllegalActionError` -- the input parses, but the rules forbid it now (acting out of
  turn, doubling three cards, a wager over the limit).
* :class:`RulesError` -- a rules configuration itself is invalid (seven decks on a hybrid table).

All are :class:`ValueError` subclasses. Each carries the clause that decided it in ``rule`` so a
terminal can show it, and its message is a sentence that quotes the bad value and cites the
clause. Raising any of them never leaves state half-changed: every verb checks before it
mutates.
"""

from __future__ import annotations

__all__ = [
    "IllegalActionError",
    "InvalidNotationError",
    "RulesError",
    "ShoeExhaustedError",
    "TablejackError",
]


class TablejackError(ValueError):
    """Base class of every error tablejack raises for bad input.

    >>> error = IllegalActionError("A hand of 21 may not draw.", rule="PA 633a.7")
    >>> error.rule
    'PA 633a.7'
    >>> isinstance(error, ValueError)
    True
    """

    def __init__(self, message: str, *, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


class InvalidNotationError(TablejackError):
    """Text that cannot be parsed: a card code, money, a command or a notation file."""


class IllegalActionError(TablejackError):
    """A well-formed request the rules forbid in the current state."""


class RulesError(TablejackError):
    """A rules configuration (Rules Submission) with an invalid value."""


class ShoeExhaustedError(IllegalActionError):
    """A card was needed but the shoe (or the prearranged card order) has none left."""
