"""``combatsim attack tss`` and the TSS bench cases."""

from __future__ import annotations

import json

import pytest

from combatsim.cli import main
from combatsim.tss.api import simulate_attacks

ARGS = ["attack", "tss", "--skill", "16/8/4", "--steps", "-1", "--damage", "d4w/d4+2w/d4-1m",
        "--weapon-quality", "good", "--armour", "d6", "--armour-quality", "ordinary", "-n", "5000", "--seed", "7"]


def test_cli_json_counts(capsys, backend):
    assert main([*ARGS, "--backend", backend, "--threads", "2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = simulate_attacks(5000, skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good",
                                armour="d6", seed=7, backend=backend)
    names = ("amazing", "good", "ordinary", "failure", "critical_failure", "stun", "wound", "mortal")
    assert [record[name] for name in names] == expected.counts.tolist()
    assert record["attacks"] == 5000 and record["backend"] == backend and record["partial"] is False


def test_cli_text_report(capsys):
    assert main([*ARGS, "--backend", "cython"]) == 0
    out = capsys.readouterr().out
    assert "critical_failure" in out and "mortal" in out


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [("--skill", "4/8/16", "skill"), ("--damage", "d4w", "damage"), ("--weapon-quality", "fine", "weapon_quality"),
     ("--armour", "zz", "armour"), ("--steps", "30", "steps")],
)
def test_cli_errors_name_the_field(capsys, flag, value, field):
    args = list(ARGS)
    args[args.index(flag) + 1] = value
    assert main(args) == 2
    assert field in capsys.readouterr().err


def test_bench_cases_run():
    from combatsim.tss.bench import CASES

    assert [case.kernel for case in CASES] == ["tss.attack", "tss.fight", "tss.resolve_one", "tss.odds_one"]
    for case in CASES:
        case.run("cython", 1000, 1)
        if case.numpy is not None:
            case.numpy(1000)
