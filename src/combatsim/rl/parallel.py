"""PettingZoo ParallelEnv for self-play: both sides are agents ("side_0", "side_1")."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from combatsim.rl.envs import POLICIES, Buffers, check_shaping
from combatsim.rl.rulesets import RULESETS
from combatsim.validation import check_choice, check_seed


class DuelParallelEnv(ParallelEnv):
    """A duel where each side is an agent; rewards are zero-sum (win +1, loss -1)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": [], "is_parallelizable": True, "name": "combatsim_duel_v0"}

    def __init__(self, ruleset: str = "d100", *, backend: str = "auto", shaping: float = 0.0, **config: Any) -> None:
        self.ruleset = RULESETS[check_choice("ruleset", ruleset, tuple(RULESETS))]
        self.metadata = dict(self.metadata, name=f"combatsim_{ruleset}_duel_v0")
        self.params = self.ruleset.build(**config)
        self._reset_kernel, self._step_kernel, _, self.backend = self.ruleset.kernels(backend)
        self.shaping = check_shaping(shaping)
        self.possible_agents = ["side_0", "side_1"]
        self.agents: list[str] = []
        self.observation_spaces = {
            agent: gym.spaces.Box(0.0, 1.0, shape=(self.ruleset.obs_size,), dtype=np.float32)
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: gym.spaces.Discrete(self.ruleset.n_actions) for agent in self.possible_agents}
        self._policies = np.array([POLICIES["external"], POLICIES["external"]], dtype=np.int64)
        self._b = Buffers(self.ruleset, 1)
        self._rng = np.random.default_rng()
        self._started = False

    def observation_space(self, agent: str) -> gym.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gym.spaces.Space:
        return self.action_spaces[agent]

    def _observations(self) -> tuple[dict, dict]:
        b = self._b
        obs = {agent: b.obs[0, side].copy() for side, agent in enumerate(self.possible_agents)}
        infos = {agent: {"action_mask": b.mask[0, side].copy()} for side, agent in enumerate(self.possible_agents)}
        return obs, infos

    def reset(self, seed: int | None = None, options: dict | None = None):
        b = self._b
        if seed is not None:
            b.seeds[0] = check_seed(seed)
            b.state[0, 0] = 0
        elif not self._started:
            b.seeds[0] = int(self._rng.integers(0, 2**63))
            b.state[0, 0] = 0
        else:
            b.state[0, 0] += 1
        self._started = True
        self.agents = list(self.possible_agents)
        self._reset_kernel(self.params, b.seeds, b.state, np.ones(1, dtype=np.uint8), b.obs, b.mask)
        return self._observations()

    def step(self, actions: dict):
        b = self._b
        if not self.agents:
            raise RuntimeError("step() after the episode ended: call reset()")
        for side, agent in enumerate(self.possible_agents):
            b.actions[0, side] = int(actions[agent]) if agent in actions else -1
        self._step_kernel(self.params, b.seeds, b.state, b.actions, self._policies, self.shaping,
                          b.obs, b.reward, b.terminated, b.truncated, b.mask)
        obs, infos = self._observations()
        rewards = {agent: float(b.reward[0, side]) for side, agent in enumerate(self.possible_agents)}
        terminations = dict.fromkeys(self.possible_agents, bool(b.terminated[0]))
        truncations = dict.fromkeys(self.possible_agents, bool(b.truncated[0]))
        if b.terminated[0] or b.truncated[0]:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self) -> None:
        return None

    def state(self) -> np.ndarray:
        """Both sides' observations side by side (a global view)."""
        return self._b.obs[0].reshape(-1).copy()


def parallel_env(ruleset: str = "d100", **kwargs: Any) -> DuelParallelEnv:
    """A PettingZoo ParallelEnv of ``ruleset`` ("d100", "exp" or "tss") for self-play."""
    return DuelParallelEnv(ruleset, **kwargs)
