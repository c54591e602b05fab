"""``combatsim fight``: every example scenario runs; scenario errors name the file and path."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from combatsim.cli import main as cli_main
from combatsim.fights import MAX_FIGHTS
from combatsim.scenario import ScenarioError, load

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.toml"))


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
    assert record["draws"] + sum(side["wins"] for side in record["sides"]) == 2000
    for side in record["sides"]:
        lo, hi = side["ci95"]
        assert lo <= side["win_rate"] <= hi
    rounds = record["rounds"]
    assert record["round_unit"] == ("units" if record["ruleset"] == "exp" else "rounds")
    assert sum(rounds["histogram"].values()) == 2000
    again = run_json(capsys, example, "-n", "2000", "--seed", "3", "--backend", "numba", "--threads", "1")
    assert again["sides"] == record["sides"] and again["draws"] == record["draws"]


def test_example_count():
    assert {load(path).ruleset for path in EXAMPLES} == {"exp", "d100", "tss"}


def test_target_error_stops_early_with_the_first_fights(capsys):
    example = next(path for path in EXAMPLES if load(path).ruleset == "d100")
    stopped = run_json(capsys, example, "-n", "100000", "--seed", "5", "--target-error", "0.02", "--chunk-size", "1000")
    assert stopped["stopped_early"] and stopped["fights"] < 100_000 and stopped["fights"] % 1000 == 0
    lo, hi = stopped["sides"][0]["ci95"]
    assert max(stopped["sides"][0]["win_rate"] - lo, hi - stopped["sides"][0]["win_rate"]) <= 0.02
    full = run_json(capsys, example, "-n", stopped["fights"], "--seed", "5")
    assert full["sides"] == stopped["sides"]


def test_csv_and_plot(capsys, tmp_path):
    example = EXAMPLES[0]
    table, picture = tmp_path / "out.csv", tmp_path / "out.png"
    record = run_json(capsys, example, "-n", "500", "--csv", table, "--plot", picture)
    rows = list(csv.reader(table.open()))
    assert rows[0] == ["kind", "key", "value", "ci95_low", "ci95_high"]
    assert [row[1] for row in rows if row[0] == "win_rate"] == [side["name"] for side in record["sides"]]
    assert picture.read_bytes()[:4] == b"\x89PNG"


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
     r"sides\[0\]\.members\[0\]: .*skill: score must be non-increasing"),
    ('ruleset = "tss"\n[[sides]]\n[[sides.members]]\nskill = "16"\naction_check = "+14/13/6/3"\n'
     'weapon = { damage = "d4w/d4w/d4w", quality = "shiny" }\n' + VALID_TSS,
     r"sides\[0\]\.members\[0\]\.weapon\.quality: must be one of"),
    ('ruleset = "tss"\n[[sides]]\n[[sides.members]]\nskill = "16"\naction_check = "+14/13/6/3"\n'
     'durability = [0, 1, 1]\nweapon = { damage = "d4w/d4w/d4w" }\n' + VALID_TSS,
     r"sides\[0\]\.members\[0\]\.durability: must be \[stun, wound, mortal\]"),
    (exp('[[sides.members]]\nkind = "creature"\n' * 65), r"sides\[0\]\.members: must hold 1..64 entries"),
    (exp('[[sides.members]]\nkind = "persona"\nclass = "nomad"\nlevel = 3\nawe = 1\ncha = 1\ncon = 1\ndex = 1\n'
         'int = 1\nmstr = 1\npstr = 1\nhit_points = 9\narmour_rating = 1\n'
         'weapon = { name = "x", type = "A", damage = "d6" }\n'), r"sides\[0\]\.members\[0\]: .*experience"),
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
