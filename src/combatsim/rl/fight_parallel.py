"""A PettingZoo ParallelEnv on any scenario: every named member an agent, the others scripted.

``parallel_env(scenario=..., agents=[names])``: each agent is a member, named as in
``combatsim/Fight-v0`` (combatsim.game), with that env's observation and action spaces and
``infos[agent]["action_mask"]``; two members of each side as agents is team self-play. An agent
whose member is out of the fight stays an agent (only its "do nothing" action is legal) until the
fight ends; then every agent is done at once. Rewards: +1 to each agent of the side that wins,
-1 to the others, 0 for a draw or an unfinished fight. Episode ``k`` after ``reset(seed=s)`` is
fight ``k`` of seed ``s``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from combatsim.engine import DRAW, RUNNING, UNFINISHED, Game
from combatsim.game import member_index
from combatsim.rl.fight_env import OneFight, as_game, observation_box
from combatsim.scenario import Scenario
from combatsim.validation import check_seed


def agent_rows(game: Game, agents: Sequence[str] | None) -> dict[str, int]:
    """``{agent name: member row}`` for ``agents`` (member names, each once; all members when None)."""
    names = list(game.member_names if agents is None else agents)
    if isinstance(agents, str) or not names:
        raise ValueError(f"agents must be a non-empty list of member names; the scenario's members: "
                         f"{', '.join(map(repr, game.member_names))}")
    rows = {name: member_index(game, name, field="agents") for name in names}
    if len(rows) != len(names):
        raise ValueError(f"agents must name each member once, got {names!r}")
    return rows


class FightParallelEnv(OneFight, ParallelEnv):
    """A scenario's fight with several members played from outside (docs/rl.md)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "combatsim_fight_v0",
                                          "is_parallelizable": True}

    def __init__(self, scenario: Scenario | str | Path | Mapping | Game, agents: Sequence[str] | None = None, *,
                 backend: str = "auto", render_mode: str | None = None) -> None:
        game = as_game(scenario)
        self._rows = agent_rows(game, agents)
        self._start_game(game, backend, render_mode, list(self._rows.values()))
        names = list(self._rows)
        self.possible_agents = names
        self.agents: list[str] = []
        size = len(game.observation_names)
        self.observation_spaces = {a: observation_box(size) for a in names}
        self.action_spaces = {a: gym.spaces.Discrete(len(game.action_names)) for a in names}
        self.state_space = observation_box(game.members * size)
        self._np_random, _ = seeding.np_random()

    def observation_space(self, agent: str) -> gym.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gym.spaces.Space:
        return self.action_spaces[agent]

    def _observations(self) -> tuple[dict, dict]:
        obs = {agent: self._b["obs"][0, row].copy() for agent, row in self._rows.items()}
        return obs, {agent: self._info(row) for agent, row in self._rows.items()}

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._np_random, _ = seeding.np_random(check_seed(seed))
        self._reset_fight(seed, self._np_random)
        self.agents = list(self.possible_agents)
        return self._observations()

    def step(self, actions: Mapping[str, object]):
        if not self.agents:
            raise RuntimeError("step() outside an episode: call reset() first, and again after an episode ends")
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict of agent -> action for the agents {self.agents!r}, "
                            f"got {type(actions).__name__}")
        unknown = set(actions) - set(self.agents)
        missing = [agent for agent in self.agents if agent not in actions]
        if unknown or missing:
            raise ValueError(f"actions must hold one action for each agent {self.agents!r}; "
                             f"{'missing ' + repr(missing) if missing else 'unknown ' + repr(sorted(unknown))}")
        outcome = self._step_fight({row: actions[agent] for agent, row in self._rows.items()})
        obs, infos = self._observations()
        sides = self.game.member_sides
        rewards = {agent: 1.0 if outcome == sides[row] else -1.0 if outcome == 1 - sides[row] else 0.0
                   for agent, row in self._rows.items()}
        terminations = dict.fromkeys(self.agents, outcome in (0, 1, DRAW))
        truncations = dict.fromkeys(self.agents, outcome == UNFINISHED)
        if outcome != RUNNING:
            summary = self._outcome()
            for info in infos.values():
                info["outcome"] = summary
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """Every member's own observation, in table order, end to end."""
        return self._b["obs"][0].reshape(-1).copy()

    def action_mask(self, agent: str) -> np.ndarray:
        return self._b["mask"][0, self._rows[agent]].astype(bool)


def parallel_env(scenario: Scenario | str | Path | Mapping | Game, agents: Sequence[str] | None = None, *,
                 backend: str = "auto", render_mode: str | None = None) -> FightParallelEnv:
    """A PettingZoo ParallelEnv of ``scenario`` with ``agents`` (member names; all members by default)."""
    return FightParallelEnv(scenario, agents, backend=backend, render_mode=render_mode)
