"""The tablejack command line: deal, scenario and rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.core import notation
from tablejack.games import GAMES, replay

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules" / "pa-classic-6deck.toml"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _stderr_mode_from_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's standard error is no terminal; a TTY_INTERACTIVE set where the tests run
    must not make it one."""
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)


def test_deal_json_summary_balances_and_counts_every_wager() -> None:
    result = runner.invoke(
        app,
        [
            "deal",
            "--game",
            "classic",
            "--rounds",
            "300",
            "--seed",
            "11",
            "--rules",
            str(RULES),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rounds"] == 300
    assert summary["hands"] >= 300 * 7
    assert summary["conservation"] == {"players_plus_house_cents": 0, "balanced": True}
    by_wager = summary["by_wager"]
    assert set(by_wager) >= {"blackjack", "ez_bust"}  # EZ Bust is taken whenever offered
    total = sum(kind["wagered_cents"] for kind in by_wager.values())
    assert total == summary["total_wagered_cents"]
    net = sum(kind["player_net_cents"] for kind in by_wager.values())
    assert net == summary["player_net_cents"] == -summary["house_net_cents"]
    for kind in by_wager.values():
        assert kind["house_edge"] == -kind["player_net_cents"] / kind["wagered_cents"]


def test_deal_same_seed_same_session(tmp_path: Path) -> None:
    first = runner.invoke(app, ["deal", "--rounds", "20", "--seed", "3", "--json"])
    second = runner.invoke(app, ["deal", "--rounds", "20", "--seed", "3", "--json"])
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout


def test_deal_transcripts_and_saved_notation_replay(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["deal", "--rounds", "3", "--seed", "5", "--rules", str(RULES), "--save", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert "Round 3" in result.stdout
    assert "Dealer: up card" in result.stdout
    saved = sorted(tmp_path.glob("round-*.toml"))
    assert len(saved) == 3
    for path in saved:
        round_ = replay(notation.load(path))
        assert round_.is_complete
        assert round_.house_net() == -sum(round_.player_net().values())


def test_deal_rejects_unknown_game_with_exit_2() -> None:
    result = runner.invoke(app, ["deal", "--game", "baccarat", "--rounds", "1"])
    assert result.exit_code == 2
    assert "Unknown game 'baccarat'" in result.stderr


def test_scenario_json_lists_every_settlement_and_meets_expectations() -> None:
    path = ROOT / "scenarios" / "classic-ez-bust-split.toml"
    result = runner.invoke(app, ["scenario", str(path), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["expectations_met"] is True
    kinds = [s["kind"] for s in payload["settlements"]]
    # 633b.16(h): both EZ Bust wagers settle before either Blackjack Wager.
    assert kinds == ["ez_bust", "ez_bust", "blackjack", "blackjack"]
    assert payload["net_by_player"] == {"ann": 5000}
    assert payload["house_net"] == -5000


def test_every_shipped_scenario_meets_its_expectations() -> None:
    paths = sorted((ROOT / "scenarios").glob("*.toml"))
    assert paths
    for path in paths:
        result = runner.invoke(app, ["scenario", str(path), "--json"])
        assert result.exit_code == 0, f"{path.name}: {result.output}"
        assert json.loads(result.stdout)["expectations_met"], path.name


def test_scenario_expectation_mismatch_exits_1(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "classic-ez-bust-two-card-17.toml").read_text()
    text = text.replace('net = { ann = "+$5.00" }', 'net = { ann = "+$15.00" }')
    text = text.replace('"../rules/', f'"{ROOT}/rules/')
    path = tmp_path / "wrong.toml"
    path.write_text(text)
    result = runner.invoke(app, ["scenario", str(path)])
    assert result.exit_code == 1
    assert "ann: expected net +$15.00, got +$5.00" in result.stderr


def test_scenario_with_a_missing_command_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    path.write_text(
        'game = "classic"\ncards = "10S 7H 9D 6C"\ncommands = []\n'
        '[rules]\ndecks = 1\n[[seats]]\nseat = 1\nplayer = "ann"\nwager = "$10"\n'
    )
    result = runner.invoke(app, ["scenario", str(path)])
    assert result.exit_code == 2
    assert "missing command" in result.stderr


def test_scenario_with_an_illegal_command_names_the_clause(tmp_path: Path) -> None:
    path = tmp_path / "illegal.toml"
    path.write_text(
        'game = "classic"\ncards = "10S 7H 9D 6C 5S"\ncommands = ["1 split"]\n'
        '[rules]\ndecks = 1\n[[seats]]\nseat = 1\nplayer = "ann"\nwager = "$10"\n'
    )
    result = runner.invoke(app, ["scenario", str(path)])
    assert result.exit_code == 2
    assert "Command 1 ('1 split')" in result.stderr
    assert "PA 633a.11(a)" in result.stderr


def test_rules_command_prints_every_field_and_rejects_bad_files(tmp_path: Path) -> None:
    result = runner.invoke(app, ["rules", str(RULES)])
    assert result.exit_code == 0
    assert "ez_bust = True" in result.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('game = "classic"\ndecks = 9\n')
    result = runner.invoke(app, ["rules", str(bad)])
    assert result.exit_code == 2
    assert "PA 633a.3(a)" in result.stderr


def test_633c5_v3_deal_shows_the_buzzer_beater_review_warning() -> None:
    rules = ROOT / "rules" / "pa-hybrid-a.toml"
    result = runner.invoke(
        app, ["deal", "--game", "hybrid", "--rounds", "2", "--seed", "1", "--rules", str(rules)]
    )
    assert result.exit_code == 0, result.output
    assert "warning: The Buzzer Beater paytable may give the player an edge" in result.stderr
    assert "A-13" in result.stderr


def test_deal_json_balances_for_every_game() -> None:
    for game_id in sorted(GAMES):
        result = runner.invoke(
            app, ["deal", "--game", game_id, "--rounds", "40", "--seed", "9", "--json"]
        )
        assert result.exit_code == 0, f"{game_id}: {result.output}"
        summary = json.loads(result.stdout)
        assert summary["game"] == game_id
        assert summary["rounds"] == 40
        assert summary["conservation"]["balanced"] is True, game_id
        assert summary["player_net_cents"] == -summary["house_net_cents"]


def test_deal_json_prints_the_json_and_nothing_on_stderr() -> None:
    result = runner.invoke(app, ["deal", "--rounds", "2000", "--seed", "4", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rounds"] == 2000
    assert result.stderr == ""


def test_long_deal_reports_progress_in_plain_lines_on_stderr_only() -> None:
    result = runner.invoke(app, ["deal", "--rounds", "2000", "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"dealing 2,000 rounds…\ndone in \d+\.\d s\n", result.stderr)
    assert "dealing" not in result.stdout and "done in" not in result.stdout
    assert "Round 2000" in result.stdout


def test_short_deal_says_nothing_on_stderr() -> None:
    result = runner.invoke(app, ["deal", "--rounds", "5", "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_long_deal_on_a_terminal_shows_a_bar_on_stderr_and_only_json_on_stdout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TTY_INTERACTIVE", "1")  # asks for the live display, as on a terminal
    result = runner.invoke(app, ["deal", "--rounds", "2000", "--seed", "4", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rounds"] == 2000
    assert "dealing 2,000 rounds" in result.stderr
    assert "2,000/2,000 rounds" in result.stderr
    assert "\x1b[" in result.stderr and "\x1b[" not in result.stdout
