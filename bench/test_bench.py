"""pytest-benchmark suite: every bench case of every ruleset, in every backend plus numpy.

``pytest bench --benchmark-enable`` times them (tox -e bench); the default test run keeps
benchmarks disabled, so each case runs once as a smoke check of the benchmark code itself.
"""

from __future__ import annotations

import pytest

from combatsim.bench import cases

CASES = {case.kernel: case for case in cases()}
#: At most this many items per smoke run (a case's own figure, if smaller, wins: fights are slow).
ITEMS = {"python": 2_000, "numpy": 200_000, "numba": 2_000_000, "cython": 2_000_000}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("backend", ["python", "numpy", "numba", "cython"])
@pytest.mark.parametrize("kernel", sorted(CASES))
def test_kernel(benchmark, kernel, backend, threads):
    case = CASES[kernel]
    if backend in ("python", "numpy") and threads == 2:
        pytest.skip("single-threaded baseline")
    if backend == "numpy" and case.numpy is None:
        pytest.skip("no numpy baseline for this kernel")
    if backend in ("numba", "cython") and (backend not in case.backends or threads not in case.threads):
        pytest.skip("not a backend or thread count this case runs on")
    own = {"python": case.python_items, "numpy": case.numpy_items}.get(backend, case.compiled_items)
    items = min(ITEMS[backend], own)
    benchmark.extra_info["items"] = items
    if backend == "numpy":
        benchmark(case.numpy, items)
    else:
        case.run(backend, items, threads)  # JIT and caches outside the timing
        benchmark(case.run, backend, items, threads)
    stats = benchmark.stats
    if stats is not None:
        benchmark.extra_info["items_per_second"] = items / stats.stats.min


def test_every_ruleset_kernel_in_the_registry_is_benchmarked():
    from combatsim.registry import KERNELS, RULESETS

    registered = {f"{ruleset}.{name}" for ruleset in RULESETS for name in KERNELS[ruleset]}
    assert registered <= set(CASES)


@pytest.mark.parametrize("backend", ["python", "numba", "cython"])
def test_the_kernel_alone_rows_replay_the_api_calls_own_kernel_call(backend):
    """calls.fixed_cost and calls.fights64 time the kernel call an API call makes, alone."""
    import numpy as np

    from combatsim.calls_bench import kernel_call
    from combatsim.exp.api import simulate_to_hit

    def call():
        return simulate_to_hit(1000, bonus=110, maximum_roll=760, armour_rating=580, seed=7, backend=backend,
                               threads=1)

    hits = call().hits
    kernel, arguments = kernel_call(call)
    (counts,) = [a for a in arguments if isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape == (1,)
                 and a.flags.writeable and a[0] == hits]
    kernel(*arguments)
    assert 0 < hits < 1000 and counts[0] == 2 * hits
