"""A terminal bot over a real WebSocket: the load benchmark and the crash test drive the
server with these. It speaks protocol version 1 like the terminal page: hello, join, select a
position, wager whenever a round is open for wagering, and decide with a simple rule (hit below
15, otherwise stand; decline insurance and EZ Bust).

Each bot records when it sent each decision and when every state arrived, so the benchmark can
measure the time from a terminal's action to every terminal's update (see :class:`Timings`).

At ``pace="human"`` a bot plays as a person at a terminal does (:class:`HumanPace`): it wagers
1–8 s after the round opens, decides 0.5–4 s after it is asked, sits some rounds out, and now
and then loses its network for a moment and reconnects; it also records, for each round, the
time from the wagering countdown's end to the dealt cards on its screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["HumanPace", "Timings", "run_bot", "why_dropped"]


def why_dropped(socket: Any = None, error: BaseException | None = None) -> str:
    """Why a connection ended that the bot did not end itself: ``server <code>`` (the server's
    close frame), ``client <code> <reason>`` (this side closed it, e.g. ``client 1011 keepalive
    ping timeout``), ``dropped`` (no close frame either way: the connection was cut),
    ``open timeout``, ``http <status>`` (the handshake refused), or the OS error's name."""
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    rcvd = sent = None
    if isinstance(error, ConnectionClosed):
        rcvd, sent = error.rcvd, error.sent
    elif error is None and socket is not None:
        rcvd, sent = socket.protocol.close_rcvd, socket.protocol.close_sent
    if rcvd is not None:
        return f"server {rcvd.code}"
    if sent is not None:
        return f"client {sent.code} {sent.reason}".rstrip()
    if isinstance(error, ConnectionClosed) or error is None:
        return "dropped"
    if isinstance(error, TimeoutError):
        return "open timeout"
    if isinstance(error, InvalidStatus):
        return f"http {error.response.status_code}"
    return type(error).__name__


@dataclass(frozen=True)
class HumanPace:
    """How a person plays (``run_bot(pace=…)``): seconds from the round's opening to the wager,
    from being asked to the decision, the chance of sitting a round out and of a network blip
    (the socket dropped, reconnected after ``blip_seconds``) at each round."""

    wager_seconds: tuple[float, float] = (1.0, 8.0)
    decision_seconds: tuple[float, float] = (0.5, 4.0)
    sit_out: float = 0.15
    blip: float = 0.01
    blip_seconds: tuple[float, float] = (1.0, 3.0)
    reconnect_seconds: tuple[float, float] = (0.2, 10.0)
    """The wait before connecting again after the server closed the socket or could not be
    reached: the first, doubled at each failure in a row up to the second, each drawn between
    half and the whole of it (a floor that restarts is not met by all its terminals at once)."""

    def backoff(self, failures: int, rng: random.Random) -> float:
        """Seconds to wait before the next connection after ``failures`` in a row (1: the
        first).

        >>> pace = HumanPace(reconnect_seconds=(0.2, 10.0))
        >>> rng = random.Random(1)
        >>> [0.1 <= pace.backoff(1, rng) <= 0.2, 6.4 <= pace.backoff(7, rng) <= 10.0]
        [True, True]
        >>> 5.0 <= pace.backoff(40, rng) <= 10.0
        True
        """
        first, most = self.reconnect_seconds
        ceiling = min(most, first * 2 ** min(max(failures, 1) - 1, 32))
        return rng.uniform(ceiling / 2, ceiling)


@dataclass
class Timings:
    """Shared by the bots of one run: when each decision was sent (keyed by table, round and
    the sequence number its ack names) and when each terminal received each state."""

    actions: dict[tuple[str, str, int], float] = field(default_factory=dict)
    arrivals: dict[tuple[str, str], dict[str, list[tuple[int, float]]]] = field(
        default_factory=dict
    )
    decisions: int = 0
    wagers: int = 0
    errors: int = 0
    error_times: list[float] = field(default_factory=list)
    """When each error frame arrived (``time.perf_counter``)."""
    reconnects: int = 0
    error_tables: list[str] = field(default_factory=list)
    """The table of each error frame (beside :attr:`error_times`)."""
    deals: list[tuple[str, float, float]] = field(default_factory=list)
    """(table, when the cards arrived — ``time.perf_counter`` —, seconds from the wagering
    countdown's end to them): one per round and terminal that saw the countdown."""
    sit_outs: int = 0
    blips: int = 0
    drops: list[tuple[float, str]] = field(default_factory=list)
    """(when — ``time.perf_counter`` —, why) of each connection that ended or failed while the
    bot played on, but for its own network blips: why as :func:`why_dropped` tells it."""

    @property
    def closes(self) -> Counter[int]:
        """The close codes of the sockets the server closed (1012: it drains, reconnect)."""
        return Counter(int(why.split()[1]) for _, why in self.drops if why.startswith("server "))

    def arrived(self, table: str, round_id: str, terminal: str, seq: int, at: float) -> None:
        """A terminal received the state at ``seq`` of a round."""
        self.arrivals.setdefault((table, round_id), {}).setdefault(terminal, []).append((seq, at))

    def latencies(
        self, since: float = float("-inf"), tables: Container[str] | None = None
    ) -> list[float]:
        """For each decision (sent at ``since`` or later, on the ``time.perf_counter`` clock;
        at one of ``tables``, or any), the delay until each terminal the update went to received
        it: the update is the table's first message at or past the decision's sequence number
        (its number the least of those its terminals received), and it goes to the terminals
        whose view it changed and to the one that decided — a terminal whose view the step left
        as it was is sent nothing. One sample per decision and terminal reached."""
        out: list[float] = []
        for (table, round_id, seq), sent in self.actions.items():
            if sent < since or (tables is not None and table not in tables):
                continue
            received = self.arrivals.get((table, round_id), {}).values()
            update = min(
                (got for frames in received for got, at in frames if got >= seq and at >= sent),
                default=None,
            )
            if update is None:
                continue
            for frames in received:
                for got, at in frames:
                    if got == update and at >= sent:
                        out.append(at - sent)
                        break
        return out


def _clock_ran_out(countdown: dict[str, Any] | None) -> bool:
    """Whether the wagering clock a state shows has already run out on this host's clock (a
    player does not wager when the terminal's clock shows no time left; the state may have
    come late, when the server was busy)."""
    return (
        countdown is not None
        and countdown.get("window") == "wagering"
        and time.time() * 1000 >= countdown["ends_at_ms"]
    )


async def run_bot(
    url: str | Sequence[str],
    token: str,
    terminal: str,
    table: str,
    position: int,
    *,
    terminal_key: str,
    stop: asyncio.Event,
    timings: Timings | None = None,
    amount: int = 1000,
    seed: int = 0,
    reconnect: bool = False,
    buzzer_beater: bool = False,
    pace: HumanPace | None = None,
    sign_ins: asyncio.Semaphore | None = None,
) -> None:
    """Play until ``stop`` is set (reconnecting after a dropped connection if asked), signed in
    at ``terminal`` with its device credential ``terminal_key``. ``url``: the server's socket,
    or the sockets of a floor's processes — a connection that cannot be opened is tried at the
    next (as a load balancer in front of the floor would). ``pace``: play at a person's pace
    (:class:`HumanPace`; None: answer at once, as fast as the server lets it; with a pace, a
    reconnection waits :meth:`HumanPace.backoff`). ``sign_ins``: shared by many bots, it bounds
    how many sign in at once — a bot holds it from opening its first socket until the server's
    first state (or a failure), so thousands of terminals started together reach the server in
    waves it can answer."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import WebSocketException

    urls = [url] if isinstance(url, str) else list(url)
    rng = random.Random(seed)
    counter = 0
    attempt = 0
    failures = 0  # connections in a row that the server closed or that failed
    gate = sign_ins
    if gate is not None:
        await gate.acquire()

    def signed_in() -> None:
        nonlocal gate
        if gate is not None:
            gate.release()
            gate = None

    async def wait_to_reconnect() -> None:
        nonlocal failures
        failures += 1
        delay = 0.2 if pace is None else pace.backoff(failures, rng)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=delay)

    try:
        while not stop.is_set():
            target = urls[attempt % len(urls)]
            try:
                async with connect(target, open_timeout=5, max_queue=None) as socket:
                    await socket.send(
                        json.dumps(
                            {
                                "type": "hello",
                                "protocol": 2,
                                "token": token,
                                "terminal": terminal,
                                "terminal_key": terminal_key,
                            }
                        )
                    )
                    await socket.send(
                        json.dumps({"type": "join", "id": f"{terminal}-join", "table": table})
                    )
                    await socket.send(
                        json.dumps(
                            {"type": "position", "id": f"{terminal}-pos", "position": position}
                        )
                    )
                    wagered: str | None = None
                    acted: tuple[Any, ...] | None = None
                    sent: dict[str, float] = {}
                    waiting_for: str | None = None
                    closer = asyncio.create_task(_close_when(stop, socket))
                    screen: dict[str, Any] = {}
                    """The last state (a person acts on the screen as it is when they act)."""
                    later: set[asyncio.Task[None]] = set()
                    deadline: dict[str, float] = {}
                    """The wagering countdown's end (ms, this host's clock) by round."""
                    dealt: set[str] = set()
                    blipped = False

                    async def send_wager(round_id: str) -> None:
                        nonlocal counter
                        counter += 1
                        await socket.send(
                            json.dumps(
                                {
                                    "type": "wager",
                                    "id": f"{terminal}-{counter}",
                                    "kind": "blackjack",
                                    "amount": amount,
                                }
                            )
                        )
                        if buzzer_beater and rng.random() < 0.3:
                            counter += 1
                            await socket.send(
                                json.dumps(
                                    {
                                        "type": "wager",
                                        "id": f"{terminal}-{counter}",
                                        "kind": "buzzer_beater",
                                        "amount": amount // 2,
                                    }
                                )
                            )
                        if timings is not None:
                            timings.wagers += 1

                    async def send_decision(
                        you: dict[str, Any], legal: list[str], sent: dict[str, float]
                    ) -> None:
                        nonlocal counter, waiting_for
                        verb = _decide(you, legal, rng)
                        counter += 1
                        command_id = f"{terminal}-{counter}"
                        sent[command_id] = time.perf_counter()
                        waiting_for = command_id
                        await socket.send(
                            json.dumps({"type": "action", "id": command_id, "verb": verb})
                        )
                        if timings is not None:
                            timings.decisions += 1

                    async def wager_later(
                        round_id: str, delay: float, screen: dict[str, Any]
                    ) -> None:
                        await asyncio.sleep(delay)
                        view = screen.get("view") or {}
                        if (
                            screen.get("round_id") == round_id
                            and view.get("phase") == "wagering"
                            and view.get("you") is None
                            and not _clock_ran_out(screen.get("countdown"))
                        ):
                            await send_wager(round_id)

                    async def decide_later(
                        round_id: str, delay: float, screen: dict[str, Any], sent: dict[str, float]
                    ) -> None:
                        nonlocal waiting_for
                        await asyncio.sleep(delay)
                        if waiting_for == "later":
                            waiting_for = None
                        you = (screen.get("view") or {}).get("you") or {}
                        legal = you.get("legal_actions") or []
                        if (
                            screen.get("round_id") == round_id
                            and legal
                            and waiting_for is None
                            and you.get("awaiting_decision", True)
                        ):
                            await send_decision(you, legal, sent)

                    def schedule(work: Any, later: set[asyncio.Task[None]]) -> None:
                        task = asyncio.create_task(work)
                        later.add(task)
                        task.add_done_callback(later.discard)

                    try:
                        async for raw in socket:
                            now = time.perf_counter()
                            message = orjson.loads(raw)
                            kind = message.get("type")
                            if kind in ("ack", "error") and message.get("id") == waiting_for:
                                waiting_for = None
                            if kind == "ack" and timings is not None and message.get("id") in sent:
                                seq = message.get("seq")
                                if seq is not None:
                                    key = (table, str(message.get("round_id")), int(seq))
                                    timings.actions[key] = sent.pop(message["id"])
                            elif kind == "error":
                                sent.pop(message.get("id") or "", None)
                                if timings is not None:
                                    timings.errors += 1
                                    timings.error_times.append(now)
                                    timings.error_tables.append(table)
                                acted = None
                            if kind == "seq" and timings is not None and message["round_id"]:
                                timings.arrived(
                                    table, message["round_id"], terminal, int(message["seq"]), now
                                )
                            if kind != "state":
                                continue
                            if failures or gate is not None:  # the server answers: signed in
                                failures = 0
                                signed_in()
                            if timings is not None and message.get("round_id") is not None:
                                timings.arrived(
                                    table, message["round_id"], terminal, int(message["seq"]), now
                                )
                            view = message.get("view")
                            if view is None:
                                continue
                            screen.clear()
                            screen.update(message)
                            round_id = message.get("round_id")
                            you = view.get("you")
                            countdown = message.get("countdown")
                            if pace is not None and round_id is not None:
                                if countdown is not None and countdown.get("window") == "wagering":
                                    deadline[round_id] = float(countdown["ends_at_ms"])
                                elif (
                                    view["phase"] != "wagering"
                                    and round_id in deadline
                                    and round_id not in dealt
                                ):  # the first state past the wagering: the cards on the screen
                                    dealt.add(round_id)
                                    if timings is not None:
                                        delay = time.time() - deadline[round_id] / 1000
                                        timings.deals.append((table, now, delay))
                            if (
                                view["phase"] == "wagering"
                                and you is None
                                and wagered != round_id
                                and not _clock_ran_out(countdown)
                            ):
                                wagered = round_id
                                if pace is None:
                                    await send_wager(round_id)
                                elif rng.random() < pace.blip:  # the network drops for a moment
                                    blipped = True
                                    if timings is not None:
                                        timings.blips += 1
                                    await socket.close()
                                    break
                                elif rng.random() < pace.sit_out:
                                    if timings is not None:
                                        timings.sit_outs += 1
                                else:
                                    schedule(
                                        wager_later(
                                            round_id, rng.uniform(*pace.wager_seconds), screen
                                        ),
                                        later,
                                    )
                                continue
                            legal = (you or {}).get("legal_actions") or []
                            if (
                                not legal
                                or waiting_for is not None
                                or not (you or {}).get("awaiting_decision", True)
                            ):
                                continue
                            turn = (round_id, message.get("seq"))
                            if acted == turn:
                                continue
                            acted = turn
                            if pace is None:
                                await send_decision(you or {}, legal, sent)
                            else:  # thinking: no other decision until this one is made
                                waiting_for = "later"
                                thinking = rng.uniform(*pace.decision_seconds)
                                schedule(decide_later(str(round_id), thinking, screen, sent), later)
                    finally:
                        closer.cancel()
                        for task in list(later):
                            task.cancel()
                    if blipped and pace is not None:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(stop.wait(), rng.uniform(*pace.blip_seconds))
                    elif timings is not None and not stop.is_set():
                        timings.drops.append((time.perf_counter(), why_dropped(socket)))
                if not reconnect or stop.is_set():
                    return
                if timings is not None:  # closed by the server (e.g. its table moved): again
                    timings.reconnects += 1
                if blipped:
                    failures = 0
                    continue
                await wait_to_reconnect()
            except (OSError, WebSocketException, TimeoutError) as error:
                if timings is not None and not stop.is_set():
                    timings.drops.append((time.perf_counter(), why_dropped(error=error)))
                attempt += 1  # the next process of the floor
                if not reconnect:
                    return
                if timings is not None:
                    timings.reconnects += 1
                signed_in()  # (another bot signs in meanwhile)
                await wait_to_reconnect()

    finally:
        signed_in()


async def _close_when(stop: asyncio.Event, socket: Any) -> None:
    """Close the socket once ``stop`` is set (ends the bot's receive loop)."""
    await stop.wait()
    with contextlib.suppress(Exception):
        await socket.close()


def _decide(you: dict[str, Any], legal: list[str], rng: random.Random) -> str:
    for verb in ("no-insurance", "no-ez-bust"):
        if verb in legal:
            return verb
    hands = you.get("hands")
    total = 0
    if hands:
        open_hands = [h for h in hands if not h.get("complete")]
        total = (open_hands or hands)[0]["total"]
    if "double" in legal and total in (10, 11) and rng.random() < 0.5:
        return "double"
    if "hit" in legal and (total < 15 or (total < 17 and rng.random() < 0.3)):
        return "hit"
    return "stand" if "stand" in legal else legal[0]
