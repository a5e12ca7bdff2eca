"""Game accounts and vouchers of PA Chapter 605a: buy-in, cash-out, voucher redemption and
hand pays, each a ledger movement written with a hash-chained event in ONE transaction.

A player's game account (§ 605a.1, 605a.2(d)) is his ``player`` account. It is credited on a
buy-in — a bill accepted at a terminal (``bill_in``, from the ``bills`` account, the cash in the
terminals' bill validators) or a voucher redeemed (``voucher_in``, from the ``vouchers``
account) — and debited on cash-out: a voucher issued for the remainder (``voucher_out``, to the
``vouchers`` account, whose balance is the value of the vouchers outstanding) or a hand pay by
an attendant (``jackpot`` or ``cancelled_credit``, to the cage) (§ 605a.5(c)–(d)).

Every movement is an event in the terminal's account log (round id ``acct:<terminal>``, kind
``accounts``), chained like every round's log and checked by ``verify-log``; the ledger row
carries the terminal's log id and the voucher number in its memo.

A voucher has a number (its row id, twelve digits) and an 18-digit validation code (16 random
digits and two ISO 7064 mod 97-10 check digits) printed on it; the store keeps only the code's
SHA-256. Redemption is one conditional update (``status = 'issued'`` → ``redeemed``), so a
voucher pays once, on any terminal of the floor, even when two terminals race. A forged code
(bad check digits, or no such voucher) and a second redemption are refused and written to the
audit log; nothing else changes.

>>> code = make_validation_code(1234567890123456)
>>> code, check_code(code), check_code("123456789012345600")
('123456789012345611', True, False)
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import (
    CAGE,
    DuplicateEventError,
    EventRecord,
    Step,
    Store,
    StoreError,
    Transfer,
    now_us,
)
from tablejack.store.db import EventIn as _EventIn
from tablejack.store.floor_models import SETTINGS, TERMINALS, VOUCHERS
from tablejack.store.models import ROUNDS

__all__ = [
    "BILLS",
    "DEFAULT_SETTINGS",
    "HANDPAY_KINDS",
    "VOUCHERS_ACCOUNT",
    "FloorRefusedError",
    "Movement",
    "account_log_id",
    "bill_in",
    "cash_out",
    "check_code",
    "commit_logged",
    "floor_settings",
    "hand_pay",
    "make_validation_code",
    "redeem_voucher",
    "register_terminal",
    "set_floor_setting",
    "terminals",
    "voucher",
]

BILLS = "bills"
"""The cash in the terminals' bill validators (its balance is minus the bills accepted)."""
VOUCHERS_ACCOUNT = "vouchers"
"""The vouchers outstanding (issued and not yet redeemed)."""
HANDPAY_KINDS = ("jackpot", "cancelled_credit")
"""Attendant-paid jackpots and attendant-paid cancelled credits (§ 605a.5(d))."""
VOUCHER_RULE = "PA 605a.5(c)"
ACCOUNT_RULE = "PA 605a.2(d)"
CONTROL_RULE = "PA 605a.4(d)"

DEFAULT_SETTINGS: dict[str, Any] = {
    "voucher_limit": 1_000_000,
    "handpay_limit": 120_000,
    "bill_denominations": [100, 200, 500, 1000, 2000, 5000, 10000],
    "gaming_day_start_hour": 6,
    "license_rounding": "up",
    "tips_enabled": False,
    "tip_maximum": 10_000,
    "tilt_on_connection_loss": "mid_round",
}
"""The operator's floor settings and their defaults: the largest voucher a terminal issues
($10,000.00), the largest hand pay an attendant makes without a supervisor ($1,200.00), the
bills the validators accept (cents), the hour (UTC) a gaming day starts, and how a partial
group of five EWTs counts for the licence (``up``: as a table; ``down``: not at all);
whether players may tip the dealer and the largest tip ($100.00) (:mod:`tablejack.store.tips`);
when a terminal that loses its connection while its player has an unsettled wager is locked
(``tilt_on_connection_loss``: ``mid_round``, ``always`` or ``off``; :mod:`tablejack.server.tilts`)."""


class FloorRefusedError(StoreError):
    """A floor request refused: ``code`` (machine), ``rule`` (clause) and a sentence.

    Nothing was written but the audit entry."""

    def __init__(self, code: str, message: str, rule: str) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.message = message


@dataclass(frozen=True, slots=True)
class Movement:
    """A committed game-account movement: the event, its transfers, and the new balance."""

    event: EventRecord
    transfers: tuple[Transfer, ...]
    balance: int
    voucher_number: str | None = None
    validation_code: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data for the API (the validation code only to the one who cashed out)."""
        out: dict[str, Any] = {
            "ok": True,
            "kind": self.event.kind,
            "log": self.event.round_id,
            "seq": self.event.seq,
            "amount": self.event.payload["amount"],
            "balance": self.balance,
        }
        if self.voucher_number is not None:
            out["voucher_number"] = self.voucher_number
        if self.validation_code is not None:
            out["validation_code"] = self.validation_code
        return out


def make_validation_code(body: int | None = None) -> str:
    """An 18-digit validation code: 16 digits and two ISO 7064 mod 97-10 check digits."""
    number = secrets.randbelow(10**16) if body is None else body
    check = 98 - (number * 100) % 97
    return f"{number:016d}{check:02d}"


def check_code(code: str) -> bool:
    """True when ``code`` is 18 digits whose check digits agree (a typo or a made-up code
    fails most of the time; the lookup catches the rest)."""
    return len(code) == 18 and code.isdigit() and int(code) % 97 == 1


def _normalise(code: str) -> str:
    return "".join(ch for ch in code if ch not in " -")


def code_hash(code: str) -> str:
    """The SHA-256 the store keeps of a validation code."""
    return hashlib.sha256(_normalise(code).encode()).hexdigest()


def voucher_number(voucher_id: int) -> str:
    """The printed voucher number of a voucher row.

    >>> voucher_number(42)
    '000000000042'
    """
    return f"{voucher_id:012d}"


def account_log_id(terminal: str) -> str:
    """The id of a terminal's account log."""
    return f"acct:{terminal}"


def _check_terminal(terminal: str) -> None:
    if (
        not terminal
        or len(terminal) > 58
        or not all(ch.isalnum() or ch in "_.:-" for ch in terminal)
    ):
        raise FloorRefusedError(
            "invalid",
            f"Terminal id {terminal!r} is not valid: 1-58 of letters, digits and _.:-.",
            "protocol",
        )


async def floor_settings(store: Store) -> dict[str, Any]:
    """The operator's settings: :data:`DEFAULT_SETTINGS` with the stored values over them."""
    async with store.engine.connect() as connection:
        rows = (await connection.execute(select(SETTINGS.c.key, SETTINGS.c.value))).all()
    out = dict(DEFAULT_SETTINGS)
    out.update({row[0]: json.loads(row[1]) for row in rows})
    return out


def _valid_setting(key: str, value: Any) -> bool:
    if key == "tilt_on_connection_loss":  # PA 605a: lock a terminal lost mid-round
        return value in ("mid_round", "always", "off")
    if key == "tips_enabled":
        return isinstance(value, bool)
    if key in ("voucher_limit", "handpay_limit", "tip_maximum"):
        return isinstance(value, int) and not isinstance(value, bool) and value > 0
    if key == "gaming_day_start_hour":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 23
    if key == "license_rounding":
        return value in ("up", "down")
    if key == "bill_denominations":
        return (
            isinstance(value, list)
            and bool(value)
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
        )
    return False


async def set_floor_setting(store: Store, key: str, value: Any, *, by: str) -> dict[str, Any]:
    """Change one setting (the caller checks the supervisor role); recorded in the audit log."""
    if key not in DEFAULT_SETTINGS:
        raise FloorRefusedError("invalid", f"No floor setting {key!r}.", CONTROL_RULE)
    if not _valid_setting(key, value):
        raise FloorRefusedError("invalid", f"{value!r} is not a valid {key}.", CONTROL_RULE)
    async with store._write() as connection:
        found = await connection.scalar(select(SETTINGS.c.key).where(SETTINGS.c.key == key))
        values = {"value": json.dumps(value), "set_by": by[:64], "set_us": now_us()}
        if found is None:
            await connection.execute(SETTINGS.insert().values(key=key, **values))
        else:
            await connection.execute(update(SETTINGS).where(SETTINGS.c.key == key).values(**values))
    await store.audit("setting", f"{key} = {json.dumps(value)}", actor=by, rule=CONTROL_RULE)
    return await floor_settings(store)


async def register_terminal(
    store: Store, terminal: str, table_id: str, *, by: str, status: str = "active"
) -> None:
    """Register (or move, or retire with ``status="retired"``) an EWT of the floor."""
    _check_terminal(terminal)
    if status not in ("active", "retired"):
        raise FloorRefusedError("invalid", f"A terminal is active or retired, not {status!r}.", "")
    async with store._write() as connection:
        found = await connection.scalar(select(TERMINALS.c.id).where(TERMINALS.c.id == terminal))
        if found is None:
            await connection.execute(
                TERMINALS.insert().values(
                    id=terminal, table_id=table_id, status=status, created_us=now_us()
                )
            )
        else:
            await connection.execute(
                update(TERMINALS)
                .where(TERMINALS.c.id == terminal)
                .values(table_id=table_id, status=status)
            )
    await store.audit(
        "terminal", f"{terminal} {status} at table {table_id}", table_id=table_id, actor=by
    )


async def terminals(store: Store) -> list[dict[str, Any]]:
    """Every registered EWT: id, table, status."""
    async with store.engine.connect() as connection:
        rows = (await connection.execute(select(TERMINALS).order_by(TERMINALS.c.id))).mappings()
        return [dict(row) for row in rows.all()]


async def commit_logged(
    store: Store,
    terminal: str,
    event: _EventIn,
    transfers: list[Transfer],
    before: Callable[[AsyncConnection], Awaitable[Mapping[str, Any]]] | None = None,
    *,
    log_id: str | None = None,
    log_kind: str = "accounts",
) -> tuple[EventRecord, Mapping[str, Any]]:
    """Write ``before`` (the voucher row), the event on the terminal's account log (or
    ``log_id``) and the transfers in ONE transaction; retried when another writer moved the
    log on."""
    log_id = log_id or account_log_id(terminal)
    for attempt in range(5):
        try:
            async with store._write() as connection:
                extra: Mapping[str, Any] = {}
                if before is not None:
                    extra = await before(connection)
                    event = _EventIn(
                        event.kind, {**event.payload, **extra}, event.actor, event.terminal
                    )
                exists = store._heads.get(log_id) is not None or (
                    await connection.scalar(select(ROUNDS.c.id).where(ROUNDS.c.id == log_id))
                    is not None
                )
                step = Step(
                    log_id,
                    events=[event],
                    transfers=transfers,
                    open_round=None if exists else (terminal, 0, "", log_kind),
                )
                records, head = await store._write_step(connection, step)
        except (DuplicateEventError, IntegrityError):
            store._heads.pop(log_id, None)
            if attempt == 4:
                raise
            continue
        except BaseException:
            store._heads.pop(log_id, None)
            raise
        store._remember_head(step, head)
        return records[0], extra
    raise StoreError("unreachable")  # pragma: no cover


async def _ensure(store: Store) -> None:
    for account, kind in ((BILLS, "bills"), (VOUCHERS_ACCOUNT, "voucher"), (CAGE, "cage")):
        await store.ensure_account(account, kind, account)


async def _player(store: Store, account: str) -> int:
    balance = await store.balance(account)
    if balance is None:
        raise FloorRefusedError("account", f"No game account {account!r}.", ACCOUNT_RULE)
    return balance


def _positive(amount: int) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise FloorRefusedError(
            "invalid", f"An amount is a positive number of cents, not {amount!r}.", ACCOUNT_RULE
        )


async def _refuse(
    store: Store, refusal: FloorRefusedError, *, actor: str, terminal: str
) -> FloorRefusedError:
    await store.audit(
        refusal.code, refusal.message, actor=actor, terminal=terminal, rule=refusal.rule
    )
    return refusal


async def bill_in(store: Store, account: str, terminal: str, amount: int, *, by: str) -> Movement:
    """A bill accepted by the terminal's bill validator credits the game account (buy-in,
    § 605a.2(d), 605a.5(c)); only the configured denominations are accepted."""
    try:
        _check_terminal(terminal)
        _positive(amount)
        settings = await floor_settings(store)
        if amount not in settings["bill_denominations"]:
            raise FloorRefusedError(
                "invalid",
                f"The bill validator accepts {settings['bill_denominations']} cents, not {amount}.",
                VOUCHER_RULE,
            )
        await _player(store, account)
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=by, terminal=terminal) from None
    await _ensure(store)
    transfer = Transfer(BILLS, account, amount, "bill_in", memo=f"bill at {terminal}")
    record, _ = await commit_logged(
        store,
        terminal,
        _EventIn(
            "bill_in",
            {"account": account, "amount": amount, "terminal": terminal, "by": by},
            actor=by,
        ),
        [transfer],
    )
    return Movement(record, (transfer,), await _player(store, account))


async def cash_out(
    store: Store, account: str, terminal: str, amount: int | None = None, *, by: str
) -> Movement:
    """Cash out (§ 605a.2(d), 605a.5(c)): debit the game account (all of it when ``amount``
    is None) and issue a voucher with a number and a validation code. Above the voucher limit
    the terminal issues no voucher: an attendant pays by hand (:func:`hand_pay`)."""
    try:
        _check_terminal(terminal)
        balance = await _player(store, account)
        wanted = balance if amount is None else amount
        if wanted == 0 and amount is None:
            raise FloorRefusedError(
                "empty", f"Game account {account!r} holds no credit.", ACCOUNT_RULE
            )
        _positive(wanted)
        if wanted > balance:
            raise FloorRefusedError(
                "balance",
                f"Game account {account!r} holds {balance} cents; {wanted} cannot be cashed out.",
                ACCOUNT_RULE,
            )
        limit = (await floor_settings(store))["voucher_limit"]
        if wanted > limit:
            raise FloorRefusedError(
                "handpay",
                f"{wanted} cents is above the voucher limit of {limit} cents; an attendant pays "
                f"it by hand ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=by, terminal=terminal) from None
    await _ensure(store)
    code = make_validation_code()
    at = now_us()

    async def issue(connection: AsyncConnection) -> Mapping[str, Any]:
        voucher_id = await connection.scalar(
            VOUCHERS.insert()
            .values(
                code_hash=code_hash(code),
                amount=wanted,
                status="issued",
                account=account,
                terminal=terminal,
                issued_us=at,
            )
            .returning(VOUCHERS.c.id)
        )
        return {"voucher": voucher_number(int(voucher_id))}

    payload = {
        "account": account,
        "amount": wanted,
        "terminal": terminal,
        "by": by,
        "validation_code": f"…{code[-4:]}",
        "code_sha256": code_hash(code),
    }
    # the voucher number is known only inside the transaction: the transfer's memo carries the
    # validation code's hash, which names the voucher row as surely
    transfer = Transfer(account, VOUCHERS_ACCOUNT, wanted, "voucher_out", memo=code_hash(code))
    try:
        record, extra = await commit_logged(
            store,
            terminal,
            _EventIn("voucher_out", payload, actor=by),
            [transfer],
            before=issue,
        )
    except StoreError as error:
        raise await _refuse(
            store,
            FloorRefusedError("balance", str(error), ACCOUNT_RULE),
            actor=by,
            terminal=terminal,
        ) from None
    return Movement(record, (transfer,), await _player(store, account), str(extra["voucher"]), code)


async def redeem_voucher(
    store: Store, code: str, account: str, terminal: str, *, by: str
) -> Movement:
    """Voucher in (§ 605a.5(c)): credit the game account with the voucher's amount, once. A
    forged code and a voucher already redeemed are refused and audited."""
    clean = _normalise(code)
    try:
        _check_terminal(terminal)
        await _player(store, account)
        if not check_code(clean):
            raise FloorRefusedError(
                "forged",
                f"Validation code {code[:24]!r} is not a valid voucher code ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        async with store.engine.connect() as connection:
            row = (
                (
                    await connection.execute(
                        select(VOUCHERS).where(VOUCHERS.c.code_hash == code_hash(clean))
                    )
                )
                .mappings()
                .first()
            )
        if row is None:
            raise FloorRefusedError(
                "forged",
                f"No voucher has validation code …{clean[-4:]} ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        if row["status"] != "issued":
            raise FloorRefusedError(
                "redeemed",
                f"Voucher {voucher_number(row['id'])} was already redeemed at "
                f"{row['redeemed_terminal']}; it pays once ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=by, terminal=terminal) from None
    await _ensure(store)
    amount = int(row["amount"])
    number = voucher_number(int(row["id"]))
    at = now_us()

    async def take(connection: AsyncConnection) -> Mapping[str, Any]:
        moved = await connection.execute(
            update(VOUCHERS)
            .where((VOUCHERS.c.id == row["id"]) & (VOUCHERS.c.status == "issued"))
            .values(
                status="redeemed",
                redeemed_us=at,
                redeemed_account=account,
                redeemed_terminal=terminal,
            )
        )
        if moved.rowcount != 1:
            raise FloorRefusedError(
                "redeemed",
                f"Voucher {number} was already redeemed; it pays once ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        return {}

    transfer = Transfer(VOUCHERS_ACCOUNT, account, amount, "voucher_in", memo=number)
    try:
        record, _ = await commit_logged(
            store,
            terminal,
            _EventIn(
                "voucher_in",
                {
                    "account": account,
                    "amount": amount,
                    "terminal": terminal,
                    "by": by,
                    "voucher": number,
                    "issued_at": row["terminal"],
                },
                actor=by,
            ),
            [transfer],
            before=take,
        )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=by, terminal=terminal) from None
    return Movement(record, (transfer,), await _player(store, account), number)


async def hand_pay(
    store: Store,
    account: str,
    terminal: str,
    amount: int,
    kind: str,
    *,
    by: str,
    role: str,
    reason: str = "",
) -> Movement:
    """An attendant pays credits by hand (§ 605a.5(d)): an attendant-paid jackpot or
    attendant-paid cancelled credits. Above the hand-pay limit only a supervisor may pay
    (§ 605a.4(d)); a dealer (attendant) asking is refused and audited."""
    try:
        _check_terminal(terminal)
        if kind not in HANDPAY_KINDS:
            raise FloorRefusedError(
                "invalid", f"A hand pay is one of {HANDPAY_KINDS}, not {kind!r}.", VOUCHER_RULE
            )
        _positive(amount)
        if role not in ("dealer", "supervisor"):
            raise FloorRefusedError(
                "role", "Only an attendant (dealer) or a supervisor pays by hand.", CONTROL_RULE
            )
        balance = await _player(store, account)
        if amount > balance:
            raise FloorRefusedError(
                "balance",
                f"Game account {account!r} holds {balance} cents; {amount} cannot be paid.",
                ACCOUNT_RULE,
            )
        limit = (await floor_settings(store))["handpay_limit"]
        if amount > limit and role != "supervisor":
            raise FloorRefusedError(
                "supervisor",
                f"A hand pay of {amount} cents is above the limit of {limit} cents; a supervisor "
                f"must pay it ({CONTROL_RULE}).",
                CONTROL_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=by, terminal=terminal) from None
    await _ensure(store)
    transfer = Transfer(account, CAGE, amount, kind, memo=f"hand pay at {terminal} by {by}")
    try:
        record, _ = await commit_logged(
            store,
            terminal,
            _EventIn(
                "hand_pay",
                {
                    "account": account,
                    "amount": amount,
                    "kind": kind,
                    "terminal": terminal,
                    "by": by,
                    "role": role,
                    "reason": reason[:200],
                },
                actor=by,
            ),
            [transfer],
        )
    except StoreError as error:
        raise await _refuse(
            store,
            FloorRefusedError("balance", str(error), ACCOUNT_RULE),
            actor=by,
            terminal=terminal,
        ) from None
    return Movement(record, (transfer,), await _player(store, account))


async def voucher(store: Store, number: str) -> dict[str, Any] | None:
    """A voucher's record by its number (without the code)."""
    if not number.isdigit():
        return None
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(VOUCHERS).where(VOUCHERS.c.id == int(number))))
            .mappings()
            .first()
        )
    if row is None:
        return None
    out = {k: v for k, v in dict(row).items() if k != "code_hash"}
    out["number"] = voucher_number(int(out.pop("id")))
    return out
