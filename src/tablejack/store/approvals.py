"""Dual control at the cage (PA 605a.4(d)): a credit sale, a voucher sale or a hand pay above
its floor-set threshold moves no money on one person's word. It becomes a pending request — who
asked, what, when — in ``cage_requests`` and an event of the cage's log (``cage_request``);
a supervisor who is not the requester approves it (the movement is written then, under the
money policy, with the approval in its event) or refuses it with a reason (``cage_refused``).
A request is decided once: the decision is one conditional update (``pending`` → ``approved``
or ``refused``) inside the transaction that writes the decision's event and, on approval, the
posting; a second decision, even one racing on another process, finds no pending row and is
refused, and its transaction (posting included) is rolled back.

The posting of an approved request is the requester's movement: the policy names who may start
each movement (a credit or a voucher sale: a cashier), and the requester is the one who takes or
hands over the cash (his drawer, :mod:`tablejack.store.drawers`). The approval does not give a
supervisor a cashier's movement; it is what lets the movement above the threshold be written.
Both people are recorded: the event's actor and ``by`` are the requester, ``approved_by`` the
supervisor, and the request row keeps both with their times.

The thresholds: ``credit_approval_limit`` and ``voucher_sale_approval_limit`` ($3,000.00 by
default) and the hand-pay limit (``handpay_limit``, the largest hand pay an attendant makes
without a supervisor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.cage_models import REQUESTS
from tablejack.store.db import CAGE, CAGE_LOG, EventIn, EventRecord, Store, StoreError, Transfer
from tablejack.store.policy import Actor, Role
from tablejack.store.records import now_us
from tablejack.store.vouchers import (
    APPROVAL_RULE,
    Approval,
    FloorRefusedError,
    Movement,
    check_hand_pay,
    dollars,
    floor_settings,
    hand_pay,
    player_balance,
    refusal_of,
    sell_voucher,
    void_voucher,
)

__all__ = [
    "APPROVAL_RULE",
    "KINDS",
    "Decision",
    "Request",
    "approve",
    "credit_needs_approval",
    "find",
    "pending",
    "refuse",
    "request",
    "requests",
    "sale_needs_approval",
]

KINDS = ("credit", "voucher_sale", "hand_pay", "voucher_void")
"""What waits for a second person (a void of a sold voucher above the voucher sale approval
limit, as its sale: ``detail`` is the voucher's number, ``reason`` the void's)."""


@dataclass(frozen=True, slots=True)
class Request:
    """A request as the queue lists it."""

    id: int
    kind: str
    account: str
    terminal: str
    amount: int
    detail: str
    reason: str
    requested_by: str
    requested_role: str
    requested_us: int
    status: str
    decided_by: str | None
    decided_us: int | None
    decision_reason: str | None

    def to_json(self) -> dict[str, Any]:
        """Plain data for the API, with the amount as people read it."""
        out = {name: getattr(self, name) for name in self.__slots__}
        out["amount_text"] = dollars(self.amount)
        return out


@dataclass(frozen=True, slots=True)
class Decision:
    """A decided request and, when approved, the movement it made (a voucher sale's answer
    carries its validation code, once)."""

    request: Request
    movement: Movement | None = None
    record: EventRecord | None = None


def _request_of(row: Mapping[str, Any]) -> Request:
    return Request(**{name: row[name] for name in Request.__slots__})


async def credit_needs_approval(store: Store, amount: int) -> bool:
    """True when a credit sale of ``amount`` is above the floor's ``credit_approval_limit``."""
    return amount > int((await floor_settings(store))["credit_approval_limit"])


async def sale_needs_approval(store: Store, amount: int) -> bool:
    """True when a voucher sale of ``amount`` is above ``voucher_sale_approval_limit``."""
    return amount > int((await floor_settings(store))["voucher_sale_approval_limit"])


async def _audited(store: Store, refusal: FloorRefusedError, actor: Actor) -> FloorRefusedError:
    await store.audit(refusal.code, refusal.message, actor=actor.subject, rule=refusal.rule)
    return refusal


async def request(
    store: Store,
    kind: str,
    amount: int,
    *,
    actor: Actor,
    account: str = "",
    terminal: str = "",
    detail: str = "",
    reason: str = "",
) -> Request:
    """A pending request for a movement above its threshold: the row and its event
    (``cage_request`` on the cage's log) in one transaction. What the movement would refuse
    now (an unknown account or terminal, a role that may not start it) is refused here too."""
    if kind == "credit":
        if actor.role is not Role.CASHIER:
            raise await _audited(
                store,
                FloorRefusedError("role", "Only a cashier sells credit.", APPROVAL_RULE),
                actor,
            )
        try:
            await player_balance(store, account)
        except FloorRefusedError as refusal:
            raise await _audited(store, refusal, actor) from None
    elif kind == "voucher_sale":
        if actor.role is not Role.CASHIER:
            raise await _audited(
                store,
                FloorRefusedError("role", "Only a cashier sells a voucher.", APPROVAL_RULE),
                actor,
            )
    elif kind == "hand_pay":
        await check_hand_pay(store, account, terminal, amount, detail, actor=actor)
    elif kind == "voucher_void":
        if actor.role is not Role.CASHIER:
            raise await _audited(
                store,
                FloorRefusedError("role", "Only a cashier voids a voucher.", APPROVAL_RULE),
                actor,
            )
    else:
        raise FloorRefusedError("invalid", f"No request of kind {kind!r}.", APPROVAL_RULE)
    at = now_us()
    values = {
        "kind": kind,
        "account": account,
        "terminal": terminal,
        "amount": amount,
        "detail": detail,
        "reason": reason[:200],
        "requested_by": actor.subject[:64],
        "requested_role": actor.role.value,
        "requested_us": at,
        "status": "pending",
    }

    async def insert(connection: AsyncConnection) -> Mapping[str, Any]:
        made = await connection.scalar(REQUESTS.insert().values(**values).returning(REQUESTS.c.id))
        return {"request": int(made)}

    await store.ensure_account(CAGE, "cage", "cage")
    _, extra = await store.commit_logged(
        CAGE_LOG,
        EventIn("cage_request", values, actor=actor.subject, terminal=actor.terminal),
        [],
        None,
        owner=CAGE,
        before=insert,
        log_kind="cage",
    )
    await store.audit(
        "approval",
        f"request {extra['request']}: {kind} of {dollars(amount)} by {actor.subject} waits "
        "for a supervisor",
        actor=actor.subject,
        rule=APPROVAL_RULE,
    )
    found = await find(store, int(extra["request"]))
    assert found is not None
    return found


async def find(store: Store, request_id: int) -> Request | None:
    """Request ``request_id`` (None: no such request)."""
    async with store.engine.connect() as connection:
        row = (
            (await connection.execute(select(REQUESTS).where(REQUESTS.c.id == request_id)))
            .mappings()
            .first()
        )
    return None if row is None else _request_of(dict(row))


async def requests(
    store: Store, *, status: str | None = None, requested_by: str | None = None, limit: int = 200
) -> list[Request]:
    """The requests, newest first: all, or of a ``status``, or of one requester."""
    query = select(REQUESTS).order_by(REQUESTS.c.id.desc()).limit(limit)
    if status is not None:
        query = query.where(REQUESTS.c.status == status)
    if requested_by is not None:
        query = query.where(REQUESTS.c.requested_by == requested_by)
    async with store.engine.connect() as connection:
        rows = (await connection.execute(query)).mappings().all()
    return [_request_of(dict(row)) for row in rows]


async def pending(store: Store) -> list[Request]:
    """The approval queue: the requests waiting for a supervisor, newest first."""
    return await requests(store, status="pending")


async def _decidable(store: Store, request_id: int, actor: Actor) -> Request:
    """The pending request a supervisor other than its requester may decide, or the refusal
    (audited)."""
    try:
        if actor.role is not Role.SUPERVISOR:
            raise FloorRefusedError(
                "role",
                f"A request is approved or refused by a supervisor, not by a {actor.role.value} "
                f"({APPROVAL_RULE}).",
                APPROVAL_RULE,
            )
        found = await find(store, request_id)
        if found is None:
            raise FloorRefusedError("unknown", f"No request {request_id}.", APPROVAL_RULE)
        if found.requested_by == actor.subject:
            raise FloorRefusedError(
                "own_request",
                f"Request {request_id} is {actor.subject}'s own; a second person decides it "
                f"({APPROVAL_RULE}).",
                APPROVAL_RULE,
            )
        if found.status != "pending":
            raise _decided(found)
    except FloorRefusedError as refusal:
        raise await _audited(store, refusal, actor) from None
    return found


def _decided(found: Request) -> FloorRefusedError:
    return FloorRefusedError(
        "decided",
        f"Request {found.id} was already {found.status}"
        f"{f' by {found.decided_by}' if found.decided_by else ''}; a request is decided once "
        f"({APPROVAL_RULE}).",
        APPROVAL_RULE,
    )


def _decide(found: Request, status: str, actor: Actor, reason: str = "") -> Any:
    """The request's one conditional update ``pending`` → ``status`` (a race loses)."""

    async def take(connection: AsyncConnection) -> Mapping[str, Any]:
        moved = await connection.execute(
            update(REQUESTS)
            .where(
                (REQUESTS.c.id == found.id)
                & (REQUESTS.c.status == "pending")
                & (REQUESTS.c.requested_by != actor.subject)
            )
            .values(
                status=status,
                decided_by=actor.subject[:64],
                decided_us=now_us(),
                decision_reason=reason[:200] or None,
            )
        )
        if moved.rowcount != 1:
            raise FloorRefusedError(
                "decided",
                f"Request {found.id} was already decided; a request is decided once "
                f"({APPROVAL_RULE}).",
                APPROVAL_RULE,
            )
        return {}

    return take


async def approve(store: Store, request_id: int, *, actor: Actor) -> Decision:
    """Approve a pending request (a supervisor who is not its requester) and write its movement
    in the same transaction, as the requester's movement with ``approved_by``; refused and
    audited otherwise. A movement the policy or a balance refuses now leaves the request
    pending (nothing was written)."""
    found = await _decidable(store, request_id, actor)
    approval = Approval(found.id, actor.subject, _decide(found, "approved", actor))
    requester = Actor(Role(found.requested_role), found.requested_by)
    movement: Movement | None = None
    record: EventRecord | None = None
    if found.kind == "credit":
        record = await _credit(store, found, requester, approval)
    elif found.kind == "voucher_sale":
        movement = await sell_voucher(store, found.amount, actor=requester, approval=approval)
    elif found.kind == "voucher_void":
        movement = await void_voucher(
            store, "", found.reason, actor=requester, approval=approval, number=found.detail
        )
    else:
        movement = await hand_pay(
            store,
            found.account,
            found.terminal,
            found.amount,
            found.detail,
            actor=requester,
            reason=found.reason,
            approval=approval,
        )
    await store.audit(
        "approval",
        f"request {found.id}: {found.kind} of {dollars(found.amount)} by {found.requested_by} "
        f"approved by {actor.subject}",
        actor=actor.subject,
        rule=APPROVAL_RULE,
    )
    decided = await find(store, found.id)
    assert decided is not None
    return Decision(decided, movement, record)


async def _credit(
    store: Store, found: Request, requester: Actor, approval: Approval
) -> EventRecord:
    """The credit sale of an approved request: cage → the player's game account, on the cage's
    log, as :meth:`tablejack.store.Store.fund` writes it, with the approval in its event."""
    memo = "credit sold at the cage"
    await store.ensure_account(CAGE, "cage", "cage")
    try:
        record, _ = await store.commit_logged(
            CAGE_LOG,
            EventIn(
                "fund",
                {
                    "account": found.account,
                    "amount": found.amount,
                    "memo": memo,
                    "by": requester.subject,
                    **approval.payload(),
                },
                actor=requester.subject,
            ),
            [Transfer(CAGE, found.account, found.amount, "fund", memo=memo)],
            requester,
            owner=CAGE,
            before=approval.take,
            log_kind="cage",
        )
    except FloorRefusedError as refusal:
        raise await _audited(store, refusal, requester) from None
    except StoreError as error:
        raise await _audited(store, refusal_of(error), requester) from None
    return record


async def refuse(store: Store, request_id: int, reason: str, *, actor: Actor) -> Decision:
    """Refuse a pending request with a reason (a supervisor who is not its requester): the
    row's conditional update and its event (``cage_refused``) in one transaction; nothing
    moves."""
    if not reason.strip():
        refusal = FloorRefusedError("reason", "A refusal names its reason.", APPROVAL_RULE)
        raise await _audited(store, refusal, actor)
    found = await _decidable(store, request_id, actor)
    try:
        await store.commit_logged(
            CAGE_LOG,
            EventIn(
                "cage_refused",
                {
                    "request": found.id,
                    "kind": found.kind,
                    "amount": found.amount,
                    "requested_by": found.requested_by,
                    "refused_by": actor.subject,
                    "reason": reason[:200],
                },
                actor=actor.subject,
            ),
            [],
            None,
            owner=CAGE,
            before=_decide(found, "refused", actor, reason),
            log_kind="cage",
        )
    except FloorRefusedError as refusal:
        raise await _audited(store, refusal, actor) from None
    await store.audit(
        "approval",
        f"request {found.id}: {found.kind} of {dollars(found.amount)} by {found.requested_by} "
        f"refused by {actor.subject}: {reason[:200]}",
        actor=actor.subject,
        rule=APPROVAL_RULE,
    )
    decided = await find(store, found.id)
    assert decided is not None
    return Decision(decided)
