"""What one ``combatsim bench`` case is (the cases live beside their rulesets; combatsim.bench finds them)."""

from __future__ import annotations

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
