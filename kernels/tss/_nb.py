"""TSS kernels for Numba; the reference is combatsim.tss.reference, each attack's outcome and the config
layout combatsim.tss.engine's (word layouts: docs/tss.md)."""

from __future__ import annotations

import numpy as np

from combatsim.engine import engine_kernels
from combatsim.tss.engine import (
    C_ARMOUR_COUNT,
    C_ARMOUR_MODIFIER,
    C_ARMOUR_PRESENT,
    C_ARMOUR_SIDES,
    C_DAMAGE,
    C_DAMAGE_WORDS,
    C_JOINT,
    C_JOINT_DAMAGE,
    C_JOINT_SIDES,
    C_SIT_COUNT,
    C_SIT_SIDES,
    C_SIT_SIGN,
)

from .._numba import njit
from ..rng_nb import (
    DOMAIN_DENSE,
    DOMAIN_ITEM,
    M0,
    M1,
    MASK32,
    SHIFT32,
    STREAM_SIZE,
    W0,
    W1,
    block,
    dense_die,
    dense_die_in,
    pick,
    rejection_threshold,
    seed_key,
    stream_start,
)

#: Items per tile of the fast path: a tile whose fast pass saw a rejected word is redone exactly.
TILE = 1024

D20 = np.uint64(20)


# Each attack's outcome is the engine's (the one source), compiled by Numba.
_ENGINE = engine_kernels("combatsim.tss.engine", "numba")
attack_outcome = _ENGINE.attack_outcome
joint_outcome = _ENGINE.joint_outcome
dealt = _ENGINE.dealt


@njit
def _attack_exact(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out):
    """Attack by attack, exactly as the reference: the engine's outcome of the attack's item stream,
    or of its joint die's value (one dense block serves four attacks)."""
    joint = config[C_JOINT] != 0
    faces = np.uint64(config[C_JOINT_SIDES] if joint else 1)
    threshold = rejection_threshold(faces)
    keep = tier_out.shape[0] > 0
    w0 = w1 = w2 = w3 = np.uint64(0)
    for k in range(count):
        i = start + k
        if joint:
            if k == 0 or i & 3 == 0:
                w0, w1, w2, w3 = block(k0, k1, i >> 2, 0, DOMAIN_DENSE)
            value = np.int64(dense_die_in(state, k0, k1, i, w0, w1, w2, w3, faces, threshold) - 1)
            tier, stun, wound, mortal = joint_outcome(config, value)
        else:
            stream_start(state, k0, k1, i)
            tier, stun, wound, mortal = attack_outcome(state, config)
        counts[tier] += 1
        counts[5] += stun
        counts[6] += wound
        counts[7] += mortal
        if keep:
            tier_out[k] = tier
            stun_out[k] = stun
            wound_out[k] = wound
            mortal_out[k] = mortal


@njit
def one_attack(seed, index, config):
    """Item ``index`` of attack alone (combatsim.tss.Attack): (tier, stun, wound, mortal), from the
    bulk kernel's own per-item loop over that one item. (The loop bodies as inline functions
    shared with it ran the bulk attacks with outcomes at 1.6-2x the time.)"""
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    counts = np.zeros(8, dtype=np.int64)
    tier = np.empty(1, dtype=np.int8)
    damage = np.empty((3, 1), dtype=np.int32)
    _attack_exact(k0, k1, state, index, 1, config, counts, tier, damage[0], damage[1], damage[2])
    return tier[0], damage[0, 0], damage[1, 0], damage[2, 0]


#: Dense blocks per tile of the histogram pass (4096 words: the buffer stays in L1).
HISTOGRAM_TILE = 1024
#: The histogram pass runs when the whole blocks hold at least this many attacks per face of the
#: joint die: the fold evaluates each face once (about 16 ns), so it must be amortised. Measured
#: break-even against the direct fast pass: about 4 attacks per face.
HISTOGRAM_MIN_ATTACKS_PER_FACE = 4
#: Blocks per histogram segment: 2**29 blocks are 2**31 attacks, so uint32 counters never wrap.
HISTOGRAM_SEGMENT = 1 << 29


@njit
def _joint_histogram(k0, k1, state, first_block, last_block, faces, threshold, histogram):
    """``histogram[v] += 1`` for the joint die value v (0-based) of every attack of dense blocks
    ``first_block .. last_block - 1``, exactly the values ``dense_die`` gives.

    Per tile: a branch-free loop (LLVM vectorises it) draws the blocks, multiplies each word by
    the faces (Lemire) and keeps v = product >> 32 and whether any product's low word is below
    the threshold; then a scalar loop counts the values. A tile with a rejected word (about one
    attack in 2**32 / threshold) is walked again: each rejected word's count moves to the value
    ``dense_die`` draws for that attack from its retry domain.
    """
    values = np.empty(4 * HISTOGRAM_TILE, dtype=np.uint64)
    sides = np.uint64(faces)
    bar = np.uint64(threshold)
    for tile in range(first_block, last_block, HISTOGRAM_TILE):
        blocks = min(HISTOGRAM_TILE, last_block - tile)
        rejected = np.int64(0)
        for b in range(blocks):
            w0, w1, w2, w3 = block(k0, k1, tile + b, 0, DOMAIN_DENSE)
            p0 = w0 * sides
            p1 = w1 * sides
            p2 = w2 * sides
            p3 = w3 * sides
            values[4 * b] = p0 >> SHIFT32
            values[4 * b + 1] = p1 >> SHIFT32
            values[4 * b + 2] = p2 >> SHIFT32
            values[4 * b + 3] = p3 >> SHIFT32
            rejected += np.int64(
                ((p0 & MASK32) < bar) | ((p1 & MASK32) < bar) | ((p2 & MASK32) < bar) | ((p3 & MASK32) < bar)
            )
        for j in range(4 * blocks):
            histogram[values[j]] += 1
        if rejected:
            for b in range(blocks):
                w0, w1, w2, w3 = block(k0, k1, tile + b, 0, DOMAIN_DENSE)
                for position in range(4):
                    product = pick(w0, w1, w2, w3, position) * sides
                    if (product & MASK32) < bar:
                        histogram[product >> SHIFT32] -= 1
                        item = 4 * (tile + b) + position
                        histogram[dense_die(state, k0, k1, item, sides, threshold) - 1] += 1


@njit
def _joint_fold(config, histogram, counts):
    """Adds ``histogram[v]`` attacks of joint value v to ``counts`` for every v, and zeroes the
    histogram: each face is evaluated once, by the exact path's own function."""
    for value in range(histogram.shape[0]):
        attacks = np.int64(histogram[value])
        if attacks:
            histogram[value] = 0
            tier, stun, wound, mortal = joint_outcome(config, np.int64(value))
            counts[tier] += attacks
            counts[5] += attacks * stun
            counts[6] += attacks * wound
            counts[7] += attacks * mortal


@njit
def _attack_joint_histogram(k0, k1, state, first_block, last_block, config, counts):
    """Whole dense blocks through the histogram pass and the fold (docs/tss.md, fast paths)."""
    faces = config[C_JOINT_SIDES]
    threshold = rejection_threshold(np.uint64(faces))
    histogram = np.zeros(faces, dtype=np.uint32)
    for segment in range(first_block, last_block, HISTOGRAM_SEGMENT):
        segment_end = min(segment + HISTOGRAM_SEGMENT, last_block)
        _joint_histogram(k0, k1, state, segment, segment_end, faces, threshold, histogram)
        _joint_fold(config, histogram, counts)


#: Dense blocks whose Philox rounds run side by side (a loop LLVM vectorises).
LANES = 64


@njit
def _philox_lanes(k0, k1, first_block, x0, x1, x2, x3):
    """Blocks (first_block + lane, 0, DOMAIN_DENSE), Philox4x32-10 written lane-parallel."""
    for lane in range(LANES):
        index = np.uint64(first_block + lane)
        x0[lane] = index & MASK32
        x1[lane] = index >> SHIFT32
        x2[lane] = 0
        x3[lane] = DOMAIN_DENSE
    key0 = k0
    key1 = k1
    for _ in range(10):
        for lane in range(LANES):
            product0 = M0 * x0[lane]
            product1 = M1 * x2[lane]
            y0 = (product1 >> SHIFT32) ^ x1[lane] ^ key0
            y2 = (product0 >> SHIFT32) ^ x3[lane] ^ key1
            x1[lane] = product1 & MASK32
            x3[lane] = product0 & MASK32
            x0[lane] = y0
            x2[lane] = y2
        key0 = (key0 + W0) & MASK32
        key1 = (key1 + W1) & MASK32


#: The low 32 bits: masking both factors lets LLVM use one 32x32->64 vector multiply.
LOW = np.int64(0xFFFFFFFF)


@njit
def _magic32(divisor):
    """ceil(2**32 / divisor) for divisor >= 2 (at most 2**31), 0 for 1; with v < 2**16,
    ((v * magic) >> 32) + v * (divisor == 1) == v // divisor."""
    d = np.int64(divisor)
    return np.int64(0) if d == 1 else (np.int64(0x100000000) + d - 1) // d


@njit
def _attack_joint_fast(k0, k1, first_block, last_block, config, tally):
    """The joint layout over whole dense blocks (four attacks a block), divisions by magic numbers.

    ``tally[8]`` counts rejected words: the caller redoes such a tile exactly.
    """
    amazing, good, ordinary = config[0], config[1], config[2]
    sign = config[C_SIT_SIGN]
    sit_count = config[C_SIT_COUNT]
    sit_sides = config[C_SIT_SIDES]
    damage_words = config[C_DAMAGE_WORDS]
    armour_count = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    armour_sides = config[C_ARMOUR_SIDES]
    armour_modifier = config[C_ARMOUR_MODIFIER] if config[C_ARMOUR_PRESENT] else 0
    faces = config[C_JOINT_SIDES]
    threshold = np.int64(rejection_threshold(faces))
    modulus = config[C_JOINT_DAMAGE]
    twenty = np.int64(20)
    # Everything below is int64: every value stays below 2**48, and one integer type lets LLVM
    # vectorise the loop over attacks.
    # Damage per tier: t0 Amazing, t1 Good, t2 Ordinary. Selected arithmetically by the tier bits
    # (x2 + (x1 - x2) * good + (x0 - x1) * amazing): no branches, no loads.
    dice2 = config[C_DAMAGE + 8]
    dice21 = config[C_DAMAGE + 4] - dice2
    dice10 = config[C_DAMAGE] - config[C_DAMAGE + 4]
    sides2 = config[C_DAMAGE + 9]
    sides21 = config[C_DAMAGE + 5] - sides2
    sides10 = config[C_DAMAGE + 1] - config[C_DAMAGE + 5]
    magic_a, magic_g, magic_o = (_magic32(config[C_DAMAGE + 1]), _magic32(config[C_DAMAGE + 5]),
                                 _magic32(config[C_DAMAGE + 9]))
    unit_a, unit_g, unit_o = (np.int64(config[C_DAMAGE + 1] == 1), np.int64(config[C_DAMAGE + 5] == 1),
                              np.int64(config[C_DAMAGE + 9] == 1))
    unit2 = unit_o
    unit21 = unit_g - unit_o
    unit10 = unit_a - unit_g
    magic2 = magic_o
    magic21 = magic_g - magic_o
    magic10 = magic_a - magic_g
    modifier2 = config[C_DAMAGE + 10]
    modifier21 = config[C_DAMAGE + 6] - modifier2
    modifier10 = config[C_DAMAGE + 2] - config[C_DAMAGE + 6]
    type2 = config[C_DAMAGE + 11]
    type21 = config[C_DAMAGE + 7] - type2
    type10 = config[C_DAMAGE + 3] - config[C_DAMAGE + 7]
    # Up to two situation dice, two damage positions and two armour dice, unrolled: an unused
    # place has radix 1 (its digit is 0) and its die is masked out. The caller sends other
    # joint attacks to the exact path.
    one = np.int64(1)
    e1, e2 = np.int64(sit_count >= 1), np.int64(sit_count >= 2)
    ss1 = sit_sides if sit_count >= 1 else one
    ss2 = sit_sides if sit_count >= 2 else one
    l1 = modulus if damage_words >= 1 else one
    l2 = modulus if damage_words >= 2 else one
    f1, f2 = np.int64(armour_count >= 1), np.int64(armour_count >= 2)
    as1 = armour_sides if armour_count >= 1 else one
    as2 = armour_sides if armour_count >= 2 else one
    # Place values P_1 = 20, P_2 = 20 ss1, ... (all >= 20, at most the joint faces <= 2**16).
    p1 = twenty
    p2 = p1 * ss1
    p3 = p2 * ss2
    p4 = p3 * l1
    p5 = p4 * l2
    p6 = p5 * as1
    p7 = p6 * as2
    mp1, mp2, mp3, mp4 = _magic32(p1), _magic32(p2), _magic32(p3), _magic32(p4)
    mp5, mp6, mp7 = _magic32(p5), _magic32(p6), _magic32(p7)
    words = np.empty(4 * LANES, dtype=np.int64)
    x0 = np.empty(LANES, dtype=np.uint64)
    x1 = np.empty(LANES, dtype=np.uint64)
    x2 = np.empty(LANES, dtype=np.uint64)
    x3 = np.empty(LANES, dtype=np.uint64)
    n_amazing = n_good = n_ordinary = n_failure = n_critical = np.int64(0)
    n_stun = n_wound = n_mortal = rejected = np.int64(0)
    for group in range(first_block, last_block, LANES):
        _philox_lanes(k0, k1, group, x0, x1, x2, x3)
        for lane in range(LANES):
            words[4 * lane] = np.int64(x0[lane])
            words[4 * lane + 1] = np.int64(x1[lane])
            words[4 * lane + 2] = np.int64(x2[lane])
            words[4 * lane + 3] = np.int64(x3[lane])
        for lane in range(4 * min(LANES, last_block - group)):
            product = (words[lane] & LOW) * (faces & LOW)
            rejected += np.int64((product & 0xFFFFFFFF) < threshold)
            value = product >> 32
            # Q_k = v // P_k, each straight from v (no dependency chain); digit k = Q_k - Q_{k+1} r_k.
            q1 = ((value & LOW) * mp1) >> 32
            q2 = ((value & LOW) * mp2) >> 32
            q3 = ((value & LOW) * mp3) >> 32
            q4 = ((value & LOW) * mp4) >> 32
            q5 = ((value & LOW) * mp5) >> 32
            q6 = ((value & LOW) * mp6) >> 32
            q7 = ((value & LOW) * mp7) >> 32
            control = value - (q1 & LOW) * twenty + 1
            situation_total = (q1 - (q2 & LOW) * ss1 + 1) * e1 + (q2 - (q3 & LOW) * ss2 + 1) * e2
            position1 = q3 - (q4 & LOW) * l1
            position2 = q4 - (q5 & LOW) * l2
            soak = (q5 - (q6 & LOW) * as1 + 1) * f1 + (q6 - (q7 & LOW) * as2 + 1) * f2
            soak += armour_modifier
            total = control + sign * situation_total
            critical = np.int64(control == 20)
            standing = 1 - critical
            is_amazing = np.int64(total <= amazing)
            is_good = np.int64(total <= good)
            is_ordinary = np.int64(total <= ordinary)
            n_critical += critical
            n_amazing += is_amazing * standing
            n_good += (is_good - is_amazing) * standing
            n_ordinary += (is_ordinary - is_good) * standing
            n_failure += (1 - is_ordinary) * standing
            hit = is_ordinary * standing
            dice = dice2 + dice21 * is_good + dice10 * is_amazing
            sides = sides2 + sides21 * is_good + sides10 * is_amazing
            magic = magic2 + magic21 * is_good + magic10 * is_amazing
            unit = unit2 + unit21 * is_good + unit10 * is_amazing
            amount = (
                modifier2 + modifier21 * is_good + modifier10 * is_amazing
                + (position1 - (((((position1 & LOW) * (magic & LOW)) >> 32) + position1 * unit) & LOW) * sides + 1)
                * np.int64(dice >= 1)
                + (position2 - (((((position2 & LOW) * (magic & LOW)) >> 32) + position2 * unit) & LOW) * sides + 1)
                * np.int64(dice >= 2)
            )
            damage_type = type2 + type21 * is_good + type10 * is_amazing
            stun, wound, mortal = dealt(amount * hit, damage_type, soak)
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


@njit
def _attack_fast(k0, k1, first, last, config, tally):
    """Attacks first..last-1 whose words fit one block (1 + S + D + A <= 4), branch-free.

    ``tally`` gains the eight counts and, in tally[8], the number of words that might have been
    rejected (a superset of the true rejections): the caller redoes such a tile exactly.
    """
    amazing, good, ordinary = config[0], config[1], config[2]
    sign = config[C_SIT_SIGN]
    s = config[C_SIT_COUNT]
    d = config[C_DAMAGE_WORDS]
    a = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    sit_sides = np.uint64(config[C_SIT_SIDES])
    armour_sides = np.uint64(config[C_ARMOUR_SIDES])
    armour_modifier = config[C_ARMOUR_MODIFIER] if config[C_ARMOUR_PRESENT] else 0
    # Per slot 1..3: fixed sides (situation or armour; 1 elsewhere) and the slot's role masks.
    fs1 = sit_sides if s >= 1 else (armour_sides if s + d < 1 and s + d + a >= 1 else np.uint64(1))
    fs2 = sit_sides if s >= 2 else (armour_sides if s + d < 2 and s + d + a >= 2 else np.uint64(1))
    fs3 = sit_sides if s >= 3 else (armour_sides if s + d < 3 and s + d + a >= 3 else np.uint64(1))
    ft1 = rejection_threshold(fs1)
    ft2 = rejection_threshold(fs2)
    ft3 = rejection_threshold(fs3)
    sit1, sit2, sit3 = np.int64(s >= 1), np.int64(s >= 2), np.int64(s >= 3)
    arm1 = np.int64(s + d < 1 and s + d + a >= 1)
    arm2 = np.int64(s + d < 2 and s + d + a >= 2)
    arm3 = np.int64(s + d < 3 and s + d + a >= 3)
    # Damage slot j holds damage die (j - s - 1); a slot outside the damage words gets index 99.
    di1 = 1 - s - 1 if s < 1 and s + d >= 1 else 99
    di2 = 2 - s - 1 if s < 2 and s + d >= 2 else 99
    di3 = 3 - s - 1 if s < 3 and s + d >= 3 else 99
    dm1, dm2, dm3 = np.uint64(di1 != 99), np.uint64(di2 != 99), np.uint64(di3 != 99)
    # Damage per tier: 0 Amazing, 1 Good, 2 Ordinary.
    c0, c1, c2 = config[C_DAMAGE], config[C_DAMAGE + 4], config[C_DAMAGE + 8]
    z0, z1, z2 = np.uint64(config[C_DAMAGE + 1]), np.uint64(config[C_DAMAGE + 5]), np.uint64(config[C_DAMAGE + 9])
    t0, t1, t2 = rejection_threshold(z0), rejection_threshold(z1), rejection_threshold(z2)
    m0, m1, m2 = config[C_DAMAGE + 2], config[C_DAMAGE + 6], config[C_DAMAGE + 10]
    y0, y1, y2 = config[C_DAMAGE + 3], config[C_DAMAGE + 7], config[C_DAMAGE + 11]
    threshold20 = rejection_threshold(D20)
    n_amazing = n_good = n_ordinary = n_failure = n_critical = np.int64(0)
    n_stun = n_wound = n_mortal = rejected = np.int64(0)
    for i in range(first, last):
        w0, w1, w2, w3 = block(k0, k1, i, 0, DOMAIN_ITEM)
        p0 = w0 * D20
        p1 = w1 * fs1
        p2 = w2 * fs2
        p3 = w3 * fs3
        control = np.int64(p0 >> SHIFT32) + 1
        v1 = np.int64(p1 >> SHIFT32) + 1
        v2 = np.int64(p2 >> SHIFT32) + 1
        v3 = np.int64(p3 >> SHIFT32) + 1
        rejected += (
            np.int64((p0 & MASK32) < threshold20)
            + np.int64((p1 & MASK32) < ft1)
            + np.int64((p2 & MASK32) < ft2)
            + np.int64((p3 & MASK32) < ft3)
        )
        total = control + sign * (v1 * sit1 + v2 * sit2 + v3 * sit3)
        critical = control == 20
        is_amazing = total <= amazing
        is_good = total <= good
        is_ordinary = total <= ordinary
        hit = np.int64(is_ordinary and not critical)
        n_critical += np.int64(critical)
        n_amazing += np.int64(is_amazing and not critical)
        n_good += np.int64(is_good and not is_amazing and not critical)
        n_ordinary += np.int64(is_ordinary and not is_good and not critical)
        n_failure += np.int64(not is_ordinary and not critical)
        dice = c0 if is_amazing else (c1 if is_good else c2)
        sides = z0 if is_amazing else (z1 if is_good else z2)
        threshold = t0 if is_amazing else (t1 if is_good else t2)
        modifier = m0 if is_amazing else (m1 if is_good else m2)
        damage_type = y0 if is_amazing else (y1 if is_good else y2)
        q1 = w1 * sides
        q2 = w2 * sides
        q3 = w3 * sides
        rejected += np.int64(
            ((q1 & MASK32) < threshold) * dm1 + ((q2 & MASK32) < threshold) * dm2 + ((q3 & MASK32) < threshold) * dm3
        )
        amount = (
            (np.int64(q1 >> SHIFT32) + 1) * np.int64(di1 < dice)
            + (np.int64(q2 >> SHIFT32) + 1) * np.int64(di2 < dice)
            + (np.int64(q3 >> SHIFT32) + 1) * np.int64(di3 < dice)
            + modifier
        )
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


def attack(seed, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out):
    """The attack kernel (combatsim.tss.reference.attack)."""
    # A seed at or above 2**63 given as a Python int after an int64 specialisation exists makes
    # Numba's dispatcher raise OverflowError: pass every seed as uint64.
    _attack(np.uint64(seed), start, count, config, counts, tier_out, stun_out, wound_out, mortal_out)


def fight(seed, start, count, characters, n_characters, n_classes, max_rounds, one_step, counts, winner_out,
          rounds_out):
    """The fight kernel: the engine's own ``fight`` (combatsim.tss.engine, the reference) compiled by Numba."""
    _ENGINE.fight(
        np.uint64(seed), np.int64(start), np.int64(count), characters, np.int64(n_characters), np.int64(n_classes),
        np.int64(max_rounds), bool(one_step), counts, winner_out, rounds_out)


@njit
def _attack(seed, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out):
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    if config[C_JOINT]:
        _attack_joint(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out)
        return
    armour_words = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    words = 1 + config[C_SIT_COUNT] + config[C_DAMAGE_WORDS] + armour_words
    if words > 4 or tier_out.shape[0] > 0:
        _attack_exact(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out)
        return
    tally = np.zeros(9, dtype=np.int64)
    end = start + count
    for tile in range(start, end, TILE):
        tile_end = min(tile + TILE, end)
        tally[:] = 0
        _attack_fast(k0, k1, tile, tile_end, config, tally)
        if tally[8]:
            _attack_exact(k0, k1, state, tile, tile_end - tile, config, counts, tier_out, stun_out, wound_out,
                          mortal_out)
        else:
            for j in range(8):
                counts[j] += tally[j]


@njit
def _attack_joint(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out):
    """Joint layout: exact head and tail; whole dense blocks through the histogram pass when
    there are enough attacks to amortise its fold, else in tiles through the direct fast pass."""
    armour_count = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    unrolled = config[C_SIT_COUNT] <= 2 and config[C_DAMAGE_WORDS] <= 2 and armour_count <= 2
    end = start + count
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    histogram = 4 * (last_block - first_block) >= HISTOGRAM_MIN_ATTACKS_PER_FACE * config[C_JOINT_SIDES]
    if tier_out.shape[0] > 0 or not (unrolled or histogram):
        _attack_exact(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out)
        return
    head_end = min(end, first_block * 4)
    _attack_exact(k0, k1, state, start, head_end - start, config, counts, tier_out, stun_out, wound_out,
                        mortal_out)
    tail_start = max(last_block * 4, head_end)
    _attack_exact(k0, k1, state, tail_start, end - tail_start, config, counts, tier_out, stun_out, wound_out,
                        mortal_out)
    if histogram:
        _attack_joint_histogram(k0, k1, state, first_block, last_block, config, counts)
        return
    tally = np.zeros(9, dtype=np.int64)
    for tile in range(first_block, last_block, TILE // 4):
        tile_end = min(tile + TILE // 4, last_block)
        tally[:] = 0
        _attack_joint_fast(k0, k1, tile, tile_end, config, tally)
        if tally[8]:
            _attack_exact(k0, k1, state, tile * 4, (tile_end - tile) * 4, config, counts, tier_out, stun_out,
                                wound_out, mortal_out)
        else:
            for j in range(8):
                counts[j] += tally[j]


def attack_joint_histogram(seed, first_block, last_block, config, counts):
    """The histogram pass and fold alone over dense blocks ``first_block .. last_block - 1``
    (attacks 4 first_block .. 4 last_block - 1), whatever their number: for tests."""
    _attack_joint_histogram_seeded(np.uint64(seed), first_block, last_block, config, counts)


@njit
def _attack_joint_histogram_seeded(seed, first_block, last_block, config, counts):
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    _attack_joint_histogram(k0, k1, state, first_block, last_block, config, counts)
