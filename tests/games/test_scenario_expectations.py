"""Scenario files that check themselves (``tablejack.games.scenarios``): every kind of ``[expect]``
entry is met by a right value and reported, naming the wager and both values, for a wrong one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.core import IllegalActionError, InvalidNotationError
from tablejack.core.notation import dumps, load, loads
from tablejack.games import scenarios

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
runner = CliRunner()

# PA 633b.16: a split eight pair against a 6 with two EZ Bust wagers; the dealer busts on the
# third card (the shipped scenario classic-ez-bust-split.toml, every expectation written out).
EZ_BUST_SPLIT = f"""
game = "classic"
rules_file = "{RULES}/pa-classic-6deck.toml"
cards = "8S 6H 8D 10C 3S 10D 5C 9H"
commands = ["1 ez-bust", "1 split", "1 ez-bust", "1 double", "1 stand"]
[[seats]]
seat = 1
player = "ann"
wager = "$10"
[expect]
net = {{ ann = "+$50.00" }}
in_order = true
dealer = {{ cards = "6H 10C 9H", total = "25 bust" }}
cards_used = 8
cards_left = 0
[[expect.wagers]]
player = "ann"
kind = "ez_bust"
result = "win"
net = "+$10.00"
odds = "1 to 1"
clause = "PA 633b.16(f)(1), (i)"
[[expect.wagers]]
player = "ann"
kind = "ez_bust"
net = "+$10.00"
[[expect.wagers]]
seat = 1
hand = 1
amount = "$20"
returned = "$40"
odds = "1 to 1"
clause = "PA 633a.13"
[[expect.wagers]]
player = "ann"
hand = 2
net = "+$10.00"
"""


def _run(text: str) -> list[str]:
    history = loads(text)
    return scenarios.check(history, scenarios.play(history))


def test_every_expectation_kind_is_met_by_the_right_values() -> None:
    assert _run(EZ_BUST_SPLIT) == []


def test_expectations_survive_the_notation_round_trip() -> None:
    history = loads(EZ_BUST_SPLIT)
    assert loads(dumps(history)) == history
    assert history.expect["wagers"][2] == {
        "seat": 1,
        "hand": 1,
        "amount": 2000,
        "returned": 4000,
        "odds": "1 to 1",
        "clause": "PA 633a.13",
    }


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'hand = 2\nnet = "+$10.00"',
            'hand = 2\nnet = "+$20.00"',
            "ann blackjack hand 2: expected net +$20.00, got +$10.00",
        ),
        (
            'clause = "PA 633b.16(f)(1), (i)"',
            'clause = "PA 633b.16(f)(2)"',
            "ann ez_bust: expected clause 'PA 633b.16(f)(2)', got 'PA 633b.16(f)(1), (i)'",
        ),
        (
            'kind = "ez_bust"\nresult = "win"',
            'kind = "ez_bust"\nresult = "push"',
            "ann ez_bust: expected result push, got win",
        ),
        (
            'returned = "$40"\nodds = "1 to 1"',
            'returned = "$40"\nodds = "3 to 2"',
            "seat 1 blackjack hand 1: expected odds 3 to 2, got 1 to 1",
        ),
        (
            'amount = "$20"',
            'amount = "$10"',
            "seat 1 blackjack hand 1: expected amount $10.00, got $20.00",
        ),
        (
            'total = "25 bust"',
            "total = 17",
            "dealer: expected total 17, got 25 (25 bust)",
        ),
        (
            'cards = "6H 10C 9H"',
            'cards = "6H 10C 8H"',
            "dealer: expected cards 6H 10C 8H, got 6H 10C 9H",
        ),
        ("cards_used = 8", "cards_used = 7", "cards used: expected 7, got 8"),
        (
            "cards_used = 8",
            'cards_used = "8S 6H 8D 10C 3S 10D 5C 8H"',
            "cards used: expected 8S 6H 8D 10C 3S 10D 5C 8H, got 8S 6H 8D 10C 3S 10D 5C 9H",
        ),
        ("cards_left = 0", "cards_left = 2", "cards left: expected 2, got 0"),
        (
            'net = {{ ann = "+$50.00" }}'.replace("{{", "{").replace("}}", "}"),
            'net = { ann = "+$40.00" }',
            "ann: expected net +$40.00, got +$50.00",
        ),
    ],
)
def test_a_wrong_expectation_names_the_wager_and_both_values(
    old: str, new: str, message: str
) -> None:
    assert old in EZ_BUST_SPLIT
    assert _run(EZ_BUST_SPLIT.replace(old, new, 1)) == [message]


def test_633b16_h_settlement_order_is_checked_when_in_order() -> None:
    # The Blackjack Wagers listed before the EZ Bust wagers: (h) settles EZ Bust first.
    head, first_wager = EZ_BUST_SPLIT.split("[[expect.wagers]]", 1)
    entries = ["[[expect.wagers]]" + part for part in first_wager.split("[[expect.wagers]]")]
    text = head + "".join(entries[2:] + entries[:2])
    (problem,) = _run(text)
    assert problem.startswith(
        "settlement order: expected ann blackjack, ann blackjack, ann ez_bust"
    )


def test_a_settlement_not_listed_and_a_listed_one_that_never_happened() -> None:
    text = EZ_BUST_SPLIT.replace(
        '[[expect.wagers]]\nplayer = "ann"\nhand = 2\nnet = "+$10.00"', ""
    ) + ('[[expect.wagers]]\nplayer = "ann"\nkind = "insurance"\nnet = "$0"\n')
    problems = _run(text)
    assert "ann insurance: expected a settlement, found none" in problems
    assert any(
        p.startswith("ann blackjack hand 2: settled (wins $10.00 (PA 633a.13)) but not listed")
        for p in problems
    )
    # every_wager = false lists only some wagers.
    partial = text.replace("in_order = true", "in_order = true\nevery_wager = false")
    assert _run(partial) == ["ann insurance: expected a settlement, found none"]


def _refusal_scenario(commands: str, refused: str) -> str:
    return f"""
game = "classic"
rules_file = "{RULES}/pa-classic-6deck.toml"
cards = "10S 6H 8D 6C KS"
commands = {commands}
[[seats]]
seat = 1
player = "ann"
wager = "$10"
[expect]
refused = {refused}
"""


def test_633b16_d_a_refusal_that_continues() -> None:
    text = (
        _refusal_scenario(
            '["1 ez-bust $20", "1 ez-bust $10", "1 stand"]',
            '{ step = 1, rule = "PA 633b.16(d)" }',
        )
        + 'net = { ann = "+$20.00" }\n'
    )
    history = loads(text)
    run = scenarios.play(history)
    assert [(r.step, r.rule, r.expected) for r in run.refusals] == [(1, "PA 633b.16(d)", True)]
    assert run.stopped_at is None and run.round.is_complete
    assert scenarios.check(history, run) == []


def test_633b16_c2_a_refusal_that_stops_the_scenario() -> None:
    # Up card 6, the initial EZ Bust declined: another one comes only with a split (c)(2).
    text = _refusal_scenario(
        '["1 no-ez-bust", "1 hit", "1 ez-bust"]',
        '{ step = 3, rule = "PA 633b.16(c)(2)", then = "stop" }',
    ).replace("10S 6H 8D 6C KS", "10S 6H 2D 6C 5S")
    history = loads(text)
    run = scenarios.play(history)
    assert run.stopped_at == 3 and not run.round.is_complete
    assert scenarios.check(history, run) == []


def test_a_refusal_under_another_clause_or_none_at_all_is_a_mismatch() -> None:
    wrong_rule = _refusal_scenario(
        '["1 ez-bust $20", "1 ez-bust $10", "1 stand"]',
        '{ step = 1, rule = "PA 633b.16(c)" }',
    )
    (problem,) = _run(wrong_rule)
    assert problem.startswith(
        "step 1 ('1 ez-bust $20'): expected a refusal under PA 633b.16(c), got one under "
        "PA 633b.16(d): An EZ Bust wager of $20.00 exceeds"
    )
    accepted = _refusal_scenario(
        '["1 ez-bust $10", "1 stand"]', '{ step = 1, rule = "PA 633b.16(d)" }'
    )
    assert _run(accepted) == [
        "step 1 ('1 ez-bust $10'): expected a refusal under PA 633b.16(d), but the command was "
        "accepted"
    ]
    wrong_words = _refusal_scenario(
        '["1 ez-bust $20", "1 ez-bust $10", "1 stand"]',
        '{ step = 1, rule = "PA 633b.16(d)", message = "too large" }',
    )
    (problem,) = _run(wrong_words)
    assert "expected the refusal to say 'too large'" in problem


def test_an_unexpected_refusal_still_raises_and_stop_must_end_the_file() -> None:
    text = _refusal_scenario('["1 split", "1 stand"]', "[]")
    with pytest.raises(IllegalActionError, match=r"Command 1 \('1 split'\)"):
        scenarios.play(loads(text))
    text = _refusal_scenario(
        '["1 ez-bust $20", "1 stand"]', '{ step = 1, rule = "PA 633b.16(d)", then = "stop" }'
    )
    with pytest.raises(InvalidNotationError, match="stops at step 1"):
        scenarios.play(loads(text))


def test_step_0_a_refused_seating() -> None:
    text = _refusal_scenario("[]", '{ step = 0, rule = "PA 633a.6(d)" }').replace(
        'wager = "$10"', 'wager = "$1"'
    )
    history = loads(text)
    run = scenarios.play(history)
    assert run.stopped_at == 0 and run.refusals[0].step == 0
    assert scenarios.check(history, run) == []
    assert run.cards_used == 0 and run.cards_left == 5


def test_dealer_hands_by_player_and_by_dealer_round() -> None:
    shared = load(ROOT / "scenarios" / "hybrid-shared-different-dealer-hands.toml")
    run = scenarios.play(shared)
    assert scenarios.check(shared, run) == []
    assert {name: hand.total for name, hand in scenarios.dealer_hands(run.round).items()} == {
        "ann": 21,
        "bob": 17,
    }
    text = (ROOT / "scenarios" / "multi-action-basic.toml").read_text()
    text = text.replace('"../rules/', f'"{RULES}/').replace(
        'dealer.2 = { cards = "KD AD", total = "Blackjack" }',
        'dealer.2 = { cards = "KD AD", total = 21 }\ndealer.4 = { total = 17 }',
    )
    assert _run(text) == ["dealer 4: no such dealer hand (the round has 1, 2, 3)"]
    one_hand = text.replace("dealer.4 = { total = 17 }", "").replace("dealer.1 =", "dealer =")
    with pytest.raises(InvalidNotationError):
        loads(one_hand)  # dealer = {...} and dealer.2 = {...} define the table twice


@pytest.mark.parametrize(
    "expect",
    [
        "nett = 3",
        'refused = { step = "one", rule = "PA 633a.11" }',
        'refused = { step = 0, rule = "PA 633a.6", then = "continue" }',
        'refused = { step = 2, rule = "PA 633a.11", then = "later" }',
        "dealer = { cards = 3 }",
        "cards_left = -1",
        'wagers = [{ kind = "blackjack", net = "$1" }]',
        'wagers = [{ player = "ann" }]',
        'wagers = [{ player = "ann", hand = 0, net = "$1" }]',
        'wagers = [{ player = "ann", odds = "lots" }]',
    ],
)
def test_malformed_expectations_are_refused_when_the_file_is_read(expect: str) -> None:
    text = f'game = "classic"\ncards = "10S 7H 9D 6C 5S"\n[expect]\n{expect}\n'
    with pytest.raises(InvalidNotationError):
        loads(text)


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(EZ_BUST_SPLIT)
    result = runner.invoke(app, ["scenario", str(good), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["expectations_met"] and payload["mismatches"] == []
    assert [s["order"] for s in payload["settlements"]] == [1, 2, 3, 4]
    assert [s["odds"] for s in payload["settlements"]] == ["1 to 1"] * 4
    assert payload["dealer"] == {
        "dealer": {"cards": ["6H", "10C", "9H"], "total": 25, "total_text": "25 bust"}
    }
    assert (payload["cards_used"], payload["cards_left"], payload["complete"]) == (8, 0, True)
    bad = tmp_path / "bad.toml"
    bad.write_text(EZ_BUST_SPLIT.replace('hand = 2\nnet = "+$10.00"', 'hand = 2\nnet = "-$10"'))
    result = runner.invoke(app, ["scenario", str(bad)])
    assert result.exit_code == 1
    assert "ann blackjack hand 2: expected net -$10.00, got +$10.00" in result.stderr
    result = runner.invoke(app, ["scenario", str(bad), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["mismatches"] == [
        "ann blackjack hand 2: expected net -$10.00, got +$10.00"
    ]
    stopped = runner.invoke(
        app, ["scenario", str(ROOT / "scenarios" / "hybrid-surrender-refused.toml"), "--json"]
    )
    assert stopped.exit_code == 0, stopped.output
    payload = json.loads(stopped.stdout)
    assert payload["stopped_at"] == 1 and payload["complete"] is False
    assert payload["refusals"][0]["rule"] == "PA 633c.5(p)(2)"


def test_every_shipped_scenario_asserts_per_wager() -> None:
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        history = load(path)
        run = scenarios.play(history)
        assert scenarios.check(history, run) == [], path.name
        expect = history.expect
        if run.round.settlements:
            assert expect.get("wagers"), f"{path.name} lists no [[expect.wagers]]"
            assert expect.get("every_wager", True), path.name
            assert all("net" in w or "result" in w for w in expect["wagers"]), path.name
        assert "dealer" in expect or run.stopped_at is not None, path.name
        assert "cards_used" in expect, path.name
