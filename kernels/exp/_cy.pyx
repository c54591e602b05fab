# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""EXP kernels for Cython; the reference is combatsim.exp.reference."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from rng cimport Stream, Words, dense_block, dense_die_in, rejection_threshold

from combatsim.engine import engine_kernels


cdef extern from "dense_count.h" nogil:
    # Counts dense-layout dice at or above a bar, twelve Philox blocks at a time (in AVX2 lanes
    # where the level allows: clones.h), and reports the rejected words for the exact path.
    int64_t dense_count(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                        uint64_t sides, uint64_t bar, uint32_t threshold, int64_t* rejected)

cdef enum:
    # Blocks per tile; a tile whose fast pass saw a rejected word is counted again fast in
    # sub-tiles, and only those that reject are recounted exactly (the exact path is ~15x slower;
    # about one tile in 900 rejects a word at d1000).
    TILE_BLOCKS = 4092
    SUB_TILE_BLOCKS = 372

# The to-hit rule and each unit of fire's outcome: the engine's (combatsim.exp.engine), generated.
include "kernel_rules.pxi"


cdef int64_t _exact_hits(uint64_t seed, int64_t first, int64_t last, int64_t bonus, int64_t maximum_roll,
                         int64_t armour_rating, bint hit_on_equal, uint32_t threshold) noexcept nogil:
    # Hits of items first..last - 1, each die exactly as dense_die draws it (a tile's recount).
    cdef Stream stream
    cdef Words words
    cdef int64_t i, hits = 0
    for i in range(first, last):
        if i == first or (i & 3) == 0:
            words = dense_block(seed, <uint64_t>i)
        hits += is_hit(to_hit_roll(dense_die_in(&stream, seed, <uint64_t>i, words, KILODIE, threshold), bonus,
                                   maximum_roll, 0, False), armour_rating, hit_on_equal)
    return hits


cdef int64_t _tile_hits(uint64_t seed, int64_t first_block, int64_t last_block, uint64_t bar, int64_t bonus,
                        int64_t maximum_roll, int64_t armour_rating, bint hit_on_equal, uint32_t threshold,
                        int64_t sub_blocks) noexcept nogil:
    # Hits of dense blocks first_block..last_block - 1: the fast count, else sub-tiles (see TILE_BLOCKS).
    cdef int64_t rejected, hits, sub
    hits = dense_count(<uint32_t>seed, <uint32_t>(seed >> 32), first_block, last_block, KILODIE, bar, threshold,
                       &rejected)
    if not rejected:
        return hits
    if last_block - first_block <= sub_blocks:
        return _exact_hits(seed, first_block * 4, last_block * 4, bonus, maximum_roll, armour_rating, hit_on_equal,
                           threshold)
    hits = 0
    sub = first_block
    while sub < last_block:
        hits += _tile_hits(seed, sub, min(sub + sub_blocks, last_block), bar, bonus, maximum_roll, armour_rating,
                           hit_on_equal, threshold, sub_blocks)
        sub += sub_blocks
    return hits


cdef int64_t _uniform_hits(uint64_t seed, int64_t start, int64_t count, int64_t bonus,
                          int64_t maximum_roll, int64_t armour_rating, bint hit_on_equal) noexcept nogil:
    # Same bonus, MR and AR for every attack, no per-attack output: dense blocks in tiles.
    cdef uint32_t threshold = rejection_threshold(KILODIE)
    cdef int64_t end = start + count, first_block, last_block, tile, tile_end
    cdef int64_t hits
    # a hit: 0-based roll value >= first_hit_value, so roll word * 1000 >= bar
    cdef int64_t first_hit_value = kilodie_bar(bonus, maximum_roll, armour_rating, 0, hit_on_equal, False)
    cdef uint64_t bar = (<uint64_t>first_hit_value) << 32
    if first_hit_value >= KILODIE:
        return 0
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    hits = _exact_hits(seed, start, min(end, first_block * 4), bonus, maximum_roll, armour_rating, hit_on_equal,
                       threshold)
    hits += _exact_hits(seed, max(last_block * 4, start), end, bonus, maximum_roll, armour_rating, hit_on_equal,
                        threshold)
    tile = first_block
    while tile < last_block:
        tile_end = min(tile + TILE_BLOCKS, last_block)
        hits += _tile_hits(seed, tile, tile_end, bar, bonus, maximum_roll, armour_rating, hit_on_equal, threshold,
                           SUB_TILE_BLOCKS)
        tile = tile_end
    return hits


def to_hit(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] bonus,
           const int64_t[::1] maximum_roll, const int64_t[::1] armour_rating, bint hit_on_equal,
           int64_t[::1] counts, int32_t[::1] to_hit_out):
    cdef uint32_t threshold = rejection_threshold(KILODIE)
    cdef Stream stream
    cdef Words words
    cdef int64_t k, total, hits = 0
    cdef bint keep = to_hit_out.shape[0] > 0
    cdef bint many_bonus = bonus.shape[0] > 1, many_cap = maximum_roll.shape[0] > 1
    cdef bint many_armour = armour_rating.shape[0] > 1
    if not (many_bonus or many_cap or many_armour or keep):
        with nogil:
            hits = _uniform_hits(seed, start, count, bonus[0], maximum_roll[0], armour_rating[0], hit_on_equal)
        counts[0] += hits
        return
    with nogil:
        for k in range(count):
            if k == 0 or ((start + k) & 3) == 0:
                words = dense_block(seed, <uint64_t>(start + k))
            total = to_hit_roll(dense_die_in(&stream, seed, <uint64_t>(start + k), words, KILODIE, threshold),
                                bonus[k if many_bonus else 0], maximum_roll[k if many_cap else 0], 0, False)
            hits += is_hit(total, armour_rating[k if many_armour else 0], hit_on_equal)
            if keep:
                to_hit_out[k] = <int32_t>total
    counts[0] += hits


def fight(seed, start, count, combatants, unit_limit, hit_on_equal, critical, counts, winner_out, units_out):
    """Fights: the engine's own ``fight`` (combatsim.exp.engine, the reference) as its Cython build."""
    engine_kernels("combatsim.exp.engine", "cython").fight(seed, start, count, combatants, unit_limit, hit_on_equal,
                                                            critical, counts, winner_out, units_out)


# Attacks with damage ("exp.attack") live in their own include file.
include "_combat.pxi"


include "clones.pxi"
