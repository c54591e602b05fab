# Philox4x32-10 and exactly uniform dice for Cython kernels (layout: docs/rng.md).
# Everything here is inline, so no module backs this file at run time; pyx files cimport it as
# `from rng cimport ...` with kernels/ on the include path (setup.py).
from libc.stdint cimport int64_t, uint32_t, uint64_t

cdef enum:
    DOMAIN_ITEM = 0
    DOMAIN_DENSE = 1
    DOMAIN_RETRY = 2

ctypedef struct Words:
    uint32_t w0
    uint32_t w1
    uint32_t w2
    uint32_t w3

cdef extern from "philox.h" nogil:
    enum: PHILOX_AHEAD_BLOCKS
    void philox_ahead_blocks(uint32_t k0, uint32_t k1, uint64_t index, uint32_t first, uint32_t* out)

cdef enum:
    AHEAD_WORDS = 4 * PHILOX_AHEAD_BLOCKS


ctypedef struct Stream:
    # One item's counter space: words from DOMAIN_ITEM in order, retries from DOMAIN_RETRY. Word k
    # of the item is in ``words[k % AHEAD_WORDS]`` once drawn (k < ``drawn``): a block at a time, or
    # PHILOX_AHEAD_BLOCKS blocks at once when ``ahead`` (a stream read from its start that reads
    # many words: a fight; the blocks' rounds run side by side, and a fight that ends leaves some
    # words unused). The attack kernels and an env's step, which read a few words, draw a block at a
    # time; the fights, the engines' Cython builds and the d100 lanes draw ahead.
    uint32_t k0
    uint32_t k1
    uint32_t lo
    uint32_t hi
    uint64_t used
    uint64_t retries
    uint64_t drawn
    bint ahead
    uint32_t words[AHEAD_WORDS]
    uint32_t retry_words[4]


cdef inline Words philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                             uint32_t k0, uint32_t k1) noexcept nogil:
    cdef uint64_t product0, product1
    cdef int round_number
    cdef Words out
    for round_number in range(10):
        product0 = <uint64_t>0xD2511F53u * c0
        product1 = <uint64_t>0xCD9E8D57u * c2
        c0 = <uint32_t>(product1 >> 32) ^ c1 ^ k0
        c1 = <uint32_t>product1
        c2 = <uint32_t>(product0 >> 32) ^ c3 ^ k1
        c3 = <uint32_t>product0
        k0 = k0 + 0x9E3779B9u
        k1 = k1 + 0xBB67AE85u
    out.w0 = c0
    out.w1 = c1
    out.w2 = c2
    out.w3 = c3
    return out


cdef inline Words block(uint32_t k0, uint32_t k1, uint64_t index, uint32_t block_number,
                        uint32_t domain) noexcept nogil:
    return philox4x32(<uint32_t>index, <uint32_t>(index >> 32), block_number, domain, k0, k1)


cdef inline uint32_t pick(Words words, int64_t position) noexcept nogil:
    if position == 0:
        return words.w0
    if position == 1:
        return words.w1
    if position == 2:
        return words.w2
    return words.w3


cdef inline uint32_t rejection_threshold(uint32_t sides) noexcept nogil:
    # (2**32 - sides) % sides, once per kernel call, not per die.
    return (<uint32_t>0 - sides) % sides


cdef inline void stream_start(Stream* stream, uint64_t seed, uint64_t index) noexcept nogil:
    # Item ``index``'s stream from its first word, drawn a block at a time.
    stream.k0 = <uint32_t>seed
    stream.k1 = <uint32_t>(seed >> 32)
    stream.lo = <uint32_t>index
    stream.hi = <uint32_t>(index >> 32)
    stream.used = 0
    stream.retries = 0
    stream.drawn = 0
    stream.ahead = False


cdef inline void _fill(uint32_t* out, Words words) noexcept nogil:
    out[0] = words.w0
    out[1] = words.w1
    out[2] = words.w2
    out[3] = words.w3


cdef inline void _draw(Stream* stream, uint64_t used) noexcept nogil:
    # The words from ``used`` on (a block's first word; a whole draw's first block).
    if stream.ahead:
        philox_ahead_blocks(stream.k0, stream.k1, (<uint64_t>stream.hi << 32) | stream.lo, <uint32_t>(used >> 2),
                            stream.words)
        stream.drawn = used + AHEAD_WORDS
    else:
        _fill(&stream.words[used & (AHEAD_WORDS - 4)],
              philox4x32(stream.lo, stream.hi, <uint32_t>(used >> 2), DOMAIN_ITEM, stream.k0, stream.k1))
        stream.drawn = used + 4


cdef inline uint32_t stream_word(Stream* stream) noexcept nogil:
    cdef uint64_t used = stream.used
    if used == stream.drawn:
        _draw(stream, used)
    stream.used = used + 1
    return stream.words[used & (AHEAD_WORDS - 1)]


cdef inline uint32_t stream_retry_word(Stream* stream) noexcept nogil:
    cdef uint64_t position = stream.retries & 3
    if position == 0:
        _fill(stream.retry_words, philox4x32(stream.lo, stream.hi, <uint32_t>(stream.retries >> 2), DOMAIN_RETRY,
                                             stream.k0, stream.k1))
    stream.retries += 1
    return stream.retry_words[position]


cdef inline int64_t stream_bounded(Stream* stream, uint32_t word, uint32_t sides,
                                   uint32_t threshold) noexcept nogil:
    # Lemire's multiply-shift; a rejected product retries from the item's retry domain.
    cdef uint64_t product = <uint64_t>word * sides
    while <uint32_t>product < threshold:
        product = <uint64_t>stream_retry_word(stream) * sides
    return <int64_t>(product >> 32)


cdef inline int64_t stream_die(Stream* stream, uint32_t sides, uint32_t threshold) noexcept nogil:
    return stream_bounded(stream, stream_word(stream), sides, threshold) + 1


cdef inline void stream_resume(Stream* stream, uint64_t seed, int64_t index, int64_t words_used,
                               int64_t retries_used) noexcept nogil:
    # Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent
    # (combatsim.engine's stream functions): drawn ahead when resumed at its start (a fight
    # begins), else a block at a time (an env's step reads a few words); a partly read block is
    # drawn again, so the next word is the one a fight reads there.
    stream_start(stream, seed, <uint64_t>index)
    stream.used = <uint64_t>words_used
    stream.retries = <uint64_t>retries_used
    stream.drawn = <uint64_t>words_used
    stream.ahead = words_used == 0
    if words_used & 3:
        _draw(stream, <uint64_t>(words_used & ~3))
    if retries_used & 3:
        _fill(stream.retry_words, philox4x32(stream.lo, stream.hi, <uint32_t>(retries_used >> 2), DOMAIN_RETRY,
                                             stream.k0, stream.k1))


cdef inline void stream_continue(Stream* stream, uint64_t seed, int64_t index, int64_t words_used,
                                 int64_t retries_used, int64_t block_low, int64_t block_high) noexcept nogil:
    # stream_resume, the partly read block's words (if any) given as stream_block packed them.
    cdef uint32_t* words
    stream_resume(stream, seed, index, words_used & ~3, retries_used)
    if words_used & 3:
        words = &stream.words[words_used & (AHEAD_WORDS - 4)]
        words[0] = <uint32_t>block_low
        words[1] = <uint32_t>(<uint64_t>block_low >> 32)
        words[2] = <uint32_t>block_high
        words[3] = <uint32_t>(<uint64_t>block_high >> 32)
        stream.used = <uint64_t>words_used
        stream.drawn = <uint64_t>(words_used & ~3) + 4
        stream.ahead = False


cdef inline int64_t stream_block(Stream* stream, int64_t half) noexcept nogil:
    # Two words of the block that holds the next word, packed, while that block is partly read; else 0.
    cdef uint64_t used = stream.used
    cdef uint32_t* words = &stream.words[(used & (AHEAD_WORDS - 4)) + 2 * half]
    if used & 3 == 0:
        return 0
    return <int64_t>(words[0] | (<uint64_t>words[1] << 32))


cdef inline int64_t stream_words_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.used


cdef inline int64_t stream_retries_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.retries


cdef inline int64_t stream_roll(Stream* stream, int64_t count, uint32_t sides, uint32_t threshold,
                                int64_t modifier) noexcept nogil:
    cdef int64_t total = modifier
    cdef int64_t k
    for k in range(count):
        total += stream_die(stream, sides, threshold)
    return total


cdef inline Words dense_block(uint64_t seed, uint64_t index) noexcept nogil:
    # The dense block that holds item ``index``'s word (and those of its three neighbours).
    return block(<uint32_t>seed, <uint32_t>(seed >> 32), index >> 2, 0, DOMAIN_DENSE)


cdef inline int64_t dense_die_in(Stream* stream, uint64_t seed, uint64_t index, Words words, uint32_t sides,
                                 uint32_t threshold) noexcept nogil:
    # dense_die given item ``index``'s dense block: loops over items keep a block for its four.
    stream_start(stream, seed, index)
    return stream_bounded(stream, pick(words, index & 3), sides, threshold) + 1


cdef inline int64_t dense_die(Stream* stream, uint64_t seed, uint64_t index, uint32_t sides,
                              uint32_t threshold) noexcept nogil:
    # The die of item ``index`` in a one-word-per-item kernel.
    return dense_die_in(stream, seed, index, dense_block(seed, index), sides, threshold)
