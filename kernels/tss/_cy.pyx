# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""TSS kernels for Cython; the reference is combatsim.tss.reference (word layouts: docs/tss.md)."""
from libc.stdint cimport int8_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free

import numpy as np

from rng cimport (DOMAIN_DENSE, DOMAIN_ITEM, Stream, Words, dense_block, dense_die, dense_die_in, rejection_threshold,
                  stream_start)

from combatsim.engine import engine_kernels


cdef extern from "philox.h" nogil:
    # Words of dense blocks first .. first + count - 1 in block order (AVX2 picked at run time).
    void philox_dense_words(uint32_t k0, uint32_t k1, uint32_t domain, int64_t first, int64_t count,
                            uint32_t* out)


cdef extern from "tss/joint_histogram.h" nogil:
    # histogram[word * faces >> 32] += 1 over dense blocks; returns the smallest low word.
    uint32_t joint_histogram(uint32_t k0, uint32_t k1, int64_t first_block, int64_t count, uint32_t faces,
                             uint32_t* histogram)
    uint32_t joint_histogram_scalar(uint32_t k0, uint32_t k1, int64_t first_block, int64_t count,
                                    uint32_t faces, uint32_t* histogram)

cdef enum:
    TILE = 1024
    # Dense blocks whose Philox rounds run side by side in the joint fast path.
    LANES = 64
    # Dense blocks per tile of the histogram pass (85 AVX2 steps of 12 blocks): the span a
    # rejected word makes the pass walk again.
    HISTOGRAM_TILE = 1020
    # The histogram pass runs when the whole blocks hold at least this many attacks per face of
    # the joint die: the fold evaluates each face once, so it must be amortised. Here the direct
    # fast pass is slow enough (no vectorised Philox) that one attack per face already pays.
    HISTOGRAM_MIN_ATTACKS_PER_FACE = 1

include "kernel_rules.pxi"


cdef inline int64_t _min(int64_t a, int64_t b) noexcept nogil:
    return a if a < b else b


cdef inline int64_t _max(int64_t a, int64_t b) noexcept nogil:
    return a if a > b else b


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
        blocks = _min(HISTOGRAM_TILE, last_block - tile)
        if joint_histogram(k0, k1, tile, blocks, faces, histogram) < threshold:
            philox_dense_words(k0, k1, DOMAIN_DENSE, tile, blocks, words)
            for j in range(4 * blocks):
                product = <uint64_t>words[j] * faces
                if <uint32_t>product < threshold:
                    histogram[product >> 32] -= 1
                    histogram[dense_die(&stream, seed, <uint64_t>(4 * tile + j), faces, threshold) - 1] += 1
        tile += blocks


def joint_histogram_paths(uint64_t seed, int64_t first_block, int64_t count, uint32_t faces):
    """(histogram, smallest low word) of joint_histogram.h's dispatched path (AVX2 where
    available) and its portable path, for tests."""
    fast = np.zeros(faces, dtype=np.uint32)
    portable = np.zeros(faces, dtype=np.uint32)
    cdef uint32_t[::1] fast_view = fast, portable_view = portable
    cdef uint32_t fast_low = joint_histogram(<uint32_t>seed, <uint32_t>(seed >> 32), first_block, count, faces,
                                             &fast_view[0])
    cdef uint32_t portable_low = joint_histogram_scalar(<uint32_t>seed, <uint32_t>(seed >> 32), first_block, count,
                                                        faces, &portable_view[0])
    return (fast, fast_low), (portable, portable_low)


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
        segment_end = _min(segment + (<int64_t>1 << 29), last_block)
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


cdef inline uint64_t _magic(uint64_t divisor) noexcept nogil:
    # ceil(2**32 / divisor): (v * magic) >> 32 == v // divisor for v < 2**16, divisor <= 2**16.
    return (<uint64_t>0x100000000 + divisor - 1) // divisor


cdef inline void _philox_lanes(uint32_t k0, uint32_t k1, int64_t first_block, uint32_t* x0, uint32_t* x1,
                               uint32_t* x2, uint32_t* x3) noexcept nogil:
    # Blocks (first_block + lane, 0, DOMAIN_DENSE): Philox4x32-10 written lane-parallel so the
    # compiler vectorises the widening multiplies.
    cdef int64_t lane, round_number
    cdef uint32_t key0 = k0, key1 = k1, y0, y2
    cdef uint64_t product0, product1
    for lane in range(LANES):
        x0[lane] = <uint32_t>(<uint64_t>(first_block + lane))
        x1[lane] = <uint32_t>(<uint64_t>(first_block + lane) >> 32)
        x2[lane] = 0
        x3[lane] = DOMAIN_DENSE
    for round_number in range(10):
        for lane in range(LANES):
            product0 = <uint64_t>0xD2511F53u * x0[lane]
            product1 = <uint64_t>0xCD9E8D57u * x2[lane]
            y0 = <uint32_t>(product1 >> 32) ^ x1[lane] ^ key0
            y2 = <uint32_t>(product0 >> 32) ^ x3[lane] ^ key1
            x1[lane] = <uint32_t>product1
            x3[lane] = <uint32_t>product0
            x0[lane] = y0
            x2[lane] = y2
        key0 = key0 + 0x9E3779B9u
        key1 = key1 + 0xBB67AE85u


cdef void _attack_joint_fast(uint64_t seed, int64_t first_block, int64_t last_block,
                             const int64_t[::1] config, int64_t* tally) noexcept nogil:
    # The joint layout over whole dense blocks (four attacks a block), divisions by magic
    # numbers, at most two situation dice, damage positions and armour dice, unrolled: an unused
    # place divides by 1 and its die is masked out. tally[8] counts rejected words.
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef int64_t amazing = config[0], good = config[1], ordinary = config[2]
    cdef int64_t sign = config[C_SIT_SIGN], sit_count = config[C_SIT_COUNT]
    cdef int64_t damage_words = config[C_DAMAGE_WORDS]
    cdef int64_t armour_count = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    cdef int64_t armour_modifier = config[C_ARMOUR_MODIFIER] if config[C_ARMOUR_PRESENT] else 0
    cdef int64_t sit_sides = config[C_SIT_SIDES], armour_sides = config[C_ARMOUR_SIDES]
    cdef int64_t modulus = config[C_JOINT_DAMAGE], faces = config[C_JOINT_SIDES]
    cdef int64_t threshold = rejection_threshold(<uint32_t>faces)
    cdef int64_t e1 = sit_count >= 1, e2 = sit_count >= 2
    cdef int64_t ss1 = sit_sides if sit_count >= 1 else 1, ss2 = sit_sides if sit_count >= 2 else 1
    cdef int64_t l1 = modulus if damage_words >= 1 else 1, l2 = modulus if damage_words >= 2 else 1
    cdef int64_t f1 = armour_count >= 1, f2 = armour_count >= 2
    cdef int64_t as1 = armour_sides if armour_count >= 1 else 1, as2 = armour_sides if armour_count >= 2 else 1
    # Place values P_1 = 20, P_2 = 20 ss1, ... (all >= 20, at most the joint faces <= 2**16).
    cdef int64_t p1 = 20, p2 = 20 * ss1, p3 = 20 * ss1 * ss2, p4 = 20 * ss1 * ss2 * l1
    cdef int64_t p5 = p4 * l2, p6 = p4 * l2 * as1, p7 = p4 * l2 * as1 * as2
    cdef int64_t mp1 = <int64_t>_magic(p1), mp2 = <int64_t>_magic(p2), mp3 = <int64_t>_magic(p3)
    cdef int64_t mp4 = <int64_t>_magic(p4), mp5 = <int64_t>_magic(p5), mp6 = <int64_t>_magic(p6)
    cdef int64_t mp7 = <int64_t>_magic(p7)
    # Damage per tier selected arithmetically by the tier bits: x2 + (x1 - x2) good + (x0 - x1) amazing.
    cdef int64_t dice2 = config[C_DAMAGE + 8], dice21 = config[C_DAMAGE + 4] - config[C_DAMAGE + 8]
    cdef int64_t dice10 = config[C_DAMAGE] - config[C_DAMAGE + 4]
    cdef int64_t sides2 = config[C_DAMAGE + 9], sides21 = config[C_DAMAGE + 5] - config[C_DAMAGE + 9]
    cdef int64_t sides10 = config[C_DAMAGE + 1] - config[C_DAMAGE + 5]
    cdef int64_t magic_a = <int64_t>_magic(<uint64_t>config[C_DAMAGE + 1])
    cdef int64_t magic_g = <int64_t>_magic(<uint64_t>config[C_DAMAGE + 5])
    cdef int64_t magic_o = <int64_t>_magic(<uint64_t>config[C_DAMAGE + 9])
    cdef int64_t magic2 = magic_o, magic21 = magic_g - magic_o, magic10 = magic_a - magic_g
    cdef int64_t modifier2 = config[C_DAMAGE + 10], modifier21 = config[C_DAMAGE + 6] - config[C_DAMAGE + 10]
    cdef int64_t modifier10 = config[C_DAMAGE + 2] - config[C_DAMAGE + 6]
    cdef int64_t type2 = config[C_DAMAGE + 11], type21 = config[C_DAMAGE + 7] - config[C_DAMAGE + 11]
    cdef int64_t type10 = config[C_DAMAGE + 3] - config[C_DAMAGE + 7]
    # Everything in the loop over attacks is int64 (every value stays below 2**48): one integer
    # type and no branches, so the compiler can vectorise it.
    cdef int64_t words[4 * LANES]
    cdef int64_t n_amazing = 0, n_good = 0, n_ordinary = 0, n_failure = 0, n_critical = 0
    cdef int64_t n_stun = 0, n_wound = 0, n_mortal = 0, rejected = 0
    cdef int64_t control, situation_total, soak, total, critical, standing
    cdef int64_t is_amazing, is_good, is_ordinary, hit, dice, amount, damage_type, stun, wound, mortal
    cdef int64_t product, value, q1, q2, q3, q4, q5, q6, q7, position1, position2, sides, magic
    cdef int64_t lane, lanes, g
    cdef uint32_t x0[LANES]
    cdef uint32_t x1[LANES]
    cdef uint32_t x2[LANES]
    cdef uint32_t x3[LANES]
    g = first_block
    while g < last_block:
        _philox_lanes(k0, k1, g, x0, x1, x2, x3)
        lanes = _min(LANES, last_block - g)
        for lane in range(lanes):
            words[4 * lane] = x0[lane]
            words[4 * lane + 1] = x1[lane]
            words[4 * lane + 2] = x2[lane]
            words[4 * lane + 3] = x3[lane]
        for lane in range(4 * lanes):
            product = words[lane] * faces
            rejected += (product & <int64_t>0xFFFFFFFF) < threshold
            value = product >> 32
            # Q_k = v // P_k, each straight from v (no dependency chain); digit k = Q_k - Q_{k+1} r_k.
            q1 = (value * mp1) >> 32
            q2 = (value * mp2) >> 32
            q3 = (value * mp3) >> 32
            q4 = (value * mp4) >> 32
            q5 = (value * mp5) >> 32
            q6 = (value * mp6) >> 32
            q7 = (value * mp7) >> 32
            control = value - q1 * 20 + 1
            situation_total = (q1 - q2 * ss1 + 1) * e1 + (q2 - q3 * ss2 + 1) * e2
            position1 = q3 - q4 * l1
            position2 = q4 - q5 * l2
            soak = (q5 - q6 * as1 + 1) * f1 + (q6 - q7 * as2 + 1) * f2
            soak += armour_modifier
            total = control + sign * situation_total
            critical = control == 20
            standing = 1 - critical
            is_amazing = total <= amazing
            is_good = total <= good
            is_ordinary = total <= ordinary
            n_critical += critical
            n_amazing += is_amazing * standing
            n_good += (is_good - is_amazing) * standing
            n_ordinary += (is_ordinary - is_good) * standing
            n_failure += (1 - is_ordinary) * standing
            hit = is_ordinary * standing
            dice = dice2 + dice21 * is_good + dice10 * is_amazing
            sides = (sides2 + sides21 * is_good + sides10 * is_amazing)
            magic = (magic2 + magic21 * is_good + magic10 * is_amazing)
            amount = (modifier2 + modifier21 * is_good + modifier10 * is_amazing
                      + ((position1 - ((position1 * magic) >> 32) * sides) + 1) * (dice >= 1)
                      + ((position2 - ((position2 * magic) >> 32) * sides) + 1) * (dice >= 2))
            damage_type = type2 + type21 * is_good + type10 * is_amazing
            stun, wound, mortal = dealt(amount * hit, damage_type, soak)
            n_stun += stun
            n_wound += wound
            n_mortal += mortal
        g += LANES
    tally[0] += n_amazing
    tally[1] += n_good
    tally[2] += n_ordinary
    tally[3] += n_failure
    tally[4] += n_critical
    tally[5] += n_stun
    tally[6] += n_wound
    tally[7] += n_mortal
    tally[8] += rejected


cdef void _attack_joint(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] config,
                        int64_t* totals, int8_t[::1] tier_out, int32_t[::1] stun_out,
                        int32_t[::1] wound_out, int32_t[::1] mortal_out) noexcept nogil:
    # Exact head and tail; whole dense blocks through the histogram pass when there are enough
    # attacks to amortise its fold, else in tiles through the direct fast pass.
    cdef int64_t armour_count = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    cdef bint unrolled = config[C_SIT_COUNT] <= 2 and config[C_DAMAGE_WORDS] <= 2 and armour_count <= 2
    cdef int64_t end = start + count, first_block, last_block, head_end, tail_start, tile, tile_end, j
    cdef int64_t tally[9]
    cdef bint histogram
    first_block = (start + 3) >> 2
    last_block = _max(first_block, end >> 2)
    histogram = 4 * (last_block - first_block) >= HISTOGRAM_MIN_ATTACKS_PER_FACE * config[C_JOINT_SIDES]
    if tier_out.shape[0] > 0 or not (unrolled or histogram):
        _attack_exact(seed, start, count, config, totals, tier_out, stun_out, wound_out, mortal_out)
        return
    head_end = _min(end, first_block * 4)
    _attack_exact(seed, start, head_end - start, config, totals, tier_out, stun_out, wound_out, mortal_out)
    tail_start = _max(last_block * 4, head_end)
    _attack_exact(seed, tail_start, end - tail_start, config, totals, tier_out, stun_out, wound_out,
                        mortal_out)
    if histogram and _attack_joint_histogram(seed, first_block, last_block, config, totals):
        return
    if not unrolled:
        _attack_exact(seed, first_block * 4, (last_block - first_block) * 4, config, totals, tier_out,
                            stun_out, wound_out, mortal_out)
        return
    tile = first_block
    while tile < last_block:
        tile_end = _min(tile + TILE // 4, last_block)
        for j in range(9):
            tally[j] = 0
        _attack_joint_fast(seed, tile, tile_end, config, tally)
        if tally[8]:
            _attack_exact(seed, tile * 4, (tile_end - tile) * 4, config, totals, tier_out, stun_out,
                                wound_out, mortal_out)
        else:
            for j in range(8):
                totals[j] += tally[j]
        tile = tile_end


cdef void _attack_fast(uint64_t seed, int64_t first, int64_t last, const int64_t[::1] config,
                       int64_t* tally) noexcept nogil:
    # Attacks whose words fit one block (1 + S + D + A <= 4), branch-free; tally[8] counts words
    # that might have been rejected (a superset of the true rejections): such a tile is redone.
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef int64_t amazing = config[0], good = config[1], ordinary = config[2]
    cdef int64_t sign = config[C_SIT_SIGN], s = config[C_SIT_COUNT], d = config[C_DAMAGE_WORDS]
    cdef int64_t a = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    cdef int64_t armour_modifier = config[C_ARMOUR_MODIFIER] if config[C_ARMOUR_PRESENT] else 0
    cdef uint64_t sit_sides = <uint64_t>config[C_SIT_SIDES], armour_sides = <uint64_t>config[C_ARMOUR_SIDES]
    cdef uint64_t fs[4]
    cdef uint32_t ft[4]
    cdef int64_t sit[4]
    cdef int64_t arm[4]
    cdef int64_t di[4]
    cdef uint64_t dm[4]
    cdef int64_t j
    for j in range(1, 4):
        sit[j] = j <= s
        arm[j] = j > s + d and j <= s + d + a
        fs[j] = sit_sides if sit[j] else (armour_sides if arm[j] else 1)
        ft[j] = rejection_threshold(<uint32_t>fs[j])
        di[j] = j - s - 1 if (j > s and j <= s + d) else 99
        dm[j] = di[j] != 99
    cdef int64_t c0 = config[C_DAMAGE], c1 = config[C_DAMAGE + 4], c2 = config[C_DAMAGE + 8]
    cdef uint64_t z0 = <uint64_t>config[C_DAMAGE + 1], z1 = <uint64_t>config[C_DAMAGE + 5]
    cdef uint64_t z2 = <uint64_t>config[C_DAMAGE + 9]
    cdef uint32_t t0 = rejection_threshold(<uint32_t>z0), t1 = rejection_threshold(<uint32_t>z1)
    cdef uint32_t t2 = rejection_threshold(<uint32_t>z2)
    cdef int64_t m0 = config[C_DAMAGE + 2], m1 = config[C_DAMAGE + 6], m2 = config[C_DAMAGE + 10]
    cdef int64_t y0 = config[C_DAMAGE + 3], y1 = config[C_DAMAGE + 7], y2 = config[C_DAMAGE + 11]
    cdef uint32_t threshold20 = rejection_threshold(20)
    cdef uint64_t fs1 = fs[1], fs2 = fs[2], fs3 = fs[3]
    cdef uint32_t ft1 = ft[1], ft2 = ft[2], ft3 = ft[3]
    cdef int64_t sit1 = sit[1], sit2 = sit[2], sit3 = sit[3], arm1 = arm[1], arm2 = arm[2], arm3 = arm[3]
    cdef int64_t di1 = di[1], di2 = di[2], di3 = di[3]
    cdef uint64_t dm1 = dm[1], dm2 = dm[2], dm3 = dm[3]
    cdef int64_t n_amazing = 0, n_good = 0, n_ordinary = 0, n_failure = 0, n_critical = 0
    cdef int64_t n_stun = 0, n_wound = 0, n_mortal = 0, rejected = 0
    cdef int64_t i, control, v1, v2, v3, total, hit, dice, modifier, damage_type, amount, stun, wound, mortal
    cdef bint critical, is_amazing, is_good, is_ordinary
    cdef uint64_t p0, p1, p2, p3, q1, q2, q3, sides
    cdef uint32_t threshold
    # Block 0 of each attack's item stream is dense block i of the item domain: drawn for the whole
    # tile at once, in vector lanes where the CPU has them.
    cdef uint32_t words[4 * TILE]
    cdef uint32_t w0, w1, w2, w3
    philox_dense_words(k0, k1, DOMAIN_ITEM, first, last - first, words)
    for i in range(last - first):
        w0 = words[4 * i]
        w1 = words[4 * i + 1]
        w2 = words[4 * i + 2]
        w3 = words[4 * i + 3]
        p0 = <uint64_t>w0 * 20
        p1 = <uint64_t>w1 * fs1
        p2 = <uint64_t>w2 * fs2
        p3 = <uint64_t>w3 * fs3
        control = <int64_t>(p0 >> 32) + 1
        v1 = <int64_t>(p1 >> 32) + 1
        v2 = <int64_t>(p2 >> 32) + 1
        v3 = <int64_t>(p3 >> 32) + 1
        rejected += ((<uint32_t>p0 < threshold20) + (<uint32_t>p1 < ft1) + (<uint32_t>p2 < ft2)
                     + (<uint32_t>p3 < ft3))
        total = control + sign * (v1 * sit1 + v2 * sit2 + v3 * sit3)
        critical = control == 20
        is_amazing = total <= amazing
        is_good = total <= good
        is_ordinary = total <= ordinary
        hit = is_ordinary & (not critical)
        n_critical += critical
        n_amazing += is_amazing & (not critical)
        n_good += is_good & (not is_amazing) & (not critical)
        n_ordinary += is_ordinary & (not is_good) & (not critical)
        n_failure += (not is_ordinary) & (not critical)
        dice = c0 if is_amazing else (c1 if is_good else c2)
        sides = z0 if is_amazing else (z1 if is_good else z2)
        threshold = t0 if is_amazing else (t1 if is_good else t2)
        modifier = m0 if is_amazing else (m1 if is_good else m2)
        damage_type = y0 if is_amazing else (y1 if is_good else y2)
        q1 = <uint64_t>w1 * sides
        q2 = <uint64_t>w2 * sides
        q3 = <uint64_t>w3 * sides
        rejected += <int64_t>((<uint32_t>q1 < threshold) * dm1 + (<uint32_t>q2 < threshold) * dm2
                              + (<uint32_t>q3 < threshold) * dm3)
        amount = ((<int64_t>(q1 >> 32) + 1) * (di1 < dice) + (<int64_t>(q2 >> 32) + 1) * (di2 < dice)
                  + (<int64_t>(q3 >> 32) + 1) * (di3 < dice) + modifier)
        stun, wound, mortal = dealt(amount * hit, damage_type, v1 * arm1 + v2 * arm2 + v3 * arm3 + armour_modifier)
        n_stun += stun
        n_wound += wound
        n_mortal += mortal
    tally[0] += n_amazing
    tally[1] += n_good
    tally[2] += n_ordinary
    tally[3] += n_failure
    tally[4] += n_critical
    tally[5] += n_stun
    tally[6] += n_wound
    tally[7] += n_mortal
    tally[8] += rejected


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
    cdef int64_t tally[9]
    cdef int64_t totals[8]
    cdef int64_t j, tile, tile_end, end = start + count
    cdef int64_t armour_words = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    cdef int64_t words = 1 + config[C_SIT_COUNT] + config[C_DAMAGE_WORDS] + armour_words
    for j in range(8):
        totals[j] = 0
    with nogil:
        if config[C_JOINT]:
            _attack_joint(seed, start, count, config, totals, tier_out, stun_out, wound_out, mortal_out)
        elif words > 4 or tier_out.shape[0] > 0:
            _attack_exact(seed, start, count, config, totals, tier_out, stun_out, wound_out, mortal_out)
        else:
            tile = start
            while tile < end:
                tile_end = _min(tile + TILE, end)
                for j in range(9):
                    tally[j] = 0
                _attack_fast(seed, tile, tile_end, config, tally)
                if tally[8]:
                    _attack_exact(seed, tile, tile_end - tile, config, totals, tier_out, stun_out,
                                  wound_out, mortal_out)
                else:
                    for j in range(8):
                        totals[j] += tally[j]
                tile = tile_end
    for j in range(8):
        counts[j] += totals[j]


def fight(seed, start, count, characters, n_characters, n_classes, max_rounds, one_step, counts, winner_out,
          rounds_out):
    """Fights: the engine's own ``fight`` (combatsim.tss.engine, the reference) as its Cython build."""
    engine_kernels("combatsim.tss.engine", "cython").fight(seed, start, count, characters, n_characters, n_classes,
                                                            max_rounds, one_step, counts, winner_out, rounds_out)
