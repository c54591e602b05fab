"""A Dask worker killed mid-run: its tasks run again elsewhere and the result is the local one."""

from __future__ import annotations

import logging
import os
import signal

import numpy as np
import pytest

from combatsim.d100.api import Combatant, Weapon, simulate_fights
from combatsim.executors import use_executor

distributed = pytest.importorskip("dask.distributed")

FIGHTERS = [Combatant(side=0, fighting=60, weapon=Weapon(30, 2)), Combatant(side=1, fighting=55, weapon=Weapon(40, 2))]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    with distributed.Client(cluster, set_as_default=False) as dask_client:
        yield dask_client
    cluster.close()


class WorkerKiller:
    """A progress callback that SIGKILLs, after the chunks in ``after``, the worker holding most of
    the run's tasks (running, queued or finished but not yet gathered), and after those in
    ``after_all`` every worker; the nannies start new ones."""

    def __init__(self, client, after: set[int], after_all: set[int]) -> None:
        self.client, self.after, self.after_all = client, after, after_all
        self.chunks = 0
        self.tasks_lost: list[int] = []

    def __call__(self, done: int, n: int) -> None:
        self.chunks += 1
        if self.chunks not in self.after | self.after_all:
            return
        tasks = {address: len(keys) for address, keys in self.client.processing().items()}
        for address, keys in self.client.has_what().items():
            tasks[address] = tasks.get(address, 0) + len(keys)
        victims = list(tasks) if self.chunks in self.after_all else [max(tasks, key=tasks.get)]
        for pid in self.client.run(os.getpid, workers=victims).values():
            os.kill(pid, signal.SIGKILL)
        self.tasks_lost.append(sum(tasks[address] for address in victims))


def fights_with_workers_killed(client, n: int, chunk_size: int, after: set[int], after_all: set[int] = frozenset()):
    killer = WorkerKiller(client, after, after_all)
    with use_executor("dask", client):
        remote = simulate_fights(n, FIGHTERS, seed=5, outcomes=True, chunk_size=chunk_size, progress=killer)
    local = simulate_fights(n, FIGHTERS, seed=5, outcomes=True)
    return remote, local, killer.tasks_lost


def assert_same_fights(remote, local) -> None:
    assert not remote.partial
    assert remote.counts == local.counts and remote.rounds_histogram == local.rounds_histogram
    np.testing.assert_array_equal(remote.winner, local.winner)


def test_a_killed_worker_changes_nothing(client):
    remote, local, tasks_lost = fights_with_workers_killed(client, 120_000, 10_000, after={1})
    assert tasks_lost[0] >= 1  # the killed worker held tasks of the run, which ran again
    assert_same_fights(remote, local)


@pytest.mark.slow
def test_workers_killed_again_and_again_change_nothing(client):
    remote, local, tasks_lost = fights_with_workers_killed(client, 2_000_000, 25_000, after={1, 10, 20, 40, 60},
                                                           after_all={30, 50})
    assert len(tasks_lost) == 7 and min(tasks_lost) >= 1
    assert_same_fights(remote, local)
