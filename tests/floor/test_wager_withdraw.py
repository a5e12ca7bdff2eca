"""A wager taken back or changed at the terminal while wagering is open (PA 633c.5(k): wagers
are placed before the first card is dealt, so until then a placed wager may be raised, lowered
or taken back), on an SQLite file and on PostgreSQL:

* taking back the Blackjack Wager refunds it and the Buzzer Beater that needs it, exactly what
  was staked, through the table's escrow; the player may wager again;
* a change within the table's limits moves only the difference; the limits refuse the rest;
* after the first card both are refused as wagering closed, naming the clause, and nothing
  changes;
* the round replays exactly from its log, the ledger accounts for every cent and verify-log
  finds nothing wrong;
* another player's terminal never sees the amounts.
"""

from __future__ import annotations

import json
from typing import Any

from tablejack.server.table import replay_round
from tablejack.store.verify import verify
from tests.support.floor import Terminal, phase
from tests.support.ledger import account_for_rounds
from tests.support.store import Backend


def dealer(client: Any, kit: Any, command: str, table: str = "A1") -> Any:
    return kit.post(client, f"/api/tables/{table}/dealer", "dealer", command=command)


def seat(ann: Terminal, bob: Terminal) -> None:
    assert ann.request({"type": "position", "position": 1})["type"] == "ack"
    assert bob.request({"type": "position", "position": 2})["type"] == "ack"


def finish(client: Any, kit: Any, ann: Terminal, bob: Terminal) -> None:
    """Deal the stacked round: ann hits and stands, bob stands on the countdown."""
    dealer(client, kit, "close-wagering")
    ann.state(lambda m: phase(m) == "playing")
    assert ann.request({"type": "action", "verb": "hit"})["ok"]
    ann.state(lambda m: m["view"] is not None and m["view"]["community_cards"] == ["4S"])
    assert ann.request({"type": "action", "verb": "stand"})["ok"]
    bob.state(lambda m: phase(m) == "complete")


def accounted(client: Any, kit: Any) -> None:
    """Every cent of the log accounted for, verify-log clean, and the round replayed from its
    log the very round the table holds."""
    floor = client.app.state.floor
    store = floor.store
    table = floor.tables["A1"]
    statuses = client.portal.call(account_for_rounds, store, ["ann", "bob"], kit.credit, ["A1"])
    assert statuses.get("complete") == 1
    problems = client.portal.call(verify, store).problems
    assert problems == []
    events = client.portal.call(store.events, table.round_id)
    replayed = replay_round(events, table.adapter)
    assert replayed.wagers == table.round.wagers
    assert replayed.settlements == table.round.settlements
    assert replayed.operations == table.round.operations


def test_633c5_k_a_wager_is_taken_back_while_wagering_is_open_and_its_stake_refunded(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table(countdown=2)], backend=backend)
    dealer(client, kit, "open-round")
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        seat(ann, bob)
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert kit.balance(client, "ann") == kit.credit - 1500
        # the Buzzer Beater alone, then the Blackjack Wager (nothing left to take it with)
        assert ann.request({"type": "withdraw", "kind": "buzzer_beater"})["ok"]
        assert kit.balance(client, "ann") == kit.credit - 1000
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
        taken = ann.request({"type": "withdraw", "kind": "blackjack"})
        assert taken["type"] == "ack" and taken["ok"]
        assert kit.balance(client, "ann") == kit.credit  # the wager and its side wager
        nothing = ann.request({"type": "withdraw", "kind": "blackjack"})
        assert (nothing["type"], nothing["rule"]) == ("error", "PA 633c.5(k)")
        assert "has no blackjack wager to be taken back" in nothing["message"]
        # she wagers again, and the round plays as dealt
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 2000})["ok"]
        finish(client, kit, ann, bob)
    assert kit.balance(client, "ann") == kit.credit + 2000  # the $20.00 wager won 1 to 1
    assert kit.balance(client, "bob") == kit.credit + 1000
    accounted(client, kit)
    refunds = [
        e
        for e in client.portal.call(
            client.app.state.floor.store.ledger_of_round,
            client.app.state.floor.tables["A1"].round_id,
        )
        if e["kind"] == "refund"
    ]
    assert sorted(e["amount"] for e in refunds) == [500, 500, 1000]
    assert all(e["to_account"] == "ann" and e["from_account"] == "escrow:A1" for e in refunds)


def test_633c5_k_a_wager_is_raised_and_lowered_while_wagering_is_open_within_the_limits(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table(countdown=2)], backend=backend)
    dealer(client, kit, "open-round")
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        seat(ann, bob)
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert ann.request({"type": "change", "kind": "blackjack", "amount": 37_500})["ok"]
        assert kit.balance(client, "ann") == kit.credit - 37_500
        # bob's terminal sees that ann plays, never what she stakes
        seen = bob.state(lambda m: m["view"] is not None and m["view"].get("players"))
        assert "37500" not in json.dumps(seen["view"]["players"])
        above = ann.request({"type": "change", "kind": "blackjack", "amount": 600_000})
        assert (above["code"], above["rule"]) == ("illegal", "PA 633a.6")
        assert "above the table maximum" in above["message"]
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 2000})["ok"]
        below = ann.request({"type": "change", "kind": "blackjack", "amount": 1500})
        assert (below["code"], below["rule"]) == ("illegal", "PA 633c.5(m)")
        assert ann.request({"type": "change", "kind": "buzzer_beater", "amount": 500})["ok"]
        assert ann.request({"type": "change", "kind": "blackjack", "amount": 1500})["ok"]
        assert kit.balance(client, "ann") == kit.credit - 2000
        shown = [("blackjack", 1500), ("buzzer_beater", 500)]  # her terminal shows the new amounts
        ann.state(
            lambda m: (
                bool((m["view"] or {}).get("you"))
                and sorted((w["kind"], w["amount"]) for w in m["view"]["you"]["wagers"]) == shown
            )
        )
        finish(client, kit, ann, bob)
    accounted(client, kit)


def test_633c5_k_a_wager_is_not_taken_back_or_changed_after_the_first_card(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table(countdown=30)], backend=backend)
    round_id = dealer(client, kit, "open-round").json()["round_id"]
    store = client.app.state.floor.store
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        seat(ann, bob)
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert ann.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]
        dealer(client, kit, "close-wagering")
        ann.state(lambda m: phase(m) == "playing")
        before = client.portal.call(store.events, round_id)
        for message in (
            {"type": "withdraw", "kind": "blackjack"},
            {"type": "withdraw", "kind": "buzzer_beater"},
            {"type": "change", "kind": "blackjack", "amount": 2000},
        ):
            refused = ann.request(message)
            assert (refused["type"], refused["code"], refused["rule"]) == (
                "error",
                "wagering_closed",
                "PA 633c.5(k)",
            )
            assert refused["message"] == (
                "Wagering is closed: wagers are placed before the first card is dealt, and "
                f"round {round_id} is in playing (PA 633c.5(k))."
            )
        assert client.portal.call(store.events, round_id) == before
        assert kit.balance(client, "ann") == kit.credit - 1500


def test_633c5_k_a_classic_table_refuses_to_take_back_a_wager_naming_the_clause(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.classic_table()], backend=backend)
    dealer(client, kit, "open-round", table="C1")
    with kit.connect(client, "ann", "EWT-1", "C1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        for message in (
            {"type": "withdraw", "kind": "blackjack"},
            {"type": "change", "kind": "blackjack", "amount": 2000},
        ):
            refused = ann.request(message)
            assert (refused["type"], refused["rule"]) == ("error", "PA 633c.5(k)")
            assert "classic table" in refused["message"]
    assert kit.balance(client, "ann") == kit.credit - 1000
