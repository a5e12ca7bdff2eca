"""The link between the floor and a casino management system: one interface for every
protocol (SAS today, :mod:`tablejack.server.links.sas`; GSA's G2S could sit beside it), so the
table and the ledger never know which protocol a terminal speaks.

The floor asks a terminal's link three things: a validation number for a cash-out (system
validation), the host's decision on a voucher inserted, and nothing else — every other duty
(meters, significant events, enable and disable) the link does by reading the store and the
floor and by the lock-out of :mod:`tablejack.store.protections`. Money moves only through the
store's vouchers module (and so its money policy): the host decides, the ledger pays once.

A terminal without a link cashes out and redeems with the floor's own vouchers, as before.

On a floor of several processes a link runs in the one process started with it, which says so
in the store (:func:`announce`, :mod:`tablejack.store.terminal_links`); a money route of its
terminal that reaches another process finds the link there (:func:`elsewhere`) and is
forwarded to it, or refused — never paid past the host.
"""

from __future__ import annotations

import contextlib
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass

from tablejack.server.floor.floor import Floor
from tablejack.store import protections, terminal_links, vouchers
from tablejack.store.policy import Actor, Role
from tablejack.store.vouchers import FloorRefusedError, Movement

__all__ = [
    "HOST_RULE",
    "Decision",
    "Link",
    "LinkRefusedError",
    "announce",
    "attach",
    "cash_out",
    "elsewhere",
    "link_for",
    "links",
    "notify",
    "redeem",
    "refuse_during_handpay",
    "withdraw",
]

HOST_RULE = "PA 605a.5(a)"
"""The clause that has an EWT talk to the central system (docs/sas.md)."""


class LinkRefusedError(Exception):
    """The host refused, or could not be asked (the link is down, it did not answer).
    ``redeemed_elsewhere``: the system that says the ticket was already redeemed (SAS: LP 71
    transfer code 84)."""

    def __init__(self, message: str, *, redeemed_elsewhere: str | None = None) -> None:
        super().__init__(message)
        self.redeemed_elsewhere = redeemed_elsewhere


@dataclass(frozen=True, slots=True)
class Decision:
    """The host's decision on a voucher inserted: redeem ``amount`` cents, validated by
    ``system``."""

    amount: int
    system: str


class Link(ABC):
    """A protocol's link for some terminals of the floor."""

    @abstractmethod
    def serves(self, terminal: str) -> bool:
        """Does this link carry ``terminal``?"""

    @property
    @abstractmethod
    def protocol(self) -> str:
        """The protocol's name (``sas``)."""

    @abstractmethod
    def terminals(self) -> list[str]:
        """The terminals this link carries."""

    @abstractmethod
    async def start(self, floor: Floor) -> None:
        """Open the endpoints and start the link's duties."""

    @abstractmethod
    async def stop(self) -> None:
        """Close everything."""

    @abstractmethod
    async def validate_cashout(self, terminal: str, amount: int) -> tuple[str, str]:
        """The validation code the host gives a cash-out of ``amount`` cents and the system
        that gave it (LinkRefusedError: none)."""

    @abstractmethod
    def ticket_printed(self, terminal: str, code: str, amount: int, number: str) -> None:
        """The voucher of a validated cash-out was printed."""

    @abstractmethod
    async def ticket_inserted(self, terminal: str, code: str) -> Decision:
        """The host's decision on a voucher inserted (LinkRefusedError: refused)."""

    @abstractmethod
    def ticket_finished(self, terminal: str, amount: int | None) -> None:
        """The voucher inserted was redeemed for ``amount`` (None: the floor refused it)."""

    @abstractmethod
    def event(self, terminal: str, name: str, amount: int = 0) -> None:
        """A significant event at ``terminal`` (``bill_accepted``, ``handpay_pending``,
        ``handpay_paid``, ...)."""

    async def handpay(self, terminal: str, amount: int) -> None:
        """A cash-out of ``amount`` cents above the voucher limit waits for an attendant (a
        handpay pending); a link may lock the terminal until it is paid."""
        self.event(terminal, "handpay_pending", amount)


# registry: the links attached to each floor (by `tablejack serve`, a test), not duty state
_LINKS: weakref.WeakKeyDictionary[Floor, list[Link]] = weakref.WeakKeyDictionary()


def attach(floor: Floor, link: Link) -> None:
    """The floor's terminals that ``link`` serves go through it."""
    _LINKS.setdefault(floor, []).append(link)


def links(floor: Floor) -> list[Link]:
    """The floor's links."""
    return list(_LINKS.get(floor, []))


def link_for(floor: Floor, terminal: str) -> Link | None:
    """The link of ``terminal`` (None: the floor's own vouchers)."""
    return next((link for link in _LINKS.get(floor, []) if link.serves(terminal)), None)


async def announce(floor: Floor, link: Link) -> None:
    """On a floor of several processes, say in the store that this process holds ``link``'s
    terminals (the others forward their money routes here)."""
    if floor.member:
        await terminal_links.hold(
            floor.store,
            link.terminals(),
            protocol=link.protocol,
            member=floor.member,
            url=floor.url,
        )


async def withdraw(floor: Floor) -> None:
    """This process stops: the links it announced are held nowhere now (their terminals'
    money routes are refused at the other processes until one holds them again)."""
    if floor.member:
        await terminal_links.stopped(floor.store, floor.member)


async def elsewhere(floor: Floor, terminal: str) -> terminal_links.Holder | None:
    """The process of the floor that holds ``terminal``'s link when it is not this one (its
    money routes go there); None when the link is here or the terminal has none."""
    if not terminal or link_for(floor, terminal) is not None:
        return None
    found = await terminal_links.holder(floor.store, terminal)
    if found is None or (floor.member and found.member == floor.member):
        return None
    return found


def notify(floor: Floor, terminal: str, name: str, amount: int = 0) -> None:
    """Tell ``terminal``'s link (if any) of a significant event."""
    link = link_for(floor, terminal)
    if link is not None:
        link.event(terminal, name, amount)


async def refuse_during_handpay(floor: Floor, terminal: str) -> None:
    """FloorRefusedError (``tilt``) when ``terminal`` is locked with a handpay pending: it
    takes no money until the handpay is paid or reset (docs/sas.md)."""
    locks = (await protections.open_locks(floor.store)).get(terminal, [])
    if any(lock["code"] == "handpay_pending" for lock in locks):
        raise FloorRefusedError(
            "tilt",
            f"Terminal {terminal} is locked (handpay_pending): it takes no money until the "
            "handpay is paid or reset.",
            protections.TILT_RULE,
        )


def _host_refusal(error: LinkRefusedError) -> FloorRefusedError:
    return FloorRefusedError("host", f"{error} ({HOST_RULE}, system validation).", HOST_RULE)


async def cash_out(floor: Floor, link: Link, amount: int | None, *, actor: Actor) -> Movement:
    """A cash-out at a terminal with a link: the host gives the validation number (system
    validation) and the voucher is printed with it; above the voucher limit the host is told
    of a handpay pending. The store's checks run first (nothing is asked of the host for a
    cash-out the floor would refuse) and again when the voucher is written."""
    terminal = actor.terminal or ""
    wanted = amount
    if wanted is None:
        wanted = await vouchers.player_balance(floor.store, actor.subject)
    limit = int((await vouchers.floor_settings(floor.store))["voucher_limit"])
    if 0 < wanted <= await vouchers.player_balance(floor.store, actor.subject):
        if wanted > limit:
            await link.handpay(terminal, wanted)
        else:
            try:
                code, system = await link.validate_cashout(terminal, wanted)
            except LinkRefusedError as error:
                refusal = _host_refusal(error)
                await floor.store.audit(
                    refusal.code,
                    refusal.message,
                    actor=actor.subject,
                    terminal=terminal,
                    rule=refusal.rule,
                )
                raise refusal from None
            movement = await vouchers.cash_out(
                floor.store, wanted, actor=actor, validation=(code, system)
            )
            link.ticket_printed(terminal, code, wanted, movement.voucher_number or "0")
            return movement
    return await vouchers.cash_out(floor.store, amount, actor=actor)  # the store refuses it


async def redeem(floor: Floor, link: Link, code: str, *, actor: Actor) -> Movement:
    """A voucher inserted at a terminal with a link is redeemed through the host: the host's
    decision, then the store's one conditional redemption of a voucher that host validated,
    of the host's amount — or, for a ticket the floor does not know (the casino system's, for
    another machine: floor-wide TITO), the host's amount credited from the floor's account with
    that system, once. A host that says the floor's own ticket was already redeemed (elsewhere
    on its floor) has it marked so. The host is told the end either way."""
    terminal = actor.terminal or ""
    clean = "".join(ch for ch in code if ch.isdigit())
    try:
        decision = await link.ticket_inserted(terminal, clean)
    except LinkRefusedError as error:
        if error.redeemed_elsewhere is not None:
            with contextlib.suppress(FloorRefusedError):
                await vouchers.host_redeemed(
                    floor.store,
                    clean,
                    actor=Actor(Role.TERMINAL, terminal, terminal),
                    system=error.redeemed_elsewhere,
                )
        refusal = _host_refusal(error)
        await floor.store.audit(
            refusal.code, refusal.message, actor=actor.subject, terminal=terminal, rule=refusal.rule
        )
        raise refusal from None
    try:
        if await vouchers.voucher_row(floor.store, clean) is None:  # the casino system's ticket
            movement = await vouchers.redeem_host_ticket(
                floor.store, clean, actor=actor, system=decision.system, amount=decision.amount
            )
        else:
            movement = await vouchers.redeem_voucher(
                floor.store, clean, actor=actor, system=decision.system, amount=decision.amount
            )
    except FloorRefusedError:
        link.ticket_finished(terminal, None)
        raise
    link.ticket_finished(terminal, decision.amount)
    return movement
