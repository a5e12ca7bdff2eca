# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernels of the simulation: shuffle shoes from given random words, play the classic
game (Chapter 633a with EZ Bust, 633b.16) by the generated strategy, and count results.

The kernels are the engine's fast twin: they deal in the engine's order (seat card, up card,
seat card, hole card), peek under an ace or ten-value up card (without the peek, a dealer
Blackjack found at the end takes the original wager, § 633a.10(b), § 633a.11(d)), place an EZ
Bust wager against 2–6 (and one more at the player's next decision after each split, as the
engine's bot does), play every hand from the dealer's left by the tables, and draw the dealer's
hand only when the engine would (a live hand, or a live EZ Bust wager, A-22). One seat, one
unit per round.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_HANDS = 8
NET_BINS = 41
"""Histogram of a round's main-wager net in half units, -10 … +10."""

# per-hand outcome counters
O_BLACKJACK = 0
O_WIN = 1
O_WIN_DOUBLE = 2
O_PUSH = 3
O_LOSE = 4
O_LOSE_DOUBLE = 5
O_SURRENDER = 6
O_WIN_SPLIT = 7
O_PUSH_SPLIT = 8
O_LOSE_SPLIT = 9
OUTCOMES = 10

# stats vector
S_ROUNDS = 0
S_MAIN = 1
S_MAIN_SQ = 2
S_EZ_WAGERS = 3
S_EZ_NET = 4
S_EZ_SQ = 5
S_EZ_WIN = 6
S_EZ_LOSE = 7
S_EZ_PUSH = 8
S_CARDS = 9
S_SHOES = 10
S_SPLITS = 11
S_DOUBLES = 12
S_MAIN_WAGERED = 13
STATS = 14

# rules vector
K_H17 = 0
K_DAS = 1
K_MAX_HANDS = 2
K_RSA = 3
K_HIT_SPLIT_ACES = 4
K_LS = 5
K_BJ_PAYS = 6
K_EZ = 7
K_EZ_PUSH_ALL = 8
K_PEEK = 9


@njit(cache=True, inline="always")
def _uniform_below(words, i, bound):
    """A number in [0, bound) from the i-th 32-bit half of ``words`` (multiply-shift)."""
    w = words[i >> 1]
    half = (w >> np.uint64(32)) if (i & 1) == 0 else (w & np.uint64(0xFFFFFFFF))
    return int((half * np.uint64(bound)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _deal(deck, p, words):
    """The card at position ``p``, fixing it by one forward Fisher-Yates step: positions are
    fixed in order, so the cards dealt are a prefix of the full shuffle of ``deck``."""
    n = deck.shape[0]
    j = p + _uniform_below(words, p, n - p)
    c = deck[j]
    deck[j] = deck[p]
    deck[p] = c
    return c


@njit(cache=True)
def shuffle_shoes(words, decks, out):
    """Fill ``out`` (shoes x cards) with the full shuffles of ``decks`` decks (card indices
    0-51, rank-major) that the random ``words`` (one row per shoe) drive."""
    shoes, size = out.shape
    for s in range(shoes):
        row = out[s]
        for i in range(size):
            row[i] = i % 52
        for p in range(size):
            _deal(row, p, words[s])


@njit(cache=True)
def card_classes():
    """Point class (0 = ace … 9 = ten-value) of each card index 0-51 (rank-major)."""
    out = np.empty(52, dtype=np.int64)
    for i in range(52):
        rank = i // 4 + 1
        out[i] = 0 if rank == 1 else min(rank, 10) - 1
    return out


@njit(cache=True, inline="always")
def _total(hard, ace):
    if ace and hard <= 11:
        return hard + 10
    return hard


@njit(cache=True, inline="always")
def play_round(shoe, words, pos, end, rules, tab, res, counts, work, bet):
    """Play one round from ``shoe[pos:]``; return the new position, or -1 when the shoe ran out
    (the round is void). ``res`` receives: main net, EZ net, EZ wagers, main amount wagered,
    splits, doubles; ``counts`` the per-hand outcome counters."""
    h17 = rules[K_H17] != 0.0
    das = rules[K_DAS] != 0.0
    max_hands = int(rules[K_MAX_HANDS])
    rsa = rules[K_RSA] != 0.0
    one_card = rules[K_HIT_SPLIT_ACES] == 0.0
    ls = rules[K_LS] != 0.0
    bj_pays = rules[K_BJ_PAYS]
    ez_on = rules[K_EZ] != 0.0
    push_all_rule = rules[K_EZ_PUSH_ALL] != 0.0
    peek = rules[K_PEEK] != 0.0
    if pos + 4 > end:
        return -1
    p1 = _deal(shoe, pos, words)
    up = _deal(shoe, pos + 1, words)
    p2 = _deal(shoe, pos + 2, words)
    hole = _deal(shoe, pos + 3, words)
    pos += 4
    for q in range(6):
        res[q] = 0.0
    player_bj = (p1 == 0 and p2 == 9) or (p1 == 9 and p2 == 0)
    dealer_bj = (up == 0 and hole == 9) or (up == 9 and hole == 0)
    if dealer_bj and peek:
        # the peek (§ 633a.2): no decisions, no EZ Bust (up card is an ace or ten-value)
        res[3] = 1.0
        if player_bj:
            counts[O_PUSH] += 1
        else:
            res[0] = -1.0
            counts[O_LOSE] += 1
        return pos
    ez = 0
    if ez_on and 1 <= up <= 5:
        ez = 1
    work[6, 0] = 0
    work[7, 0] = 0
    work[5, 0] = 0
    nh = 1
    work[0, 0] = p1 + p2 + 2
    work[1, 0] = 1 if (p1 == 0 or p2 == 0) else 0
    work[2, 0] = 2
    bet[0] = 1.0
    work[3, 0] = p1
    work[4, 0] = 1 if p2 == 0 else 0
    splits = 0
    doubles = 0
    if player_bj:
        pass
    else:
        i = 0
        while i < nh:
            doubled = False
            while True:
                if work[7, i] != 0:
                    if pos >= end:
                        return -1
                    c = _deal(shoe, pos, words)
                    pos += 1
                    work[0, i] += c + 1
                    if c == 0:
                        work[1, i] = 1
                    work[2, i] += 1
                    if work[2, i] == 2:
                        work[4, i] = 1 if c == 0 else 0
                    work[7, i] = 0
                total = _total(work[0, i], work[1, i] != 0)
                if total >= 21 or doubled:
                    break
                if (
                    work[5, i] != 0
                    and one_card
                    and work[2, i] == 2
                    and not (work[4, i] != 0 and rsa and nh < max_hands)
                ):
                    break
                # a player decision: the bot first places the EZ Bust wagers its splits allow
                if ez > 0:
                    ez = 1 + splits
                soft = work[1, i] != 0 and work[0, i] <= 11
                from_split = nh > 1
                if work[2, i] == 2:
                    pair = work[0, i] == 2 * (work[3, i] + 1) and (
                        work[3, i] != 0 or work[4, i] != 0
                    )
                    if (
                        pair
                        and nh < max_hands
                        and (work[5, i] == 0 or rsa)
                        and tab[4, up, work[3, i]] == 1
                    ):
                        c0 = work[3, i]
                        for j in range(nh, i + 1, -1):
                            work[0, j] = work[0, j - 1]
                            work[1, j] = work[1, j - 1]
                            work[2, j] = work[2, j - 1]
                            bet[j] = bet[j - 1]
                            work[3, j] = work[3, j - 1]
                            work[4, j] = work[4, j - 1]
                            work[5, j] = work[5, j - 1]
                            work[6, j] = work[6, j - 1]
                            work[7, j] = work[7, j - 1]
                        nh += 1
                        for j in range(i, i + 2):
                            work[0, j] = c0 + 1
                            work[1, j] = 1 if c0 == 0 else 0
                            work[2, j] = 1
                            bet[j] = 1.0
                            work[3, j] = c0
                            work[4, j] = 0
                            work[5, j] = 1 if c0 == 0 else 0
                            work[6, j] = 0
                            work[7, j] = 1
                        splits += 1
                        continue
                    code = tab[3, up, total] if soft else tab[2, up, total]
                    can_double = (
                        (not from_split or das)
                        and not (work[5, i] != 0 and one_card)
                        and tab[4, 10, total] == 1
                    )
                    if code == 1 and can_double:
                        bet[i] = 2.0
                        doubles += 1
                        doubled = True
                        work[7, i] = 1
                        continue
                    if code == 2 and ls and nh == 1:
                        work[6, i] = 1
                        break
                if work[5, i] != 0 and one_card:
                    break  # only a resplit was possible; stand
                hit = (tab[1, up, total] if soft else tab[0, up, total]) == 1
                if not hit:
                    break
                work[7, i] = 1
            i += 1
    # the dealer (§ 633a.7): turn the hole card, draw while a wager needs it
    live = False
    all_bj_or_bust = True
    for i in range(nh):
        busted = work[0, i] > 21
        bj = player_bj and i == 0
        if not busted and work[6, i] == 0 and not bj:
            live = True
        if not (bj or busted):
            all_bj_or_bust = False
    push_all = False
    draw = live
    if not live and ez > 0:
        if push_all_rule and all_bj_or_bust:
            push_all = True
        else:
            draw = True
    d_hard = up + hole + 2
    d_ace = up == 0 or hole == 0
    d_cards = 2
    if draw:
        while True:
            t = _total(d_hard, d_ace)
            soft17 = t == 17 and d_ace and d_hard <= 11
            if t > 17 or (t == 17 and not (h17 and soft17)):
                break
            if pos >= end:
                return -1
            c = _deal(shoe, pos, words)
            pos += 1
            d_hard += c + 1
            d_ace = d_ace or c == 0
            d_cards += 1
    d_total = _total(d_hard, d_ace)
    d_bust = d_total > 21
    # EZ Bust first (633b.16(h))
    if ez > 0:
        if push_all:
            res[1] = 0.0
        elif d_cards >= 3 and d_bust:
            res[1] = 1.0 * ez
        else:
            res[1] = -1.0 * ez
        res[2] = ez
    net = 0.0
    wagered = 0.0
    # without the peek a dealer Blackjack collects only the original wager; busted hands stay
    # lost (§ 633a.10(b), § 633a.11(d), A-10): what is left of the original wager to lose
    still = 1.0
    for i in range(nh):
        if work[0, i] > 21:
            still -= bet[i]
    for i in range(nh):
        b = bet[i]
        wagered += b
        t = _total(work[0, i], work[1, i] != 0)
        is_split = nh > 1
        if dealer_bj and t <= 21 and not (player_bj and i == 0):
            lost = b if work[6, i] != 0 else min(max(still, 0.0), b)
            still -= lost
            net -= lost
            if lost > 0.0:
                counts[O_LOSE_SPLIT if is_split else (O_LOSE_DOUBLE if b > 1.0 else O_LOSE)] += 1
            else:
                counts[O_PUSH_SPLIT if is_split else O_PUSH] += 1
        elif dealer_bj and t <= 21:
            counts[O_PUSH] += 1
        elif work[6, i] != 0:
            net -= 0.5
            counts[O_SURRENDER] += 1
        elif t > 21:
            net -= b
            counts[O_LOSE_SPLIT if is_split else (O_LOSE_DOUBLE if b > 1.0 else O_LOSE)] += 1
        elif player_bj and i == 0:
            net += bj_pays
            counts[O_BLACKJACK] += 1
        elif d_bust or t > d_total:
            net += b
            counts[O_WIN_SPLIT if is_split else (O_WIN_DOUBLE if b > 1.0 else O_WIN)] += 1
        elif t == d_total:
            counts[O_PUSH_SPLIT if is_split else O_PUSH] += 1
        else:
            net -= b
            counts[O_LOSE_SPLIT if is_split else (O_LOSE_DOUBLE if b > 1.0 else O_LOSE)] += 1
    res[0] = net
    res[3] = wagered
    res[4] = splits
    res[5] = doubles
    return pos


@njit(cache=True)
def pack_tables(hit_hard, hit_soft, first_hard, first_soft, split_t, dbl_mask):
    """The strategy tables in one array: hit hard, hit soft, first hard, first soft by
    ``[table, up, total]``; splits in ``[4, up, pair]`` and the double mask in ``[4, 10, total]``."""
    tab = np.zeros((5, 11, 22), dtype=np.int64)
    tab[0, :10] = hit_hard
    tab[1, :10] = hit_soft
    tab[2, :10] = first_hard
    tab[3, :10] = first_soft
    tab[4, :10, :10] = split_t
    tab[4, 10] = dbl_mask
    return tab


@njit(cache=True)
def play_shoes(
    words,
    decks,
    cut,
    rules,
    hit_hard,
    hit_soft,
    first_hard,
    first_soft,
    split_t,
    dbl_mask,
    stats,
    hist,
    counts,
):
    """Play the shoe of each row of random ``words`` until the cut card, accumulating
    ``stats``, the round-net histogram ``hist`` and the per-hand outcome ``counts``."""
    cls = card_classes()
    res = np.zeros(6)
    work = np.zeros((8, MAX_HANDS), dtype=np.int64)
    bet = np.zeros(MAX_HANDS)
    tab = pack_tables(hit_hard, hit_soft, first_hard, first_soft, split_t, dbl_mask)
    end = 52 * decks
    template = np.empty(end, dtype=np.int8)
    for i in range(end):
        template[i] = cls[i % 52]
    shoe = np.empty(end, dtype=np.int8)
    for s in range(words.shape[0]):
        shoe[:] = template
        row = words[s]
        pos = 0
        while pos < cut:
            new = play_round(shoe, row, pos, end, rules, tab, res, counts, work, bet)
            if new < 0:
                break
            stats[S_CARDS] += new - pos
            pos = new
            net = res[0]
            stats[S_ROUNDS] += 1.0
            stats[S_MAIN] += net
            stats[S_MAIN_SQ] += net * net
            stats[S_MAIN_WAGERED] += res[3]
            stats[S_SPLITS] += res[4]
            stats[S_DOUBLES] += res[5]
            b = round(net * 2.0) + NET_BINS // 2
            hist[min(max(b, 0), NET_BINS - 1)] += 1
            wagers = res[2]
            if wagers > 0:
                ez_net = res[1]
                stats[S_EZ_WAGERS] += wagers
                stats[S_EZ_NET] += ez_net
                stats[S_EZ_SQ] += ez_net * ez_net / wagers
                if ez_net > 0:
                    stats[S_EZ_WIN] += wagers
                elif ez_net < 0:
                    stats[S_EZ_LOSE] += wagers
                else:
                    stats[S_EZ_PUSH] += wagers
        stats[S_SHOES] += 1.0


@njit(cache=True)
def record_shoe(
    words, decks, cut, rules, hit_hard, hit_soft, first_hard, first_soft, split_t, dbl_mask, out
):
    """Play the shoe of one row of random ``words`` until the cut card and write each round's
    (main net, EZ net, EZ wagers, cards used) into ``out``; return the number of rounds."""
    cls = card_classes()
    end = 52 * decks
    shoe = np.empty(end, dtype=np.int8)
    for i in range(end):
        shoe[i] = cls[i % 52]
    res = np.zeros(6)
    work = np.zeros((8, MAX_HANDS), dtype=np.int64)
    bet = np.zeros(MAX_HANDS)
    tab = pack_tables(hit_hard, hit_soft, first_hard, first_soft, split_t, dbl_mask)
    counts = np.zeros(OUTCOMES, dtype=np.int64)
    pos = 0
    n = 0
    while pos < cut and n < out.shape[0]:
        new = play_round(shoe, words, pos, end, rules, tab, res, counts, work, bet)
        if new < 0:
            break
        out[n, 0] = res[0]
        out[n, 1] = res[1]
        out[n, 2] = res[2]
        out[n, 3] = new - pos
        n += 1
        pos = new
    return n
