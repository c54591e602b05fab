"""--scheduler: a bad address is refused at once, a server that is not Dask in one line, and a
scheduler lost mid-run keeps the chunks finished."""

from __future__ import annotations

import contextlib
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from combatsim.cli import main as cli_main
from combatsim.executors import use_executor
from combatsim.exp import simulate_to_hit

pytest.importorskip("dask.distributed")

ATTACK = ["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580", "-n", "1e6", "--seed", "3"]


@pytest.mark.parametrize("address", ["http://127.0.0.1:8786", "127.0.0.1", "tcp://127.0.0.1:0", "tcp://host:99999",
                                     "tcp://127.0.0.1:8786/path", "", "tls://127.0.0.1:8786",
                                     "tcp://a b:8786", "tcp://-x:8786"])
def test_an_address_that_is_not_tcp_host_port_is_refused_at_once(address, capsys):
    with pytest.raises(ValueError, match=r"scheduler must be an address tcp://HOST:PORT or HOST:PORT"):
        use_executor("dask", address).__enter__()
    assert cli_main([*ATTACK, "--executor", "dask", "--scheduler", address]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "scheduler must be an address" in error


@pytest.mark.parametrize(("address", "meant"), [("127.0.0.1:8786", "tcp://127.0.0.1:8786"),
                                              ("dask_scheduler:08786", "tcp://dask_scheduler:8786"),
                                              ("tcp://[::1]:65535", "tcp://[::1]:65535")])
def test_host_port_is_a_tcp_address(address, meant):
    with use_executor("dask", address) as choice:
        assert choice.scheduler == meant


def test_a_scheduler_of_the_wrong_type_or_for_a_local_run_is_refused():
    with pytest.raises(TypeError, match="scheduler must be an address tcp://HOST:PORT, a dask.distributed Client"):
        use_executor("dask", 8786).__enter__()
    with pytest.raises(ValueError, match='scheduler is only for executor "dask"'):
        use_executor("local", "tcp://127.0.0.1:8786").__enter__()


@contextlib.contextmanager
def serving(banner: bytes | None) -> Iterator[int]:
    """A loopback server for one test, on a port it returns: HTTP, or ``banner`` sent to each
    connection, which then stays open. Its threads end with the ``with`` block."""
    if banner is None:
        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = 30  # a request line that never ends does not hold its thread forever

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()
            server.server_close()
        return
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    connections: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                connection, _ = listener.accept()
                connection.sendall(banner)
                connections.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for connection in [*connections, listener]:
            connection.close()


def run_cli(arguments: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "combatsim", *arguments], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("banner", "reason"), [
    (None, "no Dask answer within 4 s"),  # an HTTP server waits for a request line: it used to hang
    (b"220 mail.example.com ESMTP ready\r\n", "it answered, but not as a Dask scheduler"),  # was MemoryError, exit 3
])
def test_a_server_that_is_not_dask_gets_one_line_and_exit_2(banner, reason):
    with serving(banner) as port:
        result = run_cli([*ATTACK, "--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"])
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"combatsim: error: scheduler tcp://127.0.0.1:{port}: {reason}; expected a Dask "
                             "scheduler at tcp://HOST:PORT\n")


CLUSTER = """
import time
from dask.distributed import LocalCluster
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None)
    print(cluster.scheduler_address, flush=True)
    time.sleep(60)  # ends by itself should the test not kill it
"""


def test_a_lost_scheduler_keeps_the_chunks_finished(capsys):
    cluster = subprocess.Popen([sys.executable, "-c", CLUSTER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, start_new_session=True)
    try:
        address = cluster.stdout.readline().strip()

        def kill_the_cluster_after_three_chunks(done: int, n: int) -> None:
            if done >= 3 * 100_000 and cluster.poll() is None:
                os.killpg(cluster.pid, signal.SIGKILL)
                cluster.wait()

        with use_executor("dask", address):
            lost = simulate_to_hit(10**9, bonus=110, maximum_roll=760, armour_rating=580, seed=7, chunk_size=100_000,
                                   progress=kill_the_cluster_after_three_chunks)
    finally:
        if cluster.poll() is None:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()
    assert lost.partial and lost.attacks >= 300_000 and lost.attacks % 100_000 == 0
    assert lost.hits == simulate_to_hit(lost.attacks, bonus=110, maximum_roll=760, armour_rating=580, seed=7).hits
    assert capsys.readouterr().err == (f"combatsim: lost the connection to the Dask scheduler: keeping the "
                                       f"{lost.attacks:,} items finished (partial)\n")
