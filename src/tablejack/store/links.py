"""What a link to a casino management system (the SAS host, :mod:`tablejack.server.links`)
reads of the store beyond the floor's meters, and the one lock-out it may lift.

* :func:`terminal_counts` — per EWT the counts SAS reports beside the floor's meters (PA
  605a.5(d)): bills accepted by denomination, vouchers in and out (how many), games won and
  slot-door openings. Like every meter they are sums over rows that only ever grow (the
  ledger, the event logs, the terminal locks), so they agree with the floor's meters.
* :func:`clear_link_lock` — a host clears only the lock-out it set (``host_disabled``) or the
  link's own (``host_link_lost``), never a tilt a person or the floor raised: those stay for a
  supervisor (:func:`tablejack.store.protections.clear_terminal`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.db import EventIn, Store
from tablejack.store.floor_models import LOCKS
from tablejack.store.models import EVENTS, LEDGER, ROUNDS
from tablejack.store.protections import TILT_RULE
from tablejack.store.vouchers import FloorRefusedError

__all__ = ["LINK_LOCKS", "MOVEMENTS", "CountsFold", "clear_link_lock", "terminal_counts", "winners"]

LINK_LOCKS = ("host_disabled", "host_link_lost", "handpay_pending")
"""The tilt codes a link raises and clears itself."""


def _of_account_log(round_id: str | None) -> str:
    return round_id[5:] if round_id and round_id.startswith("acct:") else ""


MOVEMENTS = ("bill_in", "voucher_in", "voucher_out")
"""The ledger kinds :class:`CountsFold` counts."""


class CountsFold:
    """The counts of :func:`terminal_counts` folded from the rows given: the one fold behind
    :func:`terminal_counts` (everything at once) and
    :class:`tablejack.store.meters_running.RunningMeters` (what is new since its last read).
    ``door_opens`` is not folded: it is read whole each time (the locks are few)."""

    def __init__(self) -> None:
        self.out: dict[str, dict[str, Any]] = {}
        self.won: set[tuple[str, str]] = set()
        """(round, player) already counted in ``games_won``."""

    def _of(self, terminal: str) -> dict[str, Any]:
        return self.out.setdefault(
            terminal,
            {"bills": {}, "vouchers_in_count": 0, "vouchers_out_count": 0, "games_won": 0},
        )

    def movements(self, rows: Iterable[tuple[str | None, str, int, int]]) -> None:
        """Fold ``(round_id, kind, amount, count)`` of bills and vouchers in and out (rows of
        another kind are skipped)."""
        for round_id, kind, amount, count in rows:
            terminal = _of_account_log(round_id)
            if not terminal or kind not in MOVEMENTS:
                continue
            meters = self._of(terminal)
            if kind == "bill_in":
                bills = meters["bills"]
                bills[int(amount)] = bills.get(int(amount), 0) + int(count)
            else:
                counter = "vouchers_in_count" if kind == "voucher_in" else "vouchers_out_count"
                meters[counter] += int(count)

    def games_won(
        self, rows: Iterable[tuple[str, str]], played: Mapping[tuple[str, str], str]
    ) -> None:
        """Fold ``(round_id, player)`` paid winnings in a completed round; ``played``: the EWT
        of each (round, player). A pair already counted is skipped."""
        for round_id, player in rows:
            if (round_id, player) in self.won:
                continue
            self.won.add((round_id, player))
            where = played.get((round_id, player))
            if where:
                self._of(str(where))["games_won"] += 1

    async def doors(self, connection: AsyncConnection) -> None:
        """Read ``door_opens`` (each EWT's ``door_open`` tilts) whole."""
        doors = (
            select(LOCKS.c.terminal, func.count()).where(LOCKS.c.code == "door_open")
        ).group_by(LOCKS.c.terminal)
        for terminal, count in (await connection.execute(doors)).all():
            self._of(terminal)["door_opens"] = int(count)

    def result(self) -> dict[str, dict[str, Any]]:
        """The counts so far (a copy)."""
        return {t: {**m, "bills": dict(m["bills"])} for t, m in self.out.items()}


def winners() -> Select[str, str]:
    """``(round_id, player)`` paid winnings in a completed round."""
    return (
        select(LEDGER.c.round_id, LEDGER.c.to_account)
        .join(ROUNDS, ROUNDS.c.id == LEDGER.c.round_id)
        .where((LEDGER.c.kind == "winnings") & (ROUNDS.c.status == "complete"))
        .distinct()
    )


async def terminal_counts(store: Store) -> dict[str, dict[str, Any]]:
    """Per EWT: ``bills`` ({cents: count}), ``vouchers_in_count``, ``vouchers_out_count``,
    ``games_won`` (completed rounds in which the EWT's player was paid winnings) and
    ``door_opens`` (its ``door_open`` tilts)."""
    movements = (
        select(LEDGER.c.round_id, LEDGER.c.kind, LEDGER.c.amount, func.count())
        .where(LEDGER.c.kind.in_(MOVEMENTS))
        .group_by(LEDGER.c.round_id, LEDGER.c.kind, LEDGER.c.amount)
    )
    where_played = (
        select(EVENTS.c.round_id, EVENTS.c.actor, func.min(EVENTS.c.terminal))
        .where(EVENTS.c.kind == "wager")
        .group_by(EVENTS.c.round_id, EVENTS.c.actor)
    )
    fold = CountsFold()
    async with store.engine.connect() as connection:
        fold.movements((await connection.execute(movements)).all())
        played = {(r[0], r[1]): r[2] for r in (await connection.execute(where_played)).all()}
        fold.games_won((await connection.execute(winners())).all(), played)
        await fold.doors(connection)
    return fold.result()


async def clear_link_lock(
    store: Store, terminal: str, code: str, *, by: str, at_us: int
) -> dict[str, Any] | None:
    """Clear the open locks of ``terminal`` with ``code`` (one of :data:`LINK_LOCKS`) — and
    only those: a tilt with another code stays. None when there was none; the clear otherwise
    (an event of the ``floor-tilts`` log and an audit entry, as a supervisor's clear)."""
    if code not in LINK_LOCKS:
        raise FloorRefusedError(
            "role", f"A link clears only its own locks {LINK_LOCKS}, not {code!r}.", TILT_RULE
        )
    async with store.transaction() as connection:
        moved = await connection.execute(
            update(LOCKS)
            .where(
                (LOCKS.c.terminal == terminal)
                & (LOCKS.c.code == code)
                & LOCKS.c.cleared_us.is_(None)
            )
            .values(
                cleared_us=at_us,
                cleared_by=by[:64],
                clear_code="link",
                clear_reason=f"{code} lifted by {by}"[:200],
            )
        )
    if moved.rowcount == 0:
        return None
    payload = {"terminal": terminal, "clear_code": "link", "code": code, "cleared": moved.rowcount}
    await store.commit_logged(
        "floor-tilts",
        EventIn("tilt_clear", payload, actor=by),
        [],
        None,
        owner="floor-tilts",
        log_kind="protections",
    )
    await store.audit(
        "tilt_clear",
        f"{terminal} {code} lifted by {by}",
        terminal=terminal,
        actor=by,
        rule=TILT_RULE,
    )
    return payload
