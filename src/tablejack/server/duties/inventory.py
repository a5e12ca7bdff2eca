"""The card inventory of a shoe (PA Chapter 605a; the decks of PA 633a.3(a), 633c.5(f)).

When a shoe is loaded at a card-reader table, the shuffler's count of its cards (per card code)
is recorded as a ``shoe_load`` event of the table's procedure log. It must be exactly ``N``
full decks, ``N`` the rules' ``decks``: a short shoe (a card missing) or an over-full one (a
duplicate, or a code that is not a card) is refused — the ``shoe_load`` event records the
refusal and the problem, the table is tilted ``card_inventory`` and deals nothing.

Every card the reader sends is taken out of what remains of the inventory: a card with no copy
left is a ``card_inventory`` tilt and stops the round as an irregularity. A card that came out of
the shoe counts as out whatever the engine does with it (dealt, refused as not asked for, read
while the table is locked), since it is no longer in the shoe.

At the end of the shoe (``UNLOAD``) the cards left in it are counted: the cards read plus the
cards counted out must equal the inventory; a difference (a missing card, or one too many) is
a ``card_inventory`` tilt. The ``shoe_end`` event records both counts and the difference.

The inventory survives a restart: the last ``shoe_load`` of the procedure log, less the cards of
the rounds dealt since (their ``card`` events) and the refused cards (``irregularity`` and
``card_refused`` events that name a ``code``).

A virtual shoe (``source = "virtual"``) loads its own inventory at each shuffle
(:meth:`~tablejack.server.table.cards.VirtualShoe.loaded`); its cards come out of that list by
construction.

>>> problems(counts_of([card.code for card in full_deck()] * 2), 2)
{}
>>> problems({"AS": 1, "2S": 3}, 1)["short"]["KC"]
1
>>> problems({"AS": 1, "2S": 3}, 1)["over"]
{'2S': 2}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tablejack.core.cards import Card, full_deck
from tablejack.core.errors import InvalidNotationError
from tablejack.server.duties.tilts import raise_tilt
from tablejack.server.table import RefusedError, Table
from tablejack.server.table.cards import ShoeInventory
from tablejack.store import EventIn, EventRecord

__all__ = [
    "INVENTORY_RULE",
    "ShoeCount",
    "card_code",
    "counts_of",
    "load",
    "problem",
    "problems",
    "restore",
    "take",
    "unload",
]

INVENTORY_RULE = "card inventory (PA 633a.3(a), 633c.5(f))"
CODES = tuple(card.code for card in full_deck())


def counts_of(cards: str | Iterable[str]) -> dict[str, int]:
    """Counts per card code of a list of codes (``"AS 10H QD"`` or an iterable); a code that is
    not a card is kept as written, so the check can name it."""
    items = cards.split() if isinstance(cards, str) else list(cards)
    out: Counter[str] = Counter()
    for item in items:
        out[card_code(item)] += 1
    return dict(out)


def card_code(text: str) -> str:
    """A card's code as the inventory counts it (``10s`` → ``10S``); a text that is not a card
    is kept as written (at most 8 characters), so the check can name it."""
    try:
        return Card.parse(text.strip().upper()).code
    except InvalidNotationError:
        return text.strip()[:8]


def problems(counts: Mapping[str, int], decks: int) -> dict[str, Any]:
    """How ``counts`` differ from ``decks`` full decks: ``short`` (copies missing per code),
    ``over`` (copies too many), ``unknown`` (codes that are not cards); empty when exact."""
    out: dict[str, Any] = {}
    short = {c: decks - counts.get(c, 0) for c in CODES if counts.get(c, 0) < decks}
    over = {c: n - decks for c, n in counts.items() if c in CODES and n > decks}
    unknown = sorted(c for c, n in counts.items() if c not in CODES and n)
    if short:
        out["short"] = short
    if over:
        out["over"] = over
    if unknown:
        out["unknown"] = unknown
    return out


def describe(found: Mapping[str, Any]) -> str:
    """The problems in words."""
    parts = []
    if found.get("short"):
        parts.append(
            f"short {sum(found['short'].values())} ("
            + ", ".join(f"{c}×{n}" for c, n in found["short"].items())
            + ")"
        )
    if found.get("over"):
        parts.append(
            f"over-full {sum(found['over'].values())} ("
            + ", ".join(f"{c}×{n}" for c, n in found["over"].items())
            + ")"
        )
    if found.get("unknown"):
        parts.append("not cards: " + ", ".join(found["unknown"]))
    return "; ".join(parts)


class ShoeCount:
    """A table's card inventory as the table is handed it (its
    :class:`~tablejack.server.table.CardInventory`): the floor makes one for each table."""

    rule = INVENTORY_RULE

    def __init__(self, table: Table) -> None:
        self.table = table

    async def restore(self, records: Sequence[EventRecord]) -> None:
        """The shoe in use, from the procedure log (:func:`restore`)."""
        await restore(self.table, records)

    def problem(self) -> RefusedError | None:
        """Why the table may not deal for want of a loaded shoe (:func:`problem`)."""
        return problem(self.table)

    def take(self, code: str) -> bool:
        """Count a card read (:func:`take`)."""
        return take(self.table, code)


def _refused(code: str, message: str) -> RefusedError:
    return RefusedError(code, message, INVENTORY_RULE)


def _in_progress(table: Table) -> bool:
    return table.round is not None and not table.round.is_complete


async def load(table: Table, counts: Mapping[str, int], *, by: str, source: str) -> dict[str, Any]:
    """Load a shoe at a reader table: exactly ``N`` full decks, else refused and tilted."""
    async with table.lock:
        if table.shoe is not None:
            raise _refused(
                "source", f"Table {table.id} deals from its virtual shoe; it loads itself."
            )
        if _in_progress(table):
            raise _refused("round", f"Round {table.round_id} is in progress; load between rounds.")
        if table.inventory is not None:
            raise _refused(
                "loaded",
                "A shoe is loaded; unload it (with the count of the cards left in it) first.",
            )
        decks = int(table.rules.decks)
        found = problems(counts, decks)
        payload: dict[str, Any] = {
            "decks": decks,
            "counts": dict(sorted(counts.items())),
            "total": sum(counts.values()),
            "expected": decks * 52,
            "result": "refused" if found else "ok",
            "round_number": table.number,
            "source": source,
        }
        if found:
            payload["problems"] = found
        record = await table.log_procedure(  # the gaming-day record shows the load
            EventIn("shoe_load", payload, actor=by, terminal=source)
        )
        if found:
            message = (
                f"the shoe loaded holds {payload['total']} cards, not {decks} full decks "
                f"({describe(found)})."
            )
            await raise_tilt(table, "card_inventory", message, by=by, rule=INVENTORY_RULE)
            raise _refused("card_inventory", f"Shoe refused: {message}")
        table.inventory = ShoeInventory(decks, dict(counts), table.number, record.seq, by)
    table.changed()
    return {"ok": True, "table": table.id, **table.inventory.to_json()}


async def unload(
    table: Table, counted: Mapping[str, int], *, by: str, source: str
) -> dict[str, Any]:
    """End the shoe: the cards read plus the cards ``counted`` out must equal the inventory;
    a difference is a ``card_inventory`` tilt."""
    async with table.lock:
        inventory = table.inventory
        if inventory is None:
            raise _refused("unloaded", f"Table {table.id} has no shoe loaded.")
        if _in_progress(table):
            raise _refused(
                "round", f"Round {table.round_id} is in progress; unload between rounds."
            )
        left = inventory.remaining()
        missing = {c: n - counted.get(c, 0) for c, n in left.items() if counted.get(c, 0) < n}
        over = {c: n - left.get(c, 0) for c, n in counted.items() if n > left.get(c, 0)}
        payload: dict[str, Any] = {
            "counted": dict(sorted(counted.items())),
            "read": sum(inventory.out.values()) + sum(inventory.extra.values()),
            "loaded": sum(inventory.loaded.values()),
            "result": "mismatch" if missing or over or inventory.extra else "ok",
            "missing": missing,
            "over": over,
            "extra_reads": dict(inventory.extra),
            "source": source,
        }
        await table.log_procedure(EventIn("shoe_end", payload, actor=by, terminal=source))
        table.inventory = None
        if payload["result"] == "mismatch":
            words = []
            if missing:
                words.append("missing " + ", ".join(f"{c}×{n}" for c, n in missing.items()))
            if over:
                words.append("too many " + ", ".join(f"{c}×{n}" for c, n in over.items()))
            if inventory.extra:
                words.append(
                    "read with no copy left "
                    + ", ".join(f"{c}×{n}" for c, n in inventory.extra.items())
                )
            message = f"end of shoe: the cards read and counted out differ ({'; '.join(words)})."
            await raise_tilt(table, "card_inventory", message, by=by, rule=INVENTORY_RULE)
            raise _refused("card_inventory", f"Shoe mismatch: {message}")
    table.changed()
    return {"ok": True, "table": table.id, **payload}


def take(table: Table, code: str) -> bool:
    """Count a card read at a reader table; False when the inventory has no copy left. A table
    with no shoe loaded (checks off: ``require_procedures = false``) takes every card."""
    if table.inventory is None:
        return True
    return table.inventory.take(code)


def problem(table: Table) -> RefusedError | None:
    """Why a reader table may not deal for want of a loaded shoe (with the procedures on)."""
    if table.shoe is None and table.inventory is None:
        return _refused(
            "procedure",
            "No shoe is loaded: load the shoe (the shuffler's count of N full decks) before "
            f"dealing ({INVENTORY_RULE}).",
        )
    return None


async def restore(table: Table, records: Sequence[EventRecord]) -> None:
    """Rebuild the shoe in use from the procedure log and the rounds dealt since (at start)."""
    last: EventRecord | None = None
    for record in records:
        if record.kind == "shoe_load":
            last = record if record.payload.get("result") == "ok" else None
        elif record.kind == "shoe_end":
            last = None
    if last is None or table.shoe is not None:
        table.inventory = None
        return
    inventory = ShoeInventory(
        int(last.payload["decks"]),
        dict(last.payload["counts"]),
        int(last.payload["round_number"]),
        last.seq,
        last.actor,
    )
    codes: list[str] = [
        r.payload["code"]
        for r in records
        if r.seq > last.seq and r.kind in ("irregularity", "card_refused") and r.payload.get("code")
    ]
    store = table.floor.store
    rows = await store.rounds(table_id=table.id, limit=1000)
    for row in sorted(rows, key=lambda r: r["number"]):
        if row["number"] <= inventory.round_number:
            continue
        for event in await store.events(row["id"]):
            if event.kind == "card" or (event.kind == "irregularity" and event.payload.get("code")):
                codes.append(event.payload["code"])
            elif event.kind == "card_correction":  # the card read was the other one
                codes.remove(event.payload["was"])
                codes.append(event.payload["code"])
    for code in codes:
        inventory.take(code)
    table.inventory = inventory
