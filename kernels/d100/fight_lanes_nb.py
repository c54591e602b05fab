"""d100 fights in lockstep lanes for Numba: LOCKSTEP_LANES fights at once, one a lane.

The scalar fight (kernels/d100/_nb.py ``_fight_lanes``) spends its time on branches that the dice
decide (which action, hit or miss, which wound, who is out), which no predictor learns. Here each
step of a pass (a declaration, an attack, a move) is a loop over the lanes in which every such branch
is a mask, so LLVM vectorises it (int32 lanes, eight to a vector: the int64 partner row sets the
loops' width; int32 partner rows in 512-bit vectors ran slower, docs/d100.md).
A pass is the reference's play_pass: every combatant declares (c = 0..m-1), then the quick
attacks, the standard attacks (each batch's take-outs land at its end), the engagements and the
other actions, each a loop per combatant; a lane whose fight ended in the pass does nothing more
in it. Between passes, lanes whose fight ended record it and start the next fight index (scalar,
about once in nine passes).

Each lane reads its own fight's item stream (fight k: stream ``start + k``) from a ring of words
drawn ahead, at its own position: a die is a gather of the lane's next word. Lemire's rejection is
rare (a d100's word 96 in 2^32, the attack's 1e6-sided one 2.3e-4): a loop that picks the words
also flags the lanes whose word is rejected, and only when one is flagged do those lanes take
their retry-domain words (scalar) before the loop that uses them. The result is the reference's,
fight by fight: a fight's dice and their order do not depend on its lane or on the other fights.

A lane's combatants are bits of int32 masks (in the fight, cover, dual wield, defending, targeted,
surprised, engaged, a serious wound), two bits each of one word (deadly flesh wounds) and four
bits each of an int64 (the engaged partner), so what a step reads or changes of a combatant that
differs by lane (the target, the partner) is a shift and a masked insert, not a gather or a
scatter; what it needs of another combatant's declaration is in masks too (who presses, who
disengages, who was in the fight and engaged when declaring: see _attack and _move).

Memory: the rows (per-lane values, the partners, per-combatant values, the words, the per-call
constants) are five arrays on the stack (kernels/_numba.py ``on_stack``). Distinct
stack arrays cannot alias, so LLVM vectorises a loop that gathers from one and stores to
another; a loop that gathered from the array it stores to would stay scalar, which is why an
attack or a move is a loop that picks the dice (and gathers the word) and a loop that computes.
"""

from __future__ import annotations

import numpy as np

from combatsim.d100.layout import (
    ACTION_ATTACK,
    ACTION_CHARGE,
    ACTION_DEFEND,
    ACTION_DISENGAGE,
    ACTION_FLEE,
    ACTION_NONE,
    ACTION_PRESS,
    ACTION_QUICK_ATTACK,
    ACTION_TAKE_COVER,
    ACTION_TOGGLE_DUAL_WIELD,
    ATTACK_SIDES,
    C_AMBUSH_ATTACK,
    C_AMBUSH_DEFEND,
    C_ARMOUR,
    C_ATTACK,
    C_DAMAGE,
    C_DUAL_ALLOWED,
    C_FLEE_BASE,
    C_NONLETHAL,
    C_POLICY,
    C_PRESS,
    C_RANGED,
    C_SIDE,
    D100,
    F_ATTACKS,
    F_ESCALATED_LETHAL,
    F_ESCALATED_SERIOUS,
    F_FLESH,
    F_INSTANT_DEATH,
    F_LETHAL,
    F_SERIOUS,
    F_SURPRISED,
)

from .._numba import lane_at, lowest_set_bit, njit, on_stack, shl32, shr32
from ..rng_nb import DOMAIN_RETRY, MASK32, SHIFT32, block, item_blocks, pick, seed_key
from ._nb import ATTACKING, LOCKSTEP_FIGHTERS, LOCKSTEP_LANES, _finish, _first_wins, _outcome_of_lane

LANES = LOCKSTEP_LANES
LIMIT = LOCKSTEP_FIGHTERS
assert LIMIT & (LIMIT - 1) == 0 and LIMIT <= 16  # a combatant index masked by LIMIT - 1; masks below 2^16
#: Words of the ring each lane reads from (a power of two: a word's slot is a mask). A pass reads
#: at most 3 m words (a policy die each, then at most two dice each) plus one looked at and not
#: taken; before a pass, a lane with fewer left draws DRAW_BLOCKS more blocks until it has them.
RING = 128
#: Blocks a lane draws at once: eight 64-bit Philox lanes are one AVX-512 vector (a fight reads
#: about 47 words in the bench).
DRAW_BLOCKS = 8
NEED = 3 * LIMIT + 1
RING_CELLS = LANES * RING
assert NEED - 1 + 4 * DRAW_BLOCKS <= RING and RING % (4 * DRAW_BLOCKS) == 0
#: Lemire's thresholds: a d100's word is rejected when (100 w) mod 2^32 is below 96, the attack
#: value's (10^6 w mod 2^32, which is 100 r2 mod 2^32 with r2 as in _attack_digits) below this.
_REJECT_D100 = np.uint32((2**32) % D100)
_REJECT_ATTACK = np.uint32((2**32) % ATTACK_SIDES)
#: Sweeps between flushes of the int32 per-lane counts into the int64 counts (each sweep adds at
#: most 2 m to a lane's count).
FLUSH_SWEEPS = 1 << 16

# Per-lane rows of ``s`` (int32; offsets: row x LANES). Combatant c is bit c of the masks: in the
# fight, in cover, dual wielding, defending this pass, targeted this round, surprised, engaged, with
# a serious wound; FLESH holds two bits a combatant (deadly flesh wounds, 0..2). Then who declared
# press and disengage this pass, and who was in the fight and engaged when declaring. Then the next
# word's position and the words drawn; whether the lane plays on in this pass and whether it has a
# fight; the winner (-1 while none); the round, pass, and first pass of round 1; the rows a
# step's first loop hands its second; the per-lane counts.
(ACTIVE, COVER, DUAL, DEFENDING, TARGETED, SURPRISED, ENGAGED, SERIOUS, FLESH, PRESSERS, DISENGAGERS,
 DECLARED_ACTIVE, DECLARED_ENGAGED, POS, DRAWN, RUN, FIGHT, WINNER, ROUND, PASS, FIRST, W1, BAD, TGT, MODE, WINS,
 ESCAPED, STRUCK, MADE, TOOK, TOOK2,
 N_ATTACKS, N_LETHAL, N_SERIOUS, N_FLESH, N_INSTANT, N_ESC_SERIOUS, N_ESC_LETHAL) = range(0, 38 * LANES, LANES)
S_CELLS = 38 * LANES
# ESCAPED: who fled successfully; STRUCK: the attack batch's take-outs, landing at its end; MADE,
# TOOK, TOOK2: this pass's engaging attacks (charges, melee attacks): who made one, who took one,
# who took several. MODE's bits: the step rolls (attacks, or moves), disengages against a press
# (contested), disengages, flees, flees while targeted (rolls), or its word is rejected or
# contested (the scalar step).
_ATK, _CON, _BAD = np.int32(1), np.int32(2), np.int32(32)
#: WINNER of a fight with nobody left on either side (layout.DRAW at the finish).
_NOBODY_LEFT = np.int32(2)
COUNT_ROWS = ((N_ATTACKS, F_ATTACKS), (N_LETHAL, F_LETHAL), (N_SERIOUS, F_SERIOUS), (N_FLESH, F_FLESH),
              (N_INSTANT, F_INSTANT_DEATH), (N_ESC_SERIOUS, F_ESCALATED_SERIOUS), (N_ESC_LETHAL, F_ESCALATED_LETHAL))
# Per-lane rows of ``n`` (int64): the engaged partners, four bits each (combatant c at bits
# 4c..4c+3): a partner that differs by lane is a shift, not a gather, and an update a masked
# insert, not a scatter. A partner counts only while the combatant's ENGAGED bit is set
# (engagements are pairs, so releasing x clears x's bit and its partner's). Then, in the same
# fields, the attacker of each combatant that took one engaging attack this pass (TOOK).
PART, ATTACKERS = 0, LANES
N_CELLS = 2 * LANES
# Per-combatant rows of ``cs`` (int32; (field x LIMIT + c) x LANES): declared action and target,
# failed flees, whom it attacked this pass (read while MADE); each only ever read for the
# combatant declaring or acting (what an action needs of another combatant's declaration is in
# the masks above: see _attack and _move).
CS_ACTION, CS_TARGET, CS_FAILED, CS_HIT = (f * LIMIT * LANES for f in range(4))
CS_CELLS = 4 * LIMIT * LANES
# Per-combatant constants in ``k`` (int32; KW a combatant): side, ranged, dual wield allowed, flee
# base, deadly (not nonlethal) per weapon, the opponents' and own side's masks, the damage bars by
# (cover, target armour, dual wield), both weapons' in one word, the success and critical bars by
# penalty steps, the policy bounds. (As int32: read from the int64 table, the loops' selects and
# compares of them were widened to int64.)
(K_SIDE, K_RANGED, K_DUAL_ALLOWED, K_FLEE, K_DEADLY0, K_DEADLY1, K_OPPONENTS, K_OWN) = range(8)
K_DAMAGE = 8  # 12 words: (cover x 3 + armour) x 2 + dual -> both weapons' lethal and serious bars, a byte each
K_SUCCESS = K_DAMAGE + 12  # by 0..4 penalty steps: the success bar, the critical bar x 256 (one select)
K_BOUND = K_SUCCESS + 5  # the eight cumulative policy bounds
KW = K_BOUND + 8
K_CELLS = LIMIT * KW
#: The table's values the lanes take: bars and bounds in -100..100, flee bases within +-2^20 (so
#: the int32 sums cannot overflow; a table beyond them, never built by the API, goes to the
#: scalar fight).
_BAR_MAX = 100
_FLEE_MAX = 1 << 20

_ONE = np.int32(1)
_ZERO = np.int32(0)
_THREE = np.int32(3)
_TWO = np.int32(2)
_FOUR = np.int32(4)
_FIVE = np.int32(5)
_HUNDRED = np.uint32(100)
_INDEX = np.int32(LIMIT - 1)
_NONE_LEFT = np.int32(1 << 30)  # or'd into a mask before its lowest set bit: defined when empty
_BYTE, _EIGHT, _SIXTEEN, _TWENTY_FOUR = np.int32(255), np.int32(8), np.int32(16), np.int32(24)
# Actions as int32 (a plain int is an int64 to Numba, and compares in int64 halve the lanes a vector holds).
_NONE, _ATTACK, _QUICK, _DEFEND, _FLEE, _PRESS, _DISENGAGE, _CHARGE, _TAKE_COVER, _TOGGLE = (
    np.int32(ACTION_NONE), np.int32(ACTION_ATTACK), np.int32(ACTION_QUICK_ATTACK), np.int32(ACTION_DEFEND),
    np.int32(ACTION_FLEE), np.int32(ACTION_PRESS), np.int32(ACTION_DISENGAGE), np.int32(ACTION_CHARGE),
    np.int32(ACTION_TAKE_COVER), np.int32(ACTION_TOGGLE_DUAL_WIELD))
_ATTACKING = np.int32(ATTACKING)
_ROLL_HUNDRED, _HALF, _LOW_HALF = np.int32(100), np.int32(16), np.int32(0xFFFF)


@njit(inline="always")
def _bit(condition):
    """A condition as an int32 0 or 1 (``1 if c else 0`` is an int64)."""
    return np.int32(condition)


@njit(inline="always")
def _pick(value, other, take):
    """``other`` where ``take`` (0 or 1), else ``value``, in int32: masks, not a branch (LLVM turned
    a chain of conditional expressions on one variable into a switch, and a loop with one is not
    vectorised)."""
    return np.int32(value ^ ((value ^ other) & -take))


@njit(inline="always")
def _roll(word):
    """The d100 of a 32-bit word (int32 bits): (word x 100) >> 32, + 1, in int32 from its 16-bit
    halves: (high x 100 + (low x 100) >> 16) >> 16, exact as floor((a + b / 2^16) / 2^16) is."""
    high = np.int32(np.uint32(word) >> np.uint32(16))
    low = np.int32(word & _LOW_HALF)
    carry = np.int32(np.int32(low * _ROLL_HUNDRED) >> _HALF)
    return np.int32(np.int32(np.int32(high * _ROLL_HUNDRED + carry) >> _HALF) + _ONE)


@njit(inline="always")
def _has(bits, c):
    return np.int32(shr32(bits, c) & _ONE)


@njit(inline="always")
def _lowest(bits):
    return np.int32(lowest_set_bit(np.int32(bits | _NONE_LEFT)))


@njit(inline="always")
def _rejected_d100(word):
    return _bit(np.uint32(np.uint32(word) * _HUNDRED) < _REJECT_D100)


@njit(inline="always")
def _attack_digits(word):
    """The attack value's three d100 digits, 0-based (kernels/d100/_nb.py _word_tallies: the digits
    of (10^6 w) >> 32 are the d100s of w, r1 = 100 w mod 2^32 and r2 = 100 r1 mod 2^32), and
    whether the value is rejected."""
    r1 = np.int32(np.uint32(np.uint32(word) * _HUNDRED))
    r2 = np.int32(np.uint32(np.uint32(r1) * _HUNDRED))
    rejected = _bit(np.uint32(np.uint32(r2) * _HUNDRED) < _REJECT_ATTACK)
    return np.int32(_roll(word) - _ONE), np.int32(_roll(r1) - _ONE), np.int32(_roll(r2) - _ONE), rejected


# ---- per-lane scalar work: words, retries, a fight's start -------------------------------------
@njit(inline="always")
def _draw(ring, s, i, index, k0, k1):
    """DRAW_BLOCKS more blocks of the lane's item into its ring's slots (the words drawn are a
    multiple of 4 DRAW_BLOCKS, so they never wrap)."""
    drawn = s[lane_at(DRAWN, i)]
    item_blocks(ring.view(np.uint32), np.uint64(i) * np.uint64(RING) + np.uint64(drawn & (RING - 1)), np.uint64(index) & MASK32,
                np.uint64(index) >> SHIFT32, k0, k1, np.uint64(drawn >> 2), DRAW_BLOCKS)
    s[lane_at(DRAWN, i)] = np.int32(drawn + 4 * DRAW_BLOCKS)


@njit(inline="always")
def _ensure(ring, s, i, index, k0, k1, need):
    """At least ``need`` words drawn and not yet read in lane i's ring."""
    while s[lane_at(DRAWN, i)] - s[lane_at(POS, i)] < need:
        _draw(ring, s, i, index, k0, k1)


@njit(inline="always")
def _slot(i, position):
    """Lane i's ring slot of a word position, as an int32 (non-negative: no wraparound test), so the
    loops gather with 32-bit indices (eight 64-bit ones took two gathers per vector)."""
    return np.int32(np.int32(i) * np.int32(RING) + (position & np.int32(RING - 1)))


@njit(inline="always")
def _word(ring, s, i, offset):
    return ring[np.uint64(i) * np.uint64(RING) + np.uint64((s[lane_at(POS, i)] + offset) & (RING - 1))]


@njit(inline="always")
def _accepted(word, attack, lane_index, retries, i, k0, k1):
    """The word itself, or when Lemire rejects it (as a d100's, or the attack value's) the first
    accepted word of the item's retry domain (rng_nb.stream_bounded): its value is the accepted
    product's, so the lanes work on it as on any word."""
    while True:
        rejected = _attack_digits(word)[3] if attack else _rejected_d100(word)
        if not rejected:
            return word
        used = np.uint64(retries[i])
        w0, w1, w2, w3 = block(k0, k1, np.uint64(lane_index[i]), used >> np.uint64(2), DOMAIN_RETRY)
        word = np.int32(np.uint32(pick(w0, w1, w2, w3, used & np.uint64(3))))
        retries[i] += 1


@njit(inline="always")
def _d100(ring, s, i, offset, lane_index, retries, k0, k1):
    return np.int64(_roll(_accepted(_word(ring, s, i, offset), False, lane_index, retries, i, k0, k1)))


@njit(inline="always")
def _begin(ring, s, n, cs, table, i, index, m, all_in, ambush_side, ambushers, ambusher_count, lane_index, retries,
           counts, k0, k1):
    """Lane i starts the fight of item ``index``: fresh combatants, its first words, the ambush
    contests."""
    lane_index[i] = index
    retries[i] = 0
    for row in (COVER, DUAL, DEFENDING, TARGETED, SURPRISED, ENGAGED, SERIOUS, FLESH, PRESSERS, DISENGAGERS, POS,
                DRAWN, ESCAPED, STRUCK):
        s[lane_at(row, i)] = 0
    s[lane_at(ACTIVE, i)] = all_in
    s[lane_at(RUN, i)] = 1
    s[lane_at(FIGHT, i)] = 1
    s[lane_at(WINNER, i)] = -1
    s[lane_at(ROUND, i)] = 1
    s[lane_at(PASS, i)] = 1
    s[lane_at(FIRST, i)] = 1
    n[lane_at(PART, i)] = 0
    for c in range(m):
        cs[lane_at(CS_FAILED + c * LANES, i)] = 0
    _ensure(ring, s, i, index, k0, k1, 2 * m)
    if ambush_side >= 0:
        rank = 0
        for d in range(m):
            if table[d, C_SIDE] == ambush_side:
                continue
            a = ambushers[rank % ambusher_count]
            rank += 1
            attacker_roll = _d100(ring, s, i, 0, lane_index, retries, k0, k1)
            s[lane_at(POS, i)] += 1
            defender_roll = _d100(ring, s, i, 0, lane_index, retries, k0, k1)
            s[lane_at(POS, i)] += 1
            if _first_wins(attacker_roll, table, a, C_AMBUSH_ATTACK, defender_roll, d, C_AMBUSH_DEFEND):
                s[lane_at(SURPRISED, i)] |= np.int32(1 << d)
                counts[F_SURPRISED] += 1


# ---- the pass, in lockstep ---------------------------------------------------------------------
@njit(inline="always")
def _nibble(word, c):
    """Combatant c's four bits of a per-lane int64 row (ACTS, TGTS, PART), as an int32."""
    return np.int32((word >> np.int64(4 * (c & 15))) & 15)


@njit(inline="always")
def _with_nibble(word, c, value):
    shift = np.int64(4 * (c & 15))
    return (word & ~(np.int64(15) << shift)) | (np.int64(value & 15) << shift)


@njit(inline="always")
def _declare(s, n, cs, ring, k, c, lane_index, retries, k0, k1, opponents):
    """Combatant c declares in every lane where it is in the fight (and not surprised in the first
    pass): the policy d100 through the cumulative bounds, then the overrides and the target."""
    c32 = np.int32(c)
    bit_c = np.int32(1 << c)
    crow = c * LANES
    any_bad = _ZERO
    for i in range(LANES):
        on = np.int32(s[lane_at(RUN, i)] & _has(s[lane_at(ACTIVE, i)], c32)
                      & ~(s[lane_at(FIRST, i)] & _has(s[lane_at(SURPRISED, i)], c32)))
        word = ring[_slot(i, s[lane_at(POS, i)])]
        bad = np.int32(on & _rejected_d100(word))
        s[lane_at(W1, i)] = word
        s[lane_at(BAD, i)] = bad
        any_bad |= bad
    if any_bad:
        for i in range(LANES):
            if s[i + BAD]:
                s[i + W1] = _accepted(s[i + W1], False, lane_index, retries, i, k0, k1)
    kb = c * KW + K_BOUND
    b0, b1, b2, b3, b4, b5, b6, b7 = (k[kb], k[kb + 1], k[kb + 2], k[kb + 3], k[kb + 4], k[kb + 5], k[kb + 6],
                                      k[kb + 7])
    toggles = k[c * KW + K_DUAL_ALLOWED]
    for i in range(LANES):
        active = s[lane_at(ACTIVE, i)]
        on = np.int32(s[lane_at(RUN, i)] & _has(active, c32) & ~(s[lane_at(FIRST, i)] & _has(s[lane_at(SURPRISED, i)], c32)))
        roll = _roll(s[lane_at(W1, i)])
        # layout.POLICY_ACTIONS is ATTACK..TAKE_COVER in order; the bounds do not decrease (fits).
        action = np.int32(_ATTACK + _bit(roll > b0) + _bit(roll > b1) + _bit(roll > b2) + _bit(roll > b3)
                          + _bit(roll > b4) + _bit(roll > b5) + _bit(roll > b6) + _bit(roll > b7))
        engaged = _has(s[lane_at(ENGAGED, i)], c32)
        action = _pick(action, _DISENGAGE, engaged & _bit(action == _FLEE))
        action = _pick(action, _ATTACK, (engaged ^ _ONE) & _bit(action == _DISENGAGE))
        action = _pick(action, _TOGGLE, toggles & (_has(s[lane_at(DUAL, i)], c32) ^ _ONE))
        action = _pick(_NONE, action, on)
        target = _pick(_lowest(active & opponents), _nibble(n[lane_at(PART, i)], c32), engaged)
        cs[lane_at(CS_ACTION + crow, i)] = action
        cs[lane_at(CS_TARGET + crow, i)] = target
        s[lane_at(TARGETED, i)] |= shl32(_has(_ATTACKING, action), target)
        s[lane_at(DEFENDING, i)] |= np.int32(-_bit(action == _DEFEND) & bit_c)
        s[lane_at(PRESSERS, i)] |= np.int32(-_bit(action == _PRESS) & bit_c)
        s[lane_at(DISENGAGERS, i)] |= np.int32(-_bit(action == _DISENGAGE) & bit_c)
        s[lane_at(POS, i)] += on


@njit(inline="always")
def _steps(steps, v0, v1, v2, v3, v4):
    """The value for 0..4 penalty steps, by selects."""
    value = _pick(v0, v1, _bit(steps == 1))
    value = _pick(value, v2, _bit(steps == 2))
    value = _pick(value, v3, _bit(steps == 3))
    return _pick(value, v4, _bit(steps == 4))


@njit(inline="always")
def _release(engaged, partners, x, on):
    """The ENGAGED bits that releasing x (where ``on``) clears: x's and its partner's."""
    mine = _has(engaged, x)
    return np.int32(-on & (shl32(_ONE, x) | ((-mine) & shl32(_ONE, _nibble(partners, x)))))


@njit(inline="always")
def _attack(s, n, cs, ring, k, c, quick, lane_index, retries, k0, k1, armour1, armour2):
    """Combatant c's attack of one batch (quick: its quick attack or charge; else its attack, or a
    press not spent blocking) in every lane where it makes one (the reference's attack_batch, one
    attacker): against the state before the batch, whose take-outs land at its end (STRUCK)."""
    kc = c * KW
    c32 = np.int32(c)
    bit_c = np.int32(1 << c)
    crow = c * LANES
    opponents = k[kc + K_OPPONENTS]
    # Which lanes attack, whom, and their words (and the rare rejected ones).
    special = _ZERO
    for i in range(LANES):
        active = s[lane_at(ACTIVE, i)]
        run = np.int32(s[lane_at(RUN, i)] & _has(active, c32))
        action = cs[lane_at(CS_ACTION + crow, i)]
        declared = cs[lane_at(CS_TARGET + crow, i)]
        if quick:
            attack = np.int32(run & (_bit(action == _QUICK) | _bit(action == _CHARGE)))
            target = declared
        else:
            # A press is spent blocking its target's disengage. A disengager targets its partner
            # when declaring; c's press targets that partner only if c too was engaged when
            # declaring (then to it), else the first opponent in the fight.
            blocked = np.int32(_bit(action == _PRESS) & _has(s[lane_at(DISENGAGERS, i)], declared)
                               & _has(s[lane_at(DECLARED_ENGAGED, i)], c32))
            left = np.int32(active & opponents)
            attack = np.int32(run & (_bit(action == _ATTACK) | (_bit(action == _PRESS) & (blocked ^ _ONE)))
                              & _bit(left != 0))
            target = _pick(_lowest(left), declared, _has(active, declared))
        word = ring[_slot(i, s[lane_at(POS, i)])]
        bad = np.int32(attack & _attack_digits(word)[3])
        s[lane_at(W1, i)] = word
        s[lane_at(TGT, i)] = target
        s[lane_at(MODE, i)] = np.int32(attack | (bad << _FIVE))
        special |= bad
    if special:
        for i in range(LANES):
            if s[i + MODE] & _BAD:
                s[i + W1] = _accepted(s[i + W1], True, lane_index, retries, i, k0, k1)
    ranged = k[kc + K_RANGED]
    melee = ranged ^ _ONE
    deadly0 = k[kc + K_DEADLY0]
    deadly1 = k[kc + K_DEADLY1]
    s0, s1, s2, s3, s4 = (k[kc + K_SUCCESS], k[kc + K_SUCCESS + 1], k[kc + K_SUCCESS + 2], k[kc + K_SUCCESS + 3],
                          k[kc + K_SUCCESS + 4])
    damage = kc + K_DAMAGE  # word (cover x 3 + armour) x 2 + dual
    d000, d001, d010, d011, d020, d021 = (k[damage], k[damage + 1], k[damage + 2], k[damage + 3], k[damage + 4],
                                          k[damage + 5])
    d100, d101, d110, d111, d120, d121 = (k[damage + 6], k[damage + 7], k[damage + 8], k[damage + 9], k[damage + 10],
                                          k[damage + 11])
    quick32 = np.int32(quick)
    for i in range(LANES):
        action = cs[lane_at(CS_ACTION + crow, i)]
        partners = n[lane_at(PART, i)]
        engaged = s[lane_at(ENGAGED, i)]
        attack = np.int32(s[lane_at(MODE, i)] & _ONE)
        target = s[lane_at(TGT, i)]
        word = s[lane_at(W1, i)]
        dual = _has(s[lane_at(DUAL, i)], c32)
        target_cover = np.int32(_has(s[lane_at(COVER, i)], target) & ranged)
        steps = np.int32(quick32 + dual + target_cover + _has(s[lane_at(DEFENDING, i)], target))
        roll, damage, damage2, _ = _attack_digits(word)
        bars = _steps(steps, s0, s1, s2, s3, s4)
        hit = np.int32(attack & _bit(roll < (bars & _BYTE)))
        critical = _bit(roll < shr32(bars, _EIGHT))
        armour = np.int32(_has(armour1, target) + _has(armour2, target) * _TWO)
        # The bars by (cover, armour, dual): selects (a gather measured slower).
        by_armour = _bit(armour == _ONE)
        by_armour2 = _bit(armour == _TWO)
        bars0 = _pick(_pick(d000, d010, by_armour), d020, by_armour2)
        bars1 = _pick(_pick(d001, d011, by_armour), d021, by_armour2)
        bars2 = _pick(_pick(d100, d110, by_armour), d120, by_armour2)
        bars3 = _pick(_pick(d101, d111, by_armour), d121, by_armour2)
        bars = _pick(_pick(bars0, bars1, dual), _pick(bars2, bars3, dual), target_cover)
        lethal1 = np.int32(hit & _bit(damage < (bars & _BYTE)))
        serious1 = np.int32(hit & (lethal1 ^ _ONE) & _bit(damage < (shr32(bars, _EIGHT) & _BYTE)))
        flesh1 = np.int32(hit & (lethal1 ^ _ONE) & (serious1 ^ _ONE))
        second = np.int32(hit & dual)
        lethal2 = np.int32(second & _bit(damage2 < (shr32(bars, _SIXTEEN) & _BYTE)))
        serious2 = np.int32(second & (lethal2 ^ _ONE) & _bit(damage2 < shr32(bars, _TWENTY_FOUR)))
        flesh2 = np.int32(second & (lethal2 ^ _ONE) & (serious2 ^ _ONE))
        # Escalation, weapon by weapon: three deadly flesh -> serious, two serious -> lethal (so a
        # combatant holds at most two deadly flesh wounds and one serious between wounds).
        fleshes = s[lane_at(FLESH, i)]
        shift2 = np.int32((target & _INDEX) * _TWO)
        # Counts 0..3 and 0..3 here, so "three" and "two" are constant shifts, not compares (whose
        # 0/1 results LLVM had widened to int64: 16.3 -> 15.7 ns an attack).
        flesh = np.int32((shr32(fleshes, shift2) & _THREE) + (flesh1 & deadly0))
        to_serious1 = np.int32((flesh + _ONE) >> _TWO)
        flesh = np.int32(flesh & ~np.int32(-to_serious1))
        serious = np.int32(_has(s[lane_at(SERIOUS, i)], target) + serious1 + to_serious1)
        to_lethal1 = np.int32(serious >> _ONE)
        serious = np.int32(serious & _ONE)
        flesh = np.int32(flesh + (flesh2 & deadly1))
        to_serious2 = np.int32((flesh + _ONE) >> _TWO)
        flesh = np.int32(flesh & ~np.int32(-to_serious2))
        serious = np.int32(serious + serious2 + to_serious2)
        to_lethal2 = np.int32(serious >> _ONE)
        serious = np.int32(serious & _ONE)
        out = np.int32(lethal1 | to_lethal1 | lethal2 | to_lethal2)
        target_bit = shl32(_ONE, target)
        s[lane_at(FLESH, i)] = np.int32((fleshes & ~np.int32(-hit & shl32(_THREE, shift2))) | shl32(-hit & flesh, shift2))
        s[lane_at(SERIOUS, i)] = np.int32((s[lane_at(SERIOUS, i)] & ~np.int32(-hit & target_bit))
                                          | (-(hit & serious) & target_bit))
        s[lane_at(N_ATTACKS, i)] += attack
        s[lane_at(N_LETHAL, i)] += np.int32(lethal1 + lethal2)
        s[lane_at(N_INSTANT, i)] += np.int32((lethal1 + lethal2) & -critical)
        s[lane_at(N_SERIOUS, i)] += np.int32(serious1 + serious2)
        s[lane_at(N_FLESH, i)] += np.int32(flesh1 + flesh2)
        s[lane_at(N_ESC_SERIOUS, i)] += np.int32(to_serious1 + to_serious2)
        s[lane_at(N_ESC_LETHAL, i)] += np.int32(to_lethal1 + to_lethal2)
        # Out at the batch's end; its pair released now (no attack reads the pairs).
        s[lane_at(STRUCK, i)] |= np.int32(-out & target_bit)
        s[lane_at(ENGAGED, i)] = np.int32(engaged & ~_release(engaged, partners, target, out))
        # An engaging attack (a charge, or a melee attack), for the engagements after the attacks.
        engaging = np.int32(attack & (_bit(action == _CHARGE) | melee))
        taken = np.int32(-engaging & target_bit)
        took = s[lane_at(TOOK, i)]
        s[lane_at(TOOK2, i)] |= np.int32(took & taken)
        s[lane_at(TOOK, i)] = np.int32(took | taken)
        s[lane_at(MADE, i)] |= np.int32(-engaging & bit_c)
        attackers = n[lane_at(ATTACKERS, i)]
        n[lane_at(ATTACKERS, i)] = attackers ^ ((attackers ^ _with_nibble(attackers, target, c32)) & -np.int64(engaging))
        cs[lane_at(CS_HIT + crow, i)] = _pick(cs[lane_at(CS_HIT + crow, i)], target, attack)
        s[lane_at(POS, i)] += attack


@njit(inline="always")
def _land(s, side0, side1, decide):
    """An attack batch's take-outs land in every lane; after the last batch (``decide``), a fight
    with nobody left on a side ends: WINNER the side left, or NOBODY_LEFT (the reference's
    decided)."""
    for i in range(LANES):
        active = np.int32(s[lane_at(ACTIVE, i)] & ~s[lane_at(STRUCK, i)])
        s[lane_at(ACTIVE, i)] = active
        s[lane_at(STRUCK, i)] = 0
        if decide:
            _decide(s, i, active, side0, side1)


@njit(inline="always")
def _decide(s, i, active, side0, side1):
    in0 = _bit((active & side0) != 0)
    in1 = _bit((active & side1) != 0)
    over = np.int32(s[lane_at(RUN, i)] & ((in0 & in1) ^ _ONE))
    s[lane_at(WINNER, i)] = _pick(s[lane_at(WINNER, i)], _pick(_pick(_NOBODY_LEFT, _ONE, in1), _ZERO, in0), over)
    s[lane_at(RUN, i)] &= ~over


@njit(inline="always")
def _engage(s, n, cs, c):
    """Combatant c's engagement in every lane whose fight goes on: its engaging attack pairs it with
    its target when both are still in and neither made or took another engaging attack this pass
    (the reference's engage_after_attacks: the target's only attacker is c, and c's only
    attacker, if any, is its target, whose own attack is on c). A charger leaves its cover."""
    c32 = np.int32(c)
    bit_c = np.int32(1 << c)
    crow = c * LANES
    for i in range(LANES):
        run = s[lane_at(RUN, i)]
        active = s[lane_at(ACTIVE, i)]
        engaged = s[lane_at(ENGAGED, i)]
        made = s[lane_at(MADE, i)]
        took = s[lane_at(TOOK, i)]
        several = s[lane_at(TOOK2, i)]
        partners = n[lane_at(PART, i)]
        t = cs[lane_at(CS_HIT + crow, i)]
        only_t_on_c = _pick(_has(took, c32) ^ _ONE,
                            _has(took, c32) & (_has(several, c32) ^ _ONE)
                            & _bit(_nibble(n[lane_at(ATTACKERS, i)], c32) == t), _has(made, t))
        paired = np.int32(_has(engaged, c32) & _bit(_nibble(partners, c32) == t))
        ok = np.int32(run & _has(made, c32) & _has(active, c32) & _has(active, t) & (_has(several, t) ^ _ONE)
                      & only_t_on_c & (paired ^ _ONE))
        engaged &= ~np.int32(_release(engaged, partners, c32, ok) | _release(engaged, partners, t, ok))
        s[lane_at(ENGAGED, i)] = np.int32(engaged | (-ok & (bit_c | shl32(_ONE, t))))
        paired_now = _with_nibble(_with_nibble(partners, c32, t), t, c32)
        n[lane_at(PART, i)] = partners ^ ((partners ^ paired_now) & -np.int64(ok))
        charged = np.int32(run & _bit(cs[lane_at(CS_ACTION + crow, i)] == _CHARGE))
        s[lane_at(COVER, i)] &= ~np.int32(-charged & bit_c)


@njit(inline="always")
def _move(s, n, cs, ring, k, table, c, lane_index, retries, k0, k1):
    """Combatant c's action after the attacks in every lane where it is still in a fight that goes
    on (the reference's move): take cover, toggle dual wield, disengage or flee."""
    kc = c * KW
    c32 = np.int32(c)
    bit_c = np.int32(1 << c)
    crow = c * LANES
    own = k[kc + K_OWN]
    special = _ZERO
    for i in range(LANES):
        active = s[lane_at(ACTIVE, i)]
        run = np.int32(s[lane_at(RUN, i)] & _has(active, c32))
        action = cs[lane_at(CS_ACTION + crow, i)]
        declared = cs[lane_at(CS_TARGET + crow, i)]
        engaged = _has(s[lane_at(ENGAGED, i)], c32)
        partner = _nibble(n[lane_at(PART, i)], c32)
        declared_engaged = s[lane_at(DECLARED_ENGAGED, i)]
        disengages = np.int32(run & _bit(action == _DISENGAGE) & engaged)
        # The partner's press targets c when the partner was engaged to c when declaring (c's
        # declared target, its partner then), or was not engaged and c was the first of c's side
        # in the fight then.
        on_c = _pick(_bit(_lowest(s[lane_at(DECLARED_ACTIVE, i)] & own) == c32), _bit(declared == partner),
                     _has(declared_engaged, partner))
        contested = np.int32(disengages & _has(active, partner) & _has(s[lane_at(PRESSERS, i)], partner) & on_c)
        flees = np.int32(run & _bit(action == _FLEE) & (engaged ^ _ONE))
        targeted = np.int32(flees & _has(s[lane_at(TARGETED, i)], c32))
        word = ring[_slot(i, s[lane_at(POS, i)])]
        bad = np.int32((targeted & _rejected_d100(word)) | contested)
        s[lane_at(W1, i)] = word
        # The step's flags as bits of one row (one store and one load, not six).
        s[lane_at(MODE, i)] = np.int32(run | (contested << _ONE) | (disengages << _TWO) | (flees << _THREE)
                                       | (targeted << _FOUR) | (bad << _FIVE))
        special |= bad
    if special:
        # Rare (scalar): rejected words take their retry words; a contested disengage rolls the
        # press contest (two d100s; ties favour the blocker).
        for i in range(LANES):
            mode = s[i + MODE]
            if mode & _BAD:
                word = _accepted(s[i + W1], False, lane_index, retries, i, k0, k1)
                s[i + W1] = word
                if mode & _CON:
                    press_word = _accepted(_word(ring, s, i, 1), False, lane_index, retries, i, k0, k1)
                    partner = _nibble(n[i + PART], c32)
                    s[i + WINS] = _first_wins(np.int64(_roll(word)), table, c, C_PRESS, np.int64(_roll(press_word)),
                                              partner, C_PRESS)
    flee_base = k[kc + K_FLEE]
    for i in range(LANES):
        mode = s[lane_at(MODE, i)]
        run = np.int32(mode & _ONE)
        contested = np.int32((mode >> _ONE) & _ONE)
        action = cs[lane_at(CS_ACTION + crow, i)]
        partners = n[lane_at(PART, i)]
        engaged = s[lane_at(ENGAGED, i)]
        cover = s[lane_at(COVER, i)]
        # Disengage: released unless a press on it won the contest.
        released = np.int32((mode >> _TWO) & ((contested ^ _ONE) | s[lane_at(WINS, i)]))
        # Flee: a targeted combatant rolls against its escalating target; failing, it takes cover.
        flees = np.int32((mode >> _THREE) & _ONE)
        targeted = np.int32((mode >> _FOUR) & _ONE)
        failed = cs[lane_at(CS_FAILED + crow, i)]
        flee_target = np.int32(min(np.int32(flee_base + np.int32(20) * failed), np.int32(95)))
        fails = np.int32(targeted & _bit(_roll(s[lane_at(W1, i)]) > flee_target))
        cs[lane_at(CS_FAILED + crow, i)] = np.int32(failed + fails)
        fled = np.int32(flees & (fails ^ _ONE))
        s[lane_at(ACTIVE, i)] &= ~np.int32(-fled & bit_c)
        s[lane_at(ESCAPED, i)] |= np.int32(-fled & bit_c)
        cover |= np.int32(-(fails | (run & _bit(action == _TAKE_COVER))) & bit_c)
        s[lane_at(DUAL, i)] |= np.int32(-(run & _bit(action == _TOGGLE)) & bit_c)
        s[lane_at(COVER, i)] = cover
        s[lane_at(POS, i)] += np.int32(contested * _TWO + targeted)
        s[lane_at(ENGAGED, i)] = np.int32(engaged & ~_release(engaged, partners, c32, released))


@njit(inline="always")
def _next_pass(s, passes, max_rounds):
    """Every lane's next pass (Defend lasts a pass, targeted a round); returns the lanes whose
    fight is over (a winner, or the last pass of the last round) as bits."""
    done = np.uint64(0)
    passes32 = np.int32(passes)
    max_rounds32 = np.int32(max_rounds)
    for i in range(LANES):
        fight = s[lane_at(FIGHT, i)]
        pass_number = s[lane_at(PASS, i)]
        round_number = s[lane_at(ROUND, i)]
        last_pass = _bit(pass_number == passes32)
        over = np.int32(fight & (_bit(s[lane_at(WINNER, i)] >= 0) | (last_pass & _bit(round_number == max_rounds32))))
        new_round = np.int32(last_pass & (over ^ _ONE))
        s[lane_at(PASS, i)] = _pick(np.int32(pass_number + _ONE), _ONE, last_pass)
        s[lane_at(ROUND, i)] = np.int32(round_number + new_round)
        s[lane_at(TARGETED, i)] &= np.int32(new_round - _ONE)
        s[lane_at(DEFENDING, i)] = 0
        s[lane_at(PRESSERS, i)] = 0
        s[lane_at(DISENGAGERS, i)] = 0
        s[lane_at(FIRST, i)] = 0
        s[lane_at(RUN, i)] = np.int32(fight & (over ^ _ONE))
        done |= np.uint64(over) << np.uint64(i)
    return done


@njit(inline="always")
def _flush(s, counts):
    for row, field in COUNT_ROWS:
        total = 0
        for i in range(LANES):
            total += s[lane_at(row, i)]
            s[lane_at(row, i)] = 0
        counts[field] += total


@njit
def fits(table, passes, max_rounds):
    """Whether the lanes take this call: 2..LOCKSTEP_FIGHTERS combatants, at least one pass, and a
    table whose values fit the lanes' shortcuts (any table api.fight_table builds does)."""
    m = table.shape[0]
    if m < 2 or m > LIMIT or passes < 1 or max_rounds < 1:
        return False
    # Every position a fight reaches must fit an int32.
    if max_rounds > (2**31 - 1) // (passes * NEED + 2 * LIMIT + RING):
        return False
    for c in range(m):
        row = table[c]
        for column in (C_SIDE, C_RANGED, C_DUAL_ALLOWED, C_NONLETHAL, C_NONLETHAL + 1):
            if row[column] < 0 or row[column] > 1:
                return False
        if row[C_ARMOUR] < 0 or row[C_ARMOUR] > 2 or abs(row[C_FLEE_BASE]) > _FLEE_MAX:
            return False
        for j in range(C_PRESS, C_POLICY + 8):
            if abs(row[j]) > _BAR_MAX:
                return False
        for j in range(C_DAMAGE, C_DAMAGE + 48):
            if row[j] < 0:  # a byte each in k
                return False
        for step in range(5):
            if row[C_ATTACK + 4 * step] < 0:  # a byte in k (the success bar, not below it, too)
                return False
        # The policy by counting bounds below the roll is the reference's first bound at or above
        # it when the bounds do not decrease and the last is at least 100.
        for j in range(7):
            if row[C_POLICY + j] > row[C_POLICY + j + 1]:
                return False
        if row[C_POLICY + 7] < D100:
            return False
        # The attack tiers: hit at or below the success bar, critical at or below the critical bar.
        for step in range(5):
            column = C_ATTACK + 4 * step
            if not (row[column] <= row[column + 1] <= row[column + 2] <= row[column + 3]):
                return False
    return True


@njit
def fight_lockstep(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out):
    """Fights start..start+count-1 in LOCKSTEP_LANES lanes (a table that ``fits``)."""
    lane_index = np.zeros(LANES, dtype=np.int64)
    lane_fight = np.zeros(LANES, dtype=np.int64)
    retries = np.zeros(LANES, dtype=np.int64)
    ambushers = np.zeros(table.shape[0], dtype=np.int64)
    sides = np.zeros(2, dtype=np.int64)
    _lockstep(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out,
              lane_index, lane_fight, retries, ambushers, sides)


@njit(_nrt=False)
def _lockstep(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out,
              lane_index, lane_fight, retries, ambushers, sides):
    k0, k1 = seed_key(seed)
    m = table.shape[0]
    s = on_stack(1, S_CELLS, np.int32)[0]
    n = on_stack(1, N_CELLS, np.int64)[0]
    cs = on_stack(1, CS_CELLS, np.int32)[0]
    ring = on_stack(1, RING_CELLS, np.int32)[0]
    k = on_stack(1, K_CELLS, np.int32)[0]
    for j in range(S_CELLS):
        s[j] = 0
    for j in range(N_CELLS):
        n[j] = 0
    for j in range(CS_CELLS):
        cs[j] = 0
    for j in range(RING_CELLS):
        ring[j] = 0
    for j in range(K_CELLS):
        k[j] = 0
    side0 = 0
    side1 = 0
    armour1 = 0
    armour2 = 0
    ambusher_count = 0
    for c in range(m):
        if table[c, C_SIDE] == 0:
            side0 |= 1 << c
        else:
            side1 |= 1 << c
        armour1 |= np.int64(table[c, C_ARMOUR] == 1) << c
        armour2 |= np.int64(table[c, C_ARMOUR] == 2) << c
        if table[c, C_SIDE] == ambush_side:
            ambushers[ambusher_count] = c
            ambusher_count += 1
    for c in range(m):
        row = table[c]
        kc = c * KW
        k[kc + K_SIDE] = row[C_SIDE]
        k[kc + K_RANGED] = row[C_RANGED]
        k[kc + K_DUAL_ALLOWED] = row[C_DUAL_ALLOWED]
        k[kc + K_FLEE] = row[C_FLEE_BASE]
        k[kc + K_DEADLY0] = 1 - row[C_NONLETHAL]
        k[kc + K_DEADLY1] = 1 - row[C_NONLETHAL + 1]
        k[kc + K_OPPONENTS] = side0 if row[C_SIDE] else side1
        k[kc + K_OWN] = side1 if row[C_SIDE] else side0
        for j in range(12):
            k[kc + K_DAMAGE + j] = (row[C_DAMAGE + 2 * j] | row[C_DAMAGE + 2 * j + 1] << 8
                                    | row[C_DAMAGE + 24 + 2 * j] << 16 | row[C_DAMAGE + 25 + 2 * j] << 24)
        for step in range(5):
            # The tier is at most SUCCESS at or below the success bar (ordered bars: fits).
            k[kc + K_SUCCESS + step] = row[C_ATTACK + 4 * step + 2] | row[C_ATTACK + 4 * step] << 8
        for j in range(8):
            k[kc + K_BOUND + j] = row[C_POLICY + j]
    all_in = np.int32(side0 | side1)
    side0_32 = np.int32(side0)
    side1_32 = np.int32(side1)
    sides[0] = side0
    sides[1] = side1
    need = np.int32(3 * m + 1)
    armour1_32 = np.int32(armour1)
    armour2_32 = np.int32(armour2)
    next_fight = 0
    running = 0
    for i in range(LANES):
        if next_fight < count:
            lane_fight[i] = next_fight
            _begin(ring, s, n, cs, table, i, start + next_fight, m, all_in, ambush_side, ambushers, ambusher_count,
                   lane_index, retries, counts, k0, k1)
            next_fight += 1
            running += 1
    sweeps = 0
    while running:
        # Lanes short of words for a pass draw more (scalar, one lane in several passes).
        short = np.uint64(0)
        for i in range(LANES):
            s[lane_at(DECLARED_ACTIVE, i)] = s[lane_at(ACTIVE, i)]
            s[lane_at(DECLARED_ENGAGED, i)] = s[lane_at(ENGAGED, i)]
            s[lane_at(MADE, i)] = 0
            s[lane_at(TOOK, i)] = 0
            s[lane_at(TOOK2, i)] = 0
            short |= np.uint64(s[lane_at(RUN, i)] & _bit(s[lane_at(DRAWN, i)] - s[lane_at(POS, i)] < need)) << np.uint64(i)
        while short:
            i = lowest_set_bit(short)
            short &= short - np.uint64(1)
            _ensure(ring, s, i, lane_index[i], k0, k1, need)
        for c in range(m):
            _declare(s, n, cs, ring, k, c, lane_index, retries, k0, k1, k[c * KW + K_OPPONENTS])
        # The quick attacks, the standard attacks, engagements, the other actions (the reference's
        # play_pass).
        for c in range(m):
            _attack(s, n, cs, ring, k, c, True, lane_index, retries, k0, k1, armour1_32, armour2_32)
        _land(s, side0_32, side1_32, False)
        for c in range(m):
            _attack(s, n, cs, ring, k, c, False, lane_index, retries, k0, k1, armour1_32, armour2_32)
        _land(s, side0_32, side1_32, True)
        for c in range(m):
            _engage(s, n, cs, c)
        for c in range(m):
            _move(s, n, cs, ring, k, table, c, lane_index, retries, k0, k1)
        for i in range(LANES):
            _decide(s, i, s[lane_at(ACTIVE, i)], side0_32, side1_32)
        done = _next_pass(s, passes, max_rounds)
        while done:
            i = lowest_set_bit(done)
            done &= done - np.uint64(1)
            _finish(lane_fight[i], _outcome_of_lane(s[lane_at(WINNER, i)]), s[lane_at(ROUND, i)],
                    np.int64(s[lane_at(ESCAPED, i)]), sides, counts, winner_out, rounds_out)
            if next_fight < count:
                lane_fight[i] = next_fight
                _begin(ring, s, n, cs, table, i, start + next_fight, m, all_in, ambush_side, ambushers,
                       ambusher_count, lane_index, retries, counts, k0, k1)
                next_fight += 1
            else:
                s[lane_at(FIGHT, i)] = 0
                s[lane_at(RUN, i)] = 0
                running -= 1
        sweeps += 1
        if sweeps == FLUSH_SWEEPS:
            _flush(s, counts)
            sweeps = 0
    _flush(s, counts)
