"""Prepared attacks (combatsim.prepared): each resolve is the same item as simulate_*'s outcomes,
on every backend, at any seed and index; bad input raises one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from combatsim import d100, exp, tss
from combatsim.d100.api import attack_parameters, simulate_attacks
from combatsim.d100.odds import attack_odds as d100_odds
from combatsim.exp.api import rolls_this_unit
from combatsim.exp.model import Persona, Weapon
from combatsim.exp.odds import attack_odds as exp_odds
from combatsim.prepared import ITEM_LIMIT
from combatsim.tss.model import Armour
from combatsim.validation import SEED_MAX

D100_CASES = [
    dict(pool=60, specialty=2, lethality=30),
    dict(pool=80, specialty=[3, 1], modifiers=["quick", "cover"], lethality=40, severity="1.5", armour="light"),
    dict(pool=200, lethality=90, severity=3, dual_wield=True),
    dict(pool=45, lethality=70, nonlethal=True, modifiers=["distant_pistol", "dual_wield"], taper="flat"),
]
NOMAD = Persona(awe=12, cha=6, con=17, dex=15, int_=12, mstr=4, pstr=10, hit_points=43, persona_class="nomad")
EXP_CASES = [
    dict(bonus=100, maximum_roll=800, armour_rating=500, damage="2d6"),  # a joint die
    dict(bonus=50, maximum_roll=900, armour_rating=400, weapon=Weapon("smg", "automatic", "d6")),  # bursts
    dict(persona=NOMAD, weapon=Weapon("long sword", "A", "d8"), armour_rating=300, critical=True,
         hit_on_equal=True, adjustment=-20),
    dict(bonus=0, maximum_roll=1000, armour_rating=600, weapon=Weapon("e", "E", "2d6")),  # three rolls a unit
    dict(bonus=10, maximum_roll=990, armour_rating=100, damage="3d1000000+2", damage_adjustment=-5),  # no joint die
]
TSS_CASES = [
    dict(skill="14/7/3", damage="d4w/d4+2w/d4-1m", armour="d6"),  # the joint layout
    dict(skill="14/7/3", damage="d4w/d4+2w/d4-1m", armour="d6", joint_layout=False),
    dict(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good",
         armour=Armour.make({"En": "d6+1"}, "ordinary")),
    dict(skill=12, steps=10, damage="2d8w/2d8+1w/d8m", armour="2d4", armour_quality="good",
         one_step_shift=True),  # 3d20 situation dice: the per-die layout
]


def _d100_outcomes(n, seed, backend, kwargs):
    r = simulate_attacks(n, seed=seed, backend=backend, threads=1, outcomes=True, **kwargs)
    return list(zip(r.tier.tolist(), r.wound.tolist(), r.second_wound.tolist(), strict=True))


def _exp_outcomes(n, seed, backend, kwargs):
    r = exp.simulate_attack(n, seed=seed, backend=backend, threads=1, outcomes=True, **kwargs)
    return list(zip(r.hits_per_unit.tolist(), r.rounds_hit_per_unit.tolist(), r.damage_per_unit.tolist(),
                    strict=True))


def _tss_outcomes(n, seed, backend, kwargs):
    r = tss.simulate_attacks(n, seed=seed, backend=backend, threads=1, outcomes=True, **kwargs)
    return list(zip(r.tier.tolist(), r.stun.tolist(), r.wound.tolist(), r.mortal.tolist(), strict=True))


RULESETS = {
    "d100": (d100.Attack, D100_CASES, _d100_outcomes),
    "exp": (exp.Attack, EXP_CASES, _exp_outcomes),
    "tss": (tss.Attack, TSS_CASES, _tss_outcomes),
}
ALL_CASES = [(name, k) for name, (_, cases, _) in RULESETS.items() for k in range(len(cases))]


def _attack(name, case, backend):
    make, cases, _ = RULESETS[name]
    return make(**cases[case], backend=backend)


@pytest.mark.parametrize(("name", "case"), ALL_CASES)
def test_resolve_is_the_item_of_simulate(name, case, backend):
    make, cases, outcomes = RULESETS[name]
    attack = make(**cases[case], backend=backend)
    for seed in (0, 7, 2**63 + 11):
        expected = outcomes(70, seed, backend, cases[case])
        assert [tuple(attack.resolve(seed, index)) for index in range(70)] == expected
        many = attack.resolve_many(seed, 0, 70)
        assert list(zip(*(values.tolist() for values in many), strict=True)) == expected
        assert list(zip(*(values.tolist() for values in attack.resolve_many(seed, 13, 40)), strict=True)) == \
            expected[13:53]


def _far_items(count: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(2026)
    pairs = [(int(rng.integers(0, 2**64, dtype=np.uint64)), int(rng.integers(0, ITEM_LIMIT))) for _ in range(count)]
    edges = [(SEED_MAX, ITEM_LIMIT - 1), (2**63, 2**32), (1, 2**32 - 1), (2**64 - 2, 2**40 + 3), (5, 2**32 + 1)]
    return edges + pairs


@pytest.mark.parametrize(("name", "case"), ALL_CASES)
def test_resolve_far_items_match_the_reference_and_the_bulk_kernel(name, case, backend):
    """Seeds past 2**63, indices past 2**32: each backend's resolve against the pure-Python
    reference and against its own bulk kernel over a slice around the item."""
    attack = _attack(name, case, backend)
    reference = _attack(name, case, "python")
    for seed, index in _far_items(40):
        got = attack.resolve(seed, index)
        assert got == reference.resolve(seed, index), (seed, index)
        start = max(0, index - 2)
        around = attack.resolve_many(seed, start, min(5, ITEM_LIMIT - start))
        assert tuple(int(values[index - start]) for values in around) == got, (seed, index)


@pytest.mark.parametrize("name", RULESETS)
def test_resolve_takes_numpy_integers_and_returns_the_outcome_type(name):
    attack = _attack(name, 0, "auto")
    outcome = attack.resolve(np.uint64(2**63 + 5), np.int64(2**40))
    assert isinstance(outcome, attack.Outcome)
    assert outcome == attack.resolve(2**63 + 5, 2**40)
    assert all(type(value) is int for value in outcome)


BAD_ITEMS = [
    ((0, -1), ValueError, "index must be in 0..4611686018427387903, got -1"),
    ((0, ITEM_LIMIT), ValueError, "index must be in 0..4611686018427387903, got 4611686018427387904"),
    ((0, 2**64), ValueError, "index must be in"),
    ((0, 1.0), TypeError, "index must be an integer"),
    ((0, True), TypeError, "index must be an integer"),
    ((0, "3"), TypeError, "index must be an integer"),
    ((-1, 0), ValueError, "seed must be in 0..18446744073709551615, got -1"),
    ((2**64, 0), ValueError, "seed must be in 0..18446744073709551615, got 18446744073709551616"),
    ((9007199254740993.0, 0), TypeError, "seed must be an integer"),
    ((None, 0), TypeError, "seed must be an integer"),
]


@pytest.mark.parametrize("name", RULESETS)
@pytest.mark.parametrize(("arguments", "error", "message"), BAD_ITEMS)
def test_resolve_refuses_bad_seeds_and_indices(name, arguments, error, message, backend):
    attack = _attack(name, 0, backend)
    with pytest.raises(error, match="^" + message.replace(".", r"\.")) as raised:
        attack.resolve(*arguments)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("name", RULESETS)
def test_resolve_many_refuses_bad_ranges(name):
    attack = _attack(name, 0, "auto")
    with pytest.raises(ValueError, match="^count must be in 0.."):
        attack.resolve_many(0, 0, -1)
    with pytest.raises(ValueError, match="^count must be in 0..3, got 4"):
        attack.resolve_many(0, ITEM_LIMIT - 3, 4)
    with pytest.raises(ValueError, match="^count must be in 0.."):
        attack.resolve_many(0, 0, 10**12)  # outcome arrays past the memory cap
    with pytest.raises(ValueError, match="^start must be in"):
        attack.resolve_many(0, -5, 1)
    with pytest.raises(TypeError, match="^seed must be an integer"):
        attack.resolve_many(1.5, 0, 1)
    assert [len(values) for values in attack.resolve_many(0, ITEM_LIMIT - 3, 3)] == [3] * len(attack.Outcome._fields)
    assert [len(values) for values in attack.resolve_many(0, 5, 0)] == [0] * len(attack.Outcome._fields)


def _error(call) -> tuple[type, str]:
    with pytest.raises((TypeError, ValueError)) as raised:
        call()
    return type(raised.value), str(raised.value)


BAD_INPUTS = {
    "d100": (simulate_attacks, [
        dict(pool=1001, lethality=30), dict(pool=60, lethality=-1), dict(pool=60, lethality=30, modifiers=["nope"]),
        dict(pool=60, lethality=30, severity="0.15"), dict(pool=60, lethality=30, armour="plate"),
        dict(pool=60, specialty=[11], lethality=30), dict(pool=60, lethality=30, nonlethal=1),
        dict(pool=60, lethality=30, modifiers=["distant_pistol", "distant_archery"]),
    ]),
    "exp": (exp.simulate_attack, [
        dict(bonus=10, maximum_roll=0, armour_rating=5), dict(bonus=10, armour_rating=5),
        dict(persona=NOMAD, weapon=Weapon("w", "A", "d4"), bonus=3, armour_rating=1),
        dict(bonus=10, maximum_roll=700, weapon=Weapon("w", "A", "d4"), damage="d6", armour_rating=1),
        dict(bonus=10, maximum_roll=700, armour_rating=1, damage="d6", hit_on_equal="yes"),
        dict(bonus=10, maximum_roll=700, armour_rating=10**9), dict(bonus=10, maximum_roll=700, armour_rating=1,
                                                                    weapon="sword"),
        dict(bonus=0, maximum_roll=1000, armour_rating=0, weapon=Weapon("g", "C", "d6", ammunition=0)),
    ]),
    "tss": (tss.simulate_attacks, [
        dict(skill="4/8/16", damage="d4w/d4w/d4w"), dict(skill="14/7/3", damage="d4w/d4w"),
        dict(skill="14/7/3", damage="d4w/d4+2w/d4-1m", steps=10**6), dict(skill="14/7/3", damage="d4w/d4w/d4w",
                                                                          armour="xyz"),
        dict(skill="14/7/3", damage="d4w/d4w/d4w", weapon_quality="legendary"),
        dict(skill="14/7/3", damage="d4w/d4w/d4w", one_step_shift="no"),
    ]),
}


@pytest.mark.parametrize(("name", "case"), [(name, k) for name, (_, cases) in BAD_INPUTS.items()
                                            for k in range(len(cases))])
def test_construction_refuses_what_simulate_refuses_with_the_same_error(name, case):
    simulate, cases = BAD_INPUTS[name]
    make = RULESETS[name][0]
    error = _error(lambda: make(**cases[case]))
    assert error == _error(lambda: simulate(1, **cases[case]))
    assert "\n" not in error[1]


def test_odds_are_the_odds_modules_cached_and_read_only():
    for kwargs in D100_CASES:
        attack = d100.Attack(**kwargs)
        assert dict(attack.odds()) == d100_odds(attack_parameters(**kwargs))
    attack = exp.Attack(**EXP_CASES[1])
    odds = attack.odds()
    smg = EXP_CASES[1]["weapon"]
    expected = exp_odds(bonus=50, maximum_roll=900, armour_rating=400, dice=smg.damage,
                        rolls=rolls_this_unit(smg, None), automatic=True)
    assert {key: dict(value) if isinstance(value, dict) else value for key, value in expected.items()} == \
        {key: dict(value) if hasattr(value, "items") else value for key, value in odds.items()}
    assert attack.odds() is odds
    with pytest.raises(TypeError):
        odds["hits"] = 1
    with pytest.raises(TypeError):
        odds["damage_per_unit"][0] = 1
    tss_attack = tss.Attack(**TSS_CASES[0])
    tss_odds = tss_attack.odds()
    assert sum(tss_odds[tier] for tier in ("amazing", "good", "ordinary", "failure", "critical_failure")) == 1
    assert sum(tss_odds["laws"]["stun"].values()) == 1
    assert tss_odds["stun"] == sum(value * p for value, p in tss_odds["laws"]["stun"].items())


def test_tss_odds_take_an_armour_object_as_its_die_and_grade():
    by_object = tss.Attack(**TSS_CASES[2]).odds()
    by_text = tss.Attack(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good",
                         armour="d6+1", armour_quality="ordinary").odds()
    assert by_object == by_text


def test_odds_agree_with_many_resolved_items():
    """A loose sanity check of odds against outcomes: 20,000 items, within 5 standard errors."""
    attack = d100.Attack(**D100_CASES[1])
    tiers = attack.resolve_many(3, 0, 20_000).tier
    for index, name in enumerate(("critical_success", "hard_success", "success", "failure", "critical_failure")):
        p = float(attack.odds()[name])
        observed = float(np.mean(tiers == index))
        assert abs(observed - p) <= 5 * (p * (1 - p) / 20_000) ** 0.5 + 1e-12, name


def test_the_docs_examples_run_as_written():
    """docs/api.md's examples run, and print what their comments say."""
    import re
    from fractions import Fraction
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    spaces = []
    for block in blocks:
        space: dict = {}
        exec(compile(block, "docs/api.md", "exec"), space)
        spaces.append(space)
    assert (spaces[0]["odds"]["critical_success"], spaces[0]["odds"]["lethal"]) == (Fraction(7, 100), Fraction(99, 625))
    assert spaces[0]["attack"].resolve_many(42, 0, 5).tier.tolist() == simulate_attacks(
        5, pool=60, specialty=2, lethality=30, severity=2, armour="light", seed=42, outcomes=True).tier.tolist()
    assert spaces[1]["raw"].resolve(7, 2**40) == exp.Attack(bonus=110, maximum_roll=760, armour_rating=580,
                                                             damage="2d6", backend="python").resolve(7, 2**40)


def test_bench_times_resolve_and_odds_one_call_at_a_time():
    from combatsim.bench import cases

    found = {case.kernel: case for case in cases() if case.kernel.endswith(("resolve_one", "odds_one"))}
    assert sorted(found) == sorted(f"{name}.{kind}" for name in RULESETS for kind in ("resolve_one", "odds_one"))
    d100_case = found["d100.resolve_one"]
    assert d100_case.threads == (1,)
    last = d100_case.run("cython", 5, 1)  # items 0..4 of seed 1: returns the last
    assert last == d100.Attack(pool=60, specialty=(2,), lethality=30, severity=2, armour="light").resolve(1, 4)
    assert found["tss.odds_one"].run("python", 3, 1)["amazing"] > 0


@pytest.mark.parametrize(("name", "case"), ALL_CASES)
def test_a_prepared_attack_pickles_as_its_inputs(name, case):
    import pickle

    make, cases, _ = RULESETS[name]
    attack = make(**cases[case])
    copy = pickle.loads(pickle.dumps(attack))
    assert type(copy) is type(attack) and copy.backend == attack.backend
    assert [copy.resolve(7, index) for index in range(50)] == [attack.resolve(7, index) for index in range(50)]
    if "1000000" not in str(cases[case]):  # too many totals for exact odds
        assert copy.odds() == attack.odds()
