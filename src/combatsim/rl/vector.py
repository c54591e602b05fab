"""Kernel-backed Gymnasium vector environments: all N duels advance in one compiled call.

Autoreset is NEXT_STEP: the step after an episode ends resets that environment (reward 0, the
action ignored) and returns its first observation. Environment ``e`` seeded ``s`` draws episode
``k`` from item ``k`` of key ``s`` (docs/rl.md), so each is reproducible on its own.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from combatsim.rl.envs import POLICIES, Buffers, check_shaping, opponent_policy
from combatsim.rl.rulesets import RULESETS
from combatsim.validation import check_int, check_seed

#: Fewest environments a thread steps: below this a vector env runs in fewer threads than asked
#: (at ~50-100 ns an env step, handing 1024 envs to another thread costs more than it saves).
MIN_ENVS_PER_THREAD = 4096


class DuelVectorEnv(gym.vector.VectorEnv):
    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    ruleset_name = ""

    def __init__(
        self,
        num_envs: int = 1,
        *,
        opponent: object = "scripted",
        backend: str = "auto",
        shaping: float = 0.0,
        threads: int = 1,
        copy: bool = True,
        render_mode: str | None = None,
        **config: Any,
    ) -> None:
        self.ruleset = RULESETS[self.ruleset_name]
        self.num_envs = check_int("num_envs", num_envs, 1, 1 << 24)
        self.params = self.ruleset.build(**config)
        self._reset_kernel, self._step_kernel, self._rollout_kernel, self.backend = self.ruleset.kernels(backend)
        self._policy, self._opponent = opponent_policy(opponent)
        self._policies = np.array([POLICIES["external"], self._policy], dtype=np.int64)
        self.shaping = check_shaping(shaping)
        self.threads = check_int("threads", threads, 1, 256)
        self.copy = bool(copy)
        self.render_mode = render_mode
        self.single_observation_space = gym.spaces.Box(0.0, 1.0, shape=(self.ruleset.obs_size,), dtype=np.float32)
        self.single_action_space = gym.spaces.Discrete(self.ruleset.n_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._b = b = Buffers(self.ruleset, self.num_envs)
        self._started = False
        # The step kernel bound to the buffers once (Cython: no buffer acquisition per step).
        self._stepper = self.ruleset.stepper(self.backend, self.params, b, self._policies, self.shaping)
        # Views handed out by step() with copy=False, made once.
        self._views = (b.obs[:, 0], b.reward[:, 0], b.terminated.view(np.bool_), b.truncated.view(np.bool_),
                       b.mask[:, 0])
        # Threads only pay off when each gets enough envs to hide handing the work over; the
        # split never changes results (every env reads only its own streams and rows).
        parts = min(self.threads, max(1, self.num_envs // MIN_ENVS_PER_THREAD)) if self.backend != "python" else 1
        bounds = np.linspace(0, self.num_envs, parts + 1).astype(np.int64)
        self._ranges = [(int(a), int(c)) for a, c in itertools.pairwise(bounds)]
        self._pool = ThreadPoolExecutor(parts - 1) if parts > 1 else None

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        # Seeds self.np_random (the source of the per-env seeds when no seed is given).
        super().reset(seed=int(seed[0]) if isinstance(seed, list | tuple | np.ndarray) and len(seed) else seed)
        b = self._b
        which = np.ones(self.num_envs, dtype=np.bool_)
        if options and "reset_mask" in options:
            which = np.ascontiguousarray(options["reset_mask"], dtype=np.bool_)
            if which.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},)")
        if seed is not None:
            if isinstance(seed, list | tuple | np.ndarray):
                if len(seed) != self.num_envs:
                    raise ValueError(f"seed must be an int or a list of {self.num_envs} ints, got {len(seed)}")
                seeds = [check_seed(int(s)) for s in seed]
            else:
                first = check_seed(seed)
                seeds = [(first + e) % 2**64 for e in range(self.num_envs)]
            b.seeds[which] = np.array(seeds, dtype=np.uint64)[which]
            b.state[which, 0] = 0
        elif not self._started:
            b.seeds[:] = self.np_random.integers(0, 2**63, size=self.num_envs, dtype=np.int64).astype(np.uint64)
            b.state[:, 0] = 0
        else:
            b.state[which, 0] += 1
        self._started = True
        b.state[which, 3] = 0  # S_NEEDS_RESET
        self._reset_kernel(self.params, b.seeds, b.state, which.view(np.uint8), b.obs, b.mask)
        obs, _, _, _, mask = self._views
        if self.copy:
            return obs.copy(), {"action_mask": mask.copy()}
        return obs, {"action_mask": mask}

    def step(self, actions):
        b = self._b
        b.actions[:, 0] = actions
        if self._opponent is not None:
            b.actions[:, 1] = np.asarray(self._opponent(b.obs[:, 1].copy(), b.mask[:, 1].copy()), dtype=np.int64)
        if self._pool is None:
            self._stepper.step(0, self.num_envs)
        else:
            self._run_threads()
        obs, reward, terminated, truncated, mask = self._views
        if self.copy:
            return obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), {"action_mask": mask.copy()}
        return obs, reward, terminated, truncated, {"action_mask": mask}

    def _run_threads(self) -> None:
        # The calling thread steps the first range itself; the pool threads the others.
        step = self._stepper.step
        futures = [self._pool.submit(step, lo, hi) for lo, hi in self._ranges[1:]]
        try:
            step(*self._ranges[0])
        finally:
            for future in futures:
                future.result()

    def rollout(self, steps: int, agent: str = "scripted") -> np.ndarray:
        """``steps`` steps of every env with side 0 on a built-in policy too, in one compiled call
        (benchmarks, baselines). Returns int64 [side 0 wins, side 1 wins, other ends, env steps]."""
        check_int("steps", steps, 0, 1 << 40)
        policy = POLICIES[agent] if agent in ("scripted", "random") else None
        if policy is None or self._opponent is not None:
            raise ValueError("rollout needs built-in policies on both sides: agent and opponent 'scripted' or 'random'")
        b = self._b
        totals = np.zeros(4, dtype=np.int64)
        policies = np.array([policy, self._policy], dtype=np.int64)
        self._rollout_kernel(self.params, b.seeds, b.state, steps, policies, self.shaping,
                             b.obs, b.reward, b.terminated, b.truncated, b.mask, totals)
        return totals

    def close_extras(self, **kwargs) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class ExpDuelVectorEnv(DuelVectorEnv):
    ruleset_name = "exp"


class D100DuelVectorEnv(DuelVectorEnv):
    ruleset_name = "d100"


class TssDuelVectorEnv(DuelVectorEnv):
    ruleset_name = "tss"
