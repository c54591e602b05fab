"""``combatsim odds tss``: exact odds through the CLI (the enumeration itself is checked against
Monte Carlo and icepool in test_tss_stats.py)."""

from __future__ import annotations

import json
from fractions import Fraction

import icepool

from combatsim.cli import main as cli_main


def test_cli_odds_alex(capsys):
    args = ["odds", "tss", "--skill", "16/8/4", "--steps", "-1", "--damage", "d4w/d4+2w/d4-1m",
            "--weapon-quality", "good", "--armour", "d6", "--armour-quality", "ordinary", "--json"]
    assert cli_main(args) == 0
    record = json.loads(capsys.readouterr().out)
    tiers = {key: Fraction(value) for key, value in record["probabilities"].items() if isinstance(value, str)}
    assert sum(tiers.values()) == 1
    assert tiers["critical_failure"] == Fraction(1, 20)  # a control die of 20, whatever the total
    # Amazing: control 1..19 minus a d4 at or under 4 (icepool, independently)
    total = icepool.d(19) - icepool.d4
    assert tiers["amazing"] == Fraction(19, 20) * total.probability("<=", 4)
    assert set(record["means"]) == {"stun", "wound", "mortal"}
    for name in ("stun", "wound", "mortal"):
        law = {int(v): Fraction(p) for v, p in record["probabilities"][name].items()}
        assert sum(law.values()) == 1
        assert sum(v * p for v, p in law.items()) == Fraction(record["means"][name])


def test_cli_odds_errors(capsys):
    assert cli_main(["odds", "tss", "--skill", "4/8/16", "--damage", "d4w/d4+2w/d4-1m"]) == 2
    assert "skill: score must be non-increasing" in capsys.readouterr().err
    assert cli_main(["odds", "tss", "--skill", "16", "--damage", "d4q/d4w/d4m"]) == 2
    assert "damage" in capsys.readouterr().err


def test_damage_laws_agree_with_monte_carlo():
    import argparse
    import math

    import numpy as np

    from combatsim.tss.api import simulate_attacks
    from combatsim.tss.odds import attack_odds

    spec = dict(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6",
                armour_quality="ordinary")
    _, laws = attack_odds(argparse.Namespace(one_step_shift=False, **spec))
    n = 400_000
    result = simulate_attacks(n, seed=12, outcomes=True, **spec)
    for name in ("stun", "wound", "mortal"):
        observed = np.bincount(getattr(result, name), minlength=max(laws[name]) + 1)
        assert observed.sum() == n
        for value, p in laws[name].items():
            expected = n * float(p)
            assert abs(observed[value] - expected) <= 5 * math.sqrt(expected * (1 - float(p))) + 1, (name, value)
