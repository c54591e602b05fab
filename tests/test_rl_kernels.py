"""RL step kernels: worked examples, differential reference vs Numba, statistics, validation."""

from __future__ import annotations

import importlib
import inspect
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("gymnasium")

from combatsim.rl import d100_reference, exp_reference, tss_reference
from combatsim.rl.envs import Buffers
from combatsim.rl.rulesets import RULESETS, d100_params, exp_params, specialty_multiplier, tss_params

REFERENCES = {"exp": exp_reference, "d100": d100_reference, "tss": tss_reference}
MARKER = "# ---- shared body"


def numba_module(ruleset: str):
    return importlib.import_module(f"combatsim.kernels.rl.{ruleset}_nb")


def cython_module(ruleset: str):
    return importlib.import_module(f"combatsim.kernels.rl.{ruleset}_cy")


def test_cython_twins_are_generated_from_the_reference_body():
    from pathlib import Path

    from combatsim.rl._cython_twin import generate

    kernels = Path(importlib.import_module("combatsim.kernels.rl").__file__).parent
    for ruleset in REFERENCES:
        assert (kernels / f"{ruleset}_cy.pyx").read_text() == generate(ruleset), "run python -m combatsim.rl._cython_twin"


@pytest.mark.parametrize("ruleset", list(REFERENCES))
def test_numba_twin_has_the_reference_body(ruleset):
    reference = inspect.getsource(REFERENCES[ruleset])
    twin = inspect.getsource(numba_module(ruleset))
    assert reference[reference.index(MARKER):].replace(f"kernels/rl/{ruleset}_nb.py", "") == twin[twin.index(MARKER):].replace(
        f"kernels/rl/{ruleset}_nb.py", ""
    )


class Dice:
    """Replaces the reference's stream_die with scripted rolls (the worked examples fix the dice)."""

    def __init__(self, monkeypatch, module, rolls):
        self.rolls = list(rolls)
        monkeypatch.setattr(module, "stream_die", self)

    def __call__(self, rng, sides, threshold):
        value = self.rolls.pop(0)
        assert 1 <= value <= int(sides), (value, int(sides))
        return value


def _exp_state(params):
    b = Buffers(RULESETS["exp"], 1)
    exp_reference.exp_reset(params, b.seeds, b.state, np.ones(1, np.uint8), b.obs, b.mask)
    return b


NOMAD = {
    "hit_points": 43,
    "armour_rating": 575,
    "weapons": [
        {"bonus": 184, "maximum_roll": 834, "damage_adjustment": 3, "damage": "d8", "type": "B"},  # harpoon
        {"bonus": 87, "maximum_roll": 801, "damage_adjustment": 5, "damage": "d4", "type": "A"},  # icepick (BNP)
        {"bonus": 234, "maximum_roll": 909, "damage_adjustment": 0, "damage": "3d10", "type": "C", "ammunition": 6},
    ],
}


def test_exp_bonus_proficient_harpoon(monkeypatch):
    """Roll 600 + BP 184 = 784: a hit on AR 700; damage 7 + DA 3 = 10."""
    params = exp_params(NOMAD, dict(NOMAD, armour_rating=700))
    b = _exp_state(params)
    Dice(monkeypatch, exp_reference, [600, 7])
    assert exp_reference._fire(params, b.state, 0, 0, None, 0) == 10
    Dice(monkeypatch, exp_reference, [516])  # 516 + 184 = 700: not higher than AR 700
    assert exp_reference._fire(params, b.state, 0, 0, None, 0) == 0


def test_exp_bonus_non_proficient_icepick(monkeypatch):
    """Natural 500 + BNP 87 = 587, just greater than AR 575."""
    params = exp_params(NOMAD, NOMAD)
    b = _exp_state(params)
    b.state[0, exp_reference.S_SIDE + exp_reference.S_WEAPON] = 1
    Dice(monkeypatch, exp_reference, [500, 2])
    assert exp_reference._fire(params, b.state, 0, 0, None, 0) == 2 + 5
    assert exp_reference._hit_chance(params, 0, 1) == 1000 - (575 - 87)


def test_exp_maximum_roll_pistol(monkeypatch):
    """852 + 234 = 1086 is capped at MR 909: a hit on AR 900, a miss on AR 909 (hit on equal: a hit)."""
    for armour, hit_on_equal, damage in ((900, False, 21), (909, False, 0), (909, True, 21)):
        params = exp_params(NOMAD, dict(NOMAD, armour_rating=armour), hit_on_equal=hit_on_equal)
        b = _exp_state(params)
        b.state[0, exp_reference.S_SIDE + exp_reference.S_WEAPON] = 2
        Dice(monkeypatch, exp_reference, [852, 5, 9, 7])
        assert exp_reference._fire(params, b.state, 0, 0, None, 0) == damage
        assert b.state[0, exp_reference.S_SIDE + exp_reference.S_AMMO + 2] == 5  # every roll spends a round


def test_exp_fully_automatic_bursts(monkeypatch):
    """5 to-hit rolls of 3 rounds each; a hit lands d4 - 1 rounds, each rolling damage; a weapon
    with ammunition for 2 bursts makes 2 rolls."""
    gun = {"bonus": 0, "maximum_roll": 1000, "damage": "d6", "type": "automatic", "ammunition": 6}
    params = exp_params({"weapons": [gun]}, {"armour_rating": 500})
    b = _exp_state(params)
    Dice(monkeypatch, exp_reference, [900, 4, 1, 2, 3, 100])  # hit, 3 rounds (1+2+3), then a miss
    assert exp_reference._fire(params, b.state, 0, 0, None, 0) == 6
    assert b.state[0, exp_reference.S_SIDE + exp_reference.S_AMMO] == 0
    assert not exp_reference._legal(params, b.state, 0, 0, exp_reference.A_FIRE)
    assert exp_reference._legal(params, b.state, 0, 0, exp_reference.A_RELOAD)


def test_exp_damage_never_below_zero(monkeypatch):
    params = exp_params({"weapons": [{"damage": "d4-3", "damage_adjustment": -2, "type": "A"}]}, {"armour_rating": 0})
    b = _exp_state(params)
    Dice(monkeypatch, exp_reference, [999, 1])
    assert exp_reference._fire(params, b.state, 0, 0, None, 0) == 0


@pytest.mark.parametrize(
    ("full", "roll", "tier"),
    [
        (60, 6, 4), (60, 7, 3), (60, 30, 3), (60, 31, 2), (60, 60, 2), (60, 61, 1), (60, 96, 1), (60, 97, 0),
        (120, 12, 4), (120, 60, 3), (120, 95, 2), (120, 96, 1), (120, 99, 1), (120, 100, 0),
        (-10, 1, 1), (-10, 90, 1), (-10, 91, 0), (0, 1, 1), (5, 1, 3), (5, 3, 2), (9, 4, 3), (10, 1, 4),
    ],
)
def test_d100_roll_result_tiers(full, roll, tier):
    """Critical <= floor(full/10), hard <= floor(full/2), both <= capped = min(95, full);
    critical failure above 100 - ceil(F/10), F = 100 - max(0, capped)."""
    assert d100_reference.tier(roll, full) == tier
    assert numba_module("d100").tier(roll, full) == tier


def test_d100_tiers_exhaustive_against_the_rule_text():
    for full in range(-30, 200):
        capped = min(95, full)
        failure_range = 100 - max(0, capped)
        for roll in range(1, 101):
            if roll <= capped and roll <= Fraction(full, 10):
                expected = 4
            elif roll <= capped and roll <= Fraction(full, 2):
                expected = 3
            elif roll <= capped:
                expected = 2
            elif roll > 100 - -(-failure_range // 10):
                expected = 0
            else:
                expected = 1
            assert d100_reference.tier(roll, full) == expected, (full, roll)


def test_d100_wound_severity_and_nonlethal_cap():
    assert [d100_reference.wound(r, 10, 30, 0) for r in (1, 10, 11, 30, 31)] == [3, 3, 2, 2, 1]
    assert [d100_reference.wound(r, 10, 30, 1) for r in (1, 10, 11, 30, 31)] == [2, 2, 2, 2, 0]


def test_d100_lethality_multiplies_factors_and_rounds_down_once():
    """20 x 0.75 (light armour) x 0.75 (dual wield) = 11.25 -> 11 (not floor(floor(15) x 0.75) = 11 by luck:
    use 30: 30 x 0.75 x 0.75 = 16.875 -> 16, while rounding each step gives 22 -> 16; and 7 x 0.5 x 0.75 = 2.625 -> 2
    while rounding each step gives 3 -> 2). Serious threshold = min(90, floor(lethality x severity))."""
    layout = d100_reference
    params = d100_params({"weapon_lethality": 30, "weapon_severity": "2.5", "ranged": True}, {"armour": "light"})
    assert params[layout.P_LETHALITY : layout.P_LETHALITY + 4].tolist() == [22, 16, 11, 8]
    assert params[layout.P_SERIOUS : layout.P_SERIOUS + 4].tolist() == [55, 40, 27, 20]
    heavy = d100_params({"weapon_lethality": 45, "weapon_severity": 3}, {"armour": "heavy"})
    assert heavy[layout.P_LETHALITY] == 22 and heavy[layout.P_SERIOUS] == 66
    assert d100_params({"weapon_lethality": 50, "weapon_severity": 3}, {"armour": "none"})[layout.P_SERIOUS] == 90


def test_d100_specialty_multiplier():
    assert specialty_multiplier([3]) == Fraction(13, 10)
    assert specialty_multiplier([2, 4]) == Fraction(14, 10) + Fraction(1, 10)
    assert specialty_multiplier([9]) == Fraction(3, 2)
    assert specialty_multiplier([2, 3, 2]) == Fraction(13, 10) + Fraction(1, 10) + Fraction(1, 20)
    assert specialty_multiplier([4, 2, 2]) == Fraction(3, 2)  # 1.55, capped
    assert d100_params({"attack_pool": 45, "specialty_ranks": [3]})[d100_reference.P_SKILL] == 58  # floor(58.5)


def test_d100_escalation_cascades(monkeypatch):
    """Three deadly flesh wounds become a serious one, which completes a serious pair: lethal."""
    layout = d100_reference
    params = d100_params({"weapon_lethality": 0, "weapon_severity": 0, "dual_wield_allowed": True})
    b = Buffers(RULESETS["d100"], 1)
    layout.d100_reset(params, b.seeds, b.state, np.ones(1, np.uint8), b.obs, b.mask)
    d = layout.S_SIDE + layout.SIDE_STATE
    b.state[0, d + layout.S_SERIOUS] = 1
    b.state[0, d + layout.S_FLESH] = 1
    b.state[0, layout.S_SIDE + layout.S_DUAL] = 1
    Dice(monkeypatch, layout, [5, 99, 99])  # dual wield: a success, two flesh wounds
    assert layout._attack(params, b.state, 0, 0, 0, 0, None, 0) == 2
    assert (b.state[0, d + layout.S_FLESH], b.state[0, d + layout.S_SERIOUS], b.state[0, d + layout.S_LETHAL]) == (0, 0, 1)


def test_d100_modifiers_stack(monkeypatch):
    """Quick attack, Defend, dual wield and cover (ranged) are -20 each: skill 95 -> 15."""
    layout = d100_reference
    params = d100_params({"skill": 95, "ranged": True, "dual_wield_allowed": True})
    b = Buffers(RULESETS["d100"], 1)
    layout.d100_reset(params, b.seeds, b.state, np.ones(1, np.uint8), b.obs, b.mask)
    b.state[0, layout.S_SIDE + layout.S_DUAL] = 1
    b.state[0, layout.S_SIDE + layout.SIDE_STATE + layout.S_COVER] = 1
    Dice(monkeypatch, layout, [16])
    assert layout._attack(params, b.state, 0, 0, 1, 1, None, 0) == 0  # 16 > 15: failure
    Dice(monkeypatch, layout, [15, 100, 100])
    assert layout._attack(params, b.state, 0, 0, 1, 1, None, 0) == 2


def test_tss_example_alex_pistol_against_the_thug(monkeypatch):
    """Alex, Pistol 16/8/4, steps -1 (-d4): 1d20-1d4 = 7, a Good success; d4+2 = 5 wounds; a Good
    weapon against Ordinary Cerametal (d6) shifts to 5 mortal; armour roll 4: 1 mortal, 2 wound, 2 stun."""
    layout = tss_reference
    alex = {"skill": "16/8/4", "situation_steps": -1, "damage_track": "d4w/d4+2w/d4-1m", "weapon_grade": "good"}
    thug = {"armour_die": 6, "armour_grade": "ordinary", "durability": "10/10/5"}
    params = tss_params(alex, thug)
    b = Buffers(RULESETS["tss"], 1)
    b.state[0, layout.S_EPISODE] = 0
    Dice(monkeypatch, layout, [10, 10, 1])  # the first round's action checks and tie die
    layout.tss_reset(params, b.seeds, b.state, np.ones(1, np.uint8), b.obs, b.mask)
    Dice(monkeypatch, layout, [9, 2, 3, 4])  # control 9, situation -2: 7; damage d4 = 3 (+2); armour 4
    assert layout._attack(params, b.state, 0, 0, 0, None, 0) == 1 + 2 + 2
    d = layout.S_SIDE + layout.SIDE_STATE
    assert b.state[0, d : d + 3].tolist() == [2, 2, 1]  # stun, wound, mortal
    assert layout.dazed(params, b.state, 0, 1) == 1  # one mortal point: +1 to all actions


def test_tss_example_action_check_alex():
    """Action check +14/13/6/3, roll 5: between Good 6 and Amazing 3, so the Good phase."""
    layout = tss_reference
    params = tss_params({"action_check": "+14/13/6/3"}, {})
    b = Buffers(RULESETS["tss"], 1)
    for roll, phase in ((3, 0), (4, 1), (5, 1), (6, 1), (7, 2), (13, 2), (14, 3), (20, 3)):
        rolls = [roll, 10, 1]

        def die(rng, sides, threshold, rolls=rolls):
            return rolls.pop(0)

        original = layout.stream_die
        layout.stream_die = die
        try:
            layout._new_round(params, b.state, 0, None, 0)
        finally:
            layout.stream_die = original
        assert b.state[0, layout.S_SIDE + layout.S_FIRST_PHASE] == phase


def test_tss_two_weapon_penalties_and_critical_failure(monkeypatch):
    layout = tss_reference
    params = tss_params({"skill": "20/10/5"}, {"armour_die": 0})
    b = Buffers(RULESETS["tss"], 1)
    Dice(monkeypatch, layout, [10, 10, 1])
    layout.tss_reset(params, b.seeds, b.state, np.ones(1, np.uint8), b.obs, b.mask)
    assert layout.attack_tier(20, 1, 20, 10, 5) == layout.TIER_FAILURE  # control 20 fails whatever the total
    # Two-weapon attack: main +2 steps (+d6), offhand +4 (+d12); no armour: no soak, no shift.
    Dice(monkeypatch, layout, [3, 1, 2, 3, 12, 3])
    b.state[0, layout.S_SIDE + layout.S_FIRST_PHASE] = 0
    # Main: control 3 + d6 1 = 4, Amazing (<= 5): d4 2 - 1 = 1 mortal, no secondary. Offhand: control 3 +
    # d12 12 = 15, Ordinary: d4 3 = 3 wounds and 1 stun secondary.
    assert layout._act(params, b.state, 0, 0, layout.A_TWO_WEAPON_ATTACK, None, 0) == 1 + 3 + 1
    d = layout.S_SIDE + layout.SIDE_STATE
    assert b.state[0, d : d + 3].tolist() == [1, 3, 1]
    assert b.state[0, layout.S_SIDE + layout.S_ACTIONS_LEFT] == 1  # one action for both attacks


@pytest.mark.parametrize(
    ("steps", "dice"),
    [(-7, (-1, 20)), (-5, (-1, 20)), (-4, (-1, 12)), (-3, (-1, 8)), (-2, (-1, 6)), (-1, (-1, 4)), (0, (0, 0)),
     (1, (1, 4)), (2, (1, 6)), (3, (1, 8)), (4, (1, 12)), (5, (1, 20)), (6, (2, 20)), (7, (3, 20)), (9, (5, 20))],
)
def test_tss_difficulty_scale(monkeypatch, steps, dice):
    count, sides = dice
    seen = []

    def die(rng, s, threshold):
        seen.append(int(s))
        return 1

    monkeypatch.setattr(tss_reference, "stream_die", die)
    assert tss_reference.situation_roll(steps, None, 0) == count
    assert seen == [sides] * abs(count)


# ---- differential: reference vs Numba, step by step ----
EXP_DAMAGE = ["d4", "2d6", "3d10", "d8-2", "5", "d1000"]


def _exp_personas(damage):
    weapon = st.fixed_dictionaries({
        "bonus": st.integers(-100, 400), "maximum_roll": st.integers(300, 1100),
        "damage_adjustment": st.integers(-3, 6), "damage": st.sampled_from(damage),
        "type": st.sampled_from(["A", "B", "C", "D", "E", "F", "automatic"]),
        "ammunition": st.sampled_from([0, 3, 7, 30]),
    })
    return st.fixed_dictionaries({
        "hit_points": st.integers(1, 60), "armour_rating": st.integers(0, 950),
        "weapons": st.lists(weapon, min_size=1, max_size=3),
    }).map(lambda p: {**p, "weapons": [w if w["type"] != "automatic" or w["ammunition"] >= 3 else {**w, "ammunition": 30}
                                       for w in p["weapons"]]})


exp_persona = _exp_personas(EXP_DAMAGE)
d100_persona = st.fixed_dictionaries({
    "skill": st.integers(-20, 140), "ranged": st.booleans(), "nonlethal": st.booleans(),
    "weapon_lethality": st.integers(0, 100),
    "weapon_severity": st.sampled_from(["0", "1.5", "2", "3.25", "10"]), "armour": st.sampled_from(["none", "light", "heavy"]),
    "dual_wield_allowed": st.booleans(), "flee_target": st.integers(-10, 99),
})
tss_persona = st.fixed_dictionaries({
    "skill": st.sampled_from(["14/7/3", "20/10/5", "8/4/2", 12]), "action_check": st.sampled_from(["+14/13/6/3", "+10/9/4/2"]),
    "actions_per_round": st.integers(1, 3), "situation_steps": st.integers(-7, 10), "two_weapons": st.booleans(),
    "ambidexterity": st.booleans(), "damage_track": st.sampled_from(["d4w/d4+2w/d4-1m", "d6s/d6+1w/d4+1m", "2d4s/d8w/3d6m"]),
    "weapon_grade": st.sampled_from(["ordinary", "good", "amazing"]), "armour_die": st.sampled_from([0, 4, 6]),
    "armour_grade": st.sampled_from(["marginal", "ordinary", "good", "amazing"]),
    "durability": st.sampled_from(["10/10/5", "4/4/2", "20/15/8"]),
})
PERSONAS = {"exp": exp_persona, "d100": d100_persona, "tss": tss_persona}
GLOBALS = {
    "exp": st.fixed_dictionaries({"max_steps": st.integers(1, 40), "hit_on_equal": st.booleans()}),
    "d100": st.fixed_dictionaries({"max_steps": st.integers(1, 40), "passes_per_round": st.integers(1, 4),
                                   "start_engaged": st.booleans()}),
    "tss": st.fixed_dictionaries({"max_steps": st.integers(1, 40), "one_step_shift": st.booleans()}),
}


def _run(module, ruleset, params, seeds, policies, shaping, action_seed, steps):
    n = seeds.shape[0]
    b = Buffers(RULESETS[ruleset], n)
    b.seeds[:] = seeds
    getattr(module, f"{ruleset}_reset")(params, b.seeds, b.state, np.ones(n, np.uint8), b.obs, b.mask)
    rng = np.random.default_rng(action_seed)
    trace = [b.obs.copy(), b.mask.copy()]
    for _ in range(steps):
        b.actions[:] = rng.integers(-1, RULESETS[ruleset].n_actions + 1, size=(n, 2))
        getattr(module, f"{ruleset}_step")(params, b.seeds, b.state, b.actions, policies, shaping,
                                           b.obs, b.reward, b.terminated, b.truncated, b.mask)
        trace += [b.obs.copy(), b.mask.copy(), b.reward.copy(), b.terminated.copy(), b.truncated.copy(), b.state.copy()]
    return trace


@pytest.mark.parametrize("ruleset", list(REFERENCES))
def test_differential_reference_vs_numba(ruleset):
    @given(
        agent=PERSONAS[ruleset], opponent=PERSONAS[ruleset], globals_=GLOBALS[ruleset],
        seeds=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=3),
        policies=st.tuples(st.integers(0, 2), st.integers(0, 2)), shaping=st.sampled_from([0.0, 0.5]),
        action_seed=st.integers(0, 1000),
    )
    def check(agent, opponent, globals_, seeds, policies, shaping, action_seed):
        params = RULESETS[ruleset].build(agent, opponent, **globals_)
        seeds = np.array(seeds, dtype=np.uint64)
        policies = np.array(policies, dtype=np.int64)
        reference = _run(REFERENCES[ruleset], ruleset, params, seeds, policies, shaping, action_seed, 25)
        for module in (numba_module(ruleset), cython_module(ruleset)):
            compiled = _run(module, ruleset, params, seeds, policies, shaping, action_seed, 25)
            for a, b in zip(reference, compiled, strict=True):
                np.testing.assert_array_equal(a, b)

    check()


@pytest.mark.parametrize("ruleset", list(REFERENCES))
def test_duels_kernel_reference_vs_numba(ruleset):
    params = RULESETS[ruleset].build()
    for policies in ((1, 2), (2, 2), (2, 1)):
        policies = np.array(policies, dtype=np.int64)
        outs = []
        for module in (REFERENCES[ruleset], numba_module(ruleset), cython_module(ruleset)):
            counts = np.zeros(4, dtype=np.int64)
            outcome = np.zeros(15, dtype=np.int64)
            getattr(module, f"{ruleset}_duels")(np.uint64(2**63 + 5), 40, 15, params, policies, 0.0, counts, outcome)
            outs.append((counts, outcome))
        for other in outs[1:]:
            np.testing.assert_array_equal(outs[0][0], other[0])
            np.testing.assert_array_equal(outs[0][1], other[1])
        assert outs[0][0][:3].sum() == 15


# ---- statistical: Monte Carlo against exact probabilities, fixed seeds ----
def test_exp_hit_rate_matches_the_kilodie():
    """Both sides fire a 1-damage weapon every unit: damage taken ~ Binomial(units, p) with p exact."""
    side = {"hit_points": 1_000_000, "armour_rating": 640,
            "weapons": [{"bonus": 117, "maximum_roll": 900, "damage": "1", "type": "C"}]}
    params = exp_params(side, dict(side, armour_rating=880), max_steps=1_000_000)
    module = numba_module("exp")
    n, units = 512, 200
    b = Buffers(RULESETS["exp"], n)
    b.seeds[:] = 77
    b.state[:, 0] = np.arange(n)  # distinct episodes of one seed
    module.exp_reset(params, b.seeds, b.state, np.ones(n, np.uint8), b.obs, b.mask)
    for _ in range(units):
        module.exp_step(params, b.seeds, b.state, b.actions, np.array([0, 0]), 0.0,
                        b.obs, b.reward, b.terminated, b.truncated, b.mask)
    for target, armour in ((1, 880), (0, 640)):
        p = Fraction(1000 - (armour - 117), 1000)
        hits = int((1_000_000 - b.state[:, exp_reference.S_SIDE + target * exp_reference.SIDE_STATE]).sum())
        trials = n * units
        sigma = float((trials * p * (1 - p)) ** 0.5)
        assert abs(hits - float(trials * p)) < 5 * sigma


def test_tss_attack_tiers_match_exact_enumeration():
    """d20 control + d6 situation die (steps +2) against 14/7/3, critical failure on control 20."""
    layout = numba_module("tss")
    from combatsim.kernels.rl._stream_nb import stream_seek

    counts = np.zeros(4, dtype=np.int64)
    state = np.zeros(14, dtype=np.uint64)
    trials = 20_000
    for i in range(trials):
        stream_seek(state, np.uint64(11), np.uint64(0), i, 0, 0)
        control = layout.stream_die(state, np.uint64(20), layout.rejection_threshold(np.uint64(20)))
        total = control + layout.situation_roll(2, state, layout.rejection_threshold(np.uint64(20)))
        counts[layout.attack_tier(control, total, 14, 7, 3)] += 1
    exact = [Fraction(0)] * 4
    for control, situation in product(range(1, 21), range(1, 7)):
        exact[tss_reference.attack_tier(control, control + situation, 14, 7, 3)] += Fraction(1, 120)
    for observed, p in zip(counts, exact, strict=True):
        sigma = float((trials * p * (1 - p)) ** 0.5) or 1.0
        assert abs(int(observed) - float(trials * p)) < 5 * sigma


# ---- validation ----
@pytest.mark.parametrize(
    ("builder", "kwargs", "error", "match"),
    [
        (exp_params, {"agent": {"hit_points": 0}}, ValueError, "agent.hit_points"),
        (exp_params, {"agent": {"weapons": [{"damage": "x"}]}}, ValueError, r"agent.weapons\[0\].damage"),
        (exp_params, {"opponent": {"weapons": [{"type": "G"}]}}, ValueError, r"opponent.weapons\[0\].type"),
        (exp_params, {"agent": {"weapons": [{"damage": "11d6"}]}}, ValueError, r"agent.weapons\[0\].damage"),
        (exp_params, {"agent": {"weapons": []}}, ValueError, "agent.weapons"),
        (exp_params, {"agent": {"speed": 3}}, ValueError, "speed"),
        (exp_params, {"max_steps": 0}, ValueError, "max_steps"),
        (exp_params, {"hit_on_equal": 1}, TypeError, "hit_on_equal"),
        (exp_params, {"agent": {"weapons": [{"type": "automatic", "ammunition": 2}]}}, ValueError, "ammunition"),
        (d100_params, {"agent": {"skill": 1.5}}, TypeError, "agent.skill"),
        (d100_params, {"opponent": {"armour": "plate"}}, ValueError, "opponent.armour"),
        (d100_params, {"agent": {"weapon_severity": "x"}}, ValueError, "agent.weapon_severity"),
        (d100_params, {"passes_per_round": 0}, ValueError, "passes_per_round"),
        (tss_params, {"agent": {"skill": "14/7"}}, ValueError, "agent.skill"),
        (tss_params, {"agent": {"damage_track": "d4w/d6w"}}, ValueError, "agent.damage_track"),
        (tss_params, {"agent": {"damage_track": "d4x/d6w/d8m"}}, ValueError, "agent.damage_track"),
        (tss_params, {"opponent": {"weapon_grade": "legendary"}}, ValueError, "opponent.weapon_grade"),
        (tss_params, {"agent": {"durability": "10/0/5"}}, ValueError, "agent.durability"),
        (tss_params, {"agent": {"situation_steps": 11}}, ValueError, "agent.situation_steps"),
    ],
)
def test_validation_names_the_field(builder, kwargs, error, match):
    with pytest.raises(error, match=match):
        builder(**kwargs)


def test_env_arguments_are_validated():
    import combatsim.rl as rl

    with pytest.raises(ValueError, match="opponent"):
        rl.ExpDuelEnv(opponent="smart")
    with pytest.raises(ValueError, match="shaping"):
        rl.D100DuelEnv(shaping=-1)
    with pytest.raises(ValueError, match="backend"):
        rl.TssDuelEnv(backend="cuda")
    with pytest.raises(ValueError, match="num_envs"):
        rl.TssDuelVectorEnv(0)
    with pytest.raises(ValueError, match="ruleset"):
        rl.parallel_env("chess")
    with pytest.raises(ValueError, match="seed"):
        rl.ExpDuelEnv().reset(seed=-1)


@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**62), st.integers(0, 10**6)),
                min_size=1, max_size=70),
       st.sampled_from([12, 120, 324]))
def test_numba_steps_blocks_drawn_ahead_are_the_reference_blocks(envs, words_per_step):
    """The Numba twins' SIMD pass draws, for each env, the block its coming step reads first."""
    from combatsim.kernels.rl import _stream_nb
    from combatsim.rng import DOMAIN_ITEM, block

    seeds = np.array([seed for seed, _, _ in envs], dtype=np.uint64)
    state = np.zeros((len(envs), 8), dtype=np.int64)
    state[:, 0] = [episode for _, episode, _ in envs]
    state[:, 1] = [t for _, _, t in envs]
    ahead = _stream_nb.new_ahead(_stream_nb.new_state())
    first = max(0, len(envs) - _stream_nb.AHEAD_ENVS)  # the last (possibly partial) group of envs
    _stream_nb.stream_ahead(seeds, state, first, words_per_step, ahead)
    for slot, (seed, episode, t) in enumerate(envs[first:]):
        expected = block(seed, episode, (t + 1) * words_per_step // 4, DOMAIN_ITEM)
        assert tuple(int(ahead[_stream_nb._ROW[5 + j] + slot]) for j in range(4)) == expected


# ---- lockstep lanes (fast paths, kernels/rl/<ruleset>_lanes.h and their Numba twins <ruleset>_lanes_nb.py) ----
#: Fewest envs the lanes take (fewer go to the body; the headers and the Numba twin agree, below).
LANES_MIN = 16
#: Rulesets with lanes, and the backends that have them.
LANE_BACKENDS = [("d100", "cython"), ("d100", "numba"), ("exp", "cython"), ("exp", "numba")]
#: d100 choices the lanes take: all but flee and disengage (which roll their own dice), and -1 / 8 (illegal).
LANE_ACTIONS = [-1, 0, 1, 2, 4, 6, 7, 8]
#: EXP lanes' personas: the usual dice and a d999760, which Lemire rejects about once in 4300 words
#: ((2^32 - 999760) mod 999760 = 998096), so rejected words reach the lanes.
exp_lane_persona = _exp_personas([*EXP_DAMAGE, "d999760"])


def _lane_buffers(ruleset, params, seeds, episode_start):
    b = Buffers(RULESETS[ruleset], len(seeds))
    b.seeds[:] = seeds
    b.state[:, 0] = episode_start
    getattr(REFERENCES[ruleset], f"{ruleset}_reset")(params, b.seeds, b.state, np.ones(len(seeds), np.uint8), b.obs,
                                                     b.mask)
    return b


def _lanes_alone(backend, ruleset):
    """The lockstep fast path alone on envs 0 .. 63: steps those it takes, returns them as bits."""
    if backend == "cython":
        return getattr(cython_module(ruleset), f"{ruleset}_lanes_alone")
    from combatsim.kernels.rl import _stream_nb

    lanes = getattr(importlib.import_module(f"combatsim.kernels.rl.{ruleset}_lanes_nb"), f"{ruleset}_lanes")
    words_per_step = REFERENCES[ruleset].WORDS_PER_STEP

    def alone(params, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask):
        ahead = _stream_nb.new_state()
        _stream_nb.stream_ahead(seeds, state, 0, words_per_step, ahead)
        done = lanes(params, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, 0, ahead)
        return done % 2**64

    return alone


def _lanes_step(backend, ruleset, params, b, policies, shaping):
    """The lanes alone on buffers ``b``: which envs they stepped, as booleans."""
    done = _lanes_alone(backend, ruleset)(params, b.seeds, b.state, b.actions, policies, shaping, b.obs, b.reward,
                                          b.terminated, b.truncated, b.mask)
    envs = len(b.seeds)
    assert done >> envs == 0
    return np.array([(done >> e) & 1 for e in range(envs)], dtype=bool)


def _reference_step(ruleset, params, b, policies, shaping):
    getattr(REFERENCES[ruleset], f"{ruleset}_step")(params, b.seeds, b.state, b.actions, policies, shaping, b.obs,
                                                    b.reward, b.terminated, b.truncated, b.mask)


def _copy(b):
    return [b.state.copy(), b.obs.copy(), b.mask.copy(), b.reward.copy(), b.terminated.copy(), b.truncated.copy()]


def _assert_lanes_match(lanes, reference, before, stepped):
    """Envs the lanes stepped equal the reference's step; the others are as they were."""
    for got, want, old in zip(_copy(lanes), _copy(reference), before, strict=True):
        np.testing.assert_array_equal(got[stepped], want[stepped])
        np.testing.assert_array_equal(got[~stepped], old[~stepped])


def _catch_up(lanes, reference):
    for got, want in zip((lanes.state, lanes.obs, lanes.mask, lanes.reward, lanes.terminated, lanes.truncated),
                         _copy(reference), strict=True):
        got[:] = want


def _lanes_follow_the_reference(backend, ruleset, params, seed, envs, external, shaping, action_seed, actions,
                                step_reference):
    """30 steps of random ``actions`` (external side 1, or scripted): each env the lanes step ends
    exactly as the reference's step leaves it, the others are untouched. ``step_reference(reference,
    policies, shaping, before, stepped)`` steps the reference's buffers and checks which envs the
    lanes had to take."""
    policies = np.array([0, 0 if external else 1], dtype=np.int64)
    seeds = np.arange(seed, seed + envs, dtype=np.uint64)
    lanes = _lane_buffers(ruleset, params, seeds, 7)
    reference = _lane_buffers(ruleset, params, seeds, 7)
    rng = np.random.default_rng(action_seed)
    taken = 0
    for _ in range(30):
        lanes.actions[:] = reference.actions[:] = rng.choice(actions, size=(envs, 2))
        before = _copy(lanes)
        stepped = _lanes_step(backend, ruleset, params, lanes, policies, shaping)
        step_reference(reference, policies, shaping, before, stepped)
        _assert_lanes_match(lanes, reference, before, stepped)
        taken += stepped.sum()
        _catch_up(lanes, reference)
    assert taken > 0


@pytest.mark.parametrize("backend", ["cython", "numba"])
@given(agent=d100_persona, opponent=d100_persona, globals_=GLOBALS["d100"],
       seed=st.integers(0, 2**64 - 64), envs=st.integers(LANES_MIN, 64), external=st.booleans(),
       shaping=st.sampled_from([0.0, 0.5]), action_seed=st.integers(0, 1000))
def test_d100_lanes_step_exactly_as_the_reference(backend, agent, opponent, globals_, seed, envs, external, shaping,
                                                  action_seed):
    """Each env the lockstep path steps ends exactly as the reference's step leaves it, the others
    untouched; and it steps every env whose pass can do without the reference's body."""
    from combatsim.rng import DOMAIN_ITEM, block

    params = RULESETS["d100"].build(agent, opponent, **globals_)

    def step_reference(reference, policies, shaping, before, stepped):
        _reference_step("d100", params, reference, policies, shaping)
        # What the lanes must take: every env but those with dual wield on (a second damage word
        # can need a fifth word) or a Lemire-rejected word in the step's first block.
        state = before[0]
        plain = (state[:, 5 + 4] == 0) & (state[:, 13 + 4] == 0) & (state[:, 3] == 0)
        for e in range(envs):
            words = block(int(reference.seeds[e]), int(state[e, 0]), (int(state[e, 1]) + 1) * 12 // 4, DOMAIN_ITEM)
            plain[e] &= all(w * 100 % 2**32 >= 96 for w in words)
        assert (stepped | ~plain).all()
        assert stepped[state[:, 3] != 0].all()  # resets

    _lanes_follow_the_reference(backend, "d100", params, seed, envs, external, shaping, action_seed, LANE_ACTIONS,
                                step_reference)


def _exp_reference_step_by_env(params, b, policies, shaping):
    """The reference's EXP step, one env at a time (each env's step is its own), reading each env's
    stream afterwards: returns the envs whose step the lanes must take, a reset or a step whose
    dice used at most the first block's four words and no Lemire-rejected word (no retry word)."""
    from combatsim.rl._stream import new_state

    must = np.zeros(len(b.seeds), dtype=bool)
    for e in range(len(b.seeds)):
        one = slice(e, e + 1)
        reset, retries = b.state[e, exp_reference.S_NEEDS_RESET] != 0, b.state[e, exp_reference.S_RETRIES]
        rng = new_state()
        exp_reference._step_all(params, b.seeds[one], b.state[one], b.actions[one], policies, shaping, b.obs[one],
                                b.reward[one], b.terminated[one], b.truncated[one], b.mask[one], rng)
        words = rng.stream.words_used - b.state[e, exp_reference.S_T] * exp_reference.WORDS_PER_STEP
        must[e] = reset or (words <= 4 and rng.stream.retries_used == retries)
    return must


@pytest.mark.parametrize("backend", ["cython", "numba"])
@given(agent=exp_lane_persona, opponent=exp_lane_persona, globals_=GLOBALS["exp"],
       seed=st.integers(0, 2**64 - 64), envs=st.integers(LANES_MIN, 64), external=st.booleans(),
       shaping=st.sampled_from([0.0, 0.5, -0.25]), action_seed=st.integers(0, 1000))
def test_exp_lanes_step_exactly_as_the_reference(backend, agent, opponent, globals_, seed, envs, external, shaping,
                                                 action_seed):
    """Each env the EXP lanes step ends exactly as the reference's step leaves it, the others
    untouched; and they step exactly the envs whose step needs no more than the first block's words
    and meets no rejected word (and every reset)."""
    params = exp_params(agent, opponent, **globals_)

    def step_reference(reference, policies, shaping, before, stepped):
        np.testing.assert_array_equal(stepped, _exp_reference_step_by_env(params, reference, policies, shaping))

    # Every action, and the illegal -1, 5 and 6.
    _lanes_follow_the_reference(backend, "exp", params, seed, envs, external, shaping, action_seed,
                                list(range(-1, exp_reference.ACTIONS + 2)), step_reference)


@pytest.mark.parametrize("backend", ["cython", "numba"])
def test_exp_lanes_leave_rejected_words_to_the_body(backend):
    """Envs whose damage die meets a Lemire-rejected word (a retry word follows) go to the body;
    the search below finds such steps (rare at random: the differential test may never meet one)."""
    from combatsim.rng import DOMAIN_ITEM, block, rejection_threshold

    sides = 999760  # rejects 998096 of 2^32 words
    gun = {"bonus": 2000, "maximum_roll": 1000, "damage": f"d{sides}", "type": "A"}
    params = exp_params({"armour_rating": 0, "weapons": [gun]}, {"armour_rating": 0, "weapons": [gun]})
    first_block = exp_reference.WORDS_PER_STEP // 4  # episode 0, step 1
    # Both sides hit: words 1 and 3 are the damage dice.
    rejected = [seed for seed in range(20_000)
                if any(word * sides % 2**32 < rejection_threshold(sides)
                       for word in block(seed, 0, first_block, DOMAIN_ITEM)[1::2])][:3]
    assert len(rejected) == 3
    seeds = np.array([*rejected, *range(20_000, 20_029)], dtype=np.uint64)
    lanes = _lane_buffers("exp", params, seeds, 0)
    reference = _lane_buffers("exp", params, seeds, 0)
    before = _copy(lanes)
    policies = np.array([0, 0], dtype=np.int64)
    stepped = _lanes_step(backend, "exp", params, lanes, policies, 0.0)
    must = _exp_reference_step_by_env(params, reference, policies, 0.0)
    _assert_lanes_match(lanes, reference, before, stepped)
    assert list(np.flatnonzero(~must)) == [0, 1, 2]
    np.testing.assert_array_equal(stepped, must)


@pytest.mark.parametrize(("ruleset", "backend"), LANE_BACKENDS)
def test_lanes_take_every_env_of_a_plain_duel(ruleset, backend):
    """With the default personas (the bench's duel) every env's step is taken in lockstep, the
    resets included; over 40 steps of 64 envs the buffers equal the reference's throughout."""
    params = RULESETS[ruleset].build()
    policies = np.array([0, 1], dtype=np.int64)
    seeds = np.arange(3, 67, dtype=np.uint64)
    lanes = _lane_buffers(ruleset, params, seeds, 0)
    reference = _lane_buffers(ruleset, params, seeds, 0)
    for _ in range(40):
        stepped = _lanes_step(backend, ruleset, params, lanes, policies, 0.0)
        _reference_step(ruleset, params, reference, policies, 0.0)
        assert stepped.all()
        for got, want in zip(_copy(lanes), _copy(reference), strict=True):
            np.testing.assert_array_equal(got, want)
    assert reference.state[:, 0].sum() > len(seeds)  # episodes ended and restarted along the way


@pytest.mark.parametrize("backend", ["cython", "numba"])
def test_exp_lanes_leave_states_the_reference_never_reaches_to_the_body(backend):
    """A weapon slot outside 0..2, ammunition or hit points beyond the lanes' range, or a step count
    at max_steps: that env goes to the body, its neighbours are still taken."""
    params = exp_params()
    policies = np.array([0, 1], dtype=np.int64)
    lanes = _lane_buffers("exp", params, np.arange(64, dtype=np.uint64), 0)
    s = exp_reference.S_SIDE
    odd = {1: (s + exp_reference.S_WEAPON, 3), 2: (s + exp_reference.S_AMMO + 1, -1),
           3: (s + exp_reference.SIDE_STATE + exp_reference.S_HP, 2**40), 4: (exp_reference.S_T, 200)}
    for e, (column, value) in odd.items():
        lanes.state[e, column] = value
    reference = _lane_buffers("exp", params, np.arange(64, dtype=np.uint64), 0)
    reference.state[:] = lanes.state
    before = _copy(lanes)
    stepped = _lanes_step(backend, "exp", params, lanes, policies, 0.0)
    assert list(np.flatnonzero(~stepped)) == sorted(odd)
    _reference_step("exp", params, reference, policies, 0.0)
    _assert_lanes_match(lanes, reference, before, stepped)


@pytest.mark.parametrize("backend", ["cython", "numba"])
@pytest.mark.parametrize("external", [False, True])
def test_exp_step_of_many_envs_equals_the_reference(backend, external):
    """The whole step of either twin on 200 envs (three groups of 64 through the lanes, the last 8
    through the body alone) leaves every buffer as the reference's step does, step after step."""
    params = exp_params({"weapons": [{"damage": "2d6", "type": "D", "ammunition": 7},
                                     {"damage": "d8", "type": "automatic", "ammunition": 30}]})
    policies = np.array([0, 0 if external else 1], dtype=np.int64)
    seeds = np.arange(40, 240, dtype=np.uint64)
    twin = _lane_buffers("exp", params, seeds, 0)
    reference = _lane_buffers("exp", params, seeds, 0)
    step = (cython_module if backend == "cython" else numba_module)("exp").exp_step
    rng = np.random.default_rng(1)
    for _ in range(30):
        twin.actions[:] = reference.actions[:] = rng.integers(-1, exp_reference.ACTIONS + 1, size=(len(seeds), 2))
        step(params, twin.seeds, twin.state, twin.actions, policies, 0.5, twin.obs, twin.reward, twin.terminated,
             twin.truncated, twin.mask)
        _reference_step("exp", params, reference, policies, 0.5)
        for got, want in zip(_copy(twin), _copy(reference), strict=True):
            np.testing.assert_array_equal(got, want)
    assert reference.state[:, 0].sum() > 0


@pytest.mark.parametrize("ruleset", ["d100", "exp"])
def test_lanes_header_has_the_reference_layout(ruleset):
    import re
    from pathlib import Path

    reference = REFERENCES[ruleset]
    header = (Path(__file__).parents[1] / "kernels" / "rl" / f"{ruleset}_lanes.h").read_text()
    defines = dict(re.findall(rf"^#define {ruleset.upper()}_(\w+) (\d+)u?$", header, flags=re.MULTILINE))
    shared = {name: value for name, value in defines.items() if hasattr(reference, name)}
    assert len(shared) >= 35
    for name, value in shared.items():
        assert getattr(reference, name) == int(value), name
    assert int(defines["LANES"]) == reference.AHEAD_ENVS
    assert int(defines["NO_ACTION"]) == reference.ACTIONS
    assert int(defines["LANES_MIN"]) == LANES_MIN
    from combatsim.kernels.rl import _stream_nb

    twin = importlib.import_module(f"combatsim.kernels.rl.{ruleset}_lanes_nb")
    assert _stream_nb.LANES_MIN == LANES_MIN
    assert (reference.POLICY_EXTERNAL, reference.POLICY_SCRIPTED) == (0, 1)  # as lanes_may_take reads them
    assert twin.NO_ACTION == reference.ACTIONS
    if ruleset == "exp":
        from combatsim.rng import rejection_threshold

        assert int(defines["KILODIE_REJECT_BELOW"]) == rejection_threshold(exp_reference.KILODIE)
        assert rejection_threshold(exp_reference.KILODIE) == twin.KILODIE_REJECT_BELOW
        shift = re.search(r"^#define EXP_LANE_RANGE \(1 << (\d+)\)$", header, flags=re.MULTILINE)
        assert 1 << int(shift.group(1)) == twin.LANE_RANGE


@pytest.mark.parametrize(("ruleset", "backend"), LANE_BACKENDS)
def test_lanes_leave_small_batches_to_the_body(ruleset, backend):
    """A single env, or fewer than LANES_MIN, is stepped by the shared body (the lanes take none)."""
    params = RULESETS[ruleset].build()
    policies = np.array([0, 1], dtype=np.int64)
    for envs in (1, LANES_MIN - 1, LANES_MIN):
        b = _lane_buffers(ruleset, params, np.arange(envs, dtype=np.uint64), 0)
        assert (_lanes_step(backend, ruleset, params, b, policies, 0.0) == (envs >= LANES_MIN)).all()
