# The item stream of the engines' Cython builds (kernels/<ruleset>/engine_cy.pyx): the C twin of
# combatsim.engine's stream functions (Numba twin: combatsim.kernels.engine_nb), on rng.pxd's Stream.
# Inline only, like rng.pxd; the engines cimport it as `from engine_stream cimport ...`.
from libc.stdint cimport int64_t, uint32_t, uint64_t

from rng cimport (DOMAIN_ITEM, DOMAIN_RETRY, Stream, Words, philox4x32, rejection_threshold, stream_bounded,
                  stream_die, stream_roll, stream_start, stream_word)


cdef inline void _fill(uint32_t* out, Words words) noexcept nogil:
    out[0] = words.w0
    out[1] = words.w1
    out[2] = words.w2
    out[3] = words.w3


cdef inline void stream_resume(Stream* stream, uint64_t seed, int64_t index, int64_t words_used,
                               int64_t retries_used) noexcept nogil:
    # Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent:
    # a partly read block is drawn again, so the next word is the one a fight reads there.
    stream_start(stream, seed, <uint64_t>index)
    stream.used = <uint64_t>words_used
    stream.retries = <uint64_t>retries_used
    if words_used & 3:
        _fill(stream.words, philox4x32(stream.lo, stream.hi, <uint32_t>(words_used >> 2), DOMAIN_ITEM,
                                       stream.k0, stream.k1))
    if retries_used & 3:
        _fill(stream.retry_words, philox4x32(stream.lo, stream.hi, <uint32_t>(retries_used >> 2), DOMAIN_RETRY,
                                             stream.k0, stream.k1))


cdef inline int64_t stream_words_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.used


cdef inline int64_t stream_retries_used(Stream* stream) noexcept nogil:
    return <int64_t>stream.retries
