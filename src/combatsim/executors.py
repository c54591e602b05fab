"""Where chunks run: this process (``local``, threads) or a Dask cluster (``dask``).

Every chunk is a pure function of (kernel, backend, seed, item range, inputs), so a Dask run is
bit-identical to a local run with the same seed, whatever the number of workers and chunks, and
whatever workers are lost and their tasks rerun elsewhere. dask is an optional extra
(``pip install ".[dask]"`` in the clone).

A Dask run stops like a local one: Ctrl-C (at any moment, cluster start included) or a lost
scheduler returns the chunks finished so far, marked partial. To make that hold, the run never
lets Ctrl-C raise inside distributed's code: SIGINT only sets a flag that the run polls, the
cluster starts on a thread of its own, and the worker processes start with SIGINT blocked, so
that a Ctrl-C sent to the whole process group does not make them print tracebacks.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from combatsim.runner import CHUNK_GROWTH, EXECUTOR, ONE_UNIT, RunResult, Work, after_chunk, items_for_seconds

EXECUTORS = ("local", "dask")
#: Seconds of one worker thread's work a Dask task is sized for: long enough that the scheduler's
#: few milliseconds a task are noise, short enough that Ctrl-C and a stop rule act at once.
TASK_SECONDS = 0.5
#: Tasks submitted ahead per worker thread: enough that no thread waits for the next task, few
#: enough that a run of 1e12 items does not spend its time submitting.
TASKS_PER_THREAD = 3
#: Seconds allowed to reach a scheduler and hear it answer as a Dask scheduler.
CONNECT_SECONDS = 4.0
#: How often the waiting run looks for Ctrl-C and finished tasks.
POLL_SECONDS = 0.02
#: Seconds a Ctrl-C during a LocalCluster's start waits for the start to give up.
ABANDON_SECONDS = 1.0
#: Seconds allowed to close a client or a cluster after a run.
CLOSE_SECONDS = 2.0
#: The LocalCluster started when no scheduler is given.
LOCAL_WORKERS = 2
#: Seconds a scheduler given by address may take to have a worker: then the run says "no workers".
WORKERS_SECONDS = 3.0
#: The name distributed's nannies give the worker processes they start.
_NANNY_WORKER_NAME = "Dask Worker process (from Nanny)"

_ADDRESS = re.compile(r"(?:tcp://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9._-]*):([0-9]{1,5})", re.ASCII)


@dataclass(frozen=True)
class ExecutorChoice:
    name: str = "local"
    #: A Dask scheduler address, an existing ``dask.distributed.Client`` or cluster; None starts a LocalCluster.
    scheduler: object = None

    def run(self, **arguments: object) -> RunResult:
        """A run of combatsim.runner.simulate on this executor (run_dask's keyword arguments)."""
        return run_dask(self, **arguments)


def resolve_executor(executor: str | ExecutorChoice | None, scheduler: object = None) -> ExecutorChoice:
    if executor is None:
        return EXECUTOR.get() or ExecutorChoice()
    if isinstance(executor, ExecutorChoice):
        return executor
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(map(repr, EXECUTORS))}; got {executor!r}")
    if executor == "local":
        if scheduler is not None:
            raise ValueError('scheduler is only for executor "dask"; executor "local" runs in this process')
        return ExecutorChoice()
    scheduler = check_scheduler(scheduler)  # a malformed address is refused before dask's slow import
    require_dask()
    return ExecutorChoice(executor, scheduler)


def check_scheduler(scheduler: object, name: str = "scheduler") -> object:
    """A scheduler address as ``tcp://HOST:PORT``, a Client or cluster as given, or None."""
    if scheduler is None or hasattr(scheduler, "submit") or hasattr(scheduler, "scheduler_address"):
        return scheduler
    if not isinstance(scheduler, str):
        raise TypeError(f"{name} must be an address tcp://HOST:PORT, a dask.distributed Client or None; "
                        f"got {type(scheduler).__name__}")
    match = _ADDRESS.fullmatch(scheduler)
    if match is None or not 1 <= int(match[2]) <= 65535:
        from combatsim.validation import brief

        raise ValueError(f"{name} must be an address tcp://HOST:PORT or HOST:PORT (port 1..65535); "
                         f"got {brief(scheduler)}")
    return f"tcp://{match[1]}:{int(match[2])}"


@contextlib.contextmanager
def use_executor(executor: str = "dask", scheduler: object = None) -> Iterator[ExecutorChoice]:
    """Run every simulation inside the ``with`` block on ``executor``."""
    choice = resolve_executor(executor, scheduler)
    token = EXECUTOR.set(choice)
    try:
        yield choice
    finally:
        EXECUTOR.reset(token)


def require_dask() -> None:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        from combatsim.extras import install_hint

        raise ValueError(f'executor "dask" needs the dask extra (dask and distributed): {install_hint("dask")}') from None


def task_items(kernel_name: str, backend: str, work_per_item: float = 1.0) -> int:
    """Items per Dask task: about TASK_SECONDS of one worker thread's work."""
    return items_for_seconds(kernel_name, backend, TASK_SECONDS, work_per_item)


def _run_chunk(kernel_name: str, backend: str, seed: int, start: int, stop: int, params, counts_size: int,
               output_kinds: Sequence[tuple[np.dtype, bool]]):
    """One Dask task: items start..stop-1, on one thread of the worker."""
    from combatsim.registry import get_kernel

    counts = np.zeros(counts_size, dtype=np.int64)
    outputs = [np.zeros(stop - start if wanted else 0, dtype=dtype) for dtype, wanted in output_kinds]
    get_kernel(kernel_name, backend)(np.uint64(seed), start, stop - start, *params, counts, *outputs)
    return start, stop, counts, outputs


class _Interrupted(Exception):
    """Ctrl-C arrived while the cluster was starting."""


_hold_after_stop = threading.Event()


@contextlib.contextmanager
def hold_interrupts_after_stop() -> Iterator[None]:
    """For a command: once a Dask run has stopped on Ctrl-C, later Ctrl-Cs are ignored until the
    process exits, so that the partial record is printed and the exit is clean (not a second
    KeyboardInterrupt in the printing, or in distributed's clean-up at exit)."""
    _hold_after_stop.set()
    try:
        yield
    finally:
        _hold_after_stop.clear()


@contextlib.contextmanager
def _sigint_sets(flag: threading.Event) -> Iterator[None]:
    """Ctrl-C sets ``flag`` instead of raising wherever the main thread is; later ones are
    ignored while the run stops (closing the cluster takes a moment), so that a second Ctrl-C
    cannot lose what the first one kept.

    Only where Python's default handler is in place and on the main thread (the only thread
    that Ctrl-C reaches); anywhere else the caller's handling stands.
    """
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def on_sigint(signum, frame):
        flag.set()

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        held = flag.is_set() and _hold_after_stop.is_set()
        signal.signal(signal.SIGINT, signal.SIG_IGN if held else signal.default_int_handler)


class _QuietDistributed:
    """Mutes distributed's and tornado's loggers while any run needs them quiet.

    Their messages (retries, lost connections, tasks cancelled at close) are about the cluster's
    housekeeping, not the run's result, and a run reports what matters in one line. Each run
    mutes once and unmutes once, from whichever thread ends its session.
    """

    _lock = threading.Lock()
    _runs = 0
    _muted: ClassVar[list[logging.Logger]] = []

    def __init__(self) -> None:
        self._on = False

    def mute(self) -> None:
        with self._lock:
            if self._on:
                return
            self._on = True
            if _QuietDistributed._runs == 0:
                for name in ("distributed", "tornado", *logging.Logger.manager.loggerDict):
                    logger = logging.getLogger(name)
                    if name.split(".")[0] in ("distributed", "tornado") and not logger.disabled:
                        logger.disabled = True
                        self._muted.append(logger)
            _QuietDistributed._runs += 1

    def unmute(self) -> None:
        with self._lock:
            if not self._on:
                return
            self._on = False
            _QuietDistributed._runs -= 1
            if _QuietDistributed._runs == 0:
                for logger in self._muted:
                    logger.disabled = False
                self._muted.clear()


class _Session:
    """The Dask client of one run: given, connected to a scheduler, or on a LocalCluster of its own.

    Connecting and starting a cluster happen on a thread of their own, with SIGINT blocked: its
    threads, and the worker processes they start, inherit the mask, so Ctrl-C reaches only the
    main thread, which polls and can walk away from a start that is not finished.
    """

    def __init__(self, scheduler: object) -> None:
        self.scheduler = scheduler
        self.client = None
        self.cluster = None
        self.threads = 1
        self._own_client = not hasattr(scheduler, "submit")
        self._quiet = _QuietDistributed()
        self._ready = threading.Event()
        self._abandoned = threading.Event()
        self._lock = threading.Lock()
        self._error: BaseException | None = None

    def start(self, interrupted: threading.Event) -> None:
        """Connect; raise _Interrupted on Ctrl-C, OSError when the scheduler does not answer."""
        self._quiet.mute()
        if self.scheduler is None:
            # multiprocessing unblocks SIGINT in the thread that first starts its resource tracker:
            # start it here, so that the starting thread's mask stays as set.
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
        workers_before = _worker_processes()
        threading.Thread(target=self._connect, name="combatsim dask start", daemon=True).start()
        # distributed bounds the connection, but not the wait for a Dask answer: bound both here.
        deadline = (time.monotonic() + 2 * CONNECT_SECONDS + WORKERS_SECONDS + 1 if isinstance(self.scheduler, str)
                    else math.inf)
        try:
            while not self._ready.wait(POLL_SECONDS):
                if interrupted.is_set():
                    raise _Interrupted
                if time.monotonic() > deadline:
                    self._abandon(workers_before)
                    raise _not_a_scheduler(self.scheduler, f"no Dask answer within {CONNECT_SECONDS:g} s")
        except (_Interrupted, KeyboardInterrupt):
            self._abandon(workers_before)
            raise _Interrupted from None
        if self._error is not None:
            self._quiet.unmute()
            raise self._error

    def _abandon(self, workers_before: set) -> None:
        """Walk away from a start: close what it started, now or when it ends."""
        # Killing the workers as they appear makes a LocalCluster's start fail at once.
        deadline = time.monotonic() + ABANDON_SECONDS
        while not self._ready.wait(POLL_SECONDS) and time.monotonic() < deadline:
            for child in _worker_processes() - workers_before:
                with contextlib.suppress(Exception):
                    child.kill()
        with self._lock:
            self._abandoned.set()
            ready = self._ready.is_set()
        if ready:
            self.close(abandon_tasks=True)

    def _connect(self) -> None:
        if hasattr(signal, "pthread_sigmask"):  # POSIX only
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.client, self.cluster = _connect(self.scheduler)
            self.threads = max(1, sum(self.client.nthreads().values()))
        except BaseException as error:
            self._error = error
        with self._lock:
            self._ready.set()
            abandoned = self._abandoned.is_set()
        if abandoned:  # Ctrl-C came first: the run has returned, so close what was started
            self.close(abandon_tasks=True)

    def close(self, abandon_tasks: bool = False) -> None:
        """Close what the run started; ``abandon_tasks``: kill our own workers first rather than wait
        for the tasks they are running (each up to TASK_SECONDS)."""
        if abandon_tasks and self.cluster is not None:
            for nanny in list(self.cluster.workers.values()):
                with contextlib.suppress(Exception):
                    nanny.close_gracefully()  # no restart of the killed worker
                    if nanny.pid:
                        os.kill(nanny.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        if self._own_client:
            for started in (self.client, self.cluster):  # the client first, then its cluster
                if started is not None:
                    with contextlib.suppress(Exception):
                        started.close(timeout=CLOSE_SECONDS)
        self._quiet.unmute()


def _worker_processes() -> set:
    """The worker processes that LocalClusters' nannies have started in this process."""
    import multiprocessing

    return {child for child in multiprocessing.active_children() if child.name == _NANNY_WORKER_NAME}


def _connect(scheduler: object):
    """(client, the cluster started for it or None)."""
    from dask.distributed import Client, LocalCluster

    if hasattr(scheduler, "submit"):
        return scheduler, None
    if scheduler is None:
        # No dashboard; the scheduler's HTTP server (health routes) still starts, on 8787 unless told
        # otherwise, and warns on stderr when another cluster holds that port: any free port will do.
        cluster = LocalCluster(n_workers=LOCAL_WORKERS, threads_per_worker=1, processes=True, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.CRITICAL)
        try:
            return Client(cluster, set_as_default=False), cluster
        except BaseException:
            cluster.close(timeout=CLOSE_SECONDS)
            raise
    if not isinstance(scheduler, str):  # a cluster object
        return Client(scheduler, set_as_default=False), None
    # Ask who answers before a Client connects: a Client fed another protocol can wait forever,
    # or fail and then hang in its own clean-up.
    try:
        identity = asyncio.run(asyncio.wait_for(_identity(scheduler), CONNECT_SECONDS + 0.5))
    except Exception as error:
        raise _not_a_scheduler(scheduler, _why_not_connected(error)) from None
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        raise _not_a_scheduler(scheduler, f"it answered as {kind or 'something else'}")
    client = Client(scheduler, timeout=CONNECT_SECONDS, set_as_default=False)
    try:  # tasks sent to a scheduler without workers would wait for ever
        client.wait_for_workers(1, timeout=WORKERS_SECONDS)
    except BaseException:
        with contextlib.suppress(Exception):
            client.close(timeout=CLOSE_SECONDS)
        raise OSError(f"scheduler {scheduler}: no workers (none joined within {WORKERS_SECONDS:g} s); "
                      f"start some with: dask worker {scheduler}") from None
    return client, None


async def _identity(address: str):
    from distributed.core import rpc

    async with rpc(address, timeout=CONNECT_SECONDS) as server:
        return await server.identity()


def _why_not_connected(error: BaseException) -> str:
    causes = []
    while error is not None and len(causes) < 10:
        causes.append(error)
        error = error.__cause__ or error.__context__
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return "connection refused"
    if isinstance(causes[0], TimeoutError) or str(causes[0]).startswith("Timed out"):
        return f"no Dask answer within {CONNECT_SECONDS:g} s"
    return "it answered, but not as a Dask scheduler"


def _not_a_scheduler(address: str, why: str) -> OSError:
    return OSError(f"scheduler {address}: {why}; expected a Dask scheduler at tcp://HOST:PORT")


_LOST_SCHEDULER = "lost the connection to the Dask scheduler"


def _task_failure(future) -> str | None:
    """Why a finished task brought no result: a line for a lost run, None for a result.

    An exception raised by the kernel itself is a bug and is raised here.
    """
    if future.status == "finished":
        return None
    if future.status == "cancelled":
        return _LOST_SCHEDULER
    error = future.exception()
    from distributed import KilledWorker

    if isinstance(error, KilledWorker):
        return "a task failed on every worker that tried it (KilledWorker)"
    if isinstance(error, ImportError):
        raise ValueError(f"the Dask workers cannot run combatsim's kernels ({error}): install combatsim on every "
                         "worker") from None
    raise error


class _TaskSize:
    """Items per task: ``chunk_size`` when the caller chose one, else about TASK_SECONDS of work.

    The work an item takes is the API's estimate (``work``, a ``runner.Work``); where the counts
    measure the work done (a fight's rounds), later tasks are sized from the work measured so far,
    growing at most CHUNK_GROWTH times a task, as the local runner's chunks do. Sizes only change
    speed, never a result.
    """

    def __init__(self, kernel_name: str, backend: str, chunk_size: int | None, work: Work) -> None:
        self._kernel = (kernel_name, backend)
        self._work = work if chunk_size is None and work.counted is not None else None
        self.items = chunk_size or task_items(kernel_name, backend, work.most)

    def after(self, totals: np.ndarray, done: int) -> None:
        if self._work is not None:
            self.items = min(self.items * CHUNK_GROWTH, task_items(*self._kernel, self._work.measured(totals, done)))


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
    work: Work = ONE_UNIT,
):
    """Run items 0..n-1 as Dask tasks (see _TaskSize), submitted as the run goes.

    At most TASKS_PER_THREAD tasks per worker thread are in flight. Results are gathered in index
    order, so a stop rule sees (and a stopped run keeps) exactly the first items, as in a local
    run. Ctrl-C, or losing the scheduler, returns the chunks finished so far, marked partial.
    """
    size = _TaskSize(kernel_name, backend, chunk_size, work)
    output_kinds = [(out.dtype, out.shape[0] > 0) for out in outputs]
    totals = np.zeros(counts_size, dtype=np.int64)
    done = 0
    interrupted = threading.Event()
    with _sigint_sets(interrupted):
        session = _Session(choice.scheduler)
        try:
            session.start(interrupted)
        except _Interrupted:
            return RunResult(totals, done, partial=True)
        client = session.client
        in_flight: collections.deque = collections.deque()
        try:
            next_start = 0
            while done < n:
                try:
                    while next_start < n and len(in_flight) < TASKS_PER_THREAD * session.threads:
                        stop = min(n, next_start + size.items)
                        sliced = [p[next_start:stop] if flag else p for p, flag in zip(params, per_item, strict=True)]
                        in_flight.append(client.submit(_run_chunk, kernel_name, backend, int(seed), next_start, stop,
                                                       sliced, counts_size, output_kinds, pure=False))
                        next_start = stop
                except Exception:
                    if client.status == "running":
                        raise
                # A client that loses its scheduler cancels its futures; one submitted meanwhile never ends.
                head = in_flight[0] if in_flight else None
                while head is not None and not head.done() and client.status == "running":
                    if interrupted.wait(POLL_SECONDS):
                        return RunResult(totals, done, partial=True)
                failure = _task_failure(head) if head is not None and head.done() else _LOST_SCHEDULER
                if failure is None:
                    try:
                        start, stop, counts, chunk_outputs = head.result()
                    except (CancelledError, OSError):
                        failure = _LOST_SCHEDULER
                if failure is not None:
                    print(f"combatsim: {failure}: keeping the {done:,} items finished (partial)", file=sys.stderr)
                    return RunResult(totals, done, partial=True)
                in_flight.popleft()
                totals += counts
                for out, part in zip(outputs, chunk_outputs, strict=True):
                    if out.shape[0]:
                        out[start:stop] = part
                done = stop
                size.after(totals, done)
                if after_chunk(done, n, totals, progress):
                    return RunResult(totals, done, partial=False, stopped_early=True)
                if interrupted.is_set():
                    return RunResult(totals, done, partial=True)
        except KeyboardInterrupt:
            return RunResult(totals, done, partial=True)
        finally:
            abandon_tasks = bool(in_flight)
            in_flight.clear()  # released futures are cancelled by the scheduler
            session.close(abandon_tasks)
    return RunResult(totals, done, partial=False)
