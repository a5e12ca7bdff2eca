"""Advantage-play exposure: what a card counter gains against each wager as the shoe is dealt.

For every wager of a game (the main wager, insurance and the side wagers) the lab computes:

1. **Effects of removal** (EOR): the change in the player's exact expectation per unit wagered
   when one card of a rank is removed from the full shoe (:func:`effects_of_removal`). The main
   wager and EZ Bust come from the exact analysis of the shoe without that card (the strategy
   generated again for it, :func:`composition_house_edges`), the Buzzer Beater from the same
   analysis with the full shoe's basic strategy (a wager paid on the player's final hand sees
   every decision a regenerated strategy flips); insurance and the
   hybrid-shared side wagers (Royal Match 21 with the Crown Treasure, Bet the Set, King's Bounty)
   from their exact formulas, whose card identities (suits) matter, by rank A, 2 … 10, J, Q, K.
2. **A count**: Hi-Lo for the main wager (the standard count); for every other wager the best
   linear count, the EORs scaled and rounded to integers of level 1 to 3, the level the lowest
   whose betting correlation is within 0.01 of level 3's (:func:`derive_count`). The true count is
   the running count per deck left; an unbalanced count is measured from its expected value.
3. **A simulation over seeded shoes** (:func:`simulate_exposure`, the shoes of
   :func:`tablejack.lab.simulate.shoe_cards`): before every card a round may start; at that depth
   the true count and the wager's player edge on the cards left are recorded — exactly where it
   is cheap (insurance, the pair side wagers); EZ Bust by the dealer's exact bust probability
   for the shoe left (:func:`ez_dealer_return`, refreshed every 8 cards); the main wager and
   the Buzzer Beater by the linear estimate ``e0 + (N - 1) / n * sum(EOR of the cards gone)``.
   :func:`validate_linear` checks the estimates against the exact analysis of sample shoes.
4. **What a counter gets** with the cut card at each penetration: a flat bettor, a bettor
   spreading 1 to ``spread`` units by the true count (one unit below the key count, one more per
   half true count above it), a wonger who bets one unit only at a true count at or above the key
   count (the count at which the estimated edge reaches zero) and sits out the other rounds,
   and an ideal player who knows the composition and bets only when the edge favours him. Every
   depth before the cut card is weighted alike (a round starts at any depth equally often).
5. **The turning penetration** of a wager: the first penetration at which at least 1% of the
   rounds reach the key count *and* those rounds have a positive average player edge (a counter
   who bets only then has a positive expectation); the ideal player's: the first penetration at
   which at least 1% of the rounds favour the player.

>>> count = derive_count(np.array([-1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, -1.0]),
...                      np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 4]) / 13, CARD_LABELS)
>>> count.tags, count.level, round(count.betting_correlation, 6)
((-1, 1, 1, 1, 1, 1, 0, 0, 0, -1), 1, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from tablejack.lab import _exposure_kernels
from tablejack.lab.model import CARD_LABELS, AnalysisRules

__all__ = [
    "HI_LO",
    "PAIR_WAGERS",
    "RANKS",
    "VISIBILITY",
    "LinearCount",
    "PairWager",
    "WagerPlan",
    "composition_house_edges",
    "dealer_arrays",
    "derive_count",
    "effects_of_removal",
    "exposure",
    "ez_dealer_return",
    "html_section",
    "pair_house_edge",
    "pair_wager",
    "plan_wager",
    "plot_exposure",
    "render_text",
    "simulate_exposure",
    "validate_linear",
]

kern: Any = _exposure_kernels
"""The numba kernel (untyped for mypy: numba dispatchers take any arguments)."""

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
"""The ranks a count of the hybrid-shared side wagers tags (kings and queens apart)."""

HI_LO = (-1, 1, 1, 1, 1, 1, 0, 0, 0, -1)
"""The Hi-Lo count by point class (A, 2 … 9, ten-value): the standard count of the main wager."""

PAIR_WAGERS = ("royal_match", "bet_the_set", "kings_bounty")
"""Side wagers settled on the player's two cards (and a bonus on the dealer's two): exact for
every composition of the 52 card identities."""

LINEAR_WAGERS = ("blackjack", "ez_bust", "buzzer_beater")
"""Wagers whose edge on a depleted shoe the simulation estimates from the EORs (their exact
value needs the whole analysis of the shoe)."""

CLASS_OF = np.array([0 if i < 4 else min(i // 4 + 1, 10) - 1 for i in range(52)], dtype=np.int64)
"""Point class (0 = ace … 9 = ten-value) of each card identity 0–51 (rank-major, as the shoes)."""

RANK_OF = np.array([i // 4 for i in range(52)], dtype=np.int64)
"""Rank (0 = ace … 12 = king) of each card identity 0–51."""

FAVOURABLE_SHARE = 0.01
"""The share of rounds that makes a count "reachable" for the turning penetration."""

VISIBILITY = {
    "classic": (
        "PA Chapter 633a: the players' cards and the dealer's up card are dealt face up and the "
        "hole card is turned when the dealer plays, so a counter at the table sees every card "
        "dealt. The figures assume he counts all of them; one who misses cards does worse."
    ),
    "hybrid": (
        "PA 633c.5 version A: the position cards, the up card and every community card are dealt "
        "face up ((n), (q)) and the hole card is turned at (s), and every terminal shows them all, "
        "with the round history and recall on the screen: a terminal player keeps an exact count "
        "without watching the felt and without error, and sits out or bets any round from his "
        "terminal without changing seats, so back-counting (wonging) is inconspicuous. Three "
        "positions share one set of community cards, so a round uses fewer cards per player "
        "than a live table with as many players: more rounds per shoe at every count. The "
        "per-round figures below assume every card seen, which the terminal guarantees."
    ),
    "hybrid-shared": (
        "PA 633c.5 version B: the shared start ((y): the players' two cards and the dealer's "
        "first card) and every community card are face up and on every terminal, with the round "
        "history: every player holds the same exact count. The side wagers are settled on the "
        "same two cards for everyone, so at a favourable count every counting terminal wins or "
        "loses together: the house's exposure on that round is the per-wager figure below times "
        "the number of terminals betting. A round uses the shared start and the community cards "
        "whatever the number of players: more rounds per shoe than a live table. The per-round "
        "figures assume every card seen, which the terminal guarantees."
    ),
    "multi-action": (
        "NJ multi-action: a live table; every card is dealt face up (the dealer's first card is "
        "kept for the three rounds), so a counter sees every card. The figures assume he counts "
        "all of them."
    ),
}
"""What each game shows a counter (PA 633c.5 for the hybrid tables)."""


# -- exact figures of a depleted shoe ----------------------------------------------------------


def _buzzer_return(joint: np.ndarray, lost: float, game_rules: Any) -> float:
    """The Buzzer Beater's expected return from the joint table of final hands (as
    :func:`tablejack.lab.buzzer.buzzer_beater` prices it)."""
    rows = {1: "19", 2: "20", 3: "21", 4: "blackjack"}
    columns = {2: "19", 3: "20", 4: "21", 5: "blackjack"}
    strength = {"19": 19, "20": 20, "21": 21, "blackjack": 22}
    no_row = 0.0 if game_rules.buzzer_beater_no_row == "push" else -1.0
    mean = -lost
    for row in range(5):
        for col in range(7):
            p = float(joint[row, col])
            if p == 0.0:
                continue
            player = rows.get(row)
            dealer = columns.get(col)
            if player is None or dealer is None or strength[dealer] < strength[player]:
                mean -= p
                continue
            odds = game_rules.buzzer_beater_odds(player, dealer)
            mean += p * (no_row if odds is None else float(odds))
    return mean


def composition_house_edges(
    rules: AnalysisRules,
    counts: Sequence[float] | np.ndarray,
    wagers: Sequence[str],
    game_rules: Any = None,
) -> dict[str, float]:
    """The exact house edges of ``wagers`` (``blackjack``, ``insurance``, ``ez_bust``,
    ``buzzer_beater``) for a shoe holding ``counts`` cards of each point class (A … ten-value):
    the lab's exact analysis (:mod:`.exact`) of a shoe with cards removed, the main wager and
    EZ Bust with the strategy generated for that shoe, the Buzzer Beater with the basic strategy
    of the full shoe ``rules`` describes. For the full shoe it equals
    :func:`tablejack.lab.exact.analyse` and :func:`tablejack.lab.buzzer.buzzer_beater`.

    >>> full = AnalysisRules(decks=1).shoe_counts()
    >>> fewer_tens = full - np.eye(10)[9] * 4
    >>> edges = composition_house_edges(AnalysisRules(decks=1), fewer_tens, ["insurance"])
    >>> round(edges["insurance"], 6)  # 1 - 3 * 12 / 47
    0.234043
    """
    from tablejack.lab import exact

    shoe = np.asarray(counts, dtype=np.float64).copy()
    if shoe.shape != (10,) or (shoe < 0).any():
        raise ValueError("A composition is ten non-negative card counts (A, 2 … 9, ten-value).")
    n = float(shoe.sum())
    if n < 10:
        raise ValueError(f"A shoe of {n:g} cards is too small to analyse.")
    out: dict[str, float] = {}
    if "insurance" in wagers:
        out["insurance"] = 1.0 - 3.0 * float(shoe[9]) / (n - 1.0)
    if not any(w in LINEAR_WAGERS for w in wagers):
        return out
    vec = rules.kernel_vector()
    mask = rules.double_mask()
    tables = [np.zeros((10, 22), dtype=np.int64) for _ in range(4)]
    tables.append(np.zeros((10, 10), dtype=np.int64))
    splits = np.full((10, 10, 3), np.nan)
    scratch = np.zeros((512, 7))
    up_return = np.zeros(10)
    live = [u for u in range(10) if shoe[u] > 0]
    bases = {}
    for u in live:
        base = shoe.copy()
        base[u] -= 1.0
        bases[u] = base
    for u in live if ("blackjack" in wagers or "ez_bust" in wagers) else ():
        child, drawn, size = exact.dealer_dag(u, rules.h17)
        values = exact.kernels.analyse_up(
            child, drawn, size, scratch, bases[u], float(bases[u].sum()), 1, u, vec, mask,
            *tables, splits[u],
        )  # fmt: skip
        up_return[u] = float(np.nansum(values[:, :, 0] * values[:, :, 8]))
    p_up = shoe / n
    if "blackjack" in wagers:
        out["blackjack"] = -float((p_up * up_return).sum())
    if "ez_bust" in wagers:
        weights = 0.0
        win = lose = 0.0
        for u in (1, 2, 3, 4, 5):
            if u not in bases:
                continue
            child, drawn, size = exact.dealer_dag(u, rules.h17)
            w, lo, _, placed = exact.kernels.ez_bust_value(
                child, drawn, size, scratch, bases[u], float(bases[u].sum()), 1, u, vec, mask,
                *tables, splits[u], rules.ez_bust_push_all,
            )  # fmt: skip
            weight = shoe[u] * placed
            weights += weight
            win += weight * w
            lose += weight * lo
        out["ez_bust"] = float((lose - win) / weights)
    if "buzzer_beater" in wagers:
        if game_rules is None or getattr(game_rules, "buzzer_beater_hand", "") != "first-hand":
            raise ValueError(
                "The lab analyses the Buzzer Beater with buzzer_beater_hand = 'first-hand' (A-6)."
            )
        # the player keeps the basic strategy of the full shoe: a strategy generated again
        # for each shoe flips decisions the main wager is indifferent to but the Buzzer Beater
        # (paid on the player's final hand) is not
        basic = exact.analyse(rules).strategy.arrays()
        joint = np.zeros((5, 7))
        lost = 0.0
        for u in live:
            child, drawn, size = exact.dealer_dag(u, rules.h17)
            j, bust, surrender = exact.kernels.final_hands(
                child, drawn, size, scratch, bases[u], float(bases[u].sum()), 1, u, vec, mask,
                *basic, rules.late_surrender,
            )  # fmt: skip
            joint += p_up[u] * j
            lost += float(p_up[u] * (bust + surrender))
        out["buzzer_beater"] = -_buzzer_return(joint, lost, game_rules)
    return out


@dataclass(frozen=True)
class PairWager:
    """A side wager settled on the player's two cards, as arrays over the 52 card identities:
    the net odds of each ordered pair (-1 a loss), and a dealer bonus: for each special pair its
    change of pay when the dealer's two cards make the event (each ordered pair of the event)."""

    wager: str
    pay: np.ndarray
    special_a: np.ndarray
    special_b: np.ndarray
    special_delta: np.ndarray
    event_up: np.ndarray
    event_second: np.ndarray


def _best(table: Any, matched: Sequence[str]) -> Fraction:
    best = Fraction(0)
    for line, odds in table:
        if line in matched and odds > best:
            best = odds
    return best


def pair_wager(game_rules: Any, wager: str) -> PairWager:
    """The :class:`PairWager` of ``royal_match``, ``bet_the_set`` or ``kings_bounty`` under a
    :class:`~tablejack.games.hybrid_shared_rules.HybridSharedRules`, judged by the engine's own
    functions (the highest line only; the Crown Treasure in addition to the line or instead)."""
    from tablejack.core.cards import full_deck
    from tablejack.games.hybrid_shared_rules import (
        bet_the_set_lines,
        is_royal_match,
        kings_bounty_lines,
        royal_match_lines,
    )

    deck = full_deck()
    pay = np.full((52, 52), -1.0)
    specials: list[tuple[int, int, float]] = []
    events: list[tuple[int, int]] = []
    if wager == "royal_match":
        table = game_rules.royal_match_lines()
        crown = game_rules.crown_treasure_pays if game_rules.crown_treasure else None
        for a, first in enumerate(deck):
            for b, second in enumerate(deck):
                matched = royal_match_lines(first, second)
                odds = _best(table, matched)
                pay[a, b] = float(odds) if odds else -1.0
                if crown and "royal-match" in matched:
                    value = odds + crown if game_rules.crown_treasure_in_addition else crown
                    specials.append((a, b, float(value) - pay[a, b]))
        if specials:
            events = [
                (u, s) for u in range(52) for s in range(52) if is_royal_match(deck[u], deck[s])
            ]
    elif wager == "bet_the_set":
        table = game_rules.bet_the_set_lines()
        for a, first in enumerate(deck):
            for b, second in enumerate(deck):
                odds = _best(table, bet_the_set_lines(first, second))
                pay[a, b] = float(odds) if odds else -1.0
    elif wager == "kings_bounty":
        table = game_rules.kings_bounty_lines()
        top = any(line == "spade-kings-dealer-blackjack" for line, _ in table)
        for a, first in enumerate(deck):
            for b, second in enumerate(deck):
                plain = kings_bounty_lines(first, second, False)
                odds = _best(table, plain)
                pay[a, b] = float(odds) if odds else -1.0
                if top and "spade-kings" in plain:
                    value = _best(table, kings_bounty_lines(first, second, True))
                    specials.append((a, b, float(value) - pay[a, b]))
        if specials:
            events = [
                (u, s)
                for u in range(52)
                for s in range(52)
                if (deck[u].is_ace and deck[s].is_ten_value)
                or (deck[s].is_ace and deck[u].is_ten_value)
            ]
    else:
        raise ValueError(f"{wager!r} is not a side wager of the hybrid-shared game.")
    return PairWager(
        wager,
        pay,
        np.array([a for a, _, _ in specials], dtype=np.int64),
        np.array([b for _, b, _ in specials], dtype=np.int64),
        np.array([d for _, _, d in specials], dtype=np.float64),
        np.array([u for u, _ in events], dtype=np.int64),
        np.array([s for _, s in events], dtype=np.int64),
    )


def pair_house_edge(model: PairWager, counts: Sequence[float] | np.ndarray) -> float:
    """The exact house edge of a pair wager for a shoe holding ``counts`` of each of the 52 card
    identities (rank-major: A♠ A♥ A♦ A♣ 2♠ …)."""
    c = np.asarray(counts, dtype=np.float64).copy()
    if c.shape != (52,) or (c < 0).any() or c.sum() < 4:
        raise ValueError("A composition is 52 non-negative card counts, at least 4 cards.")
    value = kern.pair_value(
        c, model.pay, model.special_a, model.special_b, model.special_delta,
        len(model.special_a), model.event_up, model.event_second, len(model.event_up),
    )  # fmt: skip
    return -float(value)


# -- effects of removal and the count ----------------------------------------------------------


def _full52(decks: int) -> np.ndarray:
    return np.full(52, float(decks))


def effects_of_removal(
    rules: AnalysisRules,
    wagers: Sequence[str],
    game_rules: Any = None,
    *,
    progress: Callable[[], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """For each wager: the exact house edge of the full shoe (``house_edge``), the groups of
    cards its count tags (``labels``: point classes, or ranks for the pair side wagers), their
    share of the shoe (``frequency``) and the EORs (``eor``): the change in the player's expected
    return per unit wagered when one card of the group is removed (positive: the removal helps
    the player). A pair side wager's EOR of a rank is the mean over its four suits."""
    if rules.decks is None:
        raise ValueError("Effects of removal are for a finite shoe; give a number of decks.")
    out: dict[str, dict[str, Any]] = {}
    ten = [w for w in wagers if w not in PAIR_WAGERS]
    if ten:
        full = rules.shoe_counts()
        base = composition_house_edges(rules, full, ten, game_rules)
        if progress:
            progress()
        removed = []
        for r in range(10):
            removed.append(composition_house_edges(rules, full - np.eye(10)[r], ten, game_rules))
            if progress:
                progress()
        for w in ten:
            out[w] = {
                "house_edge": base[w],
                "labels": CARD_LABELS,
                "frequency": full / full.sum(),
                "eor": np.array([base[w] - removed[r][w] for r in range(10)]),
                "method": "exact analysis of the shoe without the card",
            }
    for w in wagers:
        if w not in PAIR_WAGERS:
            continue
        model = pair_wager(game_rules, w)
        full52 = _full52(rules.decks)
        base_edge = pair_house_edge(model, full52)
        eor = np.zeros(13)
        for i in range(52):
            eor[RANK_OF[i]] += (base_edge - pair_house_edge(model, full52 - np.eye(52)[i])) / 4
        out[w] = {
            "house_edge": base_edge,
            "labels": RANKS,
            "frequency": np.full(13, 1 / 13),
            "eor": eor,
            "method": "exact formula of the shoe without the card (mean over the four suits)",
            "model": model,
        }
    return out


def _weighted_correlation(x: np.ndarray, y: np.ndarray, p: np.ndarray) -> float:
    xc = x - float((p * x).sum())
    yc = y - float((p * y).sum())
    den = math.sqrt(float((p * xc * xc).sum()) * float((p * yc * yc).sum()))
    return float((p * xc * yc).sum()) / den if den > 0 else 0.0


def _round_half_away(x: np.ndarray) -> np.ndarray:
    rounded: np.ndarray = (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(np.int64)
    return rounded


@dataclass(frozen=True)
class LinearCount:
    """A linear card count: integer tags per group of cards, and how it serves a wager."""

    name: str
    labels: tuple[str, ...]
    tags: tuple[int, ...]
    level: int
    betting_correlation: float
    """Correlation of the tags with the wager's EORs, weighted by each group's share of the
    shoe (1 for tags exactly proportional to the EORs)."""
    levels: dict[int, float] = field(default_factory=dict)
    """The betting correlation of the rounded count of each level 1–3."""

    def to_json(self) -> dict[str, Any]:
        """The count as JSON-ready data."""
        return {
            "name": self.name,
            "tags": dict(zip(self.labels, self.tags, strict=True)),
            "level": self.level,
            "betting_correlation": self.betting_correlation,
            "betting_correlation_by_level": {str(k): v for k, v in self.levels.items()},
        }


def derive_count(
    eor: np.ndarray, frequency: np.ndarray, labels: Sequence[str], *, max_level: int = 3
) -> LinearCount | None:
    """The best linear count of a wager: its EORs centred (less their frequency-weighted mean),
    scaled so the largest is ``level`` and rounded to integers, for levels 1 to ``max_level``;
    the lowest level whose betting correlation is within 0.01 of the highest's. None when the
    centred EORs are all zero (no linear count helps: every rank acts alike)."""
    eor = np.asarray(eor, dtype=np.float64)
    centred = eor - float((frequency * eor).sum())
    scale = float(np.abs(centred).max())
    if scale <= 1e-9 * max(float(np.abs(eor).max()), 1e-300) or scale < 1e-15:
        return None
    levels: dict[int, tuple[np.ndarray, float]] = {}
    for level in range(1, max_level + 1):
        tags = _round_half_away(centred / scale * level)
        levels[level] = (tags, _weighted_correlation(tags.astype(float), eor, frequency))
    best = max(bc for _, bc in levels.values())
    level = min(lv for lv, (_, bc) in levels.items() if bc >= best - 0.01)
    tags, bc = levels[level]
    return LinearCount(
        name=f"best linear count (level {level})",
        labels=tuple(labels),
        tags=tuple(int(t) for t in tags),
        level=level,
        betting_correlation=bc,
        levels={lv: bc for lv, (_, bc) in levels.items()},
    )


def _hi_lo(labels: Sequence[str]) -> LinearCount:
    tags = HI_LO if len(labels) == 10 else (*HI_LO, -1, -1, -1)
    return LinearCount("Hi-Lo", tuple(labels), tuple(tags), 1, float("nan"))


# -- the simulation ----------------------------------------------------------------------------


@dataclass
class WagerPlan:
    """What the simulation needs of one wager: its kind, edge off the top, EORs and count per
    card identity, the key count, and (pair wagers) its paytable."""

    wager: str
    kind: int
    house_edge: float
    eor52: np.ndarray
    tags52: np.ndarray
    key: float
    slope: float
    """Estimated player edge per unit of true count."""
    count: LinearCount | None
    eor: dict[str, Any]
    pair: PairWager | None = None


def plan_wager(wager: str, eor: dict[str, Any], decks: int, *, dealer: bool = True) -> WagerPlan:
    """The simulation's plan of one wager from its :func:`effects_of_removal` entry: Hi-Lo for
    the main wager, else the best linear count; the key count and the edge per true count.
    EZ Bust is estimated with the dealer's exact bust probability (``dealer``; not with the
    push-all option, whose pushes depend on the player's hand), every other linear wager by its
    EORs alone."""
    labels = eor["labels"]
    frequency = eor["frequency"]
    group = CLASS_OF if len(labels) == 10 else RANK_OF
    if wager == "blackjack":
        count: LinearCount | None = _hi_lo(labels)
    else:
        count = derive_count(eor["eor"], frequency, labels)
    e = np.asarray(eor["eor"], dtype=np.float64)
    centred = e - float((frequency * e).sum())
    total = 52.0 * decks
    if count is None:
        tags = np.zeros(len(labels))
        key = float("nan")
        slope = 0.0
    else:
        tags = np.array(count.tags, dtype=np.float64)
        if wager == "blackjack":
            count = LinearCount(
                count.name, count.labels, count.tags, 1,
                _weighted_correlation(tags, e, frequency),
            )  # fmt: skip
        tc = tags - float((frequency * tags).sum())
        beta = float((frequency * tc * centred).sum()) / float((frequency * tc * tc).sum())
        slope = beta * (total - 1.0) / 52.0
        player = -eor["house_edge"]
        key = -player / slope if slope > 0 else float("nan")
    if wager == "insurance":
        kind = kern.KIND_INSURANCE
    elif wager in PAIR_WAGERS:
        kind = kern.KIND_PAIRS
    elif wager == "ez_bust" and dealer:
        kind = kern.KIND_DEALER
    else:
        kind = kern.KIND_LINEAR
    return WagerPlan(
        wager=wager,
        kind=kind,
        house_edge=eor["house_edge"],
        eor52=centred[group],
        tags52=tags[group],
        key=key,
        slope=slope,
        count=count,
        eor=eor,
        pair=eor.get("model"),
    )


def _padded(rows: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    width = max(1, *(len(r) for r in rows))
    out = np.zeros((len(rows), width), dtype=dtype)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def _full10(decks: int) -> np.ndarray:
    counts = np.full(10, 4.0 * decks)
    counts[9] = 16.0 * decks
    return counts


def dealer_arrays(h17: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The dealer's drawing states of every up card (:func:`tablejack.lab.exact.dealer_dag`)
    padded into arrays: children (up x state x card), drawn cards (same) and states per up."""
    from tablejack.lab import exact

    dags = [exact.dealer_dag(u, h17) for u in range(10)]
    width = max(d[0].shape[0] for d in dags)
    child = np.zeros((10, width, 10), dtype=np.int64)
    drawn = np.zeros((10, width, 10))
    states = np.zeros(10, dtype=np.int64)
    for u, (c, d, _) in enumerate(dags):
        child[u, : c.shape[0]] = c
        drawn[u, : d.shape[0]] = d
        states[u] = c.shape[0]
    return child, drawn, states


def ez_dealer_return(counts: np.ndarray, h17: bool = False) -> float:
    """The EZ Bust return counting the dealer alone (``2 * P(bust) - 1`` over up cards 2-6) for
    a shoe of ``counts`` per point class: the part of the wager the simulation takes exactly."""
    child, drawn, states = dealer_arrays(h17)
    value = kern.ez_dealer_return(
        np.asarray(counts, dtype=np.float64).copy(), child, drawn, states,
        np.zeros(child.shape[1]),
    )  # fmt: skip
    return float(value)


def simulate_exposure(
    plans: Sequence[WagerPlan],
    decks: int,
    *,
    shoes: int,
    seed: int,
    max_penetration: float = 0.9,
    spread: float = 8.0,
    h17: bool = False,
    stride: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Walk ``shoes`` seeded shoes (shoe ``i`` of ``seed`` is
    :func:`~tablejack.lab.simulate.shoe_cards`'s) through every depth up to ``max_penetration``
    and return the kernel's sums (EZ Bust's dealer-only part refreshed every ``stride``
    cards): ``acc`` (wagers x depths x :data:`_exposure_kernels.ACC`),
    ``hist`` (true-count histogram per depth) and ``by_tc`` (edge by true count)."""
    from tablejack.lab.simulate import shoe_cards

    if shoes < 1:
        raise ValueError(f"shoes = {shoes} must be at least 1.")
    if not 0.0 < max_penetration < 1.0:
        raise ValueError(f"max_penetration = {max_penetration} must be between 0 and 1.")
    total = 52 * decks
    depths = max(1, min(total - 8, round(max_penetration * total))) + 1
    nw = len(plans)
    kinds = np.array([p.kind for p in plans], dtype=np.int64)
    e0 = np.array([-p.house_edge for p in plans])
    eor = np.array([p.eor52 for p in plans])
    tags = np.array([p.tags52 for p in plans])
    tbar = tags.mean(axis=1)
    keys = np.array([p.key for p in plans])
    pay = np.zeros((nw, 52, 52))
    specials_a, specials_b, deltas, ups, seconds = [], [], [], [], []
    for i, p in enumerate(plans):
        if p.pair is not None:
            pay[i] = p.pair.pay
        specials_a.append(p.pair.special_a if p.pair else np.zeros(0, dtype=np.int64))
        specials_b.append(p.pair.special_b if p.pair else np.zeros(0, dtype=np.int64))
        deltas.append(p.pair.special_delta if p.pair else np.zeros(0))
        ups.append(p.pair.event_up if p.pair else np.zeros(0, dtype=np.int64))
        seconds.append(p.pair.event_second if p.pair else np.zeros(0, dtype=np.int64))
    nsp = np.array([len(a) for a in specials_a], dtype=np.int64)
    nev = np.array([len(u) for u in ups], dtype=np.int64)
    sp_a = _padded(specials_a, np.int64)
    sp_b = _padded(specials_b, np.int64)
    sp_delta = _padded(deltas, np.float64)
    ev_u = _padded(ups, np.int64)
    ev_s = _padded(seconds, np.int64)
    child, drawn, states = dealer_arrays(h17)
    d0 = float(
        kern.ez_dealer_return(_full10(decks), child, drawn, states, np.zeros(child.shape[1]))
    )
    acc = np.zeros((nw, depths, kern.ACC))
    hist = np.zeros((nw, depths, kern.TC_BINS))
    by_tc = np.zeros((nw, kern.TC_BINS, 2))
    full = _full52(decks)
    chunk = 256
    done = 0
    while done < shoes:
        size = min(chunk, shoes - done)
        block = np.array([shoe_cards(seed, done + i, decks) for i in range(size)])
        kern.walk_shoes(
            block, depths, full, kinds, e0, eor, tags, tbar, keys, float(spread), pay, sp_a,
            sp_b, sp_delta, nsp, ev_u, ev_s, nev, CLASS_OF, child, drawn, states, d0, stride, acc,
            hist, by_tc,
        )  # fmt: skip
        done += size
        if progress:
            progress(done, shoes)
    return {"acc": acc, "hist": hist, "by_tc": by_tc, "cards": np.array(total)}


def validate_linear(
    rules: AnalysisRules,
    plans: Sequence[WagerPlan],
    game_rules: Any = None,
    *,
    shoes: int,
    seed: int,
    penetrations: Sequence[float] = (0.25, 0.5, 0.75),
    high_count_penetration: float = 0.75,
    progress: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The linear estimate against the exact analysis of sample shoes, for every wager
    estimated linearly: shoes ``0 .. shoes - 1`` of ``seed`` at each of ``penetrations``
    (typical shoes), and for each such wager the ``shoes`` shoes among the first 256 whose true
    count of that wager's count is highest at ``high_count_penetration`` (the compositions a
    counter bets on, where a linear estimate is stretched the most)."""
    from tablejack.lab.simulate import shoe_cards

    assert rules.decks is not None
    linear = [p for p in plans if p.kind in (kern.KIND_LINEAR, kern.KIND_DEALER)]
    rows: list[dict[str, Any]] = []
    if not linear:
        return {"rows": rows, "by_wager": {}}
    total = 52 * rules.decks
    full = rules.shoe_counts()
    d0 = ez_dealer_return(full, rules.h17)
    samples: list[tuple[str, int, float]] = [
        ("first shoes", index, pen) for index in range(shoes) for pen in penetrations
    ]
    depth = round(high_count_penetration * total)
    pool = np.array([shoe_cards(seed, i, rules.decks) for i in range(max(256, shoes))])
    for p in linear:
        tags = p.tags52
        tc = (tags[pool[:, :depth]].sum(axis=1) - depth * tags.mean()) / ((total - depth) / 52)
        best = np.argsort(-tc, kind="stable")[:shoes]
        samples += [(f"highest {p.wager} count", int(i), high_count_penetration) for i in best]
    for sample, index, pen in samples:
        cards = pool[index] if index < len(pool) else shoe_cards(seed, index, rules.decks)
        dealt = round(pen * total)
        gone = cards[:dealt]
        counts = full - np.bincount(CLASS_OF[gone], minlength=10)
        exact = composition_house_edges(rules, counts, [p.wager for p in linear], game_rules)
        n = total - dealt
        row: dict[str, Any] = {
            "sample": sample,
            "shoe": index,
            "penetration": pen,
            "cards_left": n,
        }
        for p in linear:
            estimate = -p.house_edge + (total - 1) / n * float(p.eor52[gone].sum())
            if p.kind == kern.KIND_DEALER:
                estimate = -p.house_edge + ez_dealer_return(counts, rules.h17) - d0
            row[p.wager] = {"exact": -exact[p.wager], "estimate": estimate}
        rows.append(row)
        if progress:
            progress()
    by_wager: dict[str, Any] = {}
    for p in linear:
        figures: dict[str, Any] = {}
        for label, chosen in (
            ("typical", [r for r in rows if r["sample"] == "first shoes"]),
            ("high_count", [r for r in rows if r["sample"] == f"highest {p.wager} count"]),
        ):
            ex = np.array([r[p.wager]["exact"] for r in chosen])
            li = np.array([r[p.wager]["estimate"] for r in chosen])
            figures[label] = {
                "compositions": len(chosen),
                "max_abs_error": float(np.abs(ex - li).max()),
                "mean_error": float((li - ex).mean()),
                "mean_exact_edge": float(ex.mean()),
                "spread_of_exact": float(ex.std()),
            }
        by_wager[p.wager] = figures
    return {"rows": rows, "by_wager": by_wager}


# -- the result --------------------------------------------------------------------------------


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def _summarise(
    plan: WagerPlan,
    acc: np.ndarray,
    hist: np.ndarray,
    by_tc: np.ndarray,
    total: int,
    shoes: int,
    steps: Sequence[float],
    spread: float,
) -> dict[str, Any]:
    """One wager's figures from the kernel's sums (``acc``: depths x ACC)."""
    k = kern
    depths = acc.shape[0]
    cum = np.cumsum(acc, axis=0)
    by_penetration = []
    counter = []
    for pen in steps:
        depth = min(depths - 1, round(pen * total))
        a = acc[depth]
        weight = a[k.A_WEIGHT]
        mean = a[k.A_EDGE] / weight
        var = max(a[k.A_EDGE2] / weight - mean * mean, 0.0)
        tc_mean = a[k.A_TC] / weight
        tc_var = max(a[k.A_TC2] / weight - tc_mean * tc_mean, 0.0)
        by_penetration.append(
            {
                "penetration": pen,
                "cards_dealt": depth,
                "mean_edge": mean,
                "sd_edge": math.sqrt(var),
                "share_favourable": a[k.A_FAVOURABLE] / weight,
                "sd_true_count": math.sqrt(tc_var),
                "share_at_key_count": a[k.A_BET] / weight,
                "edge_at_key_count": _ratio(a[k.A_BET_EDGE], a[k.A_BET]),
                "true_count_histogram": {
                    f"{k.TC_LOW + b * k.TC_WIDTH:+g}": float(hist[depth, b] / weight)
                    for b in range(k.TC_BINS)
                    if hist[depth, b] > 0
                },
            }
        )
        cut = max(1, round(pen * total))
        cut = min(cut, depths)
        c = cum[cut - 1]
        rounds = float(shoes * cut)
        counter.append(
            {
                "penetration": pen,
                "flat_edge": c[k.A_EDGE] / c[k.A_WEIGHT],
                "spread_edge": c[k.A_UNITS_EDGE] / c[k.A_UNITS],
                "spread_gain_per_100_rounds": 100 * c[k.A_UNITS_EDGE] / rounds,
                "spread_average_units": c[k.A_UNITS] / c[k.A_WEIGHT],
                "wong_edge": _ratio(c[k.A_BET_EDGE], c[k.A_BET]),
                "wong_share_of_rounds": c[k.A_BET] / c[k.A_WEIGHT],
                "wong_gain_per_100_rounds": 100 * c[k.A_BET_EDGE] / rounds,
                "ideal_share_of_rounds": c[k.A_FAVOURABLE] / c[k.A_WEIGHT],
                "ideal_gain_per_100_rounds": 100 * c[k.A_FAVOURABLE_EDGE] / rounds,
            }
        )
    turning_counter = None
    turning_ideal = None
    for depth in range(depths):
        a = acc[depth]
        weight = a[k.A_WEIGHT]
        if weight <= 0:
            continue
        if (
            turning_counter is None
            and a[k.A_BET] / weight >= FAVOURABLE_SHARE
            and a[k.A_BET_EDGE] > 0
        ):
            turning_counter = depth / total
        if turning_ideal is None and a[k.A_FAVOURABLE] / weight >= FAVOURABLE_SHARE:
            turning_ideal = depth / total
    edge_by_tc = []
    weight_all = float(by_tc[:, 0].sum())
    for b in range(k.TC_BINS):
        w, s = by_tc[b]
        if w / weight_all >= 1e-4:
            low = k.TC_LOW + b * k.TC_WIDTH
            edge_by_tc.append(
                {
                    "true_count": [low, low + k.TC_WIDTH],
                    "share": float(w / weight_all),
                    "mean_edge": float(s / w),
                }
            )
    eor = plan.eor
    labels = list(eor["labels"])
    return {
        "wager": plan.wager,
        "house_edge": plan.house_edge,
        "player_edge_off_the_top": -plan.house_edge,
        "effects_of_removal": {
            "per_card_removed": dict(zip(labels, (float(x) for x in eor["eor"]), strict=True)),
            "weighted_sum": float((eor["frequency"] * eor["eor"]).sum()),
            "method": eor["method"],
        },
        "count": None if plan.count is None else plan.count.to_json(),
        "hi_lo_correlation": _weighted_correlation(
            np.array(_hi_lo(labels).tags, dtype=float), np.asarray(eor["eor"]), eor["frequency"]
        ),
        "key_count": None if math.isnan(plan.key) else plan.key,
        "edge_per_true_count": plan.slope,
        "edge_method": {
            k.KIND_LINEAR: "linear estimate from the effects of removal (validated below)",
            k.KIND_DEALER: "the exact edge off the top plus the change of the dealer's exact bust "
            "probability against 2-6 for the shoe left (the player's cards not removed), refreshed "
            "every 8 cards and moved by the EORs in between (validated below)",
            k.KIND_INSURANCE: "exact for each composition (3 tens / (cards - 1) - 1, "
            "weighted by the chance of an up ace)",
            k.KIND_PAIRS: "exact for each composition of the 52 card identities",
        }[plan.kind],
        "by_penetration": by_penetration,
        "counter": counter,
        "turning_penetration": turning_counter,
        "turning_penetration_ideal": turning_ideal,
        "edge_by_true_count": edge_by_tc,
        "betting": {
            "spread": f"1 to {spread:g} units: 1 below the key count, +1 per half true count above it",
            "wonging": "1 unit only at a true count at or above the key count, else no bet",
            "ideal": "1 unit only when the edge of the shoe left favours the player",
        },
    }


def exposure(
    game: str,
    game_rules: Any,
    rules: AnalysisRules,
    *,
    wagers: Sequence[str] | None = None,
    shoes: int = 2000,
    seed: int = 1,
    max_penetration: float = 0.9,
    spread: float = 8.0,
    validate: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The advantage-play exposure of ``wagers`` (default: every wager of ``game``) under
    ``rules``: EORs, counts, the simulation over ``shoes`` seeded shoes, the counter's edge by
    penetration and the turning penetrations; ``validate`` sample shoes check the linear
    estimate against the exact analysis."""
    from tablejack.lab.games import lab_game

    spec = lab_game(game)
    decks = rules.decks
    if decks is None:
        raise ValueError("Exposure is measured on a finite shoe; give a number of decks.")
    names = list(spec.wagers if wagers is None else [spec.wager(w) for w in wagers])
    if "ez_bust" in names and not rules.ez_bust:
        rules = rules.replace(ez_bust=True)
    analyses = 11 if any(w not in PAIR_WAGERS for w in names) else 0
    linear = [w for w in names if w in LINEAR_WAGERS]
    checks = validate * (3 + len(linear)) if linear else 0
    chunks = math.ceil(shoes / 256)
    total_steps = analyses + chunks + checks
    done = [0]

    def tick(amount: int = 1) -> None:
        done[0] += amount
        if progress:
            progress(done[0], total_steps)

    eors = effects_of_removal(rules, names, game_rules, progress=tick)
    plans = [plan_wager(w, eors[w], decks, dealer=not rules.ez_bust_push_all) for w in names]
    base = done[0]

    def shoes_done(count: int, _: int) -> None:
        done[0] = base + math.ceil(count / 256)
        if progress:
            progress(done[0], total_steps)

    sums = simulate_exposure(
        plans,
        decks,
        shoes=shoes,
        seed=seed,
        max_penetration=max_penetration,
        spread=spread,
        h17=rules.h17,
        progress=shoes_done,
    )
    total = 52 * decks
    steps = [round(0.05 * i, 2) for i in range(int(max_penetration / 0.05 + 1e-9) + 1)]
    result_wagers = {}
    for i, plan in enumerate(plans):
        result_wagers[plan.wager] = _summarise(
            plan, sums["acc"][i], sums["hist"][i], sums["by_tc"][i], total, shoes, steps, spread
        )
    validation = None
    if validate and linear:
        validation = validate_linear(
            rules, plans, game_rules, shoes=validate, seed=seed, progress=tick
        )
    return {
        "game": game,
        "decks": rules.decks,
        "rules": rules.to_json(),
        "shoes": shoes,
        "seed": seed,
        "max_penetration": max_penetration,
        "spread": spread,
        "visibility": VISIBILITY[game],
        "wagers": result_wagers,
        "validation": validation,
        "definitions": DEFINITIONS,
    }


DEFINITIONS = {
    "edge": "the player's expected return per unit wagered (positive favours the player)",
    "effect_of_removal": "the change in the wager's exact player edge when one card of the "
    "group is removed from the full shoe",
    "true_count": "the running count (tags of the cards gone, less their expected value at that "
    "depth) per deck left",
    "key_count": "the true count at which the wager's estimated edge reaches zero "
    "(off-the-top edge + edge per true count x true count = 0)",
    "counter": "with the cut card at the penetration: every depth before it starts a round "
    "equally often; flat = one unit every round; spread = 1 to N units by the true count; "
    "wong = one unit only at the key count or above; ideal = one unit only when the shoe left "
    "favours the player",
    "turning_penetration": "the first penetration at which at least 1% of the rounds reach the "
    "key count and those rounds have a positive average player edge (a counter betting only "
    "then expects a profit); None: not reached by the deepest penetration simulated",
    "turning_penetration_ideal": "the first penetration at which at least 1% of the rounds "
    "favour the player (a player who knows the composition of the shoe left)",
}


def _pct(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value * 100:+.{digits}f}%"


def render_text(result: Mapping[str, Any]) -> str:
    """The exposure as text: per wager the count, the EORs and the counter's edge by
    penetration."""
    lines = [
        f"Advantage-play exposure: {result['game']}, {result['decks']} decks, "
        f"{result['shoes']:,} shoes (seed {result['seed']})",
        result["visibility"],
        "",
    ]
    for name, w in result["wagers"].items():
        count = w["count"]
        lines.append(
            f"{name}: house edge {w['house_edge'] * 100:.4f}% off the top; edge: {w['edge_method']}"
        )
        eor = w["effects_of_removal"]["per_card_removed"]
        lines.append(
            "  EOR (player, % per card removed): "
            + " ".join(f"{k}:{v * 100:+.4f}" for k, v in eor.items())
        )
        if count is None:
            lines.append("  no linear count: every rank's effect of removal is the same")
        else:
            tags = " ".join(f"{k}:{v:+d}" for k, v in count["tags"].items())
            key = w["key_count"]
            lines.append(
                f"  count: {count['name']} [{tags}], betting correlation "
                f"{count['betting_correlation']:.3f}; key true count "
                f"{'—' if key is None else f'{key:+.2f}'}; edge per true count "
                f"{w['edge_per_true_count'] * 100:+.4f}%"
            )
        turn = w["turning_penetration"]
        ideal = w["turning_penetration_ideal"]
        lines.append(
            "  turns player-favourable at penetration "
            + ("not reached" if turn is None else f"{turn:.0%}")
            + " (counter), "
            + ("not reached" if ideal is None else f"{ideal:.0%}")
            + " (knowing the composition)"
        )
        lines.append(
            "  cut at   flat      spread 1-{:g}  gain/100   wong edge  bets      ideal share".format(
                result["spread"]
            )
        )
        for row in w["counter"]:
            if round(row["penetration"] * 100) % 10:
                continue
            lines.append(
                f"  {row['penetration']:>5.0%}  {_pct(row['flat_edge'])}  "
                f"{_pct(row['spread_edge'])}     {row['spread_gain_per_100_rounds']:+.3f}   "
                f"{_pct(row['wong_edge'])}  {row['wong_share_of_rounds']:>6.1%}    "
                f"{row['ideal_share_of_rounds']:>6.1%}"
            )
        lines.append("")
    validation = result.get("validation")
    if validation:
        for name, v in validation["by_wager"].items():
            for label, f in v.items():
                lines.append(
                    f"estimate of {name} against the exact analysis, {label} shoes "
                    f"({f['compositions']}): max error {f['max_abs_error'] * 100:.4f}%, mean "
                    f"error {f['mean_error'] * 100:+.4f}%, exact edge {f['mean_exact_edge'] * 100:+.4f}% "
                    f"± {f['spread_of_exact'] * 100:.4f}%"
                )
    return "\n".join(lines).rstrip() + "\n"


# -- plot and par-sheet section ----------------------------------------------------------------

PLOT_FILE = "exposure.png"


def plot_exposure(result: Mapping[str, Any], path: Any) -> str:
    """Write the edge-by-penetration plot (one panel per wager, with the zero line) to ``path``
    (a PNG) and return its file name."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    target = Path(path)
    wagers = list(result["wagers"].values())
    cols = 2 if len(wagers) > 1 else 1
    rows = math.ceil(len(wagers) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 3.2 * rows), squeeze=False)
    for ax, w in zip(axes.flat, wagers, strict=False):
        pens = [row["penetration"] * 100 for row in w["counter"]]

        def series(key: str, rows_: list[dict[str, Any]] = w["counter"]) -> list[float]:
            return [math.nan if r[key] is None else r[key] * 100 for r in rows_]

        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.plot(pens, series("flat_edge"), color="#888888", label="flat bettor")
        ax.plot(
            pens,
            series("spread_edge"),
            color="#4a6fa5",
            label=f"counter, spread 1-{result['spread']:g} (per unit wagered)",
        )
        ax.plot(pens, series("wong_edge"), color="#c0392b", label="wonger (per wager placed)")
        turn = w["turning_penetration"]
        if turn is not None:
            ax.axvline(turn * 100, color="#c0392b", linestyle=":", linewidth=1)
        ax.set_title(f"{w['wager']} (house edge {w['house_edge'] * 100:.3f}%)", fontsize=10)
        ax.set_xlabel("cut-card penetration (%)")
        ax.set_ylabel("player edge (%)")
        ax.legend(fontsize=7, loc="best")
    for ax in list(axes.flat)[len(wagers) :]:
        ax.axis("off")
    fig.suptitle(
        f"Advantage-play exposure: {result['game']}, {result['decks']} decks, "
        f"{result['shoes']:,} shoes",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target.name


def html_section(result: Mapping[str, Any], plot: str | None = PLOT_FILE) -> str:
    """The par sheet's "Advantage-play exposure" section (HTML)."""
    import html

    e = html.escape
    parts = [
        "<h2>Advantage-play exposure</h2>",
        f"<p>{e(result['visibility'])}</p>",
        f"<p>{result['shoes']:,} seeded shoes (seed {result['seed']}), every depth to "
        f"{result['max_penetration']:.0%}. Edges are the player's (positive favours the player). "
        f"Betting: {e(next(iter(result['wagers'].values()))['betting']['spread'])}; wonging: "
        "one unit only at the key count or above. The turning penetration is "
        f"{e(result['definitions']['turning_penetration'])}.</p>",
    ]
    if plot:
        parts.append(f"<img src='{e(plot)}' alt='edge by penetration'>")
    for name, w in result["wagers"].items():
        count = w["count"]
        turn = w["turning_penetration"]
        ideal = w["turning_penetration_ideal"]
        tags = (
            "none (every rank's effect of removal is the same)"
            if count is None
            else f"{e(count['name'])}: "
            + " ".join(f"{e(k)} {v:+d}" for k, v in count["tags"].items())
            + f" (betting correlation {count['betting_correlation']:.3f})"
        )
        key = w["key_count"]
        parts.append(
            f"<h3>{e(name)}</h3><p>House edge off the top {w['house_edge'] * 100:.4f}%; edge "
            f"method: {e(w['edge_method'])}. Count: {tags}; key true count "
            f"{'—' if key is None else f'{key:+.2f}'}. Turns player-favourable at "
            f"<b>{'not reached' if turn is None else f'{turn:.0%}'}</b> (counter), "
            f"{'not reached' if ideal is None else f'{ideal:.0%}'} (knowing the composition)."
            "</p><table><tr><th>cut at</th><th>flat</th><th>spread edge</th>"
            "<th>spread gain / 100 rounds</th><th>wong edge</th><th>rounds bet</th>"
            "<th>favourable rounds</th></tr>"
        )
        for row in w["counter"]:
            if round(row["penetration"] * 100) % 10:
                continue
            parts.append(
                f"<tr><td>{row['penetration']:.0%}</td><td>{_pct(row['flat_edge'])}</td>"
                f"<td>{_pct(row['spread_edge'])}</td>"
                f"<td>{row['spread_gain_per_100_rounds']:+.3f}</td>"
                f"<td>{_pct(row['wong_edge'])}</td><td>{row['wong_share_of_rounds']:.2%}</td>"
                f"<td>{row['ideal_share_of_rounds']:.2%}</td></tr>"
            )
        parts.append("</table>")
        eor = w["effects_of_removal"]["per_card_removed"]
        parts.append(
            "<p>Effects of removal (player, % per card removed): "
            + ", ".join(f"{e(k)} {v * 100:+.4f}" for k, v in eor.items())
            + "</p>"
        )
    return "\n".join(parts)
