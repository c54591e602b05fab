"""The one place that decides how Numba kernels are compiled.

``cache=True`` keeps JIT compilation out of every run after the first. A cache directory or file
that is missing, stale, corrupt, emptied, swapped, unreadable or read-only must never break an
import or a call: Numba raises at decoration time when it finds no writable cache location, and
then the kernel compiles uncached instead; every other failure to read an entry or the index is a
miss (the kernel recompiles), and a failure to write one leaves the kernel compiled in memory. An
entry is sealed with the name of its kernel, its index key and a digest of its bytes, and loaded
only when all three match: Numba's own files say nothing of which kernel wrote them, so an entry
copied over another would run the wrong code. Numba checks a cached kernel against its own file's
timestamp only, so after editing a shared module such as rng_nb.py in a source checkout, delete the
kernels' ``__pycache__`` folders (installed copies are rebuilt on upgrade). Set ``NUMBA_CACHE_DIR``
to move the cache (for example when the package is installed read-only).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import pickle

import numba
import numpy as np
from numba.core.caching import FunctionCache, IndexDataCacheFile


def njit(function=None, **options):
    """``numba.njit`` with ``cache=True``, ``nogil=True`` (threads run kernels in parallel) and
    ``error_model="numpy"``."""
    options.setdefault("cache", True)
    options.setdefault("nogil", True)
    # Kernels never divide by zero (inputs are validated), so skip Python's division checks.
    options.setdefault("error_model", "numpy")

    def decorate(func):
        try:
            dispatcher = numba.njit(**options)(func)
        except (RuntimeError, OSError, PermissionError):
            uncached = dict(options, cache=False)
            return numba.njit(**uncached)(func)
        if isinstance(getattr(dispatcher, "_cache", None), FunctionCache):
            dispatcher._cache = _CheckedCache(dispatcher.py_func)
        return dispatcher

    return decorate if function is None else decorate(function)


def seeded(kernel):
    """The registry's entry point to the compiled ``kernel``: its seed passed as uint64. Numba types a
    Python int seed as int64 on the first call and then cannot take a seed of 2**63 or more ("int too
    big to convert")."""

    @functools.wraps(getattr(kernel, "py_func", kernel))
    def entry(seed, *args):
        return kernel(np.uint64(seed), *args)

    return entry


class _SealedEntries(IndexDataCacheFile):
    """Numba's index and data files, each entry stored as (kernel and key, digest, payload)."""

    def _load_index(self):
        try:
            overloads = super()._load_index()
        except Exception:  # random bytes, an empty file, a directory: an empty index, rewritten at the next save
            return {}
        return overloads if isinstance(overloads, dict) else {}

    def save(self, key, data):
        payload = self._dump(data)
        super().save(key, (self._identity(key), hashlib.sha256(payload).digest(), payload))

    def load(self, key):
        entry = super().load(key)
        if not (isinstance(entry, tuple) and len(entry) == 3):
            return None
        identity, digest, payload = entry
        if not (isinstance(payload, bytes) and identity == self._identity(key)
                and digest == hashlib.sha256(payload).digest()):
            return None
        return pickle.loads(payload)

    def _identity(self, key):
        # The index file's name holds the kernel's qualified name and line; the key its signature,
        # target and bytecode.
        return self._index_name, key


class _CheckedCache(FunctionCache):
    """Numba's per-kernel cache, for which any entry that fails to load is a miss and any failure
    to save is ignored."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _SealedEntries(self._cache_path, self._impl.filename_base,
                                          self._impl.locator.get_source_stamp())

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception:
            return None

    def save_overload(self, sig, data):
        # A full disk, a directory in the way: the kernel stays compiled in memory.
        with contextlib.suppress(Exception):
            super().save_overload(sig, data)
