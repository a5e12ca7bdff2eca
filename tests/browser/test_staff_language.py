"""The staff pages and the landing page speak the catalog's language (PA 605a; the catalog test
is test_terminal_language.py): in Chromium at 1280×800, the dealer console — its sign-in form,
a round dealt and settled, a reader table's card entry — the supervisor page — every tab, its
row forms, a recalled round — and the landing page opened in Spanish show none of their English
headings, buttons, column headers or notices — nor, on the console, in its banner and
transcript; the text the server wrote elsewhere (audit messages, the clauses, refusals) may stay
as the server wrote it. The language is
chosen in the page's header and remembered in the browser, as on the terminal."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tests.support.browser import screenshot

SCREEN: Any = {"viewport": {"width": 1280, "height": 800}}
# position 1 (ann): 10S 5C; position 2 (bob): 9H 9C; dealer 6D + hole 10H; then 4S 8D
ORDER = "10S 9H 6D 5C 9C 10H 4S 8D"
REFUSED = re.compile(r"^Failed to load resource: the server responded with a status of (\d+)")

CONSOLE_ENGLISH = [
    "Dealer console", "Sign in", "Your token", "Sign out", "Language", "connecting",
    "Open round", "Close wagering", "Countdown expired", "Card read", "Enter card",
    "Cards come from", "Your role watches", "Wagers this round", "Transcript", "Countdown",
    "no clock running", "then", "Tilts", "No tilt", "Shoe", "Virtual shoe", "cards left",
    "No shoe loaded", "Gaming day", "Card reader", "inspected", "NOT inspected",
    "No decks registered", "Decks", "Register new decks", "Dealer", "Community cards",
    "Position", "Seat", "No round in progress", "No wager", "Player", "Wager", "Amount",
    "Result", "Blackjack Wager", "in play", "back", "round", "playing", "complete", "win",
    "lose", "soft", "bust", "Hybrid", "Classic", "No card is asked for", "is not a card code",
]  # fmt: skip
"""The console's own English words (whole words, case sensitive)."""

SUPERVISOR_ENGLISH = [
    "Floor supervisor", "Verify log", "log verified", "Sign out", "Language", "Tables",
    "Tilts & terminals", "Game recall", "Meters", "Licence", "Audit", "Table", "Game",
    "Status", "Round", "Phase", "Tilts", "Actions", "Open", "Close", "Reader inspected",
    "Decks verified", "Void round", "refund", "Rounds", "Cancel", "Clear", "Lock", "Unlock",
    "reason", "Open tilts", "No open tilt", "Where", "Why", "By", "Since", "Registered terminals",
    "active terminals", "Position", "Connected", "selects", "online", "offline", "active",
    "none", "Recall", "Last rounds of terminal", "Type a round id", "Cards (time read)", "Card",
    "Read at", "Source", "shoe", "Decisions", "Decision", "Settlements", "Player", "Wager",
    "Amount", "Result", "Returned", "Clause", "log verified", "Blackjack Wager", "Drop", "Win",
    "Hold", "Coin in", "Coin out", "Games played", "Floor", "Tip report", "gaming day",
    "Five EWTs", "active EWTs", "a partial group", "Running", "release manifest", "Audit log",
    "newest first", "Rows", "all", "Time (UTC)", "Actor", "Kind", "Rule", "Message", "Hybrid",
    "Classic", "open", "halted", "playing", "wagering", "complete",
]  # fmt: skip
"""The supervisor page's own English words (the meters' headers carry their field names,
``win`` among them, as titles)."""

LANDING_ENGLISH = [
    "Hybrid table system", "Language", "Loading", "tablejack table server", "Each page asks",
    "One browser holds", "Electronic wagering terminal", "Dealer console", "Tables, meters",
    "REST API", "Requests carry", "sign in", "token",
]  # fmt: skip
"""The landing page's own English words."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        for player in ("ann", "bob"):
            await floor.add_player(player, 100_000, f"tok-{player}")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.issue_token("supervisor", "sam", "tok-super")
        for terminal, table in (("EWT-1", "A1"), ("EWT-2", "A1"), ("EWT-3", "C1"), ("EWT-4", "A2")):
            await floor.register_terminal(terminal, table, key=f"key-{terminal}")

    manual: dict[str, Any] = {"automated": False, "require_procedures": False}
    tables = [
        TableConfig(
            "A1", HybridRules(countdown_seconds=60), cards=ORDER, title="Híbrida A", **manual
        ),
        TableConfig(
            "C1",
            ClassicRules(),
            source="reader",
            countdown_seconds=60,
            title="Clásica, lector",
            **manual,
        ),
        TableConfig(
            "A2", HybridRules(countdown_seconds=60), cards=ORDER, title="Híbrida A2", **manual
        ),
    ]
    db = str(tmp_path_factory.mktemp("staff-language") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


def wager(
    server: str, who: str, terminal: str, position: int, amount: int, table: str = "A1"
) -> None:
    """A Blackjack wager at ``table`` from ``who``'s socket at ``terminal``."""
    from websockets.sync.client import connect

    with connect(server.replace("http", "ws") + "/ws") as socket:
        hello = {"type": "hello", "protocol": 2, "token": f"tok-{who}", "terminal": terminal}
        socket.send(json.dumps({**hello, "terminal_key": f"key-{terminal}"}))
        for n, message in enumerate(
            [
                {"type": "join", "table": table},
                {"type": "position", "position": position},
                {"type": "wager", "kind": "blackjack", "amount": amount},
            ]
        ):
            socket.send(json.dumps({**message, "id": str(n)}))
            while True:
                answer = json.loads(socket.recv(timeout=10))
                if answer.get("id") == str(n) and answer["type"] in ("ack", "error"):
                    assert answer["type"] == "ack", answer
                    break


def play_round(server: str, table: str) -> None:
    """A round of ``table`` from its opening to its settlement: ann wagers at EWT-4 and every
    hand stands on the countdown."""
    import urllib.request

    def post(path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"{server}{path}",
            data=json.dumps(body).encode(),
            headers={"Authorization": "Bearer tok-dealer", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def phase() -> str | None:
        request = urllib.request.Request(
            f"{server}/api/tables", headers={"Authorization": "Bearer tok-dealer"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            listed = json.loads(answer.read())
        return next(t["phase"] for t in listed if t["id"] == table)

    post(f"/api/tables/{table}/dealer", {"command": "open-round"})
    wager(server, "ann", "EWT-4", 1, 1000, table)
    post(f"/api/tables/{table}/dealer", {"command": "close-wagering"})
    for _ in range(10):
        if phase() == "complete":
            return
        post(f"/api/tables/{table}/dealer", {"command": "countdown-expired"})
    raise AssertionError(f"the round of {table} did not end")


class Watch:
    """Every page error, and every console error but the refusals ``allowed`` (HTTP statuses:
    a page not yet signed in asks who is, 401)."""

    def __init__(self, page: Any, allowed: tuple[int, ...] = (401,)) -> None:
        self.errors: list[str] = []
        self.allowed = allowed
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def check(self) -> None:
        for error in self.errors:
            refused = REFUSED.match(error)
            assert refused is not None and int(refused.group(1)) in self.allowed, self.errors


def words(page: Any, server_text: tuple[str, ...] = ()) -> str:
    """What a person reads on ``page``: its visible text and the placeholders, titles and
    aria-labels of its visible controls (not the cards' codes) and its title — without the
    parts the server wrote (``server_text``, by test id, and every table cell marked as the
    server's by the test id of its table)."""
    text: str = page.evaluate(
        """(skip) => {
            const visible = (node) => !!(node.offsetWidth || node.offsetHeight || node.getClientRects().length);
            const hidden = skip.flatMap((id) => [...document.querySelectorAll(`[data-testid="${id}"]`)])
              .flatMap((node) => (node.tagName === "TABLE" ? [...node.querySelectorAll("td")] : [node]));
            const before = hidden.map((node) => node.style.visibility);
            for (const node of hidden) node.style.visibility = "hidden";  // innerText leaves it out
            const text = document.body.innerText;
            hidden.forEach((node, n) => { node.style.visibility = before[n]; });
            const attrs = [...document.querySelectorAll("[placeholder], [title], [aria-label]")]
              .filter((node) => visible(node) && !node.closest(".card"))
              .flatMap((node) => ["placeholder", "title", "aria-label"].map((a) => node.getAttribute(a) || ""));
            return [document.title, text, ...attrs].join("\\n");
        }""",
        list(server_text),
    )
    return text


def no_english(
    page: Any, english: list[str], where: str, server_text: tuple[str, ...] = ()
) -> None:
    text = words(page, server_text)
    found = [w for w in english if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)]
    assert not found, f"{where}: English on a Spanish page: {found}\n{text}"


# the console's parts the server wrote: refusals (the next instruction, the transcript, the
# automation note and what a reader table asks for are written from the catalog:
# console_words.js, test_console_words.py)
CONSOLE_SERVER_TEXT = ("notice", "command-error")
# the supervisor's: a recalled round's decisions, the audit log's rows (its headers are the
# page's), the tip report's statement (the recalled transcript is the catalog's words)
SUPERVISOR_SERVER_TEXT = ("recall-decisions", "audit", "tip-state")


def test_605a_the_dealer_console_in_spanish_shows_no_english_heading_or_button(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    def dealer(command: str) -> None:
        sent = page.request.post(
            f"{server}/api/tables/A1/dealer",
            data={"command": command},
            headers={"Authorization": "Bearer tok-dealer"},
        )
        assert sent.ok, sent.text()

    def check(where: str) -> None:
        no_english(page, CONSOLE_ENGLISH, where, CONSOLE_SERVER_TEXT)

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page: Any = browser_kit.context(browser, **SCREEN).new_page()
            watch = Watch(page)
            page.goto(f"{server}/static/dealer.html?table=A1&lang=es")
            # the sign-in form speaks the page's language
            expect(page.get_by_test_id("signin")).to_contain_text(
                "Consola del crupier — iniciar sesión"
            )
            expect(page.get_by_test_id("signin-submit")).to_have_text("Entrar")
            check("sign-in form")
            browser_kit.sign_in_with_forms(page, "tok-dealer")
            expect(page.get_by_test_id("who")).to_have_text("dana (crupier)")
            expect(page.get_by_test_id("open-round")).to_have_text("Abrir ronda")
            expect(page.get_by_test_id("game")).to_have_text("Híbrida A")
            expect(page.get_by_test_id("shoe")).to_contain_text("Sabot virtual, 6 barajas")
            expect(page.get_by_test_id("procedures")).to_contain_text("Jornada de juego")
            check("no round")
            expect(page.get_by_test_id("next")).to_have_text("Abra la ronda siguiente.")

            dealer("open-round")
            expect(page.get_by_test_id("next")).to_have_text(
                "Las apuestas están abiertas; ciérrelas para repartir."
            )
            wager(server, "ann", "EWT-1", 1, 1000)
            wager(server, "bob", "EWT-2", 2, 2500)
            expect(page.get_by_test_id("wagers")).to_contain_text("Apuesta de Blackjack")
            page.get_by_test_id("close-wagering").click()
            expect(page.get_by_test_id("position-2")).to_contain_text("bob $25.00: 18")
            expect(page.get_by_test_id("countdown-what")).to_have_text(
                "decisiones; después: las manos sin decidir se plantan"
            )
            expect(page.get_by_test_id("round-label")).to_have_text("— ronda A1-000001, decisiones")
            check("deciding")
            screenshot(page, "console-spanish")

            for _ in range(10):  # every hand stands on the countdown, round after round
                if "terminada" in page.get_by_test_id("round-label").inner_text():
                    break
                page.get_by_test_id("countdown-expired").click()
                page.wait_for_timeout(300)
            expect(page.get_by_test_id("round-label")).to_have_text("— ronda A1-000001, terminada")
            expect(page.get_by_test_id("wagers")).not_to_contain_text("en juego")
            check("settled")

            # a reader table: its card entry
            page.get_by_test_id("table-select").select_option("C1")
            expect(page.get_by_test_id("card-entry")).to_be_visible()
            expect(page.get_by_test_id("position-7")).to_contain_text("Asiento 7")
            expect(page.get_by_test_id("shoe")).to_contain_text("No hay sabot cargado")
            # PA 633c.5(j): cards by hand wait for a supervisor's approval, said in Spanish
            expect(page.get_by_test_id("card-input")).to_be_hidden()
            expect(page.get_by_test_id("manual-note")).to_have_text(
                "Las cartas vienen del sabot lector. La entrada manual necesita la aprobación "
                "de un supervisor para la ronda."
            )
            check("reader table")

            # the header's selector changes the language in place, and the browser remembers it
            page.get_by_test_id("language").select_option("en")
            expect(page.get_by_test_id("open-round")).to_have_text("Open round")
            expect(page.get_by_test_id("who")).to_have_text("dana (dealer)")
            expect(page.get_by_test_id("position-7")).to_contain_text("Seat 7")
            page.get_by_test_id("language").select_option("es")
            expect(page.get_by_test_id("position-7")).to_contain_text("Asiento 7")
            page.goto(f"{server}/static/dealer.html?table=A1")
            expect(page.get_by_test_id("open-round")).to_have_text("Abrir ronda")
            expect(page.get_by_test_id("language")).to_have_value("es")
            check("remembered")
        finally:
            browser.close()
    watch.check()


def test_605a_the_supervisor_page_in_spanish_shows_no_english_heading_or_button(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    def check(where: str) -> None:
        no_english(page, SUPERVISOR_ENGLISH, where, SUPERVISOR_SERVER_TEXT)

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page: Any = browser_kit.context(browser, **SCREEN).new_page()
            watch = Watch(page)
            browser_kit.sign_in(page, server, "tok-super")
            page.goto(f"{server}/static/supervisor.html?lang=es")
            expect(page.get_by_test_id("who")).to_have_text("sam (supervisor)")
            expect(page.get_by_test_id("tab-tables")).to_have_text("Mesas")
            expect(page.get_by_test_id("table-row-A1")).to_contain_text("abierta")
            page.get_by_test_id("decks-A1").click()
            expect(page.get_by_test_id("decks-A1-submit")).to_have_text(
                "Registrar la inspección de barajas"
            )
            page.get_by_test_id("decks-A1-submit").click()  # no dealer named: refused, in Spanish
            expect(page.get_by_test_id("table-A1-error")).to_have_text(
                "Indique el crupier que inspeccionó las barajas (PA 633c.5(i))."
            )
            check("tables")
            screenshot(page, "supervisor-tables-spanish")

            page.get_by_test_id("tab-tilts").click()
            page.get_by_test_id("lock-EWT-3").click()
            page.get_by_test_id("lock-code-EWT-3").select_option("printer")
            page.get_by_test_id("lock-EWT-3-reason").fill("sin papel")
            page.get_by_test_id("lock-EWT-3-submit").click()
            expect(page.get_by_test_id("terminal-tilts-EWT-3")).to_have_text("Impresora: sin papel")
            expect(page.get_by_test_id("tilt-terminal-EWT-3")).to_contain_text("Terminal EWT-3")
            page.get_by_test_id("unlock-EWT-3").click()
            expect(page.get_by_test_id("unlock-EWT-3-submit")).to_have_text("Desbloquear EWT-3")
            expect(page.get_by_test_id("terminal-count")).to_have_text("— 4 terminales activos")
            check("tilts and terminals")
            page.get_by_test_id("unlock-code-EWT-3").select_option("replaced")  # none by default
            page.get_by_test_id("unlock-EWT-3-reason").fill("papel repuesto")
            page.get_by_test_id("unlock-EWT-3-submit").click()
            expect(page.get_by_test_id("no-tilts")).to_have_text(
                "Ningún bloqueo abierto: todas las mesas y terminales juegan."
            )

            page.get_by_test_id("tab-recall").click()
            page.get_by_test_id("recall").click()  # no round id typed
            expect(page.get_by_test_id("recall-error")).to_have_text(
                "Escriba un id de ronda, p. ej. A1-000001."
            )
            play_round(server, "A2")
            page.get_by_test_id("round-id").fill("A2-000001")
            page.get_by_test_id("recall").click()
            expect(page.get_by_test_id("recall-out")).to_contain_text(
                "A2-000001 — Híbrida, versión A, mesa A2, terminada; registro verificado"
            )
            expect(page.get_by_test_id("recall-transcript")).to_contain_text("ann (posición 1):")
            settlements = page.get_by_test_id("recall-settlements")
            expect(settlements).to_contain_text("Apuesta de Blackjack")
            assert not re.search(r"\b(win|lose|push|blackjack)\b", settlements.inner_text())
            check("recall")

            page.get_by_test_id("tab-meters").click()
            expect(page.get_by_test_id("ewt-meters")).to_contain_text("Partidas jugadas")
            expect(page.get_by_test_id("tip-state")).to_contain_text("jornada de juego")
            check("meters")

            page.get_by_test_id("tab-floor").click()
            expect(page.get_by_test_id("license")).to_have_text(
                "1 mesa para 4 EWT activos (un grupo incompleto de cinco cuenta como una mesa)"
            )
            expect(page.get_by_test_id("software-hash")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
            page.get_by_test_id("verify-log").click()
            expect(page.get_by_test_id("verified")).to_have_text("registro verificado")
            check("licence and software")

            page.get_by_test_id("tab-audit").click()
            audit = page.get_by_test_id("audit")
            for header in ("Hora (UTC)", "Mesa", "Autor", "Terminal", "Tipo", "Regla", "Mensaje"):
                expect(audit.locator("th", has_text=header).first).to_be_visible()
            check("audit")
        finally:
            browser.close()
    watch.check()


def test_605a_the_landing_page_in_spanish_shows_no_english(server: str, browser_kit: Any) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            page: Any = browser_kit.context(browser, **SCREEN).new_page()
            watch = Watch(page, allowed=(401, 404))  # not a demo server: GET /api/demo is 404
            page.goto(f"{server}/static/index.html?lang=es")
            pages = page.get_by_test_id("pages")
            for name in ("Terminal electrónico de apuestas", "Consola del crupier", "Supervisor"):
                expect(pages.get_by_role("link", name=name)).to_be_visible()
            no_english(page, LANDING_ENGLISH, "landing page")
            page.get_by_test_id("language").select_option("en")
            expect(pages.get_by_role("link", name="Dealer console")).to_be_visible()
        finally:
            browser.close()
    watch.check()
