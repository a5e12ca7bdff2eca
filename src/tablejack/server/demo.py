"""The demo floor: a version A hybrid table, a version B table when the engine has one, a
classic table with EZ Bust, each dealt from a virtual card-reading shoe by the automated dealer;
demo players with credit, and dealer and supervisor tokens."""

from __future__ import annotations

from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES
from tablejack.server.adapters import ADAPTERS
from tablejack.server.floor import Floor
from tablejack.server.table import TableConfig

__all__ = ["DEMO_PLAYERS", "demo_setup", "demo_tables", "demo_urls"]

DEMO_PLAYERS = ("ann", "bob", "cat", "dan")
DEMO_CREDIT = 100_000
"""$1,000.00 of credit for each demo player."""


def demo_tables() -> list[TableConfig]:
    """The demo tables (version B only when the engine offers ``hybrid-shared``)."""
    tables: list[TableConfig] = []
    if "hybrid" in GAMES:
        rules = GAMES["hybrid"].rules_class.from_mapping(
            {"name": "Hybrid table, version A (PA 633c.5(a)-(v))", "countdown_seconds": 15}
        )
        tables.append(
            TableConfig(
                "A1",
                rules,
                title="Hybrid A — Buzzer Beater",
                wagering_seconds=10,
                confirm_above=50_000,  # a wager above $500 is confirmed twice (PA 605a)
            )
        )
    if "hybrid-shared" in GAMES and "hybrid-shared" in ADAPTERS:
        rules = GAMES["hybrid-shared"].rules_class.from_mapping({"name": "Hybrid table, version B"})
        tables.append(
            TableConfig("B1", rules, title="Hybrid B — shared start", wagering_seconds=10)
        )
    classic = ClassicRules(name="PA 633a six-deck shoe game with EZ Bust", ez_bust=True)
    tables.append(
        TableConfig(
            "C1", classic, title="Classic — EZ Bust", wagering_seconds=10, countdown_seconds=15
        )
    )
    return tables


async def demo_setup(floor: Floor) -> None:
    """Players with credit and tokens; staff tokens; today's procedures on every demo table."""
    for number, player in enumerate(DEMO_PLAYERS, start=1):
        await floor.add_player(player, DEMO_CREDIT, f"demo-{player}")
        del number
    await floor.store.issue_token("dealer", "dealer-dana", "demo-dealer")
    await floor.store.issue_token("supervisor", "floor-sam", "demo-supervisor")
    for table in floor.tables.values():
        if table.procedure_problem() is None:
            continue
        await table.record_procedure(
            "reader_inspection", {"result": "ok", "note": "demo"}, "floor-sam"
        )
        await table.record_procedure("decks_registered", {"decks": table.rules.decks}, "floor-sam")
        await table.record_procedure(
            "deck_inspection",
            {"dealer": "dealer-dana", "result": "ok", "note": "demo", "verified_by": "floor-sam"},
            "floor-sam",
        )


def demo_urls(base: str, floor_tables: list[TableConfig]) -> list[str]:
    """The pages to open."""
    first = floor_tables[0].id if floor_tables else "A1"
    lines = []
    for number, player in enumerate(DEMO_PLAYERS[:2], start=1):
        lines.append(
            f"terminal ({player}):  {base}/static/terminal.html?token=demo-{player}&table={first}"
            f"&terminal=EWT-{number}"
        )
    for config in floor_tables:
        lines.append(
            f"dealer console {config.id}:  {base}/static/dealer.html?token=demo-dealer&table={config.id}"
        )
    lines.append(f"supervisor:  {base}/static/supervisor.html?token=demo-supervisor")
    lines.append(f"API (OpenAPI):  {base}/docs")
    return lines
