"""Benchmark cases for EXP (see combatsim.bench)."""

from __future__ import annotations

import numpy as np

from combatsim.bench_case import BenchCase
from combatsim.exp.api import Combatant, simulate_attack, simulate_fight, simulate_to_hit
from combatsim.exp.model import Weapon
from combatsim.exp.prepared import Attack
from combatsim.prepared import bench_cases

BONUS, MAXIMUM_ROLL, ARMOUR_RATING = 110, 760, 580
#: exp.attack: a long sword (d8) with DA 6 (Chapter 9's PSTR 11 example).
SWORD = Weapon("long sword", "A", "d8")
DAMAGE_ADJUSTMENT = 6
#: The inputs of exp.to_hit's and exp.attack's calls (and of the prepared attack's).
TO_HIT = dict(bonus=BONUS, maximum_roll=MAXIMUM_ROLL, armour_rating=ARMOUR_RATING)
ATTACK = dict(TO_HIT, weapon=SWORD, damage_adjustment=DAMAGE_ADJUSTMENT)


def _to_hit(backend: str, n: int, threads: int) -> int:
    return simulate_to_hit(n, **TO_HIT, seed=1, backend=backend, threads=threads).hits


def _to_hit_numpy(n: int) -> int:
    rng = np.random.default_rng(1)
    rolls = rng.integers(1, 1001, size=n)
    return int(np.count_nonzero(np.minimum(rolls + BONUS, MAXIMUM_ROLL) > ARMOUR_RATING))


def _attack(backend: str, n: int, threads: int) -> int:
    return simulate_attack(n, **ATTACK, seed=1, backend=backend, threads=threads).damage_total


def _attack_numpy(n: int) -> int:
    rng = np.random.default_rng(1)
    rolls = rng.integers(1, 1001, size=n)
    dice = rng.integers(1, 9, size=n)
    hit = np.minimum(rolls + BONUS, MAXIMUM_ROLL) > ARMOUR_RATING
    return int(np.sum(np.where(hit, np.maximum(dice + DAMAGE_ADJUSTMENT, 0), 0)))


#: exp.fight: two against two, melee and a D-type gun with ammunition, to the end or 100 units.
FIGHTERS = (
    [
        Combatant("nomad", 30, 600, SWORD, 125, 750, 6),
        Combatant("spie", 24, 620, Weapon("pistol", "D", "2d6", ammunition=24), 178, 853),
    ],
    [
        Combatant("slug", 45, 560, Weapon("bite", "A", "2d6", natural=True), 100, 700, 2),
        Combatant("merc", 28, 640, Weapon("rifle", "C", "3d10", ammunition=12), 150, 825),
    ],
)


def _fight(backend: str, n: int, threads: int) -> int:
    return simulate_fight(n, *FIGHTERS, seed=1, backend=backend, threads=threads).wins[0]


def _fight_numpy(n: int) -> int:
    """The same fights with numpy, vectorised over fights unit by unit (lanes drop out when done)."""
    rng = np.random.default_rng(1)
    table = np.array([c.row(0) for c in FIGHTERS[0]] + [c.row(1) for c in FIGHTERS[1]], dtype=np.int64)
    members = len(table)
    hp = np.tile(table[:, 1], (n, 1))
    shots = np.tile(table[:, 12], (n, 1))
    side = table[:, 0]
    wins = 0
    active = np.arange(n)
    for _ in range(100):
        if active.size == 0:
            break
        h = hp[active]
        s = shots[active]
        taken = np.zeros_like(h)
        for a in range(members):
            enemy = side != side[a]
            standing = (h > 0) & enemy
            # a uniformly random standing enemy per fight
            keys = np.where(standing, rng.random((active.size, members)), -1.0)
            target = np.argmax(keys, axis=1)
            can = (h[:, a] > 0) & (s[:, a] != 0) & standing.any(axis=1)
            rolls = np.where(s[:, a] < 0, table[a, 10], np.minimum(table[a, 10], np.maximum(s[:, a], 0)))
            s[:, a] = np.where(s[:, a] > 0, s[:, a] - rolls, s[:, a])
            total = np.zeros(active.size, dtype=np.int64)
            for r in range(int(table[a, 10])):
                kilo = rng.integers(1, 1001, size=active.size)
                dice = rng.integers(1, table[a, 7] + 1, size=(active.size, table[a, 6])).sum(axis=1)
                to_hit = np.minimum(kilo + table[a, 3], table[a, 4])
                hit = (to_hit > table[target, 2]) & can & (r < rolls)
                total += np.where(hit, np.maximum(dice + table[a, 8] + table[a, 9], 0), 0)
            np.add.at(taken, (np.arange(active.size), target), total)
        h = h - taken
        hp[active] = h
        shots[active] = s
        up0 = ((h > 0) & (side == 0)).any(axis=1)
        up1 = ((h > 0) & (side == 1)).any(axis=1)
        wins += int(np.count_nonzero(up0 & ~up1))
        active = active[up0 & up1]
    return wins


CASES = [
    BenchCase("exp.to_hit", _to_hit, _to_hit_numpy, compiled_items=200_000_000),
    BenchCase("exp.attack", _attack, _attack_numpy, compiled_items=100_000_000),
    BenchCase("exp.fight", _fight, _fight_numpy, compiled_items=200_000, python_items=500, numpy_items=50_000),
    # One prepared unit of fire (combatsim.exp.Attack): exp.attack's sword, call by call.
    *bench_cases("exp", lambda backend: Attack(**ATTACK, backend=backend)),
]
