"""Player protections at the terminal (PA Chapter 605a): the double confirmation of a large
wager, repeat last bet, and the terminal's language catalog.

* **Double confirmation.** A table's ``confirm_above`` (cents, in its configuration) is the
  amount above which a wager must be confirmed a second time: the ``wager`` (or ``repeat``)
  message carries ``"confirm": true``. Without it the server answers an ``error`` frame with
  code ``confirm`` (rule :data:`CONFIRM_RULE`, and the ``amount`` to confirm), audits it and
  applies nothing; the terminal asks the player again and resends the message confirmed.
* **Repeat last bet.** ``{"type": "repeat"}`` places, in the round now in wagering, the wagers
  (Blackjack and side wagers, the same amounts, a multi-action table's spots) the player placed
  in his last round at the table. That round is found in the store (the player's last wager
  row into the table's escrow), so the repeat works after a reconnect or a restart. It is
  all-or-nothing: every wager is first tried on a copy of the round (the engine's limits and
  phase), the total against the balance and the player's limits, the total against
  ``confirm_above`` (a repeat is not a confirmation in itself); only then are the wagers queued
  together, each through the normal wager path, so the table applies them in one batch.
* **Language catalog.** ``GET /static/i18n/{lang}.json``: the terminal's strings per language
  (:data:`LANGUAGES`), served by :mod:`tablejack.server.http.languages`.
"""

from __future__ import annotations

import asyncio
import copy
import weakref
from collections import OrderedDict
from importlib import resources
from typing import Any

from tablejack.core.errors import TablejackError
from tablejack.core.money import format_cents
from tablejack.server.duties.protections import Protections
from tablejack.server.floor.floor import Connection, Floor
from tablejack.server.support.protocol import Repeat, WagerChange, WagerMessage
from tablejack.server.table import RefusedError, Table
from tablejack.store.recall import last_wager_round

__all__ = [
    "CONFIRM_RULE",
    "LANGUAGES",
    "REPEAT_RULE",
    "ConfirmationRequiredError",
    "DetailedRefusalError",
    "TerminalFeatures",
    "check_confirmation",
    "confirm_change",
    "confirm_wager",
    "last_wagers",
]

CONFIRM_RULE = "PA 605a double confirmation"
REPEAT_RULE = "PA 605a repeat last bet"
LANGUAGES = ("en", "es")
"""The languages of the terminal's catalog (``static/i18n/<lang>.json``); English first."""

I18N = resources.files("tablejack.server") / "static" / "i18n"


class DetailedRefusalError(RefusedError):
    """A refusal whose ``details`` go into the error frame beside its code and rule."""

    def __init__(self, code: str, message: str, rule: str, details: dict[str, Any]) -> None:
        super().__init__(code, message, rule)
        self.details = details


class ConfirmationRequiredError(DetailedRefusalError):
    """A wager above the table's ``confirm_above`` without ``"confirm": true``; the error
    frame carries the ``amount`` and the configured ``confirm_above``."""

    def __init__(self, amount: int, limit: int, what: str = "A wager") -> None:
        super().__init__(
            "confirm",
            f"{what} of {format_cents(amount)} is above {format_cents(limit)}; the player "
            f"must confirm it a second time ({CONFIRM_RULE}).",
            CONFIRM_RULE,
            {"amount": amount, "confirm_above": limit},
        )


def check_confirmation(
    table: Table, amount: int, confirm: bool | None, what: str = "A wager"
) -> None:
    """Refuse ``amount`` above the table's ``confirm_above`` unless confirmed.

    >>> class T:
    ...     class config:
    ...         confirm_above = 50_000
    >>> check_confirmation(T(), 50_000, None)
    >>> check_confirmation(T(), 50_001, True)
    >>> check_confirmation(T(), 50_001, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tablejack.server.duties.terminal_features.ConfirmationRequiredError: A wager of $500.01 is above...
    """
    limit = table.config.confirm_above
    if limit is not None and amount > limit and confirm is not True:
        raise ConfirmationRequiredError(amount, limit, what)


def confirm_wager(table: Table, connection: Connection, message: WagerMessage) -> None:
    """A terminal's wager above the table's ``confirm_above`` without ``"confirm": true``:
    first every check the table would make (status, wagering closed, the table's limits, the
    position, the balance: :meth:`Table.try_wager`), so a wager the table would refuse is
    refused for that and never asked twice; then the request for the second confirmation. A
    wager that needs none is not tried twice."""
    limit = table.config.confirm_above
    if limit is None or message.amount <= limit or message.confirm is True:
        return
    table.try_wager(
        connection.subject, connection.terminal, message.kind, message.amount, message.spots
    )
    raise ConfirmationRequiredError(message.amount, limit)


async def last_wagers(
    floor: Floor, table: Table, player: str
) -> tuple[str, list[dict[str, Any]]] | None:
    """The player's last round at ``table`` other than the one in progress, and the wagers he
    placed in it (``kind``, ``amount``, ``position``, ``spots``), from the store: the round of
    his last wager row into the table's escrow, then that round's ``wager`` events."""
    round_id = await last_wager_round(floor.store, player, table.id, excluding=table.round_id)
    if round_id is None:
        return None
    placed: dict[str, dict[str, Any]] = {}  # by kind, as they stood at the first card
    for record in await floor.store.events(str(round_id)):
        payload = record.payload
        if payload.get("player") != player:
            continue
        kind = str(payload.get("kind", ""))
        if record.kind == "wager":
            placed[kind] = {
                "kind": kind,
                "amount": int(payload["amount"]),
                "position": payload.get("position"),
                "spots": payload.get("spots"),
            }
        elif record.kind == "change" and kind in placed:
            placed[kind]["amount"] = int(payload["amount"])
        elif record.kind == "withdraw":  # the Blackjack Wager takes its side wagers with it
            placed = {} if kind == "blackjack" else {k: w for k, w in placed.items() if k != kind}
    wagers = list(placed.values())
    return (str(round_id), wagers) if wagers else None


def confirm_change(table: Table, connection: Connection, message: WagerChange) -> None:
    """A wager raised above the table's ``confirm_above`` without ``"confirm": true``: the
    request for the second confirmation, as for a wager of that amount (PA 605a); a lowering
    needs none."""
    limit = table.config.confirm_above
    if limit is None or message.amount <= limit or message.confirm is True:
        return
    if message.amount <= table.wager_amount(connection.subject, message.kind):
        return
    raise ConfirmationRequiredError(message.amount, limit)


class TerminalFeatures:
    """The terminal's features of one floor that keep state (the composition root makes it):
    the answers of the repeats placed, so that a repeat sent again gets its first answer and
    places nothing twice."""

    def __init__(self, floor: Floor, protections: Protections) -> None:
        self.floor = floor
        self.protections = protections
        self._answered: weakref.WeakKeyDictionary[
            Table, OrderedDict[tuple[str, str], dict[str, Any]]
        ] = weakref.WeakKeyDictionary()
        """Per table (while it runs here): the last answers of its repeats, by player and
        message id."""

    async def repeat_last_bet(
        self, connection: Connection, table: Table, message: Repeat
    ) -> dict[str, Any]:
        """Place the player's last wagers again (see the module docstring); the ack lists
        them."""
        floor = self.floor
        player, terminal = connection.subject, connection.terminal
        answered = self._answered.setdefault(table, OrderedDict())
        seen = answered.get((player, message.id))
        if seen is not None:
            return {**seen, "repeat": True}
        round_ = table.round
        if round_ is None or round_.is_complete or round_.phase.value != "wagering":
            raise RefusedError(
                "repeat",
                f"No round is in wagering at table {table.id}; nothing is placed.",
                REPEAT_RULE,
            )
        if any(w.player == player and w.amount for w in round_.wagers):
            raise RefusedError(
                "repeat",
                "You have already wagered in this round; a repeat places a whole last bet only "
                "before any wager of the round.",
                REPEAT_RULE,
            )
        found = await last_wagers(floor, table, player)
        if found is None:
            raise RefusedError(
                "repeat", f"You have no earlier round at table {table.id} to repeat.", REPEAT_RULE
            )
        source, wagers = found
        selected = table.position_of(player, terminal)
        remembered = next((w["position"] for w in wagers if w["position"] is not None), None)
        position = selected if selected is not None else remembered
        trial = copy.deepcopy(round_)
        for wager in wagers:
            try:
                table.place_wager_on(
                    trial, player, position, wager["kind"], wager["amount"], wager["spots"]
                )
            except TablejackError as error:
                raise RefusedError.from_engine(error) from None
        total = sum(w["amount"] for w in wagers)
        balance = floor.balances.get(player, 0)
        if total > balance:
            raise RefusedError(
                "balance",
                f"The repeat needs {format_cents(total)}; the account holds {format_cents(balance)}.",
                "account balance",
            )
        await self.protections.guard(player, terminal, table, total, wager=True)
        check_confirmation(table, total, message.confirm, "A repeat of the last bet")
        if selected is None and position is not None:
            table.select_position(player, position, terminal)
        results = await asyncio.gather(
            *(
                table.wager(
                    player,
                    terminal,
                    w["kind"],
                    w["amount"],
                    f"{message.id}/{n}",
                    w["spots"],
                )
                for n, w in enumerate(wagers, 1)
            ),
            return_exceptions=True,
        )
        placed = [
            {"kind": w["kind"], "amount": w["amount"], "spots": w["spots"], "seq": r.get("seq")}
            for w, r in zip(wagers, results, strict=True)
            if isinstance(r, dict)
        ]
        failed = next((r for r in results if isinstance(r, BaseException)), None)
        if failed is not None:
            if not isinstance(failed, RefusedError):
                raise failed
            raise DetailedRefusalError(failed.code, failed.message, failed.rule, {"placed": placed})
        reply = {
            "ok": True,
            "round_id": table.round_id,
            "seq": max((p["seq"] or 0 for p in placed), default=None),
            "repeated": source,
            "position": position,
            "placed": placed,
        }
        answered[(player, message.id)] = reply
        while len(answered) > 256:
            answered.popitem(last=False)
        return reply
