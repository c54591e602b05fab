"""d100 duel steps in lockstep for Numba: the twin of kernels/rl/d100_lanes.h (read its notes).

``d100_lanes`` steps up to 64 envs together in loops over lanes that LLVM vectorises, with no
branch on a die, and returns the envs it stepped as bits; the shared body of
combatsim.rl.d100_reference steps the others. The lanes live in rows of one int32 array (one
base pointer, so LLVM needs no alias checks to vectorise the loops over them).
"""

from __future__ import annotations

import numpy as np

from combatsim.rl.d100_reference import (
    A_ATTACK,
    A_DEFEND,
    A_DISENGAGE,
    A_FLEE,
    A_PRESS,
    A_QUICK_ATTACK,
    A_TAKE_COVER,
    A_TOGGLE_DUAL,
    ACTIONS,
    G_MAX_STEPS,
    G_PASSES,
    G_START_ENGAGED,
    OBS_SIZE,
    P_DUAL_ALLOWED,
    P_LETHALITY,
    P_NONLETHAL,
    P_RANGED,
    P_SERIOUS,
    P_SKILL,
    POLICY_EXTERNAL,
    POLICY_SCRIPTED,
    S_COVER,
    S_DUAL,
    S_ENGAGED,
    S_EPISODE,
    S_ESCAPED,
    S_FAILED_FLEE,
    S_FLESH,
    S_LETHAL,
    S_NEEDS_RESET,
    S_RETRIES,
    S_SERIOUS,
    S_SIDE,
    S_T,
    S_TARGETED,
    SIDE_PARAMS,
    SIDE_STATE,
)

from .._numba import borrow, njit
from ._stream_nb import _ROW, AHEAD_ENVS, lanes_may_take

#: An action that does nothing (an illegal choice: the reference's -1), and Lemire's threshold for a d100.
NO_ACTION = 8
REJECT_BELOW = 96

# Rows of the lanes: per-lane values, then each side's.
T, ENGAGED, RESET, SLOW, NEW_ROUND, POSITION, ACTIVE, ENDED, CUT, MASK, WORD = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11
FLESH, SERIOUS, LETHAL, COVER, DUAL, TARGETED, ESCAPED, FAILED_FLEE, CHOICE, DEFEND, DEALT, STANDING = range(12)
STEPPED = ACTIVE  # after the attacks: the lanes stepped
SIDE_ROWS = 12
SIDE_ROW = (WORD + 4, WORD + 4 + SIDE_ROWS)
ROWS = WORD + 4 + 2 * SIDE_ROWS
# Rows of floats: the step's time observations, the rewards, then each side's observation.
F_ROUND, F_TIME, F_REWARD0, F_REWARD1, F_OBS = 0, 1, 2, 3, 4
FLOAT_ROWS = F_OBS + 2 * OBS_SIZE
assert ACTIONS == 8  # an env side's mask row is one 64-bit word

_SHIFT = np.uint64(32)
# int32 constants. Numba types integer literals, and arithmetic on int32 values, as int64, and
# LLVM then works the loops over lanes in int64 (8 lanes to a vector, not 16); a value cut back
# to int32 at once (np.int32) lets it narrow each operation to int32.
_ONE, _THREE, _FIVE, _SIX, _TWENTY, _CAP = (np.int32(1), np.int32(3), np.int32(5), np.int32(6), np.int32(20),
                                            np.int32(95))
_HUNDRED = np.int32(100)
_HALF = np.int32(16)
_LOW_HALF = np.int32(0xFFFF)


@njit(inline="always")
def _legal_bits(engaged, cover, ranged, dual_allowed):
    """The legal actions' bits, in int32, of int32 0 or 1 arguments."""
    attack = np.int32(engaged | ranged)
    return np.int32(attack | attack << 1 | 1 << A_DEFEND | (engaged ^ 1) << A_FLEE | 1 << A_PRESS
                    | engaged << A_DISENGAGE | ((engaged | cover) ^ 1) << A_TAKE_COVER | dual_allowed << A_TOGGLE_DUAL)


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
def _word_at(w0, w1, w2, w3, position):
    word = _pick(w0, w1, _bit(position == 1))
    word = _pick(word, w2, _bit(position == 2))
    return _pick(word, w3, _bit(position == 3))


@njit(inline="always")
def _roll(word):
    """The d100 of a 32-bit word (int32 bits): (word x 100) >> 32, + 1, in int32 from its 16-bit
    halves: (high x 100 + (low x 100) >> 16) >> 16, exact as floor((a + b / 2^16) / 2^16) is."""
    high = np.int32(np.uint32(word) >> np.uint32(16))
    low = np.int32(word & _LOW_HALF)
    carry = np.int32(np.int32(low * _HUNDRED) >> _HALF)
    return np.int32(np.int32(np.int32(high * _HUNDRED + carry) >> _HALF) + _ONE)


@njit(inline="always")
def _rejected(word):
    return _bit(np.uint32(np.uint32(word) * np.uint32(100)) < np.uint32(REJECT_BELOW))


@njit(inline="always")
def _into_round(x, passes, magic):
    return x - passes * np.int64((np.uint64(x) * magic) >> _SHIFT)


@njit(inline="always")
def _attack(lanes, params, side, quick):
    """One side's attack in every lane where ACTIVE (d100_lanes.h's d100_lanes_attack), in int32."""
    a = SIDE_ROW[side]
    d = SIDE_ROW[1 - side]
    p = side * SIDE_PARAMS
    skill = np.int32(params[p + P_SKILL])  # validated: |skill| <= 1000, the bars -1 .. 101
    ranged = _bit(params[p + P_RANGED] != 0)
    nonlethal = np.int32(-_bit(params[p + P_NONLETHAL] != 0))
    lethality = (np.int32(params[p + P_LETHALITY]), np.int32(params[p + P_LETHALITY + 1]),
                 np.int32(params[p + P_LETHALITY + 2]), np.int32(params[p + P_LETHALITY + 3]))
    seriousness = (np.int32(params[p + P_SERIOUS]), np.int32(params[p + P_SERIOUS + 1]),
                   np.int32(params[p + P_SERIOUS + 2]), np.int32(params[p + P_SERIOUS + 3]))
    for i in range(AHEAD_ENVS):
        on = lanes[ACTIVE, i]
        dual = lanes[a + DUAL, i]
        cover = np.int32(ranged & lanes[d + COVER, i])
        full = np.int32(skill - _TWENTY * (quick + lanes[d + DEFEND, i] + dual + cover))
        capped = min(full, _CAP)
        at = lanes[POSITION, i]
        w0, w1, w2, w3 = lanes[WORD, i], lanes[WORD + 1, i], lanes[WORD + 2, i], lanes[WORD + 3, i]
        word = _word_at(w0, w1, w2, w3, np.int32(at & _THREE))
        first = _word_at(w0, w1, w2, w3, np.int32((at + 1) & _THREE))
        second = _word_at(w0, w1, w2, w3, np.int32((at + 2) & _THREE))
        hit = np.int32(on & _bit(_roll(word) <= capped))
        both = np.int32(hit & dual)
        late0 = _bit(at > 3)
        late1 = _bit(at > 2)
        late2 = _bit(at > 1)
        lanes[SLOW, i] |= (on & (_rejected(word) | late0)) | (hit & (_rejected(first) | late1)) | (
            both & (_rejected(second) | late2))
        lanes[POSITION, i] = at + on + hit + both
        lanes[d + TARGETED, i] |= on
        lethal_bar = _pick(_pick(lethality[0], lethality[1], dual), _pick(lethality[2], lethality[3], dual), cover)
        serious_bar = _pick(_pick(seriousness[0], seriousness[1], dual), _pick(seriousness[2], seriousness[3], dual),
                            cover)
        roll1 = _roll(first)
        roll2 = _roll(second)
        lethal1 = _bit(roll1 <= lethal_bar)
        lethal2 = np.int32(both & _bit(roll2 <= lethal_bar))
        serious1 = np.int32(_bit(roll1 <= serious_bar) & (lethal1 ^ _ONE))
        serious2 = np.int32(both & _bit(roll2 <= serious_bar) & (lethal2 ^ _ONE))
        lethals = np.int32(-hit & (lethal1 + lethal2))
        seriouses = np.int32(-hit & (serious1 + serious2))
        fleshes = np.int32(hit + both - lethals - seriouses)
        # A nonlethal weapon's lethal result is serious and its flesh wounds do not count.
        seriouses = np.int32(seriouses + (lethals & nonlethal))
        lethals = np.int32(lethals & ~nonlethal)
        fleshes = np.int32(fleshes & ~nonlethal)
        lanes[a + DEALT, i] += _SIX * lethals + _THREE * seriouses + fleshes
        # Escalation from at most two new wounds on a flesh <= 2, serious <= 1 state.
        flesh = np.int32(lanes[d + FLESH, i] + fleshes)
        escalated = _bit(flesh >= _THREE)
        serious_total = np.int32(lanes[d + SERIOUS, i] + seriouses + escalated)
        lanes[d + FLESH, i] = flesh - _THREE * escalated
        lanes[d + SERIOUS, i] = serious_total & _ONE
        lanes[d + LETHAL, i] += lethals + (serious_total >> _ONE)


@njit(inline="always")
def _choosing(lanes, side, action, standing_only):
    """Marks ACTIVE the lanes where ``side`` chose ``action`` (and, if asked, is still standing);
    returns whether any is."""
    r = SIDE_ROW[side]
    any_active = np.int32(0)
    for i in range(AHEAD_ENVS):
        active = np.int32(_bit(lanes[r + CHOICE, i] == action) & (lanes[r + STANDING, i] if standing_only else _ONE))
        lanes[ACTIVE, i] = active
        any_active = np.int32(any_active | active)
    return any_active


@njit(inline="always")
def _move(lanes, r, i, press, keep):
    """One side's cover and dual wield after the pass's movement; a reset lane's side starts afresh."""
    taking_cover = _bit(lanes[r + CHOICE, i] == A_TAKE_COVER)
    toggling = _bit(lanes[r + CHOICE, i] == A_TOGGLE_DUAL)
    lanes[r + COVER, i] = (lanes[r + COVER, i] | taking_cover) & (press ^ _ONE) & keep
    lanes[r + DUAL, i] = (lanes[r + DUAL, i] ^ toggling) & keep
    lanes[r + FLESH, i] &= keep
    lanes[r + SERIOUS, i] &= keep
    lanes[r + LETHAL, i] &= keep
    lanes[r + TARGETED, i] &= keep
    lanes[r + ESCAPED, i] &= keep
    lanes[r + FAILED_FLEE, i] &= keep


@njit(inline="always")
def _mask_bytes(bits):
    """Bits 0..7 as eight bytes of 0 or 1, bit a in byte a (little-endian: the mask row's order)."""
    spread = (bits * np.uint64(0x0101010101010101)) & np.uint64(0x8040201008040201)
    return ((((spread & np.uint64(0x7F7F7F7F7F7F7F7F)) + np.uint64(0x7F7F7F7F7F7F7F7F)) | spread)
            & np.uint64(0x8080808080808080)) >> np.uint64(7)


@njit(inline="always")
def _flag(value):
    return 1 if np.uint64(value) <= np.uint64(1) else 0


@njit(inline="always")
def _copied(lanes, row, i, value):
    """``value``, written to lane ``i`` of ``row``: each entry of the state is loaded once, for its
    lane and for the check of the state (the check's own loads were a second load of each)."""
    lanes[row, i] = value
    return value


@njit(inline="always")
def _gather_side(lanes, state, actions, e, i, side):
    """One side's state and action of env ``e`` into lane ``i``; returns the or of its flags, the or
    of its counters, and its flesh wounds, for the check of the state."""
    r = SIDE_ROW[side]
    s = S_SIDE + side * SIDE_STATE
    flesh = _copied(lanes, r + FLESH, i, state[e, s + S_FLESH])
    flags = (_copied(lanes, r + SERIOUS, i, state[e, s + S_SERIOUS]) | _copied(lanes, r + COVER, i, state[e, s + S_COVER])
             | _copied(lanes, r + DUAL, i, state[e, s + S_DUAL])
             | _copied(lanes, r + TARGETED, i, state[e, s + S_TARGETED])
             | _copied(lanes, r + ESCAPED, i, state[e, s + S_ESCAPED]))
    counters = (_copied(lanes, r + LETHAL, i, state[e, s + S_LETHAL])
                | _copied(lanes, r + FAILED_FLEE, i, state[e, s + S_FAILED_FLEE]))
    action = actions[e, side]
    lanes[r + CHOICE, i] = action if np.uint64(action) < np.uint64(ACTIONS) else NO_ACTION
    return flags, counters, flesh


@njit(inline="always")
def _observe(lanes, floats, iparams, side):
    """One side's observation (the reference's _write_obs) and legal actions in every lane, in rows. A
    quotient of integers below 2^24 in float32 is the reference's float64 quotient rounded to float32
    (53 >= 2 x 24 + 2 bits, Figueroa 1995), and vdivps divides twice vdivpd's lanes."""
    r = SIDE_ROW[side]
    o = SIDE_ROW[1 - side]
    p = side * SIDE_PARAMS
    row = F_OBS + side * OBS_SIZE
    skill = iparams[p + P_SKILL] / 100.0
    other_skill = iparams[(1 - side) * SIDE_PARAMS + P_SKILL] / 100.0
    ranged = _bit(iparams[p + P_RANGED] != 0)
    dual_allowed = _bit(iparams[p + P_DUAL_ALLOWED] != 0)
    for i in range(AHEAD_ENVS):
        floats[row, i] = np.float32(lanes[r + FLESH, i]) / np.float32(3.0)
        floats[row + 1, i] = np.float32(lanes[r + SERIOUS, i]) / np.float32(2.0)
        floats[row + 2, i] = np.float32(lanes[o + FLESH, i]) / np.float32(3.0)
        floats[row + 3, i] = np.float32(lanes[o + SERIOUS, i]) / np.float32(2.0)
        floats[row + 4, i] = lanes[ENGAGED, i]
        floats[row + 5, i] = lanes[r + COVER, i]
        floats[row + 6, i] = lanes[o + COVER, i]
        floats[row + 7, i] = lanes[r + DUAL, i]
        floats[row + 8, i] = lanes[o + DUAL, i]
        floats[row + 9, i] = skill
        floats[row + 10, i] = other_skill
        floats[row + 11, i] = np.float32(min(lanes[r + FAILED_FLEE, i], _FIVE)) / np.float32(5.0)
        floats[row + 12, i] = lanes[r + TARGETED, i]
        floats[row + 13, i] = floats[F_ROUND, i]
        floats[row + 14, i] = floats[F_TIME, i]
        floats[row + 15, i] = ranged
        lanes[MASK + side, i] = _legal_bits(lanes[ENGAGED, i], lanes[r + COVER, i], ranged, dual_allowed)


@njit(inline="always")
def d100_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, first, ahead):
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
    passes = iparams[G_PASSES]
    start_engaged = iparams[G_START_ENGAGED]
    if passes < 1 or passes > 100 or max_steps < 1 or max_steps > 1_000_000 or _flag(start_engaged) == 0:
        return 0
    for side in range(2):
        p = side * SIDE_PARAMS
        if iparams[p + P_SKILL] < -1000 or iparams[p + P_SKILL] > 1000:
            return 0
        for k in range(4):
            if not (-1 <= iparams[p + P_LETHALITY + k] <= 101 and -1 <= iparams[p + P_SERIOUS + k] <= 101):
                return 0
    magic = np.uint64(((1 << 32) + passes - 1) // passes)
    n_sides = 2 if policies[1] == POLICY_EXTERNAL else 1
    # Borrowed (no reference counting in the loops); the owners are used again at the end, so they live.
    # Not zeroed: each row is written before it is read but for the three below (zeroing the 10 KB
    # took ~2 ns an env when timed alone).
    lanes_owner = np.empty((ROWS, AHEAD_ENVS), dtype=np.int32)
    floats_owner = np.empty((FLOAT_ROWS, AHEAD_ENVS), dtype=np.float32)
    lanes = borrow(lanes_owner)
    floats = borrow(floats_owner)

    # Gather; a state the reference's own steps never leave goes to the reference.
    for i in range(AHEAD_ENVS):
        lanes[POSITION, i] = 0
        lanes[SIDE_ROW[0] + DEALT, i] = 0
        lanes[SIDE_ROW[1] + DEALT, i] = 0
        lanes[SLOW, i] = 1
        lanes[CHOICE, i] = NO_ACTION
        lanes[SIDE_ROW[1] + CHOICE, i] = NO_ACTION
    for i in range(count):
        e = np.uint64(first + i)  # unsigned: Numba adds no negative-index wraparound to each access
        engaged = _copied(lanes, ENGAGED, i, state[e, S_ENGAGED])
        flags0, counters0, flesh0 = _gather_side(lanes, state, actions, e, i, 0)
        flags1, counters1, flesh1 = _gather_side(lanes, state, actions, e, i, 1)
        t = state[e, S_T]
        bad = ((np.uint64(t) >= np.uint64(max_steps)) | (np.uint64(engaged | flags0 | flags1) > np.uint64(1))
               | (np.uint64(counters0 | counters1) >= np.uint64(1 << 30)) | (np.uint64(flesh0) > np.uint64(2))
               | (np.uint64(flesh1) > np.uint64(2)))
        lanes[SLOW, i] = 1 if bad else 0
        lanes[RESET, i] = 1 if state[e, S_NEEDS_RESET] != 0 else 0
        lanes[T, i] = 0 if bad else t
    for j in range(4):  # a loop of its own: contiguous rows, vectorised
        for i in range(AHEAD_ENVS):
            lanes[WORD + j, i] = np.int32(np.uint32(ahead[_ROW[5 + j] + i]))
    for i in range(AHEAD_ENVS):
        lanes[NEW_ROUND, i] = 1 if _into_round(np.int64(lanes[T, i]), passes, magic) == 0 else 0

    # Choices, judged legal on the state at the start of the pass.
    for side in range(2):
        r = SIDE_ROW[side]
        p = side * SIDE_PARAMS
        ranged = _bit(iparams[p + P_RANGED] != 0)
        dual_allowed = _bit(iparams[p + P_DUAL_ALLOWED] != 0)
        scripted = policies[side] == POLICY_SCRIPTED
        for i in range(AHEAD_ENVS):
            legal = _legal_bits(lanes[ENGAGED, i], lanes[r + COVER, i], ranged, dual_allowed)
            choice = np.int32((A_ATTACK if legal & 1 else A_PRESS) if scripted else lanes[r + CHOICE, i])
            choice = np.int32(choice if (legal >> choice) & 1 else NO_ACTION)
            lanes[SLOW, i] |= _bit(choice == A_FLEE) | _bit(choice == A_DISENGAGE)
            lanes[r + CHOICE, i] = choice
            lanes[r + DEFEND, i] = _bit(choice == A_DEFEND)
            lanes[r + TARGETED, i] &= lanes[NEW_ROUND, i] ^ _ONE  # a new round: "targeted" starts afresh
    # Quick attacks land first, together; then standard attacks of the sides still standing. Each
    # side's attack is written out with its side a constant, so LLVM sees its rows' fixed offsets
    # and vectorises the loop without alias checks (a loop variable side kept it scalar: 3x slower).
    if _choosing(lanes, 0, A_QUICK_ATTACK, 0):
        _attack(lanes, iparams, 0, 1)
    if _choosing(lanes, 1, A_QUICK_ATTACK, 0):
        _attack(lanes, iparams, 1, 1)
    for side in range(2):
        r = SIDE_ROW[side]
        for i in range(AHEAD_ENVS):
            lanes[r + STANDING, i] = _bit(lanes[r + LETHAL, i] == 0)
    _choosing(lanes, 0, A_ATTACK, 1)
    _attack(lanes, iparams, 0, 0)
    _choosing(lanes, 1, A_ATTACK, 1)
    _attack(lanes, iparams, 1, 0)
    # Movement, the outcome, and a reset lane's next episode.
    s0 = SIDE_ROW[0]
    s1 = SIDE_ROW[1]
    start_engaged32 = np.int32(start_engaged)  # both validated: 0 or 1, and 1 .. 10^6
    max_steps32 = np.int32(max_steps)
    for i in range(AHEAD_ENVS):
        engaged = lanes[ENGAGED, i]
        press = np.int32((engaged ^ _ONE) & ((_bit(lanes[s0 + CHOICE, i] == A_PRESS) & (lanes[s0 + ESCAPED, i] ^ _ONE))
                                             | (_bit(lanes[s1 + CHOICE, i] == A_PRESS) & (lanes[s1 + ESCAPED, i] ^ _ONE))))
        reset = lanes[RESET, i]
        keep = np.int32(-(reset ^ _ONE))
        _move(lanes, s0, i, press, keep)
        _move(lanes, s1, i, press, keep)
        lanes[ENGAGED, i] = start_engaged32 if reset else np.int32(engaged | press)
        out0 = _bit(lanes[s0 + LETHAL, i] > 0)
        out1 = _bit(lanes[s1 + LETHAL, i] > 0)
        step = np.int32((lanes[T, i] + _ONE) & keep)
        ended = np.int32(out0 | out1 | lanes[s0 + ESCAPED, i] | lanes[s1 + ESCAPED, i])
        lanes[ENDED, i] = ended
        lanes[CUT, i] = (ended ^ _ONE) & _bit(step >= max_steps32) & keep
        outcome = float(out1 & (out0 ^ 1)) - float(out0 & (out1 ^ 1))
        shaped = shaping * float((lanes[s0 + DEALT, i] - lanes[s1 + DEALT, i]) & keep) / 6.0
        floats[F_REWARD0, i] = outcome + shaped
        floats[F_REWARD1, i] = -outcome - shaped
        lanes[T, i] = step
        floats[F_ROUND, i] = np.float32(_into_round(np.int64(step), passes, magic)) / np.float32(passes)
        floats[F_TIME, i] = np.float32(step) / np.float32(max_steps)

    # The observations (the reference's _write_obs) and legal actions of every lane, in rows; each
    # side's loop written out with its side a constant (as the attacks), so LLVM vectorises it.
    _observe(lanes, floats, iparams, 0)
    if n_sides == 2:
        _observe(lanes, floats, iparams, 1)

    # The outputs of the lanes stepped (those of the others are left as they were), in loops of
    # their own: fewer arrays at once (the registers), and masked stores where vectorised.
    for i in range(AHEAD_ENVS):
        lanes[STEPPED, i] = (lanes[SLOW, i] ^ _ONE) | lanes[RESET, i]
    for i in range(count):
        if lanes[STEPPED, i]:
            e = np.uint64(first + i)
            reward[e, 0] = floats[F_REWARD0, i]
            reward[e, 1] = floats[F_REWARD1, i]
            terminated[e] = lanes[ENDED, i]
            truncated[e] = lanes[CUT, i]
    mask_words = mask.view(np.uint64)  # an env side's eight mask bytes are one word
    for side in range(n_sides):
        row = F_OBS + side * OBS_SIZE
        for i in range(count):
            if lanes[STEPPED, i]:
                e = np.uint64(first + i)
                for k in range(OBS_SIZE):
                    obs[e, side, k] = floats[row + k, i]
                mask_words[e, side, 0] = _mask_bytes(np.uint64(lanes[MASK + side, i]))
    # The state, of the lanes stepped only.
    done = 0
    for i in range(count):
        if not lanes[STEPPED, i]:
            continue
        e = np.uint64(first + i)
        reset = np.int64(lanes[RESET, i])
        state[e, S_EPISODE] += reset
        state[e, S_T] = lanes[T, i]
        state[e, S_RETRIES] &= reset - 1  # 0 at a reset
        state[e, S_NEEDS_RESET] = lanes[ENDED, i] | lanes[CUT, i]
        state[e, S_ENGAGED] = lanes[ENGAGED, i]
        for side in range(2):
            r = SIDE_ROW[side]
            s = S_SIDE + side * SIDE_STATE
            state[e, s + S_FLESH] = lanes[r + FLESH, i]
            state[e, s + S_SERIOUS] = lanes[r + SERIOUS, i]
            state[e, s + S_LETHAL] = lanes[r + LETHAL, i]
            state[e, s + S_COVER] = lanes[r + COVER, i]
            state[e, s + S_DUAL] = lanes[r + DUAL, i]
            state[e, s + S_FAILED_FLEE] = lanes[r + FAILED_FLEE, i]
            state[e, s + S_TARGETED] = lanes[r + TARGETED, i]
            state[e, s + S_ESCAPED] = lanes[r + ESCAPED, i]
        done |= 1 << i
    lanes_owner[0, 0] = floats_owner[0, 0]
    return done
