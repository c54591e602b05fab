"""A missing, unwritable, stale, corrupt, emptied, swapped or unreadable Numba cache never breaks an
import or a call, and never runs the wrong kernel (kernels/_numba.py).

Each damaged cache file belongs to a kernel of its own in one module of tiny kernels, so three
subprocess runs check every case: one fills the cache, one runs on the damaged copy (every kernel
must answer correctly, each damaged one from a recompile), and one more shows the recompile
rewrote the entry (each repairable kernel loads from the cache again).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from combatsim.kernels import _numba

RANDOM = random.Random(29)


def _random_bytes(index, entry, donors):
    index.write_bytes(RANDOM.randbytes(300))


def _empty(index, entry, donors):
    index.write_bytes(b"")


def _truncated(index, entry, donors):
    index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])


def _swapped_with_another_kernel(index, entry, donors):
    shutil.copyfile(donors["donor_same_signature"][0], index)


def _unreadable_directory(index, entry, donors):
    index.unlink()
    index.mkdir()


def _unreadable_link_loop(index, entry, donors):
    index.unlink()
    index.symlink_to(index.name)


def _unreadable_mode(index, entry, donors):
    index.chmod(0)


def _entry_unreadable_mode(index, entry, donors):
    entry.chmod(0)


def _entry_random_bytes(index, entry, donors):
    entry.write_bytes(RANDOM.randbytes(5000))


def _entry_empty(index, entry, donors):
    entry.write_bytes(b"")


def _entry_truncated(index, entry, donors):
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])


def _entry_one_byte_flipped(index, entry, donors):
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x10
    entry.write_bytes(bytes(data))


def _entry_swapped_same_signature(index, entry, donors):
    # Numba alone loads this one and runs the donor's code: x - 1 instead of x + k, no error.
    shutil.copyfile(donors["donor_same_signature"][1], entry)


def _entry_swapped_other_signature(index, entry, donors):
    shutil.copyfile(donors["donor_other_signature"][1], entry)


def _entry_unreadable_directory(index, entry, donors):
    entry.unlink()
    entry.mkdir()


#: case -> (damage, whether the recompile can rewrite the damaged file)
CASES = {
    "index_random_bytes": (_random_bytes, True),
    "index_empty": (_empty, True),
    "index_truncated": (_truncated, True),
    "index_swapped_with_another_kernel": (_swapped_with_another_kernel, True),
    "index_unreadable_directory": (_unreadable_directory, False),
    "index_unreadable_link_loop": (_unreadable_link_loop, True),
    "index_unreadable_mode": (_unreadable_mode, True),
    "entry_random_bytes": (_entry_random_bytes, True),
    "entry_empty": (_entry_empty, True),
    "entry_truncated": (_entry_truncated, True),
    "entry_one_byte_flipped": (_entry_one_byte_flipped, True),
    "entry_swapped_same_signature": (_entry_swapped_same_signature, True),
    "entry_swapped_other_signature": (_entry_swapped_other_signature, True),
    "entry_unreadable_directory": (_entry_unreadable_directory, False),
    "entry_unreadable_mode": (_entry_unreadable_mode, True),
}
#: Cases that file modes make: root reads the file anyway, so there they are plain hits.
MODE_CASES = ("index_unreadable_mode", "entry_unreadable_mode")
DONORS = {"donor_same_signature": "return x - 1", "donor_other_signature": "return values.sum()"}


def _kernel_module() -> str:
    lines = ["from combatsim.kernels._numba import njit", ""]
    for offset, case in enumerate(CASES, start=1):
        lines += ["@njit", f"def {case}(x):", f"    return x + {offset}", ""]
    lines += ["@njit", "def donor_same_signature(x):", f"    {DONORS['donor_same_signature']}", ""]
    lines += ["@njit", "def donor_other_signature(values):", f"    {DONORS['donor_other_signature']}", ""]
    return "\n".join(lines)


RUN = """
import json, sys
import numpy as np
import tiny_kernels as kernels

def answer(name, argument):
    try:
        return int(getattr(kernels, name)(argument))
    except Exception as error:  # reported per kernel, so each case's test says what it saw
        return f"{type(error).__name__}: {error}"

answers = {name: answer(name, 40) for name in sys.argv[1:]}
answers["donor_other_signature"] = answer("donor_other_signature", np.arange(5))
hits = {name: sum(getattr(kernels, name).stats.cache_hits.values()) for name in answers}
print(json.dumps({"answers": answers, "hits": hits}))
"""
EXPECTED = {case: 40 + offset for offset, case in enumerate(CASES, start=1)} | {
    "donor_same_signature": 39, "donor_other_signature": 10}


def _run(source: Path, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=f"{source}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = subprocess.run([sys.executable, "-c", RUN, *CASES, "donor_same_signature"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _cache_files(cache: Path, kernel: str) -> tuple[Path, Path]:
    (index,) = cache.rglob(f"tiny_kernels.{kernel}-*.nbi")
    (entry,) = cache.rglob(f"tiny_kernels.{kernel}-*.1.nbc")
    return index, entry


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The runs on a fresh cache, on the damaged copy of it, and once more after the recompiles."""
    source = tmp_path_factory.mktemp("source")
    (source / "tiny_kernels.py").write_text(_kernel_module())
    fresh = tmp_path_factory.mktemp("fresh") / "cache"
    first = _run(source, str(fresh))
    damaged = tmp_path_factory.mktemp("damaged") / "cache"
    shutil.copytree(fresh, damaged, symlinks=True)
    donors = {name: _cache_files(damaged, name) for name in DONORS}
    for case, (damage, _) in CASES.items():
        damage(*_cache_files(damaged, case), donors)
    second = _run(source, str(damaged))
    third = _run(source, str(damaged))
    return {"source": source, "fresh": first, "damaged": second, "repaired": third}


def test_a_fresh_cache_fills_and_then_serves_every_kernel(runs):
    assert runs["fresh"]["answers"] == EXPECTED
    assert set(runs["fresh"]["hits"].values()) == {0}


@pytest.mark.parametrize("case", list(CASES))
def test_damaged_cache_recompiles(runs, case):
    if case in MODE_CASES and os.geteuid() == 0:
        pytest.skip("root reads a file whatever its mode")
    repairable = CASES[case][1]
    assert runs["damaged"]["answers"][case] == EXPECTED[case]
    assert runs["damaged"]["hits"][case] == 0
    assert runs["repaired"]["answers"][case] == EXPECTED[case]
    assert runs["repaired"]["hits"][case] == int(repairable)


def test_undamaged_kernels_still_load_from_the_damaged_cache(runs):
    assert runs["damaged"]["hits"]["donor_same_signature"] == 1
    assert runs["damaged"]["hits"]["donor_other_signature"] == 1


def test_unwritable_cache_directory(runs):
    # /proc refuses new directories even to root, so the cache can be neither made nor written.
    result = _run(runs["source"], "/proc/combatsim-numba-cache")
    assert result["answers"] == EXPECTED
    assert set(result["hits"].values()) == {0}


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
