"""Paytable design: the paytables of a side wager nearest a target house edge, searched exactly.

A side wager's outcomes (a line paid, a loss, a push) have probabilities that do not depend on
what the lines pay: the cards decide the outcome, the paytable only prices it. So the outcome
distribution is computed once (:func:`wager_outcomes`) and a paytable's house edge, hit
frequency and variance are then sums over a handful of outcomes. The house edge is linear in the
pays, and :func:`search` finds the ``count`` paytables of an integer pay lattice whose edge is
nearest the target, exactly: a meet-in-the-middle over the lines (each half enumerated with
pruning, the halves joined by binary search), every candidate re-scored in rational arithmetic.

The candidates obey three constraints:

- **integer odds**: every searched line pays ``N to 1`` (a winning unit wager is returned with
  ``N`` more; the regulations' "to 1" form, PA 633c.5(v)(3), 633b.16(i)); a line may be *held* at
  its base pay, whatever its form (the Royal Match suited match at 5 to 2);
- **pays never fall as the hand gets rarer**: the outcomes are ranked by their exact probability
  and a rarer outcome pays at least as much as a more common one; outcomes of equal probability
  (neither is rarer) pay the same; an outcome that pays two lines (a Royal Match with the Crown
  Treasure bonus in addition) is ranked by its own probability and paid their sum;
- **bounds**: each line pays from ``min_pay`` to ``max_pay`` (per line with ``ranges``), drawn
  from every integer or from round figures (:func:`pay_ladder`).

>>> from fractions import Fraction
>>> outcomes = bet_the_set_outcomes(6, (("suited-pair", Fraction(15)), ("pair", Fraction(10))))
>>> best = search(outcomes, target=Fraction(1061, 10000), count=1, lattice=Lattice(max_pay=25))
>>> best.candidates[0].describe()
'suited-pair 15 to 1, pair 10 to 1'
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Any

import numpy as np

__all__ = [
    "DESIGNED_WAGERS",
    "EZ_BUST_FORMS",
    "PAY_FORMS",
    "Candidate",
    "Lattice",
    "LatticeTooLargeError",
    "Outcome",
    "PayLine",
    "SearchResult",
    "TargetOutOfReachError",
    "WagerOutcomes",
    "base_report",
    "bet_the_set_outcomes",
    "buzzer_beater_outcomes",
    "buzzer_line_name",
    "candidate_rules",
    "ez_bust_outcomes",
    "kings_bounty_outcomes",
    "lattice_reach",
    "parse_edge",
    "parse_pay_range",
    "parsheet_data",
    "pay_ladder",
    "print_report",
    "report",
    "royal_match_outcomes",
    "search",
    "wager_outcomes",
    "write_parsheets",
]

PAY_FORMS = ("integers", "round")
"""The pay lattices: every integer ``N to 1``, or round figures (:func:`pay_ladder`)."""

FLOAT_TIE = 1e-12
"""Relative difference under which two probabilities computed in floating point (the Buzzer
Beater's and EZ Bust's, from the exact kernels) are taken as equal; rational ones are compared
exactly."""

STATES_LIMIT = 3_000_000
"""Most partial paytables one half of the search may hold (memory and time stay bounded)."""


class TargetOutOfReachError(ValueError):
    """The target house edge is outside what any paytable of the lattice gives."""


class LatticeTooLargeError(ValueError):
    """The pay lattice is too large to search exactly in bounded memory."""


# -- the outcome distribution -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PayLine:
    """One line of a paytable: its name (as the rules files write it), its words and the pay of
    the base (regulation or candidate) paytable it comes from."""

    name: str
    title: str
    base: Fraction


@dataclass(frozen=True, slots=True)
class Outcome:
    """One outcome of the wager: its probability, the lines whose pays it receives (summed;
    empty for a loss or a push) and the fixed result otherwise (-1 a loss, 0 a push)."""

    label: str
    probability: Fraction
    lines: tuple[str, ...] = ()
    fixed: Fraction = Fraction(-1)

    def pay(self, pays: Mapping[str, Fraction]) -> Fraction:
        """The net result per unit wagered under ``pays``."""
        if not self.lines:
            return self.fixed
        return sum((pays[line] for line in self.lines), Fraction(0))


@dataclass(frozen=True)
class WagerOutcomes:
    """A wager's outcomes and lines, independent of the pays."""

    game: str
    wager: str
    title: str
    lines: tuple[PayLine, ...]
    outcomes: tuple[Outcome, ...]
    rational: bool
    """True when the probabilities are exact rationals (the side wagers of hybrid-shared);
    False when they are the exact kernels' floating-point figures (Buzzer Beater, EZ Bust)."""
    method: str
    base_name: str
    clause: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    def line(self, name: str) -> PayLine:
        """The line called ``name``."""
        for line in self.lines:
            if line.name == name:
                return line
        raise ValueError(
            f"{name!r} is not a line of the {self.wager} paytable; its lines are "
            f"{', '.join(line.name for line in self.lines)} ({self.clause})."
        )

    @property
    def base_pays(self) -> dict[str, Fraction]:
        """The base paytable as line -> odds."""
        return {line.name: line.base for line in self.lines}

    def line_probability(self, name: str) -> Fraction:
        """The probability that the line's pay is received (alone or with a bonus)."""
        return sum((o.probability for o in self.outcomes if name in o.lines), Fraction(0))

    def figures(self, pays: Mapping[str, Fraction]) -> dict[str, Any]:
        """House edge (exact), hit frequency, variance, standard deviation and the lines of the
        paytable ``pays`` (line -> odds), per unit wagered."""
        mean = Fraction(0)
        second = Fraction(0)
        hits = Fraction(0)
        lines = []
        for o in self.outcomes:
            pay = o.pay(pays)
            mean += o.probability * pay
            second += o.probability * pay * pay
            if pay > 0:
                hits += o.probability
            lines.append(
                {
                    "line": o.label,
                    "pays": float(pay),
                    "odds": _odds_text(pay),
                    "probability": float(o.probability),
                    "return": float(o.probability * pay),
                    "method": "exact",
                }
            )
            if self.rational:
                lines[-1]["probability_exact"] = _fraction_text(o.probability)
        variance = second - mean * mean
        out: dict[str, Any] = {
            "house_edge": float(-mean),
            "hit_frequency": float(hits),
            "variance": float(variance),
            "stdev": math.sqrt(max(float(variance), 0.0)),
            "lines": sorted(lines, key=lambda line: -line["pays"]),
        }
        if self.rational:
            out["house_edge_exact"] = _fraction_text(-mean)
            out["variance_exact"] = _fraction_text(variance)
        return out

    def house_edge(self, pays: Mapping[str, Fraction]) -> Fraction:
        """The exact house edge of ``pays`` (in the probabilities' own arithmetic)."""
        return -sum((o.probability * o.pay(pays) for o in self.outcomes), Fraction(0))

    def rarity_violations(self, pays: Mapping[str, Fraction]) -> list[str]:
        """Where ``pays`` pays a rarer outcome less than a more common one (or two outcomes of
        equal probability differently), in words; empty when the paytable is monotone."""
        paid = sorted(
            (o for o in self.outcomes if o.lines and o.probability > 0),
            key=lambda o: o.probability,
        )
        out = []
        for i, rare in enumerate(paid):
            for common in paid[i + 1 :]:
                tie = self.ties(rare.probability, common.probability)
                a, b = rare.pay(pays), common.pay(pays)
                if (tie and a != b) or (not tie and a < b):
                    relation = "as likely as" if tie else "rarer than"
                    out.append(
                        f"{rare.label} (probability {float(rare.probability):.6g}) pays "
                        f"{_odds_text(a)} but is {relation} {common.label} (probability "
                        f"{float(common.probability):.6g}), which pays {_odds_text(b)}"
                    )
        return out

    def ties(self, p: Fraction, q: Fraction) -> bool:
        """Whether two outcome probabilities are equal (neither outcome is rarer)."""
        if self.rational:
            return p == q
        return abs(p - q) <= FLOAT_TIE * max(p, q)


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _odds_text(pay: Fraction) -> str:
    if pay < 0:
        return "loses"
    if pay == 0:
        return "push"
    return f"{pay.numerator} to {pay.denominator}"


def _float_fraction(value: float) -> Fraction:
    return Fraction(float(value))


# -- the wagers ---------------------------------------------------------------------------------


def _side_outcomes(summary: Mapping[str, Any], names: Sequence[str]) -> tuple[Outcome, ...]:
    """Outcomes from a :mod:`.sidebets` summary computed with a probe paytable: each line of
    the summary is an outcome; ``"a + b"`` pays both lines, ``"no line"`` loses."""
    out = []
    for row in summary["lines"]:
        label = row["line"]
        p = Fraction(row["probability_exact"])
        if label == "no line":
            out.append(Outcome("loses", p))
            continue
        parts = tuple(part.strip() for part in label.split("+"))
        for part in parts:
            if part not in names:
                raise ValueError(f"The side wager reported an unknown line {part!r}.")
        out.append(Outcome(label, p, parts))
    return tuple(out)


def _probe(names: Sequence[str]) -> tuple[tuple[str, Fraction], ...]:
    """A paytable whose pays fall strictly down the table, so the engine's "highest line only"
    pays each hand its first (strongest) listed line: the outcome of the hand."""
    return tuple((name, Fraction(len(names) - i)) for i, name in enumerate(names))


def _check_strongest_line_is_rarest(
    outcomes: Sequence[Outcome],
    names: Sequence[str],
    matched: Iterable[tuple[str, ...]],
    rational: bool,
) -> None:
    """Every hand is paid its highest line only. The search assumes a hand's outcome is its
    first (strongest) listed line; under pays that never fall with rarity that is the highest
    line exactly when that line is no more likely than the hand's other lines. Checked here for
    every combination of lines a hand can make."""
    probability = {o.lines[0]: o.probability for o in outcomes if len(o.lines) == 1}
    for lines in matched:
        present = [line for line in lines if line in names]
        if len(present) < 2:
            continue
        first = probability.get(present[0], Fraction(0))
        for other in present[1:]:
            if probability.get(other, Fraction(0)) < first:
                raise ValueError(
                    f"The line {other!r} is rarer than {present[0]!r}, which the same hands "
                    "make: the highest line paid would depend on the pays."
                )


def bet_the_set_outcomes(decks: int, table: Sequence[tuple[str, Fraction]]) -> WagerOutcomes:
    """Bet the Set (§ 633a.13(g), A-12) with the lines of ``table`` (its base paytable)."""
    from tablejack.games.hybrid_shared_rules import BET_THE_SET_LINES, bet_the_set_lines
    from tablejack.lab.sidebets import bet_the_set

    names = [line for line, _ in table]
    outcomes = _side_outcomes(bet_the_set(decks, _probe(names)), names)
    _check_strongest_line_is_rarest(
        outcomes, names, _matched_pairs(bet_the_set_lines), rational=True
    )
    titles = dict(zip(BET_THE_SET_LINES, ("suited pair", "pair (same rank)"), strict=True))
    return WagerOutcomes(
        game="hybrid-shared",
        wager="bet_the_set",
        title="Bet the Set (PA 633c.5(x), (ee)(4); 633a.13(g))",
        lines=tuple(PayLine(name, titles[name], odds) for name, odds in table),
        outcomes=outcomes,
        rational=True,
        method=f"exact: every ordered pair of the player's cards from {decks} deck(s), rational",
        base_name="",
        clause="PA 633c.5(ee)(4); 633a.13(g)",
        extra={"decks": decks},
    )


def royal_match_outcomes(
    decks: int,
    table: Sequence[tuple[str, Fraction]],
    *,
    crown_treasure: Fraction | None,
    in_addition: bool = True,
) -> WagerOutcomes:
    """Royal Match 21 (§ 633a.13(f)) with the lines of ``table``, and the Crown Treasure bonus
    as one more line when offered (``crown_treasure``: its base pay), paid in addition to the
    Royal Match line or instead of it (A-11 for the dealer's two cards)."""
    from tablejack.games.hybrid_shared_rules import royal_match_lines
    from tablejack.lab.sidebets import royal_match

    names = [line for line, _ in table]
    probe = _probe(names)
    summary = royal_match(
        decks,
        probe,
        crown_treasure=None if crown_treasure is None else Fraction(len(names) + 1),
        in_addition=in_addition,
    )
    all_names = [*names, "crown-treasure"] if crown_treasure is not None else names
    outcomes = _side_outcomes(summary, all_names)
    _check_strongest_line_is_rarest(
        outcomes, names, _matched_pairs(royal_match_lines), rational=True
    )
    titles = {
        "royal-match": "Royal Match (king and queen of one suit)",
        "suited-blackjack": "suited Blackjack",
        "suited-match": "suited match",
        "crown-treasure": "Crown Treasure bonus (the dealer's two cards a Royal Match too)"
        + (" in addition" if in_addition else ", instead of the line"),
    }
    lines = [PayLine(name, titles[name], odds) for name, odds in table]
    if crown_treasure is not None:
        lines.append(PayLine("crown-treasure", titles["crown-treasure"], crown_treasure))
    return WagerOutcomes(
        game="hybrid-shared",
        wager="royal_match",
        title="Royal Match 21 with Crown Treasure (PA 633c.5(x), (ee)(3); 633a.13(f))",
        lines=tuple(lines),
        outcomes=outcomes,
        rational=True,
        method=(
            f"exact: every ordered deal of the player's and the dealer's two cards from {decks} "
            "deck(s), rational"
        ),
        base_name="",
        clause="PA 633c.5(ee)(3); 633a.13(f)",
        extra={"decks": decks, "crown_treasure_in_addition": in_addition},
    )


def kings_bounty_outcomes(decks: int, table: Sequence[tuple[str, Fraction]]) -> WagerOutcomes:
    """King's Bounty (§ 633a.13(h)) with the lines of ``table``; the top line needs the dealer's
    Blackjack (A-11)."""
    from tablejack.games.hybrid_shared_rules import kings_bounty_lines
    from tablejack.lab.sidebets import kings_bounty

    names = [line for line, _ in table]
    outcomes = _side_outcomes(kings_bounty(decks, _probe(names)), names)
    matched = [
        *_matched_pairs(lambda a, b: kings_bounty_lines(a, b, False)),
        *_matched_pairs(lambda a, b: kings_bounty_lines(a, b, True)),
    ]
    _check_strongest_line_is_rarest(outcomes, names, matched, rational=True)
    titles = {
        "spade-kings-dealer-blackjack": "two kings of spades and a dealer Blackjack",
        "spade-kings": "two kings of spades",
        "suited-kings": "two suited kings (other suit)",
        "suited-queens-jacks-tens": "two suited queens, jacks or tens",
        "suited-20": "suited 20 (other)",
        "unsuited-kings": "two kings, unsuited",
        "unsuited-20": "unsuited 20",
    }
    return WagerOutcomes(
        game="hybrid-shared",
        wager="kings_bounty",
        title="King's Bounty (PA 633c.5(x), (ee)(5); 633a.13(h))",
        lines=tuple(PayLine(name, titles[name], odds) for name, odds in table),
        outcomes=outcomes,
        rational=True,
        method=(
            f"exact: every ordered deal of the player's and the dealer's two cards from {decks} "
            "deck(s), rational"
        ),
        base_name="",
        clause="PA 633c.5(ee)(5); 633a.13(h)",
        extra={"decks": decks},
    )


def _matched_pairs(judge: Callable[[Any, Any], tuple[str, ...]]) -> set[tuple[str, ...]]:
    """Every combination of lines two cards can make under ``judge``."""
    from tablejack.core.cards import full_deck

    deck = full_deck()
    return {judge(a, b) for a in deck for b in deck}


BUZZER_HANDS = ("19", "20", "21", "blackjack")
"""The hands of the Buzzer Beater's rows, weakest first (633c.5(u)(1))."""


def buzzer_line_name(player: str, dealer: Sequence[str]) -> str:
    """``'20-vs-21-or-blackjack'``: a Buzzer Beater row's name on the command line.

    >>> buzzer_line_name("19", ("19",))
    '19-vs-19'
    """
    return f"{player}-vs-{'-or-'.join(dealer)}"


def buzzer_beater_outcomes(analysis: Any, game_rules: Any) -> WagerOutcomes:
    """The Buzzer Beater (633c.5(m), (u), (v)(3)) with the rows of the paytable of
    ``game_rules`` (a :class:`~tablejack.games.hybrid_rules.HybridRules`), from the joint
    distribution of the player's and the dealer's final hands (:mod:`.buzzer`).

    The player plays the generated basic strategy of the Blackjack Wager
    (:func:`tablejack.lab.exact.analyse` of ``analysis``, which has no field for the Buzzer
    Beater): the distribution does not depend on the Buzzer Beater's pays. Classification as
    :func:`tablejack.lab.buzzer.buzzer_beater`: the wager wins when the player's hand is 19, 20,
    21 or a Blackjack and the dealer's equals or beats it without busting ((u)(1), A-16); a
    win is paid by the row of (player, dealer); a win with no row loses or pushes (A-14)."""
    from tablejack.lab.buzzer import PLAYER_ROWS, joint_final_hands
    from tablejack.lab.model import DEALER_OUTCOMES

    if game_rules.buzzer_beater_hand != "first-hand":
        raise ValueError(
            "The lab analyses the Buzzer Beater with buzzer_beater_hand = 'first-hand' (A-6)."
        )
    data = joint_final_hands(analysis)
    joint = data["joint"]
    strength = {hand: i for i, hand in enumerate(BUZZER_HANDS)}
    rows = list(game_rules.buzzer_beater_paytable)
    names = [buzzer_line_name(row.player, row.dealer) for row in rows]
    if len(set(names)) != len(names):
        raise ValueError("The Buzzer Beater paytable names a row twice (PA 633c.5(v)(3)).")
    by_line: dict[str, Fraction] = defaultdict(Fraction)
    no_row: dict[str, Fraction] = defaultdict(Fraction)
    lost = _float_fraction(data["bust"]) + _float_fraction(data["surrender"])
    for r, player in enumerate(PLAYER_ROWS):
        for c, dealer in enumerate(DEALER_OUTCOMES):
            p = _float_fraction(joint[r, c])
            if p == 0:
                continue
            if (
                player not in strength
                or dealer not in strength
                or strength[dealer] < strength[player]
            ):
                lost += p
                continue
            row_index = next(
                (i for i, row in enumerate(rows) if row.player == player and dealer in row.dealer),
                None,
            )
            if row_index is None:
                no_row[f"player {player}, dealer {dealer}: no row (A-14)"] += p
            else:
                by_line[names[row_index]] += p
    fixed = Fraction(0) if game_rules.buzzer_beater_no_row == "push" else Fraction(-1)
    outcomes = [
        Outcome(f"player {row.player} against dealer {' or '.join(row.dealer)}", by_line[name],
                (name,))
        for row, name in zip(rows, names, strict=True)
    ]  # fmt: skip
    outcomes += [Outcome(label, p, (), fixed) for label, p in no_row.items()]
    outcomes.append(Outcome("loses", lost))
    lines = tuple(
        PayLine(name, f"player {row.player} against dealer {' or '.join(row.dealer)}", row.pays)
        for row, name in zip(rows, names, strict=True)
    )
    return WagerOutcomes(
        game="hybrid",
        wager="buzzer_beater",
        title="Buzzer Beater (PA 633c.5(m), (u), (v)(3))",
        lines=lines,
        outcomes=tuple(outcomes),
        rational=False,
        method=(
            "exact joint distribution of the player's final hand under the generated basic "
            "strategy and the dealer's final hand (first hand after a split, A-6, by the split "
            "approximation), in floating point"
        ),
        base_name="",
        clause="PA 633c.5(v)(3)",
        extra={
            "joint": {
                "rows": list(PLAYER_ROWS),
                "columns": list(DEALER_OUTCOMES),
                "probability": joint.tolist(),
                "player_bust": data["bust"],
                "player_surrender": data["surrender"],
            },
            "no_row": game_rules.buzzer_beater_no_row,
        },
    )


EZ_BUST_FORMS = ("regulation", "by-up-card")
"""EZ Bust paytable forms: one line, the dealer busts (633b.16(i), 1 to 1); or one line per
up card 2-6 (a design the regulation does not have)."""

EZ_BUST_UP_CARDS = ("2", "3", "4", "5", "6")


def ez_bust_outcomes(analysis: Any, form: str = "regulation") -> WagerOutcomes:
    """EZ Bust (633b.16) per wager placed, on a single-player table whose player plays the
    generated basic strategy of the Blackjack Wager (:func:`tablejack.lab.exact.ez_bust`): the
    dealer busts after drawing (a win, (f)(1)), ends at 21 or less (a loss, (f)(2), A-21) or
    every wager pushes ((g), when the rules choose it). ``form`` ``"by-up-card"`` pays the
    dealer's bust by the up card (2-6) it started from."""
    from tablejack.lab.exact import ez_bust

    if form not in EZ_BUST_FORMS:
        raise ValueError(f"The EZ Bust form {form!r} is not one of {', '.join(EZ_BUST_FORMS)}.")
    ez = ez_bust(analysis)
    weights = {
        up: row["probability_of_up_card"] * row["wagers_per_round"]
        for up, row in ez["by_up"].items()
    }
    total = sum(weights.values())
    outcomes = []
    lines = []
    if form == "regulation":
        lines.append(PayLine("dealer-busts", "the dealer busts (633b.16(f)(1))", Fraction(1)))
        outcomes.append(Outcome("dealer busts", _float_fraction(ez["win"]), ("dealer-busts",)))
    else:
        for up in EZ_BUST_UP_CARDS:
            name = f"dealer-busts-from-{up}"
            lines.append(PayLine(name, f"the dealer busts from an up card {up}", Fraction(1)))
            p = _float_fraction(weights[up] / total * ez["by_up"][up]["win"])
            outcomes.append(Outcome(f"dealer busts from an up card {up}", p, (name,)))
    outcomes.append(Outcome("dealer ends at 21 or less (633b.16(f)(2), A-21)",
                            _float_fraction(ez["lose"])))  # fmt: skip
    if ez["push_all"]:
        outcomes.append(Outcome("push-all (633b.16(g))", _float_fraction(ez["push"]), (),
                                Fraction(0)))  # fmt: skip
    return WagerOutcomes(
        game="classic",
        wager="ez_bust",
        title="EZ Bust (PA 633b.16)",
        lines=tuple(lines),
        outcomes=tuple(outcomes),
        rational=False,
        method=(
            "exact: the dealer's outcomes for every player hand of the generated basic strategy "
            "(single-player table; split hands by the split approximation), in floating point"
        ),
        base_name="regulation 1 to 1 (633b.16(i))",
        clause="PA 633b.16(i)",
        extra={"form": form, "by_up": ez["by_up"], "push_all": ez["push_all"]},
    )


# -- the lattice ------------------------------------------------------------------------------


def pay_ladder(low: int, high: int, form: str = "integers") -> list[int]:
    """The pays from ``low`` to ``high`` (to 1) of a lattice ``form``: ``"integers"`` every
    integer; ``"round"`` every integer to 20, then the round figures posted paytables use:
    multiples of 5 to 100, of 25 to 500, of 50 to 1,000, of 250 to 5,000 and of 1,000 beyond.

    >>> pay_ladder(18, 130, "round")
    [18, 19, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100, 125]
    """
    if form not in PAY_FORMS:
        raise ValueError(f"The pay lattice {form!r} is not one of {', '.join(PAY_FORMS)}.")
    if form == "integers":
        return list(range(low, high + 1))
    steps = ((20, 1), (100, 5), (500, 25), (1000, 50), (5000, 250))
    out = []
    for value in range(low, high + 1):
        step = next((s for limit, s in steps if value <= limit), 1000)
        if value % step == 0:
            out.append(value)
    return out


@dataclass(frozen=True)
class Lattice:
    """The paytables searched: each line ``min_pay`` to ``max_pay`` to 1 (``ranges`` per line:
    name -> (low, high)), every integer or round figures (``pays``); ``hold`` keeps lines at
    their base pay."""

    min_pay: int = 1
    max_pay: int | None = None
    """Default: the base paytable's largest pay, and at least 20."""
    pays: str = "round"
    ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    hold: frozenset[str] = frozenset()

    def bounds(self, outcomes: WagerOutcomes) -> dict[str, tuple[int, int]]:
        """Each searched line's (low, high)."""
        top = self.max_pay
        if top is None:
            top = max([20, *(math.ceil(line.base) for line in outcomes.lines)])
        if self.min_pay < 1:
            raise ValueError(
                f"--min-pay {self.min_pay}: a winning line pays at least 1 to 1 (a pay of 0 "
                "would be a push)."
            )
        if top < self.min_pay:
            raise ValueError(f"--max-pay {top} is below --min-pay {self.min_pay}.")
        names = {line.name for line in outcomes.lines}
        for name in [*self.ranges, *self.hold]:
            outcomes.line(name)  # raises for an unknown line
        out = {}
        for name in sorted(names - set(self.hold)):
            low, high = self.ranges.get(name, (self.min_pay, top))
            if low < 1 or high < low:
                raise ValueError(
                    f"The range {low}:{high} of {name} must run from at least 1 up "
                    "(a winning line pays at least 1 to 1)."
                )
            out[name] = (low, high)
        return out

    def describe(self, outcomes: WagerOutcomes) -> dict[str, Any]:
        """The lattice as data."""
        return {
            "pays": self.pays,
            "odds": "N to 1",
            "bounds": {name: list(b) for name, b in self.bounds(outcomes).items()},
            "held": {name: _odds_text(outcomes.line(name).base) for name in sorted(self.hold)},
            "monotone": "a rarer outcome pays at least as much; equally likely outcomes pay "
            "the same",
        }


# -- the search problem -----------------------------------------------------------------------


@dataclass
class _Var:
    """A searched pay: one line, or lines that must pay the same (equally likely outcomes)."""

    lines: list[str]
    values: np.ndarray
    weight: Fraction
    links: list[tuple[int, int]] = field(default_factory=list)
    """(j, offset): this pay >= pay j + offset."""


@dataclass
class _Problem:
    vars: list[_Var]
    fixed_return: Fraction
    """The return of everything not searched (losses, pushes, held lines)."""
    fixed_pays: dict[str, Fraction]


class _Union:
    def __init__(self, names: Iterable[str]) -> None:
        self.parent = {name: name for name in names}

    def find(self, name: str) -> str:
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _build_problem(outcomes: WagerOutcomes, lattice: Lattice) -> _Problem:
    bounds = lattice.bounds(outcomes)
    paid = [o for o in outcomes.outcomes if o.lines and o.probability > 0]
    used = {line for o in paid for line in o.lines}
    fixed_pays = {
        line.name: line.base
        for line in outcomes.lines
        if line.name in lattice.hold or line.name not in used
    }
    free = [name for name in bounds if name in used]
    allowed = {
        name: set(pay_ladder(bounds[name][0], bounds[name][1], lattice.pays)) for name in free
    }
    ranked = sorted(paid, key=lambda o: o.probability)
    # pay(rare) - pay(common) >= 0 (== 0 for a tie), as {line: coefficient} + constant
    constraints: list[tuple[dict[str, int], Fraction, bool, Outcome, Outcome]] = []
    for rare, common in pairwise(ranked):
        coefficients: dict[str, int] = defaultdict(int)
        constant = Fraction(0)
        for sign, o in ((1, rare), (-1, common)):
            for line in o.lines:
                if line in fixed_pays:
                    constant += sign * fixed_pays[line]
                else:
                    coefficients[line] += sign
        terms = {line: c for line, c in coefficients.items() if c}
        tie = outcomes.ties(rare.probability, common.probability)
        constraints.append((terms, constant, tie, rare, common))
    union = _Union(free)
    for terms, constant, tie, _, _ in constraints:
        if tie and len(terms) == 2 and constant == 0 and sorted(terms.values()) == [-1, 1]:
            a, b = terms
            union.join(a, b)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in free:
        groups[union.find(name)].append(name)
    low: dict[str, Fraction] = defaultdict(lambda: Fraction(-(10**18)))
    high: dict[str, Fraction] = defaultdict(lambda: Fraction(10**18))
    links: list[tuple[str, str, Fraction]] = []  # a >= b + offset
    for terms, constant, tie, rare, common in constraints:
        merged: dict[str, int] = defaultdict(int)
        for line, c in terms.items():
            merged[union.find(line)] += c
        merged = {g: c for g, c in merged.items() if c}
        why = f"{rare.label} against {common.label}"
        if not merged:
            if constant < 0 or (tie and constant != 0):
                raise TargetOutOfReachError(
                    f"The held pays break the rule that pays never fall as the hand gets "
                    f"rarer: {why}."
                )
            continue
        if len(merged) == 1:
            ((g, c),) = merged.items()
            bound = -constant / c  # c * x + constant >= 0 (== 0 for a tie)
            if tie or c > 0:
                low[g] = max(low[g], bound)
            if tie or c < 0:
                high[g] = min(high[g], bound)
            continue
        if len(merged) == 2 and sorted(merged.values()) == [-1, 1] and not tie:
            a = next(g for g, c in merged.items() if c == 1)
            b = next(g for g, c in merged.items() if c == -1)
            links.append((a, b, -constant))
            continue
        raise ValueError(f"The monotone order of {why} is not a constraint the search handles.")
    variables: dict[str, _Var] = {}
    for g, members in groups.items():
        values = set.intersection(*(allowed[name] for name in members))
        values = {v for v in values if low[g] <= v <= high[g]}
        weight = sum((outcomes.line_probability(name) for name in members), Fraction(0))
        if not values:
            raise TargetOutOfReachError(
                f"No pay of {', '.join(sorted(members))} fits the lattice and the monotone "
                "order of the held pays."
            )
        variables[g] = _Var(sorted(members), np.array(sorted(values), dtype=np.int64), weight)
    # order: a pay after the pays it must be at least (commonest first)
    order: list[str] = []
    pending = sorted(variables, key=lambda g: -variables[g].weight)
    needs = defaultdict(set)
    for a, b, _ in links:
        needs[a].add(b)
    while pending:
        for g in pending:
            if needs[g] <= set(order):
                order.append(g)
                pending.remove(g)
                break
        else:  # pragma: no cover - the links follow the strict rarity order, a chain
            raise ValueError("The monotone order of the lines has a cycle.")
    index = {g: i for i, g in enumerate(order)}
    result = [variables[g] for g in order]
    for a, b, offset in links:
        result[index[a]].links.append((index[b], math.ceil(offset)))
    fixed_return = Fraction(0)
    for o in outcomes.outcomes:
        if not o.lines:
            fixed_return += o.probability * o.fixed
        else:
            fixed_return += o.probability * sum(
                (fixed_pays[line] for line in o.lines if line in fixed_pays), Fraction(0)
            )
    return _Problem(result, fixed_return, fixed_pays)


def _propagate(problem: _Problem) -> tuple[list[int], list[int]]:
    """Each pay's smallest and largest value in some paytable of the lattice."""
    vs = problem.vars
    low = [0] * len(vs)
    for i, v in enumerate(vs):
        need = max((low[j] + off for j, off in v.links), default=int(v.values[0]))
        k = int(np.searchsorted(v.values, need, "left"))
        if k == len(v.values):
            raise TargetOutOfReachError(_no_monotone(v))
        low[i] = int(v.values[k])
    high = [int(v.values[-1]) for v in vs]
    for i in range(len(vs) - 1, -1, -1):
        v = vs[i]
        k = int(np.searchsorted(v.values, high[i], "right")) - 1
        if k < 0 or v.values[k] < low[i]:
            raise TargetOutOfReachError(_no_monotone(v))
        high[i] = int(v.values[k])
        for j, off in v.links:
            high[j] = min(high[j], high[i] - off)
    return low, high


def _no_monotone(v: _Var) -> str:
    return (
        f"No paytable of the lattice pays {', '.join(v.lines)} at least as much as the more "
        "common outcomes: raise --max-pay or widen the ranges."
    )


# -- the search -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One paytable found: its pays, exact house edge and distance from the target."""

    pays: dict[str, Fraction]
    house_edge: Fraction
    distance: Fraction
    figures: dict[str, Any]

    def describe(self) -> str:
        """``'suited-pair 20 to 1, pair 10 to 1'``."""
        return ", ".join(f"{line} {_odds_text(odds)}" for line, odds in self.pays.items())


@dataclass(frozen=True)
class SearchResult:
    """The candidates nearest the target, nearest first, and what was searched."""

    outcomes: WagerOutcomes
    lattice: Lattice
    target: Fraction
    candidates: list[Candidate]
    reach: tuple[Fraction, Fraction]
    """The lowest and highest house edge of the lattice."""
    searched: int
    """Partial paytables enumerated (both halves, every pass)."""
    paytables: int | None
    """Paytables of the lattice that obey the monotone order and the bounds (None when the
    order is not a chain or tree, which the wagers here never give)."""


def search(
    outcomes: WagerOutcomes,
    target: Fraction,
    count: int = 10,
    lattice: Lattice | None = None,
    *,
    limit: int = STATES_LIMIT,
) -> SearchResult:
    """The ``count`` paytables of ``lattice`` whose exact house edge is nearest ``target``,
    nearest first (ties: the smaller pays, the commonest line first)."""
    lattice = lattice or Lattice()
    if count < 1:
        raise ValueError(f"--count {count} must be at least 1.")
    problem = _build_problem(outcomes, lattice)
    low, high = _propagate(problem)
    vs = problem.vars
    reach = _reach(problem, low, high)
    if not reach[0] <= target <= reach[1]:
        raise TargetOutOfReachError(
            f"A target house edge of {_pct(target)} is outside what the paytables of this "
            f"lattice reach for the {outcomes.wager} wager: from {_pct(reach[0])} (every pay "
            f"at its highest) to {_pct(reach[1])} (every pay at its lowest)."
        )
    wanted = -target - problem.fixed_return  # the searched pays' return that hits the target
    engine = _Engine(vs, low, high, float(wanted), limit)
    rows, searched = engine.nearest(count)
    paytables = _count_paytables(vs, low, high)
    scored = []
    for row in rows:
        pays = dict(problem.fixed_pays)
        for v, x in zip(vs, row, strict=True):
            for line in v.lines:
                pays[line] = Fraction(int(x))
        ordered = {line.name: pays[line.name] for line in outcomes.lines}
        edge = outcomes.house_edge(ordered)
        key = tuple(int(x) for x in row)
        scored.append((abs(edge - target), key, ordered, edge))
    scored.sort(key=lambda item: (item[0], item[1]))
    candidates = [
        Candidate(pays, edge, distance, outcomes.figures(pays))
        for distance, _, pays, edge in scored[:count]
    ]
    return SearchResult(outcomes, lattice, target, candidates, reach, searched, paytables)


def lattice_reach(outcomes: WagerOutcomes, lattice: Lattice) -> tuple[Fraction, Fraction]:
    """The lowest and the highest house edge of the lattice's paytables (every pay at its
    highest, every pay at its lowest, the monotone order kept)."""
    problem = _build_problem(outcomes, lattice)
    return _reach(problem, *_propagate(problem))


def _reach(problem: _Problem, low: Sequence[int], high: Sequence[int]) -> tuple[Fraction, Fraction]:
    weights = [v.weight for v in problem.vars]
    smallest = sum((w * x for w, x in zip(weights, low, strict=True)), Fraction(0))
    largest = sum((w * x for w, x in zip(weights, high, strict=True)), Fraction(0))
    return (-(largest + problem.fixed_return), -(smallest + problem.fixed_return))


def _pct(value: Fraction | float) -> str:
    return f"{float(value) * 100:.4f}%"


def _count_paytables(vs: Sequence[_Var], low: Sequence[int], high: Sequence[int]) -> int | None:
    """The number of paytables of the lattice (bounds and monotone order), exactly, by dynamic
    programming over each pay's values when every pay is bound below by at most one other (a
    chain or a tree); None otherwise."""
    # ways[i][value index]: paytables of the pays that depend (transitively) on pay i, given it
    children: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i, v in enumerate(vs):
        if len(v.links) > 1:
            return None
        for j, off in v.links:
            children[j].append((i, off))
    ways: dict[int, np.ndarray] = {}
    for i in range(len(vs) - 1, -1, -1):
        values = vs[i].values
        mask = (values >= low[i]) & (values <= high[i])
        w = mask.astype(object)
        for child, off in children[i]:
            child_values = vs[child].values
            suffix = np.concatenate([np.cumsum(ways[child][::-1])[::-1], [0]]).astype(object)
            start = np.searchsorted(child_values, values + off, "left")
            w = w * suffix[start]
        ways[i] = w
    total = 1
    for i, v in enumerate(vs):
        if not v.links:
            total *= int(sum(ways[i]))
    return total


class _Engine:
    """Meet in the middle over the searched pays (commonest first): the pays before a split
    point and the pays after it are each enumerated with pruning (a partial paytable is dropped
    when no completion can come within ``delta`` of the target), the second half sorted by its
    return, and each first-half paytable joined with the ``count`` second-half paytables
    nearest its remainder (binary search), respecting the one monotone link across the split.
    ``delta`` starts small and grows until ``count`` paytables lie within it: then no dropped
    paytable could be nearer."""

    TOLERANCE = 1e-11

    def __init__(
        self, vs: Sequence[_Var], low: Sequence[int], high: Sequence[int], wanted: float,
        limit: int,
    ) -> None:  # fmt: skip
        self.vs = vs
        self.low = np.array(low, dtype=np.int64)
        self.high = np.array(high, dtype=np.int64)
        self.w = np.array([float(v.weight) for v in vs])
        self.wanted = wanted
        self.limit = limit
        self.values = [v.values[(v.values >= lo) & (v.values <= hi)] for v, lo, hi in
                       zip(vs, low, high, strict=True)]  # fmt: skip
        self.m = len(vs)
        # the smallest/largest return of the pays from i on, each at its own bound
        lows = self.w * self.low
        highs = self.w * self.high
        self.min_after = np.concatenate([np.cumsum(lows[::-1])[::-1], [0.0]])
        self.max_after = np.concatenate([np.cumsum(highs[::-1])[::-1], [0.0]])
        self.min_before = np.concatenate([[0.0], np.cumsum(lows)])
        self.max_before = np.concatenate([[0.0], np.cumsum(highs)])
        self.searched = 0

    # - enumeration -

    def _prefixes(
        self, delta: float, stop: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray] | None]:
        """The paytables of pays 0..k-1 that can still come within ``delta`` of the target,
        for k = 0, 1, …, ``stop``; None (and the end) beyond the limit."""
        rows = np.zeros((1, 0), dtype=np.int64)
        sums = np.zeros(1)
        top = self.wanted + delta + self.TOLERANCE
        bottom = self.wanted - delta - self.TOLERANCE
        yield rows, sums
        for i in range(self.m if stop is None else stop):
            v = self.vs[i]
            values = self.values[i]
            need = np.full(len(rows), self.low[i], dtype=np.int64)
            for j, off in v.links:
                need = np.maximum(need, rows[:, j] + off)
            start = np.searchsorted(values, need, "left")
            # the largest value that leaves room under the top for the rest at its lowest
            room = (top - sums - self.min_after[i + 1]) / self.w[i]
            end = np.searchsorted(values, np.floor(room + 1e-9), "right")
            counts = np.maximum(end - start, 0)
            if int(counts.sum()) > self.limit:
                yield None
                return
            rows, sums = _expand(rows, sums, values, start, counts, self.w[i])
            # the rest at its highest must still reach the bottom, and at its lowest (the
            # links followed) stay under the top
            keep = sums + self.max_after[i + 1] >= bottom
            keep &= sums + self._min_completion(rows, i + 1) <= top
            rows, sums = rows[keep], sums[keep]
            self.searched += len(rows)
            yield rows, sums

    def _min_completion(self, rows: np.ndarray, start: int) -> np.ndarray:
        """The smallest return of pays start.. given the prefix ``rows`` (links followed)."""
        n = len(rows)
        if start >= self.m:
            return np.zeros(n)
        lows: list[np.ndarray] = []
        total = np.zeros(n)
        for i in range(start, self.m):
            need = np.full(n, self.low[i], dtype=np.int64)
            for j, off in self.vs[i].links:
                base = rows[:, j] if j < start else lows[j - start]
                need = np.maximum(need, base + off)
            values = self.values[i]
            k = np.minimum(np.searchsorted(values, need, "left"), len(values) - 1)
            lowest = values[k]
            # a row whose links ask more than the lattice allows cannot be completed
            lowest = np.where(need > values[-1], np.int64(10**12), lowest)
            lows.append(lowest)
            total += self.w[i] * lowest
        return total

    def _suffixes(
        self, delta: float, stop: int = 0
    ) -> Iterator[tuple[np.ndarray, np.ndarray] | None]:
        """The paytables of pays k..m-1 (their links among themselves kept) that can still come
        within ``delta`` of the target with some paytable of the pays before k, for k = m,
        m-1, …, ``stop``; None (and the end) beyond the limit."""
        rows = np.zeros((1, 0), dtype=np.int64)
        sums = np.zeros(1)
        top = self.wanted + delta + self.TOLERANCE
        bottom = self.wanted - delta - self.TOLERANCE
        yield rows, sums
        for i in range(self.m - 1, stop - 1, -1):
            values = self.values[i]
            # the pays after i that must be at least pay i + offset bound it from above
            ceiling = np.full(len(rows), self.high[i], dtype=np.int64)
            for d in range(i + 1, self.m):
                for j, off in self.vs[d].links:
                    if j == i:
                        ceiling = np.minimum(ceiling, rows[:, d - i - 1] - off)
            end = np.searchsorted(values, ceiling, "right")
            room = (top - sums - self.min_before[i]) / self.w[i]
            end = np.minimum(end, np.searchsorted(values, np.floor(room + 1e-9), "right"))
            start = np.zeros(len(rows), dtype=np.int64)
            counts = np.maximum(end, 0)
            if int(counts.sum()) > self.limit:
                yield None
                return
            rows, sums = _expand(rows, sums, values, start, counts, self.w[i], front=True)
            keep = sums + self.max_before[i] >= bottom
            rows, sums = rows[keep], sums[keep]
            self.searched += len(rows)
            yield rows, sums

    # - the join -

    def _cross(self, k: int) -> tuple[int, list[tuple[int, int]]] | None:
        """The first-half pay the second half links to, with the (second-half column, offset)
        links; (-1, []) with no link across; None when several first-half pays are linked."""
        targets = set()
        links = []
        for d in range(k, self.m):
            for j, off in self.vs[d].links:
                if j < k:
                    targets.add(j)
                    links.append((d - k, off))
        if not targets:
            return -1, []
        if len(targets) > 1:
            return None
        return targets.pop(), links

    def _join(self, k: int, delta: float, count: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The nearest paytables joining the halves split before pay ``k``."""
        cross = self._cross(k)
        if cross is None:
            return None
        a = b = None
        for a in self._prefixes(delta, k):
            if a is None:
                return None
        for b in self._suffixes(delta, k):
            if b is None:
                return None
        assert a is not None and b is not None
        a_rows, a_sums = a
        b_rows, b_sums = b
        order = np.argsort(b_sums, kind="stable")
        b_rows, b_sums = b_rows[order], b_sums[order]
        target_var, links = cross
        if target_var < 0:
            groups = [(np.arange(len(a_rows)), np.arange(len(b_rows)))]
        else:
            ceiling = np.full(len(b_rows), np.iinfo(np.int64).max)
            for col, off in links:
                ceiling = np.minimum(ceiling, b_rows[:, col] - off)
            groups = [
                (np.nonzero(a_rows[:, target_var] == value)[0], np.nonzero(ceiling >= value)[0])
                for value in np.unique(a_rows[:, target_var])
            ]
        best_rows = np.zeros((0, self.m), dtype=np.int64)
        best_dist = np.zeros(0)
        offsets = np.arange(-count, count)
        for a_index, b_index in groups:
            if len(a_index) == 0 or len(b_index) == 0:
                continue
            sb = b_sums[b_index]
            for chunk in range(0, len(a_index), 100_000):
                ai = a_index[chunk : chunk + 100_000]
                rest = self.wanted - a_sums[ai]
                idx = np.searchsorted(sb, rest)[:, None] + offsets[None, :]
                valid = (idx >= 0) & (idx < len(sb))
                idx = np.clip(idx, 0, len(sb) - 1)
                dist = np.where(valid, np.abs(rest[:, None] - sb[idx]), np.inf).ravel()
                pick = _smallest(dist, count, self.TOLERANCE)
                pick = pick[np.isfinite(dist[pick])]
                rows = np.concatenate(
                    [a_rows[ai[pick // (2 * count)]], b_rows[b_index[idx.ravel()[pick]]]], axis=1
                )
                best_rows = np.concatenate([best_rows, rows])
                best_dist = np.concatenate([best_dist, dist[pick]])
                keep = _smallest(best_dist, count, self.TOLERANCE)
                best_rows, best_dist = best_rows[keep], best_dist[keep]
        return best_rows, best_dist

    def nearest(self, count: int) -> tuple[np.ndarray, int]:
        """The rows of the ``count`` nearest paytables (with their float near-ties, settled
        exactly by the caller) and the number of partial paytables enumerated."""
        if self.m == 0:
            return np.zeros((1, 0), dtype=np.int64), 0
        delta = 1e-4
        while True:
            result = None
            for k in self._splits(delta):
                result = self._join(k, delta, count)
                if result is not None:
                    break
            if result is None:
                raise LatticeTooLargeError(
                    f"The pay lattice is too large to search exactly (more than "
                    f"{self.limit:,} partial paytables in a half): lower --max-pay, narrow a "
                    "line with --pay LINE=LOW:HIGH, hold a line at its base pay with --hold "
                    "LINE, or search round figures with --pays round."
                )
            rows, dist = result
            if int((dist <= delta + self.TOLERANCE).sum()) >= count or delta == math.inf:
                cut = np.sort(dist)[count - 1] if len(dist) >= count else math.inf
                return rows[dist <= cut + self.TOLERANCE], self.searched
            delta = math.inf if delta >= 1.0 else delta * 16

    def _splits(self, delta: float) -> list[int]:
        """Split points, the most balanced first (by the halves' sizes at this ``delta``)."""
        sizes_a = [math.inf] * (self.m + 1)
        for k, a in enumerate(self._prefixes(delta)):
            if a is None:
                break
            sizes_a[k] = len(a[0])
        sizes_b = [math.inf] * (self.m + 1)
        for n, b in enumerate(self._suffixes(delta)):
            if b is None:
                break
            sizes_b[self.m - n] = len(b[0])
        scored = sorted(
            (max(sizes_a[k], sizes_b[k]), k)
            for k in range(self.m + 1)
            if math.isfinite(sizes_a[k]) and math.isfinite(sizes_b[k])
        )
        return [k for _, k in scored]


def _smallest(values: np.ndarray, count: int, tolerance: float) -> np.ndarray:
    """Indices of the ``count`` smallest ``values`` and of every value within ``tolerance`` of
    the largest of them (float near-ties, settled later in exact arithmetic)."""
    if len(values) <= count:
        return np.arange(len(values))
    part = np.argpartition(values, count - 1)[:count]
    cut = values[part].max()
    return np.nonzero(values <= cut + tolerance)[0]


def _expand(
    rows: np.ndarray,
    sums: np.ndarray,
    values: np.ndarray,
    start: np.ndarray,
    counts: np.ndarray,
    weight: float,
    *,
    front: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """One more column (last, or first with ``front``): row r repeated counts[r] times, with
    values[start[r]], values[start[r] + 1], …"""
    owner = np.repeat(np.arange(len(rows)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    picked = values[np.repeat(start, counts) + np.arange(len(owner)) - first]
    column = picked[:, None]
    parts = [column, rows[owner]] if front else [rows[owner], column]
    return np.concatenate(parts, axis=1), sums[owner] + weight * picked


# -- the wagers of each game, the report and the par sheets ------------------------------------

DESIGNED_WAGERS: dict[str, tuple[str, ...]] = {
    "classic": ("ez_bust",),
    "hybrid": ("buzzer_beater",),
    "hybrid-shared": ("royal_match", "bet_the_set", "kings_bounty"),
}
"""The side wagers whose paytables :func:`search` designs, by game."""


def wager_outcomes(
    game: str, wager: str, rules: Any, analysis: Any, *, form: str = "regulation"
) -> WagerOutcomes:
    """The outcome distribution of ``wager`` of ``game`` under ``rules`` (the game's rules
    object; its paytable is the base) and ``analysis`` (their
    :class:`~tablejack.lab.model.AnalysisRules`). ``form`` ``"by-up-card"`` is for EZ Bust."""
    from dataclasses import replace

    designed = DESIGNED_WAGERS.get(game, ())
    if wager not in designed:
        sides = ", ".join(designed) if designed else "none"
        raise ValueError(
            f"The {wager} wager of the {game} game has no paytable to design (its pays are "
            f"set by the regulation); the {game} game's side wagers are: {sides}."
        )
    if form != "regulation" and wager != "ez_bust":
        raise ValueError(f"--form {form} is for the EZ Bust wager only.")
    if wager == "ez_bust":
        return ez_bust_outcomes(analysis, form)
    if wager == "buzzer_beater":
        from tablejack.games.hybrid_rules import REGULATION_PAYTABLE

        outcomes = buzzer_beater_outcomes(analysis, rules)
        regulation = tuple(rules.buzzer_beater_paytable) == REGULATION_PAYTABLE
        base = "the regulation's (PA 633c.5(v)(3))" if regulation else "the rules file's"
        return replace(outcomes, base_name=base)
    decks = analysis.decks  # the analysis holds a what-if deck count (the rules the permitted one)
    field_value = getattr(rules, f"{wager}_paytable")
    base = f"{field_value!r}" if isinstance(field_value, str) else "the rules file's"
    if wager == "royal_match":
        outcomes = royal_match_outcomes(
            decks,
            rules.royal_match_lines(),
            crown_treasure=rules.crown_treasure_pays if rules.crown_treasure else None,
            in_addition=rules.crown_treasure_in_addition,
        )
    elif wager == "bet_the_set":
        outcomes = bet_the_set_outcomes(decks, rules.bet_the_set_lines())
    else:
        outcomes = kings_bounty_outcomes(decks, rules.kings_bounty_lines())
    return replace(outcomes, base_name=base)


def base_report(result: SearchResult) -> dict[str, Any]:
    """The base paytable beside the candidates: its exact figures, whether it obeys the
    monotone order (and where not) and whether it lies on the searched lattice."""
    outcomes, lattice = result.outcomes, result.lattice
    pays = outcomes.base_pays
    violations = outcomes.rarity_violations(pays)
    off = []
    for name, (low, high) in lattice.bounds(outcomes).items():
        if outcomes.line_probability(name) == 0:
            continue
        odds = pays[name]
        if odds.denominator != 1 or int(odds) not in pay_ladder(low, high, lattice.pays):
            off.append(f"{name} {_odds_text(odds)}")
    edge = outcomes.house_edge(pays)
    return {
        "name": outcomes.base_name,
        "pays": {line: _odds_text(odds) for line, odds in pays.items()},
        **_figures_json(outcomes, pays, edge, result.target),
        "monotone": not violations,
        "violations": violations,
        "on_lattice": not violations and not off,
        "off_lattice_pays": off,
    }


def _figures_json(
    outcomes: WagerOutcomes, pays: Mapping[str, Fraction], edge: Fraction, target: Fraction
) -> dict[str, Any]:
    figures = outcomes.figures(pays)
    out: dict[str, Any] = {
        "house_edge": float(edge),
        "distance": float(abs(edge - target)),
        "hit_frequency": figures["hit_frequency"],
        "variance": figures["variance"],
        "stdev": figures["stdev"],
        "player_edge": edge < 0,
    }
    if outcomes.rational:
        out["house_edge_exact"] = _fraction_text(edge)
        out["distance_exact"] = _fraction_text(abs(edge - target))
        out["variance_exact"] = figures["variance_exact"]
    return out


def report(result: SearchResult, rules: Any) -> dict[str, Any]:
    """The search as one JSON-ready object."""
    outcomes = result.outcomes
    out: dict[str, Any] = {
        "game": outcomes.game,
        "wager": outcomes.wager,
        "title": outcomes.title,
        "target_edge": float(result.target),
        "target_edge_exact": _fraction_text(result.target),
        "method": outcomes.method,
        "rules": rules.to_mapping(),
        "lines": [
            {
                "line": line.name,
                "title": line.title,
                "base": _odds_text(line.base),
                "probability": float(outcomes.line_probability(line.name)),
            }
            for line in outcomes.lines
        ],
        "outcomes": [
            {
                "outcome": o.label,
                "lines": list(o.lines),
                "probability": float(o.probability),
                **(
                    {"probability_exact": _fraction_text(o.probability)}
                    if outcomes.rational
                    else {}
                ),
            }
            for o in sorted(outcomes.outcomes, key=lambda o: o.probability)
        ],
        "lattice": result.lattice.describe(outcomes),
        "paytables": result.paytables,
        "searched": result.searched,
        "reach": [float(result.reach[0]), float(result.reach[1])],
        "base": base_report(result),
        "candidates": [
            {
                "rank": rank,
                "pays": {line: _odds_text(odds) for line, odds in c.pays.items()},
                **_figures_json(outcomes, c.pays, c.house_edge, result.target),
            }
            for rank, c in enumerate(result.candidates, 1)
        ],
    }
    return out


def candidate_rules(outcomes: WagerOutcomes, rules: Any, pays: Mapping[str, Fraction]) -> Any:
    """``rules`` with the candidate paytable in force (EZ Bust: the rules' mapping with the
    designed pays under ``ez_bust_paytable``, since 633b.16(i) fixes 1 to 1)."""
    if outcomes.wager == "buzzer_beater":
        from tablejack.games.hybrid_rules import BuzzerBeaterRow

        rows = tuple(
            BuzzerBeaterRow(row.player, row.dealer, pays[buzzer_line_name(row.player, row.dealer)])
            for row in rules.buzzer_beater_paytable
        )
        return rules.replace(buzzer_beater_paytable=rows)
    if outcomes.wager in ("bet_the_set", "kings_bounty"):
        table = tuple((line.name, pays[line.name]) for line in outcomes.lines)
        return rules.replace(**{f"{outcomes.wager}_paytable": table})
    if outcomes.wager == "royal_match":
        table = tuple(
            (line.name, pays[line.name]) for line in outcomes.lines if line.name != "crown-treasure"
        )
        changes: dict[str, Any] = {"royal_match_paytable": table}
        if "crown-treasure" in pays:
            changes["crown_treasure_pays"] = pays["crown-treasure"]
        return rules.replace(**changes)
    return rules


def parsheet_data(result: SearchResult, rank: int, rules: Any, analysis: Any) -> dict[str, Any]:
    """The par sheet of candidate ``rank`` (1 = nearest) in the form of
    :func:`tablejack.lab.parsheet.build_parsheet`, for :func:`~.parsheet.write_report`."""
    from tablejack.lab import exact

    outcomes = result.outcomes
    candidate = result.candidates[rank - 1]
    figures = outcomes.figures(candidate.pays)
    game_rules = candidate_rules(outcomes, rules, candidate.pays)
    mapping = game_rules.to_mapping()
    paytable = [[line, _odds_text(odds)] for line, odds in candidate.pays.items()]
    if outcomes.wager == "ez_bust":
        mapping["ez_bust_paytable (designed; 633b.16(i) pays 1 to 1)"] = dict(paytable)
    entry: dict[str, Any] = {
        "wager": outcomes.wager,
        "title": f"{outcomes.title}: {candidate.describe()}",
        "house_edge": float(candidate.house_edge),
        "house_edge_method": "exact (" + outcomes.method + ")",
        "hit_frequency": figures["hit_frequency"],
        "stdev": figures["stdev"],
        "variance": figures["variance"],
        "distribution_method": "exact",
        "lines": figures["lines"],
        "paytable": paytable,
    }
    if outcomes.rational:
        entry["house_edge_exact"] = figures["house_edge_exact"]
        entry["variance_exact"] = figures["variance_exact"]
    if "joint" in outcomes.extra:
        entry["joint"] = outcomes.extra["joint"]
    analysed = exact.analyse(analysis)
    return {
        "game": outcomes.game,
        "title": (
            f"{outcomes.title}, paytable {rank} of {len(result.candidates)} nearest a house "
            f"edge of {_pct(result.target)} (this one {_pct(candidate.house_edge)}, "
            f"{_pct(candidate.distance)} away)"
        ),
        "rules": mapping,
        "analysis_rules": analysis.to_json(),
        "wagers": [entry],
        "player_edge_wagers": [outcomes.wager] if candidate.house_edge < 0 else [],
        "strategy": analysed.strategy.charts(),
        "composition_exceptions": [],
        "dealer_probabilities": exact.dealer_table(analysis),
        "paytable_design": {
            "rank": rank,
            "target_edge": float(result.target),
            "distance": float(candidate.distance),
            "lattice": result.lattice.describe(outcomes),
            "base": {line: _odds_text(odds) for line, odds in outcomes.base_pays.items()},
        },
        "method": {
            "exact": outcomes.method,
            "paytable": "the outcome distribution computed once; the paytable's house edge, "
            "hit frequency and variance summed over the outcomes in exact arithmetic; the "
            "player plays the Blackjack Wager's generated basic strategy whatever the side "
            "wager pays",
        },
    }


def write_parsheets(
    result: SearchResult,
    rules: Any,
    analysis: Any,
    out: Any,
    progress: Callable[[int, int], None] | None = None,
) -> list[str]:
    """A par sheet per candidate in ``out/candidate-NN/`` and the search in
    ``out/paytables.json``; the files written, relative to ``out``."""
    import json
    from pathlib import Path

    from tablejack.lab.parsheet import write_report

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    files = ["paytables.json"]
    total = len(result.candidates)
    for rank in range(1, total + 1):
        folder = f"candidate-{rank:02d}"
        data = write_report(parsheet_data(result, rank, rules, analysis), root / folder)
        files += [f"{folder}/{name}" for name in data["files"]]
        if progress is not None:
            progress(rank, total)
    payload = report(result, rules)
    payload["files"] = files
    (root / "paytables.json").write_text(json.dumps(payload, indent=2), "utf-8")
    return files


# -- the command line -------------------------------------------------------------------------


def parse_edge(text: str) -> Fraction:
    """A house edge from the command line, exactly: ``0.05``, ``5%`` or ``1/20``.

    >>> parse_edge("5%"), parse_edge("-17.34%")
    (Fraction(1, 20), Fraction(-867, 5000))
    """
    raw = text.strip()
    try:
        value = Fraction(raw[:-1]) / 100 if raw.endswith("%") else Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"--target-edge {text!r} must be a house edge such as 0.05, 5% or 1/20."
        ) from None
    return value


def parse_pay_range(text: str) -> tuple[str, tuple[int, int]]:
    """``LINE=LOW:HIGH`` (or ``LINE=PAY``) from the command line.

    >>> parse_pay_range("pair=8:12")
    ('pair', (8, 12))
    """
    line, _, bounds = text.partition("=")
    low, _, high = bounds.partition(":")
    try:
        pair = (int(low), int(high or low))
    except ValueError:
        raise ValueError(
            f"--pay {text!r} must be LINE=LOW:HIGH (pays N to 1), e.g. pair=8:12."
        ) from None
    return line.strip(), pair


def _small_pct(value: float) -> str:
    """A percentage to four places, or in scientific notation when smaller."""
    if value == 0 or value >= 5e-7:
        return f"{value * 100:.4f}%"
    return f"{value * 100:.1e}%"


def print_report(payload: Mapping[str, Any], console: Any) -> None:
    """:func:`report`'s object as text on a rich ``console``: the search, the base paytable
    and a table of the candidates, the lines as lettered columns."""
    from rich.table import Table

    lines = [line["line"] for line in payload["lines"]]
    base = payload["base"]
    size = "" if payload["paytables"] is None else f"{payload['paytables']:,} "
    console.print(
        f"{payload['title']}: the {len(payload['candidates'])} paytables nearest a house edge "
        f"of [bold]{payload['target_edge'] * 100:.4f}%[/] ({payload['lattice']['pays']} pays, "
        f"{size}paytables in the lattice, reaching {payload['reach'][0] * 100:.4f}% to "
        f"{payload['reach'][1] * 100:.4f}%)"
    )
    verdict = "on the lattice" if base["on_lattice"] else "not on the lattice"
    console.print(
        f"base paytable ({base['name']}): house edge {base['house_edge'] * 100:.4f}%, {verdict}"
    )
    for violation in base["violations"][:4]:
        console.print(f"  not monotone: {violation}")
    if len(base["violations"]) > 4:
        console.print(f"  ({len(base['violations']) - 4} more with --json)")
    for pay in base["off_lattice_pays"]:
        console.print(f"  off the lattice: {pay}")
    console.print("columns:")
    keys = "abcdefghijklmnopqrstuvwxyz"
    for key, line in zip(keys, payload["lines"], strict=False):
        console.print(
            f"  {key}  {line['line']}: {line['title']} (probability {line['probability']:.6g}, "
            f"base {line['base']})"
        )
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    for key, _ in zip(keys, lines, strict=False):
        table.add_column(key, justify="right")
    for name in ("house edge", "distance", "hit freq.", "std. dev."):
        table.add_column(name, justify="right")
    for c in payload["candidates"]:
        table.add_row(
            str(c["rank"]),
            *(c["pays"][line].removesuffix(" to 1") for line in lines),
            f"{c['house_edge'] * 100:.4f}%",
            _small_pct(c["distance"]),
            f"{c['hit_frequency'] * 100:.4f}%",
            f"{c['stdev']:.4f}",
        )
    console.print(table)
    if payload.get("out"):
        console.print(f"wrote {len(payload['files'])} files in {payload['out']}")
