"""``combatsim odds tss``: exact odds through the CLI (the enumeration itself is checked against
Monte Carlo and icepool in test_tss_stats.py)."""

from __future__ import annotations

import json
from fractions import Fraction

import icepool
import pytest

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


@pytest.mark.parametrize(
    ("skill", "steps", "damage", "weapon_quality", "armour", "armour_quality", "one_step"),
    [("16/8/4", -1, "d4w/d4+2w/d4-1m", "good", "d6", "ordinary", False),
     ("20/10/5", 9, "2d6s/1d8+1w/3d4m", "marginal", "2d4-2", "amazing", True),
     ("9", -6, "d4-1m/d6w/d8s", "ordinary", None, "ordinary", False),
     ("14/7/3", 3, "d6+2s/2d4w/d6m", "amazing", "d3+1", "marginal", False)],
)
def test_exact_attack_matches_every_roll(skill, steps, damage, weapon_quality, armour, armour_quality, one_step):
    """Every control, situation, damage and armour face enumerated together, the way the rule
    reads, against exact_attack's per-tier pairing, outcome by outcome."""
    from combatsim.dice import Dice
    from combatsim.tss.engine import dealt as damage_dealt
    from combatsim.tss.engine import shift_type
    from combatsim.tss.model import CRITICAL_FAILURE, DamageTrack, Score, quality_grade, situation_die
    from combatsim.tss.odds import exact_attack

    score, track = Score.parse(skill), DamageTrack.parse(damage)
    sign, count, sides = situation_die(steps)
    soak = Dice.parse(armour).distribution() if armour else {0: Fraction(1)}
    tiers = [Fraction(0)] * 5
    laws: list[dict[int, Fraction]] = [{}, {}, {}]
    for control in range(1, 21):
        for value, p_situation in Dice(count, sides).distribution().items():
            tier = CRITICAL_FAILURE if control == 20 else score.tier(control + sign * value)
            tiers[tier] += p_situation / 20
            if tier > 2:
                continue
            damage_type = track.tier(tier).type
            if armour:
                damage_type = shift_type(damage_type, quality_grade(weapon_quality), quality_grade(armour_quality),
                                         one_step)
            for amount, p_amount in track.tier(tier).dice.distribution().items():
                for roll, p_soak in soak.items():
                    for k, dealt in enumerate(damage_dealt(amount, damage_type, roll)):
                        laws[k][dealt] = laws[k].get(dealt, Fraction(0)) + p_situation / 20 * p_amount * p_soak
    for law in laws:
        law[0] = law.get(0, Fraction(0)) + 1 - sum(law.values())
    got: list[dict[int, Fraction]] = [{}, {}, {}]
    got_tiers, moments = exact_attack(skill, steps, damage, weapon_quality, armour, armour_quality, one_step, got)
    assert got_tiers == tiers
    for k in range(3):
        assert {v: p for v, p in got[k].items() if p} == {v: p for v, p in laws[k].items() if p}
        mean = sum(v * p for v, p in laws[k].items())
        assert moments[k] == (mean, sum(v * v * p for v, p in laws[k].items()) - mean * mean)
