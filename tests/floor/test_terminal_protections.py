"""Player protections at the terminal (PA 605a): the double confirmation of a wager above the
table's ``confirm_above``, repeat last bet (from the store, across a reconnect and a restart),
and the terminal's language catalog (English and Spanish, every fixed string of the page)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from importlib import resources
from typing import Any

import pytest

from tablejack.server.duties.terminal_features import CONFIRM_RULE, REPEAT_RULE
from tests.support.store import Backend

STATIC = resources.files("tablejack.server") / "static"


def open_round(client: Any, kit: Any) -> str:
    opened = kit.post(client, "/api/tables/A1/dealer", "dealer", command="open-round").json()
    return str(opened["round_id"])


def round_events(client: Any, kit: Any, round_id: str) -> list[dict[str, Any]]:
    recall = client.get(f"/api/rounds/{round_id}", headers=kit.auth("super")).json()
    return list(recall["events"])


def wagers_of(client: Any, kit: Any, round_id: str, player: str) -> list[tuple[Any, ...]]:
    return [
        (e["payload"]["kind"], e["payload"]["amount"], e["payload"]["position"], e["terminal"])
        for e in round_events(client, kit, round_id)
        if e["kind"] == "wager" and e["payload"]["player"] == player
    ]


def last_audit(client: Any, kit: Any) -> dict[str, Any]:
    return dict(client.get("/api/audit", headers=kit.auth("super")).json()[0])


# -- double confirmation --------------------------------------------------------------------


def test_605a_double_confirmation_above_amount(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table(confirm_above=20_000)], backend=backend)
    assert client.get("/api/tables/A1", headers=kit.auth("ann")).json()["confirm_above"] == 20_000
    round_id = open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        for confirm in (None, False):
            message: dict[str, Any] = {"type": "wager", "kind": "blackjack", "amount": 30_000}
            if confirm is not None:
                message["confirm"] = confirm
            refused = ann.request(message)
            assert (refused["type"], refused["code"], refused["rule"]) == (
                "error",
                "confirm",
                CONFIRM_RULE,
            )
            assert (refused["amount"], refused["confirm_above"]) == (30_000, 20_000)
            assert "$300.00 is above $200.00" in refused["message"]
            audit = last_audit(client, kit)
            assert (audit["kind"], audit["actor"], audit["terminal"], audit["rule"]) == (
                "confirm",
                "ann",
                "EWT-1",
                CONFIRM_RULE,
            )
        assert kit.balance(client, "ann") == kit.credit
        assert [e["kind"] for e in round_events(client, kit, round_id)] == ["open"]
        # confirmed, the wager is taken; a wager not above the amount needs no confirmation
        taken = ann.request(
            {"type": "wager", "kind": "blackjack", "amount": 30_000, "confirm": True}
        )
        assert taken["type"] == "ack" and taken["ok"]
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        bob.request({"type": "position", "position": 2})
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 20_000})["ok"]
    assert kit.balance(client, "ann") == kit.credit - 30_500
    assert wagers_of(client, kit, round_id, "ann") == [
        ("blackjack", 30_000, 1, "EWT-1"),
        ("buzzer_beater", 500, 1, "EWT-1"),
    ]
    assert wagers_of(client, kit, round_id, "bob") == [("blackjack", 20_000, 2, "EWT-2")]


def test_605a_double_confirmation_off_without_a_configured_amount(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    assert client.get("/api/tables/A1", headers=kit.auth("ann")).json()["confirm_above"] is None
    open_round(client, kit)
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 90_000})["ok"]


# -- repeat last bet ---------------------------------------------------------------------------


def test_605a_repeat_last_bet_after_a_reconnect_and_a_restart(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    first = kit.play_round(client)  # bob: $10.00 blackjack at position 2, $5.00 Buzzer Beater
    assert wagers_of(client, kit, first, "bob") == [
        ("blackjack", 1000, 2, "EWT-2"),
        ("buzzer_beater", 500, 2, "EWT-2"),
    ]
    after_first = kit.balance(client, "bob")
    client.__exit__(None, None, None)  # the server stops; a new one starts on the same store
    client = make_client(backend=backend)
    second = open_round(client, kit)
    with kit.connect(client, "bob", "EWT-7", "A1") as bob:  # a new socket, no position chosen
        reply = bob.request({"type": "repeat"}, "r-1")
        assert reply["type"] == "ack" and reply["ok"], reply
        assert (reply["repeated"], reply["position"], reply["round_id"]) == (first, 2, second)
        assert [(p["kind"], p["amount"]) for p in reply["placed"]] == [
            ("blackjack", 1000),
            ("buzzer_beater", 500),
        ]
        again = bob.request({"type": "repeat"}, "r-1")  # the same id: the first answer
        assert again["repeat"] is True and again["placed"] == reply["placed"]
        state = bob.state(lambda m: m["position"] == 2)
        assert state["balance"] == after_first - 1500
        twice = bob.request({"type": "repeat"})
        assert (twice["code"], twice["rule"]) == ("repeat", REPEAT_RULE)
        assert "already wagered" in twice["message"]
    assert wagers_of(client, kit, second, "bob") == [
        ("blackjack", 1000, 2, "EWT-7"),
        ("buzzer_beater", 500, 2, "EWT-7"),
    ]
    assert kit.balance(client, "bob") == after_first - 1500


def test_605a_repeat_last_bet_refused_past_a_limit_changes_nothing(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    kit.play_round(client)
    limits = client.put(
        "/api/floor/players/bob/limits", json={"wager_limit": 2500}, headers=kit.auth("bob")
    )
    assert limits.status_code == 200
    before = kit.balance(client, "bob")
    second = open_round(client, kit)
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        refused = bob.request({"type": "repeat"})
        assert (refused["type"], refused["code"], refused["rule"]) == (
            "error",
            "limit",
            "player protection",
        )
    audit = last_audit(client, kit)
    assert (audit["kind"], audit["actor"], audit["terminal"]) == ("limit", "bob", "EWT-2")
    assert kit.balance(client, "bob") == before
    assert [e["kind"] for e in round_events(client, kit, second)] == ["open"]


def test_605a_repeat_last_bet_refused_over_the_balance_changes_nothing(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    kit.play_round(client)
    bob_at_ewt_2 = kit.session(client, "bob", "EWT-2", "A1")
    cashed = client.post("/api/floor/cash-out", json={}, headers=bob_at_ewt_2)
    assert cashed.status_code == 200
    assert kit.balance(client, "bob") == 0
    second = open_round(client, kit)
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        refused = bob.request({"type": "repeat"})
        assert (refused["code"], refused["rule"]) == ("balance", "account balance")
        assert "$15.00" in refused["message"]
    assert kit.balance(client, "bob") == 0
    assert [e["kind"] for e in round_events(client, kit, second)] == ["open"]
    assert last_audit(client, kit)["kind"] == "balance"


def test_605a_repeat_last_bet_needs_the_confirmation_above_the_amount(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.stacked_table(confirm_above=1200)])
    first = kit.play_round(client)
    assert len(wagers_of(client, kit, first, "bob")) == 2  # $10.00 and $5.00, each below
    second = open_round(client, kit)
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        refused = bob.request({"type": "repeat"})
        assert (refused["code"], refused["rule"], refused["amount"]) == (
            "confirm",
            CONFIRM_RULE,
            1500,
        )
        assert [e["kind"] for e in round_events(client, kit, second)] == ["open"]
        assert bob.request({"type": "repeat", "confirm": True})["ok"]
    assert [w[:2] for w in wagers_of(client, kit, second, "bob")] == [
        ("blackjack", 1000),
        ("buzzer_beater", 500),
    ]


def test_605a_repeat_last_bet_with_nothing_to_repeat(make_client: Any, kit: Any) -> None:
    client = make_client()
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        no_round = ann.request({"type": "repeat"})
        assert (no_round["code"], no_round["rule"]) == ("repeat", REPEAT_RULE)
        assert "in wagering" in no_round["message"]
        open_round(client, kit)
        ann.state(lambda m: m["round_id"] is not None)
        nothing = ann.request({"type": "repeat"})
        assert (nothing["code"], nothing["rule"]) == ("repeat", REPEAT_RULE)
        assert "no earlier round" in nothing["message"]
    assert kit.balance(client, "ann") == kit.credit
    assert last_audit(client, kit)["kind"] == "repeat"


# -- the language catalog ------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def catalogs(client: Any) -> dict[str, dict[str, str]]:
    languages = client.get("/api/languages").json()["languages"]
    assert languages == ["en", "es"]
    out = {}
    for lang in languages:
        response = client.get(f"/static/i18n/{lang}.json")
        assert response.status_code == 200
        out[lang] = response.json()
    return out


def test_605a_language_catalog_english_and_spanish_have_the_same_keys(
    make_client: Any, kit: Any
) -> None:
    client = make_client()
    found = catalogs(client)
    en, es = found["en"], found["es"]
    assert sorted(en) == sorted(es)
    for key in en:
        assert en[key].strip() and es[key].strip(), key
        assert set(PLACEHOLDER.findall(en[key])) == set(PLACEHOLDER.findall(es[key])), key
    translated = [key for key in en if en[key] != es[key]]
    assert len(translated) > 0.8 * len(en)
    assert es["wager.place"] == "Apostar al Blackjack"
    assert client.get("/static/i18n/fr.json").status_code == 404
    assert client.get("/static/i18n/..%2Fterminal.html").status_code == 404


class _Page(HTMLParser):
    """The terminal page's fixed text: text outside scripts without a ``data-i18n`` element
    around it, attributes a player reads without their ``data-i18n-*`` twin, and every key."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.keys: set[str] = set()
        self.untranslated: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("title", "aria-label", "placeholder"):
            if name in found and f"data-i18n-{name}" not in found:
                self.untranslated.append(f"<{tag} {name}={found[name]!r}>")
        for name, value in found.items():
            if name.startswith("data-i18n") and value:
                self.keys.add(value)
        if tag not in ("meta", "link", "input", "br"):
            self.stack.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        text = data.strip()
        if not text or not self.stack:
            return
        tag, attrs = self.stack[-1]
        if tag in ("script", "style", "option") or "data-i18n" in attrs:
            return  # language names are shown in their own language
        if any(found.get("translate") == "no" for _, found in self.stack):
            return  # the name of the product
        if not re.search(r"[A-Za-z]{2,}", text):
            return  # symbols, amounts, the rules icon's "i"
        self.untranslated.append(text)


def test_605a_terminal_page_has_no_untranslated_fixed_text(make_client: Any, kit: Any) -> None:
    client = make_client()
    found = catalogs(client)
    html = STATIC.joinpath("terminal.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(html)
    assert page.untranslated == []
    assert page.keys, "the page marks its text with data-i18n"
    script = STATIC.joinpath("terminal.js").read_text(encoding="utf-8")  # the page's module
    used = set(re.findall(r"""\bt\("([a-z_.-]+)\"""", script))
    actions = json.loads(re.search(r"const ACTIONS = (\[.*?\]);", script).group(1))  # type: ignore[union-attr]
    used |= {f"action.{a}" for a in actions}
    used |= {"kind.buzzer_beater", "kind.royal_match", "kind.bet_the_set", "kind.kings_bounty"}
    used |= {f"result.{r}" for r in ("win", "lose", "push")}
    for lang, catalog in found.items():
        missing = sorted((page.keys | used) - set(catalog))
        assert missing == [], (lang, missing)


def test_605a_protection_settings_of_a_table_are_checked(kit: Any) -> None:
    for options, message in (
        ({"confirm_above": 0}, "must be positive"),
        ({"confirm_above": 12.5}, "whole cents"),
        ({"confirm_above": True}, "whole cents"),
        ({"result_hold_seconds": -1}, "between 0 and 3600"),
        ({"result_hold_seconds": "30"}, "between 0 and 3600"),
    ):
        with pytest.raises(ValueError, match=message):
            kit.stacked_table(**options)
    assert kit.stacked_table(confirm_above=1, result_hold_seconds=0).to_json()["confirm_above"] == 1
