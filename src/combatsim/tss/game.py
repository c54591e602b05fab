"""A TSS scenario made ready for the engine (combatsim.tss.engine): its arrays and the names in them.

The builder lives in ``combatsim.tss.api``, whose policy path plays the fights it builds, so that the
API needs nothing from this module; this is its name for scenarios and environments.
"""

from __future__ import annotations

import numpy as np

from combatsim.engine import Game
from combatsim.tss import engine
from combatsim.tss.api import game as game


def taken_actions(g: Game, state: np.ndarray) -> np.ndarray:
    """(envs, members): the action index each member took in the step last played (hold when it did
    not act), from the engine's state: given from outside, they play that step again."""
    slots = int(g.config[engine.K_SLOTS])
    columns = [engine.S_MEMBERS + engine.M_WIDTH * c + engine.M_ACTION for c in range(len(g.table))]
    intent = state[:, columns]
    two = intent <= engine.INTENT_TWO
    row = np.where(two, engine.INTENT_TWO - intent, np.maximum(intent, 0))
    rank = g.config[engine.K_RANK + row]
    action = np.where(two, engine.ATTACK + slots + 1 + rank, engine.ATTACK + rank)
    action = np.where(intent == engine.INTENT_AIM, engine.ATTACK + slots, action)
    return np.where(intent == engine.INTENT_HOLD, engine.HOLD, action).astype(np.int64)
