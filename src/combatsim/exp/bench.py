"""Benchmark cases for EXP (see combatsim.bench)."""

from __future__ import annotations

import numpy as np

from combatsim.bench import BenchCase
from combatsim.exp.api import simulate_to_hit

BONUS, MAXIMUM_ROLL, ARMOUR_RATING = 110, 760, 580


def _to_hit(backend: str, n: int, threads: int) -> int:
    return simulate_to_hit(
        n, bonus=BONUS, maximum_roll=MAXIMUM_ROLL, armour_rating=ARMOUR_RATING, seed=1, backend=backend, threads=threads
    ).hits


def _to_hit_numpy(n: int) -> int:
    rng = np.random.default_rng(1)
    rolls = rng.integers(1, 1001, size=n)
    return int(np.count_nonzero(np.minimum(rolls + BONUS, MAXIMUM_ROLL) > ARMOUR_RATING))


CASES = [BenchCase("exp.to_hit", _to_hit, _to_hit_numpy, compiled_items=200_000_000)]
