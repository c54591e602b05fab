"""Compiles a ruleset's engine module (combatsim.<ruleset>.engine) with Numba, from its own source.

The engine's functions are the pure-Python reference. ``compile_engine`` gives each of them a copy
of the module's globals in which every engine function is its Numba dispatcher and every stream
function (combatsim.engine.STREAM_FUNCTIONS) is the Numba one below, then compiles them: the same
code objects, so the compiled engine cannot drift from the reference. Numba caches each function
beside the engine's source file, keyed by its bytecode.
"""

from __future__ import annotations

import types

import numpy as np

from combatsim.engine import STREAM_FUNCTIONS

from . import rng_nb
from ._numba import njit
from .rng_nb import (
    _RETRIES,
    _RETRY_WORDS,
    _USED,
    _WORDS,
    DOMAIN_ITEM,
    DOMAIN_RETRY,
    MASK32,
    SHIFT32,
    STREAM_SIZE,
    _refill,
    stream_start,
)


@njit
def new_stream():
    return np.zeros(STREAM_SIZE, dtype=np.uint64)


@njit(inline="always")
def stream_resume(rng, seed, index, words_used, retries_used):
    """Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent."""
    seed = np.uint64(seed)
    stream_start(rng, seed & MASK32, seed >> SHIFT32, index)
    rng[_USED] = np.uint64(words_used)
    rng[_RETRIES] = np.uint64(retries_used)
    if words_used & 3:
        _refill(rng, np.uint64(words_used), DOMAIN_ITEM, _WORDS)
    if retries_used & 3:
        _refill(rng, np.uint64(retries_used), DOMAIN_RETRY, _RETRY_WORDS)


@njit(inline="always")
def stream_continue(rng, seed, index, words_used, retries_used, block_low, block_high):
    """``stream_resume``, the partly read block's words (if any) given as ``stream_block`` packed them."""
    stream_resume(rng, seed, index, words_used & ~3, retries_used)
    if words_used & 3:
        low, high = np.uint64(block_low), np.uint64(block_high)
        rng[_WORDS] = low & MASK32
        rng[_WORDS + 1] = low >> SHIFT32
        rng[_WORDS + 2] = high & MASK32
        rng[_WORDS + 3] = high >> SHIFT32
        rng[_USED] = np.uint64(words_used)


@njit(inline="always")
def stream_block(rng, half):
    """Two words of the partly read block packed into an int64 (combatsim.engine.stream_block), else 0."""
    if rng[_USED] & np.uint64(3) == 0:
        return np.int64(0)
    return np.int64(rng[_WORDS + 2 * half] | (rng[_WORDS + 2 * half + 1] << SHIFT32))


@njit(inline="always")
def stream_words_used(rng):
    return np.int64(rng[_USED])


@njit(inline="always")
def stream_retries_used(rng):
    return np.int64(rng[_RETRIES])


#: Each of combatsim.engine's STREAM_FUNCTIONS by name: this module's own, else rng_nb's.
STREAMS = {name: globals()[name] if name in globals() else getattr(rng_nb, name) for name in STREAM_FUNCTIONS}


def compile_engine(module: types.ModuleType) -> types.SimpleNamespace:
    """The engine ``module`` compiled by Numba: a namespace with its constants and dispatchers.

    Functions named in the module's optional ``NUMBA_INLINE`` tuple are inlined into their callers
    (small helpers called in the hot loop); the others are compiled as functions of their own.
    Functions named in ``NUMBA_NO_RUNTIME`` (helpers that never allocate) are compiled without
    Numba's runtime: then an array passed to them is not reference counted on every call, which
    was most of a step's time.
    """
    inline = set(getattr(module, "NUMBA_INLINE", ()))
    no_runtime = set(getattr(module, "NUMBA_NO_RUNTIME", ()))
    source_globals = vars(module)
    compiled_globals = dict(source_globals)
    compiled_globals.update(STREAMS)
    functions = {
        name: value for name, value in source_globals.items()
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__
    }
    for name, function in functions.items():
        twin = types.FunctionType(function.__code__, compiled_globals, name, function.__defaults__,
                                  function.__closure__)
        twin.__qualname__ = function.__qualname__
        twin.__doc__ = function.__doc__
        options = {"_nrt": False} if name in no_runtime else {}
        compiled_globals[name] = njit(inline="always", **options)(twin) if name in inline else njit(**options)(twin)
    namespace = types.SimpleNamespace(**{
        name: value for name, value in compiled_globals.items() if not name.startswith("__")
    })
    namespace.backend = "numba"
    return namespace
