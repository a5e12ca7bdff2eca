"""Card sources: where a table's cards come from.

* :class:`VirtualShoe` — a shuffled shoe with an automated dealer (the demo, load tests): the
  server draws the card the engine asks for at once.
* Reader input — a card-reading shoe sends card codes, one per line (see docs/server.md, "Card
  reader line protocol"), or the dealer types them on the console. These are not objects here:
  they arrive as ``card`` requests and the engine decides whether the card was asked for.
  :class:`ShoeInventory` counts the cards of the shoe loaded at such a table (the floor's card
  inventory, :mod:`tablejack.server.duties.inventory`, loads, checks and ends it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tablejack.core.cards import Card
from tablejack.core.shoe import Shoe

__all__ = ["ShoeInventory", "VirtualShoe"]


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

    def loaded(self) -> dict[str, Any]:
        """What the last shuffle loaded (the virtual shoe's own inventory, for its ``shuffle``
        event): the decks, the number of cards and the count per code."""
        counts = Counter(card.code for card in self._cards)
        return {
            "decks": self.decks,
            "total": sum(counts.values()),
            "counts": dict(sorted(counts.items())),
        }

    def mark(self) -> int:
        """The current position."""
        return self._position

    def reset(self, mark: int) -> None:
        """Put back every card drawn since ``mark``."""
        self._position = mark


@dataclass
class ShoeInventory:
    """The shoe in use: its count at load and the cards out since."""

    decks: int
    loaded: dict[str, int]
    round_number: int
    """The table's last round number when the shoe was loaded (later rounds deal from it)."""
    load_seq: int
    by: str = ""
    out: Counter[str] = field(default_factory=Counter)
    """Cards read since the load that the inventory held."""
    extra: Counter[str] = field(default_factory=Counter)
    """Cards read with no copy left (each a ``card_inventory`` tilt)."""

    def remaining(self) -> Counter[str]:
        """The cards still in the shoe by the inventory."""
        left = Counter({c: n - self.out[c] for c, n in self.loaded.items()})
        return +left

    def take(self, code: str) -> bool:
        """Count a card read out of the shoe; False when no copy was left."""
        if self.loaded.get(code, 0) - self.out[code] > 0:
            self.out[code] += 1
            return True
        self.extra[code] += 1
        return False

    def give_back(self, code: str) -> None:
        """Undo :meth:`take` of a card whose step was not recorded (a storage error): the
        dealer reads it again."""
        if self.out[code] > 0:
            self.out[code] -= 1

    def to_json(self) -> dict[str, Any]:
        """The inventory for the console and ``GET /api/tables/{id}/shoe``."""
        left = self.remaining()
        return {
            "decks": self.decks,
            "loaded": sum(self.loaded.values()),
            "read": sum(self.out.values()) + sum(self.extra.values()),
            "remaining": sum(left.values()),
            "remaining_by_code": dict(sorted(left.items())),
            "extra": dict(self.extra),
            "by": self.by,
        }
