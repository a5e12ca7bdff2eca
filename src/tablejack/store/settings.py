"""The operator's floor settings (PA Chapter 605a): limits, the gaming day, tips, tilts and the
lifetime of credentials; each change is an event of the settings log, and audited.

>>> valid_setting("session_lifetime_s", 3600), valid_setting("session_lifetime_s", 1.5)
(True, False)
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import EventIn, Store, StoreError, now_us
from tablejack.store.floor_models import SETTINGS
from tablejack.store.policy import Role

__all__ = [
    "CONTROL_RULE",
    "DEFAULT_SETTINGS",
    "SETTINGS_LOG",
    "FloorRefusedError",
    "floor_settings",
    "set_floor_setting",
    "valid_setting",
]

CONTROL_RULE = "PA 605a.4(d)"
"""The clause of the system's access and change controls."""
ROLES_WITH_CREDENTIALS = {r.value for r in Role if r is not Role.TABLE}
SETTINGS_LOG = "floor-settings"
"""The log of the floor settings' changes: one ``setting`` event (``key``, ``value``) each."""

DEFAULT_SETTINGS: dict[str, Any] = {
    "voucher_limit": 1_000_000,
    "handpay_limit": 120_000,
    "bill_denominations": [100, 200, 500, 1000, 2000, 5000, 10000],
    "gaming_day_start_hour": 6,
    "license_rounding": "up",
    "tips_enabled": False,
    "tip_maximum": 10_000,
    "tilt_on_connection_loss": "mid_round",
    "token_lifetimes": {},
    "session_lifetime_s": 12 * 3600,
    "sas_link_required": False,
    "voucher_expiry_days": 0,
    "casino_name": "tablejack",
    "credit_approval_limit": 300_000,
    "voucher_sale_approval_limit": 300_000,
}
"""The operator's floor settings and their defaults: the largest voucher a terminal issues
($10,000.00), the largest hand pay an attendant makes without a supervisor ($1,200.00), the
bills the validators accept (cents), the hour (UTC) a gaming day starts, and how a partial
group of five EWTs counts for the licence (``up``: as a table; ``down``: not at all);
whether players may tip the dealer and the largest tip ($100.00) (:mod:`tablejack.store.tips`);
when a terminal that loses its connection while its player has an unsettled wager is locked
(``tilt_on_connection_loss``: ``mid_round``, ``always`` or ``off``; :mod:`tablejack.server.duties.tilts`);
how long the credentials of a role live (``token_lifetimes``: role → seconds, over
:data:`tablejack.store.credentials.DEFAULT_LIFETIMES`) and a session (``session_lifetime_s``);
whether a terminal with a SAS link is locked while its host does not poll it
(``sas_link_required``; docs/sas.md);
how many days a voucher may be redeemed (``voucher_expiry_days``, 0: it does not expire) and the
casino's name printed on it (``casino_name``); the largest credit sale and voucher sale a cashier
makes without a supervisor's approval (``credit_approval_limit``,
``voucher_sale_approval_limit``, $3,000.00 each; above them the sale waits in the approval queue,
:mod:`tablejack.store.approvals`, as a hand pay above ``handpay_limit`` does)."""


class FloorRefusedError(StoreError):
    """A floor request refused: ``code`` (machine), ``rule`` (clause) and a sentence.

    Nothing was written but the audit entry."""

    def __init__(self, code: str, message: str, rule: str) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.message = message


async def floor_settings(store: Store) -> dict[str, Any]:
    """The operator's settings: :data:`DEFAULT_SETTINGS` with the stored values over them."""
    async with store.engine.connect() as connection:
        rows = (await connection.execute(select(SETTINGS.c.key, SETTINGS.c.value))).all()
    out = dict(DEFAULT_SETTINGS)
    out.update({row[0]: json.loads(row[1]) for row in rows})
    return out


def valid_setting(key: str, value: Any) -> bool:
    """True when ``value`` is a valid value of the setting ``key``."""
    if key == "tilt_on_connection_loss":  # PA 605a: lock a terminal lost mid-round
        return value in ("mid_round", "always", "off")
    if key == "tips_enabled":
        return isinstance(value, bool)
    if key == "sas_link_required":  # PA 605a.5(a): the central system's link
        return isinstance(value, bool)
    if key in ("voucher_limit", "handpay_limit", "tip_maximum"):
        return isinstance(value, int) and not isinstance(value, bool) and value > 0
    if key in ("credit_approval_limit", "voucher_sale_approval_limit"):  # dual control
        return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10**11
    if key == "gaming_day_start_hour":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 23
    if key == "voucher_expiry_days":  # 0: a voucher does not expire
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3650
    if key == "casino_name":  # printed on every voucher
        return isinstance(value, str) and 1 <= len(value) <= 64 and value.isprintable()
    if key == "license_rounding":
        return value in ("up", "down")
    if key == "token_lifetimes":
        return isinstance(value, dict) and all(
            role in ROLES_WITH_CREDENTIALS
            and isinstance(seconds, int)
            and not isinstance(seconds, bool)
            and 60 <= seconds <= 5 * 365 * 24 * 3600
            for role, seconds in value.items()
        )
    if key == "session_lifetime_s":
        return isinstance(value, int) and not isinstance(value, bool) and 60 <= value <= 7 * 86400
    if key == "bill_denominations":
        return (
            isinstance(value, list)
            and bool(value)
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
        )
    return False


async def set_floor_setting(store: Store, key: str, value: Any, *, by: str) -> dict[str, Any]:
    """Change one setting (the caller checks the operator's role): its row and an event of the
    settings log (:data:`SETTINGS_LOG`, chained and signed by the checkpoints, so ``verify-log``
    finds a row changed behind the server's back) in one transaction; recorded in the audit
    log."""
    if key not in DEFAULT_SETTINGS:
        raise FloorRefusedError("invalid", f"No floor setting {key!r}.", CONTROL_RULE)
    if not valid_setting(key, value):
        raise FloorRefusedError("invalid", f"{value!r} is not a valid {key}.", CONTROL_RULE)

    async def write(connection: AsyncConnection) -> dict[str, Any]:
        found = await connection.scalar(select(SETTINGS.c.key).where(SETTINGS.c.key == key))
        values = {"value": json.dumps(value), "set_by": by[:64], "set_us": now_us()}
        if found is None:
            await connection.execute(SETTINGS.insert().values(key=key, **values))
        else:
            await connection.execute(update(SETTINGS).where(SETTINGS.c.key == key).values(**values))
        return {}

    await store.commit_logged(  # the row and its event in one transaction
        SETTINGS_LOG,
        EventIn("setting", {"key": key, "value": value}, actor=by[:64]),
        [],
        None,
        owner="settings",
        before=write,
        log_kind="settings",
    )
    await store.audit("setting", f"{key} = {json.dumps(value)}", actor=by, rule=CONTROL_RULE)
    return await floor_settings(store)
