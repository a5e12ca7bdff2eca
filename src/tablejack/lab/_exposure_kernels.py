# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernel of the advantage-play exposure; :mod:`tablejack.lab.exposure` is the API.

:func:`walk_shoes` deals each shoe card by card. Before each card (depth ``k``: the first ``k``
cards of the shoe are gone) a round may start, and for every wager it records what a counter
sees and what the wager is worth on the shoe that is left:

* the **true count**: the running count (the count's tags summed over the cards gone, less what
  an average shoe would have given at that depth, so an unbalanced count is measured from its
  expected value) per deck left;
* the wager's **player edge** on the cards left, by one of three kinds:
  :data:`KIND_LINEAR` the linear estimate from the effects of removal
  (``e0 + (N - 1) / n * sum(eor of the cards gone)``, the EORs centred),
  :data:`KIND_INSURANCE` the insurance wager exactly (``3 * tens / (n - 1) - 1``, weighted by
  the chance ``aces / n`` that the wager is offered at all), :data:`KIND_PAIRS` a side wager
  settled on the player's two cards (and, for a bonus, the dealer's two cards) exactly, by its
  52 x 52 paytable as a quadratic form kept up to date card by card;
  :data:`KIND_DEALER` (EZ Bust) the exact edge off the top plus the change of the dealer-only
  return ``2 * P(bust) - 1`` against up cards 2-6 (the dealer's bust probability exact for the
  shoe left, :func:`dealer_bust`) since the full shoe, refreshed every ``stride`` cards and moved
  by the EORs in between.

Sums per wager and depth (the ``A_*`` columns), a histogram of the true count per depth and the
edge by true count are added into the caller's arrays, so chunks of shoes can be summed.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

KIND_LINEAR = 0
KIND_INSURANCE = 1
KIND_PAIRS = 2
KIND_DEALER = 3

# the sums per wager and depth (weights: 1 per round; insurance: the chance it is offered)
A_WEIGHT = 0
A_EDGE = 1
A_EDGE2 = 2
A_FAVOURABLE = 3  # rounds whose edge favours the player
A_FAVOURABLE_EDGE = 4
A_BET = 5  # rounds at a true count >= the key count (the wonger's bets)
A_BET_EDGE = 6
A_UNITS = 7  # units of the bet spread
A_UNITS_EDGE = 8
A_TC = 9
A_TC2 = 10
ACC = 11

TC_LOW = -15.0
TC_WIDTH = 0.5
TC_BINS = 60


@njit(cache=True)
def tc_bin(tc):
    """The histogram bin of true count ``tc`` (the end bins take everything beyond)."""
    b = math.floor((tc - TC_LOW) / TC_WIDTH)
    if b < 0:
        return 0
    if b >= TC_BINS:
        return TC_BINS - 1
    return b


@njit(cache=True)
def units_for(tc, key, spread):
    """The bet spread's units at true count ``tc``: one below the key count, then one more per
    half true count above it, at most ``spread``."""
    if math.isnan(key) or tc < key:
        return 1.0
    units = 1.0 + math.floor(2.0 * (tc - key))
    return min(units, spread)


@njit(cache=True)
def dealer_bust(child, drawn, states, up, counts, n, scratch):
    """The probability that the dealer, showing ``up``, busts drawing from ``counts`` (``n``
    cards, the up card already out): the drawing states ``child``/``drawn`` (sorted by size,
    ``states`` of them; a child ``-(outcome + 1)`` is final, outcome 6 a bust)."""
    for s in range(states - 1, -1, -1):
        total = 0.0
        size = 0.0
        for r in range(10):
            size += drawn[up, s, r]
        denom = n - size
        for r in range(10):
            cnt = counts[r] - drawn[up, s, r]
            if cnt <= 0.0:
                continue
            ch = child[up, s, r]
            if ch < 0:
                if ch == -7:
                    total += cnt / denom
            else:
                total += cnt / denom * scratch[ch]
        scratch[s] = total
    return scratch[0]


@njit(cache=True)
def ez_dealer_return(cls, child, drawn, states, scratch):
    """The EZ Bust wager's return counting the dealer alone: over up cards 2-6 in proportion to
    the shoe, ``2 * P(bust) - 1`` with the up card out of the shoe (633b.16(c), (f))."""
    num = 0.0
    den = 0.0
    for up in range(1, 6):
        if cls[up] <= 0.0:
            continue
        cls[up] -= 1.0
        n = cls.sum()
        bust = dealer_bust(child, drawn, states[up], up, cls, n, scratch)
        cls[up] += 1.0
        num += cls[up] * (2.0 * bust - 1.0)
        den += cls[up]
    return num / den if den > 0.0 else 0.0


@njit(cache=True)
def _bonus(c, n, sp_a, sp_b, sp_delta, nsp, ev_u, ev_s, nev):
    """The dealer-event part of a pair wager: for each special player pair (a, b), its
    probability times the probability of the dealer event given it, times the change of pay."""
    total = 0.0
    if n < 4.0:
        return 0.0
    for k in range(nsp):
        a = sp_a[k]
        b = sp_b[k]
        same = 1.0 if a == b else 0.0
        pab = c[a] * (c[b] - same) / (n * (n - 1.0))
        if pab <= 0.0:
            continue
        c[a] -= 1.0
        c[b] -= 1.0
        pe = 0.0
        for e in range(nev):
            u = ev_u[e]
            s = ev_s[e]
            d = 1.0 if u == s else 0.0
            pe += c[u] * (c[s] - d)
        c[a] += 1.0
        c[b] += 1.0
        total += pab * pe / ((n - 2.0) * (n - 3.0)) * sp_delta[k]
    return total


@njit(cache=True)
def pair_value(c, pay, sp_a, sp_b, sp_delta, nsp, ev_u, ev_s, nev):
    """The player's expected return of a pair wager on composition ``c`` (52 card identities),
    computed directly (the reference for the incremental form in :func:`walk_shoes`)."""
    n = c.sum()
    q = 0.0
    for a in range(52):
        for b in range(52):
            same = 1.0 if a == b else 0.0
            q += pay[a, b] * c[a] * (c[b] - same)
    return q / (n * (n - 1.0)) + _bonus(c, n, sp_a, sp_b, sp_delta, nsp, ev_u, ev_s, nev)


@njit(cache=True)
def walk_shoes(
    shoes, depths, full, kinds, e0, eor, tags, tbar, keys, spread, pay, sp_a, sp_b, sp_delta,
    nsp, ev_u, ev_s, nev, classes, dealer_child, dealer_drawn, dealer_states, ez0, stride, acc,
    hist, by_tc,
):  # fmt: skip
    """Walk every shoe (rows of card identities 0-51) through depths ``0 .. depths - 1`` and add
    each wager's figures into ``acc`` (wagers x depths x :data:`ACC`), ``hist`` (wagers x depths
    x :data:`TC_BINS`, rounds by true count) and ``by_tc`` (wagers x :data:`TC_BINS` x 2: the
    weight and the weighted edge by true count, every depth together)."""
    nshoes = shoes.shape[0]
    nw = kinds.shape[0]
    total = full.sum()
    c = np.empty(52)
    cls = np.zeros(10)
    r = np.zeros((nw, 52))
    s = np.zeros((nw, 52))
    q = np.zeros(nw)
    dg = np.zeros(nw)
    running = np.zeros(nw)
    linear = np.zeros(nw)
    anchor = np.zeros(nw)  # KIND_DEALER: the dealer-only change at the last refresh
    anchor_linear = np.zeros(nw)  # and the EOR sum then
    scratch = np.zeros(dealer_child.shape[1])
    # the pair wagers' quadratic forms on the full shoe, copied for each shoe
    r0 = np.zeros((nw, 52))
    s0 = np.zeros((nw, 52))
    q0 = np.zeros(nw)
    d0 = np.zeros(nw)
    for w in range(nw):
        if kinds[w] != KIND_PAIRS:
            continue
        for a in range(52):
            for b in range(52):
                r0[w, a] += pay[w, a, b] * full[b]
                s0[w, b] += pay[w, a, b] * full[a]
        for a in range(52):
            q0[w] += full[a] * r0[w, a]
            d0[w] += pay[w, a, a] * full[a]
    for i in range(nshoes):
        for j in range(52):
            c[j] = full[j]
        for j in range(10):
            cls[j] = 0.0
        for j in range(52):
            cls[classes[j]] += full[j]
        for w in range(nw):
            running[w] = 0.0
            linear[w] = 0.0
            anchor[w] = 0.0
            anchor_linear[w] = 0.0
            q[w] = q0[w]
            dg[w] = d0[w]
            for j in range(52):
                r[w, j] = r0[w, j]
                s[w, j] = s0[w, j]
        n = total
        for k in range(depths):
            decks_left = n / 52.0
            for w in range(nw):
                tc = (running[w] - k * tbar[w]) / decks_left
                kind = kinds[w]
                weight = 1.0
                if kind == KIND_LINEAR:
                    edge = e0[w] + (total - 1.0) / n * linear[w]
                elif kind == KIND_DEALER:
                    if k % stride == 0:
                        anchor[w] = (
                            ez_dealer_return(cls, dealer_child, dealer_drawn, dealer_states,
                                             scratch) - ez0
                        )  # fmt: skip
                        anchor_linear[w] = (total - 1.0) / n * linear[w]
                    edge = e0[w] + anchor[w] + (total - 1.0) / n * linear[w] - anchor_linear[w]
                elif kind == KIND_INSURANCE:
                    weight = cls[0] / n
                    edge = 3.0 * cls[9] / (n - 1.0) - 1.0
                else:
                    edge = (q[w] - dg[w]) / (n * (n - 1.0)) + _bonus(
                        c, n, sp_a[w], sp_b[w], sp_delta[w], nsp[w], ev_u[w], ev_s[w], nev[w]
                    )
                a = acc[w, k]
                a[A_WEIGHT] += weight
                a[A_EDGE] += weight * edge
                a[A_EDGE2] += weight * edge * edge
                if edge > 0.0:
                    a[A_FAVOURABLE] += weight
                    a[A_FAVOURABLE_EDGE] += weight * edge
                if not math.isnan(keys[w]) and tc >= keys[w]:
                    a[A_BET] += weight
                    a[A_BET_EDGE] += weight * edge
                units = units_for(tc, keys[w], spread)
                a[A_UNITS] += weight * units
                a[A_UNITS_EDGE] += weight * units * edge
                a[A_TC] += weight * tc
                a[A_TC2] += weight * tc * tc
                b = tc_bin(tc)
                hist[w, k, b] += weight
                by_tc[w, b, 0] += weight
                by_tc[w, b, 1] += weight * edge
            # the next card leaves the shoe
            card = shoes[i, k]
            for w in range(nw):
                running[w] += tags[w, card]
                linear[w] += eor[w, card]
                if kinds[w] == KIND_PAIRS:
                    q[w] += pay[w, card, card] - r[w, card] - s[w, card]
                    dg[w] -= pay[w, card, card] * 1.0
                    for j in range(52):
                        r[w, j] -= pay[w, j, card]
                        s[w, j] -= pay[w, card, j]
            c[card] -= 1.0
            cls[classes[card]] -= 1.0
            n -= 1.0
