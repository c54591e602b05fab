"""Careless or hostile Python API input: refused at once with a one-line error naming the field,
before any compiled code runs; nothing silently accepted."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from combatsim import runner
from combatsim.d100 import api as d100
from combatsim.exp import api as exp
from combatsim.exp.model import Weapon
from combatsim.tss import api as tss

SWORD = Weapon("long sword", "A", "d8")
TO_HIT = dict(bonus=110, maximum_roll=760, armour_rating=580)


def _one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message and "\r" not in message
    return message


@pytest.fixture
def no_kernel(monkeypatch):
    """Any kernel fetched fails the test: the error must come before any compiled code."""

    def refuse(name, backend):
        raise AssertionError(f"kernel {name} fetched before the input was checked")

    monkeypatch.setattr(runner, "get_kernel", refuse)


@pytest.mark.parametrize("module", [exp, d100, tss])
def test_combatant_without_a_name_is_refused(module):
    with pytest.raises(TypeError, match="name"):
        if module is exp:
            exp.Combatant(name=None, hit_points=10, armour_rating=500, weapon=SWORD, bonus=100, maximum_roll=700)
        else:  # d100 and TSS combatants have no name field at all
            module.Combatant(name=None)


@pytest.mark.parametrize("name", ["Gu\x1b[31mard", "be\x07ll", "a\r\nFAKE LINE", "nul\x00", "rtl\u202eevil",
                                  "tab\there", "zero\u200bwidth", ""])
def test_combatant_names_with_control_characters_are_refused(name):
    with pytest.raises(ValueError, match="^name must") as error:
        exp.Combatant(name=name, hit_points=10, armour_rating=500, weapon=SWORD, bonus=100, maximum_roll=700)
    _one_line(error)


@pytest.mark.parametrize("text", ["Gu\x1b[31mard", "a\r\nFAKE LINE", "rtl\u202eevil"])
def test_weapon_names_and_damage_classes_with_control_characters_are_refused(text):
    with pytest.raises(ValueError, match="^weapon name must not contain control") as error:
        exp.Weapon(text, "B", "1d8")
    _one_line(error)
    with pytest.raises(ValueError, match="^damage_class must not contain control") as error:
        tss.Weapon.make("d4w/d4+2w/d4-1m", damage_class=text)
    _one_line(error)


def test_plain_unicode_names_are_accepted():
    assert exp.Combatant("Zoë Ørsted-Ōno", 10, 500, SWORD, 100, 700).name == "Zoë Ørsted-Ōno"


@pytest.mark.parametrize("call", [
    lambda p: exp.simulate_to_hit(10, **TO_HIT, progress=p),
    lambda p: exp.simulate_attack(10, **TO_HIT, weapon=SWORD, progress=p),
    lambda p: d100.simulate_attacks(10, pool=60, lethality=30, progress=p),
    lambda p: tss.simulate_attacks(10, skill="12/6/3", damage="d4w/d4+2w/d4-1m", progress=p),
])
def test_progress_that_is_not_callable_is_refused_before_any_chunk(no_kernel, call):
    with pytest.raises(TypeError, match="^progress must be a callable progress\\(done, n\\) or None, got str") as error:
        call("x")
    _one_line(error)


def test_endless_iterators_are_refused_not_consumed(no_kernel):
    with pytest.raises(TypeError, match="^specialty must be"):
        d100.simulate_attacks(10, pool=60, specialty=iter(int, 1), lethality=30)
    with pytest.raises(TypeError, match="^specialty must be"):
        d100.simulate_attacks(10, pool=60, specialty=(rank for rank in iter(int, 1)), lethality=30)
    with pytest.raises(TypeError, match="^bonus must be"):
        exp.simulate_to_hit(10, bonus=iter(int, 1), maximum_roll=760, armour_rating=580)
    fighter = d100.Combatant(side=0, fighting=60, weapon=d100.Weapon(30, 2), specialty=iter(int, 1))
    other = d100.Combatant(side=1, fighting=60, weapon=d100.Weapon(30, 2))
    with pytest.raises(TypeError, match=r"^combatants\[0\]\.specialty must be"):
        d100.simulate_fights(10, [fighter, other])


def test_finite_sequences_and_arrays_are_accepted():
    one = d100.simulate_attacks(1000, pool=60, specialty=[2, 1], lethality=30, seed=5)
    assert d100.simulate_attacks(1000, pool=60, specialty=np.array([2, 1]), lethality=30, seed=5).counts == one.counts
    assert d100.simulate_attacks(1000, pool=60, specialty=(2, 1), lethality=30, seed=5).counts == one.counts


@pytest.mark.parametrize("value", [
    np.array([1, 2, 3], dtype="m8[s]"),
    np.timedelta64(5, "s"),
    np.array(np.timedelta64(5, "s")),
    np.array(["2020-01-01"] * 3, dtype="M8[D]"),
    np.array([1 + 2j] * 3),
    np.array([1, 2, 3], dtype=object),
    np.array([True, False, True]),
    datetime.timedelta(seconds=5),
    True,
    2.0,
])
def test_arrays_of_the_wrong_kind_name_the_field(no_kernel, value):
    with pytest.raises(TypeError, match="^bonus must") as error:
        exp.simulate_to_hit(3, bonus=value, maximum_roll=760, armour_rating=580)
    _one_line(error)


def test_timedelta_ranks_name_the_field(no_kernel):
    with pytest.raises(TypeError, match="^specialty must be an integer"):
        d100.simulate_attacks(10, pool=60, specialty=np.array([2], dtype="m8[s]"), lethality=30)


@pytest.mark.parametrize("seed, error", [
    (9007199254740993.0, TypeError), (1.0, TypeError), (np.float64(3), TypeError), ("7", TypeError),
    (True, TypeError), (-1, ValueError), (2**64, ValueError),
])
def test_seeds_are_integers_in_range(no_kernel, seed, error):
    with pytest.raises(error, match="^seed must") as raised:
        exp.simulate_to_hit(10, **TO_HIT, seed=seed)
    _one_line(raised)


def test_largest_seed_and_numpy_seeds_are_accepted():
    top = exp.simulate_to_hit(100, **TO_HIT, seed=2**64 - 1)
    assert top.seed == 2**64 - 1
    assert exp.simulate_to_hit(100, **TO_HIT, seed=np.uint64(7)).hits == exp.simulate_to_hit(100, **TO_HIT, seed=7).hits


@pytest.mark.parametrize("threads, error", [(0, ValueError), (-2, ValueError), (1025, ValueError),
                                            (2.0, TypeError), (True, TypeError), ("2", TypeError)])
def test_threads_are_validated(no_kernel, threads, error):
    with pytest.raises(error, match="^threads must") as raised:
        exp.simulate_to_hit(10, **TO_HIT, threads=threads)
    _one_line(raised)


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5, True])
def test_chunk_sizes_are_validated(no_kernel, chunk_size):
    with pytest.raises((TypeError, ValueError), match="^chunk_size must"):
        exp.simulate_to_hit(10, **TO_HIT, chunk_size=chunk_size)


def test_remembered_inputs_follow_a_mutated_list_inside_a_frozen_object():
    # A TSS Armour is frozen but holds a dict of dice: it is never remembered by identity, so a
    # caller who changes the dict gets the changed armour, as without the cache.
    armour = tss.Armour.make({"En": "d6"}, "ordinary")
    attack = dict(skill="12/6/3", damage="d4w/d4+2w/d4-1m", armour=armour, seed=3)
    soaked = tss.simulate_attacks(20_000, **attack)
    armour.dice["En"] = tss.Dice.parse("d20")
    harder = tss.simulate_attacks(20_000, **attack)
    assert harder.counts[5:].sum() < soaked.counts[5:].sum()


def test_equal_but_different_inputs_are_not_confused():
    # 1 and True hash alike; a remembered setup for one must not answer for the other.
    d100.simulate_attacks(10, pool=60, specialty=1, lethality=30)
    with pytest.raises(TypeError, match="^specialty must"):
        d100.simulate_attacks(10, pool=60, specialty=True, lethality=30)
    exp.simulate_attack(10, bonus=110, maximum_roll=760, armour_rating=580, damage="d8", adjustment=1)
    with pytest.raises(TypeError, match="^adjustment must"):
        exp.simulate_attack(10, bonus=110, maximum_roll=760, armour_rating=580, damage="d8", adjustment=True)
