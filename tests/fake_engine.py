"""A tiny engine that follows combatsim.engine's contract: a coin-flip fight of any size.

The front end (environments, policies) is tested on it whatever state the ruleset engines are in.
Each step, every member still in the fight draws a policy d6 (always, even when its action comes
from outside: dice stay aligned), then acts in table order: attack (the first foe still in the
fight goes out on a d2 of 2), flee (gone on a d2 of 2; masked in the first step) or none.
"""

from __future__ import annotations

import numpy as np

from combatsim.engine import (
    DRAW,
    RUNNING,
    S_INDEX,
    S_LENGTH,
    S_OUTCOME,
    S_RETRIES,
    S_RULESET,
    S_STEPS,
    S_WORDS,
    UNFINISHED,
    Game,
    new_stream,
    stream_die,
    stream_resume,
    stream_retries_used,
    stream_words_used,
)

NONE, ATTACK, FLEE = 0, 1, 2
ACTIONS = 3
IN, OUT, FLED = 0, 1, 2
T_SIDE = 0
G_LIMIT = 0
# counts
K_WINS, K_BY_FLIGHT, K_ESCAPES, K_DRAWS, K_UNFINISHED, K_ATTACKS, K_MASKED = 0, 2, 4, 6, 7, 8, 9
COUNT_NAMES = ("wins_side_0", "wins_side_1", "wins_by_flight_side_0", "wins_by_flight_side_1", "escapes_side_0",
               "escapes_side_1", "draws", "unfinished", "attacks", "masked")


def legal(table, state, e, c, action):
    if state[e, S_RULESET + c] != IN:
        return action == NONE
    if action == FLEE:
        return state[e, S_STEPS] > 0
    return True


def member_standing(state, e, members, c):
    return state[e, S_RULESET + c] == IN


def observe(table, config, state, obs, mask, e):
    members = table.shape[0]
    for c in range(members):
        obs[e, c, 0] = state[e, S_STEPS] / config[G_LIMIT]
        obs[e, c, 1] = 1.0 if state[e, S_RULESET + c] == IN else 0.0
        k = 2
        for pass_ in range(2):  # allies, then foes, each in table order
            for other in range(members):
                if other == c:
                    continue
                ally = table[other, T_SIDE] == table[c, T_SIDE]
                if ally == (pass_ == 0):
                    obs[e, c, k] = 1.0 if state[e, S_RULESET + other] == IN else 0.0
                    k += 1
        for a in range(ACTIONS):
            mask[e, c, a] = 1 if legal(table, state, e, c, a) else 0


def reset(table, config, seeds, indices, which, state, counts, obs, mask):
    for e in range(seeds.shape[0]):
        if which[e] == 0:
            continue
        state[e, :] = 0
        state[e, S_INDEX] = indices[e]
        state[e, S_OUTCOME] = RUNNING
        counts[e, :] = 0
        observe(table, config, state, obs, mask, e)


def step(table, config, seeds, state, actions, counts, obs, mask):
    rng = new_stream()
    members = table.shape[0]
    for e in range(seeds.shape[0]):
        if state[e, S_OUTCOME] != RUNNING:
            continue
        stream_resume(rng, seeds[e], state[e, S_INDEX], state[e, S_WORDS], state[e, S_RETRIES])
        for c in range(members):
            if state[e, S_RULESET + c] != IN:
                continue
            die = stream_die(rng, 6, 0)
            action = actions[e, c]
            if action < 0:
                action = ATTACK if die <= 4 else NONE if die == 5 else FLEE
                if not legal(table, state, e, c, action):
                    action = ATTACK
            elif not legal(table, state, e, c, action):
                counts[e, K_MASKED] += 1
                action = NONE
            if action == ATTACK:
                counts[e, K_ATTACKS] += 1
                hit = stream_die(rng, 2, 0) == 2
                for foe in range(members):
                    if table[foe, T_SIDE] != table[c, T_SIDE] and state[e, S_RULESET + foe] == IN:
                        if hit:
                            state[e, S_RULESET + foe] = OUT
                        break
            elif action == FLEE and stream_die(rng, 2, 0) == 2:
                state[e, S_RULESET + c] = FLED
                counts[e, K_ESCAPES + table[c, T_SIDE]] += 1
        state[e, S_STEPS] += 1
        state[e, S_LENGTH] = state[e, S_STEPS]
        standing0 = 0
        standing1 = 0
        for c in range(members):
            if state[e, S_RULESET + c] == IN:
                if table[c, T_SIDE] == 0:
                    standing0 += 1
                else:
                    standing1 += 1
        if standing0 == 0 and standing1 == 0:
            state[e, S_OUTCOME] = DRAW
            counts[e, K_DRAWS] += 1
        elif standing0 == 0 or standing1 == 0:
            winner = 0 if standing1 == 0 else 1
            state[e, S_OUTCOME] = winner
            counts[e, K_WINS + winner] += 1
            if counts[e, K_ESCAPES + 1 - winner] > 0:
                counts[e, K_BY_FLIGHT + winner] += 1
        elif state[e, S_STEPS] >= config[G_LIMIT]:
            state[e, S_OUTCOME] = UNFINISHED
            counts[e, K_UNFINISHED] += 1
        state[e, S_WORDS] = stream_words_used(rng)
        state[e, S_RETRIES] = stream_retries_used(rng)
        observe(table, config, state, obs, mask, e)


def game(sides: tuple[int, ...], member_names, side_names, limit: int = 6) -> Game:
    members = len(sides)
    table = np.array([[side] for side in sides], dtype=np.int64)
    allies = max(sum(1 for s in sides if s == side) for side in (0, 1)) - 1
    foes = members - 1 - allies
    names = ("step", "self.in_fight", *(f"ally{k}.in_fight" for k in range(allies)),
             *(f"foe{k}.in_fight" for k in range(foes)))
    return Game(ruleset="fake", table=table, config=np.array([limit], dtype=np.int64),
                member_names=tuple(member_names), member_sides=tuple(sides), side_names=tuple(side_names),
                action_names=("none", "attack", "flee"), observation_names=names, count_names=COUNT_NAMES,
                state_size=S_RULESET + members, step_name="step", length_unit="steps",
                engine_module="tests.fake_engine")
