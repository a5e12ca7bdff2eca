"""Card sources: where a table's cards come from.

* :class:`VirtualShoe` — a shuffled shoe with an automated dealer (the demo, load tests): the
  server draws the card the engine asks for at once.
* Reader input — a card-reading shoe sends card codes, one per line (see docs/server.md, "Card
  reader line protocol"), or the dealer types them on the console. These are not objects here:
  they arrive as ``card`` requests and the engine decides whether the card was asked for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tablejack.core.cards import Card
from tablejack.core.shoe import Shoe

__all__ = ["VirtualShoe"]


class VirtualShoe:
    """A shuffled shoe of ``decks`` decks; reshuffled when the cut card has come out.
    ``order`` (card codes) stacks the first shoe, for scenario tests and demonstrations.

    ``mark()``/``reset(mark)`` put back cards drawn by a step that was not committed.
    """

    def __init__(
        self,
        decks: int,
        *,
        seed: int | None = None,
        penetration: float = 0.75,
        order: str | None = None,
    ) -> None:
        self.decks = decks
        self.order = order
        self.seed = seed
        self.penetration = penetration
        self.shuffles = 0
        self._cards: list[Card] = []
        self._position = 0
        self._cut = 0
        self.shuffle()

    def shuffle(self, *, out_of_play: Iterable[Card] = ()) -> None:
        """Shuffle all decks again, leaving out cards still on the layout."""
        seed = None if self.seed is None else self.seed + self.shuffles
        if self.order is not None and self.shuffles == 0:
            shoe = Shoe.prearranged(self.order, decks=self.decks)
        else:
            shoe = Shoe.shuffled(self.decks, seed=seed, penetration=self.penetration)
        cards = list(shoe.peek(shoe.remaining))
        missing = Counter(out_of_play)
        if missing:
            kept = []
            for card in cards:
                if missing[card] > 0:
                    missing[card] -= 1
                else:
                    kept.append(card)
            cards = kept
        self._cards = cards
        self._position = 0
        self._cut = (
            len(cards) if self.order and self.shuffles == 0 else int(len(cards) * self.penetration)
        )
        self.shuffles += 1

    @property
    def needs_shuffle(self) -> bool:
        """True once the cut card has come out (shuffle before the next round)."""
        return self._position >= self._cut

    def draw(self) -> Card:
        """The next card (shuffles a fresh shoe if this one ran out mid-round)."""
        if self._position >= len(self._cards):
            self.shuffle()
        card = self._cards[self._position]
        self._position += 1
        return card

    def mark(self) -> int:
        """The current position."""
        return self._position

    def reset(self, mark: int) -> None:
        """Put back every card drawn since ``mark``."""
        self._position = mark
