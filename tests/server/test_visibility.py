"""The information policy's invariant (:mod:`tablejack.server.visibility`), on rounds played
from random orders of one deck (every code once, so a code seen is the card itself): while the hole
card is face down no view — the staff's, either player's, a watcher's — carries its code
(PA 633c.5(o)); once it is turned the staff's and the players' views show it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tablejack.core.rules import ClassicRules
from tablejack.core.shoe import Shoe
from tablejack.games import GAMES
from tablejack.games.hybrid_rules import HybridRules
from tablejack.server import visibility
from tablejack.server.table.games import adapter_for
from tablejack.server.visibility import Viewer

PLAYERS = ("ann", "bob", "cat")  # cat watches: no wager


def views(round_: Any, game: str) -> list[str]:
    """Every view of the round as JSON text: the staff's, each player's."""
    adapter = adapter_for(game)
    out = [visibility.staff_view(round_, adapter.audit_view(round_))]
    for player in PLAYERS:
        view = adapter.player_view(round_, player)
        out.append(visibility.player_view(Viewer("player", player), round_, view) or {})
    return [json.dumps(view) for view in out]


def check(round_: Any, game: str, seen: dict[str, int]) -> None:
    hidden = visibility.face_down_codes(round_)
    texts = views(round_, game)
    for code in hidden:
        seen["hidden"] += 1
        assert all(f'"{code}"' not in text for text in texts), code
    hole = getattr(round_, "hole_card", None)
    if hole is not None and not hidden:
        seen["turned"] += 1
        assert f'"{hole.code}"' in texts[0] and f'"{hole.code}"' in texts[1]
    for text in texts[1:]:
        assert '"bob"' not in text or text is texts[2]  # ann and cat never read bob's name


def drive(round_: Any, game: str, shoe: Shoe, choices: list[int]) -> dict[str, int]:
    seen = {"hidden": 0, "turned": 0}
    moves = iter(choices)
    adapter = adapter_for(game)
    for _ in range(80):
        while round_.card_request is not None:
            round_.deal_card(shoe.draw())
        check(round_, game, seen)
        if round_.is_complete:
            break
        awaited = sorted(adapter.awaited(round_))
        if awaited:
            actor = adapter.actor(round_, awaited[0], None)
            legal = round_.legal_actions(int(actor) if game == "classic" else actor)
            verbs = [verb for verb in ("hit", "stand") if verb in legal]
            if verbs:  # else a window the clock closes (insurance)
                round_.apply(f"{actor} {verbs[next(moves, 0) % len(verbs)]}")
                continue
        expired = adapter.on_countdown(round_)
        if not expired:
            break
        for command in expired:
            round_.apply(command)
    return seen


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), choices=st.lists(st.integers(0, 3), max_size=20))
def test_633c5_o_a_classic_hole_card_is_in_no_view_until_turned(
    seed: int, choices: list[int]
) -> None:
    round_ = GAMES["classic"].new_round(ClassicRules(decks=1), None)
    round_.place_wager(1, "ann", 1000)
    round_.place_wager(2, "bob", 1000)
    round_.close_wagering()
    seen = drive(round_, "classic", Shoe.shuffled(1, seed=seed), choices)
    assert seen["hidden"] >= 1 or seen["turned"] >= 1  # the hole card was dealt and looked for


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), choices=st.lists(st.integers(0, 3), max_size=20))
def test_633c5_o_a_version_a_hole_card_is_in_no_view_until_turned(
    seed: int, choices: list[int]
) -> None:
    round_ = GAMES["hybrid"].new_round(HybridRules(), None)
    round_.place_wager("ann", 1, 1000)
    round_.place_wager("bob", 2, 1000)
    round_.close_wagering()
    deck = list(Shoe.shuffled(1, seed=seed).peek(52))  # one deck's order: each code once
    seen = drive(round_, "hybrid", Shoe.prearranged(deck, decks=6), choices)
    assert seen["hidden"] >= 1 or seen["turned"] >= 1


def test_the_viewers_of_a_round_share_one_pattern_and_each_keeps_his_own_name() -> None:
    """``conceal_text(…, among=…)``: the pattern covers every player of the round, so a round's
    twenty viewers share one (a floor of hundreds of tables overflowed a cache of one per
    viewer); each viewer still reads his own name and the others' labels, and a name where it
    is a key, or within a longer name, is left as it is."""
    encode = json.dumps
    text = encode({"ann": 1, "players": ["ann", "bob", "cat"], "dealer": "ann-2"})
    every = ("ann", "bob", "cat")
    ann = visibility.conceal_text(text, {"bob": "player 2", "cat": "player 3"}, encode, every)
    bob = visibility.conceal_text(text, {"ann": "player 1", "cat": "player 3"}, encode, every)
    assert json.loads(ann) == {
        "ann": 1,
        "players": ["ann", "player 2", "player 3"],
        "dealer": "ann-2",
    }
    assert json.loads(bob)["players"] == ["player 1", "bob", "player 3"]
    assert visibility.conceal_text(text, {}, encode, every) == text  # a watcher of no one


class Wagered:
    """A round's players as the information policy reads them: their wagers in order."""

    def __init__(self, names: list[str]) -> None:
        self.wagers = [type("Wager", (), {"player": name})() for name in names]


NAMES = ["ann", "ann-2", "a", "bo b", 'q"uote', "ñu", "player 1"]
WORDS = st.sampled_from([*NAMES, "x", "ann ann", "", ":", "ann:"])
DOCUMENTS = st.recursive(
    WORDS | st.integers(0, 9) | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(WORDS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    players=st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True),
    seated=st.lists(st.sampled_from(NAMES), max_size=7),
    documents=st.lists(DOCUMENTS, min_size=1, max_size=4),
    viewer=st.sampled_from([*NAMES, "watcher"]),
    spaced=st.booleans(),
)
def test_605a_the_broadcasts_concealer_gives_what_concealing_the_whole_text_gives(
    players: list[str], seated: list[str], documents: list[Any], viewer: str, spaced: bool
) -> None:
    """``Concealer`` searches each piece once, with a pattern over the round's players and the
    players seated at the table's terminals (a set that does not change with every wager, so its
    pattern is compiled once): for any JSON pieces — names as values, as keys (with and without
    a space before the colon), within longer names and texts, one name the start of another, a
    seated player who has no wager this round (left as he is) — each viewer's text is the one
    :func:`conceal_text` of his whole text gives."""
    encode = json.dumps if spaced else (lambda v: json.dumps(v, separators=(",", ":")))
    round_ = Wagered(players)
    pieces = [encode(document) for document in documents]
    pieces = [part for piece in pieces for part in (piece, ",")][:-1]
    every = tuple(visibility.pseudonyms(round_, ""))
    expected = visibility.conceal_text(
        "".join(pieces), visibility.pseudonyms(round_, viewer), encode, every
    )
    assert visibility.Concealer(round_, encode, seated).text(pieces, viewer) == expected
