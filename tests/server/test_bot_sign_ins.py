"""The bots of a large load run: thousands started together sign in a few at a time (each holds
its turn from opening its socket until the server's first state), and at a person's pace a
terminal that cannot reach the server waits longer after each failure."""

from __future__ import annotations

import asyncio
import json
import random

from websockets.asyncio.server import ServerConnection, serve

from tablejack.server.socket.botclient import HumanPace, run_bot


def test_the_bots_sign_in_no_more_than_the_gate_lets_at_once() -> None:
    waiting = 0  # sockets open and not yet answered with a state
    most = 0
    answered = 0

    async def handler(connection: ServerConnection) -> None:
        nonlocal waiting, most, answered
        waiting += 1
        most = max(most, waiting)
        await connection.recv()  # the hello
        await asyncio.sleep(0.02)  # the sign-in takes a moment
        waiting -= 1
        answered += 1
        await connection.send(json.dumps({"type": "state", "round_id": None, "view": None}))
        await connection.wait_closed()

    async def scenario() -> None:
        async with serve(handler, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            stop = asyncio.Event()
            gate = asyncio.Semaphore(3)
            bots = [
                asyncio.create_task(
                    run_bot(
                        f"ws://127.0.0.1:{port}",
                        f"tok-{n}",
                        f"EWT-{n:04d}",
                        "T000",
                        1,
                        terminal_key=f"key-{n}",
                        stop=stop,
                        sign_ins=gate,
                    )
                )
                for n in range(12)
            ]
            for _ in range(300):
                if answered == 12:
                    break
                await asyncio.sleep(0.01)
            stop.set()
            await asyncio.gather(*bots)

    asyncio.run(scenario())
    assert answered == 12  # every bot signed in …
    assert most == 3  # … three at a time


def test_a_person_reconnects_later_after_each_failure_up_to_a_ceiling() -> None:
    pace = HumanPace(reconnect_seconds=(0.5, 8.0))
    rng = random.Random(7)
    ceilings = [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    for failures, ceiling in enumerate(ceilings, start=1):
        waits = [pace.backoff(failures, rng) for _ in range(50)]
        assert all(ceiling / 2 <= wait <= ceiling for wait in waits)
        assert max(waits) - min(waits) > ceiling / 10  # spread: not every terminal at once
