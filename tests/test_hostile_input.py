"""Hostile input through the installed ``combatsim`` command and the Python API: each case gets
one line naming the option or field and what is allowed, and exit status 2 (CLI) or a
ValueError/TypeError (API); never Python's own words, a raw escape, or a screenful of a value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests._processes import combatsim_command, interrupt

HUGE = "9" * 5000
EXP = ["--bonus", "110", "--max-roll", "760", "--armour-rating", "580"]


def run(arguments: list[str], cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*combatsim_command(), *arguments], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={**os.environ, "COLUMNS": "80"})


def refused(arguments: list[str], *named: str, cwd: str | Path | None = None) -> str:
    """Exit 2, nothing on stdout, one short printable line on stderr naming each of ``named``."""
    done = run(arguments, cwd)
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("combatsim: error: "), done.stderr[-2000:]
    line = lines[0]
    assert "internal error" not in line and "Errno" not in line and "Exceeds the limit" not in line, line
    assert line.isprintable() and len(line) < 600, line
    for name in named:
        assert name in line, line
    return line


@pytest.mark.parametrize(("arguments", "named"), [
    (["attack", "exp", *EXP, "--adjustment", HUGE, "-n", "10"], "--adjustment"),
    (["attack", "tss", "--skill", HUGE, "--damage", "d4w/d4+2w/d4-1m", "-n", "10"], "skill"),
    (["attack", "tss", "--skill", f"16/8/{HUGE}", "--damage", "d4w/d4+2w/d4-1m", "-n", "10"], "skill"),
    (["fight", "d100_duel", "-n", "10", "--set", f"sides[{HUGE}].x=1"], "--set"),
    (["fight", "d100_duel", "-n", "10", "--compare", f"sides[0].members[0].fighting={HUGE}"], "--compare"),
    (["fight", "d100_duel", "-n", "10", "--set", f"sides[0].members[0].fighting={HUGE}"], "--set"),
    (["curve", "fight", "exp_bob_too", "--vary", f"sides[0].members[0].hit_points=1:{HUGE}:1"], "--vary"),
])
def test_a_5000_digit_integer_is_refused_in_the_projects_words(arguments, named):
    refused(arguments, named)


def test_a_5000_digit_integer_in_a_scenario_file_names_the_file(tmp_path):
    (tmp_path / "big.toml").write_text(f'ruleset = "d100"\nx = {HUGE}\n')
    refused(["fight", "big.toml"], "big.toml", "4300 digits", cwd=tmp_path)


@pytest.mark.parametrize("flag", ["--csv", "--plot"])
def test_too_long_output_names_are_refused_before_the_run(tmp_path, flag):
    line = refused(["fight", "d100_duel", "-n", "10", flag, "a" * 300 + (".png" if flag == "--plot" else ".csv")],
                   flag, "too long", cwd=tmp_path)
    assert "characters" in line  # the name is quoted in part, not whole


@pytest.mark.parametrize("flag", ["--csv", "--plot"])
def test_output_names_with_escape_characters_are_refused_and_not_made(tmp_path, flag):
    name = "a\x1b[31m" + (".png" if flag == "--plot" else ".csv")
    line = refused(["fight", "d100_duel", "-n", "10", flag, name], flag, "U+001B", cwd=tmp_path)
    assert "\x1b" not in line
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_scenario_names_the_file():
    refused(["fight", "/proc/self/mem"], "/proc/self/mem", "cannot read")


def test_a_scenario_name_with_an_escape_is_never_echoed_raw():
    line = refused(["fight", "nope\x1b[2J"], "nope")
    assert "\x1b" not in line


def test_a_huge_value_is_quoted_in_part():
    line = refused(["fight", "d100_duel", "--set", "sides[0].members[0].torso=" + "x" * 100_000], "torso")
    assert len(line) < 600


@pytest.mark.parametrize("value", ["1_", "1__0", "_1", "1_e3", "１２", "٣", "1e8x", "0x10", "1/2"])
@pytest.mark.parametrize("flag", ["-n", "--seed"])
def test_lenient_integers_are_refused(flag, value):
    refused(["fight", "d100_duel", flag, value], flag)


@pytest.mark.parametrize("value", ["1_", "1__0", "１２", "٣"])
def test_lenient_integers_in_scenario_values_are_refused(value):
    refused(["fight", "d100_duel", "-n", "10", "--set", f"sides[0].members[0].fighting={value}"], "fighting")


@pytest.mark.parametrize("value", ["1_", "1__0", "٣", "１"])
def test_lenient_severity_is_refused_in_the_cli_and_scenarios(value):
    refused(["odds", "d100", "--pool", "50", "--lethality", "30", "--severity", value], "--severity")
    refused(["fight", "d100_duel", "--set", f'sides[0].members[0].weapon.severity="{value}"'], "severity")


@pytest.mark.parametrize("arguments", [
    ["curve", "exp", "--bonus", "1_", "--max-roll", "760", "--armour-rating", "580"],
    ["curve", "exp", "--bonus", "٣", "--max-roll", "760", "--armour-rating", "580"],
    ["curve", "fight", "exp_bob_too", "--vary", "sides[0].members[0].hit_points=1__0:20:5"],
    ["curve", "fight", "exp_bob_too", "--vary", "sides[0].members[0].hit_points=１:20:5"],
    ["attack", "exp", *EXP, "--damage", "１d6"],
    ["attack", "tss", "--skill", "١٢", "--damage", "d4w"],
])
def test_lenient_numbers_in_ranges_dice_and_scores_are_refused(arguments):
    refused(arguments)


@pytest.mark.parametrize(("value", "expected"), [("1e8", 10**8), ("1_000", 1000), ("2.5e3", 2500), (" 7 ", 7),
                                                 ("1_0e1_0", 10**11), ("-3", -3), (".5e1", 5)])
def test_the_documented_forms_are_read(value, expected):
    from combatsim.validation import parse_integer

    assert parse_integer(value) == expected


def test_lenient_severity_is_refused_in_the_api():
    from combatsim.d100 import api

    for value in ("1_", "1__0", "٣", "1/2"):
        with pytest.raises(ValueError, match="severity must be a number"):
            api.simulate_attacks(10, pool=50, lethality=30, severity=value)
    assert api.check_severity("1_5e-1") == api.check_severity("1.5")


@pytest.mark.parametrize("value", ["1_", "1__0", "_1", "１２", "٣", "nan", "1/2", "1e99999", "9" * 65, "1e1_", ""])
def test_the_shared_parser_refuses_the_rest(value):
    from combatsim.validation import parse_integer, parse_number

    assert parse_integer(value) is None and parse_number(value) is None


def test_a_malformed_scheduler_is_refused_before_dask_imports():
    code = ("import sys\nfrom combatsim.cli import main\n"
            "code = main(['attack', 'exp', '--bonus', '1', '--max-roll', '760', '--armour-rating', '5', "
            "'--executor', 'dask', '--scheduler', 'tcp://bad host::'])\n"
            "assert code == 2, code\nassert 'dask' not in sys.modules and 'distributed' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--scheduler must be an address" in done.stderr


def test_a_one_point_exp_sweep_is_labelled_with_the_swept_parameter():
    done = run(["curve", "exp", "--bonus", "0:1:5", "--max-roll", "760", "--armour-rating", "580", "--json"])
    assert done.returncode == 0, done.stderr
    import json

    curve = json.loads(done.stdout)
    assert curve["parameter"] == "bonus" and curve["fixed"] == {"maximum_roll": 760, "armour_rating": 580}
    assert [point["bonus"] for point in curve["points"]] == [0]


# --- the Python API ------------------------------------------------------------------------------

def _scenario():
    from combatsim.scenario import load, resolve

    path, label = resolve("exp_bob_too")
    return load(path, label=label)


def test_fight_curve_refuses_a_vary_that_is_not_text():
    from combatsim.fight_odds.curve import fight_curve

    with pytest.raises(TypeError, match="vary must be a string"):
        fight_curve(_scenario(), 5)


def test_fight_curve_refuses_zero_fights():
    from combatsim.fight_odds.curve import fight_curve

    with pytest.raises(ValueError, match=r"n must be in 1\.\."):
        fight_curve(_scenario(), "sides[0].members[0].hit_points=10:12:1", n=0)


def test_masked_arrays_are_refused_not_read_through_their_masks():
    from combatsim.validation import check_int_array

    masked = np.ma.masked_array([1, 2, 3], mask=[False, True, False])
    with pytest.raises(ValueError, match="masked"):
        check_int_array("bonus", masked, 3)
    assert check_int_array("bonus", np.ma.masked_array([1, 2, 3]), 3).tolist() == [1, 2, 3]


def test_errors_quote_a_huge_value_in_part():
    from combatsim.validation import check_int

    with pytest.raises(TypeError) as raised:
        check_int("level", list(range(100_000)))
    assert len(str(raised.value)) < 200
    with pytest.raises(ValueError) as raised:
        check_int("level", 10**5000, 1, 10)
    assert "digits" in str(raised.value) and len(str(raised.value)) < 200


def test_zero_dice_of_six_sides_is_refused_as_0d6_is():
    from combatsim.dice import Dice
    from combatsim.exp import api

    with pytest.raises(ValueError, match="dice count"):
        Dice(0, 6)
    with pytest.raises(ValueError, match="damage"):
        api.simulate_attack(10, bonus=110, maximum_roll=760, armour_rating=580, damage="0d6")
    assert Dice(0, 1, 3).maximum == 3  # a constant stays one


def test_simulate_attack_without_damage_or_weapon_is_refused():
    from combatsim.exp import api

    with pytest.raises(ValueError, match=r"give weapon= .* or damage="):
        api.simulate_attack(10, bonus=110, maximum_roll=760, armour_rating=580)
    assert api.simulate_attack(10, bonus=110, maximum_roll=760, armour_rating=580, damage="0").damage_total == 0


def test_a_huge_modifiers_list_gets_a_short_error():
    import itertools

    from combatsim.d100 import api

    for modifiers in (["quick"] * 100_000, itertools.repeat("quick")):
        with pytest.raises(ValueError) as raised:
            api.simulate_attacks(10, pool=50, lethality=30, modifiers=modifiers)
        assert "modifiers must not repeat" in str(raised.value) and len(str(raised.value)) < 200


# --- policies that fail or are not policies ------------------------------------------------------

HOSTILE_POLICIES = '''
import sys

def runtime(obs, masks):
    raise RuntimeError("boom")

def recursion(obs, masks):
    return recursion(obs, masks)

def memory(obs, masks):
    raise MemoryError()

def exits(obs, masks):
    sys.exit(0)
'''


@pytest.mark.parametrize(("target", "named"), [
    ("hostile_policies:runtime", "RuntimeError"),
    ("hostile_policies:recursion", "RecursionError"),
    ("hostile_policies:memory", "MemoryError"),
    ("hostile_policies:exits", "SystemExit"),
    ("exits_on_import:policy", "SystemExit"),
    ("os:getcwd", "getcwd"),
    ("numpy:zeros", "zeros"),
    ("os.path:join", "join"),
])
def test_a_policy_that_fails_is_one_line_naming_it_and_its_member(tmp_path, target, named):
    (tmp_path / "hostile_policies.py").write_text(HOSTILE_POLICIES)
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(0)\n")
    line = refused(["fight", "d100_duel", "-n", "20", "--json", "--policy", f"Guard={target}"], "'Guard'", named,
                   cwd=tmp_path)
    assert "policy" in line


def test_odds_fight_refuses_exact_past_its_digits_at_once():
    refused(["odds", "fight", "exp_bob_too", "--set", "options.unit_limit=1000000", "--method", "exact"],
            "exact", "digits", "float64")


# --- the environments ----------------------------------------------------------------------------

def test_a_vector_env_beyond_the_memory_is_refused_before_allocating(monkeypatch):
    from combatsim.rl import fight_vector

    monkeypatch.setattr(fight_vector, "available_memory", lambda: 1 << 30)
    with pytest.raises(ValueError, match=r"num_envs must be at most [\d,]+ here .* got 16,777,216"):
        fight_vector.FightVectorEnv(2**24, scenario="d100_duel", agent="Veteran")
    assert fight_vector.FightVectorEnv(1000, scenario="d100_duel", agent="Veteran").num_envs == 1000


def test_a_vector_env_step_stops_at_a_real_sigint_between_engine_slices():
    # The engine steps slices of envs; a SIGINT raised during the second slice's call stops the
    # reset there, instead of after every slice.
    code = '''
import os, signal
from combatsim.rl import fight_vector
fight_vector.ENGINE_SLICE = 64
env = fight_vector.FightVectorEnv(64 * 8, scenario="d100_duel", agent="Veteran", backend="python")
calls = []
engine_reset = env._engine.reset
def reset(*arguments):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGINT)
    return engine_reset(*arguments)
env._engine = type("Engine", (), {"reset": staticmethod(reset), "step": env._engine.step})()
try:
    env.reset(seed=1)
except KeyboardInterrupt:
    print("stopped after", len(calls))
'''
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["stopped", "after", "2"]


def test_render_before_reset_says_so():
    from combatsim.rl.fight_env import FightEnv

    env = FightEnv("d100_duel", "Veteran", render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"render\(\) before reset\(\)"):
        env.render()
    env.reset(seed=1)
    assert "running" in env.render().splitlines()[0]


def test_a_parallel_env_step_without_a_dict_names_actions():
    from combatsim.rl.fight_parallel import parallel_env

    env = parallel_env(scenario="d100_duel")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="actions must be a dict of agent -> action"):
        env.step(None)


def test_vector_env_actions_in_a_masked_array_are_refused():
    from combatsim.rl.fight_vector import FightVectorEnv

    env = FightVectorEnv(3, scenario="d100_duel", agent="Veteran")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="actions must not have masked entries"):
        env.step(np.ma.masked_array([0, 0, 0], mask=[False, True, False]))


# --- control characters --------------------------------------------------------------------------

def test_an_armour_class_with_an_escape_is_refused_as_a_weapon_class_is():
    refused(["fight", "tss_alex_vs_thug", "-n", "10", "--set", 'sides[0].members[0].armour.dice={ "E\\u001bn" = "d6" }'],
            "armour", "U+001B")
    refused(["fight", "tss_alex_vs_thug", "-n", "10", "--set", 'sides[0].members[0].weapon.class="E\\u001bn"'],
            "weapon.class")


def test_an_empty_armour_quality_is_refused_not_ordinary():
    refused(["attack", "tss", "--skill", "16", "--damage", "d4w/d4+2w/d4-1m", "--armour", "d6", "--armour-quality", ""],
            "armour_quality")


# --- Ctrl-C: a real SIGINT -----------------------------------------------------------------------

def interrupted(arguments: list[str], after: float) -> tuple[int, str, str]:
    """``combatsim ARGUMENTS`` sent SIGINT ``after`` seconds from its start: (status, out, err)."""
    stopped = interrupt(arguments, after)
    return stopped.returncode, stopped.out, stopped.err


def test_ctrl_c_on_curve_fight_prints_the_points_finished_marked_partial():
    import json

    code, out, err = interrupted(["curve", "fight", "exp_bob_too", "--vary", "sides[0].members[0].hit_points=10:20:1",
                                  "--max-states", "1", "-n", "1e9", "--json"], after=6.0)
    assert code == 130, err
    curve = json.loads(out)
    assert curve["partial"] is True and curve["points_asked"] == 11
    assert 1 <= len(curve["points"]) < 11
    last = curve["points"][-1]
    assert last["partial"] is True and 0 < last["fights"] < 10**9  # the simulated point cut short, kept


def test_ctrl_c_on_curve_fight_report_says_partial():
    code, out, err = interrupted(["curve", "fight", "d100_duel", "--vary", "sides[1].members[0].fighting=45:65:1"],
                                 after=6.0)
    assert code == 130, err
    assert out.rstrip().splitlines()[-1].startswith("PARTIAL: interrupted after ")


# --- Dask corners --------------------------------------------------------------------------------

NO_WORKERS = """
import time
from dask.distributed import LocalCluster
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None)
    print(cluster.scheduler_address, flush=True)
    time.sleep(120)  # ends by itself should the test not kill it
"""


def test_a_scheduler_without_workers_says_no_workers():
    pytest.importorskip("dask.distributed")
    scheduler = subprocess.Popen([sys.executable, "-c", NO_WORKERS], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
    try:
        address = scheduler.stdout.readline().strip()
        refused(["attack", "exp", *EXP, "-n", "1e6", "--executor", "dask", "--scheduler", address],
                "no workers", address)
    finally:
        scheduler.kill()
        scheduler.wait()


@pytest.mark.parametrize("second_after", [0.02, 0.2])
def test_a_second_ctrl_c_under_dask_keeps_the_record_and_exits_cleanly(second_after):
    # Both Ctrl-Cs go to the whole process group, as a terminal sends them; the first stops the
    # run, the second comes while the cluster closes (or the record prints).
    import json
    import time

    pytest.importorskip("dask.distributed")
    from tests.test_dask_interrupt import wait_for_workers

    def started(process):
        wait_for_workers(process)
        time.sleep(3.0)  # the workers start and run some tasks

    stopped = interrupt(["fight", "d100_duel", "-n", "1e9", "--executor", "dask", "--json"], started, group=True,
                        second_after=second_after)
    # not -2: not killed by the second SIGINT
    assert stopped.returncode == 130, (stopped.returncode, stopped.err)
    record = json.loads(stopped.out)
    assert record["partial"] is True and record["fights"] < 10**9
