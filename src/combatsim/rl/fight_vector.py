"""``combatsim/Fight-v0``'s vector entry point: N fights of one scenario, stepped by one engine call.

Env ``e`` of a vector env seeded ``s`` is a :class:`~combatsim.rl.fight_env.FightEnv` seeded
``s + e``, step by step: the same observations, rewards, ends and infos as Gymnasium's
``SyncVectorEnv`` over those single envs gives in the same autoreset mode (``autoreset_mode=``):

- ``NEXT_STEP`` (the default, as Gymnasium's own vector envs): a step that ends an episode
  returns its last observation, and its outcome in ``infos["outcome"]``; the env's next step
  starts the next fight (its action is not played).
- ``SAME_STEP``: a step that ends an env's episode also starts its next one (fight index + 1)
  and returns that episode's first observation; the last observation and info of the episode
  that ended are in ``infos["final_obs"]`` and ``infos["final_info"]`` (with ``_final_obs`` and
  ``_final_info`` saying which envs ended). The SB3 adapter (combatsim.rl.sb3) steps this mode.
- ``DISABLED``: an ended env stays ended until ``reset(options={"reset_mask": mask})`` starts the
  next fight of the envs in ``mask`` (a step before that is an error).

No info has an ``"episode"`` key: Gymnasium's ``RecordEpisodeStatistics`` writes that one. An
episode's return is its last reward and its length ``outcome["steps"]``.

In any mode, ``reset(options={"reset_mask": mask})`` resets only the envs in ``mask``.
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
from combatsim.rl.fight_env import EngineEnv, as_game, observation_box
from combatsim.scenario import Scenario
from combatsim.validation import available_memory, check_int, check_seed, refuse_masked

MAX_ENVS = 1 << 24
#: Envs one engine call steps: a few ms of work, the longest a Ctrl-C waits.
ENGINE_SLICE = 1 << 16
#: Gymnasium's autoreset modes, by their values ("SameStep", "NextStep", "Disabled")
AUTORESET_MODES = {mode.value: mode for mode in AutoresetMode}


#: An env's memory in use, as a multiple of its engine buffers: the step's and reset's copies
#: (observations, infos, final observations) about double them.
MEMORY_PER_BUFFER_BYTE = 3
#: The share of the memory available now that a vector env may plan to take.
MEMORY_SHARE = 0.5


def check_num_envs(num_envs: object, game: Game) -> int:
    """``num_envs`` in 1..MAX_ENVS and within MEMORY_SHARE of the memory available, checked before
    any allocation (a vector env of 2**24 fights needs tens of GB)."""
    num_envs = check_int("num_envs", num_envs, 1, MAX_ENVS)
    per_env = MEMORY_PER_BUFFER_BYTE * sum(buffer.nbytes for buffer in game.buffers(1).values())
    available = available_memory()
    if available is not None and num_envs * per_env > MEMORY_SHARE * available:
        most = max(1, int(MEMORY_SHARE * available) // per_env)
        raise ValueError(f"num_envs must be at most {most:,} here (each env takes about {per_env:,} bytes, and "
                         f"{available / 2**30:.1f} GiB of memory is available), got {num_envs:,}")
    return num_envs


def check_autoreset_mode(mode: object) -> AutoresetMode:
    """An AutoresetMode, given as one or as its value."""
    if isinstance(mode, AutoresetMode):
        return mode
    if isinstance(mode, str) and mode in AUTORESET_MODES:
        return AUTORESET_MODES[mode]
    raise ValueError(f"autoreset_mode must be an AutoresetMode or one of {sorted(AUTORESET_MODES)}, got {mode!r}")


def check_reset_mask(options: Mapping | None, num_envs: int) -> np.ndarray | None:
    """``options["reset_mask"]``, checked as Gymnasium's SyncVectorEnv checks it, or None."""
    if options is None or "reset_mask" not in options:
        return None
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (num_envs,):
        got = f"{mask.dtype}{mask.shape}" if isinstance(mask, np.ndarray) else type(mask).__name__
        raise ValueError(f"options['reset_mask'] must be a bool numpy array of shape ({num_envs},), got {got}")
    if not mask.any():
        raise ValueError("options['reset_mask'] must select at least one env, got none")
    return mask.copy()


def _with_masks(columns: dict[str, Any], present: np.ndarray) -> dict[str, Any]:
    """``columns`` (arrays over all envs) with ``present`` as every key's ``_key`` mask, as
    Gymnasium's VectorEnv._add_info batches per-env infos (which envs have the key)."""
    out: dict[str, Any] = {}
    for key, value in columns.items():
        out[key] = _with_masks(value, present) if type(value) is dict else value
        out["_" + key] = present
    return out


class FightVectorEnv(EngineEnv, gym.vector.VectorEnv):
    """``num_envs`` fights of one scenario, member ``agent`` played from outside (docs/rl.md)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, scenario: Scenario | str | Path | Mapping | Game, agent: str,
                 backend: str = "auto", render_mode: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        game = as_game(scenario)
        self.num_envs = check_num_envs(num_envs, game)
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.agent = agent
        self.agent_index = member_index(game, agent)
        if render_mode is not None:
            raise ValueError(f"render_mode must be None for the vector env, got {render_mode!r}")
        self._use_game(game, backend, self.num_envs)
        self.render_mode = None
        self.single_observation_space = observation_box(len(game.observation_names))
        self.single_action_space = gym.spaces.Discrete(len(game.action_names))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # the engine steps a slice at a time, so that Ctrl-C stops a step of millions of envs at once
        self._slices = [slice(first, first + ENGINE_SLICE) for first in range(0, self.num_envs, ENGINE_SLICE)]
        self._side = game.member_sides[self.agent_index]
        # looked up by outcome code: side 0 wins, side 1 wins, DRAW, UNFINISHED, and RUNNING (-1) last
        self._rewards = np.zeros(5, dtype=np.float64)
        self._rewards[self._side], self._rewards[1 - self._side] = 1.0, -1.0
        self._terminates = np.array([True, True, True, False, False])
        self._truncates = np.array([False, False, False, True, False])

    def _agent_rows(self, buffer: np.ndarray) -> np.ndarray:
        """A fresh copy of the agent's rows of ``buffer`` (num_envs, members, ...)."""
        index = self.agent_index
        return buffer[:, index].copy() if isinstance(index, slice) else buffer.take(index, axis=1)

    def _infos(self, present: np.ndarray | None = None) -> dict[str, Any]:
        """Every env's action mask and masked-action count, or (``present``) only those envs', the
        others' entries 0 as Gymnasium batches the infos of some envs."""
        b = self._b
        action_mask, masked = self._agent_rows(b["mask"]), b["counts"][:, self._masked].copy()
        if present is None:
            present = np.ones(self.num_envs, np.bool_)
        else:
            action_mask[~present] = 0
            masked[~present] = 0
        return {"action_mask": action_mask, "_action_mask": present, "masked_actions": masked,
                "_masked_actions": present}

    def _start(self, which: np.ndarray) -> None:
        """Start the fights of the envs in ``which`` (their seeds and indices already set)."""
        b = self._b
        np.copyto(b["which"], which)
        for rows in self._slices:
            self._engine.reset(self.game.table, self.game.config, b["seeds"][rows], b["indices"][rows],
                               b["which"][rows], b["state"][rows], b["counts"][rows], b["obs"][rows], b["mask"][rows])

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        mask = check_reset_mask(options, self.num_envs)
        which = np.ones(self.num_envs, np.bool_) if mask is None else mask
        first = seed[0] if isinstance(seed, list | tuple | np.ndarray) and len(seed) else seed
        super().reset(seed=None if first is None else check_seed(first))
        b = self._b
        if seed is not None:
            if isinstance(seed, list | tuple | np.ndarray):
                if len(seed) != self.num_envs:
                    raise ValueError(f"seed must be an integer or a list of {self.num_envs} integers, "
                                     f"got {len(seed)}")
                seeds = [check_seed(s) for s in seed]
            else:  # seed + e, modulo 2**64 as uint64 sums wrap
                seeds = np.uint64(check_seed(seed)) + np.arange(self.num_envs, dtype=np.uint64)
            b["seeds"][which] = np.asarray(seeds, dtype=np.uint64)[which]
            b["indices"][which] = 0
        elif not self._started:
            if mask is not None:
                raise ValueError("options['reset_mask'] needs a first reset of every env: call reset() first")
            b["seeds"][:] = self.np_random.integers(0, 2**63, size=self.num_envs, dtype=np.int64).astype(np.uint64)
            b["indices"][:] = 0
        else:
            b["indices"] += which  # the next fight of each env reset
        self._started = True
        self._start(which)
        return self._agent_rows(b["obs"]), self._infos(mask)

    def step(self, actions):
        b = self._b
        if not self._started:
            raise RuntimeError("step() before reset(): call reset() first")
        checked = self._check_actions(actions)
        mode = self.autoreset_mode
        # NEXT_STEP and DISABLED leave a fight that ended as it was until its env is reset
        waiting = b["state"][:, S_OUTCOME] != RUNNING if mode is not AutoresetMode.SAME_STEP else None
        if mode is AutoresetMode.DISABLED and waiting.any():
            raise RuntimeError(f"step() with ended envs {waiting.nonzero()[0][:8].tolist()}: autoreset is "
                               f"disabled, so reset them first with reset(options={{'reset_mask': mask}})")
        b["actions"][:, self.agent_index] = checked
        for rows in self._slices:
            self._engine.step(self.game.table, self.game.config, b["seeds"][rows], b["state"][rows],
                              b["actions"][rows], b["counts"][rows], b["obs"][rows], b["mask"][rows])
        if mode is AutoresetMode.NEXT_STEP and waiting.any():
            b["indices"] += waiting  # the step left them as they were; they start their next fight
            self._start(waiting)
        outcome = b["state"][:, S_OUTCOME]
        # (num_envs,) here; (num_envs, agents) where agent_index lists several members (vector_parallel)
        rewards = self._rewards[outcome]
        terminated, truncated = self._terminates[outcome], self._truncates[outcome]
        done = outcome != RUNNING
        ended = done.nonzero()[0]
        if not len(ended):
            return self._agent_rows(b["obs"]), rewards, terminated, truncated, self._infos()
        state, counts, obs = (b[key].take(ended, axis=0) for key in ("state", "counts", "obs"))
        ending = {"outcome": self._outcomes.columns(state, counts, obs, ended, self.num_envs)}
        if mode is not AutoresetMode.SAME_STEP:
            infos = self._infos()
            infos.update(_with_masks(ending, done.copy()))
            return self._agent_rows(b["obs"]), rewards, terminated, truncated, infos
        final_obs = np.empty(self.num_envs, dtype=object)  # None throughout
        final_obs[ended] = np.fromiter(self._agent_rows(obs), dtype=object, count=len(ended))
        # every field over all envs, 0 where the fight runs on
        final_info = self._infos(done.copy())
        final_info.update(_with_masks(ending, final_info["_action_mask"]))
        # SAME_STEP: the envs that ended start their next fight now
        b["indices"] += done
        self._start(done)
        infos = self._infos()
        infos["final_obs"], infos["_final_obs"] = final_obs, done
        infos["final_info"], infos["_final_info"] = final_info, final_info["_action_mask"]
        return self._agent_rows(b["obs"]), rewards, terminated, truncated, infos

    def _check_actions(self, actions) -> np.ndarray:
        refuse_masked("actions", actions)
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

