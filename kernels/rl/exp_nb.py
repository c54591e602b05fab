"""EXP duel step kernels for Numba; the reference (and the rules) is combatsim.rl.exp_reference."""

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
    stream_seek_ahead,
    stream_word,
)
from .exp_lanes_nb import exp_lanes

kernel = step_kernels()


# ---- shared body (identical in kernels/rl/exp_nb.py) ----
SLOTS = 3
# Per weapon slot: bonus (BP or BNP), maximum_roll, damage_adjustment, damage dice count, sides,
# modifier, rolls_per_unit (0: empty slot), burst (fully automatic), capacity (0: no ammunition).
P_BONUS, P_MAXIMUM_ROLL, P_DAMAGE_ADJUSTMENT, P_DICE_COUNT, P_DICE_SIDES, P_DICE_MODIFIER = 0, 1, 2, 3, 4, 5
P_ROLLS, P_BURST, P_CAPACITY = 6, 7, 8
SLOT_PARAMS = 9
P_HIT_POINTS, P_ARMOUR_RATING, P_SLOTS = 0, 1, 2
SIDE_PARAMS = P_SLOTS + SLOTS * SLOT_PARAMS
G_MAX_STEPS = 2 * SIDE_PARAMS
G_HIT_ON_EQUAL = G_MAX_STEPS + 1
PARAMS = G_HIT_ON_EQUAL + 1

S_EPISODE, S_T, S_RETRIES, S_NEEDS_RESET = 0, 1, 2, 3
S_SIDE = 4
S_HP, S_WEAPON, S_AMMO = 0, 1, 2
SIDE_STATE = S_AMMO + SLOTS
STATE_SIZE = S_SIDE + 2 * SIDE_STATE

A_FIRE, A_RELOAD, A_WEAPON = 0, 1, 2
ACTIONS = A_WEAPON + SLOTS
OBS_SIZE = 16
MAX_DICE = 10
MAX_ROLLS = 5
#: Item words reserved per step: per side one policy word and 5 rolls of (kilodie, rounds, 3 x dice).
WORDS_PER_STEP = 324
KILODIE = 1000

POLICY_EXTERNAL, POLICY_SCRIPTED, POLICY_RANDOM = 0, 1, 2


@kernel
def _legal(iparams, state, e, side, action):
    """Whether ``side`` of env ``e`` may take ``action`` now."""
    p = side * SIDE_PARAMS
    s = S_SIDE + side * SIDE_STATE
    weapon = state[e, s + S_WEAPON]
    w = p + P_SLOTS + weapon * SLOT_PARAMS
    if action == A_FIRE:
        capacity = iparams[w + P_CAPACITY]
        per_roll = 1 + 2 * iparams[w + P_BURST]
        return capacity == 0 or state[e, s + S_AMMO + weapon] >= per_roll
    if action == A_RELOAD:
        capacity = iparams[w + P_CAPACITY]
        return capacity > 0 and state[e, s + S_AMMO + weapon] < capacity
    if action >= A_WEAPON and action < ACTIONS:
        k = action - A_WEAPON
        return k != weapon and iparams[p + P_SLOTS + k * SLOT_PARAMS + P_ROLLS] > 0
    return False


@kernel
def _hit_chance(iparams, side, slot):
    """Per-roll hit chance (in kilodie faces) of ``side``'s weapon ``slot`` against the other side."""
    w = side * SIDE_PARAMS + P_SLOTS + slot * SLOT_PARAMS
    bar = iparams[(1 - side) * SIDE_PARAMS + P_ARMOUR_RATING] - iparams[G_HIT_ON_EQUAL]
    if iparams[w + P_ROLLS] == 0 or iparams[w + P_MAXIMUM_ROLL] <= bar:
        return 0
    return KILODIE - min(max(bar - iparams[w + P_BONUS], 0), KILODIE)


@kernel
def _write_obs(iparams, state, e, obs, mask, n_sides):
    # Side 1's view is written only when someone outside the kernel plays it.
    for side in range(n_sides):
        other = 1 - side
        p = side * SIDE_PARAMS
        s = S_SIDE + side * SIDE_STATE
        o = S_SIDE + other * SIDE_STATE
        obs[e, side, 0] = max(state[e, s + S_HP], 0) / iparams[p + P_HIT_POINTS]
        obs[e, side, 1] = max(state[e, o + S_HP], 0) / iparams[other * SIDE_PARAMS + P_HIT_POINTS]
        for k in range(SLOTS):
            w = p + P_SLOTS + k * SLOT_PARAMS
            obs[e, side, 2 + k] = 1.0 if state[e, s + S_WEAPON] == k else 0.0
            capacity = iparams[w + P_CAPACITY]
            if iparams[w + P_ROLLS] == 0:
                obs[e, side, 5 + k] = 0.0
            elif capacity == 0:
                obs[e, side, 5 + k] = 1.0
            else:
                obs[e, side, 5 + k] = state[e, s + S_AMMO + k] / capacity
            obs[e, side, 8 + k] = _hit_chance(iparams, side, k) / KILODIE
            obs[e, side, 11 + k] = 1.0 if state[e, o + S_WEAPON] == k else 0.0
        obs[e, side, 14] = state[e, S_T] / iparams[G_MAX_STEPS]
        obs[e, side, 15] = _hit_chance(iparams, other, state[e, o + S_WEAPON]) / KILODIE
        for a in range(ACTIONS):
            mask[e, side, a] = 1 if _legal(iparams, state, e, side, a) else 0


@kernel
def _init_episode(iparams, state, e):
    state[e, S_T] = 0
    state[e, S_RETRIES] = 0
    state[e, S_NEEDS_RESET] = 0
    for side in range(2):
        p = side * SIDE_PARAMS
        s = S_SIDE + side * SIDE_STATE
        state[e, s + S_HP] = iparams[p + P_HIT_POINTS]
        state[e, s + S_WEAPON] = 0
        for k in range(SLOTS):
            state[e, s + S_AMMO + k] = iparams[p + P_SLOTS + k * SLOT_PARAMS + P_CAPACITY]


@kernel
def _choose(iparams, state, e, side, policy, external, rng):
    """The action of ``side``: the given one, the scripted one, or uniform over the legal ones."""
    if policy == POLICY_EXTERNAL:
        return external
    if policy == POLICY_SCRIPTED:
        # Fire while the weapon can, reload when it cannot, else draw the first other weapon.
        for a in range(ACTIONS):
            if _legal(iparams, state, e, side, a):
                return a
        return -1
    word = stream_word(rng)  # one word, drawn whether or not it is needed
    legal = 0
    for a in range(ACTIONS):
        legal += 1 if _legal(iparams, state, e, side, a) else 0
    if legal == 0:
        return -1
    pick = stream_bounded(rng, word, np.uint64(legal), rejection_threshold(np.uint64(legal)))
    for a in range(ACTIONS):
        if _legal(iparams, state, e, side, a):
            if pick == 0:
                return a
            pick -= 1
    return -1


@kernel
def _fire(iparams, state, e, side, rng, kilodie_threshold):
    """Resolve Fire: spend ammunition, roll to hit, roll damage; returns the damage dealt."""
    p = side * SIDE_PARAMS
    s = S_SIDE + side * SIDE_STATE
    weapon = state[e, s + S_WEAPON]
    w = p + P_SLOTS + weapon * SLOT_PARAMS
    bar = iparams[(1 - side) * SIDE_PARAMS + P_ARMOUR_RATING] - iparams[G_HIT_ON_EQUAL]
    burst = iparams[w + P_BURST]
    per_roll = 1 + 2 * burst
    capacity = iparams[w + P_CAPACITY]
    rolls = iparams[w + P_ROLLS]
    if capacity > 0:
        rolls = min(rolls, state[e, s + S_AMMO + weapon] // per_roll)
        state[e, s + S_AMMO + weapon] -= rolls * per_roll
    count = iparams[w + P_DICE_COUNT]
    sides = np.uint64(iparams[w + P_DICE_SIDES])
    threshold = rejection_threshold(sides)
    total = 0
    for _ in range(rolls):
        to_hit = min(stream_die(rng, np.uint64(KILODIE), kilodie_threshold) + iparams[w + P_BONUS],
                     iparams[w + P_MAXIMUM_ROLL])
        if to_hit > bar:
            landed = 1
            if burst:
                landed = stream_die(rng, np.uint64(4), np.uint64(0)) - 1  # 0..3 rounds of the burst
            for _ in range(landed):
                damage = iparams[w + P_DICE_MODIFIER] + iparams[w + P_DAMAGE_ADJUSTMENT]
                for _ in range(count):
                    damage += stream_die(rng, sides, threshold)
                total += max(damage, 0)
    return total


@kernel
def exp_reset(iparams, seeds, state, which, obs, mask):
    """Start a fresh episode (number ``state[e, S_EPISODE]``) in every env with ``which[e]``."""
    for e in range(state.shape[0]):
        if which[e]:
            _init_episode(iparams, state, e)
            _write_obs(iparams, state, e, obs, mask, 2)


@kernel
def exp_step(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask):
    """One unit in every env; an env whose episode ended last step resets instead (NEXT_STEP autoreset)."""
    rng = new_state()
    _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng)


@kernel
def exp_rollout(iparams, seeds, state, steps, policies, shaping, obs, reward, terminated, truncated, mask, totals):
    """``steps`` steps of every env with both sides on built-in policies, in one call (benchmarks,
    policy evaluation). ``totals`` (int64, 4) gains side 0 wins, side 1 wins, other ends, steps."""
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
    kilodie_threshold = rejection_threshold(np.uint64(KILODIE))
    n_sides = 2 if policies[1] == POLICY_EXTERNAL else 1
    ahead = new_ahead(rng)
    done = 0
    for e in range(state.shape[0]):
        slot = e % AHEAD_ENVS
        if slot == 0:  # the first block of the next envs' steps, in one pass
            stream_ahead(seeds, state, e, WORDS_PER_STEP, ahead)
            done = exp_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask,
                             e, ahead)
        if (done >> slot) & 1:  # stepped in lockstep with its neighbours
            continue
        terminated[e] = False
        truncated[e] = False
        reward[e, 0] = 0.0
        reward[e, 1] = 0.0
        if state[e, S_NEEDS_RESET]:
            state[e, S_EPISODE] += 1
            _init_episode(iparams, state, e)
            _write_obs(iparams, state, e, obs, mask, n_sides)
            continue
        t = state[e, S_T] + 1
        state[e, S_T] = t
        k0, k1 = seed_key(seeds[e])
        stream_seek_ahead(rng, k0, k1, state[e, S_EPISODE], t * WORDS_PER_STEP, state[e, S_RETRIES],
                          ahead, slot)
        chosen0 = _choose(iparams, state, e, 0, policies[0], actions[e, 0], rng)
        chosen1 = _choose(iparams, state, e, 1, policies[1], actions[e, 1], rng)
        dealt0 = 0
        dealt1 = 0
        for side in range(2):
            action = chosen0 if side == 0 else chosen1
            if not _legal(iparams, state, e, side, action):
                continue  # an action outside the mask does nothing
            s = S_SIDE + side * SIDE_STATE
            if action == A_FIRE:
                dealt = _fire(iparams, state, e, side, rng, kilodie_threshold)
                if side == 0:
                    dealt0 = dealt
                else:
                    dealt1 = dealt
            elif action == A_RELOAD:
                weapon = state[e, s + S_WEAPON]
                state[e, s + S_AMMO + weapon] = iparams[side * SIDE_PARAMS + P_SLOTS + weapon * SLOT_PARAMS + P_CAPACITY]
            else:
                state[e, s + S_WEAPON] = action - A_WEAPON
        state[e, S_RETRIES] = stream_retries(rng)
        # Both personas acted in the same unit: damage lands at once.
        state[e, S_SIDE + S_HP] -= dealt1
        state[e, S_SIDE + SIDE_STATE + S_HP] -= dealt0
        out0 = state[e, S_SIDE + S_HP] <= 0
        out1 = state[e, S_SIDE + SIDE_STATE + S_HP] <= 0
        outcome = (1.0 if out1 and not out0 else 0.0) - (1.0 if out0 and not out1 else 0.0)
        shaped = shaping * (dealt0 / iparams[SIDE_PARAMS + P_HIT_POINTS] - dealt1 / iparams[P_HIT_POINTS])
        reward[e, 0] = outcome + shaped
        reward[e, 1] = -outcome - shaped
        terminated[e] = out0 or out1
        truncated[e] = (not terminated[e]) and t >= iparams[G_MAX_STEPS]
        if terminated[e] or truncated[e]:
            state[e, S_NEEDS_RESET] = 1
        _write_obs(iparams, state, e, obs, mask, n_sides)


@kernel
def exp_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out):
    """Registry kernel: items are the episodes start..start+count-1 of env seed ``seed``, both sides
    on built-in ``policies`` (1 scripted, 2 random). ``counts`` gains [side 0 wins, side 1 wins,
    other ends, steps]; ``outcome_out`` (int64, per episode or empty) gets +1 / -1 / 0."""
    rng = new_state()
    threshold20 = rejection_threshold(np.uint64(20))  # noqa: F841 (used by the TSS twin)
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
        _init_episode(iparams, state, 0)
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
