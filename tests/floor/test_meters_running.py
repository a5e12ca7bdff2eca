"""Running meters (PA 605a.5(d)): folded from only the ledger rows and rounds new since the
last read, they agree with the full reading of the ledger (``meters_report.readings``) and the
link's counts (``links.terminal_counts``) after any sequence of rounds, bills, vouchers and
hand pays, read at any points — one fold behind both."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablejack.store import links, meters_report
from tablejack.store.meters_running import RunningMeters
from tests.support.floor import insert
from tests.support.store import Backend

TERMINALS = ("EWT-1", "EWT-2", "EWT-3")

action = st.one_of(
    st.tuples(st.just("round"), st.sampled_from(TERMINALS[:2]), st.sampled_from(TERMINALS[1:])),
    st.tuples(st.just("bill"), st.sampled_from(TERMINALS), st.sampled_from([100, 2000, 10_000])),
    st.tuples(st.just("voucher"), st.sampled_from(TERMINALS), st.sampled_from(TERMINALS)),
    st.tuples(st.just("hand_pay"), st.sampled_from(TERMINALS), st.just(0)),
    st.tuples(st.just("read"), st.just(""), st.just("")),
)


def phase(message: dict[str, Any]) -> str | None:
    view = message.get("view")
    return None if view is None else str(view["phase"])


def play(client: Any, kit: Any, ann_at: str, bob_at: str) -> None:
    """A round whatever the cards: ann and bob wager and the clock stands for both."""
    dealer = kit.auth("dealer")
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=dealer)
    with (
        kit.connect(client, "ann", ann_at, "A1") as ann,
        kit.connect(client, "bob", bob_at, "A1") as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 2000})["ok"]
        client.post("/api/tables/A1/dealer", json={"command": "close-wagering"}, headers=dealer)
        ann.state(lambda m: phase(m) == "complete")


def run(client: Any, kit: Any, step: tuple[str, str, Any]) -> None:
    kind, terminal, other = step
    if kind == "round":
        if terminal != other:
            play(client, kit, terminal, other)
    elif kind == "bill":
        cat = kit.session(client, "cat", terminal, "A1")
        answer = insert(client, "/api/floor/bill-in", json={"amount": other}, headers=cat)
        assert answer.is_success, answer.text
    elif kind == "voucher":
        cat = kit.session(client, "cat", terminal, "A1")
        insert(client, "/api/floor/bill-in", json={"amount": 2000}, headers=cat)
        out = client.post("/api/floor/cash-out", json={"amount": 1500}, headers=cat)
        assert out.is_success, out.text
        ann = kit.session(client, "ann", other, "A1")
        code = out.json()["validation_code"]
        redeemed = insert(client, "/api/floor/voucher-in", json={"code": code}, headers=ann)
        assert redeemed.is_success, redeemed.text
    elif kind == "hand_pay":
        paid = kit.post(
            client,
            "/api/floor/hand-pay",
            "cashier",
            account="bob",
            terminal=terminal,
            amount=700,
            kind="jackpot",
        )
        assert paid.is_success, paid.text


def agree(client: Any, running: RunningMeters) -> None:
    store = client.app.state.floor.store
    full = client.portal.call(meters_report.readings, store)
    assert client.portal.call(running.read) == full
    counts = client.portal.call(links.terminal_counts, store)
    wanted = list(TERMINALS)
    expected = {t: {**full["terminal"].get(t, {}), **counts.get(t, {})} for t in wanted}
    assert client.portal.call(running.terminal_meters, wanted) == expected


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(before=st.lists(action, max_size=3), after=st.lists(action, min_size=1, max_size=6))
def test_605a5d_running_meters_agree_with_the_full_reading_after_random_activity(
    make_client: Any, kit: Any, before: list[Any], after: list[Any]
) -> None:
    client = make_client()
    for step in before:
        run(client, kit, step)
    running = RunningMeters(client.app.state.floor.store)  # its first read folds what exists
    for step in after:
        run(client, kit, step)
        if step[0] == "read":
            agree(client, running)
    agree(client, running)
    assert running.pending == set()  # every round seen has completed and been counted


def test_605a5d_a_round_read_while_open_is_counted_once_it_completes(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    running = RunningMeters(client.app.state.floor.store)
    play(client, kit, "EWT-1", "EWT-2")
    agree(client, running)
    client.post("/api/tables/A1/dealer", json={"command": "open-round"}, headers=kit.auth("dealer"))
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        ann.state(lambda m: m["balance"] is not None)
        agree(client, running)  # the wager counted as coin in, the round not yet played
        assert len(running.pending) == 1
        games = client.portal.call(running.read)["terminal"]["EWT-1"]["games_played"]
        assert games == 1
        client.post(
            "/api/tables/A1/dealer", json={"command": "close-wagering"}, headers=kit.auth("dealer")
        )
        ann.state(lambda m: phase(m) == "complete")  # the clock stands for her
    agree(client, running)
    assert client.portal.call(running.read)["terminal"]["EWT-1"]["games_played"] == 2
    assert running.pending == set()


def test_605a5d_ledger_ids_skipped_over_are_folded_when_they_appear(
    make_client: Any, kit: Any
) -> None:
    """Rows a read skipped over (on PostgreSQL, a transaction that committed after a larger
    id was read) are kept as gaps, looked for again and folded once, when they appear."""
    client = make_client()
    running = RunningMeters(client.app.state.floor.store)
    kit.play_round(client)
    client.portal.call(running.read)
    last = running.last_id
    cat = kit.session(client, "cat", "EWT-2", "A1")
    for amount in (100, 500, 2000):  # one ledger row each: last + 1 … last + 3
        assert insert(client, "/api/floor/bill-in", json={"amount": amount}, headers=cat).is_success
    # as if the read before had seen last + 2 while last + 1 and last + 2 were not yet visible
    running.last_id = last + 2
    running.gaps = {last + 1: time.monotonic(), last + 2: time.monotonic()}
    agree(client, running)
    assert running.gaps == {} and running.last_id == last + 3
    agree(client, running)  # and not folded twice


def test_605a5d_the_supervisors_meters_are_the_floors_running_meters_read_again(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """``GET /api/floor/meters`` reads the floor's running meters: each read folds only the
    ledger rows new since the last one, and the answer is the one the whole ledger gives."""
    client = make_client(backend=backend)
    store = client.app.state.floor.store
    running = client.app.state.duties.meters

    def answer() -> Any:
        got = client.get("/api/floor/meters", headers=kit.auth("super"))
        assert got.is_success, got.text
        full = client.portal.call(meters_report.displayed_meters, store)  # the whole ledger
        assert got.json() == full
        return got.json()

    play(client, kit, "EWT-1", "EWT-2")
    first = answer()
    folded = running.rows_folded
    assert folded > 0
    for step in (("bill", "EWT-3", 2000), ("voucher", "EWT-1", "EWT-2"), ("hand_pay", "EWT-2", 0)):
        run(client, kit, step)
    second = answer()
    # bill in 1 row; voucher: a bill in, the cash-out and its redemption; the hand pay 1
    assert running.rows_folded - folded == 5
    assert second["terminal"]["EWT-3"]["bills_in"] == 2000
    assert second["floor"]["floor"]["coin_in"] == first["floor"]["floor"]["coin_in"]
    assert answer() == second and running.rows_folded - folded == 5  # nothing new: nothing read


def test_605a5d_a_terminal_moved_to_another_table_takes_its_meters_along_as_the_ledger_does(
    make_client: Any, kit: Any
) -> None:
    """The full reading credits a terminal's rows to the table it is registered at when read;
    the running meters, finding it moved, fold the ledger again and say the same."""
    client = make_client([kit.stacked_table("A1"), kit.stacked_table("A2")])
    store = client.app.state.floor.store
    running = client.app.state.duties.meters
    run(client, kit, ("bill", "EWT-3", 2000))  # EWT-3 signed in at A1

    def read() -> Any:
        got = client.get("/api/floor/meters", headers=kit.auth("super")).json()
        assert got == client.portal.call(meters_report.displayed_meters, store)
        return got

    assert read()["table"]["A1"]["bills_in"] == 2000
    moved = kit.post(client, "/api/floor/terminals", "operator", terminal="EWT-3", table="A2")
    assert moved.is_success, moved.text
    after = read()
    assert after["table"]["A2"]["bills_in"] == 2000
    assert after["table"].get("A1", {"bills_in": 0})["bills_in"] == 0
    assert running.tables["EWT-3"] == "A2"
