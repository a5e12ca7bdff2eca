"""``benchmarks/load.py --processes 2``: the load benchmark runs a floor of two serve processes
on PostgreSQL, waits until each holds its share of the tables, and reports per process and for
the floor — every figure from the run itself (rounds by table from the store, CPU from
``/proc``), with no error, no cent lost and no ledger problem."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.store import Backend

pytestmark = pytest.mark.slow

LOAD = Path(__file__).resolve().parents[2] / "benchmarks" / "load.py"


def run_load(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LOAD), *arguments],
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_load_reports_each_process_of_a_floor_and_the_floor(postgres: Backend) -> None:
    done = run_load(
        "--tables", "4", "--terminals", "2", "--soak", "8", "--warmup", "2",
        "--processes", "2", "--db", postgres.server_url, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["processes"] == 2
    per_process = report["per_process"]
    assert [row["tables"] for row in per_process] == [2, 2]  # each its share
    assert all(row["rounds"] > 0 for row in per_process)
    assert sum(row["rounds"] for row in per_process) == report["rounds"]
    assert all(row["cpu_ms_per_round"] > 0 for row in per_process)
    assert report["errors"] == 0
    assert report["steps_per_round"] >= 3  # open, the wagers, the clock's close and deal, …
    assert report["sum_of_all_accounts"] == 0
    assert report["ledger_problems"] == []
    # --soak: each process's memory over the run, and the floor flat only if each is
    assert all(row["soak_rss_mb_by_tenth"] for row in per_process)
    peak = max(row["rss_mb_peak"] for row in per_process)  # the floor's: the largest's
    largest = [row["soak_rss_mb_by_tenth"] for row in per_process if row["rss_mb_peak"] == peak]
    assert report["soak_rss_mb_by_tenth"] in largest
    assert report["soak_rss_flat"] == all(row["soak_rss_flat"] for row in per_process)


def test_load_refuses_several_processes_on_sqlite() -> None:
    done = run_load("--processes", "2")
    assert done.returncode == 2
    assert "an SQLite floor runs in one process" in done.stderr


def test_load_reports_where_the_servers_cpu_goes_by_library() -> None:
    """``--perf``: the share of the server's CPU in each library, sampled after the warm-up —
    the interpreter among them, largest first, all of them together not over 100 % (but for
    perf's rounding of each)."""
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed (Debian: linux-perf)")
    done = run_load(
        "--tables", "2", "--terminals", "2", "--seconds", "8", "--warmup", "2",
        "--perf", "3", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    libraries = report["cpu_by_library"]
    assert "error" not in libraries, libraries.get("error")
    shares = libraries["percent"]
    assert shares["python"] > 0
    assert 0 < sum(shares.values()) <= 100.5  # (perf rounds each library's share to 0.01 %)
    assert list(shares.values()) == sorted(shares.values(), reverse=True)


def test_load_at_human_pace_reports_sockets_and_the_deal_per_process() -> None:
    """``--pace human`` at a tiny size: bots that think before they wager and decide, on the
    tables' countdowns; the report holds the sockets each process held (its ``/metrics``), the
    time from the countdown's end to the dealt cards, and every cent."""
    done = run_load(
        "--pace", "human", "--tables", "2", "--terminals", "3", "--seconds", "16",
        "--warmup", "3", "--wagering", "3", "--countdown", "5", "--json", "--bot-processes", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["pace"] == "human"
    # every terminal's socket, as the server counts them (but one away in a network blip)
    assert 6 - report["network_blips"] <= report["sockets_held"] <= 6
    [process] = report["per_process"]
    assert process["sockets_held"] == report["sockets_held"] and process["tables"] == 2
    assert report["rounds"] > 0 and process["rounds"] == report["rounds"]
    assert report["deal_samples"] > 0
    assert report["closes_by_code"] == {}  # no socket closed by a server (blips are the bots')
    # the server's own count agrees: the sockets that ended after the warm-up were the bots'
    # (their blips), none ended by the server; and every connection the bots lost was a blip
    ends = process["socket_ends_after_warmup"]
    assert set(ends) <= {"sign_ins", "ended: peer"}, ends
    assert report["drops_by_reason"] == {}, report["drops_by_reason"]
    lag_p50, lag_p99 = report["bots_loop_lag_p50_p99_ms"]  # the bots' own share of a latency
    assert -5 <= lag_p50 <= lag_p99
    assert report["countdown_end_to_cards_p50_ms"] >= 0  # the cards come after the clock
    assert report["wagers"] > 0 and report["decisions"] > 0
    assert report["sum_of_all_accounts"] == 0
    assert report["ledger_problems"] == []


def test_load_plays_on_a_database_prepared_once(postgres: Backend) -> None:
    """``--prepare-only`` seeds the database (tables, players, credit, terminals; a fresh schema
    when the URL names none) and prints its URL;
    ``--prepared`` plays on it without seeding again — twice, as the growth runs of a large
    floor do — and the accounts still sum to zero."""
    seeded = run_load(
        "--prepare-only", "--tables", "2", "--terminals", "2", "--db", postgres.server_url,
        "--json",
    )  # fmt: skip
    assert seeded.returncode == 0, seeded.stderr
    prepared = json.loads(seeded.stdout.strip().splitlines()[-1])
    assert prepared["db"] == postgres.server_url  # (the test's own schema: seeded there)
    assert (prepared["tables"], prepared["terminals"]) == (2, 2)
    for _ in range(2):
        done = run_load(
            "--prepared", "--db", prepared["db"], "--tables", "2",
            "--terminals", "2", "--seconds", "8", "--warmup", "2", "--wagering", "1",
            "--processes", "2", "--bot-processes", "1", "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["rounds"] > 0
        assert [row["tables"] for row in report["per_process"]] == [1, 1]
        assert report["sum_of_all_accounts"] == 0
        assert report["ledger_problems"] == []


def test_load_refuses_prepared_without_its_database() -> None:
    done = run_load("--prepared", "--tables", "2")
    assert done.returncode == 2
    assert "--prepared needs the --db URL" in done.stderr
