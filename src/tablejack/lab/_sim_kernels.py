# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernels of the simulation: deal seeded shoes, play the classic game (Chapter 633a with
EZ Bust, 633b.16) by the generated strategy, and count results.

The kernels are the engine's fast twin: they deal in the engine's order (seat card, up card,
seat card, hole card), peek under an ace or ten-value up card, place an EZ Bust wager against
2–6 (and one more at the player's next decision after each split, as the engine's bot does),
play every hand from the dealer's left by the tables, and draw the dealer's hand only when the
engine would (a live hand, or a live EZ Bust wager, A-22). One seat, one unit per round.

**Shoes.** Shoe ``index`` of a run is the forward Fisher-Yates shuffle of its decks driven by
the counter-based SplitMix64 stream of the shoe's key: position ``p`` is fixed by the high 32
bits of ``mix64(key + (p + 1) * GOLDEN)`` (multiply-shift to the positions left), and the
key is ``mix64(run[0] ^ mix64(run[1] + index * GOLDEN))`` for the run's two 64-bit words. The kernel
fixes each position as it deals it, so the cards dealt are a prefix of the full shuffle
(:func:`shuffle_shoe`) and no random number is made for a card never dealt.

**Speed.** A round is played in the body of :func:`play_shoes`'s loop, not in a function of
its own: numba increments and decrements the reference count of every array handed to a
function (atomic operations, twice per array per call), which cost more than the round itself.
A round with one hand (all but about 2.5% of them) is played in scalar variables with the
first decision, the hit decision, the dealer's stand and the settlement read from small tables
made once per call (:func:`fast_tables`); only a round whose first decision is a split calls
:func:`play_split_hands`, the general loop over the hands in ``work``. A call plays many shoes
and keeps its sums in variables, writing them once at the end.
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

SINGLE_OUTCOME = (O_LOSE, O_PUSH, O_WIN, O_LOSE_DOUBLE, O_PUSH, O_WIN_DOUBLE)
"""The outcome counter of an unsplit hand by ``versus + 1 + 3 * doubled``."""

# first decision of an unsplit two-card hand (fast_tables)
A_STAND = 0
A_HIT = 1
A_DOUBLE = 2
A_SURRENDER = 3

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def mix64(z):
    """SplitMix64's output function (Steele, Lea and Flood 2014): a bijective 64-bit mix."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def shoe_key(run, index):
    """The key of shoe ``index`` of the run whose two 64-bit words are ``run``."""
    return mix64(run[0] ^ mix64(run[1] + np.uint64(index) * GOLDEN))


@njit(cache=True, inline="always")
def deal(shoe, p, key):
    """The card at position ``p``, fixing it by one forward Fisher-Yates step whose random
    number is the SplitMix64 output ``p + 1`` of ``key``: positions are fixed in order, so the
    cards dealt are a prefix of the full shuffle of ``shoe``."""
    n = shoe.shape[0]
    r = mix64(key + np.uint64(p + 1) * GOLDEN) >> np.uint64(32)
    j = p + np.int64((r * np.uint64(n - p)) >> np.uint64(32))
    c = shoe[j]
    shoe[j] = shoe[p]
    shoe[p] = c
    return c


@njit(cache=True)
def shuffle_shoe(run, index, decks, out):
    """Fill ``out`` with the full shuffle of shoe ``index`` of ``run``: ``decks`` decks of card
    indices 0-51 (rank-major), in dealing order."""
    size = out.shape[0]
    for i in range(size):
        out[i] = i % 52
    key = shoe_key(run, index)
    for p in range(size):
        deal(out, p, key)


@njit(cache=True, inline="always")
def card_class(card):
    """Point class (0 = ace … 9 = ten-value) of card index ``card`` (0-51, rank-major)."""
    r = card // 4
    return 9 if r > 9 else r


@njit(cache=True, inline="always")
def hand_total(hard, ace):
    if ace and hard <= 11:
        return hard + 10
    return hard


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
def fast_tables(tab, ls):
    """The tables of a one-hand round, by ``[soft, up, total]`` (int8): ``hit`` (1 hit, 0 stand)
    and ``first``, the first decision of the unsplit two-card hand (:data:`A_STAND`,
    :data:`A_HIT`, :data:`A_DOUBLE` where the strategy doubles and the total may double,
    :data:`A_SURRENDER` where it surrenders and the rules allow it); and ``stand`` by
    ``[hard, ace, h17]``, 1 where the dealer's hand stands (bust included); ``versus`` by
    ``[player total, dealer total]``: 1 the player's hand wins, 0 pushes, -1 loses."""
    hit = np.zeros((2, 10, 32), dtype=np.int8)
    first = np.zeros((2, 10, 32), dtype=np.int8)
    for soft in range(2):
        for up in range(10):
            for total in range(21):
                h = tab[1, up, total] if soft == 1 else tab[0, up, total]
                code = tab[3, up, total] if soft == 1 else tab[2, up, total]
                hit[soft, up, total] = 1 if h == 1 else 0
                if code == 1 and tab[4, 10, total] == 1:
                    first[soft, up, total] = A_DOUBLE
                elif code == 2 and ls:
                    first[soft, up, total] = A_SURRENDER
                else:
                    first[soft, up, total] = A_HIT if h == 1 else A_STAND
    stand = np.zeros((32, 2, 2), dtype=np.int8)
    for hard in range(32):
        for ace in range(2):
            for h17 in range(2):
                t = hand_total(hard, ace == 1)
                soft17 = t == 17 and ace == 1 and hard <= 11
                stands = t > 17 or (t == 17 and not (h17 == 1 and soft17))
                stand[hard, ace, h17] = 1 if stands else 0
    versus = np.zeros((32, 32), dtype=np.int64)
    for t in range(32):
        for d in range(32):
            if t <= 21 and (d > 21 or t > d):
                versus[t, d] = 1
            elif t <= 21 and t == d:
                versus[t, d] = 0
            else:
                versus[t, d] = -1
    return hit, first, stand, versus


@njit(cache=True)
def play_split_hands(shoe, key, pos, end, p1, p2, up, ez, rules, tab, work, bet, by_index):
    """Play a round whose first decision is a split: every hand in ``work`` (hard total, ace,
    cards, first card, second card an ace, split ace, surrendered, needs a card), inserted to
    the right of the hand split and completed left to right. Returns (pos or -1 when the shoe
    ran out, hands, splits, doubles, EZ Bust wagers). The shoe holds card indices when
    ``by_index``, point classes otherwise."""
    das = rules[K_DAS] != 0.0
    max_hands = int(rules[K_MAX_HANDS])
    rsa = rules[K_RSA] != 0.0
    one_card = rules[K_HIT_SPLIT_ACES] == 0.0
    ls = rules[K_LS] != 0.0
    work[0, 0] = p1 + p2 + 2
    work[1, 0] = 1 if (p1 == 0 or p2 == 0) else 0
    work[2, 0] = 2
    work[3, 0] = p1
    work[4, 0] = 1 if p2 == 0 else 0
    work[5, 0] = 0
    work[6, 0] = 0
    work[7, 0] = 0
    bet[0] = 1.0
    nh = 1
    splits = 0
    doubles = 0
    i = 0
    while i < nh:
        doubled = False
        while True:
            if work[7, i] != 0:
                if pos >= end:
                    return -1, nh, splits, doubles, ez
                c = deal(shoe, pos, key)
                if by_index:
                    c = card_class(c)
                pos += 1
                work[0, i] += c + 1
                if c == 0:
                    work[1, i] = 1
                work[2, i] += 1
                if work[2, i] == 2:
                    work[4, i] = 1 if c == 0 else 0
                work[7, i] = 0
            total = hand_total(work[0, i], work[1, i] != 0)
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
                pair = work[0, i] == 2 * (work[3, i] + 1) and (work[3, i] != 0 or work[4, i] != 0)
                if (
                    pair
                    and nh < max_hands
                    and (work[5, i] == 0 or rsa)
                    and tab[4, up, work[3, i]] == 1
                ):
                    c0 = work[3, i]
                    for j in range(nh, i + 1, -1):
                        for q in range(8):
                            work[q, j] = work[q, j - 1]
                        bet[j] = bet[j - 1]
                    nh += 1
                    for j in range(i, i + 2):
                        work[0, j] = c0 + 1
                        work[1, j] = 1 if c0 == 0 else 0
                        work[2, j] = 1
                        work[3, j] = c0
                        work[4, j] = 0
                        work[5, j] = 1 if c0 == 0 else 0
                        work[6, j] = 0
                        work[7, j] = 1
                        bet[j] = 1.0
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
    return pos, nh, splits, doubles, ez


@njit(cache=True, inline="always")
def hand_outcome(t, b, split, d_total, d_bust):
    """(net, outcome counter) of a hand of total ``t`` and wager ``b`` that was neither
    surrendered nor a Blackjack, against the dealer's ``d_total``."""
    if t <= 21 and (d_bust or t > d_total):
        return b, O_WIN_SPLIT if split else (O_WIN_DOUBLE if b > 1.0 else O_WIN)
    if t <= 21 and t == d_total:
        return 0.0, O_PUSH_SPLIT if split else O_PUSH
    return -b, O_LOSE_SPLIT if split else (O_LOSE_DOUBLE if b > 1.0 else O_LOSE)


@njit(cache=True)
def settle_split_hands(work, bet, nh, d_total, d_bust, counts):
    """Settle the hands of a split round; (net, amount wagered)."""
    net = 0.0
    wagered = 0.0
    for i in range(nh):
        wagered += bet[i]
        if work[6, i] != 0:
            net -= 0.5
            counts[O_SURRENDER] += 1
        else:
            value, outcome = hand_outcome(
                hand_total(work[0, i], work[1, i] != 0), bet[i], True, d_total, d_bust
            )
            net += value
            counts[outcome] += 1
    return net, wagered


@njit(cache=True)
def play_shoes(run, first_shoe, shoes, decks, cut, rules, tab, stats, hist, counts, out):
    """Play shoes ``first_shoe`` … ``first_shoe + shoes - 1`` of ``run`` until the cut card,
    adding to ``stats``, the round-net histogram ``hist`` and the per-hand outcome ``counts``;
    the first ``len(out)`` rounds are also written into ``out`` (main net, EZ net, EZ wagers,
    cards used: the parity tests). Returns the number of rounds written.

    A round is played in this loop's body, not in a function of its own: numba counts the
    references of the arrays handed to a function on every call, which cost more than the
    round itself. A round that runs out of cards is void and ends its shoe."""
    h17 = 1 if rules[K_H17] != 0.0 else 0
    may_split = rules[K_MAX_HANDS] > 1.0
    bj_pays = rules[K_BJ_PAYS]
    ez_on = rules[K_EZ] != 0.0
    push_all_rule = rules[K_EZ_PUSH_ALL] != 0.0
    hit, first, stand, versus = fast_tables(tab, rules[K_LS] != 0.0)
    single_outcome = np.array(SINGLE_OUTCOME)
    work = np.zeros((8, MAX_HANDS), dtype=np.int64)
    bet = np.zeros(MAX_HANDS)
    end = 52 * decks
    template = np.empty(end, dtype=np.int8)
    for i in range(end):
        template[i] = card_class(i % 52)
    shoe = np.empty(end, dtype=np.int8)
    rounds = 0
    cards = 0
    main = 0.0
    main_sq = 0.0
    wagered = 0.0
    splits = 0
    doubles = 0
    ez_wagers = 0
    ez_sum = 0.0
    ez_sq = 0.0
    ez_win = 0
    ez_lose = 0
    ez_push = 0
    recorded = 0
    for s in range(first_shoe, first_shoe + shoes):
        for i in range(end):
            shoe[i] = template[i]
        key = shoe_key(run, s)
        pos = 0
        while pos < cut:
            start = pos
            if pos + 4 > end:
                break
            p1 = deal(shoe, pos, key)
            up = deal(shoe, pos + 1, key)
            p2 = deal(shoe, pos + 2, key)
            hole = deal(shoe, pos + 3, key)
            pos += 4
            player_bj = (p1 == 0 and p2 == 9) or (p1 == 9 and p2 == 0)
            net = 0.0
            bet_total = 1.0
            ez = 0
            ez_net = 0.0
            n_splits = 0
            n_doubles = 0
            if (up == 0 and hole == 9) or (up == 9 and hole == 0):
                # the peek (§ 633a.2): no decisions, no EZ Bust (up card an ace or ten-value)
                if player_bj:
                    counts[O_PUSH] += 1
                else:
                    net = -1.0
                    counts[O_LOSE] += 1
            else:
                if ez_on and 1 <= up <= 5:
                    ez = 1
                nh = 1
                hard = p1 + p2 + 2
                ace = 1 if (p1 == 0 or p2 == 0) else 0
                b = 1.0
                surrendered = False
                if may_split and p1 == p2 and tab[4, up, p1] == 1:
                    pos, nh, n_splits, n_doubles, ez = play_split_hands(
                        shoe, key, pos, end, p1, p2, up, ez, rules, tab, work, bet, False
                    )
                    if pos < 0:
                        break
                    live = False
                    all_bust = True
                    for i in range(nh):
                        if work[0, i] <= 21:
                            all_bust = False
                            if work[6, i] == 0:
                                live = True
                elif player_bj:
                    live = False
                    all_bust = True  # every hand a Blackjack or busted (633b.16(g))
                else:
                    # one hand, in variables: the first decision, then hits
                    soft = 1 if (ace == 1 and hard <= 11) else 0
                    action = first[soft, up, hard + 10 * soft]
                    surrendered = action == A_SURRENDER
                    if action == A_DOUBLE:
                        b = 2.0
                        n_doubles = 1
                    draw = A_HIT <= action <= A_DOUBLE  # a hit or the double's one card
                    while draw:
                        if pos >= end:
                            pos = -1
                            break
                        c = deal(shoe, pos, key)
                        pos += 1
                        hard += c + 1
                        if c == 0:
                            ace = 1
                        soft = 1 if (ace == 1 and hard <= 11) else 0
                        total = hard + 10 * soft
                        draw = n_doubles == 0 and total < 21 and hit[soft, up, total] == 1
                    if pos < 0:
                        break
                    live = hard <= 21 and not surrendered
                    all_bust = hard > 21
                # the dealer (§ 633a.7): turn the hole card, draw while a wager needs it
                d_hard = up + hole + 2
                d_ace = 1 if (up == 0 or hole == 0) else 0
                d_cards = 2
                push_all = not live and ez > 0 and push_all_rule and all_bust
                if live or (ez > 0 and not push_all):
                    while stand[d_hard, d_ace, h17] == 0:
                        if pos >= end:
                            pos = -1
                            break
                        c = deal(shoe, pos, key)
                        pos += 1
                        d_hard += c + 1
                        if c == 0:
                            d_ace = 1
                        d_cards += 1
                    if pos < 0:
                        break
                d_total = hand_total(d_hard, d_ace == 1)
                d_bust = d_total > 21
                # EZ Bust first (633b.16(h))
                if ez > 0 and not push_all:
                    ez_net = float(ez) if (d_cards >= 3 and d_bust) else -float(ez)
                if nh > 1:
                    net, bet_total = settle_split_hands(work, bet, nh, d_total, d_bust, counts)
                elif surrendered:
                    net = -0.5
                    counts[O_SURRENDER] += 1
                elif player_bj:
                    net = bj_pays
                    counts[O_BLACKJACK] += 1
                else:
                    v = versus[hand_total(hard, ace == 1), d_total]
                    net = b * v
                    counts[single_outcome[v + 1 + 3 * n_doubles]] += 1
                    bet_total = b
            cards += pos - start
            rounds += 1
            main += net
            main_sq += net * net
            wagered += bet_total
            splits += n_splits
            doubles += n_doubles
            bin_ = int(np.rint(net * 2.0)) + NET_BINS // 2
            hist[min(max(bin_, 0), NET_BINS - 1)] += 1
            if ez > 0:
                ez_wagers += ez
                ez_sum += ez_net
                ez_sq += ez_net * ez_net / ez
                if ez_net > 0:
                    ez_win += ez
                elif ez_net < 0:
                    ez_lose += ez
                else:
                    ez_push += ez
            if recorded < out.shape[0]:
                out[recorded, 0] = net
                out[recorded, 1] = ez_net
                out[recorded, 2] = ez
                out[recorded, 3] = pos - start
                recorded += 1
    stats[S_ROUNDS] += rounds
    stats[S_MAIN] += main
    stats[S_MAIN_SQ] += main_sq
    stats[S_MAIN_WAGERED] += wagered
    stats[S_SPLITS] += splits
    stats[S_DOUBLES] += doubles
    stats[S_EZ_WAGERS] += ez_wagers
    stats[S_EZ_NET] += ez_sum
    stats[S_EZ_SQ] += ez_sq
    stats[S_EZ_WIN] += ez_win
    stats[S_EZ_LOSE] += ez_lose
    stats[S_EZ_PUSH] += ez_push
    stats[S_CARDS] += cards
    stats[S_SHOES] += shoes
    return recorded


def record_shoe(run, index, decks, cut, rules, tab, out):
    """Play shoe ``index`` of ``run`` until the cut card and write each round's (main net, EZ
    net, EZ wagers, cards used) into ``out``; return the number of rounds."""
    stats = np.zeros(STATS)
    hist = np.zeros(NET_BINS, dtype=np.int64)
    counts = np.zeros(OUTCOMES, dtype=np.int64)
    return play_shoes(run, index, 1, decks, cut, rules, tab, stats, hist, counts, out)
