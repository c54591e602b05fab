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

from combatsim.rl.fight_env import FightEnv
from combatsim.rl.fight_parallel import FightParallelEnv, parallel_env
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.rl.vector_parallel import FightVectorParallelEnv, vector_parallel_env

#: Any scenario, one member the agent (combatsim.rl.fight_env); see docs/rl.md.
FIGHT_ENV_ID = "combatsim/Fight-v0"
#: ruleset -> (env id, example scenario, its agent: the first member of side 0). Each id is
#: Fight-v0 with these defaults; ``agent=``, ``backend=`` and ``render_mode=`` still apply.
EXAMPLE_ENVS = {
    "exp": ("combatsim/ExpDuel-v0", "exp_bob_too", "Bob Too"),
    "d100": ("combatsim/D100Duel-v0", "d100_duel", "Veteran"),
    "tss": ("combatsim/TssDuel-v0", "tss_alex_vs_thug", "Alex"),
}
ENV_IDS = {ruleset: env_id for ruleset, (env_id, _, _) in EXAMPLE_ENVS.items()}

_ENTRY_POINTS = {"entry_point": "combatsim.rl.fight_env:FightEnv",
                 "vector_entry_point": "combatsim.rl.fight_vector:FightVectorEnv"}
if FIGHT_ENV_ID not in gym.registry:
    gym.register(id=FIGHT_ENV_ID, **_ENTRY_POINTS)
for _env_id, _example, _agent in EXAMPLE_ENVS.values():
    if _env_id not in gym.registry:
        gym.register(id=_env_id, kwargs={"scenario": _example, "agent": _agent}, **_ENTRY_POINTS)


def _preload_in_forkserver() -> None:
    """Have multiprocessing's forkserver (SB3's SubprocVecEnv's start method where it exists)
    import this package, so that its processes know the ids by their plain names however the
    script imported combatsim.rl: the forkserver itself imports only the script's top level."""
    from multiprocessing import forkserver

    modules = getattr(getattr(forkserver, "_forkserver", None), "_preload_modules", None)
    if isinstance(modules, list) and __name__ not in modules:
        forkserver.set_forkserver_preload([*modules, __name__])


_preload_in_forkserver()


__all__ = ["ENV_IDS", "EXAMPLE_ENVS", "FIGHT_ENV_ID", "FightEnv", "FightParallelEnv", "FightVectorEnv",
           "FightVectorParallelEnv", "parallel_env", "vector_parallel_env"]
