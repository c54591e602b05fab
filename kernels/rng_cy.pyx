# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Cython twins of the "rng" kernels (dice histograms, word streams) for tests and benchmarks."""
from libc.stdint cimport int64_t, uint32_t, uint64_t

import numpy as np

from rng cimport (Stream, Words, block, dense_die, philox4x32 as _philox4x32, rejection_threshold, stream_die,
                 stream_start)


def philox4x32(counter, key):
    cdef Words words = _philox4x32(counter[0], counter[1], counter[2], counter[3], key[0], key[1])
    return words.w0, words.w1, words.w2, words.w3


def philox_words(uint64_t seed, uint64_t index, int64_t blocks, uint32_t domain, uint64_t[::1] out):
    cdef int64_t b
    cdef Words words
    for b in range(blocks):
        words = block(<uint32_t>seed, <uint32_t>(seed >> 32), index, <uint32_t>b, domain)
        out[4 * b] = words.w0
        out[4 * b + 1] = words.w1
        out[4 * b + 2] = words.w2
        out[4 * b + 3] = words.w3


def dense_dice(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] sides,
               int64_t[::1] counts, int64_t[::1] out):
    cdef uint32_t side_count = <uint32_t>sides[0]
    cdef uint32_t threshold = rejection_threshold(side_count)
    cdef Stream stream
    cdef int64_t k, value
    cdef bint keep = out.shape[0] > 0, histogram = counts.shape[0] > 0
    with nogil:
        for k in range(count):
            value = dense_die(&stream, seed, <uint64_t>(start + k), side_count, threshold)
            if histogram:
                counts[value - 1] += 1
            if keep:
                out[k] = value


def item_dice(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] sides,
              int64_t dice_per_item, int64_t[::1] counts, int64_t[::1] out):
    cdef uint32_t side_count = <uint32_t>sides[0]
    cdef uint32_t threshold = rejection_threshold(side_count)
    cdef Stream stream
    cdef int64_t k, d, value, total
    cdef bint keep = out.shape[0] > 0, histogram = counts.shape[0] > 0
    with nogil:
        for k in range(count):
            stream_start(&stream, seed, <uint64_t>(start + k))
            total = 0
            for d in range(dice_per_item):
                value = stream_die(&stream, side_count, threshold)
                if histogram:
                    counts[value - 1] += 1
                total += value
            if keep:
                out[k] = total


def ahead_dice(uint64_t seed, uint64_t index, uint32_t sides, int64_t[::1] out):
    """Item ``index``'s first dice from its stream drawn ahead (as the fights draw it; for tests)."""
    cdef Stream stream
    cdef uint32_t threshold = rejection_threshold(sides)
    cdef Py_ssize_t k
    stream_start(&stream, seed, index)
    stream.ahead = True
    for k in range(out.shape[0]):
        out[k] = stream_die(&stream, sides, threshold)


cdef extern from "dense_count.h" nogil:
    int64_t dense_count(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                        uint64_t sides, uint64_t bar, uint32_t threshold, int64_t* rejected)


def dense_count_pass(uint64_t seed, int64_t first_block, int64_t last_block, uint32_t sides, int64_t first_value):
    """(count, rejected) of dense_count.h in the clone the level picks (combatsim.kernels.clones)."""
    cdef int64_t rejected, count
    count = dense_count(<uint32_t>seed, <uint32_t>(seed >> 32), first_block, last_block, sides,
                        (<uint64_t>first_value) << 32, rejection_threshold(sides), &rejected)
    return count, rejected


cdef extern from "philox.h" nogil:
    void philox_dense_words(uint32_t k0, uint32_t k1, uint32_t domain, int64_t first, int64_t count,
                            uint32_t* out)
    void philox_keyed_blocks(int64_t n, const uint64_t* keys, const uint64_t* items, const uint32_t* blocks,
                             uint32_t domain, uint32_t* out)


def dense_words(uint64_t seed, uint32_t domain, int64_t first_block, int64_t blocks):
    """Words of blocks first_block .. first_block + blocks - 1, block (g, 0, domain), in block order."""
    out = np.empty(4 * blocks, dtype=np.uint32)
    cdef uint32_t[::1] view = out
    if blocks:
        philox_dense_words(<uint32_t>seed, <uint32_t>(seed >> 32), domain, first_block, blocks, &view[0])
    return out


def keyed_blocks(const uint64_t[::1] keys, const uint64_t[::1] items, const uint32_t[::1] blocks, uint32_t domain):
    """Block blocks[i] of item items[i] under key keys[i], for every i (AVX2 lanes where available)."""
    cdef int64_t n = keys.shape[0]
    if items.shape[0] != n or blocks.shape[0] != n:
        raise ValueError("keys, items and blocks must have the same length")
    out = np.zeros((n, 4), dtype=np.uint32)
    cdef uint32_t[:, ::1] view = out
    if n:
        philox_keyed_blocks(n, &keys[0], &items[0], &blocks[0], domain, &view[0, 0])
    return out


include "clones.pxi"
