# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernels of the exact (combinatorial) analysis; :mod:`tablejack.lab.exact` is the API.

Cards are point classes ``0`` (ace) to ``9`` (ten-value). A *context* (:data:`Context`) is a base
shoe (the shoe without the dealer's up card, and for a split without the other split card), the
dealer's drawing states for the up card, and every player hand that can be formed from the base
shoe: each multiset of two or more cards with a hard total of 21 or less (for a split, every
such multiset holding the split card). Each hand is a row; the dealer's probabilities of a row
are computed for the base shoe minus the hand (exact for the cards removed) once, when first
needed. Rows are processed by descending hard total, so a hand's successors are always done
first (no recursion: the kernels are cacheable).

Values are *unnormalised*: ``E[payoff * 1{no dealer Blackjack}]``. The dealer Blackjack is
settled once per initial hand by the caller (the player loses the original wager, or pushes
with a Blackjack), and the player's next-card probabilities are those of the unseen shoe: the
hole card is exchangeable with every later card, so no conditioning on it is needed.

Each concept is written once:

* :func:`_next` — the probability of the next card and the hand it makes (or a bust);
* :func:`_dealer`, :func:`_dist`, :func:`_pnb` — the dealer against a hand's cards;
* :func:`_stand_leaf`, :func:`_bust_leaf`, :func:`_surrender_leaf` — what a finished hand is
  worth, in one of three *measures*: :data:`VALUE` (the expected payoff), :data:`BUST_PROB` (the
  probability that the hand busts) and :data:`EZ` (the EZ Bust wager's win, loss and push);
* :func:`_draw` — one card, then the table (or stand, for a double), in any measure;
* :func:`_walk` — every hand of a context (or those :func:`_reached` finds) played by the
  hit/stand table, in any measure;
* :func:`_first_outcome` — a two-card hand's first decision (double, surrender, the table);
* :func:`split_value` — a split, with resplits, DAS and the dealer Blackjack readings;
* :func:`analyse_up` — the strategy of one up card decided class by class, then every two-card
  hand's values, sharing one context (and its dealer probabilities) and the split values;
* :func:`final_hands` — the Buzzer Beater's joint distribution of the final hands, carried
  forward over the same contexts.

Every kernel the exact analysis uses lives in this one module: numba's cache is keyed by the
source of a function's own module, so a kernel that called into another module could run a
stale copy of it after that module changed.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

BJ = 5
BUST = 6
KEY_BITS = 5

# rules vector indices (float64 array)
R_H17 = 0
R_DAS = 1
R_MAX_HANDS = 2
R_RSA = 3
R_HIT_SPLIT_ACES = 4
R_LS = 5
R_PEEK = 6
R_BJ_PAYS = 7
R_DOUBLE_FULL = 8
R_SPLIT_FULL = 9
R_SPLIT_ALLOWED = 10

# two-card value columns
V_PROB = 0
V_PNB = 1
V_STAND = 2
V_HIT = 3
V_DOUBLE = 4
V_SPLIT = 5
V_SURRENDER = 6
V_PLAY = 7
V_RETURN = 8

# split results (``splits[c]``): value per original unit, P(one split hand busts), hands
S_VALUE = 0
S_BUST = 1
S_HANDS = 2

# the measures a played hand is valued in (and their widths)
VALUE = 0
BUST_PROB = 1
EZ = 2
WIDTH = (1, 1, 3)

Context = namedtuple(
    "Context",
    (
        "child", "drawn", "size", "scratch",  # the dealer's drawing states and a work array
        "base", "n0", "finite", "up",  # the base shoe (cards or weights), its size, the up card
        "counts", "hard", "ace", "ncards", "keys", "skeys", "perm",  # the hands (rows)
        "succ",  # each row's row after one more card of each class (-1: none)
        "done", "dists",  # each row's dealer probabilities, once computed
        "link", "pdone", "pdists",  # the same hand of the parent context and its storage
    ),
)  # fmt: skip
"""A context: the dealer, the base shoe and every hand it can hold (see the module text)."""

Tables = namedtuple(
    "Tables", ("rules", "dbl_mask", "hit_hard", "hit_soft", "first_hard", "first_soft", "split")
)
"""The rules vector, the double mask and the strategy tables (by ``[up, total]``)."""


# -- the dealer ------------------------------------------------------------------------------


@njit(cache=True)
def dealer_eval(child, drawn, size, counts, n, finite, scratch):
    """Final-outcome probabilities (17, 18, 19, 20, 21, Blackjack, bust) of the dealer whose
    drawing states are ``child``/``drawn``/``size`` (states sorted by size), drawing from
    ``counts`` (``n`` cards; with ``finite`` 0 the counts are weights, drawn with replacement)."""
    states = child.shape[0]
    for s in range(states - 1, -1, -1):
        for k in range(7):
            scratch[s, k] = 0.0
        denom = n - size[s] * finite
        for r in range(10):
            cnt = counts[r] - drawn[s, r] * finite
            if cnt <= 0.0:
                continue
            p = cnt / denom
            ch = child[s, r]
            if ch < 0:
                scratch[s, -ch - 1] += p
            else:
                for k in range(7):
                    scratch[s, k] += p * scratch[ch, k]
    out = np.empty(7)
    for k in range(7):
        out[k] = scratch[0, k]
    return out


@njit(cache=True)
def _dealer(ctx, i, extra):
    """The dealer's probabilities drawing from the base shoe without hand ``i`` (and card
    ``extra`` when it is not -1)."""
    counts = np.empty(10)
    for r in range(10):
        counts[r] = ctx.base[r] - (ctx.counts[i, r] + (1 if r == extra else 0)) * ctx.finite
    n = ctx.n0 - (ctx.ncards[i] + (1 if extra >= 0 else 0)) * ctx.finite
    return dealer_eval(ctx.child, ctx.drawn, ctx.size, counts, n, ctx.finite, ctx.scratch)


@njit(cache=True)
def _dist(ctx, i):
    """The dealer's probabilities against hand ``i``, computed once. A hand of a split context
    whose cards with the other pair card form a hand of the parent context shares the parent's
    row: the dealer then draws from the same cards (the same numbers, bit for bit)."""
    j = ctx.link[i]
    done = ctx.pdone if j >= 0 else ctx.done
    dists = ctx.pdists if j >= 0 else ctx.dists
    row = j if j >= 0 else i
    if not done[row]:
        d = _dealer(ctx, i, -1)
        for k in range(7):
            dists[row, k] = d[k]
        done[row] = True
    return dists[row]


@njit(cache=True)
def _no_blackjack(base, n0, finite, up, aces, tens, n):
    """Probability that the hole card does not give the dealer a Blackjack, with ``aces`` aces,
    ``tens`` ten-values and ``n`` cards in all removed from ``base``."""
    if up == 0:
        return 1.0 - (base[9] - tens * finite) / (n0 - n * finite)
    if up == 9:
        return 1.0 - (base[0] - aces * finite) / (n0 - n * finite)
    return 1.0


@njit(cache=True)
def _pnb(ctx, i, extra):
    """:func:`_no_blackjack` against hand ``i`` (and card ``extra`` when it is not -1)."""
    aces = ctx.counts[i, 0] + (1 if extra == 0 else 0)
    tens = ctx.counts[i, 9] + (1 if extra == 9 else 0)
    n = ctx.ncards[i] + (1 if extra >= 0 else 0)
    return _no_blackjack(ctx.base, ctx.n0, ctx.finite, ctx.up, aces, tens, n)


@njit(cache=True)
def _stand_from_dist(dist, total):
    value = dist[BUST]
    for t in range(5):
        dealer = 17 + t
        if total > dealer:
            value += dist[t]
        elif total < dealer:
            value -= dist[t]
    return value


@njit(cache=True)
def peek_mode(rules, split):
    """The dealer-Blackjack treatment as one integer (the kernels' ``peek`` argument): 1 the
    dealer peeks; without a hole card, 0 when a dealer Blackjack takes only the original wager
    from a live doubled (or, with ``split``, split) hand (A-10, A-19), -1 when it takes every
    amount at risk (A-29)."""
    if rules[R_PEEK] != 0.0:
        return 1
    if rules[R_SPLIT_FULL if split else R_DOUBLE_FULL] != 0.0:
        return -1
    return 0


# -- hands -----------------------------------------------------------------------------------


@njit(cache=True)
def _total(hard, ace):
    if ace and hard <= 11:
        return hard + 10
    return hard


@njit(cache=True)
def _is_soft(hard, ace):
    return ace and hard <= 11


@njit(cache=True)
def enumerate_hands(base, finite, first):
    """Every multiset of two or more cards with a hard total of 21 or less that ``base`` can
    hold (holding card ``first`` when ``first >= 0``): counts, hard total, has-ace, number of
    cards and key, plus the keys sorted and their rows (for lookups)."""
    cap = 4096
    counts = np.zeros((cap, 10), dtype=np.int64)
    k = 0
    cur = np.zeros(10, dtype=np.int64)
    stack_r = np.zeros(40, dtype=np.int64)
    start_cards = 0
    cur_hard = 0
    if first >= 0:
        cur[first] = 1
        cur_hard = first + 1
        start_cards = 1
    depth = 0
    while depth >= 0:
        r = stack_r[depth]
        if r >= 10:
            depth -= 1
            if depth >= 0:
                prev = stack_r[depth]
                cur[prev] -= 1
                cur_hard -= prev + 1
                stack_r[depth] = prev + 1
            continue
        if cur_hard + r + 1 > 21:
            stack_r[depth] = 10
            continue
        if finite and base[r] - cur[r] < 1.0:
            stack_r[depth] = r + 1
            continue
        cur[r] += 1
        cur_hard += r + 1
        if start_cards + depth + 1 >= 2:
            if k >= cap:
                grown = np.zeros((cap * 2, 10), dtype=np.int64)
                grown[:cap] = counts
                counts = grown
                cap *= 2
            counts[k] = cur
            k += 1
        depth += 1
        stack_r[depth] = r
    counts = counts[:k]
    hard = np.zeros(k, dtype=np.int64)
    ace = np.zeros(k, dtype=np.bool_)
    ncards = np.zeros(k, dtype=np.int64)
    keys = np.zeros(k, dtype=np.int64)
    for i in range(k):
        for r in range(10):
            c = counts[i, r]
            hard[i] += c * (r + 1)
            ncards[i] += c
            keys[i] += c << (KEY_BITS * r)
        ace[i] = counts[i, 0] > 0
    perm = np.argsort(keys)
    skeys = keys[perm]
    return counts, hard, ace, ncards, keys, skeys, perm


@njit(cache=True)
def _find(skeys, perm, key):
    j = np.searchsorted(skeys, key)
    if j < skeys.shape[0] and skeys[j] == key:
        return perm[j]
    return -1


@njit(cache=True)
def _shifted_rows(skeys, perm, other_skeys, other_perm, delta, out, column):
    """For each row of the sorted keys ``skeys`` (rows ``perm``): the row of ``other_skeys``
    whose key is its key plus ``delta`` (the hand with one more card), or -1, into
    ``out[row, column]``. Adding ``delta`` keeps the keys' order, so one merge-like pass finds
    them all (what :func:`_find` finds key by key)."""
    j = 0
    m = other_skeys.shape[0]
    for a in range(skeys.shape[0]):
        target = skeys[a] + delta
        while j < m and other_skeys[j] < target:
            j += 1
        if j < m and other_skeys[j] == target:
            out[perm[a], column] = other_perm[j]
        else:
            out[perm[a], column] = -1


@njit(cache=True)
def successors(skeys, perm):
    """``succ[i, r]``: the row of hand ``i`` with one more card of class ``r`` (-1 when the
    hand is not a row: a bust, or more cards than the shoe holds)."""
    succ = np.empty((skeys.shape[0], 10), dtype=np.int64)
    for r in range(10):
        _shifted_rows(skeys, perm, skeys, perm, 1 << (KEY_BITS * r), succ, r)
    return succ


@njit(cache=True)
def make_context(child, drawn, size, scratch, base, n0, finite, up, first):
    """The context of a base shoe (every hand holding card ``first``, when not -1)."""
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base, finite, first)
    k = counts.shape[0]
    done = np.zeros(k, dtype=np.bool_)
    dists = np.zeros((k, 7))
    return Context(
        child, drawn, size, scratch, base, n0, finite, up, counts, hard, ace, ncards, keys,
        skeys, perm, successors(skeys, perm), done, dists, np.arange(k), done, dists,
    )  # fmt: skip


@njit(cache=True)
def split_context(ctx, c):
    """The context of one hand of a split pair of class ``c``: the base shoe without the other
    pair card, every hand holding a ``c``."""
    base = ctx.base.copy()
    if ctx.finite:
        base[c] -= 1.0
    n0 = ctx.n0 - ctx.finite
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base, ctx.finite, c)
    k = counts.shape[0]
    parent = np.empty((k, 1), dtype=np.int64)
    _shifted_rows(skeys, perm, ctx.skeys, ctx.perm, 1 << (KEY_BITS * c), parent, 0)
    link = np.full(k, -1)
    for i in range(k):
        j = parent[i, 0]
        if j >= 0:
            link[i] = ctx.link[j]
    return Context(
        ctx.child, ctx.drawn, ctx.size, ctx.scratch, base, n0, ctx.finite, ctx.up, counts, hard,
        ace, ncards, keys, skeys, perm, successors(skeys, perm), np.zeros(k, dtype=np.bool_),
        np.zeros((k, 7)), link, ctx.pdone, ctx.pdists,
    )  # fmt: skip


@njit(cache=True)
def _next(ctx, i, r):
    """``(p, j)``: the probability that the next card to hand ``i`` is ``r`` (0.0 when the shoe
    has none) and the hand it makes (-1 for a bust)."""
    cnt = ctx.base[r] - ctx.counts[i, r] * ctx.finite
    if cnt <= 0.0:
        return 0.0, -1
    p = cnt / (ctx.n0 - ctx.ncards[i] * ctx.finite)
    if ctx.hard[i] + r + 1 > 21:
        return p, -1
    return p, ctx.succ[i, r]


@njit(cache=True)
def _two_cards(ctx, c1, c2):
    """``(i, p)``: the row of the two-card hand ``c1, c2`` (-1 when the shoe cannot deal it) and
    the probability that it is dealt (in either order) from the base shoe."""
    i = _find(ctx.skeys, ctx.perm, (1 << (KEY_BITS * c1)) + (1 << (KEY_BITS * c2)))
    if i < 0:
        return i, 0.0
    base = ctx.base
    n0 = ctx.n0
    if ctx.finite:
        prob = base[c1] / n0 * (base[c2] - (1.0 if c1 == c2 else 0.0)) / (n0 - 1.0)
    else:
        prob = base[c1] / n0 * base[c2] / n0
    if c1 != c2:
        prob *= 2.0
    return i, prob


@njit(cache=True)
def hand_weights(base, n0, finite, counts, ncards):
    """Probability that a hand's first cards are exactly each multiset (in any order)."""
    k = counts.shape[0]
    out = np.empty(k)
    for i in range(k):
        w = 1.0
        for j in range(2, ncards[i] + 1):
            w *= j
        drawn = 0
        for r in range(10):
            c = counts[i, r]
            for j in range(2, c + 1):
                w /= j
            for j in range(c):
                if finite:
                    w *= (base[r] - j) / (n0 - drawn)
                else:
                    w *= base[r] / n0
                drawn += 1
        out[i] = w
    return out


# -- the strategy tables ---------------------------------------------------------------------


@njit(cache=True)
def _hits(tab, up, total, soft):
    """The hit/stand table says hit (never on 21)."""
    return total < 21 and (tab.hit_soft[up, total] if soft else tab.hit_hard[up, total]) == 1


@njit(cache=True)
def _first_code(tab, up, total, soft):
    """The first-decision code of a two-card total: 0 the table, 1 double, 2 surrender."""
    return tab.first_soft[up, total] if soft else tab.first_hard[up, total]


# -- what a hand is worth, in each measure ---------------------------------------------------


@njit(cache=True)
def _stand_leaf(ctx, measure, j, bet, peek, out):
    """Hand ``j`` stands with ``bet`` units. Without a hole card and with the full-amount
    reading (``peek`` -1) a dealer Blackjack takes a double's extra unit too (A-29)."""
    if measure == BUST_PROB:
        out[0] = 0.0
        return
    d = _dist(ctx, j)
    if measure == EZ:
        out[0] = d[BUST]
        out[1] = 1.0 - d[BUST]
        out[2] = 0.0
        return
    v = bet * _stand_from_dist(d, _total(ctx.hard[j], ctx.ace[j]))
    if peek < 0 and bet > 1.0:
        v -= 1.0 - _pnb(ctx, j, -1)
    out[0] = v


@njit(cache=True)
def _bust_leaf(ctx, measure, i, r, bet, peek, push_all, out):
    """Hand ``i`` busts by card ``r`` with ``bet`` units. Without the peek a busted double stays
    lost against a dealer Blackjack (A-10's reading): its extra units are charged here. EZ Bust
    stays live after a bust (A-23) unless the push-all option applies (633b.16(g))."""
    if measure == BUST_PROB:
        out[0] = 1.0
        return
    if measure == EZ:
        if push_all:
            out[0] = 0.0
            out[1] = 0.0
            out[2] = 1.0
        else:
            d = _dealer(ctx, i, r)
            out[0] = d[BUST]
            out[1] = 1.0 - d[BUST]
            out[2] = 0.0
        return
    pnb = _pnb(ctx, i, r)
    v = -bet * pnb
    if peek <= 0 and bet > 1.0:
        v -= (bet - 1.0) * (1.0 - pnb)
    out[0] = v


@njit(cache=True)
def _surrender_leaf(ctx, measure, i, out):
    """Hand ``i`` surrenders (half the wager back unless the dealer has a Blackjack); EZ Bust
    stays live (A-23)."""
    if measure == VALUE:
        out[0] = -0.5 * _pnb(ctx, i, -1)
    elif measure == EZ:
        _stand_leaf(ctx, EZ, i, 1.0, 1, out)
    else:
        out[0] = 0.0


@njit(cache=True)
def _draw(ctx, measure, i, final, bet, peek, push_all, values, out):
    """One card to hand ``i`` (``bet`` units), then ``values`` of the hand it makes, or, when
    ``final`` (a double), stand: ``out`` = the sum over the cards of P(card) x the result."""
    width = out.shape[0]
    leaf = np.empty(width)
    for q in range(width):
        out[q] = 0.0
    for r in range(10):
        p, j = _next(ctx, i, r)
        if p == 0.0:
            continue
        if j < 0:
            _bust_leaf(ctx, measure, i, r, bet, peek, push_all, leaf)
        elif final:
            _stand_leaf(ctx, measure, j, bet, peek, leaf)
        else:
            for q in range(width):
                leaf[q] = values[j, q]
        for q in range(width):
            out[q] += p * leaf[q]


@njit(cache=True)
def _reached(ctx, tab, roots):
    """The hands played from the hands ``roots`` by the hit/stand table: a root, or a hand one
    card more than a reached hand the table hits."""
    reached = np.zeros(ctx.counts.shape[0], dtype=np.bool_)
    for i in roots:
        reached[i] = True
    order = np.argsort(ctx.hard)  # a hand's successors after it
    for oi in range(order.shape[0]):
        i = order[oi]
        if not reached[i]:
            continue
        if _hits(tab, ctx.up, _total(ctx.hard[i], ctx.ace[i]), _is_soft(ctx.hard[i], ctx.ace[i])):
            for r in range(10):
                p, j = _next(ctx, i, r)
                if p != 0.0 and j >= 0:
                    reached[j] = True
    return reached


@njit(cache=True)
def _walk(ctx, tab, measure, peek, push_all, values, needed):
    """``values[i]``: every hand of the context that is ``needed`` played to its end by the
    hit/stand table (the hands it hits to are needed too: see :func:`_reached`)."""
    order = np.argsort(-ctx.hard)
    for oi in range(order.shape[0]):
        i = order[oi]
        if not needed[i]:
            continue
        total = _total(ctx.hard[i], ctx.ace[i])
        if _hits(tab, ctx.up, total, _is_soft(ctx.hard[i], ctx.ace[i])):
            _draw(ctx, measure, i, False, 1.0, peek, push_all, values, values[i])
        else:
            _stand_leaf(ctx, measure, i, 1.0, peek, values[i])


@njit(cache=True)
def _walked(ctx, tab, measure, peek, push_all, needed):
    values = np.zeros((ctx.counts.shape[0], WIDTH[measure]))
    _walk(ctx, tab, measure, peek, push_all, values, needed)
    return values


@njit(cache=True)
def _first_outcome(ctx, tab, measure, i, may_double, may_surrender, peek, push_all, values, out):
    """Two-card hand ``i`` by the first-decision table (without the split option): a double,
    a surrender, or ``values[i]`` (the hit/stand table)."""
    total = _total(ctx.hard[i], ctx.ace[i])
    code = _first_code(tab, ctx.up, total, _is_soft(ctx.hard[i], ctx.ace[i]))
    if code == 1 and may_double and total < 21 and tab.dbl_mask[total] == 1:
        _draw(ctx, measure, i, True, 2.0, peek, push_all, values, out)
    elif code == 2 and may_surrender:
        _surrender_leaf(ctx, measure, i, out)
    else:
        for q in range(out.shape[0]):
            out[q] = values[i, q]


@njit(cache=True)
def _first_value(ctx, tab, i, may_double, may_surrender, peek, values):
    out = np.empty(1)
    _first_outcome(ctx, tab, VALUE, i, may_double, may_surrender, peek, False, values, out)
    return out[0]


@njit(cache=True)
def _double_value(ctx, i, peek):
    out = np.empty(1)
    _draw(ctx, VALUE, i, True, 2.0, peek, False, out.reshape((1, 1)), out)
    return out[0]


# -- splits ----------------------------------------------------------------------------------


@njit(cache=True)
def split_hand_counts(p0, base_c, n_after, finite, max_hands, may_resplit):
    """Expected numbers of split hands completed with a non-pair second card (``nx``) and with
    a pair card that may not be split again (``ncc``), starting from two hands."""
    # prob[m, pending, k]: m hands so far, pending hands without a second card, k pair cards
    # drawn to the split hands so far.
    prob = np.zeros((10, 10, 12))
    prob[2, 2, 0] = 1.0
    nx = 0.0
    ncc = 0.0
    for _ in range(40):
        nxt = np.zeros((10, 10, 12))
        moved = False
        for m in range(2, 10):
            for pending in range(10):
                for k in range(12):
                    q = prob[m, pending, k]
                    if q == 0.0:
                        continue
                    if pending == 0:
                        continue
                    moved = True
                    p = max(base_c - k, 0.0) / (n_after - k) if finite else p0
                    kk = min(k + 1, 11)
                    if may_resplit and m < max_hands:
                        nxt[m + 1, pending + 1, kk] += q * p
                    else:
                        ncc += q * p
                        nxt[m, pending - 1, kk] += q * p
                    nx += q * (1.0 - p)
                    nxt[m, pending - 1, k] += q * (1.0 - p)
        if not moved:
            break
        prob = nxt
    return nx, ncc


@njit(cache=True)
def split_value(ctx, tab, c):
    """Splitting a pair of class ``c``: the value per original unit with resplits up to the
    configured number of hands, the probability that one split hand busts, and the expected
    number of hands. Each split hand is played from the shoe without the up card and both pair
    cards; cards drawn to the other split hands are not removed (the split approximation)."""
    rules = tab.rules
    peek = peek_mode(rules, True)
    sc = split_context(ctx, c)
    # the split hands: the pair card and each second card, and the hands played from them
    roots = np.full(10, -1)
    for d in range(10):
        if sc.base[d] - (1 if d == c else 0) * sc.finite > 0.0:
            roots[d] = _find(sc.skeys, sc.perm, (1 << (KEY_BITS * c)) + (1 << (KEY_BITS * d)))
    needed = _reached(sc, tab, roots[roots >= 0])
    values = _walked(sc, tab, VALUE, peek, False, needed)
    aces = c == 0
    one_card = aces and rules[R_HIT_SPLIT_ACES] == 0.0
    das = rules[R_DAS] != 0.0 and not one_card
    busts = values if one_card else _walked(sc, tab, BUST_PROB, peek, False, needed)
    hand_values = np.zeros(10)
    hand_bust = np.zeros(10)
    out = np.empty(1)
    base2 = sc.base
    finite = sc.finite
    denom = sc.n0 - finite  # the split card itself is in the hand
    for d in range(10):
        cnt = base2[d] - (1 if d == c else 0) * finite
        if cnt <= 0.0:
            continue
        i = _find(sc.skeys, sc.perm, (1 << (KEY_BITS * c)) + (1 << (KEY_BITS * d)))
        if one_card:
            _stand_leaf(sc, VALUE, i, 1.0, peek, out)
            hand_values[d] = out[0]
        else:
            hand_values[d] = _first_value(sc, tab, i, das, False, peek, values)
            _first_outcome(sc, tab, BUST_PROB, i, das, False, peek, False, busts, out)
            hand_bust[d] = out[0]
    p_c = (base2[c] - finite) / denom
    ex = 0.0
    bx = 0.0
    for d in range(10):
        if d != c:
            w = (base2[d] - 0.0) / denom
            ex += w * hand_values[d]
            bx += w * hand_bust[d]
    if p_c >= 1.0:
        return 2.0 * hand_values[c], hand_bust[c], 2.0
    ex /= 1.0 - p_c
    bust_one = bx + p_c * hand_bust[c]
    may_resplit = (not aces) or rules[R_RSA] != 0.0
    nx, ncc = split_hand_counts(
        p_c, base2[c] - finite, denom, finite, int(rules[R_MAX_HANDS]), may_resplit
    )
    value = nx * ex + ncc * hand_values[c]
    hands = nx + ncc
    if peek <= 0:
        # no hole card: the caller charges the original wager against a dealer Blackjack
        p_bj = 1.0 - _no_blackjack(ctx.base, ctx.n0, ctx.finite, ctx.up, 2.0 * (c == 0),
                                   2.0 * (c == 9), 2)  # fmt: skip
        if peek < 0:
            # every split wager is lost
            value -= (hands - 1.0) * p_bj
        else:
            # A-10: the loss is max(W, busted wagers); the busted hands' extra units are
            # charged with each hand, this adds one unit per busted hand beyond the first
            # (hands taken as independent, the split approximation)
            extra = hands * bust_one - 1.0 + (1.0 - bust_one) ** hands
            if extra > 0.0:
                value -= p_bj * extra
    return value, bust_one, hands


# -- one up card: the strategy, then every two-card hand -------------------------------------


@njit(cache=True)
def _decide(ctx, tab, splits):
    """Fill row ``up`` of the total-dependent tables: hit/stand by class (hard 21..11, soft
    21..12, hard 10..4, so every successor class is decided first), then the first decision
    (double, surrender) of two-card hands, then the splits (their results into ``splits``).
    Each class decision maximises the sum of the values over the class's hands weighted by
    their probability of being dealt. Returns the hands' values under the decided table."""
    up = ctx.up
    rules = tab.rules
    peek = peek_mode(rules, False)
    k = ctx.counts.shape[0]
    weights = hand_weights(ctx.base, ctx.n0, ctx.finite, ctx.counts, ctx.ncards)
    stand = np.empty(k)
    pnb = np.empty(k)
    totals = np.empty(k, dtype=np.int64)
    softs = np.empty(k, dtype=np.bool_)
    for i in range(k):
        totals[i] = _total(ctx.hard[i], ctx.ace[i])
        softs[i] = _is_soft(ctx.hard[i], ctx.ace[i])
        stand[i] = _stand_from_dist(_dist(ctx, i), totals[i])
        pnb[i] = _pnb(ctx, i, -1)
    values = np.empty((k, 1))
    values[:, 0] = stand
    class_total = np.empty(28, dtype=np.int64)
    class_soft = np.empty(28, dtype=np.bool_)
    j = 0
    for t in range(21, 10, -1):
        class_total[j] = t
        class_soft[j] = False
        j += 1
    for t in range(21, 11, -1):
        class_total[j] = t
        class_soft[j] = True
        j += 1
    for t in range(10, 3, -1):
        class_total[j] = t
        class_soft[j] = False
        j += 1
    hits = np.zeros(k)
    hit = np.empty(1)
    for ci in range(j):
        t = class_total[ci]
        soft = class_soft[ci]
        gain = 0.0
        members = 0
        for i in range(k):
            if totals[i] != t or softs[i] != soft:
                continue
            members += 1
            _draw(ctx, VALUE, i, False, 1.0, peek, False, values, hit)
            hits[i] = hit[0]
            gain += weights[i] * (hits[i] - stand[i])
        decide_hit = t < 21 and members > 0 and gain > 0.0
        if soft:
            tab.hit_soft[up, t] = 1 if decide_hit else 0
        else:
            tab.hit_hard[up, t] = 1 if decide_hit else 0
        if decide_hit:
            for i in range(k):
                if totals[i] == t and softs[i] == soft:
                    values[i, 0] = hits[i]
    may_surrender = rules[R_LS] != 0.0
    for t in range(4, 22):
        for soft_i in range(2):
            soft = soft_i == 1
            sum_hs = 0.0
            sum_d = 0.0
            sum_r = 0.0
            members = 0
            for i in range(k):
                if ctx.ncards[i] != 2 or totals[i] != t or softs[i] != soft:
                    continue
                if t == 21 and soft:
                    continue  # Blackjack: no decision
                members += 1
                sum_hs += weights[i] * values[i, 0]
                sum_d += weights[i] * _double_value(ctx, i, peek)
                sum_r += weights[i] * (-0.5 * pnb[i])
            code = 0
            best = sum_hs
            if members > 0 and tab.dbl_mask[t] == 1 and t < 21 and sum_d > best:
                code = 1
                best = sum_d
            if members > 0 and may_surrender and sum_r > best:
                code = 2
            if soft:
                tab.first_soft[up, t] = code
            else:
                tab.first_hard[up, t] = code
    for c in range(10):
        if (ctx.finite and ctx.base[c] < 2.0) or rules[R_SPLIT_ALLOWED] == 0.0:
            tab.split[up, c] = 0
            continue
        i = _find(ctx.skeys, ctx.perm, 2 << (KEY_BITS * c))
        plain = _first_value(ctx, tab, i, True, may_surrender, peek, values)
        sv, one, hands = split_value(ctx, tab, c)
        splits[c, S_VALUE] = sv
        splits[c, S_BUST] = one
        splits[c, S_HANDS] = hands
        tab.split[up, c] = 1 if sv > plain else 0
    return values


@njit(cache=True)
def analyse_up(child, drawn, size, scratch, base, n0, finite, up, rules, dbl_mask, hit_hard,
               hit_soft, first_hard, first_soft, split_table, splits):  # fmt: skip
    """Decide row ``up`` of the tables (:func:`_decide`, split results into ``splits[c]``), then,
    for each two-card hand (c1 <= c2) against ``up``: the probability of the deal (given the
    up card), the probability of no dealer Blackjack, and the unnormalised values of stand, hit
    (then the table), double, split, surrender and the table's play, and the return term (the
    play less the original wager lost to a dealer Blackjack; a player Blackjack's payout)."""
    tab = Tables(rules, dbl_mask, hit_hard, hit_soft, first_hard, first_soft, split_table)
    ctx = make_context(child, drawn, size, scratch, base, n0, finite, up, -1)
    values = _decide(ctx, tab, splits)
    peek = peek_mode(rules, False)
    out = np.full((10, 10, 9), np.nan)
    may_surrender = rules[R_LS] != 0.0
    bj_pays = rules[R_BJ_PAYS]
    hit = np.empty(1)
    for c1 in range(10):
        for c2 in range(c1, 10):
            i, prob = _two_cards(ctx, c1, c2)
            if i < 0:
                continue
            pnb = _pnb(ctx, i, -1)
            row = out[c1, c2]
            row[V_PROB] = prob
            row[V_PNB] = pnb
            if c1 == 0 and c2 == 9:
                row[V_RETURN] = bj_pays * pnb
                continue
            total = _total(ctx.hard[i], ctx.ace[i])
            row[V_STAND] = _stand_from_dist(_dist(ctx, i), total)
            _draw(ctx, VALUE, i, False, 1.0, peek, False, values, hit)
            row[V_HIT] = hit[0]
            if dbl_mask[total] == 1:
                row[V_DOUBLE] = _double_value(ctx, i, peek)
            if c1 == c2 and rules[R_SPLIT_ALLOWED] != 0.0:
                row[V_SPLIT] = splits[c1, S_VALUE]
            if may_surrender:
                row[V_SURRENDER] = -0.5 * pnb
            if c1 == c2 and split_table[up, c1] == 1:
                play = row[V_SPLIT]
            else:
                play = _first_value(ctx, tab, i, True, may_surrender, peek, values)
            row[V_PLAY] = play
            row[V_RETURN] = play - (1.0 - pnb)
    return out


# -- EZ Bust (633b.16) -----------------------------------------------------------------------


@njit(cache=True)
def ez_bust_value(child, drawn, size, scratch, base, n0, finite, up, rules, dbl_mask, hit_hard,
                  hit_soft, first_hard, first_soft, split_table, splits, push_all):  # fmt: skip
    """EZ Bust against up card ``up`` (2-6) on a single-player table: the probabilities of a
    win, a loss and a push per wager placed, and the expected number of wagers per round. The
    player plays the tables; the dealer's bust probability is exact for the player's final
    cards (for a split, for the pair: ``splits`` from :func:`analyse_up`). With ``push_all``
    (633b.16(g)) the wager pushes when the player's hand is a Blackjack or busted (for a split:
    when both split hands bust, taken as independent)."""
    tab = Tables(rules, dbl_mask, hit_hard, hit_soft, first_hard, first_soft, split_table)
    ctx = make_context(child, drawn, size, scratch, base, n0, finite, up, -1)
    peek = peek_mode(rules, False)
    every = np.ones(ctx.counts.shape[0], dtype=np.bool_)
    ez = _walked(ctx, tab, EZ, peek, push_all, every)  # win, lose, push under the table
    may_surrender = rules[R_LS] != 0.0
    win = 0.0
    lose = 0.0
    push = 0.0
    wagers = 1.0
    leaf = np.empty(3)
    for c1 in range(10):
        for c2 in range(c1, 10):
            i, prob = _two_cards(ctx, c1, c2)
            if i < 0:
                continue
            pb = _dist(ctx, i)[BUST]
            if c1 == 0 and c2 == 9:
                if push_all:
                    push += prob
                else:
                    win += prob * pb
                    lose += prob * (1.0 - pb)
            elif c1 == c2 and split_table[up, c1] == 1:
                one = splits[c1, S_BUST]
                both = one * one if push_all else 0.0
                # the player places one more EZ Bust wager at the decision after each split
                # (none after split aces that take one card each): weight by the wagers
                weight = 1.0 if c1 == 0 and rules[R_HIT_SPLIT_ACES] == 0.0 else splits[c1, S_HANDS]
                wagers += prob * (weight - 1.0)
                prob *= weight
                win += prob * (1.0 - both) * pb
                lose += prob * (1.0 - both) * (1.0 - pb)
                push += prob * both
            else:
                _first_outcome(ctx, tab, EZ, i, True, may_surrender, peek, push_all, ez, leaf)
                win += prob * leaf[0]
                lose += prob * leaf[1]
                push += prob * leaf[2]
    return win / wagers, lose / wagers, push / wagers, wagers


# -- the Buzzer Beater (PA 633c.5(m), (u), (v)(3)): the joint distribution of the final hands ---
#
# Rows of the joint table: the player's final hand ``<=18``, ``19``, ``20``, ``21`` (more than two
# cards, or a split hand), ``blackjack``; columns: the dealer's ``17`` … ``21``, ``blackjack``,
# ``bust`` (:data:`tablejack.lab.model.DEALER_OUTCOMES`). A busted player hand is counted apart.
# The dealer's probabilities are exact for the player's final cards (for a split, for the first
# hand's cards: the split approximation). The probability of reaching each hand is carried
# *forward* from the two-card deal (the values above are carried backward).

ROW_LOW = 0
ROW_BLACKJACK = 4


@njit(cache=True)
def _row(total, two_card_blackjack):
    if two_card_blackjack:
        return ROW_BLACKJACK
    if total >= 19:
        return total - 18
    return ROW_LOW


@njit(cache=True)
def _settle_final(ctx, i, mass, joint, row):
    """Hand ``i`` stands, reached with probability ``mass``."""
    d = _dist(ctx, i)
    for o in range(7):
        if o != BJ:
            joint[row, o] += mass * d[o]


@njit(cache=True)
def _draw_forward(ctx, i, mass, joint, busted, reach):
    """One card to hand ``i`` (reached with probability ``mass``): a bust, else the new hand
    stands (a double, ``reach`` None) or is reached (its mass added to ``reach``)."""
    for r in range(10):
        p, j = _next(ctx, i, r)
        if p == 0.0:
            continue
        if j < 0:
            busted[0] += mass * p * _pnb(ctx, i, r)
        elif reach is None:
            _settle_final(ctx, j, mass * p, joint, _row(_total(ctx.hard[j], ctx.ace[j]), False))
        else:
            reach[j] += mass * p


@njit(cache=True)
def _propagate(ctx, tab, reach, joint, busted):
    """Play every hand with mass ``reach`` by the hit/stand table to its end."""
    order = np.argsort(ctx.hard)
    for oi in range(order.shape[0]):
        i = order[oi]
        mass = reach[i]
        if mass == 0.0:
            continue
        total = _total(ctx.hard[i], ctx.ace[i])
        if _hits(tab, ctx.up, total, _is_soft(ctx.hard[i], ctx.ace[i])):
            _draw_forward(ctx, i, mass, joint, busted, reach)
        else:
            _settle_final(ctx, i, mass, joint, _row(total, False))


@njit(cache=True)
def _first_forward(ctx, tab, i, mass, may_double, joint, busted, reach):
    """A two-card hand reached with ``mass``: a double draws one card and stands, else the
    hand is played on by the table (its mass into ``reach``)."""
    total = _total(ctx.hard[i], ctx.ace[i])
    code = _first_code(tab, ctx.up, total, _is_soft(ctx.hard[i], ctx.ace[i]))
    if code == 1 and may_double and total < 21 and tab.dbl_mask[total] == 1:
        _draw_forward(ctx, i, mass, joint, busted, None)
    else:
        reach[i] += mass


@njit(cache=True)
def _first_hand_of_split(ctx, tab, prob, c, joint, busted):
    """The first hand of a split pair of class ``c`` (A-6 "first-hand"): its second card is the
    first card that is not a pair card, unless the resplits are used up (A-4 hand by hand)."""
    rules = tab.rules
    sc = split_context(ctx, c)
    base2 = sc.base
    finite = sc.finite
    aces = c == 0
    one_card = aces and rules[R_HIT_SPLIT_ACES] == 0.0
    das = rules[R_DAS] != 0.0 and not one_card
    resplits = 0
    if (not aces) or rules[R_RSA] != 0.0:
        resplits = int(rules[R_MAX_HANDS]) - 2
    avail = base2.copy()
    if finite:
        avail[c] -= 1.0
    n_avail = sc.n0 - finite
    p_pair = 1.0
    for kk in range(resplits + 1):
        if finite:
            p_pair *= max(avail[c] - kk, 0.0) / (n_avail - kk)
        else:
            p_pair *= avail[c] / n_avail
    others = n_avail - avail[c]
    reach = np.zeros(sc.counts.shape[0])
    for d in range(10):
        if avail[d] <= 0.0:
            continue
        w = p_pair if d == c else (1.0 - p_pair) * avail[d] / others
        if w <= 0.0:
            continue
        i = _find(sc.skeys, sc.perm, (1 << (KEY_BITS * c)) + (1 << (KEY_BITS * d)))
        if one_card:
            _settle_final(sc, i, prob * w, joint, _row(_total(sc.hard[i], sc.ace[i]), False))
        else:
            _first_forward(sc, tab, i, prob * w, das, joint, busted, reach)
    _propagate(sc, tab, reach, joint, busted)


@njit(cache=True)
def final_hands(child, drawn, size, scratch, base, n0, finite, up, rules, dbl_mask, hit_hard,
                hit_soft, first_hard, first_soft, split_table, may_surrender):  # fmt: skip
    """The joint distribution (5 x 7) of the player's final hand and the dealer's final hand
    against up card ``up`` (a peek game: a dealer Blackjack is found on the two-card hand), and
    the probabilities of a player bust and of a surrender."""
    tab = Tables(rules, dbl_mask, hit_hard, hit_soft, first_hard, first_soft, split_table)
    ctx = make_context(child, drawn, size, scratch, base, n0, finite, up, -1)
    joint = np.zeros((5, 7))
    busted = np.zeros(1)
    surrendered = 0.0
    reach = np.zeros(ctx.counts.shape[0])
    for c1 in range(10):
        for c2 in range(c1, 10):
            i, prob = _two_cards(ctx, c1, c2)
            if i < 0 or prob <= 0.0:
                continue
            total = _total(ctx.hard[i], ctx.ace[i])
            blackjack = c1 == 0 and c2 == 9
            pnb = _pnb(ctx, i, -1)
            joint[_row(total, blackjack), BJ] += prob * (1.0 - pnb)
            code = _first_code(tab, up, total, _is_soft(ctx.hard[i], ctx.ace[i]))
            if blackjack:
                _settle_final(ctx, i, prob, joint, ROW_BLACKJACK)
            elif c1 == c2 and rules[R_SPLIT_ALLOWED] != 0.0 and split_table[up, c1] == 1:
                _first_hand_of_split(ctx, tab, prob, c1, joint, busted)
            elif code == 2 and may_surrender:
                surrendered += prob * pnb
            else:
                _first_forward(ctx, tab, i, prob, True, joint, busted, reach)
    _propagate(ctx, tab, reach, joint, busted)
    return joint, busted[0], surrendered
