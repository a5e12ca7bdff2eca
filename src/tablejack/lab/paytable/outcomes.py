"""A side wager's outcome distribution, independent of what its lines pay: the cards decide
the outcome, the paytable only prices it (the first part of paytable design, :mod:`tablejack.lab.paytable`).

Each designed wager has its function (:func:`bet_the_set_outcomes`, :func:`royal_match_outcomes`,
:func:`kings_bounty_outcomes`, :func:`buzzer_beater_outcomes`, :func:`ez_bust_outcomes`) and
:func:`wager_outcomes` picks the one for a game's wager. A paytable's house edge, hit frequency
and variance are then sums over a handful of outcomes (:class:`WagerOutcomes`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from tablejack.core.cards import full_deck
from tablejack.games.hybrid_rules import REGULATION_PAYTABLE
from tablejack.games.hybrid_shared_rules import (
    BET_THE_SET_LINES,
    bet_the_set_lines,
    kings_bounty_lines,
    royal_match_lines,
)
from tablejack.lab.buzzer import PLAYER_ROWS, joint_final_hands
from tablejack.lab.exact import ez_bust
from tablejack.lab.model import DEALER_OUTCOMES
from tablejack.lab.sidebets import bet_the_set, kings_bounty, royal_match

FLOAT_TIE = 1e-12
"""Relative difference under which two probabilities computed in floating point (the Buzzer
Beater's and EZ Bust's, from the exact kernels) are taken as equal; rational ones are compared
exactly."""


def fraction_text(value: Fraction) -> str:
    """``p/q``: a probability as the JSON report writes it exactly."""
    return f"{value.numerator}/{value.denominator}"


def odds_text(pay: Fraction) -> str:
    """A pay as the paytables write it: ``N to M``, ``push`` or ``loses``."""
    if pay < 0:
        return "loses"
    if pay == 0:
        return "push"
    return f"{pay.numerator} to {pay.denominator}"


def percent_text(value: Fraction | float) -> str:
    """A fraction as a percentage to four places."""
    return f"{float(value) * 100:.4f}%"


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
                    "odds": odds_text(pay),
                    "probability": float(o.probability),
                    "return": float(o.probability * pay),
                    "method": "exact",
                }
            )
            if self.rational:
                lines[-1]["probability_exact"] = fraction_text(o.probability)
        variance = second - mean * mean
        out: dict[str, Any] = {
            "house_edge": float(-mean),
            "hit_frequency": float(hits),
            "variance": float(variance),
            "stdev": math.sqrt(max(float(variance), 0.0)),
            "lines": sorted(lines, key=lambda line: -line["pays"]),
        }
        if self.rational:
            out["house_edge_exact"] = fraction_text(-mean)
            out["variance_exact"] = fraction_text(variance)
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
                        f"{odds_text(a)} but is {relation} {common.label} (probability "
                        f"{float(common.probability):.6g}), which pays {odds_text(b)}"
                    )
        return out

    def ties(self, p: Fraction, q: Fraction) -> bool:
        """Whether two outcome probabilities are equal (neither outcome is rarer)."""
        if self.rational:
            return p == q
        return abs(p - q) <= FLOAT_TIE * max(p, q)


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
