"""Positioned item streams for the step kernels (Numba twin of combatsim.rl._stream).

A step of an episode starts reading its episode's item stream at a fixed word offset (docs/rl.md),
and the retry counter (rejected dice) carries over from step to step in the environment's state,
so no two dice of one episode ever share a word.
"""

from __future__ import annotations

import numpy as np

from .._numba import njit
from ..rng_nb import (
    _RETRIES,
    _RETRY_WORDS,
    _USED,
    DOMAIN_RETRY,
    _refill,
    rejection_threshold,
    stream_bounded,
    stream_die,
    stream_start,
    stream_word,
)

__all__ = [
    "rejection_threshold",
    "stream_bounded",
    "stream_die",
    "stream_retries",
    "stream_seek",
    "stream_word",
]


@njit
def stream_seek(state, k0, k1, index, word_offset, retries):
    """Item ``index`` positioned at word ``word_offset`` (a multiple of 4) with ``retries`` used."""
    stream_start(state, k0, k1, index)
    state[_USED] = np.uint64(word_offset)
    state[_RETRIES] = np.uint64(retries)
    if retries & 3:
        # The cached retry block belongs to whatever stream used ``state`` last.
        _refill(state, np.uint64(retries), DOMAIN_RETRY, _RETRY_WORDS)


@njit
def stream_retries(state):
    return np.int64(state[_RETRIES])
