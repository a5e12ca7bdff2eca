"""The operator's floor settings (PA Chapter 605a): limits, the gaming day, tips, tilts and the
lifetime of credentials; each change is an event of the settings log, and audited.

Every setting is one entry of :data:`SETTINGS`, a :class:`SettingSpec`: its type and unit
(``cents`` shown as dollars, ``seconds``, ``hour``, ``days``, ``bills``, ``yes-no``, ``choice``,
``text``, ``lifetimes``), its range, its default, what it means and the rule it serves. The
check of a value (:func:`setting_refusal`), the API (``GET /api/floor/settings/specs``) and the
operator's page all read that one table, so adding a setting is adding one entry. A value out
of its range is refused with a sentence naming the range in the setting's unit:

>>> print(setting_refusal("handpay_limit", 100_000_000_000))
The largest hand pay without a supervisor is between $1.00 and $100,000.00, not $1,000,000,000.00 (PA 605a.5(d)).
>>> print(setting_refusal("bill_denominations", [100, 100_000_000_000]))
Each bill the validators accept is one of the bills that exist ($1, $2, $5, $10, $20, $50, $100), listed once, not $1,000,000,000.00 (PA 605a.5(c)).
>>> valid_setting("session_lifetime_s", 3600), valid_setting("session_lifetime_s", 1.5)
(True, False)
"""

from __future__ import annotations

import json
import zoneinfo
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.core.money import format_cents
from tablejack.store.db import EventIn, Store, StoreError, now_us
from tablejack.store.floor_models import SETTINGS as SETTINGS_TABLE
from tablejack.store.policy import Role

__all__ = [
    "BILLS",
    "CONTROL_RULE",
    "DEFAULT_SETTINGS",
    "SETTINGS",
    "SETTINGS_LOG",
    "FloorRefusedError",
    "SettingSpec",
    "floor_settings",
    "set_floor_setting",
    "setting_history",
    "setting_refusal",
    "setting_specs",
    "valid_setting",
]

CONTROL_RULE = "PA 605a.4(d)"
"""The clause of the system's access and change controls."""
ROLES_WITH_CREDENTIALS = {r.value for r in Role if r is not Role.TABLE}
SETTINGS_LOG = "floor-settings"
"""The log of the floor settings' changes: one ``setting`` event (``key``, ``value``) each."""
BILLS = (100, 200, 500, 1000, 2000, 5000, 10000)
"""The bills that exist and a validator may accept, in cents ($1, $2, $5, $10, $20, $50,
$100)."""
KINDS = (
    "cents",
    "seconds",
    "hour",
    "days",
    "bills",
    "yes-no",
    "choice",
    "text",
    "zone",
    "count",
    "lifetimes",
)
"""The types of a setting; each has its unit, its form field on the operator's page and its
sentence when refused."""


@dataclass(frozen=True)
class SettingSpec:
    """One floor setting: its ``kind`` (:data:`KINDS`), its range (``low`` to ``high``, in its
    unit: cents, seconds, days, hours, characters), its ``choices`` (a ``choice``), its
    ``default``, ``title`` (the noun phrase a refusal and the page name it by), ``doc`` (what it
    does) and the ``rule`` it serves."""

    kind: str
    default: Any
    title: str
    doc: str
    rule: str = CONTROL_RULE
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert setting_problem(self, self.default) is None, (self.title, self.default)

    def to_json(self, key: str) -> dict[str, Any]:
        """Plain data for the API and the page."""
        out: dict[str, Any] = {
            "key": key,
            "kind": self.kind,
            "default": self.default,
            "title": self.title,
            "doc": self.doc,
            "rule": self.rule,
            "low": self.low,
            "high": self.high,
            "range": self.range_words(),
        }
        if self.choices:
            out["choices"] = list(self.choices)
        if self.kind == "bills":
            out["choices"] = list(BILLS)
        if self.kind == "lifetimes":
            out["choices"] = sorted(ROLES_WITH_CREDENTIALS)
        return out

    def shown(self, value: Any) -> str:
        """A value in the setting's unit, as a person reads it."""
        if self.kind in ("cents", "bills") and _whole(value):
            return format_cents(value)
        if self.kind == "seconds" and _whole(value):
            return f"{value:,} seconds"
        if self.kind == "days" and _whole(value):
            return f"{value:,} days"
        if self.kind == "hour" and _whole(value):
            return f"{value}:00 UTC"
        if self.kind == "count" and _whole(value):
            return f"{value:,}"
        text = json.dumps(value) if not isinstance(value, str) else repr(value)
        return text if len(text) <= 40 else text[:39] + "…"

    def range_words(self) -> str:
        """The range in the setting's unit: ``between $1.00 and $100,000.00``."""
        if self.kind == "bills":
            return (
                "one of the bills that exist ("
                + ", ".join(_bill(b) for b in BILLS)
                + "), listed once"
            )
        if self.kind == "yes-no":
            return "yes or no (true or false)"
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "text":
            return f"a text of {self.low} to {self.high} printable characters"
        if self.kind == "zone":
            return "a time zone's IANA name (e.g. 'America/New_York')"
        if self.kind == "lifetimes":
            return (
                f"a role's lifetime in seconds, each between {self.low:,} and {self.high:,} seconds"
            )
        low, high = self.low, self.high
        assert low is not None and high is not None
        if self.kind == "cents":
            return f"between {format_cents(low)} and {format_cents(high)}"
        if self.kind == "hour":
            return f"an hour between {low} and {high} (UTC)"
        if self.kind == "count":
            return f"between {low:,} and {high:,}"
        unit = "seconds" if self.kind == "seconds" else "days"
        return f"between {low:,} and {high:,} {unit}"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bill(cents: int) -> str:
    return f"${cents // 100:,}" if cents % 100 == 0 else format_cents(cents)


def _time_zone(name: str) -> bool:
    """Is ``name`` a time zone the machine knows (an IANA name, e.g. ``America/New_York``)?"""
    if not 1 <= len(name) <= 64 or not name.isprintable():
        return False
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def setting_problem(spec: SettingSpec, value: Any) -> str | None:
    """What is wrong with ``value`` for ``spec`` (the end of a sentence), or None."""
    kind = spec.kind
    if kind == "yes-no":
        return None if isinstance(value, bool) else f"not {spec.shown(value)}"
    if kind == "choice":
        return None if value in spec.choices else f"not {spec.shown(value)}"
    if kind == "text":
        assert spec.low is not None and spec.high is not None
        fits = isinstance(value, str) and spec.low <= len(value) <= spec.high
        return None if fits and value.isprintable() else f"not {spec.shown(value)}"
    if kind == "zone":
        return None if isinstance(value, str) and _time_zone(value) else f"not {spec.shown(value)}"
    if kind == "bills":
        if not isinstance(value, list) or not value:
            return f"not {spec.shown(value)} (a list of at least one bill)"
        for bill in value:
            if not _whole(bill) or bill not in BILLS:
                return f"not {spec.shown(bill)}"
        if len(set(value)) != len(value):
            return "not a bill listed twice"
        return None
    if kind == "lifetimes":
        if not isinstance(value, dict):
            return f"not {spec.shown(value)}"
        for role, seconds in value.items():
            if role not in ROLES_WITH_CREDENTIALS:
                return f"not a lifetime of {str(role)[:32]!r} (no such role)"
            if not _whole(seconds) or not spec.low <= seconds <= spec.high:
                return f"not {spec.shown(seconds)} for {role}"
        return None
    if not _whole(value):
        if kind == "count":
            return f"a whole number, not {spec.shown(value)}"
        unit = "cents" if kind == "cents" else "seconds" if kind == "seconds" else kind
        return f"a whole number of {unit}, not {spec.shown(value)}"
    if not spec.low <= value <= spec.high:
        return f"not {spec.shown(value)}"
    return None


SETTINGS: dict[str, SettingSpec] = {
    "voucher_limit": SettingSpec(
        "cents",
        1_000_000,
        "The largest voucher a terminal issues or the cage sells",
        "A cash-out or a sale above it is refused (a hand pay instead).",
        "PA 605a.5(c)",
        100,
        1_000_000,
    ),
    "handpay_limit": SettingSpec(
        "cents",
        120_000,
        "The largest hand pay without a supervisor",
        "A hand pay above it is a supervisor's to make.",
        "PA 605a.5(d)",
        100,
        10_000_000,
    ),
    "bill_denominations": SettingSpec(
        "bills",
        list(BILLS),
        "Each bill the validators accept",
        "A bill not in the list is refused at the terminal.",
        "PA 605a.5(c)",
    ),
    "gaming_day_start_hour": SettingSpec(
        "hour",
        6,
        "The hour a gaming day starts",
        "The meters, the win report and a player's daily limits run from it.",
        "PA 605a.5(d)",
        0,
        23,
    ),
    "license_rounding": SettingSpec(
        "choice",
        "up",
        "How a partial group of five terminals counts for the licence",
        "up: as a table; down: not at all.",
        "PA 633c.5",
        choices=("up", "down"),
    ),
    "tips_enabled": SettingSpec(
        "yes-no", False, "Whether players may tip the dealer", "Tips go to the dealer's account."
    ),
    "tip_maximum": SettingSpec(
        "cents",
        10_000,
        "The largest tip",
        "A tip above it is refused.",
        "PA 605a.5(d)",
        100,
        100_000,
    ),
    "tilt_on_connection_loss": SettingSpec(
        "choice",
        "mid_round",
        "When a terminal that loses its connection is locked",
        "mid_round: while its player has an unsettled wager; always; off.",
        "PA 605a",
        choices=("mid_round", "always", "off"),
    ),
    "connection_lost_clear": SettingSpec(
        "choice",
        "on_return",
        "How a terminal locked for a lost connection is unlocked",
        "on_return: by itself once its player is back at it and holds no unsettled wager; "
        "supervisor: only by a supervisor's clear.",
        "PA 605a",
        choices=("on_return", "supervisor"),
    ),
    "token_lifetimes": SettingSpec(
        "lifetimes",
        {},
        "How long the credentials of a role live",
        "Seconds per role, over the built-in lifetimes.",
        low=60,
        high=5 * 365 * 86_400,
    ),
    "session_lifetime_s": SettingSpec(
        "seconds",
        12 * 3600,
        "How long a session lives",
        "A session signed in with a token ends after it.",
        low=60,
        high=7 * 86_400,
    ),
    "sas_link_required": SettingSpec(
        "yes-no",
        False,
        "Whether a terminal with a SAS link is locked while its host does not poll it",
        "See the SAS link's documentation.",
        "PA 605a.5(a)",
    ),
    "sas_time_zone": SettingSpec(
        "zone",
        "UTC",
        "The floor's time zone, shown by the SAS clock",
        "SAS clocks are local: the date and time the host reads and sets, and the ticket records.",
        "PA 605a.5(a)",
    ),
    "voucher_expiry_days": SettingSpec(
        "days",
        0,
        "How many days a voucher may be redeemed",
        "0: a voucher does not expire.",
        "PA 605a.5(c)",
        0,
        3650,
    ),
    "casino_name": SettingSpec(
        "text", "tablejack", "The casino's name printed on a voucher", "", "PA 605a.5(c)", 1, 64
    ),
    "credit_approval_limit": SettingSpec(
        "cents",
        300_000,
        "The largest credit a cashier sells without a supervisor's approval",
        "A credit above it waits in the approval queue for a supervisor (tablejack.store.approvals).",
        "PA 605a.4(d)",
        100,
        10_000_000,
    ),
    "voucher_sale_approval_limit": SettingSpec(
        "cents",
        300_000,
        "The largest voucher a cashier sells without a supervisor's approval",
        "A sale above it waits in the approval queue for a supervisor (tablejack.store.approvals).",
        "PA 605a.4(d)",
        100,
        1_000_000,
    ),
    "validator_per_minute": SettingSpec(
        "count",
        20,
        "How many bills and vouchers a terminal's validator may report in any 60 seconds",
        "One past it is refused and recorded (tablejack.store.validator).",
        "PA 605a.5(c)",
        1,
        120,
    ),
}
"""Every floor setting's spec (see the module docstring): the largest voucher ($10,000.00 by
default and at most — a cash transaction the casino reports), the largest hand pay without a
supervisor ($1,200.00; at most $100,000.00), the bills the validators accept, the hour (UTC) a
gaming day starts, how a partial group of five EWTs counts for the licence, tips and the largest
($100.00; at most $1,000.00) (:mod:`tablejack.store.tips`), when a terminal that loses its
connection is locked (:mod:`tablejack.server.duties.tilts`), how long the credentials of a role
live (over :data:`tablejack.store.credentials.DEFAULT_LIFETIMES`) and a session, whether a
terminal with a SAS link is locked while its host does not poll it (docs/sas.md), how many days
a voucher may be redeemed and the casino's name printed on it, how many bills and vouchers a
terminal's validator may report a minute, and the largest credit and voucher sale a cashier makes
without a supervisor's approval ($3,000.00 each; above them the sale waits in the approval queue,
as a hand pay above the hand-pay limit does). A new setting is one entry here."""

DEFAULT_SETTINGS: dict[str, Any] = {key: spec.default for key, spec in SETTINGS.items()}
"""The operator's floor settings and their defaults (from :data:`SETTINGS`)."""


def setting_specs() -> list[dict[str, Any]]:
    """Every setting's spec as plain data, in :data:`SETTINGS`'s order."""
    return [spec.to_json(key) for key, spec in SETTINGS.items()]


def setting_refusal(key: str, value: Any) -> str | None:
    """The sentence refusing ``value`` for the setting ``key`` — its title, its range in its
    unit, the value refused and the rule — or None when the value is valid."""
    spec = SETTINGS.get(key)
    if spec is None:
        return f"No floor setting {key[:64]!r} ({CONTROL_RULE})."
    problem = setting_problem(spec, value)
    if problem is None:
        return None
    return f"{spec.title} is {spec.range_words()}, {problem} ({spec.rule})."


def valid_setting(key: str, value: Any) -> bool:
    """True when ``value`` is a valid value of the setting ``key``."""
    return setting_refusal(key, value) is None


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
        rows = (
            await connection.execute(select(SETTINGS_TABLE.c.key, SETTINGS_TABLE.c.value))
        ).all()
    out = dict(DEFAULT_SETTINGS)
    out.update({row[0]: json.loads(row[1]) for row in rows})
    return out


async def set_floor_setting(store: Store, key: str, value: Any, *, by: str) -> dict[str, Any]:
    """Change one setting (the caller checks the operator's role): its row and an event of the
    settings log (:data:`SETTINGS_LOG`, chained and signed by the checkpoints, so ``verify-log``
    finds a row changed behind the server's back) in one transaction; recorded in the audit
    log."""
    refusal = setting_refusal(key, value)
    if refusal is not None:
        rule = SETTINGS[key].rule if key in SETTINGS else CONTROL_RULE
        raise FloorRefusedError("invalid", refusal, rule)

    async def write(connection: AsyncConnection) -> dict[str, Any]:
        found = await connection.scalar(
            select(SETTINGS_TABLE.c.key).where(SETTINGS_TABLE.c.key == key)
        )
        values = {"value": json.dumps(value), "set_by": by[:64], "set_us": now_us()}
        if found is None:
            await connection.execute(SETTINGS_TABLE.insert().values(key=key, **values))
        else:
            await connection.execute(
                update(SETTINGS_TABLE).where(SETTINGS_TABLE.c.key == key).values(**values)
            )
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


async def setting_history(store: Store, *, limit: int = 100) -> list[dict[str, Any]]:
    """The settings' changes, newest first (at most ``limit``), read from the settings log
    (:data:`SETTINGS_LOG`, the chained record of every change): when (``at_us``), who
    (``by``), which setting (``key``, its ``kind`` and ``title``), the value before
    (``old``: the change before it of that setting, else its default — ``old_default``
    true) and the value set (``new``), each also as a person reads it in the setting's unit
    (``old_shown``, ``new_shown``: dollars for cents). Nothing secret: the settings are read by
    the floor's staff."""
    events = [event for event in await store.events(SETTINGS_LOG) if event.kind == "setting"]
    before: dict[str, Any] = {}
    changes: list[dict[str, Any]] = []
    for event in events:
        key = str(event.payload.get("key", ""))
        value = event.payload.get("value")
        spec = SETTINGS.get(key)
        known = key in before
        old = before[key] if known else (None if spec is None else spec.default)
        before[key] = value
        changes.append(
            {
                "seq": event.seq,
                "at_us": event.at_us,
                "by": event.actor,
                "key": key,
                "kind": None if spec is None else spec.kind,
                "title": key if spec is None else spec.title,
                "old": old,
                "old_default": not known,
                "new": value,
                "old_shown": json.dumps(old) if spec is None else spec.shown(old),
                "new_shown": json.dumps(value) if spec is None else spec.shown(value),
            }
        )
    return changes[::-1][: max(0, limit)]
