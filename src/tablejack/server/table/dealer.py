"""A table's dealer input: the console's commands, the cards the card-reading shoe reads (or
the console types), the irregularities that stop a round, and the voids that end one.

A card the engine did not ask for, or one the shoe's inventory holds no copy of, stops the round
as an irregularity and tilts the table (PA 605a); a supervisor voids the round, every unsettled
wager refunded (PA 633a.14). :class:`Dealer` belongs to one
:class:`~tablejack.server.table.table.Table` and writes through its
:class:`~tablejack.server.table.steps.WritePath`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from tablejack.core.cards import Card
from tablejack.core.errors import InvalidNotationError, TablejackError
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.errors import RefusedError, fault
from tablejack.server.table.steps import WritePath, applier
from tablejack.server.table.views import TableViews
from tablejack.store import EventIn, Step

__all__ = ["AUTOMATED_COMMANDS", "AUTOMATION_RULE", "VOID_RULE", "Dealer"]

log = logging.getLogger("tablejack.server")

VOID_RULE = "PA 633a.14"
AUTOMATION_RULE = "table automation"
"""An automated table's console refusal: the server opens rounds, closes wagering and runs the
clock itself (docs/server.md, "Dealer console")."""
AUTOMATED_COMMANDS = ("open-round", "close-wagering", "countdown-expired")


class Dealer:
    """The dealer input of ``table``: ``steps`` writes, ``open_round`` opens a round,
    ``changed`` announces a change."""

    def __init__(
        self,
        table: TableViews,
        steps: WritePath,
        *,
        open_round: Callable[[str], Awaitable[str]],
        changed: Callable[[], None],
    ) -> None:
        self.table = table
        self.steps = steps
        self.open_round = open_round
        self.changed = changed

    async def command(
        self, command: str, by: str, terminal: str = "console", card: str | None = None
    ) -> dict[str, Any]:
        """The dealer console: ``open-round``, ``close-wagering``, ``card``,
        ``countdown-expired``. On an automated table the server opens the rounds, closes
        wagering ``wagering_seconds`` after the first wager and runs the countdown: the first
        three are refused there with a sentence saying so (code ``automated``)."""
        if command in AUTOMATED_COMMANDS and self.table.config.automated:
            raise self.automated_refusal(command)
        if command == "open-round":
            round_id = await self.open_round(by)
            return {"ok": True, "round_id": round_id}
        if command == "card":
            if card is None:
                raise RefusedError("invalid", "A card command needs the card code.", "PA 633c.5(j)")
            return await self.reader_card(card, by, terminal)
        if command not in ("close-wagering", "countdown-expired"):
            raise RefusedError(
                "invalid",
                f"Unknown dealer command {command!r}; the console sends open-round, "
                "close-wagering, card, countdown-expired.",
                "dealer console",
            )
        async with self.table.lock:
            text = f"dealer {command}"
            reply = await self.steps.run(
                applier(text),
                EventIn("command", {"text": text}, actor=by, terminal=terminal),
            )
        self.changed()
        return reply

    def automated_refusal(self, command: str) -> RefusedError:
        if self.table.status != "open":
            return RefusedError(
                "table", f"Table {self.table.id} is {self.table.status}.", "table status"
            )
        what = {
            "open-round": "opens its rounds",
            "close-wagering": "closes wagering",
            "countdown-expired": "runs the countdown",
        }[command]
        return RefusedError(
            "automated",
            f"Table {self.table.id} is automated: the server {what} itself, not the console. "
            f"{self.table.automation()}",
            AUTOMATION_RULE,
        )

    async def reader_card(self, code: str, by: str, terminal: str = "reader") -> dict[str, Any]:
        """A card read by the card-reading shoe (or typed on the console). A card the engine
        did not ask for, or one with no copy left in the shoe's inventory (or one copy too many
        for the decks), stops the round as an irregularity and tilts the table (PA 605a:
        ``card_not_requested``, ``card_inventory``). Every card read is taken out of the
        inventory, whatever becomes of it (:attr:`card_inventory`)."""
        try:
            card = Card.parse(code.strip().upper())
        except InvalidNotationError as error:
            raise RefusedError("invalid", error.message, "PA 633c.5(j)") from None
        async with self.table.lock:
            if (
                self.table.shoe is not None
                and self.table.round is not None
                and not self.table.round.is_complete
            ):
                raise RefusedError(
                    "source",
                    f"Table {self.table.id} deals from its virtual shoe; reader cards are not taken.",
                    "PA 633c.5(j)",
                )
            held = self.table.card_inventory.take(card.code)
            if self.table.status == "halted" and held:
                await self.table.floor.store.commit(
                    Step(
                        self.table.procedures_id,
                        events=[
                            EventIn(
                                "card_refused",
                                {"code": card.code, "round_id": self.table.round_id},
                                actor=by,
                                terminal=terminal,
                            )
                        ],
                        at_us=self.table.floor.now_us(),
                        fence=self.table.fence,
                    )
                )
                raise RefusedError(
                    "halted",
                    f"Table {self.table.id} is halted: {self.table.halt_reason}",
                    "PA 633a.14",
                )
            if not held:
                message = (
                    f"{card.code} was read but the shoe's inventory holds no copy of it any "
                    "more (a duplicate or an over-full shoe)"
                )
                rule = self.table.card_inventory.rule
                await self._irregularity(message, rule, by, code=card.code, tilt="card_inventory")
                raise RefusedError("card_inventory", f"{message}.", rule)
            if self.table.round is None or self.table.round.is_complete:
                await self._irregularity(
                    f"{card.code} was read but no round is being dealt",
                    "PA 633a.14",
                    by,
                    code=card.code,
                )
                raise RefusedError("irregularity", f"{card.code} was not asked for.", "PA 633a.14")
            try:
                self.table.round.verify_dealing_card(card)
            except TablejackError as error:
                copies = error.rule == self.table.rules.decks_clause
                await self._irregularity(
                    f"{card.code} refused: {error.message}",
                    error.rule or "PA 633a.14",
                    by,
                    code=card.code,
                    tilt="card_inventory" if copies else "card_not_requested",
                )
                raise RefusedError("irregularity", error.message, error.rule) from None
            try:
                reply = await self.steps.run(
                    lambda r: r.deal_card(card),
                    EventIn(
                        "card",
                        {
                            "code": card.code,
                            "read_us": self.table.floor.now_us(),
                            "source": terminal,
                        },
                        actor=by,
                        terminal=terminal,
                    ),
                )
            except RefusedError as refusal:
                if refusal.code == "storage_error" and self.table.inventory is not None:
                    self.table.inventory.give_back(card.code)  # not recorded: it is read again
                raise
        self.changed()
        return reply

    async def _irregularity(
        self,
        message: str,
        rule: str,
        by: str,
        *,
        code: str | None = None,
        tilt: str = "card_not_requested",
    ) -> None:
        """Stop the round: log the irregularity (with the card ``code`` read, which is out of
        the shoe) and tilt the table (``tilt``); a supervisor voids the round and clears the
        tilt."""
        self.table.halt_reason = message
        self.table.status = "halted"
        payload: dict[str, Any] = {"message": message, "rule": rule}
        if code is not None:
            payload["code"] = code
        in_round = (
            self.table.round_id is not None
            and self.table.round is not None
            and not self.table.round.is_complete
        )
        if in_round:
            self.table.irregular_round = self.table.round_id
        try:
            await self.table.floor.store.commit(
                Step(
                    self.table.round_id
                    if in_round and self.table.round_id
                    else self.table.procedures_id,
                    events=[EventIn("irregularity", payload, actor=by)],
                    status="irregular" if in_round else None,
                    at_us=self.table.floor.now_us(),
                    fence=self.table.fence,
                )
            )
        except Exception as error:  # the table stops all the same; the tilt says why
            failed = fault(error)
            log.error("table %s: the irregularity could not be written: %s", self.table.id, failed)
            message = f"{message} (the irregularity could not be written: {failed})"
            await self._reload_quietly()
        await self._audit_quietly("irregularity", message, by, rule)
        await self.table.lockout.raise_tilt(tilt, message, by=by, rule=rule)
        self.changed()

    def settle_status(self) -> None:
        """Halted while a table tilt is active, an irregular round awaits its void or a void
        that could not be written awaits its retry; else open."""
        active = self.table.table_tilts()
        irregular = (
            self.table.irregular_round is not None
            and self.table.irregular_round == self.table.round_id
            and self.table.round is not None
            and not self.table.round.is_complete
        )
        if active:
            self.table.status = "halted"
            self.table.halt_reason = "; ".join(f"tilt {t['code']}: {t['message']}" for t in active)
        elif self.table.void_failure is not None and self.table.round is not None:
            self.table.status = "halted"
            self.table.halt_reason = (
                f"round {self.table.round_id} was not voided ({self.table.void_failure}); a supervisor must "
                "void it again"
            )
        elif irregular:
            self.table.status = "halted"
            self.table.halt_reason = (
                f"irregularity in round {self.table.round_id}; a supervisor must void the round"
            )
        elif self.table.status == "halted":
            self.table.status = "open"
            self.table.halt_reason = ""

    async def void(self, by: str, reason: str) -> dict[str, Any]:
        """Void the round in progress and refund every unsettled wager (supervisor). If the
        store fails, nothing is refunded, the round is held (halted, see :meth:`waiting_for`)
        and the refusal (code ``storage_error``) says what failed; the supervisor voids it
        again."""
        try:
            async with self.table.lock:
                if self.table.round is None or self.table.round.is_complete:
                    if self.table.status == "halted":
                        self.settle_status()  # open unless a tilt is still active (PA 605a)
                        return {"ok": True, "voided": None}
                    raise RefusedError("round", "No round in progress to void.", VOID_RULE)
                voided = await self.void_round(reason, by=by)
        finally:
            self.changed()  # the clock, the automated dealer and the terminals follow
        return {"ok": True, "voided": voided}

    async def void_round(self, reason: str, *, by: str) -> str | None:
        """Write the round's ``void`` (every unsettled wager refunded) and drop the round. A
        write that fails leaves the round as its log has it and raises the refusal
        (:meth:`_void_failed`); a void that was written although the store answered with an
        error is found in the log, here or on the retry, and never written twice."""
        round_id = self.table.round_id
        assert round_id is not None
        transfers, meters = self.table.books.refunds(
            self.table.round.wagers, self.table.round.settlements
        )
        step = Step(
            round_id,
            events=[
                EventIn(
                    "void",
                    {
                        "reason": reason,
                        "refunds": [
                            {"player": t.to_account, "amount": t.amount, "wager_id": t.wager_id}
                            for t in transfers
                        ],
                    },
                    actor=by,
                )
            ],
            transfers=transfers,
            meters=meters,
            status="voided",
            at_us=self.table.floor.now_us(),
            actor=self.table.actor,
            fence=self.table.fence,
        )
        try:
            if self.table.void_failure is None or not await self._voided_in_log(round_id):
                await self.table.floor.store.commit(step)
        except Exception as error:
            if not await self._voided_in_log(round_id, quiet=True):
                raise await self._void_failed(round_id, error) from error
        self.table.floor.book(transfers)
        self.table.round = None
        self.table.books = Books(self.table.id)
        self.table.void_failure = None
        if self.table.status == "halted":
            self.settle_status()  # open unless a tilt is still active (PA 605a)
        await self._audit_quietly("void", reason, by)
        return round_id

    async def _voided_in_log(self, round_id: str, *, quiet: bool = False) -> bool:
        """Whether the log already holds the round's void (``quiet``: False if the store
        does not answer)."""
        try:
            row = await self.table.floor.store.round(round_id)
        except Exception:
            if not quiet:
                raise
            log.exception(
                "table %s: the store does not answer for round %s", self.table.id, round_id
            )
            return False
        return row is not None and row["status"] == "voided"

    async def _void_failed(self, round_id: str, error: Exception) -> RefusedError:
        """The void of ``round_id`` could not be written: rebuild the round from its log (as
        :meth:`_run` does), hold it — the table halts until a supervisor voids it again — and
        say what failed."""
        failed = fault(error)
        log.error(
            "table %s: the void of round %s could not be written: %s",
            self.table.id,
            round_id,
            failed,
        )
        await self._reload_quietly()
        self.table.void_failure = f"the void could not be written: {failed}"
        self.settle_status()
        await self._audit_quietly(
            "void_failed", f"round {round_id}: {self.table.void_failure}", "server"
        )
        return RefusedError(
            "storage_error",
            f"Round {round_id} was not voided: the store failed ({failed}). Nothing was "
            "refunded; the table holds the round until it is voided again.",
            VOID_RULE,
        )

    async def _reload_quietly(self) -> None:
        """:meth:`reload`, and if the store does not answer, remember to reload later."""
        try:
            await self.steps.reload()
        except Exception:
            self.table.needs_reload = True
            log.exception("table %s: the round could not be rebuilt from its log", self.table.id)

    async def _audit_quietly(self, kind: str, message: str, by: str, rule: str = "") -> None:
        """An audit entry; a store that refuses it is logged, and the step it reports stands."""
        try:
            await self.table.floor.store.audit(
                kind, message, table_id=self.table.id, actor=by, rule=rule
            )
        except Exception:
            log.exception("table %s: the audit entry %r could not be written", self.table.id, kind)
