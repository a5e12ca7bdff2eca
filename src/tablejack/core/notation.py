"""The round notation: one TOML document per round (rules, seats, card order, commands).

It is how a round is stored, recalled and replayed, and how a test lab writes a scenario by
hand. ``loads(dumps(history)) == history`` for every history; replaying a history
(:func:`tablejack.games.replay`) reproduces the round exactly; a finished round exports back to
notation (:func:`tablejack.games.export`). The format is documented in ``docs/notation.md``.

>>> text = '''
... game = "classic"
... cards = "10S 7H 9D 6C 5S"
... commands = ["1 stand"]
... [rules]
... decks = 1
... [[seats]]
... seat = 1
... player = "ann"
... wager = "$10"
... '''
>>> history = loads(text)
>>> history.seats[0]["wager"], history.cards[:2]
(1000, (Card('10S'), Card('7H')))
>>> loads(dumps(history)) == history
True
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from tablejack.core.cards import Card, cards_from_codes
from tablejack.core.errors import InvalidNotationError
from tablejack.core.money import format_cents, format_odds, parse_money, parse_odds

__all__ = ["FORMAT", "RoundHistory", "dumps", "load", "loads"]

FORMAT = "tablejack-round/1"
"""The notation's name and version, written into every document."""

MONEY_KEYS = frozenset({"wager", "buzzer_beater", "royal_match", "bet_the_set", "kings_bounty"})
"""Seat fields that hold money (dollars as text or integer cents)."""

LIST_MONEY_KEYS = frozenset({"spots"})
"""Seat fields that hold a list of money amounts (0 for no wager)."""

TOP_KEYS = frozenset(
    {
        "format",
        "game",
        "round_id",
        "rules",
        "rules_file",
        "seats",
        "cards",
        "commands",
        "expect",
        "description",
    }
)


@dataclass(frozen=True)
class RoundHistory:
    """A round as data: what is needed to replay it exactly.

    ``rules`` is the rules mapping (the game's rules fields); ``seats`` one mapping per seat or
    player (``seat``/``position``, ``player``, wagers in cents); ``cards`` the card order as
    dealt; ``commands`` the player and dealer commands in order; ``expect`` optional expected
    results of a scenario (net per player).
    """

    game: str
    rules: Mapping[str, Any]
    seats: tuple[Mapping[str, Any], ...]
    cards: tuple[Card, ...]
    commands: tuple[str, ...]
    round_id: str = ""
    description: str = ""
    expect: Mapping[str, Any] = field(default_factory=dict)


def loads(text: str, *, base: Path | None = None) -> RoundHistory:
    """Parse a round from notation text. ``base`` resolves a relative ``rules_file``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InvalidNotationError(f"The round notation is not valid TOML: {error}.") from None
    return from_mapping(data, base=base)


def load(path: str | Path) -> RoundHistory:
    """Read a round (or scenario) file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidNotationError(f"Cannot read {path}: {error.strerror}.") from None
    return loads(text, base=path.parent)


def from_mapping(data: Mapping[str, Any], *, base: Path | None = None) -> RoundHistory:
    """Build a history from parsed TOML data, checking every field."""
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise InvalidNotationError(
            f"Unknown field(s) {', '.join(sorted(unknown))} in the round notation; known: "
            f"{', '.join(sorted(TOP_KEYS))}."
        )
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise InvalidNotationError(f"Format {fmt!r} is not {FORMAT!r}.")
    game = data.get("game")
    if not isinstance(game, str) or not game:
        raise InvalidNotationError('The round notation needs game = "classic" (or another id).')
    rules: dict[str, Any] = {}
    if "rules_file" in data:
        rules_path = Path(str(data["rules_file"]))
        if not rules_path.is_absolute() and base is not None:
            rules_path = base / rules_path
        try:
            with open(rules_path, "rb") as handle:
                rules.update(tomllib.load(handle))
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise InvalidNotationError(f"Cannot read rules_file {rules_path}: {error}.") from None
    inline = data.get("rules", {})
    if not isinstance(inline, dict):
        raise InvalidNotationError("[rules] must be a table of rules fields.")
    rules.update(inline)
    rules.pop("game", None)
    seats_raw = data.get("seats", [])
    if not isinstance(seats_raw, list) or not all(isinstance(s, dict) for s in seats_raw):
        raise InvalidNotationError("seats must be a list of [[seats]] tables.")
    seats = tuple(_normal_seat(seat) for seat in seats_raw)
    cards_raw = data.get("cards", [])
    if not isinstance(cards_raw, str | list):
        raise InvalidNotationError("cards must be a string of card codes or a list of them.")
    cards = tuple(cards_from_codes(cards_raw))
    commands_raw = data.get("commands", [])
    if not isinstance(commands_raw, list) or not all(isinstance(c, str) for c in commands_raw):
        raise InvalidNotationError("commands must be a list of command strings.")
    expect = data.get("expect", {})
    if not isinstance(expect, dict):
        raise InvalidNotationError("[expect] must be a table.")
    return RoundHistory(
        game=game,
        rules=rules,
        seats=seats,
        cards=cards,
        commands=tuple(" ".join(c.split()) for c in commands_raw),
        round_id=str(data.get("round_id", "")),
        description=str(data.get("description", "")),
        expect=_normal_expect(expect),
    )


def _normal_seat(seat: Mapping[str, Any]) -> dict[str, Any]:
    normal: dict[str, Any] = {}
    for key, value in seat.items():
        if key in MONEY_KEYS:
            normal[key] = parse_money(value)
        elif key in LIST_MONEY_KEYS:
            if not isinstance(value, list):
                raise InvalidNotationError(f"Seat field {key} must be a list of amounts.")
            normal[key] = [parse_money(item) for item in value]
        else:
            normal[key] = value
    return normal


EXPECT_KEYS = frozenset(
    {
        "net",
        "wagers",
        "every_wager",
        "in_order",
        "dealer",
        "cards_used",
        "cards_left",
        "refused",
    }
)
"""The fields of a scenario's ``[expect]`` table (``docs/notation.md``)."""

WAGER_EXPECT_KEYS = frozenset(
    {
        "player",
        "seat",
        "position",
        "kind",
        "hand",
        "spot",
        "net",
        "amount",
        "returned",
        "result",
        "odds",
        "clause",
    }
)
"""The fields of one ``[[expect.wagers]]`` entry: which settlement (``player``, ``seat``,
``position``, ``kind``, ``hand``, ``spot``) and what it must show."""

WAGER_MONEY_KEYS = frozenset({"net", "amount", "returned"})

REFUSAL_KEYS = frozenset({"step", "rule", "then", "message"})
REFUSAL_THEN = ("continue", "stop")


def _normal_expect(expect: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(expect) - EXPECT_KEYS
    if unknown:
        raise InvalidNotationError(
            f"Unknown field(s) {', '.join(sorted(unknown))} in [expect]; known: "
            f"{', '.join(sorted(EXPECT_KEYS))}."
        )
    normal: dict[str, Any] = dict(expect)
    net = expect.get("net")
    if net is not None:
        if not isinstance(net, dict):
            raise InvalidNotationError("expect.net must be a table of player = amount.")
        normal["net"] = {player: parse_money(amount) for player, amount in net.items()}
    if "wagers" in expect:
        wagers = expect["wagers"]
        if not isinstance(wagers, list) or not all(isinstance(w, dict) for w in wagers):
            raise InvalidNotationError("expect.wagers must be a list of [[expect.wagers]] tables.")
        normal["wagers"] = [_normal_wager_expect(wager) for wager in wagers]
    for key in ("every_wager", "in_order"):
        if key in expect and not isinstance(expect[key], bool):
            raise InvalidNotationError(f"expect.{key} must be true or false.")
    if "dealer" in expect:
        normal["dealer"] = _normal_dealer_expect(expect["dealer"])
    if "cards_used" in expect:
        used = expect["cards_used"]
        if isinstance(used, str | list):
            normal["cards_used"] = " ".join(card.code for card in cards_from_codes(used))
        elif not _is_count(used):
            raise InvalidNotationError(
                "expect.cards_used is a number of cards or the cards themselves in order."
            )
    if "cards_left" in expect and not _is_count(expect["cards_left"]):
        raise InvalidNotationError("expect.cards_left must be a number of cards (0 or more).")
    if "refused" in expect:
        refused = expect["refused"]
        entries = [refused] if isinstance(refused, dict) else refused
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise InvalidNotationError(
                'expect.refused is { step = 3, rule = "PA 633b.16(c)" } or a list of them.'
            )
        normal["refused"] = [_normal_refusal(entry) for entry in entries]
    return normal


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _normal_wager_expect(wager: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(wager) - WAGER_EXPECT_KEYS
    if unknown:
        raise InvalidNotationError(
            f"Unknown field(s) {', '.join(sorted(unknown))} in an [[expect.wagers]] entry; "
            f"known: {', '.join(sorted(WAGER_EXPECT_KEYS))}."
        )
    if not {"player", "seat", "position"} & set(wager):
        raise InvalidNotationError(
            f"An [[expect.wagers]] entry names its player (or seat or position): {dict(wager)!r}."
        )
    if not {"net", "amount", "returned", "result", "odds", "clause"} & set(wager):
        raise InvalidNotationError(
            f"An [[expect.wagers]] entry checks something (net, result, odds, clause, amount or "
            f"returned): {dict(wager)!r}."
        )
    normal: dict[str, Any] = {}
    for key, value in wager.items():
        if key in WAGER_MONEY_KEYS:
            normal[key] = parse_money(value)
        elif key == "odds":
            normal[key] = format_odds(parse_odds(value))
        elif key in ("seat", "position", "hand", "spot"):
            if not _is_count(value) or value < 1:
                raise InvalidNotationError(
                    f"expect.wagers {key} is a number from 1 (hands count from 1, the dealer's "
                    f"left), not {value!r}."
                )
            normal[key] = value
        elif not isinstance(value, str):
            raise InvalidNotationError(f"expect.wagers {key} must be text, not {value!r}.")
        else:
            normal[key] = value
    return normal


def _normal_dealer_hand(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not value or set(value) - {"cards", "total"}:
        raise InvalidNotationError(
            f'{where} is a table {{ cards = "6H 10C 9H", total = 25 }} (either or both).'
        )
    normal: dict[str, Any] = {}
    if "cards" in value:
        if not isinstance(value["cards"], str | list):
            raise InvalidNotationError(f'{where}.cards is a string of card codes ("6H 10C").')
        normal["cards"] = " ".join(card.code for card in cards_from_codes(value["cards"]))
    if "total" in value:
        total = value["total"]
        if isinstance(total, bool) or not isinstance(total, int | str):
            raise InvalidNotationError(
                f'{where}.total is a number or text such as "Blackjack", "soft 17", "25 bust".'
            )
        normal["total"] = total
    return normal


def _normal_dealer_expect(dealer: Any) -> dict[str, Any]:
    if not isinstance(dealer, dict):
        raise InvalidNotationError("expect.dealer must be a table.")
    if set(dealer) <= {"cards", "total"}:
        return _normal_dealer_hand(dealer, "expect.dealer")
    return {
        str(key): _normal_dealer_hand(value, f"expect.dealer.{key}")
        for key, value in dealer.items()
    }


def _normal_refusal(entry: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(entry) - REFUSAL_KEYS
    if unknown or not {"step", "rule"} <= set(entry):
        raise InvalidNotationError(
            'expect.refused entries are { step = 3, rule = "PA 633b.16(c)", then = "stop" } '
            f"(then and message optional); got {dict(entry)!r}."
        )
    step = entry["step"]
    if not _is_count(step):
        raise InvalidNotationError(
            f"expect.refused step is the command's number (1 = the first command, 0 = seating "
            f"the players), not {step!r}."
        )
    if not isinstance(entry["rule"], str) or not entry["rule"]:
        raise InvalidNotationError('expect.refused rule is the clause, as in "PA 633b.16(c)".')
    then = entry.get("then", "stop" if step == 0 else "continue")
    if then not in REFUSAL_THEN or (step == 0 and then != "stop"):
        raise InvalidNotationError(
            f'expect.refused then is "continue" (skip the refused command and go on) or "stop" '
            f"(the scenario ends there; always for step 0), not {then!r}."
        )
    normal = {"step": step, "rule": entry["rule"], "then": then}
    if "message" in entry:
        if not isinstance(entry["message"], str):
            raise InvalidNotationError("expect.refused message is text the error must contain.")
        normal["message"] = entry["message"]
    return normal


def to_mapping(history: RoundHistory) -> dict[str, Any]:
    """The history as TOML-ready data (money as dollars text)."""
    data: dict[str, Any] = {"format": FORMAT, "game": history.game}
    if history.round_id:
        data["round_id"] = history.round_id
    if history.description:
        data["description"] = history.description
    data["cards"] = " ".join(card.code for card in history.cards)
    data["commands"] = list(history.commands)
    data["rules"] = dict(history.rules)
    data["seats"] = [_money_text(seat) for seat in history.seats]
    if history.expect:
        expect = dict(history.expect)
        if "net" in expect:
            expect["net"] = {p: format_cents(v, signed=True) for p, v in expect["net"].items()}
        if "wagers" in expect:
            expect["wagers"] = [
                {
                    key: format_cents(value, signed=key == "net")
                    if key in WAGER_MONEY_KEYS
                    else value
                    for key, value in wager.items()
                }
                for wager in expect["wagers"]
            ]
        data["expect"] = expect
    return data


def _money_text(seat: Mapping[str, Any]) -> dict[str, Any]:
    text: dict[str, Any] = {}
    for key, value in seat.items():
        if key in MONEY_KEYS:
            text[key] = format_cents(value)
        elif key in LIST_MONEY_KEYS:
            text[key] = [format_cents(item) for item in value]
        else:
            text[key] = value
    return text


def dumps(history: RoundHistory) -> str:
    """The round as notation text."""
    return "# tablejack round notation (docs/notation.md)\n" + tomli_w.dumps(
        to_mapping(history), multiline_strings=False
    )


def seats_of(entries: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """Normalise seat entries written by code (money already in cents)."""
    return tuple(dict(entry) for entry in entries)
