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
SIDE_ROWS = 12
SIDE_ROW = (WORD + 4, WORD + 4 + SIDE_ROWS)
ROWS = WORD + 4 + 2 * SIDE_ROWS
# Rows of floats: the step's time observations, the rewards, then each side's observation.
F_ROUND, F_TIME, F_REWARD0, F_REWARD1, F_OBS = 0, 1, 2, 3, 4
FLOAT_ROWS = F_OBS + 2 * OBS_SIZE
assert ACTIONS == 8  # an env side's mask row is one 64-bit word

_U32 = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
_HUNDRED = np.uint64(100)


@njit(inline="always")
def _legal_bits(engaged, cover, ranged, dual_allowed):
    attack = engaged | ranged
    return (attack | attack << 1 | 1 << A_DEFEND | (engaged ^ 1) << A_FLEE | 1 << A_PRESS | engaged << A_DISENGAGE
            | ((engaged | cover) ^ 1) << A_TAKE_COVER | dual_allowed << A_TOGGLE_DUAL)


@njit(inline="always")
def _pick(value, other, take):
    """``other`` where ``take`` (0 or 1), else ``value``: masks, not a branch (LLVM turned a chain
    of conditional expressions on one variable into a switch, and a loop with one is not vectorised)."""
    return value ^ ((value ^ other) & -take)


@njit(inline="always")
def _word_at(w0, w1, w2, w3, position):
    word = _pick(np.int64(w0), np.int64(w1), np.int64(position == 1))
    word = _pick(word, np.int64(w2), np.int64(position == 2))
    word = _pick(word, np.int64(w3), np.int64(position == 3))
    return np.uint64(np.uint32(word))


@njit(inline="always")
def _roll(word):
    return np.int64((word * _HUNDRED) >> _SHIFT) + 1


@njit(inline="always")
def _rejected(word):
    return 1 if (word * _HUNDRED) & _U32 < np.uint64(REJECT_BELOW) else 0


@njit(inline="always")
def _into_round(x, passes, magic):
    return x - passes * np.int64((np.uint64(x) * magic) >> _SHIFT)


@njit(inline="always")
def _attack(lanes, params, side, quick):
    """One side's attack in every lane where ACTIVE (d100_lanes.h's d100_lanes_attack)."""
    a = SIDE_ROW[side]
    d = SIDE_ROW[1 - side]
    p = side * SIDE_PARAMS
    skill = params[p + P_SKILL]
    ranged = 1 if params[p + P_RANGED] != 0 else 0
    nonlethal = -1 if params[p + P_NONLETHAL] != 0 else 0
    lethality = (params[p + P_LETHALITY], params[p + P_LETHALITY + 1], params[p + P_LETHALITY + 2],
                 params[p + P_LETHALITY + 3])
    seriousness = (params[p + P_SERIOUS], params[p + P_SERIOUS + 1], params[p + P_SERIOUS + 2],
                   params[p + P_SERIOUS + 3])
    for i in range(AHEAD_ENVS):
        on = np.int64(lanes[ACTIVE, i])
        dual = np.int64(lanes[a + DUAL, i])
        cover = ranged & np.int64(lanes[d + COVER, i])
        full = skill - 20 * (quick + np.int64(lanes[d + DEFEND, i]) + dual + cover)
        capped = min(full, 95)
        at = np.int64(lanes[POSITION, i])
        w0, w1, w2, w3 = lanes[WORD, i], lanes[WORD + 1, i], lanes[WORD + 2, i], lanes[WORD + 3, i]
        word = _word_at(w0, w1, w2, w3, at & 3)
        first = _word_at(w0, w1, w2, w3, (at + 1) & 3)
        second = _word_at(w0, w1, w2, w3, (at + 2) & 3)
        hit = on & (1 if _roll(word) <= capped else 0)
        both = hit & dual
        late0 = 1 if at > 3 else 0
        late1 = 1 if at > 2 else 0
        late2 = 1 if at > 1 else 0
        lanes[SLOW, i] |= (on & (_rejected(word) | late0)) | (hit & (_rejected(first) | late1)) | (
            both & (_rejected(second) | late2))
        lanes[POSITION, i] = at + on + hit + both
        lanes[d + TARGETED, i] |= on
        lethal_bar = _pick(_pick(lethality[0], lethality[1], dual), _pick(lethality[2], lethality[3], dual), cover)
        serious_bar = _pick(_pick(seriousness[0], seriousness[1], dual), _pick(seriousness[2], seriousness[3], dual),
                            cover)
        roll1 = _roll(first)
        roll2 = _roll(second)
        lethal1 = 1 if roll1 <= lethal_bar else 0
        lethal2 = both & (1 if roll2 <= lethal_bar else 0)
        serious1 = (1 if roll1 <= serious_bar else 0) & (lethal1 ^ 1)
        serious2 = both & (1 if roll2 <= serious_bar else 0) & (lethal2 ^ 1)
        lethals = -hit & (lethal1 + lethal2)
        seriouses = -hit & (serious1 + serious2)
        fleshes = hit + both - lethals - seriouses
        # A nonlethal weapon's lethal result is serious and its flesh wounds do not count.
        seriouses += lethals & nonlethal
        lethals &= ~nonlethal
        fleshes &= ~nonlethal
        lanes[a + DEALT, i] += 6 * lethals + 3 * seriouses + fleshes
        # Escalation from at most two new wounds on a flesh <= 2, serious <= 1 state.
        flesh = np.int64(lanes[d + FLESH, i]) + fleshes
        escalated = 1 if flesh >= 3 else 0
        serious_total = np.int64(lanes[d + SERIOUS, i]) + seriouses + escalated
        lanes[d + FLESH, i] = flesh - 3 * escalated
        lanes[d + SERIOUS, i] = serious_total & 1
        lanes[d + LETHAL, i] += lethals + (serious_total >> 1)


@njit(inline="always")
def _choosing(lanes, side, action, standing_only):
    """Marks ACTIVE the lanes where ``side`` chose ``action`` (and, if asked, is still standing);
    returns whether any is."""
    r = SIDE_ROW[side]
    any_active = 0
    for i in range(AHEAD_ENVS):
        active = (1 if lanes[r + CHOICE, i] == action else 0) & (lanes[r + STANDING, i] if standing_only else 1)
        lanes[ACTIVE, i] = active
        any_active |= active
    return any_active


@njit(inline="always")
def _move(lanes, r, i, press, keep):
    """One side's cover and dual wield after the pass's movement; a reset lane's side starts afresh."""
    taking_cover = 1 if lanes[r + CHOICE, i] == A_TAKE_COVER else 0
    toggling = 1 if lanes[r + CHOICE, i] == A_TOGGLE_DUAL else 0
    lanes[r + COVER, i] = (lanes[r + COVER, i] | taking_cover) & (press ^ 1) & keep
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
        flags = (state[e, S_ENGAGED] | state[e, S_SIDE + S_SERIOUS] | state[e, S_SIDE + S_COVER]
                 | state[e, S_SIDE + S_DUAL] | state[e, S_SIDE + S_TARGETED] | state[e, S_SIDE + S_ESCAPED]
                 | state[e, S_SIDE + SIDE_STATE + S_SERIOUS] | state[e, S_SIDE + SIDE_STATE + S_COVER]
                 | state[e, S_SIDE + SIDE_STATE + S_DUAL] | state[e, S_SIDE + SIDE_STATE + S_TARGETED]
                 | state[e, S_SIDE + SIDE_STATE + S_ESCAPED])
        counters = (state[e, S_SIDE + S_LETHAL] | state[e, S_SIDE + S_FAILED_FLEE]
                    | state[e, S_SIDE + SIDE_STATE + S_LETHAL] | state[e, S_SIDE + SIDE_STATE + S_FAILED_FLEE])
        bad = ((np.uint64(state[e, S_T]) >= np.uint64(max_steps)) | (np.uint64(flags) > np.uint64(1))
               | (np.uint64(counters) >= np.uint64(1 << 30)) | (np.uint64(state[e, S_SIDE + S_FLESH]) > np.uint64(2))
               | (np.uint64(state[e, S_SIDE + SIDE_STATE + S_FLESH]) > np.uint64(2)))
        lanes[SLOW, i] = 1 if bad else 0
        lanes[RESET, i] = 1 if state[e, S_NEEDS_RESET] != 0 else 0
        lanes[T, i] = 0 if bad else state[e, S_T]
        lanes[ENGAGED, i] = state[e, S_ENGAGED]
        for side in range(2):
            r = SIDE_ROW[side]
            s = S_SIDE + side * SIDE_STATE
            lanes[r + FLESH, i] = state[e, s + S_FLESH]
            lanes[r + SERIOUS, i] = state[e, s + S_SERIOUS]
            lanes[r + LETHAL, i] = state[e, s + S_LETHAL]
            lanes[r + COVER, i] = state[e, s + S_COVER]
            lanes[r + DUAL, i] = state[e, s + S_DUAL]
            lanes[r + TARGETED, i] = state[e, s + S_TARGETED]
            lanes[r + ESCAPED, i] = state[e, s + S_ESCAPED]
            lanes[r + FAILED_FLEE, i] = state[e, s + S_FAILED_FLEE]
            action = actions[e, side]
            lanes[r + CHOICE, i] = action if np.uint64(action) < np.uint64(ACTIONS) else NO_ACTION
        for j in range(4):
            lanes[WORD + j, i] = np.int32(np.uint32(ahead[_ROW[5 + j] + i]))
    for i in range(AHEAD_ENVS):
        lanes[NEW_ROUND, i] = 1 if _into_round(np.int64(lanes[T, i]), passes, magic) == 0 else 0

    # Choices, judged legal on the state at the start of the pass.
    for side in range(2):
        r = SIDE_ROW[side]
        p = side * SIDE_PARAMS
        ranged = 1 if iparams[p + P_RANGED] != 0 else 0
        dual_allowed = 1 if iparams[p + P_DUAL_ALLOWED] != 0 else 0
        scripted = policies[side] == POLICY_SCRIPTED
        for i in range(AHEAD_ENVS):
            legal = _legal_bits(np.int64(lanes[ENGAGED, i]), np.int64(lanes[r + COVER, i]), ranged, dual_allowed)
            choice = (A_ATTACK if legal & 1 else A_PRESS) if scripted else np.int64(lanes[r + CHOICE, i])
            choice = choice if (legal >> choice) & 1 else NO_ACTION
            lanes[SLOW, i] |= 1 if choice in (A_FLEE, A_DISENGAGE) else 0
            lanes[r + CHOICE, i] = choice
            lanes[r + DEFEND, i] = 1 if choice == A_DEFEND else 0
            lanes[r + TARGETED, i] &= lanes[NEW_ROUND, i] ^ 1  # a new round: "targeted" starts afresh
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
            lanes[r + STANDING, i] = 1 if lanes[r + LETHAL, i] == 0 else 0
    _choosing(lanes, 0, A_ATTACK, 1)
    _attack(lanes, iparams, 0, 0)
    _choosing(lanes, 1, A_ATTACK, 1)
    _attack(lanes, iparams, 1, 0)
    # Movement, the outcome, and a reset lane's next episode.
    s0 = SIDE_ROW[0]
    s1 = SIDE_ROW[1]
    for i in range(AHEAD_ENVS):
        engaged = np.int64(lanes[ENGAGED, i])
        press = (engaged ^ 1) & (((1 if lanes[s0 + CHOICE, i] == A_PRESS else 0) & (lanes[s0 + ESCAPED, i] ^ 1))
                                 | ((1 if lanes[s1 + CHOICE, i] == A_PRESS else 0) & (lanes[s1 + ESCAPED, i] ^ 1)))
        reset = np.int64(lanes[RESET, i])
        keep = -(reset ^ 1)
        _move(lanes, s0, i, press, keep)
        _move(lanes, s1, i, press, keep)
        lanes[ENGAGED, i] = start_engaged if reset else engaged | press
        out0 = 1 if lanes[s0 + LETHAL, i] > 0 else 0
        out1 = 1 if lanes[s1 + LETHAL, i] > 0 else 0
        step = (np.int64(lanes[T, i]) + 1) & keep
        ended = out0 | out1 | lanes[s0 + ESCAPED, i] | lanes[s1 + ESCAPED, i]
        lanes[ENDED, i] = ended
        lanes[CUT, i] = (ended ^ 1) & (1 if step >= max_steps else 0) & keep
        outcome = float(out1 & (out0 ^ 1)) - float(out0 & (out1 ^ 1))
        shaped = shaping * float((lanes[s0 + DEALT, i] - lanes[s1 + DEALT, i]) & keep) / 6.0
        floats[F_REWARD0, i] = outcome + shaped
        floats[F_REWARD1, i] = -outcome - shaped
        lanes[T, i] = step
        floats[F_ROUND, i] = np.float32(_into_round(step, passes, magic)) / np.float32(passes)
        floats[F_TIME, i] = np.float32(step) / np.float32(max_steps)

    # The observations (the reference's _write_obs) and legal actions of every lane, in rows. A
    # quotient of integers below 2^24 in float32 is the reference's float64 quotient rounded to
    # float32 (53 >= 2 x 24 + 2 bits, Figueroa 1995), and vdivps divides twice vdivpd's lanes.
    for side in range(n_sides):
        r = SIDE_ROW[side]
        o = SIDE_ROW[1 - side]
        p = side * SIDE_PARAMS
        row = F_OBS + side * OBS_SIZE
        skill = iparams[p + P_SKILL] / 100.0
        other_skill = iparams[(1 - side) * SIDE_PARAMS + P_SKILL] / 100.0
        ranged = 1 if iparams[p + P_RANGED] != 0 else 0
        dual_allowed = 1 if iparams[p + P_DUAL_ALLOWED] != 0 else 0
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
            floats[row + 11, i] = np.float32(min(lanes[r + FAILED_FLEE, i], 5)) / np.float32(5.0)
            floats[row + 12, i] = lanes[r + TARGETED, i]
            floats[row + 13, i] = floats[F_ROUND, i]
            floats[row + 14, i] = floats[F_TIME, i]
            floats[row + 15, i] = ranged
            lanes[MASK + side, i] = _legal_bits(np.int64(lanes[ENGAGED, i]), np.int64(lanes[r + COVER, i]), ranged,
                                                dual_allowed)

    mask_words = mask.view(np.uint64)  # an env side's eight mask bytes are one word
    done = 0
    for i in range(count):
        if lanes[SLOW, i] and not lanes[RESET, i]:
            continue
        e = np.uint64(first + i)
        engaged = np.int64(lanes[ENGAGED, i])
        for side in range(n_sides):
            row = F_OBS + side * OBS_SIZE
            for k in range(OBS_SIZE):
                obs[e, side, k] = floats[row + k, i]
            mask_words[e, side, 0] = _mask_bytes(np.uint64(lanes[MASK + side, i]))
        reward[e, 0] = floats[F_REWARD0, i]
        reward[e, 1] = floats[F_REWARD1, i]
        terminated[e] = lanes[ENDED, i]
        truncated[e] = lanes[CUT, i]
        reset = np.int64(lanes[RESET, i])
        state[e, S_EPISODE] += reset
        state[e, S_T] = lanes[T, i]
        state[e, S_RETRIES] &= reset - 1  # 0 at a reset
        state[e, S_NEEDS_RESET] = lanes[ENDED, i] | lanes[CUT, i]
        state[e, S_ENGAGED] = engaged
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
