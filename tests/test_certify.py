"""``tablejack certify``: the clause matrix from the clause ids tests and scenarios carry, the
property runs, the shuffle statistics and every wager's exact against simulated edge, written as
JSON and HTML; exit 1 on a failure, a clause without a test listed as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablejack.certify import clauses as catalogue
from tablejack.certify import matrix
from tablejack.cli import app

pytestmark = pytest.mark.slow  # a pytest process, simulations and shuffles

ROOT = Path(__file__).resolve().parent
PROJECT = ROOT.parent
runner = CliRunner()


@pytest.fixture(autouse=True)
def _plain_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)


def _certify(tmp_path: Path, *extra: str) -> tuple[int, dict[str, object]]:
    out = tmp_path / "report"
    result = runner.invoke(
        app,
        [
            "certify",
            "--rules", str(PROJECT / "rules" / "pa-hybrid-b.toml"),
            "--rules", str(PROJECT / "rules" / "pa-classic-6deck.toml"),
            "--out", str(out),
            "--hands", "5000",
            "--rounds", "20",
            "--shoes", "500",
            "--tests", str(PROJECT / "tests" / "games" / "test_countdown_table.py"),
            "--test-workers", "0",
            "--generator", "seeded",  # reproducible: the secure generator's p-values vary by run
            "--json",
            *extra,
        ],
    )  # fmt: skip
    assert (out / "certify.html").exists(), result.output
    return result.exit_code, json.loads((out / "certify.json").read_text())


def test_certify_writes_the_report_of_every_clause_ambiguity_and_wager(tmp_path: Path) -> None:
    code, data = _certify(tmp_path)
    assert code == 0, data["failures"]
    assert data["passed"] is True
    rows = {row["id"]: row for row in data["clauses"]}
    assert list(rows) == [item.id for item in catalogue.CLAUSES]
    # The countdown tests carry (z) and (c)(2); the scenarios (h) and (aa)(1)(ii).
    assert rows["PA 633c.5(z)"]["status"] == "passed"
    assert any(t["outcome"] == "passed" for t in rows["PA 633c.5(c)(2)"]["tests"])
    assert rows["PA 633b.16(h)"]["scenarios"]
    # A clause without a test is listed as such, not a failure.
    assert rows["PA 633c.5(e)(1)"]["status"] == "no test"
    assert data["summary"]["no_test"] > 0
    ambiguities = {row["id"]: row for row in data["ambiguities"]}
    assert list(ambiguities) == [f"A-{n}" for n in range(1, 30)]
    assert ambiguities["A-10"]["option"] == "split_against_dealer_blackjack"
    assert ambiguities["A-21"]["scenarios"][0]["file"] == "classic-ez-bust-two-card-17.toml"
    readings = {row["id"]: row for row in data["readings"]}
    assert readings["633c.5 (z), (c)(2)"]["option"] == "countdown_default, countdown_table"
    assert any(t["outcome"] == "passed" for t in readings["633c.5 (z), (c)(2)"]["tests"])
    wagers = {(Path(w["rules_file"]).name, w["wager"]): w for w in data["wagers"]}
    assert set(wagers) >= {
        ("pa-hybrid-b.toml", "blackjack"),
        ("pa-hybrid-b.toml", "royal_match"),
        ("pa-classic-6deck.toml", "ez_bust"),
        ("pa-classic-6deck.toml", "insurance"),
    }
    main = wagers[("pa-classic-6deck.toml", "blackjack")]
    assert main["exact_edge"] == pytest.approx(0.003338, abs=1e-6)
    assert main["verdict"] == "agree" and main["stderr"] > 0 and 0 < main["hit_frequency"] < 1
    assert wagers[("pa-classic-6deck.toml", "insurance")]["verdict"] == "exact only"
    shuffle = data["shuffle"]
    assert [(s["source"], s["decks"]) for s in shuffle] == [("seeded", 6)]
    assert all(p["passed"] and p["rounds"] == 20 for p in data["properties"])
    html = (tmp_path / "report" / "certify.html").read_text()
    assert "PA 633c.5(aa)(1)(ii)" in html and "no test" in html and "A-29" in html


def test_certify_exits_1_on_a_failing_scenario(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    text = (PROJECT / "scenarios" / "classic-ez-bust-two-card-17.toml").read_text()
    text = text.replace('"../rules/', f'"{PROJECT}/rules/').replace('"+$5.00"', '"+$15.00"')
    (folder / "wrong.toml").write_text(text)
    code, data = _certify(tmp_path, "--scenarios", str(folder), "--no-shuffle", "--no-edges")
    assert code == 1
    assert data["passed"] is False
    assert data["failures"] == ["scenario wrong.toml: ann: expected net +$15.00, got +$5.00"]
    rows = {row["id"]: row for row in data["clauses"]}
    assert rows["PA 633b.16(f)"]["status"] == "failed"


def test_clause_ids_from_test_names_and_scenario_text() -> None:
    assert matrix.test_citations("test_633b16_h_settles_before_blackjack_wager") == (
        ("PA 633b.16(h)",),
        (),
    )
    assert matrix.test_citations("test_633c5_z_c2_countdown_option[x]") == (
        ("PA 633c.5(z)", "PA 633c.5(c)(2)"),
        (),
    )
    assert matrix.test_citations("test_633c5_d_g_i_inspections") == (
        ("PA 633c.5(d)", "PA 633c.5(g)", "PA 633c.5(i)"),
        (),
    )
    assert matrix.test_citations("test_nj_a_b2iii_ace_nine") == (
        ("NJ MAB (a)", "NJ MAB (b)(2)(iii)"),
        (),
    )
    assert matrix.test_citations("test_633b16_classic_round") == (("PA 633b.16",), ())
    assert matrix.test_citations("test_deal_json_summary") == ((), ())
    cited, ambiguities = matrix.text_citations(
        'clause = "PA 633c.5(aa)(3)(i)"  # NJ MAB (f)(3); A-26 and PA 633c.5(zz)'
    )
    assert cited == ("PA 633c.5(aa)(3)(i)", "NJ MAB (f)(3)") and ambiguities == ("A-26",)
    assert matrix.covering("PA 633c.5(aa)", ["PA 633c.5(aa)(1)(ii)"])
    assert not matrix.covering("PA 633c.5(a)", ["PA 633c.5(aa)(1)"])
    assert matrix.covering("NJ MAB", ["NJ MAB (f)(5)"])


def test_the_catalogue_has_every_clause_once_with_its_parent() -> None:
    ids = [item.id for item in catalogue.CLAUSES]
    assert len(ids) == len(set(ids))
    for item in catalogue.CLAUSES:
        assert item.parent is None or item.parent in ids, item.id
        assert item.scope in ("engine", "server", "procedure")
    assert {"PA 633c.5(ee)(5)", "NJ MAB (f)(8)", "PA 633b.16(i)"} <= set(ids)
