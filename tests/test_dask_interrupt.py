"""Ctrl-C on a Dask run, sent as a terminal sends it (SIGINT to the whole process group), stops
within 2 s with the chunks finished, marked partial, and nothing on stderr: no tracebacks from the
worker processes, no warnings from distributed."""

from __future__ import annotations

import contextlib
import glob
import json
import subprocess
import time
from pathlib import Path

import pytest

from tests._processes import interrupt

pytest.importorskip("dask.distributed")

ATTACK = ["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580", "-n", "1e12", "--seed", "7",
          "--backend", "cython", "--json", "--executor", "dask"]


def worker_processes(pid: int) -> list[int]:
    """The worker processes a LocalCluster's nannies have started for process ``pid``."""
    workers = []
    for children in glob.glob(f"/proc/{pid}/task/*/children"):  # of every thread: the loop thread spawns them
        with contextlib.suppress(OSError):
            for child in Path(children).read_text().split():
                with contextlib.suppress(OSError):
                    if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                        workers.append(int(child))
    return workers


def wait_for_workers(process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not worker_processes(process.pid):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.01)


def ctrl_c(arguments: list[str], wait) -> tuple[dict, str]:
    """Run ``combatsim ARGUMENTS`` in a process group of its own, ``wait(process)``, then send
    SIGINT to the group; return the JSON record and stderr of a run that stopped within 2 s."""
    # communicate() ends when the workers, holding the pipes, have gone too
    stopped = interrupt(arguments, wait, group=True, timeout=30)
    assert stopped.returncode == 130, stopped.err
    assert stopped.stopped_after < 2.0
    record = json.loads(stopped.out)
    assert record["partial"] is True
    err = stopped.err
    return record, err


def test_ctrl_c_while_the_cluster_starts():
    # A worker process has just been spawned: the cluster is part-way through its start.
    record, err = ctrl_c(ATTACK, wait_for_workers)
    assert record["attacks"] == 0
    assert err == ""


def test_ctrl_c_mid_run_keeps_the_chunks_finished():
    chunk = 1 << 22  # a few ms a task here, so that chunks are done by the time of the Ctrl-C

    def run_a_while(process: subprocess.Popen) -> None:
        wait_for_workers(process)
        time.sleep(5.0)  # the workers import and start; then tasks finish every few ms

    record, err = ctrl_c([*ATTACK, "--chunk-size", str(chunk)], run_a_while)
    assert 0 < record["attacks"] < 10**12 and record["attacks"] % chunk == 0
    assert 0.52 < record["hit_rate"] < 0.54
    assert err == ""


def test_another_cluster_on_the_dashboard_port_changes_nothing_on_stderr():
    # Another Dask cluster (or anything) holding 8787, the default port of a scheduler's HTTP
    # server: the local cluster takes a free port without a word.
    import socket

    holder = socket.socket()
    try:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            holder.bind(("", 8787))
            holder.listen()
        except OSError:
            pass  # held already, as this test wants
        record, err = ctrl_c(ATTACK, wait_for_workers)
    finally:
        holder.close()
    assert record["partial"] is True
    assert err == ""
