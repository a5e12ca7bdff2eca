"""The demo floor: a version A hybrid table, a version B table when the engine has one, a
classic table with EZ Bust and an NJ multi-action table, each dealt from a virtual card-reading
shoe by the automated dealer; and a version A table dealt by a person (``L1``, PA 633c.5): the
dealer opens each round and closes wagering at the dealer console and deals from the
card-reading shoe — cards clicked or typed at the console, read by the console's simulated
shoe, or sent by a reader over the line protocol (:mod:`tablejack.server.socket.reader`);
demo players with credit, four registered terminals per table (each with its device
credential), and dealer, supervisor, cashier and operator tokens.

The demo's landing page (``/``) signs a browser in as any demo player at any demo terminal, or
as a member of staff, with one click (``POST /api/demo/sign-in``): the demo's secrets are fixed
and printed at start. Those two routes exist only on a server started with ``--demo``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tablejack.core.cards import full_deck
from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES
from tablejack.server.duties.inventory import counts_of
from tablejack.server.duties.inventory import load as load_shoe
from tablejack.server.floor.floor import Floor
from tablejack.server.http.access import floor_of, set_cookie
from tablejack.server.support.auth import DEVICE_COOKIE, SESSION_COOKIE, AuthRefusedError
from tablejack.server.support.text import REFUSE_CONTROL_CHARACTERS
from tablejack.server.table import TableConfig
from tablejack.server.table.games import ADAPTERS
from tablejack.store import StoreError
from tablejack.store import credentials as creds
from tablejack.store.vouchers import terminals

__all__ = [
    "DEMO_PLAYERS",
    "DEMO_STAFF",
    "demo_setup",
    "demo_tables",
    "demo_terminal_key",
    "demo_urls",
    "router",
]

DEMO_PLAYERS = ("ann", "bob", "cat", "dan")
DEMO_CREDIT = 100_000
"""$1,000.00 of credit for each demo player."""
DEMO_STAFF = {
    "dealer": ("dealer-dana", "demo-dealer"),
    "supervisor": ("floor-sam", "demo-supervisor"),
    "cashier": ("cage-cleo", "demo-cashier"),
    "operator": ("ops-olga", "demo-operator"),
}
"""Each staff role's demo employee and token."""
STAFF_PAGES = {"dealer": "/static/dealer.html", "cashier": "/static/cage.html"}
"""Each staff role's page (the supervisor's page for the others)."""
TERMINALS_PER_TABLE = 4
SEATED_GAMES = ("classic", "multi-action")
"""Games whose terminals are bound to a seat (the others' players select a position)."""


def demo_terminal_key(terminal: str) -> str:
    """The device credential of a demo terminal."""
    return f"demo-key-{terminal}"


def demo_tables() -> list[TableConfig]:
    """The demo tables (version B only when the engine offers ``hybrid-shared``, multi-action
    when it offers ``multi-action``)."""
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
        live = GAMES["hybrid"].rules_class.from_mapping(
            {"name": "Hybrid table, version A, live dealer (PA 633c.5)", "countdown_seconds": 20}
        )
        tables.append(
            TableConfig(
                "L1",
                live,
                title="Hybrid A — live dealer",
                source="reader",  # the dealer's card-reading shoe (simulated in the demo)
                simulated_shoe=True,  # entry by hand only when a supervisor allows it
                automated=False,  # the dealer opens each round and closes wagering
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
    if "multi-action" in GAMES and "multi-action" in ADAPTERS:
        rules = GAMES["multi-action"].rules_class.from_mapping({"name": "NJ multi-action"})
        tables.append(
            TableConfig(
                "M1",
                rules,
                title="Multi-action — three spots",
                wagering_seconds=10,
                countdown_seconds=15,
            )
        )
    return tables


async def demo_setup(floor: Floor) -> None:
    """Players with credit and tokens; staff tokens; today's procedures on every demo table."""
    for player in DEMO_PLAYERS:
        await floor.add_player(player, DEMO_CREDIT, f"demo-{player}")
    for role, (subject, token) in DEMO_STAFF.items():
        await floor.issue_token(role, subject, token)
    for table in floor.tables.values():
        seated = table.game in SEATED_GAMES
        for number in range(1, TERMINALS_PER_TABLE + 1):
            terminal = f"{table.id}-EWT{number}"
            await floor.register_terminal(
                terminal,
                table.id,
                position=number if seated else None,
                key=demo_terminal_key(terminal),
            )
    for table in floor.tables.values():
        if table.config.source == "reader" and table.inventory is None:  # the live table's shoe
            decks = [card.code for card in full_deck()] * table.rules.decks
            await load_shoe(table, counts_of(decks), by="dealer-dana", source="demo")
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
    """What to open, and the demo's secrets (for the API; never in a URL)."""
    lines = [
        f"start here:  {base}/  (sign in as any demo player at any terminal, or as staff)",
        f"terminals:   {', '.join(f'{c.id}-EWT1..{TERMINALS_PER_TABLE}' for c in floor_tables)}"
        f" (device credentials demo-key-<terminal>)",
        f"players:     {', '.join(DEMO_PLAYERS)} (tokens demo-<player>)",
        "staff:       " + ", ".join(f"{role} {token}" for role, (_, token) in DEMO_STAFF.items()),
        f"API (OpenAPI):  {base}/docs  (Authorization: Bearer <token>)",
    ]
    return lines


class DemoSignIn(BaseModel):
    """Sign this browser in as a demo player at a demo terminal, or as demo staff."""

    player: Annotated[str, Field(pattern=r"^[a-z]{1,16}$"), REFUSE_CONTROL_CHARACTERS] | None = None
    terminal: (
        Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$"), REFUSE_CONTROL_CHARACTERS] | None
    ) = None
    role: (
        Annotated[
            str, Field(pattern=r"^(dealer|supervisor|cashier|operator)$"), REFUSE_CONTROL_CHARACTERS
        ]
        | None
    ) = None

    model_config = ConfigDict(  # the document says what the check below refuses
        json_schema_extra={
            "anyOf": [
                {
                    "required": ["player", "terminal"],
                    "properties": {"player": {"type": "string"}, "terminal": {"type": "string"}},
                },
                {"required": ["role"], "properties": {"role": {"type": "string"}}},
            ]
        }
    )

    @model_validator(mode="after")
    def _someone(self) -> DemoSignIn:
        if (self.player is None or self.terminal is None) and self.role is None:
            raise ValueError("Name a player and a terminal, or a staff role.")
        return self


router = APIRouter()


@router.get("/api/demo")
async def demo(request: Request) -> dict[str, Any]:
    """The demo's tables, terminals, players and staff."""
    floor = floor_of(request)
    rows = await terminals(floor.store)
    return {
        "players": list(DEMO_PLAYERS),
        "staff": [{"role": r, "subject": s} for r, (s, _) in DEMO_STAFF.items()],
        "tables": [
            {
                "id": table.id,
                "title": table.config.title or table.id,
                "game": table.game,
                "terminals": [
                    {"id": r["id"], "position": r["position"]}
                    for r in rows
                    if r["table_id"] == table.id and r["status"] == "active"
                ],
            }
            for table in floor.tables.values()
        ],
    }


@router.post("/api/demo/sign-in")
async def demo_sign_in(request: Request, response: Response, body: DemoSignIn) -> dict[str, Any]:
    """Set this browser's cookies for a demo identity; where to go next."""
    floor = floor_of(request)
    if body.player is not None and body.terminal is not None:
        if body.player not in DEMO_PLAYERS:
            raise HTTPException(404, f"No demo player {body.player!r}.")
        try:
            binding = await floor.auth.binding(body.terminal)
        except AuthRefusedError as refusal:
            raise HTTPException(404, refusal.message) from None
        key = demo_terminal_key(body.terminal)
        token = f"demo-{body.player}"
        page = f"/static/terminal.html?table={binding.table}"
    else:
        assert body.role is not None  # (DemoSignIn refuses a body that names no one)
        key, token, binding = None, DEMO_STAFF[body.role][1], None
        page = STAFF_PAGES.get(body.role, "/static/supervisor.html")
    parent = await creds.lookup(floor.store, token)
    principal = await floor.auth.authenticate(token, fresh=True)
    if parent is None or principal is None:
        raise HTTPException(409, "The demo's credentials are gone; restart the demo.")
    try:
        session = await creds.open_session(
            floor.store,
            parent,
            terminal=None if binding is None else binding.terminal,
            by=principal.actor(),
            device=None if key is None else await creds.lookup(floor.store, key),  # its key
        )
    except StoreError as error:  # the terminal's key replaced: not the demo's any more
        raise HTTPException(409, f"{error} Restart the demo.") from None
    if key is not None:
        device = await floor.auth.authenticate(key)
        expires = session.credential.expires_us if device is None else device.expires_us
        set_cookie(request, response, DEVICE_COOKIE, key, expires)
    set_cookie(request, response, SESSION_COOKIE, session.token, session.credential.expires_us)
    return {"page": page, "role": principal.role, "subject": principal.subject}
