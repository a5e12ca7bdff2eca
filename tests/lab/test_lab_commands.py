"""The lab's CLI commands: edge, dealer-odds, strategy, simulate, parsheet; bad input exits 2;
--json prints only the JSON; the compile message appears only while numba compiles."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numba
import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.lab import compilation
from tablejack.progress import COMPILING

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules" / "pa-classic-6deck.toml"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _stderr_mode_from_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's standard error is no terminal; a TTY_INTERACTIVE set where the tests run
    must not make it one."""
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)


def _json(args: list[str]) -> dict:
    """Run a --json command: its standard output is one JSON object, its standard error empty."""
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)


@contextmanager
def _compiling(started: Callable[[], None], finished: Callable[[float], None]) -> Iterator[None]:
    """A detector that reports numba compiling for 2.5 s, whatever the cache holds."""
    started()
    yield
    finished(2.5)


@contextmanager
def _not_compiling(
    started: Callable[[], None], finished: Callable[[float], None]
) -> Iterator[None]:
    """A detector that reports no compilation (the kernels came from the cache)."""
    yield


@pytest.mark.slow
def test_edge_json_is_one_object_with_the_exact_house_edge() -> None:
    payload = _json(["edge", "--game", "classic", "--decks", "6", "--json"])
    assert payload["game"] == "classic"
    assert payload["wager"] == "blackjack"
    assert payload["method"] == "exact"
    assert 0.003 < payload["house_edge"] < 0.0036
    assert payload["rules"]["decks"] == 6


def test_edge_rule_flags_change_the_figure() -> None:
    base = _json(["edge", "--json"])["house_edge"]
    no_das = _json(["edge", "--no-das", "--no-surrender", "--split-hands", "2", "--json"])
    assert no_das["house_edge"] > base
    assert no_das["rules"]["max_split_hands"] == 2


@pytest.mark.parametrize("wager", ["ez_bust", "ez-bust", "insurance"])
def test_edge_of_side_wagers(wager: str) -> None:
    payload = _json(["edge", "--rules", str(RULES), "--wager", wager, "--json"])
    assert payload["house_edge"] > 0.05


def test_dealer_odds_json_by_up_card() -> None:
    payload = _json(["dealer-odds", "--decks", "1", "--json"])
    assert list(payload["upcards"]) == ["2", "3", "4", "5", "6", "7", "8", "9", "T", "A"]
    assert payload["upcards"]["6"]["bust"] == pytest.approx(0.420823, abs=1e-6)
    assert set(payload["upcards"]["A"]) == {"17", "18", "19", "20", "21", "blackjack", "bust"}
    post = _json(["dealer-odds", "--decks", "1", "--post-peek", "--json"])
    assert post["upcards"]["A"]["bust"] == pytest.approx(0.169815, abs=1e-6)
    infinite = _json(["dealer-odds", "--decks", "inf", "--h17", "--json"])
    assert infinite["decks"] == "inf" and infinite["h17"] is True


def test_strategy_formats() -> None:
    payload = _json(["strategy", "--game", "classic", "--json"])
    assert payload["hard"]["16"][8] == "R"
    assert payload["pairs"]["8,8"] == ["P"] * 10
    csv = runner.invoke(app, ["strategy", "--format", "csv"])
    assert csv.exit_code == 0 and csv.stdout.startswith("table,hand,2,3")
    text = runner.invoke(app, ["strategy"])
    assert text.exit_code == 0 and "pairs:" in text.stdout


@pytest.mark.slow
def test_simulate_json() -> None:
    payload = _json(
        [
            "simulate",
            "--rules",
            str(RULES),
            "--hands",
            "100000",
            "--seed",
            "5",
            "--workers",
            "1",
            "--json",
        ]
    )
    assert payload["hands"] >= 90_000
    assert set(payload["house_edge"]) == {"blackjack", "ez_bust"}
    assert payload["stderr"]["blackjack"] > 0
    assert payload["hands_per_second"] > 0
    again = _json(
        [
            "simulate",
            "--rules",
            str(RULES),
            "--hands",
            "100000",
            "--seed",
            "5",
            "--workers",
            "1",
            "--json",
        ]
    )
    assert again["house_edge"] == payload["house_edge"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["edge", "--game", "poker"], "Unknown game"),
        (["edge", "--game", "hybrid", "--wager", "ez_bust"], "Unknown wager"),
        (["edge", "--wager", "royal"], "Unknown wager"),
        (["edge", "--decks", "9"], "633a.3"),
        (["edge", "--split-hands", "1"], "633a.11"),
        (["strategy", "--format", "xml"], "text, csv or json"),
        (["dealer-odds", "--decks", "twelve"], "--decks"),
        (["simulate", "--hands", "0"], "at least 1"),
        (["simulate", "--hands", "-5"], "at least 1"),
        (["simulate", "--hands", "10", "--workers", "0"], "at least 1"),
        (["edge", "--rules", "/nonexistent/rules.toml"], "No such file"),
    ],
)
def test_bad_input_is_a_message_and_exit_code_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_parsheet_writes_html_json_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "sheet"
    payload = _json(
        [
            "parsheet",
            "--rules",
            str(RULES),
            "--out",
            str(out),
            "--hands",
            "50000",
            "--workers",
            "1",
            "--json",
        ]
    )
    assert payload["player_edge_wagers"] == []
    for name in payload["files"]:
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "parsheet.json").read_text())
    assert [w["wager"] for w in data["wagers"]] == ["blackjack", "insurance", "ez_bust"]
    for wager in data["wagers"]:
        total = sum(line["return"] for line in wager["lines"])
        if wager["distribution_method"] == "exact":
            assert total == pytest.approx(-wager["house_edge"], abs=1e-9)
    html = (out / "parsheet.html").read_text()
    assert "Basic strategy" in html and "class='flag'" not in html
    assert data["what_if"] == [] and "WHAT-IF" not in html  # permitted rules carry no label
    assert "Rule variations" in html and len(data["rule_variations"]["rows"]) >= 10
    assert (out / "dealer_bust.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_parsheet_flags_a_player_edge_in_red_at_the_top(tmp_path: Path) -> None:
    rules = tmp_path / "single.toml"
    rules.write_text('game = "classic"\ndecks = 1\nname = "single deck"\n')
    out = tmp_path / "sheet"
    payload = _json(
        [
            "parsheet",
            "--rules",
            str(rules),
            "--out",
            str(out),
            "--hands",
            "20000",
            "--workers",
            "1",
            "--no-variations",
            "--json",
        ]
    )
    assert payload["player_edge_wagers"] == ["blackjack"]
    html = (out / "parsheet.html").read_text()
    flag = html.index("class='flag'")
    assert flag < html.index("<h2>Summary")
    assert "PLAYER EDGE" in html


def test_compile_message_appears_only_while_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compilation, "watch_compilation", _compiling)
    compiled = runner.invoke(app, ["edge", "--decks", "6"])
    assert compiled.exit_code == 0, compiled.output
    assert re.fullmatch(
        re.escape(COMPILING) + r"\ndone in \d+\.\d s \(2\.5 s compiling the kernels\)\n",
        compiled.stderr,
    )
    monkeypatch.setattr(compilation, "watch_compilation", _not_compiling)
    cached = runner.invoke(app, ["edge", "--decks", "6"])
    assert cached.exit_code == 0, cached.output
    assert cached.stderr == ""
    assert compiled.stdout == cached.stdout
    assert "house edge" in cached.stdout and "compiling" not in cached.stdout


def test_json_stays_alone_while_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compilation, "watch_compilation", _compiling)
    payload = _json(["edge", "--decks", "6", "--json"])
    assert payload["method"] == "exact"


def test_compile_message_on_a_terminal_is_live_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_INTERACTIVE", "1")  # asks for the live display, as on a terminal
    monkeypatch.setattr(compilation, "watch_compilation", _compiling)
    result = runner.invoke(app, ["edge", "--decks", "6"])
    assert result.exit_code == 0, result.output
    assert COMPILING in result.stderr
    assert "compiled the kernels in 2.5 s" in result.stderr
    assert result.stdout.startswith("classic blackjack") and "\x1b[" not in result.stdout
    with_json = runner.invoke(app, ["edge", "--decks", "6", "--json"])
    assert json.loads(with_json.stdout)["method"] == "exact"
    assert "compiled the kernels in" not in with_json.stderr  # the live display leaves nothing


def test_watch_compilation_reports_a_real_compile_and_not_a_compiled_kernel() -> None:
    events: list[str] = []

    @numba.njit(cache=False)
    def kernel(x: int) -> int:
        return x + 1

    with compilation.watch_compilation(
        lambda: events.append("started"), lambda s: events.append(f"finished {s > 0}")
    ):
        assert kernel(1) == 2
        assert events == ["started", "finished True"]
        assert kernel(2) == 3  # compiled for this signature: no event
    assert events == ["started", "finished True"]


def test_simulate_reports_progress_in_plain_lines_on_stderr_only() -> None:
    result = runner.invoke(
        app, ["simulate", "--rules", str(RULES), "--hands", "20000", "--workers", "1"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == "simulating 20,000 hands…"
    assert re.fullmatch(r"done in \d+\.\d s( \(.* compiling the kernels\))?", lines[-1])
    assert len(lines) <= 3  # the compile line only when numba compiled
    assert "simulating" not in result.stdout and "house edge" in result.stdout
