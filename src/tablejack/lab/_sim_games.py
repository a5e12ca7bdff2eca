# mypy: allow-untyped-defs, allow-untyped-calls
"""Numba kernels of the simulation of ``hybrid`` (PA 633c.5 version A, Buzzer Beater),
``hybrid-shared`` (version B: no hole card, Royal Match 21 with Crown Treasure, Bet the Set,
King's Bounty) and ``multi-action`` (NJ: three rounds against the dealer's first card).

One player (one position, one seat backing the three spots), one unit per wager, the generated
strategy; shoes hold card indices 0-51 (rank-major, :attr:`tablejack.core.cards.Card.index`) so
the side wagers see suits. Each kernel draws exactly the cards the engine draws:

* ``hybrid``: position card, up card, position card, hole card; the peek under an ace or
  ten-value settles a dealer Blackjack at once; otherwise the hands take the next (community)
  cards hand by hand (A-4) and the dealer always completes the hand to 17–21 ((s));
* ``hybrid-shared``: the shared start (player, dealer, player), then the player's cards, then
  the player's personal dealer hand (second card, then to 17–21; always completed, except after
  a player Blackjack, whose community card is the hole card only, (aa)(1));
* ``multi-action``: player, dealer's first card, player; a Blackjack against 2–9 is paid at
  once and a bust loses every spot, and then no dealer card is drawn; otherwise each of the
  three rounds draws the dealer's second card and, while a wager is open, more cards (A-28).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablejack.lab._sim_kernels import _total

GAME_HYBRID = 0
GAME_SHARED = 1
GAME_MULTI = 2

MAX_HANDS = 8

# rules vector
G_H17 = 0
G_DAS = 1
G_MAX_HANDS = 2
G_RSA = 3
G_HIT_SPLIT_ACES = 4
G_LS = 5
G_BJ_PAYS = 6
G_SPLIT_FULL = 7
G_DOUBLE_FULL = 8
G_CROWN = 9
G_SPLIT_ALLOWED = 10
G_SPOTS = 11
G_RULES = 12

# side pay tables (pay[k, first, second], net odds; -1 loses)
P_ROYAL_MATCH = 0
P_ROYAL_MATCH_CROWN = 1
P_BET_THE_SET = 2
P_KINGS_BOUNTY = 3
P_KINGS_BOUNTY_BJ = 4
P_ROYAL = 5
P_TABLES = 6

# result vector
R_MAIN = 0
R_SIDE1 = 1
R_SIDE2 = 2
R_SIDE3 = 3
R_WAGERED = 4
R_RESULTS = 5

# stats vector: rounds, shoes, cards, then sum and sum of squares of each result
ST_ROUNDS = 0
ST_SHOES = 1
ST_CARDS = 2
ST_SUM = 3  # 4 sums (main, side1..3)
ST_SQ = 7  # 4 sums of squares
ST_WAGERED = 11
ST_HITS = 12  # 4 counts of a positive result
STATS = 16


@njit(cache=True, inline="always")
def _deal(deck, p, words32):
    """The card at position ``p`` by one forward Fisher-Yates step, exactly as
    :func:`tablejack.lab._sim_kernels._deal` (the same shuffle), reading the random words as
    32-bit halves: half ``p`` of the 64-bit words is ``words32[p ^ 1]`` on a little-endian
    machine (the high half first)."""
    n = deck.shape[0]
    j = p + int((np.uint64(words32[p ^ 1]) * np.uint64(n - p)) >> np.uint64(32))
    c = deck[j]
    deck[j] = deck[p]
    deck[p] = c
    return c


@njit(cache=True, inline="always")
def _cls(card):
    r = card // 4
    return 9 if r > 9 else r


@njit(cache=True, inline="always")
def _play_player(shoe, words, pos, end, p1, p2, up, rules, tab, work, bet):
    """Play the player's hands by the tables (the classic kernel's loop: splits inserted to the
    right, completed left to right). Returns (pos or -1, hands, surrendered)."""
    das = rules[G_DAS] != 0.0
    max_hands = int(rules[G_MAX_HANDS])
    rsa = rules[G_RSA] != 0.0
    one_card = rules[G_HIT_SPLIT_ACES] == 0.0
    ls = rules[G_LS] != 0.0
    may_split = rules[G_SPLIT_ALLOWED] != 0.0
    nh = 1
    work[0, 0] = p1 + p2 + 2
    work[1, 0] = 1 if (p1 == 0 or p2 == 0) else 0
    work[2, 0] = 2
    work[3, 0] = p1
    work[4, 0] = 1 if p2 == 0 else 0
    work[5, 0] = 0
    work[6, 0] = 0
    work[7, 0] = 0
    bet[0] = 1.0
    i = 0
    while i < nh:
        doubled = False
        while True:
            if work[7, i] != 0:
                if pos >= end:
                    return -1, nh, False
                c = _cls(_deal(shoe, pos, words))
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
            soft = work[1, i] != 0 and work[0, i] <= 11
            from_split = nh > 1
            if work[2, i] == 2:
                pair = work[0, i] == 2 * (work[3, i] + 1) and (work[3, i] != 0 or work[4, i] != 0)
                if (
                    may_split
                    and pair
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
                        bet[j] = 1.0
                        work[3, j] = c0
                        work[4, j] = 0
                        work[5, j] = 1 if c0 == 0 else 0
                        work[6, j] = 0
                        work[7, j] = 1
                    continue
                code = tab[3, up, total] if soft else tab[2, up, total]
                can_double = (
                    (not from_split or das)
                    and not (work[5, i] != 0 and one_card)
                    and tab[4, 10, total] == 1
                )
                if code == 1 and can_double:
                    bet[i] = 2.0
                    doubled = True
                    work[7, i] = 1
                    continue
                if code == 2 and ls and nh == 1:
                    return pos, nh, True
            if work[5, i] != 0 and one_card:
                break
            hit = (tab[1, up, total] if soft else tab[0, up, total]) == 1
            if not hit:
                break
            work[7, i] = 1
        i += 1
    return pos, nh, False


@njit(cache=True, inline="always")
def _bb_label(total, blackjack):
    """Buzzer Beater label index: 0 = 19, 1 = 20, 2 = 21, 3 = Blackjack, -1 none."""
    if blackjack:
        return 3
    if 19 <= total <= 21:
        return total - 19
    return -1


@njit(cache=True)
def _buzzer(total, blackjack, d_total, d_blackjack, bb_pay):
    """The Buzzer Beater's net on a hand (PA 633c.5(u), (v)(3); A-5, A-14, A-15)."""
    if total > 21 or (d_total > 21 and not d_blackjack):
        return -1.0
    mine = 22 if blackjack else total
    theirs = 22 if d_blackjack else d_total
    if mine > theirs:
        return -1.0
    p = _bb_label(total, blackjack)
    if p < 0:
        return -1.0
    return bb_pay[p, _bb_label(d_total, d_blackjack)]


@njit(cache=True, inline="always")
def _dealer_to_17(shoe, words, pos, end, hard, ace, h17):
    """Draw to a hard or soft 17 (hit soft 17 with ``h17``); (pos or -1, hard, ace)."""
    while True:
        t = _total(hard, ace)
        soft17 = t == 17 and ace and hard <= 11
        if t > 17 or (t == 17 and not (h17 and soft17)):
            return pos, hard, ace
        if pos >= end:
            return -1, hard, ace
        c = _cls(_deal(shoe, pos, words))
        pos += 1
        hard += c + 1
        ace = ace or c == 0


@njit(cache=True, inline="always")
def play_game_round(shoe, words, pos, end, game, rules, tab, pay, bb_pay, res, work, bet):
    """Play one round of ``game`` from ``shoe[pos:]``; the new position, or -1 when the shoe
    ran out (the round is void). ``res``: main net (all spots), the side nets (hybrid: Buzzer
    Beater; hybrid-shared: Royal Match 21, Bet the Set, King's Bounty; multi-action: spots 1-3)
    and the main amount wagered."""
    h17 = rules[G_H17] != 0.0
    bj_pays = rules[G_BJ_PAYS]
    for q in range(R_RESULTS):
        res[q] = 0.0
    if pos + 3 > end:
        return -1
    a1 = _deal(shoe, pos, words)
    au = _deal(shoe, pos + 1, words)
    a2 = _deal(shoe, pos + 2, words)
    pos += 3
    p1 = _cls(a1)
    up = _cls(au)
    p2 = _cls(a2)
    player_bj = (p1 == 0 and p2 == 9) or (p1 == 9 and p2 == 0)
    if game == GAME_HYBRID:
        if pos >= end:
            return -1
        hole = _cls(_deal(shoe, pos, words))
        pos += 1
        d_hard = up + hole + 2
        d_ace = up == 0 or hole == 0
        two = _total(p1 + p2 + 2, p1 == 0 or p2 == 0)
        res[R_WAGERED] = 1.0
        if (up == 0 and hole == 9) or (up == 9 and hole == 0):
            # the peek ((o)): no more cards; Blackjack and Buzzer Beater wagers settle
            res[R_MAIN] = 0.0 if player_bj else -1.0
            res[R_SIDE1] = _buzzer(two, player_bj, 21, True, bb_pay)
            return pos
    else:
        d_hard = 0
        d_ace = False
    # the player's hands (every game; hybrid after the peek)
    nh = 1
    surrendered = False
    if not player_bj:
        pos, nh, surrendered = _play_player(
            shoe, words, pos, end, p1, p2, up, rules, tab, work, bet
        )
        if pos < 0:
            return -1
    if game == GAME_HYBRID:
        pos, d_hard, d_ace = _dealer_to_17(shoe, words, pos, end, d_hard, d_ace, h17)
        if pos < 0:
            return -1
        d_total = _total(d_hard, d_ace)
        if player_bj:
            res[R_MAIN] = bj_pays
            res[R_SIDE1] = -1.0  # (p)(1), or the Blackjack beat the dealer ((u)(2)(i))
            return pos
        net = 0.0
        for i in range(nh):
            t = _total(work[0, i], work[1, i] != 0)
            b = bet[i]
            if t > 21:
                net -= b
            elif d_total > 21 or t > d_total:
                net += b
            elif t < d_total:
                net -= b
        res[R_MAIN] = net
        t0 = _total(work[0, 0], work[1, 0] != 0)
        res[R_SIDE1] = _buzzer(t0, False, d_total, False, bb_pay)
        return pos
    # no hole card: hybrid-shared and multi-action
    if game == GAME_SHARED:
        if pos >= end:
            return -1
        ad2 = _deal(shoe, pos, words)
        pos += 1
        d2 = _cls(ad2)
        d_hard = up + d2 + 2
        d_ace = up == 0 or d2 == 0
        dealer_bj = (up == 0 and d2 == 9) or (up == 9 and d2 == 0)
        if not dealer_bj and not player_bj:
            # (aa)(1): a player Blackjack's community card is the hole card only.
            pos, d_hard, d_ace = _dealer_to_17(shoe, words, pos, end, d_hard, d_ace, h17)
            if pos < 0:
                return -1
        d_total = _total(d_hard, d_ace)
        res[R_WAGERED] = 1.0
        if player_bj:
            res[R_MAIN] = 0.0 if dealer_bj else bj_pays
        elif surrendered:
            res[R_MAIN] = -1.0 if dealer_bj else -0.5
        elif dealer_bj:
            stood = nh == 1 and work[2, 0] == 2 and bet[0] == 1.0
            if stood:
                res[R_MAIN] = -1.0
            else:
                if nh > 1:
                    capped = rules[G_SPLIT_FULL] == 0.0
                elif bet[0] > 1.0:
                    capped = rules[G_DOUBLE_FULL] == 0.0
                else:
                    capped = True
                busted = 0.0
                for i in range(nh):
                    if work[0, i] > 21:
                        busted += bet[i]
                still = max(1.0 - busted, 0.0)
                net = -busted
                for i in range(nh):
                    if work[0, i] > 21:
                        continue
                    if capped:
                        lost = min(still, bet[i])
                        still -= lost
                    else:
                        lost = bet[i]
                    net -= lost
                res[R_MAIN] = net
        else:
            net = 0.0
            for i in range(nh):
                t = _total(work[0, i], work[1, i] != 0)
                b = bet[i]
                if t > 21:
                    net -= b
                elif d_total > 21 or t > d_total:
                    net += b
                elif t < d_total:
                    net -= b
            res[R_MAIN] = net
        rm = pay[P_ROYAL_MATCH, a1, a2]
        if rules[G_CROWN] != 0.0 and pay[P_ROYAL, a1, a2] > 0.0 and pay[P_ROYAL, au, ad2] > 0.0:
            rm = pay[P_ROYAL_MATCH_CROWN, a1, a2]
        res[R_SIDE1] = rm
        res[R_SIDE2] = pay[P_BET_THE_SET, a1, a2]
        res[R_SIDE3] = pay[P_KINGS_BOUNTY_BJ if dealer_bj else P_KINGS_BOUNTY, a1, a2]
        return pos
    # multi-action: three rounds against the same first card
    spots = int(rules[G_SPOTS])
    res[R_WAGERED] = float(spots)
    if player_bj and up not in {0, 9}:
        for k in range(spots):
            res[R_SIDE1 + k] = bj_pays
            res[R_MAIN] += bj_pays
        return pos
    live = player_bj
    for i in range(nh):
        if player_bj:
            break
        if work[0, i] <= 21:
            live = True
    if not live:
        lost = 0.0
        for i in range(nh):
            lost += bet[i]
        for k in range(spots):
            res[R_SIDE1 + k] = -lost
            res[R_MAIN] -= lost
        return pos
    for k in range(spots):
        if pos >= end:
            return -1
        d2 = _cls(_deal(shoe, pos, words))
        pos += 1
        d_hard = up + d2 + 2
        d_ace = up == 0 or d2 == 0
        dealer_bj = (up == 0 and d2 == 9) or (up == 9 and d2 == 0)
        net = 0.0
        if player_bj:
            net = 0.0 if dealer_bj else bj_pays
        elif dealer_bj:
            for i in range(nh):
                net -= bet[i]  # the full amount, busted hands included
        else:
            pos, d_hard, d_ace = _dealer_to_17(shoe, words, pos, end, d_hard, d_ace, h17)
            if pos < 0:
                return -1
            d_total = _total(d_hard, d_ace)
            for i in range(nh):
                t = _total(work[0, i], work[1, i] != 0)
                b = bet[i]
                if t > 21:
                    net -= b
                elif d_total > 21 or t > d_total:
                    net += b
                elif t < d_total:
                    net -= b
        res[R_SIDE1 + k] = net
        res[R_MAIN] += net
    return pos


@njit(cache=True)
def play_game_shoes(words, decks, cut, game, rules, tab, pay, bb_pay, stats, hist, out):
    """Play the shoe of each row of ``words`` until the cut card, accumulating ``stats`` and
    the histogram ``hist`` of a round's main net in half units; the first ``len(out)`` rounds
    are also written into ``out`` (main net, side nets 1-3, cards used: the parity tests).
    Returns the number of rounds written."""
    res = np.zeros(R_RESULTS)
    work = np.zeros((8, MAX_HANDS), dtype=np.int64)
    bet = np.zeros(MAX_HANDS)
    end = 52 * decks
    shoe = np.empty(end, dtype=np.int64)
    bins = hist.shape[0]
    words32 = words.view(np.uint32)
    template = np.empty(end, dtype=np.int64)
    for i in range(end):
        template[i] = i % 52
    n = 0
    for s in range(words.shape[0]):
        shoe[:] = template
        row = words32[s]
        pos = 0
        while pos < cut:
            new = play_game_round(shoe, row, pos, end, game, rules, tab, pay, bb_pay, res, work,
                                  bet)  # fmt: skip
            if new < 0:
                break
            if n < out.shape[0]:
                for q in range(4):
                    out[n, q] = res[q]
                out[n, 4] = new - pos
                n += 1
            stats[ST_CARDS] += new - pos
            pos = new
            stats[ST_ROUNDS] += 1.0
            stats[ST_WAGERED] += res[R_WAGERED]
            for q in range(4):
                v = res[q]
                stats[ST_SUM + q] += v
                stats[ST_SQ + q] += v * v
                if v > 0.0:
                    stats[ST_HITS + q] += 1.0
            b = round(res[R_MAIN] * 2.0) + bins // 2
            hist[min(max(b, 0), bins - 1)] += 1
        stats[ST_SHOES] += 1.0
    return n
