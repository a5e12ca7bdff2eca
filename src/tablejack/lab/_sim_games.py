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

The shoes are the classic kernel's (:mod:`tablejack.lab._sim_kernels`: the same keyed
shuffle, card indices here). As there, a round is played in the body of the loop over rounds,
whose only calls with arrays are the rare split rounds: numba counts the references of every
array handed to a function, which would cost more than the round.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablejack.lab._sim_kernels import (
    A_DOUBLE,
    A_HIT,
    A_SURRENDER,
    card_class,
    deal,
    fast_tables,
    hand_total,
    play_split_hands,
    shoe_key,
)

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
def _bb_label(total, blackjack):
    """Buzzer Beater label index: 0 = 19, 1 = 20, 2 = 21, 3 = Blackjack, -1 none."""
    if blackjack:
        return 3
    if 19 <= total <= 21:
        return total - 19
    return -1


@njit(cache=True, inline="always")
def buzzer_cell(total, blackjack, d_total, d_blackjack):
    """The Buzzer Beater's paytable cell (player label, dealer label) for a hand, or (-1, -1)
    when the wager loses (PA 633c.5(u), (v)(3); A-5, A-14, A-15)."""
    if total > 21 or (d_total > 21 and not d_blackjack):
        return -1, -1
    mine = 22 if blackjack else total
    theirs = 22 if d_blackjack else d_total
    if mine > theirs:
        return -1, -1
    p = _bb_label(total, blackjack)
    if p < 0:
        return -1, -1
    return p, _bb_label(d_total, d_blackjack)


@njit(cache=True)
def play_game_shoes(run, first_shoe, shoes, decks, cut, game, rules, tab, pay, bb_pay, stats,
                    hist, out):  # fmt: skip
    """Play shoes ``first_shoe`` … ``first_shoe + shoes - 1`` of ``run`` until the cut card,
    accumulating ``stats`` and the histogram ``hist`` of a round's main net in half units; the
    first ``len(out)`` rounds are also written into ``out`` (main net, side nets 1-3, cards
    used: the parity tests). Returns the number of rounds written.

    A round's results (:data:`R_MAIN` …): the main net (all spots), the side nets (hybrid:
    Buzzer Beater; hybrid-shared: Royal Match 21, Bet the Set, King's Bounty; multi-action:
    spots 1-3) and the main amount wagered. A round that runs out of cards is void and ends its
    shoe."""
    h17 = 1 if rules[G_H17] != 0.0 else 0
    bj_pays = rules[G_BJ_PAYS]
    may_split = rules[G_SPLIT_ALLOWED] != 0.0 and rules[G_MAX_HANDS] > 1.0
    split_capped = rules[G_SPLIT_FULL] == 0.0
    double_capped = rules[G_DOUBLE_FULL] == 0.0
    crown = rules[G_CROWN] != 0.0
    spots = int(rules[G_SPOTS])
    hit, first, stand, versus = fast_tables(tab, rules[G_LS] != 0.0)
    # the Buzzer Beater's net by [player total, dealer total] when neither has a Blackjack
    bb_net = np.empty((32, 32))
    for t in range(32):
        for d in range(32):
            row, col = buzzer_cell(t, False, d, False)
            bb_net[t, d] = -1.0 if row < 0 else bb_pay[row, col]
    res = np.zeros(R_RESULTS)
    work = np.zeros((8, MAX_HANDS), dtype=np.int64)
    bet = np.zeros(MAX_HANDS)
    end = 52 * decks
    template = np.empty(end, dtype=np.int8)
    for i in range(end):
        template[i] = i % 52
    shoe = np.empty(end, dtype=np.int8)
    bins = hist.shape[0]
    sums = np.zeros(STATS)
    n = 0
    for s in range(first_shoe, first_shoe + shoes):
        for i in range(end):
            shoe[i] = template[i]
        key = shoe_key(run, s)
        pos = 0
        while pos < cut:
            start = pos
            for q in range(R_RESULTS):
                res[q] = 0.0
            if pos + 3 > end:
                break
            a1 = deal(shoe, pos, key)
            au = deal(shoe, pos + 1, key)
            a2 = deal(shoe, pos + 2, key)
            pos += 3
            p1 = card_class(a1)
            up = card_class(au)
            p2 = card_class(a2)
            player_bj = (p1 == 0 and p2 == 9) or (p1 == 9 and p2 == 0)
            settled = False
            d_hard = 0
            d_ace = 0
            if game == GAME_HYBRID:
                if pos >= end:
                    break
                hole = card_class(deal(shoe, pos, key))
                pos += 1
                d_hard = up + hole + 2
                d_ace = 1 if (up == 0 or hole == 0) else 0
                res[R_WAGERED] = 1.0
                if (up == 0 and hole == 9) or (up == 9 and hole == 0):
                    # the peek ((o)): no more cards; Blackjack and Buzzer Beater wagers settle
                    res[R_MAIN] = 0.0 if player_bj else -1.0
                    two = hand_total(p1 + p2 + 2, p1 == 0 or p2 == 0)
                    row, col = buzzer_cell(two, player_bj, 21, True)
                    res[R_SIDE1] = -1.0 if row < 0 else bb_pay[row, col]
                    settled = True
            if not settled:
                # the player's hands (every game; hybrid after the peek): work[0] hard total,
                # work[1] ace, work[2] cards, bet the amount wagered
                nh = 1
                surrendered = False
                work[0, 0] = p1 + p2 + 2
                work[1, 0] = 1 if (p1 == 0 or p2 == 0) else 0
                work[2, 0] = 2
                bet[0] = 1.0
                if player_bj:
                    pass
                elif may_split and p1 == p2 and tab[4, up, p1] == 1:
                    pos, nh, _, _, _ = play_split_hands(
                        shoe, key, pos, end, p1, p2, up, 0, rules, tab, work, bet, True
                    )
                    if pos < 0:
                        break
                else:
                    # one hand: the first decision, then hits (as the classic kernel)
                    hard = p1 + p2 + 2
                    ace = work[1, 0]
                    cards = 2
                    soft = 1 if (ace == 1 and hard <= 11) else 0
                    action = first[soft, up, hard + 10 * soft]
                    surrendered = action == A_SURRENDER
                    doubled = action == A_DOUBLE
                    draw = A_HIT <= action <= A_DOUBLE  # a hit or the double's one card
                    while draw:
                        if pos >= end:
                            pos = -1
                            break
                        c = card_class(deal(shoe, pos, key))
                        pos += 1
                        hard += c + 1
                        if c == 0:
                            ace = 1
                        cards += 1
                        soft = 1 if (ace == 1 and hard <= 11) else 0
                        total = hard + 10 * soft
                        draw = not doubled and total < 21 and hit[soft, up, total] == 1
                    if pos < 0:
                        break
                    work[0, 0] = hard
                    work[1, 0] = ace
                    work[2, 0] = cards
                    bet[0] = 2.0 if doubled else 1.0
                staked = 0.0
                busted = 0.0
                for i in range(nh):
                    staked += bet[i]
                    if work[0, i] > 21:
                        busted += bet[i]
                # the dealer's hands: one (hybrid: from the hole card; hybrid-shared: the
                # player's personal dealer hand), or one per spot (multi-action)
                rounds = 1
                res[R_WAGERED] = 1.0
                if game == GAME_MULTI:
                    res[R_WAGERED] = float(spots)
                    rounds = spots
                    if player_bj and 0 < up < 9:
                        # a Blackjack against 2-9 is paid at once, no dealer card
                        for k in range(spots):
                            res[R_SIDE1 + k] = bj_pays
                            res[R_MAIN] += bj_pays
                        rounds = 0
                    elif not player_bj and busted == staked:
                        # every hand busted: every spot loses, no dealer card
                        for k in range(spots):
                            res[R_SIDE1 + k] = -staked
                            res[R_MAIN] -= staked
                        rounds = 0
                for k in range(rounds):
                    ad2 = -1
                    dealer_bj = False
                    if game == GAME_HYBRID:
                        draw = True
                    else:
                        if pos >= end:
                            pos = -1
                            break
                        ad2 = deal(shoe, pos, key)
                        pos += 1
                        d2 = card_class(ad2)
                        d_hard = up + d2 + 2
                        d_ace = 1 if (up == 0 or d2 == 0) else 0
                        dealer_bj = (up == 0 and d2 == 9) or (up == 9 and d2 == 0)
                        # hybrid-shared: a player Blackjack's community card is the hole card
                        # only ((aa)(1)); multi-action: nothing more against a Blackjack
                        draw = not dealer_bj and not player_bj
                    if draw:
                        while stand[d_hard, d_ace, h17] == 0:
                            if pos >= end:
                                pos = -1
                                break
                            c = card_class(deal(shoe, pos, key))
                            pos += 1
                            d_hard += c + 1
                            if c == 0:
                                d_ace = 1
                        if pos < 0:
                            break
                    d_total = hand_total(d_hard, d_ace == 1)
                    # the hands against this dealer hand
                    compared = 0.0
                    for i in range(nh):
                        compared += bet[i] * versus[hand_total(work[0, i], work[1, i] == 1),
                                                    d_total]  # fmt: skip
                    if game == GAME_HYBRID:
                        if player_bj:
                            res[R_MAIN] = bj_pays
                            res[R_SIDE1] = -1.0  # (p)(1), or the Blackjack beat the dealer
                        else:
                            res[R_MAIN] = compared
                            res[R_SIDE1] = bb_net[hand_total(work[0, 0], work[1, 0] == 1), d_total]
                    elif game == GAME_SHARED:
                        if player_bj:
                            res[R_MAIN] = 0.0 if dealer_bj else bj_pays
                        elif surrendered:
                            res[R_MAIN] = -1.0 if dealer_bj else -0.5
                        elif dealer_bj:
                            if nh == 1 and work[2, 0] == 2 and bet[0] == 1.0:
                                res[R_MAIN] = -1.0  # the hand stood on its two cards
                            else:
                                # a busted hand loses its wagers; the others lose
                                # the initial wager only, unless the full amount is the rule
                                if nh > 1:
                                    capped = split_capped
                                elif bet[0] > 1.0:
                                    capped = double_capped
                                else:
                                    capped = True
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
                            res[R_MAIN] = compared
                        rm = pay[P_ROYAL_MATCH, a1, a2]
                        if crown and pay[P_ROYAL, a1, a2] > 0.0 and pay[P_ROYAL, au, ad2] > 0.0:
                            rm = pay[P_ROYAL_MATCH_CROWN, a1, a2]
                        res[R_SIDE1] = rm
                        res[R_SIDE2] = pay[P_BET_THE_SET, a1, a2]
                        res[R_SIDE3] = pay[P_KINGS_BOUNTY_BJ if dealer_bj else P_KINGS_BOUNTY, a1,
                                           a2]  # fmt: skip
                    else:
                        if player_bj:
                            net = 0.0 if dealer_bj else bj_pays
                        elif dealer_bj:
                            net = -staked  # the full amount, busted hands included
                        else:
                            net = compared
                        res[R_SIDE1 + k] = net
                        res[R_MAIN] += net
                if pos < 0:
                    break
            if n < out.shape[0]:
                for q in range(4):
                    out[n, q] = res[q]
                out[n, 4] = pos - start
                n += 1
            sums[ST_CARDS] += pos - start
            sums[ST_ROUNDS] += 1.0
            sums[ST_WAGERED] += res[R_WAGERED]
            for q in range(4):
                v = res[q]
                sums[ST_SUM + q] += v
                sums[ST_SQ + q] += v * v
                sums[ST_HITS + q] += 1.0 if v > 0.0 else 0.0  # a select, not a branch
            b = int(np.rint(res[R_MAIN] * 2.0)) + bins // 2
            hist[min(max(b, 0), bins - 1)] += 1
        sums[ST_SHOES] += 1.0
    for q in range(STATS):
        stats[q] += sums[q]
    return n
