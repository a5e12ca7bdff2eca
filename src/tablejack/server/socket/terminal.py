"""The WebSocket ``/ws``: the terminals' and consoles' protocol (docs/server.md, "Terminal
protocol"). A socket passes the gate's limits before its hello (:mod:`~tablejack.server.socket.gate`),
signs in (:mod:`~tablejack.server.socket.signin`), and then every frame is checked — the credential
still valid, the rate limit, the message well-formed — before it reaches its table. A bad
message gets an error frame naming the rule and the socket stays open; only a flood, repeated
malformed frames or a revoked credential close it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from tablejack.server.duties.floor_duties import FloorDuties
from tablejack.server.duties.protections import LOCK_ALLOWS, wager_at_stake
from tablejack.server.duties.terminal_features import confirm_change, confirm_wager
from tablejack.server.duties.tilts import on_join
from tablejack.server.floor.floor import (
    CREDENTIAL_ENDED,
    LEASE_RULE,
    TABLE_MOVED,
    Connection,
    Floor,
    TableElsewhereError,
)
from tablejack.server.socket.gate import Gate, Session
from tablejack.server.socket.proxy import forward_socket
from tablejack.server.socket.sequence import check_sequence
from tablejack.server.socket.signin import sign_in
from tablejack.server.socket.transport import ABORT, SEND_TEXTS, WRITABLE
from tablejack.server.support.auth import AuthRefusedError
from tablejack.server.support.logs import bind
from tablejack.server.support.protocol import (
    PROTOCOL_VERSION,
    Action,
    DealerCommand,
    Hello,
    Join,
    MalformedMessageError,
    Ping,
    Repeat,
    SelectPosition,
    WagerChange,
    WagerMessage,
    Withdraw,
)
from tablejack.server.support.wire import dumps
from tablejack.server.table import RefusedError
from tablejack.server.visibility import Viewer

__all__ = ["SIGN_IN_REFUSALS", "RateLimit", "router"]

log = logging.getLogger("tablejack.server")

SIGN_IN_REFUSALS = {
    "auth": "unknown token",
    "terminal": "terminal not proven",
    "role": "not a person's credential",
    "origin": "cookie from another origin",
}
"""The close reason (and the audit log's word) of each refused sign-in."""

router = APIRouter()

CASH_OUT_LOCKS = sorted(code for code, allows in LOCK_ALLOWS.items() if "cash_out" in allows)
"""The terminal locks that still let a player cash out (the welcome tells the page)."""


class RateLimit:
    """A token bucket per connection: ``burst`` messages at once, ``per_second`` after."""

    def __init__(self, per_second: float = 20.0, burst: float = 40.0) -> None:
        self.per_second = per_second
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()
        self.refused = 0

    def allow(self) -> bool:
        """Take one token if there is one."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_second)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.refused = 0
            return True
        self.refused += 1
        return False


@router.websocket("/ws")
async def websocket(socket: WebSocket) -> None:
    """The socket's session runs in a task of its own: a message then wakes that task's short
    chain of coroutines, not the twenty or so frames of the ASGI stack this endpoint runs in
    (middleware, routers), which every wake of a coroutine awaited here resumes one by one.
    Its end, error or cancellation (shutdown) is the endpoint's."""
    await asyncio.get_running_loop().create_task(_session(socket))


async def _session(socket: WebSocket) -> None:
    await socket.accept()
    floor: Floor = socket.app.state.floor
    duties: FloorDuties = socket.app.state.duties  # the guard, the tilts, the repeat
    socket_gate: Gate = socket.app.state.gate  # limits before and after the hello
    connection: Connection | None = None
    session: Session | None = None
    limit = RateLimit(*socket.app.state.rate)
    ended_by = "peer"  # the terminal closed the socket, or the connection was cut
    try:
        first = await socket_gate.hello(socket)
        if first is None:
            return
        if first.protocol != PROTOCOL_VERSION:
            await socket.send_text(
                dumps(
                    _error(
                        None,
                        "protocol",
                        "protocol version",
                        f"This server speaks protocol {PROTOCOL_VERSION}.",
                    )
                )
            )
            await socket_gate.refuse(
                socket, 1002, "protocol version", terminal=first.terminal or ""
            )
            return
        try:
            connection = await sign_in(floor, first, socket.cookies, socket.headers)
        except AuthRefusedError as refusal:  # a failed hello: counted, audited per burst
            await socket.send_text(dumps(_error(None, refusal.code, refusal.rule, refusal.message)))
            await socket_gate.refuse(
                socket,
                1008,
                SIGN_IN_REFUSALS.get(refusal.code, refusal.code),
                detail=refusal.message,
                terminal=first.terminal or "",
            )
            return
        floor.connections.add(connection)
        socket.app.state.metrics.signed_in()
        bind(terminal=connection.terminal or connection.subject)
        answered = socket.app.state.metrics.answered
        connection.attach(
            socket.send_text,
            socket.close,
            floor.outboxes,
            socket.scope.get("extensions", {}).get(WRITABLE),
            socket.scope.get("extensions", {}).get(ABORT),
            socket.scope.get("extensions", {}).get(SEND_TEXTS),
        )
        connection.push(
            {
                "type": "welcome",
                "protocol": PROTOCOL_VERSION,
                "role": connection.role,
                "subject": connection.subject,
                "terminal": connection.terminal,
                "balance": floor.balances.get(connection.subject),
                # the locks under which a terminal still cashes out (PA 605a lock-out): its
                # page offers a cash-out over the lock's notice under these alone
                "cash_out_locks": CASH_OUT_LOCKS,
                # a terminal's player is shown its table alone: the floor's list at each
                # sign-in grows with the floor (175 KB for 500 tables, 10,000 times over)
                "tables": floor.summaries(
                    connection.binding.table if connection.binding is not None else None
                ),
            }
        )
        session = socket_gate.session(socket, connection)
        while True:
            frame = await session.receive()
            if frame is None:  # too big: closed
                ended_by = "frame too big"
                return
            if not floor.signed_in(connection):
                connection.push(
                    _error(
                        None,
                        "credential",
                        "PA 605a.4(d)",
                        "The credential of this session was revoked or has expired; sign in again.",
                    )
                )
                connection.end(CREDENTIAL_ENDED)
                with contextlib.suppress(Exception):  # sent, and the socket closed
                    await asyncio.wait_for(connection.ended.wait(), 2)
                return
            if not limit.allow():
                if limit.refused == 1:
                    await floor.store.audit(
                        "rate_limited",
                        "message flood",
                        table_id=connection.table or "",
                        actor=connection.subject,
                        terminal=connection.terminal,
                        rule="server rate limit",
                    )
                connection.push(
                    _error(
                        None,
                        "rate_limited",
                        "server rate limit",
                        "Too many messages; this one was not applied.",
                    )
                )
                if limit.refused > 200:
                    ended_by = "rate limit"
                    await socket.close(1008, "rate limit")
                    return
                continue
            try:
                message = frame.message()
            except MalformedMessageError as error:  # an error frame; the socket stays open
                if await session.malformed(error):
                    ended_by = "malformed"
                    return  # closed: repeated malformed messages
                continue
            try:
                read = time.perf_counter()
                table = floor.tables.get(connection.table or "")
                bind(table=connection.table, round=None if table is None else table.round_id)
                await _handle(duties, connection, message)
                if isinstance(message, WagerMessage | Action):
                    answered(message.type, time.perf_counter() - read)
            except TableElsewhereError as moved:  # another process runs it: forwarded
                assert frame.text is not None
                if await forward_socket(
                    floor, socket, session, connection, first, frame.text, moved.table_id
                ):
                    await _handle_here(duties, connection, message)
                    continue
                connection.end(TABLE_MOVED)
                with contextlib.suppress(Exception):  # sent, and the socket closed
                    await asyncio.wait_for(connection.ended.wait(), 2)
                return
    except WebSocketDisconnect:
        pass
    finally:
        if session is not None:
            session.end()
        if connection is not None:
            socket.app.state.metrics.socket_ended(connection.ended_because(ended_by))
            floor.connections.discard(connection)
            if connection.table in floor.tables:
                floor.tables[connection.table].subscribers.discard(connection)
            if connection.role == "player":  # PA 605a: a connection_lost tilt mid-round
                duties.tilts.schedule_connection_lost(connection)
            connection.detach()


def _error(command_id: str | None, code: str, rule: str, message: str) -> dict[str, Any]:
    return {"type": "error", "id": command_id, "code": code, "rule": rule, "message": message}


async def _handle_here(duties: FloorDuties, connection: Connection, message: Any) -> None:
    """A join whose table came to this process while the socket waited for it."""
    try:
        await _handle(duties, connection, message)
    except TableElsewhereError as moved:  # moved on again meanwhile: the terminal reconnects
        connection.push(
            _error(
                getattr(message, "id", None),
                "moving",
                LEASE_RULE,
                f"Table {moved.table_id} is moving to another process of the floor; reconnecting.",
            )
        )
        connection.push(None)


async def _handle(duties: FloorDuties, connection: Connection, message: Any) -> None:
    floor = duties.floor
    if isinstance(message, Ping):
        connection.push({"type": "pong", "id": message.id})
        return
    command_id = getattr(message, "id", None)
    if connection.wants_seq is None:
        connection.wants_seq = 0  # in flight: told the table's number at each broadcast
    try:
        reply = await _dispatch(duties, connection, message)
    except RefusedError as refusal:
        connection.wants_seq = None
        await floor.store.audit(
            refusal.code,
            refusal.message,
            table_id=connection.table or "",
            actor=connection.subject,
            terminal=connection.terminal,
            rule=refusal.rule,
        )
        frame = _error(command_id, refusal.code, refusal.rule, refusal.message)
        frame.update(getattr(refusal, "details", None) or {})  # e.g. the amount to confirm
        connection.push(frame)
        return
    except BaseException:
        connection.wants_seq = None
        raise
    connection.push({"type": "ack", "id": command_id, **reply})
    seq = reply.get("seq")
    # the step's number: told already, or by the next broadcast (which is at or past it)
    round_id, told_seq = connection.told
    if isinstance(seq, int) and (round_id != reply.get("round_id") or told_seq < seq):
        connection.wants_seq = max(seq, 1)
    else:
        connection.wants_seq = None


async def _dispatch(duties: FloorDuties, connection: Connection, message: Any) -> dict[str, Any]:
    floor = duties.floor
    check_sequence(floor, connection, message)  # gaps and repeats refused
    if isinstance(message, Hello):
        raise RefusedError("protocol", "Already authenticated.", "protocol")
    if isinstance(message, Join):
        table = floor.tables.get(message.table)
        if table is None and (where := floor.elsewhere(message.table)) is not None:
            raise TableElsewhereError(message.table, where)  # forwarded there by the caller
        if table is None:
            raise RefusedError("table", f"No table {message.table!r}.", "table")
        binding = connection.binding
        if binding is not None and binding.table != table.id:
            raise RefusedError(
                "terminal",
                f"Terminal {binding.terminal} serves table {binding.table}, not {table.id}.",
                "PA 605a.4(d)",
            )
        if connection.table in floor.tables:
            floor.tables[connection.table].subscribers.discard(connection)
        connection.table = table.id
        table.subscribers.add(connection)
        connection.push({"type": "table", **table.info()})
        on_join(connection, table)  # PA 605a: a locked table or terminal
        if binding is not None and binding.position is not None:
            table.select_position(connection.subject, binding.position, connection.terminal)
        connection.push(
            table.state_for(Viewer(connection.role, connection.subject, connection.terminal))
        )
        return {"ok": True, "table": table.id}
    table = floor.tables.get(connection.table or "")
    if table is None:
        raise RefusedError("table", "Join a table first.", "protocol")
    if isinstance(message, DealerCommand):
        if connection.role != "dealer":
            raise RefusedError(
                "role",
                f"A {connection.role} terminal may not send dealer commands.",
                "role: dealer",
            )
        return await table.dealer_command(
            message.command, connection.subject, connection.terminal, message.card
        )
    if connection.role != "player":
        raise RefusedError(
            "role", "Only a player terminal places wagers and decisions.", "role: player"
        )
    if isinstance(message, SelectPosition):
        bound = connection.binding.position if connection.binding is not None else None
        if bound is not None and message.position != bound:
            raise RefusedError(
                "position",
                f"Terminal {connection.terminal} is bound to position {bound}.",
                "PA 633c.5(l)",
            )
        table.select_position(connection.subject, message.position, connection.terminal)
        connection.push(table.player_state(connection.subject, connection.terminal))
        return {"ok": True, "position": message.position}
    if isinstance(message, WagerMessage | Action):  # limits, self-exclusion, tilts
        wager = isinstance(message, WagerMessage)
        at_stake = (
            message.amount
            if isinstance(message, WagerMessage)
            else wager_at_stake(table, connection.subject, message.verb, message.amount)
        )
        await duties.protections.guard(
            connection.subject, connection.terminal, table, at_stake, wager=wager
        )
    if isinstance(message, Withdraw | WagerChange):  # before the first card (633c.5(k))
        current = table.wager_amount(connection.subject, message.kind)
        raised = message.amount - current if isinstance(message, WagerChange) else 0
        await duties.protections.guard(
            connection.subject, connection.terminal, table, raised, wager=raised > 0
        )
        if isinstance(message, Withdraw):
            return await table.withdraw(
                connection.subject, connection.terminal, message.kind, message.id
            )
        confirm_change(table, connection, message)  # PA 605a double confirmation of a raise
        return await table.change_wager(
            connection.subject, connection.terminal, message.kind, message.amount, message.id
        )
    if isinstance(message, WagerMessage | Repeat):  # PA 605a double confirmation, repeat
        if isinstance(message, Repeat):
            return await duties.features.repeat_last_bet(connection, table, message)
        confirm_wager(table, connection, message)  # the table's checks first
    if isinstance(message, WagerMessage):
        return await table.wager(
            connection.subject,
            connection.terminal,
            message.kind,
            message.amount,
            message.id,
            message.spots,
        )
    if isinstance(message, Action):
        return await table.action(
            connection.subject,
            connection.terminal,
            message.verb,
            message.amount,
            message.position,
            message.id,
            message.spots,
        )
    raise RefusedError("protocol", "Unexpected message.", "protocol")  # pragma: no cover
