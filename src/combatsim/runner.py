"""Streaming execution: items in chunks, each chunk split over threads into contiguous slices.

Outcomes are pure functions of (seed, item index, inputs), so neither the chunk size nor the
thread count changes a result: they only change how fast it arrives. Chunks are sized by their
estimated cost in time (about CHUNK_SECONDS of one core's work), from the kernel's cost per unit
of work and the API's estimate of the work an item takes, so Ctrl-C and a stop rule act within a
fraction of a second whatever the inputs. The chunk sizes follow from the inputs and the counts
alone, never from a clock, so a run stopped by a stop rule is reproducible.

Memory is bounded by one chunk's outputs (none when per-item outputs are not requested) and one
counts buffer per thread in flight, whose total is capped by COUNTS_BUFFER_BYTES.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import MISSING, dataclass, fields
from typing import NamedTuple

import numpy as np

from combatsim.registry import get_kernel, resolve_backend
from combatsim.validation import (
    CPU_COUNT,
    SEED_MAX,
    check_bool,
    check_int,
    check_progress,
    check_seed,
    check_threads,
    remember,
)

#: Item indices are int64 in every kernel; counts accumulate in int64.
INT64_MAX_ITEMS = 2**62
#: One core's work in a chunk: large enough that handing slices to threads is noise, small enough
#: that Ctrl-C and a stop rule act within a fraction of a second.
CHUNK_SECONDS = 0.05
#: The least one core's work a thread is handed: waking a pool thread and joining it costs tens of
#: microseconds (0.1-0.4 ms on a busy VM), so a slice smaller than this runs faster on the caller.
SPLIT_SECONDS = 0.001
#: All threads' count buffers together (a fight's histogram can hold a million rounds).
COUNTS_BUFFER_BYTES = 64 << 20
#: Per-item outputs (``outcomes=True``) a run may allocate.
OUTPUT_BYTES = 4 << 30

#: Seconds of one core's work per unit of work, (pure Python, compiled). A unit is what the
#: ruleset API counts in its Work: an attack (exp.to_hit, d100.attack), a to-hit roll with a
#: damage die costing three (exp.attack and each exp.fight unit), a die rolled (tss.attack, each
#: TSS fight round), a combatant's pass (d100.fight). Measured with one thread on the development
#: machine under load (Cython; Numba is within 1.5x), rounded up: an overestimate only makes chunks
#: smaller.
UNIT_SECONDS = {
    "exp.to_hit": (1.2e-5, 0.8e-9),
    "exp.attack": (4.5e-6, 1.5e-9),
    "d100.attack": (1.5e-5, 1.2e-9),
    "tss.attack": (5e-6, 4e-9),
    "exp.fight": (4e-6, 8e-9),
    "d100.fight": (2.5e-5, 3e-8),
    "tss.fight": (4e-5, 2.5e-8),
}
#: The cost of kernels not listed in UNIT_SECONDS.
DEFAULT_UNIT_SECONDS = (1.2e-5, 1.2e-8)


def items_for_seconds(kernel_name: str, backend: str, seconds: float, work_per_item: float = 1.0) -> int:
    """How many items of ``work_per_item`` units take about ``seconds`` of one core (at least 1)."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds must be a finite number > 0, got {seconds!r}")
    if not (isinstance(work_per_item, int | float) and math.isfinite(work_per_item) and work_per_item > 0):
        raise ValueError(f"work_per_item must be a finite number > 0, got {work_per_item!r}")
    return _items(_unit_seconds(kernel_name, backend), seconds, work_per_item)


def _unit_seconds(kernel_name: str, backend: str) -> float:
    python, compiled = UNIT_SECONDS.get(kernel_name, DEFAULT_UNIT_SECONDS)
    return python if backend == "python" else compiled


def _items(unit_seconds: float, seconds: float, work_per_item: float) -> int:
    return max(1, min(INT64_MAX_ITEMS, int(seconds / (unit_seconds * work_per_item))))


def default_chunk(kernel_name: str, backend: str, work_per_item: float = 1.0) -> int:
    """Items per chunk when the caller does not choose: about CHUNK_SECONDS of one core's work."""
    return items_for_seconds(kernel_name, backend, CHUNK_SECONDS, work_per_item)


@dataclass(frozen=True)
class Work:
    """An API's estimate of the work one item takes, in the kernel's units (see UNIT_SECONDS).

    ``least`` decides how a chunk is split over threads (never split work that may be too small
    to pay for it); ``most`` sizes the chunks (never a chunk that may run for minutes). When the
    counts measure the work done (a fight's units, rounds or steps), ``counted`` names that count
    and ``per_count`` the work each of its units takes beyond ``least``: after each chunk both
    estimates become the work measured so far, so long fights get small chunks and short fights
    large ones. The counts do not depend on the threads or the clock, so neither do the chunks.
    """

    least: float = 1.0
    most: float = 1.0
    counted: int | None = None
    per_count: float = 1.0

    def measured(self, totals: np.ndarray, done: int) -> float:
        """The work an item has taken so far, within [least, most]."""
        return min(self.most, self.least + self.per_count * float(totals[self.counted]) / done)


ONE_UNIT = Work()
#: A chunk may grow at most this many times over the previous one as the measured work allows.
CHUNK_GROWTH = 8


@dataclass(slots=True)
class RunResult:
    counts: np.ndarray
    items_done: int
    #: Interrupted (Ctrl-C): fewer items than asked for, whatever whole chunks were done.
    partial: bool
    #: Stopped on purpose by an observer's stop rule (e.g. a target confidence interval).
    stopped_early: bool = False
    #: From simulate: {result field: the items done's per-item output, or None without outcomes}.
    outcomes: dict | None = None


@dataclass(frozen=True)
class Observer:
    """Watches a run from outside the ruleset APIs (the CLI's progress bar, --target-error).

    ``progress(done, n)`` after every chunk; ``stop(done, totals)`` returning True ends the run
    after that chunk. Items are done in index order, so a run stopped after k items is exactly
    the first k items of the full run.
    """

    progress: Callable[[int, int], None] | None = None
    stop: Callable[[int, np.ndarray], bool] | None = None


#: Where runs in this context go: None runs them here; combatsim.executors.use_executor sets a Dask
#: choice (its ``run`` takes simulate's arguments and returns a RunResult).
EXECUTOR: contextvars.ContextVar[object | None] = contextvars.ContextVar("combatsim_executor", default=None)
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


#: One pool for the process, made on first use: a pool made per call cost 0.5-2 ms a call.
#: Several Python threads may submit to it at once; each waits only on its own slices.
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    """In a forked child the pool's threads do not exist: the next split makes a new pool."""
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=max(1, CPU_COUNT), thread_name_prefix="combatsim")
    return _pool


def max_threads(counts_size: int) -> int:
    """Threads whose count buffers fit COUNTS_BUFFER_BYTES (at least 1)."""
    return max(1, COUNTS_BUFFER_BYTES // (8 * max(1, counts_size)))


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
    chunk_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    kernel_name: str = "",
    backend: str = "cython",
    work: Work = ONE_UNIT,
    min_items_per_thread: int | None = None,
) -> RunResult:
    """Call ``kernel(seed, start, count, *params, counts, *outputs)`` over items 0..n-1.

    ``per_item[k]`` marks ``params[k]`` as an array with one entry per item, sliced with the
    items; other params pass through whole. ``outputs`` have one entry per item, or are empty.
    Chunks are ``chunk_size`` items, or sized from ``work`` (see Work); a chunk is split over up
    to ``threads`` threads, each given at least ``min_items_per_thread`` items (default: about
    SPLIT_SECONDS of work). Ctrl-C stops after the slices in flight and returns the whole chunks
    done, marked partial.
    """
    seed = np.uint64(seed)  # seeds past 2**63 must reach Numba as unsigned
    unit = _unit_seconds(kernel_name, backend)
    if chunk_size is None and min_items_per_thread is None and _one_slice(unit, n, threads, work):
        return _run_whole(kernel, n, seed, params, counts_size, outputs, progress)
    threads = min(threads, max_threads(counts_size))
    sliced_params = [k for k, flag in enumerate(per_item) if flag]
    sliced_outputs = [k for k, out in enumerate(outputs) if out.shape[0]]
    fixed_split = min_items_per_thread
    most, least = work.most, work.least
    totals = np.zeros(counts_size, dtype=np.int64)
    done = 0
    previous = 0

    def run_slice(start: int, stop: int) -> np.ndarray:
        args = list(params)
        for k in sliced_params:
            args[k] = args[k][start:stop]
        outs = list(outputs)
        for k in sliced_outputs:
            outs[k] = outs[k][start:stop]
        counts = np.zeros(counts_size, dtype=np.int64)
        kernel(seed, start, stop - start, *args, counts, *outs)
        return counts

    try:
        while done < n:
            if chunk_size is not None:
                items = chunk_size
            else:
                items = _items(unit, CHUNK_SECONDS, most)
                if previous:
                    items = min(items, CHUNK_GROWTH * previous)
            stop = min(n, done + items)
            count = stop - done
            if threads > 1:
                smallest = fixed_split or _items(unit, SPLIT_SECONDS, least)
                slices = max(1, min(threads, count // smallest))
            else:
                slices = 1
            chunk_counts = run_slice(done, stop) if slices == 1 else _run_split(run_slice, done, count, slices)
            totals += chunk_counts
            previous = count
            done = stop
            if work.counted is not None:
                most = least = work.measured(totals, done)
            if (progress is not None or _observer.get() is not None) and after_chunk(done, n, totals, progress):
                return RunResult(totals, done, partial=False, stopped_early=True)
    except KeyboardInterrupt:
        return RunResult(totals, done, partial=True)
    return RunResult(totals, done, partial=False)


def _one_slice(unit_seconds: float, n: int, threads: int, work: Work) -> bool:
    """A run of one chunk that is not worth splitting over threads (with the default chunks)."""
    # _items written out (n <= int(x) is n <= x for an integer n): this decides every small call
    if n > 1 and n > CHUNK_SECONDS / (unit_seconds * work.most):
        return False
    return threads == 1 or n < 2 * max(1, int(SPLIT_SECONDS / (unit_seconds * work.least)))


def _run_whole(kernel: Callable, n: int, seed: np.uint64, params: Sequence[object], counts_size: int,
               outputs: Sequence[np.ndarray], progress: Callable[[int, int], None] | None) -> RunResult:
    """A run of one chunk on the calling thread: the game loop's small call, with nothing to slice."""
    counts = np.zeros(counts_size, dtype=np.int64)
    try:
        kernel(seed, 0, n, *params, counts, *outputs)
        if progress is not None or _observer.get() is not None:
            after_chunk(n, n, counts, progress)
    except KeyboardInterrupt:
        return RunResult(np.zeros(counts_size, dtype=np.int64), 0, partial=True)
    return RunResult(counts, n, partial=False)


def _run_split(run_slice: Callable[[int, int], np.ndarray], start: int, count: int, slices: int) -> np.ndarray:
    """Items start..start+count-1 in ``slices`` contiguous slices: the first on this thread, the
    rest on the shared pool. Ctrl-C waits for the slices running and drops the chunk."""
    bounds = [start + count * t // slices for t in range(slices + 1)]
    pool = _shared_pool()
    futures: list[Future] = []
    try:
        futures = [pool.submit(run_slice, bounds[t], bounds[t + 1]) for t in range(1, slices)]
        counts = run_slice(bounds[0], bounds[1])
        for future in futures:
            counts += future.result()
    except BaseException:
        for future in futures:
            future.cancel()
        wait_for(futures)
        raise
    return counts


class RunArguments(NamedTuple):
    """A run's own arguments, checked (see check_run)."""

    n: int
    seed: int
    threads: int
    chunk_size: int | None
    backend: str
    outcomes: bool
    progress: Callable[[int, int], None] | None
    executor: object
    #: The backend as the caller named it ("auto" included), for the engine's policy path.
    asked_backend: object = "auto"


RUN_OPTIONS_DOC = """
    Run options, shared by every ``simulate_*`` function: ``seed`` (0..2**64-1) with the item
    index fixes every outcome; ``backend`` "auto", "cython", "numba" or "python"; ``threads``
    (default: all cores) and ``chunk_size`` change only the speed; ``outcomes=True`` returns the
    per-item arrays (memory grows with n); ``progress(done, n)`` is called after each chunk. Ctrl-C
    returns the items done so far, with ``partial=True``.
"""


def simulation(output_bytes_per_item: int, inputs: Callable | None = None) -> Callable[[Callable], Callable]:
    """A ruleset's public ``simulate_*(n, ..., seed=0, backend="auto", ...)`` from its body
    ``f(run, /, ...)``: the run options (RUN_OPTIONS) are defined and checked here, once, before
    any ruleset input, and the body gets them as one RunArguments. ``output_bytes_per_item`` is
    what ``outcomes=True`` stores for an item (check_run). With ``inputs`` (the ruleset's check of
    one attack's inputs, which its prepared ``Attack`` takes too) the body is ``f(run, /, **attack)``
    and the public keywords are ``inputs``'s keyword-only parameters."""

    def make(body: Callable) -> Callable:
        own = list(inspect.signature(body).parameters.values())[1:]
        if inputs is not None:
            own = keyword_only(inputs)
        first = inspect.Parameter("n", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="int")
        positional = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in own
                      if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        keywords = [p for p in own if p.kind is inspect.Parameter.KEYWORD_ONLY]
        options = ", ".join(option.name for option in RUN_OPTIONS)
        run = f"_check_run({output_bytes_per_item}, n, {options})"
        api = exact_function(body.__name__, [first, *positional, *keywords, *RUN_OPTIONS],
                             f"_body({run}, {passing(positional + keywords)})",
                             {"_body": body, "_check_run": check_run})
        api.__signature__ = inspect.signature(body).replace(parameters=[first, *positional, *keywords, *RUN_OPTIONS])
        api.__doc__ = (body.__doc__ or "").rstrip() + "\n" + RUN_OPTIONS_DOC
        api.__module__ = body.__module__
        return api

    return make


def keyword_only(function: Callable) -> list[inspect.Parameter]:
    """``function``'s keyword-only parameters: a ruleset's attack inputs."""
    return [p for p in inspect.signature(function).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]


def passing(parameters: Sequence[inspect.Parameter]) -> str:
    """The source text that passes ``parameters`` on as they were taken: positional, then by keyword."""
    return ", ".join(p.name if p.kind is not inspect.Parameter.KEYWORD_ONLY else f"{p.name}={p.name}"
                     for p in parameters)


def exact_function(name: str, parameters: Sequence[inspect.Parameter], returns: str, names: dict) -> Callable:
    """A function ``name(<parameters>)`` that returns the Python expression ``returns`` (over the
    parameters and ``names``), compiled once: Python itself binds the arguments and words the
    errors for a missing or unknown keyword, at a plain call's cost (packing keywords into a dict
    and checking them by hand cost about a microsecond a call)."""
    namespace = dict(names)
    text = []
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and "*" not in text:
            text.append("*")
        if parameter.default is inspect.Parameter.empty:
            text.append(parameter.name)
        else:
            namespace[f"_default_{parameter.name}"] = parameter.default
            text.append(f"{parameter.name}=_default_{parameter.name}")
    exec(f"def {name}({', '.join(text)}):\n    return {returns}\n", namespace)
    return namespace[name]


def check_run(
    output_bytes_per_item: int,
    n: int,
    seed: int = 0,
    backend: str = "auto",
    threads: int | None = None,
    chunk_size: int | None = None,
    outcomes: bool = False,
    progress: Callable[[int, int], None] | None = None,
    *,
    executor: object = None,
) -> RunArguments:
    """Check a run's own arguments, cheapest first, before any ruleset input or allocation: ``n``
    and the run options (RUN_OPTIONS: the parameters with defaults, before ``executor``).

    ``output_bytes_per_item`` is what ``outcomes=True`` stores for an item: n is refused past
    OUTPUT_BYTES of them, before anything is allocated.
    """
    if not (type(seed) is int and type(n) is int and 0 <= seed <= SEED_MAX and 0 <= n <= INT64_MAX_ITEMS):
        seed = check_seed(seed)
        n = check_int("n", n, 0, INT64_MAX_ITEMS)
    if outcomes is not False:
        outcomes = check_bool("outcomes", outcomes)
    if outcomes and n * output_bytes_per_item > OUTPUT_BYTES:
        limit = OUTPUT_BYTES // output_bytes_per_item
        raise ValueError(f"n must be at most {limit} with outcomes=True ({OUTPUT_BYTES >> 30} GiB of per-item "
                         f"outputs, {output_bytes_per_item} bytes an item), got {n}")
    threads = check_threads(threads)
    if chunk_size is not None:
        chunk_size = check_int("chunk_size", chunk_size, 1, 1 << 40)
    progress = check_progress(progress)
    # tuple.__new__: the NamedTuple's own __new__ costs twice as much
    return _new_tuple(RunArguments, (n, seed, threads, chunk_size, resolve_backend(backend), outcomes, progress,
                                     EXECUTOR.get() if executor is None else executor, backend))


_new_tuple = tuple.__new__
#: The run options every ruleset's ``simulate_*`` function takes by keyword, after its own inputs
#: (see :func:`simulation`): check_run's, with their defaults and types.
RUN_OPTIONS = tuple(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in inspect.signature(check_run).parameters.values()
                    if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is not inspect.Parameter.empty)


def make_result(cls: type, values: dict) -> object:
    """``cls(**values)`` for a ruleset's frozen result dataclass, made without its generated
    ``__init__``: that sets each field through ``object.__setattr__``, about 2 us for a result of
    14 fields, the largest part of a small call's fixed cost. The values come checked from the
    run; fields left out take their defaults, as with the constructor (tests compare the two)."""
    made = object.__new__(cls)
    made.__dict__.update(values)
    for name, factory in _factories(cls):
        if name not in values:
            made.__dict__[name] = factory()
    return made


_default_factories: dict[type, tuple] = {}


def _factories(cls: type) -> tuple:
    """(name, default_factory) of ``cls``'s fields that have one (other defaults are class attributes)."""
    found = _default_factories.get(cls)
    if found is None:
        found = _default_factories[cls] = tuple(
            (f.name, f.default_factory) for f in fields(cls) if f.default_factory is not MISSING)
    return found


def nonzero_counts(histogram: np.ndarray, first: int = 0) -> dict[int, int]:
    """{first + k: histogram[k]} for each nonzero entry: time that grows with the entries filled,
    not with the histogram's length (a limit of a million rounds makes a long one)."""
    filled = np.flatnonzero(histogram)
    return dict(zip((filled + first).tolist(), histogram[filled].tolist(), strict=True))


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    """How a ruleset API's run went: the fields every result dataclass of the APIs shares (keyword
    fields, so each result's own fields come first in its constructor)."""

    seed: int
    backend: str
    threads: int
    #: Interrupted (Ctrl-C): fewer items than asked for, whatever whole chunks were done.
    partial: bool = False

    def record(self, *names: str) -> dict:
        """The ``as_dict`` record of the attributes ``names`` (tuples and arrays as lists), closed
        by how the run went: seed, backend, threads, partial."""
        return {name: _plain(getattr(self, name)) for name in (*names, "seed", "backend", "threads", "partial")}


def _plain(value: object) -> object:
    """A record's value as JSON writes it: tuples and arrays as lists of Python numbers."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, kw_only=True)
class FightInfo(RunInfo):
    """What every ruleset's fight result reports alike. A subclass has ``fights`` and gives
    ``wins`` (side 0's, side 1's) and ``draws`` (fields or properties); its ``as_dict`` begins with
    :meth:`fight_record`, so the keys the rulesets share have one shape."""

    #: per combatant, in the ruleset's order: the fights it ended still in the fight
    standing: tuple[int, ...] = ()

    @property
    def draw_rate(self) -> float:
        return self.draws / self.fights if self.fights else 0.0

    def fight_record(self) -> dict:
        """The record's shared keys: fights, wins and win rates per side, draws, draw rate, standing."""
        fights = self.fights or 1
        return {"fights": self.fights, "wins": list(self.wins), "win_rates": [wins / fights for wins in self.wins],
                "draws": self.draws, "draw_rate": self.draw_rate, "standing": list(self.standing)}


def with_executor(record: dict) -> dict:
    """A simulation's record with the executor it ran on (``"local"`` or ``"dask"``, the one in
    effect now: the CLI reports inside the run's ``use_executor``). On Dask each task runs on one
    worker thread, so ``threads`` is 1 there."""
    choice = EXECUTOR.get()
    name = "local" if choice is None else getattr(choice, "name", "local")
    return {**record, "executor": name, **({"threads": 1} if name == "dask" else {})}


def run_line(record: dict) -> str:
    """How a run ran, in words: backend, executor and threads."""
    if record.get("executor") == "dask":
        return f"backend {record['backend']}, executor dask (each task on one worker thread)"
    return f"backend {record['backend']}, executor local, {record['threads']} thread(s)"


def run_result(cls: type, run: RunArguments, result: RunResult, threads: int, /, **values: object) -> object:
    """A ruleset's result dataclass (a RunInfo) of a finished run: make_result with how it ran."""
    values.update(result.outcomes, seed=run.seed, backend=run.backend, threads=threads, partial=result.partial)
    return make_result(cls, values)


def simulate(
    kernel_name: str,
    run: RunArguments,
    *,
    params: Sequence[object],
    per_item: Sequence[bool] | None = None,
    counts_size: int,
    outputs: tuple[tuple[str, str], ...] = (),
    work: Work = ONE_UNIT,
) -> tuple[RunResult, str, int]:
    """Stream the kernel over ``run.n`` items (arguments checked by check_run, inputs by the API).

    ``per_item`` as in run_kernel (default: no param is per item). ``outputs`` are the kernel's
    per-item outputs, in its order, as (result field, dtype name); with ``run.outcomes`` they are
    allocated for every item and ``result.outcomes`` maps each field to its array cut to the items
    done, else to None.
    The kernel itself never validates. Threads used are at most the cores (and as many as the
    count buffers allow); returns (result, backend used, threads allowed).
    """
    n, seed, threads, chunk_size, backend, outcomes, progress, executor, _ = run
    threads = min(threads, CPU_COUNT, max_threads(counts_size))
    if per_item is None:
        per_item = (False,) * len(params)
    if outcomes:
        arrays = tuple(np.empty(n, dtype=dtype) for _, dtype in outputs)
    else:
        arrays, unasked = _no_outputs(outputs)
    dask = executor is not None and executor.name == "dask"
    if not dask and chunk_size is None and (n < 2 or _one_slice(_unit_seconds(kernel_name, backend), n, threads, work)):
        result = _run_whole(get_kernel(kernel_name, backend), n, np.uint64(seed), params, counts_size, arrays,
                            progress)
    else:
        # the chunked run, here or on Dask (whose run takes run_kernel's arguments)
        streamed = dict(kernel_name=kernel_name, backend=backend, n=n, seed=seed, params=params, per_item=per_item,
                        counts_size=counts_size, outputs=arrays, chunk_size=chunk_size, progress=progress, work=work)
        result = executor.run(**streamed) if dask else run_kernel(get_kernel(kernel_name, backend), threads=threads,
                                                                   **streamed)
    if outcomes:
        done = result.items_done
        result.outcomes = {name: array[:done] for (name, _), array in zip(outputs, arrays, strict=True)}
    else:
        result.outcomes = unasked
    return result, backend, threads


#: For runs without outcomes, by the identity of simulate's ``outputs`` (a constant of the API's
#: code, the same object each call: no hashing on the game loop's path), held with it: zero-length
#: arrays (kernels write nothing to them, so one of each serves every run) and {field: None}.
_empty_outputs: dict[int, tuple[tuple, tuple[np.ndarray, ...], dict]] = {}


def _no_outputs(outputs: tuple[tuple[str, str], ...]) -> tuple[tuple[np.ndarray, ...], dict]:
    found = _empty_outputs.get(id(outputs))
    if found is None or found[0] is not outputs:
        found = remember(_empty_outputs, id(outputs), (outputs, tuple(np.empty(0, dtype=dtype) for _, dtype in outputs),
                                                       dict.fromkeys(name for name, _ in outputs)))
    return found[1], found[2]
