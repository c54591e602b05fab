"""Stable-Baselines3 at kernel speed: ``vec_env(scenario=..., agent=..., num_envs=N)``.

SB3 steps a ``VecEnv``; wrapping each ``combatsim/Fight-v0`` env in ``DummyVecEnv`` costs a
Python call per env and step. ``vec_env`` gives SB3 the scenario's vector env instead
(combatsim.rl.fight_vector: every env stepped by one engine call) behind SB3's ``VecEnv``
protocol, env for env what ``DummyVecEnv`` over single envs gives:

- ``step_wait()`` returns observations ``(N, obs)``, float32 rewards, dones (terminated or
  truncated) and one info dict per env: the single env's info (``action_mask``,
  ``masked_actions``; at an episode's end ``outcome``) plus ``TimeLimit.truncated``, and where the
  episode ended ``terminal_observation`` and ``episode`` = {"r": return, "l": steps}, the fields
  SB3's ``Monitor`` writes, so SB3 logs ``ep_rew_mean`` without a wrapper. An env whose
  episode ended starts its next one in the same step (``reset_infos[e]`` is its first info).
- ``seed(s)`` then ``reset()``: env ``e`` plays the single env seeded ``s + e``; a ``reset()``
  without a seed starts every env's next fight.
- ``action_masks()`` and ``env_method("action_masks")`` (sb3-contrib's MaskablePPO) read the
  engine's masks.

The protocol is written here as a plain class, so its behaviour is tested without SB3 installed;
``vec_env`` returns it as a subclass of SB3's ``VecEnv`` where SB3 imports (``pip install
".[train]"`` from the clone). Both pickle with the standard library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from combatsim.engine import Game
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.scenario import Scenario
from combatsim.validation import refuse_masked


def _env_rows(columns: Mapping[str, Any], rows: np.ndarray) -> list[dict[str, Any]]:
    """The values of a vector info dict (``_key`` masks dropped) for each env in ``rows``, as the
    single env gives them: plain Python scalars, arrays for array fields."""
    keys, values = [], []
    for key, value in columns.items():
        if key.startswith("_"):
            continue
        keys.append(key)
        if isinstance(value, Mapping):
            values.append(_env_rows(value, rows))
        else:
            picked = value[rows]
            values.append(picked.tolist() if picked.ndim == 1 and picked.dtype != object else list(picked))
    if not keys:
        return [{} for _ in rows]
    return [dict(zip(keys, line, strict=True)) for line in zip(*values, strict=True)]


class KernelVecEnv:
    """SB3's VecEnv protocol over one :class:`FightVectorEnv` (one engine call a step)."""

    def __init__(self, vector: FightVectorEnv) -> None:
        if vector.autoreset_mode is not AutoresetMode.SAME_STEP:
            # SB3 resets an env in the step that ends it, as SAME_STEP does
            raise ValueError(f"vector env autoreset_mode must be SAME_STEP for SB3, got {vector.autoreset_mode}")
        self.venv = vector
        self.num_envs = vector.num_envs
        self.observation_space = vector.single_observation_space
        self.action_space = vector.single_action_space
        self.render_mode = None
        self.metadata = {"render_modes": []}
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._seeds: list[int | None] = [None] * self.num_envs
        self._actions: np.ndarray | None = None

    # ---- stepping ----
    def reset(self) -> np.ndarray:
        seeds = None if self._seeds[0] is None else list(self._seeds)
        obs, infos = self.venv.reset(seed=seeds)
        self.reset_infos = self._env_infos(infos)
        self._seeds = [None] * self.num_envs
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        refuse_masked("actions", actions)
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, infos = self.venv.step(actions)
        dones = terminated | truncated
        step_infos = [{"action_mask": mask, "masked_actions": masked, "TimeLimit.truncated": False}
                      for mask, masked in zip(infos["action_mask"], infos["masked_actions"].tolist(), strict=True)]
        if "final_info" in infos:
            # as DummyVecEnv: the info of the step that ended the episode, with its last observation
            # (and the next episode's first info in reset_infos)
            ended = dones.nonzero()[0]
            finals = _env_rows({**infos["final_info"], "TimeLimit.truncated": truncated & ~terminated,
                                "terminal_observation": infos["final_obs"]}, ended)
            lengths = infos["final_info"]["outcome"]["steps"][ended].tolist()
            # the return is the last reward: every step before an episode's end gives 0
            for final, reward, length in zip(finals, rewards[ended].tolist(), lengths, strict=True):
                final["episode"] = {"r": reward, "l": length}
            for e, final in zip(ended.tolist(), finals, strict=True):
                self.reset_infos[e] = {key: step_infos[e][key] for key in ("action_mask", "masked_actions")}
                step_infos[e] = final
        return obs, rewards.astype(np.float32), dones, step_infos

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        self.step_async(actions)
        return self.step_wait()

    @staticmethod
    def _env_infos(infos: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The vector env's infos as one dict per env."""
        return [{"action_mask": mask, "masked_actions": masked}
                for mask, masked in zip(infos["action_mask"], infos["masked_actions"].tolist(), strict=True)]

    def action_masks(self) -> np.ndarray:
        """Every env's legal actions now, (num_envs, actions) bool (sb3-contrib's MaskablePPO)."""
        return self.venv.action_masks()

    # ---- seeding and options ----
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """The next ``reset()`` plays seed ``seed + e`` in env ``e`` (a random seed when None)."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seeds = [seed + e for e in range(self.num_envs)]
        return self._seeds

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """Kept for the protocol: the fight envs take no reset options, so none are kept."""

    # ---- the envs' attributes and methods ----
    def _indices(self, indices: int | Iterable[int] | None) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    def get_attr(self, attr_name: str, indices: int | Iterable[int] | None = None) -> list[Any]:
        """An attribute of the envs (shared by all: they are one vector env)."""
        owner = self if attr_name in ("render_mode", "action_masks") else self.venv
        value = getattr(owner, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: int | Iterable[int] | None = None) -> None:
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError("indices: the envs share one vector env; set_attr takes all of them (None)")
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: int | Iterable[int] | None = None,
                   **method_kwargs) -> list[Any]:
        """``"action_masks"``: each env's mask; any other method of the vector env is called once
        and its result given to every env asked for."""
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[e] for e in rows]
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: int | Iterable[int] | None = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> list[None]:
        return [None] * self.num_envs

    def render(self, mode: str | None = None) -> None:
        return None

    def close(self) -> None:
        self.venv.close()


def _sb3_class() -> type:
    """KernelVecEnv as a subclass of SB3's VecEnv (made on first use: SB3 imports torch), kept as
    this module's ``SB3KernelVecEnv`` so that pickle finds it by name."""
    made = globals().get("SB3KernelVecEnv")
    if made is None:
        from stable_baselines3.common.vec_env import VecEnv

        made = type("SB3KernelVecEnv", (KernelVecEnv, VecEnv),
                    {"__module__": __name__, "__doc__": "SB3's VecEnv over one FightVectorEnv (combatsim.rl.sb3)."})
        globals()["SB3KernelVecEnv"] = made
    return made


def __getattr__(name: str) -> type:
    """``SB3KernelVecEnv`` on demand, as unpickling a pickled ``vec_env`` asks for it."""
    if name == "SB3KernelVecEnv":
        return _sb3_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def vec_env(scenario: Scenario | str | Path | Mapping | Game, agent: str, num_envs: int = 64, *,
            backend: str = "auto") -> KernelVecEnv:
    """SB3's VecEnv of ``num_envs`` fights of ``scenario`` with member ``agent`` played by the model.

    A subclass of ``stable_baselines3.common.vec_env.VecEnv`` where SB3 is installed, else the
    plain protocol class (same behaviour).
    """
    vector = FightVectorEnv(num_envs, scenario=scenario, agent=agent, backend=backend,
                            autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        cls = _sb3_class()
    except ImportError:
        cls = KernelVecEnv
    return cls(vector)
