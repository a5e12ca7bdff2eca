"""Hand arithmetic: hard and soft totals, Blackjack and bust (PA § 633a.3(e), § 633a.1).

An ace counts 11 unless that would take the hand over 21, then 1 (§ 633a.3(e)). A *soft* total
counts an ace as 11; a *hard* total has no ace or counts every ace as 1 (§ 633a.1). Blackjack is
an ace and a ten-value card as the **initial two cards** of a hand (§ 633a.1): an ace and a ten
after a split make 21, not Blackjack (§ 633a.11; ``referenced-rules.md`` §1.11).

>>> hand = Hand.of("AS 6D")
>>> hand.total, hand.is_soft
(17, True)
>>> hand.add(Card.parse("9C")); hand.total, hand.is_soft
(16, False)
>>> Hand.of("AS KH").is_blackjack, Hand.of("AS KH", from_split=True).is_blackjack
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable

from tablejack.core.cards import Card, cards_from_codes

__all__ = ["Hand", "hand_total"]


def hand_total(cards: Iterable[Card]) -> tuple[int, bool]:
    """The best total of ``cards`` and whether it is soft (§ 633a.3(e)).

    >>> hand_total(Card.parse(code) for code in ("AS", "AD", "9C"))
    (21, True)
    """
    hard = 0
    aces = False
    for card in cards:
        hard += 1 if card.is_ace else card.points
        aces = aces or card.is_ace
    if aces and hard <= 11:
        return hard + 10, True
    return hard, False


class Hand:
    """A growing hand of cards with its totals kept up to date as cards arrive.

    ``from_split`` marks a hand formed by splitting a pair: it can never be a Blackjack.
    """

    __slots__ = ("_aces", "_hard", "cards", "from_split")

    def __init__(self, cards: Iterable[Card] = (), *, from_split: bool = False) -> None:
        self.cards: list[Card] = []
        self.from_split = from_split
        self._hard = 0
        self._aces = 0
        for card in cards:
            self.add(card)

    @classmethod
    def of(cls, codes: Iterable[str] | str, *, from_split: bool = False) -> Hand:
        """A hand from card codes (doctests and scenarios)."""
        return cls(cards_from_codes(codes), from_split=from_split)

    def add(self, card: Card) -> None:
        """Add one card."""
        self.cards.append(card)
        if card.is_ace:
            self._aces += 1
            self._hard += 1
        else:
            self._hard += card.points

    @property
    def hard_total(self) -> int:
        """The total with every ace counted as 1."""
        return self._hard

    @property
    def total(self) -> int:
        """The best total: one ace counts 11 when that does not exceed 21."""
        hard = self._hard
        if self._aces and hard <= 11:
            return hard + 10
        return hard

    @property
    def is_soft(self) -> bool:
        """True when an ace counts as 11 in :attr:`total`."""
        return self._aces > 0 and self._hard <= 11

    @property
    def is_blackjack(self) -> bool:
        """An ace and a ten-value card as the initial two cards of an unsplit hand (§ 633a.1)."""
        return not self.from_split and len(self.cards) == 2 and self._aces == 1 and self._hard == 11

    @property
    def is_bust(self) -> bool:
        """True when even the hard total exceeds 21."""
        return self._hard > 21

    @property
    def is_pair(self) -> bool:
        """Two cards of identical point value (§ 633a.11(a): 7-7, K-10)."""
        cards = self.cards
        return len(cards) == 2 and cards[0].points == cards[1].points

    def __len__(self) -> int:
        return len(self.cards)

    def total_text(self) -> str:
        """The total in words: ``'Blackjack'``, ``'soft 17'``, ``'23 bust'``, ``'20'``.

        >>> Hand.of("AS 6D").total_text(), Hand.of("KS QD 5C").total_text()
        ('soft 17', '25 bust')
        """
        if self.is_blackjack:
            return "Blackjack"
        total = self.total
        if self._hard > 21:
            return f"{total} bust"
        soft = "soft " if self.is_soft and total < 21 else ""
        return f"{soft}{total}"

    def describe(self) -> str:
        """The cards in display form and the total: ``'A♠ 6♦ = soft 17'``."""
        cards = " ".join(card.display for card in self.cards)
        return f"{cards} = {self.total_text()}"

    def __repr__(self) -> str:
        codes = " ".join(card.code for card in self.cards)
        return f"Hand.of({codes!r}{', from_split=True' if self.from_split else ''})"
