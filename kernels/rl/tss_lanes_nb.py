"""TSS duel steps in lockstep for Numba: the twin of kernels/rl/tss_lanes.h (read its notes).

``tss_lanes`` steps up to 64 envs together in loops over lanes that LLVM vectorises, with no
branch on a die, and returns the envs it stepped as bits; the shared body of
combatsim.rl.tss_reference steps the others. It takes exactly the envs the C lanes take: a phase
has one order of events (the first mover's turn: its action, an attack's control die, situation
dice, damage dice and armour die, a two-weapon attack's second attack; the other side's turn; then
a new round's action checks and tie die), so each event is one loop over all lanes with a mask of
the lanes it concerns, and each lane reads its words in stream order from its own position. The
step's first block is drawn ahead by the caller; with the seeds the lanes draw a lane's further
blocks when it may read past those drawn (up to LANE_WORDS words), and a resetting lane's new
episode's first block. Without the seeds (an empty array: the tests' lanes alone, as the C
tss_lanes_alone) a step that needs them goes to the body. The lanes live in rows of one int32
array (one base pointer, so LLVM needs no alias checks), as in kernels/rl/exp_lanes_nb.py.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from combatsim.rl.tss_reference import (
    A_AIM,
    A_ATTACK,
    A_TWO_WEAPON_ATTACK,
    A_WAIT,
    ACTIONS,
    D20,
    G_MAX_STEPS,
    G_ONE_STEP_SHIFT,
    MAX_DICE,
    MAX_STEPS_PENALTY,
    OBS_SIZE,
    P_ACTION_CHECK,
    P_ACTIONS_PER_ROUND,
    P_AMBIDEXTERITY,
    P_ARMOUR_DIE,
    P_ARMOUR_GRADE,
    P_DURABILITY,
    P_SKILL,
    P_STEPS,
    P_TRACK,
    P_TWO_WEAPONS,
    P_TYPE,
    P_WEAPON_GRADE,
    POLICY_EXTERNAL,
    POLICY_SCRIPTED,
    S_ACTIONS_LEFT,
    S_AIMED,
    S_EPISODE,
    S_FIRST_MOVER,
    S_FIRST_PHASE,
    S_MORTAL,
    S_NEEDS_RESET,
    S_PHASE,
    S_RETRIES,
    S_SIDE,
    S_STUN,
    S_T,
    S_WOUND,
    SIDE_PARAMS,
    SIDE_STATE,
    WORDS_PER_STEP,
)

from .._numba import lane_at, lowest_set_bit, njit, on_stack
from ..rng_nb import DOMAIN_ITEM, MASK32, SHIFT32, philox4x32
from ._stream_nb import _ROW, AHEAD_ENVS, LANES_MIN, lanes_may_take

#: Lanes stepped together (the header's TSS_LANES).
LANES = AHEAD_ENVS
#: An action that does nothing: an illegal choice (the reference's -1 or any action outside 0..3).
NO_ACTION = ACTIONS
#: Words a step may read in the lanes (blocks of four; the bench's duel reads at most 11).
LANE_WORDS = 12
#: Lemire's threshold for a d20: (2^32 - 20) mod 20 (a d2's, d4's and d8's are 0).
D20_REJECT_BELOW = 16
#: Parameters the lanes take stay within +-2^20, tracks within 0 .. 2^20 - 1 (int32 sums of a few
#: of them cannot overflow, and float32 holds them exactly).
LANE_RANGE = 1 << 20

# Rows of the lanes, as offsets into one flat array (row x LANES: constant offsets, so LLVM sees
# that the rows of a loop over 64 lanes never overlap and vectorises it without alias checks, in
# helpers that are not inlined too): per-lane values (the round, the attack under way, the next
# word's position, the words drawn and those the lane may read so far, the outcome), each side's,
# then the words.
(T, RESET, SLOW, PHASE, FIRST, POS, ACTOR, ATTACKING, SECOND, EXTRA, EXTRA2, CONTROL, SIT_N, SIT_NEGATIVE,
 SIT_SUM, SIT_SIDES, SIT_REJECT_BELOW, TIER, HIT, DAMAGE, DICE_LEFT, ROUND, DRAWN, NEED, ENDED,
 CUT) = range(0, 26 * LANES, LANES)
STUN, WOUND, MORTAL, FIRST_PHASE, LEFT, AIMED, CHOICE, DEALT = range(0, 8 * LANES, LANES)
SIDE_ROWS = 8 * LANES
SIDE0 = 26 * LANES
SIDE1 = SIDE0 + SIDE_ROWS
WORD = SIDE1 + SIDE_ROWS  # .. row LANE_WORDS - 1 on: each lane's words of the step, in stream order
ROWS = WORD // LANES + LANE_WORDS
LANE_CELLS = ROWS * LANES
# Rows of floats (offsets too): the rewards, a side's legal actions after the step (as bits, a
# float: _observe then stores to this array only), then its observation.
F_REWARD0, F_REWARD1, F_LEGAL, F_OBS = 0, LANES, 2 * LANES, 3 * LANES
FLOAT_ROWS = 3 + OBS_SIZE
FLOAT_CELLS = FLOAT_ROWS * LANES
# The observation's rows are laid out in quads: lane i's observations 4q .. 4q + 3 at F_OBS + 4 x
# (q x LANES + i) (stores of four rows interleaved, which LLVM vectorises with shuffles), so that
# _write_obs copies 16 bytes at a time (a scalar copy of 20 floats an env was store-bound).
QUAD = 4
assert OBS_SIZE % QUAD == 0
_QUAD = np.uint64(QUAD)

# One side's parameters as the lanes use them (tss_lanes.h's TssLaneSide), per tier where three:
# the kind is the damage type after the shift against the foe's armour, main_steps 0 if
# ambidextrous (else 2), sides and thresholds of an absent die 1 and 0.
(SKILL, CHECK, PER_ROUND, STEPS, TWO_WEAPONS, MAIN_STEPS, COUNT, MODIFIER, KIND, MOST_DICE, SIDES, REJECT_BELOW,
 ARMOURED, ARMOUR_SIDES, ARMOUR_REJECT_BELOW, DURABILITY) = (0, 3, 6, 7, 8, 9, 10, 13, 16, 19, 20, 23, 26, 27, 28, 29)
SIDE_VALUES = 32
# Rows of the further blocks' draws: the counters' item words and block, the key words, the lane,
# then the four words drawn.
K_LO, K_HI, K_BLOCK, K_KEY0, K_KEY1, K_LANE, K_WORDS = 0, 1, 2, 3, 4, 5, 6
DRAW_ROWS = K_WORDS + 4

#: The small helpers, compiled once per argument types (an overload prefers them unliteral): as
#: @njit functions Numba compiled one copy per literal argument (16 of _select, 3 of _die), each a
#: whole pipeline run, which cost seconds of the step's first call. LLVM still inlines them.
_helper = register_jitable(error_model="numpy")


_SHIFT = np.uint64(32)
_ALL_LANES = np.uint64((1 << LANES) - 1)
_TWO32 = np.uint64(1 << 32)
# int32 constants. Numba types integer literals, and arithmetic on int32 values, as int64, and
# LLVM then works the loops over lanes in int64 (8 lanes to a vector, not 16); a value cut back
# to int32 at once (np.int32) lets it narrow each operation to int32. The lanes' values stay within
# a few times 2^20 (LANE_RANGE; a bad lane's are zeros), so each fits an int32.
_ZERO, _ONE, _TWO, _THREE, _FOUR, _FIVE, _SIX, _EIGHT, _TWELVE, _TWENTY = (
    np.int32(0), np.int32(1), np.int32(2), np.int32(3), np.int32(4), np.int32(5), np.int32(6), np.int32(8),
    np.int32(12), np.int32(20))
_D20, _D20_REJECT_BELOW = np.int32(D20), np.int32(D20_REJECT_BELOW)
_MAX_STEPS_PENALTY = np.int32(MAX_STEPS_PENALTY)
_A_ATTACK, _A_AIM, _A_TWO_WEAPON_ATTACK, _A_WAIT = (np.int32(A_ATTACK), np.int32(A_AIM), np.int32(A_TWO_WEAPON_ATTACK),
                                                    np.int32(A_WAIT))
_MINUS_FIVE = np.int32(-5)
_LEGAL_WAIT = np.int32(1 << A_WAIT)


@_helper
def _bit(condition):
    """A condition as an int32 0 or 1 (``1 if c else 0`` is an int64)."""
    return np.int32(condition)


@_helper
def _on(condition):
    """A condition as an int32 mask: all ones or zero."""
    return np.int32(-np.int32(condition))


@_helper
def _select(mask, yes, no):
    """``yes`` where ``mask`` is all ones, ``no`` where it is zero, in int32: masks, not a branch."""
    return np.int32((yes & mask) | (no & ~mask))


@_helper
def _tier(tier, by1, by2, by3):
    """A tier's value (tier 1..3) by the masks "tier > 1" and "tier > 2"."""
    past1 = _on(tier > _ONE)
    past2 = _on(tier > _TWO)
    return np.int32(by1 ^ ((by1 ^ by2) & past1) ^ ((by2 ^ by3) & past2))


@_helper
def _dazed(stun, wound, mortal, durability0, durability1):
    """The reference's dazed on a side's tracks."""
    return np.int32(mortal + _bit(np.int32(stun + stun) >= durability0) + _bit(np.int32(wound + wound) >= durability1))


@_helper
def _out(stun, wound, mortal, durability0, durability1, durability2):
    """The reference's is_out on a side's tracks."""
    return np.int32(_bit(stun >= durability0) | _bit(wound >= durability1) | _bit(mortal >= durability2))


@_helper
def _lane_out(lanes, side, i, durability0, durability1, durability2):
    """_out of lane ``i``'s tracks of the side whose rows start at ``side`` (SIDE0 or SIDE1)."""
    return _out(lanes[side + STUN + i], lanes[side + WOUND + i], lanes[side + MORTAL + i], durability0, durability1,
                durability2)


@_helper
def _durabilities(values):
    """Both sides' durabilities (stun, wound, mortal), read once before a loop over the lanes."""
    return (values[0, DURABILITY], values[0, DURABILITY + 1], values[0, DURABILITY + 2], values[1, DURABILITY],
            values[1, DURABILITY + 1], values[1, DURABILITY + 2])


@_helper
def _first_phase(check, check0, check1, check2):
    """The first phase of an action check (the reference's _new_round)."""
    return _select(_on(check <= check2), _ZERO, _select(_on(check <= check1), _ONE,
                                                        _select(_on(check <= check0), _TWO, _THREE)))


@_helper
def _die(lanes, i, on, sides, reject_below):
    """A die of ``sides`` from lane i's next word where ``on`` (a mask): the value (1..sides), the
    lane's position moved past the word, and the lane marked SLOW if the word is rejected or not
    drawn. The word is a select over the positions (an indexed load per lane kept the loops scalar).
    In int32 but for the product's high half (a 32 x 32-bit product)."""
    pos = lanes[POS + i]
    word = lanes[WORD + i]
    for k in range(1, LANE_WORDS):
        word = _select(_on(pos == k), lanes[WORD + k * LANES + i], word)
    low = np.uint32(np.uint32(word) * np.uint32(sides))  # Lemire's rejection: the product's low half
    lanes[SLOW + i] = np.int32(lanes[SLOW + i] | (on & (_bit(low < np.uint32(reject_below))
                                                         | _bit(pos >= lanes[DRAWN + i]))))
    lanes[POS + i] = np.int32(pos + (on & _ONE))
    product = np.uint64(np.uint32(word)) * np.uint64(np.uint32(sides))
    return np.int32(np.int32(product >> _SHIFT) + _ONE)


@_helper
def _f32(value):
    """A small integer (below 2^24 in magnitude) as a float32, by way of int32: AVX2 converts int32
    lanes, not int64 ones (those were scalarised)."""
    return np.float32(np.int32(value))


@_helper
def _ratio(x, d):
    """x / d as the reference writes it into a float32 observation (a float64 quotient, then
    rounded), for integers below 2^24: that is the float32 quotient (a quotient rounded to 53 bits,
    then to 24, is the one rounded to 24: 53 >= 2 x 24 + 2, Figueroa 1995), at twice the width."""
    return _f32(x) / d


@_helper
def _quad(k, i):
    """Where observation k of lane i lies in the floats (unsigned: no negative-index wraparound)."""
    return np.uint64(F_OBS + (k // QUAD) * QUAD * LANES + k % QUAD) + _QUAD * np.uint64(i)


@_helper
def _in_range(value):
    return -LANE_RANGE <= value <= LANE_RANGE


@_helper
def _reject_below(sides):
    """Lemire's threshold of a die: (2^32 - sides) mod sides."""
    return np.int64((_TWO32 - np.uint64(sides)) % np.uint64(sides))


@njit
def _lane_side(values, iparams, side, policy):
    """``side``'s parameters into ``values[side]`` (against the other side's armour); False when one
    is outside what the lanes take (tss_lanes.h's tss_lane_side)."""
    p = side * SIDE_PARAMS
    q = (1 - side) * SIDE_PARAMS
    if policy != POLICY_EXTERNAL and policy != POLICY_SCRIPTED:
        return False  # a random policy draws its choice: the reference's steps
    for k in range(3):
        if (not _in_range(iparams[p + P_SKILL + k]) or not _in_range(iparams[p + P_ACTION_CHECK + k])
                or iparams[p + P_DURABILITY + k] < 1 or iparams[p + P_DURABILITY + k] > LANE_RANGE):
            return False
        values[side, SKILL + k] = iparams[p + P_SKILL + k]
        values[side, CHECK + k] = iparams[p + P_ACTION_CHECK + k]
        values[side, DURABILITY + k] = iparams[p + P_DURABILITY + k]
    if (iparams[p + P_ACTIONS_PER_ROUND] < 1 or iparams[p + P_ACTIONS_PER_ROUND] > LANE_RANGE
            or not _in_range(iparams[p + P_STEPS]) or not _in_range(iparams[p + P_WEAPON_GRADE])
            or not _in_range(iparams[q + P_ARMOUR_GRADE]) or not _in_range(iparams[q + P_ARMOUR_DIE])):
        return False
    values[side, PER_ROUND] = iparams[p + P_ACTIONS_PER_ROUND]
    values[side, STEPS] = iparams[p + P_STEPS]
    values[side, TWO_WEAPONS] = 1 if iparams[p + P_TWO_WEAPONS] != 0 else 0
    values[side, MAIN_STEPS] = 0 if iparams[p + P_AMBIDEXTERITY] else 2
    foe_armour = iparams[q + P_ARMOUR_DIE]
    shift = iparams[p + P_WEAPON_GRADE] - iparams[q + P_ARMOUR_GRADE]
    if iparams[G_ONE_STEP_SHIFT]:
        shift = min(max(shift, -1), 1)
    most = 0
    for k in range(3):
        track = p + P_TRACK + 3 * k
        kind = iparams[p + P_TYPE + k]
        if iparams[track] < 0 or iparams[track] > MAX_DICE or not _in_range(iparams[track + 2]) or kind < 0 or kind > 3:
            return False
        if iparams[track] > 0 and (iparams[track + 1] < 1 or iparams[track + 1] > LANE_RANGE):
            return False
        sides = iparams[track + 1] if iparams[track] > 0 else 1
        values[side, COUNT + k] = iparams[track]
        values[side, MODIFIER + k] = iparams[track + 2]
        values[side, SIDES + k] = sides
        values[side, REJECT_BELOW + k] = _reject_below(sides)
        if foe_armour > 0:
            kind = min(max(kind + shift, 0), 3)
        values[side, KIND + k] = kind
        most = max(most, iparams[track])
    values[side, MOST_DICE] = most
    armour = iparams[p + P_ARMOUR_DIE]
    if not _in_range(armour):
        return False
    values[side, ARMOURED] = 1 if armour > 0 else 0
    values[side, ARMOUR_SIDES] = armour if armour > 0 else 1
    values[side, ARMOUR_REJECT_BELOW] = _reject_below(armour if armour > 0 else 1)
    return True


@_helper
def _draw(lanes, draws, n, block):
    """The blocks listed in ``draws`` (n of them) into their lanes' words ``4 x block`` on; the
    counters and keys are in rows, so LLVM vectorises the Philox loop over them."""
    # Whole vectors of blocks (n rounded up to 16; those past n are drawn from whatever the rows
    # hold and never read): a scalar remainder of Philox cost more than the vectors.
    for k in range((n + 15) & ~15):
        w0, w1, w2, w3 = philox4x32(draws[K_LO, k], draws[K_HI, k], draws[K_BLOCK, k], DOMAIN_ITEM, draws[K_KEY0, k],
                                    draws[K_KEY1, k])
        draws[K_WORDS, k] = w0
        draws[K_WORDS + 1, k] = w1
        draws[K_WORDS + 2, k] = w2
        draws[K_WORDS + 3, k] = w3
    row = np.uint64(WORD + 4 * block * LANES)
    for k in range(n):
        i = draws[K_LANE, k]  # unsigned: no negative-index wraparound on the stores
        for j in range(4):
            lanes[row + np.uint64(j * LANES) + i] = np.int32(np.uint32(draws[K_WORDS + j, k]))
        lanes[np.uint64(DRAWN) + i] = 4 * block + 4


@njit
def _ensure(lanes, draws, seeds, state, first, count, keyed):
    """The further blocks of the lanes that may read past the words drawn for them (NEED), one
    block at a time, those lanes' only: most steps read no more than the first block. Without the
    seeds such lanes go to the body."""
    short_of_words = 0
    for i in range(LANES):
        short_of_words |= _bit(lanes[NEED + i] > lanes[DRAWN + i])
    if short_of_words == 0 or not keyed:
        return
    in_count = _ALL_LANES >> np.uint64(LANES - count)
    for block in range(1, LANE_WORDS // 4):
        # The lanes short of the block as bits (an OR over the lanes, vectorised), then theirs
        # only, lowest first: a branch on each lane, often mispredicted, cost ~7 ns an env step, and
        # listing every lane's index without one (a store and an add a lane) ~2 ns.
        edge = np.int32(4 * block)
        wanting = np.uint64(0)
        for i in range(LANES):
            wanting |= np.uint64(_bit(lanes[NEED + i] > edge) & _bit(lanes[DRAWN + i] <= edge)) << np.uint64(i)
        wanting &= in_count
        n = 0
        while wanting:
            i = np.uint64(lowest_set_bit(wanting))
            wanting &= wanting - np.uint64(1)
            e = np.uint64(first) + i
            index = np.uint64(state[e, S_EPISODE])
            seed = seeds[e]
            draws[K_LANE, n] = i
            draws[K_LO, n] = index & MASK32
            draws[K_HI, n] = index >> SHIFT32
            draws[K_BLOCK, n] = np.uint64((((state[e, S_T] + 1) * WORDS_PER_STEP) >> 2) + block) & MASK32
            draws[K_KEY0, n] = seed & MASK32
            draws[K_KEY1, n] = seed >> SHIFT32
            n += 1
        if n:
            _draw(lanes, draws, n, block)


@njit
def _setup(lanes, values):
    """Every attacking lane's attack at EXTRA more steps: the situation die's size from the attack's
    steps (the Difficulty Scale), and the words it may read (NEED). Returns the most situation dice."""
    steps0 = values[0, STEPS]
    steps1 = values[1, STEPS]
    most0 = values[0, MOST_DICE]
    most1 = values[1, MOST_DICE]
    durability00 = values[0, DURABILITY]
    durability01 = values[0, DURABILITY + 1]
    durability10 = values[1, DURABILITY]
    durability11 = values[1, DURABILITY + 1]
    most = _ZERO
    for i in range(LANES):
        on = lanes[ATTACKING + i]
        am = _on(lanes[ACTOR + i])
        dazed0 = _dazed(lanes[SIDE0 + STUN + i], lanes[SIDE0 + WOUND + i], lanes[SIDE0 + MORTAL + i], durability00,
                        durability01)
        dazed1 = _dazed(lanes[SIDE1 + STUN + i], lanes[SIDE1 + WOUND + i], lanes[SIDE1 + MORTAL + i], durability10,
                        durability11)
        steps = np.int32(_select(am, steps1, steps0) + _select(am, dazed1, dazed0) + lanes[EXTRA + i])
        negative = _on(steps < _ZERO)
        size = _select(negative, _select(_on(steps < _MINUS_FIVE), _FIVE, np.int32(-steps)), steps)  # beyond 5: d20s
        sides = _select(_on(size == _ONE), _FOUR, _select(_on(size == _TWO), _SIX, _select(
            _on(size == _THREE), _EIGHT, _select(_on(size == _FOUR), _TWELVE, _TWENTY))))
        reject_below = _select(_on(size == _TWO) | _on(size == _FOUR), _FOUR,
                               _select(_on(size >= _FIVE), _D20_REJECT_BELOW, _ZERO))
        penalty = _select(_on(steps < _MAX_STEPS_PENALTY), steps, _MAX_STEPS_PENALTY)
        dice = np.int32(on & _select(_on(steps == _ZERO), _ZERO,
                                     _select(_on(steps > _FIVE), np.int32(penalty - _FOUR), _ONE)))
        lanes[SIT_N + i] = dice
        lanes[SIT_SIDES + i] = sides
        lanes[SIT_REJECT_BELOW + i] = reject_below
        lanes[SIT_NEGATIVE + i] = negative
        bound = np.int32(lanes[POS + i] + _ONE + dice + _select(am, most1, most0) + _ONE)
        lanes[NEED + i] = np.int32(on & _on(lanes[SLOW + i] == _ZERO) & bound)
        most = max(most, dice)
    return most


@njit
def _turn(lanes, values, turn):
    """A turn's start in every lane (the reference's _act up to its attacks): the side whose turn it
    is spends an action on a legal attack, two-weapon attack or aim; an attack's lanes are marked
    ATTACKING. Returns whether any lane attacks."""
    durability00, durability01, durability02, durability10, durability11, durability12 = _durabilities(values)
    two_weapons0 = values[0, TWO_WEAPONS]
    two_weapons1 = values[1, TWO_WEAPONS]
    main_steps0 = values[0, MAIN_STEPS]
    main_steps1 = values[1, MAIN_STEPS]
    turn32 = np.int32(turn)
    any_attack = _ZERO
    for i in range(LANES):
        live = _on((lanes[RESET + i] | lanes[SLOW + i]) == _ZERO)
        who = np.int32(lanes[FIRST + i] ^ turn32)
        wm = _on(who)
        left0 = lanes[SIDE0 + LEFT + i]
        left1 = lanes[SIDE1 + LEFT + i]
        aimed0 = lanes[SIDE0 + AIMED + i]
        aimed1 = lanes[SIDE1 + AIMED + i]
        c = _select(wm, lanes[SIDE1 + CHOICE + i], lanes[SIDE0 + CHOICE + i])
        out0 = _lane_out(lanes, SIDE0, i, durability00, durability01, durability02)
        out1 = _lane_out(lanes, SIDE1, i, durability10, durability11, durability12)
        first_phase = _select(wm, lanes[SIDE1 + FIRST_PHASE + i], lanes[SIDE0 + FIRST_PHASE + i])
        can = np.int32(_bit(lanes[PHASE + i] >= first_phase) & _bit(_select(wm, left1, left0) > _ZERO)
                       & (_select(wm, out1, out0) ^ _ONE))
        two = _bit(c == _A_TWO_WEAPON_ATTACK)
        attacks = np.int32(live & -(can & (_bit(c == _A_ATTACK) | (two & _select(wm, two_weapons1, two_weapons0)))))
        aims = np.int32(live & -(can & _bit(c == _A_AIM)))
        acts = np.int32(attacks | aims)
        aim = _select(wm, aimed1, aimed0)
        main_steps = _select(wm, main_steps1, main_steps0)
        lanes[SIDE0 + LEFT + i] = np.int32(left0 - (acts & ~wm & _ONE))
        lanes[SIDE1 + LEFT + i] = np.int32(left1 - (acts & wm & _ONE))
        lanes[SIDE0 + AIMED + i] = _select(np.int32(aims & ~wm), _ONE, _select(np.int32(attacks & ~wm), _ZERO, aimed0))
        lanes[SIDE1 + AIMED + i] = _select(np.int32(aims & wm), _ONE, _select(np.int32(attacks & wm), _ZERO, aimed1))
        lanes[ACTOR + i] = who
        lanes[ATTACKING + i] = attacks
        lanes[EXTRA + i] = np.int32(_select(np.int32(-two), main_steps, _ZERO) - aim)
        lanes[EXTRA2 + i] = np.int32(main_steps + _TWO)
        lanes[SECOND + i] = np.int32(attacks & -two)
        any_attack = np.int32(any_attack | attacks)
    return any_attack != 0


@njit
def _attack(lanes, values, draws, seeds, state, first, count, keyed, most_situation):
    """One attack in every lane marked ATTACKING and set up (the reference's _attack): the control
    die, the situation die(s), the tier, the damage dice, the armour die, and the damage landing on
    the defender."""
    _ensure(lanes, draws, seeds, state, first, count, keyed)
    for i in range(LANES):
        lanes[CONTROL + i] = _die(lanes, i, lanes[ATTACKING + i], _D20, _D20_REJECT_BELOW)
        on = _on(lanes[SIT_N + i] > _ZERO)
        lanes[SIT_SUM + i] = np.int32(on & _die(lanes, i, on, lanes[SIT_SIDES + i], lanes[SIT_REJECT_BELOW + i]))
    for j in range(1, most_situation):
        j32 = np.int32(j)
        for i in range(LANES):
            on = _on(j32 < lanes[SIT_N + i])
            lanes[SIT_SUM + i] += np.int32(on & _die(lanes, i, on, lanes[SIT_SIDES + i], lanes[SIT_REJECT_BELOW + i]))
    # The tier; a hit's damage dice (the first here).
    skill00, skill01, skill02 = values[0, SKILL], values[0, SKILL + 1], values[0, SKILL + 2]
    skill10, skill11, skill12 = values[1, SKILL], values[1, SKILL + 1], values[1, SKILL + 2]
    count00, count01, count02 = values[0, COUNT], values[0, COUNT + 1], values[0, COUNT + 2]
    count10, count11, count12 = values[1, COUNT], values[1, COUNT + 1], values[1, COUNT + 2]
    sides00, sides01, sides02 = values[0, SIDES], values[0, SIDES + 1], values[0, SIDES + 2]
    sides10, sides11, sides12 = values[1, SIDES], values[1, SIDES + 1], values[1, SIDES + 2]
    reject00, reject01, reject02 = values[0, REJECT_BELOW], values[0, REJECT_BELOW + 1], values[0, REJECT_BELOW + 2]
    reject10, reject11, reject12 = values[1, REJECT_BELOW], values[1, REJECT_BELOW + 1], values[1, REJECT_BELOW + 2]
    modifier00, modifier01, modifier02 = values[0, MODIFIER], values[0, MODIFIER + 1], values[0, MODIFIER + 2]
    modifier10, modifier11, modifier12 = values[1, MODIFIER], values[1, MODIFIER + 1], values[1, MODIFIER + 2]
    most_dice = _ZERO
    for i in range(LANES):
        am = _on(lanes[ACTOR + i])
        control = lanes[CONTROL + i]
        sit_sum = lanes[SIT_SUM + i]
        total = np.int32(control + _select(lanes[SIT_NEGATIVE + i], np.int32(-sit_sum), sit_sum))
        ordinary = _select(am, skill10, skill00)
        good = _select(am, skill11, skill01)
        amazing = _select(am, skill12, skill02)
        fail = np.int32(_bit(control == _D20) | _bit(total > ordinary))
        tier = _select(_on(total <= amazing), _THREE, _select(_on(total <= good), _TWO, _ONE))
        hit = np.int32(lanes[ATTACKING + i] & -(fail ^ _ONE))
        dice = np.int32(hit & _select(am, _tier(tier, count10, count11, count12), _tier(tier, count00, count01, count02)))
        sides = _select(am, _tier(tier, sides10, sides11, sides12), _tier(tier, sides00, sides01, sides02))
        reject = _select(am, _tier(tier, reject10, reject11, reject12), _tier(tier, reject00, reject01, reject02))
        on = _on(dice > _ZERO)
        lanes[TIER + i] = tier
        lanes[HIT + i] = hit
        lanes[DICE_LEFT + i] = dice
        lanes[DAMAGE + i] = np.int32(_select(am, _tier(tier, modifier10, modifier11, modifier12),
                                             _tier(tier, modifier00, modifier01, modifier02))
                                     + (on & _die(lanes, i, on, sides, reject)))
        most_dice = max(most_dice, dice)
    for j in range(1, most_dice):
        j32 = np.int32(j)
        for i in range(LANES):
            on = _on(j32 < lanes[DICE_LEFT + i])
            am = _on(lanes[ACTOR + i])
            tier = lanes[TIER + i]
            sides = _select(am, _tier(tier, sides10, sides11, sides12), _tier(tier, sides00, sides01, sides02))
            reject = _select(am, _tier(tier, reject10, reject11, reject12), _tier(tier, reject00, reject01, reject02))
            lanes[DAMAGE + i] += np.int32(on & _die(lanes, i, on, sides, reject))
    # The damage, never below 0, its type shifted (to nothing: no armour die), soaked, landing.
    kind00, kind01, kind02 = values[0, KIND], values[0, KIND + 1], values[0, KIND + 2]
    kind10, kind11, kind12 = values[1, KIND], values[1, KIND + 1], values[1, KIND + 2]
    armoured0, armoured1 = values[0, ARMOURED], values[1, ARMOURED]
    armour_sides0, armour_sides1 = values[0, ARMOUR_SIDES], values[1, ARMOUR_SIDES]
    armour_reject0, armour_reject1 = values[0, ARMOUR_REJECT_BELOW], values[1, ARMOUR_REJECT_BELOW]
    for i in range(LANES):
        am = _on(lanes[ACTOR + i])
        tier = lanes[TIER + i]
        damage = lanes[DAMAGE + i]
        damage = np.int32(damage & _on(damage > _ZERO))
        kind = _select(am, _tier(tier, kind10, kind11, kind12), _tier(tier, kind00, kind01, kind02))
        lands = np.int32(lanes[HIT + i] & _on(kind != _ZERO))
        armoured = np.int32(lands & -_select(am, armoured0, armoured1))  # the defender's armour
        armour_sides = _select(am, armour_sides0, armour_sides1)
        armour_reject = _select(am, armour_reject0, armour_reject1)
        soaked = np.int32(damage - _die(lanes, i, armoured, armour_sides, armour_reject))
        primary = _select(armoured, np.int32(soaked & _on(soaked > _ZERO)), damage)
        half = np.int32(damage >> _ONE)
        k3 = _on(kind == _THREE)
        k2 = _on(kind == _TWO)
        add_mortal = np.int32(lands & k3 & primary)
        add_wound = np.int32(lands & _select(k3, half, np.int32(k2 & primary)))
        add_stun = np.int32(lands & _select(np.int32(k3 | k2), half, primary))
        to0 = am  # side 1 attacking hits side 0
        to1 = np.int32(~am)
        lanes[SIDE0 + STUN + i] += np.int32(to0 & add_stun)
        lanes[SIDE0 + WOUND + i] += np.int32(to0 & add_wound)
        lanes[SIDE0 + MORTAL + i] += np.int32(to0 & add_mortal)
        lanes[SIDE1 + STUN + i] += np.int32(to1 & add_stun)
        lanes[SIDE1 + WOUND + i] += np.int32(to1 & add_wound)
        lanes[SIDE1 + MORTAL + i] += np.int32(to1 & add_mortal)
        dealt = np.int32(add_mortal + add_wound + add_stun)
        lanes[SIDE0 + DEALT + i] += np.int32(to1 & dealt)
        lanes[SIDE1 + DEALT + i] += np.int32(to0 & dealt)


@njit
def _take_turn(lanes, values, draws, seeds, state, first, count, keyed, turn):
    """A turn: its start, its attack, and a two-weapon attack's second attack if the target still stands."""
    if not _turn(lanes, values, turn):
        return
    _attack(lanes, values, draws, seeds, state, first, count, keyed, _setup(lanes, values))
    durability00, durability01, durability02, durability10, durability11, durability12 = _durabilities(values)
    again_any = _ZERO
    for i in range(LANES):
        am = _on(lanes[ACTOR + i])
        out0 = _lane_out(lanes, SIDE0, i, durability00, durability01, durability02)
        out1 = _lane_out(lanes, SIDE1, i, durability10, durability11, durability12)
        again = np.int32(lanes[SECOND + i] & -(_select(am, out0, out1) ^ _ONE))
        lanes[ATTACKING + i] = again
        lanes[EXTRA + i] = lanes[EXTRA2 + i]
        again_any = np.int32(again_any | again)
    if again_any:
        _attack(lanes, values, draws, seeds, state, first, count, keyed, _setup(lanes, values))


@njit
def _new_rounds(lanes, values, draws, seeds, state, first, count, keyed, tie_first):
    """The next phase, or a new round (its action checks and tie die) where the phase was the last;
    a resetting lane only rolls its first round's."""
    durability00, durability01, durability02, durability10, durability11, durability12 = _durabilities(values)
    any_round = _ZERO
    for i in range(LANES):
        out = np.int32(_lane_out(lanes, SIDE0, i, durability00, durability01, durability02)
                       | _lane_out(lanes, SIDE1, i, durability10, durability11, durability12))
        reset = _on(lanes[RESET + i])
        goes_on = np.int32(~reset & -(out ^ _ONE))
        phase = np.int32(lanes[PHASE + i] + (goes_on & _ONE))
        new_round = np.int32(reset | (goes_on & _on(phase == _FOUR)))
        lanes[PHASE + i] = np.int32(phase & ~new_round)
        lanes[ROUND + i] = new_round
        lanes[NEED + i] = np.int32(new_round & _on(lanes[SLOW + i] == _ZERO) & np.int32(lanes[POS + i] + _THREE))
        any_round = np.int32(any_round | new_round)
    if not any_round:
        return
    _ensure(lanes, draws, seeds, state, first, count, keyed)
    check00, check01, check02 = values[0, CHECK], values[0, CHECK + 1], values[0, CHECK + 2]
    check10, check11, check12 = values[1, CHECK], values[1, CHECK + 1], values[1, CHECK + 2]
    per_round0 = values[0, PER_ROUND]
    per_round1 = values[1, PER_ROUND]
    tie_decides = _on(tie_first < 0)
    tie_first32 = np.int32(tie_first)
    for i in range(LANES):
        new_round = lanes[ROUND + i]
        check0 = np.int32(_die(lanes, i, new_round, _D20, _D20_REJECT_BELOW) + _dazed(
            lanes[SIDE0 + STUN + i], lanes[SIDE0 + WOUND + i], lanes[SIDE0 + MORTAL + i], durability00, durability01))
        check1 = np.int32(_die(lanes, i, new_round, _D20, _D20_REJECT_BELOW) + _dazed(
            lanes[SIDE1 + STUN + i], lanes[SIDE1 + WOUND + i], lanes[SIDE1 + MORTAL + i], durability10, durability11))
        tie = np.int32(_die(lanes, i, new_round, _TWO, _ZERO) - _ONE)
        lanes[SIDE0 + FIRST_PHASE + i] = _select(new_round, _first_phase(check0, check00, check01, check02),
                                                lanes[SIDE0 + FIRST_PHASE + i])
        lanes[SIDE1 + FIRST_PHASE + i] = _select(new_round, _first_phase(check1, check10, check11, check12),
                                                lanes[SIDE1 + FIRST_PHASE + i])
        lanes[SIDE0 + LEFT + i] = _select(new_round, per_round0, lanes[SIDE0 + LEFT + i])
        lanes[SIDE1 + LEFT + i] = _select(new_round, per_round1, lanes[SIDE1 + LEFT + i])
        lanes[FIRST + i] = _select(new_round, _select(tie_decides, tie, tie_first32), lanes[FIRST + i])


@njit
def _observe(lanes, floats, values, side, max_steps):
    """One side's observation (the reference's _write_obs) and legal actions of every lane, in rows.
    The side's rows are picked by a mask (rows at constant offsets: LLVM vectorises the loop)."""
    sm = _on(side)  # a mask: side 1's rows
    side32 = np.int32(side)
    own0, own1, own2 = values[side, DURABILITY], values[side, DURABILITY + 1], values[side, DURABILITY + 2]
    foe0, foe1, foe2 = values[1 - side, DURABILITY], values[1 - side, DURABILITY + 1], values[1 - side, DURABILITY + 2]
    two_weapons = values[side, TWO_WEAPONS]
    # The divisors as float32 (all below 2^24: the lanes' range).
    own0f, own1f, own2f, foe0f, foe1f, foe2f = _f32(own0), _f32(own1), _f32(own2), _f32(foe0), _f32(foe1), _f32(foe2)
    per_round = _f32(values[side, PER_ROUND])
    steps = _f32(max_steps)
    five = np.float32(5)
    three = np.float32(3)
    for i in range(LANES):
        phase = lanes[PHASE + i]
        stun0 = lanes[SIDE0 + STUN + i]
        wound0 = lanes[SIDE0 + WOUND + i]
        mortal0 = lanes[SIDE0 + MORTAL + i]
        first_phase0 = lanes[SIDE0 + FIRST_PHASE + i]
        left0 = lanes[SIDE0 + LEFT + i]
        stun1 = lanes[SIDE1 + STUN + i]
        wound1 = lanes[SIDE1 + WOUND + i]
        mortal1 = lanes[SIDE1 + MORTAL + i]
        first_phase1 = lanes[SIDE1 + FIRST_PHASE + i]
        left1 = lanes[SIDE1 + LEFT + i]
        stun = _select(sm, stun1, stun0)
        wound = _select(sm, wound1, wound0)
        mortal = _select(sm, mortal1, mortal0)
        first_phase = _select(sm, first_phase1, first_phase0)
        left = _select(sm, left1, left0)
        foe_stun = _select(sm, stun0, stun1)
        foe_wound = _select(sm, wound0, wound1)
        foe_mortal = _select(sm, mortal0, mortal1)
        foe_first_phase = _select(sm, first_phase0, first_phase1)
        foe_left = _select(sm, left0, left1)
        aimed = _select(sm, lanes[SIDE1 + AIMED + i], lanes[SIDE0 + AIMED + i])
        can = np.int32(_bit(phase >= first_phase) & _bit(left > _ZERO) & (_out(stun, wound, mortal, own0, own1, own2)
                                                                          ^ _ONE))
        foe_can = np.int32(_bit(phase >= foe_first_phase) & _bit(foe_left > _ZERO)
                           & (_out(foe_stun, foe_wound, foe_mortal, foe0, foe1, foe2) ^ _ONE))
        # min(x / d, 1.0) as min(x, d) / d: d / d is 1 exactly.
        floats[_quad(0, i)] = _ratio(min(stun, own0), own0f)
        floats[_quad(1, i)] = _ratio(min(wound, own1), own1f)
        floats[_quad(2, i)] = _ratio(min(mortal, own2), own2f)
        floats[_quad(3, i)] = _ratio(min(foe_stun, foe0), foe0f)
        floats[_quad(4, i)] = _ratio(min(foe_wound, foe1), foe1f)
        floats[_quad(5, i)] = _ratio(min(foe_mortal, foe2), foe2f)
        floats[_quad(6, i)] = _f32(_bit(phase == _ZERO))
        floats[_quad(7, i)] = _f32(_bit(phase == _ONE))
        floats[_quad(8, i)] = _f32(_bit(phase == _TWO))
        floats[_quad(9, i)] = _f32(_bit(phase == _THREE))
        floats[_quad(10, i)] = _f32(can)
        floats[_quad(11, i)] = _ratio(left, per_round)
        floats[_quad(12, i)] = _f32(foe_can)
        floats[_quad(13, i)] = _f32(_bit(aimed != _ZERO))
        floats[_quad(14, i)] = _ratio(min(_dazed(stun, wound, mortal, own0, own1), _FIVE), five)
        floats[_quad(15, i)] = _ratio(min(_dazed(foe_stun, foe_wound, foe_mortal, foe0, foe1), _FIVE), five)
        floats[_quad(16, i)] = _ratio(first_phase, three)
        floats[_quad(17, i)] = _ratio(foe_first_phase, three)
        floats[_quad(18, i)] = _f32(_bit(lanes[FIRST + i] == side32))
        floats[_quad(19, i)] = _ratio(lanes[T + i], steps)
        # The legal actions: attack, aim, two-weapon attack, wait.
        floats[F_LEGAL + i] = _f32(can | can << _A_AIM | (can & two_weapons) << _A_TWO_WEAPON_ATTACK | _LEGAL_WAIT)


@njit
def _write_obs(lanes, floats, obs, mask, first, count, side):
    """One side's observation and legal actions of the lanes stepped (not SLOW) into the buffers."""
    for i in range(count):
        if lanes[lane_at(SLOW, i)]:
            continue
        e = np.uint64(first + i)
        for q in range(0, OBS_SIZE, QUAD):  # the loads ahead of the stores: LLVM moves each quad at once
            v0, v1, v2, v3 = floats[_quad(q, i)], floats[_quad(q + 1, i)], floats[_quad(q + 2, i)], floats[_quad(q + 3, i)]
            obs[e, side, q] = v0
            obs[e, side, q + 1] = v1
            obs[e, side, q + 2] = v2
            obs[e, side, q + 3] = v3
        legal = np.int64(floats[lane_at(F_LEGAL, i)])
        for a in range(ACTIONS):
            mask[e, side, a] = (legal >> a) & 1


@njit
def _admit(lanes, keyed, max_steps, per_round0, per_round1):
    """Each field's own bound, on the int32 rows gathered (a lane with a field outside them is SLOW
    already); a lane that resets or goes to the body gets zeros. Its own loop over the lanes, so
    LLVM vectorises it (in the gather's loop it was scalar: 4 ns an env step)."""
    keyed_mask = _on(keyed)
    for i in range(LANES):
        reset = lanes[RESET + i]
        phases = np.int32(lanes[PHASE + i] | lanes[SIDE0 + FIRST_PHASE + i] | lanes[SIDE1 + FIRST_PHASE + i])
        flags = np.int32(lanes[FIRST + i] | lanes[SIDE0 + AIMED + i] | lanes[SIDE1 + AIMED + i])
        bad = np.int32(lanes[SLOW + i] | _bit(lanes[T + i] >= max_steps) | _bit(phases > _THREE) | _bit(flags > _ONE)
                       | _bit(lanes[SIDE0 + LEFT + i] > per_round0) | _bit(lanes[SIDE1 + LEFT + i] > per_round1))
        keep = np.int32(-((bad | reset) ^ _ONE))  # zeros where the lane resets or goes to the body
        lanes[SLOW + i] = _select(keyed_mask, np.int32(bad & (reset ^ _ONE)), np.int32(bad | reset))
        lanes[T + i] &= keep
        lanes[PHASE + i] &= keep
        lanes[FIRST + i] &= keep
        for r in (SIDE0, SIDE1):
            lanes[r + STUN + i] &= keep
            lanes[r + WOUND + i] &= keep
            lanes[r + MORTAL + i] &= keep
            lanes[r + FIRST_PHASE + i] &= keep
            lanes[r + LEFT + i] &= keep
            lanes[r + AIMED + i] &= keep


@njit(inline="always")
def tss_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first, ahead,
              seeds):
    """Steps some of envs first .. first + AHEAD_ENVS - 1 exactly as the shared body would; returns
    them as bits (``ahead``: the stream array holding each env's first block of the step). With an
    empty ``seeds`` the lanes draw no block of their own (a step needing one, or a reset, goes to the body)."""
    if not lanes_may_take(state, first, policies):
        return 0
    return _step_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first,
                       ahead, seeds)


@njit
def _step_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first, ahead,
                seeds):
    count = min(state.shape[0] - first, LANES)
    max_steps = iparams[G_MAX_STEPS]
    if count < LANES_MIN or max_steps < 1 or max_steps > LANE_RANGE:
        return 0
    values = on_stack(2, SIDE_VALUES, np.int32)  # each within +-2^20 (or a threshold below it)
    # Each helper is called from one site with a variable side, turn or block: Numba compiles a
    # function once per literal argument it is called with, and those copies doubled the compile time.
    for side in range(2):
        if not _lane_side(values, iparams, side, policies[side]):
            return 0
    max_steps32 = np.int32(max_steps)
    keyed = seeds.shape[0] > 0
    n_sides = 2 if policies[1] == POLICY_EXTERNAL else 1
    score0 = iparams[P_ACTION_CHECK]
    score1 = iparams[SIDE_PARAMS + P_ACTION_CHECK]
    tie_first = 0 if score0 > score1 else (1 if score1 > score0 else -1)  # -1: the tie die decides
    per_round0 = values[0, PER_ROUND]
    per_round1 = values[1, PER_ROUND]
    # Not zeroed: each row is written before it is read, but the words past those drawn, which _die
    # selects from and a lane reading one is SLOW (only the separate functions read those rows, so LLVM
    # cannot take them for never stored to; zeroing them as the C lanes do measured 44.9 -> 45.7 ns).
    lanes = on_stack(1, LANE_CELLS, np.int32)[0]
    floats = on_stack(1, FLOAT_CELLS, np.float32)[0]
    draws = on_stack(DRAW_ROWS, LANES, np.uint64)

    # Gather; a state the reference's own steps never leave goes to the reference (a resetting
    # lane's state is replaced, whatever it was). Lanes past count idle through the step (nothing
    # of theirs is written).
    any_reset = 0
    for i in range(count):
        e = np.uint64(first + i)  # unsigned: Numba adds no negative-index wraparound to each access
        reset = _bit(state[e, S_NEEDS_RESET] != 0)
        lanes[lane_at(RESET, i)] = reset
        any_reset |= reset
        t, phase, first_mover = state[e, S_T], state[e, S_PHASE], state[e, S_FIRST_MOVER]
        # The low 32 bits of each field (what Numba's store keeps anyway; without the JIT numpy
        # would raise on a value beyond int32): one out of range is flagged SLOW below.
        lanes[lane_at(T, i)] = np.int32(t)
        lanes[lane_at(PHASE, i)] = np.int32(phase)
        lanes[lane_at(FIRST, i)] = np.int32(first_mover)
        fields = t | phase | first_mover
        for side in range(2):
            r = SIDE0 + side * SIDE_ROWS
            s = S_SIDE + side * SIDE_STATE
            stun, wound, mortal = state[e, s + S_STUN], state[e, s + S_WOUND], state[e, s + S_MORTAL]
            first_phase, left, aimed = state[e, s + S_FIRST_PHASE], state[e, s + S_ACTIONS_LEFT], state[e, s + S_AIMED]
            lanes[lane_at(r + STUN, i)] = np.int32(stun)
            lanes[lane_at(r + WOUND, i)] = np.int32(wound)
            lanes[lane_at(r + MORTAL, i)] = np.int32(mortal)
            lanes[lane_at(r + FIRST_PHASE, i)] = np.int32(first_phase)
            lanes[lane_at(r + LEFT, i)] = np.int32(left)
            lanes[lane_at(r + AIMED, i)] = np.int32(aimed)
            fields |= stun | wound | mortal | first_phase | left | aimed
            action = actions[e, side]
            lanes[lane_at(r + CHOICE, i)] = action if np.uint64(action) < np.uint64(ACTIONS) else NO_ACTION
        # Every field the lanes take lies in 0 .. LANE_RANGE - 1 (a negative one, as unsigned, does
        # not): one test here, each field's own bound in _admit.
        lanes[lane_at(SLOW, i)] = _bit(np.uint64(fields) >= np.uint64(LANE_RANGE))
    for j in range(4):
        for i in range(count):
            lanes[lane_at(WORD + j * LANES, i)] = np.int32(np.uint32(ahead[lane_at(_ROW[5 + j], i)]))
    _admit(lanes, keyed, max_steps32, per_round0, per_round1)
    for i in range(count, LANES):
        lanes[RESET + i] = 0
        lanes[SLOW + i] = 1
        for row in (T, PHASE, FIRST, WORD, WORD + LANES, WORD + 2 * LANES, WORD + 3 * LANES):
            lanes[row + i] = 0
        for row in (STUN, WOUND, MORTAL, FIRST_PHASE, LEFT, AIMED):
            lanes[SIDE0 + row + i] = 0
            lanes[SIDE1 + row + i] = 0
        lanes[SIDE0 + CHOICE + i] = NO_ACTION
        lanes[SIDE1 + CHOICE + i] = NO_ACTION
    if any_reset and keyed:  # the new episode's first block: its first round's action checks
        n = 0
        for i in range(count):  # the resetting lanes listed first, with no branch on each (as in _ensure)
            draws[K_LANE, n] = np.uint64(i)
            n += lanes[lane_at(RESET, i)]
        for k in range(n):
            e = np.uint64(first) + draws[K_LANE, k]
            index = np.uint64(state[e, S_EPISODE] + 1)
            seed = seeds[e]
            draws[K_LO, k] = index & MASK32
            draws[K_HI, k] = index >> SHIFT32
            draws[K_BLOCK, k] = 0
            draws[K_KEY0, k] = seed & MASK32
            draws[K_KEY1, k] = seed >> SHIFT32
        _draw(lanes, draws, n, np.int64(0))

    # The choices (on the state at the start of the phase).
    scripted0 = _on(policies[0] == POLICY_SCRIPTED)
    scripted1 = _on(policies[1] == POLICY_SCRIPTED)
    durability00, durability01, durability02, durability10, durability11, durability12 = _durabilities(values)
    for i in range(LANES):
        phase = lanes[PHASE + i]
        can0 = np.int32(_bit(phase >= lanes[SIDE0 + FIRST_PHASE + i]) & _bit(lanes[SIDE0 + LEFT + i] > _ZERO)
                        & (_lane_out(lanes, SIDE0, i, durability00, durability01, durability02) ^ _ONE))
        can1 = np.int32(_bit(phase >= lanes[SIDE1 + FIRST_PHASE + i]) & _bit(lanes[SIDE1 + LEFT + i] > _ZERO)
                        & (_lane_out(lanes, SIDE1, i, durability10, durability11, durability12) ^ _ONE))
        # The scripted policy: attack whenever able.
        lanes[SIDE0 + CHOICE + i] = _select(scripted0, _select(np.int32(-can0), _A_ATTACK, _A_WAIT),
                                           lanes[SIDE0 + CHOICE + i])
        lanes[SIDE1 + CHOICE + i] = _select(scripted1, _select(np.int32(-can1), _A_ATTACK, _A_WAIT),
                                           lanes[SIDE1 + CHOICE + i])
        lanes[POS + i] = _ZERO
        lanes[DRAWN + i] = _FOUR
        lanes[SIDE0 + DEALT + i] = _ZERO
        lanes[SIDE1 + DEALT + i] = _ZERO

    # The first mover's turn, the other's, then the next phase (or a new round).
    for turn in range(2):
        _take_turn(lanes, values, draws, seeds, state, first, count, keyed, turn)
    _new_rounds(lanes, values, draws, seeds, state, first, count, keyed, tie_first)

    # The outcome (a resetting lane: none, rewards +0.0) and the sides' observations.
    total0 = durability00 + durability01 + durability02
    total1 = durability10 + durability11 + durability12
    for i in range(LANES):
        keep = np.int32(-(lanes[RESET + i] ^ _ONE))
        out0 = _lane_out(lanes, SIDE0, i, durability00, durability01, durability02)
        out1 = _lane_out(lanes, SIDE1, i, durability10, durability11, durability12)
        step = np.int32(np.int32(lanes[T + i] + _ONE) & keep)
        ended = np.int32((out0 | out1) & keep)
        lanes[ENDED + i] = ended
        lanes[CUT + i] = np.int32((ended ^ _ONE) & _bit(step >= max_steps32) & keep)
        outcome = float(out1 & (out0 ^ 1)) - float(out0 & (out1 ^ 1))
        shaped = shaping * (lanes[SIDE0 + DEALT + i] / total1 - lanes[SIDE1 + DEALT + i] / total0)
        floats[F_REWARD0 + i] = outcome + shaped if keep else 0.0
        floats[F_REWARD1 + i] = -outcome - shaped if keep else 0.0
        lanes[T + i] = step
    for side in range(n_sides):
        _observe(lanes, floats, values, side, max_steps32)
        _write_obs(lanes, floats, obs, mask, first, count, side)

    # The rewards and flags, then the state, in loops of their own (fewer arrays at once).
    for i in range(count):
        if lanes[lane_at(SLOW, i)]:
            continue
        e = np.uint64(first + i)
        reward[e, 0] = floats[lane_at(F_REWARD0, i)]
        reward[e, 1] = floats[lane_at(F_REWARD1, i)]
        terminated[e] = lanes[lane_at(ENDED, i)]
        truncated[e] = lanes[lane_at(CUT, i)]
    done = 0
    for i in range(count):
        if lanes[lane_at(SLOW, i)]:
            continue
        e = np.uint64(first + i)
        reset = np.int64(lanes[lane_at(RESET, i)])
        state[e, S_EPISODE] += reset
        state[e, S_T] = lanes[lane_at(T, i)]
        state[e, S_RETRIES] &= reset - 1  # 0 at a reset
        state[e, S_NEEDS_RESET] = lanes[lane_at(ENDED, i)] | lanes[lane_at(CUT, i)]
        state[e, S_PHASE] = lanes[lane_at(PHASE, i)]
        state[e, S_FIRST_MOVER] = lanes[lane_at(FIRST, i)]
        for side in range(2):
            r = SIDE0 + side * SIDE_ROWS
            s = S_SIDE + side * SIDE_STATE
            state[e, s + S_STUN] = lanes[lane_at(r + STUN, i)]
            state[e, s + S_WOUND] = lanes[lane_at(r + WOUND, i)]
            state[e, s + S_MORTAL] = lanes[lane_at(r + MORTAL, i)]
            state[e, s + S_FIRST_PHASE] = lanes[lane_at(r + FIRST_PHASE, i)]
            state[e, s + S_ACTIONS_LEFT] = lanes[lane_at(r + LEFT, i)]
            state[e, s + S_AIMED] = lanes[lane_at(r + AIMED, i)]
        done |= 1 << i
    return done
