# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernels of the exact (combinatorial) analysis; :mod:`tablejack.lab.exact` is the API.

Cards are point classes ``0`` (ace) to ``9`` (ten-value). A *context* is a base shoe (the shoe
without the dealer's up card, and for a split without the other split card) and every player
hand that can be formed from it: each multiset of two or more cards with a hard total of 21 or
less (for a split, every such multiset holding the split card). Each hand is a row; values are
computed for the base shoe minus the hand, so dealer probabilities are exact for the cards
removed. Rows are processed by descending hard total, so a hand's successors are always done
first (no recursion: the kernels are cacheable).

Values are *unnormalised*: ``E[payoff * 1{no dealer Blackjack}]``. The dealer Blackjack is
settled once per initial hand by the caller (the player loses the original wager, or pushes
with a Blackjack), and the player's next-card probabilities are those of the unseen shoe: the
hole card is exchangeable with every later card, so no conditioning on it is needed.
"""

from __future__ import annotations

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
def _total(hard, ace):
    if ace and hard <= 11:
        return hard + 10
    return hard


@njit(cache=True)
def _is_soft(hard, ace):
    return ace and hard <= 11


@njit(cache=True)
def _pnb(base, n0, finite, up, rem, nrem):
    """Probability that the hole card does not give the dealer a Blackjack."""
    if up == 0:
        return 1.0 - (base[9] - rem[9] * finite) / (n0 - nrem * finite)
    if up == 9:
        return 1.0 - (base[0] - rem[0] * finite) / (n0 - nrem * finite)
    return 1.0


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
def _dealer_for(child, drawn, size, scratch, base, n0, finite, rem, nrem):
    counts = np.empty(10)
    for r in range(10):
        counts[r] = base[r] - rem[r] * finite
    return dealer_eval(child, drawn, size, counts, n0 - nrem * finite, finite, scratch)


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


@njit(cache=True)
def _bust_value(base, n0, finite, up, rem, nrem, bet, peek):
    """A busted hand of ``bet`` units, unnormalised. Without the peek a busted double stays
    lost against a dealer Blackjack (A-10's reading): the extra units are charged here."""
    pnb = _pnb(base, n0, finite, up, rem, nrem)
    value = -bet * pnb
    if peek <= 0 and bet > 1.0:
        value -= (bet - 1.0) * (1.0 - pnb)
    return value


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


@njit(cache=True)
def _ensure(i, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards):
    if not done[i]:
        d = _dealer_for(child, drawn, size, scratch, base, n0, finite, counts[i], ncards[i])
        for k in range(7):
            dists[i, k] = d[k]
        done[i] = True


@njit(cache=True)
def _hit_sum(i, values, base, n0, finite, up, counts, hard, ncards, skeys, perm, keys, peek):
    """Value of drawing one card to hand ``i`` and continuing with ``values`` (bust: -1)."""
    out = 0.0
    denom = n0 - ncards[i] * finite
    rem = counts[i].copy()
    for r in range(10):
        cnt = base[r] - rem[r] * finite
        if cnt <= 0.0:
            continue
        if hard[i] + r + 1 > 21:
            rem[r] += 1
            v = _bust_value(base, n0, finite, up, rem, ncards[i] + 1, 1.0, peek)
            rem[r] -= 1
        else:
            v = values[_find(skeys, perm, keys[i] + (1 << (KEY_BITS * r)))]
        out += cnt / denom * v
    return out


@njit(cache=True)
def _double_sum(
    i,
    done,
    dists,
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    counts,
    hard,
    ace,
    ncards,
    skeys,
    perm,
    keys,
    peek,
):
    out = 0.0
    denom = n0 - ncards[i] * finite
    rem = counts[i].copy()
    for r in range(10):
        cnt = base[r] - rem[r] * finite
        if cnt <= 0.0:
            continue
        if hard[i] + r + 1 > 21:
            rem[r] += 1
            v = _bust_value(base, n0, finite, up, rem, ncards[i] + 1, 2.0, peek)
            rem[r] -= 1
        else:
            j = _find(skeys, perm, keys[i] + (1 << (KEY_BITS * r)))
            _ensure(j, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards)
            v = 2.0 * _stand_from_dist(dists[j], _total(hard[j], ace[j]))
            if peek < 0:
                # no hole card, full amount: a dealer Blackjack takes the double too
                v -= 1.0 - _pnb(base, n0, finite, up, counts[j], ncards[j])
        out += cnt / denom * v
    return out


@njit(cache=True)
def table_values(
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    peek,
    hit_hard,
    hit_soft,
    counts,
    hard,
    ace,
    ncards,
    keys,
    skeys,
    perm,
    done,
    dists,
):
    """Value of every hand of the context played by the hit/stand table."""
    k = counts.shape[0]
    values = np.zeros(k)
    order = np.argsort(-hard)
    for oi in range(k):
        i = order[oi]
        total = _total(hard[i], ace[i])
        soft = _is_soft(hard[i], ace[i])
        hit = total < 21 and (hit_soft[up, total] if soft else hit_hard[up, total]) == 1
        if hit:
            values[i] = _hit_sum(
                i, values, base, n0, finite, up, counts, hard, ncards, skeys, perm, keys, peek
            )
        else:
            _ensure(i, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards)
            values[i] = _stand_from_dist(dists[i], total)
    return values


@njit(cache=True)
def _first_value(
    i,
    may_double,
    may_surrender,
    values,
    dbl_mask,
    first_hard,
    first_soft,
    done,
    dists,
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    counts,
    hard,
    ace,
    ncards,
    skeys,
    perm,
    keys,
    peek,
):
    """Value of two-card hand ``i`` by the first-decision table (without the split option)."""
    total = _total(hard[i], ace[i])
    soft = _is_soft(hard[i], ace[i])
    code = first_soft[up, total] if soft else first_hard[up, total]
    if code == 1 and may_double and total < 21 and dbl_mask[total] == 1:
        return _double_sum(
            i,
            done,
            dists,
            child,
            drawn,
            size,
            scratch,
            base,
            n0,
            finite,
            up,
            counts,
            hard,
            ace,
            ncards,
            skeys,
            perm,
            keys,
            peek,
        )
    if code == 2 and may_surrender:
        return -0.5 * _pnb(base, n0, finite, up, counts[i], ncards[i])
    return values[i]


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
def split_value(
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    rules,
    dbl_mask,
    hit_hard,
    hit_soft,
    first_hard,
    first_soft,
    c,
):
    """Value of splitting a pair of class ``c`` (per original unit) with resplits up to the
    configured number of hands, and the probability that one split hand busts. Each split hand
    is played from the shoe without the up card and both pair cards; cards drawn to the other
    split hands are not removed (the split approximation)."""
    peek = peek_mode(rules, True)
    base2 = base.copy()
    if finite:
        base2[c] -= 1.0
    n2 = n0 - finite
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base2, finite, c)
    k = counts.shape[0]
    done = np.zeros(k, dtype=np.bool_)
    dists = np.zeros((k, 7))
    values = table_values(
        child,
        drawn,
        size,
        scratch,
        base2,
        n2,
        finite,
        up,
        peek,
        hit_hard,
        hit_soft,
        counts,
        hard,
        ace,
        ncards,
        keys,
        skeys,
        perm,
        done,
        dists,
    )
    aces = c == 0
    one_card = aces and rules[R_HIT_SPLIT_ACES] == 0.0
    das = rules[R_DAS] != 0.0 and not one_card
    hand_values = np.zeros(10)
    hand_bust = np.zeros(10)
    denom = n2 - finite  # the split card itself is in the hand
    base_key = 1 << (KEY_BITS * c)
    for d in range(10):
        cnt = base2[d] - (1 if d == c else 0) * finite
        if cnt <= 0.0:
            continue
        i = _find(skeys, perm, base_key + (1 << (KEY_BITS * d)))
        total = _total(hard[i], ace[i])
        if one_card:
            _ensure(i, done, dists, child, drawn, size, scratch, base2, n2, finite, counts, ncards)
            hand_values[d] = _stand_from_dist(dists[i], total)
        else:
            hand_values[d] = _first_value(
                i,
                das,
                False,
                values,
                dbl_mask,
                first_hard,
                first_soft,
                done,
                dists,
                child,
                drawn,
                size,
                scratch,
                base2,
                n2,
                finite,
                up,
                counts,
                hard,
                ace,
                ncards,
                skeys,
                perm,
                keys,
                peek,
            )
            hand_bust[d] = _bust_probability(
                i,
                das,
                dbl_mask,
                first_hard,
                first_soft,
                hit_hard,
                hit_soft,
                base2,
                n2,
                finite,
                up,
                counts,
                hard,
                ace,
                ncards,
                keys,
                skeys,
                perm,
            )
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
        pair = np.zeros(10)
        pair[c] = 2.0
        p_bj = 1.0 - _pnb(base, n0, finite, up, pair, 2)
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


@njit(cache=True)
def _bust_probability(
    i,
    may_double,
    dbl_mask,
    first_hard,
    first_soft,
    hit_hard,
    hit_soft,
    base,
    n0,
    finite,
    up,
    counts,
    hard,
    ace,
    ncards,
    keys,
    skeys,
    perm,
):
    """Probability that two-card hand ``i`` busts when played by the tables."""
    total = _total(hard[i], ace[i])
    soft = _is_soft(hard[i], ace[i])
    code = first_soft[up, total] if soft else first_hard[up, total]
    k = counts.shape[0]
    busts = np.zeros(k)
    order = np.argsort(-hard)
    for oi in range(k):
        j = order[oi]
        t = _total(hard[j], ace[j])
        s = _is_soft(hard[j], ace[j])
        if t < 21 and (hit_soft[up, t] if s else hit_hard[up, t]) == 1:
            denom = n0 - ncards[j] * finite
            acc = 0.0
            for r in range(10):
                cnt = base[r] - counts[j, r] * finite
                if cnt <= 0.0:
                    continue
                if hard[j] + r + 1 > 21:
                    acc += cnt / denom
                else:
                    acc += cnt / denom * busts[_find(skeys, perm, keys[j] + (1 << (KEY_BITS * r)))]
            busts[j] = acc
    if code == 1 and may_double and total < 21 and dbl_mask[total] == 1:
        denom = n0 - ncards[i] * finite
        acc = 0.0
        for r in range(10):
            cnt = base[r] - counts[i, r] * finite
            if cnt > 0.0 and hard[i] + r + 1 > 21:
                acc += cnt / denom
        return acc
    return busts[i]


@njit(cache=True)
def generate_tables(
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    rules,
    dbl_mask,
    hit_hard,
    hit_soft,
    first_hard,
    first_soft,
    split_table,
):
    """Fill row ``up`` of the total-dependent tables: hit/stand by class (hard 21..11, soft
    21..12, hard 10..4, so every successor class is decided first), then the first decision
    (double, surrender) of two-card hands, then the splits. Each class decision maximises the
    sum of the values over the class's hands weighted by their probability of being dealt."""
    peek = peek_mode(rules, False)
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base, finite, -1)
    k = counts.shape[0]
    weights = hand_weights(base, n0, finite, counts, ncards)
    done = np.zeros(k, dtype=np.bool_)
    dists = np.zeros((k, 7))
    stand = np.empty(k)
    pnb = np.empty(k)
    totals = np.empty(k, dtype=np.int64)
    softs = np.empty(k, dtype=np.bool_)
    for i in range(k):
        _ensure(i, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards)
        totals[i] = _total(hard[i], ace[i])
        softs[i] = _is_soft(hard[i], ace[i])
        stand[i] = _stand_from_dist(dists[i], totals[i])
        pnb[i] = _pnb(base, n0, finite, up, counts[i], ncards[i])
    values = stand.copy()
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
    for ci in range(j):
        t = class_total[ci]
        soft = class_soft[ci]
        gain = 0.0
        members = 0
        for i in range(k):
            if totals[i] != t or softs[i] != soft:
                continue
            members += 1
            hits[i] = _hit_sum(
                i, values, base, n0, finite, up, counts, hard, ncards, skeys, perm, keys, peek
            )
            gain += weights[i] * (hits[i] - stand[i])
        decide_hit = t < 21 and members > 0 and gain > 0.0
        if soft:
            hit_soft[up, t] = 1 if decide_hit else 0
        else:
            hit_hard[up, t] = 1 if decide_hit else 0
        if decide_hit:
            for i in range(k):
                if totals[i] == t and softs[i] == soft:
                    values[i] = hits[i]
    may_surrender = rules[R_LS] != 0.0
    for t in range(4, 22):
        for soft_i in range(2):
            soft = soft_i == 1
            sum_hs = 0.0
            sum_d = 0.0
            sum_r = 0.0
            members = 0
            for i in range(k):
                if ncards[i] != 2 or totals[i] != t or softs[i] != soft:
                    continue
                if t == 21 and soft:
                    continue  # Blackjack: no decision
                members += 1
                sum_hs += weights[i] * values[i]
                sum_d += weights[i] * _double_sum(
                    i,
                    done,
                    dists,
                    child,
                    drawn,
                    size,
                    scratch,
                    base,
                    n0,
                    finite,
                    up,
                    counts,
                    hard,
                    ace,
                    ncards,
                    skeys,
                    perm,
                    keys,
                    peek,
                )
                sum_r += weights[i] * (-0.5 * pnb[i])
            code = 0
            best = sum_hs
            if members > 0 and dbl_mask[t] == 1 and t < 21 and sum_d > best:
                code = 1
                best = sum_d
            if members > 0 and may_surrender and sum_r > best:
                code = 2
            if soft:
                first_soft[up, t] = code
            else:
                first_hard[up, t] = code
    for c in range(10):
        if (finite and base[c] < 2.0) or rules[R_SPLIT_ALLOWED] == 0.0:
            split_table[up, c] = 0
            continue
        i = _find(skeys, perm, 2 << (KEY_BITS * c))
        plain = _first_value(
            i,
            True,
            may_surrender,
            values,
            dbl_mask,
            first_hard,
            first_soft,
            done,
            dists,
            child,
            drawn,
            size,
            scratch,
            base,
            n0,
            finite,
            up,
            counts,
            hard,
            ace,
            ncards,
            skeys,
            perm,
            keys,
            peek,
        )
        sv, _, _ = split_value(
            child,
            drawn,
            size,
            scratch,
            base,
            n0,
            finite,
            up,
            rules,
            dbl_mask,
            hit_hard,
            hit_soft,
            first_hard,
            first_soft,
            c,
        )
        split_table[up, c] = 1 if sv > plain else 0


@njit(cache=True)
def two_card_values(
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    rules,
    dbl_mask,
    hit_hard,
    hit_soft,
    first_hard,
    first_soft,
    split_table,
):
    """For each two-card hand (c1 <= c2) against ``up``: the probability of the deal (given the
    up card), the probability of no dealer Blackjack, and the unnormalised values of stand, hit
    (then the table), double, split, surrender and the table's play, and the return term (the
    play less the original wager lost to a dealer Blackjack; a player Blackjack's payout)."""
    peek = peek_mode(rules, False)
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base, finite, -1)
    k = counts.shape[0]
    done = np.zeros(k, dtype=np.bool_)
    dists = np.zeros((k, 7))
    values = table_values(
        child,
        drawn,
        size,
        scratch,
        base,
        n0,
        finite,
        up,
        peek,
        hit_hard,
        hit_soft,
        counts,
        hard,
        ace,
        ncards,
        keys,
        skeys,
        perm,
        done,
        dists,
    )
    out = np.full((10, 10, 9), np.nan)
    may_surrender = rules[R_LS] != 0.0
    bj_pays = rules[R_BJ_PAYS]
    for c1 in range(10):
        for c2 in range(c1, 10):
            key = (1 << (KEY_BITS * c1)) + (1 << (KEY_BITS * c2))
            i = _find(skeys, perm, key)
            if i < 0:
                continue
            if finite:
                prob = base[c1] / n0 * (base[c2] - (1.0 if c1 == c2 else 0.0)) / (n0 - 1.0)
            else:
                prob = base[c1] / n0 * base[c2] / n0
            if c1 != c2:
                prob *= 2.0
            pnb = _pnb(base, n0, finite, up, counts[i], 2)
            row = out[c1, c2]
            row[V_PROB] = prob
            row[V_PNB] = pnb
            if c1 == 0 and c2 == 9:
                row[V_RETURN] = bj_pays * pnb
                continue
            total = _total(hard[i], ace[i])
            _ensure(i, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards)
            row[V_STAND] = _stand_from_dist(dists[i], total)
            row[V_HIT] = _hit_sum(
                i, values, base, n0, finite, up, counts, hard, ncards, skeys, perm, keys, peek
            )
            if dbl_mask[total] == 1:
                row[V_DOUBLE] = _double_sum(
                    i,
                    done,
                    dists,
                    child,
                    drawn,
                    size,
                    scratch,
                    base,
                    n0,
                    finite,
                    up,
                    counts,
                    hard,
                    ace,
                    ncards,
                    skeys,
                    perm,
                    keys,
                    peek,
                )
            if c1 == c2 and rules[R_SPLIT_ALLOWED] != 0.0:
                sv, _, _ = split_value(
                    child,
                    drawn,
                    size,
                    scratch,
                    base,
                    n0,
                    finite,
                    up,
                    rules,
                    dbl_mask,
                    hit_hard,
                    hit_soft,
                    first_hard,
                    first_soft,
                    c1,
                )
                row[V_SPLIT] = sv
            if may_surrender:
                row[V_SURRENDER] = -0.5 * pnb
            if c1 == c2 and split_table[up, c1] == 1:
                play = row[V_SPLIT]
            else:
                play = _first_value(
                    i,
                    True,
                    may_surrender,
                    values,
                    dbl_mask,
                    first_hard,
                    first_soft,
                    done,
                    dists,
                    child,
                    drawn,
                    size,
                    scratch,
                    base,
                    n0,
                    finite,
                    up,
                    counts,
                    hard,
                    ace,
                    ncards,
                    skeys,
                    perm,
                    keys,
                    peek,
                )
            row[V_PLAY] = play
            row[V_RETURN] = play - (1.0 - pnb)
    return out


@njit(cache=True)
def ez_bust_value(
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    up,
    rules,
    dbl_mask,
    hit_hard,
    hit_soft,
    first_hard,
    first_soft,
    split_table,
    push_all,
):
    """EZ Bust against up card ``up`` (2-6) on a single-player table: the probabilities of a
    win, a loss and a push per wager placed, and the expected number of wagers per round. The player plays the tables; the dealer's bust probability is exact
    for the player's final cards (for a split, for the pair). With ``push_all`` (633b.16(g)) the
    wager pushes when the player's hand is a Blackjack or busted (for a split: when both split
    hands bust, taken as independent)."""
    counts, hard, ace, ncards, keys, skeys, perm = enumerate_hands(base, finite, -1)
    k = counts.shape[0]
    done = np.zeros(k, dtype=np.bool_)
    dists = np.zeros((k, 7))
    ez = np.zeros((k, 3))  # win, lose, push under the hit/stand table
    order = np.argsort(-hard)
    leaf = np.zeros(3)
    for oi in range(k):
        i = order[oi]
        total = _total(hard[i], ace[i])
        soft = _is_soft(hard[i], ace[i])
        hit = total < 21 and (hit_soft[up, total] if soft else hit_hard[up, total]) == 1
        if not hit:
            _ensure(i, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards)
            ez[i, 0] = dists[i, BUST]
            ez[i, 1] = 1.0 - dists[i, BUST]
            continue
        _ez_draw(
            i,
            False,
            ez,
            leaf,
            child,
            drawn,
            size,
            scratch,
            base,
            n0,
            finite,
            counts,
            hard,
            ncards,
            keys,
            skeys,
            perm,
            push_all,
        )
        for q in range(3):
            ez[i, q] = leaf[q]
    win = 0.0
    lose = 0.0
    push = 0.0
    wagers = 1.0
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
            _ensure(i, done, dists, child, drawn, size, scratch, base, n0, finite, counts, ncards)
            pb = dists[i, BUST]
            total = _total(hard[i], ace[i])
            soft = _is_soft(hard[i], ace[i])
            code = first_soft[up, total] if soft else first_hard[up, total]
            if c1 == 0 and c2 == 9:
                if push_all:
                    push += prob
                else:
                    win += prob * pb
                    lose += prob * (1.0 - pb)
            elif c1 == c2 and split_table[up, c1] == 1:
                _, one, hands = split_value(
                    child,
                    drawn,
                    size,
                    scratch,
                    base,
                    n0,
                    finite,
                    up,
                    rules,
                    dbl_mask,
                    hit_hard,
                    hit_soft,
                    first_hard,
                    first_soft,
                    c1,
                )
                both = one * one if push_all else 0.0
                # the player places one more EZ Bust wager at the decision after each split
                # (none after split aces that take one card each): weight by the wagers
                weight = 1.0 if c1 == 0 and rules[R_HIT_SPLIT_ACES] == 0.0 else hands
                wagers += prob * (weight - 1.0)
                prob *= weight
                win += prob * (1.0 - both) * pb
                lose += prob * (1.0 - both) * (1.0 - pb)
                push += prob * both
            elif code == 1 and total < 21 and dbl_mask[total] == 1:
                _ez_draw(
                    i,
                    True,
                    ez,
                    leaf,
                    child,
                    drawn,
                    size,
                    scratch,
                    base,
                    n0,
                    finite,
                    counts,
                    hard,
                    ncards,
                    keys,
                    skeys,
                    perm,
                    push_all,
                )
                win += prob * leaf[0]
                lose += prob * leaf[1]
                push += prob * leaf[2]
            elif code == 2 and rules[R_LS] != 0.0:
                win += prob * pb
                lose += prob * (1.0 - pb)
            else:
                win += prob * ez[i, 0]
                lose += prob * ez[i, 1]
                push += prob * ez[i, 2]
    return win / wagers, lose / wagers, push / wagers, wagers


@njit(cache=True)
def _ez_draw(
    i,
    final,
    ez,
    leaf,
    child,
    drawn,
    size,
    scratch,
    base,
    n0,
    finite,
    counts,
    hard,
    ncards,
    keys,
    skeys,
    perm,
    push_all,
):
    """EZ Bust outcome of drawing one card to hand ``i``: then the table (or stand if
    ``final``, a double). Written into ``leaf``."""
    for q in range(3):
        leaf[q] = 0.0
    denom = n0 - ncards[i] * finite
    rem = counts[i].copy()
    for r in range(10):
        cnt = base[r] - rem[r] * finite
        if cnt <= 0.0:
            continue
        p = cnt / denom
        if hard[i] + r + 1 > 21:
            if push_all:
                leaf[2] += p
            else:
                rem[r] += 1
                d = _dealer_for(child, drawn, size, scratch, base, n0, finite, rem, ncards[i] + 1)
                rem[r] -= 1
                leaf[0] += p * d[BUST]
                leaf[1] += p * (1.0 - d[BUST])
            continue
        j = _find(skeys, perm, keys[i] + (1 << (KEY_BITS * r)))
        if final:
            d = _dealer_for(child, drawn, size, scratch, base, n0, finite, counts[j], ncards[j])
            leaf[0] += p * d[BUST]
            leaf[1] += p * (1.0 - d[BUST])
        else:
            for q in range(3):
                leaf[q] += p * ez[j, q]
