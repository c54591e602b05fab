"""A TSS solved policy's keys: what a saved policy needs to play, without the solver
(``combatsim.solve.policy`` loads ``combatsim.solve.keys_<ruleset>`` by name)."""

from __future__ import annotations

import numpy as np

from combatsim.tss.engine import F, G


def key_observations(obs: np.ndarray, blocks: int) -> np.ndarray:
    """Each TSS observation's key (``DecisionChain.observation_keys``): the observation, with every
    field of a member out of the fight but ``in_fight`` set to 0 (the chain does not track how an
    out member's tracks, phase or aim stood)."""
    obs = np.array(obs, dtype=np.float32, copy=True).reshape(len(obs), -1)
    body = obs[:, G:G + F * blocks].reshape(len(obs), blocks, F)
    body[:, :, 1:] *= (body[:, :, :1] != 0)
    obs[:, G:G + F * blocks] = body.reshape(len(obs), -1)
    return obs
