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

ctypedef struct Stream:
    # One item's counter space: words from DOMAIN_ITEM in order, retries from DOMAIN_RETRY.
    uint32_t k0
    uint32_t k1
    uint32_t lo
    uint32_t hi
    uint64_t used
    uint64_t retries
    # 1 + the ``used`` at which ``words`` already holds the next block (drawn ahead), else 0.
    uint64_t ready
    uint32_t words[4]
    uint32_t retry_words[4]


cdef extern from "philox.h" nogil:
    enum: PHILOX_AHEAD_BLOCKS
    void philox_ahead_blocks(uint32_t k0, uint32_t k1, uint64_t index, uint32_t first, uint32_t* out)


ctypedef struct AheadStream:
    # An item stream whose words are drawn PHILOX_AHEAD_BLOCKS blocks at a time: stream_word's
    # words in the same order, for kernels that draw many words from one item (the fights; a fight
    # that ends leaves some unused). ``stream`` holds the key, the item index, the words used and
    # the retries.
    Stream stream
    uint64_t drawn
    uint32_t words[4 * PHILOX_AHEAD_BLOCKS]


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
    stream.k0 = <uint32_t>seed
    stream.k1 = <uint32_t>(seed >> 32)
    stream.lo = <uint32_t>index
    stream.hi = <uint32_t>(index >> 32)
    stream.used = 0
    stream.retries = 0
    stream.ready = 0


cdef inline uint32_t stream_word(Stream* stream) noexcept nogil:
    cdef uint64_t position = stream.used & 3
    cdef Words words
    if position == 0 and stream.used + 1 != stream.ready:
        words = philox4x32(stream.lo, stream.hi, <uint32_t>(stream.used >> 2), DOMAIN_ITEM,
                           stream.k0, stream.k1)
        stream.words[0] = words.w0
        stream.words[1] = words.w1
        stream.words[2] = words.w2
        stream.words[3] = words.w3
    stream.used += 1
    return stream.words[position]


cdef inline uint32_t stream_retry_word(Stream* stream) noexcept nogil:
    cdef uint64_t position = stream.retries & 3
    cdef Words words
    if position == 0:
        words = philox4x32(stream.lo, stream.hi, <uint32_t>(stream.retries >> 2), DOMAIN_RETRY,
                           stream.k0, stream.k1)
        stream.retry_words[0] = words.w0
        stream.retry_words[1] = words.w1
        stream.retry_words[2] = words.w2
        stream.retry_words[3] = words.w3
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


cdef inline void ahead_start(AheadStream* ahead, uint64_t seed, uint64_t index) noexcept nogil:
    stream_start(&ahead.stream, seed, index)
    ahead.drawn = 0


cdef inline uint32_t ahead_word(AheadStream* ahead) noexcept nogil:
    cdef uint64_t used = ahead.stream.used
    if used == ahead.drawn:
        philox_ahead_blocks(ahead.stream.k0, ahead.stream.k1, (<uint64_t>ahead.stream.hi << 32) | ahead.stream.lo,
                            <uint32_t>(used >> 2), ahead.words)
        ahead.drawn = used + 4 * PHILOX_AHEAD_BLOCKS
    ahead.stream.used = used + 1
    return ahead.words[used & (4 * PHILOX_AHEAD_BLOCKS - 1)]


cdef inline int64_t ahead_die(AheadStream* ahead, uint32_t sides, uint32_t threshold) noexcept nogil:
    return stream_bounded(&ahead.stream, ahead_word(ahead), sides, threshold) + 1


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
