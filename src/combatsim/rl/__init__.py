"""Reinforcement learning on the fight engines: Gymnasium and PettingZoo environments from scenarios.

Importing this package registers ``combatsim/Fight-v0`` (any scenario, one member the agent, with
a vector entry point that steps every env in one engine call) and three shipped scenarios under
ids of their own: ``combatsim/ExpDuel-v0``, ``combatsim/D100Duel-v0`` and ``combatsim/TssDuel-v0``.
``parallel_env(scenario, agents)`` is the PettingZoo env. Needs the ``rl`` extra (gymnasium,
pettingzoo). See docs/rl.md.
"""

from __future__ import annotations

try:
    import gymnasium as gym
    import pettingzoo  # noqa: F401  (the PettingZoo envs)
except ModuleNotFoundError as missing:
    if missing.name not in ("gymnasium", "pettingzoo"):
        raise
    from combatsim.extras import install_hint

    raise ModuleNotFoundError(f"combatsim.rl needs the rl extra ({missing.name} is not installed): "
                              f"{install_hint('rl')}", name=missing.name) from None

# The ids, and the hook that registers them in every process that imports gymnasium, live in a
# module of the standard library alone (_combatsim_gym.pth runs it at interpreter startup).
from _combatsim_gym import EXAMPLE_ENVS, FIGHT_ENV_ID, register_ids
from combatsim.rl.fight_env import FightEnv
from combatsim.rl.fight_parallel import FightParallelEnv, parallel_env
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.rl.vector_parallel import FightVectorParallelEnv, vector_parallel_env

ENV_IDS = {ruleset: env_id for ruleset, (env_id, _, _) in EXAMPLE_ENVS.items()}

register_ids(gym)


__all__ = ["ENV_IDS", "EXAMPLE_ENVS", "FIGHT_ENV_ID", "FightEnv", "FightParallelEnv", "FightVectorEnv",
           "FightVectorParallelEnv", "parallel_env", "vector_parallel_env"]
