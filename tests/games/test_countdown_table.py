"""The countdown clock's default action as a table of options per hand total (PA 633c.5(p)(2),
(z), (c)(2)): the rules field, its validation with the clause, the engines of version A and
version B applying it with fixed card orders, and the data the game rules icon shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tablejack.core import RulesError, Shoe
from tablejack.core.hands import Hand
from tablejack.games import load_rules
from tablejack.games.countdown import COUNTDOWN_TOTALS
from tablejack.games.hybrid import HybridRound, HybridRules
from tablejack.games.hybrid_shared import HybridSharedRound
from tablejack.games.hybrid_shared import Path as Designation
from tablejack.games.hybrid_shared_rules import HybridSharedRules

TABLE = {"hard-10": "hit", "hard-11": "hit", "soft-17": "hit", "hard-12": "stand"}
NO_SIDES = {"royal_match": False, "bet_the_set": False, "kings_bounty": False}


def test_633c5_z_the_eleven_of_z_and_a_soft_17_as_a_table() -> None:
    rules = HybridSharedRules(countdown_default="table", countdown_table=TABLE, **NO_SIDES)
    assert rules.countdown_table == (
        ("hard-10", "hit"),
        ("hard-11", "hit"),
        ("hard-12", "stand"),
        ("soft-17", "hit"),
    )
    assert rules.countdown_action(Hand.of("5S 6H")) == "hit"  # (z): "a player's hand of an 11"
    assert rules.countdown_action(Hand.of("AS 6H")) == "hit"  # soft 17
    assert rules.countdown_action(Hand.of("10S 7H")) == "stand"  # hard 17: not named
    assert rules.countdown_action(Hand.of("5S 4H")) == "stand"  # hard 9: not named
    assert rules.countdown_text() == (
        "a hard total of 10 to 11 or a soft total of 17 is hit automatically; any other hand stands"
    )
    rows = rules.countdown_rows()
    assert len(rows) == len(COUNTDOWN_TOTALS) == 17 + 9
    assert {"total": "hard-11", "hand": "hard 11", "action": "hit"} in rows
    assert {"total": "soft-18", "hand": "soft 18", "action": "stand"} in rows


def test_633c5_c2_presets_are_tables_too() -> None:
    hit11 = HybridRules(countdown_default="hit-hard-11-or-less")
    hits = [row["total"] for row in hit11.countdown_rows() if row["action"] == "hit"]
    assert hits == [f"hard-{total}" for total in range(4, 12)]
    assert HybridRules().countdown_text() == "your hand stands"
    assert all(row["action"] == "stand" for row in HybridRules().countdown_rows())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"countdown_table": {"hard-11": "hit"}}, 'applies only with countdown_default = "table"'),
        ({"countdown_default": "table", "countdown_table": {"hard-21": "hit"}}, "may not draw"),
        ({"countdown_default": "table", "countdown_table": {"soft-11": "hit"}}, "no hand total"),
        ({"countdown_default": "table", "countdown_table": {"hard-3": "hit"}}, "no hand total"),
        ({"countdown_default": "table", "countdown_table": {"eleven": "hit"}}, "no hand total"),
        ({"countdown_default": "table", "countdown_table": {"hard-11": "double"}}, "hit or stand"),
        ({"countdown_default": "table", "countdown_table": "hit 11"}, "table of total = action"),
        ({"countdown_default": "always"}, "countdown_default"),
    ],
)
@pytest.mark.parametrize(
    ("rules_class", "clause"),
    [(HybridRules, "PA 633c.5(c)(2)"), (HybridSharedRules, "PA 633c.5(z), (c)(2)")],
)
def test_633c5_z_c2_a_bad_countdown_table_is_refused_with_the_clause(
    rules_class: Any, clause: str, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(RulesError, match=message) as caught:
        rules_class(**changes)
    assert caught.value.rule == clause
    assert clause in caught.value.message


def test_633c5_c2_countdown_table_loads_from_toml_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_text(
        'game = "hybrid-shared"\ncountdown_default = "table"\n'
        'countdown_table = { hard-11 = "hit", "soft 17" = "hit" }\n'
    )
    rules = load_rules(path)
    assert rules.countdown_table == (("hard-11", "hit"), ("soft-17", "hit"))
    assert rules.to_mapping()["countdown_table"] == {"hard-11": "hit", "soft-17": "hit"}
    assert HybridSharedRules.from_mapping(rules.to_mapping()) == rules
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'game = "hybrid"\ncountdown_default = "table"\ncountdown_table = { x = "hit" }\n'
    )
    with pytest.raises(RulesError) as caught:
        load_rules(bad)
    assert caught.value.rule == "PA 633c.5(c)(2)"


def test_633c5_p2_c2_version_a_applies_the_table_when_the_clock_runs_out() -> None:
    # Positions 1-3: 6 5 (hard 11), A 6 (soft 17), 10 2 (hard 12); up 9, hole 8.
    # The clock runs out: 11 and soft 17 hit (C1 = 9: 20, and A 6 9 = 16), 12 stands.
    # Next window: 20 is not in the table, hard 16 neither: both stand. Dealer 9 8 = 17.
    rules = HybridRules(countdown_default="table", countdown_table=TABLE, buzzer_beater=False)
    order = "6S AD 10C 9H 5S 6D 2C 8H 9C"
    round_ = HybridRound(rules, Shoe.prearranged(order, decks=6))
    for name, position in (("ann", 1), ("bob", 2), ("cat", 3)):
        round_.place_wager(name, position, 1000)
    round_.close_wagering()
    round_.countdown_expired()
    defaults = [(op.kind, op.note) for op in round_.operations if op.target == "countdown default"]
    assert defaults == [("hit", "ann"), ("hit", "bob"), ("stand", "cat")]
    round_.countdown_expired()
    assert round_.is_complete
    assert [len(round_.community_cards)] == [1]
    assert round_.player_net() == {"ann": 1000, "bob": -1000, "cat": -1000}


def test_633c5_z_version_b_applies_the_table_when_the_clock_runs_out() -> None:
    # Shared start A 6 (soft 17) against a 10: the table hits soft 17; C1 = 2 gives soft 19,
    # which the table does not name: the next expiry stands. The dealer's hand: 10 8 = 18.
    rules = HybridSharedRules(countdown_default="table", countdown_table=TABLE, **NO_SIDES)
    round_ = HybridSharedRound(rules, Shoe.prearranged("AS 10D 6H 2C 8S", decks=6))
    round_.place_wager("ann", 1000)
    round_.close_wagering()
    round_.countdown_expired()
    assert round_.players["ann"].path is Designation.DREW
    round_.countdown_expired()
    assert round_.is_complete
    assert round_.player_net() == {"ann": 1000}
    assert [op.kind for op in round_.operations if op.kind in ("hit", "stand")] == ["hit", "stand"]
