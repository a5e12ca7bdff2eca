"""The version B hybrid game's port (633c.5(w)–(ee)): no hole card, one shared start, players
by name, side wagers Royal Match 21, Bet the Set and King's Bounty; the engine's own views."""

from __future__ import annotations

from collections.abc import Iterable

from tablejack.core.errors import IllegalActionError
from tablejack.core.rules import TableRules
from tablejack.games.hybrid_shared import BEFORE_FIRST_CARD, HybridSharedRound
from tablejack.server.table.games.base import GameAdapter, JsonObject, WindowKey
from tablejack.server.table.games.views import first_card_showing, wagers_of

__all__ = ["HybridSharedAdapter"]


class HybridSharedAdapter(GameAdapter[HybridSharedRound]):
    """Hybrid tables without a hole card, version B (633c.5(w)–(ee)): no player positions (one
    shared start for every player), players by name, side wagers Royal Match 21, Bet the Set
    and King's Bounty (633c.5(x)), the engine's views and ``countdown-expired``."""

    game = "hybrid-shared"
    wagering_rule = BEFORE_FIRST_CARD
    side_wagers = ("royal_match", "bet_the_set", "kings_bounty")

    def positions(self, rules: TableRules) -> int:
        return 1

    def place_wager(
        self, round_: HybridSharedRound, player: str, position: int | None, kind: str, amount: int
    ) -> None:
        if kind == "blackjack":
            round_.place_wager(player, amount)
        elif kind in self.side_wagers:
            round_.place_side_wager(player, kind, amount)
        else:
            raise IllegalActionError(
                f"{kind!r} is not a wager of this table (PA 633c.5(x)).", rule="PA 633c.5(x)"
            )

    def player_position(self, round_: HybridSharedRound, player: str) -> int | None:
        return 1 if player in round_.players else None

    def actor(self, round_: HybridSharedRound, player: str, position: int | None) -> str:
        if player not in round_.players:
            raise IllegalActionError(
                f"{player} has no Blackjack Wager this round (PA 633c.5(x)).", rule="PA 633c.5(x)"
            )
        return player

    def player_view(self, round_: HybridSharedRound, player: str) -> JsonObject:
        return self.player_views(round_, [player])[player]

    def audit_view(self, round_: HybridSharedRound) -> JsonObject:
        return round_.audit_view()

    def player_views(
        self, round_: HybridSharedRound, players: Iterable[str]
    ) -> dict[str, JsonObject]:
        """The engine's views (:meth:`HybridSharedRound.terminal_views`, the shared part
        built once) with what a terminal draws besides: the total of the dealer's first card
        and the player's own wagers; one public view for every player without a wager."""
        wanted = list(players)
        playing = [player for player in wanted if player in round_.players]
        wagers = wagers_of(round_.wagers)
        views = round_.terminal_views(playing)
        for player, view in views.items():
            view["dealer"] = first_card_showing(view["dealer"])
            view["you"]["wagers"] = wagers.get(player, [])
        watching = [player for player in wanted if player not in round_.players]
        if watching:  # no wager this round: the same public view for all of them
            public = round_.table_view()
            public["dealer"] = first_card_showing(public["dealer"])
            public |= {"you": None, "players": [{"player": p} for p in round_.players]}
            views.update(dict.fromkeys(watching, public))
        return views

    def window(self, round_: HybridSharedRound) -> WindowKey | None:
        if round_.card_request is not None or not round_.players_to_decide():
            return None
        return (round_.phase.value, len(round_.community_cards))

    def awaited(self, round_: HybridSharedRound) -> frozenset[str]:
        return frozenset(round_.players_to_decide())

    def on_countdown(self, round_: HybridSharedRound) -> list[str]:
        return ["dealer countdown-expired"] if round_.can_expire_countdown() else []
