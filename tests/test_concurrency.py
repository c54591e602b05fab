"""Concurrent calls from several Python threads give the same results as serial calls."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from combatsim.exp import simulate_to_hit


def test_concurrent_calls_equal_serial_calls(compiled_backend):
    jobs = [dict(n=200_000 + 17 * k, bonus=50 * k, maximum_roll=700 + 10 * k, armour_rating=550, seed=k, threads=2)
            for k in range(8)]
    serial = [simulate_to_hit(backend=compiled_backend, outcomes=True, **job) for job in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda job: simulate_to_hit(backend=compiled_backend, outcomes=True, **job), jobs))
    for one, other in zip(serial, concurrent, strict=True):
        assert one.hits == other.hits
        np.testing.assert_array_equal(one.to_hit, other.to_hit)


def test_concurrent_fights_equal_serial_fights():
    from combatsim.d100.api import Combatant, Weapon, simulate_fights

    fighters = [Combatant(side=0, fighting=60, weapon=Weapon(30, 2)), Combatant(side=1, fighting=55, weapon=Weapon(40, 2))]
    jobs = [dict(n=20_000 + k, seed=k, threads=2) for k in range(6)]
    serial = [simulate_fights(combatants=fighters, outcomes=True, **job) for job in jobs]
    with ThreadPoolExecutor(max_workers=3) as pool:
        concurrent = list(pool.map(lambda job: simulate_fights(combatants=fighters, outcomes=True, **job), jobs))
    for one, other in zip(serial, concurrent, strict=True):
        assert one.counts == other.counts
        np.testing.assert_array_equal(one.winner, other.winner)
