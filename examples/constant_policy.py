"""Constant policies, the baselines a trained policy has to beat (``combatsim fight --policy``).

    cd examples && combatsim fight d100_duel -n 1e6 --policy "Veteran=constant_policy:attack"

Each plays one action whenever it is legal and the first action (d100: "none") otherwise.
"""

from __future__ import annotations

import numpy as np


def constant(action: int):
    """A batched policy playing ``action`` where the mask allows it, else action 0."""

    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        legal = masks[:, action] > 0
        return np.where(legal, action, 0).astype(np.int64)

    policy.__qualname__ = f"constant({action})"
    return policy


# d100 (docs/d100.md, "The engine"): 1 attack, 5 press
attack = constant(1)
press = constant(5)
