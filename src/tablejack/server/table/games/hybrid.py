"""The version A hybrid game's port (633c.5(a)–(v)): players by name, any number per
position, Buzzer Beater; the engine's own terminal and audit views, each part of a broadcast
encoded once."""

from __future__ import annotations

from collections.abc import Iterable

from tablejack.core.errors import IllegalActionError
from tablejack.games.hybrid import WAGERS, HybridRound, TerminalViewParts
from tablejack.server.table.games.base import (
    POSITION_RULE,
    WAGER_RULE,
    Encode,
    GameAdapter,
    JsonObject,
    WindowKey,
)
from tablejack.server.table.games.views import dealer_totals, wagers_of

__all__ = ["HybridAdapter"]


class HybridAdapter(GameAdapter[HybridRound]):
    """Hybrid tables, version A (633c.5(a)–(v)): players by name, any number per position;
    the engine's own terminal and audit views; the engine's ``countdown-expired``."""

    game = "hybrid"
    wagering_rule = WAGERS
    side_wagers = ("buzzer_beater",)

    def place_wager(
        self, round_: HybridRound, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        if kind == "blackjack":
            if position is None:
                raise IllegalActionError(
                    f"Select a player position between one and three before wagering "
                    f"({POSITION_RULE}).",
                    rule=POSITION_RULE,
                )
            round_.place_wager(player, position, amount)
        elif kind == "buzzer_beater":
            round_.place_buzzer_beater(player, amount)
        else:
            raise IllegalActionError(
                f"{kind!r} is not a wager of this table ({WAGER_RULE}).", rule=WAGER_RULE
            )

    def withdraw_wager(self, round_: HybridRound, player: str, kind: str) -> None:
        round_.withdraw_wager(player, kind)

    def change_wager(self, round_: HybridRound, player: str, kind: str, amount: int) -> None:
        round_.change_wager(player, kind, amount)

    def player_position(self, round_: HybridRound, player: str) -> int | None:
        state = round_.players.get(player)
        return None if state is None else int(state.position)

    def actor(self, round_: HybridRound, player: str, position: int | None) -> str:
        own = self.player_position(round_, player)
        if own is None:
            raise IllegalActionError(
                f"{player} has no Blackjack Wager this round ({POSITION_RULE}).",
                rule=POSITION_RULE,
            )
        if position is not None and position != own:
            raise IllegalActionError(
                f"{player} backs position {own}, not position {position} ({POSITION_RULE}).",
                rule=POSITION_RULE,
            )
        return player

    def player_view(self, round_: HybridRound, player: str) -> JsonObject:
        if player in round_.players:
            return self.player_views(round_, [player])[player]
        return _public_view(round_, self._view_parts(round_, []).table)

    def audit_view(self, round_: HybridRound) -> JsonObject:
        return round_.audit_view()

    def _view_parts(self, round_: HybridRound, playing: list[str]) -> TerminalViewParts:
        """The engine's view parts of ``playing`` (:meth:`HybridRound.terminal_view_parts`)
        with what the terminal adds: the dealer's totals, once for every view, and each
        player's own wagers."""
        parts = round_.terminal_view_parts(playing)
        parts.table["dealer"] = parts.table["dealer"] | dealer_totals(
            round_.dealer, revealed=round_.hole_card_revealed
        )
        wagers = wagers_of(round_.wagers)
        for player, you in parts.yous.items():
            you["wagers"] = wagers.get(player, [])
        return parts

    def player_views(self, round_: HybridRound, players: Iterable[str]) -> dict[str, JsonObject]:
        wanted = list(players)
        playing = [player for player in wanted if player in round_.players]
        views: dict[str, JsonObject] = {}
        if playing:
            parts = self._view_parts(round_, playing)
            for player, you in parts.yous.items():
                views[player] = {
                    **parts.table,
                    "you": you,
                    "players": [entry for name, entry in parts.entries if name != player],
                }
        watching = [player for player in wanted if player not in round_.players]
        if watching:  # no wager this round: the same public view for all of them
            public = self.player_view(round_, watching[0])
            views.update(dict.fromkeys(watching, public))
        return views

    def player_texts(
        self, round_: HybridRound, players: Iterable[str], encode: Encode
    ) -> dict[str, str]:
        """The texts of :meth:`player_views` (:meth:`player_pieces` joined)."""
        return {
            player: "".join(pieces)
            for player, pieces in self.player_pieces(round_, players, encode).items()
        }

    def player_pieces(
        self, round_: HybridRound, players: Iterable[str], encode: Encode
    ) -> dict[str, tuple[str, ...]]:
        """The texts of :meth:`player_views` in pieces, each part encoded once: the table's
        part, every player's entry, then per player only his own part; joined, the same text
        ``encode(view)`` gives."""
        wanted = list(players)
        playing = [player for player in wanted if player in round_.players]
        texts: dict[str, tuple[str, ...]] = {}
        if playing:
            parts = self._view_parts(round_, playing)
            head = encode(parts.table)[:-1] + ',"you":'  # the object left open for "you"
            entries = [(name, encode(entry)) for name, entry in parts.entries]
            for player, you in parts.yous.items():
                others = [text for name, text in entries if name != player]
                texts[player] = (
                    head,
                    encode(you),
                    ',"players":[',
                    *_commas(others),
                    "]}",
                )
        watching = [player for player in wanted if player not in round_.players]
        if watching:  # no wager this round: the same public view for all of them
            table = parts.table if playing else self._view_parts(round_, []).table
            public = encode(_public_view(round_, table))
            texts.update(dict.fromkeys(watching, (public,)))
        return texts

    def window(self, round_: HybridRound) -> WindowKey | None:
        if round_.card_request is not None or not round_.window_open:
            return None
        return (round_.phase.value, round_.decision_round, len(round_.operations) * 0)

    def awaited(self, round_: HybridRound) -> frozenset[str]:
        return frozenset(round_.awaiting_players())

    def on_countdown(self, round_: HybridRound) -> list[str]:
        return ["dealer countdown-expired"] if round_.can_countdown_expire() else []


def _commas(texts: list[str]) -> list[str]:
    """``texts`` with a ``","`` piece between each two (a JSON array's items)."""
    out: list[str] = []
    for text in texts:
        if out:
            out.append(",")
        out.append(text)
    return out


PUBLIC = (
    "game",
    "phase",
    "decision_round",
    "countdown_running",
    "countdown_seconds",
    "countdown_default",
    "positions",
    "community_cards",
    "dealer",
)
"""The table's part of a terminal view that a terminal without a wager this round shows."""


def _public_view(round_: HybridRound, table: JsonObject) -> JsonObject:
    """The view of a terminal without a wager this round, from the table's part of the
    players' views (``table``: with the dealer's totals): the table, what it waits for while
    wagering, every player's name and position, the hole card's place never (PA 633c.5(o))."""
    dealer = {key: value for key, value in table["dealer"].items() if key != "hole_card"}
    return {key: table[key] for key in PUBLIC if key in table} | {
        "dealer": dealer,
        "waiting_for": table.get("waiting_for", "") if round_.phase.value == "wagering" else "",
        "you": None,
        "players": [
            {"player": state.name, "position": state.position} for state in round_.players_in_order
        ],
    }
