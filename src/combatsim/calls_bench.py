"""``combatsim bench`` cases for small calls, as a game loop makes them (see combatsim.bench).

- ``calls.fixed_cost.<kernel>``: ``simulate_*(1, ...)`` with validation and default threads, in
  calls per second, against numpy's one ``Generator.integers(1, 1001)`` call in the same run;
  beside it the kernel's own call on that one item (its argument conversions included), the part of
  the fixed cost that no Python-side change removes.
- ``calls.threads.<kernel>``: default threads against ``threads=1`` at n = 1, 1e3, 1e5 and 1e7
  (1e5 for fights, whose 1e7 take seconds a call): above 1 the split paid, below 1 it lost.
- ``calls.fights64.<ruleset>``: 64 fights of the ruleset's first example scenario through its
  ``scenario.run``, against the kernel alone on the same 64 fights plus three numpy calls (the
  fixed cost a call may have): at most 1 means the call costs at most twice the kernel's time
  plus that fixed cost.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from combatsim.bench_case import BenchCase, best_seconds

#: Calls timed per repeat of a fixed-cost measurement.
CALLS = 200


def _numpy_call_seconds(seconds: float) -> float:
    integers = np.random.default_rng(1).integers
    return best_seconds(lambda: integers(1, 1001), seconds, CALLS)


def _calls() -> dict[str, Callable[..., object]]:
    """kernel -> call(n, backend, threads) through its public API, on the bench cases' inputs."""
    from combatsim.d100 import bench as d100_bench
    from combatsim.d100.api import simulate_attacks as d100_attacks
    from combatsim.d100.api import simulate_fights as d100_fights
    from combatsim.exp import bench as exp_bench
    from combatsim.exp.api import simulate_attack, simulate_fight, simulate_to_hit
    from combatsim.tss import bench as tss_bench
    from combatsim.tss.api import simulate_attacks as tss_attacks
    from combatsim.tss.api import simulate_fights as tss_fights

    return {
        "exp.to_hit": lambda n, b, t: simulate_to_hit(n, **exp_bench.TO_HIT, seed=1, backend=b, threads=t),
        "exp.attack": lambda n, b, t: simulate_attack(n, **exp_bench.ATTACK, seed=1, backend=b, threads=t),
        "exp.fight": lambda n, b, t: simulate_fight(n, *exp_bench.FIGHTERS, seed=1, backend=b, threads=t),
        "d100.attack": lambda n, b, t: d100_attacks(n, **d100_bench.ATTACK, seed=1, backend=b, threads=t),
        "d100.fight": lambda n, b, t: d100_fights(n, d100_bench.FIGHTERS, seed=1, backend=b, threads=t),
        "tss.attack": lambda n, b, t: tss_attacks(n, **tss_bench.ATTACK, seed=1, backend=b, threads=t),
        "tss.fight": lambda n, b, t: tss_fights(n, **tss_bench.SIDES, seed=1, backend=b, threads=t),
    }


KERNELS = ("exp.to_hit", "exp.attack", "exp.fight", "d100.attack", "d100.fight", "tss.attack", "tss.fight")


def _fixed_cost(kernel: str) -> Callable[[list[str], float], list[dict]]:
    def measure(backends: list[str], seconds: float) -> list[dict]:
        call = _calls()[kernel]
        records = []
        for backend in backends:
            numpy_seconds = _numpy_call_seconds(seconds / 3)
            api_seconds = best_seconds(lambda b=backend: call(1, b, None), seconds / 3, CALLS // 4)
            kernel_seconds = best_seconds(_kernel_only(lambda b=backend: call(1, b, None)), seconds / 3,
                                          CALLS // 4)
            ratio = api_seconds / numpy_seconds
            records.append({
                "kernel": f"calls.fixed_cost.{kernel}", "backend": backend, "threads": None,
                "items_per_second": 1 / api_seconds, "numpy_calls_per_second": 1 / numpy_seconds,
                "ratio_to_numpy": ratio, "kernel_ratio_to_numpy": kernel_seconds / numpy_seconds,
                "line": f"calls.fixed_cost.{kernel:12s} {backend:7s} {api_seconds * 1e6:8.2f} us a call, "
                        f"{ratio:5.1f}x numpy's integers call ({numpy_seconds * 1e6:.2f} us); the kernel's "
                        f"own call {kernel_seconds / numpy_seconds:4.1f}x",
            })
        return records

    return measure


def _threads(kernel: str) -> Callable[[list[str], float], list[dict]]:
    sizes = (1, 1_000, 100_000) if kernel.endswith("fight") else (1, 1_000, 100_000, 10_000_000)

    def measure(backends: list[str], seconds: float) -> list[dict]:
        call = _calls()[kernel]
        records = []
        for backend in backends:
            for n in sizes:
                repeat = max(1, 2000 // (1 + n // 100))
                one = best_seconds(lambda b=backend, n=n: call(n, b, 1), seconds / 2, repeat)
                default = best_seconds(lambda b=backend, n=n: call(n, b, None), seconds / 2, repeat)
                records.append({
                    "kernel": f"calls.threads.{kernel}", "backend": backend, "threads": None, "n": n,
                    "items_per_second": n / default, "threads_1_items_per_second": n / one,
                    "ratio_to_one_thread": one / default,
                    "line": f"calls.threads.{kernel:12s} {backend:7s} n={n:<10,d} default threads "
                            f"{one / default:5.2f}x threads=1 ({default * 1e6:10.1f} against {one * 1e6:10.1f} us)",
                })
        return records

    return measure


def kernel_call(call: Callable[[], object]) -> tuple[Callable, tuple]:
    """(kernel, arguments) of the one kernel call that the API call ``call`` makes (a run of one
    chunk): replaying it adds the same counts to the same buffer."""
    from combatsim import runner

    seen: list[tuple] = []
    real = runner.get_kernel

    def recording(name: str, backend: str) -> Callable:
        kernel = real(name, backend)
        return lambda *arguments: seen.append((kernel, arguments)) or kernel(*arguments)

    runner.get_kernel = recording
    try:
        call()
    finally:
        runner.get_kernel = real
    (found,) = seen
    return found


def _kernel_only(call: Callable[[], object]) -> Callable[[], None]:
    kernel, arguments = kernel_call(call)
    return lambda: kernel(*arguments)


def _example(ruleset: str):
    from combatsim import scenario

    for name in scenario.example_names():
        loaded = scenario.load(scenario.example_path(name))
        if loaded.ruleset == ruleset:
            return loaded, scenario.ruleset_module(ruleset)
    raise ValueError(f"no example scenario of ruleset {ruleset!r}")


def _fights64(ruleset: str) -> Callable[[list[str], float], list[dict]]:
    def measure(backends: list[str], seconds: float) -> list[dict]:
        loaded, module = _example(ruleset)
        records = []
        for backend in backends:

            def fights(b: str = backend) -> object:
                return module.run(loaded.spec, n=64, seed=1, backend=b, threads=None)

            kernel_only = _kernel_only(fights)
            numpy_seconds = _numpy_call_seconds(seconds / 3)
            kernel_seconds = best_seconds(kernel_only, seconds / 3, 20)
            api_seconds = best_seconds(fights, seconds / 3, 20)
            ratio = api_seconds / (2 * kernel_seconds + 3 * numpy_seconds)
            records.append({
                "kernel": f"calls.fights64.{ruleset}", "backend": backend, "threads": None,
                "items_per_second": 64 / api_seconds, "kernel_items_per_second": 64 / kernel_seconds,
                "ratio_to_bound": ratio,
                "line": f"calls.fights64.{ruleset:5s} {backend:7s} {api_seconds * 1e6:8.1f} us a call, kernel "
                        f"{kernel_seconds * 1e6:8.1f} us, numpy call {numpy_seconds * 1e6:.2f} us: "
                        f"{ratio:.2f}x (2 x kernel + 3 numpy calls)",
            })
        return records

    return measure


def _case(name: str, custom: Callable[[list[str], float], list[dict]], compiled_only: bool = False) -> BenchCase:
    backends = ("numba", "cython") if compiled_only else ("python", "numba", "cython")
    return BenchCase(name, run=lambda backend, n, threads: None, numpy=None, backends=backends, custom=custom)


CASES = [
    *(_case(f"calls.fixed_cost.{kernel}", _fixed_cost(kernel)) for kernel in KERNELS),
    *(_case(f"calls.threads.{kernel}", _threads(kernel), compiled_only=True) for kernel in KERNELS),
    *(_case(f"calls.fights64.{ruleset}", _fights64(ruleset), compiled_only=True) for ruleset in ("exp", "d100", "tss")),
]
