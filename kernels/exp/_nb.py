"""EXP kernels for Numba; the reference is combatsim.exp.reference."""

from __future__ import annotations

import numpy as np

from .._numba import njit
from ..dense_count_nb import STEP_BLOCKS, dense_count, dense_keys
from ..rng_nb import (
    DOMAIN_DENSE,
    SHIFT32,
    STREAM_SIZE,
    block,
    dense_die_in,
    rejection_threshold,
    seed_key,
)

# "exp.attack" lives in its own module, with the compiled engine both modules read.
from ._nb_combat import _ENGINE, KILODIE, attack, kilodie_bar, one_attack  # noqa: F401

# The to-hit rule is the engine's (the one source), compiled by Numba.
to_hit_roll = _ENGINE.to_hit_roll
is_hit = _ENGINE.is_hit
#: Blocks per tile, whole vector steps so no tile ends in scalar blocks. A tile whose fast pass saw
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


def fight(seed, start, count, combatants, unit_limit, hit_on_equal, critical, counts, winner_out, units_out):
    """Fights: the engine's own ``fight`` (combatsim.exp.engine, the reference) compiled by Numba."""
    # Fixed argument types: one compilation serves every caller, and seeds of 2**63 or more fit.
    _ENGINE.fight(
        np.uint64(seed), np.int64(start), np.int64(count), combatants, np.int64(unit_limit), bool(hit_on_equal),
        bool(critical), counts, winner_out, units_out)
