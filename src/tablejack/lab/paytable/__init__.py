"""Paytable design: the paytables of a side wager nearest a target house edge, searched exactly.

In three parts that import one way: :mod:`~.outcomes` (the outcome distribution of each wager),
:mod:`~.search` (the exact search over a pay lattice) and :mod:`~.report` (JSON, text and par
sheets); the maths never imports the report.

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

from tablejack.lab.paytable.outcomes import (
    DESIGNED_WAGERS,
    EZ_BUST_FORMS,
    Outcome,
    PayLine,
    WagerOutcomes,
    bet_the_set_outcomes,
    buzzer_beater_outcomes,
    buzzer_line_name,
    ez_bust_outcomes,
    kings_bounty_outcomes,
    royal_match_outcomes,
    wager_outcomes,
)
from tablejack.lab.paytable.report import (
    base_report,
    candidate_rules,
    parsheet_data,
    print_report,
    report,
    write_parsheets,
)
from tablejack.lab.paytable.search import (
    PAY_FORMS,
    Candidate,
    Lattice,
    LatticeTooLargeError,
    SearchResult,
    TargetOutOfReachError,
    lattice_reach,
    parse_edge,
    parse_pay_range,
    pay_ladder,
    search,
)

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
