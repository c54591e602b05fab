"""Where chunks run: this process (``local``, threads) or a Dask cluster (``dask``).

Every chunk is a pure function of (kernel, backend, seed, item range, inputs), so a Dask run is
bit-identical to a local run with the same seed, whatever the number of workers and chunks.
dask is an optional extra (``pip install "combatsim[dask]"``).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

EXECUTORS = ("local", "dask")
#: Items per Dask task: big enough that scheduling costs little next to the kernel.
DASK_CHUNK = {"python": 1 << 14, "numba": 1 << 26, "cython": 1 << 26}


@dataclass(frozen=True)
class ExecutorChoice:
    name: str = "local"
    #: A Dask scheduler address, or an existing ``dask.distributed.Client``; None starts a LocalCluster.
    scheduler: object = None


_current: contextvars.ContextVar[ExecutorChoice] = contextvars.ContextVar(
    "combatsim_executor", default=ExecutorChoice()  # noqa: B039 (frozen dataclass: immutable)
)


def resolve_executor(executor: str | ExecutorChoice | None, scheduler: object = None) -> ExecutorChoice:
    if executor is None:
        return _current.get()
    if isinstance(executor, ExecutorChoice):
        return executor
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(map(repr, EXECUTORS))}; got {executor!r}")
    if executor == "dask":
        require_dask()
    return ExecutorChoice(executor, scheduler)


@contextlib.contextmanager
def use_executor(executor: str = "dask", scheduler: object = None) -> Iterator[ExecutorChoice]:
    """Run every simulation inside the ``with`` block on ``executor``."""
    choice = resolve_executor(executor, scheduler)
    token = _current.set(choice)
    try:
        yield choice
    finally:
        _current.reset(token)


def require_dask() -> None:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise ValueError(
            'executor "dask" needs the dask extra: pip install "combatsim[dask]" (dask and distributed)'
        ) from None


def _run_chunk(kernel_name: str, backend: str, seed: int, start: int, stop: int, params, counts_size: int,
               output_kinds: Sequence[tuple[np.dtype, bool]]):
    """One Dask task: items start..stop-1, on one thread of the worker."""
    from combatsim.registry import get_kernel

    counts = np.zeros(counts_size, dtype=np.int64)
    outputs = [np.zeros(stop - start if wanted else 0, dtype=dtype) for dtype, wanted in output_kinds]
    get_kernel(kernel_name, backend)(np.uint64(seed), start, stop - start, *params, counts, *outputs)
    return start, stop, counts, outputs


def run_dask(
    choice: ExecutorChoice,
    *,
    kernel_name: str,
    backend: str,
    n: int,
    seed: int,
    params: Sequence[object],
    per_item: Sequence[bool],
    counts_size: int,
    outputs: Sequence[np.ndarray],
    chunk_size: int | None,
    progress: Callable[[int, int], None] | None,
):
    """Submit one task per chunk and sum the counts; Ctrl-C cancels what has not finished.

    Chunks are gathered in index order, so a stop rule sees (and a stopped run keeps) exactly
    the first items, as in a local run.
    """
    from dask.distributed import Client, LocalCluster

    from combatsim.runner import RunResult, after_chunk

    own_client = not hasattr(choice.scheduler, "submit")
    if own_client:
        client = Client(choice.scheduler) if choice.scheduler else Client(
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        )
    else:
        client = choice.scheduler
    chunk = chunk_size or DASK_CHUNK[backend]
    output_kinds = [(out.dtype, out.shape[0] > 0) for out in outputs]
    totals = np.zeros(counts_size, dtype=np.int64)
    done = 0
    futures = []
    try:
        for start in range(0, n, chunk):
            stop = min(n, start + chunk)
            sliced = [p[start:stop] if flag else p for p, flag in zip(params, per_item, strict=True)]
            futures.append(
                client.submit(_run_chunk, kernel_name, backend, int(seed), start, stop, sliced, counts_size,
                              output_kinds, pure=False)
            )
        for future in futures:
            start, stop, counts, chunk_outputs = future.result()
            totals += counts
            for out, part in zip(outputs, chunk_outputs, strict=True):
                if out.shape[0]:
                    out[start:start + part.shape[0]] = part
            done = stop
            if after_chunk(done, n, totals, progress):
                client.cancel(futures)
                return RunResult(totals, done, partial=False, stopped_early=True)
    except KeyboardInterrupt:
        client.cancel(futures)
        return RunResult(totals, done, partial=True)
    finally:
        if own_client:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()
    return RunResult(totals, done, partial=False)
