"""Reinforcement learning on the kernels: Gymnasium and PettingZoo duel environments.

Importing this package registers ``combatsim/ExpDuel-v0``, ``combatsim/D100Duel-v0`` and
``combatsim/TssDuel-v0`` (each with a kernel-backed vector entry point). Needs the ``rl`` extra
(gymnasium, pettingzoo). See docs/rl.md.
"""

from __future__ import annotations

import gymnasium as gym

from combatsim.rl.api import DuelsResult, simulate_duels
from combatsim.rl.envs import D100DuelEnv, DuelEnv, ExpDuelEnv, TssDuelEnv
from combatsim.rl.parallel import DuelParallelEnv
from combatsim.rl.parallel import parallel_env as duel_parallel_env
from combatsim.rl.vector import D100DuelVectorEnv, DuelVectorEnv, ExpDuelVectorEnv, TssDuelVectorEnv

ENV_IDS = {"exp": "combatsim/ExpDuel-v0", "d100": "combatsim/D100Duel-v0", "tss": "combatsim/TssDuel-v0"}
_CLASSES = {"exp": "ExpDuel", "d100": "D100Duel", "tss": "TssDuel"}

for _ruleset, _id in ENV_IDS.items():
    if _id not in gym.registry:
        gym.register(
            id=_id,
            entry_point=f"combatsim.rl.envs:{_CLASSES[_ruleset]}Env",
            vector_entry_point=f"combatsim.rl.vector:{_CLASSES[_ruleset]}VectorEnv",
        )

def parallel_env(*args, **kwargs):
    """A PettingZoo ParallelEnv: ``parallel_env(scenario=..., agents=[names])`` for any scenario
    (combatsim.rl.fight_parallel); ``parallel_env(ruleset=...)`` still gives the duel env."""
    if "scenario" in kwargs:
        from combatsim.rl.fight_parallel import parallel_env as scenario_parallel_env

        return scenario_parallel_env(*args, **kwargs)
    return duel_parallel_env(*args, **kwargs)


#: Any scenario, one member the agent (combatsim.rl.fight_env); see docs/rl.md, "Scenario environments".
FIGHT_ENV_ID = "combatsim/Fight-v0"
if FIGHT_ENV_ID not in gym.registry:
    gym.register(id=FIGHT_ENV_ID, entry_point="combatsim.rl.fight_env:FightEnv",
                 vector_entry_point="combatsim.rl.fight_vector:FightVectorEnv")

__all__ = [
    "ENV_IDS",
    "FIGHT_ENV_ID",
    "D100DuelEnv",
    "D100DuelVectorEnv",
    "DuelEnv",
    "DuelParallelEnv",
    "DuelVectorEnv",
    "DuelsResult",
    "ExpDuelEnv",
    "ExpDuelVectorEnv",
    "TssDuelEnv",
    "TssDuelVectorEnv",
    "parallel_env",
    "simulate_duels",
]
