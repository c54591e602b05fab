"""What one ``combatsim bench`` case is (the cases live beside their rulesets; combatsim.bench finds them)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class BenchCase:
    kernel: str
    #: run(backend, n, threads) simulates n items through the public API.
    run: Callable[[str, int, int], object]
    #: numpy(n) does the same work the way a numpy user would, or None.
    numpy: Callable[[int], object] | None
    compiled_items: int = 20_000_000
    python_items: int = 20_000
    numpy_items: int = 2_000_000
    #: The compiled backends this case runs on.
    backends: tuple[str, ...] = ("numba", "cython")
    #: Thread counts of the compiled runs (1 only for cases that time single calls).
    threads: tuple[int, ...] = (1, 2)
    #: A case that measures itself: custom(backends, seconds) -> records (kernel, backend, threads,
    #: items_per_second, the case's own fields and a "line" to print). run and numpy are unused.
    custom: Callable[[list[str], float], list[dict]] | None = None


def best_seconds(call: Callable[[], object], seconds: float, calls: int = 1) -> float:
    """Best seconds per call over repeats of ``calls`` calls filling ``seconds`` (after a warm-up)."""
    call()
    best = float("inf")
    spent = 0.0
    repeats = 0
    while spent < seconds or repeats < 3:
        start = time.perf_counter()
        for _ in range(calls):
            call()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed / calls)
        spent += elapsed
        repeats += 1
    return best
