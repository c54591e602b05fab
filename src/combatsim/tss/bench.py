"""Benchmark cases for TSS (see combatsim.bench): Alex's pistol against the thug's Ceremetal."""

from __future__ import annotations

import numpy as np

from combatsim.bench_case import BenchCase
from combatsim.prepared import bench_cases
from combatsim.tss.api import Combatant, simulate_attacks, simulate_fights
from combatsim.tss.model import Armour, Weapon
from combatsim.tss.prepared import Attack

SKILL, STEPS, DAMAGE = "16/8/4", -1, "d4w/d4+2w/d4-1m"
#: The inputs of tss.attack's calls (and of the prepared attack's).
ATTACK = dict(skill=SKILL, steps=STEPS, damage=DAMAGE, weapon_quality="good", armour="d6", armour_quality="ordinary")


def _attack(backend: str, n: int, threads: int) -> int:
    return int(simulate_attacks(n, **ATTACK, seed=1, backend=backend, threads=threads).counts[7])


def _attack_numpy(n: int) -> int:
    """The same attack in array form: tiers, the shifted damage types, secondary damage, the soak."""
    rng = np.random.default_rng(1)
    control = rng.integers(1, 21, size=n)
    total = control - rng.integers(1, 5, size=n)  # -d4
    amazing, good, ordinary = total <= 4, total <= 8, total <= 16
    hit = ordinary & (control != 20)
    die = rng.integers(1, 5, size=n)
    # Good weapon against Ordinary armour: every type one step up (w->m, m stays m).
    amount = np.where(amazing, die - 1, np.where(good, die + 2, die))
    amount = np.maximum(amount, 0) * hit
    soak = rng.integers(1, 7, size=n)
    primary = np.maximum(amount - soak, 0)
    half = amount >> 1
    mortal = int(primary.sum())
    stun = wound = int(half.sum())
    return mortal + 0 * (stun + wound)


PISTOL = Weapon.make(DAMAGE, "En", "good")
CEREMETAL = Armour.make({"En": "d6", "LI": "d4", "HI": "d4"}, "ordinary")
ALEX = Combatant(skill=SKILL, action_check="+14/13/6/3", weapon=PISTOL, durability=(10, 10, 5),
                 actions_per_round=2, armour=CEREMETAL)
THUG = Combatant(skill="12", action_check="+11/10/5/2", weapon=Weapon.make("d4s/d4+1w/d4+2w", "LI", "ordinary"),
                 durability=(8, 8, 4), actions_per_round=1, armour=CEREMETAL, defence_steps=3)


#: The sides of tss.fight's calls.
SIDES = dict(side_a=[ALEX], side_b=[THUG, THUG])


def _fight(backend: str, n: int, threads: int) -> int:
    return int(simulate_fights(n, **SIDES, seed=1, backend=backend, threads=threads).counts[0])


CASES = [
    BenchCase("tss.attack", _attack, _attack_numpy, compiled_items=200_000_000),
    BenchCase("tss.fight", _fight, None, compiled_items=1_000_000, python_items=2_000),
    # One prepared attack (combatsim.tss.Attack): tss.attack's pistol shot, call by call.
    *bench_cases("tss", lambda backend: Attack(**ATTACK, backend=backend)),
]
