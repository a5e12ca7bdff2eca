"""Automatic tilts and lock-out (PA Chapter 605a): the table system detects a reader fault, a
card not requested, a card against the shoe's inventory, a lost terminal connection and a
storage error; each is logged, shown at once, locks play, and only a supervisor clears it with
a clear code; a supervisor's void refunds every wager of the locked round."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tablejack.store import Step
from tests.support.store import Backend


def players_total(client: Any, kit: Any) -> int:
    return sum(kit.balance(client, who) for who in ("ann", "bob", "cat"))


def ledger_balance(client: Any, kit: Any, account: str) -> int:
    answer = client.get(f"/api/accounts/{account}/ledger", headers=kit.auth("super")).json()
    return int(answer["balance"])


def test_605a_tilt_duplicate_card_locks_round_and_void_refunds(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], backend=backend)
    assert kit.post(
        client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    kit.play_reader_round(client)  # both win $10
    assert (kit.balance(client, "ann"), kit.balance(client, "bob")) == (101_000, 101_000)
    total = players_total(client, kit) + ledger_balance(client, kit, "house:C1")
    kit.dealer(client, "open-round")
    with (
        kit.connect(client, "ann", "EWT-1", "C1") as ann,
        kit.connect(client, "bob", "EWT-2", "C1") as bob,
    ):
        ann.request({"type": "position", "position": 1})
        bob.request({"type": "position", "position": 2})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 2000})["ok"]
        kit.dealer(client, "close-wagering")
        # mid-round the reader sends 9D again: round 1's dealer up card, no copy left
        assert kit.read(client, "KS", "KH") == ["OK C1-000002 5", "OK C1-000002 6"]
        [refused] = kit.read(client, "9D")
        assert refused.startswith("ERR card inventory")
        for terminal in (ann, bob):
            shown = terminal.until(lambda m: m["type"] == "error" and m["code"] == "tilt")
            assert "card_inventory" in shown["message"]
            locked = terminal.state(lambda m: m["status"] == "halted")
            assert locked["round_id"] == "C1-000002"
        # the round is locked: nothing more is dealt, decided or settled
        assert kit.read(client, "9H")[0].startswith("ERR PA 633a.14")
        assert ann.request({"type": "action", "verb": "stand"})["code"] == "halted"

    # both sockets closed with their wagers unsettled after wagering closed: each terminal is
    # locked too (tilt_on_connection_loss mid_round), asynchronously, beside the table's tilt
    def three_tilts() -> dict[str, Any] | None:
        state: dict[str, Any] = kit.staff_state(client)
        return state if len(state["tilts"]) == 3 else None

    console = kit.eventually(three_tilts)
    assert console["status"] == "halted"
    assert sorted((t["scope"], t.get("terminal") or "", t["code"]) for t in console["tilts"]) == [
        ("table", "", "card_inventory"),
        ("terminal", "EWT-1", "connection_lost"),
        ("terminal", "EWT-2", "connection_lost"),
    ]
    recall = client.get("/api/rounds/C1-000002", headers=kit.auth("super")).json()
    assert recall["status"] == "irregular"
    assert "complete" not in [e["kind"] for e in recall["events"]]
    assert recall["settlements"] == []
    assert (kit.balance(client, "ann"), kit.balance(client, "bob")) == (100_000, 99_000)
    # a clear without the supervisor role is refused, audited, and the table stays locked
    by_dealer = kit.post(
        client, "/api/tables/C1/clear", "dealer", code="checked_no_fault", reason="ok"
    )
    assert by_dealer.status_code == 403
    assert by_dealer.json()["detail"]["rule"] == "table lock-out"
    assert kit.staff_state(client)["status"] == "halted"
    # the supervisor voids the round: every wager refunded, the tilt still locks the table
    voided = kit.post(client, "/api/tables/C1/void", "super", reason="duplicate 9D read")
    assert voided.json() == {"ok": True, "voided": "C1-000002"}
    assert (kit.balance(client, "ann"), kit.balance(client, "bob")) == (101_000, 101_000)
    assert players_total(client, kit) + ledger_balance(client, kit, "house:C1") == total
    assert ledger_balance(client, kit, "escrow:C1") == 0  # nothing of round 2 left unsettled
    recall = client.get("/api/rounds/C1-000002", headers=kit.auth("super")).json()
    assert recall["status"] == "voided"
    assert sorted(r["amount"] for r in recall["events"][-1]["payload"]["refunds"]) == [1000, 2000]
    assert kit.staff_state(client)["status"] == "halted"
    assert kit.dealer(client, "open-round").json()["detail"]["code"] == "table"
    cleared = kit.post(
        client, "/api/tables/C1/clear", "super", code="replaced", reason="shoe replaced"
    )
    assert (cleared.status_code, cleared.json()["status"]) == (200, "open")
    audit = client.get("/api/audit?table=C1", headers=kit.auth("super")).json()
    kinds = [(e["kind"], e["rule"]) for e in audit]
    assert ("role", "table lock-out") in kinds
    assert {"tilt", "tilt_clear", "void", "irregularity"} <= {k for k, _ in kinds}
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_605a_tilt_card_not_requested_tilts_and_needs_void_and_clear(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()])
    kit.dealer(client, "open-round")
    with kit.connect(client, "ann", "EWT-1", "C1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
    [refused] = kit.read(client, "AS")  # wagering is still open: nobody asked for a card
    assert refused.startswith("ERR ")
    assert kit.staff_state(client)["tilts"][0]["code"] == "card_not_requested"
    cleared = kit.post(client, "/api/tables/C1/clear", "super", code="other", reason="misdeal")
    assert cleared.json()["status"] == "halted"  # the irregular round still needs its void
    assert "void" in cleared.json()["halt_reason"]
    kit.post(client, "/api/tables/C1/void", "super", reason="card not asked for")
    assert kit.staff_state(client)["status"] == "open"
    assert kit.balance(client, "ann") == 100_000


class Line:
    """A blocking client of the TCP reader port."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.file = self.socket.makefile("rwb")

    def ask(self, text: str) -> str:
        self.file.write(text.encode() + b"\n")
        self.file.flush()
        return self.file.readline().decode().rstrip("\n")

    def close(self) -> None:
        self.file.close()
        self.socket.close()


def deal_to_wait(client: Any, kit: Any) -> None:
    """A round at the one-deck table with ann's wager, waiting for its first card."""
    assert kit.post(
        client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    kit.dealer(client, "open-round")
    with kit.connect(client, "ann", "EWT-1", "C1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
    kit.dealer(client, "close-wagering")


def test_605a_tilt_reader_fault_line_locks_the_table_until_cleared(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], backend=backend, reader_port=0)
    deal_to_wait(client, kit)
    reader = Line(client.app.state.reader_port)
    try:
        assert reader.ask("AUTH tok-dealer C1") == "OK C1"
        assert reader.ask(kit.round_1[0]) == "OK C1-000001 4"
        assert reader.ask("FAULT optical sensor 2 dirty") == "OK TILT reader_fault"
        console = kit.staff_state(client)
        assert console["status"] == "halted"
        assert console["tilts"][0]["code"] == "reader_fault"
        assert "optical sensor 2 dirty" in console["next"]
        assert reader.ask(kit.round_1[1]).startswith("ERR PA 633a.14")  # locked: not dealt
        cleared = kit.post(
            client, "/api/tables/C1/clear", "super", code="fault_repaired", reason="cleaned"
        )
        assert cleared.json()["status"] == "open"  # the round was not irregular: it goes on
        # the card read while locked is out of the shoe: the dealer deals the next one
        assert reader.ask(kit.round_1[2]) == "OK C1-000001 5"
        assert reader.ask("QUIT") == "BYE"
    finally:
        reader.close()
    shoe = client.get("/api/tables/C1/shoe", headers=kit.auth("dealer")).json()["loaded"]
    assert shoe["read"] == 3
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_605a_tilt_reader_connection_drop_while_a_card_is_awaited(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], reader_port=0)
    port = client.app.state.reader_port
    quiet = Line(port)  # a reader that leaves with QUIT before any card is awaited: no tilt
    assert quiet.ask("AUTH tok-dealer C1") == "OK C1"
    assert quiet.ask("QUIT") == "BYE"
    quiet.close()
    deal_to_wait(client, kit)
    assert kit.staff_state(client)["status"] == "open"
    reader = Line(port)
    assert reader.ask("AUTH tok-dealer C1") == "OK C1"
    assert reader.ask(kit.round_1[0]) == "OK C1-000001 4"
    reader.close()  # the connection drops while the engine waits for seat 2's card
    tilt = kit.eventually(
        lambda: [t for t in kit.staff_state(client)["tilts"] if t["scope"] == "table"]
    )
    assert tilt[0]["code"] == "reader_fault"
    assert "dropped" in tilt[0]["message"]
    history = client.get("/api/tables/C1/procedures", headers=kit.auth("super")).json()["history"]
    assert [h["code"] for h in history if h["kind"] == "tilt"] == ["reader_fault"]


def locks(client: Any, kit: Any) -> dict[str, Any]:
    return dict(client.get("/api/floor/tilts", headers=kit.auth("super")).json())


def test_605a_tilt_connection_loss_locks_the_terminal_and_reconnect_keeps_seat_and_wagers(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.stacked_table(countdown=3)], backend=backend)
    chosen = client.put(  # only a supervisor unlocks it (the other choice: below)
        "/api/floor/settings",
        json={"key": "connection_lost_clear", "value": "supervisor"},
        headers=kit.auth("operator"),
    )
    assert chosen.status_code == 200, chosen.text
    kit.dealer(client, "open-round", "A1")
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:
        bob.request({"type": "position", "position": 2})
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        with kit.connect(client, "ann", "EWT-1", "A1") as ann:
            ann.request({"type": "position", "position": 1})
            assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
            kit.dealer(client, "close-wagering", "A1")
            ann.state(lambda m: m["view"] is not None and m["view"]["phase"] == "playing")
        # ann's socket is gone mid-round with her wager unsettled
        found = kit.eventually(lambda: locks(client, kit).get("EWT-1"))
        assert found[0]["code"] == "connection_lost"
        assert "EWT-2" not in locks(client, kit)
        console = kit.eventually(lambda: kit.staff_state(client, "A1")["tilts"])
        assert [(t["scope"], t["terminal"], t["code"]) for t in console] == [
            ("terminal", "EWT-1", "connection_lost")
        ]
        assert kit.staff_state(client, "A1")["status"] == "open"  # the table plays on
        with kit.connect(client, "ann", "EWT-1", "A1") as ann:
            told = ann.until(lambda m: m["type"] == "error" and m["code"] == "tilt")
            assert "connection_lost" in told["message"]
            back = ann.state(lambda m: m["view"] is not None)
            assert back["position"] == 1
            assert back["view"]["you"]["blackjack_wager"] == 1000
            refused = ann.request({"type": "action", "verb": "hit"})
            assert (refused["code"], refused["rule"]) == ("tilt", "terminal lock-out")
            # her open decision falls to the countdown default; the round settles her wager
            done = ann.state(lambda m: m["view"] is not None and m["view"]["phase"] == "complete")
            [settled] = done["view"]["you"]["settlements"]
            assert settled["amount"] == 1000
            assert kit.balance(client, "ann") == 99_000 + settled["returned"]
            refused_clear = kit.post(
                client, "/api/floor/terminals/EWT-1/clear", "dealer", code="other", reason="x"
            )
            assert refused_clear.status_code == 403
            assert "EWT-1" in locks(client, kit)
            cleared = kit.post(
                client,
                "/api/floor/terminals/EWT-1/clear",
                "super",
                code="checked_no_fault",
                reason="network restored, player back",
            )
            assert cleared.status_code == 200
            ann.until(lambda m: m["type"] == "error" and m["code"] == "tilt_cleared")
            assert locks(client, kit) == {}
            assert kit.staff_state(client, "A1")["tilts"] == []
            kit.dealer(client, "open-round", "A1")
            assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]


def test_605a_tilt_connection_loss_ends_by_itself_once_the_player_is_back_and_settled(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """``connection_lost_clear`` ``on_return`` (the default): the lock holds while the player's
    wager of the round is unsettled, even with him back; once the round settled with him at
    the terminal it ends by itself (clear code ``returned``, by ``server``, audited). Only that
    lock ends: a door opened at the terminal meanwhile stays until a supervisor clears it; then
    his page is told, and he plays the next round."""
    client = make_client([kit.stacked_table(countdown=3)], backend=backend)
    kit.dealer(client, "open-round", "A1")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        kit.dealer(client, "close-wagering", "A1")
        ann.state(lambda m: m["view"] is not None and m["view"]["phase"] == "playing")
    found = kit.eventually(lambda: locks(client, kit).get("EWT-1"))
    assert [t["code"] for t in found] == ["connection_lost"]
    door = kit.post(
        client, "/api/floor/terminals/EWT-1/tilt", "super", code="door_open", reason="ajar"
    )
    assert door.status_code == 200, door.text
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.until(lambda m: m["type"] == "error" and m["code"] == "tilt")
        refused = ann.request({"type": "action", "verb": "hit"})  # her wager is unsettled
        assert (refused["code"], refused["rule"]) == ("tilt", "terminal lock-out")
        assert [t["code"] for t in locks(client, kit)["EWT-1"]] == ["connection_lost", "door_open"]
        ann.state(lambda m: m["view"] is not None and m["view"]["phase"] == "complete")
        kit.eventually(
            lambda: [t["code"] for t in locks(client, kit).get("EWT-1", [])] == ["door_open"]
        )
        audit = client.get("/api/audit", headers=kit.auth("super")).json()
        ended = [e for e in audit if e["kind"] == "tilt_clear" and e["terminal"] == "EWT-1"]
        assert [(e["actor"], e["message"].split(":")[0]) for e in ended] == [
            ("server", "EWT-1 returned")
        ]
        cleared = kit.post(
            client,
            "/api/floor/terminals/EWT-1/clear",
            "super",
            code="fault_repaired",
            reason="door closed",
        )
        assert cleared.status_code == 200, cleared.text
        told = ann.until(lambda m: m["type"] == "error" and m["code"] == "tilt_cleared")
        assert "EWT-1" in told["message"]
        assert locks(client, kit) == {}
        kit.dealer(client, "open-round", "A1")
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]


def test_605a_tilt_connection_loss_setting_decides_when_a_terminal_is_locked(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.stacked_table(countdown=3)])

    def setting(value: Any, who: str = "operator") -> Any:
        return client.put(
            "/api/floor/settings",
            json={"key": "tilt_on_connection_loss", "value": value},
            headers=kit.auth(who),
        )

    assert setting(True).status_code == 409  # mid_round, always or off
    # the operator's setting: a supervisor may not change it (refused, audited, unchanged)
    by_super = setting("off", "super")
    assert (by_super.status_code, by_super.json()["detail"]["rule"]) == (403, "role: operator")
    entry = client.get("/api/audit", headers=kit.auth("super")).json()[0]
    assert (entry["kind"], entry["actor"], entry["rule"]) == ("role", "sam", "role: operator")
    settings = client.get("/api/floor/settings", headers=kit.auth("super")).json()
    assert settings["tilt_on_connection_loss"] == "mid_round"
    kit.dealer(client, "open-round", "A1")
    with kit.connect(client, "cat", "EWT-3", "A1") as cat:  # no wager: leaving is no tilt
        cat.request({"type": "position", "position": 3})
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:  # mid_round: wagering still open
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    assert setting("always").status_code == 200
    with kit.connect(client, "bob", "EWT-2", "A1") as bob:  # always: from the wager on
        bob.request({"type": "position", "position": 2})
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    kit.eventually(lambda: "EWT-2" in locks(client, kit))
    assert list(locks(client, kit)) == ["EWT-2"]
    assert setting("off").status_code == 200
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        kit.dealer(client, "close-wagering", "A1")
        ann.state(lambda m: m["view"] is not None and m["view"]["phase"] == "playing")
    with kit.connect(client, "cat", "EWT-3", "A1") as cat:  # a later socket: the check ran
        cat.request({"type": "position", "position": 3})
    assert list(locks(client, kit)) == ["EWT-2"]


def test_605a_tilt_storage_error_locks_the_table_and_nothing_is_applied(
    make_client: Any, backend: Backend, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client([kit.stacked_table(countdown=30)], backend=backend)
    store = client.app.state.floor.store
    kit.dealer(client, "open-round", "A1")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        kit.dealer(client, "close-wagering", "A1")
        ann.state(lambda m: m["view"] is not None and m["view"]["phase"] == "playing")
        before = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
        real = store.commit
        failing = {"on": True}

        async def broken(step: Step) -> Any:
            if failing["on"] and step.round_id == "A1-000001":
                raise OSError("disk I/O error")
            return await real(step)

        monkeypatch.setattr(store, "commit", broken)
        refused = ann.request({"type": "action", "verb": "hit"})
        assert (refused["code"], refused["rule"]) == ("storage_error", "table lock-out")
        failing["on"] = False
        shown = ann.until(lambda m: m["type"] == "error" and m["code"] == "tilt")
        assert "storage_error" in shown["message"]
        console = kit.staff_state(client, "A1")
        assert console["status"] == "halted"
        assert console["tilts"][0]["code"] == "storage_error"
        assert console["view"]["community_cards"] == []  # the hit was not applied
        assert ann.request({"type": "action", "verb": "hit"})["code"] == "halted"
        after = client.get("/api/rounds/A1-000001", headers=kit.auth("super")).json()
        assert len(after["events"]) == len(before["events"])
        assert kit.balance(client, "ann") == 99_000
        cleared = kit.post(
            client,
            "/api/tables/A1/clear",
            "super",
            code="fault_repaired",
            reason="database volume remounted",
        )
        assert cleared.json()["status"] == "open"
        assert ann.request({"type": "action", "verb": "hit"})["ok"]
    view = kit.staff_state(client, "A1")["view"]
    # the failed step's card went back into the virtual shoe: the hit after the clear gets it
    assert view["community_cards"] == ["9C"]
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_605a_tilt_survives_a_restart_until_cleared(make_client: Any, kit: Any) -> None:
    first = make_client([kit.one_deck_table()])
    tilted = kit.post(first, "/api/tables/C1/tilt", "dealer", code="other")
    assert tilted.status_code == 200
    first.__exit__(None, None, None)
    second = make_client([kit.one_deck_table()])
    state = kit.staff_state(second)
    assert (state["status"], state["tilts"][0]["code"]) == ("halted", "other")
    assert kit.dealer(second, "open-round").status_code == 409
    cleared = kit.post(second, "/api/tables/C1/clear", "super", code="other", reason="checked")
    assert cleared.json()["status"] == "open"
