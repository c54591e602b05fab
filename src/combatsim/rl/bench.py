"""Benchmark cases for the RL environments (see combatsim.bench).

``rl.vector_step``: env steps/s of ``combatsim/Fight-v0``'s vector env on the ruleset's example
duel (1024 envs, ``step()`` through the Gymnasium API, one engine call a step, the agent always
attacking), autoreset SAME_STEP; ``rl.vector_step.next_step`` the same with autoreset NEXT_STEP,
as CartPole's. The baseline is Gymnasium's own numpy CartPole vector env with 1024 environments,
timed in the same run. ``rl.single_step.api``: one env through ``step()``, against CartPole's.
The plain names use d100 (examples/d100_duel.toml); ``.exp`` and ``.tss`` the other rulesets'
examples (exp_bob_too, tss_alex_vs_thug). Each runs on every engine backend the env takes: the
Python reference, Numba and, where it is built, Cython.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from combatsim.bench_case import BenchCase
from combatsim.engine import engine_kernels
from combatsim.rl import EXAMPLE_ENVS
from combatsim.rl.fight_env import BACKENDS, FightEnv
from combatsim.rl.fight_vector import FightVectorEnv

VECTOR_ENVS = 1024
#: The action every env's agent plays: the first attack of each example's ruleset.
ATTACK = 1
_cache: dict = {}


def env_backends(ruleset: str) -> tuple[str, ...]:
    """The compiled backends the env runs ``ruleset`` on here: Numba, and Cython where it is built."""
    if "cython" not in BACKENDS:
        return ("numba",)
    try:
        engine_kernels(f"combatsim.{ruleset}.engine", "cython")
    except (ImportError, ValueError):
        return ("numba",)
    return ("numba", "cython")


def _vector(ruleset: str, backend: str, mode: AutoresetMode = AutoresetMode.SAME_STEP) -> FightVectorEnv:
    key = ("vector", ruleset, backend, mode)
    if key not in _cache:
        _, example, agent = EXAMPLE_ENVS[ruleset]
        env = FightVectorEnv(VECTOR_ENVS, scenario=example, agent=agent, backend=backend, autoreset_mode=mode)
        env.reset(seed=1)
        _cache[key] = env
    return _cache[key]


def vector_steps(ruleset: str, backend: str, n: int, mode: AutoresetMode = AutoresetMode.SAME_STEP) -> None:
    env = _vector(ruleset, backend, mode)
    actions = np.full(VECTOR_ENVS, ATTACK, dtype=np.int64)
    for _ in range(max(1, n // VECTOR_ENVS)):
        env.step(actions)


def single_api(ruleset: str, backend: str, n: int) -> None:
    key = ("api", ruleset, backend)
    if key not in _cache:
        _, example, agent = EXAMPLE_ENVS[ruleset]
        env = FightEnv(example, agent, backend=backend)
        env.reset(seed=1)
        _cache[key] = env
    env = _cache[key]
    for _ in range(n):
        _, _, terminated, truncated, _ = env.step(ATTACK)
        if terminated or truncated:
            env.reset()


def cartpole_vector(n: int) -> None:
    """Gymnasium's own numpy CartPole vector env, 1024 environments."""
    if "cartpole" not in _cache:
        env = gym.make_vec("CartPole-v1", num_envs=VECTOR_ENVS, vectorization_mode="vector_entry_point")
        env.reset(seed=1)
        _cache["cartpole"] = env
    env = _cache["cartpole"]
    actions = np.zeros(VECTOR_ENVS, dtype=np.int64)
    for _ in range(max(1, n // VECTOR_ENVS)):
        env.step(actions)


def cartpole_single(n: int) -> None:
    if "cartpole1" not in _cache:
        env = gym.make("CartPole-v1")
        env.reset(seed=1)
        _cache["cartpole1"] = env
    env = _cache["cartpole1"]
    for _ in range(n):
        _, _, terminated, truncated, _ = env.step(0)
        if terminated or truncated:
            env.reset()


CASES = []
for _ruleset, _suffix in (("d100", ""), ("exp", ".exp"), ("tss", ".tss")):
    _backends = env_backends(_ruleset)
    CASES += [
        BenchCase(f"rl.vector_step{_suffix}", lambda b, n, t, r=_ruleset: vector_steps(r, b, n), cartpole_vector,
                  compiled_items=VECTOR_ENVS * 200, python_items=VECTOR_ENVS, numpy_items=VECTOR_ENVS * 50,
                  backends=_backends, threads=(1,)),
        BenchCase(f"rl.vector_step{_suffix}.next_step",
                  lambda b, n, t, r=_ruleset: vector_steps(r, b, n, AutoresetMode.NEXT_STEP), cartpole_vector,
                  compiled_items=VECTOR_ENVS * 200, python_items=VECTOR_ENVS, numpy_items=VECTOR_ENVS * 50,
                  backends=_backends, threads=(1,)),
        BenchCase(f"rl.single_step{_suffix}.api", lambda b, n, t, r=_ruleset: single_api(r, b, n), cartpole_single,
                  compiled_items=20_000, python_items=2_000, numpy_items=20_000, backends=_backends, threads=(1,)),
    ]
