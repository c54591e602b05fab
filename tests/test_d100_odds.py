"""Exact d100 odds against Monte Carlo and through the CLI."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from combatsim.cli import main as cli_main
from combatsim.d100.api import attack_parameters, simulate_attacks
from combatsim.d100.odds import attack_odds

CASES = [
    dict(pool=60, specialty=[2], modifiers=["quick"], lethality=30, severity=2, armour="light"),
    dict(pool=45, specialty=[4], modifiers=[], lethality=50, severity="1.5", armour="none", nonlethal=True),
    dict(pool=110, specialty=[5, 3], modifiers=["automatic_fire"], lethality=20, severity=3, armour="heavy",
         dual_wield=True),
    dict(pool=5, modifiers=["cover", "distant_pistol"], lethality=90, severity=1, armour="none"),
]


@pytest.mark.parametrize("case", CASES)
def test_odds_agree_with_monte_carlo(case):
    n = 500_000
    odds = attack_odds(attack_parameters(**case))
    assert sum(odds[name] for name in ("critical_success", "hard_success", "success", "failure",
                                       "critical_failure")) == 1
    counts = simulate_attacks(n, seed=17, **case).counts
    for key, expected in odds.items():
        p = float(expected) / (2 if case.get("dual_wield") else 1)  # per damage roll
        trials = n * (2 if case.get("dual_wield") else 1)
        assert abs(counts[key] - trials * p) <= 5 * math.sqrt(trials * p * (1 - p)) + 1, key


def test_odds_by_hand():
    odds = attack_odds(attack_parameters(pool=60, specialty=[2], modifiers=["quick"], lethality=30, severity=2,
                                         armour="light"))
    # full skill floor(60 x 1.2) - 20 = 52; lethality floor(30 x 0.75) = 22; serious min(90, 44) = 44
    assert odds["critical_success"] == Fraction(5, 100) and odds["hard_success"] == Fraction(21, 100)
    assert odds["critical_failure"] == Fraction(5, 100)  # failure range 48: top ceil(4.8) = 5 rolls
    assert odds["lethal"] == Fraction(52, 100) * Fraction(22, 100)
    assert odds["instant_death"] == Fraction(5, 100) * Fraction(22, 100)


def test_cli(capsys):
    assert cli_main(["odds", "d100", "--pool", "60", "--specialty", "2", "--modifier", "quick", "--lethality", "30",
                     "--severity", "2", "--armor", "light", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["probabilities"]
    assert record["lethal"] == "143/1250" and set(record) >= {"success", "flesh", "instant_death"}
    assert cli_main(["odds", "d100", "--pool", "60", "--lethality", "300"]) == 2
    assert "argument --lethality: must be an integer in 0..100, got 300" in capsys.readouterr().err


def test_tiers_match_icepool():
    import icepool

    parameters = attack_parameters(pool=60, specialty=[2], modifiers=["quick"], lethality=30, severity=2)
    odds = attack_odds(parameters)
    # full skill 52: critical <= 5, hard <= 26, success <= 52, critical failure > 95 (icepool, independently)
    d100 = icepool.d(100)
    assert odds["critical_success"] == d100.probability("<=", 5)
    assert odds["hard_success"] == d100.probability("<=", 26) - d100.probability("<=", 5)
    assert odds["success"] == d100.probability("<=", 52) - d100.probability("<=", 26)
    assert odds["critical_failure"] == d100.probability(">", 95)
    damage = icepool.d(100)
    assert odds["lethal"] == d100.probability("<=", 52) * damage.probability("<=", parameters.lethality)
