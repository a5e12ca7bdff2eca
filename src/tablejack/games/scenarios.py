"""Scenarios that check themselves: play a round notation file and compare its ``[expect]`` table.

A test lab writes a case for a clause in one file: the rules, the seats, the card order, the
commands, and what must come out (``docs/notation.md``):

* ``net``: each player's net;
* ``[[expect.wagers]]``: per wager (chosen by player, seat or position, kind, hand, spot) its net,
  amount, returned, result, the odds paid and the clause that decided it; ``every_wager``
  (default true) requires every settlement to be listed, ``in_order`` the listed order to be the
  settlement order (PA 633b.16(h));
* ``dealer``: the dealer's hand (cards and total); per player for ``hybrid-shared`` and per
  dealer round for ``multi-action``;
* ``cards_used`` / ``cards_left``: how many cards were dealt (or which) and how many were not;
* ``refused``: a command that must be refused under a clause, and whether the scenario then
  goes on without it (``then = "continue"``, the default) or stops there (``then = "stop"``).

:func:`play` replays the file, expecting the refusals it names; :func:`check` compares the
result with the expectations and returns one sentence per mismatch, naming the wager and both
values. Neither writes anything: the CLI (``tablejack scenario``) and the certification report
print them.

>>> from tablejack.core import notation
>>> history = notation.loads('''
... game = "classic"
... cards = "10S 7H 9D 6C 5S"
... commands = ["1 split", "1 stand"]
... [rules]
... decks = 1
... [[seats]]
... seat = 1
... player = "ann"
... wager = "$10"
... [expect]
... refused = { step = 1, rule = "PA 633a.11(a)" }
... dealer = { cards = "7H 6C 5S", total = 18 }
... [[expect.wagers]]
... player = "ann"
... net = "+$10"
... odds = "1 to 1"
... clause = "PA 633a.13"
... ''')
>>> run = play(history)
>>> [(r.step, r.rule) for r in run.refusals], check(history, run)
([(1, 'PA 633a.11(a)')], [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tablejack.core.errors import InvalidNotationError, TablejackError
from tablejack.core.hands import Hand
from tablejack.core.money import format_cents, format_odds
from tablejack.core.notation import RoundHistory
from tablejack.core.records import Result, Settlement
from tablejack.core.shoe import Shoe
from tablejack.games import game

__all__ = [
    "Refusal",
    "ScenarioRun",
    "check",
    "dealer_hands",
    "odds_paid",
    "play",
    "wager_label",
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A command the rules refused while the scenario was played (``step`` 0: the seating)."""

    step: int
    command: str
    rule: str
    message: str
    expected: bool

    def to_json(self) -> dict[str, Any]:
        """Plain data for the JSON output."""
        return {
            "step": self.step,
            "command": self.command,
            "rule": self.rule,
            "message": self.message,
            "expected": self.expected,
        }


@dataclass(slots=True)
class ScenarioRun:
    """What playing a scenario produced: the round (complete unless a refusal stopped it), every
    refusal, the step a refusal stopped at, and the shoe (for the cards left)."""

    round: Any
    shoe: Shoe
    refusals: list[Refusal] = field(default_factory=list)
    stopped_at: int | None = None
    unmet_refusals: list[str] = field(default_factory=list)

    @property
    def cards_used(self) -> int:
        """How many cards the round dealt."""
        return self.shoe.dealt

    @property
    def cards_left(self) -> int:
        """How many cards of the card order were never dealt."""
        return self.shoe.remaining


def play(history: RoundHistory) -> ScenarioRun:
    """Replay a scenario, expecting the refusals its ``[expect] refused`` names.

    A refused command that the file expects is recorded and, by its ``then``, skipped (a refused
    command changes nothing) or ends the scenario. A refusal the file does not expect raises, as
    :func:`tablejack.games.replay` does (the file is wrong, exit 2 in the CLI); so do a missing
    command and an extra one, and left-over cards unless the file states ``cards_left`` (none of
    the three once a refusal stopped the scenario, except a command after the stop).
    """
    expected = {entry["step"]: entry for entry in history.expect.get("refused", [])}
    spec = game(history.game)
    rules = spec.rules_class.from_mapping(history.rules)
    shoe = Shoe.prearranged(history.cards, decks=rules.decks)
    round_ = spec.new_round(rules, shoe)
    run = ScenarioRun(round=round_, shoe=shoe)
    try:
        spec.seat_players(round_, history.seats)
    except TablejackError as error:
        if not _refusal_expected(run, expected.get(0), 0, "seating the players", error):
            raise type(error)(f"Seating the players: {error.message}", rule=error.rule) from None
        run.stopped_at = 0
    if run.stopped_at is None:
        for number, command in enumerate(history.commands, start=1):
            if round_.is_complete:
                raise InvalidNotationError(
                    f"Command {number} ({command!r}) comes after the round is complete: an "
                    "extra command."
                )
            try:
                round_.apply(command)
            except TablejackError as error:
                entry = expected.get(number)
                if not _refusal_expected(run, entry, number, command, error):
                    raise type(error)(
                        f"Command {number} ({command!r}): {error.message}", rule=error.rule
                    ) from None
                assert entry is not None
                if entry["then"] == "stop":
                    run.stopped_at = number
                    break
                continue
            if number in expected:
                run.unmet_refusals.append(
                    f"step {number} ({command!r}): expected a refusal under "
                    f"{expected[number]['rule']}, but the command was accepted"
                )
    if run.stopped_at is not None and run.stopped_at < len(history.commands):
        extra = history.commands[run.stopped_at]
        raise InvalidNotationError(
            f'The scenario stops at step {run.stopped_at} (refused, then = "stop"), but command '
            f"{run.stopped_at + 1} ({extra!r}) follows it."
        )
    for step, entry in expected.items():
        if step > len(history.commands):
            run.unmet_refusals.append(
                f"step {step}: expected a refusal under {entry['rule']}, but the file has only "
                f"{len(history.commands)} command(s)"
            )
    if run.stopped_at is None and not round_.is_complete:
        raise InvalidNotationError(
            f"The commands end before the round is complete: the table waits for "
            f"{round_.next_step()} (a missing command)."
        )
    if shoe.remaining and "cards_left" not in history.expect and run.stopped_at is None:
        left = " ".join(card.code for card in shoe.peek(shoe.remaining))
        raise InvalidNotationError(
            f"{shoe.remaining} card(s) were never dealt: {left} (state cards_left in [expect] "
            "if that is intended)."
        )
    return run


def _refusal_expected(
    run: ScenarioRun,
    entry: Mapping[str, Any] | None,
    step: int,
    command: str,
    error: TablejackError,
) -> bool:
    """Record a refusal; whether the file expected one at this step (whatever the clause: a
    refusal under another clause is a mismatch :func:`check` reports, not an invalid file)."""
    if entry is None:
        return False
    run.refusals.append(Refusal(step, command, error.rule, error.message, expected=True))
    return True


def odds_paid(settlement: Settlement) -> Fraction | None:
    """The odds a winning wager was paid at, exactly (before the rounding of an uneven payout):
    winnings plus the rounding kept by the house, per unit wagered; None for a wager that did
    not win (a push, a loss, a surrender).

    >>> from tablejack.core.records import WagerKind
    >>> odds_paid(Settlement(0, 1, "ann", WagerKind.BLACKJACK, 0, 1001, Result.BLACKJACK, 2502,
    ...                      "PA 633a.13", Fraction(1, 2)))
    Fraction(3, 2)
    """
    winnings = settlement.returned - settlement.amount
    if winnings <= 0 or settlement.amount <= 0:
        return None
    return (winnings + settlement.rounding) / settlement.amount


def dealer_hands(round_: Any) -> dict[str, Hand]:
    """Every dealer hand of a round by name: ``"dealer"`` for ``classic`` and ``hybrid``; each
    player's personal dealer hand for ``hybrid-shared`` (by player); each dealer round's hand for
    ``multi-action`` (``"1"``, ``"2"``, ``"3"``, only the rounds dealt)."""
    if round_.game == "hybrid-shared":
        return {name: state.dealer for name, state in round_.players.items()}
    if round_.game == "multi-action":
        return {str(k): hand for k, hand in sorted(round_.dealer_hands.items())}
    return {"dealer": round_.dealer}


def wager_label(settlement: Settlement, hand_count: int = 1) -> str:
    """A settlement named for messages: ``ann seat 1 blackjack hand 2``, ``bob ez_bust``,
    ``cat spot 3 blackjack``."""
    parts = [settlement.player]
    if settlement.spot is not None:
        parts.append(f"spot {settlement.spot}")
    parts.append(settlement.kind.value)
    if settlement.hand is not None and hand_count > 1:
        parts.append(f"hand {settlement.hand + 1}")
    return " ".join(parts)


def _position_of(round_: Any, player: str) -> int | None:
    players = getattr(round_, "players", None)
    if not isinstance(players, dict) or player not in players:
        return None
    position = getattr(players[player], "position", None)
    return position if isinstance(position, int) else None


def _matches(round_: Any, entry: Mapping[str, Any], settlement: Settlement) -> bool:
    if "player" in entry and settlement.player != entry["player"]:
        return False
    if "seat" in entry and settlement.seat != entry["seat"]:
        return False
    if "position" in entry and _position_of(round_, settlement.player) != entry["position"]:
        return False
    if settlement.kind.value != entry.get("kind", "blackjack"):
        return False
    if "hand" in entry and (settlement.hand is None or settlement.hand + 1 != entry["hand"]):
        return False
    return "spot" not in entry or settlement.spot == entry["spot"]


def _entry_label(entry: Mapping[str, Any]) -> str:
    parts = [str(entry[key]) for key in ("player",) if key in entry]
    for key in ("seat", "position", "spot"):
        if key in entry:
            parts.append(f"{key} {entry[key]}")
    parts.append(str(entry.get("kind", "blackjack")))
    if "hand" in entry:
        parts.append(f"hand {entry['hand']}")
    return " ".join(parts)


def _odds_text(settlement: Settlement) -> str:
    odds = odds_paid(settlement)
    if odds is None:
        return f"no payout ({settlement.result.value})"
    return format_odds(odds)


def _check_wager(entry: Mapping[str, Any], settlement: Settlement, label: str) -> list[str]:
    problems = []
    for key in ("net", "amount", "returned"):
        if key in entry:
            actual = getattr(settlement, key)
            if actual != entry[key]:
                signed = key == "net"
                problems.append(
                    f"{label}: expected {key} {format_cents(entry[key], signed=signed)}, got "
                    f"{format_cents(actual, signed=signed)}"
                )
    if "result" in entry:
        try:
            wanted = Result(entry["result"])
        except ValueError:
            known = ", ".join(result.value for result in Result)
            problems.append(f"{label}: result {entry['result']!r} is none of {known}")
        else:
            if settlement.result is not wanted:
                problems.append(
                    f"{label}: expected result {wanted.value}, got {settlement.result.value}"
                )
    if "odds" in entry:
        actual_odds = _odds_text(settlement)
        if actual_odds != entry["odds"]:
            problems.append(f"{label}: expected odds {entry['odds']}, got {actual_odds}")
    if "clause" in entry and settlement.clause != entry["clause"]:
        problems.append(f"{label}: expected clause {entry['clause']!r}, got {settlement.clause!r}")
    return problems


def _check_wagers(history: RoundHistory, run: ScenarioRun) -> list[str]:
    expect = history.expect
    entries: Sequence[Mapping[str, Any]] = expect.get("wagers", [])
    settlements: list[Settlement] = list(run.round.settlements)
    hands: dict[tuple[str, int], int] = {}
    for settlement in settlements:
        if settlement.hand is not None:
            key = (settlement.player, settlement.seat)
            hands[key] = max(hands.get(key, 0), settlement.hand + 1)
    problems: list[str] = []
    matched: list[int] = []
    used: set[int] = set()
    for entry in entries:
        label = _entry_label(entry)
        candidates = [
            index
            for index, settlement in enumerate(settlements)
            if index not in used and _matches(run.round, entry, settlement)
        ]
        if not candidates:
            problems.append(f"{label}: expected a settlement, found none")
            continue
        # Several candidates (two EZ Bust wagers of one seat): the first not yet matched, in
        # settlement order. A selector too loose for what it checks shows as a mismatch, and
        # with every_wager the settlement it left out is reported as not listed.
        index = candidates[0]
        used.add(index)
        matched.append(index)
        problems.extend(_check_wager(entry, settlements[index], label))
    if entries and expect.get("every_wager", True):
        for index, settlement in enumerate(settlements):
            if index not in used:
                count = hands.get((settlement.player, settlement.seat), 1)
                problems.append(
                    f"{wager_label(settlement, count)}: settled ({settlement.describe()}) but "
                    "not listed in [[expect.wagers]]"
                )
    if expect.get("in_order", False) and matched != sorted(matched):
        listed = [wager_label(settlements[i]) for i in matched]
        actual = [wager_label(settlements[i]) for i in sorted(matched)]
        problems.append(f"settlement order: expected {', '.join(listed)}; got {', '.join(actual)}")
    return problems


def _check_dealer(history: RoundHistory, run: ScenarioRun) -> list[str]:
    expected = history.expect.get("dealer")
    if expected is None:
        return []
    hands = dealer_hands(run.round)
    if set(expected) <= {"cards", "total"}:
        if set(hands) != {"dealer"}:
            return [
                f"dealer: this game has {len(hands)} dealer hands ({', '.join(hands)}); name "
                "each in expect.dealer"
            ]
        expected = {"dealer": expected}
    problems = []
    for name, wanted in expected.items():
        hand = hands.get(name)
        label = "dealer" if name == "dealer" else f"dealer {name}"
        if hand is None:
            problems.append(f"{label}: no such dealer hand (the round has {', '.join(hands)})")
            continue
        if "cards" in wanted:
            actual = " ".join(card.code for card in hand.cards)
            if actual != wanted["cards"]:
                problems.append(f"{label}: expected cards {wanted['cards']}, got {actual}")
        if "total" in wanted:
            total = wanted["total"]
            if isinstance(total, int):
                if hand.total != total:
                    problems.append(
                        f"{label}: expected total {total}, got {hand.total} ({hand.total_text()})"
                    )
            elif total.lower() != hand.total_text().lower():
                problems.append(f"{label}: expected total {total}, got {hand.total_text()}")
    return problems


def _check_cards(history: RoundHistory, run: ScenarioRun) -> list[str]:
    expect = history.expect
    problems = []
    if "cards_used" in expect:
        used = expect["cards_used"]
        if isinstance(used, int):
            if run.cards_used != used:
                problems.append(f"cards used: expected {used}, got {run.cards_used}")
        else:
            actual = " ".join(card.code for card in run.shoe.dealt_cards())
            if actual != used:
                problems.append(f"cards used: expected {used}, got {actual}")
    if "cards_left" in expect and run.cards_left != expect["cards_left"]:
        problems.append(f"cards left: expected {expect['cards_left']}, got {run.cards_left}")
    return problems


def _check_refusals(history: RoundHistory, run: ScenarioRun) -> list[str]:
    expected = {entry["step"]: entry for entry in history.expect.get("refused", [])}
    problems = list(run.unmet_refusals)
    for refusal in run.refusals:
        entry = expected[refusal.step]
        where = f"step {refusal.step} ({refusal.command!r})"
        if refusal.rule != entry["rule"]:
            problems.append(
                f"{where}: expected a refusal under {entry['rule']}, got one under "
                f"{refusal.rule or 'no clause'}: {refusal.message}"
            )
        elif "message" in entry and entry["message"] not in refusal.message:
            problems.append(
                f"{where}: expected the refusal to say {entry['message']!r}, it says "
                f"{refusal.message!r}"
            )
    return problems


def _check_net(history: RoundHistory, run: ScenarioRun) -> list[str]:
    net_by_player: dict[str, int] = {}
    for settlement in run.round.settlements:
        net_by_player[settlement.player] = net_by_player.get(settlement.player, 0) + settlement.net
    problems = []
    for player, expected in dict(history.expect.get("net", {})).items():
        actual = net_by_player.get(player)
        if actual != expected:
            shown = "no settlement" if actual is None else format_cents(actual, signed=True)
            problems.append(
                f"{player}: expected net {format_cents(expected, signed=True)}, got {shown}"
            )
    return problems


def check(history: RoundHistory, run: ScenarioRun) -> list[str]:
    """Every way the played scenario differs from its ``[expect]`` table, one sentence each
    (empty when all expectations are met)."""
    return [
        *_check_refusals(history, run),
        *_check_net(history, run),
        *_check_wagers(history, run),
        *_check_dealer(history, run),
        *_check_cards(history, run),
    ]
