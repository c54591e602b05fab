# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""TSS kernels for Cython; the reference is combatsim.tss.reference (word layouts: docs/tss.md)."""
from libc.stdint cimport int8_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free

import numpy as np

from rng cimport (DOMAIN_DENSE, DOMAIN_ITEM, Stream, Words, dense_block, dense_die, dense_die_in, rejection_threshold,
                  stream_start)

from combatsim.engine import engine_kernels


cdef extern from "philox.h" nogil:
    # Words of dense blocks first .. first + count - 1 in block order (AVX2 lanes where the level allows).
    void philox_dense_words(uint32_t k0, uint32_t k1, uint32_t domain, int64_t first, int64_t count,
                            uint32_t* out)


cdef extern from "tss/joint_histogram.h" nogil:
    # histogram[word * faces >> 32] += 1 over dense blocks; returns the smallest low word.
    uint32_t joint_histogram(uint32_t k0, uint32_t k1, int64_t first_block, int64_t count, uint32_t faces,
                             uint32_t* histogram)

cdef enum:
    # Attacks per tile of the fast passes (fewer than 2**TIER_BITS of the engine): a tile with a
    # rejected word is redone exactly.
    TILE = 1024
    # Dense blocks per tile of the histogram pass (85 AVX2 steps of 12 blocks): the span a
    # rejected word makes the pass walk again.
    HISTOGRAM_TILE = 1020
    # The histogram pass runs when the whole blocks hold at least this many attacks per face of
    # the joint die: the fold evaluates each face once, so it must be amortised. Here the direct
    # fast pass is slow enough (no vectorised Philox) that one attack per face already pays.
    HISTOGRAM_MIN_ATTACKS_PER_FACE = 1

include "kernel_rules.pxi"


cdef void _attack_exact(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] config,
                        int64_t* tally, int8_t[::1] tier_out, int32_t[::1] stun_out,
                        int32_t[::1] wound_out, int32_t[::1] mortal_out) noexcept nogil:
    # Attack by attack, exactly as the reference: the engine's outcome of the attack's item stream,
    # or of its joint die's value (one dense block serves four attacks).
    cdef Stream stream
    cdef bint joint = config[C_JOINT] != 0
    cdef uint32_t faces = <uint32_t>config[C_JOINT_SIDES] if joint else 1
    cdef uint32_t threshold = rejection_threshold(faces)
    cdef int64_t k, tier, stun, wound, mortal
    cdef Words words
    cdef bint keep = tier_out.shape[0] > 0
    for k in range(count):
        if joint:
            if k == 0 or ((start + k) & 3) == 0:
                words = dense_block(seed, <uint64_t>(start + k))
            tier, stun, wound, mortal = joint_outcome(
                config, dense_die_in(&stream, seed, <uint64_t>(start + k), words, faces, threshold) - 1)
        else:
            stream_start(&stream, seed, <uint64_t>(start + k))
            tier, stun, wound, mortal = attack_outcome(&stream, config)
        tally[tier] += 1
        tally[5] += stun
        tally[6] += wound
        tally[7] += mortal
        if keep:
            tier_out[k] = <int8_t>tier
            stun_out[k] = <int32_t>stun
            wound_out[k] = <int32_t>wound
            mortal_out[k] = <int32_t>mortal


cdef void _joint_histogram(uint64_t seed, int64_t first_block, int64_t last_block, uint32_t faces,
                           uint32_t threshold, uint32_t* histogram) noexcept nogil:
    # histogram[v] += 1 for the joint die value v (0-based) of every attack of dense blocks
    # first_block .. last_block - 1, exactly the values dense_die gives. Per tile, joint_histogram.h
    # counts v = word * faces >> 32 and returns the smallest low word of the products. A tile
    # where that is below the threshold (a rejected word: about one attack in 2**32 / threshold)
    # is walked again: each rejected word's count moves to the value dense_die draws for that
    # attack from its retry domain. At most 2**31 attacks a call (the caller's segments), so the
    # uint32 counters never wrap.
    cdef uint32_t words[4 * HISTOGRAM_TILE]
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef uint64_t product
    cdef int64_t tile = first_block, blocks, j
    cdef Stream stream
    while tile < last_block:
        blocks = min(HISTOGRAM_TILE, last_block - tile)
        if joint_histogram(k0, k1, tile, blocks, faces, histogram) < threshold:
            philox_dense_words(k0, k1, DOMAIN_DENSE, tile, blocks, words)
            for j in range(4 * blocks):
                product = <uint64_t>words[j] * faces
                if <uint32_t>product < threshold:
                    histogram[product >> 32] -= 1
                    histogram[dense_die(&stream, seed, <uint64_t>(4 * tile + j), faces, threshold) - 1] += 1
        tile += blocks


def joint_histogram_pass(uint64_t seed, int64_t first_block, int64_t count, uint32_t faces):
    """(histogram, smallest low word) of joint_histogram.h in the clone the level picks
    (combatsim.kernels.clones), for tests."""
    histogram = np.zeros(faces, dtype=np.uint32)
    cdef uint32_t[::1] view = histogram
    cdef uint32_t low = joint_histogram(<uint32_t>seed, <uint32_t>(seed >> 32), first_block, count, faces, &view[0])
    return histogram, low


cdef void _joint_fold(const int64_t[::1] config, uint32_t* histogram, int64_t* totals) noexcept nogil:
    # Adds histogram[v] attacks of joint value v to totals for every v and zeroes the histogram:
    # each face is evaluated once, by the exact path's own function.
    cdef int64_t value, attacks, tier, stun, wound, mortal
    for value in range(config[C_JOINT_SIDES]):
        attacks = histogram[value]
        if attacks:
            histogram[value] = 0
            tier, stun, wound, mortal = joint_outcome(config, value)
            totals[tier] += attacks
            totals[5] += attacks * stun
            totals[6] += attacks * wound
            totals[7] += attacks * mortal


cdef bint _attack_joint_histogram(uint64_t seed, int64_t first_block, int64_t last_block,
                                  const int64_t[::1] config, int64_t* totals) noexcept nogil:
    # Whole dense blocks through the histogram pass and the fold (docs/tss.md, fast paths), in
    # segments of 2**29 blocks (2**31 attacks). False when the histogram cannot be allocated.
    cdef uint32_t faces = <uint32_t>config[C_JOINT_SIDES]
    cdef uint32_t threshold = rejection_threshold(faces)
    cdef uint32_t* histogram = <uint32_t*>calloc(faces, sizeof(uint32_t))
    cdef int64_t segment = first_block, segment_end
    if histogram == NULL:
        return False
    while segment < last_block:
        segment_end = min(segment + (<int64_t>1 << 29), last_block)
        _joint_histogram(seed, segment, segment_end, faces, threshold, histogram)
        _joint_fold(config, histogram, totals)
        segment = segment_end
    free(histogram)
    return True


def attack_joint_histogram(uint64_t seed, int64_t first_block, int64_t last_block, const int64_t[::1] config,
                           int64_t[::1] counts):
    """The histogram pass and fold alone over dense blocks first_block .. last_block - 1
    (attacks 4 first_block .. 4 last_block - 1), whatever their number: for tests."""
    cdef int64_t totals[8]
    cdef int64_t j
    for j in range(8):
        totals[j] = 0
    if not _attack_joint_histogram(seed, first_block, last_block, config, totals):
        raise MemoryError("tss.attack histogram")
    for j in range(8):
        counts[j] += totals[j]


# The outcome outputs of the fast passes, which keep none, and the words of a call that reaches none.
cdef int8_t[::1] NO_TIERS = np.empty(0, dtype=np.int8)
cdef int32_t[::1] NO_DAMAGE = np.empty(0, dtype=np.int32)
cdef uint32_t[::1] NO_WORDS = np.empty(0, dtype=np.uint32)


cdef void _attack_fast(uint64_t seed, bint joint, int64_t first_block, int64_t last_block,
                       const int64_t[::1] config, int64_t[::1] counts, uint32_t[::1] words) noexcept nogil:
    # Blocks first_block .. last_block - 1 in tiles through the engine's fast pass: dense blocks of
    # the joint layout (four attacks a block, their words in any order) or the first blocks of the
    # per-die layout's item streams (one attack a block, each word of the blocks a contiguous run),
    # drawn a tile at once in vector lanes where the CPU has them. A tile with a rejected word is
    # redone exactly.
    cdef uint32_t drawn[4 * TILE]
    cdef int64_t attacks_per_block = 4 if joint else 1
    cdef int64_t tile = first_block, blocks, b, k
    cdef bint rejected
    while tile < last_block:
        blocks = min(TILE // attacks_per_block, last_block - tile)
        philox_dense_words(<uint32_t>seed, <uint32_t>(seed >> 32), DOMAIN_DENSE if joint else DOMAIN_ITEM, tile,
                           blocks, &words[0] if joint else drawn)
        if joint:
            rejected = joint_pass(config, words, 4 * blocks, counts) != 0
        else:
            for b in range(blocks):
                for k in range(4):
                    words[k * blocks + b] = drawn[4 * b + k]
            rejected = die_pass(config, words, blocks, counts) != 0
        if rejected:
            _attack_exact(seed, attacks_per_block * tile, attacks_per_block * blocks, config, &counts[0], NO_TIERS,
                          NO_DAMAGE, NO_DAMAGE, NO_DAMAGE)
        tile += blocks


cdef void _attack_joint(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] config,
                        int64_t[::1] counts, uint32_t[::1] words, int8_t[::1] tier_out, int32_t[::1] stun_out,
                        int32_t[::1] wound_out, int32_t[::1] mortal_out) noexcept nogil:
    # Exact head and tail; whole dense blocks through the histogram pass when there are enough
    # attacks to amortise its fold, else through the direct fast pass.
    cdef bint direct = joint_pass_fits(config)
    cdef int64_t end = start + count, first_block, last_block, head_end, tail_start
    cdef int64_t* totals = &counts[0]
    cdef bint histogram
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    histogram = 4 * (last_block - first_block) >= HISTOGRAM_MIN_ATTACKS_PER_FACE * config[C_JOINT_SIDES]
    if tier_out.shape[0] > 0 or not (direct or histogram):
        _attack_exact(seed, start, count, config, totals, tier_out, stun_out, wound_out, mortal_out)
        return
    head_end = min(end, first_block * 4)
    _attack_exact(seed, start, head_end - start, config, totals, tier_out, stun_out, wound_out, mortal_out)
    tail_start = max(last_block * 4, head_end)
    _attack_exact(seed, tail_start, end - tail_start, config, totals, tier_out, stun_out, wound_out, mortal_out)
    if histogram and _attack_joint_histogram(seed, first_block, last_block, config, totals):
        return
    if not direct:
        _attack_exact(seed, first_block * 4, (last_block - first_block) * 4, config, totals, tier_out, stun_out,
                      wound_out, mortal_out)
        return
    _attack_fast(seed, True, first_block, last_block, config, counts, words)


cdef class OneAttack:
    """One prepared attack (combatsim.tss.Attack): ``resolve(seed, index)`` is item ``index`` of
    ``attack`` with this config, as (tier, stun, wound, mortal). Callers validate."""

    cdef const int64_t[::1] config
    cdef uint32_t faces, joint_threshold
    cdef bint joint

    def __cinit__(self, const int64_t[::1] config):
        self.config = config
        self.joint = config[C_JOINT] != 0
        self.faces = <uint32_t>config[C_JOINT_SIDES] if self.joint else 1
        self.joint_threshold = rejection_threshold(self.faces)

    def resolve(self, uint64_t seed, int64_t index):
        cdef Stream stream
        if self.joint:
            return joint_outcome(self.config, dense_die(&stream, seed, <uint64_t>index, self.faces,
                                                        self.joint_threshold) - 1)
        stream_start(&stream, seed, <uint64_t>index)
        return attack_outcome(&stream, self.config)


def attack(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] config, int64_t[::1] counts,
           int8_t[::1] tier_out, int32_t[::1] stun_out, int32_t[::1] wound_out, int32_t[::1] mortal_out):
    # A tile's words for the fast passes (the per-die layout's tile of TILE blocks is the larger),
    # made only for a call that may reach one, so that a call of a few attacks does not pay for it.
    cdef uint32_t[::1] words = NO_WORDS
    if tier_out.shape[0] == 0 and count >= (4 if config[C_JOINT] else 1):
        words = np.empty(4 * TILE, dtype=np.uint32)
    with nogil:
        if config[C_JOINT]:
            _attack_joint(seed, start, count, config, counts, words, tier_out, stun_out, wound_out, mortal_out)
        elif tier_out.shape[0] > 0 or not die_pass_fits(config):
            _attack_exact(seed, start, count, config, &counts[0], tier_out, stun_out, wound_out, mortal_out)
        else:
            _attack_fast(seed, False, start, start + count, config, counts, words)


def fight(seed, start, count, characters, n_characters, n_classes, max_rounds, one_step, counts, winner_out,
          rounds_out):
    """Fights: the engine's own ``fight`` (combatsim.tss.engine, the reference) as its Cython build."""
    engine_kernels("combatsim.tss.engine", "cython").fight(seed, start, count, characters, n_characters, n_classes,
                                                            max_rounds, one_step, counts, winner_out, rounds_out)


include "clones.pxi"
