"""Meters of PA Chapter 605a per electronic wagering terminal (EWT), per table and for the
floor, derived from the ledger and the event log alone (§ 605a.5(d)).

No meter is a counter that an error could reset: every reading is a sum over ledger rows
(which only ever grow, in the same transaction as the money they record), so a crash, a
restart or a refused step cannot change a reading. The meters:

* ``coin_in`` — credits wagered from game accounts (ledger ``wager`` rows, player → escrow);
* ``voided`` — wagers refunded when a round was voided (``refund`` rows);
* ``coin_out`` — credits paid back to game accounts by settlements: the wager returned and the
  winnings (``returned`` and ``winnings`` rows);
* ``jackpots`` and ``cancelled_credits`` — attendant-paid jackpots and cancelled credits;
* ``bills_in``, ``vouchers_in``, ``vouchers_out`` — the buy-ins and cash-outs;
* ``games_played`` — completed rounds in which the EWT (or anyone, for a table) wagered;
* ``tips`` and ``tips_count`` — the sum and number of tips to the dealer (``tip`` rows, player
  → ``tips:<table>``; :mod:`tablejack.store.tips`): never coin in, drop or win;
* per wager kind: ``drop`` (wagered less voided), ``win`` (the house's net), ``hold_percent``.

A wager row is credited to the EWT from which its player placed his wager in that round (the
``wager`` events of the round's log); a buy-in or cash-out row to the EWT of its account log.
Tables are found from the escrow account (``escrow:<table>``) or, for buy-ins and cash-outs,
from the EWT's registration.

Readings at the end of each gaming day are kept as snapshots (:func:`ensure_snapshots`), and
an authorised meter clear (:func:`clear_meters`, supervisor only) stores the readings before
and after it: the displayed meters of a scope are its lifetime readings less those at its last
clear.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import EventIn, Store, now_us
from tablejack.store.floor_models import CLEARS, SNAPSHOTS, TERMINALS
from tablejack.store.models import EVENTS, LEDGER, ROUNDS
from tablejack.store.vouchers import FloorRefusedError, floor_settings

__all__ = [
    "COUNTERS",
    "LEDGER_COLUMNS",
    "METER_RULE",
    "Fold",
    "clear_meters",
    "completed_games",
    "day_bounds",
    "day_readings",
    "displayed_meters",
    "ensure_snapshots",
    "gaming_day_of",
    "lookups",
    "readings",
    "tables_of_terminals",
    "win_report",
]

METER_RULE = "PA 605a.5(d)"
COUNTERS = (
    "coin_in",
    "voided",
    "coin_out",
    "jackpots",
    "cancelled_credits",
    "bills_in",
    "vouchers_in",
    "vouchers_out",
    "games_played",
    "tips",
    "tips_count",
)
SCOPES = ("terminal", "table", "floor")
_COUNTER_OF_KIND = {
    "bill_in": "bills_in",
    "voucher_in": "vouchers_in",
    "voucher_out": "vouchers_out",
    "jackpot": "jackpots",
    "cancelled_credit": "cancelled_credits",
}
DAY_US: int = 24 * 3600 * 1_000_000


def gaming_day_of(at_us: int, start_hour: int) -> str:
    """The gaming day (a date) of a moment; days start at ``start_hour`` UTC.

    >>> gaming_day_of(1_764_475_200_000_000, 6)  # 2025-11-30 04:00 UTC
    '2025-11-29'
    """
    shifted = at_us // 1_000_000 - start_hour * 3600
    return dt.datetime.fromtimestamp(shifted, dt.UTC).date().isoformat()


def day_bounds(day: str, start_hour: int) -> tuple[int, int]:
    """The first microsecond of a gaming day and the first of the next.

    >>> day_bounds("2025-11-29", 6)[0] == 1_764_396_000_000_000
    True
    """
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC) + dt.timedelta(hours=start_hour)
    first = int(start.timestamp()) * 1_000_000
    return first, first + DAY_US


def _empty() -> dict[str, Any]:
    return {**dict.fromkeys(COUNTERS, 0), "wager_kinds": {}}


def _hold(drop: int, win: int) -> str | None:
    return None if drop == 0 else f"{float(Fraction(100 * win, drop)):.2f}"


def _finish(meter: dict[str, Any]) -> dict[str, Any]:
    for entry in meter["wager_kinds"].values():
        entry["hold_percent"] = _hold(entry["drop"], entry["win"])
    drop = sum(e["drop"] for e in meter["wager_kinds"].values())
    win = sum(e["win"] for e in meter["wager_kinds"].values())
    meter["drop"], meter["win"], meter["hold_percent"] = drop, win, _hold(drop, win)
    return meter


class Fold:
    """Meter readings folded from ledger rows and completed rounds, as they are given: the one
    fold behind :func:`readings` (the whole ledger at once) and
    :class:`tablejack.store.meters_running.RunningMeters` (the rows new since its last read),
    so the two can never disagree. A completed round is counted once, however often it is
    given."""

    def __init__(self) -> None:
        self.out: dict[str, dict[str, dict[str, Any]]] = {scope: {} for scope in SCOPES}
        self.counted: set[str] = set()
        """The rounds already counted in ``games_played``."""

    def _meters_of(self, terminal: str, table: str) -> list[dict[str, Any]]:
        found = [self.out["floor"].setdefault("floor", _empty())]
        if terminal:
            found.append(self.out["terminal"].setdefault(terminal, _empty()))
        if table:
            found.append(self.out["table"].setdefault(table, _empty()))
        return found

    def _add(
        self,
        terminal: str,
        table: str,
        counter: str | None,
        amount: int,
        kind: str = "",
        drop: int = 0,
        win: int = 0,
    ) -> None:
        for meter in self._meters_of(terminal, table):
            if counter is not None:
                meter[counter] += amount
            if kind:
                entry = meter["wager_kinds"].setdefault(kind, {"drop": 0, "win": 0})
                entry["drop"] += drop
                entry["win"] += win

    def ledger(
        self,
        rows: Iterable[Sequence[Any]],
        played: Mapping[tuple[str, str], str],
        owners: Mapping[tuple[str, int], str],
        tables_of: Mapping[str, str],
    ) -> None:
        """Fold ledger rows ``(from, to, amount, kind, round_id, memo, wager_id)``;
        ``played``: the EWT of each (round, player) who wagered (:func:`lookups`),
        ``owners``: the player of each (round, wager id), ``tables_of``: each EWT's table."""
        add = self._add
        for source, target, raw_amount, row_kind, round_id, memo, wager_id in rows:
            amount, kind = int(raw_amount), str(row_kind)
            wager_kind = (memo or "").split(" ", 1)[0] or "unclassified"
            if kind == "tip" and target.startswith("tips:"):  # not a wager: no drop, no win
                terminal = (round_id or "")[5:] if (round_id or "").startswith("acct:") else ""
                add(terminal, target[5:], "tips", amount)
                add(terminal, target[5:], "tips_count", 1)
                continue
            if kind in _COUNTER_OF_KIND:
                terminal = (round_id or "")[5:] if (round_id or "").startswith("acct:") else ""
                add(terminal, tables_of.get(terminal, ""), _COUNTER_OF_KIND[kind], amount)
                continue
            if kind == "settle":  # rows written before the ledger named returned/lost/winnings
                wager_kind = "unclassified"
                if source.startswith("escrow:"):
                    kind = "lost" if target.startswith("house:") else "returned"
                elif source.startswith("house:"):
                    kind = "winnings"
            if kind == "wager" and target.startswith("escrow:"):
                where = played.get((round_id, source), "")
                add(where, target[7:], "coin_in", amount, wager_kind, drop=amount)
            elif kind == "refund" and source.startswith("escrow:"):
                where = played.get((round_id, target), "")
                add(where, source[7:], "voided", amount, wager_kind, drop=-amount)
            elif kind == "returned" and source.startswith("escrow:"):
                add(played.get((round_id, target), ""), source[7:], "coin_out", amount)
            elif kind == "lost" and source.startswith("escrow:"):
                player = owners.get((round_id, wager_id), "")
                where = played.get((round_id, player), "")
                add(where, source[7:], None, 0, wager_kind, win=amount)
            elif kind == "winnings" and source.startswith("house:"):
                where = played.get((round_id, target), "")
                add(where, source[6:], "coin_out", amount, wager_kind, win=-amount)

    def games(self, rows: Iterable[Sequence[Any]]) -> None:
        """Fold completed rounds ``(round_id, terminal, table)`` (one row per EWT that wagered
        in the round); a round already counted is skipped."""
        rounds: dict[str, tuple[str, list[str]]] = {}
        for round_id, terminal, table in rows:
            if round_id not in self.counted:
                rounds.setdefault(round_id, (table, []))[1].append(terminal)
        for round_id, (table, where) in rounds.items():
            self.counted.add(round_id)
            for terminal in set(where):
                if terminal:
                    self.out["terminal"].setdefault(terminal, _empty())["games_played"] += 1
            self.out["table"].setdefault(table, _empty())["games_played"] += 1
            self.out["floor"].setdefault("floor", _empty())["games_played"] += 1

    def result(self, scope: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
        """The readings so far (a copy, with drop, win and hold): every scope, or one."""
        chosen = SCOPES if scope is None else (scope,)
        out: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in SCOPES}
        for name in chosen:
            for key, meter in self.out[name].items():
                copied = {**meter, "wager_kinds": {}}
                for kind, entry in meter["wager_kinds"].items():
                    copied["wager_kinds"][kind] = dict(entry)
                out[name][key] = _finish(copied)
        if "floor" in chosen:
            out["floor"].setdefault("floor", _finish(_empty()))
        return out


def _chunks(values: Collection[str], size: int = 500) -> Iterator[list[str]]:
    ordered = sorted(values)
    for index in range(0, len(ordered), size):
        yield ordered[index : index + size]


async def lookups(
    connection: AsyncConnection, round_ids: Collection[str] | None = None
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, int], str]]:
    """What :meth:`Fold.ledger` needs of the rounds ``round_ids`` (None: every round): the EWT
    from which each player wagered in each round, and the player of each wager."""
    where_played = (
        select(EVENTS.c.round_id, EVENTS.c.actor, func.min(EVENTS.c.terminal))
        .where(EVENTS.c.kind == "wager")
        .group_by(EVENTS.c.round_id, EVENTS.c.actor)
    )
    wagers = select(LEDGER.c.round_id, LEDGER.c.wager_id, LEDGER.c.from_account).where(
        LEDGER.c.kind == "wager"
    )
    played: dict[tuple[str, str], str] = {}
    owners: dict[tuple[str, int], str] = {}
    chunks = [None] if round_ids is None else list(_chunks(round_ids))
    for chunk in chunks:
        p, w = where_played, wagers
        if chunk is not None:
            p = p.where(EVENTS.c.round_id.in_(chunk))
            w = w.where(LEDGER.c.round_id.in_(chunk))
        played.update({(r[0], r[1]): r[2] for r in (await connection.execute(p)).all()})
        owners.update({(r[0], r[1]): r[2] for r in (await connection.execute(w)).all()})
    return played, owners


async def tables_of_terminals(connection: AsyncConnection) -> dict[str, str]:
    """Each EWT's table, as registered."""
    rows = (await connection.execute(select(TERMINALS.c.id, TERMINALS.c.table_id))).all()
    return {r[0]: r[1] for r in rows}


LEDGER_COLUMNS = (
    LEDGER.c.from_account,
    LEDGER.c.to_account,
    LEDGER.c.amount,
    LEDGER.c.kind,
    LEDGER.c.round_id,
    LEDGER.c.memo,
    LEDGER.c.wager_id,
)
"""The ledger columns :meth:`Fold.ledger` takes, in its order."""


def completed_games() -> Select[str, str, str]:
    """The completed rounds :meth:`Fold.games` takes: one row per EWT that wagered in each."""
    return (
        select(EVENTS.c.round_id, EVENTS.c.terminal, ROUNDS.c.table_id)
        .join(ROUNDS, ROUNDS.c.id == EVENTS.c.round_id)
        .where((EVENTS.c.kind == "wager") & (ROUNDS.c.status == "complete"))
        .distinct()
    )


async def readings(
    store: Store,
    *,
    since_us: int | None = None,
    until_us: int | None = None,
    until_ledger_id: int | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Meter readings from the ledger rows (and completed rounds) in ``[since_us, until_us)``
    and up to ledger row ``until_ledger_id``: ``{"terminal": {id: meters}, "table": {…},
    "floor": {"floor": meters}}``."""
    ledger = select(*LEDGER_COLUMNS)
    games = completed_games()
    if since_us is not None:
        ledger = ledger.where(LEDGER.c.at_us >= since_us)
        games = games.where(ROUNDS.c.closed_us >= since_us)
    if until_us is not None:
        ledger = ledger.where(LEDGER.c.at_us < until_us)
        games = games.where(ROUNDS.c.closed_us < until_us)
    if until_ledger_id is not None:
        ledger = ledger.where(LEDGER.c.id <= until_ledger_id)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(ledger)).all()
        played, owners = await lookups(connection)
        tables_of = await tables_of_terminals(connection)
        game_rows = (await connection.execute(games)).all()
    fold = Fold()
    fold.ledger(rows, played, owners, tables_of)
    fold.games(game_rows)
    return fold.result()


def _minus(lifetime: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    out = _empty()
    for counter in COUNTERS:
        out[counter] = int(lifetime.get(counter, 0)) - int(base.get(counter, 0))
    kinds = set(lifetime.get("wager_kinds", {})) | set(base.get("wager_kinds", {}))
    for kind in sorted(kinds):
        now = lifetime.get("wager_kinds", {}).get(kind, {})
        then = base.get("wager_kinds", {}).get(kind, {})
        out["wager_kinds"][kind] = {
            "drop": int(now.get("drop", 0)) - int(then.get("drop", 0)),
            "win": int(now.get("win", 0)) - int(then.get("win", 0)),
        }
    return _finish(out)


async def _baselines(store: Store) -> dict[tuple[str, str], dict[str, Any]]:
    """The lifetime readings at each scope's last clear."""
    statement = select(CLEARS.c.scope, CLEARS.c.scope_id, CLEARS.c.before).order_by(CLEARS.c.id)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).all()
    return {(r[0], r[1]): json.loads(r[2])["lifetime"] for r in rows}


async def displayed_meters(
    store: Store, lifetime: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None
) -> dict[str, Any]:
    """The meters as displayed: each scope's lifetime readings less those at its last clear,
    and the lifetime readings beside them. ``lifetime``: the readings already read (the running
    meters', :class:`tablejack.store.meters_running.RunningMeters`); None: the whole ledger
    is read for them (:func:`readings`)."""
    if lifetime is None:
        lifetime = await readings(store)
    bases = await _baselines(store)
    out: dict[str, Any] = {}
    for scope in SCOPES:
        out[scope] = {
            scope_id: {
                **_minus(meter, bases.get((scope, scope_id), {})),
                "lifetime": meter,
            }
            for scope_id, meter in sorted(lifetime[scope].items())
        }
    return out


async def clear_meters(
    store: Store, scope: str, scope_id: str, *, by: str, role: str, reason: str
) -> dict[str, Any]:
    """An authorised meter clear (supervisor only): the readings before and after it are kept
    (``meter_clears``) and the clear is an event of the floor's meter log. Anyone else is
    refused and audited, and nothing changes."""
    if role != "supervisor":
        refusal = FloorRefusedError(
            "role", "Only a supervisor may clear meters (PA 605a.4(d)).", "PA 605a.4(d)"
        )
        await store.audit(
            refusal.code,
            f"meter clear of {scope} {scope_id}: {refusal.message}",
            actor=by,
            rule=refusal.rule,
        )
        raise refusal
    if scope not in SCOPES or not reason.strip():
        raise FloorRefusedError(
            "invalid", f"A clear names a scope {SCOPES} and a reason; got {scope!r}.", METER_RULE
        )
    async with store.engine.connect() as connection:
        last = int(await connection.scalar(select(func.coalesce(func.max(LEDGER.c.id), 0))) or 0)
    lifetime = (await readings(store, until_ledger_id=last))[scope].get(scope_id, _finish(_empty()))
    base = (await _baselines(store)).get((scope, scope_id), {})
    before = _minus(lifetime, base)
    after = _minus(lifetime, lifetime)
    at = now_us()
    async with store.transaction() as connection:
        await connection.execute(
            CLEARS.insert().values(
                at_us=at,
                scope=scope,
                scope_id=scope_id,
                by=by[:64],
                reason=reason[:200],
                ledger_id=last,
                before=json.dumps({"displayed": before, "lifetime": lifetime}),
                after=json.dumps({"displayed": after}),
            )
        )
    await store.commit_logged(
        "floor-meters",
        EventIn(
            "meter_clear",
            {
                "scope": scope,
                "scope_id": scope_id,
                "reason": reason[:200],
                "ledger_id": last,
                "before": before,
                "after": after,
            },
            actor=by,
        ),
        [],
        None,
        owner="meters",
        log_kind="meters",
    )
    await store.audit(
        "meter_clear", f"{scope} {scope_id}: {reason[:200]}", actor=by, rule=METER_RULE
    )
    return {"scope": scope, "scope_id": scope_id, "before": before, "after": after, "by": by}


async def meter_clears(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """The newest meter clears with their readings before and after."""
    statement = select(CLEARS).order_by(CLEARS.c.id.desc()).limit(limit)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).mappings().all()
    out = []
    for row in rows:
        item = dict(row)
        item["before"] = json.loads(item["before"])["displayed"]
        item["after"] = json.loads(item["after"])["displayed"]
        out.append(item)
    return out


async def ensure_snapshots(
    store: Store, at_us: int | None = None, *, max_days: int = 62
) -> list[str]:
    """Snapshot every gaming day that has ended (up to ``at_us``) and has none yet: each
    EWT's, table's and the floor's readings for that day and lifetime readings at its end.
    A snapshot depends only on the ledger, so taking it late gives the same figures.
    Returns the days snapshotted now."""
    hour = int((await floor_settings(store))["gaming_day_start_hour"])
    moment = now_us() if at_us is None else at_us
    today = gaming_day_of(moment, hour)
    async with store.engine.connect() as connection:
        first = await connection.scalar(select(func.min(LEDGER.c.at_us)))
        done = {
            r[0]
            for r in (await connection.execute(select(SNAPSHOTS.c.gaming_day).distinct())).all()
        }
    if first is None:
        return []
    day = dt.date.fromisoformat(gaming_day_of(int(first), hour))
    last = dt.date.fromisoformat(today) - dt.timedelta(days=1)
    day = max(day, last - dt.timedelta(days=max_days - 1))
    taken: list[str] = []
    while day <= last:
        name = day.isoformat()
        if name not in done:
            start, end = day_bounds(name, hour)
            activity = await readings(store, since_us=start, until_us=end)
            lifetime = await readings(store, until_us=end)
            rows = [
                {
                    "gaming_day": name,
                    "scope": scope,
                    "scope_id": scope_id,
                    "readings": json.dumps(
                        {
                            "day": activity[scope].get(scope_id, _finish(_empty())),
                            "lifetime": meter,
                        },
                        sort_keys=True,
                    ),
                    "taken_us": now_us(),
                }
                for scope in SCOPES
                for scope_id, meter in sorted(lifetime[scope].items())
            ]
            if rows:
                try:
                    async with store.transaction() as connection:
                        await connection.execute(SNAPSHOTS.insert(), rows)
                    taken.append(name)
                except IntegrityError:  # another process took it first: same figures
                    pass
        day += dt.timedelta(days=1)
    return taken


async def snapshots(store: Store, day: str) -> dict[str, dict[str, Any]]:
    """The snapshots of a gaming day: ``{scope: {id: {"day": …, "lifetime": …}}}``."""
    statement = select(SNAPSHOTS).where(SNAPSHOTS.c.gaming_day == day)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(statement)).mappings().all()
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        out.setdefault(row["scope"], {})[row["scope_id"]] = json.loads(row["readings"])
    return out


async def day_readings(
    store: Store, day: str, at_us: int | None = None
) -> tuple[int, int, bool, dict[str, dict[str, dict[str, Any]]]]:
    """A gaming day's readings for a report: ``(start, end, final, {scope: {id: meters}})``,
    from the day's snapshot once the day has ended (``final``), live before."""
    hour = int((await floor_settings(store))["gaming_day_start_hour"])
    try:
        start, end = day_bounds(day, hour)
    except ValueError:
        raise FloorRefusedError(
            "invalid", f"{day!r} is not a date (YYYY-MM-DD).", METER_RULE
        ) from None
    moment = now_us() if at_us is None else at_us
    final = moment >= end
    if final:
        await ensure_snapshots(store, moment)
        taken = await snapshots(store, day)
        data = {scope: {k: v["day"] for k, v in taken.get(scope, {}).items()} for scope in SCOPES}
    else:
        data = await readings(store, since_us=start, until_us=end)
    return start, end, final, data


async def win_report(store: Store, day: str, at_us: int | None = None) -> dict[str, Any]:
    """The win report of a gaming day: per table and wager kind drop, win and hold, per EWT
    the day's meters, the floor's totals; from the day's snapshot once the day has ended
    (``final: true``), live before."""
    start, end, final, data = await day_readings(store, day, at_us)
    return {
        "gaming_day": day,
        "starts_us": start,
        "ends_us": end,
        "final": final,
        "tables": data["table"],
        "terminals": data["terminal"],
        "floor": data["floor"].get("floor", _finish(_empty())),
    }
