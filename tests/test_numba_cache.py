"""A missing, stale or unwritable Numba cache never breaks an import (kernels/_numba.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np

from combatsim.kernels import _numba

SCRIPT = """
import numpy as np
from combatsim.kernels.exp import _nb
counts = np.zeros(1, np.int64)
_nb.to_hit(np.uint64(1), 0, 1000, np.array([0]), np.array([1000]), np.array([500]), False, counts,
           np.zeros(0, np.int32))
print(counts[0])
"""


def _run(cache_dir: str) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True).stdout


def test_unwritable_cache_directory(tmp_path):
    # /proc refuses new directories even to root, so the cache can be neither made nor written.
    expected = _run(str(tmp_path / "fresh"))
    assert _run("/proc/combatsim-numba-cache") == expected


def test_stale_cache_files_are_ignored(tmp_path):
    cache = tmp_path / "cache"
    first = _run(str(cache))
    for path in cache.rglob("*.nbc"):
        path.write_bytes(b"not a numba cache entry")
    assert _run(str(cache)) == first


def test_decorator_falls_back_when_numba_refuses_to_cache(monkeypatch):
    real_njit = numba.njit

    def refusing_njit(*args, **options):
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real_njit(*args, **options)

    monkeypatch.setattr(_numba.numba, "njit", refusing_njit)

    @_numba.njit
    def double(values):
        return values * 2

    assert double(np.int64(21)) == 42
