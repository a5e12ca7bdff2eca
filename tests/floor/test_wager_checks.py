"""Wager and cash-out checks in the order a player expects, on an SQLite file and on PostgreSQL:

* the table's limits before the second confirmation (PA 605a): a wager above the table maximum
  (or the balance) is refused for that and never asked to be confirmed;
* a wager outside the wagering phase is refused because wagering is closed, naming the game's
  clause (PA 633c.5(k), 633a.6, NJ MAB (f)(1)), before any other reason;
* a cash-out takes only the credit not in play (PA 605a.5(c)), and a refusal names the amount in
  play;
* a position selected at one terminal is that terminal's (PA 633c.5(l)), not the player's at
  every terminal;
* an automated table refuses the console's open-round, close-wagering and countdown-expired
  with a sentence saying the server does them.
"""

from __future__ import annotations

from typing import Any

from tablejack.core.rules import ClassicRules
from tablejack.games import GAMES
from tablejack.games.multi_action import MultiActionRules
from tablejack.server.duties.terminal_features import CONFIRM_RULE
from tablejack.server.table import AUTOMATION_RULE, TableConfig
from tests.support.floor import phase, stacked_table
from tests.support.store import Backend

# seat 1 (ann) 10S 7H = 17 against the dealer's 9D and hole 9C: the seat decides
CLASSIC_ORDER = "10S 9D 7H 9C"


def slow_table(**options: Any) -> TableConfig:
    """A version A table dealt :data:`ORDER` (position 1 (ann): 10S 5C; position 2 (bob): 9H
    9C; dealer 6D + hole 10H; then 4S 8D) whose 30-second clock never runs out during a test."""
    return stacked_table(countdown=30, **options)


def dealer(client: Any, kit: Any, command: str, table: str = "A1") -> Any:
    return kit.post(client, f"/api/tables/{table}/dealer", "dealer", command=command)


def audit_kinds(client: Any, kit: Any) -> list[str]:
    return [a["kind"] for a in client.get("/api/audit", headers=kit.auth("super")).json()]


def cash_out(client: Any, headers: dict[str, str], **body: Any) -> Any:
    return client.post("/api/floor/cash-out", json=body, headers=headers)


def test_605a_the_table_maximum_is_checked_before_the_second_confirmation(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([slow_table(confirm_above=50_000)], backend=backend)
    dealer(client, kit, "open-round")
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "cat", "EWT-2", "A1") as cat,
    ):
        ann.request({"type": "position", "position": 3})
        cat.request({"type": "position", "position": 2})
        # $6,000 is above the $5,000 maximum: refused for that, not asked to be confirmed
        for confirm in (None, True):
            message: dict[str, Any] = {"type": "wager", "kind": "blackjack", "amount": 600_000}
            if confirm:
                message["confirm"] = True
            refused = ann.request(message)
            assert (refused["type"], refused["code"], refused["rule"]) == (
                "error",
                "illegal",
                "PA 633a.6",
            )
            assert "above the table maximum $5,000.00" in refused["message"]
            assert "amount" not in refused and "confirm_above" not in refused
        # cat holds nothing: $600 is refused for the balance, not asked to be confirmed
        short = cat.request({"type": "wager", "kind": "blackjack", "amount": 60_000})
        assert (short["code"], short["rule"]) == ("balance", "account balance")
        assert short["message"] == "The wager needs $600.00; the account holds $0.00."
        # a wager the table takes is asked once more, then placed when confirmed
        asked = ann.request({"type": "wager", "kind": "blackjack", "amount": 60_000})
        assert (asked["code"], asked["rule"], asked["amount"]) == ("confirm", CONFIRM_RULE, 60_000)
        placed = ann.request(
            {"type": "wager", "kind": "blackjack", "amount": 60_000, "confirm": True}
        )
        assert placed["type"] == "ack" and placed["ok"]
        assert kit.balance(client, "ann") == kit.credit - 60_000
        # wagering closed comes before the confirmation too
        dealer(client, kit, "close-wagering")
        late = cat.request({"type": "wager", "kind": "blackjack", "amount": 60_000})
        assert (late["code"], late["rule"]) == ("wagering_closed", "PA 633c.5(k)")
    kinds = audit_kinds(client, kit)
    assert kinds.count("confirm") == 1  # only the wager the table would take was asked
    assert kinds.count("illegal") == 2 and "balance" in kinds


def test_633c5_k_a_wager_during_play_is_refused_because_wagering_is_closed(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([slow_table()], backend=backend)
    round_id = dealer(client, kit, "open-round").json()["round_id"]
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        ann.request({"type": "position", "position": 3})
        bob.request({"type": "position", "position": 2})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        dealer(client, kit, "close-wagering")
        ann.state(lambda m: phase(m) == "playing")
        for who, kind in ((ann, "blackjack"), (ann, "buzzer_beater"), (bob, "blackjack")):
            refused = who.request({"type": "wager", "kind": kind, "amount": 1000})
            assert (refused["code"], refused["rule"]) == ("wagering_closed", "PA 633c.5(k)")
            assert refused["message"] == (
                "Wagering is closed: wagers are placed before the first card is dealt, and "
                f"round {round_id} is in playing (PA 633c.5(k))."
            )
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        ann.state(lambda m: phase(m) == "complete")
        after = bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert (after["code"], after["message"]) == (
            "wagering_closed",
            f"Wagering is closed: round {round_id} is complete; wager when the next round "
            "opens (PA 633c.5(k)).",
        )
    assert kit.balance(client, "bob") == kit.credit


def test_wagering_closed_names_each_games_clause(make_client: Any, kit: Any) -> None:
    tables = [
        TableConfig(
            "C1",
            ClassicRules(),
            automated=False,
            require_procedures=False,
            countdown_seconds=30,
            cards=CLASSIC_ORDER,
        ),
        TableConfig("M1", MultiActionRules(), automated=False, require_procedures=False, seed=3),
    ]
    if "hybrid-shared" in GAMES:
        rules = GAMES["hybrid-shared"].rules_class(countdown_seconds=30)
        tables.append(TableConfig("B1", rules, automated=False, require_procedures=False, seed=5))
    client = make_client(tables)
    clauses = {"C1": "PA 633a.6", "M1": "NJ MAB (f)(1)", "B1": "PA 633c.5(k)"}
    for config in tables:
        table = config.id
        dealer(client, kit, "open-round", table)
        with kit.connect(client, "ann", f"EWT-{table}", table) as ann:
            if table != "B1":
                ann.request({"type": "position", "position": 1})
            wager: dict[str, Any] = {"type": "wager", "kind": "blackjack", "amount": 1000}
            if table == "M1":
                wager.update(amount=2000, spots=[1000, 1000, 0])
            assert ann.request(wager)["ok"], table
            dealer(client, kit, "close-wagering", table)
            # the seat's own wager again: "wagering is closed", not "already has a wager"
            again = ann.request(wager)
            assert (again["code"], again["rule"]) == ("wagering_closed", clauses[table]), again
            assert again["message"].startswith("Wagering is closed"), again


def test_605a5c_a_cash_out_takes_only_the_credit_not_in_play(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([slow_table()], backend=backend)
    round_id = dealer(client, kit, "open-round").json()["round_id"]
    ann_at = kit.session(client, "ann", "EWT-1", "A1")
    bob_at = kit.session(client, "bob", "EWT-2", "A1")
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        ann.request({"type": "position", "position": 1})
        bob.request({"type": "position", "position": 2})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": kit.credit})["ok"]
        where = f"$10.00 at table A1 (round {round_id})"
        # more than the credit not in play: refused, naming the amount in play
        refused = cash_out(client, ann_at, amount=99_500)
        assert refused.status_code == 409
        assert refused.json()["detail"] == {
            "code": "in_play",
            "rule": "PA 605a.5(c)",
            "message": f"$995.00 cannot be cashed out: $10.00 of the game account is in play "
            f"({where}) until the round settles; $990.00 can be cashed out now (PA 605a.5(c)).",
        }
        assert kit.balance(client, "ann") == kit.credit - 1000
        # everything: the credit not in play, and the answer says what stays in play
        out = cash_out(client, ann_at)
        assert out.status_code == 200
        assert (out.json()["amount"], out.json()["balance"], out.json()["in_play"]) == (
            99_000,
            0,
            1000,
        )
        assert out.json()["note"] == (
            f"{where} stays in play; its result is credited to the game account when the "
            "round settles."
        )
        # nothing left but the wager in play: refused, naming it
        for body in ({}, {"amount": 100}):
            nothing = cash_out(client, ann_at, **body)
            assert nothing.status_code == 409
            assert nothing.json()["detail"]["code"] == "in_play"
        assert cash_out(client, ann_at).json()["detail"]["message"] == (
            f"Nothing can be cashed out now: {where} is in play until the round settles; its "
            "result is credited to the game account (PA 605a.5(c))."
        )
        # bob wagered all he had
        all_in = cash_out(client, bob_at)
        assert all_in.status_code == 409
        assert f"$1,000.00 at table A1 (round {round_id})" in all_in.json()["detail"]["message"]
        assert audit_kinds(client, kit).count("in_play") == 5
        # the round settles (ann 10S 5C hits 4S, bob 9H 9C stands, the dealer's 6D 10H draws
        # 8D and busts): all of it is free
        dealer(client, kit, "close-wagering")
        ann.state(lambda m: phase(m) == "playing")
        assert ann.request({"type": "action", "verb": "hit"})["ok"]
        assert bob.request({"type": "action", "verb": "stand"})["ok"]
        ann.state(lambda m: m["view"] is not None and m["view"]["community_cards"] == ["4S"])
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        ann.state(lambda m: phase(m) == "complete")
    settled = cash_out(client, ann_at)
    assert settled.status_code == 200
    assert (settled.json()["amount"], settled.json()["in_play"]) == (2000, 0)
    assert "note" not in settled.json()
    assert cash_out(client, bob_at).json()["amount"] == 2 * kit.credit
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_633c5_l_a_position_selected_at_one_terminal_stays_with_that_terminal(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([slow_table()], backend=backend)
    dealer(client, kit, "open-round")
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as first,
        kit.connect(client, "ann", "EWT-2", "A1") as second,
    ):
        assert first.request({"type": "position", "position": 2})["position"] == 2
        assert first.state(lambda m: m["position"] == 2)["position"] == 2
        # the other terminal of the same player has selected nothing
        at_second = client.get(
            "/api/tables/A1/state", headers=kit.session(client, "ann", "EWT-2", "A1")
        )
        assert at_second.json()["position"] is None
        refused = second.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert (refused["code"], refused["rule"]) == ("illegal", "PA 633c.5(l)")
        assert "Select a player position" in refused["message"]
        assert second.request({"type": "position", "position": 3})["position"] == 3
        # each terminal's state shows its own selection, broadcast after broadcast
        seq = first.request({"type": "wager", "kind": "blackjack", "amount": 1000})["seq"]
        assert first.state(lambda m: m["seq"] >= seq)["position"] == 2
        assert second.state(lambda m: m["seq"] >= seq)["position"] == 3
    at_first = client.get("/api/tables/A1/state", headers=kit.session(client, "ann", "EWT-1", "A1"))
    assert at_first.json()["position"] == 2
    recall = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
    [wager] = [e for e in recall["events"] if e["kind"] == "wager"]
    assert (wager["payload"]["position"], wager["terminal"]) == (2, "EWT-1")


def test_an_automated_table_refuses_the_consoles_round_commands_with_a_sentence(
    make_client: Any, kit: Any
) -> None:
    table = slow_table(automated=True, wagering_seconds=60, between_rounds_seconds=0)
    client = make_client([table])
    state = kit.eventually(lambda: (s := kit.staff_state(client, "A1"))["round_id"] and s)
    assert state["next"] == "Wagering is open; waiting for the first wager."
    summary = client.get("/api/tables/A1", headers=kit.auth("dealer")).json()
    assert summary["automated"] is True
    assert summary["automation"].startswith("The server opens a round 0 s after the last one ends")
    for command, what in (
        ("close-wagering", "closes wagering"),
        ("open-round", "opens its rounds"),
        ("countdown-expired", "runs the countdown"),
    ):
        refused = dealer(client, kit, command)
        assert refused.status_code == 409
        detail = refused.json()["detail"]
        assert (detail["code"], detail["rule"]) == ("automated", AUTOMATION_RULE)
        assert detail["message"].startswith(
            f"Table A1 is automated: the server {what} itself, not the console."
        )
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    assert kit.staff_state(client, "A1")["next"] == (
        "Wagering is open; the server closes it 60 s after the first wager."
    )
    assert audit_kinds(client, kit).count("automated") == 3
