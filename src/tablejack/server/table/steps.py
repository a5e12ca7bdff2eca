"""A table's write path: a step applied to the round, the cards the virtual shoe deals for it and
the round's completion, the money it moves booked, all committed in ONE transaction, and only
then adopted; a step whose commit fails leaves the table as it was (the round rebuilt from its
log, which never saw the step).

:class:`WritePath` belongs to one :class:`~tablejack.server.table.table.Table`; the batches of
terminal requests (:mod:`~tablejack.server.table.batches`), the dealer's input
(:mod:`~tablejack.server.table.dealer`) and the clock (:mod:`~tablejack.server.table.clock`)
all write through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tablejack.core.errors import TablejackError
from tablejack.core.money import format_cents
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.errors import RefusedError
from tablejack.server.table.replay import apply_command, replay_round
from tablejack.server.table.requests import Reply, ReplyCache
from tablejack.server.table.views import TableViews
from tablejack.store import (
    EventIn,
    EventRecord,
    InsufficientFundsError,
    LimitRefusedError,
    Step,
    Transfer,
)

__all__ = ["Consequences", "WritePath", "applier", "bind_postings"]

Meter = tuple[str, str, int, int]


def bind_postings(moved: list[Transfer], request: int, last: int) -> list[Transfer]:
    """Name the event that caused each posting: a wager (or a double, split, insurance) the
    event of the player's own request, so the policy can see that the money moved is his; a
    settlement the step's last event (the card or the ``complete`` that decided it)."""
    return [dataclasses.replace(t, event=request if t.kind == "wager" else last) for t in moved]


def applier(text: str) -> Callable[[Any], None]:
    """A step that applies the engine command ``text`` to the round."""

    def apply(round_: Any) -> None:
        apply_command(round_, text)

    return apply


@dataclass(frozen=True, slots=True)
class Consequences:
    """What a step brings about besides its own event (see :meth:`WritePath.consequences`)."""

    moved: list[Transfer]
    meters: list[Meter]
    escrowed: dict[int, int]
    settled: int
    status: str | None
    """``complete`` when the step completed the round (its ``complete`` event appended)."""


class WritePath:
    """The write path of ``table`` (its state: the round, its books, its shoe, its log's last
    ``seq``); ``replies`` keeps the answers to terminal requests for their repeats."""

    def __init__(self, table: TableViews, replies: ReplyCache) -> None:
        self.table = table
        self.replies = replies

    def consequences(
        self, work: Any, events: list[EventIn], books: Books, *, completed: bool = False
    ) -> Consequences:
        """After a step on ``work``: the cards the virtual shoe must deal (each a ``card``
        event appended to ``events``), the money moved and the meters raised since ``books``,
        and, when the round is complete (and not ``completed`` already), its ``complete``
        event with the settlements."""
        table = self.table
        if table.shoe is not None:
            while work.card_request is not None:
                card = table.shoe.draw()
                work.deal_card(card)
                events.append(
                    EventIn(
                        "card",
                        {"code": card.code, "read_us": table.floor.now_us(), "source": "shoe"},
                        actor="shoe",
                    )
                )
        moved, meters, escrowed, settled = books.diff(work.wagers, work.settlements)
        status = None
        if work.is_complete and not completed:
            status = "complete"
            events.append(
                EventIn(
                    "complete",
                    {
                        "house_net": work.house_net(),
                        "settlements": [s.to_json() for s in work.settlements],
                    },
                )
            )
        return Consequences(moved, meters, escrowed, settled, status)

    async def commit_round(
        self,
        events: list[EventIn],
        transfers: list[Transfer],
        meters: list[Meter],
        status: str | None,
    ) -> list[EventRecord]:
        """Write events of the open round with the money they move and the meters they raise,
        as this table, under its lease (the store refuses the step when the lease moved on)."""
        table = self.table
        assert table.round_id is not None
        return await table.floor.store.commit(
            Step(
                table.round_id,
                events,
                transfers,
                meters,
                status=status,
                at_us=table.floor.now_us(),
                actor=table.actor,
                fence=table.fence,
            )
        )

    async def commit(self, work: Any, events: list[EventIn]) -> list[EventRecord]:
        """Deal what the virtual shoe must deal, book the money, commit, adopt ``work``."""
        table = self.table
        shoe = table.shoe
        mark = shoe.mark() if shoe is not None else 0
        try:
            step = self.consequences(work, events, table.books)
            if not events and not step.moved:
                return []
            transfers = bind_postings(step.moved, 0, len(events) - 1)
            table.floor.check_funds(transfers)
            records = await self.commit_round(events, transfers, step.meters, step.status)
        except BaseException:
            if shoe is not None:
                shoe.reset(mark)
            raise
        self.adopt(work, step.escrowed, step.settled, records, transfers)
        return records

    def adopt(
        self,
        work: Any,
        escrowed: dict[int, int],
        settled: int,
        records: list[EventRecord],
        transfers: list[Transfer],
    ) -> None:
        """A committed step's round, books, last ``seq`` and balances become the table's."""
        table = self.table
        table.books.accept(escrowed, settled)
        table.round = work
        if records:
            table.last_seq = records[-1].seq
        table.floor.book(transfers)

    def refusal(self) -> RefusedError | None:
        """Why no step runs now (the table halted, no round open), or None."""
        table = self.table
        if table.status == "halted":
            return RefusedError(
                "halted", f"Table {table.id} is halted: {table.halt_reason}", "PA 633a.14"
            )
        if table.round is None:
            return RefusedError("round", f"No round is open at table {table.id}.", "PA 633c.5(n)")
        return None

    async def run(
        self,
        apply: Callable[[Any], Any],
        event: EventIn | None = None,
        *,
        player: str = "",
        command_id: str | None = None,
    ) -> Reply:
        """Apply one request to the round, commit it with its consequences, answer it (the
        caller holds the table's lock). ``apply`` mutates the round; it may return the event
        to log (else ``event``)."""
        table = self.table
        seen = self.replies.repeat(player, command_id)
        if seen is not None:
            return seen
        refused = self.refusal()
        if refused is not None:
            raise refused
        work = table.round
        try:
            made = apply(work)
        except TablejackError as error:
            raise RefusedError.from_engine(error) from None
        logged = made if isinstance(made, EventIn) else event
        assert logged is not None
        try:
            records = await self.commit(work, [logged])
        except InsufficientFundsError as error:
            await self.reload()
            raise RefusedError(
                "balance",
                f"The wager needs {format_cents(error.needed)}; the account holds "
                f"{format_cents(error.balance)}.",
                "account balance",
            ) from None
        except LimitRefusedError as error:  # a limit or self-exclusion, held by the store
            await self.reload()
            raise RefusedError(error.code, error.message, error.rule) from None
        except Exception as error:  # the store failed: a storage_error tilt (PA 605a)
            raise await table.lockout.storage_fault(error) from error
        reply = {
            "ok": True,
            "round_id": table.round_id,
            "seq": records[-1].seq if records else None,
        }
        self.replies.remember(player, command_id, reply)
        return reply

    async def reload(self) -> None:
        """Rebuild the round from the log after a failed commit."""
        table = self.table
        if table.round_id is None:
            return
        events = await table.floor.store.events(table.round_id)
        table.round = replay_round(events, table.adapter)
        table.books = Books(
            table.id, {w.id: w.amount for w in table.round.wagers}, len(table.round.settlements)
        )
