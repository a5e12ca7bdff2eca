"""A table's configuration: its id, its rules and how the server runs it (docs/server.md,
"Tables file")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MANUAL_ENTRY", "TableConfig"]

MANUAL_ENTRY = ("supervisor", "open")
"""Who lets the console enter a card by hand (:attr:`TableConfig.manual_entry`)."""


@dataclass
class TableConfig:
    """A table: its id, rules and how it is run (see docs/server.md, "Tables file")."""

    id: str
    rules: Any
    title: str = ""
    source: str = "virtual"
    """``virtual`` (shuffled shoe, automated dealing) or ``reader`` (card reader / console)."""
    automated: bool = True
    """The server opens rounds and closes wagering by itself (the demo's automated dealer)."""
    wagering_seconds: float = 15.0
    between_rounds_seconds: float = 5.0
    countdown_seconds: float | None = None
    """Clock length for games whose rules have none (classic); hybrid rules carry their own."""
    recovery: str = "resume"
    """After a crash: ``resume`` the open round, or ``void`` it and refund every wager."""
    seed: int | None = None
    require_procedures: bool = True
    """Refuse to deal without today's card reader inspection, inspected decks under 24 hours."""
    gaming_day_start_hour: int = 6
    cards: str | None = None
    """A stacked card order for the virtual shoe's first shoe (scenario tests, demonstrations)."""
    confirm_above: int | None = None
    """PA 605a double confirmation: a wager above this many cents must be confirmed a second
    time by the player (``"confirm": true``); None: no second confirmation."""
    result_hold_seconds: float = 30.0
    """PA 605a: a settled round's result stays on the terminal until the player acknowledges
    it or this many seconds pass, even when the next round opens meanwhile."""
    manual_entry: str = "supervisor"
    """At a reader table, who lets the dealer enter a card by hand at the console (a typed or
    clicked card, a keyboard reader): ``supervisor`` (the default: a supervisor allows it for
    the round in progress, PA 633c.5(j)) or ``open`` (every round; still recorded as manual).
    Cards from the card-reading shoe's line need neither."""
    simulated_shoe: bool = False
    """A demonstration's card-reading shoe: the console's "Deal from the shoe" makes the server
    read the next card out of the loaded shoe's own count, as a shoe on the reader line would
    (never on a casino floor, where the shoe is a device)."""

    def __post_init__(self) -> None:
        above = self.confirm_above
        if above is not None and (isinstance(above, bool) or not isinstance(above, int)):
            raise ValueError(f"confirm_above = {above!r} must be whole cents (PA 605a).")
        if above is not None and above <= 0:
            raise ValueError(f"confirm_above = {above!r} cents must be positive (PA 605a).")
        hold = self.result_hold_seconds
        if isinstance(hold, bool) or not isinstance(hold, int | float) or not 0 <= hold <= 3600:
            raise ValueError(
                f"result_hold_seconds = {hold!r} must be between 0 and 3600 seconds (PA 605a)."
            )
        if self.manual_entry not in MANUAL_ENTRY:
            raise ValueError(
                f"manual_entry = {self.manual_entry!r} must be one of {', '.join(MANUAL_ENTRY)} "
                "(PA 633c.5(j))."
            )
        if self.simulated_shoe and self.source != "reader":
            raise ValueError('simulated_shoe = true needs source = "reader" (PA 633c.5(j)).')

    def to_json(self) -> dict[str, Any]:
        """The configuration without the rules (stored beside them)."""
        return {
            "title": self.title,
            "source": self.source,
            "automated": self.automated,
            "wagering_seconds": self.wagering_seconds,
            "between_rounds_seconds": self.between_rounds_seconds,
            "countdown_seconds": self.countdown_seconds,
            "recovery": self.recovery,
            "seed": self.seed,
            "require_procedures": self.require_procedures,
            "gaming_day_start_hour": self.gaming_day_start_hour,
            "cards": self.cards,
            "confirm_above": self.confirm_above,
            "result_hold_seconds": self.result_hold_seconds,
            "manual_entry": self.manual_entry,
            "simulated_shoe": self.simulated_shoe,
        }
