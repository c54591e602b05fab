"""d100 formulas (combatsim.d100.model) at their edges, one test per rule statement.

The rule text (d100-combat-math.txt) has no worked examples with numbers; each test is named
after the statement it checks and uses hand-computed values.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from combatsim.d100 import model
from combatsim.d100.model import (
    CRITICAL_FAILURE,
    CRITICAL_SUCCESS,
    FAILURE,
    FLESH,
    HARD_SUCCESS,
    INSTANT_DEATH,
    LETHAL,
    SERIOUS,
    SUCCESS,
)


# Fighting score ------------------------------------------------------------------------------
def test_fighting_score_formula():
    # (10 x 4 + 50 + 60 + 70 + 80 + 90) / 9 = 390 / 9 = 43.33 -> 43
    assert model.fighting_score(10, 50, 60, 70, 80, 90) == 43
    assert model.fighting_score(0, 0, 0, 0, 0, 0) == 0
    # 9 x 4 = 36 -> 4 exactly; 8 x 4 + 3 = 35 -> 3 (rounded down)
    assert model.fighting_score(9, 0, 0, 0, 0, 0) == 4
    assert model.fighting_score(8, 3, 0, 0, 0, 0) == 3


# Specialty multiplier ------------------------------------------------------------------------
@pytest.mark.parametrize("rank, expected", [(0, Fraction(1)), (1, Fraction(11, 10)), (3, Fraction(13, 10)),
                                            (5, Fraction(3, 2)), (7, Fraction(3, 2))])
def test_one_specialty_rank_min_1_5(rank, expected):
    assert model.specialty_multiplier([rank]) == expected


def test_no_specialty_is_one():
    assert model.specialty_multiplier([]) == 1


def test_several_specialty_ranks_taper():
    # sorted high to low: 1 + 0.3 + 0.1 x 2 x 0.5 = 1.4
    assert model.specialty_multiplier([2, 3]) == Fraction(14, 10)
    # 1 + 0.3 + 0.3 x 0.5 + 0.1 x 0.25 = 1.475, not a whole number of tenths
    assert model.specialty_multiplier([1, 3, 3]) == Fraction(1475, 1000)
    # capped at 1.5
    assert model.specialty_multiplier([4, 4, 4]) == Fraction(3, 2)


def test_specialty_taper_options():
    assert model.specialty_multiplier([3, 2], taper="highest") == Fraction(13, 10)
    assert model.specialty_multiplier([3, 1], taper="flat") == Fraction(14, 10)
    with pytest.raises(ValueError, match="taper"):
        model.specialty_multiplier([1], taper="linear")


def test_full_skill_rounds_down_once_exactly():
    # 67 x 1.475 = 98.825 -> 98; a float path could land on x.9999 and mis-round
    assert model.full_skill(67, model.specialty_multiplier([1, 3, 3])) == 98
    # 45 x 1.4 = 63 exactly (in floats 45 * 1.4 = 62.99999999999999)
    assert 45 * 1.4 < 63
    assert model.full_skill(45, Fraction(14, 10)) == 63
    assert model.full_skill(60, Fraction(12, 10), -20) == 52


# Attack modifiers -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"quick": True}, -20),
        ({"automatic_fire": True}, 20),
        ({"target_in_cover": True, "ranged": True}, -20),
        ({"target_in_cover": True, "ranged": False}, 0),  # cover: ranged attacks only
        ({"target_defending": True}, -20),
        ({"dual_wield": True}, -20),
        ({"distant": True, "category": "pistol"}, -30),
        ({"distant": True, "category": "thrown"}, -30),
        ({"distant": True, "category": "archery"}, -20),
        ({"distant": True, "category": "carbine"}, -20),
        ({"distant": True, "category": "long_gun"}, -10),
        ({"distant": True, "category": "long_gun", "long_range": True}, 0),
        ({"distant": False, "category": "pistol"}, 0),
        ({"quick": True, "dual_wield": True, "target_defending": True, "target_in_cover": True, "ranged": True}, -80),
    ],
)
def test_attack_modifiers(kwargs, expected):
    assert model.attack_modifiers(**kwargs) == expected


# Tiers ----------------------------------------------------------------------------------------
def test_capped_target_at_95():
    assert model.capped_target(94) == 94
    assert model.capped_target(95) == 95
    assert model.capped_target(96) == 95
    assert model.capped_target(300) == 95


def test_tier_bars_of_60():
    # critical <= 6, hard <= 30, success <= 60; F = 40, critical failure above 100 - 4 = 96
    assert model.tier_bars(60) == (6, 30, 60, 96)
    assert [model.tier(r, 60) for r in (6, 7, 30, 31, 60, 61, 96, 97, 100)] == [
        CRITICAL_SUCCESS, HARD_SUCCESS, HARD_SUCCESS, SUCCESS, SUCCESS, FAILURE, FAILURE,
        CRITICAL_FAILURE, CRITICAL_FAILURE]


def test_tier_critical_failure_rounds_up_the_tenth():
    # capped 55: F = 45, ceil(4.5) = 5, critical failure above 95
    assert model.tier_bars(55)[3] == 95
    # capped 95: F = 5, ceil(0.5) = 1, only a roll of 100
    assert model.tier_bars(95)[3] == 99
    assert model.tier(99, 95) == FAILURE
    assert model.tier(100, 95) == CRITICAL_FAILURE


def test_tier_above_the_cap_uses_full_skill_for_critical_and_hard():
    # full skill 150: critical <= 15, hard <= 75, success <= 95 (capped); 96..99 fail, 100 critical failure
    assert model.tier_bars(150) == (15, 75, 95, 99)
    # full skill 250: hard = floor(125) capped to 95; critical = 25
    assert model.tier_bars(250) == (25, 95, 95, 99)
    assert model.tier(96, 250) == FAILURE


def test_tier_of_targets_zero_and_below():
    for skill in (0, -1, -20, -95):
        assert model.tier_bars(skill) == (0, 0, 0, 90)
        assert model.tier(1, skill) == FAILURE
        assert model.tier(90, skill) == FAILURE
        assert model.tier(91, skill) == CRITICAL_FAILURE


def test_tier_small_targets():
    # full skill 9: critical bar floor(0.9) = 0, hard floor(4.5) = 4; F = 91 -> ceil 9.1 = 10
    assert model.tier_bars(9) == (0, 4, 9, 90)
    assert model.tier(1, 9) == HARD_SUCCESS
    # full skill 10: a roll of 1 is critical
    assert model.tier(1, 10) == CRITICAL_SUCCESS
    assert model.tier_bars(1) == (0, 0, 1, 90)


def test_tier_every_threshold_against_the_definition():
    for skill in range(-30, 260):
        capped = min(95, skill)
        failure_range = 100 - max(0, capped)
        for roll in range(1, 101):
            if roll <= capped and roll <= skill // 10:
                expected = CRITICAL_SUCCESS
            elif roll <= capped and roll <= skill // 2:
                expected = HARD_SUCCESS
            elif roll <= capped:
                expected = SUCCESS
            elif roll > 100 - Fraction(failure_range, 10).__ceil__():
                expected = CRITICAL_FAILURE
            else:
                expected = FAILURE
            assert model.tier(roll, skill) == expected, (skill, roll)


# Armour ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "torso, helmet, expected",
    [
        ("heavy", True, model.ARMOUR_HEAVY),
        ("heavy", False, model.ARMOUR_LIGHT),
        ("light", True, model.ARMOUR_LIGHT),
        ("light", False, model.ARMOUR_LIGHT),
        ("none", True, model.ARMOUR_LIGHT),
        ("none", False, model.ARMOUR_NONE),
    ],
)
def test_armour_class_every_coverage(torso, helmet, expected):
    assert model.armour_class(torso, helmet) == expected


def test_armour_class_rejects_unknown_torso():
    with pytest.raises(ValueError, match="torso"):
        model.armour_class("medium", False)


# Lethality ------------------------------------------------------------------------------------
def test_lethality_multipliers_round_down_once():
    # 30 x 0.5 (cover) x 0.75 (light) x 0.75 (dual) = 8.4375 -> 8; stepwise rounding gives 15, 11, 8
    factor = model.lethality_factor(cover=True, ranged=True, armour=model.ARMOUR_LIGHT, dual_wield=True)
    assert factor == Fraction(9, 32)
    assert model.final_lethality(30, factor) == 8
    # 13 x 0.75 x 0.75 = 7.3125 -> 7; stepwise (9, then 6) gives 6
    assert model.final_lethality(13, model.lethality_factor(armour=model.ARMOUR_LIGHT, dual_wield=True)) == 7
    assert model.final_lethality(31, model.lethality_factor(armour=model.ARMOUR_HEAVY)) == 15


def test_cover_halves_ranged_lethality_only():
    assert model.lethality_factor(cover=True, ranged=False) == 1
    assert model.lethality_factor(cover=True, ranged=True) == Fraction(1, 2)


def test_serious_threshold_caps_at_90():
    assert model.serious_threshold(30, 2) == 60
    assert model.serious_threshold(30, 3) == 90
    assert model.serious_threshold(31, 3) == 90
    assert model.serious_threshold(45, 4) == 90
    assert model.serious_threshold(15, Fraction(3, 2)) == 22  # 22.5 rounds down
    assert model.serious_threshold(0, 5) == 0


def test_wound_severity_thresholds():
    assert model.wound_severity(30, 30, 60, False, False) == LETHAL
    assert model.wound_severity(31, 30, 60, False, False) == SERIOUS
    assert model.wound_severity(60, 30, 60, False, False) == SERIOUS
    assert model.wound_severity(61, 30, 60, False, False) == FLESH


def test_critical_success_plus_lethal_is_instant_death():
    assert model.wound_severity(1, 30, 60, False, True) == INSTANT_DEATH
    assert model.wound_severity(31, 30, 60, False, True) == SERIOUS


def test_nonlethal_weapons_cap_lethal_and_instant_death_at_serious():
    assert model.wound_severity(1, 30, 60, True, True) == SERIOUS
    assert model.wound_severity(30, 30, 60, True, False) == SERIOUS
    assert model.wound_severity(61, 30, 60, True, False) == FLESH
    # lethality above the serious cap: the nonlethal lethal range still counts as serious
    assert model.damage_bars(95, 90, True) == (0, 95)
    assert model.damage_bars(95, 90, False) == (95, 95)


# Escalation -----------------------------------------------------------------------------------
def test_three_deadly_flesh_wounds_become_one_serious():
    state = (0, 0, 0)
    for _ in range(2):
        *state, up, lethal_up = model.record_wound(*state, FLESH, False)
        assert (up, lethal_up) == (0, 0)
    assert model.record_wound(*state, FLESH, False) == (0, 1, 0, 1, 0)


def test_two_serious_wounds_become_one_lethal():
    assert model.record_wound(0, 1, 0, SERIOUS, False) == (0, 0, 1, 0, 1)


def test_escalation_cascades():
    # two deadly flesh and one serious: the third flesh makes a serious, completing a pair
    assert model.record_wound(2, 1, 0, FLESH, False) == (0, 0, 1, 1, 1)


def test_nonlethal_flesh_does_not_count_but_nonlethal_serious_does():
    assert model.record_wound(2, 0, 0, FLESH, True) == (2, 0, 0, 0, 0)
    assert model.record_wound(0, 1, 0, SERIOUS, True) == (0, 0, 1, 0, 1)


def test_escalation_chain_of_six_flesh_wounds_is_lethal():
    state = (0, 0, 0)
    escalations = [0, 0]
    for _ in range(6):
        *state, up, lethal_up = model.record_wound(*state, FLESH, False)
        escalations[0] += up
        escalations[1] += lethal_up
    assert tuple(state) == (0, 0, 1)
    assert escalations == [2, 1]


# Flee, ambush, contests, dual wield -----------------------------------------------------------
def test_flee_target():
    assert model.flee_target(51, 40) == 45  # floor(91 / 2)
    assert model.flee_target(51, 40, 1) == 65
    assert model.flee_target(51, 40, 2) == 85
    assert model.flee_target(51, 40, 3) == 95  # capped
    assert model.flee_target(0, 0) == 0


def test_ambush_targets_average_rounds_down():
    # (2 x 50 + 41 + 40) / 4 = 45.25 -> 45
    assert model.ambush_attacker_target(50, 41, 40) == 45
    # (50 + 41 + 2 x 40) / 4 = 42.75 -> 42
    assert model.ambush_defender_target(50, 41, 40) == 42
    assert model.ambush_attacker_target(50, 41, 40, Fraction(12, 10)) == 54
    assert model.ambush_defender_target(50, 41, 40, Fraction(12, 10)) == 50  # 42 x 1.2 = 50.4


def contest_wins(roll: int, target: int, opposing_roll: int, opposing_target: int) -> bool:
    """Quick contest: does the side rolling ``roll`` against ``target`` beat the other side?

    Each side rolls against its own target; compare tier (critical > hard > success > failure
    > critical failure), then margin (capped target - roll). Ties go to the other side (the
    defender or the blocker), so call this with the ambusher or the disengager first. (The
    engine's contest works on precomputed bars; this is the rule as stated, a second opinion.)
    """
    own_tier = model.tier(roll, target)
    other_tier = model.tier(opposing_roll, opposing_target)
    if own_tier != other_tier:
        return own_tier < other_tier
    return model.capped_target(target) - roll > model.capped_target(opposing_target) - opposing_roll


def test_quick_contest_tier_then_margin_ties_to_defender():
    # tier first: a hard success beats a success whatever the margins
    assert contest_wins(20, 60, 50, 90)
    # same tier (success): the larger margin wins
    assert contest_wins(40, 60, 55, 60)
    assert not contest_wins(55, 60, 40, 60)
    # equal tier and margin: the defender (second side) wins
    assert not contest_wins(40, 60, 40, 60)
    # both fail: margins are negative, the smaller miss wins
    assert contest_wins(62, 60, 70, 60)


def test_dual_wield_requirements():
    assert model.dual_wield_allowed(2, 0, ["melee", "melee"])
    assert not model.dual_wield_allowed(1, 0, ["melee", "melee"])
    assert model.dual_wield_allowed(0, 2, ["pistol", "pistol"])
    assert not model.dual_wield_allowed(2, 0, ["pistol", "pistol"])
    assert not model.dual_wield_allowed(2, 2, ["melee", "pistol"])
    assert not model.dual_wield_allowed(2, 2, ["melee"])


def test_split_attack_value_is_three_uniform_d100s():
    values = np.arange(1_000_000, dtype=np.int64)
    attack, damage, damage2 = values // 10000 + 1, values // 100 % 100 + 1, values % 100 + 1
    assert model.split_attack_value(0) == (1, 1, 1)
    assert model.split_attack_value(999_999) == (100, 100, 100)
    assert model.split_attack_value(123_456) == (13, 35, 57)
    # every (attack, damage, damage2) triple occurs exactly once
    assert np.unique(attack * 10000 + damage * 100 + damage2).size == 1_000_000


def test_fast_path_word_digits_equal_the_value_digits():
    # docs/d100.md: with r1 = 100 w mod 2^32 and r2 = 100 r1 mod 2^32, the digits of
    # v = (w 10^6) >> 32 are (100 w) >> 32, (100 r1) >> 32, (100 r2) >> 32, and the low word of
    # w 10^6 is 100 r2 mod 2^32. Checked on 2 million random words and the edges.
    rng = np.random.default_rng(7)
    w = np.concatenate([rng.integers(0, 2**32, size=2_000_000, dtype=np.uint64),
                        np.array([0, 1, 42949672, 42949673, 2**32 - 1], dtype=np.uint64)])
    mask, hundred, shift = np.uint64(2**32 - 1), np.uint64(100), np.uint64(32)
    v = (w * np.uint64(1_000_000)) >> shift
    r1 = (w * hundred) & mask
    r2 = (r1 * hundred) & mask
    np.testing.assert_array_equal((w * hundred) >> shift, v // np.uint64(10000))
    np.testing.assert_array_equal((r1 * hundred) >> shift, v // hundred % hundred)
    np.testing.assert_array_equal((r2 * hundred) >> shift, v % hundred)
    np.testing.assert_array_equal((r2 * hundred) & mask, (w * np.uint64(1_000_000)) & mask)
    assert not np.any(r1 == mask) and not np.any(r1 % np.uint64(4))
