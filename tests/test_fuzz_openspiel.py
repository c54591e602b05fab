"""combatsim.openspiel.load_game fuzzing: each argument replaced by a hostile Python value. Each
call runs in the fuzz sandbox (tests/_fuzzing.py): it returns a game, or raises ValueError or
TypeError with a one-line message, within the time and memory bounds.

The full form: COMBATSIM_FUZZ_EXAMPLES=2000 pytest -m slow tests/test_fuzz_openspiel.py
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspiel")

from ._fuzzing import FULL_EXAMPLES, REDUCED_EXAMPLES, assert_api_answered, full_form, sandbox
from .test_fuzz_api import IMPORTS, hostile_source

#: A valid call, each argument as source text (a one-pass duel: loading builds the chain's start).
ARGUMENTS = {"scenario": '"d100_duel"', "agents": '["Veteran", "Guard"]',
             "overrides": '["options.passes=1", "options.max_rounds=1"]', "method": '"auto"', "max_states": "None"}
AGENT_VALUES = st.sampled_from(['["Nobody"]', '["Veteran", "Veteran"]', '["Veteran", "Guard", "Veteran"]', "[]",
                                '["Veteran;Guard"]', '["Vet,eran"]', "[1]", "[None]", '"Veteran"', "iter(int, 1)"])
OVERRIDE_VALUES = st.sampled_from(['["options.passes=0"]', '["options.passes"]', '["=1"]', '["options.passes=1;2"]',
                                   '["sides[9].name=x"]', '["options.max_rounds=10**9"]', '"options.passes=1"'])


def call_source(**replace: str) -> str:
    arguments = {**ARGUMENTS, **replace}
    return (IMPORTS + "import combatsim.openspiel as co\n"  # the hostile values use Fraction and Decimal
            "result = co.load_game(" + ", ".join(f"{k}={v}" for k, v in arguments.items()) + ")")


@st.composite
def hostile_calls(draw) -> str:
    field = draw(st.sampled_from(sorted(ARGUMENTS)))
    value = draw(st.one_of(hostile_source, AGENT_VALUES if field == "agents" else OVERRIDE_VALUES))
    return call_source(**{field: value})


def test_the_valid_call_returns():
    outcome = sandbox.api(call_source())
    assert_api_answered(outcome)
    assert outcome.raised is None, outcome.describe()


# each child imports pyspiel (about a second): half the reduced examples keep it short
@settings(max_examples=REDUCED_EXAMPLES // 2)
@given(code=hostile_calls())
def test_hostile_calls_are_answered(code):
    assert_api_answered(sandbox.api(code))


@full_form
@settings(max_examples=FULL_EXAMPLES)
@given(code=hostile_calls())
def test_hostile_calls_are_answered_full(code):
    assert_api_answered(sandbox.api(code))
