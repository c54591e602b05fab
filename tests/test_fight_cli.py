"""``combatsim fight``: every example scenario runs; scenario errors name the file and path."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from combatsim.cli import main as cli_main
from combatsim.fights import MAX_FIGHTS
from combatsim.scenario import ScenarioError, load

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.toml"))
STEP_UNITS = {"exp": "units of combat time", "d100": "rounds of 2 passes", "tss": "rounds"}


def run_json(capsys, *argv) -> dict:
    code = cli_main(["fight", *map(str, argv), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ""  # no progress bar with --json or off a terminal
    return json.loads(captured.out)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.stem)
def test_every_example_runs(capsys, example):
    record = run_json(capsys, example, "-n", "2000", "--seed", "3")
    assert record["fights"] == 2000
    assert record["draws"] + record.get("unfinished", 0) + sum(side["wins"] for side in record["sides"]) == 2000
    for side in record["sides"]:
        lo, hi = side["win_rate_ci95"]
        assert lo <= side["win_rate"] <= hi
    length = record["length"]
    assert length["unit"] == STEP_UNITS[record["ruleset"]]
    assert sum(length["histogram"].values()) == 2000
    again = run_json(capsys, example, "-n", "2000", "--seed", "3", "--backend", "numba", "--threads", "1")
    assert again["sides"] == record["sides"] and again["draws"] == record["draws"]


def test_example_count():
    assert {load(path).ruleset for path in EXAMPLES} == {"exp", "d100", "tss"}


def test_target_error_stops_early_with_the_first_fights(capsys):
    example = next(path for path in EXAMPLES if load(path).ruleset == "d100")
    stopped = run_json(capsys, example, "-n", "100000", "--seed", "5", "--target-error", "0.02", "--chunk-size", "1000")
    assert stopped["stopped_early"] and stopped["fights"] < 100_000 and stopped["fights"] % 1000 == 0
    lo, hi = stopped["sides"][0]["win_rate_ci95"]
    assert max(stopped["sides"][0]["win_rate"] - lo, hi - stopped["sides"][0]["win_rate"]) <= 0.02
    full = run_json(capsys, example, "-n", stopped["fights"], "--seed", "5")
    assert full["sides"] == stopped["sides"]


def test_csv_and_plot_say_where_they_wrote_and_stack_by_outcome(capsys, tmp_path, monkeypatch):
    from combatsim import plotting

    drawn = {}
    real = plotting.plot_stacked_bars

    def spy(xs, stacks, path, **kwargs):
        drawn.update(xs=xs, stacks=stacks, title=kwargs["title"])
        real(xs, stacks, path, **kwargs)

    monkeypatch.setattr(plotting, "plot_stacked_bars", spy)
    table, picture = tmp_path / "out.csv", tmp_path / "out.png"
    assert cli_main(["fight", "d100_duel", "-n", "500", "--csv", str(table), "--plot", str(picture), "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert captured.err.splitlines() == [
        f"combatsim: wrote the win rates and the length histogram to {table}",
        f"combatsim: wrote the chart of fight lengths to {picture}",
    ]
    rows = list(csv.reader(table.open()))
    assert rows[0] == ["kind", "key", "value", "ci95_low", "ci95_high"]
    assert [row[1] for row in rows if row[0] == "win_rate"] == [side["name"] for side in record["sides"]]
    assert [int(row[2]) for row in rows if row[0] == "wins"] == [side["wins"] for side in record["sides"]]
    assert picture.read_bytes()[:4] == b"\x89PNG"
    assert sorted(tmp_path.iterdir()) == [table, picture]  # no temporary files left behind
    umask = os.umask(0)
    os.umask(umask)
    assert {path.stat().st_mode & 0o777 for path in (table, picture)} == {0o666 & ~umask}  # not mkstemp's 0600
    # the stacks: side 0's wins, side 1's wins, draws, unfinished, adding up to the histogram length by length
    assert [name for name, _ in drawn["stacks"]] == ["Veteran wins", "Guard wins", "draws", "unfinished"]
    histogram = record["length"]["histogram"]
    assert drawn["xs"] == [int(k) for k in histogram]
    assert [sum(column) for column in zip(*(h for _, h in drawn["stacks"]), strict=True)] == list(histogram.values())
    assert [sum(h) for _, h in drawn["stacks"][:2]] == [side["wins"] for side in record["sides"]]


def test_plot_beyond_the_outcome_bound_says_why_it_is_not_stacked(capsys, tmp_path, monkeypatch):
    from combatsim import fights, plotting

    drawn = {}
    monkeypatch.setattr(fights, "MAX_OUTCOME_FIGHTS", 100)
    monkeypatch.setattr(plotting, "plot_stacked_bars", lambda xs, stacks, path, **kw: drawn.update(stacks=stacks, **kw))
    assert cli_main(["fight", "exp_bob_too", "-n", "300", "--plot", str(tmp_path / "p.svg"), "--json"]) == 0
    assert [name for name, _ in drawn["stacks"]] == ["fights"] and "not split by outcome" in drawn["title"]
    assert drawn["file_format"] == "svg"


@pytest.mark.parametrize(("flag", "path", "message"), [
    ("--csv", "{tmp}/missing/out.csv", "directory .* does not exist"),
    ("--csv", "/dev/full", "is not a regular file"),
    ("--csv", "{tmp}", "is a directory"),
    ("--csv", "", "must name a file"),
    ("--plot", "{tmp}/x.xyz", r"extension '\.xyz'; allowed: \.png, \.svg, \.pdf"),
    ("--plot", "{tmp}/rounds", r"no extension; allowed: \.png"),
    ("--plot", "{tmp}", "extension|is a directory"),
    ("--plot", "", "must name a file"),
])
def test_output_paths_are_refused_before_the_run(capsys, tmp_path, monkeypatch, flag, path, message):
    from combatsim import fights

    def no_run(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(fights, "run_scenario", no_run)
    assert cli_main(["fight", "d100_duel", "-n", "100", flag, path.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and flag in err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []  # nothing written: no DIR.png, no rounds.png


def test_output_written_whole_or_not_at_all(tmp_path):
    from combatsim.fights import write_whole

    target = tmp_path / "out.csv"
    target.write_text("old")

    def fails(temporary):
        Path(temporary).write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_whole(target, fails)
    assert target.read_text() == "old" and sorted(tmp_path.iterdir()) == [target]


def test_text_report_labels_every_figure(capsys):
    assert cli_main(["fight", "exp_bob_too", "-n", "20000", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "units of combat time" in out and "mutual" not in out and "[" not in out.split("\n", 1)[1].replace(
        "95% interval", "")
    assert "  Bob Too:\n" in out and "  Giant Arctic Sea Slug:\n" in out
    assert "damage dealt (total)" in out and "hits (count)" in out and "hit rate" in out
    assert "20,000 fights" in out
    assert any(len(token) > 4 and "," in token for token in out.split() if token.replace(",", "").isdigit())
    assert cli_main(["fight", "tss_alex_vs_thug", "-n", "2000", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["length"]["unit"] == "rounds"
    totals = record["totals"]
    assert totals["stun_points_mean_per_attack"] == pytest.approx(totals["stun_points_total"] / totals["attacks_count"])
    assert cli_main(["fight", "d100_duel", "-n", "2000"]) == 0
    out = capsys.readouterr().out
    assert "rounds of 2 passes" in out and "escapes (count)" in out and "both sides:" in out and "unfinished" in out


def test_d100_json_names_escapes_per_side_and_has_no_repeated_figure(capsys):
    assert cli_main(["fight", "d100_duel", "-n", "3000", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert all({"wins_by_flight_count", "escapes_count"} <= set(side) for side in record["sides"])
    assert record["draws"] + record["unfinished"] + sum(side["wins"] for side in record["sides"]) == 3000
    assert "flee_successes_count" not in record["totals"] and "mutual_kills" not in json.dumps(record)
    assert all(key.endswith(("_count", "_total", "_rate")) or "_mean_per_" in key for key in record["totals"])


VALID_D100 = '[[sides]]\n[[sides.members]]\nfighting = 50\nweapon = { lethality = 30 }\n'
VALID_EXP = ('[[sides]]\n[[sides.members]]\nkind = "creature"\nhit_points = 5\narmour_rating = 5\nbonus = 1\n'
             'maximum_roll = 900\nweapon = { name = "claw", type = "A", damage = "d6" }\n')

VALID_TSS = ('[[sides]]\n[[sides.members]]\nskill = "12"\naction_check = "+12/11/5/2"\n'
             'weapon = { damage = "d4s/d4w/d4w" }\n')


def d100(first_side: str, top: str = "") -> str:
    return f'ruleset = "d100"\n{top}[[sides]]\n{first_side}{VALID_D100}'


def exp(first_side: str) -> str:
    return f'ruleset = "exp"\n[[sides]]\n{first_side}{VALID_EXP}'


BAD = [
    ('ruleset = "d100"\n[[sides]]\nname = "a"\n', "sides: must hold 2..2 entries"),
    (d100('[[sides.members]]\nfighting = "many"\nweapon = { lethality = 30 }\n'),
     r"sides\[0\]\.members\[0\]\.fighting: must be an integer in 0..1000"),
    (d100('[[sides.members]]\nfighting = 50\nweapon = { lethality = 300 }\n'),
     r"sides\[0\]\.members\[0\]\.weapon\.lethality: must be in 0..100"),
    (d100('[[sides.members]]\nfighting = 50\nwepon = { lethality = 30 }\n'),
     r"sides\[0\]\.members\[0\]\.weapon: is required"),
    (d100('[[sides.members]]\nfighting = 50\nweapon = { lethality = 3 }\n', top='colour = "red"\n'),
     r"unknown key\(s\) 'colour'"),
    (d100('[[sides.members]]\nfighting = 50\nweapon = { lethality = 3 }\n', top='[options]\npasses = 0\n'),
     r"options\.passes: must be in 1..16"),
    (d100('[[sides.members]]\nfighting = 50\nweapon = { lethality = 3 }\n[sides.members.policy]\nattack = 100\n'),
     r"sides\[0\]\.members\[0\]: .*policy must be 8 weights"),
    (exp('[[sides.members]]\nkind = "persona"\nclass = "wizard"\nawe = 1\ncha = 1\ncon = 1\ndex = 1\nint = 1\n'
         'mstr = 1\npstr = 1\nhit_points = 9\narmour_rating = 1\nweapon = { name = "x", type = "A", damage = "d6" }\n'),
     r"sides\[0\]\.members\[0\]\.class: must be one of"),
    (exp('[[sides.members]]\nkind = "creature"\nhit_points = 5\narmour_rating = 5\nbonus = 1\nmaximum_roll = 900\n'
         'weapon = { name = "x", type = "Q", damage = "d6" }\n'), r"weapon\.type: must be one of"),
    (exp('[[sides.members]]\nkind = "creature"\nhit_points = 5\narmour_rating = 5\nbonus = 1\nmaximum_roll = 900\n'
         'weapon = { name = "x", type = "A", damage = "3d" }\n'), r"sides\[0\]\.members\[0\]\.weapon\.damage: .*NdS\+K"),
    ('ruleset = "tss"\n[[sides]]\n[[sides.members]]\nskill = "4/8/16"\naction_check = "+14/13/6/3"\n'
     'weapon = { damage = "d4w/d4w/d4w" }\n' + VALID_TSS,
     r"sides\[0\]\.members\[0\]\.skill: score must be non-increasing"),
    ('ruleset = "tss"\n[[sides]]\n[[sides.members]]\nskill = "16"\naction_check = "+14/13/6/3"\n'
     'weapon = { damage = "d4w/d4w/d4w", quality = "shiny" }\n' + VALID_TSS,
     r"sides\[0\]\.members\[0\]\.weapon\.quality: must be one of"),
    ('ruleset = "tss"\n[[sides]]\n[[sides.members]]\nskill = "16"\naction_check = "+14/13/6/3"\n'
     'durability = [0, 1, 1]\nweapon = { damage = "d4w/d4w/d4w" }\n' + VALID_TSS,
     r"sides\[0\]\.members\[0\]\.durability: must be a list of 3 integers in 1..1000"),
    (exp('[[sides.members]]\nkind = "creature"\n' * 65), r"sides\[0\]\.members: must hold 1..64 entries"),
    (exp('[[sides.members]]\nkind = "persona"\nclass = "nomad"\nlevel = 3\nawe = 1\ncha = 1\ncon = 1\ndex = 1\n'
         'int = 1\nmstr = 1\npstr = 1\nhit_points = 9\narmour_rating = 1\n'
         'weapon = { name = "x", type = "A", damage = "d6" }\n'), r"sides\[0\]\.members\[0\]\.experience_bonus: is required"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_scenario_errors_name_the_path(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=message) as caught:
        load(path)
    assert str(caught.value).startswith(str(path))


def test_absurd_fight_count_refused(capsys):
    assert cli_main(["fight", str(EXAMPLES[0]), "-n", str(MAX_FIGHTS * 10)]) == 2
    assert "n must be in 1.." in capsys.readouterr().err


# --- what-if: --set and --compare ------------------------------------------------------------------


def test_paired_difference_by_hand():
    from combatsim.fight_summary import Z95
    from combatsim.fights import paired_difference

    baseline = np.array([0, 0, 1, -1, 0, 1], dtype=np.int8)
    variant = np.array([0, 1, 1, 0, 0, 1], dtype=np.int8)
    # side 0: d = [0, -1, 0, +1, 0, 0]: mean 0, sample variance (2/6 - 0) * 6/5 = 0.4
    mean, lo, hi = paired_difference(baseline, variant, 0)
    assert mean == 0 and hi == pytest.approx(Z95 * (0.4 / 6) ** 0.5) and lo == pytest.approx(-hi)
    # side 1: d = [0, +1, 0, 0, 0, 0]: mean 1/6, variance (1/6 - 1/36) * 6/5
    mean, lo, hi = paired_difference(baseline, variant, 1)
    assert mean == pytest.approx(1 / 6) and hi - mean == pytest.approx(Z95 * ((1 / 6 - 1 / 36) * 6 / 5 / 6) ** 0.5)
    assert paired_difference(baseline, baseline, 0) == (0.0, 0.0, 0.0)


def fight_json(capsys, *argv) -> dict:
    assert cli_main(["fight", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_runs_both_scenarios_on_the_same_fights(capsys):
    change = "sides[0].members[0].torso=none"
    compared = fight_json(capsys, "d100_duel", "-n", "20000", "--seed", "4", "--compare", change)
    baseline = fight_json(capsys, "d100_duel", "-n", "20000", "--seed", "4")
    variant = fight_json(capsys, "d100_duel", "-n", "20000", "--seed", "4", "--set", change)
    assert compared["fights"] == 20000 and compared["variant"] == [change] and compared["baseline"] == []
    for row, before, after in zip(compared["win_rates"], baseline["sides"], variant["sides"], strict=True):
        assert row["name"] == before["name"]
        assert row["baseline_rate"] == before["win_rate"] and row["variant_rate"] == after["win_rate"]
        assert row["difference"] == pytest.approx(after["win_rate"] - before["win_rate"])
        lo, hi = row["difference_ci95"]
        assert lo < row["difference"] < hi
        # common random numbers: the paired interval is narrower than two independent runs' would be
        p, q, n = before["win_rate"], after["win_rate"], 20000
        assert (hi - lo) / 2 < 0.8 * 1.96 * (p * (1 - p) / n + q * (1 - q) / n) ** 0.5
    assert compared["draw_rate"]["baseline_rate"] == baseline["draw_rate"]


def test_compare_outcome_by_outcome_against_the_api(capsys):
    from combatsim.fight_summary import WINNER_DRAW, WINNER_UNFINISHED
    from combatsim.fights import paired_difference
    from combatsim.scenario import example_path, load

    change = "sides[1].members[0].armour_rating=650"
    compared = fight_json(capsys, "exp_bob_too", "-n", "3000", "--seed", "9", "--compare", change, "--set",
                          "options.unit_limit=12")
    module = __import__("combatsim.exp.scenario", fromlist=["run"])
    runs = [module.run(load(example_path("exp_bob_too"), overrides).spec, n=3000, seed=9, backend="auto",
                       threads=None, outcomes=True)
            for overrides in (["options.unit_limit=12"], ["options.unit_limit=12", change])]
    rows = [*compared["win_rates"], compared["draw_rate"], compared["unfinished_rate"]]
    for row, code in zip(rows, (0, 1, WINNER_DRAW, WINNER_UNFINISHED), strict=True):
        mean, lo, hi = paired_difference(runs[0].winner, runs[1].winner, code)
        assert row["difference"] == pytest.approx(mean) and row["difference_ci95"] == pytest.approx([lo, hi])
    assert compared["unfinished_rate"]["baseline_rate"] > 0


def test_compare_without_a_change_is_exactly_zero(capsys):
    compared = fight_json(capsys, "tss_alex_vs_thug", "-n", "2000", "--compare", "options.max_rounds=50")
    for row in [*compared["win_rates"], compared["draw_rate"], compared["unfinished_rate"]]:
        assert row["difference"] == 0 and row["difference_ci95"] == [0, 0]


def test_compare_text_report(capsys):
    assert cli_main(["fight", "d100_duel", "-n", "5000", "--compare", "sides[0].members[0].torso=none"]) == 0
    out = capsys.readouterr().out
    assert "5,000 fights of each, on the same seeds" in out and "variant: sides[0].members[0].torso=none" in out
    assert "Veteran wins" in out and "Guard wins" in out and "95% interval" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--csv", "out.csv"], "--compare reports on the terminal"),
    (["--target-error", "0.01"], "--compare reports on the terminal"),
    (["-n", "20000000"], r"-n must be at most 10,000,000 with --compare"),
    (["--set", "sides[1].name=Other"], None),
])
def test_compare_limits(capsys, monkeypatch, argv, message):
    from combatsim import fights

    monkeypatch.setattr(fights, "run_scenario", lambda *a, **k: pytest.fail("a fight ran"))
    if message is None:  # renaming a side in the variant only would unpair the sides
        assert cli_main(["fight", "d100_duel", "--compare", "sides[1].name=Else", *argv]) == 2
        assert "sides' names must stay the same" in capsys.readouterr().err
        return
    assert cli_main(["fight", "d100_duel", "--compare", "sides[0].members[0].torso=none", *argv]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_compare_interrupted_reports_the_fights_both_runs_finished(capsys, monkeypatch):
    from combatsim import fights
    from combatsim.fight_summary import FightSummary

    winners = iter([np.array([0, 1, 0, 0, -1, 1], dtype=np.int8), np.array([1, 1, 0, 0], dtype=np.int8)])

    def interrupted_second(args, scenario, outcomes, stop=None):
        winner = next(winners)
        return FightSummary(fights=len(winner), wins=[0, 0], draws=0, rounds_histogram={}, seed=0, backend="cython",
                            threads=1, partial=len(winner) < 6, winner=winner, rounds=np.ones(len(winner), np.int32))

    monkeypatch.setattr(fights, "run_scenario", interrupted_second)
    assert cli_main(["fight", "d100_duel", "-n", "6", "--compare", "options.passes=3", "--json"]) == 130
    record = json.loads(capsys.readouterr().out)
    assert record["partial"] and record["fights"] == 4  # the first 4 fights of each, paired
    assert record["win_rates"][0]["baseline_rate"] == 0.75 and record["win_rates"][0]["variant_rate"] == 0.5
