"""Philox4x32-10 and exactly uniform dice for Numba kernels (layout: docs/rng.md).

Words travel as uint64 values holding 32 bits, so products and shifts stay unsigned. The item
stream keeps its state in a small uint64 array made once per kernel call, never per item.
"""

from __future__ import annotations

import numpy as np

from ._numba import njit

M0 = np.uint64(0xD2511F53)
M1 = np.uint64(0xCD9E8D57)
W0 = np.uint64(0x9E3779B9)
W1 = np.uint64(0xBB67AE85)
MASK32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)
DOMAIN_ITEM = np.uint64(0)
DOMAIN_DENSE = np.uint64(1)
DOMAIN_RETRY = np.uint64(2)

# Item-stream state layout (uint64 array of STREAM_SIZE).
_K0, _K1, _LO, _HI, _USED, _RETRIES = 0, 1, 2, 3, 4, 5
_WORDS, _RETRY_WORDS = 6, 10
# 1 + the _USED at which _WORDS already holds the next block (drawn ahead), else 0.
_READY = 14
STREAM_SIZE = 15


# Inlined at the Numba IR level: a call per block would stop LLVM from vectorising the loops
# that draw many blocks.
@njit(inline="always")
def philox4x32(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on uint64-held 32-bit words.

    Between rounds the words keep the high garbage of the products; only the multiplier inputs
    and the results are masked, which LLVM turns into 32x32->64 multiplies (vpmuludq) with no
    extra instruction.
    """
    for _ in range(10):
        product0 = M0 * (c0 & MASK32)
        product1 = M1 * (c2 & MASK32)
        c0, c1, c2, c3 = (
            (product1 >> SHIFT32) ^ c1 ^ k0,
            product1,
            (product0 >> SHIFT32) ^ c3 ^ k1,
            product0,
        )
        k0 = (k0 + W0) & MASK32
        k1 = (k1 + W1) & MASK32
    return c0 & MASK32, c1 & MASK32, c2 & MASK32, c3 & MASK32


@njit
def seed_key(seed):
    """The Philox key words of a 64-bit seed (passed as uint64)."""
    seed = np.uint64(seed)
    return seed & MASK32, seed >> SHIFT32


@njit(inline="always")
def block(k0, k1, index, block_number, domain):
    unsigned = np.uint64(index)
    return philox4x32(unsigned & MASK32, unsigned >> SHIFT32, np.uint64(block_number), domain, k0, k1)


@njit
def pick(w0, w1, w2, w3, position):
    if position == 0:
        return w0
    if position == 1:
        return w1
    if position == 2:
        return w2
    return w3


@njit
def rejection_threshold(sides):
    """(2**32 - sides) % sides, computed once per kernel call, not per die."""
    sides = np.uint64(sides)
    return (np.uint64(0x100000000) - sides) % sides


@njit(inline="always")
def stream_start(state, k0, k1, index):
    """Point ``state`` at item ``index``'s counter space, no words used yet."""
    unsigned = np.uint64(index)
    state[_K0] = k0
    state[_K1] = k1
    state[_LO] = unsigned & MASK32
    state[_HI] = unsigned >> SHIFT32
    state[_USED] = 0
    state[_RETRIES] = 0
    state[_READY] = 0


@njit(inline="always")
def _refill(state, used, domain, offset):
    w0, w1, w2, w3 = philox4x32(
        state[_LO], state[_HI], used >> np.uint64(2), domain, state[_K0], state[_K1]
    )
    state[offset] = w0
    state[offset + 1] = w1
    state[offset + 2] = w2
    state[offset + 3] = w3


@njit(inline="always")
def stream_word(state):
    used = state[_USED]
    position = used & np.uint64(3)
    if position == 0 and used + np.uint64(1) != state[_READY]:
        _refill(state, used, DOMAIN_ITEM, _WORDS)
    state[_USED] = used + np.uint64(1)
    return state[_WORDS + position]


@njit(inline="always")
def stream_retry_word(state):
    used = state[_RETRIES]
    position = used & np.uint64(3)
    if position == 0:
        _refill(state, used, DOMAIN_RETRY, _RETRY_WORDS)
    state[_RETRIES] = used + np.uint64(1)
    return state[_RETRY_WORDS + position]


@njit(inline="always")
def stream_bounded(state, word, sides, threshold):
    """Uniform 0..sides-1 from ``word``; rejected products retry from the item's retry domain."""
    product = word * sides
    while (product & MASK32) < threshold:
        product = stream_retry_word(state) * sides
    return np.int64(product >> SHIFT32)


@njit(inline="always")
def stream_die(state, sides, threshold):
    """One die 1..sides from the next item word."""
    return stream_bounded(state, stream_word(state), sides, threshold) + 1


@njit(inline="always")
def stream_roll(state, count, sides, threshold, modifier):
    """NdS+K: ``count`` dice, consuming item words left to right."""
    total = np.int64(modifier)
    for _ in range(count):
        total += stream_die(state, sides, threshold)
    return total


@njit(inline="always")
def dense_die_in(state, k0, k1, index, w0, w1, w2, w3, sides, threshold):
    """dense_die given item ``index``'s dense block ``w0..w3``: loops over items keep a block
    (``block(k0, k1, index >> 2, 0, DOMAIN_DENSE)``) for its four items."""
    stream_start(state, k0, k1, index)
    return stream_bounded(state, pick(w0, w1, w2, w3, index & 3), sides, threshold) + 1


@njit
def dense_die(state, k0, k1, index, sides, threshold):
    """The die of item ``index`` in a one-word-per-item kernel (``state`` serves its retries)."""
    w0, w1, w2, w3 = block(k0, k1, index >> 2, 0, DOMAIN_DENSE)
    return dense_die_in(state, k0, k1, index, w0, w1, w2, w3, sides, threshold)


# Kernels of the "rng" family (registry): dice histograms and per-item values for tests.
@njit
def dense_dice(seed, start, count, sides, counts, out):
    k0, k1 = seed_key(seed)
    side_count = np.uint64(sides[0])
    threshold = rejection_threshold(side_count)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    for k in range(count):
        value = dense_die(state, k0, k1, start + k, side_count, threshold)
        if counts.shape[0]:
            counts[value - 1] += 1
        if out.shape[0]:
            out[k] = value


@njit
def item_dice(seed, start, count, sides, dice_per_item, counts, out):
    k0, k1 = seed_key(seed)
    side_count = np.uint64(sides[0])
    threshold = rejection_threshold(side_count)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    for k in range(count):
        stream_start(state, k0, k1, start + k)
        total = 0
        for _ in range(dice_per_item):
            value = stream_die(state, side_count, threshold)
            if counts.shape[0]:
                counts[value - 1] += 1
            total += value
        if out.shape[0]:
            out[k] = total


@njit
def philox_words(seed, index, blocks, domain, out):
    """``blocks`` consecutive blocks of one item and domain, four words each (for tests)."""
    k0, k1 = seed_key(seed)
    for b in range(blocks):
        w0, w1, w2, w3 = block(k0, k1, index, b, np.uint64(domain))
        out[4 * b] = w0
        out[4 * b + 1] = w1
        out[4 * b + 2] = w2
        out[4 * b + 3] = w3
