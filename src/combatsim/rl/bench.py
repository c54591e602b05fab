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
from combatsim.rl.fight_env import FightEnv
from combatsim.rl.fight_vector import FightVectorEnv

VECTOR_ENVS = 1024
#: The action every env's agent plays: the first attack of each example's ruleset.
ATTACK = 1
_envs: dict = {}


def env_backends(ruleset: str) -> tuple[str, ...]:
    """The compiled backends the env runs ``ruleset`` on here: Numba, and Cython where it is built."""
    try:
        engine_kernels(f"combatsim.{ruleset}.engine", "cython")
    except (ImportError, ValueError):
        return ("numba",)
    return ("numba", "cython")


def cached(key: object, make) -> object:
    """The env ``make()`` builds, once per ``key`` and reset with seed 1: each timing steps it on."""
    if key not in _envs:
        _envs[key] = make()
        _envs[key].reset(seed=1)
    return _envs[key]


def vector_steps(ruleset: str, backend: str, n: int, mode: AutoresetMode = AutoresetMode.SAME_STEP) -> None:
    _, example, agent = EXAMPLE_ENVS[ruleset]
    env = cached(("vector", ruleset, backend, mode), lambda: FightVectorEnv(
        VECTOR_ENVS, scenario=example, agent=agent, backend=backend, autoreset_mode=mode))
    actions = np.full(VECTOR_ENVS, ATTACK, dtype=np.int64)
    for _ in range(max(1, n // VECTOR_ENVS)):
        env.step(actions)


def single_api(ruleset: str, backend: str, n: int) -> None:
    _, example, agent = EXAMPLE_ENVS[ruleset]
    env = cached(("api", ruleset, backend), lambda: FightEnv(example, agent, backend=backend))
    for _ in range(n):
        _, _, terminated, truncated, _ = env.step(ATTACK)
        if terminated or truncated:
            env.reset()


def cartpole_vector(n: int) -> None:
    """Gymnasium's own numpy CartPole vector env, 1024 environments."""
    env = cached("cartpole", lambda: gym.make_vec("CartPole-v1", num_envs=VECTOR_ENVS,
                                                  vectorization_mode="vector_entry_point"))
    actions = np.zeros(VECTOR_ENVS, dtype=np.int64)
    for _ in range(max(1, n // VECTOR_ENVS)):
        env.step(actions)


def cartpole_single(n: int) -> None:
    env = cached("cartpole1", lambda: gym.make("CartPole-v1"))
    for _ in range(n):
        _, _, terminated, truncated, _ = env.step(0)
        if terminated or truncated:
            env.reset()


CASES = []
for _ruleset, _suffix in (("d100", ""), ("exp", ".exp"), ("tss", ".tss")):
    _backends = env_backends(_ruleset)
    for _mode, _mode_suffix in ((AutoresetMode.SAME_STEP, ""), (AutoresetMode.NEXT_STEP, ".next_step")):
        CASES.append(BenchCase(f"rl.vector_step{_suffix}{_mode_suffix}",
                               lambda b, n, t, r=_ruleset, m=_mode: vector_steps(r, b, n, m), cartpole_vector,
                               compiled_items=VECTOR_ENVS * 200, python_items=VECTOR_ENVS,
                               numpy_items=VECTOR_ENVS * 50, backends=_backends, threads=(1,)))
    CASES.append(BenchCase(f"rl.single_step{_suffix}.api", lambda b, n, t, r=_ruleset: single_api(r, b, n),
                           cartpole_single, compiled_items=20_000, python_items=2_000, numpy_items=20_000,
                           backends=_backends, threads=(1,)))
