"""Fuzz cases of issue 29 that the tree still fails, each expected to fail (strict): the day one
passes, its xfail turns into a failure, and the case moves into its module (test_fuzz_api.py,
test_fuzz_cli.py or test_fuzz_scenario.py).
"""

from __future__ import annotations

import pytest

from ._fuzzing import assert_api_answered, sandbox
from .test_fuzz_api import call_source

#: (call, the field its error must name, what it does now)
PENDING_CALLS = {
    "tss armour '-3'": (call_source("tss.simulate_attacks", armour="'-3'"), "armour",
                        "the API accepts a die of -3 (zero soak that still shifts quality); the CLI refuses it"),
}


@pytest.mark.parametrize("code, field", [
    pytest.param(code, field, marks=pytest.mark.xfail(strict=True, reason=reason), id=name)
    for name, (code, field, reason) in PENDING_CALLS.items()
])
def test_pending_calls_are_refused_naming_the_field(code, field):
    outcome = sandbox.api(code)
    assert_api_answered(outcome)
    assert outcome.raised is not None, f"accepted: {outcome.describe()}"
    assert field in outcome.message, f"the error does not name {field}: {outcome.describe()}"
