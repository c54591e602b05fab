"""Large runs stream in bounded memory and stop promptly on Ctrl-C."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from combatsim.exp.api import simulate_to_hit
from combatsim.runner import default_chunk
from tests._processes import interrupt


def _rss_megabytes(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def interrupt_after(arguments: list[str], seconds: float) -> dict:
    """Run ``combatsim ARGUMENTS``, check its memory, send Ctrl-C and return its partial JSON."""

    def streaming(process):
        time.sleep(seconds)  # imports and JIT (cached) first, then streaming
        assert process.poll() is None, process.stderr.read()
        assert _rss_megabytes(process.pid) < 200

    stopped = interrupt(arguments, streaming, timeout=10)
    assert stopped.returncode == 130, stopped.err
    assert stopped.stopped_after < 2.0
    record = json.loads(stopped.out)
    assert record["partial"] is True
    return record


@pytest.mark.parametrize("backend", ["numba", "cython"])
def test_a_trillion_attacks_stream_and_stop_on_ctrl_c(backend):
    # Compile (and cache) the kernel here first: on a cold Numba cache the child would spend the
    # whole window compiling. A trillion, not the ten billion: two threads count 1e10
    # attacks in about 3 s here, inside the window.
    simulate_to_hit(10, bonus=110, maximum_roll=760, armour_rating=580, seed=7, backend=backend)
    record = interrupt_after(["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580",
                              "-n", "1e12", "--seed", "7", "--backend", backend, "--threads", "2", "--json"], 4.0)
    assert 0 < record["attacks"] < 10**12
    assert record["attacks"] % default_chunk("exp.to_hit", backend) == 0  # whole chunks only
    assert 0.52 < record["hit_rate"] < 0.54


def test_ctrl_c_stops_within_two_seconds_when_units_are_costly():
    # 1000d1000000 automatic: ~60 us a unit. Chunks are sized by the dice, so a chunk is ~50 ms
    # of work, not 2^25 units (35 minutes).
    record = interrupt_after(["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580",
                              "--damage", "1000d1000000", "--weapon-type", "automatic", "-n", "1e10",
                              "--threads", "2", "--json"], 3.0)
    assert 0 < record["attacks"] < 10**6


def test_python_module_entry_point():
    result = subprocess.run([sys.executable, "-m", "combatsim", "backends", "--json"], capture_output=True, text=True,
                            check=True, env=dict(os.environ))
    assert json.loads(result.stdout) == {"python": True, "numba": True, "cython": True}


def test_fight_run_stops_on_ctrl_c_with_a_partial_result():
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "d100_duel.toml")
    record = interrupt_after(["fight", example, "-n", "1e11", "--seed", "2", "--threads", "2", "--json",
                              "--chunk-size", "200000"], 5.0)
    assert 0 < record["fights"] < 10**11
    assert record["fights"] % 200_000 == 0
    # every fight ends in a win, a draw, or is still unfinished at max_rounds (rare: a few in 1e8)
    assert sum(side["wins"] for side in record["sides"]) + record["draws"] + record["unfinished"] == record["fights"]


def test_chunk_costs_name_registered_kernels_and_chunks_grow_with_compilation():
    from combatsim.registry import kernel_names
    from combatsim.runner import CHUNK_SECONDS, UNIT_SECONDS, items_for_seconds

    assert set(UNIT_SECONDS) <= set(kernel_names())  # a misspelt name would silently fall back
    for kernel in kernel_names():
        assert default_chunk(kernel, "python") < default_chunk(kernel, "numba") == default_chunk(kernel, "cython")
        assert default_chunk(kernel, "cython") == items_for_seconds(kernel, "cython", CHUNK_SECONDS)


def test_chunks_shrink_with_the_work_an_item_takes():
    from combatsim.runner import items_for_seconds

    one = items_for_seconds("exp.attack", "cython", 0.05)
    assert items_for_seconds("exp.attack", "cython", 0.05, 1000.0) == one // 1000
    # The 1000d1000000 automatic unit: 5 bursts of up to 3 rounds of 1000 dice.
    assert items_for_seconds("exp.attack", "cython", 0.05, 5 * (1 + 3 * 1000)) < 5000
    assert items_for_seconds("exp.fight", "cython", 0.05, 1e30) == 1
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="seconds"):
            items_for_seconds("exp.attack", "cython", bad)
        with pytest.raises(ValueError, match="work_per_item"):
            items_for_seconds("exp.attack", "cython", 0.05, bad)


def test_default_chunk_runs_equal_small_chunk_runs_on_two_threads():
    # The per-kernel defaults only change how the items are cut, never the counts.
    n = 3 * default_chunk("exp.to_hit", "python") + 17
    for backend in ("python", "cython"):
        whole = simulate_to_hit(n, bonus=110, maximum_roll=760, armour_rating=580, seed=3, backend=backend, threads=2)
        cut = simulate_to_hit(n, bonus=110, maximum_roll=760, armour_rating=580, seed=3, backend=backend, threads=2,
                              chunk_size=1000)
        assert whole.hits == cut.hits
