"""Python API fuzzing of the newer surfaces: the environments' constructors and steps, fight
curves, fight odds and fights played by policies; one argument at a time replaced by a hostile
Python value, as tests/test_fuzz_api.py does for the simulate_* calls.

CI runs the reduced form (REDUCED_EXAMPLES examples a test). The full form:

    COMBATSIM_FUZZ_EXAMPLES=2000 pytest -m slow tests/test_fuzz_surfaces.py
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ._fuzzing import FULL_EXAMPLES, REDUCED_EXAMPLES, assert_api_answered, full_form, sandbox
from .test_fuzz_api import N_VALUES, hostile_source

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

IMPORTS = """from fractions import Fraction
from decimal import Decimal
from combatsim.scenario import load, resolve
from combatsim.fight_odds import fight_odds
from combatsim.fight_odds.curve import fight_curve
from combatsim.rl.fight_env import FightEnv
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.rl.fight_parallel import parallel_env
from combatsim.fights import simulate_scenario
def scenario(name):
    path, label = resolve(name)
    return load(path, label=label)
def first_legal(obs, masks):
    return np.argmax(masks, axis=1)
"""
#: entry point -> (the call's head, its keyword arguments as source text, the lines after the call)
CALLS: dict[str, tuple[str, dict[str, str], str]] = {
    "FightEnv": ("FightEnv(", dict(scenario='"d100_duel"', agent='"Veteran"', backend='"auto"',
                                   render_mode='"ansi"'), "env.reset(seed=1)\nenv.step(0)\nenv.render()"),
    "FightEnv.step": ("FightEnv(", dict(scenario='"d100_duel"', agent='"Guard"'),
                      "env.reset(seed=1)\nenv.step({action})"),
    "FightVectorEnv": ("FightVectorEnv(", dict(num_envs="3", scenario='"exp_bob_too"', agent='"Bob Too"',
                                               backend='"auto"', autoreset_mode='"SameStep"'),
                       "env.reset(seed=1)\nenv.step(np.zeros(env.num_envs, dtype=np.int64))"),
    "FightVectorEnv.step": ("FightVectorEnv(", dict(num_envs="3", scenario='"d100_duel"', agent='"Veteran"'),
                            "env.reset(seed=1)\nenv.step({action})"),
    "parallel_env": ("parallel_env(", dict(scenario='"tss_alex_vs_thug"', backend='"auto"', render_mode="None"),
                     "env.reset(seed=1)\nenv.step({a: 0 for a in env.agents})"),
    "parallel_env.step": ("parallel_env(", dict(scenario='"d100_duel"'), "env.reset(seed=1)\nenv.step({action})"),
    "fight_curve": ("fight_curve(", dict(scenario='scenario("exp_bob_too")',
                                         vary='"sides[0].members[0].hit_points=10:12:1"', max_states="10_000_000",
                                         n="50", seed="0"), ""),
    "fight_odds": ("fight_odds(", dict(scenario='scenario("exp_bob_too")', max_states="10_000_000",
                                       method='"auto"'), ""),
    "simulate_scenario": ("simulate_scenario(", dict(scenario='"d100_duel"', n="20", seed="1",
                                                     policies='{"Guard": first_legal}', backend='"auto"'), "result = env.wins"),
}
#: The positional arguments of calls whose first ones are positional.
POSITIONAL = {"fight_curve": ("scenario", "vary"), "fight_odds": ("scenario",), "simulate_scenario": ("scenario", "n")}
ACTION_HOSTILE = ["None", "-1", "99", "1.0", "'0'", "[0]", "np.array([0, 0])", "np.ma.masked_array([0, 0, 0], mask=True)",
                  "np.zeros(3)", "np.zeros((3, 1), dtype=np.int64)", "{'Veteran': 0}", "{'Veteran': 0, 'Guard': -1}",
                  "np.int8(-1)", "True", "object()", "{}", "{'x': 0}"]


#: A valid action of each .step entry.
VALID_ACTIONS = {"FightEnv.step": "0", "FightVectorEnv.step": "np.zeros(3, dtype=np.int64)",
                 "parallel_env.step": "{'Veteran': 0, 'Guard': 0}"}


def call_source(entry: str, action: str | None = None, **replace: str) -> str:
    action = VALID_ACTIONS.get(entry, "0") if action is None else action
    head, keywords, after = CALLS[entry]
    arguments = {**keywords, **replace}
    positional = POSITIONAL.get(entry, ())
    parts = [arguments.pop(name) for name in positional] + [f"{k}={v}" for k, v in arguments.items()]
    body = after.replace("{action}", action)
    return IMPORTS + f"env = result = {head}{', '.join(parts)})\n" + body


@st.composite
def hostile_calls(draw) -> str:
    entry = draw(st.sampled_from(sorted(CALLS)))
    if entry.endswith(".step"):
        return call_source(entry, action=draw(st.one_of(st.sampled_from(ACTION_HOSTILE), hostile_source)))
    field = draw(st.sampled_from(sorted(CALLS[entry][1])))
    # counts of work: hostile, or valid and small (a valid large count is a long run, not a hang)
    return call_source(entry, **{field: draw(N_VALUES if field in ("n", "num_envs") else hostile_source)})


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
