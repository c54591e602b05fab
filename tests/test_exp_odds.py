"""Exact EXP odds and curves: against icepool, against Monte Carlo, and through the CLI."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import icepool
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from combatsim.cli import main as cli_main
from combatsim.exp import simulate_to_hit
from combatsim.exp.odds import hit_curve, hit_probability
from tests.test_exp_to_hit import exact_hit_probability


@given(
    bonus=st.integers(-1200, 1200),
    maximum_roll=st.integers(1, 2200),
    armour_rating=st.integers(-100, 2100),
    hit_on_equal=st.booleans(),
)
def test_hit_probability_equals_icepool(bonus, maximum_roll, armour_rating, hit_on_equal):
    assert hit_probability(bonus, maximum_roll, armour_rating, hit_on_equal) == exact_hit_probability(
        bonus, maximum_roll, armour_rating, hit_on_equal
    )


@pytest.mark.parametrize(("bonus", "maximum_roll", "armour_rating"), [(184, 843, 700), (87, 801, 575), (0, 625, 624)])
def test_hit_probability_agrees_with_monte_carlo(bonus, maximum_roll, armour_rating):
    n = 1_000_000
    p = float(hit_probability(bonus, maximum_roll, armour_rating))
    hits = simulate_to_hit(n, bonus=bonus, maximum_roll=maximum_roll, armour_rating=armour_rating, seed=8).hits
    assert abs(hits - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1e-9


def test_curve_is_monotone_in_armour_rating():
    curve = hit_curve("110", "760", "400:1000:10")
    values = [point["hit_probability_float"] for point in curve["points"]]
    assert curve["parameter"] == "armour_rating" and len(values) == 61
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert values[-1] == 0.0  # MR 760 cannot beat AR 1000


def test_cli_odds_and_curve(capsys, tmp_path):
    assert cli_main(["odds", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"probabilities": {"hits": "53/100", "misses": "47/100"}}
    plot = tmp_path / "curve.png"
    assert cli_main(["curve", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "400:1000:10",
                     "--json", "--plot", str(plot)]) == 0
    curve = json.loads(capsys.readouterr().out)
    assert curve["points"][18] == {"armour_rating": 580, "hit_probability": "53/100", "hit_probability_float": 0.53}
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli_main(["curve", "exp", "--bonus", "1:2:1", "--max-roll", "760", "--armour-rating", "4:5:1"]) == 2
    assert "sweep one parameter at a time" in capsys.readouterr().err
    assert cli_main(["curve", "exp", "--bonus", "x", "--max-roll", "760", "--armour-rating", "4"]) == 2
    assert "bonus must be an integer or start:stop:step" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("weapon_type", "damage", "damage_adjustment", "adjustment", "critical"),
    [("B", "d8", 3, 0, False), ("E", "2d6-4", 0, -50, False), ("automatic", "3d10", 0, 25, True), ("A", "d4", -2, 0, True)],
)
def test_attack_odds_agree_with_monte_carlo(weapon_type, damage, damage_adjustment, adjustment, critical):
    from combatsim.dice import Dice
    from combatsim.exp.api import simulate_attack
    from combatsim.exp.model import Weapon
    from combatsim.exp.odds import attack_odds

    weapon = Weapon("gun", weapon_type, damage)
    odds = attack_odds(bonus=150, maximum_roll=850, armour_rating=640, dice=Dice.parse(damage),
                       damage_adjustment=damage_adjustment, rolls=weapon.rolls_per_unit, automatic=weapon.automatic,
                       adjustment=adjustment, critical=critical)
    n = 400_000
    result = simulate_attack(n, weapon=weapon, bonus=150, maximum_roll=850, armour_rating=640,
                             damage_adjustment=damage_adjustment, adjustment=adjustment, critical=critical, seed=21,
                             outcomes=True)
    p = float(odds["hits"])
    rolls = n * weapon.rolls_per_unit
    assert abs(result.hits - rolls * p) <= 5 * math.sqrt(rolls * p * (1 - p))
    per_unit = odds["damage_per_unit"]
    mean = sum(float(v) * k for k, v in per_unit.items())
    variance = sum(float(v) * k * k for k, v in per_unit.items()) - mean * mean
    assert abs(result.damage_total - n * mean) <= 5 * math.sqrt(n * variance) + 1e-9
    assert sum(per_unit.values()) == 1
    # the whole per-unit damage distribution, face by face
    observed = np.bincount(result.damage_per_unit, minlength=max(per_unit) + 1)
    for value, probability in per_unit.items():
        expected = n * float(probability)
        assert abs(observed[value] - expected) <= 5 * math.sqrt(expected * (1 - float(probability))) + 1


def test_attack_odds_match_icepool_for_a_single_roll():
    from combatsim.dice import Dice
    from combatsim.exp.odds import attack_odds

    odds = attack_odds(bonus=184, maximum_roll=834, armour_rating=600, dice=Dice.parse("d8"), damage_adjustment=3)
    hit = icepool.d(1000).map(lambda r: min(r + 184, 834) > 600)
    damage = hit.map(lambda h: h).probability(True)
    assert odds["hits"] == damage
    expected = (icepool.d(1000).map(lambda r: min(r + 184, 834) > 600)
                .map(lambda h: 1 if h else 0) * (icepool.d8 + 3))
    assert {k: Fraction(v) for k, v in odds["damage_per_unit"].items()} == {
        outcome: expected.probability(outcome) for outcome in expected.outcomes() if expected.probability(outcome)
    }


@pytest.mark.parametrize(
    ("weapon_type", "damage", "damage_adjustment"),
    [("D", "d6", 0), ("F", "2d4-3", 1), ("automatic", "d6+1", -2), ("automatic", "2d3", 0), ("E", "d10", -4)],
)
def test_attack_odds_per_unit_match_icepool(weapon_type, damage, damage_adjustment):
    """Several to-hit rolls a unit, and automatic bursts (0..3 rounds landing, each its own damage
    roll): the integer-weight convolutions against icepool's own, outcome by outcome."""
    from combatsim.dice import Dice
    from combatsim.exp.model import Weapon
    from combatsim.exp.odds import attack_odds

    weapon, dice = Weapon("gun", weapon_type, damage), Dice.parse(damage)
    odds = attack_odds(bonus=150, maximum_roll=850, armour_rating=640, dice=dice, damage_adjustment=damage_adjustment,
                       rolls=weapon.rolls_per_unit, automatic=weapon.automatic)
    hits = sum(min(r + 150, 850) > 640 for r in range(1, 1001))
    one_round = (dice.count @ icepool.d(dice.sides)).map(lambda total: max(total + dice.modifier + damage_adjustment, 0))
    per_hit = (icepool.d4 - 1) @ one_round if weapon.automatic else one_round
    per_roll = icepool.Die([icepool.Die([0]), per_hit], times=[1000 - hits, hits])
    per_unit = weapon.rolls_per_unit @ per_roll
    assert odds["damage_per_unit"] == {
        outcome: per_unit.probability(outcome) for outcome in per_unit.outcomes() if per_unit.probability(outcome)
    }
