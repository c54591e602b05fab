"""Gymnasium single environments: one duel, the agent is side 0, the opponent side 1.

The environment calls the same step kernel as the vector environment with one row, so env ``e`` of
a vector environment seeded ``s`` and a single environment seeded ``s + e`` produce identical
trajectories for identical actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from combatsim.rl.rulesets import RULESETS, Ruleset
from combatsim.validation import check_seed

POLICIES = {"external": 0, "scripted": 1, "random": 2}
#: An opponent callable gets side 1's observation and action mask and returns its action.
Opponent = Callable[[np.ndarray, np.ndarray], int]


def opponent_policy(opponent: object) -> tuple[int, Opponent | None]:
    """(kernel policy code, callable or None) for ``opponent``: "scripted", "random" or a callable."""
    if callable(opponent):
        return POLICIES["external"], opponent  # type: ignore[return-value]
    if opponent not in ("scripted", "random"):
        raise ValueError(f"opponent must be 'scripted', 'random' or a callable (obs, action_mask) -> action; got {opponent!r}")
    return POLICIES[str(opponent)], None


def check_shaping(shaping: object) -> float:
    if isinstance(shaping, bool) or not isinstance(shaping, int | float):
        raise TypeError(f"shaping must be a number in 0..10, got {type(shaping).__name__}")
    if not 0 <= float(shaping) <= 10:
        raise ValueError(f"shaping must be in 0..10, got {shaping}")
    return float(shaping)


class Buffers:
    """The kernel's state and output arrays for ``n`` environments."""

    def __init__(self, ruleset: Ruleset, n: int) -> None:
        layout = ruleset.layout
        self.state = np.zeros((n, layout.STATE_SIZE), dtype=np.int64)
        self.seeds = np.zeros(n, dtype=np.uint64)
        self.obs = np.zeros((n, 2, layout.OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((n, 2, layout.ACTIONS), dtype=np.int8)
        self.reward = np.zeros((n, 2), dtype=np.float32)
        # uint8 0/1 for the kernels (every backend takes it); users get bool views.
        self.terminated = np.zeros(n, dtype=np.uint8)
        self.truncated = np.zeros(n, dtype=np.uint8)
        self.actions = np.zeros((n, 2), dtype=np.int64)


class DuelEnv(gym.Env):
    """A duel of ``ruleset``; see docs/rl.md for observations, actions and rewards."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    ruleset_name = ""

    def __init__(
        self,
        *,
        opponent: object = "scripted",
        backend: str = "auto",
        shaping: float = 0.0,
        render_mode: str | None = None,
        **config: Any,
    ) -> None:
        self.ruleset = RULESETS[self.ruleset_name]
        self.params = self.ruleset.build(**config)
        self._reset_kernel, self._step_kernel, _, self.backend = self.ruleset.kernels(backend)
        self._policy, self._opponent = opponent_policy(opponent)
        self._policies = np.array([POLICIES["external"], self._policy], dtype=np.int64)
        self.shaping = check_shaping(shaping)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(self.ruleset.obs_size,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(self.ruleset.n_actions)
        self._b = Buffers(self.ruleset, 1)
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            seed = check_seed(seed)
        super().reset(seed=seed)
        b = self._b
        if seed is not None:
            b.seeds[0] = seed
            b.state[0, 0] = 0  # episode 0 of this seed
        elif not self._started:
            b.seeds[0] = int(self.np_random.integers(0, 2**63))
            b.state[0, 0] = 0
        else:
            b.state[0, 0] += 1  # the next episode of the same seed
        self._started = True
        self._reset_kernel(self.params, b.seeds, b.state, np.ones(1, dtype=np.uint8), b.obs, b.mask)
        return b.obs[0, 0].copy(), {"action_mask": b.mask[0, 0].copy()}

    def step(self, action):
        b = self._b
        b.actions[0, 0] = int(action)
        if self._opponent is not None:
            b.actions[0, 1] = int(self._opponent(b.obs[0, 1].copy(), b.mask[0, 1].copy()))
        self._step_kernel(self.params, b.seeds, b.state, b.actions, self._policies, self.shaping,
                          b.obs, b.reward, b.terminated, b.truncated, b.mask)
        return (b.obs[0, 0].copy(), float(b.reward[0, 0]), bool(b.terminated[0]), bool(b.truncated[0]),
                {"action_mask": b.mask[0, 0].copy()})

    def action_masks(self) -> np.ndarray:
        """The current legal actions (sb3-contrib's MaskablePPO calls this)."""
        return self._b.mask[0, 0].astype(bool)

    def render(self):
        if self.render_mode == "ansi":
            names = self.ruleset.layout
            return f"{self.ruleset_name} duel step {int(self._b.state[0, names.S_T])}: obs {np.round(self._b.obs[0, 0], 3)}"
        return None


class ExpDuelEnv(DuelEnv):
    """EXP duel: fire, reload, draw weapon k (combatsim.rl.exp_reference)."""

    ruleset_name = "exp"


class D100DuelEnv(DuelEnv):
    """d100 duel: attack, quick attack, defend, flee, press, disengage, take cover, toggle dual wield."""

    ruleset_name = "d100"


class TssDuelEnv(DuelEnv):
    """TSS duel: attack, aim, two-weapon attack, wait, one action phase a step."""

    ruleset_name = "tss"
