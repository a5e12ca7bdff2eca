"""The audit of the floor settings is readable by those who answer for them, and by nobody else
(PA 605a.4(d), least privilege): ``GET /api/floor/settings/history`` lists each change — who,
when, which setting, the value before and after in the setting's unit (dollars for cents) —
for the operator and the supervisor; a player, a cashier and a dealer are refused (403, their
refusal audited) and read nothing of it. The operator's list of terminals says which terminal
has a valid device credential, by its public id only: a re-key shows the new key's id, never a
secret, and a retired terminal has none. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.support.floor import auth

from .conftest import TERMINALS, Floorkit

HISTORY = "/api/floor/settings/history"


def put(floor: Floorkit, key: str, value: Any) -> None:
    answer = floor.client.put(
        "/api/floor/settings", json={"key": key, "value": value}, headers=auth("operator")
    )
    assert answer.status_code == 200, answer.text


def test_605a4d_the_history_names_who_changed_which_setting_from_what_to_what(
    floor: Floorkit,
) -> None:
    put(floor, "handpay_limit", 50_000)
    put(floor, "handpay_limit", 60_000)
    put(floor, "tips_enabled", True)
    for reader in ("operator", "super"):
        answer = floor.client.get(HISTORY, headers=auth(reader))
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["time_zone"] == "UTC"
        changes = body["changes"]
        assert [(c["key"], c["old"], c["new"]) for c in changes] == [
            ("tips_enabled", False, True),
            ("handpay_limit", 50_000, 60_000),
            ("handpay_limit", 120_000, 50_000),
        ]
        newest_limit, first_limit = changes[1], changes[2]
        assert (newest_limit["old_shown"], newest_limit["new_shown"]) == ("$500.00", "$600.00")
        assert first_limit["old_default"] is True and newest_limit["old_default"] is False
        assert first_limit["old_shown"] == "$1,200.00"
        assert newest_limit["kind"] == "cents"
        assert newest_limit["title"] == "The largest hand pay without a supervisor"
        assert {c["by"] for c in changes} == {"olga"}
        assert changes[0]["at_us"] >= changes[1]["at_us"] >= changes[2]["at_us"] > 0
    limited = floor.client.get(f"{HISTORY}?limit=1", headers=auth("operator")).json()
    assert [c["key"] for c in limited["changes"]] == ["tips_enabled"]


def test_605a4d_a_player_a_cashier_and_a_dealer_cannot_read_the_settings_history(
    floor: Floorkit,
) -> None:
    put(floor, "handpay_limit", 50_000)
    attackers = {
        "player": floor.session("ann"),
        "cashier": auth("cashier"),
        "dealer": auth("dealer"),
    }
    for role, headers in attackers.items():
        answer = floor.client.get(HISTORY, headers=headers)
        assert answer.status_code == 403, (role, answer.text)
        detail = answer.json()["detail"]
        assert detail["code"] == "role"
        assert "needs supervisor or operator" in detail["message"], detail["message"]
        assert "50000" not in answer.text and "$500.00" not in answer.text
    assert floor.client.get(HISTORY).status_code == 401

    async def refusals(store: Any) -> list[dict[str, Any]]:
        return [row for row in await store.audit_entries(limit=50) if row["kind"] == "role"]

    refused = floor.run(refusals)
    assert len([r for r in refused if "read setting history" in r["message"]]) == 3


def test_605a4d_the_terminal_list_shows_a_key_by_its_id_never_its_secret(floor: Floorkit) -> None:
    def listed() -> dict[str, Any]:
        answer = floor.client.get("/api/floor/terminals", headers=auth("operator"))
        assert answer.status_code == 200, answer.text
        return {row["id"]: row for row in answer.json()}

    before = listed()["EWT-1"]["key"]
    other = listed()["EWT-2"]["key"]
    assert before is not None and before["id"].startswith("cr-")
    rekeyed = floor.client.post(
        "/api/floor/terminals",
        json={"terminal": "EWT-1", "table": "A1", "credential": True},
        headers=auth("operator"),
    )
    assert rekeyed.status_code == 200, rekeyed.text
    secret = rekeyed.json()["credential"]
    after = listed()
    assert after["EWT-1"]["key"]["id"] == rekeyed.json()["credential_id"] != before["id"]
    assert secret not in str(after) and TERMINALS["EWT-1"] not in str(after)
    old_key = floor.client.post(
        "/api/session",
        json={"token": "tok-ann", "terminal": "EWT-1", "terminal_key": TERMINALS["EWT-1"]},
    )
    assert old_key.status_code == 403, old_key.text  # the old key signs nobody in
    floor.client.cookies.clear()
    retired = floor.client.post(
        "/api/floor/terminals",
        json={"terminal": "EWT-1", "table": "A1", "status": "retired"},
        headers=auth("operator"),
    )
    assert retired.status_code == 200, retired.text
    assert listed()["EWT-1"]["key"] is None
    assert listed()["EWT-1"]["status"] == "retired"
    supervisor = floor.client.post(
        "/api/floor/terminals",
        json={"terminal": "EWT-2", "table": "A1", "credential": True},
        headers=auth("super"),
    )
    assert supervisor.status_code == 403
    assert listed()["EWT-2"]["key"] == other  # refused: nothing re-keyed
