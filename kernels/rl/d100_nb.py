"""d100 duel step kernels for Numba; the reference (and the rules) is combatsim.rl.d100_reference."""

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
from .d100_lanes_nb import d100_lanes

kernel = step_kernels()



# ---- shared body (identical in kernels/rl/d100_nb.py) ----
# Per side: skill (pool x specialty, no action modifiers), ranged, nonlethal weapon, dual wield
# allowed, flee target base, then final lethality and serious threshold of this side's attacks
# for each (target in cover and ranged) x (dual wield) case, index 2 * cover + dual.
P_SKILL, P_RANGED, P_NONLETHAL, P_DUAL_ALLOWED, P_FLEE, P_LETHALITY, P_SERIOUS = 0, 1, 2, 3, 4, 5, 9
SIDE_PARAMS = 13
G_MAX_STEPS = 2 * SIDE_PARAMS
G_PASSES = G_MAX_STEPS + 1
G_START_ENGAGED = G_MAX_STEPS + 2
PARAMS = G_MAX_STEPS + 3

S_EPISODE, S_T, S_RETRIES, S_NEEDS_RESET, S_ENGAGED = 0, 1, 2, 3, 4
S_SIDE = 5
S_FLESH, S_SERIOUS, S_LETHAL, S_COVER, S_DUAL, S_FAILED_FLEE, S_TARGETED, S_ESCAPED = 0, 1, 2, 3, 4, 5, 6, 7
SIDE_STATE = 8
STATE_SIZE = S_SIDE + 2 * SIDE_STATE

A_ATTACK, A_QUICK_ATTACK, A_DEFEND, A_FLEE, A_PRESS, A_DISENGAGE, A_TAKE_COVER, A_TOGGLE_DUAL = 0, 1, 2, 3, 4, 5, 6, 7
ACTIONS = 8
OBS_SIZE = 16
#: Item words reserved per step (at most 8 are used: 2 policy words, 2 x (attack + 2 damage)).
WORDS_PER_STEP = 12
D100 = 100

TIER_CRITICAL_FAILURE, TIER_FAILURE, TIER_SUCCESS, TIER_HARD, TIER_CRITICAL = 0, 1, 2, 3, 4

POLICY_EXTERNAL, POLICY_SCRIPTED, POLICY_RANDOM = 0, 1, 2


@kernel
def tier(roll, full):
    """Roll result tier of a d100 ``roll`` against ``full`` skill (RULINGS: d100)."""
    capped = min(95, full)
    if roll <= capped:
        if roll <= full // 10:
            return TIER_CRITICAL
        if roll <= full // 2:
            return TIER_HARD
        return TIER_SUCCESS
    failure_range = 100 - max(0, capped)
    if roll > 100 - (failure_range + 9) // 10:
        return TIER_CRITICAL_FAILURE
    return TIER_FAILURE


@kernel
def wound(roll, lethality, serious, nonlethal):
    """Wound severity of a damage d100: 3 lethal, 2 serious, 1 deadly flesh, 0 nonlethal flesh."""
    if roll <= lethality:
        return 2 if nonlethal else 3
    if roll <= serious:
        return 2
    return 0 if nonlethal else 1


@kernel
def _legal(iparams, state, e, side, action):
    p = side * SIDE_PARAMS
    s = S_SIDE + side * SIDE_STATE
    engaged = state[e, S_ENGAGED] != 0
    if action in (A_ATTACK, A_QUICK_ATTACK):
        return engaged or iparams[p + P_RANGED] != 0  # melee weapons need an engaged foe
    if action in (A_DEFEND, A_PRESS):
        return True
    if action == A_FLEE:
        return not engaged  # flee is blocked while engaged
    if action == A_DISENGAGE:
        return engaged
    if action == A_TAKE_COVER:
        return (not engaged) and state[e, s + S_COVER] == 0
    if action == A_TOGGLE_DUAL:
        return iparams[p + P_DUAL_ALLOWED] != 0
    return False


@kernel
def _write_obs(iparams, state, e, obs, mask, n_sides):
    # Side 1's view is written only when someone outside the kernel plays it.
    for side in range(n_sides):
        other = 1 - side
        s = S_SIDE + side * SIDE_STATE
        o = S_SIDE + other * SIDE_STATE
        obs[e, side, 0] = state[e, s + S_FLESH] / 3.0
        obs[e, side, 1] = state[e, s + S_SERIOUS] / 2.0
        obs[e, side, 2] = state[e, o + S_FLESH] / 3.0
        obs[e, side, 3] = state[e, o + S_SERIOUS] / 2.0
        obs[e, side, 4] = 1.0 if state[e, S_ENGAGED] else 0.0
        obs[e, side, 5] = 1.0 if state[e, s + S_COVER] else 0.0
        obs[e, side, 6] = 1.0 if state[e, o + S_COVER] else 0.0
        obs[e, side, 7] = 1.0 if state[e, s + S_DUAL] else 0.0
        obs[e, side, 8] = 1.0 if state[e, o + S_DUAL] else 0.0
        obs[e, side, 9] = iparams[side * SIDE_PARAMS + P_SKILL] / 100.0
        obs[e, side, 10] = iparams[other * SIDE_PARAMS + P_SKILL] / 100.0
        obs[e, side, 11] = min(state[e, s + S_FAILED_FLEE], 5) / 5.0
        obs[e, side, 12] = 1.0 if state[e, s + S_TARGETED] else 0.0
        obs[e, side, 13] = (state[e, S_T] % iparams[G_PASSES]) / iparams[G_PASSES]
        obs[e, side, 14] = state[e, S_T] / iparams[G_MAX_STEPS]
        obs[e, side, 15] = 1.0 if iparams[side * SIDE_PARAMS + P_RANGED] else 0.0
        for a in range(ACTIONS):
            mask[e, side, a] = 1 if _legal(iparams, state, e, side, a) else 0


@kernel
def _init_episode(iparams, state, e):
    state[e, S_T] = 0
    state[e, S_RETRIES] = 0
    state[e, S_NEEDS_RESET] = 0
    state[e, S_ENGAGED] = iparams[G_START_ENGAGED]
    for i in range(S_SIDE, STATE_SIZE):
        state[e, i] = 0


@kernel
def _choose(iparams, state, e, side, policy, external, rng):
    if policy == POLICY_EXTERNAL:
        return external
    if policy == POLICY_SCRIPTED:
        # Attack whenever possible; a melee fighter out of reach presses to close in.
        if _legal(iparams, state, e, side, A_ATTACK):
            return A_ATTACK
        return A_PRESS
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
def _attack(iparams, state, e, side, quick, defending, rng, threshold):
    """One attack of ``side``; records the wounds on the target and returns their weight in 1/6 of a
    lethal wound (flesh 1, serious 3, lethal 6) for the optional shaped reward."""
    p = side * SIDE_PARAMS
    a = S_SIDE + side * SIDE_STATE
    d = S_SIDE + (1 - side) * SIDE_STATE
    ranged = iparams[p + P_RANGED] != 0
    cover = 1 if ranged and state[e, d + S_COVER] != 0 else 0
    dual = 1 if state[e, a + S_DUAL] != 0 else 0
    state[e, d + S_TARGETED] = 1
    full = iparams[p + P_SKILL] - 20 * quick - 20 * defending - 20 * dual - 20 * cover
    result = tier(stream_die(rng, np.uint64(D100), threshold), full)
    if result < TIER_SUCCESS:
        return 0
    lethality = iparams[p + P_LETHALITY + 2 * cover + dual]
    serious = iparams[p + P_SERIOUS + 2 * cover + dual]
    weight = 0
    for _ in range(1 + dual):  # dual wield: on success both weapons deal damage
        severity = wound(stream_die(rng, np.uint64(D100), threshold), lethality, serious, iparams[p + P_NONLETHAL])
        if severity == 3:
            state[e, d + S_LETHAL] += 1
            weight += 6
        elif severity == 2:
            state[e, d + S_SERIOUS] += 1
            weight += 3
        elif severity == 1:
            state[e, d + S_FLESH] += 1
            weight += 1
    # Escalation cascades: three deadly flesh -> one serious, two serious -> one lethal.
    while state[e, d + S_FLESH] >= 3:
        state[e, d + S_FLESH] -= 3
        state[e, d + S_SERIOUS] += 1
    while state[e, d + S_SERIOUS] >= 2:
        state[e, d + S_SERIOUS] -= 2
        state[e, d + S_LETHAL] += 1
    return weight


@kernel
def d100_reset(iparams, seeds, state, which, obs, mask):
    for e in range(state.shape[0]):
        if which[e]:
            _init_episode(iparams, state, e)
            _write_obs(iparams, state, e, obs, mask, 2)


@kernel
def d100_step(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask):
    """One pass in every env; an env whose episode ended last step resets instead (NEXT_STEP)."""
    rng = new_state()
    _step_all(iparams, seeds, state, actions, policies, shaping, obs, reward, terminated, truncated, mask, rng)


@kernel
def d100_rollout(iparams, seeds, state, steps, policies, shaping, obs, reward, terminated, truncated, mask, totals):
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
    threshold = rejection_threshold(np.uint64(D100))
    s0 = S_SIDE
    s1 = S_SIDE + SIDE_STATE
    n_sides = 2 if policies[1] == POLICY_EXTERNAL else 1
    ahead = new_ahead(rng)
    done = 0
    for e in range(state.shape[0]):
        slot = e % AHEAD_ENVS
        if slot == 0:  # the first block of the next envs' steps, in one pass
            stream_ahead(seeds, state, e, WORDS_PER_STEP, ahead)
            done = d100_lanes(iparams, state, actions, policies, shaping, obs, reward, terminated, truncated, mask,
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
        t = state[e, S_T]
        if t % iparams[G_PASSES] == 0:  # a new round: "targeted this round" starts afresh
            state[e, s0 + S_TARGETED] = 0
            state[e, s1 + S_TARGETED] = 0
        state[e, S_T] = t + 1
        k0, k1 = seed_key(seeds[e])
        stream_seek_ahead(rng, k0, k1, state[e, S_EPISODE], (t + 1) * WORDS_PER_STEP, state[e, S_RETRIES],
                          ahead, slot)
        c0 = _choose(iparams, state, e, 0, policies[0], actions[e, 0], rng)
        c1 = _choose(iparams, state, e, 1, policies[1], actions[e, 1], rng)
        # Legality is judged on the state at the start of the pass; anything else does nothing.
        if not _legal(iparams, state, e, 0, c0):
            c0 = -1
        if not _legal(iparams, state, e, 1, c1):
            c1 = -1
        defend0 = 1 if c0 == A_DEFEND else 0
        defend1 = 1 if c1 == A_DEFEND else 0
        dealt0 = 0
        dealt1 = 0
        # Quick attacks land first, together.
        if c0 == A_QUICK_ATTACK:
            dealt0 += _attack(iparams, state, e, 0, 1, defend1, rng, threshold)
        if c1 == A_QUICK_ATTACK:
            dealt1 += _attack(iparams, state, e, 1, 1, defend0, rng, threshold)
        # Then standard attacks, also together: a side taken out by a quick attack does not attack.
        standing0 = state[e, s0 + S_LETHAL] == 0
        standing1 = state[e, s1 + S_LETHAL] == 0
        if c0 == A_ATTACK and standing0:
            dealt0 += _attack(iparams, state, e, 0, 0, defend1, rng, threshold)
        if c1 == A_ATTACK and standing1:
            dealt1 += _attack(iparams, state, e, 1, 0, defend0, rng, threshold)
        # Flee: a roll only under fire this round; failure leaves the fleer in cover.
        for side in range(2):
            c = c0 if side == 0 else c1
            s = S_SIDE + side * SIDE_STATE
            if c == A_FLEE and (standing0 if side == 0 else standing1):
                escaped = True
                if state[e, s + S_TARGETED]:
                    target = min(95, iparams[side * SIDE_PARAMS + P_FLEE] + 20 * state[e, s + S_FAILED_FLEE])
                    escaped = stream_die(rng, np.uint64(D100), threshold) <= target
                if escaped:
                    state[e, s + S_ESCAPED] = 1
                else:
                    state[e, s + S_FAILED_FLEE] += 1
                    state[e, s + S_COVER] = 1
        # Movement.
        if c0 == A_TAKE_COVER:
            state[e, s0 + S_COVER] = 1
        if c1 == A_TAKE_COVER:
            state[e, s1 + S_COVER] = 1
        if state[e, S_ENGAGED]:
            if c0 == A_DISENGAGE or c1 == A_DISENGAGE:
                leaver = 0 if c0 == A_DISENGAGE else 1
                blocker_presses = (c1 == A_PRESS) if leaver == 0 else (c0 == A_PRESS)
                if (c0 == A_DISENGAGE and c1 == A_DISENGAGE) or not blocker_presses:
                    state[e, S_ENGAGED] = 0
                else:
                    # Quick contest at full attack target, no action modifiers: tier, then margin;
                    # ties go to the blocker. Side 0 rolls first.
                    full0 = iparams[P_SKILL]
                    full1 = iparams[SIDE_PARAMS + P_SKILL]
                    roll0 = stream_die(rng, np.uint64(D100), threshold)
                    roll1 = stream_die(rng, np.uint64(D100), threshold)
                    tier0 = tier(roll0, full0)
                    tier1 = tier(roll1, full1)
                    margin0 = min(95, full0) - roll0
                    margin1 = min(95, full1) - roll1
                    if leaver == 0:
                        wins = tier0 > tier1 or (tier0 == tier1 and margin0 > margin1)
                    else:
                        wins = tier1 > tier0 or (tier1 == tier0 and margin1 > margin0)
                    if wins:
                        state[e, S_ENGAGED] = 0
        elif (c0 == A_PRESS and state[e, s0 + S_ESCAPED] == 0) or (c1 == A_PRESS and state[e, s1 + S_ESCAPED] == 0):
            state[e, S_ENGAGED] = 1  # closing in: both leave cover
            state[e, s0 + S_COVER] = 0
            state[e, s1 + S_COVER] = 0
        if c0 == A_TOGGLE_DUAL:
            state[e, s0 + S_DUAL] = 1 - state[e, s0 + S_DUAL]
        if c1 == A_TOGGLE_DUAL:
            state[e, s1 + S_DUAL] = 1 - state[e, s1 + S_DUAL]
        state[e, S_RETRIES] = stream_retries(rng)
        out0 = state[e, s0 + S_LETHAL] > 0
        out1 = state[e, s1 + S_LETHAL] > 0
        outcome = (1.0 if out1 and not out0 else 0.0) - (1.0 if out0 and not out1 else 0.0)
        shaped = shaping * (dealt0 - dealt1) / 6.0
        reward[e, 0] = outcome + shaped
        reward[e, 1] = -outcome - shaped
        terminated[e] = out0 or out1 or state[e, s0 + S_ESCAPED] != 0 or state[e, s1 + S_ESCAPED] != 0
        truncated[e] = (not terminated[e]) and t + 1 >= iparams[G_MAX_STEPS]
        if terminated[e] or truncated[e]:
            state[e, S_NEEDS_RESET] = 1
        _write_obs(iparams, state, e, obs, mask, n_sides)


@kernel
def d100_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out):
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
