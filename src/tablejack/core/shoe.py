"""The shoe: N decks, shuffled securely, from a seed, or in a prearranged order.

* :meth:`Shoe.shuffled` without a seed shuffles with :class:`secrets.SystemRandom`, a
  cryptographically secure generator, as live play requires.
* With ``seed=`` it shuffles with :class:`random.Random` for reproducible simulation and tests.
* :meth:`Shoe.prearranged` deals an explicit card order (scenarios, replay and game recall);
  it checks that the order could come from ``decks`` decks.

The rules decide which deck counts are legal (:class:`tablejack.core.rules.TableRules`); the
shoe only refuses a card order its decks cannot hold.

>>> shoe = Shoe.prearranged("AS KH 5D", decks=1)
>>> shoe.draw(), shoe.remaining
(Card('AS'), 2)
>>> shoe.point_composition()[10]
1
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from collections.abc import Iterable, Sequence

from tablejack.core.cards import Card, Rank, cards_from_codes, full_deck
from tablejack.core.errors import IllegalActionError, RulesError, ShoeExhaustedError

__all__ = ["Shoe"]

SHOE_CLAUSE = "PA 633a.3(a)"


class Shoe:
    """An ordered stack of cards dealt from the front, with a cut card.

    ``cut_card`` is the number of cards dealt before the cut card comes out; once it has,
    :attr:`cut_card_reached` is true and the table shuffles after the round in progress.
    """

    __slots__ = ("_cards", "_position", "cut_card", "decks", "seed")

    def __init__(
        self,
        cards: Sequence[Card],
        *,
        decks: int,
        cut_card: int | None = None,
        seed: int | None = None,
    ) -> None:
        if not isinstance(decks, int) or isinstance(decks, bool) or decks < 1:
            raise RulesError(
                f"A shoe holds at least one deck, not {decks!r} (PA 633a.3(a)).", rule=SHOE_CLAUSE
            )
        counts = Counter(cards)
        for card, count in counts.items():
            if count > decks:
                raise IllegalActionError(
                    f"{decks} deck(s) hold {decks} {card.code}, but the card order has {count} "
                    f"(PA 633a.3(a)).",
                    rule=SHOE_CLAUSE,
                )
        self._cards: tuple[Card, ...] = tuple(cards)
        self._position = 0
        self.decks = decks
        self.seed = seed
        size = len(self._cards)
        self.cut_card = size if cut_card is None else cut_card
        if not 0 <= self.cut_card <= size:
            raise RulesError(
                f"The cut card must lie within the {size} cards, not at {cut_card!r}.",
                rule="PA 633a.5",
            )

    @classmethod
    def shuffled(
        cls,
        decks: int,
        *,
        seed: int | None = None,
        penetration: float = 0.75,
    ) -> Shoe:
        """``decks`` full decks shuffled together; the cut card after ``penetration`` of them.

        Without a seed the shuffle uses :class:`secrets.SystemRandom`; with one it is
        reproducible (the same seed always gives the same order).

        >>> Shoe.shuffled(6, seed=7).peek(3) == Shoe.shuffled(6, seed=7).peek(3)
        True
        >>> Shoe.shuffled(2).remaining
        104
        """
        if not 0.0 < penetration <= 1.0:
            raise RulesError(
                f"Penetration is a fraction of the shoe in (0, 1], not {penetration!r}.",
                rule="PA 633a.5",
            )
        if not isinstance(decks, int) or isinstance(decks, bool) or decks < 1:
            raise RulesError(
                f"A shoe holds at least one deck, not {decks!r} (PA 633a.3(a)).", rule=SHOE_CLAUSE
            )
        cards = list(full_deck()) * decks
        generator: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)
        generator.shuffle(cards)
        return cls(cards, decks=decks, cut_card=int(len(cards) * penetration), seed=seed)

    @classmethod
    def prearranged(cls, cards: Iterable[Card | str] | str, *, decks: int = 8) -> Shoe:
        """A shoe that deals exactly ``cards`` in order (codes or :class:`Card` objects).

        >>> Shoe.prearranged(["AS", "AS"], decks=1)
        Traceback (most recent call last):
        ...
        tablejack.core.errors.IllegalActionError: 1 deck(s) hold 1 AS, but the card order has 2 (PA 633a.3(a)).
        """
        if isinstance(cards, str):
            parsed = cards_from_codes(cards)
        else:
            parsed = [card if isinstance(card, Card) else Card.parse(card) for card in cards]
        return cls(parsed, decks=decks)

    @property
    def remaining(self) -> int:
        """How many cards are left to deal."""
        return len(self._cards) - self._position

    @property
    def dealt(self) -> int:
        """How many cards have been dealt."""
        return self._position

    @property
    def cut_card_reached(self) -> bool:
        """True once the cut card has come out: shuffle after the round in progress."""
        return self._position >= self.cut_card

    def draw(self) -> Card:
        """Deal the next card; :class:`ShoeExhaustedError` when none is left."""
        position = self._position
        if position >= len(self._cards):
            raise ShoeExhaustedError(
                f"The shoe is empty: all {len(self._cards)} cards have been dealt.",
                rule=SHOE_CLAUSE,
            )
        self._position = position + 1
        return self._cards[position]

    def peek(self, count: int = 1) -> tuple[Card, ...]:
        """The next ``count`` cards without dealing them (tests and simulation only)."""
        return self._cards[self._position : self._position + count]

    def dealt_cards(self) -> tuple[Card, ...]:
        """Every card dealt so far, in order."""
        return self._cards[: self._position]

    def composition(self) -> Counter[Rank]:
        """The undealt cards counted by rank.

        >>> Shoe.prearranged("AS KH 5D", decks=1).composition()[Rank.KING]
        1
        """
        return Counter(card.rank for card in self._cards[self._position :])

    def point_composition(self) -> Counter[int]:
        """The undealt cards counted by point class: 1 (ace), 2 … 9 and 10 (all ten-values).

        >>> Shoe.shuffled(1, seed=1).point_composition()[10]
        16
        """
        counts: Counter[int] = Counter()
        for card in self._cards[self._position :]:
            counts[1 if card.is_ace else card.points] += 1
        return counts

    def __len__(self) -> int:
        return self.remaining

    def __repr__(self) -> str:
        return f"Shoe(decks={self.decks}, remaining={self.remaining}, cut_card={self.cut_card})"
