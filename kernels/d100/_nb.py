"""d100 kernels for Numba; the reference is combatsim.d100.reference (layout: docs/d100.md)."""

from __future__ import annotations

import numpy as np

from combatsim.d100.layout import ATTACK_SIDES
from combatsim.engine import engine_kernels

from .._numba import njit, seeded
from ..rng_nb import (
    DOMAIN_DENSE,
    MASK32,
    STREAM_SIZE,
    block,
    dense_die,
    dense_die_in,
    rejection_threshold,
    seed_key,
    stream_bounded,
    stream_start,
)

# Each attack's outcome, and the counting passes' bars and tallies, are the engine's (the one
# source), compiled by Numba.
_ENGINE = engine_kernels("combatsim.d100.engine", "numba")
attack_outcome = _ENGINE.attack_outcome
tier_bars = _ENGINE.tier_bars
damage_bars = _ENGINE.damage_bars
attack_tallies = _ENGINE.attack_tallies
tally_counts = _ENGINE.tally_counts
count_attack = _ENGINE.count_attack
word_bar = _ENGINE.word_bar
word_tallies = _ENGINE.word_tallies

#: Blocks per tile: a tile whose fast pass saw a rejected word has those words fixed exactly.
TILE_BLOCKS = 96


@njit
def _fast_tile(k0, k1, first_block, last_block, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two, threshold, buffer):
    """Tallies over whole dense blocks (word_tallies) plus the count of rejected words; the low
    word of w 10^6, which decides Lemire's rejection, is 100 r2 mod 2^32. Two loops: Philox into
    ``buffer``, then a branch-free pass over it that LLVM vectorises. The pass keeps everything
    in 32 bits (a tile's tallies fit), so a vector holds eight words, not four."""
    n = 0
    for g in range(first_block, last_block):
        w0, w1, w2, w3 = block(k0, k1, g, 0, DOMAIN_DENSE)
        buffer[n] = np.uint32(w0)
        buffer[n + 1] = np.uint32(w1)
        buffer[n + 2] = np.uint32(w2)
        buffer[n + 3] = np.uint32(w3)
        n += 4
    hundred = np.uint32(100)
    t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = t8 = t9 = rejected = np.uint32(0)
    for j in range(n):
        w = buffer[j]
        low = np.uint32(np.uint32(np.uint32(w * hundred) * hundred) * hundred)
        rejected = np.uint32(rejected + np.uint32(low < threshold))
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 = word_tallies(w, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two)
        t0 = np.uint32(t0 + a0)
        t1 = np.uint32(t1 + a1)
        t2 = np.uint32(t2 + a2)
        t3 = np.uint32(t3 + a3)
        t4 = np.uint32(t4 + a4)
        t5 = np.uint32(t5 + a5)
        t6 = np.uint32(t6 + a6)
        t7 = np.uint32(t7 + a7)
        t8 = np.uint32(t8 + a8)
        t9 = np.uint32(t9 + a9)
    tallies = (np.int64(t0), np.int64(t1), np.int64(t2), np.int64(t3), np.int64(t4), np.int64(t5), np.int64(t6),
               np.int64(t7), np.int64(t8), np.int64(t9))
    return tallies, np.int64(rejected)


@njit
def _add(totals, sign, tallies):
    for j in range(10):
        totals[j] += sign * tallies[j]


@njit
def _uniform_attacks(seed, start, count, skill, lethal1, serious1, lethal2, serious2, two, counts):
    """Same parameters for every attack, no per-attack outputs: dense blocks in tiles."""
    k0, k1 = seed_key(seed)
    sides = np.uint64(ATTACK_SIDES)
    threshold = rejection_threshold(sides)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    totals = np.zeros(10, dtype=np.int64)
    c, h, s, f = tier_bars(skill)
    cb, hb, sb, fb = np.int64(c), np.int64(h), np.int64(s), np.int64(f)
    lb1, wb1 = np.int64(lethal1), np.int64(serious1)
    lb2, wb2 = np.int64(lethal2), np.int64(serious2)
    end = start + count
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    # Items outside whole blocks (at most 3 at each end) go one by one.
    for i in range(start, min(end, first_block * 4)):
        value = np.int64(dense_die(state, k0, k1, i, sides, threshold) - 1)
        _add(totals, 1, attack_tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two))
    for i in range(max(last_block * 4, start), end):
        value = np.int64(dense_die(state, k0, k1, i, sides, threshold) - 1)
        _add(totals, 1, attack_tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two))
    wc, wh, ws, wf = np.uint32(word_bar(c)), np.uint32(word_bar(h)), np.uint32(word_bar(s)), np.uint32(word_bar(f))
    wl1, ww1 = np.uint32(word_bar(lethal1)), np.uint32(word_bar(serious1))
    wl2, ww2 = np.uint32(word_bar(lethal2)), np.uint32(word_bar(serious2))
    word_two = np.uint32(two)
    buffer = np.empty(4 * TILE_BLOCKS, dtype=np.uint32)
    for tile in range(first_block, last_block, TILE_BLOCKS):
        tile_end = min(tile + TILE_BLOCKS, last_block)
        tallies, rejected = _fast_tile(
            k0, k1, tile, tile_end, wc, wh, ws, wf, wl1, ww1, wl2, ww2, word_two, np.uint32(threshold), buffer)
        _add(totals, 1, tallies)
        if rejected:
            # Replace each rejected word's fast tally with its exact value (retry domain); the
            # buffer still holds the tile's words, item tile * 4 + j at j.
            for j in range(4 * (tile_end - tile)):
                word = buffer[j]
                if ((word * sides) & MASK32) < threshold:
                    _add(totals, -1, word_tallies(word, wc, wh, ws, wf, wl1, ww1, wl2, ww2, word_two))
                    stream_start(state, k0, k1, tile * 4 + j)
                    value = np.int64(stream_bounded(state, word, sides, threshold))
                    _add(totals, 1, attack_tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two))
    tally_counts(counts, count, two, totals[0], totals[1], totals[2], totals[3], totals[4], totals[5], totals[6],
                 totals[7], totals[8], totals[9])


@njit
def one_attack(seed, index, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons):
    """Item ``index`` of attack alone (combatsim.d100.Attack): (tier, wound, second wound),
    the bulk kernel's per-item outcome (the engine's attack_outcome) of that one item's value."""
    k0, k1 = seed_key(seed)
    sides = np.uint64(ATTACK_SIDES)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    value = np.int64(dense_die(state, k0, k1, index, sides, rejection_threshold(sides)) - 1)
    return attack_outcome(value, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2,
                          weapons)


@seeded
@njit
def attack(seed, start, count, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons,
           counts, tier_out, wound_out, wound2_out):
    """Attacks with damage; the reference is combatsim.d100.reference.attack."""
    uniform = (full_skill.shape[0] == 1 and lethality.shape[0] == 1 and serious.shape[0] == 1
               and nonlethal.shape[0] == 1 and lethality2.shape[0] == 1 and serious2.shape[0] == 1
               and nonlethal2.shape[0] == 1 and weapons.shape[0] == 1)
    keep = tier_out.shape[0] > 0 or wound_out.shape[0] > 0 or wound2_out.shape[0] > 0
    if uniform and not keep:
        lb1, wb1 = damage_bars(lethality[0], serious[0], nonlethal[0])
        lb2, wb2 = damage_bars(lethality2[0], serious2[0], nonlethal2[0])
        _uniform_attacks(seed, start, count, full_skill[0], lb1, wb1, lb2, wb2, np.int64(weapons[0] == 2), counts)
        return
    k0, k1 = seed_key(seed)
    sides = np.uint64(ATTACK_SIDES)
    threshold = rejection_threshold(sides)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    w0 = w1 = w2 = w3 = np.uint64(0)
    for k in range(count):
        i = start + k
        if k == 0 or i & 3 == 0:  # one dense block serves four attacks
            w0, w1, w2, w3 = block(k0, k1, i >> 2, 0, DOMAIN_DENSE)
        value = np.int64(dense_die_in(state, k0, k1, i, w0, w1, w2, w3, sides, threshold) - 1)
        tier, wound, wound2 = attack_outcome(
            value, full_skill[k if full_skill.shape[0] > 1 else 0], lethality[k if lethality.shape[0] > 1 else 0],
            serious[k if serious.shape[0] > 1 else 0], nonlethal[k if nonlethal.shape[0] > 1 else 0],
            lethality2[k if lethality2.shape[0] > 1 else 0], serious2[k if serious2.shape[0] > 1 else 0],
            nonlethal2[k if nonlethal2.shape[0] > 1 else 0], weapons[k if weapons.shape[0] > 1 else 0])
        count_attack(counts, tier, wound, wound2)
        if tier_out.shape[0]:
            tier_out[k] = tier
        if wound_out.shape[0]:
            wound_out[k] = wound
        if wound2_out.shape[0]:
            wound2_out[k] = wound2


# Fights: the engine's own ``fight`` (combatsim.d100.engine, the reference) compiled by Numba.
fight = seeded(_ENGINE.fight)
