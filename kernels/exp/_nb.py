"""EXP kernels for Numba: "exp.to_hit", "exp.attack" and "exp.fight"; the reference is
combatsim.exp.reference (word layout: docs/exp.md).

Each to-hit roll and each unit of fire's outcome is the engine's (combatsim.exp.engine:
``to_hit_roll``, ``is_hit``, ``fire_unit``, ``fire_joint``), compiled by Numba; these kernels
draw its dice, and count whole blocks of dense words fast.
"""

from __future__ import annotations

import numpy as np

from combatsim.engine import engine_kernels

from .._numba import njit
from ..dense_count_nb import STEP_BLOCKS, dense_count, dense_keys
from ..rng_nb import (
    DOMAIN_DENSE,
    MASK32,
    SHIFT32,
    STREAM_SIZE,
    block,
    dense_die_in,
    pick,
    rejection_threshold,
    seed_key,
    stream_retry_word,
    stream_start,
)

# The to-hit rule and each unit of fire's outcome are the engine's (the one source), compiled by Numba.
_ENGINE = engine_kernels("combatsim.exp.engine", "numba")
KILODIE = _ENGINE.KILODIE
ROUNDS_PER_BURST = _ENGINE.ROUNDS_PER_BURST
to_hit_roll = _ENGINE.to_hit_roll
is_hit = _ENGINE.is_hit
fire_unit = _ENGINE.fire_unit
fire_joint = _ENGINE.fire_joint
joint_faces = _ENGINE.joint_faces
joint_word_tally = _ENGINE.joint_word_tally
kilodie_bar = _ENGINE.kilodie_bar

#: Blocks per tile of exp.to_hit, whole vector steps so no tile ends in scalar blocks. A tile whose fast pass saw
#: a rejected word is counted again fast in sub-tiles, and only those that reject are recounted
#: exactly (the exact path is ~15x slower; about one tile in 600 rejects a word at d1000).
TILE_BLOCKS = 512 * STEP_BLOCKS
SUB_TILE_BLOCKS = 32 * STEP_BLOCKS


@njit
def _exact_hits(state, k0, k1, first, last, bonus, maximum_roll, armour_rating, hit_on_equal, threshold):
    """Hits of items first..last - 1, each die exactly as dense_die draws it (a tile's recount)."""
    hits = 0
    w0 = w1 = w2 = w3 = np.uint64(0)
    for i in range(first, last):
        if i == first or i & 3 == 0:
            w0, w1, w2, w3 = block(k0, k1, i >> 2, 0, DOMAIN_DENSE)
        roll = dense_die_in(state, k0, k1, i, w0, w1, w2, w3, np.uint64(KILODIE), threshold)
        hits += is_hit(to_hit_roll(roll, bonus, maximum_roll, 0, False), armour_rating, hit_on_equal)
    return hits


@njit
def _tile_hits(state, round_keys, k0, k1, first_block, last_block, first_hit_value, bonus, maximum_roll,
               armour_rating, hit_on_equal, threshold, sub_blocks):
    """Hits of dense blocks first_block..last_block - 1: the fast count, else sub-tiles (see TILE_BLOCKS)."""
    hits, rejected = dense_count(round_keys, k0, k1, first_block, last_block, np.uint64(KILODIE),
                                       np.uint64(first_hit_value) << SHIFT32, threshold)
    if not rejected:
        return hits
    if last_block - first_block <= sub_blocks:
        return _exact_hits(state, k0, k1, first_block * 4, last_block * 4, bonus, maximum_roll, armour_rating,
                           hit_on_equal, threshold)
    hits = 0
    for sub in range(first_block, last_block, sub_blocks):
        sub_end = min(sub + sub_blocks, last_block)
        hits += _tile_hits(state, round_keys, k0, k1, sub, sub_end, first_hit_value, bonus, maximum_roll,
                           armour_rating, hit_on_equal, threshold, sub_blocks)
    return hits


@njit
def to_hit(seed, start, count, bonus, maximum_roll, armour_rating, hit_on_equal, counts, to_hit_out):
    k0, k1 = seed_key(seed)
    threshold = rejection_threshold(KILODIE)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    uniform = bonus.shape[0] == 1 and maximum_roll.shape[0] == 1 and armour_rating.shape[0] == 1
    if uniform and to_hit_out.shape[0] == 0:
        b = bonus[0]
        cap = maximum_roll[0]
        armour = armour_rating[0]
        # a hit: 0-based roll value >= first_hit_value
        first_hit_value = kilodie_bar(b, cap, armour, 0, hit_on_equal, False)
        if first_hit_value >= KILODIE:
            return
        end = start + count
        first_block = (start + 3) >> 2
        last_block = max(first_block, end >> 2)
        hits = _exact_hits(state, k0, k1, start, min(end, first_block * 4), b, cap, armour, hit_on_equal, threshold)
        hits += _exact_hits(state, k0, k1, max(last_block * 4, start), end, b, cap, armour, hit_on_equal, threshold)
        round_keys = dense_keys(k0, k1)
        for tile in range(first_block, last_block, TILE_BLOCKS):
            tile_end = min(tile + TILE_BLOCKS, last_block)
            hits += _tile_hits(state, round_keys, k0, k1, tile, tile_end, first_hit_value, b, cap, armour,
                               hit_on_equal, threshold, SUB_TILE_BLOCKS)
        counts[0] += hits
        return
    w0 = w1 = w2 = w3 = np.uint64(0)
    for k in range(count):
        i = start + k
        if k == 0 or i & 3 == 0:
            w0, w1, w2, w3 = block(k0, k1, i >> 2, 0, DOMAIN_DENSE)
        roll = dense_die_in(state, k0, k1, i, w0, w1, w2, w3, np.uint64(KILODIE), threshold)
        total = to_hit_roll(roll, bonus[k if bonus.shape[0] > 1 else 0],
                            maximum_roll[k if maximum_roll.shape[0] > 1 else 0], 0, False)
        counts[0] += is_hit(total, armour_rating[k if armour_rating.shape[0] > 1 else 0], hit_on_equal)
        if to_hit_out.shape[0]:
            to_hit_out[k] = total


#: Dense blocks per tile of exp.attack's joint-die fast path: a tile with a rejected word gets those words
#: fixed.
JOINT_TILE_BLOCKS = 256
#: Damage dice the joint-die fast path covers.
FAST_DICE = 3


@njit
def _joint_pass(k0, k1, first_block, last_block, bar, sides1, sides2, sides3, base, threshold):
    """Units of whole dense blocks with one joint die: (hits, damage, rejected words).

    Each word's tally is the engine's ``joint_word_tally``; the loop is branch-free so LLVM
    vectorises it (the Philox rounds too). The caller fixes the rejected words (``_joint_fix``).
    """
    hits = np.int64(0)
    total = np.int64(0)
    rejected = np.int64(0)
    for g in range(first_block, last_block):
        w0, w1, w2, w3 = block(k0, k1, g, 0, DOMAIN_DENSE)
        h0, d0, l0 = joint_word_tally(w0, bar, sides1, sides2, sides3, base)
        h1, d1, l1 = joint_word_tally(w1, bar, sides1, sides2, sides3, base)
        h2, d2, l2 = joint_word_tally(w2, bar, sides1, sides2, sides3, base)
        h3, d3, l3 = joint_word_tally(w3, bar, sides1, sides2, sides3, base)
        hits += h0 + h1 + h2 + h3
        total += h0 * d0 + h1 * d1 + h2 * d2 + h3 * d3
        rejected += (
            np.int64(l0 < threshold) + np.int64(l1 < threshold) + np.int64(l2 < threshold) + np.int64(l3 < threshold)
        )
    return hits, total, rejected


@njit
def _joint_fix(state, k0, k1, first_block, last_block, bar, sides1, sides2, sides3, base, threshold):
    """(hits, damage) to add to ``_joint_pass``'s: each rejected word's tally replaced by its retry's."""
    hits = np.int64(0)
    total = np.int64(0)
    for g in range(first_block, last_block):
        words = block(k0, k1, g, 0, DOMAIN_DENSE)
        for position in range(4):
            word = pick(words[0], words[1], words[2], words[3], position)
            hit, dealt, low = joint_word_tally(word, bar, sides1, sides2, sides3, base)
            if low >= threshold:
                continue
            hits -= hit
            total -= hit * dealt
            stream_start(state, k0, k1, g * 4 + position)
            while low < threshold:
                hit, dealt, low = joint_word_tally(
                    stream_retry_word(state), bar, sides1, sides2, sides3, base)
            hits += hit
            total += hit * dealt
    return hits, total


@njit(inline="always")
def _joint_word(state, k0, k1, index, faces, threshold):
    """The word of unit ``index``'s joint die of ``faces`` faces (``threshold``: its rejection
    threshold): its dense word or, while Lemire's method rejects it, its next retry word."""
    words = block(k0, k1, index >> 2, 0, DOMAIN_DENSE)
    word = pick(words[0], words[1], words[2], words[3], index & 3)
    stream_start(state, k0, k1, index)
    while ((word * faces) & MASK32) < threshold:
        word = stream_retry_word(state)
    return np.int64(word)


@njit
def _joint_units(state, k0, k1, first, last, faces, bonus, maximum_roll, armour_rating, adjustment, dice_count,
                 dice_sides, dice_modifier, damage_adjustment, hit_on_equal, critical):
    """Units first .. last - 1 of one weapon, each from its joint die: (hits, damage)."""
    threshold = rejection_threshold(faces)
    hits = np.int64(0)
    total = np.int64(0)
    for k in range(first, last):
        h, t, _ = fire_joint(_joint_word(state, k0, k1, k, faces, threshold), bonus, maximum_roll, armour_rating,
                             adjustment, dice_count, dice_sides, dice_modifier, damage_adjustment, hit_on_equal,
                             critical)
        hits += h
        total += t
    return hits, total


@njit(inline="always")
def _fire_item(state, k0, k1, index, faces, joint_threshold, bonus, maximum_roll, armour_rating, adjustment, dice_count,
               dice_sides, dice_threshold, dice_modifier, damage_adjustment, rolls, automatic, hit_on_equal, critical):
    """Unit of fire ``index``: its joint die when it has one (faces > 0), else its item stream:
    (hits, damage, rounds hit). attack's units with outcomes and one_attack use it. ``dice_sides``
    is an int64, ``dice_threshold`` the uint64 rejection threshold of the damage die."""
    if faces:
        return fire_joint(_joint_word(state, k0, k1, index, faces, joint_threshold), bonus, maximum_roll,
                          armour_rating, adjustment, dice_count, dice_sides, dice_modifier, damage_adjustment,
                          hit_on_equal, critical)
    stream_start(state, k0, k1, index)
    return fire_unit(state, bonus, maximum_roll, armour_rating, adjustment, dice_count, np.uint64(dice_sides),
                     dice_threshold, dice_modifier, damage_adjustment, rolls, automatic, hit_on_equal, critical)


@njit
def one_attack(seed, index, bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides, dice_modifier,
               damage_adjustment, rolls, automatic, hit_on_equal, critical):
    """Unit ``index`` of attack alone (combatsim.exp.Attack): (hits, rounds hit, damage)."""
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    faces = np.uint64(joint_faces(rolls, automatic, dice_count, dice_sides))
    joint_threshold = rejection_threshold(faces) if faces else np.uint64(0)
    hits, total, rounds_hit = _fire_item(state, k0, k1, index, faces, joint_threshold, bonus, maximum_roll,
                                         armour_rating, adjustment, dice_count, dice_sides,
                                         rejection_threshold(np.uint64(dice_sides)), dice_modifier, damage_adjustment,
                                         rolls, automatic, hit_on_equal, critical)
    return hits, rounds_hit, total


@njit
def attack(seed, start, count, bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides, dice_modifier,
           damage_adjustment, rolls, automatic, hit_on_equal, critical, counts, hits_out, rounds_hit_out, damage_out):
    k0, k1 = seed_key(seed)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    uniform = (
        bonus.shape[0] == 1 and maximum_roll.shape[0] == 1 and armour_rating.shape[0] == 1
        and adjustment.shape[0] == 1 and dice_count.shape[0] == 1 and dice_sides.shape[0] == 1
        and dice_modifier.shape[0] == 1 and damage_adjustment.shape[0] == 1 and rolls.shape[0] == 1
        and automatic.shape[0] == 1
    )
    outputs = hits_out.shape[0] > 0 or rounds_hit_out.shape[0] > 0 or damage_out.shape[0] > 0
    faces = np.uint64(joint_faces(rolls[0], automatic[0], dice_count[0], dice_sides[0]))
    if uniform and not outputs and faces and dice_count[0] <= FAST_DICE:
        # Whole dense blocks in the fast path, tile by tile; the units at either end one by one.
        weapon = (bonus[0], maximum_roll[0], armour_rating[0], adjustment[0], dice_count[0], dice_sides[0],
                  dice_modifier[0], damage_adjustment[0], hit_on_equal, critical)
        # a hit: the kilodie product word * 1000 >= bar
        bar = np.uint64(kilodie_bar(bonus[0], maximum_roll[0], armour_rating[0], adjustment[0], hit_on_equal,
                                    critical)) << SHIFT32
        one = np.uint64(1)
        sides = np.uint64(dice_sides[0])
        sides1 = sides if dice_count[0] >= 1 else one
        sides2 = sides if dice_count[0] >= 2 else one
        sides3 = sides if dice_count[0] >= 3 else one
        base = dice_count[0] + dice_modifier[0] + damage_adjustment[0]
        threshold = np.int64(rejection_threshold(faces))  # joint_word_tally's low words are int64
        end = start + count
        first_block = (start + 3) >> 2
        last_block = max(first_block, end >> 2)
        hits, total = _joint_units(state, k0, k1, start, min(end, first_block * 4), faces, *weapon)
        h, t = _joint_units(state, k0, k1, max(last_block * 4, start), end, faces, *weapon)
        hits += h
        total += t
        for tile in range(first_block, last_block, JOINT_TILE_BLOCKS):
            tile_end = min(tile + JOINT_TILE_BLOCKS, last_block)
            h, t, rejected = _joint_pass(k0, k1, tile, tile_end, bar, sides1, sides2, sides3, base, threshold)
            hits += h
            total += t
            if rejected:
                h, t = _joint_fix(state, k0, k1, tile, tile_end, bar, sides1, sides2, sides3, base, threshold)
                hits += h
                total += t
        counts[0] += count
        counts[1] += hits
        counts[2] += total
        counts[3] += count
        counts[4] += hits
        return
    last_sides = np.int64(0)
    dice_threshold = np.uint64(0)
    last_faces = np.uint64(0)
    joint_threshold = np.uint64(0)
    for k in range(count):
        sides = dice_sides[k if dice_sides.shape[0] > 1 else 0]
        if sides != last_sides:  # a threshold is a division: only when the die size changes
            dice_threshold = rejection_threshold(np.uint64(sides))
            last_sides = sides
        n_rolls = rolls[k if rolls.shape[0] > 1 else 0]
        auto = automatic[k if automatic.shape[0] > 1 else 0] != 0
        n_dice = dice_count[k if dice_count.shape[0] > 1 else 0]
        faces = np.uint64(joint_faces(n_rolls, auto, n_dice, sides))
        if faces != last_faces:
            joint_threshold = rejection_threshold(faces) if faces else np.uint64(0)
            last_faces = faces
        hits, total, rounds_hit = _fire_item(
            state, k0, k1, start + k, faces, joint_threshold, bonus[k if bonus.shape[0] > 1 else 0],
            maximum_roll[k if maximum_roll.shape[0] > 1 else 0], armour_rating[k if armour_rating.shape[0] > 1 else 0],
            adjustment[k if adjustment.shape[0] > 1 else 0], n_dice, sides, dice_threshold,
            dice_modifier[k if dice_modifier.shape[0] > 1 else 0],
            damage_adjustment[k if damage_adjustment.shape[0] > 1 else 0], n_rolls, auto, hit_on_equal, critical)
        counts[0] += n_rolls
        counts[1] += hits
        counts[2] += total
        counts[3] += n_rolls * (ROUNDS_PER_BURST if auto else 1)
        counts[4] += rounds_hit
        if hits_out.shape[0]:
            hits_out[k] = hits
        if rounds_hit_out.shape[0]:
            rounds_hit_out[k] = rounds_hit
        if damage_out.shape[0]:
            damage_out[k] = total


def fight(seed, start, count, combatants, unit_limit, hit_on_equal, critical, counts, winner_out, units_out):
    """Fights: the engine's own ``fight`` (combatsim.exp.engine, the reference) compiled by Numba."""
    # Fixed argument types: one compilation serves every caller, and seeds of 2**63 or more fit.
    _ENGINE.fight(
        np.uint64(seed), np.int64(start), np.int64(count), combatants, np.int64(unit_limit), bool(hit_on_equal),
        bool(critical), counts, winner_out, units_out)
