"""A full round on the terminal page of every table type — version A, version B, classic with
EZ Bust, multi-action — at 1280×800 and at a phone's 390×844, in a real browser (Playwright
driving Debian's Chromium). Fixed card orders stack the virtual shoe, so every total, stake and
result is asserted exactly; the page never scrolls, the action bar and the hands stay in the
viewport, and the page logs no error.

``TABLEJACK_SCREENSHOTS=<dir>`` saves a picture of each step there (also at 1920×1080)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tablejack.core.rules import ClassicRules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.app import create_app
from tablejack.server.floor.floor import Floor
from tablejack.server.table import TableConfig

DEALER = {"Authorization": "Bearer tok-dealer"}
SCREENS = {"desktop": (1280, 800), "phone": (390, 844), "wide": (1920, 1080)}
SHOTS = os.environ.get("TABLEJACK_SCREENSHOTS")


@dataclass(frozen=True)
class Game:
    """A table type: its rules, its stacked shoe and whether its terminals are bound to a seat."""

    key: str
    rules: Callable[[], Any]
    cards: str
    seated: bool
    countdown: float | None = None


# Version A, position 1: 6S 5H = 11 doubles and takes the community card 9C = 20; the dealer's
# 10D and hole card 7C = 17 stand: the doubled $25 wins $50, the $5 Buzzer Beater loses.
# Version B: the shared start AS 6H = soft 17, the dealer's first card 9D; a hit takes 3C
# (soft 20), the stand sends 7D and 10C to the player's own dealer hand: 26, a bust.
# Classic with EZ Bust: 6S 9D = 15 against the up card 5C, EZ Bust placed; three hits (3C, AS,
# 9H) make 6-9-3-A-9 = 28, a bust; the dealer's 5C 10H draws 7D = 22: EZ Bust wins 1 to 1.
# Multi-action, seat 1: 10S 9D = 19 stands against the first card 6H played three times:
# 6H 10C 8D = 24 (bust), 6H 5C 9C = 20, 6H AS = soft 17.
GAMES = {
    "A": Game("A", lambda: HybridRules(countdown_seconds=30), "6S 10D 5H 7C 9C", False),
    "B": Game("B", lambda: HybridSharedRules(countdown_seconds=30), "AS 9D 6H 3C 7D 10C", False),
    "C": Game(
        "C", lambda: ClassicRules(ez_bust=True), "6S 5C 9D 10H 3C AS 9H 7D", True, countdown=30
    ),
    "M": Game("M", MultiActionRules, "10S 6H 9D 10C 8D 5C 9C AS", True, countdown=30),
}


def table_id(game: str, screen: str) -> str:
    return f"{game}{list(SCREENS).index(screen) + 1}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_kit: Any) -> Iterator[str]:
    browser_kit.require()
    tables = (
        [
            TableConfig(
                table_id(game.key, screen),
                game.rules(),
                automated=False,
                require_procedures=False,
                cards=game.cards,
                countdown_seconds=game.countdown,
                title=f"{game.rules().name or game.key} ({screen})",
                result_hold_seconds=120,
            )
            for game in GAMES.values()
            for screen in SCREENS
        ]
        + []
        + [
            TableConfig(  # classic, seat 1: 8S 8H split against 6C (hole 10D); see the split test
                f"S{number}",
                ClassicRules(),
                automated=False,
                require_procedures=False,
                cards="8S 6C 8H 10D 3C 10S 2D 9H 7C",
                countdown_seconds=30,
                title="Classic, a split",
            )
            for number in (1, 2)
        ]
        + [
            TableConfig(  # multi-action, seat 1: 6S 5D = 11 doubles spots 1 and 3 and takes 9C
                "D1",
                MultiActionRules(),
                automated=False,
                require_procedures=False,
                cards="6S 6H 5D 9C 10C 8D 5C 9D AS",
                countdown_seconds=30,
                title="Multi-action, a double on two spots",
            ),
        ]
        + [
            TableConfig(  # multi-action, seat 1: 8S 8H split against 6H; see the split test
                f"N{number}",
                MultiActionRules(),
                automated=False,
                require_procedures=False,
                cards="8S 6H 8H 10S 10D 10C 8D 5C 9C AS",
                countdown_seconds=30,
                title="Multi-action, a split",
            )
            for number in (1, 2)
        ]
        + [
            TableConfig(  # a countdown table of options (633c.5(z)): hard 11 and soft 17 hit
                "R1",
                HybridSharedRules(
                    countdown_seconds=30,
                    countdown_default="table",
                    countdown_table={"hard-11": "hit", "soft-17": "hit"},
                ),
                automated=False,
                require_procedures=False,
                cards=GAMES["B"].cards,
                title="Version B, countdown options",
            ),
        ]
    )

    async def setup(floor: Floor) -> None:
        await floor.issue_token("dealer", "dana", "tok-dealer")
        for table in tables:
            player = f"p{table.id.lower()}"
            await floor.add_player(player, 100_000, f"tok-{player}")
            seated = table.id[0] in "DNS" or (table.id[0] in GAMES and GAMES[table.id[0]].seated)
            await floor.register_terminal(
                f"T-{table.id}",
                table.id,
                position=1 if seated else None,
                key=f"key-{table.id}",
            )

    db = str(tmp_path_factory.mktemp("terminal-layout") / "floor.db")
    with browser_kit.serve(create_app(db, tables=tables, setup=setup)) as url:
        yield url


class Terminal:
    """One player's terminal page, with the checks every step makes."""

    def __init__(self, page: Any, server: str, table: str, screen: str) -> None:
        self.page, self.server, self.table, self.screen = page, server, table, screen
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.step = 0

    def by(self, test_id: str) -> Any:
        return self.page.get_by_test_id(test_id)

    def dealer(self, command: str) -> None:
        sent = self.page.request.post(
            f"{self.server}/api/tables/{self.table}/dealer",
            data={"command": command},
            headers=DEALER,
        )
        assert sent.ok, sent.text()

    def in_view(self, *test_ids: str) -> None:
        """Each element is shown whole inside the viewport (no scrolling needed)."""
        width, height = SCREENS[self.screen]
        for test_id in test_ids:
            box = self.by(test_id).bounding_box()
            assert box is not None, f"{test_id} is not shown"
            assert box["x"] >= 0 and box["y"] >= 0, (test_id, box)
            assert box["x"] + box["width"] <= width + 0.5, (test_id, box, width)
            assert box["y"] + box["height"] <= height + 0.5, (test_id, box, height)

    def apart(self, first: str, *others: str) -> None:
        """``first`` overlaps none of ``others`` on the screen (a seat that grows does not
        cover the dealer's rounds, the results or the action bar)."""
        a = self.by(first).bounding_box()
        assert a is not None, f"{first} is not shown"
        for other in others:
            b = self.by(other).bounding_box()
            assert b is not None, f"{other} is not shown"
            overlap = (
                min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"]) > 0.5
                and min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"]) > 0.5
            )
            assert not overlap, (first, a, other, b)

    def fits(self) -> None:
        """The page does not scroll: the document is the viewport's size."""
        size = self.page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight,"
            " innerWidth, innerHeight]"
        )
        assert size[0] <= size[2] and size[1] <= size[3], size

    def shot(self, name: str) -> None:
        if SHOTS:
            self.step += 1
            self.page.wait_for_timeout(600)  # the cards dealt last have landed
            self.page.screenshot(path=f"{SHOTS}/{self.table}-{self.step}-{name}.png")

    def clean(self) -> None:
        assert self.errors == [], self.errors


@pytest.fixture
def terminal(server: str, browser_kit: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A function opening the terminal of (game, screen) signed in, at the table's first
    round."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = browser_kit.launch(playwright)
        opened: list[Terminal] = []

        def open_terminal(game: str, screen: str, table: str = "") -> Terminal:
            table = table or table_id(game, screen)
            width, height = SCREENS[screen]
            context = browser_kit.context(browser, viewport={"width": width, "height": height})
            page = context.new_page()
            player = f"p{table.lower()}"
            browser_kit.sign_in(page, server, f"tok-{player}", f"T-{table}", f"key-{table}")
            terminal = Terminal(page, server, table, screen)
            page.goto(f"{server}/static/terminal.html?lang=en")
            expect(terminal.by("balance")).not_to_have_text("—")
            terminal.dealer("open-round")
            expect(terminal.by("status")).to_have_text("Place your wagers")
            opened.append(terminal)
            return terminal

        try:
            yield open_terminal
            for terminal in opened:
                terminal.clean()
        finally:
            browser.close()


def screens() -> list[str]:
    return ["desktop", "phone", "wide"] if SHOTS else ["desktop", "phone"]


@pytest.mark.parametrize("screen", screens())
def test_633c5_c1_version_a_layout_shows_totals_stakes_and_results_on_one_screen(
    terminal: Any, screen: str
) -> None:
    from playwright.sync_api import expect

    tj = terminal("A", screen)
    tj.by("position-1").click()
    expect(tj.by("position")).to_have_text("1")
    tj.by("amount").fill("25")
    tj.by("wager").click()
    expect(tj.by("balance")).to_have_text("$975.00")
    # the side wager has its own amount: the main wager's box keeps its $25
    tj.by("side-amount-buzzer_beater").fill("5")
    tj.by("side-buzzer_beater").click()
    expect(tj.by("balance")).to_have_text("$970.00")
    expect(tj.by("amount")).to_have_value("25")
    expect(tj.by("bet-meter")).to_have_text("$30.00")  # the Bet meter: this round's wagers
    expect(tj.by("win-meter")).to_have_text("$0.00")
    expect(tj.by("stake-buzzer_beater")).to_have_attribute("data-amount", "500")
    expect(tj.by("stake-hand-1")).to_have_attribute("data-amount", "2500")
    expect(tj.by("status")).to_have_text("Place your wagers — your wagers are in")
    tj.shot("wagers")
    tj.dealer("close-wagering")

    expect(tj.by("action-double")).to_be_visible()
    expect(tj.by("hand-total-1")).to_have_text("11")
    expect(tj.page.get_by_label("Amount for a double")).to_have_count(1)  # no EZ Bust at A1
    expect(tj.by("action-panel")).not_to_contain_text("EZ Bust")
    expect(tj.by("placard-ez-bust")).to_have_count(0)
    expect(tj.by("dealer-total")).to_have_text("Showing 10")
    expect(tj.by("dealer-box").locator("[data-card]")).to_have_count(2)  # the hole card, down
    expect(tj.by("status")).to_have_text("Players decide — your decision")
    expect(tj.by("countdown-default")).to_have_text("then: your hand stands")
    tj.in_view("dealer-box", "hand-1", "hand-total-1", "stake-hand-1", "stake-buzzer_beater")
    tj.in_view("action-hit", "action-stand", "action-double", "countdown", "status")
    tj.fits()
    tj.shot("decide")
    tj.by("action-double").click()  # blank amount: the full $25

    expect(tj.by("results")).to_contain_text("You win $50.00")
    expect(tj.by("results")).to_contain_text("Buzzer Beater You lose $5.00")
    expect(tj.by("win-meter")).to_have_text("$100.00")  # the Win meter: what the round paid
    tj.in_view("balance", "bet-meter", "win-meter")
    expect(tj.by("round-summary")).to_have_text(
        "This round: wagered $55.00, back $100.00 — net +$45.00"
    )
    expect(tj.by("hand-total-1")).to_have_text("20")
    expect(tj.by("hand-outcome-1")).to_have_text("Win +$50.00")
    expect(tj.by("dealer-total")).to_have_text("17")
    expect(tj.by("community-box").locator("[data-card='9C']")).to_be_visible()
    expect(tj.by("stake-double-1")).to_be_visible()
    expect(tj.by("balance")).to_have_text("$1,045.00")
    expect(tj.by("status")).to_have_text("Round over")
    assert "PA 633" not in tj.by("felt").inner_text()  # clauses live in recall and history
    tj.in_view("results", "round-summary", "result-ok", "hand-total-1", "dealer-total")
    tj.in_view("stake-hand-1", "stake-double-1", "wager", "action-bar")
    tj.fits()
    tj.shot("result")
    if screen == "wide":
        return  # (the wide table's next round is the rules icon test's)
    # the next round opens: the last round's cards stay on the layout until the next deal
    tj.by("result-ok").click()
    tj.dealer("open-round")
    expect(tj.by("status")).to_contain_text("Place your wagers")
    expect(tj.by("dealer-box").locator("[data-card]")).to_have_count(2)
    expect(tj.by("community-box").locator("[data-card='9C']")).to_be_visible()
    expect(tj.by("hand-1").locator("[data-card]")).to_have_count(3)
    expect(tj.by("felt")).to_have_class(re.compile(r"previous-round"))
    expect(tj.by("stake-hand-1")).to_have_count(0)  # no stake of the last round in play


@pytest.mark.parametrize("screen", screens())
def test_633c5_y_version_b_round_shows_the_players_own_dealer_hand(
    terminal: Any, screen: str
) -> None:
    from playwright.sync_api import expect

    tj = terminal("B", screen)
    expect(tj.by("position-1")).to_contain_text("Players' cards (shared start)")
    tj.by("amount").fill("10")
    tj.by("wager").click()
    expect(tj.by("balance")).to_have_text("$990.00")
    tj.by("side-amount-royal_match").fill("5")
    tj.by("side-royal_match").click()
    expect(tj.by("balance")).to_have_text("$985.00")
    tj.dealer("close-wagering")

    expect(tj.by("hand-total-1")).to_have_text("Soft 17")
    expect(tj.by("dealer-box").locator("h3")).to_have_text("Your dealer hand")
    expect(tj.by("dealer-total")).to_have_text("9")
    # the Royal Match 21 wager settles on the shared start at once (A 6 not suited)
    expect(tj.by("results")).to_contain_text("Royal Match 21 You lose $5.00")
    expect(tj.by("round-summary")).to_have_text("So far: wagered $5.00, back $0.00 — net −$5.00")
    tj.in_view("action-hit", "action-stand", "hand-total-1", "dealer-total", "stake-hand-1")
    tj.fits()
    tj.shot("decide")
    tj.by("action-hit").click()
    expect(tj.by("hand-total-1")).to_have_text("Soft 20")
    expect(tj.by("community-went-1")).to_have_text("your hand")
    tj.shot("hit")
    tj.by("action-stand").click()

    expect(tj.by("community-went-2")).to_have_text("your dealer hand")
    expect(tj.by("community-went-3")).to_have_text("your dealer hand")
    expect(tj.by("dealer-total")).to_have_text("26 — Bust")
    expect(tj.by("results")).to_contain_text("Blackjack wager You win $10.00")
    expect(tj.by("round-summary")).to_have_text(
        "This round: wagered $15.00, back $20.00 — net +$5.00"
    )
    expect(tj.by("balance")).to_have_text("$1,005.00")
    tj.in_view("results", "round-summary", "hand-total-1", "dealer-total", "community-went-3")
    tj.in_view("stake-hand-1", "stake-royal_match", "action-bar", "wager")
    tj.fits()
    tj.shot("result")


@pytest.mark.parametrize("screen", screens())
def test_633b16_classic_round_with_ez_bust_shows_the_bust_total(terminal: Any, screen: str) -> None:
    from playwright.sync_api import expect

    tj = terminal("C", screen)
    expect(tj.by("position")).to_have_text("1")  # the terminal is bound to seat 1
    expect(tj.by("position-1")).to_contain_text("Seat 1")
    tj.by("amount").fill("10")
    tj.by("wager").click()
    expect(tj.by("balance")).to_have_text("$990.00")
    tj.dealer("close-wagering")

    expect(tj.by("action-ez-bust")).to_be_visible()
    expect(tj.by("status")).to_have_text("EZ Bust wagers — your decision")
    expect(tj.by("countdown-default")).to_have_text("then: no EZ Bust wager")
    expect(tj.by("dealer-total")).to_have_text("Showing 5")
    expect(tj.by("hand-total-1")).to_have_text("15")
    # the placard and the prompt name EZ Bust's pay; the amount box says what it is for
    expect(tj.by("placard-ez-bust")).to_contain_text("EZ Bust")
    expect(tj.by("placard-ez-bust")).to_contain_text("pays up to")
    expect(tj.page.get_by_label("EZ Bust amount")).to_have_count(1)
    expect(tj.by("action-panel")).to_contain_text("pays up to")
    tj.in_view("action-ez-bust", "action-no-ez-bust", "action-amount", "dealer-total", "hand-1")
    tj.fits()
    tj.shot("ez-bust")
    tj.by("action-ez-bust").click()
    expect(tj.by("stake-ez_bust")).to_have_attribute("data-amount", "1000")
    for total in ("18", "19", "28 — Bust"):
        tj.by("action-hit").click()
        expect(tj.by("hand-total-1")).to_have_text(total)

    expect(tj.by("dealer-total")).to_have_text("22 — Bust")
    expect(tj.by("results")).to_contain_text("EZ Bust You win $10.00")
    expect(tj.by("results")).to_contain_text("Blackjack wager You lose $10.00")
    expect(tj.by("hand-outcome-1")).to_have_text("Lose −$10.00")
    expect(tj.by("round-summary")).to_have_text(
        "This round: wagered $20.00, back $20.00 — net $0.00"
    )
    expect(tj.by("balance")).to_have_text("$1,000.00")
    tj.in_view("results", "hand-total-1", "dealer-total", "stake-hand-1", "stake-ez_bust")
    tj.in_view("action-bar", "wager")
    tj.fits()
    tj.shot("result")


@pytest.mark.parametrize("screen", screens())
def test_nj_mab_multi_action_round_shows_three_spots_and_three_dealer_rounds(
    terminal: Any, screen: str
) -> None:
    from playwright.sync_api import expect

    tj = terminal("M", screen)
    expect(tj.by("spots")).to_be_visible()
    for spot in (1, 2, 3):
        tj.by(f"spot-{spot}").fill("10")
    tj.by("spot-wager").click()
    expect(tj.by("balance")).to_have_text("$970.00")
    for spot in (1, 2, 3):
        expect(tj.by(f"stake-spot-{spot}")).to_have_attribute("data-amount", "1000")
    tj.dealer("close-wagering")

    expect(tj.by("action-stand")).to_be_visible()
    expect(tj.by("hand-total-1")).to_have_text("19")
    expect(tj.by("dealer-box").locator("h3")).to_have_text("Dealer's first card")
    expect(tj.by("dealer-box").locator("[data-card='6H']")).to_be_visible()
    tj.in_view("action-stand", "hand-total-1", "dealer-round-1", "dealer-round-3")
    tj.in_view("stake-spot-1", "stake-spot-2", "stake-spot-3")
    tj.fits()
    tj.shot("decide")
    tj.by("action-stand").click()

    for n, total in ((1, "24 — Bust"), (2, "20"), (3, "Soft 17")):
        expect(tj.by(f"dealer-round-total-{n}")).to_have_text(total)
    results = tj.by("results")
    expect(results).to_contain_text("Spot 1 · dealer round 1 You win $10.00")
    expect(results).to_contain_text("Spot 2 · dealer round 2 You lose $10.00")
    expect(results).to_contain_text("Spot 3 · dealer round 3 You win $10.00")
    expect(tj.by("round-summary")).to_have_text(
        "This round: wagered $30.00, back $40.00 — net +$10.00"
    )
    expect(tj.by("balance")).to_have_text("$1,010.00")
    tj.in_view("results", "hand-total-1", "dealer-round-total-1", "dealer-round-total-3")
    tj.in_view("stake-spot-1", "stake-spot-3", "action-bar", "spot-wager")
    tj.fits()
    assert re.search(r"PA|NJ MAB", tj.by("felt").inner_text()) is None
    tj.shot("result")


def test_633c5_c2_the_rules_icon_shows_every_paytable_and_the_countdown_options(
    terminal: Any,
) -> None:
    from playwright.sync_api import expect

    tj = terminal("B", "desktop", "R1")
    tj.by("rules-icon").click()
    rules = tj.by("rules-dialog")
    for text in (
        "Blackjack pays 3 to 2.",
        "The dealer stands on all 17s, soft 17 included.",
        "Insurance pays 2 to 1.",
        "If you do not decide before the 30-second countdown clock ends, a hand of hard 11, "
        "soft 17 is hit automatically and any other hand stands.",
        "Crown Treasure: your Royal Match and the dealer's two cards a Royal Match",
    ):
        expect(rules).to_contain_text(text)
    royal = tj.by("paytable-royal_match")
    expect(royal.locator("tr[data-line='royal-match'] td").last).to_have_text("25 to 1")
    expect(royal.locator("tr[data-line='crown-treasure'] td").last).to_have_text("1,000 to 1")
    expect(tj.by("paytable-bet_the_set").locator("tr[data-line]")).to_have_count(2)
    expect(tj.by("paytable-kings_bounty").locator("tr[data-line]")).to_have_count(7)
    tj.in_view("rules-dialog")
    tj.shot("rules")
    rules.get_by_role("button", name="Close").click()
    tj.by("amount").fill("10")
    tj.by("wager").click()
    expect(tj.by("balance")).to_have_text("$990.00")
    tj.dealer("close-wagering")
    expect(tj.by("hand-total-1")).to_have_text("Soft 17")
    expect(tj.by("countdown-default")).to_have_text("then: your hand is hit")  # soft 17 hits


@pytest.mark.parametrize("game", ["A", "C"])
def test_633c5_c2_the_rules_icon_of_version_a_and_classic_tables(terminal: Any, game: str) -> None:
    from playwright.sync_api import expect

    tj = terminal(game, "wide")
    tj.by("rules-icon").click()
    rules = tj.by("rules-dialog")
    expect(rules).to_contain_text("your hand stands")
    if game == "A":
        buzzer = tj.by("paytable-buzzer_beater")
        expect(buzzer).to_contain_text("Your 20 against the dealer's 21 or Blackjack30 to 1")
        expect(buzzer.locator("tr[data-line]")).to_have_count(6)
    else:
        ez = tj.by("paytable-ez_bust")
        expect(ez).to_contain_text("The dealer busts drawing a third card or more1 to 1")
        expect(rules).to_contain_text("Insurance or EZ Bust not decided")
    tj.shot("rules")


@pytest.mark.parametrize("screen", ["phone"])
def test_nj_mab_a_multi_action_double_names_the_spots_it_doubles(
    terminal: Any, screen: str
) -> None:
    from playwright.sync_api import expect

    tj = terminal("M", screen, "D1")
    tj.by("spot-wager").click()  # $10 on each spot (the boxes' default)
    expect(tj.by("balance")).to_have_text("$970.00")
    tj.dealer("close-wagering")
    expect(tj.by("hand-total-1")).to_have_text("11")
    expect(tj.by("action-amount")).to_be_hidden()  # a multi-action double names spots
    tj.by("double-spot-2").uncheck()
    tj.in_view("action-double", "double-spot-1", "double-spot-3")
    tj.shot("double")
    tj.by("action-double").click()

    # 6H 10C 8D = 24, 6H 5C 9D = 20, 6H AS = soft 17 against 20 on $20, $10 and $20
    expect(tj.by("stake-double-1")).to_be_visible()
    expect(tj.by("stake-double-2")).to_have_count(0)
    expect(tj.by("stake-double-3")).to_be_visible()
    results = tj.by("results")
    expect(results).to_contain_text("Spot 1 · dealer round 1 You win $20.00")
    expect(results).to_contain_text("Spot 2 · dealer round 2 Push — $10.00 back")
    expect(results).to_contain_text("Spot 3 · dealer round 3 You win $20.00")
    expect(tj.by("balance")).to_have_text("$1,040.00")
    tj.in_view("results", "hand-total-1", "stake-double-3", "dealer-round-total-3")
    tj.fits()
    tj.shot("result")


@pytest.mark.parametrize(("screen", "table"), [("desktop", "S1"), ("phone", "S2")])
def test_633a11_a_split_shows_each_hand_its_total_and_its_stakes(
    terminal: Any, screen: str, table: str
) -> None:
    from playwright.sync_api import expect

    tj = terminal("C", screen, table)
    tj.by("amount").fill("10")
    tj.by("wager").click()
    expect(tj.by("balance")).to_have_text("$990.00")
    tj.dealer("close-wagering")
    expect(tj.by("hand-total-1")).to_have_text("16")
    tj.by("action-split").click()
    expect(tj.by("hand-total-1")).to_have_text("11")
    expect(tj.by("stake-hand-2")).to_have_attribute("data-amount", "1000")
    # the hand being played is marked, each hand labelled
    expect(tj.by("hand-label-1")).to_have_text("Hand 1 · playing")
    expect(tj.by("hand-label-2")).to_have_text("Hand 2")
    expect(tj.by("hand-1")).to_have_attribute("aria-current", "true")
    expect(tj.by("hand-2")).not_to_have_attribute("aria-current", "true")
    tj.by("action-double").click()  # hand 1: 8S 3C = 11 takes 10S
    expect(tj.by("hand-total-1")).to_have_text("21")
    expect(tj.by("hand-total-2")).to_have_text("10")
    expect(tj.by("hand-label-2")).to_have_text("Hand 2 · playing")
    expect(tj.by("hand-label-1")).to_have_text("Hand 1")
    tj.by("action-hit").click()  # hand 2: 8H 2D = 10 takes 9H
    expect(tj.by("hand-total-2")).to_have_text("19")
    tj.in_view("hand-1", "hand-2", "stake-hand-1", "stake-double-1", "stake-hand-2")
    tj.in_view("action-stand", "dealer-total")
    tj.fits()
    tj.shot("split")
    tj.by("action-stand").click()

    expect(tj.by("dealer-total")).to_have_text("23 — Bust")
    expect(tj.by("results")).to_contain_text("Hand 1 You win $20.00")
    expect(tj.by("results")).to_contain_text("Hand 2 You win $10.00")
    expect(tj.by("hand-outcome-1")).to_have_text("Win +$20.00")
    expect(tj.by("hand-outcome-2")).to_have_text("Win +$10.00")
    expect(tj.by("balance")).to_have_text("$1,030.00")
    tj.in_view("results", "hand-total-1", "hand-total-2", "hand-outcome-2", "dealer-total")
    tj.fits()
    tj.shot("result")


@pytest.mark.parametrize(("screen", "table"), [("desktop", "N1"), ("phone", "N2")])
def test_nj_mab_a_multi_action_split_labels_every_hand_against_every_dealer_round(
    terminal: Any, screen: str, table: str
) -> None:
    """After a split at a multi-action table each of the two hands plays against the three
    dealer rounds: the hand being played is marked, and each of the six results names its spot,
    its hand and its dealer round; nothing overflows the screen."""
    from playwright.sync_api import expect

    tj = terminal("M", screen, table)
    tj.by("spot-wager").click()  # $10 on each spot
    expect(tj.by("balance")).to_have_text("$970.00")
    tj.dealer("close-wagering")
    expect(tj.by("hand-total-1")).to_have_text("16")
    tj.by("action-split").click()
    expect(tj.by("balance")).to_have_text("$940.00")
    expect(tj.by("hand-total-1")).to_have_text("18")  # 8S takes 10S
    expect(tj.by("hand-label-1")).to_have_text("Hand 1 · playing")
    expect(tj.by("hand-label-2")).to_have_text("Hand 2")
    expect(tj.by("hand-1")).to_have_attribute("aria-current", "true")
    tj.in_view("hand-1", "hand-2", "action-stand")
    tj.apart("position-1", "dealer-round-1", "dealer-round-3", "action-bar")
    tj.fits()
    tj.shot("split")
    tj.by("action-stand").click()
    expect(tj.by("hand-total-2")).to_have_text("18")  # 8H takes 10D
    expect(tj.by("hand-label-2")).to_have_text("Hand 2 · playing")
    tj.by("action-stand").click()

    # 6H 10C 8D = 24, 6H 5C 9C = 20, 6H AS = soft 17, each against two hands of 18
    results = tj.by("results")
    for spot, outcome in ((1, "You win $10.00"), (2, "You lose $10.00"), (3, "You win $10.00")):
        for hand in (1, 2):
            expect(results).to_contain_text(
                f"Spot {spot} · hand {hand} · dealer round {spot} {outcome}"
            )
    expect(results.locator("li")).to_have_count(6)
    expect(tj.by("balance")).to_have_text("$1,020.00")
    tj.in_view("hand-1", "hand-2", "dealer-round-total-3", "action-bar")
    tj.apart("position-1", "dealer-round-1", "dealer-round-3", "results", "action-bar")
    tj.fits()
    tj.shot("result")


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_605a_chips_add_to_the_amount_and_clear_empties_it(terminal: Any, screen: str) -> None:
    from playwright.sync_api import expect

    tj = terminal("B", screen)
    tj.by("chip-clear").click()
    expect(tj.by("amount")).to_have_value("")
    tj.by("chip-2500").click()
    tj.by("chip-500").click()
    tj.by("chip-500").click()
    expect(tj.by("amount")).to_have_value("35")
    tj.by("chip-clear").click()
    expect(tj.by("amount")).to_have_value("")
    tj.by("chip-10000").click()
    expect(tj.by("amount")).to_have_value("100")
    expect(tj.by("side-amount-royal_match")).to_have_value("5")  # a side wager's own box
    tj.in_view("chip-clear", "side-amount-royal_match", "side-royal_match")
    tj.fits()
    read_whole(tj)


def read_whole(tj: Any) -> None:
    """PA 605a: the player reads who is signed in and what each control does whole at every
    screen size: no caption cut with an ellipsis, and the blank action amount's "full amount"
    (or "importe completo") fits its box, not "full amoun"."""
    cut = tj.page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter((n) => {
             if (!n.offsetParent || !n.textContent.trim()) return false;
             return getComputedStyle(n).textOverflow === 'ellipsis'
               && n.scrollWidth > n.clientWidth + 1;
           }).map((n) => (n.id || n.className) + ': ' + n.textContent.trim())"""
    )
    assert cut == []
    widths = tj.page.evaluate(
        """() => {
             const input = document.getElementById('action-amount');
             for (let n = input; n && n !== document.body; n = n.parentElement) {
               n.hidden = false;
               if (getComputedStyle(n).display === 'none') n.style.display = 'inline-flex';
             }
             const style = getComputedStyle(input);
             const room = input.clientWidth - parseFloat(style.paddingLeft)
               - parseFloat(style.paddingRight);
             const pen = document.createElement('canvas').getContext('2d');
             pen.font = style.font;
             return ['full amount', 'importe completo'].map((w) => [w, pen.measureText(w).width, room]);
           }"""
    )
    for words, needed, room in widths:
        assert room > 0, widths
        assert needed <= room, (words, needed, room)
