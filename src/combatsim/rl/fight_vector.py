"""``combatsim/Fight-v0``'s vector entry point: N fights of one scenario, stepped by one engine call.

Env ``e`` of a vector env seeded ``s`` is a :class:`~combatsim.rl.fight_env.FightEnv` seeded
``s + e``, step by step: the same observations, rewards, ends and infos. Autoreset is Gymnasium's
SAME_STEP mode: a step that ends an env's episode also starts its next one (fight index + 1)
and returns that episode's first observation; the last observation and info of the episode that
ended are in ``infos["final_obs"]`` and ``infos["final_info"]`` (with ``_final_obs`` and
``_final_info`` saying which envs ended), as Gymnasium's own vector envs put them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from combatsim.engine import RUNNING, S_OUTCOME, Game
from combatsim.game import member_index
from combatsim.rl.fight_env import Outcomes, PicklesWithoutEngine, as_game, check_backend, observation_box
from combatsim.scenario import Scenario
from combatsim.validation import check_int, check_seed

MAX_ENVS = 1 << 24


def _with_masks(columns: dict[str, Any], present: np.ndarray) -> dict[str, Any]:
    """``columns`` (arrays over all envs) with ``present`` as every key's ``_key`` mask, as
    Gymnasium's VectorEnv._add_info batches per-env infos (which envs have the key)."""
    out: dict[str, Any] = {}
    for key, value in columns.items():
        out[key] = _with_masks(value, present) if type(value) is dict else value
        out["_" + key] = present
    return out


class FightVectorEnv(PicklesWithoutEngine, gym.vector.VectorEnv):
    """``num_envs`` fights of one scenario, member ``agent`` played from outside (docs/rl.md)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, scenario: Scenario | str | Path | Mapping | Game, agent: str,
                 backend: str = "auto", render_mode: str | None = None) -> None:
        self.game = game = as_game(scenario)
        self.num_envs = check_int("num_envs", num_envs, 1, MAX_ENVS)
        self.agent = agent
        self.agent_index = member_index(game, agent)
        self.backend = check_backend(backend)
        if render_mode is not None:
            raise ValueError(f"render_mode must be None for the vector env, got {render_mode!r}")
        self.render_mode = None
        self.observation_names = game.observation_names
        self.action_names = game.action_names
        self.single_observation_space = observation_box(len(game.observation_names))
        self.single_action_space = gym.spaces.Discrete(len(game.action_names))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._engine = game.engine(self.backend)
        self._b = game.buffers(self.num_envs)
        self._masked = game.count_names.index("masked")
        self._outcomes = Outcomes(game)
        self._side = game.member_sides[self.agent_index]
        # looked up by outcome code: side 0 wins, side 1 wins, DRAW, UNFINISHED, and RUNNING (-1) last
        self._rewards = np.zeros(5, dtype=np.float64)
        self._rewards[self._side], self._rewards[1 - self._side] = 1.0, -1.0
        self._terminates = np.array([True, True, True, False, False])
        self._truncates = np.array([False, False, False, True, False])
        self._started = False

    def _agent_rows(self, buffer: np.ndarray) -> np.ndarray:
        """A fresh copy of the agent's rows of ``buffer`` (num_envs, members, ...)."""
        index = self.agent_index
        return buffer[:, index].copy() if isinstance(index, slice) else buffer.take(index, axis=1)

    def _infos(self) -> dict[str, Any]:
        b = self._b
        every = np.ones(self.num_envs, np.bool_)
        return {"action_mask": self._agent_rows(b["mask"]), "_action_mask": every,
                "masked_actions": b["counts"][:, self._masked].copy(), "_masked_actions": every}

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        first = seed[0] if isinstance(seed, list | tuple | np.ndarray) and len(seed) else seed
        super().reset(seed=None if first is None else check_seed(first))
        b = self._b
        if seed is not None:
            if isinstance(seed, list | tuple | np.ndarray):
                if len(seed) != self.num_envs:
                    raise ValueError(f"seed must be an integer or a list of {self.num_envs} integers, "
                                     f"got {len(seed)}")
                seeds = [check_seed(s) for s in seed]
            else:
                seeds = [(seed + e) % 2**64 for e in range(self.num_envs)]
            b["seeds"][:] = np.array(seeds, dtype=np.uint64)
            b["indices"][:] = 0
        elif not self._started:
            b["seeds"][:] = self.np_random.integers(0, 2**63, size=self.num_envs, dtype=np.int64).astype(np.uint64)
            b["indices"][:] = 0
        else:
            b["indices"][:] += 1  # every env's next fight
        self._started = True
        b["which"][:] = 1
        self._engine.reset(self.game.table, self.game.config, b["seeds"], b["indices"], b["which"], b["state"],
                           b["counts"], b["obs"], b["mask"])
        return self._agent_rows(b["obs"]), self._infos()

    def step(self, actions):
        b = self._b
        if not self._started:
            raise RuntimeError("step() before reset(): call reset() first")
        b["actions"][:, self.agent_index] = self._check_actions(actions)
        self._engine.step(self.game.table, self.game.config, b["seeds"], b["state"], b["actions"], b["counts"],
                          b["obs"], b["mask"])
        outcome = b["state"][:, S_OUTCOME]
        # (num_envs,) here; (num_envs, agents) where agent_index lists several members (vector_parallel)
        rewards = self._rewards[outcome]
        terminated, truncated = self._terminates[outcome], self._truncates[outcome]
        done = outcome != RUNNING
        ended = done.nonzero()[0]
        if not len(ended):
            return self._agent_rows(b["obs"]), rewards, terminated, truncated, self._infos()
        state, counts, obs, mask = (b[key].take(ended, axis=0) for key in ("state", "counts", "obs", "mask"))
        final_obs = np.empty(self.num_envs, dtype=object)  # None throughout
        final_obs[ended] = np.fromiter(self._agent_rows(obs), dtype=object, count=len(ended))
        # every field over all envs, 0 (None) where the fight runs on
        agent_mask = self._agent_rows(mask)
        final_mask = np.zeros((self.num_envs, *agent_mask.shape[1:]), dtype=agent_mask.dtype)
        final_mask[ended] = agent_mask
        outcomes = self._outcomes.columns(state, counts, obs, ended, self.num_envs)
        # the episode's return is its last reward (every step before the end gives 0)
        final_info = {"action_mask": final_mask, "masked_actions": outcomes["counts"]["masked"].copy(),
                      "outcome": outcomes, "episode": {"r": rewards.copy(), "l": outcomes["steps"].copy()}}
        present = done.copy()
        final_info = _with_masks(final_info, present)
        # SAME_STEP: the envs that ended start their next fight now
        np.copyto(b["which"], done)
        b["indices"] += done
        self._engine.reset(self.game.table, self.game.config, b["seeds"], b["indices"], b["which"], b["state"],
                           b["counts"], b["obs"], b["mask"])
        infos = self._infos()
        infos["final_obs"], infos["_final_obs"] = final_obs, done
        infos["final_info"], infos["_final_info"] = final_info, present
        return self._agent_rows(b["obs"]), rewards, terminated, truncated, infos

    def _check_actions(self, actions) -> np.ndarray:
        array = np.asarray(actions)
        count = len(self.action_names)
        if array.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers in 0..{count - 1}, got dtype {array.dtype}")
        if array.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, got {array.shape}")
        # one pass: a negative action is a large one as unsigned
        if array.size and int(array.view(array.dtype.str.replace("i", "u")).max()) >= count:
            bad = int(array[(array < 0) | (array >= count)][0])
            raise ValueError(f"actions must be in 0..{count - 1}, got {bad}")
        return array

    def action_masks(self) -> np.ndarray:
        """Every env's legal actions now, (num_envs, actions) bool."""
        return self._b["mask"][:, self.agent_index].astype(bool)

