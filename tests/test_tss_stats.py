"""TSS statistics: Monte Carlo against exact probabilities (exact enumeration and icepool), 5 sigma, fixed seeds."""

from __future__ import annotations

import math
from fractions import Fraction

import icepool
import pytest

from combatsim.tss.api import Combatant, simulate_attacks, simulate_fights
from combatsim.tss.model import (
    Score,
    Weapon,
)
from combatsim.tss.odds import exact_attack

N = {"python": 4_000, "numba": 300_000, "cython": 300_000}


def assert_within_5_sigma(observed: int, n: int, mean: Fraction, variance: Fraction, label: str) -> None:
    expected = n * mean
    sigma = math.sqrt(n * variance)
    assert abs(observed - expected) <= 5 * sigma + 1e-9, f"{label}: {observed} vs {float(expected):.1f} ± {sigma:.1f}"


ATTACKS = [
    # Alex's pistol against the thug's Ceremetal (the fast one-block layout).
    dict(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6",
         armour_quality="ordinary", one_step=False),
    # Many words: +3d20 situation, several damage dice, armour d4+1 of better quality, one-step option.
    dict(skill="20/10/5", steps=7, damage="2d6s/1d8+1w/3d4m", weapon_quality="marginal", armour="d4+1",
         armour_quality="amazing", one_step=True),
    # No armour, a bonus of -d20, damage that can roll 0.
    dict(skill="9", steps=-6, damage="d4-1m/d6w/d8s", weapon_quality="ordinary", armour=None,
         armour_quality="ordinary", one_step=False),
]


@pytest.mark.parametrize("case", range(len(ATTACKS)))
def test_attack_counts_match_exact_probabilities(backend, case):
    spec = ATTACKS[case]
    n = N[backend]
    tiers, moments = exact_attack(**spec)
    result = simulate_attacks(
        n, skill=spec["skill"], steps=spec["steps"], damage=spec["damage"], weapon_quality=spec["weapon_quality"],
        armour=spec["armour"], armour_quality=spec["armour_quality"], one_step_shift=spec["one_step"],
        seed=1000 + case, backend=backend,
    )
    for k, p in enumerate(tiers):
        assert_within_5_sigma(int(result.counts[k]), n, p, p * (1 - p), f"tier {k}")
    for k, (mean, variance) in enumerate(moments):
        assert_within_5_sigma(int(result.counts[5 + k]), n, mean, variance, ("stun", "wound", "mortal")[k])


def test_alex_tiers_match_icepool():
    """Independent of the enumeration above: d20 - d4 against 16/8/4 with icepool."""
    score = Score(16, 8, 4)
    die = icepool.map(lambda control, situation: 4 if control == 20 else score.tier(control - situation),
                      icepool.d20, icepool.d4)
    exact = [Fraction(die.quantity(k), die.denominator()) for k in range(5)]
    assert exact == exact_attack(**ATTACKS[0])[0]
    n = N["cython"]
    result = simulate_attacks(n, skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", seed=4242, backend="cython")
    for k, p in enumerate(exact):
        assert_within_5_sigma(int(result.counts[k]), n, p, p * (1 - p), f"tier {k}")


def test_one_hit_duel_matches_the_exact_win_rates(backend):
    """1 v 1, both always in the Amazing phase (action check 20/20/20), one action, any hit knocks
    out (1 stun of a stun track of 1): who goes first is the tie-break die, a fair coin. Per round
    with hit chances h_a, h_b: a wins with (h_a + (1 - h_b) h_a) / 2, b with ((1 - h_a) h_b + h_b) / 2."""
    weapon = Weapon.make("1s/1s/1s")
    a = Combatant(skill="10", action_check="20/20/20", weapon=weapon, durability=(1, 5, 5))
    b = Combatant(skill="6", action_check="20/20/20", weapon=weapon, durability=(1, 5, 5))
    h_a, h_b = Fraction(10, 20), Fraction(6, 20)
    win_a = (h_a + (1 - h_b) * h_a) / 2
    win_b = ((1 - h_a) * h_b + h_b) / 2
    go_on = (1 - h_a) * (1 - h_b)
    rounds_limit = 4
    p_a = win_a * (1 - go_on**rounds_limit) / (1 - go_on)
    p_b = win_b * (1 - go_on**rounds_limit) / (1 - go_on)
    p_draw = go_on**rounds_limit
    ends = {r: (1 - go_on) * go_on ** (r - 1) for r in range(1, rounds_limit)}
    ends[rounds_limit] = go_on ** (rounds_limit - 1)
    mean_rounds = sum(r * p for r, p in ends.items())
    var_rounds = sum(r * r * p for r, p in ends.items()) - mean_rounds**2
    n = N[backend] // 3
    result = simulate_fights(n, side_a=[a], side_b=[b], max_rounds=rounds_limit, seed=31, backend=backend)
    for k, p in enumerate((p_a, p_b, p_draw)):
        assert_within_5_sigma(int(result.counts[k]), n, p, p * (1 - p), ("a", "b", "draw")[k])
    assert_within_5_sigma(int(result.counts[3]), n, mean_rounds, var_rounds, "rounds")
    assert result.counts[5] == result.counts[0] + result.counts[1]  # one stun per decisive hit
