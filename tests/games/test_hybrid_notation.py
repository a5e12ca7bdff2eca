"""PA 633c.5 version A in the round notation: scenario files, seat entries, export and replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablejack.core import IllegalActionError, InvalidNotationError
from tablejack.core.notation import dumps, load, loads
from tablejack.games import export, replay, scenarios, transcript
from tablejack.games.hybrid import HybridRules
from tablejack.games.session import play_rounds

SCENARIOS = sorted((Path(__file__).parents[2] / "scenarios").glob("hybrid-*.toml"))


def test_hybrid_scenario_files_exist() -> None:
    assert len(SCENARIOS) >= 4


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_633c5_scenario_files_replay_to_their_expected_results(path: Path) -> None:
    history = load(path)
    run = scenarios.play(history)
    assert scenarios.check(history, run) == []
    round_ = run.round
    if run.stopped_at is not None:  # a refusal ends the scenario (hybrid-surrender-refused)
        assert not round_.is_complete and not round_.settlements
        return
    assert round_.is_complete
    assert round_.player_net() == history.expect["net"]
    assert round_.house_net() == -sum(history.expect["net"].values())
    again = replay(loads(dumps(export(round_))))
    assert again.operations == round_.operations


def test_633c5_transcript_of_the_split_scenario() -> None:
    [path] = [p for p in SCENARIOS if p.stem == "hybrid-split-countdown"]
    lines = transcript(replay(load(path)))
    assert lines[0] == "Dealer: up card 7♦, turns 10♦ = 17"
    assert "Community cards: C1 3♣, C2 10♥, C3 9♠" in lines
    assert (
        "cat (position 2): 10♣ 6♥ = 16, stands (countdown default), Blackjack Wager loses "
        "$10.00 (PA 633c.5(t)(3)(ii))"
    ) in lines
    assert "bob side wagers: Buzzer Beater loses $5.00 (PA 633c.5(u)(2)(i))" in lines


SEATED = """
game = "hybrid"
cards = "10S 7D 6H KC"
commands = ["ann stand"]
[rules]
decks = 6
[[seats]]
player = "ann"
position = 1
wager = "$10"
"""


def test_633c5_seat_entries_are_checked() -> None:
    assert replay(loads(SEATED)).player_net() == {"ann": -1000}
    with pytest.raises(InvalidNotationError):
        replay(loads(SEATED.replace("position = 1", "seat = 1")))
    with pytest.raises(IllegalActionError) as caught:
        replay(loads(SEATED.replace("position = 1", "position = 4")))
    assert caught.value.rule == "PA 633c.5(l)"
    with pytest.raises(InvalidNotationError):
        replay(loads(SEATED.replace('["ann stand"]', '["ann stand", "ann hit"]')))
    with pytest.raises(InvalidNotationError):
        replay(loads(SEATED.replace('["ann stand"]', "[]")))


def test_633c5_export_carries_buzzer_beater_and_countdown_commands() -> None:
    [round_] = list(play_rounds(HybridRules(), rounds=1, seed=11, players=12))
    history = export(round_)
    assert [seat["player"] for seat in history.seats][:3] == ["ann", "bob", "cat"]
    assert all(
        set(seat) <= {"player", "position", "wager", "buzzer_beater"} for seat in history.seats
    )
    assert any("buzzer_beater" in seat for seat in history.seats)
    text = dumps(history)
    assert 'game = "hybrid"' in text
    assert loads(text) == history
