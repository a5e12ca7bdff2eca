"""A table's gaming-day record (PA 633c.5(d), (g), (i)): the card reader's inspection, the decks
in use and their inspection, rebuilt from the table's procedure log (``<table>-procedures``),
and the last entries of that log for the console."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tablejack.store import EventRecord

__all__ = ["DAY_US", "DECK_AGE_RULE", "DECK_INSPECTION_RULE", "READER_RULE", "Procedures"]

DAY_US = 24 * 3600 * 1_000_000
READER_RULE = "PA 633c.5(d)"
DECK_AGE_RULE = "PA 633c.5(g)"
DECK_INSPECTION_RULE = "PA 633c.5(i)"


@dataclass
class Procedures:
    """The table's gaming-day record (rebuilt from its procedure log)."""

    reader_day: str | None = None
    reader_by: str = ""
    decks_us: int | None = None
    decks_by: str = ""
    decks_inspected: bool = False
    inspected_by: str = ""
    history: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, record: EventRecord) -> None:
        """Take in one event of the procedure log (the last 50 stay in ``history``)."""
        payload = record.payload
        entry = {"kind": record.kind, "at_us": record.at_us, **payload}
        if record.kind == "reader_inspection" and payload.get("result") == "ok":
            self.reader_day, self.reader_by = payload["gaming_day"], payload["by"]
        elif record.kind == "reader_inspection":
            self.reader_day = None
        elif record.kind == "decks_registered":
            self.decks_us, self.decks_by = record.at_us, payload["by"]
            self.decks_inspected = False
        elif record.kind == "deck_inspection":
            self.decks_inspected = payload.get("result") == "ok"
            self.inspected_by = f"{payload['dealer']} / {payload['verified_by']}"
        if record.kind != "table":
            self.history.append(entry)
            del self.history[:-50]
