"""Python API fuzzing: every simulate_* entry point, one argument at a time replaced by a hostile
Python value (wrong types, huge, nan, control characters, infinite iterators, odd numpy dtypes).

Each call is a line of Python run in the sandbox (tests/_fuzzing.py): it returns, or raises
ValueError or TypeError with a one-line message, within the time bound and under the memory
bound. Runs stay small (n at most 60).

CI runs the reduced form (REDUCED_EXAMPLES examples a test). The full form:

    COMBATSIM_FUZZ_EXAMPLES=2000 pytest -m slow tests/test_fuzz_api.py
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ._fuzzing import FULL_EXAMPLES, REDUCED_EXAMPLES, assert_api_answered, full_form, sandbox

IMPORTS = """from fractions import Fraction
from decimal import Decimal
from combatsim.exp.model import Weapon as ExpWeapon
"""
EXP_COMBATANT = 'exp_api.Combatant("a", 20, 500, ExpWeapon("claw", "A", "d6"), 100, 750)'
D100_COMBATANT = "d100_api.Combatant(side={side}, fighting=60, weapon=d100_api.Weapon(30, 2))"
TSS_COMBATANT = 'tss_api.Combatant(skill="14/7/3", action_check="+12/11/5/2", weapon="d4w/d4+1w/d4m")'

#: entry point -> (the call's function and leading arguments, its keyword arguments as source text)
CALLS: dict[str, tuple[str, dict[str, str]]] = {
    "exp.simulate_to_hit": ("exp_api.simulate_to_hit({n}", dict(bonus="100", maximum_roll="800",
                                                                  armour_rating="500")),
    "exp.simulate_attack": ("exp_api.simulate_attack({n}", dict(bonus="150", maximum_roll="850", armour_rating="600",
                                                                  damage='"2d6"', weapon_type='"C"', adjustment="0")),
    "exp.simulate_fight": (f"exp_api.simulate_fight({{n}}, [{EXP_COMBATANT}], [{EXP_COMBATANT}]",
                           dict(unit_limit="100")),
    "d100.simulate_attacks": ("d100_api.simulate_attacks({n}", dict(
        pool="60", specialty="[2]", modifiers='["quick"]', lethality="30", severity="2", armour='"light"')),
    "d100.simulate_fights": (f"d100_api.simulate_fights({{n}}, [{D100_COMBATANT.format(side=0)}, "
                             f"{D100_COMBATANT.format(side=1)}]", dict(passes="2", max_rounds="20")),
    "tss.simulate_attacks": ("tss_api.simulate_attacks({n}", dict(
        skill='"16/8/4"', steps="-1", damage='"d4w/d4+2w/d4-1m"', weapon_quality='"good"', armour='"d6"',
        armour_quality='"ordinary"')),
    "tss.simulate_fights": (f"tss_api.simulate_fights({{n}}, side_a=[{TSS_COMBATANT}], side_b=[{TSS_COMBATANT}]",
                            dict(max_rounds="100")),
}
RUN_ARGUMENTS = dict(seed="1", threads="2", chunk_size="None", backend='"auto"', outcomes="False")

#: Values no field should take quietly, as source text.
HOSTILE = [
    "None", "True", "-1", "0", "10**30", "-(10**30)", "2**63", "2**64", "float('nan')", "float('inf')", "1.5", "1e999",
    "'1e999999999'", "'1e-99999999'", "''", "'\\x1b[31m'", "'a\\r\\nFAKE'", "'\\u202e'", "'\\x00'", "b'abc'", "[]",
    "[1, 2]", "{}", "object()", "iter(int, 1)", "(x for x in iter(int, 1))", "range(10**12)",
    "np.array([1, 2], dtype='timedelta64[s]')", "np.array(['a'])", "np.array([1.5])", "np.float64('nan')", "np.int8(-1)",
    "np.uint64(2**64 - 1)", "np.array([[1]])", "np.bool_(True)", "np.array([], dtype=np.int64)", "complex(1, 1)",
    "Fraction(1, 3)", "Decimal('nan')", "'x' * 10**6", "type", "print", "lambda *a: None", "np.zeros(10**6)",
]
hostile_source = st.one_of(st.sampled_from(HOSTILE), st.integers(-(2**70), 2**70).map(str),
                           st.floats().map(lambda x: f"float('{x!r}')"), st.text(max_size=6).map(repr))
N_VALUES = st.one_of(st.integers(1, 60).map(str), st.sampled_from(["0", "-1", "10**30", "2**62 + 1", "1.5", "None",
                                                                   "'50'", "float('nan')", "np.int64(50)", "True"]))


def call_source(entry: str, n: str = "40", **replace: str) -> str:
    head, keywords = CALLS[entry]
    arguments = {**keywords, **RUN_ARGUMENTS, **replace}
    return IMPORTS + f"result = {head.format(n=n)}, " + ", ".join(f"{k}={v}" for k, v in arguments.items()) + ")"


@st.composite
def hostile_calls(draw) -> str:
    """One entry point with one keyword argument, n, or a run option, replaced by a hostile value."""
    entry = draw(st.sampled_from(sorted(CALLS)))
    fields = [*CALLS[entry][1], *RUN_ARGUMENTS, "n", "progress"]
    field = draw(st.sampled_from(fields))
    if field == "n":
        return call_source(entry, n=draw(N_VALUES))
    return call_source(entry, **{field: draw(hostile_source)})


@pytest.mark.parametrize("entry", sorted(CALLS))
def test_each_valid_call_returns(entry):
    outcome = sandbox.api(call_source(entry))
    assert_api_answered(outcome)
    assert outcome.raised is None, outcome.describe()


@settings(max_examples=REDUCED_EXAMPLES)
@given(code=hostile_calls())
def test_hostile_calls_are_answered(code):
    assert_api_answered(sandbox.api(code))


@full_form
@settings(max_examples=FULL_EXAMPLES)
@given(code=hostile_calls())
def test_hostile_calls_are_answered_full(code):
    assert_api_answered(sandbox.api(code))


# --- issue 29's API calls, as regression examples -------------------------------------------------


@pytest.mark.parametrize("entry", sorted(CALLS))
def test_outcomes_for_1e12_items_are_refused_at_once(entry):
    outcome = sandbox.api(call_source(entry, n="10**12", outcomes="True"))
    assert_api_answered(outcome)
    assert outcome.raised == "ValueError" and "n must" in outcome.message, outcome.describe()


#: (call, the field its error must name)
REFUSED_CALLS = {
    "exp Combatant(name=None)": (IMPORTS + 'result = exp_api.simulate_fight(5, [exp_api.Combatant(None, 20, 500, '
                                 'ExpWeapon("claw", "A", "d6"), 100, 750)], [' + EXP_COMBATANT + "])", "name"),
    "progress='x'": (call_source("exp.simulate_to_hit", n="10**11", progress="'x'"), "progress"),
    "progress='x' (d100 fights)": (call_source("d100.simulate_fights", n="10**11", progress="'x'"), "progress"),
    "specialty=iter(int, 1)": (call_source("d100.simulate_attacks", specialty="iter(int, 1)"), "specialty"),
    "a timedelta64 array": (call_source("exp.simulate_to_hit", n="2",
                                        bonus="np.array([1, 2], dtype='timedelta64[s]')"), "bonus"),
    "severity 1e999999999": (call_source("d100.simulate_attacks", severity="'1e999999999'"), "severity"),
    "severity 1e-99999999": (call_source("d100.simulate_attacks", severity="'1e-99999999'"), "severity"),
    "exp damage ''": (call_source("exp.simulate_attack", damage="''"), "damage"),
    "seed 9007199254740993.0": (call_source("exp.simulate_to_hit", seed="9007199254740993.0"), "seed"),
    "tss armour '-3'": (call_source("tss.simulate_attacks", armour="'-3'"), "armour"),
}


@pytest.mark.parametrize("code, field", list(REFUSED_CALLS.values()), ids=list(REFUSED_CALLS))
def test_issue_29_calls_are_refused_naming_the_field(code, field):
    outcome = sandbox.api(code)
    assert_api_answered(outcome)
    assert outcome.raised is not None, f"accepted: {outcome.describe()}"
    assert field in outcome.message, f"the error does not name {field}: {outcome.describe()}"


# --- the sandbox itself catches what the fuzzers look for -----------------------------------------


def test_the_sandbox_stops_a_hang():
    outcome = sandbox.api("while True:\n    pass", timeout=0.5)
    assert outcome.timed_out and outcome.seconds < 5
    with pytest.raises(AssertionError, match="no answer within"):
        assert_api_answered(outcome, time_bound=0.5)


def test_the_sandbox_measures_memory():
    outcome = sandbox.api("block = np.ones(40 * 2**20)\nresult = block")  # 320 MB
    assert 300 < outcome.peak_mb < 400, outcome.describe()
    with pytest.raises(AssertionError, match="peak"):
        assert_api_answered(outcome)


@pytest.mark.parametrize("code", ["raise RuntimeError('a bug')", "raise ValueError('two\\nlines')",
                                  "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"])
def test_the_sandbox_reports_crashes_and_long_messages(code):
    with pytest.raises(AssertionError):
        assert_api_answered(sandbox.api(code))
