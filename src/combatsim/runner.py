"""Streaming execution: items in chunks, each chunk split over threads into contiguous slices.

Outcomes are pure functions of (seed, item index, inputs), so neither the chunk size nor the
thread count changes a result: they only change how fast it arrives. Memory is bounded by one
chunk's outputs (none when per-item outputs are not requested) and one counts buffer per thread.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

#: Items per chunk, (pure Python, compiled): about 50 ms of one core's work. Large enough that
#: handing the slices to threads is noise (waking a sleeping thread costs 0.1-0.4 ms on a VM, which
#: held 4M-item to-hit chunks to 1.2x on 2 threads), small enough that Ctrl-C and a stop rule act
#: within a fraction of a second. The sizes only change speed, never a result.
CHUNK_ITEMS = {
    "exp.to_hit": (1 << 12, 1 << 26),
    "exp.attack": (1 << 11, 1 << 25),
    "d100.attack": (1 << 11, 1 << 24),
    "tss.attack": (1 << 11, 1 << 25),
    "exp.fight": (1 << 7, 1 << 15),
    "d100.fight": (1 << 8, 1 << 16),
    "tss.fight": (1 << 6, 1 << 14),
    "rl.exp_duels": (1 << 7, 1 << 15),
    "rl.d100_duels": (1 << 7, 1 << 15),
    "rl.tss_duels": (1 << 6, 1 << 14),
}
#: Chunk sizes of kernels not listed in CHUNK_ITEMS.
DEFAULT_CHUNK = (1 << 12, 1 << 22)


def default_chunk(kernel_name: str, backend: str) -> int:
    """Items per chunk when the caller does not choose (see CHUNK_ITEMS)."""
    python, compiled = CHUNK_ITEMS.get(kernel_name, DEFAULT_CHUNK)
    return python if backend == "python" else compiled


@dataclass
class RunResult:
    counts: np.ndarray
    items_done: int
    #: Interrupted (Ctrl-C): fewer items than asked for, whatever whole chunks were done.
    partial: bool
    #: Stopped on purpose by an observer's stop rule (e.g. a target confidence interval).
    stopped_early: bool = False


@dataclass(frozen=True)
class Observer:
    """Watches a run from outside the ruleset APIs (the CLI's progress bar, --target-error).

    ``progress(done, n)`` after every chunk; ``stop(done, totals)`` returning True ends the run
    after that chunk. Items are done in index order, so a run stopped after k items is exactly
    the first k items of the full run.
    """

    progress: Callable[[int, int], None] | None = None
    stop: Callable[[int, np.ndarray], bool] | None = None


_observer: contextvars.ContextVar[Observer | None] = contextvars.ContextVar("combatsim_observer", default=None)


@contextlib.contextmanager
def observe(progress: Callable[[int, int], None] | None = None,
            stop: Callable[[int, np.ndarray], bool] | None = None) -> Iterator[None]:
    token = _observer.set(Observer(progress, stop))
    try:
        yield
    finally:
        _observer.reset(token)


def after_chunk(done: int, n: int, totals: np.ndarray, progress: Callable[[int, int], None] | None) -> bool:
    """Report progress; True when an observer asks the run to stop here."""
    if progress is not None:
        progress(done, n)
    observer = _observer.get()
    if observer is None:
        return False
    if observer.progress is not None:
        observer.progress(done, n)
    return observer.stop is not None and done < n and bool(observer.stop(done, totals))


def run_kernel(
    kernel: Callable,
    *,
    n: int,
    seed: int,
    params: Sequence[object],
    per_item: Sequence[bool],
    counts_size: int,
    outputs: Sequence[np.ndarray] = (),
    threads: int = 1,
    chunk_size: int = 1 << 22,
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Call ``kernel(seed, start, count, *params, counts, *outputs)`` over items 0..n-1.

    ``per_item[k]`` marks ``params[k]`` as an array with one entry per item, sliced with the
    items; other params pass through whole. ``outputs`` have one entry per item, or are empty.
    Ctrl-C stops after the slices in flight and returns what was done, marked partial.
    """
    seed = np.uint64(seed)  # seeds past 2**63 must reach Numba as unsigned
    totals = np.zeros(counts_size, dtype=np.int64)
    done = 0
    slice_counts = [np.zeros(counts_size, dtype=np.int64) for _ in range(threads)]

    def run_slice(start: int, stop: int, counts: np.ndarray) -> None:
        sliced = [p[start:stop] if flag else p for p, flag in zip(params, per_item, strict=True)]
        outs = [out[start:stop] if out.shape[0] else out for out in outputs]
        kernel(seed, start, stop - start, *sliced, counts, *outs)

    pool = ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
    try:
        while done < n:
            stop = min(n, done + chunk_size)
            bounds = np.linspace(done, stop, threads + 1).astype(np.int64)
            for counts in slice_counts:
                counts[:] = 0
            jobs = [(int(bounds[t]), int(bounds[t + 1]), slice_counts[t]) for t in range(threads)]
            jobs = [job for job in jobs if job[1] > job[0]]
            if pool is None:
                for job in jobs:
                    run_slice(*job)
            else:
                futures = [pool.submit(run_slice, *job) for job in jobs]
                try:
                    for future in futures:
                        future.result()
                except KeyboardInterrupt:
                    for future in futures:
                        future.cancel()
                    pool.shutdown(wait=True)
                    raise
            for counts in slice_counts:
                totals += counts
            done = stop
            if after_chunk(done, n, totals, progress):
                return RunResult(totals, done, partial=False, stopped_early=True)
    except KeyboardInterrupt:
        return RunResult(totals, done, partial=True)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return RunResult(totals, done, partial=False)


def simulate(
    kernel_name: str,
    *,
    n: int,
    seed: int,
    backend: str | None,
    threads: int | None,
    chunk_size: int | None,
    params: Sequence[object],
    per_item: Sequence[bool],
    counts_size: int,
    outputs: Sequence[np.ndarray] = (),
    progress: Callable[[int, int], None] | None = None,
    executor: object = None,
) -> tuple[RunResult, str, int]:
    """Validate the run-level arguments, resolve the backend and stream the kernel.

    Ruleset APIs validate their own inputs first, then call this; the kernel itself never
    validates. ``executor`` is "local", "dask" or None (the one set by
    ``combatsim.executors.use_executor``, else local). Returns (result, backend used, threads used).
    """
    from combatsim.executors import resolve_executor, run_dask
    from combatsim.registry import get_kernel, resolve_backend
    from combatsim.validation import check_int, check_seed, check_threads

    n = check_int("n", n, 0, INT64_MAX_ITEMS)
    seed = check_seed(seed)
    threads = check_threads(threads)
    backend = resolve_backend(backend)
    choice = resolve_executor(executor)
    if chunk_size is not None:
        chunk_size = check_int("chunk_size", chunk_size, 1, 1 << 40)
    if choice.name == "dask":
        result = run_dask(choice, kernel_name=kernel_name, backend=backend, n=n, seed=seed, params=params,
                          per_item=per_item, counts_size=counts_size, outputs=outputs, chunk_size=chunk_size,
                          progress=progress)
        return result, backend, threads
    chunk = default_chunk(kernel_name, backend) if chunk_size is None else chunk_size
    kernel = get_kernel(kernel_name, backend)
    result = run_kernel(
        kernel,
        n=n,
        seed=seed,
        params=params,
        per_item=per_item,
        counts_size=counts_size,
        outputs=outputs,
        threads=min(threads, max(1, n)),
        chunk_size=chunk,
        progress=progress,
    )
    return result, backend, threads


#: Item indices are int64 in every kernel; counts accumulate in int64.
INT64_MAX_ITEMS = 2**62
