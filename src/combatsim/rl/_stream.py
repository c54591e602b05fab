"""Positioned item streams for the pure-Python step kernels (the Numba twin: kernels/rl/_stream_nb.py).

The functions mirror ``combatsim.kernels.rng_nb``'s stream API on a small holder object, so the
reference step kernels read like their compiled twins.
"""

from __future__ import annotations

from combatsim.rng import DOMAIN_RETRY, ItemStream, block
from combatsim.rng import rejection_threshold as _threshold


class StreamState:
    """Holder for the one item stream a kernel call reads at a time."""

    __slots__ = ("stream",)

    def __init__(self) -> None:
        self.stream = ItemStream(0, 0)


def rejection_threshold(sides) -> int:
    return _threshold(int(sides))


def stream_seek(state: StreamState, k0, k1, index, word_offset, retries) -> None:
    """Item ``index`` of key (k0, k1), positioned at word ``word_offset`` (a multiple of 4)."""
    seed = int(k0) | (int(k1) << 32)
    stream = ItemStream(seed, int(index))
    stream.words_used = int(word_offset)
    stream.retries_used = int(retries)
    if stream.retries_used & 3:
        stream._retry_block = block(seed, int(index), stream.retries_used // 4, DOMAIN_RETRY)
    state.stream = stream


#: Environments whose first block of a step the compiled twins draw in one SIMD pass.
AHEAD_ENVS = 64


def new_ahead(state: StreamState) -> None:
    """The compiled twins' buffer of blocks drawn ahead; the reference draws every word on demand."""
    return None


def stream_ahead(seeds, state, first, words_per_step, ahead) -> None:
    """Compiled twins: draw the first block of the coming step of envs ``first`` .. ``first +
    AHEAD_ENVS - 1`` at once. The words are the same ones drawn on demand, so here it does nothing."""


def stream_seek_ahead(state: StreamState, k0, k1, index, word_offset, retries, ahead, slot) -> None:
    """``stream_seek``, with the first block taken from slot ``slot`` of ``ahead`` in the twins."""
    stream_seek(state, k0, k1, index, word_offset, retries)


def stream_retries(state: StreamState) -> int:
    return state.stream.retries_used


def stream_word(state: StreamState) -> int:
    return state.stream.word()


def stream_bounded(state: StreamState, word, sides, threshold) -> int:
    return state.stream.bounded(int(word), int(sides))


def stream_die(state: StreamState, sides, threshold) -> int:
    return state.stream.die(int(sides))


def seed_key(seed) -> tuple[int, int]:
    seed = int(seed)
    return seed & 0xFFFFFFFF, seed >> 32


def new_state() -> StreamState:
    return StreamState()
