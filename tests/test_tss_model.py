"""TSS model: the rule text's worked examples, the formulas' edges, validation errors."""

from __future__ import annotations

import numpy as np
import pytest

from combatsim.dice import Dice
from combatsim.rng import dense_die
from combatsim.tss.api import attack_config, simulate_attacks
from combatsim.tss.engine import dealt as damage_dealt
from combatsim.tss.engine import shift_type
from combatsim.tss.model import (
    AMAZING,
    CRITICAL_FAILURE,
    FAILURE,
    GOOD,
    MORTAL,
    NOTHING,
    ORDINARY,
    STUN,
    WOUND,
    ActionCheck,
    Armour,
    DamageTier,
    DamageTrack,
    Score,
    Weapon,
    attack_steps,
    dazed_penalty,
    phases_played,
    quality_grade,
    situation_die,
    situation_die_text,
    two_weapon_steps,
)

ALEX_SKILL = "16/8/4"
ALEX_TRACK = "d4w/d4+2w/d4-1m"


def joint_dice(seed: int, index: int, radices: tuple[int, ...]) -> list[int]:
    """The dice of attack ``index`` in the joint layout (docs/tss.md): one die of prod(radices)
    faces from the dense word, read in mixed radix, least significant first."""
    value = dense_die(seed, index, int(np.prod(radices))) - 1
    dice = []
    for radix in radices:
        value, digit = divmod(value, radix)
        dice.append(digit + 1)
    return dice


# --- worked examples (tss-combat.txt), one test each -------------------------------------------
def test_example_alex_action_check_5_is_the_good_phase():
    check = ActionCheck.parse("+14/13/6/3")
    assert (check.score.ordinary, check.score.good, check.score.amazing, check.marginal) == (13, 6, 3, 14)
    assert check.phase(5) == GOOD
    # Two actions per round: "They choose to play on the Good and Ordinary action".
    assert phases_played(check.phase(5), 2) == (GOOD, ORDINARY)


def test_example_alex_modifiers_sum_to_minus_1_which_is_minus_d4():
    steps = attack_steps(aiming=True, accuracy=-1, attacker_equipment=-2, resistance=1, defence=2)
    assert steps == -1
    assert situation_die(steps) == (-1, 1, 4)
    assert situation_die_text(steps) == "-d4"


def test_example_alex_rolls_1d20_minus_1d4_for_7_a_good_success():
    assert Score.parse(ALEX_SKILL).tier(7) == GOOD


def test_example_alex_rolls_1d20_minus_1d4_for_7_in_every_backend(backend):
    """Find attacks whose d20 - d4 is 7 (words 0 and 1, docs/tss.md) and check the kernel's tier."""
    n = 400
    result = simulate_attacks(n, skill=ALEX_SKILL, steps=-1, damage=ALEX_TRACK, seed=11, backend=backend,
                              outcomes=True)
    sevens = []
    for index in range(n):
        control, situation, _ = joint_dice(11, index, (20, 4, 4))  # d20, -d4, the damage position
        if control - situation == 7:
            sevens.append(index)
    assert sevens
    assert set(result.tier[sevens].tolist()) == {GOOD}


def test_example_alex_pistol_good_success_d4_plus_2_is_5w():
    track = DamageTrack.parse(ALEX_TRACK)
    assert track.good == DamageTier(Dice(1, 4, 2), WOUND)
    assert track.ordinary == DamageTier(Dice(1, 4, 0), WOUND)
    assert track.amazing == DamageTier(Dice(1, 4, -1), MORTAL)
    assert track.good.dice.modifier + 3 == 5  # a d4 roll of 3: "a result total of 5w"
    weapon = Weapon.parse_type(ALEX_TRACK, "En/G")
    assert (weapon.damage_class, weapon.quality) == ("En", quality_grade("good"))


def test_example_thug_ceremetal_soak_1_mortal_2_wound_2_stun():
    # Good weapon against Ordinary armour: 5 wounds become 5 mortal.
    assert shift_type(WOUND, quality_grade("good"), quality_grade("ordinary")) == MORTAL
    assert damage_dealt(5, MORTAL, 4) == (2, 2, 1)  # (stun, wound, mortal)
    # "1 mortal wound ... a +1 penalty to all his actions onwards (Mortal Dazed)".
    assert dazed_penalty(2, 10, 2, 10, 1, 5) == 1


def test_example_thug_ceremetal_soak_in_every_backend(backend):
    """Good successes with a d4 of 3 and an armour d6 of 4 deal 1 mortal, 2 wound, 2 stun."""
    n = 600
    result = simulate_attacks(n, skill=ALEX_SKILL, steps=-1, damage=ALEX_TRACK, weapon_quality="good",
                              armour="d6", armour_quality="ordinary", seed=5, backend=backend, outcomes=True)
    found = 0
    for index in range(n):
        control, situation, damage, armour = joint_dice(5, index, (20, 4, 4, 6))
        if control != 20 and 4 < control - situation <= 8 and damage == 3 and armour == 4:
            found += 1
            assert result.tier[index] == GOOD
            assert (result.stun[index], result.wound[index], result.mortal[index]) == (2, 2, 1)
    assert found


def test_example_dazed_half_the_wounds_and_2_mortal_is_plus_3():
    assert dazed_penalty(0, 10, 5, 10, 2, 5) == 3
    # Resolve-physical negates 1/2/3 by the rate of success, never below 0.
    assert dazed_penalty(0, 10, 5, 10, 2, 5, resolve=1) == 2
    assert dazed_penalty(0, 10, 5, 10, 2, 5, resolve=2) == 1
    assert dazed_penalty(0, 10, 5, 10, 2, 5, resolve=3) == 0
    assert dazed_penalty(0, 10, 0, 10, 1, 5, resolve=3) == 0


# --- Options -----------------------------------------------------------------------------------
def test_aiming_gives_minus_1():
    assert attack_steps(aiming=True) == -1


def test_two_weapons_penalties():
    assert two_weapon_steps("main") == 2
    assert two_weapon_steps("off") == 4
    assert two_weapon_steps("main", ambidexterity=True) == 0
    assert two_weapon_steps("off", ambidexterity=True) == 2
    assert attack_steps(two_weapons="off") == 4
    with pytest.raises(ValueError, match="two_weapons"):
        two_weapon_steps("left")


def test_broad_skill_costs_plus_1():
    assert attack_steps(broad=True) == 1
    assert attack_steps(broad=True, aiming=True, dazed=2) == 2


# --- scores ------------------------------------------------------------------------------------
def test_one_score_is_floor_halves_and_quarters():
    assert Score.parse("16") == Score(16, 8, 4)
    assert Score.parse("15") == Score(15, 7, 3)
    assert Score.parse(3) == Score(3, 1, 0)
    assert Score.parse("0") == Score(0, 0, 0)
    assert str(Score.parse("16/8/4")) == "16/8/4"


def test_score_tiers_at_the_thresholds():
    score = Score(16, 8, 4)
    assert [score.tier(t) for t in (-10, 4, 5, 8, 9, 16, 17)] == [
        AMAZING, AMAZING, GOOD, GOOD, ORDINARY, ORDINARY, FAILURE
    ]


@pytest.mark.parametrize("text", ["4/8/16", "16/4/8", "16/8", "a/b/c", "-1", "16/8/-4", "1001"])
def test_bad_scores_name_the_field(text):
    with pytest.raises(ValueError, match="skill"):
        Score.parse(text, "skill")


def test_score_type_errors():
    with pytest.raises(TypeError, match="skill"):
        Score.parse(1.5, "skill")
    with pytest.raises(TypeError, match="skill"):
        Score.parse(True, "skill")


def test_action_check_phases_never_fail():
    check = ActionCheck.parse("13/6/3")
    assert [check.phase(r) for r in (1, 3, 4, 6, 7, 13, 14, 20)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert ActionCheck.parse("13") == check
    assert str(check) == "+14/13/6/3"


def test_action_check_marginal_must_be_ordinary_plus_1():
    with pytest.raises(ValueError, match="action_check"):
        ActionCheck.parse("+15/13/6/3")


def test_phases_played_stop_at_marginal():
    assert phases_played(0, 4) == (0, 1, 2, 3)
    assert phases_played(3, 2) == (3,)
    assert phases_played(2, 3) == (2, 3)


# --- the Difficulty Scale ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("steps", "text"),
    [(-9, "-d20"), (-5, "-d20"), (-4, "-d12"), (-3, "-d8"), (-2, "-d6"), (-1, "-d4"), (0, "-d0"),
     (1, "+d4"), (2, "+d6"), (3, "+d8"), (4, "+d12"), (5, "+d20"), (6, "+2d20"), (7, "+3d20"),
     (8, "+4d20"), (10, "+6d20"), (24, "+20d20")],
)
def test_difficulty_scale(steps, text):
    assert situation_die_text(steps) == text


def test_steps_beyond_the_limit_are_an_error():
    with pytest.raises(ValueError, match="steps"):
        situation_die(25)
    with pytest.raises(ValueError, match="steps"):
        attack_config(skill=ALEX_SKILL, damage=ALEX_TRACK, steps=25)


# --- damage, armour and the type shift -----------------------------------------------------------
def test_shift_both_ways_and_clamped():
    g = quality_grade
    assert shift_type(WOUND, g("ordinary"), g("good")) == STUN
    assert shift_type(STUN, g("marginal"), g("amazing")) == NOTHING
    assert shift_type(STUN, g("amazing"), g("marginal")) == MORTAL
    assert shift_type(MORTAL, g("amazing"), g("marginal")) == MORTAL
    assert shift_type(STUN, g("amazing"), g("marginal"), one_step=True) == WOUND
    assert shift_type(MORTAL, g("marginal"), g("amazing"), one_step=True) == WOUND
    assert shift_type(WOUND, g("good"), g("good")) == WOUND


def test_secondary_damage_and_soak_edges():
    assert damage_dealt(5, WOUND, 4) == (2, 1, 0)  # secondary from the pre-armour amount
    assert damage_dealt(5, WOUND, 9) == (2, 0, 0)  # soak never below 0 and never touches secondary
    assert damage_dealt(7, MORTAL, 0) == (3, 3, 7)
    assert damage_dealt(1, MORTAL, 0) == (0, 0, 1)
    assert damage_dealt(4, STUN, 1) == (3, 0, 0)  # stun has no secondary damage
    assert damage_dealt(-2, MORTAL, 0) == (0, 0, 0)  # d4-3 can roll below 0: no damage
    assert damage_dealt(6, NOTHING, 0) == (0, 0, 0)
    assert damage_dealt(3, WOUND, -2) == (1, 3, 0)  # an armour roll below 0 soaks nothing


def test_negative_damage_rolls_deal_nothing(backend):
    result = simulate_attacks(300, skill="20/20/20", damage="d4-4w/d4-4w/d4-4m", seed=2, backend=backend,
                              outcomes=True)
    assert not result.counts[5:].any()


def test_no_armour_and_no_die_for_the_class_mean_no_shift_no_soak():
    plain = attack_config(skill=ALEX_SKILL, damage=ALEX_TRACK, weapon_quality="amazing")
    other = attack_config(skill=ALEX_SKILL, damage=ALEX_TRACK, weapon_quality="amazing",
                          armour=Armour.make({"LI": "d6"}, "marginal"), damage_class="En")
    np.testing.assert_array_equal(plain, other)
    shifted = attack_config(skill=ALEX_SKILL, damage=ALEX_TRACK, weapon_quality="amazing",
                            armour=Armour.make({"en": "d6"}, "marginal"))
    assert shifted[7] == 1 and not np.array_equal(plain, shifted)


def test_damage_track_errors_name_the_field():
    for text in ("d4w/d4+2w", "d4x/d4w/d4w", "w/w/w", "d4w/d4w/21d4w", "d4w/d4w/d1001w"):
        with pytest.raises(ValueError, match="damage"):
            DamageTrack.parse(text)
    with pytest.raises(TypeError, match="damage"):
        DamageTrack.parse(4)
    assert DamageTrack.parse("2s/3W/1D6+1M").good == DamageTier(Dice(0, 1, 3), WOUND)


def test_quality_and_armour_errors():
    assert quality_grade("G") == 2 and quality_grade("Marginal") == 0
    with pytest.raises(ValueError, match="weapon_quality"):
        quality_grade("superb", "weapon_quality")
    with pytest.raises(ValueError, match="armour"):
        Armour.make("11d6")
    with pytest.raises(ValueError, match="armour"):
        attack_config(skill=ALEX_SKILL, damage=ALEX_TRACK, armour="x")
    with pytest.raises(ValueError, match="armour_quality"):
        attack_config(skill=ALEX_SKILL, damage=ALEX_TRACK, armour="d6", armour_quality="bad")
    with pytest.raises(ValueError, match="damage type"):
        Weapon.parse_type(ALEX_TRACK, "EnG")


def test_dazed_edges():
    assert dazed_penalty(4, 10, 4, 10, 0, 5) == 0
    assert dazed_penalty(5, 10, 0, 10, 0, 5) == 1  # exactly half
    assert dazed_penalty(5, 11, 0, 10, 0, 5) == 0  # 5 of 11 is less than half
    with pytest.raises(ValueError, match="resolve"):
        dazed_penalty(0, 10, 0, 10, 0, 5, resolve=4)
    with pytest.raises(ValueError, match="stun"):
        dazed_penalty(0, 0, 0, 10, 0, 5)


def test_critical_failure_is_a_control_die_of_20_whatever_the_total(backend):
    n = 300
    result = simulate_attacks(n, skill="40/30/25", steps=-5, damage=ALEX_TRACK, seed=9, backend=backend,
                              outcomes=True)
    controls = np.array([joint_dice(9, i, (20, 20, 4))[0] for i in range(n)])
    np.testing.assert_array_equal(result.tier == CRITICAL_FAILURE, controls == 20)
    assert result.counts[3] == 0  # nothing else fails against 40/30/25
