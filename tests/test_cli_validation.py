"""The command line refuses every bad input at once: exit 2, one line on stderr naming the flag and
what it allows, before any large allocation or long computation (issue 29); help texts say what
each command does (issue 25); the default path never imports Numba (issue 26)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from combatsim.cli import main
from combatsim.cli_tools import exact_integer
from combatsim.dice import Dice

EXP = ["--bonus", "110", "--max-roll", "760", "--armour-rating", "580"]
D100 = ["--pool", "60", "--lethality", "30"]
TSS = ["--skill", "16/8/4", "--damage", "d4w/d4+2w/d4-1m"]


def refused(capsys, argv: list[str], *needles: str) -> str:
    """``argv`` exits 2 with exactly one line on stderr, holding every needle."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("combatsim: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert captured.out == ""
    return lines[0]


# Exact odds: the size is known from the dice before anything is built (these ran 400 s+).
@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["odds", "exp", *EXP, "--damage", "1d1000000"], ("damage 1d1000000", "10,000 totals")),
        (["odds", "exp", *EXP, "--damage", "1000d1000000"], ("damage 1000d1000000", "10,000 totals")),
        (["odds", "exp", *EXP, "--damage", "100d200"], ("damage 100d200", "dice x totals <= 200,000")),
        (["odds", "exp", *EXP, "--damage", "3d100", "--weapon-type", "automatic"],
         ("damage 3d100", "automatic", "500,000")),
        (["odds", "tss", "--skill", "16/8/4", "--damage", "d1000w/d1000w/d1000m", "--armour", "d1000"],
         ("damage", "armour 1d1000", "100,000")),
        (["odds", "tss", "--skill", "16/8/4", "--damage", "20d1000w/d4w/d4m"], ("damage (ordinary) 20d1000",)),
    ],
)
def test_exact_odds_too_large_are_refused_before_building(capsys, argv, needles):
    refused(capsys, argv, *needles, "simulate it instead")


def test_exact_odds_of_ten_kilodice_damage_answer(capsys):
    """10d1000 was refused only after building its law; it is now within the limits and exact."""
    assert main(["odds", "exp", *EXP, "--damage", "10d1000", "--json"]) == 0
    law = json.loads(capsys.readouterr().out)["probabilities"]["damage_per_unit"]
    from fractions import Fraction

    assert sum(Fraction(p) for p in law.values()) == 1
    assert Fraction(law["10"]) == Fraction(53, 100) / 1000**10  # a hit (53/100) rolling all ones


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["attack", "d100", *D100, "--severity", "1e999999999", "-n", "10"], "--severity"),
        (["odds", "d100", *D100, "--severity", "1e-99999999"], "--severity"),
        (["odds", "d100", *D100, "--severity", "1" * 40], "--severity"),
    ],
)
def test_severity_digits_and_exponent_are_checked_before_the_fraction(capsys, argv, flag):
    refused(capsys, argv, f"argument {flag}", "0..100 in tenths")


def test_scenario_severity_exponent_is_refused(capsys, tmp_path):
    assert main(["example", "show", "d100_duel"]) == 0
    text = capsys.readouterr().out
    assert 'severity = "2"' in text
    path = tmp_path / "huge.toml"
    path.write_text(text.replace('severity = "2"', 'severity = "1e999999999"'))
    refused(capsys, ["fight", str(path), "-n", "10"], "severity", "0..100 in tenths")


# argparse's own errors: one line, the flag and its range.
@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["attack", "exp", "--max-roll", "760"], ("required", "--armour-rating")),
        (["attack", "nosuch"], ("invalid choice", "exp", "d100", "tss")),
        (["attack", "exp", *EXP, "--backend", "fortran"], ("--backend", "cython")),
        (["attack", "exp", "--bonus", "x", "--max-roll", "760", "--armour-rating", "580"],
         ("argument --bonus", "-1000000..1000000", "'x'")),
        (["attack", "exp", *EXP, "--nosuch"], ("unrecognized arguments", "--nosuch")),
        ([], ("required", "COMMAND")),
    ],
)
def test_argparse_errors_are_one_line(capsys, argv, needles):
    refused(capsys, argv, *needles)


# The ranges `attack` uses hold in `odds` and every value of a `curve` sweep.
@pytest.mark.parametrize(
    ("flag", "value", "allowed"),
    [
        ("--bonus", str(10**30), "-1000000..1000000"),
        ("--max-roll", str(10**30), "1..2000000"),
        ("--armour-rating", "-3000000", "-2000000..2000000"),
        ("--damage-adjustment", "1e7", "-1000000..1000000"),
        ("--adjustment", "-10000000", "-1000000..1000000"),
        ("--ammunition", "-1", "0..1000000000"),
    ],
)
@pytest.mark.parametrize("command", ["odds", "attack"])
def test_exp_numbers_outside_the_api_ranges(capsys, command, flag, value, allowed):
    argv = [command, "exp", *EXP, "--damage", "d6", flag, value]
    refused(capsys, argv + (["-n", "10"] if command == "attack" else []), f"argument {flag}", allowed)


@pytest.mark.parametrize(
    ("max_roll", "bonus", "needle"),
    [("-5", "110", "maximum_roll must be in 1..2000000, got -5"),
     ("0", "110", "maximum_roll must be in 1..2000000, got 0"),
     ("0:1000:1", "110", "maximum_roll must be in 1..2000000, got 0"),
     ("760", "0:3000000:1000", "bonus must be in -1000000..1000000, got 3000000")],
)
def test_curve_checks_every_value_of_a_sweep(capsys, max_roll, bonus, needle):
    refused(capsys, ["curve", "exp", "--bonus", bonus, "--max-roll", max_roll, "--armour-rating", "580"], needle)


def test_curve_range_may_start_below_zero(capsys):
    assert main(["curve", "exp", "--bonus", "-1:5:2", "--max-roll", "760", "--armour-rating", "580", "--json"]) == 0
    assert [point["bonus"] for point in json.loads(capsys.readouterr().out)["points"]] == [-1, 1, 3, 5]


# A flag the chosen mode would ignore is an error.
@pytest.mark.parametrize(
    ("extra", "flag"),
    [(["--awe", "10"], "--awe"), (["--level", "5"], "--level"), (["--proficient"], "--proficient"),
     (["--experience-bonus", "1,2,3"], "--experience-bonus"), (["--adopted-class", "nomad"], "--adopted-class")],
)
@pytest.mark.parametrize("command", ["attack", "odds"])
def test_persona_options_need_a_class(capsys, command, extra, flag):
    refused(capsys, [command, "exp", *EXP, "--damage", "d6", *extra], f"{flag} needs --class")


def test_out_of_range_persona_option_names_its_range(capsys):
    refused(capsys, ["attack", "exp", *EXP, "--awe", "10000"], "argument --awe", "0..1000")


def test_raw_numbers_with_a_class_and_other_ignored_flags(capsys):
    persona = ["--class", "nomad", "--awe", "10", "--dex", "16", "--int", "12", "--pstr", "12", "--damage", "d8"]
    refused(capsys, ["attack", "exp", "--armour-rating", "580", *persona, "--bonus", "5"], "--bonus is for raw mode")
    refused(capsys, ["attack", "exp", *EXP, "--weapon-name", "pistol"], "--weapon-name")
    refused(capsys, ["attack", "tss", *TSS, "--armour-quality", "good"], "--armour-quality needs --armour")
    refused(capsys, ["odds", "tss", *TSS, "--one-step-shift"], "--one-step-shift needs --armour")
    refused(capsys, ["attack", "exp", *EXP, "--scheduler", "tcp://127.0.0.1:1"], "--scheduler needs --executor dask")
    refused(capsys, ["attack", "exp", *EXP, "--executor", "dask", "--threads", "2"], "--threads applies to local runs")


@pytest.mark.parametrize("command", ["attack", "odds"])
def test_empty_damage_is_refused(capsys, command):
    refused(capsys, [command, "exp", *EXP, "--damage", ""], "argument --damage", "NdS+K")


@pytest.mark.parametrize("armour", ["-3", "0", "5", "d0", "d-4"])
@pytest.mark.parametrize("command", ["attack", "odds"])
def test_tss_armour_must_roll_a_die(capsys, command, armour):
    refused(capsys, [command, "tss", *TSS, "--armour", armour], "argument --armour")


def test_armour_dice_with_a_modifier_are_accepted(capsys):
    assert main(["odds", "tss", *TSS, "--armour", "d4-1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["probabilities"]["amazing"]


# Integers are read exactly, never through a float.
def test_seed_written_as_a_float_is_read_exactly(capsys):
    assert main(["attack", "exp", *EXP, "-n", "1e1", "--seed", "9007199254740993.0", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["seed"] == 9007199254740993 and record["attacks"] == 10


@pytest.mark.parametrize(("flag", "value"), [("--seed", "1.5"), ("--seed", "-1"), ("--seed", str(2**64)),
                                             ("--seed", "nan"), ("--threads", "0"), ("--threads", "1e4"),
                                             ("-n", "2.5"), ("-n", "1e999999999")])
def test_run_options_outside_their_ranges(capsys, flag, value):
    refused(capsys, ["attack", "exp", *EXP, flag, value], flag)


@pytest.mark.parametrize(
    ("text", "value"),
    [("12", 12), ("-3", -3), ("1_000_000", 1_000_000), ("1e9", 10**9), ("2.5e3", 2500),
     ("9007199254740993.0", 9007199254740993), (" +7 ", 7), ("18446744073709551616", 2**64), ("0e999999999", 0),
     ("1.5", None), ("nan", None), ("inf", None), ("", None), ("e5", None), ("1e999999999", None),
     ("1e-99999999", None), ("2**64", None), ("0x10", None)],
)
def test_exact_integer(text, value):
    assert exact_integer(text) == value


@pytest.mark.parametrize("ruleset", [["exp", *EXP], ["d100", *D100], ["tss", *TSS]])
def test_zero_attacks_are_refused_like_zero_fights(capsys, ruleset):
    refused(capsys, ["attack", *ruleset, "-n", "0"], "-n/--attacks", "1..")


@pytest.mark.parametrize("seconds", ["-1", "0", "nan", "inf", "x"])
def test_bench_seconds(capsys, seconds):
    refused(capsys, ["bench", "--seconds", seconds], "argument --seconds", "(0, 3600]")


def test_bench_unknown_kernel_lists_the_known(capsys):
    refused(capsys, ["bench", "--kernel", "exp.to_hit", "--kernel", "nosuch.kernel"], "--kernel", "exp.to_hit",
            "'nosuch.kernel'")


# Dice: an armour die rolls at least one die; an exact law's size is known before it is built.
def test_dice_parse_without_constants():
    assert Dice.parse("d4-1", "armour", constant=False) == Dice(1, 4, -1)
    for text in ("-3", "7", Dice(0, 1, 2)):
        with pytest.raises(ValueError, match="armour must roll at least one die"):
            Dice.parse(text, "armour", constant=False)
    with pytest.raises(ValueError, match="at most 64|got 65 characters"):
        Dice.parse("1" * 65, "damage")


@pytest.mark.parametrize("dice", [Dice(0, 1, 5), Dice(1, 1), Dice(1, 6, -2), Dice(3, 6, 1), Dice(4, 3), Dice(2, 10, 0)])
def test_dice_ways_match_every_roll(dice):
    from itertools import product

    counts: dict[int, int] = {}
    for faces in product(range(1, dice.sides + 1), repeat=dice.count):
        counts[sum(faces) + dice.modifier] = counts.get(sum(faces) + dice.modifier, 0) + 1
    ways = dice.ways()
    assert dict(enumerate(ways, start=dice.minimum)) == counts
    assert len(ways) == dice.outcomes and sum(ways) == dice.sides**dice.count


@pytest.mark.parametrize("dice", [Dice(1, 1_000_000), Dice(1000, 1_000_000), Dice(100, 200), Dice(1, 10_001)])
def test_dice_law_limits(dice):
    with pytest.raises(ValueError, match="exact odds are limited to 10,000 totals"):
        dice.distribution()


# Help texts.
def test_help_texts(capsys):
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    for command in ("attack", "fight", "odds", "curve", "table", "backends", "bench"):
        assert f"    {command} " in top
    assert "attack, backends, bench" not in top
    assert main(["fight", "--help"]) == 0
    assert "-n N, --fights N      fights to simulate" in capsys.readouterr().out
    assert main(["attack", "tss", "--help"]) == 0
    assert "attacks to simulate" in capsys.readouterr().out
    assert main(["odds", "exp", "--help"]) == 0
    odds = capsys.readouterr().out
    assert "--attacks" not in odds and "-1000000..1000000" in odds
    assert main(["attack", "d100", "--help"]) == 0
    assert "0..100 in tenths" in capsys.readouterr().out


# Cold start: one attack imports what it runs, and never Numba.
_PROBE = """
import sys
from combatsim.cli import main
code = main(sys.argv[1:])
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("combatsim", "numba", "llvmlite"))))
sys.exit(code)
"""


@pytest.mark.parametrize(
    ("argv", "absent"),
    [
        (["attack", "exp", *EXP, "-n", "1"],
         ("numba", "combatsim.d100.api", "combatsim.tss.api", "combatsim.fights", "combatsim.scenario")),
        (["attack", "tss", *TSS, "-n", "1"], ("numba", "combatsim.exp.api", "combatsim.d100.api", "combatsim.fights")),
        (["odds", "d100", *D100], ("numba", "combatsim.exp.api", "combatsim.tss.api", "combatsim.fights")),
        (["fight", "d100_duel", "-n", "10"], ("numba", "combatsim.exp.api", "combatsim.tss.api")),
        (["fight", "exp_bob_too", "-n", "10"], ("numba", "combatsim.d100.api", "combatsim.tss.api")),
        (["table", "exp", "--class", "nomad", "--awe", "10", "--dex", "16", "--int", "12", "--pstr", "12"],
         ("numba", "combatsim.runner", "combatsim.fights")),
        (["curve", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "400:1000:100"],
         ("numba", "combatsim.fights", "combatsim.d100.api")),
    ],
)
def test_default_backend_imports_only_what_it_runs(argv, absent):
    from combatsim.registry import available_backends

    if "cython" not in available_backends():
        pytest.skip("auto resolves to numba without the Cython extensions")
    environment = {key: value for key, value in os.environ.items() if key != "COMBATSIM_BACKEND"}
    result = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=False,
                            env=environment)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.splitlines()[-1].split())
    assert not loaded & set(absent), loaded & set(absent)


def test_top_level_help_imports_no_numpy():
    """cli_tools states its own range text and imports combatsim.validation (and NumPy) only to read a
    value, so the command list comes up without NumPy."""
    probe = "import sys\nfrom combatsim.cli import main\nmain(['--help'])\nprint('numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "False"


def test_import_combatsim_is_light():
    result = subprocess.run([sys.executable, "-c", "import sys, combatsim; print(sorted(sys.modules))"],
                            capture_output=True, text=True, check=True)
    loaded = result.stdout
    assert "'numpy'" not in loaded and "'numba'" not in loaded


@pytest.mark.parametrize(("name", "needle"), [("", "must name a file"), ("x.xyz", "allowed: .png, .svg, .pdf"),
                                              ("missing/x.png", "does not exist"), (".", "no extension")])
def test_curve_plot_path_is_checked_before_the_curve(capsys, tmp_path, name, needle):
    path = str(tmp_path / name) if name else ""
    refused(capsys, ["curve", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "400:1000:100",
                     "--plot", path], "--plot", needle)


def test_negative_numbers_in_exponent_form_are_values(capsys):
    assert main(["attack", "exp", "--bonus", "-1e3", "--max-roll", "760", "--armour-rating", "-5_000", "-n", "1e2",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"] == 100  # AR -5000: every kilodie hits
    refused(capsys, ["attack", "exp", *EXP, "--adjustment", "-1e7"], "argument --adjustment", "-1000000..1000000")
