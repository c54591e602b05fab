"""Benchmark cases for d100 (see combatsim.bench): "d100.attack" and "d100.fight".

Figures are attacks per second. For fights the run's attack count (``counts["attacks"]``) is
measured once and the fight benchmark is reported in attacks per second too: the bench harness
times ``compiled_items`` fights, so the case scales its figure by attacks per fight.
"""

from __future__ import annotations

import functools

import numpy as np

from combatsim.bench_case import BenchCase
from combatsim.d100 import model
from combatsim.d100.api import Combatant, Weapon, attack_parameters, simulate_attacks, simulate_fights
from combatsim.d100.prepared import Attack
from combatsim.prepared import bench_cases

#: A trained fighter with a specialty, a rifle-like weapon, against light armour.
ATTACK = dict(pool=60, specialty=(2,), lethality=30, severity=2, armour="light")

#: Two against two, mixed weapons, so that every action and escalation occurs.
FIGHTERS = (
    Combatant(side=0, fighting=60, parkour=40, perception=50, weapon=Weapon(30, 2), specialty=(2,)),
    Combatant(side=0, fighting=50, parkour=30, perception=40, weapon=Weapon(20, 3, category="pistol"),
              second_weapon=Weapon(20, 3, category="pistol"), two_gun_style=2, torso="light"),
    Combatant(side=1, fighting=55, parkour=50, perception=45, weapon=Weapon(40, 2, category="carbine"),
              torso="heavy", helmet=True),
    Combatant(side=1, fighting=45, parkour=60, perception=60, weapon=Weapon(25, 2, nonlethal=True)),
)


def _attack(backend: str, n: int, threads: int) -> int:
    return simulate_attacks(n, seed=1, backend=backend, threads=threads, **ATTACK).counts["lethal"]


def _attack_numpy(n: int) -> int:
    """The numpy way: two d100 arrays, tiers by comparisons, wounds by masks."""
    p = attack_parameters(**ATTACK)
    critical, hard, success, critical_failure = model.tier_bars(p.full_skill)
    lethal, worse = model.damage_bars(p.lethality, p.serious_threshold, p.nonlethal)
    rng = np.random.default_rng(1)
    roll = rng.integers(1, 101, size=n)
    damage = rng.integers(1, 101, size=n)
    succeeded = roll <= success
    counts = [
        np.count_nonzero(roll <= critical), np.count_nonzero(roll <= hard), np.count_nonzero(succeeded),
        np.count_nonzero(roll > critical_failure), np.count_nonzero(succeeded & (damage <= lethal)),
        np.count_nonzero(succeeded & (damage <= worse)),
    ]
    return int(sum(counts))


@functools.cache
def attacks_per_fight() -> float:
    """Attacks per fight of this setup, measured once (fixed seed) to express fights as attacks/s."""
    result = simulate_fights(20_000, FIGHTERS, seed=1, backend="auto", threads=1)
    return result.counts["attacks"] / result.fights


def _fight(backend: str, n: int, threads: int) -> int:
    # ``n`` is in attacks (the bench's unit); run the number of fights that make about n attacks.
    fights = max(1, int(n / attacks_per_fight()))
    return simulate_fights(fights, FIGHTERS, seed=1, backend=backend, threads=threads).counts["attacks"]


CASES = [
    BenchCase("d100.attack", _attack, _attack_numpy, compiled_items=100_000_000),
    BenchCase("d100.fight", _fight, None, compiled_items=5_000_000, python_items=5_000),
    # One prepared attack (combatsim.d100.Attack) resolved and asked its odds, call by call.
    *bench_cases("d100", lambda backend: Attack(**ATTACK, backend=backend)),
]
