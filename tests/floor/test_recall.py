"""Terminal recall of the last game and the nine before it, step by step (cards in order,
decisions with their source, credits before and after, wagers and settlements with the wager
returned and the winnings apart, PA 605a.2(d))."""

from __future__ import annotations

from typing import Any

from tablejack.server.duties.terminal_recall import recall_terminal
from tablejack.store import EventIn, Step, Store
from tests.support.store import Backend


def steps_of(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for step in document["steps"]:
        kind = step["kind"]
        if kind == "wager":
            out.append(
                (
                    "wager",
                    step["player"],
                    step["wager_kind"],
                    step["amount"],
                    step.get("credits_after"),
                )
            )
        elif kind == "command":
            out.append(("decision", step["text"], step["source"]))
        elif kind == "card":
            out.append(("card", step["card"]))
        elif kind == "complete":
            out.append(
                (
                    "complete",
                    [
                        (s["player"], s["kind"], s["wager_returned"], s["winnings"])
                        for s in step["settlements"]
                    ],
                    step.get("credits_after"),
                )
            )
        else:
            out.append((kind,))
    return out


def test_605a_terminal_recall_replays_the_last_game_step_by_step(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client(backend=backend)
    round_id = kit.play_round(client)
    [game] = client.get("/api/floor/terminals/EWT-1/recall", headers=kit.auth("ann")).json()
    assert (game["round_id"], game["player"], game["status"]) == (round_id, "ann", "complete")
    assert (game["credits_before"], game["credits_after"]) == (100_000, 101_000)
    assert steps_of(game) == [
        ("open",),
        ("wager", "ann", "blackjack", 1000, 99_000),
        ("decision", "dealer close-wagering", "dealer"),
        ("card", "10S"),
        ("card", "9H"),
        ("card", "6D"),
        ("card", "5C"),
        ("card", "9C"),
        ("card", "10H"),
        ("decision", "ann hit", "player"),
        ("decision", "dealer countdown-expired", "countdown default"),
        ("card", "4S"),
        ("decision", "ann stand", "player"),
        ("card", "8D"),
        ("complete", [("ann", "blackjack", 1000, 1000)], 101_000),
    ]
    # the supervisor sees every player's wagers and settlements of the terminal's game
    [full] = client.get("/api/floor/terminals/EWT-2/recall", headers=kit.auth("super")).json()
    assert full["player"] == "bob"
    assert (full["credits_before"], full["credits_after"]) == (100_000, 100_500)
    complete = full["steps"][-1]
    assert [
        (s["player"], s["kind"], s["wager_returned"], s["winnings"])
        for s in complete["settlements"]
    ] == [
        ("ann", "blackjack", 1000, 1000),
        ("bob", "blackjack", 1000, 1000),
        ("bob", "buzzer_beater", 0, 0),
    ]
    assert complete["house_net"] == -1500
    # a player recalls only his own games at a terminal; the dealer not at all
    assert client.get("/api/floor/terminals/EWT-2/recall", headers=kit.auth("ann")).json() == []
    assert (
        client.get("/api/floor/terminals/EWT-1/recall", headers=kit.auth("dealer")).status_code
        == 403
    )


def test_605a_recall_keeps_the_last_ten_games_newest_first(backend: Backend) -> None:
    async def body(store: Store) -> list[str]:
        await store.save_table("T1", "hybrid", {}, {})
        for number in range(1, 13):
            round_id = f"T1-{number:06d}"
            await store.commit(
                Step(
                    round_id,
                    events=[
                        EventIn("open", {"game": "hybrid", "number": number}),
                        EventIn(
                            "wager",
                            {"player": "ann", "kind": "blackjack", "amount": 100, "position": 1},
                            actor="ann",
                            terminal="EWT-5",
                        ),
                    ],
                    open_round=("T1", number, "hybrid", "round"),
                    at_us=1_000_000 * number,
                )
            )
        games = await recall_terminal(store, "EWT-5", n=10)
        return [g["round_id"] for g in games]

    assert backend.run(body) == [f"T1-{n:06d}" for n in range(12, 2, -1)]
