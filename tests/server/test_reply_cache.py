"""The answers a table keeps for repeated requests (``tablejack.server.table.requests``): a
request sent again under its ``command_id`` gets the first answer back marked ``repeat``, and
each player's latest 256 answers are kept."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tablejack.server.table.requests import KEPT_PER_PLAYER, ReplyCache


def test_a_repeated_request_gets_its_first_answer_marked_repeat() -> None:
    cache = ReplyCache()
    assert cache.repeat("ann", "c1") is None
    cache.remember("ann", "c1", {"ok": True, "round_id": "A1-000001", "seq": 4})
    assert cache.repeat("ann", "c1") == {
        "ok": True,
        "round_id": "A1-000001",
        "seq": 4,
        "repeat": True,
    }
    assert cache.repeat("bob", "c1") is None  # another player's command ids are his own
    assert cache.repeat("ann", None) is None  # no command id: nothing to repeat
    cache.clear()
    assert cache.repeat("ann", "c1") is None


@given(count=st.integers(1, 2 * KEPT_PER_PLAYER))
def test_each_players_latest_answers_are_kept(count: int) -> None:
    cache = ReplyCache()
    for number in range(count):
        cache.remember("ann", f"c{number}", {"ok": True, "seq": number})
    kept = [n for n in range(count) if cache.repeat("ann", f"c{n}") is not None]
    assert kept == list(range(max(0, count - KEPT_PER_PLAYER), count))
