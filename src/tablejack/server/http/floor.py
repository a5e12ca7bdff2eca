"""The floor's REST API of PA Chapter 605a: game accounts and vouchers, hand pays, EWT
registration and the licence count, meters, meter clears, gaming-day win reports, terminal
recall and the software's manifest hash.

:data:`router` holds the routes; :func:`tablejack.server.app.create_app` mounts it.
Every refusal — a role that may not, a forged or reused voucher, a hand pay above the limit
without a supervisor, a meter clear by anyone but a supervisor — answers 403 or 409 with the
rule, is written to the audit log, and changes nothing else.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import Field

from tablejack.core.money import format_cents
from tablejack.server.duties import protections as guard
from tablejack.server.duties.tilts import refresh_terminals
from tablejack.server.floor.floor import Floor
from tablejack.server.http.access import Strict, Who, floor_of, floor_refusal, need, refuse
from tablejack.server.links import interface as links
from tablejack.server.support.auth import Principal
from tablejack.server.support.contract import AMOUNT_MAX, SECONDS_MAX, Count, Limit, Whole
from tablejack.server.support.text import SafeText
from tablejack.store import meters_report, protections, tips, vouchers
from tablejack.store.vouchers import VOUCHER_RULE, FloorRefusedError, Movement

__all__ = ["LICENSE_RULE", "in_play", "license_count", "on_floor", "router"]

LICENSE_RULE = "PA 605a.9(b)"
EWTS_PER_TABLE = 5
TERMINAL = r"^[A-Za-z0-9_.:-]{1,58}$"


class BillIn(Strict):
    """A bill accepted by the validator of the terminal the player is signed in at."""

    amount: Whole = Field(gt=0, le=AMOUNT_MAX)


class CashOut(Strict):
    """Cash out at the terminal the player is signed in at: all the credit (no amount) or
    part of it."""

    amount: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)


class VoucherIn(Strict):
    """A voucher inserted at the terminal the player is signed in at."""

    code: SafeText = Field(min_length=1, max_length=40)


class HandPay(Strict):
    """An attendant's hand pay."""

    account: SafeText = Field(min_length=1, max_length=64)
    terminal: SafeText = Field(pattern=TERMINAL)
    amount: Whole = Field(gt=0, le=AMOUNT_MAX)
    kind: SafeText = Field(pattern=r"^(jackpot|cancelled_credit)$")
    reason: SafeText = Field(default="", max_length=200)


class TerminalBody(Strict):
    """Register, move or retire an EWT; bind it to a position (seat games); ``credential``: a
    new device credential for a terminal already registered (the old one is revoked)."""

    terminal: SafeText = Field(pattern=TERMINAL)
    table: SafeText = Field(min_length=1, max_length=64)
    status: SafeText = Field(default="active", pattern=r"^(active|retired)$")
    position: Whole | None = Field(default=None, ge=1, le=16)
    credential: bool = False


class SettingBody(Strict):
    """One floor setting."""

    key: SafeText = Field(min_length=1, max_length=64)
    value: Any


class ClearBody(Strict):
    """An authorised meter clear."""

    scope: SafeText = Field(pattern=r"^(terminal|table|floor)$")
    scope_id: SafeText = Field(min_length=1, max_length=64)
    reason: SafeText = Field(min_length=1, max_length=200)


class LimitsBody(Strict):
    """A player's limits per gaming day; a field left out is unchanged, null removes it."""

    loss_limit: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)
    wager_limit: Whole | None = Field(default=None, gt=0, le=AMOUNT_MAX)
    time_limit_s: Whole | None = Field(default=None, gt=0, le=SECONDS_MAX)


class ExclusionBody(Strict):
    """A self-exclusion of ``days`` from now."""

    days: Whole = Field(ge=1, le=36500)


class TipBody(Strict):
    """A tip to the dealer from the game account of the player signed in at a terminal; the
    amount is checked by the store (whole positive cents), so a bad one is refused and
    audited."""

    table: SafeText = Field(min_length=1, max_length=64)
    amount: Any


class TiltBody(Strict):
    """A tilt (lock) or its clear: a reason code and words."""

    code: SafeText = Field(min_length=1, max_length=32)
    reason: SafeText = Field(default="", max_length=200)


def license_count(active_terminals: int, rounding: str = "up") -> int:
    """The tables the floor counts as under § 605a.9(b): every five EWTs are one table; a
    partial group of five counts as a table (``up``, the default) or not (``down``).

    >>> [license_count(n) for n in (0, 1, 5, 6, 10, 11)]
    [0, 1, 1, 2, 2, 3]
    >>> license_count(9, "down")
    1
    """
    if rounding == "down":
        return active_terminals // EWTS_PER_TABLE
    return math.ceil(active_terminals / EWTS_PER_TABLE)


def _booked(floor: Floor, movement: Movement) -> dict[str, Any]:
    """Apply a committed movement to the balance cache and tell the player's terminals."""
    floor.book(movement.transfers)
    account = movement.event.payload["account"]
    if account in floor.balances:  # player accounts only (never the cage or an escrow)
        floor.balances[account] = movement.balance
    for connection in list(floor.connections):
        if connection.role == "player" and connection.subject == account:
            table = floor.tables.get(connection.table or "")
            if table is not None:
                connection.push(table.player_state(account, connection.terminal))
    return movement.to_json()


def in_play(floor: Floor, player: str) -> list[tuple[str, str, int]]:
    """Where ``player`` has money in play: (table, round, cents) for each table whose escrow
    holds his unsettled wagers of the round in progress (the tables' own books)."""
    return [
        (table.id, table.round_id or "", amount)
        for table in floor.tables.values()
        if (amount := table.in_play(player)) > 0
    ]


def on_floor(floor: Floor, table_id: str) -> bool:
    """Is ``table_id`` a table of the floor — this process's, or another's of a floor of
    several processes (:attr:`Floor.others`)?"""
    return table_id in floor.tables or table_id in floor.others


def _in_play_words(found: list[tuple[str, str, int]]) -> str:
    """Where money is in play, in words: "$10.00 at table A1 (round A1-000003)"."""
    return " and ".join(
        f"{format_cents(amount)} at table {table} (round {round_id})"
        for table, round_id, amount in found
    )


async def _cash_out_not_in_play(
    request: Request, floor: Floor, who: Principal, amount: int | None
) -> list[tuple[str, str, int]]:
    """A cash-out takes only the credit not in play (605a.5(c)): a wager placed and not yet
    settled is in the table's escrow, and its result comes back to the game account. While
    the player has money in play, a cash-out of more than the rest — or of everything when
    there is no rest — is refused with a sentence naming the amount in play (audited). The
    places with money in play."""
    found = in_play(floor, who.subject)
    if not found:
        return found
    free = floor.balances.get(who.subject, 0)
    total = sum(amount for _, _, amount in found)
    where = _in_play_words(found)
    if amount is None and free <= 0:
        raise await refuse(
            request,
            who,
            "in_play",
            f"Nothing can be cashed out now: {where} is in play until the round settles; its "
            f"result is credited to the game account ({VOUCHER_RULE}).",
            VOUCHER_RULE,
            409,
        )
    if amount is not None and amount > free:
        raise await refuse(
            request,
            who,
            "in_play",
            f"{format_cents(amount)} cannot be cashed out: {format_cents(total)} of the game "
            f"account is in play ({where}) until the round settles; {format_cents(free)} can "
            f"be cashed out now ({VOUCHER_RULE}).",
            VOUCHER_RULE,
            409,
        )
    return found


async def _signed_in_player(request: Request, who: Principal) -> None:
    """A game-account movement at a terminal needs a player signed in at it (audited)."""
    if who.role != "player" or not who.terminal:
        raise await refuse(
            request,
            who,
            "terminal",
            "Only a player signed in at a terminal (POST /api/session) moves his game account "
            "there.",
            "PA 605a.4(d)",
        )


router = APIRouter()


@router.post("/api/floor/bill-in")
async def bill_in(request: Request, body: BillIn, who: Who) -> dict[str, Any]:
    """A bill accepted by the validator of the terminal the player is signed in at credits
    his game account (605a.2(d), 605a.5(c)); reported by that terminal's session only."""
    floor = floor_of(request)
    await need(request, who, "bill_in")
    await _signed_in_player(request, who)
    try:
        movement = await vouchers.bill_in(floor.store, body.amount, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    links.notify(floor, who.terminal or "", "bill_accepted")
    return _booked(floor, movement)


@router.post("/api/floor/cash-out")
async def cash_out(request: Request, body: CashOut, who: Who) -> dict[str, Any]:
    """Cash out at the terminal the player is signed in at: a voucher for the credit not in
    play (605a.5(c)); the answer carries the voucher number and its validation code, and
    ``in_play``: the cents still in play at the tables (their results come back to the
    game account when the rounds settle). More than the credit not in play is refused,
    naming the amount in play."""
    floor = floor_of(request)
    await need(request, who, "cash_out")
    await _signed_in_player(request, who)
    playing = await _cash_out_not_in_play(request, floor, who, body.amount)
    link = links.link_for(floor, who.terminal or "")
    try:
        if link is None:
            movement = await vouchers.cash_out(floor.store, body.amount, actor=who.actor())
        else:  # system validation through the terminal's host (docs/sas.md)
            movement = await links.cash_out(floor, link, body.amount, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    answer = _booked(floor, movement)
    answer["in_play"] = sum(amount for _, _, amount in playing)
    if playing:
        answer["note"] = (
            f"{_in_play_words(playing)} stays in play; its result is credited to the game "
            "account when the round settles."
        )
    return answer


@router.post("/api/floor/voucher-in")
async def voucher_in(request: Request, body: VoucherIn, who: Who) -> dict[str, Any]:
    """Redeem a voucher at the terminal the player is signed in at, once (605a.5(c))."""
    floor = floor_of(request)
    await need(request, who, "voucher_in")
    await _signed_in_player(request, who)
    link = links.link_for(floor, who.terminal or "")
    try:
        if link is None:
            movement = await vouchers.redeem_voucher(floor.store, body.code, actor=who.actor())
        else:  # redeemed through the terminal's host (docs/sas.md)
            movement = await links.redeem(floor, link, body.code, actor=who.actor())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return _booked(floor, movement)


@router.post("/api/floor/hand-pay")
async def hand_pay(request: Request, body: HandPay, who: Who) -> dict[str, Any]:
    """An attendant-paid jackpot or cancelled credit (605a.5(d)) from a player's game
    account, paid by the cage (cashier) up to the hand-pay limit, by a supervisor above it
    (605a.4(d)); a dealer may not pay out."""
    floor = floor_of(request)
    await need(request, who, "hand_pay")
    try:
        movement = await vouchers.hand_pay(
            floor.store,
            body.account,
            body.terminal,
            body.amount,
            body.kind,
            actor=who.actor(),
            reason=body.reason,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    links.notify(floor, body.terminal, "handpay_paid")
    return _booked(floor, movement)


@router.get("/api/floor/vouchers/{number}")
async def voucher(request: Request, number: str, who: Who) -> dict[str, Any]:
    """A voucher's record: amount, issue and redemption (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_voucher")
    found = await vouchers.voucher(floor.store, number)
    if found is None:
        raise HTTPException(404, f"No voucher {number!r}.")
    return found


@router.get("/api/floor/settings")
async def settings(request: Request, who: Who) -> dict[str, Any]:
    """The operator's floor settings (dealer, supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_settings")
    return await vouchers.floor_settings(floor.store)


@router.put("/api/floor/settings")
async def set_setting(request: Request, body: SettingBody, who: Who) -> dict[str, Any]:
    """Change a floor setting (supervisor; audited)."""
    floor = floor_of(request)
    name = await need(request, who, "change_settings")
    try:
        return await vouchers.set_floor_setting(floor.store, body.key, body.value, by=name)
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None


@router.post("/api/floor/terminals")
async def register_terminal(request: Request, body: TerminalBody, who: Who) -> dict[str, Any]:
    """Register, move or retire an EWT and bind it to its table and position (operator).
    A new terminal (or ``credential: true``) gets a device credential: its secret is in
    this answer only (``credential``), to be installed on the terminal."""
    floor = floor_of(request)
    await need(request, who, "register_terminal")
    if not on_floor(floor, body.table):  # any process's table: a registration is a store write
        raise HTTPException(404, f"No table {body.table!r}.")
    try:
        issued = await vouchers.register_terminal(
            floor.store,
            body.terminal,
            body.table,
            by=who.actor(),
            status=body.status,
            position=body.position,
            credential=body.credential,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    # the old key revoked or the terminal retired: the sessions opened there end, and their
    # sockets close, at once (docs/security.md, "Sessions bound to what made them")
    ended = "retired" if body.status == "retired" else "given a new key"
    closed = await floor.auth.refresh(
        f"Terminal {body.terminal} was {ended}; the sessions there ended. Sign in again."
    )
    rows = await vouchers.terminals(floor.store)
    return {
        "terminal": next(r for r in rows if r["id"] == body.terminal),
        "credential": None if issued is None else issued.token,
        "credential_id": None if issued is None else issued.credential.id,
        "closed_sockets": closed,
    }


@router.get("/api/floor/terminals")
async def terminal_list(request: Request, who: Who) -> list[dict[str, Any]]:
    """Every registered EWT: its table, position and status, how many sockets are
    connected from it now and which players are signed in there (``players``); for a role
    that reads tilts, its open tilts (``tilts``; else null) (supervisor, operator)."""
    floor = floor_of(request)
    await need(request, who, "read_terminals")
    rows = await vouchers.terminals(floor.store)
    locks = await protections.open_locks(floor.store) if who.may("read_tilts") else None
    sockets: dict[str, list[str]] = {}
    for connection in floor.connections:
        if connection.role == "player" and connection.terminal:
            sockets.setdefault(connection.terminal, []).append(connection.subject)
    return [
        {
            **row,
            "connected": len(sockets.get(row["id"], [])),
            "players": sorted(set(sockets.get(row["id"], []))),
            "tilts": None
            if locks is None
            else [
                {
                    "code": lock["code"],
                    "reason": lock["reason"],
                    "by": lock["locked_by"],
                    "at_us": lock["locked_us"],
                }
                for lock in locks.get(row["id"], [])
            ],
        }
        for row in rows
    ]


@router.get("/api/floor/license")
async def license_view(request: Request, who: Who) -> dict[str, Any]:
    """The licence count of § 605a.9(b): five EWTs count as one table (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_terminals")
    rows = await vouchers.terminals(floor.store)
    active = [r for r in rows if r["status"] == "active"]
    rounding = (await vouchers.floor_settings(floor.store))["license_rounding"]
    per_table: dict[str, int] = {}
    for row in active:
        per_table[row["table_id"]] = per_table.get(row["table_id"], 0) + 1
    return {
        "rule": LICENSE_RULE,
        "ewts_per_table": EWTS_PER_TABLE,
        "rounding": rounding,
        "active_terminals": len(active),
        "counted_tables": license_count(len(active), rounding),
        "terminals_per_table": dict(sorted(per_table.items())),
        "terminals": rows,
    }


@router.get("/api/floor/meters")
async def meters(request: Request, who: Who) -> dict[str, Any]:
    """Meters per EWT, per table and for the floor, derived from the ledger (605a.5(d));
    the gaming days that ended are snapshotted first (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_meters")
    await meters_report.ensure_snapshots(floor.store, floor.now_us())
    return await meters_report.displayed_meters(floor.store)


@router.post("/api/floor/meters/clear")
async def clear(request: Request, body: ClearBody, who: Who) -> dict[str, Any]:
    """An authorised meter clear (supervisor only); the readings before and after it are
    recorded."""
    floor = floor_of(request)
    try:
        return await meters_report.clear_meters(
            floor.store,
            body.scope,
            body.scope_id,
            by=who.subject,
            role=who.role,
            reason=body.reason,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None


@router.get("/api/floor/meters/clears")
async def clears(request: Request, who: Who, limit: Limit = 100) -> list[dict[str, Any]]:
    """The meter clears, newest first (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_meters")
    return await meters_report.meter_clears(floor.store, min(limit, 1000))


@router.get("/api/floor/reports/win")
async def win_report(request: Request, who: Who, day: str | None = None) -> dict[str, Any]:
    """The win report of a gaming day (default: the current one) (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_reports")
    hour = (await vouchers.floor_settings(floor.store))["gaming_day_start_hour"]
    chosen = day or meters_report.gaming_day_of(floor.now_us(), int(hour))
    try:
        return await meters_report.win_report(floor.store, chosen, floor.now_us())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None


@router.get("/api/floor/tip")
async def tip_settings(request: Request, who: Who) -> dict[str, Any]:
    """Whether tips are enabled and the largest tip (any signed-in terminal)."""
    return await tips.tip_settings(floor_of(request).store)


@router.post("/api/floor/tip")
async def tip(request: Request, body: TipBody, who: Who) -> dict[str, Any]:
    """A tip to the dealer from the player's own game account (tips enabled only): a
    ``tip`` ledger row to the table's tip account, with an event of the terminal's
    account log."""
    floor = floor_of(request)
    await need(request, who, "tip")
    await _signed_in_player(request, who)
    if not on_floor(floor, body.table):
        raise await refuse(
            request, who, "invalid", f"No table {body.table!r} to tip.", tips.TIP_RULE, 409
        )
    try:
        movement = await tips.give_tip(
            floor.store, body.table, body.amount, actor=who.actor(), at_us=floor.now_us()
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    return {**_booked(floor, movement), "table": body.table}


@router.get("/api/floor/reports/tips")
async def tip_report(request: Request, who: Who, day: str | None = None) -> dict[str, Any]:
    """The tip report of a gaming day (default: the current one) (supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_reports")
    hour = (await vouchers.floor_settings(floor.store))["gaming_day_start_hour"]
    chosen = day or meters_report.gaming_day_of(floor.now_us(), int(hour))
    try:
        return await tips.tip_report(floor.store, chosen, floor.now_us())
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None


@router.get("/api/floor/terminals/{terminal}/recall")
async def terminal_recall(
    request: Request, terminal: str, who: Who, n: Count = 10
) -> list[dict[str, Any]]:
    """The last game of a terminal and the nine before it, step by step: a player sees
    the games he played there, a supervisor every game of the terminal."""
    from tablejack.server.duties.recall import terminal_recall as recall_terminal
    from tablejack.server.visibility import Viewer

    floor = floor_of(request)
    await need(request, who, "recall_round")
    return await recall_terminal(floor.store, terminal, Viewer.of(who), n=max(1, min(n, 10)))


async def _for_player(request: Request, account: str, who: Principal, what: str) -> Floor:
    floor = floor_of(request)
    if not (who.role == "supervisor" or (who.role == "player" and who.subject == account)):
        raise await refuse(
            request,
            who,
            "role",
            f"Only the player himself or a supervisor may {what}.",
            protections.LIMIT_RULE,
        )
    if await floor.store.balance(account) is None:
        raise HTTPException(404, f"No game account {account!r}.")
    return floor


@router.get("/api/floor/players/{account}/limits")
async def player_limits(request: Request, account: str, who: Who) -> dict[str, Any]:
    """A player's limits, self-exclusion and today's wagers, losses and first wager."""
    floor = await _for_player(request, account, who, "read the limits")
    hour = int((await vouchers.floor_settings(floor.store))["gaming_day_start_hour"])
    day = meters_report.gaming_day_of(floor.now_us(), hour)
    start, end = meters_report.day_bounds(day, hour)
    row = await protections.limits(floor.store, account) or {}
    return {
        "account": account,
        "gaming_day": day,
        **{k: row.get(k) for k in (*protections.LIMIT_FIELDS, "excluded_until_us", "changed_us")},
        "today": await protections.usage(floor.store, account, start, end),
    }


@router.put("/api/floor/players/{account}/limits")
async def set_player_limits(
    request: Request, account: str, body: LimitsBody, who: Who
) -> dict[str, Any]:
    """Set or tighten limits (at once); loosen them only 24 hours after the last change."""
    floor = await _for_player(request, account, who, "set limits")
    new = {name: getattr(body, name) for name in body.model_fields_set}
    try:
        await protections.set_limits(
            floor.store, account, new, by=who.subject, at_us=floor.now_us()
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    guard.invalidate(floor)
    return await player_limits(request, account, who)


@router.post("/api/floor/players/{account}/self-exclusion")
async def self_exclusion(
    request: Request, account: str, body: ExclusionBody, who: Who
) -> dict[str, Any]:
    """Exclude the player from wagering for ``days`` (only ever extended)."""
    floor = await _for_player(request, account, who, "exclude")
    now = floor.now_us()
    try:
        await protections.self_exclude(
            floor.store,
            account,
            now + body.days * meters_report.DAY_US,
            by=who.subject,
            at_us=now,
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    guard.invalidate(floor)
    return await player_limits(request, account, who)


@router.post("/api/floor/terminals/{terminal}/tilt")
async def tilt(request: Request, terminal: str, body: TiltBody, who: Who) -> dict[str, Any]:
    """Lock a terminal with a tilt code (dealer, supervisor): it takes no wager or decision
    until a supervisor clears it."""
    floor = floor_of(request)
    name = await need(request, who, "lock_terminal")
    try:
        done = await protections.lock_terminal(
            floor.store, terminal, body.code, body.reason, by=name, at_us=floor.now_us()
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    guard.invalidate(floor)
    await refresh_terminals(floor)  # the dealer console shows the terminal's tilt
    for connection in list(floor.connections):
        if connection.terminal == terminal:
            connection.push(
                {
                    "type": "error",
                    "id": None,
                    "code": "tilt",
                    "rule": protections.TILT_RULE,
                    "message": f"Terminal locked ({body.code}): call an attendant.",
                }
            )
    return done


@router.post("/api/floor/terminals/{terminal}/clear")
async def clear_tilt(request: Request, terminal: str, body: TiltBody, who: Who) -> dict[str, Any]:
    """Clear a terminal's tilts with a clear code (supervisor only)."""
    floor = floor_of(request)
    try:
        done = await protections.clear_terminal(
            floor.store,
            terminal,
            body.code,
            body.reason,
            by=who.subject,
            role=who.role,
            at_us=floor.now_us(),
        )
    except FloorRefusedError as refusal:
        raise floor_refusal(refusal) from None
    guard.invalidate(floor)
    await refresh_terminals(floor)  # the dealer console shows the clear
    return done


@router.get("/api/floor/tilts")
async def tilts(request: Request, who: Who) -> dict[str, Any]:
    """The terminals locked now and their tilts (dealer, supervisor)."""
    floor = floor_of(request)
    await need(request, who, "read_tilts")
    return await protections.open_locks(floor.store)


@router.get("/api/floor/integrity")
async def integrity(request: Request, who: Who) -> dict[str, Any]:
    """The manifest hash of the running software and the release manifest (605a.4(c))."""
    from tablejack.server.support.integrity import running_status

    await need(request, who, "read_integrity")
    state = request.app.state
    return await asyncio.to_thread(
        running_status,
        getattr(state, "release_manifest", None),
        public_key=getattr(state, "manifest_public_key", None),
    )
