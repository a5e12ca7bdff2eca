"""The card inventory per shoe (PA Chapter 605a; the decks of PA 633a.3(a)): a shoe is loaded
with exactly N full decks or refused, every card read is checked against what remains, the end
of a shoe accounts for every card, and a restart keeps the inventory."""

from __future__ import annotations

from typing import Any

from tests.support.store import Backend


def test_605a_inventory_short_deck_at_load_is_refused_and_the_table_does_not_deal(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], backend=backend)
    short = kit.post(client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck[:-1]))
    assert short.status_code == 409
    detail = short.json()["detail"]
    assert detail["code"] == "card_inventory"
    assert "short 1" in detail["message"] and kit.deck[-1] in detail["message"]
    state = kit.staff_state(client)
    assert state["status"] == "halted"
    assert [(t["scope"], t["code"]) for t in state["tilts"]] == [("table", "card_inventory")]
    assert state["shoe"] is None
    assert kit.dealer(client, "open-round").json()["detail"]["code"] == "table"
    history = client.get("/api/tables/C1/procedures", headers=kit.auth("super")).json()["history"]
    load = next(h for h in history if h["kind"] == "shoe_load")
    assert (load["result"], load["total"], load["problems"]["short"]) == (
        "refused",
        51,
        {kit.deck[-1]: 1},
    )
    # the supervisor clears the tilt; a full shoe is then taken and the table deals
    cleared = kit.post(
        client, "/api/tables/C1/clear", "super", code="replaced", reason="deck replaced"
    )
    assert cleared.json()["status"] == "open"
    loaded = kit.post(client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck))
    assert (loaded.status_code, loaded.json()["loaded"]) == (200, 52)
    assert kit.dealer(client, "open-round").status_code == 200
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_605a_inventory_over_full_deck_at_load_is_refused(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], backend=backend)
    over = kit.post(
        client,
        "/api/tables/C1/shoe/load",
        "dealer",
        cards=" ".join(kit.deck),
        counts={"AS": 1, "ZZ": 1},
    )
    assert over.status_code == 409
    assert "over-full 1 (AS×1)" in over.json()["detail"]["message"]
    assert "not cards: ZZ" in over.json()["detail"]["message"]
    state = kit.staff_state(client)
    assert state["status"] == "halted"
    assert state["tilts"][0]["code"] == "card_inventory"
    shoe = client.get("/api/tables/C1/shoe", headers=kit.auth("dealer")).json()
    assert shoe["loaded"] is None
    audit = client.get("/api/audit?table=C1", headers=kit.auth("super")).json()
    assert any(e["kind"] == "tilt" and "card_inventory" in e["message"] for e in audit)


def test_605a_inventory_a_card_with_no_copy_left_across_rounds_tilts_the_table(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], backend=backend)
    assert kit.post(
        client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    kit.play_reader_round(client)
    kit.dealer(client, "open-round")
    with kit.connect(client, "ann", "EWT-1", "C1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    kit.dealer(client, "close-wagering")
    # 10S came out in round 1: the engine (one round's cards) would take it; the shoe cannot
    [answer] = kit.read(client, "10S")
    assert answer.startswith("ERR card inventory")
    state = kit.staff_state(client)
    assert (state["status"], state["tilts"][0]["code"]) == ("halted", "card_inventory")
    assert state["shoe"]["extra"] == {"10S": 1}
    recall = client.get("/api/rounds/C1-000002", headers=kit.auth("super")).json()
    assert recall["status"] == "irregular"
    assert recall["events"][-1]["payload"]["code"] == "10S"


def test_605a_inventory_missing_card_at_end_of_shoe_is_detected(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()], backend=backend)
    assert kit.post(
        client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    kit.play_reader_round(client)
    left = [code for code in kit.deck if code not in kit.round_1]
    assert len(left) == 46
    ended = kit.post(client, "/api/tables/C1/shoe/unload", "dealer", cards=" ".join(left[1:]))
    assert ended.status_code == 409
    assert f"missing {left[0]}×1" in ended.json()["detail"]["message"]
    state = kit.staff_state(client)
    assert (state["status"], state["tilts"][0]["code"]) == ("halted", "card_inventory")
    assert state["shoe"] is None
    history = client.get("/api/tables/C1/procedures", headers=kit.auth("super")).json()["history"]
    end = next(h for h in history if h["kind"] == "shoe_end")
    assert (end["result"], end["read"], end["missing"]) == ("mismatch", 6, {left[0]: 1})


def test_605a_inventory_end_of_shoe_that_accounts_for_every_card_is_accepted(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.one_deck_table()])
    assert kit.post(
        client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    reloaded = kit.post(client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck))
    assert reloaded.json()["detail"]["code"] == "loaded"  # unload the shoe in use first
    kit.play_reader_round(client)
    left = [code for code in kit.deck if code not in kit.round_1]
    ended = kit.post(client, "/api/tables/C1/shoe/unload", "dealer", cards=" ".join(left))
    assert ended.status_code == 200
    assert (ended.json()["result"], ended.json()["read"]) == ("ok", 6)
    assert kit.staff_state(client)["status"] == "open"


def test_605a_inventory_survives_a_restart(make_client: Any, kit: Any) -> None:
    first = make_client([kit.one_deck_table()])  # both clients open the same database file
    assert kit.post(
        first, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    kit.play_reader_round(first)
    kit.dealer(first, "open-round")
    with kit.connect(first, "ann", "EWT-1", "C1") as ann:
        ann.request({"type": "position", "position": 1})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
    kit.dealer(first, "close-wagering")
    assert kit.read(first, "KS")[0].startswith("OK ")
    first.__exit__(None, None, None)
    second = make_client([kit.one_deck_table()])
    shoe = second.get("/api/tables/C1/shoe", headers=kit.auth("dealer")).json()["loaded"]
    assert (shoe["loaded"], shoe["read"], shoe["remaining"]) == (52, 7, 45)
    assert "KS" not in shoe["remaining_by_code"]
    # the resumed round's next card: 9D came out in round 1
    assert kit.read(second, "9D")[0].startswith("ERR card inventory")
    assert kit.staff_state(second)["tilts"][0]["code"] == "card_inventory"


def test_605a_inventory_a_reader_table_with_the_procedures_on_needs_a_loaded_shoe(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.one_deck_table(require_procedures=True)])
    for path, body in (
        ("reader-inspection", {"result": "ok"}),
        ("decks", {"decks": 1}),
        ("deck-inspection", {"dealer": "dana"}),
    ):
        kit.post(client, f"/api/tables/C1/procedures/{path}", "super", **body)
    refused = kit.dealer(client, "open-round").json()["detail"]
    assert refused["code"] == "procedure" and "No shoe is loaded" in refused["message"]
    assert kit.post(
        client, "/api/tables/C1/shoe/load", "dealer", cards=" ".join(kit.deck)
    ).is_success
    assert kit.dealer(client, "open-round").status_code == 200


def test_605a_inventory_load_and_unload_over_the_tcp_reader_line(
    make_client: Any, kit: Any
) -> None:
    import socket

    client = make_client([kit.one_deck_table()], reader_port=0)
    line = socket.create_connection(("127.0.0.1", client.app.state.reader_port), timeout=5)
    stream = line.makefile("rwb")

    def send(text: str) -> None:
        stream.write(text.encode() + b"\n")
        stream.flush()

    def answer() -> str:
        return stream.readline().decode().rstrip("\n")

    try:
        send("AUTH tok-dealer C1")
        assert answer() == "OK C1"
        send("LOAD")
        for code in kit.deck[:-1]:
            send(code)
        send(f"{kit.deck[-1]} 1")
        send("END")
        assert answer() == "OK LOAD 52 cards, 1 decks"
        send("UNLOAD")
        for suit in range(4):  # lines of at most 128 bytes: a suit a line
            send(" ".join(kit.deck[suit * 13 : suit * 13 + 13]))
        send("END")
        assert answer() == "OK UNLOAD 0 read, 52 counted out"
        send("LOAD")
        for suit in range(4):
            send(" ".join(kit.deck[suit * 13 + (suit == 0) : suit * 13 + 13]))  # no AS
        send("END")
        assert answer().startswith("ERR card inventory")
        send("QUIT")
        assert answer() == "BYE"
    finally:
        stream.close()
        line.close()
    assert kit.staff_state(client)["tilts"][0]["code"] == "card_inventory"
