"""TSS duel step kernels for Numba; the reference (and the rules) is combatsim.rl.tss_reference."""

from __future__ import annotations

import numpy as np

from ..rng_nb import seed_key
from ._stream_nb import (
    AHEAD_ENVS,
    new_ahead,
    new_state,
    rejection_threshold,
    step_kernels,
    stream_ahead,
    stream_bounded,
    stream_die,
    stream_retries,
    stream_seek,
    stream_seek_ahead,
    stream_word,
)
from .tss_lanes_nb import tss_lanes

#: The big helpers stay calls (on the borrowed arrays): inlining them too took minutes to compile.
_CALLED = ("_act", "_attack", "_new_round", "_init_episode")


kernel = step_kernels(called=_CALLED)


# ---- shared body (identical in kernels/rl/tss_nb.py) ----
# Per side: attack skill O/G/A, action check O/G/A and actions per round, base situation steps,
# two weapons, ambidexterity, damage track (count, sides, modifier) x (Ordinary, Good, Amazing),
# damage type per tier (1 stun, 2 wound, 3 mortal), weapon grade, armour die (sides against the
# other side's damage class, 0: none), armour grade, durability tracks stun/wound/mortal.
P_SKILL = 0
P_ACTION_CHECK = 3
P_ACTIONS_PER_ROUND = 6
P_STEPS = 7
P_TWO_WEAPONS = 8
P_AMBIDEXTERITY = 9
P_TRACK = 10
P_TYPE = 19
P_WEAPON_GRADE = 22
P_ARMOUR_DIE = 23
P_ARMOUR_GRADE = 24
P_DURABILITY = 25
SIDE_PARAMS = 28
G_MAX_STEPS = 2 * SIDE_PARAMS
G_ONE_STEP_SHIFT = G_MAX_STEPS + 1
PARAMS = G_MAX_STEPS + 2

S_EPISODE, S_T, S_RETRIES, S_NEEDS_RESET, S_PHASE, S_FIRST_MOVER = 0, 1, 2, 3, 4, 5
S_SIDE = 6
S_STUN, S_WOUND, S_MORTAL, S_FIRST_PHASE, S_ACTIONS_LEFT, S_AIMED = 0, 1, 2, 3, 4, 5
SIDE_STATE = 6
STATE_SIZE = S_SIDE + 2 * SIDE_STATE

A_ATTACK, A_AIM, A_TWO_WEAPON_ATTACK, A_WAIT = 0, 1, 2, 3
ACTIONS = 4
OBS_SIZE = 20
MAX_DICE = 10
#: Situation penalties beyond +20 steps count as +20 (16d20): no attack total can then succeed
#: against a skill below 17 anyway.
MAX_STEPS_PENALTY = 20
#: Item words per step: 2 policy words, per side 2 attacks x (control + 16 d20 + 10 damage dice +
#: armour), and the next round's 2 action checks and tie die.
WORDS_PER_STEP = 120
D20 = 20
TIER_FAILURE, TIER_ORDINARY, TIER_GOOD, TIER_AMAZING = 0, 1, 2, 3

POLICY_EXTERNAL, POLICY_SCRIPTED, POLICY_RANDOM = 0, 1, 2


@kernel
def attack_tier(control, total, ordinary, good, amazing):
    """Degree of success of an attack roll (control d20 and the total with the situation die)."""
    if control == 20 or total > ordinary:  # control 20: critical failure whatever the total
        return TIER_FAILURE
    if total <= amazing:
        return TIER_AMAZING
    if total <= good:
        return TIER_GOOD
    return TIER_ORDINARY


@kernel
def situation_roll(steps, rng, threshold20):
    """Signed situation die of ``steps`` on the Difficulty Scale (negative: a bonus)."""
    if steps == 0:
        return 0
    if steps < 0:
        steps = max(steps, -5)  # bonuses stop at -d20
        sides = 20
        if steps == -1:
            sides = 4
        elif steps == -2:
            sides = 6
        elif steps == -3:
            sides = 8
        elif steps == -4:
            sides = 12
        return -stream_die(rng, np.uint64(sides), rejection_threshold(np.uint64(sides)))
    steps = min(steps, MAX_STEPS_PENALTY)
    if steps <= 5:
        sides = 20
        if steps == 1:
            sides = 4
        elif steps == 2:
            sides = 6
        elif steps == 3:
            sides = 8
        elif steps == 4:
            sides = 12
        return stream_die(rng, np.uint64(sides), rejection_threshold(np.uint64(sides)))
    count = steps - 4  # +6: 2d20, +7: 3d20, +N beyond +7: (N-4)d20
    total = 0
    for _ in range(count):
        total += stream_die(rng, np.uint64(D20), threshold20)
    return total


@kernel
def dazed(iparams, state, e, side):
    """Cumulative dazed penalty of ``side``."""
    p = side * SIDE_PARAMS + P_DURABILITY
    s = S_SIDE + side * SIDE_STATE
    penalty = state[e, s + S_MORTAL]
    if 2 * state[e, s + S_STUN] >= iparams[p]:
        penalty += 1
    if 2 * state[e, s + S_WOUND] >= iparams[p + 1]:
        penalty += 1
    return penalty


@kernel
def is_out(iparams, state, e, side):
    """Knocked out (all stun or all wounds lost) or dying (all mortal lost)."""
    p = side * SIDE_PARAMS + P_DURABILITY
    s = S_SIDE + side * SIDE_STATE
    return (state[e, s + S_STUN] >= iparams[p] or state[e, s + S_WOUND] >= iparams[p + 1]
            or state[e, s + S_MORTAL] >= iparams[p + 2])


@kernel
def _can_act(iparams, state, e, side):
    s = S_SIDE + side * SIDE_STATE
    return (state[e, S_PHASE] >= state[e, s + S_FIRST_PHASE] and state[e, s + S_ACTIONS_LEFT] > 0
            and not is_out(iparams, state, e, side))


@kernel
def _legal(iparams, state, e, side, action):
    if action == A_WAIT:
        return True
    if action < 0 or action >= ACTIONS or not _can_act(iparams, state, e, side):
        return False
    if action == A_TWO_WEAPON_ATTACK:
        return iparams[side * SIDE_PARAMS + P_TWO_WEAPONS] != 0
    return True


@kernel
def _write_obs(iparams, state, e, obs, mask, n_sides):
    # Side 1's view is written only when someone outside the kernel plays it.
    for side in range(n_sides):
        other = 1 - side
        s = S_SIDE + side * SIDE_STATE
        o = S_SIDE + other * SIDE_STATE
        for k in range(3):
            obs[e, side, k] = min(state[e, s + k] / iparams[side * SIDE_PARAMS + P_DURABILITY + k], 1.0)
            obs[e, side, 3 + k] = min(state[e, o + k] / iparams[other * SIDE_PARAMS + P_DURABILITY + k], 1.0)
        for k in range(4):
            obs[e, side, 6 + k] = 1.0 if state[e, S_PHASE] == k else 0.0
        obs[e, side, 10] = 1.0 if _can_act(iparams, state, e, side) else 0.0
        obs[e, side, 11] = state[e, s + S_ACTIONS_LEFT] / iparams[side * SIDE_PARAMS + P_ACTIONS_PER_ROUND]
        obs[e, side, 12] = 1.0 if _can_act(iparams, state, e, other) else 0.0
        obs[e, side, 13] = 1.0 if state[e, s + S_AIMED] else 0.0
        obs[e, side, 14] = min(dazed(iparams, state, e, side), 5) / 5.0
        obs[e, side, 15] = min(dazed(iparams, state, e, other), 5) / 5.0
        obs[e, side, 16] = state[e, s + S_FIRST_PHASE] / 3.0
        obs[e, side, 17] = state[e, o + S_FIRST_PHASE] / 3.0
        obs[e, side, 18] = 1.0 if state[e, S_FIRST_MOVER] == side else 0.0
        obs[e, side, 19] = state[e, S_T] / iparams[G_MAX_STEPS]
        for a in range(ACTIONS):
            mask[e, side, a] = 1 if _legal(iparams, state, e, side, a) else 0


@kernel
def _new_round(iparams, state, e, rng, threshold20):
    """Action checks (side 0's d20, side 1's d20, then the tie die, always drawn)."""
    state[e, S_PHASE] = 0
    for side in range(2):
        p = side * SIDE_PARAMS
        s = S_SIDE + side * SIDE_STATE
        check = stream_die(rng, np.uint64(D20), threshold20) + dazed(iparams, state, e, side)
        phase = 3
        if check <= iparams[p + P_ACTION_CHECK + 2]:
            phase = 0
        elif check <= iparams[p + P_ACTION_CHECK + 1]:
            phase = 1
        elif check <= iparams[p + P_ACTION_CHECK]:
            phase = 2
        state[e, s + S_FIRST_PHASE] = phase
        state[e, s + S_ACTIONS_LEFT] = iparams[p + P_ACTIONS_PER_ROUND]
    tie = stream_die(rng, np.uint64(2), np.uint64(0)) - 1
    score0 = iparams[P_ACTION_CHECK]
    score1 = iparams[SIDE_PARAMS + P_ACTION_CHECK]
    state[e, S_FIRST_MOVER] = 0 if score0 > score1 else (1 if score1 > score0 else tie)


@kernel
def _init_episode(iparams, seeds, state, e, rng, threshold20):
    state[e, S_T] = 0
    state[e, S_NEEDS_RESET] = 0
    for i in range(S_SIDE, STATE_SIZE):
        state[e, i] = 0
    k0, k1 = seed_key(seeds[e])
    stream_seek(rng, k0, k1, state[e, S_EPISODE], 0, 0)  # slot 0: the first round's action checks
    _new_round(iparams, state, e, rng, threshold20)
    state[e, S_RETRIES] = stream_retries(rng)


@kernel
def _choose(iparams, state, e, side, policy, external, rng):
    if policy == POLICY_EXTERNAL:
        return external
    if policy == POLICY_SCRIPTED:
        return A_ATTACK if _can_act(iparams, state, e, side) else A_WAIT  # attack whenever able
    word = stream_word(rng)
    legal = 0
    for a in range(ACTIONS):
        legal += 1 if _legal(iparams, state, e, side, a) else 0
    pick = stream_bounded(rng, word, np.uint64(legal), rejection_threshold(np.uint64(legal)))
    for a in range(ACTIONS):
        if _legal(iparams, state, e, side, a):
            if pick == 0:
                return a
            pick -= 1
    return -1


@kernel
def _attack(iparams, state, e, side, steps, rng, threshold20):
    """One attack roll of ``side`` at ``steps`` more (beyond base, dazed, aim); returns the points dealt."""
    p = side * SIDE_PARAMS
    q = (1 - side) * SIDE_PARAMS
    d = S_SIDE + (1 - side) * SIDE_STATE
    control = stream_die(rng, np.uint64(D20), threshold20)
    total = control + situation_roll(iparams[p + P_STEPS] + dazed(iparams, state, e, side) + steps, rng, threshold20)
    result = attack_tier(control, total, iparams[p + P_SKILL], iparams[p + P_SKILL + 1], iparams[p + P_SKILL + 2])
    if result == TIER_FAILURE:
        return 0
    track = p + P_TRACK + 3 * (result - 1)
    sides = np.uint64(iparams[track + 1])
    damage = iparams[track + 2]
    for _ in range(iparams[track]):
        damage += stream_die(rng, sides, rejection_threshold(sides))
    damage = max(damage, 0)
    kind = iparams[p + P_TYPE + result - 1]
    armour = iparams[q + P_ARMOUR_DIE]
    if armour > 0:
        shift = iparams[p + P_WEAPON_GRADE] - iparams[q + P_ARMOUR_GRADE]
        if iparams[G_ONE_STEP_SHIFT]:
            shift = min(max(shift, -1), 1)
        kind = min(max(kind + shift, 0), 3)
    if kind == 0:
        return 0  # shifted to nothing
    secondary = damage // 2  # from the pre-armour amount, no cascade
    stun = 0
    wound = 0
    if kind == 3:
        wound = secondary
        stun = secondary
    elif kind == 2:
        stun = secondary
    primary = damage
    if armour > 0:
        primary = max(0, damage - stream_die(rng, np.uint64(armour), rejection_threshold(np.uint64(armour))))
    mortal = 0
    if kind == 3:
        mortal = primary
    elif kind == 2:
        wound += primary
    else:
        stun += primary
    state[e, d + S_MORTAL] += mortal
    state[e, d + S_WOUND] += wound
    state[e, d + S_STUN] += stun
    return mortal + wound + stun


@kernel
def _act(iparams, state, e, side, action, rng, threshold20):
    """Carry out ``side``'s action this phase; returns the damage points dealt."""
    s = S_SIDE + side * SIDE_STATE
    if action == A_WAIT or not _legal(iparams, state, e, side, action):
        return 0
    state[e, s + S_ACTIONS_LEFT] -= 1
    if action == A_AIM:
        state[e, s + S_AIMED] = 1
        return 0
    aim = state[e, s + S_AIMED]
    state[e, s + S_AIMED] = 0
    if action == A_ATTACK:
        return _attack(iparams, state, e, side, -aim, rng, threshold20)
    ambidextrous = iparams[side * SIDE_PARAMS + P_AMBIDEXTERITY]
    main = 0 if ambidextrous else 2
    dealt = _attack(iparams, state, e, side, main - aim, rng, threshold20)
    if not is_out(iparams, state, e, 1 - side):
        dealt += _attack(iparams, state, e, side, main + 2, rng, threshold20)
    return dealt


@kernel
def tss_reset(iparams, seeds, state, which, obs, mask):
    rng = new_state()
    threshold20 = rejection_threshold(np.uint64(D20))
    for e in range(state.shape[0]):
        if which[e]:
            _init_episode(iparams, seeds, state, e, rng, threshold20)
            _write_obs(iparams, state, e, obs, mask, 2)


@kernel
def tss_step(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask):
    """One phase in every env; an env whose episode ended last step resets instead (NEXT_STEP)."""
    rng = new_state()
    _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng)


@kernel
def tss_rollout(iparams, seeds, state, steps, policies, shaping, obs, reward, terminated, truncated, mask, totals):
    rng = new_state()
    actions = np.zeros((state.shape[0], 2), dtype=np.int64)
    for _ in range(steps):
        _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng)
        for e in range(state.shape[0]):
            if terminated[e] or truncated[e]:
                if reward[e, 0] > 0.5:
                    totals[0] += 1
                elif reward[e, 1] > 0.5:
                    totals[1] += 1
                else:
                    totals[2] += 1
        totals[3] += state.shape[0]


@kernel
def _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng):
    threshold20 = rejection_threshold(np.uint64(D20))
    n_sides = 2 if policies[1] == POLICY_EXTERNAL else 1
    ahead = new_ahead(rng)
    done = 0
    for e in range(state.shape[0]):
        slot = e % AHEAD_ENVS
        if slot == 0:  # the first block of the next envs' steps, in one pass
            stream_ahead(seeds, state, e, WORDS_PER_STEP, ahead)
            done = tss_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, e,
                             ahead, seeds)
        if (done >> slot) & 1:  # stepped in lockstep with its neighbours
            continue
        terminated[e] = False
        truncated[e] = False
        reward[e, 0] = 0.0
        reward[e, 1] = 0.0
        if state[e, S_NEEDS_RESET]:
            state[e, S_EPISODE] += 1
            _init_episode(iparams, seeds, state, e, rng, threshold20)
            _write_obs(iparams, state, e, obs, mask, n_sides)
            continue
        t = state[e, S_T] + 1
        state[e, S_T] = t
        k0, k1 = seed_key(seeds[e])
        stream_seek_ahead(rng, k0, k1, state[e, S_EPISODE], t * WORDS_PER_STEP, state[e, S_RETRIES],
                          ahead, slot)
        c0 = _choose(iparams, state, e, 0, policies[0], actions[e, 0], rng)
        c1 = _choose(iparams, state, e, 1, policies[1], actions[e, 1], rng)
        first = state[e, S_FIRST_MOVER]
        dealt0 = 0
        dealt1 = 0
        for turn in range(2):
            side = first if turn == 0 else 1 - first
            c = c0 if side == 0 else c1
            dealt = _act(iparams, state, e, side, c, rng, threshold20)  # an out side cannot act
            if side == 0:
                dealt0 += dealt
            else:
                dealt1 += dealt
        out0 = is_out(iparams, state, e, 0)
        out1 = is_out(iparams, state, e, 1)
        if not (out0 or out1):
            state[e, S_PHASE] += 1
            if state[e, S_PHASE] == 4:
                _new_round(iparams, state, e, rng, threshold20)
        state[e, S_RETRIES] = stream_retries(rng)
        outcome = (1.0 if out1 and not out0 else 0.0) - (1.0 if out0 and not out1 else 0.0)
        total0 = iparams[P_DURABILITY] + iparams[P_DURABILITY + 1] + iparams[P_DURABILITY + 2]
        total1 = (iparams[SIDE_PARAMS + P_DURABILITY] + iparams[SIDE_PARAMS + P_DURABILITY + 1]
                  + iparams[SIDE_PARAMS + P_DURABILITY + 2])
        shaped = shaping * (dealt0 / total1 - dealt1 / total0)
        reward[e, 0] = outcome + shaped
        reward[e, 1] = -outcome - shaped
        terminated[e] = out0 or out1
        truncated[e] = (not terminated[e]) and t >= iparams[G_MAX_STEPS]
        if terminated[e] or truncated[e]:
            state[e, S_NEEDS_RESET] = 1
        _write_obs(iparams, state, e, obs, mask, n_sides)


@kernel
def tss_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out):
    """Registry kernel: items are the episodes start..start+count-1 of env seed ``seed``, both sides
    on built-in ``policies`` (1 scripted, 2 random). ``counts`` gains [side 0 wins, side 1 wins,
    other ends, steps]; ``outcome_out`` (int64, per episode or empty) gets +1 / -1 / 0."""
    rng = new_state()
    threshold20 = rejection_threshold(np.uint64(20))
    seeds = np.zeros(1, dtype=np.uint64)
    seeds[0] = seed
    state = np.zeros((1, STATE_SIZE), dtype=np.int64)
    actions = np.zeros((1, 2), dtype=np.int64)
    obs = np.zeros((1, 2, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((1, 2, ACTIONS), dtype=np.int8)
    reward = np.zeros((1, 2), dtype=np.float32)
    terminated = np.zeros(1, dtype=np.uint8)
    truncated = np.zeros(1, dtype=np.uint8)
    for k in range(count):
        state[0, S_EPISODE] = start + k
        _init_episode(iparams, seeds, state, 0, rng, threshold20)
        while True:
            _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng)
            counts[3] += 1
            if terminated[0] or truncated[0]:
                break
        outcome = 0
        if reward[0, 0] > 0.5:
            outcome = 1
            counts[0] += 1
        elif reward[0, 1] > 0.5:
            outcome = -1
            counts[1] += 1
        else:
            counts[2] += 1
        if outcome_out.shape[0]:
            outcome_out[k] = outcome
