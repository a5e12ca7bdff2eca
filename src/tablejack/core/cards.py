"""Playing cards: ranks, suits and point values (PA § 633a.3(e)).

A :class:`Card` is immutable and interned: there is exactly one object per rank and suit, so
cards compare by identity as well as by value and a shoe of eight decks holds references, not
copies.

>>> Card.parse("AS")
Card('AS')
>>> Card.parse("10h") == Card.parse("TH")
True
>>> Card.parse("qd").display
'Q♦'
>>> Card.parse("KC").points, Card.parse("AS").points
(10, 11)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum, IntEnum
from typing import ClassVar

from tablejack.core.errors import InvalidNotationError

__all__ = ["Card", "Rank", "Suit", "cards_from_codes", "full_deck"]

POINT_VALUE_CLAUSE = "PA 633a.3(e)"


class Rank(IntEnum):
    """A card's rank, numbered ace = 1 to king = 13."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def symbol(self) -> str:
        """The rank as written in card codes: ``A 2 … 9 10 J Q K``."""
        return _RANK_SYMBOLS[self]

    @property
    def points(self) -> int:
        """The point value of § 633a.3(e): 2–10 face value, J/Q/K 10, ace 11 (or 1)."""
        if self is Rank.ACE:
            return 11
        return min(int(self), 10)

    @property
    def is_ten_value(self) -> bool:
        """True for 10, J, Q and K (§ 633a.3(e))."""
        return int(self) >= 10


class Suit(Enum):
    """A card's suit, coded by its initial letter."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def symbol(self) -> str:
        """The Unicode suit symbol used in displays."""
        return _SUIT_SYMBOLS[self]


_RANK_SYMBOLS = {rank: str(int(rank)) for rank in Rank if 2 <= rank <= 10}
_RANK_SYMBOLS.update({Rank.ACE: "A", Rank.JACK: "J", Rank.QUEEN: "Q", Rank.KING: "K"})
_SUIT_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
_RANK_BY_SYMBOL = {symbol: rank for rank, symbol in _RANK_SYMBOLS.items()}
_RANK_BY_SYMBOL["T"] = Rank.TEN
_SUIT_BY_LETTER = {suit.value: suit for suit in Suit}
_SUIT_BY_LETTER.update({symbol: suit for suit, symbol in _SUIT_SYMBOLS.items()})


class Card:
    """One playing card. Interned: ``Card(Rank.ACE, Suit.SPADES) is Card.parse("AS")``, so equality
    and hashing are identity (fast, and correct because no second copy can exist).

    ``points`` is the § 633a.3(e) value with an ace counted as 11; hand totals decide when an
    ace counts 1 (:mod:`tablejack.core.hands`). ``code`` is the notation (``"10H"``, ``"AS"``),
    ``display`` the Unicode form (``"10♥"``), and ``index`` a dense 0–51 number for kernels.
    """

    __slots__ = ("code", "display", "index", "is_ace", "is_ten_value", "points", "rank", "suit")

    _interned: ClassVar[dict[tuple[Rank, Suit], Card]] = {}

    rank: Rank
    suit: Suit
    points: int
    code: str
    display: str
    index: int
    is_ace: bool
    is_ten_value: bool

    def __new__(cls, rank: Rank | int, suit: Suit | str) -> Card:
        try:
            rank = Rank(rank)
            suit = Suit(suit)
        except ValueError:
            raise InvalidNotationError(
                f"{rank!r} of {suit!r} is not a playing card; ranks are 1-13 and suits S, H, D, C.",
                rule=POINT_VALUE_CLAUSE,
            ) from None
        card = cls._interned.get((rank, suit))
        if card is None:
            card = super().__new__(cls)
            setter = object.__setattr__
            setter(card, "rank", rank)
            setter(card, "suit", suit)
            setter(card, "points", rank.points)
            setter(card, "code", rank.symbol + suit.value)
            setter(card, "display", rank.symbol + suit.symbol)
            setter(card, "index", (rank - 1) * 4 + list(Suit).index(suit))
            setter(card, "is_ace", rank is Rank.ACE)
            setter(card, "is_ten_value", rank.is_ten_value)
            cls._interned[(rank, suit)] = card
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Card is immutable; cannot set {name!r}.")

    def __reduce__(self) -> tuple[type[Card], tuple[Rank, Suit]]:
        return (Card, (self.rank, self.suit))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __repr__(self) -> str:
        return f"Card({self.code!r})"

    def __str__(self) -> str:
        return self.code

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    @classmethod
    def parse(cls, code: str) -> Card:
        """Parse a card code: rank ``A 2-10 T J Q K`` then suit ``S H D C`` (any case, or a
        Unicode suit symbol).

        >>> Card.parse("10♠"), Card.parse(" td ")
        (Card('10S'), Card('10D'))
        >>> Card.parse("1S")
        Traceback (most recent call last):
        ...
        tablejack.core.errors.InvalidNotationError: '1S' is not a card code; write a rank (A, 2-10, T, J, Q, K) then a suit (S, H, D, C), as in 'AS' or '10H'.
        """
        if not isinstance(code, str):
            raise InvalidNotationError(f"{code!r} is not a card code (expected text such as 'AS').")
        text = code.strip().upper()
        card = _BY_CODE.get(text)
        if card is not None:
            return card
        rank = _RANK_BY_SYMBOL.get(text[:-1])
        suit = _SUIT_BY_LETTER.get(text[-1:]) if text else None
        if rank is None or suit is None:
            raise InvalidNotationError(
                f"{code!r} is not a card code; write a rank (A, 2-10, T, J, Q, K) then a suit "
                "(S, H, D, C), as in 'AS' or '10H'.",
                rule=POINT_VALUE_CLAUSE,
            )
        return cls(rank, suit)

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card with dense number ``index`` (0–51)."""
        return _BY_INDEX[index]


def full_deck() -> tuple[Card, ...]:
    """One 52-card deck in a fixed order (by rank, then suit)."""
    return _BY_INDEX


def cards_from_codes(codes: Iterable[str] | str) -> list[Card]:
    """Parse several card codes, from a list or one space- or comma-separated string.

    >>> cards_from_codes("AS 10h, kd")
    [Card('AS'), Card('10H'), Card('KD')]
    """
    if isinstance(codes, str):
        codes = codes.replace(",", " ").split()
    return [Card.parse(code) for code in codes]


def _all_cards() -> Iterator[Card]:
    for rank in Rank:
        for suit in Suit:
            yield Card(rank, suit)


_BY_INDEX: tuple[Card, ...] = tuple(_all_cards())
_BY_CODE: dict[str, Card] = {card.code: card for card in _BY_INDEX}
_BY_CODE.update({card.rank.symbol.replace("10", "T") + card.suit.value: card for card in _BY_INDEX})
