"""TSS kernels for Numba; the reference is combatsim.tss.reference, each attack's outcome and the config
layout combatsim.tss.engine's (word layouts: docs/tss.md)."""

from __future__ import annotations

import numpy as np

from combatsim.engine import engine_kernels
from combatsim.tss.engine import C_JOINT, C_JOINT_SIDES

from .._numba import njit, seeded
from ..rng_nb import (
    DOMAIN_DENSE,
    DOMAIN_ITEM,
    MASK32,
    SHIFT32,
    STREAM_SIZE,
    block,
    dense_die,
    dense_die_in,
    pick,
    rejection_threshold,
    seed_key,
    stream_start,
)

#: Attacks per tile of the fast passes (fewer than 2**TIER_BITS of the engine): a tile with a rejected
#: word is redone exactly.
TILE = 1024


# Each attack's outcome and the fast passes' counts are the engine's (the one source), compiled by Numba.
_ENGINE = engine_kernels("combatsim.tss.engine", "numba")
attack_outcome, joint_outcome = _ENGINE.attack_outcome, _ENGINE.joint_outcome
die_pass_fits, die_pass = _ENGINE.die_pass_fits, _ENGINE.die_pass
joint_pass_fits, joint_pass = _ENGINE.joint_pass_fits, _ENGINE.joint_pass


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


@njit
def _philox_words(k0, k1, domain, first_block, blocks, words):
    """``words[k * blocks + b]`` = word k of block (first_block + b, 0, domain) for b < blocks: each
    word a contiguous run, as the passes read them, from a loop LLVM vectorises (2.5x the blocks a
    second of Philox written lane by lane over 64 blocks, and the passes read runs 1.2x as fast as
    the blocks' words in order, measured)."""
    for b in range(blocks):
        w0, w1, w2, w3 = block(k0, k1, first_block + b, 0, domain)
        words[b] = w0
        words[blocks + b] = w1
        words[2 * blocks + b] = w2
        words[3 * blocks + b] = w3


@njit
def _attack_fast(k0, k1, state, joint, first_block, last_block, config, counts, tier_out, stun_out, wound_out,
                 mortal_out):
    """Blocks ``first_block .. last_block - 1`` in tiles through the engine's fast pass: dense blocks
    of the joint layout (four attacks a block) or the first blocks of the per-die layout's item
    streams (one attack a block). A tile with a rejected word is redone exactly."""
    attacks_per_block = 4 if joint else 1
    domain = DOMAIN_DENSE if joint else DOMAIN_ITEM
    words = np.empty(4 * TILE, dtype=np.uint32)
    for tile in range(first_block, last_block, TILE // attacks_per_block):
        blocks = min(TILE // attacks_per_block, last_block - tile)
        _philox_words(k0, k1, domain, tile, blocks, words)
        if (joint_pass(config, words, 4 * blocks, counts) if joint else die_pass(config, words, blocks, counts)):
            _attack_exact(k0, k1, state, attacks_per_block * tile, attacks_per_block * blocks, config, counts,
                          tier_out, stun_out, wound_out, mortal_out)


def fight(seed, start, count, characters, n_characters, n_classes, max_rounds, one_step, counts, winner_out,
          rounds_out):
    """The fight kernel: the engine's own ``fight`` (combatsim.tss.engine, the reference) compiled by Numba."""
    _ENGINE.fight(
        np.uint64(seed), np.int64(start), np.int64(count), characters, np.int64(n_characters), np.int64(n_classes),
        np.int64(max_rounds), bool(one_step), counts, winner_out, rounds_out)


@seeded
@njit
def attack(seed, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out):
    """The attack kernel (combatsim.tss.reference.attack)."""
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    if config[C_JOINT]:
        _attack_joint(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out)
    elif tier_out.shape[0] > 0 or not die_pass_fits(config):
        _attack_exact(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out)
    else:
        _attack_fast(k0, k1, state, False, start, start + count, config, counts, tier_out, stun_out, wound_out,
                     mortal_out)


@njit
def _attack_joint(k0, k1, state, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out):
    """Joint layout: exact head and tail; whole dense blocks through the histogram pass when
    there are enough attacks to amortise its fold, else through the direct fast pass."""
    direct = joint_pass_fits(config)
    end = start + count
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    histogram = 4 * (last_block - first_block) >= HISTOGRAM_MIN_ATTACKS_PER_FACE * config[C_JOINT_SIDES]
    if tier_out.shape[0] > 0 or not (direct or histogram):
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
    _attack_fast(k0, k1, state, True, first_block, last_block, config, counts, tier_out, stun_out, wound_out,
                 mortal_out)


@seeded
@njit
def attack_joint_histogram(seed, first_block, last_block, config, counts):
    """The histogram pass and fold alone over dense blocks ``first_block .. last_block - 1``
    (attacks 4 first_block .. 4 last_block - 1), whatever their number: for tests."""
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    _attack_joint_histogram(k0, k1, state, first_block, last_block, config, counts)
