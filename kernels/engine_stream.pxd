# The item stream of the engines' Cython builds (kernels/<ruleset>/engine_cy.pyx): the C twin of
# combatsim.engine's stream functions (Numba twin: combatsim.kernels.engine_nb), on rng.pxd's AheadStream.
# Inline only, like rng.pxd; the engines cimport it as `from engine_stream cimport ...`.
from libc.stdint cimport int64_t, uint32_t, uint64_t

from rng cimport (DOMAIN_ITEM, DOMAIN_RETRY, PHILOX_AHEAD_BLOCKS, AheadStream, Words, philox4x32,
                  philox_ahead_blocks, rejection_threshold, stream_bounded as item_bounded, stream_start)

cdef enum:
    AHEAD_WORDS = 4 * PHILOX_AHEAD_BLOCKS


ctypedef struct Stream:
    # rng.pxd's AheadStream, drawn PHILOX_AHEAD_BLOCKS blocks at a time when resumed at its start
    # (a fight begins: many words follow, and the blocks' rounds run side by side), one block at a
    # time when resumed mid-way (an env's step reads a few words). Either way word k is in
    # ``ahead.words[k % AHEAD_WORDS]``; ``ahead.stream`` counts the words and holds the retries.
    AheadStream ahead
    bint whole


cdef inline void _fill(uint32_t* out, Words words) noexcept nogil:
    out[0] = words.w0
    out[1] = words.w1
    out[2] = words.w2
    out[3] = words.w3


cdef inline void _draw(Stream* stream, uint64_t used) noexcept nogil:
    # The words from ``used`` on (a block's first word; a whole draw's first block).
    cdef AheadStream* ahead = &stream.ahead
    if stream.whole:
        philox_ahead_blocks(ahead.stream.k0, ahead.stream.k1, (<uint64_t>ahead.stream.hi << 32) | ahead.stream.lo,
                            <uint32_t>(used >> 2), ahead.words)
        ahead.drawn = used + AHEAD_WORDS
    else:
        _fill(&ahead.words[used & (AHEAD_WORDS - 4)], philox4x32(ahead.stream.lo, ahead.stream.hi,
                                                                 <uint32_t>(used >> 2), DOMAIN_ITEM,
                                                                 ahead.stream.k0, ahead.stream.k1))
        ahead.drawn = used + 4


cdef inline void stream_resume(Stream* stream, uint64_t seed, int64_t index, int64_t words_used,
                               int64_t retries_used) noexcept nogil:
    # Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent:
    # a partly read block is drawn again, so the next word is the one a fight reads there.
    stream_start(&stream.ahead.stream, seed, <uint64_t>index)
    stream.ahead.stream.used = <uint64_t>words_used
    stream.ahead.stream.retries = <uint64_t>retries_used
    stream.ahead.drawn = <uint64_t>words_used
    stream.whole = words_used == 0
    if words_used & 3:
        _draw(stream, <uint64_t>(words_used & ~3))
    if retries_used & 3:
        _fill(stream.ahead.stream.retry_words, philox4x32(stream.ahead.stream.lo, stream.ahead.stream.hi,
                                                          <uint32_t>(retries_used >> 2), DOMAIN_RETRY,
                                                          stream.ahead.stream.k0, stream.ahead.stream.k1))


cdef inline void stream_continue(Stream* stream, uint64_t seed, int64_t index, int64_t words_used,
                                 int64_t retries_used, int64_t block_low, int64_t block_high) noexcept nogil:
    # stream_resume, the partly read block's words (if any) given as stream_block packed them.
    cdef uint32_t* words
    stream_resume(stream, seed, index, words_used & ~3, retries_used)
    if words_used & 3:
        words = &stream.ahead.words[words_used & (AHEAD_WORDS - 4)]
        words[0] = <uint32_t>block_low
        words[1] = <uint32_t>(<uint64_t>block_low >> 32)
        words[2] = <uint32_t>block_high
        words[3] = <uint32_t>(<uint64_t>block_high >> 32)
        stream.ahead.stream.used = <uint64_t>words_used
        stream.ahead.drawn = <uint64_t>(words_used & ~3) + 4
        stream.whole = False


cdef inline int64_t stream_block(Stream* stream, int64_t half) noexcept nogil:
    # Two words of the block that holds the next word, packed, while that block is partly read; else 0.
    cdef uint64_t used = stream.ahead.stream.used
    cdef uint32_t* words = &stream.ahead.words[(used & (AHEAD_WORDS - 4)) + 2 * half]
    if used & 3 == 0:
        return 0
    return <int64_t>(words[0] | (<uint64_t>words[1] << 32))


cdef inline int64_t stream_words_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.ahead.stream.used


cdef inline int64_t stream_retries_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.ahead.stream.retries


cdef inline uint32_t stream_word(Stream* stream) noexcept nogil:
    cdef uint64_t used = stream.ahead.stream.used
    if used == stream.ahead.drawn:
        _draw(stream, used)
    stream.ahead.stream.used = used + 1
    return stream.ahead.words[used & (AHEAD_WORDS - 1)]


cdef inline int64_t stream_bounded(Stream* stream, uint32_t word, uint32_t sides, uint32_t threshold) noexcept nogil:
    # Lemire's multiply-shift; a rejected product retries from the item's retry domain.
    return item_bounded(&stream.ahead.stream, word, sides, threshold)


cdef inline int64_t stream_die(Stream* stream, uint32_t sides, uint32_t threshold) noexcept nogil:
    return item_bounded(&stream.ahead.stream, stream_word(stream), sides, threshold) + 1


cdef inline int64_t stream_roll(Stream* stream, int64_t count, uint32_t sides, uint32_t threshold,
                                int64_t modifier) noexcept nogil:
    cdef int64_t total = modifier
    cdef int64_t k
    for k in range(count):
        total += stream_die(stream, sides, threshold)
    return total
