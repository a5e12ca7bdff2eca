# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernels of the joint distribution of the player's final hand (played by the generated
strategy) and the dealer's final hand, for the Buzzer Beater wager (PA 633c.5(m), (u), (v)(3));
:mod:`tablejack.lab.buzzer` is the API.

Rows of the joint table: the player's final hand ``<=18``, ``19``, ``20``, ``21`` (more than two
cards, or a split hand), ``blackjack``; columns: the dealer's ``17`` … ``21``, ``blackjack``,
``bust`` (:data:`tablejack.lab.model.DEALER_OUTCOMES`). A busted player hand is counted apart.
The dealer's probabilities are exact for the player's final cards (for a split, for the first
hand's cards: the split approximation of :mod:`._exact_kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablejack.lab._exact_kernels import (
    BJ,
    KEY_BITS,
    R_DAS,
    R_HIT_SPLIT_ACES,
    R_MAX_HANDS,
    R_RSA,
    R_SPLIT_ALLOWED,
    _dealer_for,
    _find,
    _is_soft,
    _pnb,
    _total,
    enumerate_hands,
)

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
def _settle_final(
    i, mass, joint, child, drawn, size, scratch, base, n0, finite, counts, ncards, row
):
    d = _dealer_for(child, drawn, size, scratch, base, n0, finite, counts[i], ncards[i])
    for o in range(7):
        if o != BJ:
            joint[row, o] += mass * d[o]


@njit(cache=True)
def _draw_final(i, mass, joint, busted, child, drawn, size, scratch, base, n0, finite, up,
                counts, hard, ace, ncards, keys, skeys, perm):  # fmt: skip
    """One card to hand ``i`` (a double), then stand."""
    denom = n0 - ncards[i] * finite
    rem = counts[i].copy()
    for r in range(10):
        cnt = base[r] - rem[r] * finite
        if cnt <= 0.0:
            continue
        p = cnt / denom
        if hard[i] + r + 1 > 21:
            rem[r] += 1
            busted[0] += mass * p * _pnb(base, n0, finite, up, rem, ncards[i] + 1)
            rem[r] -= 1
            continue
        j = _find(skeys, perm, keys[i] + (1 << (KEY_BITS * r)))
        row = _row(_total(hard[j], ace[j]), False)
        _settle_final(j, mass * p, joint, child, drawn, size, scratch, base, n0, finite, counts,
                      ncards, row)  # fmt: skip


@njit(cache=True)
def _propagate(reach, joint, busted, child, drawn, size, scratch, base, n0, finite, up, counts,
               hard, ace, ncards, keys, skeys, perm, hit_hard, hit_soft):  # fmt: skip
    """Play every hand with mass ``reach`` by the hit/stand table to its end."""
    order = np.argsort(hard)
    for oi in range(order.shape[0]):
        i = order[oi]
        mass = reach[i]
        if mass == 0.0:
            continue
        total = _total(hard[i], ace[i])
        soft = _is_soft(hard[i], ace[i])
        hit = total < 21 and (hit_soft[up, total] if soft else hit_hard[up, total]) == 1
        if not hit:
            _settle_final(i, mass, joint, child, drawn, size, scratch, base, n0, finite, counts,
                          ncards, _row(total, False))  # fmt: skip
            continue
        denom = n0 - ncards[i] * finite
        rem = counts[i].copy()
        for r in range(10):
            cnt = base[r] - rem[r] * finite
            if cnt <= 0.0:
                continue
            p = cnt / denom
            if hard[i] + r + 1 > 21:
                rem[r] += 1
                busted[0] += mass * p * _pnb(base, n0, finite, up, rem, ncards[i] + 1)
                rem[r] -= 1
            else:
                reach[_find(skeys, perm, keys[i] + (1 << (KEY_BITS * r)))] += mass * p


@njit(cache=True)
def _first_hand_of_split(prob, c, joint, busted, child, drawn, size, scratch, base, n0, finite,
                         up, rules, dbl_mask, hit_hard, hit_soft, first_hard, first_soft):  # fmt: skip
    """The first hand of a split pair of class ``c`` (A-6 "first-hand"): its second card is the
    first card that is not a pair card, unless the resplits are used up (A-4 hand by hand)."""
    base2 = base.copy()
    if finite:
        base2[c] -= 1.0
    n2 = n0 - finite
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base2, finite, c)
    k = counts.shape[0]
    aces = c == 0
    one_card = aces and rules[R_HIT_SPLIT_ACES] == 0.0
    das = rules[R_DAS] != 0.0 and not one_card
    resplits = 0
    if (not aces) or rules[R_RSA] != 0.0:
        resplits = int(rules[R_MAX_HANDS]) - 2
    avail = base2.copy()
    if finite:
        avail[c] -= 1.0
    n_avail = n2 - finite
    p_pair = 1.0
    for kk in range(resplits + 1):
        if finite:
            p_pair *= max(avail[c] - kk, 0.0) / (n_avail - kk)
        else:
            p_pair *= avail[c] / n_avail
    others = n_avail - avail[c]
    reach = np.zeros(k)
    for d in range(10):
        if avail[d] <= 0.0:
            continue
        w = p_pair if d == c else (1.0 - p_pair) * avail[d] / others
        if w <= 0.0:
            continue
        i = _find(skeys, perm, (1 << (KEY_BITS * c)) + (1 << (KEY_BITS * d)))
        total = _total(hard[i], ace[i])
        soft = _is_soft(hard[i], ace[i])
        code = first_soft[up, total] if soft else first_hard[up, total]
        if one_card:
            _settle_final(i, prob * w, joint, child, drawn, size, scratch, base2, n2, finite,
                          counts, ncards, _row(total, False))  # fmt: skip
        elif code == 1 and das and total < 21 and dbl_mask[total] == 1:
            _draw_final(i, prob * w, joint, busted, child, drawn, size, scratch, base2, n2,
                        finite, up, counts, hard, ace, ncards, keys, skeys, perm)  # fmt: skip
        else:
            reach[i] += prob * w
    _propagate(reach, joint, busted, child, drawn, size, scratch, base2, n2, finite, up, counts,
               hard, ace, ncards, keys, skeys, perm, hit_hard, hit_soft)  # fmt: skip


@njit(cache=True)
def final_hands(child, drawn, size, scratch, base, n0, finite, up, rules, dbl_mask, hit_hard,
                hit_soft, first_hard, first_soft, split_table, may_surrender):  # fmt: skip
    """The joint distribution (5 x 7) of the player's final hand and the dealer's final hand
    against up card ``up`` (a peek game: a dealer Blackjack is found on the two-card hand), and
    the probabilities of a player bust and of a surrender."""
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base, finite, -1)
    k = counts.shape[0]
    joint = np.zeros((5, 7))
    busted = np.zeros(1)
    surrendered = 0.0
    reach = np.zeros(k)
    for c1 in range(10):
        for c2 in range(c1, 10):
            i = _find(skeys, perm, (1 << (KEY_BITS * c1)) + (1 << (KEY_BITS * c2)))
            if i < 0:
                continue
            if finite:
                prob = base[c1] / n0 * (base[c2] - (1.0 if c1 == c2 else 0.0)) / (n0 - 1.0)
            else:
                prob = base[c1] / n0 * base[c2] / n0
            if c1 != c2:
                prob *= 2.0
            if prob <= 0.0:
                continue
            total = _total(hard[i], ace[i])
            blackjack = c1 == 0 and c2 == 9
            pnb = _pnb(base, n0, finite, up, counts[i], 2)
            joint[_row(total, blackjack), BJ] += prob * (1.0 - pnb)
            soft = _is_soft(hard[i], ace[i])
            code = first_soft[up, total] if soft else first_hard[up, total]
            if blackjack:
                _settle_final(i, prob, joint, child, drawn, size, scratch, base, n0, finite,
                              counts, ncards, ROW_BLACKJACK)  # fmt: skip
            elif c1 == c2 and rules[R_SPLIT_ALLOWED] != 0.0 and split_table[up, c1] == 1:
                _first_hand_of_split(prob, c1, joint, busted, child, drawn, size, scratch, base,
                                     n0, finite, up, rules, dbl_mask, hit_hard, hit_soft,
                                     first_hard, first_soft)  # fmt: skip
            elif code == 1 and total < 21 and dbl_mask[total] == 1:
                _draw_final(i, prob, joint, busted, child, drawn, size, scratch, base, n0, finite,
                            up, counts, hard, ace, ncards, keys, skeys, perm)  # fmt: skip
            elif code == 2 and may_surrender:
                surrendered += prob * pnb
            else:
                reach[i] += prob
    _propagate(reach, joint, busted, child, drawn, size, scratch, base, n0, finite, up, counts,
               hard, ace, ncards, keys, skeys, perm, hit_hard, hit_soft)  # fmt: skip
    return joint, busted[0], surrendered
