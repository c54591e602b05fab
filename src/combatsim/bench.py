"""``combatsim bench``: every kernel timed in one run against pure Python and a numpy baseline.

Each ruleset lists its cases (combatsim.bench_case.BenchCase) in ``combatsim.<ruleset>.bench.CASES``;
this module discovers them. A case runs its public API
with a given backend, so the figures include validation and chunking as a user sees them. The
numpy baseline is what a user would write without combatsim (``rng.integers`` and array
arithmetic). Figures are items per second on the named number of threads; on a noisy machine
compare ratios within one run, not figures across runs.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable

from combatsim.bench_case import BenchCase, best_seconds
from combatsim.registry import RULESETS, available_backends


def cases() -> list[BenchCase]:
    found = []
    for ruleset in RULESETS:
        found.extend(importlib.import_module(f"combatsim.{ruleset}.bench").CASES)
    with contextlib.suppress(ImportError):  # the RL environments need the optional "rl" extra
        found.extend(importlib.import_module("combatsim.rl.bench").CASES)
        found.extend(importlib.import_module("combatsim.rl.train_bench").CASES)
    found.extend(importlib.import_module("combatsim.calls_bench").CASES)
    return found


def measure(call: Callable[[], object], items: int, seconds: float) -> float:
    """Best items/s over repeats filling ``seconds`` (after one warm-up call for JIT and caches)."""
    return items / best_seconds(call, seconds)


def run_benchmarks(kernels: list[str] | None = None, seconds: float = 0.5, quiet: bool = False,
                   announce: Callable[[str, int, int], None] | None = None) -> list[dict]:
    """Time the kernels (all, or those named in ``kernels``); ``announce(kernel, k, total)`` is
    told before the k-th of ``total`` kernels is timed."""
    records = []
    backends = available_backends()
    chosen = [case for case in cases() if not kernels or case.kernel in kernels]
    for number, case in enumerate(chosen, 1):
        if announce is not None:
            announce(case.kernel, number, len(chosen))
        if case.custom is not None:
            found = case.custom([b for b in backends if b in case.backends], seconds)
            records.extend(found)
            if not quiet:
                for record in found:
                    print(record["line"])
            continue
        plans: list[tuple[str, int, int, Callable[[], object]]] = []
        if "python" in backends:
            plans.append(("python", 1, case.python_items, lambda c=case: c.run("python", c.python_items, 1)))
        if case.numpy is not None:
            plans.append(("numpy", 1, case.numpy_items, lambda c=case: c.numpy(c.numpy_items)))
        for backend in ("numba", "cython"):
            if backend in backends and backend in case.backends:
                for threads in case.threads:
                    plans.append(
                        (backend, threads, case.compiled_items,
                         lambda c=case, b=backend, t=threads: c.run(b, c.compiled_items, t))
                    )
        for backend, threads, items, call in plans:
            rate = measure(call, items, seconds)
            record = {"kernel": case.kernel, "backend": backend, "threads": threads, "items_per_second": rate}
            records.append(record)
            if not quiet:
                print(f"{case.kernel:16s} {backend:7s} threads={threads}  {rate:14,.0f} items/s", file=sys.stdout)
        if not quiet:
            _print_ratios(case.kernel, [r for r in records if r["kernel"] == case.kernel])
    return records


def _print_ratios(kernel: str, records: list[dict]) -> None:
    by = {(r["backend"], r["threads"]): r["items_per_second"] for r in records}
    for backend in ("numba", "cython"):
        if (backend, 1) not in by:
            continue
        parts = [f"{kernel:16s} {backend} 1 thread:"]
        for baseline in ("numpy", "python"):
            if (baseline, 1) in by:
                parts.append(f"{by[(backend, 1)] / by[(baseline, 1)]:,.1f}x {baseline}")
        if (backend, 2) in by:
            parts.append(f"2 threads {by[(backend, 2)] / by[(backend, 1)]:.2f}x 1 thread")
        print("  ".join(parts))
