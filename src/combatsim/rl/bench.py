"""Benchmark cases for the RL environments (see combatsim.bench).

``rl.vector_step``: env steps/s of the kernel-backed VectorEnv (1024 duels, ``step()`` through the
Gymnasium API, one compiled call a step); its baseline is Gymnasium's own numpy CartPole vector
env with 1024 environments, timed in the same run. ``rl.single_step``: one environment stepped
in a compiled loop (``rollout``, both sides on built-in policies). ``rl.single_step.api``: one
environment through the Python ``step()`` API. The plain names use d100; ``.exp``/``.tss`` the
other rulesets.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from combatsim.bench import BenchCase
from combatsim.rl.envs import D100DuelEnv, ExpDuelEnv, TssDuelEnv
from combatsim.rl.vector import D100DuelVectorEnv, ExpDuelVectorEnv, TssDuelVectorEnv

VECTOR_ENVS = 1024
_VECTOR = {"d100": D100DuelVectorEnv, "exp": ExpDuelVectorEnv, "tss": TssDuelVectorEnv}
_SINGLE = {"d100": D100DuelEnv, "exp": ExpDuelEnv, "tss": TssDuelEnv}
_cache: dict = {}


def _vector(ruleset: str, backend: str, threads: int):
    key = ("vector", ruleset, backend, threads)
    if key not in _cache:
        env = _VECTOR[ruleset](VECTOR_ENVS, backend=backend, threads=threads, copy=False)
        env.reset(seed=1)
        _cache[key] = env
    return _cache[key]


def vector_steps(ruleset: str, backend: str, n: int, threads: int) -> None:
    env = _vector(ruleset, backend, threads)
    actions = np.zeros(VECTOR_ENVS, dtype=np.int64)  # attack / fire: legal in most states
    for _ in range(max(1, n // VECTOR_ENVS)):
        env.step(actions)


def single_rollout(ruleset: str, backend: str, n: int, threads: int) -> None:
    key = ("single", ruleset, backend)
    if key not in _cache:
        env = _VECTOR[ruleset](1, backend=backend, opponent="random")
        env.reset(seed=1)
        _cache[key] = env
    _cache[key].rollout(n, agent="scripted")


def single_api(ruleset: str, backend: str, n: int, threads: int) -> None:
    key = ("api", ruleset, backend)
    if key not in _cache:
        env = _SINGLE[ruleset](backend=backend)
        env.reset(seed=1)
        _cache[key] = env
    env = _cache[key]
    for _ in range(n):
        _, _, terminated, truncated, _ = env.step(0)
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
    CASES += [
        BenchCase(f"rl.vector_step{_suffix}", lambda b, n, t, r=_ruleset: vector_steps(r, b, n, t), cartpole_vector,
                  compiled_items=VECTOR_ENVS * 200, python_items=VECTOR_ENVS, numpy_items=VECTOR_ENVS * 50,
                  backends=("numba", "cython")),
        BenchCase(f"rl.single_step{_suffix}", lambda b, n, t, r=_ruleset: single_rollout(r, b, n, t), None,
                  compiled_items=200_000, python_items=2_000, backends=("numba", "cython")),
        BenchCase(f"rl.single_step{_suffix}.api", lambda b, n, t, r=_ruleset: single_api(r, b, n, t), cartpole_single,
                  compiled_items=20_000, python_items=2_000, numpy_items=20_000, backends=("numba", "cython")),
    ]
