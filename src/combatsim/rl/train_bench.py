"""Benchmark cases for training at kernel speed (see combatsim.bench).

``rl.vector_parallel_step``: agent-steps/s of ``vector_parallel_env`` on examples/d100_duel.toml
with both members agents (1024 fights, ``step()`` with every agent attacking; one engine call a
step): items are fights x agents x steps. ``rl.sb3_step``: env steps/s of the same fights through
combatsim.rl.sb3's VecEnv protocol (1024 envs, the Guard attacking), which adds one info dict per
env and step to the vector env's work.
"""

from __future__ import annotations

import numpy as np

from combatsim.bench_case import BenchCase
from combatsim.rl.bench import ATTACK, cached, env_backends
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.rl.sb3 import KernelVecEnv
from combatsim.rl.vector_parallel import vector_parallel_env

ENVS = 1024
SCENARIO, AGENTS = "d100_duel", ("Veteran", "Guard")
#: SB3's reset takes no seed (seed() first), so its envs are built here rather than by ``cached``.
_sb3_envs: dict = {}


def parallel_steps(backend: str, n: int) -> None:
    env = cached(("parallel", backend),
                 lambda: vector_parallel_env(SCENARIO, list(AGENTS), num_envs=ENVS, backend=backend))
    actions = np.full((ENVS, len(AGENTS)), ATTACK, dtype=np.int64)
    for _ in range(max(1, n // (ENVS * len(AGENTS)))):
        env.step(actions)


def sb3_steps(backend: str, n: int) -> None:
    if backend not in _sb3_envs:
        env = KernelVecEnv(FightVectorEnv(ENVS, scenario=SCENARIO, agent=AGENTS[1], backend=backend,
                                           autoreset_mode="SameStep"))
        env.seed(1)
        env.reset()
        _sb3_envs[backend] = env
    env = _sb3_envs[backend]
    actions = np.full(ENVS, ATTACK, dtype=np.int64)
    for _ in range(max(1, n // ENVS)):
        env.step(actions)


_BACKENDS = env_backends("d100")
CASES = [
    BenchCase("rl.vector_parallel_step", lambda b, n, t: parallel_steps(b, n), None,
              compiled_items=ENVS * len(AGENTS) * 200, python_items=ENVS * len(AGENTS), backends=_BACKENDS,
              threads=(1,)),
    BenchCase("rl.sb3_step", lambda b, n, t: sb3_steps(b, n), None, compiled_items=ENVS * 100,
              python_items=ENVS, backends=_BACKENDS, threads=(1,)),
]
