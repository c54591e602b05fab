"""EXP duel steps in lockstep for Numba: the twin of kernels/rl/exp_lanes.h (read its notes).

``exp_lanes`` steps up to 64 envs together in loops over lanes that LLVM vectorises, with no
branch on a die, and returns the envs it stepped as bits; the shared body of
combatsim.rl.exp_reference steps the others. It takes exactly the envs the C lanes take. The
lanes live in rows of one int32 array (one base pointer, so LLVM needs no alias checks to
vectorise the loops over them), as in kernels/rl/d100_lanes_nb.py.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from combatsim.rl.exp_reference import (
    A_FIRE,
    A_RELOAD,
    A_WEAPON,
    ACTIONS,
    G_HIT_ON_EQUAL,
    G_MAX_STEPS,
    KILODIE,
    MAX_ROLLS,
    OBS_SIZE,
    P_ARMOUR_RATING,
    P_BONUS,
    P_BURST,
    P_CAPACITY,
    P_DAMAGE_ADJUSTMENT,
    P_DICE_COUNT,
    P_DICE_MODIFIER,
    P_DICE_SIDES,
    P_HIT_POINTS,
    P_MAXIMUM_ROLL,
    P_ROLLS,
    P_SLOTS,
    POLICY_EXTERNAL,
    POLICY_SCRIPTED,
    S_AMMO,
    S_EPISODE,
    S_HP,
    S_NEEDS_RESET,
    S_RETRIES,
    S_SIDE,
    S_T,
    S_WEAPON,
    SIDE_PARAMS,
    SIDE_STATE,
    SLOT_PARAMS,
    SLOTS,
)

from .._numba import borrow, njit
from ._stream_nb import _ROW, AHEAD_ENVS, lanes_may_take

#: An action that does nothing (an illegal choice: the reference's -1).
NO_ACTION = ACTIONS
#: Lemire's threshold for the kilodie, (2^32 - 1000) mod 1000 (a d4's is 0: 4 divides 2^32).
KILODIE_REJECT_BELOW = 296
#: Parameters and counters the lanes take stay within +-2^20 (sums of a few of them fit an int32 lane).
LANE_RANGE = 1 << 20

# Rows of the lanes: per-lane values (the fire's state machine: the side firing, 2 when none is,
# rolls left, what the next word is for, dice and rounds left, the round's damage), then each side's.
T, RESET, SLOW, ENDED, CUT, FIRING, ROLLS_LEFT, PHASE, DICE_LEFT, ROUNDS_LEFT, DAMAGE, WORD_NOW = range(12)
MASK = 12  # and 13: each side's legal actions after the step, as bits
WORD = 14  # .. 17: the step's first block
HP, WEAPON, AMMO = 0, 1, 2  # AMMO .. AMMO + 2: per slot
CHOICE, FIRE_ROLLS, DEALT, HIT_ABOVE, BASE, COUNT, BURST, SIDES, REJECT_BELOW = range(5, 14)
SIDE_ROWS = 14
SIDE0 = WORD + 4
SIDE1 = SIDE0 + SIDE_ROWS
ROWS = SIDE1 + SIDE_ROWS
# Rows of floats: the rewards, each side's hit points and the time observed, then each side's observation.
F_REWARD0, F_REWARD1, F_HP0, F_HP1, F_TIME, F_OBS = 0, 1, 2, 3, 4, 5
FLOAT_ROWS = F_OBS + 2 * OBS_SIZE

#: The small helpers, compiled once per argument types (as @njit functions Numba compiled one copy
#: per literal argument, each a whole pipeline run). LLVM still inlines them.
_helper = register_jitable(error_model="numpy")

_SHIFT = np.uint64(32)
_TWO32 = np.uint64(1 << 32)
_THIRD = np.uint64(0x55555556)


@_helper
def _bit(condition):
    return 1 if condition else 0


@_helper
def _select(mask, yes, no):
    """``yes`` where ``mask`` is all ones, ``no`` where it is zero: masks, not a branch (LLVM turned
    conditional expressions on one variable into a switch, and a loop with one is not vectorised)."""
    return (yes & mask) | (no & ~mask)


@_helper
def _pick(weapon, by0, by1, by2):
    """The slot's value of a lane's weapon (0..2), by the masks "slot > 0" and "slot > 1"."""
    past0 = -_bit(weapon > 0)
    past1 = -_bit(weapon > 1)
    return by0 ^ ((by0 ^ by1) & past0) ^ ((by1 ^ by2) & past1)


@_helper
def _in_range(value):
    return -LANE_RANGE <= value <= LANE_RANGE


@_helper
def _bar(iparams, side):
    """The to-hit bar of ``side``'s fire: the foe's armour rating less hit_on_equal."""
    return iparams[(1 - side) * SIDE_PARAMS + P_ARMOUR_RATING] - iparams[G_HIT_ON_EQUAL]


@_helper
def _side_in_range(iparams, side):
    """Whether ``side``'s parameters are inside what the lanes take (exp_lanes.h's exp_lane_side)."""
    p = side * SIDE_PARAMS
    if iparams[p + P_HIT_POINTS] < 1 or iparams[p + P_HIT_POINTS] > LANE_RANGE or not _in_range(_bar(iparams, side)):
        return False
    for k in range(SLOTS):
        w = p + P_SLOTS + k * SLOT_PARAMS
        rolls = iparams[w + P_ROLLS]
        if (rolls < 0 or rolls > MAX_ROLLS or np.uint64(iparams[w + P_BURST]) > np.uint64(1)
                or np.uint64(iparams[w + P_CAPACITY]) > np.uint64(LANE_RANGE) or not _in_range(iparams[w + P_BONUS])
                or not _in_range(iparams[w + P_MAXIMUM_ROLL]) or not _in_range(iparams[w + P_DAMAGE_ADJUSTMENT])
                or not _in_range(iparams[w + P_DICE_MODIFIER])):
            return False
        # A slot that fires rolls at least one die of 1..2^20 sides (exp_params makes a constant one d1).
        if rolls > 0 and not (1 <= iparams[w + P_DICE_COUNT] <= LANE_RANGE
                              and 1 <= iparams[w + P_DICE_SIDES] <= LANE_RANGE):
            return False
    return True


@_helper
def _slot(iparams, side, k):
    """A weapon slot's values as the lanes use them: rolls, capacity, rounds a roll, burst, the
    kilodie a hit must exceed, base damage (modifier + DA), dice count and sides (an empty slot's
    are a d1), and the dice's Lemire threshold."""
    w = side * SIDE_PARAMS + P_SLOTS + k * SLOT_PARAMS
    rolls = iparams[w + P_ROLLS]
    burst = iparams[w + P_BURST]
    count = iparams[w + P_DICE_COUNT] if rolls > 0 else 1
    sides = iparams[w + P_DICE_SIDES] if rolls > 0 else 1
    reject_below = np.int64((_TWO32 - np.uint64(sides)) % np.uint64(sides))
    # min(kilodie + bonus, maximum roll) > bar: kilodie > bar - bonus, or never (no kilodie exceeds KILODIE).
    bar = _bar(iparams, side)
    hit_above = bar - iparams[w + P_BONUS] if iparams[w + P_MAXIMUM_ROLL] > bar else KILODIE
    return (rolls, iparams[w + P_CAPACITY], 1 + 2 * burst, burst, hit_above,
            iparams[w + P_DICE_MODIFIER] + iparams[w + P_DAMAGE_ADJUSTMENT], count, sides, reject_below)


@_helper
def _hit_chance(iparams, side, k):
    """The reference's _hit_chance of ``side``'s slot ``k``, in kilodie faces."""
    w = side * SIDE_PARAMS + P_SLOTS + k * SLOT_PARAMS
    bar = _bar(iparams, side)
    if iparams[w + P_ROLLS] == 0 or iparams[w + P_MAXIMUM_ROLL] <= bar:
        return 0
    return KILODIE - min(max(bar - iparams[w + P_BONUS], 0), KILODIE)


@njit(inline="always")
def _legal_bits(weapon, held, capacity, per_roll, armed0, armed1, armed2):
    """One side's legal actions (the reference's _legal) as bits, from its weapon in hand's values."""
    fire = _bit(capacity == 0) | _bit(held >= per_roll)
    reload = _bit(capacity > 0) & _bit(held < capacity)
    return (fire | reload << A_RELOAD | (_bit(weapon != 0) & armed0) << A_WEAPON
            | (_bit(weapon != 1) & armed1) << (A_WEAPON + 1) | (_bit(weapon != 2) & armed2) << (A_WEAPON + 2))


# int32 constants. Numba types integer literals, and arithmetic on int32 values, as int64, and
# LLVM then works the loops over lanes in int64 (8 lanes to a vector, not 16); a value cut back
# to int32 at once (np.int32) lets it narrow each operation to int32. The fire's values stay within
# a few times 2^20 (LANE_RANGE; a bad lane's are zeros), so each fits an int32.
_ZERO, _ONE, _TWO, _FOUR = np.int32(0), np.int32(1), np.int32(2), np.int32(4)
_KILODIE, _KILODIE_REJECT_BELOW = np.int32(KILODIE), np.int32(KILODIE_REJECT_BELOW)
_NO_ACTION = np.int32(NO_ACTION)
_ACTIONS = tuple(np.int32(a) for a in range(ACTIONS))


@_helper
def _bit32(condition):
    return np.int32(condition)


@_helper
def _on(condition):
    """A condition as an int32 mask: all ones or zero."""
    return np.int32(-np.int32(condition))


@_helper
def _select32(mask, yes, no):
    """_select in int32."""
    return np.int32((yes & mask) | (no & ~mask))


@_helper
def _pick32(past0, past1, by0, by1, by2):
    """_pick in int32, by the masks "slot > 0" and "slot > 1"."""
    return np.int32(by0 ^ ((by0 ^ by1) & past0) ^ ((by1 ^ by2) & past1))


@_helper
def _slot32(iparams, side, k):
    """_slot's values in int32 (each within +-2^20, or KILODIE)."""
    rolls, capacity, per_roll, burst, hit_above, base, count, sides, reject_below = _slot(iparams, side, k)
    return (np.int32(rolls), np.int32(capacity), np.int32(per_roll), np.int32(burst), np.int32(hit_above),
            np.int32(base), np.int32(count), np.int32(sides), np.int32(reject_below))


@njit(inline="always")
def _choose(lanes, iparams, side, scripted):
    """One side's choice in every lane, judged legal, and its effect on the side's own state: Fire
    spends its rounds (the rolls it can pay for, the reference's min(rolls, ammo // per_roll)),
    Reload refills, Weapon k draws slot k. The fire's values are those of the weapon it started with.
    In int32 (the slots' values are within +-2^20, the ammunition within 0 .. 2^20)."""
    r = SIDE0 + side * SIDE_ROWS
    rolls0, capacity0, per_roll0, burst0, above0, base0, count0, sides0, reject0 = _slot32(iparams, side, 0)
    rolls1, capacity1, per_roll1, burst1, above1, base1, count1, sides1, reject1 = _slot32(iparams, side, 1)
    rolls2, capacity2, per_roll2, burst2, above2, base2, count2, sides2, reject2 = _slot32(iparams, side, 2)
    armed0 = _bit32(rolls0 > 0)
    armed1 = _bit32(rolls1 > 0)
    armed2 = _bit32(rolls2 > 0)
    scripted_mask = _on(scripted)
    for i in range(AHEAD_ENVS):
        weapon = lanes[r + WEAPON, i]
        ammo0 = lanes[r + AMMO, i]
        ammo1 = lanes[r + AMMO + 1, i]
        ammo2 = lanes[r + AMMO + 2, i]
        past0 = _on(weapon > 0)
        past1 = _on(weapon > 1)
        held = _pick32(past0, past1, ammo0, ammo1, ammo2)
        capacity = _pick32(past0, past1, capacity0, capacity1, capacity2)
        per_roll = _pick32(past0, past1, per_roll0, per_roll1, per_roll2)
        rolls = _pick32(past0, past1, rolls0, rolls1, rolls2)
        lanes[r + HIT_ABOVE, i] = _pick32(past0, past1, above0, above1, above2)
        lanes[r + BASE, i] = _pick32(past0, past1, base0, base1, base2)
        lanes[r + COUNT, i] = _pick32(past0, past1, count0, count1, count2)
        lanes[r + BURST, i] = _pick32(past0, past1, burst0, burst1, burst2)
        lanes[r + SIDES, i] = _pick32(past0, past1, sides0, sides1, sides2)
        lanes[r + REJECT_BELOW, i] = _pick32(past0, past1, reject0, reject1, reject2)
        legal = np.int32(_legal_bits(weapon, held, capacity, per_roll, armed0, armed1, armed2))
        # The scripted policy: the first legal action (the lowest bit), none when no bit is set.
        first_legal = _NO_ACTION
        first_legal = _select32(_on((legal >> 4) & 1), _ACTIONS[A_WEAPON + 2], first_legal)
        first_legal = _select32(_on((legal >> 3) & 1), _ACTIONS[A_WEAPON + 1], first_legal)
        first_legal = _select32(_on((legal >> 2) & 1), _ACTIONS[A_WEAPON], first_legal)
        first_legal = _select32(_on((legal >> 1) & 1), _ACTIONS[A_RELOAD], first_legal)
        first_legal = _select32(_on(legal & 1), _ACTIONS[A_FIRE], first_legal)
        choice = _select32(scripted_mask, first_legal, lanes[r + CHOICE, i])
        choice = _select32(_on((legal >> choice) & 1), choice, _NO_ACTION)
        unlimited = _bit32(capacity == 0)
        # The rolls the ammunition pays for, held // per_roll (per_roll 1 or 3): a multiply by 2^32 / 3,
        # exact for 0 <= held < 2^31 (the gather leaves held in 0 .. 2^20).
        thirds = np.int32((np.uint64(np.uint32(held)) * _THIRD) >> _SHIFT)
        affordable = _select32(_on(per_roll == 1), held, thirds)
        paid = _select32(np.int32(-unlimited), rolls, min(rolls, affordable))
        fire_rolls = np.int32(_on(choice == A_FIRE) & paid)
        after = _select32(_on(choice == A_RELOAD), capacity,
                          np.int32(held - (-(unlimited ^ _ONE) & (fire_rolls * per_roll))))
        lanes[r + AMMO, i] = _select32(~past0, after, ammo0)
        lanes[r + AMMO + 1, i] = _select32(past0 & ~past1, after, ammo1)
        lanes[r + AMMO + 2, i] = _select32(past1, after, ammo2)
        drawing = np.int32(-(_bit32(choice >= A_WEAPON) & _bit32(choice < ACTIONS)))
        lanes[r + WEAPON, i] = _select32(drawing, np.int32(choice - A_WEAPON), weapon)
        lanes[r + CHOICE, i] = choice
        lanes[r + FIRE_ROLLS, i] = fire_rolls
        lanes[r + DEALT, i] = 0


@njit(inline="always")
def _fire_pass(lanes):
    """One word of both sides' fire in every lane (the word in WORD_NOW): the reference's _fire for
    side 0, then side 1, as a state machine per lane (whose side fires, rolls left, what the word is
    for: 0 a to-hit kilodie, 1 a burst's rounds d4, 2 a damage die). A rejected word marks the lane
    SLOW. In int32 but for the die's 64-bit product."""
    for i in range(AHEAD_ENVS):
        who = lanes[FIRING, i]
        at = lanes[PHASE, i]
        dice = lanes[DICE_LEFT, i]
        rounds_now = lanes[ROUNDS_LEFT, i]
        damage_now = lanes[DAMAGE, i]
        on = _bit32(who < 2)
        second = _on(who == 1)  # side 1's values
        hit_above = _select32(second, lanes[SIDE1 + HIT_ABOVE, i], lanes[SIDE0 + HIT_ABOVE, i])
        base = _select32(second, lanes[SIDE1 + BASE, i], lanes[SIDE0 + BASE, i])
        count = _select32(second, lanes[SIDE1 + COUNT, i], lanes[SIDE0 + COUNT, i])
        burst = _select32(second, lanes[SIDE1 + BURST, i], lanes[SIDE0 + BURST, i])
        dice_sides = _select32(second, lanes[SIDE1 + SIDES, i], lanes[SIDE0 + SIDES, i])
        dice_reject = _select32(second, lanes[SIDE1 + REJECT_BELOW, i], lanes[SIDE0 + REJECT_BELOW, i])
        kilodie_word = _on(at == 0)
        rounds_word = _on(at == 1)
        die_sides = _select32(kilodie_word, _KILODIE, _select32(rounds_word, _FOUR, dice_sides))
        reject_below = _select32(kilodie_word, _KILODIE_REJECT_BELOW, _select32(rounds_word, _ZERO, dice_reject))
        product = np.uint64(np.uint32(lanes[WORD_NOW, i])) * np.uint64(np.uint32(die_sides))  # sides 1 .. 2^20
        value = np.int32(np.int64(product >> _SHIFT) + 1)
        lanes[SLOW, i] |= on & _bit32(np.uint32(product) < np.uint32(reject_below))
        kilodie = np.int32(on & _bit32(at == 0))
        rounds_die = np.int32(on & _bit32(at == 1))
        damage_die = np.int32(on & _bit32(at == 2))
        hit = np.int32(kilodie & _bit32(value > hit_above))
        # A hit lands one round, or a burst's d4 - 1 rounds; each round rolls `count` dice.
        rounds_start = np.int32((hit & (burst ^ _ONE)) | (rounds_die & _bit32(value > 1)))
        rounds = _select32(np.int32(-kilodie), _ONE, np.int32(value - _ONE))
        total = np.int32(damage_now + value)
        dice_after = np.int32(dice - _ONE)
        round_done = np.int32(damage_die & _bit32(dice_after == 0))
        rounds_after = np.int32(rounds_now - round_done)
        next_round = np.int32(round_done & _bit32(rounds_after > 0))
        roll_done = np.int32((kilodie & (hit ^ _ONE)) | (rounds_die & _bit32(value == 1))
                             | (round_done & _bit32(rounds_after == 0)))
        landed = np.int32(-round_done & max(total, _ZERO))
        lanes[SIDE0 + DEALT, i] += np.int32(~second & landed)
        lanes[SIDE1 + DEALT, i] += np.int32(second & landed)
        fresh = np.int32(rounds_start | next_round)
        to_burst = np.int32(hit & burst)
        next_phase = _select32(np.int32(-to_burst), _ONE,
                               _select32(np.int32(-(fresh | (damage_die & (round_done ^ _ONE)))), _TWO, _ZERO))
        lanes[PHASE, i] = _select32(np.int32(-(on & (to_burst | fresh | damage_die | roll_done))), next_phase, at)
        lanes[DICE_LEFT, i] = _select32(np.int32(-fresh), count, _select32(np.int32(-damage_die), dice_after, dice))
        lanes[DAMAGE, i] = _select32(np.int32(-fresh), base, _select32(np.int32(-damage_die), total, damage_now))
        lanes[ROUNDS_LEFT, i] = _select32(np.int32(-rounds_start), rounds,
                                          _select32(np.int32(-damage_die), rounds_after, rounds_now))
        left = np.int32(lanes[ROLLS_LEFT, i] - roll_done)
        side_done = np.int32(roll_done & _bit32(left == 0))
        second_rolls = lanes[SIDE1 + FIRE_ROLLS, i]
        to_second = np.int32(-(side_done & _bit32(who == 0) & _bit32(second_rolls > 0)))
        lanes[ROLLS_LEFT, i] = _select32(to_second, second_rolls, left)
        lanes[FIRING, i] = _select32(to_second, _ONE, _select32(np.int32(-side_done), _TWO, who))


@njit(inline="always")
def _observe(lanes, floats, iparams, side):
    """One side's observation (the reference's _write_obs) and legal actions of every lane, in rows.
    A quotient of integers below 2^24 in float32 is the reference's float64 quotient rounded to
    float32 (53 >= 2 x 24 + 2 bits, Figueroa 1995), and vdivps divides twice vdivpd's lanes."""
    r = SIDE0 + side * SIDE_ROWS
    o = SIDE0 + (1 - side) * SIDE_ROWS
    row = F_OBS + side * OBS_SIZE
    rolls0, capacity0, per_roll0 = _slot(iparams, side, 0)[:3]
    rolls1, capacity1, per_roll1 = _slot(iparams, side, 1)[:3]
    rolls2, capacity2, per_roll2 = _slot(iparams, side, 2)[:3]
    armed0 = _bit(rolls0 > 0)
    armed1 = _bit(rolls1 > 0)
    armed2 = _bit(rolls2 > 0)
    chance0 = _hit_chance(iparams, side, 0) / KILODIE
    chance1 = _hit_chance(iparams, side, 1) / KILODIE
    chance2 = _hit_chance(iparams, side, 2) / KILODIE
    foe_chance0 = _hit_chance(iparams, 1 - side, 0)
    foe_chance1 = _hit_chance(iparams, 1 - side, 1)
    foe_chance2 = _hit_chance(iparams, 1 - side, 2)
    # An empty slot's ammunition reads 0, an unlimited one's 1 (a ratio of a zero capacity reads neither).
    fixed0 = 0.0 if rolls0 == 0 else 1.0
    fixed1 = 0.0 if rolls1 == 0 else 1.0
    fixed2 = 0.0 if rolls2 == 0 else 1.0
    ratio0 = rolls0 > 0 and capacity0 > 0
    ratio1 = rolls1 > 0 and capacity1 > 0
    ratio2 = rolls2 > 0 and capacity2 > 0
    for i in range(AHEAD_ENVS):
        own = np.int64(lanes[r + WEAPON, i])
        foe = np.int64(lanes[o + WEAPON, i])
        own0 = -_bit(own > 0)
        own1 = -_bit(own > 1)
        foe0 = -_bit(foe > 0)
        foe1 = -_bit(foe > 1)
        ammo0 = np.int64(lanes[r + AMMO, i])
        ammo1 = np.int64(lanes[r + AMMO + 1, i])
        ammo2 = np.int64(lanes[r + AMMO + 2, i])
        floats[row, i] = floats[F_HP0 + side, i]
        floats[row + 1, i] = floats[F_HP0 + 1 - side, i]
        floats[row + 2, i] = 1 + own0
        floats[row + 3, i] = own1 - own0
        floats[row + 4, i] = -own1
        floats[row + 5, i] = np.float32(ammo0) / np.float32(capacity0) if ratio0 else fixed0
        floats[row + 6, i] = np.float32(ammo1) / np.float32(capacity1) if ratio1 else fixed1
        floats[row + 7, i] = np.float32(ammo2) / np.float32(capacity2) if ratio2 else fixed2
        floats[row + 8, i] = chance0
        floats[row + 9, i] = chance1
        floats[row + 10, i] = chance2
        floats[row + 11, i] = 1 + foe0
        floats[row + 12, i] = foe1 - foe0
        floats[row + 13, i] = -foe1
        floats[row + 14, i] = floats[F_TIME, i]
        floats[row + 15, i] = np.float32(_pick(foe, foe_chance0, foe_chance1, foe_chance2)) / np.float32(KILODIE)
        held = _pick(own, ammo0, ammo1, ammo2)
        capacity = _pick(own, capacity0, capacity1, capacity2)
        per_roll = _pick(own, per_roll0, per_roll1, per_roll2)
        lanes[MASK + side, i] = _legal_bits(own, held, capacity, per_roll, armed0, armed1, armed2)


@njit(inline="always")
def exp_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first, ahead):
    """Steps some of envs first .. first + AHEAD_ENVS - 1 exactly as the shared body would; returns
    them as bits (``ahead``: the stream array holding each env's first block of the step)."""
    if not lanes_may_take(state, first, policies):
        return 0
    return _step_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first,
                       ahead)


@njit
def _step_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first, ahead):
    count = min(state.shape[0] - first, AHEAD_ENVS)
    max_steps = iparams[G_MAX_STEPS]
    if max_steps < 1 or max_steps > LANE_RANGE or not _side_in_range(iparams, 0) or not _side_in_range(iparams, 1):
        return 0
    n_sides = 2 if policies[1] == POLICY_EXTERNAL else 1
    hit_points0 = iparams[P_HIT_POINTS]
    hit_points1 = iparams[SIDE_PARAMS + P_HIT_POINTS]
    # Borrowed (no reference counting in the loops); the owners are used again at the end, so they live.
    # Not zeroed: each row is written before it is read (zeroing them cost the d100 lanes ~2 ns an env).
    lanes_owner = np.empty((ROWS, AHEAD_ENVS), dtype=np.int32)
    floats_owner = np.empty((FLOAT_ROWS, AHEAD_ENVS), dtype=np.float32)
    lanes = borrow(lanes_owner)
    floats = borrow(floats_owner)

    # Gather; a state the reference's own steps never leave (a weapon slot outside 0..2, ammunition
    # or hit points beyond the range, a step count at max_steps) goes to the reference. Lanes past
    # count idle through the step (nothing of theirs is written).
    for i in range(AHEAD_ENVS):
        lanes[SLOW, i] = 1
        lanes[SIDE0 + CHOICE, i] = NO_ACTION
        lanes[SIDE1 + CHOICE, i] = NO_ACTION
        lanes[PHASE, i] = 0
        lanes[DICE_LEFT, i] = 0
        lanes[ROUNDS_LEFT, i] = 0
        lanes[DAMAGE, i] = 0
    for i in range(count, AHEAD_ENVS):
        for row in (T, RESET, WORD, WORD + 1, WORD + 2, WORD + 3):
            lanes[row, i] = 0
        for row in range(SIDE0, SIDE0 + AMMO + SLOTS):
            lanes[row, i] = 0
            lanes[row + SIDE_ROWS, i] = 0
    for i in range(count):
        e = np.uint64(first + i)  # unsigned: Numba adds no negative-index wraparound to each access
        s0 = S_SIDE
        s1 = S_SIDE + SIDE_STATE
        ammo = (state[e, s0 + S_AMMO] | state[e, s0 + S_AMMO + 1] | state[e, s0 + S_AMMO + 2]
                | state[e, s1 + S_AMMO] | state[e, s1 + S_AMMO + 1] | state[e, s1 + S_AMMO + 2])
        bad = ((np.uint64(state[e, S_T]) >= np.uint64(max_steps)) | (np.uint64(state[e, s0 + S_WEAPON]) > np.uint64(2))
               | (np.uint64(state[e, s1 + S_WEAPON]) > np.uint64(2)) | (np.uint64(ammo) > np.uint64(LANE_RANGE))
               | (np.uint64(state[e, s0 + S_HP] + LANE_RANGE) > np.uint64(2 * LANE_RANGE))
               | (np.uint64(state[e, s1 + S_HP] + LANE_RANGE) > np.uint64(2 * LANE_RANGE)))
        good = 0 if bad else -1  # a lane the reference steps gets zeros: nothing below overflows
        lanes[SLOW, i] = 1 if bad else 0
        lanes[RESET, i] = 1 if state[e, S_NEEDS_RESET] != 0 else 0
        lanes[T, i] = state[e, S_T] & good
        for side in range(2):
            r = SIDE0 + side * SIDE_ROWS
            s = S_SIDE + side * SIDE_STATE
            lanes[r + HP, i] = state[e, s + S_HP] & good
            lanes[r + WEAPON, i] = state[e, s + S_WEAPON] & good
            lanes[r + AMMO, i] = state[e, s + S_AMMO] & good
            lanes[r + AMMO + 1, i] = state[e, s + S_AMMO + 1] & good
            lanes[r + AMMO + 2, i] = state[e, s + S_AMMO + 2] & good
            action = actions[e, side]
            lanes[r + CHOICE, i] = action if np.uint64(action) < np.uint64(ACTIONS) else NO_ACTION
        for j in range(4):
            lanes[WORD + j, i] = np.int32(np.uint32(ahead[_ROW[5 + j] + i]))

    # Choices (legal on the state at the start of the unit) and their effects, then both fires, one
    # word a pass. Each side's choice is written out with its side a constant, so LLVM sees its rows'
    # fixed offsets and vectorises the loop without alias checks.
    _choose(lanes, iparams, 0, policies[0] == POLICY_SCRIPTED)
    _choose(lanes, iparams, 1, policies[1] == POLICY_SCRIPTED)
    for i in range(AHEAD_ENVS):
        rolls0 = np.int64(lanes[SIDE0 + FIRE_ROLLS, i])
        rolls1 = np.int64(lanes[SIDE1 + FIRE_ROLLS, i])
        firing0 = -_bit(rolls0 > 0)
        lanes[FIRING, i] = _select(firing0, 0, _select(-_bit(rolls1 > 0), 1, 2))
        lanes[ROLLS_LEFT, i] = _select(firing0, rolls0, rolls1)
    for w in range(4):
        # The pass's word into a row of its own: a row picked by w in the pass kept its loop scalar.
        for i in range(AHEAD_ENVS):
            lanes[WORD_NOW, i] = lanes[WORD + w, i]
        _fire_pass(lanes)
    for i in range(AHEAD_ENVS):
        lanes[SLOW, i] |= _bit(lanes[FIRING, i] < 2)  # still wanting a word after the fourth

    # Damage lands at once; then the outcome. A lane that resets instead starts its next episode.
    # (In int32: hit points and capacities are within 2^20, the damage dealt a few times that.)
    capacity00 = np.int32(iparams[P_SLOTS + P_CAPACITY])
    capacity01 = np.int32(iparams[P_SLOTS + SLOT_PARAMS + P_CAPACITY])
    capacity02 = np.int32(iparams[P_SLOTS + 2 * SLOT_PARAMS + P_CAPACITY])
    capacity10 = np.int32(iparams[SIDE_PARAMS + P_SLOTS + P_CAPACITY])
    capacity11 = np.int32(iparams[SIDE_PARAMS + P_SLOTS + SLOT_PARAMS + P_CAPACITY])
    capacity12 = np.int32(iparams[SIDE_PARAMS + P_SLOTS + 2 * SLOT_PARAMS + P_CAPACITY])
    full0 = np.int32(hit_points0)
    full1 = np.int32(hit_points1)
    max_steps32 = np.int32(max_steps)
    for i in range(AHEAD_ENVS):
        keep = _on(lanes[RESET, i] == 0)
        dealt0 = lanes[SIDE0 + DEALT, i]
        dealt1 = lanes[SIDE1 + DEALT, i]
        hp0 = np.int32(lanes[SIDE0 + HP, i] - dealt1)
        hp1 = np.int32(lanes[SIDE1 + HP, i] - dealt0)
        out0 = _bit32(hp0 <= 0)
        out1 = _bit32(hp1 <= 0)
        step = np.int32((lanes[T, i] + _ONE) & keep)
        ended = np.int32((out0 | out1) & keep)
        lanes[ENDED, i] = ended
        lanes[CUT, i] = (ended ^ _ONE) & _bit32(step >= max_steps32) & keep
        outcome = float(out1 & (out0 ^ 1)) - float(out0 & (out1 ^ 1))
        shaped = shaping * (dealt0 / hit_points1 - dealt1 / hit_points0)
        floats[F_REWARD0, i] = outcome + shaped if keep else 0.0
        floats[F_REWARD1, i] = -outcome - shaped if keep else 0.0
        lanes[T, i] = step
        hp0 = _select32(keep, hp0, full0)
        hp1 = _select32(keep, hp1, full1)
        lanes[SIDE0 + HP, i] = hp0
        lanes[SIDE1 + HP, i] = hp1
        lanes[SIDE0 + WEAPON, i] &= keep
        lanes[SIDE1 + WEAPON, i] &= keep
        lanes[SIDE0 + AMMO, i] = _select32(keep, lanes[SIDE0 + AMMO, i], capacity00)
        lanes[SIDE0 + AMMO + 1, i] = _select32(keep, lanes[SIDE0 + AMMO + 1, i], capacity01)
        lanes[SIDE0 + AMMO + 2, i] = _select32(keep, lanes[SIDE0 + AMMO + 2, i], capacity02)
        lanes[SIDE1 + AMMO, i] = _select32(keep, lanes[SIDE1 + AMMO, i], capacity10)
        lanes[SIDE1 + AMMO + 1, i] = _select32(keep, lanes[SIDE1 + AMMO + 1, i], capacity11)
        lanes[SIDE1 + AMMO + 2, i] = _select32(keep, lanes[SIDE1 + AMMO + 2, i], capacity12)
        floats[F_HP0, i] = np.float32(max(hp0, _ZERO)) / np.float32(hit_points0)
        floats[F_HP1, i] = np.float32(max(hp1, _ZERO)) / np.float32(hit_points1)
        floats[F_TIME, i] = np.float32(step) / np.float32(max_steps)

    _observe(lanes, floats, iparams, 0)
    if n_sides == 2:
        _observe(lanes, floats, iparams, 1)

    done = 0
    for i in range(count):
        if lanes[SLOW, i] and not lanes[RESET, i]:
            continue
        e = np.uint64(first + i)
        for side in range(n_sides):
            row = F_OBS + side * OBS_SIZE
            for k in range(OBS_SIZE):
                obs[e, side, k] = floats[row + k, i]
            legal = lanes[MASK + side, i]
            for a in range(ACTIONS):
                mask[e, side, a] = (legal >> a) & 1
        reward[e, 0] = floats[F_REWARD0, i]
        reward[e, 1] = floats[F_REWARD1, i]
        terminated[e] = lanes[ENDED, i]
        truncated[e] = lanes[CUT, i]
        reset = np.int64(lanes[RESET, i])
        state[e, S_EPISODE] += reset
        state[e, S_T] = lanes[T, i]
        state[e, S_RETRIES] &= reset - 1  # 0 at a reset
        state[e, S_NEEDS_RESET] = lanes[ENDED, i] | lanes[CUT, i]
        for side in range(2):
            r = SIDE0 + side * SIDE_ROWS
            s = S_SIDE + side * SIDE_STATE
            state[e, s + S_HP] = lanes[r + HP, i]
            state[e, s + S_WEAPON] = lanes[r + WEAPON, i]
            state[e, s + S_AMMO] = lanes[r + AMMO, i]
            state[e, s + S_AMMO + 1] = lanes[r + AMMO + 1, i]
            state[e, s + S_AMMO + 2] = lanes[r + AMMO + 2, i]
        done |= 1 << i
    lanes_owner[0, 0] = np.int32(floats_owner[0, 0] != 0)
    return done
