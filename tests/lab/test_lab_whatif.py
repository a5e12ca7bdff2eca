"""What-if rules: the lab analyses rule sets a game's regulation refuses and labels every figure
with each departure and its clause; the engine still refuses them; the rule-variation table.

Published figures the rule effects are checked against (each a difference of house edges):

* ``CHART_6D``: blackjackreview.com, "Blackjack Rule Variations and Odds"
  (https://www.blackjackreview.com/wp/blackjack-rule-variations/), effects for a six-deck
  game (S17, DOA, no DAS, resplit except aces, no surrender): 6:5 -1.36%, H17 -0.20%, DAS
  +0.14%, late surrender +0.08%, RSA +0.07%, 4 decks +0.05%, 8 decks -0.02%, 2 decks +0.20%,
  1 deck +0.50% (player's side; the lab's effect is on the house edge, the opposite sign).
* Griffin's multi-deck figures as cliquiz.com/5 tabulates them ("Effects in Percent", from
  The Theory of Blackjack): double on 10-11 only -0.18%, on 9-10-11 only -0.09%.
* Wizard of Odds' rule variations (as reproduced at realonlinegambling.com/blackjack/odds/,
  eight decks): the player may draw to split aces +0.19%.
* Wizard of Odds, Blackjack Appendix 9 (exact, composition-dependent), five decks, resplit to
  four hands, no surrender: S17 -0.3804%, H17 -0.5918% (the lab's golden data,
  ``tests/lab/data/player_values.json``): H17 costs 0.2114%.
* No hole card: the European rule (a dealer Blackjack takes doubles and splits) adds about
  0.11% (casinopedia.org, "European No-Hole-Card Rule"); the dealer taking the original wager
  only (OBO) is equivalent to the peek (blackjackinvestment.blogspot.com, "Varied rules on
  hole card", 2011).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablejack.cli import app
from tablejack.core import ClassicRules
from tablejack.core.errors import RulesError
from tablejack.games import load_rules
from tablejack.games.hybrid_rules import HybridRules
from tablejack.games.hybrid_shared_rules import HybridSharedRules
from tablejack.games.multi_action import MultiActionRules
from tablejack.lab import exact
from tablejack.lab.games import rules_for
from tablejack.lab.model import AnalysisRules
from tablejack.lab.whatif import lab_rules, rule_variations

DATA = Path(__file__).parent / "data"
runner = CliRunner()

H17_6D = 0.005303782391608086
"""The exact house edge of 6D H17 DAS DOA SP4 LS peek 3:2 as the lab computes it."""
S17_6D = 0.003337629230268181
"""The same with S17 (the classic game's defaults; ``exact.py``'s doctest prints 0.334%)."""


@pytest.fixture(autouse=True)
def _stderr_mode_from_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)


def _refusal(make: object) -> RulesError:
    """The engine's own refusal of a rules object."""
    with pytest.raises(RulesError) as caught:
        make()  # type: ignore[operator]
    return caught.value


def test_633a7_h17_is_a_labelled_what_if_in_the_lab() -> None:
    payload = _json(["edge", "--game", "classic", "--h17", "--json"])
    refusal = _refusal(lambda: ClassicRules(dealer_hits_soft_17=True))
    assert payload["what_if"] == [
        {
            "field": "dealer_hits_soft_17",
            "value": True,
            "rule": "PA 633a.7",
            "sentence": refusal.message,
            "label": "what-if: not permitted under PA 633a.7 (dealer hits soft 17)",
        }
    ]
    assert payload["rules"]["dealer_hits_soft_17"] is True
    assert payload["rules"]["analysis"]["h17"] is True
    assert payload["house_edge"] == pytest.approx(H17_6D, abs=1e-10)
    base = _json(["edge", "--game", "classic", "--json"])
    assert base["what_if"] == []
    assert base["house_edge"] == pytest.approx(S17_6D, abs=1e-10)
    # H17 costs the player about 0.20% in a six-deck game (CHART_6D)
    assert payload["house_edge"] - base["house_edge"] == pytest.approx(0.0020, abs=0.0002)


def test_633a7_h17_text_output_names_the_departure_and_its_clause() -> None:
    result = runner.invoke(app, ["edge", "--game", "classic", "--h17"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "what-if: not permitted under PA 633a.7 (dealer hits soft 17)"
    assert "6D H17" in lines[1] and "0.5304%" in lines[1]


def test_633a7_the_engine_still_refuses_h17(tmp_path: Path) -> None:
    assert _refusal(lambda: ClassicRules(dealer_hits_soft_17=True)).rule == "PA 633a.7"
    assert _refusal(lambda: ClassicRules().replace(dealer_hits_soft_17=True)).rule == "PA 633a.7"
    path = tmp_path / "h17.toml"
    path.write_text('game = "classic"\ndealer_hits_soft_17 = true\n')
    assert _refusal(lambda: load_rules(path)).rule == "PA 633a.7"
    assert _refusal(lambda: rules_for("classic", h17=True)).rule == "PA 633a.7"
    # the what-if leaves the rules the engine would play permitted
    lab = lab_rules("classic", path)
    assert lab.rules == ClassicRules() and lab.analysis.h17


def test_permitted_rules_carry_no_label() -> None:
    payload = _json(["edge", "--no-das", "--no-surrender", "--json"])
    assert payload["what_if"] == []
    text = runner.invoke(app, ["edge", "--no-das"])
    assert text.exit_code == 0 and "what-if" not in text.stdout
    strategy = runner.invoke(app, ["strategy", "--format", "csv"])
    assert strategy.stdout.startswith("table,hand")


def test_633a13_six_to_five_is_permitted_on_the_classic_table_and_costs_its_closed_form() -> None:
    """§ 633a.13 allows 6 to 5 "where approved": no label. Blackjack is no decision, so the
    strategy is unchanged and the cost is 0.3 x P(player Blackjack, no dealer Blackjack)."""
    payload = _json(["edge", "--blackjack-pays", "6:5", "--json"])
    assert payload["what_if"] == []
    assert payload["rules"]["blackjack_pays"] == "6 to 5"
    player = Fraction(2 * 24 * 96, 312 * 311)
    dealer_given_player = Fraction(2 * 23 * 95, 310 * 309)
    closed_form = float(Fraction(3, 10) * player * (1 - dealer_given_player))
    assert payload["house_edge"] - S17_6D == pytest.approx(closed_form, abs=1e-12)
    assert closed_form == pytest.approx(0.0136, abs=0.0001)  # CHART_6D: 6:5 costs 1.36%
    odd = _json(["edge", "--blackjack-pays", "1:1", "--json"])
    assert [d["rule"] for d in odd["what_if"]] == ["PA 633a.13"]


def test_633c5v1_six_to_five_on_a_hybrid_table_is_a_labelled_what_if() -> None:
    lab = lab_rules("hybrid", blackjack_pays="6 to 5")
    refusal = _refusal(lambda: HybridRules(blackjack_pays=Fraction(6, 5)))
    assert [(d.field, d.value, d.rule, d.sentence) for d in lab.what_if] == [
        ("blackjack_pays", Fraction(6, 5), "PA 633c.5(v)(1)", refusal.message)
    ]
    assert lab.analysis.blackjack_pays == 1.2 and lab.rules == HybridRules()
    assert lab.labels == ["what-if: not permitted under PA 633c.5(v)(1) (Blackjack pays 6 to 5)"]


def test_633c5f_two_decks_on_a_hybrid_shared_table_give_the_published_two_deck_kings_bounty(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "two-deck.toml"
    rules.write_text('game = "hybrid-shared"\ndecks = 2\nkings_bounty_paytable = "two-deck"\n')
    payload = _json(
        ["edge", "--game", "hybrid-shared", "--rules", str(rules), "--wager", "kings_bounty",
         "--json"]
    )  # fmt: skip
    refusal = _refusal(lambda: HybridSharedRules(decks=2))
    assert [(d["rule"], d["sentence"]) for d in payload["what_if"]] == [
        ("PA 633c.5(f)", refusal.message)
    ]
    assert payload["rules"]["decks"] == 2
    published = json.loads((DATA / "side_wager_edges.json").read_text())["kings_bounty"]
    (figure,) = [row for row in published if row["paytable"] == "two-deck"]
    assert figure["decks"] == 2
    assert payload["house_edge"] * 100 == pytest.approx(figure["house_edge_percent"], abs=5e-4)


def test_nj_mab_b2_six_decks_and_a_refused_resplit_are_departures_of_multi_action() -> None:
    lab = lab_rules("multi-action", decks=6, rsa=True)
    assert [(d.field, d.rule) for d in lab.what_if] == [
        ("decks", "NJ MAB (b)(2)"),
        ("resplit_aces", _refusal(lambda: MultiActionRules(resplit_aces=True)).rule),
    ]
    assert lab.analysis.decks == 6 and lab.analysis.resplit_aces
    # a resplit becomes permitted once a third hand is: the departures are retried
    assert lab_rules("multi-action", rsa=True, split_hands=3).what_if == ()


def test_633a10b_no_peek_is_permitted_and_only_the_european_rule_costs_about_011() -> None:
    """Without the peek a dealer Blackjack collects the original wager only (§ 633a.10(b),
    § 633a.11(d)): the engine permits it and it is worth about nothing; the European rule (the
    dealer Blackjack takes doubles and splits, no engine field) costs about 0.11%."""
    no_peek = _json(["edge", "--no-peek", "--json"])
    assert no_peek["what_if"] == [] and no_peek["rules"]["analysis"]["peek"] is False
    assert no_peek["house_edge"] - S17_6D == pytest.approx(0.0, abs=0.0001)  # OBO = peek
    enhc = AnalysisRules(decks=6, peek=False, double_full_amount=True, split_full_amount=True)
    effect = exact.analyse(enhc).house_edge - S17_6D
    assert effect == pytest.approx(0.0010557518909, abs=1e-10)
    assert effect == pytest.approx(0.0011, abs=0.0002)


def test_633a7_h17_costs_what_wizard_of_odds_appendix_9_gives_for_five_decks() -> None:
    lab = lab_rules("classic", decks=5, surrender=False, h17=True)
    assert [d.rule for d in lab.what_if] == ["PA 633a.7"]
    h17 = exact.analyse(lab.analysis).house_edge
    s17 = exact.analyse(lab.analysis.replace(h17=False)).house_edge
    assert h17 - s17 == pytest.approx(-0.003804 - -0.005918, abs=0.0001)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["edge", "--decks", "9"], "PA 633a.3(a)"),
        (["edge", "--split-hands", "1"], "PA 633a.11(c)"),
        (["edge", "--double-on", "8-11"], "PA 633a.10"),
        (["edge", "--blackjack-pays", "lots"], "not odds"),
        (["edge", "--game", "hybrid", "--peek"], "no rule flag --peek"),
    ],
)
def test_what_the_lab_cannot_analyse_stays_an_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_633c5v2_a_departure_the_analysis_does_not_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "insurance.toml"
    path.write_text('game = "hybrid"\ninsurance_pays = "3 to 1"\n')
    result = runner.invoke(app, ["edge", "--game", "hybrid", "--rules", str(path)])
    assert result.exit_code == 2
    assert "PA 633c.5(v)(2)" in result.output and "does not read insurance_pays" in result.output
    wrong_type = tmp_path / "type.toml"
    wrong_type.write_text('game = "classic"\ndealer_hits_soft_17 = "yes"\n')
    refused = runner.invoke(app, ["edge", "--rules", str(wrong_type)])
    assert refused.exit_code == 2 and "must be true or false" in refused.output


def test_a_rules_file_with_departures_keeps_its_permitted_values(tmp_path: Path) -> None:
    path = tmp_path / "file.toml"
    path.write_text(
        'game = "classic"\ndecks = 2\ndealer_hits_soft_17 = true\nez_bust_push_all = true\n'
        'ez_bust = true\ntable_minimum = "$5"\ntable_maximum = "$50"\n'
    )
    lab = lab_rules("classic", path)
    assert [d.field for d in lab.what_if] == ["dealer_hits_soft_17"]
    assert lab.rules == ClassicRules(
        decks=2, ez_bust=True, ez_bust_push_all=True, table_minimum=500, table_maximum=5000
    )
    assert lab.rules_mapping()["dealer_hits_soft_17"] is True


def test_strategy_names_the_departures_in_json_text_and_csv() -> None:
    payload = _json(["strategy", "--h17", "--json"])
    assert [d["rule"] for d in payload["what_if"]] == ["PA 633a.7"]
    assert payload["rules"]["h17"] is True
    assert payload["soft"]["A,7"][0] == "Ds"  # soft 18 doubles against a 2 under H17
    text = runner.invoke(app, ["strategy", "--h17"]).stdout.splitlines()
    assert text[0].startswith("what-if: not permitted under PA 633a.7")
    csv = runner.invoke(app, ["strategy", "--h17", "--format", "csv"]).stdout.splitlines()
    assert csv[0] == "# what-if: not permitted under PA 633a.7 (dealer hits soft 17)"
    assert csv[1].startswith("table,hand")


@pytest.mark.slow
def test_simulate_plays_and_labels_the_what_if() -> None:
    args = ["simulate", "--h17", "--blackjack-pays", "1:1", "--hands", "200000", "--seed", "3"]
    payload = _json([*args, "--workers", "1", "--json"])
    assert [d["rule"] for d in payload["what_if"]] == ["PA 633a.7", "PA 633a.13"]
    assert payload["rules"]["h17"] is True and payload["rules"]["blackjack_pays"] == 1.0
    exact_edge = exact.analyse(AnalysisRules(decks=6, h17=True, blackjack_pays=1.0)).house_edge
    figures = payload["wagers"]["blackjack"]
    assert abs(figures["house_edge"] - exact_edge) < 4 * figures["stderr"]
    text = runner.invoke(app, [*args, "--hands", "2000", "--workers", "1"])
    assert text.stdout.startswith("what-if: not permitted under PA 633a.7")


# Each single change of the classic defaults (6D S17 DAS DOA SP4 LS peek 3:2): the published
# effect on the house edge and its tolerance, and the clause when the change is a what-if.
PUBLISHED_EFFECTS = {
    "1 deck": (-0.0050, 0.0003, None),  # CHART_6D
    "2 decks": (-0.0020, 0.0003, None),  # CHART_6D
    "4 decks": (-0.0005, 0.0002, None),  # CHART_6D
    "8 decks": (0.0002, 0.0002, None),  # CHART_6D
    "H17 (dealer hits soft 17)": (0.0020, 0.0002, "PA 633a.7"),  # CHART_6D
    "no double after split": (0.0014, 0.0002, None),  # CHART_6D
    "no surrender": (0.0008, 0.0002, None),  # CHART_6D
    "RSA (resplit aces)": (-0.0007, 0.0002, None),  # CHART_6D
    "HSA (split aces may hit)": (-0.0019, 0.0003, None),  # Wizard of Odds, eight decks
    "double on 9-11 only": (0.0009, 0.0002, None),  # Griffin, multi-deck
    "double on 10-11 only": (0.0018, 0.0003, None),  # Griffin, multi-deck
    "Blackjack pays 6 to 5": (0.0136, 0.0001, None),  # CHART_6D
    "no peek (original wager only)": (0.0, 0.0001, None),  # OBO is the peek game
}


@pytest.mark.slow
def test_rule_variation_table_of_the_classic_defaults_agrees_with_published_effects() -> None:
    table = rule_variations(lab_rules("classic"), workers=1)
    assert table["base"]["house_edge"] == pytest.approx(S17_6D, abs=1e-10)
    rows = {row["change"]: row for row in table["rows"]}
    assert set(PUBLISHED_EFFECTS) <= set(rows)
    assert {"split to 2 hands", "split to 3 hands"} <= set(rows)
    for change, (effect, tolerance, clause) in PUBLISHED_EFFECTS.items():
        row = rows[change]
        assert row["effect"] == pytest.approx(effect, abs=tolerance), change
        assert row["effect"] == pytest.approx(row["house_edge"] - S17_6D, abs=1e-15)
        assert [d["rule"] for d in row["what_if"]] == ([clause] if clause else []), change
    assert rows["H17 (dealer hits soft 17)"]["house_edge"] == pytest.approx(H17_6D, abs=1e-10)
    # more hands from splitting never cost the player
    assert rows["split to 2 hands"]["effect"] > rows["split to 3 hands"]["effect"] > 0


@pytest.mark.slow
def test_633c5f_rule_variations_of_a_hybrid_table_label_the_deck_counts_it_refuses() -> None:
    table = rule_variations(lab_rules("hybrid"), workers=2)
    rows = {row["change"]: row for row in table["rows"]}
    for decks in ("1 deck", "2 decks", "4 decks"):
        assert [d["rule"] for d in rows[decks]["what_if"]] == ["PA 633c.5(f)"]
    assert rows["8 decks"]["what_if"] == []
    assert [d["rule"] for d in rows["Blackjack pays 6 to 5"]["what_if"]] == ["PA 633c.5(v)(1)"]
    assert [d["rule"] for d in rows["H17 (dealer hits soft 17)"]["what_if"]] == ["PA 633c.5(s)"]
    assert "no surrender" not in rows and "late surrender" not in rows  # no field


@pytest.mark.slow
def test_633a7_parsheet_of_an_h17_rules_file_has_the_banner_and_the_variation_table(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "h17.toml"
    rules.write_text('game = "classic"\nname = "H17 what-if"\ndealer_hits_soft_17 = true\n')
    out = tmp_path / "sheet"
    payload = _json(
        ["parsheet", "--rules", str(rules), "--out", str(out), "--hands", "20000",
         "--workers", "1", "--json"]
    )  # fmt: skip
    assert [d["rule"] for d in payload["what_if"]] == ["PA 633a.7"]
    html = (out / "parsheet.html").read_text()
    banner = html.index("WHAT-IF RULES")
    assert banner < html.index("<h2>Summary</h2>")
    assert "what-if: not permitted under PA 633a.7 (dealer hits soft 17)" in html[banner:]
    assert "<h2>Rule variations (main wager, exact)</h2>" in html
    data = json.loads((out / "parsheet.json").read_text())
    assert data["rules"]["dealer_hits_soft_17"] is True
    assert data["wagers"][0]["house_edge"] == pytest.approx(H17_6D, abs=1e-10)
    rows = {row["change"]: row for row in data["rule_variations"]["rows"]}
    back = rows["S17 (dealer stands on soft 17)"]
    assert back["what_if"] == [] and back["house_edge"] == pytest.approx(S17_6D, abs=1e-10)
    assert [d["rule"] for d in rows["1 deck"]["what_if"]] == ["PA 633a.7"]  # still H17
    # the flags reach the par sheet too; a permitted sheet carries no banner
    plain = tmp_path / "plain"
    clean = _json(
        ["parsheet", "--rules", str(rules), "--s17", "--out", str(plain), "--hands", "2000",
         "--workers", "1", "--no-variations", "--json"]
    )  # fmt: skip
    assert clean["what_if"] == []
    plain_html = (plain / "parsheet.html").read_text()
    assert "WHAT-IF" not in plain_html and "Rule variations" not in plain_html


def test_633c5f_paytable_design_on_two_decks_is_a_labelled_what_if_of_the_two_deck_shoe() -> None:
    """``paytable`` takes what-if rules like every lab command: two decks on a hybrid-shared
    table are labelled with the clause, and the King's Bounty outcomes are those of two decks —
    the base paytable's exact edge is the one ``edge`` gives for the same two-deck shoe."""
    args = ["--game", "hybrid-shared", "--decks", "2", "--wager", "kings_bounty"]
    design = _json(["paytable", *args, "--target-edge", "5%", "--count", "2", "--json"])
    edge = _json(["edge", *args, "--json"])
    refusal = _refusal(lambda: HybridSharedRules(decks=2))
    assert [(d["rule"], d["sentence"]) for d in design["what_if"]] == [
        ("PA 633c.5(f)", refusal.message)
    ]
    assert design["what_if"] == edge["what_if"]
    assert design["base"]["house_edge"] == pytest.approx(edge["house_edge"], abs=1e-12)
    six = _json(["edge", "--game", "hybrid-shared", "--wager", "kings_bounty", "--json"])
    assert abs(design["base"]["house_edge"] - six["house_edge"]) > 0.01  # not the six-deck shoe


@pytest.mark.slow
def test_633c5f_exposure_on_two_decks_is_a_labelled_what_if() -> None:
    """``exposure`` takes what-if rules too: labelled, and off the top the two-deck edge."""
    args = ["--game", "hybrid-shared", "--decks", "2", "--wager", "kings_bounty"]
    walk = _json(["exposure", *args, "--shoes", "20", "--json"])
    edge = _json(["edge", *args, "--json"])
    assert walk["what_if"] == edge["what_if"] and walk["what_if"][0]["rule"] == "PA 633c.5(f)"
    assert walk["wagers"]["kings_bounty"]["house_edge"] == pytest.approx(
        edge["house_edge"], abs=1e-12
    )
    text = runner.invoke(app, ["exposure", *args, "--shoes", "20"])
    assert text.exit_code == 0 and "what-if: not permitted under PA 633c.5(f)" in text.stdout


def test_633a10b_the_simulation_refuses_no_peek_with_a_sentence() -> None:
    """The classic simulation kernel plays the peek game only: ``simulate --no-peek`` exits 2
    with a sentence, while ``edge --no-peek`` analyses the same rules exactly."""
    refused = runner.invoke(app, ["simulate", "--no-peek", "--hands", "1000", "--json"])
    assert refused.exit_code == 2 and "analysed exactly only" in refused.output
    assert _json(["edge", "--no-peek", "--json"])["rules"]["analysis"]["peek"] is False


@pytest.mark.parametrize("command", ["edge", "strategy", "simulate", "parsheet"])
def test_every_analysing_command_takes_every_rule_option(command: str) -> None:
    """The rule options are declared once (``RULE_FLAGS``) and each analysing command offers
    every one of them, with its negation where it has one."""
    from tablejack.lab.commands import RULE_FLAGS

    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout
    spelled = {
        "decks": ["--decks"],
        "h17": ["--h17", "--s17"],
        "das": ["--das", "--no-das"],
        "split_hands": ["--split-hands"],
        "rsa": ["--rsa", "--no-rsa"],
        "surrender": ["--surrender", "--no-surrender"],
        "blackjack_pays": ["--blackjack-pays"],
        "peek": ["--peek", "--no-peek"],
        "double_on": ["--double-on"],
        "hsa": ["--hsa", "--no-hsa"],
    }
    assert set(spelled) == set(RULE_FLAGS)
    missing = [flag for flags in spelled.values() for flag in flags if flag not in text]
    assert missing == []


def test_each_rule_option_reaches_the_rules_analysed() -> None:
    """Every option set at once on ``strategy --json``: each shows in the analysed rules."""
    payload = _json(
        [
            "strategy",
            "--json",
            "--decks",
            "2",
            "--h17",
            "--no-das",
            "--split-hands",
            "3",
            "--rsa",
            "--no-surrender",
            "--blackjack-pays",
            "6:5",
            "--double-on",
            "10-11",
            "--hsa",
        ]
    )
    rules = payload["rules"]
    assert rules["abbreviation"] == "2D H17 NDAS D10,11 SP3 RSA HSA NS peek 6:5"
    assert (rules["decks"], rules["h17"], rules["das"]) == (2, True, False)
    assert (rules["max_split_hands"], rules["resplit_aces"], rules["hit_split_aces"]) == (
        3,
        True,
        True,
    )
    assert (rules["late_surrender"], rules["blackjack_pays"], rules["double_totals"]) == (
        False,
        1.2,
        [10, 11],
    )
    assert [entry["field"] for entry in payload["what_if"]] == ["dealer_hits_soft_17"]
    no_peek = _json(["edge", "--json", "--no-peek"])["rules"]["analysis"]
    assert no_peek["peek"] is False
