"""How a Dask run cuts, submits and gathers its tasks, with a stand-in client (no cluster)."""

from __future__ import annotations

import numpy as np
import pytest

from combatsim.executors import TASK_SECONDS, TASKS_PER_THREAD, task_items, use_executor
from combatsim.exp import simulate_to_hit
from combatsim.runner import items_for_seconds, observe

pytest.importorskip("dask.distributed")

TO_HIT = {"bonus": 110, "maximum_roll": 760, "armour_rating": 580, "seed": 4}


class Future:
    def __init__(self, client: Client, index: int, call: tuple) -> None:
        self._client, self._index, self._call = client, index, call
        self.status = "pending"
        self._value = None

    def done(self) -> bool:
        if self.status == "pending":
            self.status = self._client.status_of(self._index)
            if self.status == "finished":
                function, *args = self._call
                self._value = function(*args) if self._client.compute else _empty_result(*args)
        return self.status != "pending"

    def result(self):
        self._client.gathered += 1
        return self._value

    def exception(self):
        return self._client.error


def _empty_result(kernel_name, backend, seed, start, stop, params, counts_size, output_kinds):
    return start, stop, np.zeros(counts_size, dtype=np.int64), [np.zeros(0, dtype) for dtype, _ in output_kinds]


class Client:
    """Runs a task when the run first asks whether it is done; tasks from ``fail_from`` on end
    with ``status`` instead. Records the tasks submitted and how many were in flight at most."""

    def __init__(self, compute: bool = True, threads: int = 2, fail_from: int | None = None,
                 status: str = "cancelled", error: BaseException | None = None) -> None:
        self.compute, self.threads = compute, threads
        self.fail_from, self.failed_status, self.error = fail_from, status, error
        self.status = "running"
        self.tasks: list[tuple[int, int]] = []
        self.gathered = 0
        self.most_in_flight = 0

    def submit(self, function, *args, pure: bool = True) -> Future:
        assert not pure  # equal arguments must still be separate tasks
        self.tasks.append((args[3], args[4]))
        self.most_in_flight = max(self.most_in_flight, len(self.tasks) - self.gathered)
        return Future(self, len(self.tasks) - 1, (function, *args))

    def status_of(self, task: int) -> str:
        if self.fail_from is None or task < self.fail_from:
            return "finished"
        if self.failed_status == "pending":  # lost the scheduler: reconnecting, and this task never ends
            self.status = "connecting"
        return self.failed_status

    def nthreads(self) -> dict[str, int]:
        return {f"tcp://worker-{k}": 1 for k in range(self.threads)}


def test_tasks_are_submitted_as_the_run_goes_a_few_per_thread():
    client = Client(compute=False, threads=2)
    with use_executor("dask", client), observe(stop=lambda done, totals: len(client.tasks) >= 40):
        result = simulate_to_hit(10**12, **TO_HIT, backend="cython")
    # Task k is gathered with tasks k+1..k+5 in flight: the 40th is submitted once 35 are gathered.
    assert not result.partial and result.attacks == 35 * task_items("exp.to_hit", "cython")
    assert client.most_in_flight == TASKS_PER_THREAD * 2  # not 1e12 / task size up front


def test_a_fight_task_is_at_most_half_a_second_of_fights():
    # It was 2**26 fights, minutes of work: fight -n 1e9 returned 0 fights after a Ctrl-C.
    from combatsim.d100.api import Combatant, Weapon, simulate_fights

    fighters = [Combatant(side=0, fighting=60, weapon=Weapon(30, 2)), Combatant(side=1, fighting=55, weapon=Weapon(40, 2))]
    client = Client(compute=False)
    with use_executor("dask", client), observe(stop=lambda done, totals: True):
        simulate_fights(10**9, fighters, seed=5, backend="numba")
    (start, stop), *_ = client.tasks
    assert 1 <= stop - start <= items_for_seconds("d100.fight", "numba", TASK_SECONDS) < 2**26


def test_to_hit_tasks_are_sized_by_their_cost():
    client = Client(compute=False)
    with use_executor("dask", client), observe(stop=lambda done, totals: True):
        simulate_to_hit(10**12, **TO_HIT, backend="cython")
    starts, stops = zip(*client.tasks, strict=True)
    assert set(np.subtract(stops, starts)) == {task_items("exp.to_hit", "cython")}
    assert starts == tuple(sorted(starts)) and starts[0] == 0


def test_a_stop_rule_sees_exactly_the_first_items():
    client = Client(threads=3)
    with use_executor("dask", client), observe(stop=lambda done, totals: done >= 7_000):
        stopped = simulate_to_hit(10**6, **TO_HIT, backend="cython", chunk_size=1_000)
    assert not stopped.partial and stopped.attacks == 7_000
    assert stopped.hits == simulate_to_hit(7_000, **TO_HIT, backend="cython").hits


def test_outcomes_are_gathered_in_index_order():
    bonus = np.arange(5_000, dtype=np.int64) % 300
    arguments = {"bonus": bonus, "maximum_roll": 800, "armour_rating": 600, "seed": 11, "outcomes": True}
    with use_executor("dask", Client(threads=4)):
        remote = simulate_to_hit(5_000, **arguments, backend="cython", chunk_size=333)
    np.testing.assert_array_equal(remote.to_hit, simulate_to_hit(5_000, **arguments, backend="numba").to_hit)


def test_a_lost_scheduler_keeps_the_finished_chunks_with_one_line(capsys):
    with use_executor("dask", Client(fail_from=5)):
        lost = simulate_to_hit(10**6, **TO_HIT, backend="cython", chunk_size=1_000)
    assert lost.partial and lost.attacks == 5_000
    assert lost.hits == simulate_to_hit(5_000, **TO_HIT, backend="cython").hits
    assert capsys.readouterr().err == ("combatsim: lost the connection to the Dask scheduler: keeping the 5,000 "
                                       "items finished (partial)\n")


def test_a_task_left_pending_by_a_lost_scheduler_does_not_hang_the_run(capsys):
    with use_executor("dask", Client(fail_from=3, status="pending")):
        lost = simulate_to_hit(10**6, **TO_HIT, backend="cython", chunk_size=1_000)
    assert lost.partial and lost.attacks == 3_000
    assert "lost the connection to the Dask scheduler" in capsys.readouterr().err


def test_a_task_that_kills_every_worker_ends_the_run_as_partial(capsys):
    from distributed import KilledWorker

    with use_executor("dask", Client(fail_from=2, status="error", error=KilledWorker("x", "w", []))):
        result = simulate_to_hit(10**5, **TO_HIT, backend="cython", chunk_size=1_000)
    assert result.partial and result.attacks == 2_000
    assert "KilledWorker" in capsys.readouterr().err


def test_an_error_inside_a_task_is_raised():
    with use_executor("dask", Client(fail_from=0, status="error", error=ZeroDivisionError("in a kernel"))), \
            pytest.raises(ZeroDivisionError, match="in a kernel"):
        simulate_to_hit(10**4, **TO_HIT, backend="cython", chunk_size=1_000)


def test_tasks_are_resized_from_the_work_measured():
    # Fights whose counts show one unit of work each, where the estimate allowed for 100: the tasks
    # grow CHUNK_GROWTH-fold a task up to about TASK_SECONDS of the measured work.
    from combatsim.executors import ExecutorChoice, run_dask
    from combatsim.runner import CHUNK_GROWTH, Work

    client = Client(compute=False)
    work = Work(least=1.0, most=100.0, counted=0, per_count=1.0)
    with observe(stop=lambda done, totals: len(client.tasks) >= 12):
        run_dask(ExecutorChoice("dask", client), kernel_name="exp.fight", backend="numba", n=10**15, seed=1, params=(),
                 per_item=(), counts_size=1, outputs=(), chunk_size=None, progress=None, work=work)
    sizes = [stop - start for start, stop in client.tasks]
    first, last = task_items("exp.fight", "numba", 100.0), task_items("exp.fight", "numba", 1.0)
    assert sizes[:6] == [first] * 6  # submitted before any result
    assert sizes[6:9] == [first * CHUNK_GROWTH, first * CHUNK_GROWTH**2, min(last, first * CHUNK_GROWTH**3)]
    assert sizes[-1] == last
