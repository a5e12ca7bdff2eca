"""A look-up of a voucher that does not exist is refused and audited — counted, not written a
row each: the first refusal of a person has its row at once (the cage and a supervisor see it
as before), the others of the same person and refusal within the window (10 s) are one more
row with their count. 200 made-up validation codes from one cashier's session wrote 200 rows
before; now two. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tablejack.server.socket.gate import GateLimits
from tablejack.store.vouchers import VOUCHER_RULE, make_validation_code
from tests.support.floor import auth

from .conftest import Floorkit

ATTEMPTS = 200


@pytest.fixture
def gate_limits() -> GateLimits:
    """An audit window longer than any run of these tests, so the refusals fall in one."""
    return GateLimits(audit_seconds=3600)


def new_rows(floor: Floorkit, before: int) -> list[dict[str, Any]]:
    rows = floor.run(lambda store: store.audit_entries(limit=100_000))
    return rows[: len(rows) - before]  # the newest first


def test_made_up_voucher_codes_at_the_cage_are_counted_not_written_a_row_each(
    floor: Floorkit,
) -> None:
    before = len(floor.run(lambda store: store.audit_entries(limit=100_000)))
    for number in range(ATTEMPTS):
        code = make_validation_code(10**15 + number)  # well formed, no voucher's
        answer = floor.client.post(
            "/api/cage/vouchers/lookup", json={"code": code}, headers=auth("cashier")
        )
        assert answer.status_code == 404, answer.text
        assert answer.json()["detail"]["rule"] == VOUCHER_RULE
    written = new_rows(floor, before)
    assert [row["kind"] for row in written] == ["forged"]  # the first, at once
    assert written[0]["actor"] == "cleo"
    floor.stop()  # the open window is written at shutdown
    written = new_rows(floor, before)
    assert Counter(row["kind"] for row in written) == Counter({"forged": 2})
    counted = written[0]
    assert counted["actor"] == "cleo" and counted["rule"] == VOUCHER_RULE
    assert f"{ATTEMPTS - 1} further refused look-ups from cleo" in counted["message"]


def test_made_up_voucher_numbers_on_the_floor_are_counted_per_person(floor: Floorkit) -> None:
    before = len(floor.run(lambda store: store.audit_entries(limit=100_000)))
    for who in ("super", "cashier"):
        for number in range(ATTEMPTS // 2):
            answer = floor.client.get(
                f"/api/floor/vouchers/{900_000_000_000 + number}", headers=auth(who)
            )
            assert answer.status_code == 404, answer.text
            assert answer.json()["detail"]["code"] == "no_voucher"
    floor.stop()
    written = new_rows(floor, before)
    assert len(written) == 4  # each person: the first at once, then the count
    by = Counter((row["actor"], row["kind"]) for row in written)
    assert set(by.values()) == {2} and len(by) == 2
    counts = [row["message"] for row in written if "further refused look-ups" in row["message"]]
    assert len(counts) == 2
    assert all(f"{ATTEMPTS // 2 - 1} further refused look-ups" in text for text in counts)
