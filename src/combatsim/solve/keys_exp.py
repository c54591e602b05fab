"""An EXP solved policy's keys (``combatsim.solve.policy`` loads ``combatsim.solve.keys_<ruleset>``
by name). The engine rolls no policy die, so a mixed policy's choices come from the fight's own
stream (``combatsim.solve.policy.stream_uniforms``)."""

from __future__ import annotations

import numpy as np


def key_observations(obs: np.ndarray) -> np.ndarray:
    """Each observation's key in a solved policy's table: the observation itself (it shows every
    member's hit points and shots, all the decision chain tracks, and the units played)."""
    return np.array(obs, dtype=np.float32, copy=True).reshape(len(obs), -1)
