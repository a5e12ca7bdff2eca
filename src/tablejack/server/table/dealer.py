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
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from tablejack.core.cards import Card
from tablejack.core.errors import InvalidNotationError, TablejackError
from tablejack.server import visibility
from tablejack.server.table.bookkeeping import Books
from tablejack.server.table.errors import RefusedError, fault
from tablejack.server.table.replay import corrections, replay_round
from tablejack.server.table.steps import WritePath, applier
from tablejack.server.table.views import TableViews
from tablejack.store import EventIn, Step

__all__ = [
    "AUTOMATED_COMMANDS",
    "AUTOMATION_RULE",
    "CORRECTION_RULE",
    "MANUAL_RULE",
    "READER_LINES",
    "VOID_RULE",
    "Dealer",
]

log = logging.getLogger("tablejack.server")

VOID_RULE = "PA 633a.14"
CORRECTION_RULE = "PA 633a.14"
"""A wrong card corrected, or a misdeal declared: the irregularities of the rules of play
(§ 633a.14, whose text the project could not read: docs/server.md, "Irregularities", says what
the procedure is)."""
AUTOMATION_RULE = "table automation"
"""An automated table's console refusal: the server opens rounds, closes wagering and runs the
clock itself (docs/server.md, "Dealer console")."""
AUTOMATED_COMMANDS = ("open-round", "close-wagering", "countdown-expired")
MANUAL_RULE = "PA 633c.5(j)"
"""Cards are dealt from a shoe that reads them; entry by hand is the fallback."""
READER_LINES = ("reader", "reader-tcp", "shoe")
"""Where a card comes from the card-reading shoe: the reader line (over HTTP, over TCP) and the
demonstration's simulated shoe. Every other path (the console) is entry by hand."""


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
        """The dealer console: ``open-round``, ``close-wagering``, ``card`` (entry by hand),
        ``shoe-draw`` (the simulated shoe), ``countdown-expired``. On an automated table the server opens the rounds, closes
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
            return await self.reader_card(
                card, by, "console" if terminal in READER_LINES else terminal
            )
        if command == "shoe-draw":
            return await self.shoe_draw(by)
        if command not in ("close-wagering", "countdown-expired"):
            raise RefusedError(
                "invalid",
                f"Unknown dealer command {command!r}; the console sends open-round, "
                "close-wagering, card, shoe-draw, countdown-expired.",
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

    def manual_allowed(self) -> bool:
        """Whether the console may enter a card by hand now: at a table whose operator left it
        open (``manual_entry = "open"``), or in the round a supervisor allowed it for."""
        if self.table.config.manual_entry == "open":
            return True
        return (
            self.table.manual_entry_round is not None
            and self.table.manual_entry_round == self.table.round_id
        )

    def card_wanted(self) -> bool:
        """Whether the round in progress waits for a card."""
        round_ = self.table.round
        return round_ is not None and not round_.is_complete and round_.card_request is not None

    async def reader_card(self, code: str, by: str, terminal: str = "reader") -> dict[str, Any]:
        """A card read by the card-reading shoe (or entered at the console). A card the shoe's
        line reads that the engine did not ask for, or one with no copy left in the shoe's
        inventory (or one copy too many for the decks), stops the round as an irregularity and
        tilts the table (PA 605a: ``card_not_requested``, ``card_inventory``). Every card read
        is taken out of the inventory, whatever becomes of it (:attr:`card_inventory`).

        A card entered by hand (``terminal`` other than the shoe's line, :data:`READER_LINES`)
        is a fallback (PA 633c.5(j): cards are dealt from a shoe that reads them): taken only
        while :meth:`manual_allowed`, only when a card is wanted and only one the engine and
        the shoe's count accept; anything else is refused and changes nothing — a stray click
        never stops the table. A card taken so is recorded with ``source: manual``."""
        try:
            card = Card.parse(code.strip().upper())
        except InvalidNotationError as error:
            raise RefusedError("invalid", error.message, "PA 633c.5(j)") from None
        if terminal not in READER_LINES:
            return await self.manual_card(card, by, terminal)
        async with self.table.lock:
            self.refuse_virtual()
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
            reply = await self.deal(card, by, terminal, source=terminal)
        self.changed()
        return reply

    def refuse_virtual(self) -> None:
        """A table that deals from its virtual shoe takes no card from a reader or the console
        while a round is dealt."""
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

    async def manual_card(self, card: Card, by: str, terminal: str) -> dict[str, Any]:
        """A card entered by hand at the console (:meth:`reader_card`): every refusal here
        leaves the table, its round and the shoe's count as they were."""
        async with self.table.lock:
            self.refuse_virtual()
            if self.table.status == "halted":
                raise RefusedError(
                    "halted",
                    f"Table {self.table.id} is stopped: {self.table.halt_reason}",
                    "PA 633a.14",
                )
            if not self.card_wanted():
                raise RefusedError(
                    "not_wanted",
                    f"No card is wanted now; {card.code} was not taken.",
                    MANUAL_RULE,
                )
            if not self.manual_allowed():
                raise RefusedError(
                    "manual_entry",
                    "Cards come from the card-reading shoe; a supervisor allows entry by hand "
                    f"for the round. {card.code} was not taken.",
                    MANUAL_RULE,
                )
            round_ = self.table.round
            assert round_ is not None  # card_wanted
            try:
                round_.verify_dealing_card(card)
            except TablejackError as error:
                raise RefusedError(
                    "not_wanted", f"{card.code} was not taken: {error.message}", error.rule
                ) from None
            inventory = self.table.inventory
            if inventory is not None and inventory.remaining()[card.code] <= 0:
                raise RefusedError(
                    "not_in_shoe",
                    f"The shoe's count holds no {card.code} any more; it was not taken.",
                    self.table.card_inventory.rule,
                )
            self.table.card_inventory.take(card.code)
            reply = await self.deal(card, by, terminal, source="manual")
        self.changed()
        return reply

    async def deal(self, card: Card, by: str, terminal: str, *, source: str) -> dict[str, Any]:
        """Write the card the engine accepted (the caller holds the table's lock and took it
        out of the inventory); a storage error puts it back (it is read again)."""
        try:
            return await self.steps.run(
                lambda r: r.deal_card(card),
                EventIn(
                    "card",
                    {"code": card.code, "read_us": self.table.floor.now_us(), "source": source},
                    actor=by,
                    terminal=terminal,
                ),
            )
        except RefusedError as refusal:
            if refusal.code == "storage_error" and self.table.inventory is not None:
                self.table.inventory.give_back(card.code)  # not recorded: it is read again
            raise

    async def correct_card(self, code: str, by: str, reason: str) -> dict[str, Any]:
        """A wrong card corrected with a supervisor's approval (``by``; docs/server.md,
        "Irregularities"): the round's last card is taken to be ``code`` — the round becomes
        the one that card would have made, its event ``card_correction`` (the card it replaces,
        both codes, the reason) in the round's log beside the card read, and the shoe's count
        gives back the one and takes the other. Refused, changing nothing, when the round is
        not in progress, the table deals from the server's own shoe, the card is face down (the
        refusal names no card), a wager or a decision came after it, it settled a wager, or
        ``code`` could not be that card: the round is then voided as a misdeal."""
        table = self.table
        async with table.lock:
            round_ = table.round
            if round_ is None or round_.is_complete or table.round_id is None:
                raise RefusedError(
                    "round",
                    "No round in progress: a card is corrected in its round.",
                    CORRECTION_RULE,
                )
            if table.shoe is not None:
                raise RefusedError(
                    "source",
                    f"Table {table.id} deals from the server's shoe: no card of it is entered, "
                    "none is corrected.",
                    CORRECTION_RULE,
                )
            try:
                card = Card.parse(code)
            except InvalidNotationError:
                raise RefusedError(
                    "invalid", f"{code!r} is not a card (AS, 10H, …).", CORRECTION_RULE
                ) from None
            events = await table.floor.store.events(table.round_id)
            dealt = [place for place, event in enumerate(events) if event.kind == "card"]
            if not dealt:
                raise RefusedError(
                    "no_card", f"No card was dealt in round {table.round_id} yet.", CORRECTION_RULE
                )
            last = events[dealt[-1]]
            if len(dealt) - 1 in visibility.face_down(round_):  # nobody reads it (633c.5(o))
                raise RefusedError(
                    "face_down",
                    "The last card is face down: it is not corrected (nobody reads it); void "
                    "the round as a misdeal if it is wrong.",
                    CORRECTION_RULE,
                )
            was = corrections(events).get(last.seq, str(last.payload["code"]))
            if any(event.kind in ("wager", "command") for event in events[dealt[-1] + 1 :]):
                raise RefusedError(
                    "acted",
                    f"A decision came after the card {was}: it is not corrected now; void the "
                    "round as a misdeal.",
                    CORRECTION_RULE,
                )
            if card.code == was:
                raise RefusedError("same", f"The card is {was} already.", CORRECTION_RULE)
            work = replay_round(events[: dealt[-1]], table.adapter)
            if len(work.settlements) != len(round_.settlements):
                raise RefusedError(
                    "settled",
                    f"The card {was} settled a wager: it is not corrected; void the round as a "
                    "misdeal.",
                    CORRECTION_RULE,
                )
            try:
                work.verify_dealing_card(card)
                work.deal_card(card)
            except TablejackError as error:
                raise RefusedError(
                    "invalid", f"{card.code} cannot be that card: {error.message}", error.rule
                ) from None
            inventory = table.inventory
            if inventory is not None:
                inventory.give_back(was)
                if inventory.remaining()[card.code] <= 0:
                    table.card_inventory.take(was)
                    raise RefusedError(
                        "not_in_shoe",
                        f"The shoe's count holds no {card.code} any more; nothing was corrected.",
                        table.card_inventory.rule,
                    )
                table.card_inventory.take(card.code)
            event = EventIn(
                "card_correction",
                {"replaces": last.seq, "was": was, "code": card.code, "reason": reason},
                actor=by,
            )
            try:
                records = await self.steps.commit(work, [event])
            except Exception as error:
                if inventory is not None:
                    inventory.give_back(card.code)
                    table.card_inventory.take(was)
                raise await table.lockout.storage_fault(error) from error
            await self._audit_quietly(
                "card_correction",
                f"round {table.round_id}: card {last.seq} {was} corrected to {card.code}: {reason}",
                by,
                CORRECTION_RULE,
            )
        self.changed()
        return {
            "ok": True,
            "round_id": table.round_id,
            "seq": records[-1].seq if records else None,
            "replaces": last.seq,
            "was": was,
            "code": card.code,
        }

    async def shoe_draw(self, by: str) -> dict[str, Any]:
        """The demonstration's card-reading shoe (:attr:`TableConfig.simulated_shoe`): the next
        card comes out of the loaded shoe's own count, drawn by the server's cryptographic
        generator, and is read on the shoe's line like any card a shoe reads. The answer names
        no card: a face-down card stays unseen by the dealer too (PA 633c.5(o))."""
        if not self.table.config.simulated_shoe:
            raise RefusedError(
                "source",
                f"Table {self.table.id} has no simulated shoe: its cards come from the "
                "card-reading shoe on the reader line.",
                "PA 633c.5(j)",
            )
        inventory = self.table.inventory
        if inventory is None or not inventory.remaining():
            raise RefusedError(
                "procedure",
                "No card is left in a loaded shoe: load the shoe first.",
                self.table.card_inventory.rule,
            )
        if self.table.status != "open" or not self.card_wanted():
            raise RefusedError("not_wanted", "No card is wanted now; none was drawn.", MANUAL_RULE)
        left = inventory.remaining()
        code = secrets.choice(sorted(left.elements()))
        reply = await self.reader_card(code, by, "shoe")
        return {key: value for key, value in reply.items() if key != "card"}

    async def allow_manual_entry(self, by: str, reason: str) -> dict[str, Any]:
        """A supervisor allows entry by hand for the round in progress (the shoe cannot read a
        card): recorded in the round's log (``manual_entry``, with the reason) and audited."""
        async with self.table.lock:
            round_ = self.table.round
            round_id = self.table.round_id
            if round_ is None or round_.is_complete or round_id is None:
                raise RefusedError("round", "No round in progress.", MANUAL_RULE)
            if self.table.config.source != "reader":
                raise RefusedError(
                    "source", f"Table {self.table.id} deals from its virtual shoe.", "PA 633c.5(j)"
                )
            if self.table.manual_entry_round != round_id:
                await self.table.floor.store.commit(
                    Step(
                        round_id,
                        events=[EventIn("manual_entry", {"reason": reason}, actor=by)],
                        at_us=self.table.floor.now_us(),
                        fence=self.table.fence,
                    )
                )
                self.table.manual_entry_round = round_id
        await self._audit_quietly(
            "manual_entry_allowed", f"round {round_id}: {reason}", by, MANUAL_RULE
        )
        self.changed()
        return {"ok": True, "round_id": round_id, "manual_entry": True}

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

    async def void(self, by: str, reason: str, *, misdeal: bool = False) -> dict[str, Any]:
        """Void the round in progress and refund every unsettled wager (supervisor); a
        ``misdeal`` is such a void, recorded as one (``misdeal: true`` in its event). If the
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
                voided = await self.void_round(reason, by=by, misdeal=misdeal)
        finally:
            self.changed()  # the clock, the automated dealer and the terminals follow
        return {"ok": True, "voided": voided}

    async def void_round(self, reason: str, *, by: str, misdeal: bool = False) -> str | None:
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
                    }
                    | ({"misdeal": True} if misdeal else {}),
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
        self.tell_voided(round_id, reason, [(t.to_account, t.amount) for t in transfers])
        self.table.round = None
        self.table.books = Books(self.table.id)
        self.table.void_failure = None
        if self.table.status == "halted":
            self.settle_status()  # open unless a tilt is still active (PA 605a)
        await self._audit_quietly("misdeal" if misdeal else "void", reason, by)
        return round_id

    def tell_voided(self, round_id: str, reason: str, refunds: list[tuple[str, int]]) -> None:
        """Tell every player's terminal at the table that ``round_id`` was voided, why, and
        what came back to his account (the information policy's
        :func:`~tablejack.server.visibility.void_notice`)."""
        for subscriber in list(self.table.subscribers):
            viewer = visibility.Viewer(subscriber.role, subscriber.subject, subscriber.terminal)
            notice = visibility.void_notice(viewer, self.table.id, round_id, reason, refunds)
            if notice is not None:
                subscriber.push(notice)

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
