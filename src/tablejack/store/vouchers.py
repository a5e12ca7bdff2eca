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
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.core.money import format_cents
from tablejack.store.credentials import Issued
from tablejack.store.db import (
    CAGE,
    EventRecord,
    LimitRefusedError,
    PostingRefusedError,
    Store,
    StoreError,
    Transfer,
    now_us,
)
from tablejack.store.db import EventIn as _EventIn
from tablejack.store.floor_models import TERMINALS, VOUCHERS
from tablejack.store.policy import AccountKind, Actor, Role, account_kind_of
from tablejack.store.settings import (
    CONTROL_RULE,
    DEFAULT_SETTINGS,
    FloorRefusedError,
    floor_settings,
    set_floor_setting,
)

__all__ = [
    "BILLS",
    "DEFAULT_SETTINGS",
    "HANDPAY_KINDS",
    "VOUCHERS_ACCOUNT",
    "Approval",
    "FloorRefusedError",
    "Movement",
    "account_log_id",
    "bill_in",
    "cash_out",
    "check_code",
    "check_hand_pay",
    "check_system_code",
    "check_terminal_id",
    "dollars",
    "floor_settings",
    "hand_pay",
    "host_redeemed",
    "host_ticket_refusal",
    "make_validation_code",
    "normalise_code",
    "pay_voucher",
    "player_balance",
    "redeem_host_ticket",
    "redeem_voucher",
    "refusal_of",
    "register_terminal",
    "sell_voucher",
    "set_floor_setting",
    "system_account",
    "terminal",
    "terminals",
    "void_voucher",
    "voidable_voucher",
    "voucher",
    "voucher_row",
]

BILLS = "bills"
"""The cash in the terminals' bill validators (its balance is minus the bills accepted)."""
VOUCHERS_ACCOUNT = "vouchers"
"""The vouchers outstanding (issued and not yet redeemed)."""
HANDPAY_KINDS = ("jackpot", "cancelled_credit")
"""Attendant-paid jackpots and attendant-paid cancelled credits (§ 605a.5(d))."""
VOUCHER_RULE = "PA 605a.5(c)"
ACCOUNT_RULE = "PA 605a.2(d)"
VOID_RULE = "PA 605a.5(c): a sold voucher voided"
"""The rule a voided voucher names: the cage voids a voucher it sold before it is used."""
APPROVAL_RULE = "PA 605a.4(d): dual control"
"""The rule a movement above its threshold names: a second person (a supervisor) approves it."""


@dataclass(frozen=True, slots=True)
class Approval:
    """A supervisor's approval of a pending request, which the movement executes: ``take`` is
    the request's one conditional update (``pending`` → ``approved``), run in the movement's
    transaction, so a request moves money once; ``request`` and ``approver`` go into the
    movement's event (:mod:`tablejack.store.approvals` makes one)."""

    request: int
    approver: str
    take: Callable[[AsyncConnection], Awaitable[Mapping[str, Any]]]

    def payload(self) -> dict[str, Any]:
        """What the movement's event records of the approval."""
        return {"request": self.request, "approved_by": self.approver}


def _approval_needed(what: str, amount: int, limit: int, setting: str) -> FloorRefusedError:
    return FloorRefusedError(
        "approval",
        f"{what} of {dollars(amount)} is above the {setting} of {dollars(limit)}; it waits for a "
        f"supervisor's approval ({APPROVAL_RULE}).",
        APPROVAL_RULE,
    )


def dollars(cents: int) -> str:
    """An amount of cents as people read it.

    >>> dollars(300000), dollars(5), dollars(-1250)
    ('$3,000.00', '$0.05', '-$12.50')
    """
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{part:02d}"


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


def normalise_code(code: str) -> str:
    """A validation code as typed or scanned, without its grouping (spaces and dashes)."""
    return _normalise(code)


async def voucher_row(store: Store, code: str) -> Mapping[str, Any] | None:
    """The voucher row of a validation code (grouped or not), or None."""
    async with store.engine.connect() as connection:
        result = await connection.execute(
            select(VOUCHERS).where(VOUCHERS.c.code_hash == code_hash(code))
        )
        row = result.mappings().first()
    return None if row is None else dict(row)


def voucher_number(voucher_id: int) -> str:
    """The printed voucher number of a voucher row.

    >>> voucher_number(42)
    '000000000042'
    """
    return f"{voucher_id:012d}"


def account_log_id(terminal: str) -> str:
    """The id of a terminal's account log."""
    return f"acct:{terminal}"


def check_terminal_id(terminal: str) -> None:
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


async def register_terminal(
    store: Store,
    terminal: str,
    table_id: str,
    *,
    by: Actor,
    status: str = "active",
    position: int | None = None,
    credential: bool = True,
    key: str | None = None,
) -> Issued | None:
    """Register (or move, or retire with ``status="retired"``) an EWT of the floor, bound to
    ``table_id`` and (seat games) ``position``. A newly registered terminal, or one asked for
    ``credential``, or one brought back from retirement, gets a new device credential (the
    secret is returned once; any earlier
    credential of the terminal is revoked; ``key``: a chosen secret, as the demo and tests
    use). Retiring revokes its credential."""
    from tablejack.store import credentials as creds

    check_terminal_id(terminal)
    if status not in ("active", "retired"):
        raise FloorRefusedError("invalid", f"A terminal is active or retired, not {status!r}.", "")
    if position is not None and (isinstance(position, bool) or not 1 <= position <= 16):
        raise FloorRefusedError(
            "invalid", f"A terminal's position is 1 to 16, not {position!r}.", CONTROL_RULE
        )
    async with store.transaction() as connection:
        found = await connection.scalar(
            select(TERMINALS.c.status).where(TERMINALS.c.id == terminal)
        )
        if found is None:
            await connection.execute(
                TERMINALS.insert().values(
                    id=terminal,
                    table_id=table_id,
                    position=position,
                    status=status,
                    created_us=now_us(),
                )
            )
        else:
            await connection.execute(
                update(TERMINALS)
                .where(TERMINALS.c.id == terminal)
                .values(table_id=table_id, status=status, position=position)
            )
    where = f" position {position}" if position is not None else ""
    await store.audit(
        "terminal",
        f"{terminal} {status} at table {table_id}{where}",
        table_id=table_id,
        actor=by.subject,
    )
    if status != "retired" and not (found in (None, "retired") or credential):
        return None  # (a terminal brought back from retirement gets a new credential)
    keep = None if key is None else await creds.lookup(store, key)
    for old in await creds.credentials(store, role="terminal", subject=terminal):
        if old.revoked_us is None and (keep is None or old.id != keep.id or status == "retired"):
            await creds.revoke(store, old.id, by=by)
    if status == "retired":
        return None
    return await creds.issue(
        store, "terminal", terminal, by=by, token=key, terminal=terminal, label=f"EWT at {table_id}"
    )


async def terminal(store: Store, terminal_id: str) -> dict[str, Any] | None:
    """A registered EWT: id, table, position, status (None: not registered)."""
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(TERMINALS).where(TERMINALS.c.id == terminal_id)))
            .mappings()
            .first()
        )
    return None if row is None else dict(row)


async def terminals(store: Store) -> list[dict[str, Any]]:
    """Every registered EWT: id, table, position, status."""
    async with store.engine.connect() as connection:
        rows = (await connection.execute(select(TERMINALS).order_by(TERMINALS.c.id))).mappings()
        return [dict(row) for row in rows.all()]


async def _ensure(store: Store) -> None:
    for account, kind in ((BILLS, "bills"), (VOUCHERS_ACCOUNT, "voucher"), (CAGE, "cage")):
        await store.ensure_account(account, kind, account)


async def player_balance(store: Store, account: str) -> int:
    balance = await store.balance(account)
    if balance is None or account_kind_of(account) is not AccountKind.PLAYER:
        raise FloorRefusedError("account", f"No game account {account!r}.", ACCOUNT_RULE)
    return balance


def _positive(amount: int) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise FloorRefusedError(
            "invalid", f"An amount is a positive number of cents, not {amount!r}.", ACCOUNT_RULE
        )


def _at_terminal(actor: Actor, what: str) -> str:
    """The authenticated terminal a player acts at (the account is his own: the policy)."""
    if actor.role is not Role.PLAYER or not actor.terminal:
        raise FloorRefusedError(
            "role",
            f"Only a player signed in at a terminal may {what} (money-movement policy).",
            CONTROL_RULE,
        )
    check_terminal_id(actor.terminal)
    return actor.terminal


async def _refuse(store: Store, refusal: FloorRefusedError, *, actor: Actor) -> FloorRefusedError:
    await store.audit(
        refusal.code,
        refusal.message,
        actor=actor.subject,
        terminal=actor.terminal,
        rule=refusal.rule,
    )
    return refusal


def refusal_of(error: StoreError) -> FloorRefusedError:
    """A store's refusal as the floor's: the policy's code and rule, or a balance refusal."""
    if isinstance(error, PostingRefusedError | LimitRefusedError):
        return FloorRefusedError(error.code, error.message, error.rule)
    return FloorRefusedError("balance", str(error), ACCOUNT_RULE)


async def _commit(
    store: Store,
    log_terminal: str,
    event: _EventIn,
    transfer: Transfer,
    actor: Actor,
    before: Callable[[AsyncConnection], Awaitable[Mapping[str, Any]]] | None = None,
) -> tuple[EventRecord, Mapping[str, Any]]:
    """One movement with its event on ``log_terminal``'s account log; a refusal is audited."""
    try:
        return await store.commit_logged(
            account_log_id(log_terminal),
            event,
            [transfer],
            actor,
            owner=log_terminal,
            before=before,
        )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    except StoreError as error:
        raise await _refuse(store, refusal_of(error), actor=actor) from None


async def bill_in(
    store: Store,
    amount: int,
    *,
    actor: Actor,
    before: Callable[[AsyncConnection], Awaitable[Mapping[str, Any]]] | None = None,
) -> Movement:
    """A bill accepted by the validator of the terminal the player is signed in at credits his
    game account (buy-in, § 605a.2(d), 605a.5(c)); only the configured denominations are
    accepted. ``before``: written in the movement's transaction, its answer added to the
    event (the validator's event taken once, :func:`tablejack.store.validator.take`)."""
    try:
        terminal = _at_terminal(actor, "report a bill")
        _positive(amount)
        settings = await floor_settings(store)
        if amount not in settings["bill_denominations"]:
            raise FloorRefusedError(
                "invalid",
                "The bill validator accepts "
                + ", ".join(format_cents(bill) for bill in settings["bill_denominations"])
                + f", not {format_cents(amount)}.",
                VOUCHER_RULE,
            )
        await player_balance(store, actor.subject)
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    await _ensure(store)
    account = actor.subject
    transfer = Transfer(BILLS, account, amount, "bill_in", memo=f"bill at {terminal}")
    record, _ = await _commit(
        store,
        terminal,
        _EventIn(
            "bill_in",
            {"account": account, "amount": amount, "terminal": terminal, "by": account},
            actor=account,
            terminal=terminal,
        ),
        transfer,
        actor,
        before=before,
    )
    return Movement(record, (transfer,), await player_balance(store, account))


async def cash_out(
    store: Store,
    amount: int | None = None,
    *,
    actor: Actor,
    validation: tuple[str, str] | None = None,
) -> Movement:
    """Cash out (§ 605a.2(d), 605a.5(c)) at the terminal the player is signed in at: debit his
    game account (all of it when ``amount`` is None) and issue a voucher with a number and a
    validation code. Above the voucher limit the terminal issues no voucher: an attendant pays
    by hand (:func:`hand_pay`). ``validation``: the code a host gave the voucher and the
    system that gave it (system validation, :func:`check_system_code`); the voucher row names
    the system."""
    try:
        if validation is not None:
            check_system_code(validation[0], validation[1])
            await _unused(store, validation[0])
        terminal = _at_terminal(actor, "cash out")
        account = actor.subject
        balance = await player_balance(store, account)
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
                f"{format_cents(wanted)} is above the voucher limit of {format_cents(limit)}; "
                "an attendant pays "
                f"it by hand ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    await _ensure(store)
    code = make_validation_code() if validation is None else validation[0]
    return await _issue(
        store,
        "voucher_out",
        account,
        terminal,
        wanted,
        code,
        actor=actor,
        at_terminal=True,
        validated_by=None if validation is None else validation[1],
    )


def check_system_code(code: str, system: str) -> None:
    """A validation code a host gave (system validation): 18 digits, and the system named
    (1-32 characters); the refusal otherwise."""
    if not (len(code) == 18 and code.isdigit() and 0 < len(system) <= 32):
        raise FloorRefusedError(
            "forged",
            f"{code[:24]!r} from {system[:32]!r} is not a host's validation code ({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )


async def _unused(store: Store, code: str) -> None:
    """Refuse a host's validation code that a voucher already has (a host that gives one
    number twice): each voucher's code is its own."""
    async with store.engine.connect() as connection:
        found = await connection.scalar(
            select(VOUCHERS.c.id).where(VOUCHERS.c.code_hash == code_hash(code))
        )
    if found is not None:
        raise FloorRefusedError(
            "forged",
            f"Validation code …{code[-4:]} is already voucher {voucher_number(int(found))}'s; "
            f"the host gave it twice ({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )


async def _find_voucher(
    store: Store, code: str, system: str | None = None, amount: int | None = None
) -> Mapping[str, Any]:
    """The issued voucher of a validation code, or the refusal (forged, already paid, or older
    than the floor's ``voucher_expiry_days``). With ``system``: a voucher that system validated,
    of ``amount`` (a host's redemption)."""
    clean = _normalise(code)
    if system is not None:
        check_system_code(clean, system)
    else:
        await _not_a_host_ticket(store, clean)
    if system is None and not check_code(clean):
        raise FloorRefusedError(
            "forged",
            f"Validation code {code[:24]!r} is not a valid voucher code ({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )
    row = await voucher_row(store, clean)
    if row is None:
        raise FloorRefusedError(
            "forged",
            f"No voucher has validation code …{clean[-4:]} ({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )
    if system is not None and (row["validated_by"] != system or row["amount"] != amount):
        raise FloorRefusedError(
            "forged",
            f"Voucher {voucher_number(row['id'])} is not one {system[:32]} validated for "
            f"{'that amount' if amount is None else format_cents(amount)} ({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )
    return await _check_state(store, row)


async def _check_state(store: Store, row: Mapping[str, Any]) -> Mapping[str, Any]:
    """A voucher row that is still payable, or the refusal: voided, already redeemed, or older
    than the floor's ``voucher_expiry_days``."""
    if row["status"] == "voided":
        raise FloorRefusedError(
            "voided",
            f"Voucher {voucher_number(row['id'])} was voided at the cage; a voided voucher is "
            f"not paid ({VOID_RULE}).",
            VOID_RULE,
        )
    if row["status"] != "issued":
        where = row["redeemed_terminal"] or "the cage"
        raise FloorRefusedError(
            "redeemed",
            f"Voucher {voucher_number(row['id'])} was already redeemed at {where}; it pays once "
            f"({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )
    days = int((await floor_settings(store)).get("voucher_expiry_days", 0) or 0)
    if days > 0 and now_us() > int(row["issued_us"]) + days * 86_400_000_000:
        raise FloorRefusedError(
            "expired",
            f"Voucher {voucher_number(row['id'])} expired {days} days after it was issued; it "
            f"is no longer paid ({VOUCHER_RULE}).",
            VOUCHER_RULE,
        )
    return dict(row)


def host_ticket_refusal(row: Mapping[str, Any]) -> FloorRefusedError:
    """The refusal of a ticket a host validated, asked to be paid by its number alone (at a
    terminal without that host, or at the cage)."""
    return FloorRefusedError(
        "host",
        f"Voucher {voucher_number(int(row['id']))} was validated by the casino system "
        f"({str(row['validated_by'])[:32]}); it is paid only through that system's "
        f"redemption at a terminal linked to it, never by its number elsewhere "
        f"({VOUCHER_RULE}, system validation).",
        VOUCHER_RULE,
    )


async def _not_a_host_ticket(store: Store, clean: str) -> None:
    """Refuse a code whose voucher a host validated: only the host redeems it (a number a
    host chose — check digits and all — never pays by itself)."""
    if len(clean) != 18 or not clean.isdigit():
        return
    row = await voucher_row(store, clean)
    if row is not None and row["validated_by"] is not None:
        raise host_ticket_refusal(row)


def _take(row: Mapping[str, Any], account: str, where: str, at: int) -> Any:
    """The voucher row's one conditional update ``issued`` → ``redeemed`` (a race loses)."""
    number = voucher_number(int(row["id"]))

    async def take(connection: AsyncConnection) -> Mapping[str, Any]:
        moved = await connection.execute(
            update(VOUCHERS)
            .where((VOUCHERS.c.id == row["id"]) & (VOUCHERS.c.status == "issued"))
            .values(
                status="redeemed",
                redeemed_us=at,
                redeemed_account=account,
                redeemed_terminal=where,
            )
        )
        if moved.rowcount != 1:
            raise FloorRefusedError(
                "redeemed",
                f"Voucher {number} was already redeemed; it pays once ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        return {}

    return take


async def redeem_voucher(
    store: Store,
    code: str,
    *,
    actor: Actor,
    system: str | None = None,
    amount: int | None = None,
) -> Movement:
    """Voucher in (§ 605a.5(c)) at the terminal the player is signed in at: credit his game
    account with the voucher's amount, once. A forged code and a voucher already redeemed are
    refused and audited. ``system`` and ``amount``: the host that validated the voucher
    redeems it (system validation): only a voucher that system validated, of that amount."""
    try:
        terminal = _at_terminal(actor, "redeem a voucher")
        await player_balance(store, actor.subject)
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    return await _redeem(
        store, code, actor, "voucher_in", actor.subject, terminal, system=system, amount=amount
    )


def system_account(system: str) -> str:
    """The floor's account with the casino system ``system`` (``sas:01`` → ``system:sas.01``).

    >>> system_account("sas:01")
    'system:sas.01'
    """
    return f"system:{system.replace(':', '.')[:32]}"


async def redeem_host_ticket(
    store: Store, code: str, *, actor: Actor, system: str, amount: int
) -> Movement:
    """Floor-wide TITO: a ticket the floor does not know — a casino system's, validated for
    another machine — inserted at the terminal the player is signed in at and approved by that
    system for ``amount`` cents: his game account is credited from the floor's account with
    the system (``host_voucher_in``: ``system:<system>`` → the player), and the ticket is
    recorded as a voucher row already redeemed, so the floor pays it once whatever the system
    says again. Up to the floor's voucher limit; a voucher the floor knows is refused here
    (it is redeemed by :func:`redeem_voucher`)."""
    clean = _normalise(code)
    try:
        terminal = _at_terminal(actor, "redeem a voucher")
        await player_balance(store, actor.subject)
        check_system_code(clean, system)
        _positive(amount)
        limit = int((await floor_settings(store))["voucher_limit"])
        if amount > limit:
            raise FloorRefusedError(
                "limit",
                f"The casino system's ticket of {format_cents(amount)} is above the voucher "
                f"limit of {format_cents(limit)}; an attendant pays it ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        known = await voucher_row(store, clean)
        if known is not None:
            raise FloorRefusedError(
                "redeemed" if known["status"] != "issued" else "forged",
                f"Voucher {voucher_number(int(known['id']))} is the floor's own; it is not "
                f"a casino system's ticket to credit from the system ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    await _ensure(store)
    source = system_account(system)
    await store.ensure_account(source, "system", f"casino system {system[:32]}")
    account, at = actor.subject, now_us()

    async def record(connection: AsyncConnection) -> Mapping[str, Any]:
        voucher_id = await connection.scalar(
            VOUCHERS.insert()
            .values(
                code_hash=code_hash(clean),
                amount=amount,
                status="redeemed",
                account=source,
                terminal=system[:64],
                issued_us=at,
                validated_by=system,
                redeemed_us=at,
                redeemed_account=account,
                redeemed_terminal=terminal,
            )
            .returning(VOUCHERS.c.id)
        )
        return {"voucher": voucher_number(int(voucher_id))}

    transfer = Transfer(source, account, amount, "host_voucher_in", memo=code_hash(clean))
    payload = {
        "account": account,
        "amount": amount,
        "terminal": terminal,
        "by": account,
        "validated_by": system,
        "system_account": source,
        "validation_code": f"…{clean[-4:]}",
        "code_sha256": code_hash(clean),
        "issued_us": at,  # the row's (verify-log compares them)
        "redeemed_us": at,
    }
    event = _EventIn("host_voucher_in", payload, actor=account, terminal=terminal)
    recorded, extra = await _commit(store, terminal, event, transfer, actor, before=record)
    return Movement(
        recorded, (transfer,), await player_balance(store, account), str(extra["voucher"])
    )


async def host_redeemed(store: Store, code: str, *, actor: Actor, system: str) -> Movement | None:
    """The casino system ``system`` says the floor's voucher of ``code``, which it validated,
    was already redeemed — elsewhere on its floor (a slot machine, a kiosk): the voucher is
    marked redeemed there and its amount moves from the vouchers outstanding to the floor's
    account with the system (``host_redeemed``), once. None (nothing done) for a code
    that is not an issued voucher that system validated."""
    clean = _normalise(code)
    row = await voucher_row(store, clean) if len(clean) == 18 else None
    if row is None or row["status"] != "issued" or row["validated_by"] != system:
        return None
    if actor.role is not Role.TERMINAL or not actor.terminal:
        raise FloorRefusedError(
            "role",
            "Only a terminal's link relays a casino system's word on a ticket "
            "(money-movement policy).",
            CONTROL_RULE,
        )
    terminal = actor.terminal
    target = system_account(system)
    await _ensure(store)
    await store.ensure_account(target, "system", f"casino system {system[:32]}")
    amount, number = int(row["amount"]), voucher_number(int(row["id"]))
    transfer = Transfer(VOUCHERS_ACCOUNT, target, amount, "host_redeemed", memo=number)
    at = now_us()
    payload = {
        "account": target,
        "amount": amount,
        "by": actor.subject,
        "voucher": number,
        "issued_at": row["terminal"],
        "validated_by": system,
        "reported_at": terminal,
        "redeemed_us": at,  # the row's (verify-log compares them)
    }
    recorded, _ = await _commit(
        store,
        terminal,
        _EventIn("host_redeemed", payload, actor=actor.subject, terminal=terminal),
        transfer,
        actor,
        before=_take(row, target, system[:64], at),
    )
    await store.audit(
        "host_redeemed",
        f"Voucher {number} ({amount} cents) was redeemed elsewhere, as the casino system "
        f"{system[:32]} reports; marked redeemed ({VOUCHER_RULE}).",
        actor=actor.subject,
        terminal=terminal,
        rule=VOUCHER_RULE,
    )
    return Movement(recorded, (transfer,), 0, number)


async def pay_voucher(store: Store, code: str, *, actor: Actor) -> Movement:
    """A voucher cashed at the cage (§ 605a.5(c)): the cashier pays its amount in cash
    (``voucher_paid``: the vouchers account → the cage), once; a forged code or a voucher
    already redeemed is refused and audited."""
    if actor.role is not Role.CASHIER:
        refusal = FloorRefusedError(
            "role",
            "Only a cashier pays a voucher at the cage (money-movement policy).",
            CONTROL_RULE,
        )
        raise await _refuse(store, refusal, actor=actor)
    return await _redeem(store, code, actor, "voucher_paid", CAGE, CAGE)


async def sell_voucher(
    store: Store, amount: int, *, actor: Actor, approval: Approval | None = None
) -> Movement:
    """A voucher sold for cash at the cage (§ 605a.5(c)): the cashier takes ``amount`` in cash
    and prints a voucher of that amount (``voucher_sold``: the cage → the vouchers account),
    which any terminal of the floor redeems once (``voucher_in``) or the cage pays back
    (``voucher_paid``). Only a cashier sells one, up to the floor's voucher limit; above the
    ``voucher_sale_approval_limit`` only with a supervisor's ``approval`` (dual control); a
    refusal is audited."""
    try:
        if actor.role is not Role.CASHIER:
            raise FloorRefusedError(
                "role",
                "Only a cashier sells a voucher at the cage (money-movement policy).",
                CONTROL_RULE,
            )
        _positive(amount)
        settings = await floor_settings(store)
        limit = settings["voucher_limit"]
        if amount > limit:
            raise FloorRefusedError(
                "limit",
                f"{dollars(amount)} is above the voucher limit of {dollars(limit)} "
                f"({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        second = int(settings["voucher_sale_approval_limit"])
        if amount > second and approval is None:
            raise _approval_needed("A voucher sale", amount, second, "voucher sale approval limit")
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    await _ensure(store)
    return await _issue(
        store,
        "voucher_sold",
        CAGE,
        CAGE,
        amount,
        make_validation_code(),
        actor=actor,
        approval=approval,
    )


async def voidable_voucher(
    store: Store, code: str, reason: str, *, actor: Actor, number: str | None = None
) -> Mapping[str, Any]:
    """The voucher row of ``code`` (or of its ``number``: an approved request's) that a cashier
    may void with ``reason``: one the cage sold, not redeemed, not voided, not expired; the
    refusal otherwise, audited."""
    try:
        if actor.role is not Role.CASHIER:
            raise FloorRefusedError(
                "role",
                "Only a cashier voids a voucher the cage sold (money-movement policy).",
                VOID_RULE,
            )
        if not reason.strip():
            raise FloorRefusedError("reason", f"A void names its reason ({VOID_RULE}).", VOID_RULE)
        if number is not None:
            found = await voucher(store, number)
            if found is None:
                raise FloorRefusedError("forged", f"No voucher {number}.", VOUCHER_RULE)
            row: Mapping[str, Any] = await _check_state(store, {**found, "id": int(number)})
        else:
            row = await _find_voucher(store, code)
        if row["account"] != CAGE or row["terminal"] != CAGE:
            raise FloorRefusedError(
                "not_sold",
                f"Voucher {voucher_number(int(row['id']))} was issued at terminal "
                f"{str(row['terminal'])[:64]}, not sold at the cage; only a voucher the cage sold "
                f"is voided ({VOID_RULE}).",
                VOID_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    return row


async def void_voucher(
    store: Store,
    code: str,
    reason: str,
    *,
    actor: Actor,
    approval: Approval | None = None,
    number: str | None = None,
) -> Movement:
    """A voucher the cage sold, voided before it is used (§ 605a.5(c)): the cashier takes the
    voucher back and returns its amount in cash (``voucher_voided``: the vouchers account →
    the cage), once — the row's one conditional update ``issued`` → ``voided`` in the
    movement's transaction, the event (``voucher_voided``, with the reason) on the cage's log.
    A voided voucher is redeemed nowhere. Above the floor's ``voucher_sale_approval_limit``
    only with a supervisor's ``approval``, as its sale (dual control)."""
    row = await voidable_voucher(store, code, reason, actor=actor, number=number)
    amount = int(row["amount"])
    limit = int((await floor_settings(store))["voucher_sale_approval_limit"])
    if amount > limit and approval is None:
        refusal = _approval_needed("A voucher void", amount, limit, "voucher sale approval limit")
        raise await _refuse(store, refusal, actor=actor)
    await _ensure(store)
    number = voucher_number(int(row["id"]))
    at = now_us()

    async def take(connection: AsyncConnection) -> Mapping[str, Any]:
        if approval is not None:
            await approval.take(connection)
        moved = await connection.execute(
            update(VOUCHERS)
            .where((VOUCHERS.c.id == row["id"]) & (VOUCHERS.c.status == "issued"))
            .values(status="voided", redeemed_us=at, redeemed_account=CAGE, redeemed_terminal=CAGE)
        )
        if moved.rowcount != 1:
            raise FloorRefusedError(
                "voided",
                f"Voucher {number} was already redeemed or voided; it moves money once "
                f"({VOID_RULE}).",
                VOID_RULE,
            )
        return {}

    payload: dict[str, Any] = {
        "account": CAGE,
        "amount": amount,
        "by": actor.subject,
        "voucher": number,
        "issued_at": row["terminal"],
        "voided_us": at,  # the row's (verify-log compares them)
        "reason": reason.strip()[:200],
    }
    if approval is not None:
        payload.update(approval.payload())
    transfer = Transfer(VOUCHERS_ACCOUNT, CAGE, amount, "voucher_voided", memo=number)
    record, _ = await _commit(
        store,
        CAGE,
        _EventIn("voucher_voided", payload, actor=actor.subject),
        transfer,
        actor,
        before=take,
    )
    await store.audit(
        "voucher_voided",
        f"voucher {number} of {dollars(amount)} voided by {actor.subject}: {reason.strip()[:200]}",
        actor=actor.subject,
        rule=VOID_RULE,
    )
    return Movement(record, (transfer,), 0, number)


async def _issue(
    store: Store,
    kind: str,
    account: str,
    terminal: str,
    amount: int,
    code: str,
    *,
    actor: Actor,
    at_terminal: bool = False,
    validated_by: str | None = None,
    approval: Approval | None = None,
) -> Movement:
    """A voucher of ``amount`` with validation code ``code`` issued at ``terminal`` (or the
    cage) for ``account``'s money (``kind``: ``voucher_out`` or ``voucher_sold``): the voucher
    row, the event on ``terminal``'s log and the posting to the vouchers account in one
    transaction. ``at_terminal``: a player's cash-out, whose event names the terminal and
    whose movement carries his new balance; ``validated_by``: the host that gave the code
    (system validation)."""
    at = now_us()
    by = actor.subject

    async def issue(connection: AsyncConnection) -> Mapping[str, Any]:
        if approval is not None:
            await approval.take(connection)
        voucher_id = await connection.scalar(
            VOUCHERS.insert()
            .values(
                code_hash=code_hash(code),
                amount=amount,
                status="issued",
                account=account,
                terminal=terminal,
                issued_us=at,
                validated_by=validated_by,
            )
            .returning(VOUCHERS.c.id)
        )
        return {"voucher": voucher_number(int(voucher_id))}

    payload = {
        "account": account,
        "amount": amount,
        "terminal": terminal,
        "by": by,
        "validation_code": f"…{code[-4:]}",
        "code_sha256": code_hash(code),
        "issued_us": at,  # the row's: its expiry runs from it (verify-log compares them)
    }
    if validated_by is not None:
        payload["validated_by"] = validated_by
    if approval is not None:
        payload.update(approval.payload())
    # the voucher number is known only inside the transaction: the transfer's memo carries the
    # validation code's hash, which names the voucher row as surely
    transfer = Transfer(account, VOUCHERS_ACCOUNT, amount, kind, memo=code_hash(code))
    event = _EventIn(kind, payload, actor=by, terminal=terminal if at_terminal else "")
    record, extra = await _commit(store, terminal, event, transfer, actor, before=issue)
    balance = await player_balance(store, account) if at_terminal else 0
    return Movement(record, (transfer,), balance, str(extra["voucher"]), code)


async def _redeem(
    store: Store,
    code: str,
    actor: Actor,
    kind: str,
    account: str,
    where: str,
    *,
    system: str | None = None,
    amount: int | None = None,
) -> Movement:
    """The voucher of ``code`` paid once to ``account`` (a player's at terminal ``where``, or
    the cage): the row's conditional update, the event on ``where``'s log and the posting in
    one transaction."""
    try:
        row = await _find_voucher(store, code, system, amount)
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    await _ensure(store)
    amount = int(row["amount"])
    number = voucher_number(int(row["id"]))
    transfer = Transfer(VOUCHERS_ACCOUNT, account, amount, kind, memo=number)
    at = now_us()
    payload = {
        "account": account,
        "amount": amount,
        "by": actor.subject,
        "voucher": number,
        "issued_at": row["terminal"],
        "redeemed_us": at,  # the row's (verify-log compares them)
    }
    if system is not None:
        payload["validated_by"] = system
    if where != CAGE:
        payload["terminal"] = where
    record, _ = await _commit(
        store,
        where,
        _EventIn(kind, payload, actor=actor.subject, terminal=actor.terminal),
        transfer,
        actor,
        before=_take(row, account, where, at),
    )
    balance = 0 if account == CAGE else await player_balance(store, account)
    return Movement(record, (transfer,), balance, number)


async def check_hand_pay(
    store: Store, account: str, terminal_id: str, amount: int, kind: str, *, actor: Actor
) -> bool:
    """Refuse a hand pay that may not be made (audited): a terminal the floor has not
    registered, a kind that is not a hand pay, a role that may not pay, more than the game
    account holds. True when the amount is above the floor's ``handpay_limit``: then a
    supervisor other than the requester approves it first (dual control)."""
    try:
        check_terminal_id(terminal_id)
        if kind not in HANDPAY_KINDS:
            raise FloorRefusedError(
                "invalid", f"A hand pay is one of {HANDPAY_KINDS}, not {kind!r}.", VOUCHER_RULE
            )
        _positive(amount)
        if actor.role not in (Role.CASHIER, Role.SUPERVISOR):
            raise FloorRefusedError(
                "role",
                f"A hand pay may be made by a cashier or a supervisor, not by a "
                f"{actor.role.value} (money-movement policy, {CONTROL_RULE}).",
                CONTROL_RULE,
            )
        if await terminal(store, terminal_id) is None:
            raise FloorRefusedError(
                "terminal_unknown",
                f"{terminal_id!r} is not a terminal of the floor; a hand pay is paid at a "
                f"registered terminal ({VOUCHER_RULE}).",
                VOUCHER_RULE,
            )
        balance = await player_balance(store, account)
        if amount > balance:
            raise FloorRefusedError(
                "balance",
                f"Game account {account!r} holds {dollars(balance)}; {dollars(amount)} cannot "
                "be paid.",
                ACCOUNT_RULE,
            )
    except FloorRefusedError as refusal:
        raise await _refuse(store, refusal, actor=actor) from None
    return amount > int((await floor_settings(store))["handpay_limit"])


async def hand_pay(
    store: Store,
    account: str,
    terminal: str,
    amount: int,
    kind: str,
    *,
    actor: Actor,
    reason: str = "",
    approval: Approval | None = None,
) -> Movement:
    """Credits paid by hand (§ 605a.5(d)) from a player's game account at a registered
    terminal: an attendant-paid jackpot or attendant-paid cancelled credits, paid by the cage
    (a cashier) or a supervisor up to the hand-pay limit, above it only with the ``approval``
    of a supervisor who is not the one paying (dual control, § 605a.4(d)). A dealer may not
    pay out. The account must be a player's game account (the policy)."""
    above = await check_hand_pay(store, account, terminal, amount, kind, actor=actor)
    if above and approval is None:
        limit = int((await floor_settings(store))["handpay_limit"])
        refusal = _approval_needed("A hand pay", amount, limit, "hand-pay limit")
        raise await _refuse(store, refusal, actor=actor)
    await _ensure(store)
    by = actor.subject
    transfer = Transfer(account, CAGE, amount, kind, memo=f"hand pay at {terminal} by {by}")
    payload: dict[str, Any] = {
        "account": account,
        "amount": amount,
        "kind": kind,
        "terminal": terminal,
        "by": by,
        "role": actor.role.value,
        "reason": reason[:200],
    }
    if approval is not None:
        payload.update(approval.payload())
    record, _ = await _commit(
        store,
        terminal,
        _EventIn("hand_pay", payload, actor=by),
        transfer,
        actor,
        before=None if approval is None else approval.take,
    )
    return Movement(record, (transfer,), await player_balance(store, account))


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
