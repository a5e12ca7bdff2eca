"""A void or an irregularity the store fails to write never leaves a table stuck: nothing is
applied that the log does not hold, the table holds the round and says what it waits for, the
API answers with what failed (not a bare 500), a supervisor's retry voids and refunds exactly
once, and an automated table opens the next round once the cause is cleared — on SQLite and on
PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from tablejack.store import Step, Store
from tests.support.store import Backend

DISK = "OSError: disk I/O error"


def staff(client: Any, kit: Any, table: str = "A1") -> dict[str, Any]:
    return dict(client.get(f"/api/tables/{table}/state", headers=kit.auth("dealer")).json())


def balance(client: Any, kit: Any, account: str) -> int:
    answer = client.get(f"/api/accounts/{account}/ledger", headers=kit.auth("super")).json()
    return int(answer["balance"])


def recall(client: Any, kit: Any, round_id: str) -> dict[str, Any]:
    return dict(client.get(f"/api/rounds/{round_id}", headers=kit.auth("super")).json())


def audit_kinds(client: Any, kit: Any) -> list[str]:
    return [a["kind"] for a in client.get("/api/audit", headers=kit.auth("super")).json()]


class FailOnce:
    """Replaces a store's ``commit``: the first step with ``status`` fails with ``error``
    (after writing it, when ``written``); every other step is written."""

    def __init__(self, real: Any, status: str, *, written: bool = False) -> None:
        self.real, self.status, self.written = real, status, written
        self.failed = 0

    async def __call__(self, step: Step) -> Any:
        if step.status == self.status and not self.failed:
            self.failed += 1
            if self.written:
                await self.real(step)
            raise OSError("disk I/O error")
        return await self.real(step)


def wager_round(client: Any, kit: Any) -> None:
    """ann $10 and bob $20 + a $5 Buzzer Beater in round A1-000001, still wagering."""
    kit.eventually(lambda: staff(client, kit)["round_id"] == "A1-000001")
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        ann.request({"type": "position", "position": 1})
        bob.request({"type": "position", "position": 2})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 2000})["ok"]
        assert bob.request({"type": "wager", "kind": "buzzer_beater", "amount": 500})["ok"]


def automated(kit: Any) -> Any:
    return kit.hybrid_table(
        automated=True, wagering_seconds=60, between_rounds_seconds=0, countdown=30
    )


def test_a_void_the_store_fails_holds_the_round_and_the_retry_refunds_exactly_once(
    make_client: Any, backend: Backend, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client([automated(kit)], backend=backend)
    store = client.app.state.floor.store
    wager_round(client, kit)
    assert (balance(client, kit, "ann"), balance(client, kit, "bob")) == (99_000, 97_500)
    assert balance(client, kit, "escrow:A1") == 3500
    before = recall(client, kit, "A1-000001")
    failing = FailOnce(store.commit, "voided")
    monkeypatch.setattr(store, "commit", failing)

    refused = kit.post(client, "/api/tables/A1/void", "super", reason="shoe dropped")
    assert refused.status_code == 503
    assert refused.json()["detail"] == {
        "code": "storage_error",
        "rule": "PA 633a.14",
        "message": f"Round A1-000001 was not voided: the store failed ({DISK}). Nothing was "
        "refunded; the table holds the round until it is voided again.",
    }
    # the table is as the log has it, held, and says what it waits for
    held = staff(client, kit)
    waiting = f"a supervisor to void round A1-000001 (the void could not be written: {DISK})"
    assert (held["status"], held["round_id"], held["waiting_for"]) == (
        "halted",
        "A1-000001",
        waiting,
    )
    assert held["view"]["phase"] == "wagering"
    assert sorted(w["amount"] for w in held["view"]["wagers"]) == [500, 1000, 2000]
    assert held["countdown"] is None  # the wagering clock stopped with the table
    [summary] = client.get("/api/tables", headers=kit.auth("super")).json()
    assert summary["waiting_for"] == waiting
    assert (balance(client, kit, "ann"), balance(client, kit, "bob")) == (99_000, 97_500)
    assert balance(client, kit, "escrow:A1") == 3500
    assert recall(client, kit, "A1-000001")["events"] == before["events"]
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        refused_wager = ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
        assert (refused_wager["code"], refused_wager["rule"]) == ("halted", "PA 633a.14")
    assert {"void_failed", "storage_error"} <= set(audit_kinds(client, kit))
    assert (
        kit.post(client, "/api/tables/A1/dealer", "dealer", command="open-round").json()["detail"][
            "code"
        ]
        == "table"
    )

    # the supervisor voids it again: every wager refunded once, the next round opens by itself
    voided = kit.post(client, "/api/tables/A1/void", "super", reason="shoe dropped")
    assert voided.json() == {"ok": True, "voided": "A1-000001"}
    assert failing.failed == 1
    assert (balance(client, kit, "ann"), balance(client, kit, "bob")) == (100_000, 100_000)
    assert balance(client, kit, "escrow:A1") == 0
    assert client.portal.call(store.total) == 0
    events = recall(client, kit, "A1-000001")["events"]
    assert [e["kind"] for e in events].count("void") == 1
    assert sorted(r["amount"] for r in events[-1]["payload"]["refunds"]) == [500, 1000, 2000]
    resumed = kit.eventually(lambda: (s := staff(client, kit))["round_id"] == "A1-000002" and s)
    assert (resumed["status"], resumed["waiting_for"]) == ("open", None)
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_a_void_written_although_the_store_answered_an_error_is_not_refunded_twice(
    make_client: Any, backend: Backend, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client([automated(kit)], backend=backend)
    store = client.app.state.floor.store
    wager_round(client, kit)
    failing = FailOnce(store.commit, "voided", written=True)
    monkeypatch.setattr(store, "commit", failing)
    voided = kit.post(client, "/api/tables/A1/void", "super", reason="shoe dropped")
    assert voided.json() == {"ok": True, "voided": "A1-000001"}  # found in the log
    assert failing.failed == 1
    assert (balance(client, kit, "ann"), balance(client, kit, "bob")) == (100_000, 100_000)
    assert balance(client, kit, "escrow:A1") == 0
    events = recall(client, kit, "A1-000001")["events"]
    assert [e["kind"] for e in events].count("void") == 1
    kit.eventually(lambda: staff(client, kit)["round_id"] == "A1-000002")
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True


def test_a_restart_whose_void_the_store_fails_starts_and_holds_the_round_for_the_supervisor(
    make_client: Any, kit: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "recover.db")
    first = make_client([kit.hybrid_table(countdown=30)], db=db)
    kit.post(first, "/api/tables/A1/dealer", "dealer", command="open-round")
    with kit.connect(first, "bob", "EWT-2", "A1") as bob:
        bob.request({"type": "position", "position": 3})
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 2500})["ok"]
    first.__exit__(None, None, None)
    failing = FailOnce(None, "voided")

    async def commit(store: Store, step: Step) -> Any:
        failing.real = real.__get__(store)
        return await failing(step)

    real = Store.commit
    monkeypatch.setattr(Store, "commit", commit)
    second = make_client([kit.hybrid_table(recovery="void")], db=db)  # it starts all the same
    held = staff(second, kit)
    assert (held["status"], held["round_id"]) == ("halted", "A1-000001")
    assert held["waiting_for"] == (
        f"a supervisor to void round A1-000001 (the void could not be written: {DISK})"
    )
    assert balance(second, kit, "bob") == 97_500
    assert recall(second, kit, "A1-000001")["status"] == "open"
    voided = kit.post(second, "/api/tables/A1/void", "super", reason="restart")
    assert voided.json() == {"ok": True, "voided": "A1-000001"}
    assert balance(second, kit, "bob") == 100_000
    assert balance(second, kit, "escrow:A1") == 0
    assert staff(second, kit)["status"] == "open"
    assert "void_failed" in audit_kinds(second, kit)


def test_an_irregularity_the_store_fails_to_write_still_halts_and_tilts_the_table(
    make_client: Any, backend: Backend, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client([kit.hybrid_table(source="reader")], backend=backend)
    store = client.app.state.floor.store
    kit.post(client, "/api/tables/A1/dealer", "dealer", command="open-round")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 1})
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
    monkeypatch.setattr(store, "commit", FailOnce(store.commit, "irregular"))
    [refused] = kit.read(client, "AS", table="A1")  # the shoe read a card nobody asked for
    assert refused.startswith("ERR PA 633c.5(j) No card is wanted now")  # not a 500
    held = staff(client, kit)
    assert held["status"] == "halted"
    [tilt] = held["tilts"]
    assert tilt["code"] == "card_not_requested"
    assert f"(the irregularity could not be written: {DISK})" in tilt["message"]
    assert held["waiting_for"] == (
        "a supervisor to clear the tilt card_not_requested and to void round A1-000001"
    )
    assert held["view"]["phase"] == "wagering"  # the card was not applied
    assert balance(client, kit, "ann") == 99_000
    voided = kit.post(client, "/api/tables/A1/void", "super", reason="card not asked for")
    assert voided.json() == {"ok": True, "voided": "A1-000001"}
    assert balance(client, kit, "ann") == 100_000
    assert staff(client, kit)["waiting_for"] == "a supervisor to clear the tilt card_not_requested"
    cleared = kit.post(client, "/api/tables/A1/clear", "super", code="other", reason="misread")
    assert cleared.json()["status"] == "open"
    assert staff(client, kit)["waiting_for"] is None
    assert client.get("/api/verify-log", headers=kit.auth("super")).json()["ok"] is True
