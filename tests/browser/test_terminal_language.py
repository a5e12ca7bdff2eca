"""Every string a person reads on the pages comes from the language catalog (PA 605a): the keys
the terminal uses — written out in its source, and the families it builds from the engine's
own words (phases, wager kinds, results, decisions, tilt codes, countdown defaults, paytable
lines) — and the keys of the staff pages and the landing page (the dealer console, the
supervisor page, their helpers, the sign-in forms; their families: games, roles, phases,
statuses, meters, wager kinds, tilt and clear codes, countdown defaults) are in the English and
the Spanish catalog; and a round played in Spanish in a real browser shows no English phase,
wager name or decision. (The staff pages in Spanish in a browser: test_staff_language.py.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablejack import server
from tablejack.core.records import Result, WagerKind
from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES, classic, hybrid, hybrid_shared, multi_action
from tablejack.games.countdown import COUNTDOWN_CHOICES
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig
from tablejack.server.table.games import paytables
from tablejack.store.policy import Role
from tablejack.store.protections import CLEAR_CODES, TILT_CODES
from tablejack.store.settings import DEFAULT_SETTINGS, SETTINGS

STATIC = Path(server.__file__).parent / "static"
PAGE = (
    "terminal.html",
    "terminal.js",
    "terminal_money.js",
    "common.js",
    "cards.js",
    "sound.js",
    "i18n.js",
)
STAFF = (
    "dealer.html",
    "supervisor.html",
    "cage.html",
    "card_entry.js",
    "console_words.js",
    "staff.js",
    "index.html",
    "common.js",
    "i18n.js",
)
"""The staff pages, the landing page and what they import (common.js: the sign-in forms;
console_words.js: the console's transcript and banners)."""
LANGUAGES = ("en", "es")


def catalog(lang: str) -> dict[str, str]:
    loaded: dict[str, str] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text("utf-8"))
    return loaded


def key(text: str) -> str:
    """The page's ``key()``: lower case, every run of other characters one underscore."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def source(name: str) -> str:
    return (STATIC / name).read_text("utf-8")


def written_keys(pages: tuple[str, ...] = PAGE) -> set[str]:
    """The keys the page's source names literally: ``t("…")``, ``cond ? "a.b" : "c.d"``, the
    ``data-i18n`` attributes, the sign-in form's ``words``/``field``, and any other string
    literal of the form ``"namespace.name"`` of a catalog namespace."""
    keys: set[str] = set()
    for name in pages:
        text = source(name)
        keys |= set(re.findall(r'\bt\(\s*"([\w.-]+)"', text))
        for pair in re.findall(r'\?\s*"([a-z]+\.[\w.-]+)"\s*:\s*"([a-z]+\.[\w.-]+)"', text):
            keys |= set(pair)
        keys |= set(re.findall(r'data-i18n(?:-title|-aria-label|-placeholder)?="([\w.-]+)"', text))
        keys |= set(re.findall(r'(?:words\(\s*"\w+",|field\()\s*"([\w.-]+)"', text))
        # any other string naming a key of a catalog namespace ("rg.loss_limit" in a list)
        namespaces = {name.split(".")[0] for name in catalog("en")}
        keys |= {
            found
            for found in re.findall(r'"([a-z]+\.[\w.-]*\w)"', text)
            if found.split(".")[0] in namespaces
        }
    return keys


def listed(name: str, const: str) -> list[str]:
    """The strings of a ``const NAME = [...]`` array of the page's script."""
    match = re.search(rf"const {const} = \[([^\]]*)\]", source(name))
    assert match is not None, const
    return re.findall(r'"([^"]+)"', match.group(1))


def families() -> dict[str, set[str]]:
    """Every key the page builds with a template (``t(`phase.${…}`)``), per prefix, from the
    engine's and the server's own words."""
    tables = [
        table
        for rules in (
            HybridRules(),
            HybridSharedRules(),
            HybridSharedRules(crown_treasure_in_addition=False),
            ClassicRules(ez_bust=True, ez_bust_push_all=True),
        )
        for table in paytables(rules)
    ]
    results = {key(result.value) for result in Result}
    return {
        "phase.": phases(),
        "kind.": {kind.value for kind in WagerKind},
        "result.": results,
        "badge.": results,
        "action.": set(listed("terminal.js", "ACTIONS")),
        "error.": set(listed("terminal.js", "WORDED_ERRORS")),
        "tilt.": set(TILT_CODES),
        "status.table_": {"closed", "halted"},
        "recall.status.": {"open", "complete", "voided"},
        "recall.source.": {"player", "dealer", "countdown_default"},
        "paytable.title.": {table["kind"] for table in tables},
        "paytable.about.": {table["kind"] for table in tables},
        "paytable.note.": {key(note) for table in tables for note in table["notes"]},
        "paytable.line.": {
            key(row["hand"])
            for table in tables
            if table["kind"] != "buzzer_beater"
            for row in table["rows"]
        },
    }


def phases() -> set[str]:
    """The engine's phases of every game, as key parts."""
    return {
        key(phase.value)
        for module in (classic, hybrid, hybrid_shared, multi_action)
        for phase in module.Phase
    }


def staff_families() -> dict[str, set[str]]:
    """Every key the staff pages build with a template (``t(`staff.game.${…}`)``), per prefix,
    from the engine's, the server's and the store's own words."""
    return {
        "meter.": set(listed("supervisor.html", "METER_COLUMNS")),
        "meter.kind.": {kind.value for kind in WagerKind},
        "staff.tilt.": set(TILT_CODES),
        "staff.clear.": set(CLEAR_CODES),
        "staff.game.": set(GAMES),
        "staff.game_short.": set(GAMES),
        "staff.role.": {role.value for role in Role},
        "setting.": set(DEFAULT_SETTINGS),
        "setting.choice.": {choice for spec in SETTINGS.values() for choice in spec.choices},
        "staff.phase.": phases(),
        "staff.table_status.": {"open", "closed", "halted"},
        "staff.terminal_status.": {"active", "retired"},
        "result.": {key(result.value) for result in Result},
        "recall.status.": {"open", "complete", "voided"},
        "console.path.": {path.value for path in hybrid_shared.Path},
        "console.default.": {key(choice) for choice in COUNTDOWN_CHOICES} | {"close_wagering"},
    }


@pytest.mark.parametrize(
    ("pages", "built_by", "least"),
    [(PAGE, families, 250), (STAFF, staff_families, 300)],
    ids=["terminal", "staff-pages"],
)
def test_605a_every_key_a_page_uses_is_in_both_catalogs(
    pages: tuple[str, ...], built_by: Any, least: int
) -> None:
    built: dict[str, set[str]] = built_by()
    templates = {
        prefix for name in pages for prefix in re.findall(r"\bt\(\s*`([\w.-]*)\$\{", source(name))
    }
    assert templates, "the page builds keys from the engine's words"
    unlisted = templates - set(built)
    assert not unlisted, f"keys built with these prefixes are not enumerated here: {unlisted}"
    wanted = written_keys(pages) | {
        prefix + rest for prefix, rests in built.items() for rest in rests
    }
    assert len(wanted) > least
    for lang in LANGUAGES:
        words = catalog(lang)
        missing = sorted(wanted - set(words))
        assert not missing, f"{lang}.json lacks {missing}"
        empty = sorted(k for k, v in words.items() if not v.strip())
        assert not empty, f"{lang}.json has empty strings: {empty}"
    assert set(catalog("en")) == set(catalog("es"))  # the same keys, no language ahead


def test_the_staff_pages_list_the_stores_tilt_and_clear_codes() -> None:
    assert listed("staff.js", "TILT_CODES") == list(TILT_CODES)
    assert listed("staff.js", "CLEAR_CODES") == list(CLEAR_CODES)


def test_605a_placeholders_match_between_the_catalogs() -> None:
    english, spanish = catalog("en"), catalog("es")
    for name, text in english.items():
        assert set(re.findall(r"\{(\w+)\}", text)) == set(
            re.findall(r"\{(\w+)\}", spanish[name])
        ), name


# -- in the browser ---------------------------------------------------------------------------

ORDER = "6S 10D 5H 7C 9C"  # 6S 5H = 11 doubles with 9C = 20 against 10D 7C = 17


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()

    async def setup(floor: Floor) -> None:
        await floor.add_player("ana", 100_000, "tok-ana")
        await floor.issue_token("dealer", "dana", "tok-dealer")
        await floor.register_terminal("EWT-1", "A1", key="key-EWT-1")

    table = TableConfig(
        "A1",
        HybridRules(countdown_seconds=30),
        automated=False,
        require_procedures=False,
        cards=ORDER,
        title="Híbrida A",
    )
    db = str(tmp_path_factory.mktemp("terminal-language") / "floor.db")
    with browser_kit.serve(create_app(db, tables=[table], setup=setup)) as url:
        yield url


def english_words() -> list[str]:
    """The English words of phases, wager kinds, decisions, outcomes and statuses that are not
    the same in Spanish (trade names such as "Buzzer Beater" are), and the engine's raw phase
    names."""
    english, spanish = catalog("en"), catalog("es")
    prefixes = ("phase.", "kind.", "action.", "badge.", "status.", "chips.", "box.", "total.")
    words = {
        text
        for name, text in english.items()
        if name.startswith(prefixes) and "{" not in text and text != spanish[name]
    }
    words |= {phase.value for phase in hybrid.Phase} | {"stand", "hit", "double", "win", "lose"}
    return sorted(words)


def test_605a_a_round_in_spanish_shows_no_english_phase_or_wager_name(
    server: str, browser_kit: Any
) -> None:
    from playwright.sync_api import expect, sync_playwright

    def dealer(command: str) -> None:
        sent = page.request.post(
            f"{server}/api/tables/A1/dealer",
            data={"command": command},
            headers={"Authorization": "Bearer tok-dealer"},
        )
        assert sent.ok

    seen: list[str] = []

    def no_english(where: str) -> None:
        text = page.locator("body").inner_text()
        seen.append(text)
        found = [
            w for w in english_words() if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)
        ]
        assert not found, f"{where}: English on a Spanish terminal: {found}\n{text}"

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        try:
            context = browser_kit.context(browser, viewport={"width": 1280, "height": 800})
            page: Any = context.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            browser_kit.sign_in(page, server, "tok-ana", "EWT-1", "key-EWT-1")
            page.goto(f"{server}/static/terminal.html?lang=es")
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(page.get_by_test_id("status")).to_have_text("Esperando la próxima ronda")
            no_english("no round")
            dealer("open-round")
            expect(page.get_by_test_id("status")).to_have_text("Hagan sus apuestas")
            page.get_by_test_id("position-1").click()
            page.get_by_test_id("amount").fill("10")
            page.get_by_test_id("wager").click()
            page.get_by_test_id("side-amount-buzzer_beater").fill("5")
            page.get_by_test_id("side-buzzer_beater").click()
            expect(page.get_by_test_id("balance")).to_have_text("$985.00")
            no_english("wagering")
            dealer("close-wagering")
            expect(page.get_by_test_id("action-double")).to_have_text("Doblar")
            expect(page.get_by_test_id("status")).to_have_text(
                "Deciden los jugadores — le toca decidir"
            )
            expect(page.get_by_test_id("dealer-total")).to_have_text("Muestra 10")
            no_english("deciding")
            page.get_by_test_id("action-double").click()
            results = page.get_by_test_id("results")
            expect(results).to_contain_text("Apuesta Blackjack Gana $20.00")
            expect(results).to_contain_text("Buzzer Beater Pierde $5.00")
            expect(page.get_by_test_id("round-summary")).to_have_text(
                "Esta ronda: apostado $25.00, devuelto $40.00 — neto +$15.00"
            )
            expect(page.get_by_test_id("hand-outcome-1")).to_have_text("Gana +$20.00")
            expect(page.get_by_test_id("status")).to_have_text("Ronda terminada")
            no_english("result")
            page.get_by_test_id("rules-icon").click()
            rules = page.get_by_test_id("rules-dialog")
            expect(rules).to_contain_text("El Blackjack paga 3 a 2.")
            expect(rules).to_contain_text("Su 20 contra 21 o Blackjack del crupier")
            no_english("rules")
            assert " pays " not in rules.inner_text()
            assert errors == []
        finally:
            browser.close()
