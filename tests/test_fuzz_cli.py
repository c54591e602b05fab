"""Command-line fuzzing: valid flags with hostile values, from a grammar of each command's flags.

Every command line gets an answer (exit 2 and one stderr line, or exit 0 and JSON that parses),
within the time bound and under the memory bound (tests/_fuzzing.py); command lines whose values
are all valid must exit 0. Runs stay small (-n at most 200), so a valid run is quick.

CI runs the reduced form (REDUCED_EXAMPLES examples a test). The full form:

    COMBATSIM_FUZZ_EXAMPLES=2000 pytest -m slow tests/test_fuzz_cli.py
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combatsim.runner import INT64_MAX_ITEMS
from combatsim.validation import parse_integer

from ._fuzzing import FULL_EXAMPLES, REDUCED_EXAMPLES, Outcome, assert_cli_answered, full_form, sandbox

# --- hostile values ------------------------------------------------------------------------------

#: Numbers as a user (or a script) might mistype them.
HOSTILE_NUMBERS = [
    "-1", "0", "-0", "+5", "1.5", "2.0", "1e3", "1e999999999", "1e-99999999", "9007199254740993.0", "nan", "inf",
    "-inf", "1e308", "10**30", "1" + "0" * 30, "-" + "9" * 40, "0x10", "1_000", "１２", "٣", " 5 ", "5\n", "1,2",
]
#: Text no field should take: empty, control characters, bidi overrides, undecodable bytes, huge.
HOSTILE_TEXT = [
    "", " ", "\x1b[31m", "a\r\nFAKE LINE", "a\x07", "\u202eabc", "\udcff", "x" * 2000, "名前", "--json", "-",
    "\t", "\x7f",
]
hostile_text = st.one_of(st.sampled_from(HOSTILE_TEXT),
                         st.text(st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]), max_size=8))
hostile_number = st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.integers(-(2**70), 2**70).map(str),
                           st.floats().map(repr))
hostile = st.one_of(hostile_number, hostile_text)


def number(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(str)


def dice(count=(1, 4), sides=(2, 12), modifier=(-2, 3)) -> st.SearchStrategy[str]:
    """``NdS+M`` from the dice grammar (dice.py), each part in the given ranges."""
    return st.builds(lambda n, s, m: f"{n}d{s}{m:+d}" if m else f"{n}d{s}",
                     st.integers(*count), st.integers(*sides), st.integers(*modifier))


def hostile_dice() -> st.SearchStrategy[str]:
    """Dice whose parts are huge, zero, negative or not numbers: the grammar with hostile parts."""
    part = st.sampled_from(["", "0", "1", "3", "-1", "1000", "1000000", "10**6", "1e3", "x", "99999999999999999999"])
    modifier = st.sampled_from(["", "+2", "-1", "+1e9", "+", "-99999999999999999999", "*2"])
    return st.one_of(st.builds(lambda n, s, m: f"{n}d{s}{m}", part, part, modifier), hostile_text)


def tss_score() -> st.SearchStrategy[str]:
    single = number(1, 20)
    triple = st.integers(2, 20).map(lambda o: f"{o}/{max(1, o // 2)}/{max(1, o // 4)}")
    return st.one_of(single, triple)


def tss_track() -> st.SearchStrategy[str]:
    step = st.builds(lambda d, t: f"{d}{t}", dice(count=(1, 1), sides=(2, 8), modifier=(-1, 2)),
                     st.sampled_from("swm"))
    return st.lists(step, min_size=3, max_size=3).map("/".join)


def hostile_tss(part: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    piece = st.one_of(part, st.sampled_from(["d1000w", "d0w", "d4x", "0", "-1", "d4", "20/10", "d4w/d4w"]))
    return st.one_of(st.lists(piece, min_size=1, max_size=4).map("/".join), hostile_text)


def value_range(low: int, high: int) -> st.SearchStrategy[str]:
    """``start:stop:step`` with at most 20 points, or one value."""
    ranged = st.builds(lambda a, width, step: f"{a}:{min(high, a + width)}:{step}",
                       st.integers(low, high), st.integers(0, 100), st.integers(5, 50))
    return st.one_of(number(low, high), ranged)


def hostile_range() -> st.SearchStrategy[str]:
    part = st.one_of(st.sampled_from(["0", "-5", "1", "1000", "", "nan", "1e9", "-1e9", "1.5"]), number(-5, 1005))
    return st.one_of(st.lists(part, min_size=2, max_size=4).map(":".join), hostile)


OUTPUT_PATHS = ["out.json", "/nonexistent/dir/out.csv", "/dev/full", ".", "x.xyz", "", "\x1b.csv", "sub/", "a" * 300]

# --- the grammar: each command's flags, a valid and a hostile strategy each -------------------------

Flag = tuple[str, st.SearchStrategy[str] | None, st.SearchStrategy[str] | None]  # name, valid, hostile
#: A flag's "valid" strategy when only hostile values are drawn for it (a valid value would make
#: a long run, or needs what the fuzzer does not start): valid lines leave the flag out.
HOSTILE_ONLY: st.SearchStrategy[str] = st.nothing()
BAD_PLOT_PATHS = ["/nonexistent/dir/x.png", ".", "x.xyz", "", "/dev/full", "\x1b.png", "a" * 300 + ".png"]
BAD_SECONDS = ["-1", "nan", "inf", "-inf", "", "x", "1e999", "-0.5", "\x1b", "1e9", "10**30"]

RUN_FLAGS: list[Flag] = [
    ("--seed", st.integers(0, 2**64 - 1).map(str), st.one_of(hostile, st.just(str(2**64)), st.just("-1"))),
    # Not numba: its first call after a source change compiles for seconds to minutes, which the time
    # bound cannot tell from a hang (the backends agree outcome by outcome in the differential tests).
    ("--backend", st.sampled_from(["auto", "python", "cython"]),
     st.one_of(st.sampled_from(["Numba", "gpu", "fortran"]), hostile_text)),
    ("--threads", number(1, 4), st.one_of(hostile, st.sampled_from(["0", "-1", "1025", "1000000"]))),
    ("--chunk-size", number(1, 1000), hostile),
    ("--scheduler", HOSTILE_ONLY, st.sampled_from(["tcp://127.0.0.1:1", "garbage", "", "\x1b", "tcp://[::1]:99999"])),
]
FIGHT_FLAGS: list[Flag] = [
    *RUN_FLAGS,
    ("--target-error", st.sampled_from(["0.05", "0.2"]), st.one_of(hostile, st.sampled_from(["0", "1", "-0.1"]))),
    ("--csv", st.just("out.csv"), st.sampled_from(OUTPUT_PATHS)),
    ("--plot", HOSTILE_ONLY, st.sampled_from(BAD_PLOT_PATHS)),
]
EXP_ATTACK_FLAGS: list[Flag] = [
    ("--hit-on-equal", None, None),
    ("--critical", None, None),
    ("--adjustment", number(-100, 100), hostile),
    ("--damage", dice(), hostile_dice()),
    ("--weapon-type", st.sampled_from(["A", "B", "C", "D", "E", "F", "automatic"]), hostile_text),
    ("--weapon-name", st.sampled_from(["harpoon", "claw"]), hostile_text),
    ("--ammunition", number(10, 30), hostile),  # an automatic weapon fires 3 rounds a to-hit roll
    ("--damage-adjustment", number(-5, 10), hostile),
]
EXP_RAW: list[Flag] = [
    ("--bonus", number(-200, 400), hostile),
    ("--max-roll", number(1, 1000), hostile),
    ("--armour-rating", number(0, 1000), hostile),
]
EXP_PERSONA: list[Flag] = [
    ("--class", st.sampled_from(["nomad", "mercenary", "knite", "biologist"]), hostile_text),
    ("--level", st.just("1"), hostile),  # above 1 needs --experience-bonus
    ("--awe", number(3, 20), hostile),
    ("--dex", number(3, 20), hostile),
    ("--int", number(3, 20), hostile),
    ("--pstr", number(3, 20), hostile),
    ("--experience-bonus", st.just("60,80,65"), st.one_of(hostile, st.sampled_from(["1,2", "a,b,c", "1,2,3,4"]))),
]
#: With a persona the table gives BP, MR and DA: no --damage-adjustment.
EXP_PERSONA_ATTACK_FLAGS = [flag for flag in EXP_ATTACK_FLAGS if flag[0] != "--damage-adjustment"] + [
    ("--proficient", None, None)]
D100_FLAGS: list[Flag] = [
    ("--pool", number(0, 150), hostile),
    ("--lethality", number(0, 100), hostile),
    ("--specialty", number(0, 4), hostile),
    ("--taper", st.sampled_from(["halving", "highest", "flat"]), hostile_text),
    ("--modifier", st.sampled_from(["quick", "cover", "defend", "automatic-fire"]), hostile_text),
    ("--severity", st.sampled_from(["1", "2", "1.5", "0.5", "3"]),
     st.one_of(hostile, st.sampled_from(["1e999999999", "1e-99999999", "0", "-1", "1/2", "1.55555555555"]))),
    ("--armour", st.sampled_from(["none", "light", "heavy"]), hostile_text),
    ("--nonlethal", None, None),
    ("--dual-wield", None, None),
]
TSS_FLAGS: list[Flag] = [
    ("--skill", tss_score(), hostile_tss(tss_score())),
    ("--damage", tss_track(), hostile_tss(tss_track())),
    ("--steps", number(-5, 5), hostile),
    ("--weapon-quality", st.sampled_from(["marginal", "ordinary", "good", "amazing"]), hostile_text),
    ("--armour", st.sampled_from(["d4", "d6", "d8"]), st.one_of(hostile_dice(), st.just("-3"))),
    ("--armour-quality", st.sampled_from(["marginal", "ordinary", "good", "amazing"]), hostile_text),
    ("--one-step-shift", None, None),
    ("--aim", None, None),
    ("--two-weapons", st.sampled_from(["main", "off"]), hostile_text),
    ("--ambidexterity", None, None),
    ("--broad", None, None),
]
CURVE_SWEEPS = {"--bonus": (-200, 400), "--max-roll": (1, 1000), "--armour-rating": (0, 1000)}
CURVE_FLAGS: list[Flag] = [
    *((flag, number(*bounds), hostile_range()) for flag, bounds in CURVE_SWEEPS.items()),
    ("--hit-on-equal", None, None),
]
#: Policies the fuzzers write beside their runs (tests/_fuzzing.py runs them in that directory).
FUZZ_POLICIES = """
import sys
import numpy as np

def first_legal(obs, masks):
    return np.argmax(masks, axis=1)

def raises(obs, masks):
    raise RuntimeError("a policy's own bug")

def exits(obs, masks):
    sys.exit(3)

def recurses(obs, masks):
    return recurses(obs, masks)

def floats(obs, masks):
    return np.zeros(len(obs))

def wrong_shape(obs, masks):
    return np.zeros((len(obs), 2), dtype=np.int64)

def out_of_range(obs, masks):
    return np.full(len(obs), 99, dtype=np.int64)

def masked(obs, masks):
    return np.ma.masked_array(np.zeros(len(obs), dtype=np.int64), mask=True)

not_callable = 3
"""
POLICY_FLAGS: list[Flag] = [
    ("--policy", st.sampled_from(["Guard=fuzz_policies:first_legal", "Veteran=fuzz_policies:first_legal"]),
     st.one_of(st.sampled_from([
         "Guard=fuzz_policies:raises", "Guard=fuzz_policies:exits", "Guard=fuzz_policies:recurses",
         "Guard=fuzz_policies:floats", "Guard=fuzz_policies:wrong_shape", "Guard=fuzz_policies:out_of_range",
         "Guard=fuzz_policies:masked", "Guard=fuzz_policies:not_callable", "Guard=fuzz_policies:missing",
         "Guard=fuzz_exits_on_import:policy", "Guard=os:getcwd", "Guard=numpy:zeros", "Guard=os.path:join",
         "Gaurd=fuzz_policies:first_legal", "Guard=", "=fuzz_policies:first_legal", "Guard=:", "Guard=nowhere:x",
         "Guard=fuzz_policies", "Guard=\x1b:x", "Guard=file:/nonexistent.npz"]), hostile_text)),
    *[flag for flag in RUN_FLAGS if flag[0] in ("--seed", "--backend", "--scheduler")],
    ("--csv", st.just("out.csv"), st.sampled_from(OUTPUT_PATHS)),
]
VARY_PATHS = ["sides[0].members[0].hit_points", "sides[1].members[0].armour_rating", "options.unit_limit"]
CURVE_FIGHT_FLAGS: list[Flag] = [
    ("--vary", st.builds(lambda path, start, width, step: f"{path}={start}:{start + width}:{step}",
                         st.sampled_from(VARY_PATHS[:2]), st.integers(5, 30), st.integers(0, 6), st.integers(1, 3)),
     st.one_of(st.builds(lambda path, spec: f"{path}={spec}", st.sampled_from([*VARY_PATHS, "sides[9].x", "x..y", ""]),
                         st.one_of(hostile_range(), st.sampled_from(["1,2,,3", ",".join(["1"] * 1001), "1_:2:1",
                                                                     "１:2:1", "1:2:0", "2:1:1", "1:" + "9" * 5000 + ":1",
                                                                     "a,b", '"x",1'])) ),
               hostile_text)),
    ("--max-states", st.sampled_from(["10000000", "1"]), st.one_of(hostile, st.sampled_from(["0", "1e13"]))),
    ("--seed", number(0, 1000), hostile),
    ("--plot", HOSTILE_ONLY, st.sampled_from(BAD_PLOT_PATHS)),
    ("--set", st.just("options.unit_limit=50"), st.one_of(hostile_text, st.sampled_from([
        "options.unit_limit=1000000", "sides[0].members[0].hit_points=" + "9" * 5000, "sides[7].x=1", "x"]))),
]
ODDS_FIGHT_FLAGS: list[Flag] = [
    ("--method", st.sampled_from(["auto", "exact", "float64"]), hostile_text),
    ("--max-states", st.sampled_from(["10000000", "100000"]), st.one_of(hostile, st.sampled_from(["0", "1"]))),
    ("--set", st.sampled_from(["options.unit_limit=50", "sides[0].members[0].hit_points=12"]),
     st.one_of(hostile_text, st.sampled_from([
         "options.unit_limit=1000000", "options.unit_limit=" + "9" * 5000, "sides[" + "9" * 5000 + "].x=1",
         "sides[0].members[0].weapon.damage=\"0d6\"", "options.unit_limit=1_", "options.unit_limit=\"١\"",
         "sides[0].members[0].second_weapon={ damage = \"d4w/d4+1w/d4m\", class = \"E\\u001bn\" }",
         "sides[0].members[0].aim_chance=1_0", "sides[0].members[0].ambidexterity=\"yes\""]))),
]
SOLVE_FLAGS: list[Flag] = [
    ("--set", st.just("options.max_rounds=1"), st.one_of(hostile_text, st.sampled_from([
        "options.max_rounds=0", "options.max_rounds=" + "9" * 5000, "options.passes=-1", "sides[9].x=1"]))),
    # Veteran only: the valid --against plays Guard, who cannot also be the one solved for
    ("--agent", st.just("Veteran"), st.one_of(hostile_text, st.sampled_from(["Gaurd", "veteran", "Guard"]))),
    ("--method", st.sampled_from(["auto", "exact", "float64"]), hostile_text),
    ("--max-states", st.sampled_from(["10000000", "100000"]), st.one_of(hostile, st.sampled_from(["0", "1", "1e13"]))),
    ("--against", st.just("Guard=fuzz_policies:first_legal"), st.sampled_from([
        "Guard=fuzz_policies:raises", "Guard=fuzz_policies:exits", "Guard=fuzz_policies:recurses",
        "Guard=fuzz_policies:floats", "Guard=fuzz_policies:wrong_shape", "Guard=fuzz_policies:out_of_range",
        "Guard=fuzz_exits_on_import:policy", "Guard=nowhere:x", "Guard=file:/nonexistent.npz", "Nobody=numpy:zeros"])),
]
SOLVE_EXP_FLAGS: list[Flag] = [
    # two units: a valid line solves in well under a second
    ("--set", st.just("options.unit_limit=2"), st.one_of(hostile_text, st.sampled_from([
        "options.unit_limit=0", "options.unit_limit=" + "9" * 5000, "sides[0].members[0].hit_points=-1",
        "sides[9].x=1"]))),
    ("--agent", st.just("Bob Too"), st.one_of(hostile_text, st.sampled_from(["Bob", "bob too", "Giant"]))),
    ("--method", st.sampled_from(["auto", "float64"]), hostile_text),
    ("--max-states", st.sampled_from(["10000000", "100000"]), st.one_of(hostile, st.sampled_from(["0", "1", "1e13"]))),
    ("--against", st.just("Giant Arctic Sea Slug=fuzz_policies:first_legal"), st.sampled_from([
        "Giant Arctic Sea Slug=fuzz_policies:raises", "Giant Arctic Sea Slug=fuzz_policies:floats",
        "Giant Arctic Sea Slug=fuzz_policies:wrong_shape", "Giant Arctic Sea Slug=fuzz_policies:out_of_range",
        "Giant Arctic Sea Slug=nowhere:x", "Giant Arctic Sea Slug=file:/nonexistent.npz", "Nobody=numpy:zeros"])),
]
#: One round of Alex against the thug: the TSS chain's bound is within the default --max-states there
TSS_SOLVE_FLAGS: list[Flag] = [
    ("--set", st.just("options.max_rounds=1"), st.one_of(hostile_text, st.sampled_from([
        "options.max_rounds=0", "options.max_rounds=-1", "options.max_rounds=" + "9" * 5000, "sides[9].x=1"]))),
    # Alex only: the valid --against plays Thug
    ("--agent", st.just("Alex"), st.one_of(hostile_text, st.sampled_from(["Thug", "alex", "Kara"]))),
    ("--method", st.sampled_from(["auto", "float64"]), hostile_text),
    ("--max-states", st.just("10000000"), st.one_of(hostile, st.sampled_from(["0", "1", "143615", "1e13"]))),
    ("--against", st.just("Thug=fuzz_policies:first_legal"), st.sampled_from([
        "Thug=fuzz_policies:raises", "Thug=fuzz_policies:wrong_shape", "Thug=fuzz_policies:out_of_range",
        "Thug=nowhere:x", "Thug=file:/nonexistent.npz", "Alex=numpy:zeros"])),
]
#: Required flags come first in each list and are always given (a missing one is argparse's error,
#: which test_missing_required_flags covers); the rest are given or not.
COMMANDS: dict[str, tuple[list[str], list[Flag], int]] = {
    "attack exp raw": (["attack", "exp"], EXP_RAW + EXP_ATTACK_FLAGS + RUN_FLAGS, 3),
    "attack exp persona": (["attack", "exp"], EXP_RAW[2:] + EXP_PERSONA + EXP_PERSONA_ATTACK_FLAGS + RUN_FLAGS, 7),
    "odds exp": (["odds", "exp"], EXP_RAW + EXP_ATTACK_FLAGS, 3),
    "attack d100": (["attack", "d100"], D100_FLAGS + RUN_FLAGS, 2),
    "odds d100": (["odds", "d100"], D100_FLAGS, 2),
    "attack tss": (["attack", "tss"], TSS_FLAGS + RUN_FLAGS, 2),
    "odds tss": (["odds", "tss"], TSS_FLAGS, 2),
    "curve exp": (["curve", "exp"], CURVE_FLAGS, 3),
    "table exp": (["table", "exp"], EXP_PERSONA, 6),
    "fight d100": (["fight", "d100_duel"], FIGHT_FLAGS, 0),
    "fight exp": (["fight", "exp_bob_too"], FIGHT_FLAGS, 0),
    "fight tss": (["fight", "tss_alex_vs_thug"], FIGHT_FLAGS, 0),
    "fight tss two blades": (["fight", "tss_two_blades"], FIGHT_FLAGS, 0),
    "fight d100 --policy": (["fight", "d100_duel"], POLICY_FLAGS, 1),
    "curve fight": (["curve", "fight", "exp_bob_too"], CURVE_FIGHT_FLAGS, 1),
    "odds fight exp": (["odds", "fight", "exp_bob_too"], ODDS_FIGHT_FLAGS, 1),
    # hostile only: a valid d100 fight's odds take seconds; --set first, so that every line has it
    "odds fight d100": (["odds", "fight", "d100_duel"],
                        [(flag, HOSTILE_ONLY, bad) for flag, _, bad in reversed(ODDS_FIGHT_FLAGS)], 1),
    "odds fight tss two blades": (["odds", "fight", "tss_two_blades"],
                                  [(flag, HOSTILE_ONLY, bad) for flag, _, bad in reversed(ODDS_FIGHT_FLAGS)], 1),
    "solve d100": (["solve", "d100_duel"], SOLVE_FLAGS, 2),
    "solve exp": (["solve", "exp_bob_too"], SOLVE_EXP_FLAGS, 2),
    "solve tss": (["solve", "tss_alex_vs_thug"], TSS_SOLVE_FLAGS, 2),
    "bench": (["bench"], [("--seconds", HOSTILE_ONLY, st.sampled_from(BAD_SECONDS)),
                          ("--kernel", st.sampled_from(["exp.to_hit", "d100.attack"]), hostile_text)], 1),
}
#: Commands a line of valid values can run: none of their required flags is hostile-only.
VALID_COMMANDS = sorted(name for name, (_, flags, required) in COMMANDS.items()
                        if all(valid is not HOSTILE_ONLY for _, valid, _ in flags[:required]))
#: ruleset -> flag -> the flags it needs, one of which is added with the first one's value when
#: none is given (a flag that the mode would ignore is an error).
NEEDS = {
    "exp": {flag: (("--damage", "1d6"), ("--weapon-type", "A")) for flag in
            ("--weapon-name", "--ammunition", "--damage-adjustment", "--critical", "--adjustment", "--proficient")},
    "tss": {**{flag: (("--armour", "d6"),) for flag in ("--one-step-shift", "--armour-quality")},
            "--ambidexterity": (("--two-weapons", "off"),)},
}
SMALL_N_MOST = 200
SMALL_N = number(1, SMALL_N_MOST)


def _no_long_run(text: str) -> bool:
    """A hostile -n the CLI reads as a count above SMALL_N's is not hostile, only a long run (a
    TSS fight in pure Python takes about a millisecond), which the time bound would fail."""
    count = parse_integer(text)
    return count is None or not SMALL_N_MOST < count <= INT64_MAX_ITEMS


HOSTILE_N = st.one_of(hostile.filter(_no_long_run), st.sampled_from(["0", "-1", str(2**62 + 1), "1e30", "2**64"]))


@st.composite
def command_lines(draw, hostility: str = "some") -> list[str]:
    """One command's words, its required flags and some optional ones; -n stays small and --json
    is always given. Their values are all valid (``hostility="none"``), all valid but one
    (``"one"``: a deep check meets the hostile value), or each hostile with probability 0.3
    (``"some"``). A hostile-only flag's value is always hostile."""
    name = draw(st.sampled_from(VALID_COMMANDS if hostility == "none" else sorted(COMMANDS)))
    words, flags, required = COMMANDS[name]
    included = [(flag, valid, bad) for position, (flag, valid, bad) in enumerate(flags)
                if not (valid is HOSTILE_ONLY and hostility == "none")
                and (position < required or draw(st.integers(0, 5 if valid is HOSTILE_ONLY else 1)) == 0)]
    hostile_only = [flag for flag, valid, _ in included if valid is HOSTILE_ONLY]
    if hostility == "one" and hostile_only:  # that one flag is the hostile value
        included = [entry for entry in included if entry[1] is not HOSTILE_ONLY or entry[0] == hostile_only[0]]
    simulation = any(flag == "--seed" for flag, _, _ in flags)
    candidates = [flag for flag, valid, _ in included if valid is not None] + (["-n"] if simulation else [])
    target = None
    if hostility == "one":
        target = hostile_only[0] if hostile_only else draw(st.sampled_from(candidates))

    def is_hostile(flag: str, valid) -> bool:
        if valid is HOSTILE_ONLY or hostility == "one":
            return valid is HOSTILE_ONLY or flag == target
        return hostility == "some" and draw(st.floats(0, 1)) < 0.3

    values = {}
    argv = list(words)
    for flag, valid, bad in included:
        if valid is None:
            argv.append(flag)
        else:
            values[flag] = draw(bad if is_hostile(flag, valid) else valid)
    if name == "curve exp" and hostility != "some" and target not in CURVE_SWEEPS:  # one parameter sweeps
        flag = draw(st.sampled_from(sorted(CURVE_SWEEPS)))
        values[flag] = draw(value_range(*CURVE_SWEEPS[flag]))
    for flag, value in values.items():
        # argparse reads "--bonus -1:5:1" as a flag without its value; the shell user writes "--bonus=-1:5:1"
        argv += [f"{flag}={value}"] if value.startswith("-") else [flag, value]
    for flag, needed in NEEDS.get(words[-1], {}).items():
        if flag in values.keys() | set(argv) and not {n for n, _ in needed} & (values.keys() | set(argv)):
            argv += list(needed[0])
    if simulation:  # keep it small
        argv += ["-n", draw(HOSTILE_N if is_hostile("-n", SMALL_N) else SMALL_N)]
    return [*argv, "--json"]


def run_directory(tmp_path_factory) -> str:
    """Where the fuzzed command lines run: with the policy modules that --policy names."""
    directory = tmp_path_factory.getbasetemp()
    if not (directory / "fuzz_policies.py").exists():
        (directory / "fuzz_policies.py").write_text(FUZZ_POLICIES)
        (directory / "fuzz_exits_on_import.py").write_text("import sys\nsys.exit(0)\n")
    return str(directory)


def _check_hostile(argv, tmp_path_factory):
    outcome = sandbox.cli(argv, cwd=run_directory(tmp_path_factory))
    assert_cli_answered(outcome)


def _check_valid(argv, tmp_path_factory):
    outcome = sandbox.cli(argv, cwd=run_directory(tmp_path_factory))
    assert_cli_answered(outcome)
    assert outcome.code == 0, f"valid values refused: {outcome.describe()}"


@pytest.mark.parametrize(("text", "hostile"), [("6728", False), ("1e3", False), ("1_000", False), ("200", True),
                                              ("0", True), (str(2**62 + 1), True), ("nan", True), ("9" * 40, True)])
def test_a_hostile_count_never_asks_for_a_long_valid_run(text, hostile):
    assert _no_long_run(text) is hostile


@settings(max_examples=REDUCED_EXAMPLES)
@given(argv=st.one_of(command_lines("one"), command_lines("some")))
def test_hostile_command_lines_are_answered(tmp_path_factory, argv):
    _check_hostile(argv, tmp_path_factory)


@settings(max_examples=REDUCED_EXAMPLES)
@given(argv=command_lines("none"))
def test_valid_command_lines_run(tmp_path_factory, argv):
    _check_valid(argv, tmp_path_factory)


@full_form
@settings(max_examples=FULL_EXAMPLES)
@given(argv=st.one_of(command_lines("one"), command_lines("some")))
def test_hostile_command_lines_are_answered_full(tmp_path_factory, argv):
    _check_hostile(argv, tmp_path_factory)


@full_form
@settings(max_examples=FULL_EXAMPLES)
@given(argv=command_lines("none"))
def test_valid_command_lines_run_full(tmp_path_factory, argv):
    _check_valid(argv, tmp_path_factory)


# --- every command line of issue 29, as a regression example -------------------------------------

EXP_RAW_BASE = ["--bonus", "110", "--max-roll", "760", "--armour-rating", "580"]
EXP_ODDS = ["odds", "exp", *EXP_RAW_BASE]
TSS_BASE = ["--skill", "16/8/4", "--damage", "d4w/d4+2w/d4-1m"]
D100_BASE = ["--pool", "60", "--lethality", "30"]
#: Inputs that must be refused: exit 2 and one line.
REFUSED = {
    "odds exp --bonus 10**30": [*EXP_ODDS[:2], "--bonus", "1" + "0" * 30, "--max-roll", "760", "--armour-rating", "580"],
    "odds exp huge --max-roll": [*EXP_ODDS[:2], "--bonus", "110", "--max-roll", "1" + "0" * 30, "--armour-rating", "580"],
    "odds exp huge --armour-rating": [*EXP_ODDS[:4], "--max-roll", "760", "--armour-rating", "1" + "0" * 30],
    "odds exp huge --damage-adjustment": [*EXP_ODDS, "--damage", "d6", "--damage-adjustment", "1" + "0" * 30],
    "curve exp --max-roll -5": ["curve", "exp", "--bonus", "110", "--max-roll", "-5", "--armour-rating", "580"],
    "curve exp --max-roll 0": ["curve", "exp", "--bonus", "110", "--max-roll", "0", "--armour-rating", "580"],
    "curve exp --max-roll 0:1000:1": ["curve", "exp", "--bonus", "110", "--max-roll", "0:1000:1",
                                      "--armour-rating", "580"],
    "attack exp --awe without --class": ["attack", "exp", *EXP_RAW_BASE, "--awe", "10000", "-n", "10"],
    "attack exp --level without --class": ["attack", "exp", *EXP_RAW_BASE, "--level", "5", "-n", "10"],
    "attack exp --proficient without --class": ["attack", "exp", *EXP_RAW_BASE, "--proficient", "-n", "10"],
    "attack exp --damage ''": ["attack", "exp", *EXP_RAW_BASE, "--damage", "", "-n", "10"],
    "attack tss --armour -3": ["attack", "tss", *TSS_BASE, "--armour", "-3", "-n", "10"],
    "bench --seconds -1": ["bench", "--kernel", "exp.to_hit", "--seconds", "-1"],
    "bench --seconds nan": ["bench", "--kernel", "exp.to_hit", "--seconds", "nan"],
    "bench --kernel nosuch.kernel": ["bench", "--kernel", "nosuch.kernel", "--seconds", "0.01"],
    "attack exp -n 0": ["attack", "exp", *EXP_RAW_BASE, "-n", "0"],
    "attack d100 -n 0": ["attack", "d100", *D100_BASE, "-n", "0"],
    "attack tss -n 0": ["attack", "tss", *TSS_BASE, "-n", "0"],
    "attack d100 --severity 1e999999999": ["attack", "d100", *D100_BASE, "--severity", "1e999999999", "-n", "10"],
    "attack d100 --severity 1e-99999999": ["attack", "d100", *D100_BASE, "--severity", "1e-99999999", "-n", "10"],
    "odds d100 --severity 1e999999999": ["odds", "d100", *D100_BASE, "--severity", "1e999999999"],
    "odds d100 --severity 1e-99999999": ["odds", "d100", *D100_BASE, "--severity", "1e-99999999"],
    "argparse's own error (a bad integer)": ["attack", "exp", *EXP_RAW_BASE[:4], "--armour-rating", "x"],
    "argparse's own error (a missing flag)": ["attack", "exp", "--bonus", "1"],
    "argparse's own error (a bad choice)": ["attack", "exp", *EXP_RAW_BASE, "--backend", "gpu", "-n", "10"],
    "fight -n 0": ["fight", "d100_duel", "-n", "0"],
    "fight --threads -1": ["fight", "d100_duel", "-n", "10", "--threads", "-1"],
}
#: Inputs that must be answered at once either way (refused, or a quick exact answer).
ANSWERED = {
    "odds exp --damage 10d1000": [*EXP_ODDS, "--damage", "10d1000"],
    "odds exp --damage 1d1000000": [*EXP_ODDS, "--damage", "1d1000000"],
    "odds exp --damage 1000d1000000": [*EXP_ODDS, "--damage", "1000d1000000"],
    "odds exp --damage 3d100 automatic": [*EXP_ODDS, "--damage", "3d100", "--weapon-type", "automatic"],
    "odds tss d1000 dice": ["odds", "tss", "--skill", "16/8/4", "--damage", "d1000w/d1000w/d1000m", "--armour",
                            "d1000"],
    "attack exp 1000d1000000 automatic": ["attack", "exp", *EXP_RAW_BASE, "--damage", "1000d1000000",
                                          "--weapon-type", "automatic", "-n", "20"],
    "fight --threads 1000": ["fight", "d100_duel", "-n", "20", "--threads", "1000"],
}


@pytest.mark.parametrize("argv", list(REFUSED.values()), ids=list(REFUSED))
def test_issue_29_inputs_are_refused(tmp_path, argv):
    outcome = sandbox.cli([*argv, "--json"], cwd=str(tmp_path))
    assert_cli_answered(outcome)
    assert outcome.code == 2, f"accepted: {outcome.describe()}"


@pytest.mark.parametrize("argv", list(ANSWERED.values()), ids=list(ANSWERED))
def test_issue_29_inputs_are_answered_at_once(tmp_path, argv):
    assert_cli_answered(sandbox.cli([*argv, "--json"], cwd=str(tmp_path)))


@pytest.mark.parametrize("seed", ["9007199254740993.0", "9007199254740993", "1e19", "18446744073709551615.0"])
def test_a_seed_is_exact_or_refused(tmp_path, seed):
    outcome = sandbox.cli(["attack", "exp", *EXP_RAW_BASE, "-n", "10", "--seed", seed, "--json"], cwd=str(tmp_path))
    assert_cli_answered(outcome)
    if outcome.code == 0:
        assert json.loads(outcome.stdout)["seed"] == Fraction(seed), f"ran with another seed: {outcome.describe()}"


#: Bad output paths, refused before the run: -n 1e9 fights would take minutes.
BAD_OUTPUTS = {
    "--csv in a missing directory": ["--csv", "missing/out.csv"],
    "--csv /dev/full": ["--csv", "/dev/full"],
    "--csv a directory": ["--csv", "."],
    "--csv ''": ["--csv", ""],
    "--plot in a missing directory": ["--plot", "missing/out.png"],
    "--plot /dev/full": ["--plot", "/dev/full"],
    "--plot a directory": ["--plot", "."],
    "--plot x.xyz": ["--plot", "x.xyz"],
    "--plot ''": ["--plot", ""],
}


@pytest.mark.parametrize("flags", list(BAD_OUTPUTS.values()), ids=list(BAD_OUTPUTS))
def test_bad_output_paths_are_refused_before_the_run(tmp_path, flags):
    outcome = sandbox.cli(["fight", "d100_duel", "-n", "1e9", *flags, "--json"], cwd=str(tmp_path))
    assert_cli_answered(outcome)
    assert outcome.code == 2, f"accepted: {outcome.describe()}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag, name", [("--plot", "rounds"), ("--plot", "sub"), ("--csv", "sub")])
def test_an_output_is_written_where_named_or_refused(tmp_path, flag, name):
    (tmp_path / "sub").mkdir()
    before = sorted(tmp_path.rglob("*"))
    outcome = sandbox.cli(["fight", "d100_duel", "-n", "20", flag, name, "--json"], cwd=str(tmp_path))
    assert_cli_answered(outcome)
    if outcome.code == 0:  # then exactly the named file, no other
        assert sorted(tmp_path.rglob("*")) == sorted([*before, tmp_path / name])
        assert (tmp_path / name).is_file()
    else:
        assert sorted(tmp_path.rglob("*")) == before


#: What a port that is not a Dask scheduler says first: an HTTP server's answer, a text banner.
NOT_DASK = {"http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "banner": b"SSH-2.0-OpenSSH_9.6\r\n" * 64}
#: Importing distributed in the child takes a second or two of the bound.
DASK_TIME_BOUND = 15.0


@pytest.fixture(params=list(NOT_DASK))
def not_a_scheduler(request):
    """A port on this machine that answers every connection with NOT_DASK[param], then closes."""
    greeting = NOT_DASK[request.param]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def answer():
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection, contextlib.suppress(OSError):
                connection.sendall(greeting)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    listener.close()


def test_a_port_that_is_not_a_dask_scheduler_is_refused(tmp_path, not_a_scheduler):
    pytest.importorskip("distributed")
    argv = ["attack", "exp", *EXP_RAW_BASE, "-n", "10", "--executor", "dask", "--scheduler", not_a_scheduler, "--json"]
    outcome = sandbox.cli(argv, cwd=str(tmp_path), timeout=DASK_TIME_BOUND)
    assert_cli_answered(outcome, time_bound=DASK_TIME_BOUND)
    assert outcome.code == 2, f"accepted: {outcome.describe()}"


@pytest.mark.parametrize("code, stdout, stderr", [
    (2, "", "usage: combatsim attack exp [-h]\ncombatsim: error: the following arguments are required\n"),
    (2, "{}", "combatsim: error: bonus must be ...\n"),
    (3, "", "combatsim: internal error: RecursionError\n"),
    (0, "{\"hit_rate\": NaN}", ""),
    (0, "EXP to-hit: 10 attacks", ""),
])
def test_what_counts_as_no_answer(code, stdout, stderr):
    outcome = Outcome(request="[]", stdout=stdout, stderr=stderr, seconds=0.1, peak_mb=1.0, timed_out=False, code=code)
    with pytest.raises(AssertionError):
        assert_cli_answered(outcome)


@pytest.mark.parametrize("value", [b"\xff\xfe", b"1e999999999", b"\x1b[31m"], ids=["invalid UTF-8", "huge", "ESC"])
def test_the_installed_command_answers_raw_bytes(tmp_path, value):
    """The real entry point, with argv bytes no Python string literal gives (undecodable UTF-8)."""
    command = [sys.executable.encode(), b"-m", b"combatsim", b"attack", b"exp", b"--bonus", value, b"--max-roll", b"760",
               b"--armour-rating", b"580", b"-n", b"10", b"--json"]
    done = subprocess.run(command, capture_output=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and done.stdout == b"", done
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(b"combatsim: error:"), done
    assert b"--bonus" in done.stderr, done
