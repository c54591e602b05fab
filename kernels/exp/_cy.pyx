# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""EXP kernels for Cython: "exp.to_hit", "exp.attack" and "exp.fight"; the reference is
combatsim.exp.reference (word layout: docs/exp.md), each to-hit roll's and each unit of fire's
outcome the engine's (to_hit_roll and is_hit, fire_unit and fire_joint)."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from rng cimport (DOMAIN_DENSE, Stream, Words, dense_block, dense_die_in, pick as pick_word, rejection_threshold,
                 stream_retry_word, stream_start)

from combatsim.engine import engine_kernels


cdef extern from "dense_count.h" nogil:
    # Counts dense-layout dice at or above a bar, twelve Philox blocks at a time (in AVX2 lanes
    # where the level allows: clones.h), and reports the rejected words for the exact path.
    int64_t dense_count(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                        uint64_t sides, uint64_t bar, uint32_t threshold, int64_t* rejected)


cdef extern from "philox.h" nogil:
    void philox_dense_words(uint32_t k0, uint32_t k1, uint32_t domain, int64_t first, int64_t count, uint32_t* out)


cdef extern from "exp/attack_count.h" nogil:
    # The engine's joint_word_tally summed in AVX2 lanes over whole Philox steps of blocks
    # first_block ..: adds hits and damage to totals[0..1], lowers low to the smallest last low
    # word, and returns the blocks it walked (none in the portable clone).
    int64_t exp_joint_pass(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, uint64_t bar,
                           uint64_t sides1, uint64_t sides2, uint64_t sides3, int64_t base, int64_t* totals,
                           uint32_t* low)

cdef enum:
    # exp.to_hit's blocks per tile; a tile whose fast pass saw a rejected word is counted again
    # fast in sub-tiles, and only those that reject are recounted exactly (the exact path is ~15x
    # slower; about one tile in 900 rejects a word at d1000).
    TILE_BLOCKS = 4092
    SUB_TILE_BLOCKS = 372
    # Damage dice the joint-die fast path covers.
    FAST_DICE = 3
    # Dense blocks per tile of the joint-die fast path (whole Philox steps of 12 blocks): a tile
    # with a rejected word gets those words fixed.
    JOINT_TILE_BLOCKS = 240

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


# Whether exp.attack's fast path runs attack_count.h's hand-written pass where the level has one
# (tests compare it with the engine's pass, as Cython generates it, alone).
cdef bint _hand_written_joint_pass = True


def _use_hand_written_joint_pass(bint used):
    global _hand_written_joint_pass
    _hand_written_joint_pass = used


cdef void _joint_count(uint64_t seed, int64_t first_block, int64_t last_block, int64_t bar, int64_t sides1,
                       int64_t sides2, int64_t sides3, int64_t base, uint32_t threshold,
                       int64_t* totals) noexcept nogil:
    # The exact hits and damage (added to totals[0..1]) of the units of whole dense blocks
    # first_block .. last_block - 1 with one joint die, tile by tile: each tile's whole steps
    # through exp_joint_pass, its other blocks through the engine's joint_word_tally; in a tile
    # with a rejected word, each rejected word's tally is replaced by that of the word that
    # replaces it, from the unit's retry domain (docs/rng.md).
    cdef uint32_t words[4 * JOINT_TILE_BLOCKS]
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32), low
    cdef int64_t tile = first_block, tile_end, walked, j, hit, dealt, low_word
    cdef Stream stream
    while tile < last_block:
        tile_end = min(tile + JOINT_TILE_BLOCKS, last_block)
        low = 0xFFFFFFFFu
        walked = 0
        if _hand_written_joint_pass:
            walked = exp_joint_pass(k0, k1, tile, tile_end, <uint64_t>bar, <uint64_t>sides1, <uint64_t>sides2,
                                    <uint64_t>sides3, base, totals, &low)
        philox_dense_words(k0, k1, DOMAIN_DENSE, tile + walked, tile_end - tile - walked, &words[4 * walked])
        for j in range(4 * walked, 4 * (tile_end - tile)):
            hit, dealt, low_word = joint_word_tally(words[j], bar, sides1, sides2, sides3, base)
            totals[0] += hit
            totals[1] += hit * dealt
            if low_word < low:
                low = <uint32_t>low_word
        if low < threshold:
            philox_dense_words(k0, k1, DOMAIN_DENSE, tile, walked, words)
            for j in range(4 * (tile_end - tile)):
                hit, dealt, low_word = joint_word_tally(words[j], bar, sides1, sides2, sides3, base)
                if low_word >= threshold:
                    continue
                totals[0] -= hit
                totals[1] -= hit * dealt
                stream_start(&stream, seed, <uint64_t>(4 * tile + j))
                while low_word < threshold:
                    hit, dealt, low_word = joint_word_tally(stream_retry_word(&stream), bar, sides1, sides2, sides3,
                                                            base)
                totals[0] += hit
                totals[1] += hit * dealt
        tile = tile_end


cdef inline int64_t _joint_word(Stream* stream, uint64_t seed, uint64_t index, uint64_t faces,
                               uint32_t threshold) noexcept nogil:
    # The word of unit ``index``'s joint die of ``faces`` faces (``threshold``: its rejection
    # threshold): its dense word or, while Lemire's method rejects it, its next retry word.
    cdef uint32_t word = pick_word(dense_block(seed, index), index & 3)
    stream_start(stream, seed, index)
    while <uint32_t>(<uint64_t>word * faces) < threshold:
        word = stream_retry_word(stream)
    return word


cdef (int64_t, int64_t) _joint_units(uint64_t seed, int64_t first, int64_t last, uint64_t faces, int64_t bonus,
                                     int64_t maximum_roll, int64_t armour_rating, int64_t adjustment,
                                     int64_t dice_count, int64_t dice_sides, int64_t dice_modifier,
                                     int64_t damage_adjustment, bint hit_on_equal, bint critical) noexcept nogil:
    # Units first .. last - 1 of one weapon, each from its joint die: (hits, damage).
    cdef uint32_t threshold = rejection_threshold(<uint32_t>faces)
    cdef Stream stream
    cdef int64_t k, hit, dealt, rounds_hit, hits = 0, total = 0
    for k in range(first, last):
        hit, dealt, rounds_hit = fire_joint(_joint_word(&stream, seed, <uint64_t>k, faces, threshold), bonus,
                                            maximum_roll, armour_rating, adjustment, dice_count, dice_sides,
                                            dice_modifier, damage_adjustment, hit_on_equal, critical)
        hits += hit
        total += dealt
    return hits, total


cdef inline (int64_t, int64_t, int64_t) _fire_item(
        Stream* stream, uint64_t seed, uint64_t index, uint64_t faces, uint32_t joint_threshold, int64_t bonus,
        int64_t maximum_roll, int64_t armour_rating, int64_t adjustment, int64_t dice_count, int64_t dice_sides,
        uint32_t dice_threshold, int64_t dice_modifier, int64_t damage_adjustment, int64_t rolls, bint automatic,
        bint hit_on_equal, bint critical) noexcept nogil:
    # Unit of fire ``index``: its joint die when it has one (faces > 0), else its item stream:
    # (hits, damage, rounds hit).
    if faces:
        return fire_joint(_joint_word(stream, seed, index, faces, joint_threshold), bonus, maximum_roll,
                          armour_rating, adjustment, dice_count, dice_sides, dice_modifier, damage_adjustment,
                          hit_on_equal, critical)
    stream_start(stream, seed, index)
    return fire_unit(stream, bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides, dice_threshold,
                     dice_modifier, damage_adjustment, rolls, automatic, hit_on_equal, critical)


def attack(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] bonus,
           const int64_t[::1] maximum_roll, const int64_t[::1] armour_rating, const int64_t[::1] adjustment,
           const int64_t[::1] dice_count, const int64_t[::1] dice_sides, const int64_t[::1] dice_modifier,
           const int64_t[::1] damage_adjustment, const int64_t[::1] rolls, const int64_t[::1] automatic,
           bint hit_on_equal, bint critical, int64_t[::1] counts, int32_t[::1] hits_out,
           int32_t[::1] rounds_hit_out, int64_t[::1] damage_out):
    cdef uint32_t dice_threshold = 0, joint_threshold = 0
    cdef uint64_t faces, last_faces = 0
    cdef int64_t k, n_rolls, first_block, last_block, first_whole, hits = 0, total = 0, rounds_hit = 0
    cdef int64_t sides, last_sides = 0, unit_hits, unit_damage, unit_rounds_hit, head_hits, head_damage
    cdef int64_t tail_hits, tail_damage, rolls_total = 0, rounds_fired = 0, end = start + count
    cdef int64_t totals[2]
    cdef bint auto
    cdef Stream stream
    cdef bint uniform = (bonus.shape[0] == 1 and maximum_roll.shape[0] == 1 and armour_rating.shape[0] == 1
                         and adjustment.shape[0] == 1 and dice_count.shape[0] == 1 and dice_sides.shape[0] == 1
                         and dice_modifier.shape[0] == 1 and damage_adjustment.shape[0] == 1
                         and rolls.shape[0] == 1 and automatic.shape[0] == 1)
    cdef bint keep_hits = hits_out.shape[0] > 0, keep_rounds = rounds_hit_out.shape[0] > 0
    cdef bint keep_damage = damage_out.shape[0] > 0
    if uniform and not (keep_hits or keep_rounds or keep_damage):
        faces = <uint64_t>joint_faces(rolls[0], automatic[0], dice_count[0], dice_sides[0])
        if faces and dice_count[0] <= FAST_DICE:
            # Whole dense blocks in the fast path, the units at either end one by one.
            sides = dice_sides[0]
            first_block = (start + 3) >> 2
            last_block = max(first_block, end >> 2)
            first_whole = min(end, first_block * 4)
            with nogil:
                totals[0] = totals[1] = 0
                # a hit: the kilodie product word * 1000 >= this bar
                _joint_count(seed, first_block, last_block,
                             kilodie_bar(bonus[0], maximum_roll[0], armour_rating[0], adjustment[0], hit_on_equal,
                                         critical) << 32,
                             sides if dice_count[0] >= 1 else 1, sides if dice_count[0] >= 2 else 1,
                             sides if dice_count[0] >= 3 else 1, dice_count[0] + dice_modifier[0] + damage_adjustment[0],
                             rejection_threshold(<uint32_t>faces), totals)
                hits = totals[0]
                total = totals[1]
                # The units outside whole blocks (at most 3 at each end) one by one.
                head_hits, head_damage = _joint_units(
                    seed, start, first_whole, faces, bonus[0], maximum_roll[0], armour_rating[0], adjustment[0],
                    dice_count[0], sides, dice_modifier[0], damage_adjustment[0], hit_on_equal, critical)
                tail_hits, tail_damage = _joint_units(
                    seed, max(last_block * 4, start), end, faces, bonus[0], maximum_roll[0], armour_rating[0],
                    adjustment[0], dice_count[0], sides, dice_modifier[0], damage_adjustment[0], hit_on_equal,
                    critical)
                hits += head_hits + tail_hits
                total += head_damage + tail_damage
            counts[0] += count
            counts[1] += hits
            counts[2] += total
            counts[3] += count
            counts[4] += hits
            return
    with nogil:
        for k in range(count):
            sides = dice_sides[k if dice_sides.shape[0] > 1 else 0]
            if sides != last_sides:  # a threshold is a division: only when the die size changes
                dice_threshold = rejection_threshold(<uint32_t>sides)
                last_sides = sides
            n_rolls = rolls[k if rolls.shape[0] > 1 else 0]
            auto = automatic[k if automatic.shape[0] > 1 else 0] != 0
            faces = <uint64_t>joint_faces(n_rolls, auto, dice_count[k if dice_count.shape[0] > 1 else 0], sides)
            if faces != last_faces:
                joint_threshold = rejection_threshold(<uint32_t>faces) if faces else 0
                last_faces = faces
            unit_hits, unit_damage, unit_rounds_hit = _fire_item(
                &stream, seed, <uint64_t>(start + k), faces, joint_threshold, bonus[k if bonus.shape[0] > 1 else 0],
                maximum_roll[k if maximum_roll.shape[0] > 1 else 0],
                armour_rating[k if armour_rating.shape[0] > 1 else 0], adjustment[k if adjustment.shape[0] > 1 else 0],
                dice_count[k if dice_count.shape[0] > 1 else 0], sides, dice_threshold,
                dice_modifier[k if dice_modifier.shape[0] > 1 else 0],
                damage_adjustment[k if damage_adjustment.shape[0] > 1 else 0], n_rolls, auto, hit_on_equal, critical)
            rolls_total += n_rolls
            rounds_fired += n_rolls * (ROUNDS_PER_BURST if auto else 1)
            hits += unit_hits
            total += unit_damage
            rounds_hit += unit_rounds_hit
            if keep_hits:
                hits_out[k] = <int32_t>unit_hits
            if keep_rounds:
                rounds_hit_out[k] = <int32_t>unit_rounds_hit
            if keep_damage:
                damage_out[k] = unit_damage
    counts[0] += rolls_total
    counts[1] += hits
    counts[2] += total
    counts[3] += rounds_fired
    counts[4] += rounds_hit


cdef class OneAttack:
    """One prepared unit of fire (combatsim.exp.Attack): ``resolve(seed, index)`` is unit
    ``index`` of ``attack`` with these parameters, as (hits, rounds_hit, damage). Callers validate."""

    cdef int64_t bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides, dice_modifier
    cdef int64_t damage_adjustment, rolls
    cdef uint32_t dice_threshold, joint_threshold
    cdef uint64_t faces
    cdef bint automatic, hit_on_equal, critical

    def __cinit__(self, int64_t bonus, int64_t maximum_roll, int64_t armour_rating, int64_t adjustment,
                  int64_t dice_count, int64_t dice_sides, int64_t dice_modifier, int64_t damage_adjustment,
                  int64_t rolls, int64_t automatic, bint hit_on_equal, bint critical):
        self.bonus = bonus
        self.maximum_roll = maximum_roll
        self.armour_rating = armour_rating
        self.adjustment = adjustment
        self.dice_count = dice_count
        self.dice_sides = dice_sides
        self.dice_modifier = dice_modifier
        self.damage_adjustment = damage_adjustment
        self.rolls = rolls
        self.automatic = automatic != 0
        self.hit_on_equal = hit_on_equal
        self.critical = critical
        # What attack() derives per call, once.
        self.dice_threshold = rejection_threshold(<uint32_t>dice_sides) if dice_sides else 0
        self.faces = <uint64_t>joint_faces(rolls, self.automatic, dice_count, dice_sides)
        self.joint_threshold = rejection_threshold(<uint32_t>self.faces) if self.faces else 0

    def resolve(self, uint64_t seed, int64_t index):
        cdef Stream stream
        cdef int64_t hits, damage, rounds_hit
        hits, damage, rounds_hit = _fire_item(&stream, seed, <uint64_t>index, self.faces, self.joint_threshold,
                                              self.bonus, self.maximum_roll, self.armour_rating, self.adjustment,
                                              self.dice_count, self.dice_sides, self.dice_threshold,
                                              self.dice_modifier, self.damage_adjustment, self.rolls, self.automatic,
                                              self.hit_on_equal, self.critical)
        return hits, rounds_hit, damage


def fight(seed, start, count, combatants, unit_limit, hit_on_equal, critical, counts, winner_out, units_out):
    """Fights: the engine's own ``fight`` (combatsim.exp.engine, the reference) as its Cython build."""
    engine_kernels("combatsim.exp.engine", "cython").fight(seed, start, count, combatants, unit_limit, hit_on_equal,
                                                            critical, counts, winner_out, units_out)


include "clones.pxi"
