"""A d100 solved policy's keys and policy die: what a saved policy needs to play, without the solver
(``combatsim.solve.policy`` loads ``combatsim.solve.keys_<ruleset>`` by name)."""

from __future__ import annotations

import numpy as np

from combatsim.d100.engine import (
    B_ATTACKED_SELF,
    B_DEFENDING,
    B_DUAL_WIELD,
    B_ENGAGED,
    B_ENGAGED_WITH_SELF,
    B_FLEE_TARGET,
    B_FLESH,
    B_IN_COVER,
    B_IN_FIGHT,
    B_RANGED,
    B_SERIOUS,
    B_TARGETED,
    BLOCK_FIELDS,
    GLOBAL_FIELDS,
)


def key_observations(obs: np.ndarray, passes: int, blocks: int, friend_blocks: int) -> np.ndarray:
    """Each observation's key (``DecisionChain.observation_keys``): the fields the chain does not
    track set to 0: every block's defence and whom it attacked (the last pass's; no law reads
    them), and, as the chain merges them, a mark before a round's first pass and, before its last
    pass, on whoever cannot flee (out or engaged); cover where no foe's weapon is ranged; and of a
    member out of the fight, all but whether it escaped, its mark and what never changes."""
    obs = np.array(obs, dtype=np.float32, copy=True).reshape(len(obs), -1)
    n = len(obs)
    body = obs[:, GLOBAL_FIELDS:GLOBAL_FIELDS + BLOCK_FIELDS * blocks].reshape(n, blocks, BLOCK_FIELDS)
    body[:, :, B_DEFENDING] = 0
    body[:, :, B_ATTACKED_SELF] = 0
    first_pass = obs[:, 0] == 0
    last_pass = (obs[:, 0] == np.float32((passes - 1) / passes)) & (passes > 1)
    in_fight = body[:, :, B_IN_FIGHT] != 0
    cannot_flee = ~in_fight | (body[:, :, B_ENGAGED] != 0)
    body[:, :, B_TARGETED] *= ~(first_pass[:, None] | (last_pass[:, None] & cannot_flee))
    friend_ranged = (body[:, :friend_blocks, B_RANGED] != 0).any(axis=1)
    foe_ranged = (body[:, friend_blocks:, B_RANGED] != 0).any(axis=1)
    body[:, :friend_blocks, B_IN_COVER] *= foe_ranged[:, None]
    body[:, friend_blocks:, B_IN_COVER] *= friend_ranged[:, None]
    # an out member's mark stays: the chain keeps it until the round's last pass
    for field in (B_FLESH, B_SERIOUS, B_IN_COVER, B_DUAL_WIELD, B_ENGAGED, B_ENGAGED_WITH_SELF, B_FLEE_TARGET):
        body[:, :, field] *= in_fight
    obs[:, GLOBAL_FIELDS:GLOBAL_FIELDS + BLOCK_FIELDS * blocks] = body.reshape(n, -1)
    return obs


def policy_uniforms(seeds: np.ndarray, states: np.ndarray, member: int) -> np.ndarray:
    """Per fight: the uniform value in [0, 1) of the policy die the engine rolls for ``member``'s
    declaration in the coming pass, which it ignores for an action given from outside: the die's
    32-bit item word over 2**32 (the die itself is that value's first decimal digit, plus 1). In
    the pass, every member in the fight rolls it in table order, but a surprised member in the
    first pass (engine._play_pass, _declare); 0 for a member who rolls none. A mixed solved policy
    draws its action from it, so one fight makes one choice wherever it is played."""
    from combatsim.d100.engine import M_ACTIVE, M_SURPRISED, MEMBER_FIELDS, S_MEMBERS
    from combatsim.d100.layout import D100
    from combatsim.engine import S_INDEX, S_LENGTH, S_RETRIES, S_WORDS, StreamHolder, stream_resume

    out = np.zeros(len(states))
    holder = StreamHolder()
    for e, s in enumerate(states):
        first_pass = s[S_LENGTH] == 0

        def rolls(c, s=s, first_pass=first_pass):
            base = S_MEMBERS + c * MEMBER_FIELDS
            return s[base + M_ACTIVE] != 0 and not (first_pass and s[base + M_SURPRISED] != 0)

        if not rolls(member):
            continue
        stream_resume(holder, seeds[e], s[S_INDEX], s[S_WORDS], s[S_RETRIES])
        for c in range(member):
            if rolls(c):
                holder.stream.die(D100)
        out[e] = holder.stream.word() / 2.0**32
    return out

