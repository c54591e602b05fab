"""The one place that decides how Numba kernels are compiled.

``cache=True`` keeps JIT compilation out of every run after the first. A cache directory that is
missing, stale, corrupt or read-only must never break an import or a call: Numba raises at
decoration time when it finds no writable cache location, and then the kernel compiles uncached
instead; an entry that fails to load counts as a miss. Numba checks a cached kernel against its
own file's timestamp only, so after editing a shared module such as rng_nb.py in a source
checkout, delete the kernels' ``__pycache__`` folders (installed copies are rebuilt on upgrade). Set
``NUMBA_CACHE_DIR`` to move the cache (for example when the package is installed read-only).
"""

from __future__ import annotations

import numba
from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic


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
        _tolerate_corrupt_entries(dispatcher)
        return dispatcher

    return decorate if function is None else decorate(function)


def _tolerate_corrupt_entries(dispatcher) -> None:
    """Treat a cache entry that fails to load (truncated, corrupt, from another Numba) as a miss:
    the kernel recompiles and overwrites it instead of raising at its first call."""
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is None:
        return

    def load_or_miss(*args, **kwargs):
        try:
            return load(*args, **kwargs)
        except Exception:
            return None

    cache.load_overload = load_or_miss


def intrinsic_or(python):
    """``numba.extending.intrinsic``, whose functions only compiled code can call; under
    NUMBA_DISABLE_JIT (the coverage run, every kernel as plain Python) the name is bound to
    ``python`` instead, which does the same to Python values."""

    def decorate(definition):
        return python if numba.config.DISABLE_JIT else intrinsic(definition)

    return decorate


def _lowest_set_bit_python(bits):
    bits = int(bits) & ((1 << 64) - 1)
    return (bits & -bits).bit_length() - 1


#: The index of a nonzero integer's lowest set bit (LLVM's cttz, one instruction: Numba's
#: trailing_zeros), or its Python twin when NUMBA_DISABLE_JIT runs the kernels as Python.
lowest_set_bit = _lowest_set_bit_python if numba.config.DISABLE_JIT else trailing_zeros


@intrinsic_or(lambda array: array)
def borrow(typingctx, array):
    """The same array without its NRT meminfo (and parent): Numba's reference counting of it
    (an atomic add behind a call, at every assignment and call of an array variable) becomes a
    null test. Only for arrays whose owner outlives the use: the caller's own arguments."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, value=args[0])
        borrowed = context.make_array(array)(context, builder, value=args[0])
        borrowed.meminfo = cgutils.get_null_value(source.meminfo.type)
        borrowed.parent = cgutils.get_null_value(source.parent.type)
        return borrowed._getvalue()

    return array(array), codegen
