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
