"""The command line of the notation: actor, verb, optional amount."""

from __future__ import annotations

import pytest

from tablejack.core import Command, InvalidNotationError


@pytest.mark.parametrize(
    ("text", "actor", "verb", "amount", "back"),
    [
        ("2 hit", "2", "hit", None, "2 hit"),
        ("2 double $5", "2", "double", 500, "2 double $5.00"),
        ("3 insurance 250", "3", "insurance", 250, "3 insurance $2.50"),
        (
            "  dealer   CLOSE-insurance ",
            "dealer",
            "close-insurance",
            None,
            "dealer close-insurance",
        ),
        ("1 ez-bust 5.50", "1", "ez-bust", 550, "1 ez-bust $5.50"),
    ],
)
def test_parse_and_format(text: str, actor: str, verb: str, amount: int | None, back: str) -> None:
    command = Command.parse(text)
    assert (command.actor, command.verb, command.amount) == (actor, verb, amount)
    assert str(command) == back
    assert Command.parse(str(command)) == command


@pytest.mark.parametrize(
    "text", ["", "hit", "1 double $5 now", "1 double $0", "1 double -5", "1 double 2.5.5", None]
)
def test_malformed_commands(text: object) -> None:
    with pytest.raises(InvalidNotationError):
        Command.parse(text)  # type: ignore[arg-type]


def test_seat_must_be_a_number() -> None:
    assert Command.parse("4 stand").seat == 4
    with pytest.raises(InvalidNotationError, match="not a seat number"):
        _ = Command.parse("ann stand").seat
