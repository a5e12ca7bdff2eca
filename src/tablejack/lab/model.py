"""The rules the math lab analyses, as plain numbers a kernel can read.

:class:`AnalysisRules` is the lab's view of a game's Rules Submission: the choices that change
the mathematics (decks, dealer rule, doubling, splitting, surrender, peek, payouts, side
wagers), built from a game's rules object (:meth:`AnalysisRules.from_rules`) so that every
figure the lab prints is for rules the engine accepts. It also accepts choices a game's rules
forbid (H17 for the classic game, an infinite deck) so that published reference figures can
be checked; the CLI refuses those for a game.

>>> from tablejack.core import ClassicRules
>>> rules = AnalysisRules.from_rules(ClassicRules(decks=6))
>>> rules.decks, rules.h17, rules.max_split_hands, rules.late_surrender
(6, False, 4, True)
>>> AnalysisRules(decks=None).deck_label
'infinite deck'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CARD_LABELS", "DEALER_OUTCOMES", "AnalysisRules", "card_class"]

CARD_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
"""Point classes as the lab writes them: index 0 is the ace, 9 every ten-value card."""

DEALER_OUTCOMES = ("17", "18", "19", "20", "21", "blackjack", "bust")
"""The dealer's final outcomes, in the order the lab reports them."""


def card_class(label: str) -> int:
    """The point class (0 = ace … 9 = ten-value) of a card label ``A 2 … 9 T 10 J Q K``.

    >>> card_class("A"), card_class("10"), card_class("q")
    (0, 9, 9)
    """
    text = label.strip().upper()
    if text in ("T", "10", "J", "Q", "K"):
        return 9
    if text in CARD_LABELS:
        return CARD_LABELS.index(text)
    raise ValueError(f"{label!r} is not a card; write A, 2-9, T (or 10, J, Q, K).")


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalysisRules:
    """The rule choices that change a blackjack game's mathematics (trade abbreviations in the
    field notes)."""

    decks: int | None = 6
    """Decks in the shoe; None for an infinite deck (cards drawn with replacement)."""

    h17: bool = False
    """H17: the dealer hits soft 17 (the PA games stand, S17, § 633a.7)."""

    double_totals: frozenset[int] | None = None
    """First-two-card totals that may double; None for any two cards (DOA, § 633a.10)."""

    das: bool = True
    """DAS: double after a split (§ 633a.11(c))."""

    max_split_hands: int = 4
    """SPn: the most hands one hand may become by splitting (§ 633a.11(c))."""

    resplit_aces: bool = False
    """RSA: split aces may be split again (§ 633a.11(c))."""

    hit_split_aces: bool = False
    """HSA: split aces may draw more than one card."""

    late_surrender: bool = True
    """LS: late surrender on the first two cards (§ 633a.9)."""

    peek: bool = True
    """The dealer checks for Blackjack under an ace or ten-value up card (card reader device)."""

    blackjack_pays: float = 1.5
    """A player Blackjack's odds (3 to 2, § 633a.13)."""

    penetration: float = 0.75
    """Share of the shoe dealt before the cut card (simulation only)."""

    ez_bust: bool = False
    """The EZ Bust side wager is offered (633b.16)."""

    ez_bust_push_all: bool = False
    """EZ Bust push-all option (633b.16(g)), on a single-player table (see docs/lab.md)."""

    insurance: bool = True
    """Insurance is offered against an up ace (§ 633a.8)."""

    split: bool = True
    """Pairs may be split at all (NJ multi-action: ``split_pairs``)."""

    double_full_amount: bool = False
    """Without a hole card: a dealer Blackjack takes a live double too (A-29, NJ multi-action);
    false: only the original wager, the double returned (A-19, hybrid-shared's default)."""

    split_full_amount: bool = False
    """Without a hole card: a dealer Blackjack takes every split wager (A-29); false: the loss is
    max(original wager, busted split wagers) (A-10, hybrid-shared's default)."""

    spots: int = 1
    """Betting spots one player hand plays (NJ multi-action: 3 rounds against the same first
    dealer card). Every figure is per spot; see docs/lab.md."""

    def __post_init__(self) -> None:
        if self.decks is not None and not 1 <= self.decks <= 8:
            raise ValueError(f"decks = {self.decks!r}: the lab analyses 1 to 8 decks or None.")
        if not 2 <= self.max_split_hands <= 8:
            raise ValueError(f"max_split_hands = {self.max_split_hands!r} must be 2 to 8.")
        if not 0.0 < self.penetration <= 1.0:
            raise ValueError(f"penetration = {self.penetration!r} must be in (0, 1].")

    @classmethod
    def from_rules(cls, rules: Any, **changes: Any) -> AnalysisRules:
        """The analysis of a game's rules object (a :class:`~tablejack.core.ClassicRules`, or
        the rules of ``hybrid``, ``hybrid-shared`` or ``multi-action``).

        >>> from tablejack.games.hybrid_shared_rules import HybridSharedRules
        >>> shared = AnalysisRules.from_rules(HybridSharedRules())
        >>> shared.peek, shared.max_split_hands, shared.late_surrender, shared.split_full_amount
        (False, 2, True, False)
        >>> from tablejack.games.multi_action import MultiActionRules
        >>> multi = AnalysisRules.from_rules(MultiActionRules())
        >>> sorted(multi.double_totals), multi.das, multi.double_full_amount, multi.spots
        ([10, 11], False, True, 3)
        """
        game = getattr(rules, "game", "classic")
        if game == "hybrid-shared":
            if rules.surrender and rules.surrender_timing != "late":
                raise ValueError(
                    "The lab analyses late surrender only (surrender_timing = 'late', A-7)."
                )
            changes = {
                "max_split_hands": 2,
                "resplit_aces": False,
                "hit_split_aces": False,
                "late_surrender": bool(rules.surrender),
                "peek": False,
                "double_full_amount": rules.double_against_dealer_blackjack == "full-amount",
                "split_full_amount": rules.split_against_dealer_blackjack == "full-amount",
                "insurance": bool(rules.insurance),
                **changes,
            }
        elif game == "multi-action":
            if getattr(rules, "double_ace_value", "best-total") != "best-total":
                raise ValueError(
                    "The lab analyses double_ace_value = 'best-total' only (an ace and a nine "
                    "may not double); 'one-or-eleven' (NJ MAB (b)(2)(iii)) is not modelled."
                )
            changes = {
                "double_totals": frozenset({10, 11}) if rules.double_down else frozenset(),
                "split": bool(rules.split_pairs),
                "late_surrender": False,
                "peek": False,
                "double_full_amount": True,
                "split_full_amount": True,
                "spots": 3,
                **changes,
            }
        totals = getattr(rules, "double_totals", None)
        values: dict[str, Any] = {
            "decks": rules.decks,
            "h17": bool(getattr(rules, "dealer_hits_soft_17", False)),
            "double_totals": None if totals is None else frozenset(totals),
            "das": bool(getattr(rules, "double_after_split", True)),
            "max_split_hands": int(getattr(rules, "max_split_hands", 4)),
            "resplit_aces": bool(getattr(rules, "resplit_aces", False)),
            "hit_split_aces": not bool(getattr(rules, "one_card_to_split_aces", True)),
            "late_surrender": bool(getattr(rules, "late_surrender", False)),
            "peek": bool(getattr(rules, "hole_card_peek", True)),
            "blackjack_pays": float(rules.blackjack_pays),
            "penetration": float(rules.penetration),
            "ez_bust": bool(getattr(rules, "ez_bust", False)),
            "ez_bust_push_all": bool(getattr(rules, "ez_bust_push_all", False)),
            "insurance": bool(getattr(rules, "insurance", False)),
        }
        values.update(changes)
        return cls(**values)

    def replace(self, **changes: Any) -> AnalysisRules:
        """A copy with some choices changed."""
        return dataclasses.replace(self, **changes)

    @property
    def deck_label(self) -> str:
        """``'6 decks'``, ``'1 deck'`` or ``'infinite deck'``."""
        if self.decks is None:
            return "infinite deck"
        return f"{self.decks} deck" + ("s" if self.decks > 1 else "")

    def abbreviation(self) -> str:
        """The trade shorthand: ``'6D S17 DAS DOA SP4 LS peek 3:2'``."""
        parts = [
            "inf" if self.decks is None else f"{self.decks}D",
            "H17" if self.h17 else "S17",
            "DAS" if self.das else "NDAS",
            "DOA"
            if self.double_totals is None
            else "D" + ",".join(str(t) for t in sorted(self.double_totals)),
            f"SP{self.max_split_hands}",
        ]
        if self.resplit_aces:
            parts.append("RSA")
        if self.hit_split_aces:
            parts.append("HSA")
        parts.append("LS" if self.late_surrender else "NS")
        if not self.split:
            parts.append("NSP")
        if self.peek:
            parts.append("peek")
        else:
            full = (self.double_full_amount, self.split_full_amount)
            parts.append({(True, True): "ENHC-all", (False, False): "ENHC-OBO"}.get(full, "ENHC"))
        parts.append("3:2" if self.blackjack_pays == 1.5 else "6:5")
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The choices as JSON-ready data."""
        return {
            "decks": self.decks,
            "h17": self.h17,
            "double_totals": None if self.double_totals is None else sorted(self.double_totals),
            "das": self.das,
            "max_split_hands": self.max_split_hands,
            "resplit_aces": self.resplit_aces,
            "hit_split_aces": self.hit_split_aces,
            "late_surrender": self.late_surrender,
            "peek": self.peek,
            "blackjack_pays": self.blackjack_pays,
            "penetration": self.penetration,
            "ez_bust": self.ez_bust,
            "ez_bust_push_all": self.ez_bust_push_all,
            "insurance": self.insurance,
            "split": self.split,
            "double_full_amount": self.double_full_amount,
            "split_full_amount": self.split_full_amount,
            "spots": self.spots,
            "abbreviation": self.abbreviation(),
        }

    # -- kernel views ----------------------------------------------------------------------

    def shoe_counts(self) -> np.ndarray:
        """Cards per point class (ace … ten-value); for an infinite deck, the weights 1 … 4."""
        decks = 1 if self.decks is None else self.decks
        counts = np.full(10, 4.0 * decks)
        counts[9] = 16.0 * decks
        if self.decks is None:
            counts /= 4.0
        return counts

    def kernel_vector(self) -> np.ndarray:
        """The numbers the exact kernels read (see ``_exact_kernels.R_*``)."""
        return np.array(
            [
                float(self.h17),
                float(self.das),
                float(self.max_split_hands),
                float(self.resplit_aces),
                float(self.hit_split_aces),
                float(self.late_surrender),
                float(self.peek),
                float(self.blackjack_pays),
                float(self.double_full_amount),
                float(self.split_full_amount),
                float(self.split),
            ]
        )

    def double_mask(self) -> np.ndarray:
        """1 for each first-two-card total (index 0–21) that may double."""
        mask = np.zeros(22, dtype=np.int64)
        for total in range(4, 21):
            if self.double_totals is None or total in self.double_totals:
                mask[total] = 1
        return mask
