# The item stream of the engines' Cython builds (kernels/<ruleset>/engine_cy.pyx): the C twin of
# combatsim.engine's stream functions (Numba twin: combatsim.kernels.engine_nb), on rng.pxd's
# AheadStream, as the hand-written fight kernels: a fight reads many words of its stream in order,
# and 16 blocks drawn at once (side by side in vectors) cost a fraction of 16 drawn one by one. An
# env's step, resumed within a draw, draws those 16 blocks again: measured no slower than the one
# block a plain stream draws again there.
# Inline only, like rng.pxd; the engines cimport it as `from engine_stream cimport ...`.
from libc.stdint cimport int64_t, uint32_t, uint64_t

from rng cimport (DOMAIN_RETRY, PHILOX_AHEAD_BLOCKS, AheadStream, Words, ahead_word, philox4x32, philox_ahead_blocks,
                  rejection_threshold, stream_start)
from rng cimport stream_bounded as item_bounded

ctypedef AheadStream Stream

cdef enum:
    # Words an AheadStream draws at once; a draw starts at a multiple of it (ahead_word's slot is a mask).
    AHEAD_WORDS = 4 * PHILOX_AHEAD_BLOCKS


cdef inline void _fill(uint32_t* out, Words words) noexcept nogil:
    out[0] = words.w0
    out[1] = words.w1
    out[2] = words.w2
    out[3] = words.w3


cdef inline void stream_resume(Stream* stream, uint64_t seed, int64_t index, int64_t words_used,
                               int64_t retries_used) noexcept nogil:
    # Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent:
    # the draw that holds the next word is drawn again (at a draw's start: by the next word), so
    # the next word is the one a fight reads there.
    cdef uint64_t first = <uint64_t>words_used & ~(<uint64_t>AHEAD_WORDS - 1)
    stream_start(&stream.stream, seed, <uint64_t>index)
    stream.stream.used = <uint64_t>words_used
    stream.stream.retries = <uint64_t>retries_used
    stream.drawn = first
    if <uint64_t>words_used != first:
        philox_ahead_blocks(stream.stream.k0, stream.stream.k1, <uint64_t>index, <uint32_t>(first >> 2), stream.words)
        stream.drawn = first + AHEAD_WORDS
    if retries_used & 3:
        _fill(stream.stream.retry_words, philox4x32(stream.stream.lo, stream.stream.hi, <uint32_t>(retries_used >> 2),
                                                    DOMAIN_RETRY, stream.stream.k0, stream.stream.k1))


cdef inline int64_t stream_words_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.stream.used


cdef inline int64_t stream_retries_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.stream.retries


cdef inline uint32_t stream_word(Stream* stream) noexcept nogil:
    return ahead_word(stream)


cdef inline int64_t stream_bounded(Stream* stream, uint32_t word, uint32_t sides, uint32_t threshold) noexcept nogil:
    return item_bounded(&stream.stream, word, sides, threshold)


cdef inline int64_t stream_die(Stream* stream, uint32_t sides, uint32_t threshold) noexcept nogil:
    return item_bounded(&stream.stream, ahead_word(stream), sides, threshold) + 1


cdef inline int64_t stream_roll(Stream* stream, int64_t count, uint32_t sides, uint32_t threshold,
                                int64_t modifier) noexcept nogil:
    cdef int64_t total = modifier
    cdef int64_t k
    for k in range(count):
        total += stream_die(stream, sides, threshold)
    return total
