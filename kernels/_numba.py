"""The one place that decides how Numba kernels are compiled.

``cache=True`` keeps JIT compilation out of every run after the first. A cache directory that is
missing, stale or read-only must never break an import: Numba raises at decoration time when it
finds no writable cache location, and then the kernel compiles uncached instead. Set
``NUMBA_CACHE_DIR`` to move the cache (for example when the package is installed read-only).
"""

from __future__ import annotations

import numba


def njit(function=None, **options):
    """``numba.njit`` with ``cache=True``, ``nogil=True`` (threads run kernels in parallel) and
    ``error_model="numpy"``."""
    options.setdefault("cache", True)
    options.setdefault("nogil", True)
    # Kernels never divide by zero (inputs are validated), so skip Python's division checks.
    options.setdefault("error_model", "numpy")

    def decorate(func):
        try:
            return numba.njit(**options)(func)
        except (RuntimeError, OSError, PermissionError):
            uncached = dict(options, cache=False)
            return numba.njit(**uncached)(func)

    return decorate if function is None else decorate(function)
