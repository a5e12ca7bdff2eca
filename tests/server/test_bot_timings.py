"""The load benchmark's latency from a decision to its update (``Timings.latencies``): the
update is the table's first message at or past the decision's number, and its latency is read
at each terminal it went to; a terminal the step sent nothing (its view unchanged) is not read
at its next, unrelated update."""

from __future__ import annotations

import pytest

from tablejack.server.socket.botclient import Timings


def test_a_decision_is_timed_at_the_terminals_its_update_reached_and_no_others() -> None:
    timings = Timings()
    timings.actions[("T1", "R1", 5)] = 10.0  # a decision, answered at seq 5
    timings.arrived("T1", "R1", "EWT-1", 5, 10.010)  # the decider
    timings.arrived("T1", "R1", "EWT-2", 5, 10.030)  # a terminal whose view it changed
    timings.arrived("T1", "R1", "EWT-3", 7, 13.000)  # its view unchanged: its next update
    assert timings.latencies() == pytest.approx([0.010, 0.030])


def test_decisions_gathered_into_one_update_are_each_timed_at_it() -> None:
    timings = Timings()
    timings.actions[("T1", "R1", 5)] = 10.0
    timings.actions[("T1", "R1", 6)] = 10.005
    for terminal, at in (("EWT-1", 10.02), ("EWT-2", 10.04)):
        timings.arrived("T1", "R1", terminal, 6, at)  # one broadcast past both
    assert sorted(timings.latencies()) == pytest.approx(sorted([0.02, 0.04, 0.015, 0.035]))
    assert timings.latencies(since=10.001) == pytest.approx([0.015, 0.035])


def test_the_bots_tell_why_a_connection_was_lost_against_a_real_server() -> None:
    """``why_dropped`` over a real WebSocket server (websockets'): a close frame from the
    server, a connection cut without one, a refused handshake and a port nobody listens on."""
    import asyncio

    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve
    from websockets.datastructures import Headers
    from websockets.http11 import Response

    from tablejack.server.socket.botclient import why_dropped

    async def handler(socket: object) -> None:
        path = socket.request.path  # type: ignore[attr-defined]
        if path == "/close":
            await socket.close(1008, "too slow")  # type: ignore[attr-defined]
        elif path == "/cut":
            socket.transport.abort()  # type: ignore[attr-defined]
        await socket.wait_closed()  # type: ignore[attr-defined]

    def refuse(connection: object, request: object) -> Response | None:
        if request.path == "/refused":  # type: ignore[attr-defined]
            return Response(403, "Forbidden", Headers(), b"")
        return None

    async def lost(url: str) -> str:
        try:
            async with connect(url, open_timeout=5) as socket:
                async for _ in socket:
                    pass
                return why_dropped(socket)
        except Exception as error:  # a connection that failed
            return why_dropped(error=error)

    async def main() -> list[str]:
        async with serve(handler, "127.0.0.1", 0, process_request=refuse) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            base = f"ws://127.0.0.1:{port}"
            reasons = [await lost(f"{base}/{path}") for path in ("close", "cut", "refused")]
        reasons.append(await lost(base))  # the server has gone: nobody listens on the port
        return reasons

    assert asyncio.run(main()) == ["server 1008", "dropped", "http 403", "ConnectionRefusedError"]
