"""Every floor setting is typed and bounded (PA 605a.4(d)): the operator cannot set a bill of
$1,000,000,000.00, a hand-pay limit of a billion, or a limit in the wrong unit. A value out of
its setting's range is refused (409, code ``invalid``) with a sentence naming the range in the
setting's unit — dollars for money — and the rule; nothing is stored and no ``setting`` event
is written. Each bound of each setting holds at the API, on SQLite and PostgreSQL; the specs
the operator's page draws its form from list every setting, in one table."""

from __future__ import annotations

from typing import Any

import pytest

from tablejack.core.money import format_cents
from tablejack.store.settings import BILLS, DEFAULT_SETTINGS, SETTINGS
from tests.support.floor import auth

from .conftest import Floorkit

ABSURD = [
    (
        "bill_denominations",
        [100, 100_000_000_000],
        "Each bill the validators accept is one of the bills that exist ($1, $2, $5, $10, $20, "
        "$50, $100), listed once, not $1,000,000,000.00 (PA 605a.5(c)).",
    ),
    (
        "handpay_limit",
        100_000_000_000,
        "The largest hand pay without a supervisor is between $1.00 and $100,000.00, not "
        "$1,000,000,000.00 (PA 605a.5(d)).",
    ),
    (
        "voucher_limit",
        100_000_000_000,
        "The largest voucher a terminal issues or the cage sells is between $1.00 and "
        "$10,000.00, not $1,000,000,000.00 (PA 605a.5(c)).",
    ),
    (
        "handpay_limit",
        500.5,
        "The largest hand pay without a supervisor is between $1.00 and $100,000.00, a whole "
        "number of cents, not 500.5 (PA 605a.5(d)).",
    ),
    ("bill_denominations", [100, 100], "listed once, not a bill listed twice"),
    ("bill_denominations", [150], "not $1.50"),
    ("bill_denominations", [], "a list of at least one bill"),
    ("tip_maximum", 100_001, "between $1.00 and $1,000.00, not $1,000.01"),
    ("session_lifetime_s", 10**9, "between 60 and 604,800 seconds"),
    ("voucher_expiry_days", -1, "between 0 and 3,650 days, not -1 days"),
    ("token_lifetimes", {"dealer": 10**12}, "each between 60 and 157,680,000 seconds"),
    ("token_lifetimes", {"emperor": 3600}, "no such role"),
]


def put(floor: Floorkit, key: str, value: Any) -> Any:
    return floor.client.put(
        "/api/floor/settings", json={"key": key, "value": value}, headers=auth("operator")
    )


def setting_events(floor: Floorkit) -> int:
    async def count(store: Any) -> int:
        return len(await store.events("floor-settings"))

    return int(floor.run(count))


@pytest.mark.parametrize(("key", "value", "sentence"), ABSURD)
def test_605a4d_an_absurd_setting_is_refused_naming_its_range(
    floor: Floorkit, key: str, value: Any, sentence: str
) -> None:
    before = floor.client.get("/api/floor/settings", headers=auth("operator")).json()
    answer = put(floor, key, value)
    assert answer.status_code == 409, answer.text
    detail = answer.json()["detail"]
    assert detail["code"] == "invalid"
    assert sentence in detail["message"], detail["message"]
    assert detail["rule"] == SETTINGS[key].rule
    assert floor.client.get("/api/floor/settings", headers=auth("operator")).json() == before
    assert setting_events(floor) == 0


def test_605a4d_each_bound_of_each_setting_holds(floor: Floorkit) -> None:
    """The lowest and the highest value of each bounded setting are taken, one beyond either
    is refused naming the range (in dollars for money)."""
    for key, spec in SETTINGS.items():
        if spec.kind not in ("cents", "seconds", "days", "hour"):
            continue
        assert spec.low is not None and spec.high is not None
        for value in (spec.low, spec.high):
            assert put(floor, key, value).status_code == 200, (key, value)
        for value in (spec.low - 1, spec.high + 1):
            refused = put(floor, key, value)
            assert refused.status_code == 409, (key, value)
            message = refused.json()["detail"]["message"]
            if spec.kind == "cents":
                shown = f"between {format_cents(spec.low)} and {format_cents(spec.high)}"
                assert f"{shown}, not {format_cents(value)}" in message, message
            assert spec.range_words() in message, message
        assert put(floor, key, spec.default).status_code == 200


def test_605a4d_the_specs_list_every_setting_with_its_unit_and_range(floor: Floorkit) -> None:
    answer = floor.client.get("/api/floor/settings/specs", headers=auth("operator"))
    assert answer.status_code == 200, answer.text
    specs = {spec["key"]: spec for spec in answer.json()}
    assert list(specs) == list(DEFAULT_SETTINGS)  # one table: every setting, in order
    assert specs["handpay_limit"]["kind"] == "cents"
    assert specs["handpay_limit"]["range"] == "between $1.00 and $100,000.00"
    assert specs["bill_denominations"]["choices"] == list(BILLS)
    assert specs["license_rounding"]["choices"] == ["up", "down"]
    for spec in specs.values():
        assert spec["default"] == DEFAULT_SETTINGS[spec["key"]]
    players = floor.client.get("/api/floor/settings/specs", headers=floor.session("ann"))
    assert players.status_code == 403
