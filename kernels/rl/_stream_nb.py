"""Positioned item streams for the step kernels (Numba twin of combatsim.rl._stream).

A step of an episode starts reading its episode's item stream at a fixed word offset (docs/rl.md),
and the retry counter (rejected dice) carries over from step to step in the environment's state,
so no two dice of one episode ever share a word.
"""

from __future__ import annotations

import numpy as np

from .._numba import borrow, njit
from ..rng_nb import (
    _READY,
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
    philox4x32,
    rejection_threshold,
    stream_bounded,
    stream_die,
    stream_start,
    stream_word,
)

__all__ = [
    "AHEAD_ENVS",
    "LANES_MIN",
    "borrowing",
    "lanes_may_take",
    "new_ahead",
    "new_state",
    "rejection_threshold",
    "step_kernels",
    "stream_ahead",
    "stream_bounded",
    "stream_die",
    "stream_retries",
    "stream_seek",
    "stream_seek_ahead",
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


#: Environments whose first block of a step is drawn in one pass (combatsim.rl._stream).
AHEAD_ENVS = 64


#: Rows of the ahead buffer (behind the stream's own slots in ``new_state``'s array): the counters'
#: item low and high words and block, the key words, then the four words of each block.
_AHEAD_ROWS = 9
_ROW = tuple(STREAM_SIZE + row * AHEAD_ENVS for row in range(_AHEAD_ROWS))


#: Fewer envs than this (a single env, a batch's last few) are stepped by the reference's body: the
#: lockstep lanes' loops cost the same for 1 env as for 64.
LANES_MIN = 16


@njit(inline="always")
def lanes_may_take(state, first, policies):
    """Whether lockstep lanes may take any of the envs from ``first`` on: LANES_MIN of them left and
    both policies external (0) or scripted (1); a random policy draws its choice: the body's steps.
    Inlined into the step: a call of the lanes costs tens of ns even when they take none."""
    return state.shape[0] - first >= LANES_MIN and 0 <= policies[0] <= 1 and 0 <= policies[1] <= 1


@njit
def new_state():
    """An item stream with room behind it for the blocks drawn ahead (``stream_ahead``)."""
    return np.zeros(STREAM_SIZE + _AHEAD_ROWS * AHEAD_ENVS, dtype=np.uint64)


@njit(inline="always")
def new_ahead(rng):
    """The ahead buffer: the stream array itself (no view made per call)."""
    return rng


@njit(inline="always")
def stream_ahead(seeds, state, first, words_per_step, ahead):
    """The first block of the coming step of envs first .. first + AHEAD_ENVS - 1 (the word at
    (t + 1) x words_per_step of episode state[e, 0], t = state[e, 1]): the counters and keys are
    gathered into rows first, so LLVM vectorises the Philox loop over them."""
    count = min(state.shape[0] - first, AHEAD_ENVS)
    for i in range(count):
        index = np.uint64(state[first + i, 0])
        seed = seeds[first + i]
        ahead[_ROW[0] + i] = index & MASK32
        ahead[_ROW[1] + i] = index >> SHIFT32
        ahead[_ROW[2] + i] = np.uint64(((state[first + i, 1] + 1) * words_per_step) >> 2)
        ahead[_ROW[3] + i] = seed & MASK32
        ahead[_ROW[4] + i] = seed >> SHIFT32
    for i in range(count):
        w0, w1, w2, w3 = philox4x32(ahead[_ROW[0] + i], ahead[_ROW[1] + i], ahead[_ROW[2] + i], DOMAIN_ITEM,
                                    ahead[_ROW[3] + i], ahead[_ROW[4] + i])
        ahead[_ROW[5] + i] = w0
        ahead[_ROW[6] + i] = w1
        ahead[_ROW[7] + i] = w2
        ahead[_ROW[8] + i] = w3


@njit(inline="always")
def stream_seek_ahead(state, k0, k1, index, word_offset, retries, ahead, slot):
    """``stream_seek`` with the first block taken from slot ``slot`` of ``ahead``."""
    stream_seek(state, k0, k1, index, word_offset, retries)
    for j in range(4):
        state[_WORDS + j] = ahead[_ROW[5 + j] + slot]
    state[_READY] = np.uint64(word_offset) + np.uint64(1)


@njit
def stream_retries(state):
    return np.int64(state[_RETRIES])


def borrowing(step_all):
    """``_step_all`` run on borrowed views of its arrays (see _numba.borrow): in the per-env loop the
    step modules' helpers pass ``iparams``, ``state`` and the stream around dozens of times an env
    step, and counting those references cost about half the Numba twins' time."""
    impl = njit(step_all)

    def _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng):
        impl(borrow(iparams), borrow(seeds), borrow(state), borrow(actions), borrow(policies), shaping,
             borrow(obs), borrow(reward), borrow(terminated), borrow(truncated), borrow(mask), borrow(rng))

    # One wrapper per ruleset: a distinct name keeps their Numba cache entries apart.
    _step_all.__qualname__ = f"borrowing_{step_all.__module__.rsplit('.', 1)[-1]}"
    return njit(_step_all)


def step_kernels(called=()):
    """The decorator the duel step twins put on every function.

    ``_step_all`` runs on borrowed arrays (no reference counting in the per-env loop; see
    ``borrowing``) and every helper is inlined into it at the Numba IR level: as separate functions
    Numba passes each array as seven scalars, and those calls made the twins 2-3x slower than the
    Cython ones. The public kernels, and the helpers named in ``called`` (big ones whose inlining
    takes minutes to compile), stay separate functions.
    """

    def kernel(function):
        if function.__name__ == "_step_all":
            return borrowing(function)
        if function.__name__.endswith(("_reset", "_step", "_rollout", "_duels")) or function.__name__ in called:
            return njit(function)
        return njit(inline="always")(function)

    return kernel
