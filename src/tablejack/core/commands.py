"""The text form of a command, shared by every game's notation and the CLI.

A command is one line: who acts, the verb, and an optional amount::

    2 hit
    2 double $5.00
    3 insurance 250
    dealer close-insurance

The actor is a seat number (classic, multi-action), a player name (hybrid tables) or
``dealer``. Amounts are dollars as text (``$5``, ``5.00``) or, as plain integers, cents.

>>> Command.parse("2 double $5")
Command(actor='2', verb='double', amount=500)
>>> str(Command.parse("dealer   close-insurance"))
'dealer close-insurance'
"""

from __future__ import annotations

from dataclasses import dataclass

from tablejack.core.errors import InvalidNotationError
from tablejack.core.money import format_cents, parse_money

__all__ = ["Command"]


@dataclass(frozen=True, slots=True)
class Command:
    """One parsed command line."""

    actor: str
    verb: str
    amount: int | None = None

    @classmethod
    def parse(cls, text: str) -> Command:
        """Parse ``"<actor> <verb> [amount]"``; :class:`InvalidNotationError` if malformed."""
        if not isinstance(text, str):
            raise InvalidNotationError(f"{text!r} is not a command line.")
        parts = text.split()
        if len(parts) not in (2, 3):
            raise InvalidNotationError(
                f"{text!r} is not a command; write '<seat or player> <verb> [amount]', "
                "as in '2 hit' or '3 double $10'."
            )
        amount = None
        if len(parts) == 3:
            raw = parts[2]
            amount = parse_money(int(raw) if raw.isdigit() else raw)
            if amount <= 0:
                raise InvalidNotationError(f"{text!r}: the amount must be positive.")
        return cls(parts[0], parts[1].lower(), amount)

    @classmethod
    def of(cls, actor: str | int, verb: str) -> Command:
        """A shared command without an amount (bots issue the same few commands all the time).

        >>> Command.of(3, "hit") == Command.of("3", "hit")
        True
        """
        command = _SHARED.get((actor, verb))
        if command is None:
            command = _SHARED[(actor, verb)] = cls(str(actor), verb)
        return command

    @property
    def seat(self) -> int:
        """The actor as a seat number; :class:`InvalidNotationError` if it is not one."""
        number = _SEAT_NUMBERS.get(self.actor)
        if number is None:
            if not self.actor.isdigit():
                raise InvalidNotationError(f"{self.actor!r} is not a seat number in {str(self)!r}.")
            number = int(self.actor)
        return number

    def __str__(self) -> str:
        if self.amount is None:
            return f"{self.actor} {self.verb}"
        return f"{self.actor} {self.verb} {format_cents(self.amount)}"


_SHARED: dict[tuple[str | int, str], Command] = {}
_SEAT_NUMBERS: dict[str, int] = {str(number): number for number in range(1, 100)}
